// common/pg/pgmq_features.cpp
#include "pgmq_features.hpp"

#include <sstream>

namespace pgmq::pg {

// With search_path = pg_catalog (the console's sessions) as with any other:
// every catalog object is qualified.
const char kFeaturesSql[] = R"SQL(
SELECT (SELECT e.extversion FROM pg_catalog.pg_extension AS e WHERE e.extname = 'pgmq'),
       (SELECT pg_catalog.string_agg(DISTINCT p.proname::text, ',')
          FROM pg_catalog.pg_proc AS p JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
         WHERE n.nspname = 'pgmq'),
       EXISTS (SELECT FROM pg_catalog.pg_type AS t
                 JOIN pg_catalog.pg_namespace AS n ON n.oid = t.typnamespace
                 JOIN pg_catalog.pg_attribute AS a ON a.attrelid = t.typrelid
                WHERE n.nspname = 'pgmq' AND t.typname = 'metrics_result'
                  AND a.attname = 'default_partition_length' AND NOT a.attisdropped),
       pg_catalog.to_regclass('pgmq.policies') IS NOT NULL,
       EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
                WHERE a.attrelid = pg_catalog.to_regclass('pgmq.policies') AND a.attname = 'paused_at'
                  AND NOT a.attisdropped)
)SQL";

namespace {

std::set<std::string> SplitNames(const std::string &text)
{
	std::set<std::string> names;
	std::istringstream in(text);
	for (std::string name; std::getline(in, name, ',');)
		if (!name.empty())
			names.insert(name);
	return names;
}

// A SQL-only install has no version to read: the newest release whose
// additions are all there (docs/compatibility.md lists them).
std::string InferredRelease(const PgmqFeatures &f, bool metrics_default_partition)
{
	if (metrics_default_partition)
		return "1.13";
	if (f.has("read_grouped_head_with_poll"))
		return "1.12";
	if (f.has("send_topic"))
		return "1.11";
	if (f.has("read_grouped"))
		return "1.9 or 1.10";
	return "older than 1.9";
}

}  // namespace

std::vector<std::string> PgmqFeatures::Missing(const std::vector<std::string> &names) const
{
	std::vector<std::string> missing;
	for (const auto &name : names)
		if (!has(name))
			missing.push_back(name);
	return missing;
}

PgmqFeatures ParseFeatures(const std::optional<std::string> &extversion, const std::optional<std::string> &functions,
						   bool metrics_default_partition, bool policies_table, bool policies_paused_at)
{
	PgmqFeatures f;
	if (functions)
		f.functions = SplitNames(*functions);
	f.present = f.has("send") && f.has("read") && f.has("list_queues");
	f.extension = extversion.has_value();
	f.table_rule = f.has("_tables_running_foreign_code");
	f.partition_runway = f.has("partition_status");
	// Upstream has none of these; an earlier pgmq-cpp, some.
	f.pgmq_cpp = (extversion && extversion->find("+cpp") != std::string::npos) || f.table_rule ||
				 f.partition_runway || f.has("queue_state");
	f.policies = policies_table && f.has("list_policies");
	f.pause = policies_paused_at && f.has("pause") && f.has("resume");
	f.priorities = f.has("set_priority");
	f.failure_reasons = f.has("retry") && f.has("dead_letter");
	f.redrive = f.has("redrive") && f.has("redrive_all");
	f.streams = f.has("create_stream") && f.has("subscribe") && f.has("read_stream") &&
				f.has("read_stream_with_poll") && f.has("ack") && f.has("stream_groups");
	f.default_partition_rows = metrics_default_partition;
	f.version = extversion ? *extversion : InferredRelease(f, metrics_default_partition);
	return f;
}

std::string ShortName(const PgmqFeatures &f)
{
	return std::string(f.pgmq_cpp ? "pgmq-cpp " : "upstream pgmq ") + f.version;
}

std::string Describe(const PgmqFeatures &f)
{
	if (!f.present)
		return "no pgmq (schema pgmq lacks pgmq.send, pgmq.read or pgmq.list_queues)";
	if (f.extension)
		return ShortName(f) + " (extension)";
	return ShortName(f) + " (SQL-only install in schema pgmq, no extension row: the release its functions show)";
}

std::vector<std::string> NotAvailable(const PgmqFeatures &f)
{
	std::vector<std::string> out;
	if (!f.policies)
		out.push_back("dead-letter policies");
	if (!f.pause)
		out.push_back("pause");
	if (!f.priorities)
		out.push_back("priorities");
	if (!f.partition_runway)
		out.push_back("partition runway");
	if (!f.failure_reasons)
		out.push_back("failure reasons");
	if (!f.redrive)
		out.push_back("redrive");
	return out;
}

std::string JoinWords(const std::vector<std::string> &words)
{
	std::string text;
	for (std::size_t i = 0; i < words.size(); ++i) {
		if (i > 0)
			text += i + 1 == words.size() ? " and " : ", ";
		text += words[i];
	}
	return text;
}

}  // namespace pgmq::pg
