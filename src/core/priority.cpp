// src/core/priority.cpp
// Message priority rules and SQL (priority.hpp).
#include "pgmq/core/priority.hpp"

#include <cctype>

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

namespace {

// The longest value an error repeats in full.
constexpr std::size_t kShownValueBytes = 64;

[[noreturn]] void Refuse(std::string_view value, int64_t levels)
{
	const std::string shown =
		value.size() > kShownValueBytes ? std::string(value.substr(0, kShownValueBytes)) + "..." : std::string(value);
	throw CoreError(ErrorKind::InvalidParameter, std::string(kPriorityHeader) + " must be an integer from 0 to " +
	                                                 std::to_string(levels - 1) + ", got: " + shown);
}

}  // namespace

void CheckPriorityLevels(int64_t levels)
{
	if (levels < kMinPriorityLevels || levels > kMaxPriorityLevels)
		throw CoreError(ErrorKind::InvalidParameter, "levels must be from " + std::to_string(kMinPriorityLevels) +
		                                                 " to " + std::to_string(kMaxPriorityLevels) +
		                                                 ", got: " + std::to_string(levels));
}

void CheckPriorityValue(std::string_view value, bool is_number, int64_t levels)
{
	if (!is_number)
		Refuse(value, levels);
	// JSON numbers as PostgreSQL prints them: digits, maybe a fraction;
	// an integer is one whose fraction is all zeros.
	std::size_t i = 0;
	int64_t whole = 0;
	bool digits = false;
	while (i < value.size() && std::isdigit(static_cast<unsigned char>(value[i]))) {
		whole = whole * 10 + (value[i] - '0');
		digits = true;
		if (whole >= levels)
			Refuse(value, levels);
		i++;
	}
	if (i < value.size() && value[i] == '.') {
		for (i++; i < value.size() && value[i] == '0'; i++) {
		}
	}
	if (!digits || i != value.size())
		Refuse(value, levels);
}

std::string PriorityExpression(std::string_view headers)
{
	const std::string h(headers);
	const std::string header = std::string("'") + kPriorityHeader + "'";
	return "COALESCE(CASE WHEN pg_catalog.jsonb_typeof(" + h + " OPERATOR(pg_catalog.->) " + header +
	       ") OPERATOR(pg_catalog.=) 'number' THEN GREATEST(LEAST(pg_catalog.floor((" + h +
	       " OPERATOR(pg_catalog.->>) " + header + ")::pg_catalog.numeric), 9), 0) END, 0)::pg_catalog.int4";
}

std::string PriorityIndexName(std::string_view queue_table) { return std::string(queue_table) + "_priority_idx"; }

std::string CreatePriorityIndexSql(std::string_view queue_table)
{
	return "CREATE INDEX IF NOT EXISTS " + QuoteIdentifier(PriorityIndexName(queue_table)) + " ON " +
	       QualifiedTable(queue_table) + " ((" + PriorityExpression("headers") + ") DESC, msg_id)";
}

std::string DropPriorityIndexSql(std::string_view queue_table)
{
	return "DROP INDEX IF EXISTS pgmq." + QuoteIdentifier(PriorityIndexName(queue_table));
}

}  // namespace pgmq::core
