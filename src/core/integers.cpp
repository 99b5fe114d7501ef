// src/core/integers.cpp
// Integer parsing as PostgreSQL's input functions do it (see integers.hpp).
#include "pgmq/core/integers.hpp"

#include <limits>

namespace pgmq::core {

std::optional<int64_t> ParseInt8(std::string_view text)
{
	auto blank = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
	while (!text.empty() && blank(text.front()))
		text.remove_prefix(1);
	while (!text.empty() && blank(text.back()))
		text.remove_suffix(1);
	bool negative = false;
	if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
		negative = text.front() == '-';
		text.remove_prefix(1);
	}
	if (text.empty())
		return std::nullopt;
	// Accumulate negatively: INT64_MIN has no positive counterpart.
	int64_t value = 0;
	for (char c : text) {
		if (c < '0' || c > '9')
			return std::nullopt;
		const int digit = c - '0';
		if (value < (std::numeric_limits<int64_t>::min() + digit) / 10)
			return std::nullopt;
		value = value * 10 - digit;
	}
	if (!negative) {
		if (value == std::numeric_limits<int64_t>::min())
			return std::nullopt;
		value = -value;
	}
	return value;
}

std::optional<int32_t> ParseInt4(std::string_view text)
{
	const std::optional<int64_t> value = ParseInt8(text);
	if (!value || *value > std::numeric_limits<int32_t>::max() || *value < std::numeric_limits<int32_t>::min())
		return std::nullopt;
	return static_cast<int32_t>(*value);
}

}  // namespace pgmq::core
