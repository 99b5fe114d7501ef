// src/core/topic.cpp
// Topic routing rules (see topic.hpp). Pure functions; may throw CoreError.
#include "pgmq/core/topic.hpp"

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

namespace {

bool IsKeyCharacter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
	       c == '-';
}

bool IsPatternCharacter(char c) { return IsKeyCharacter(c) || c == '*' || c == '#'; }

// Escaped with a backslash in a pattern's regex.
constexpr std::string_view kRegexMetacharacters = ".+?{}()|[]\\^$";

[[noreturn]] void Reject(const std::string &message) { throw CoreError(ErrorKind::InvalidParameter, message); }

// The rules routing keys and patterns share, in upstream's order; `what` names
// the argument in messages, `allowed` describes the character set.
template <typename IsAllowed>
void CheckTopicText(std::string_view text, const char *what, IsAllowed is_allowed, const char *allowed)
{
	const std::string name(what);
	if (text.empty())
		Reject(name + " cannot be NULL or empty");
	const std::size_t chars = Utf8Length(text);
	if (chars > kMaxTopicChars)
		Reject(name + " length cannot exceed 255 characters, got " + std::to_string(chars) + " characters");
	for (char c : text)
		if (!is_allowed(c))
			Reject(name + " contains invalid characters. Only " + allowed + " are allowed. Got: " + std::string(text));
	if (text.front() == '.')
		Reject(name + " cannot start with a dot. Got: " + std::string(text));
	if (text.back() == '.')
		Reject(name + " cannot end with a dot. Got: " + std::string(text));
	if (text.find("..") != std::string_view::npos)
		Reject(name + " cannot contain consecutive dots. Got: " + std::string(text));
}

}  // namespace

void CheckRoutingKey(std::string_view routing_key)
{
	CheckTopicText(routing_key, "routing_key", IsKeyCharacter, "alphanumeric, dots, hyphens, and underscores");
}

void CheckTopicPattern(std::string_view pattern)
{
	CheckTopicText(pattern, "pattern", IsPatternCharacter, "alphanumeric, dots, hyphens, underscores, *, and #");
	const std::string got = ". Got: " + std::string(pattern);
	if (pattern.find("**") != std::string_view::npos)
		Reject("pattern cannot contain consecutive stars (**). Use # for multi-segment matching" + got);
	if (pattern.find("##") != std::string_view::npos)
		Reject("pattern cannot contain consecutive hashes (##). A single # already matches zero or more segments" + got);
	if (pattern.find("*#") != std::string_view::npos || pattern.find("#*") != std::string_view::npos)
		Reject("pattern cannot contain adjacent wildcards (*# or #*). Separate wildcards with dots" + got);
}

std::string TopicPatternRegex(std::string_view pattern)
{
	std::string regex;
	regex.reserve(pattern.size() * 2 + 2);
	regex.push_back('^');
	for (char c : pattern) {
		if (c == '*') {
			regex += "[^.]+";
		} else if (c == '#') {
			regex += ".*";
		} else {
			if (kRegexMetacharacters.find(c) != std::string_view::npos)
				regex.push_back('\\');
			regex.push_back(c);
		}
	}
	regex.push_back('$');
	return regex;
}

bool TopicPatternMatches(std::string_view pattern, std::string_view routing_key) noexcept
{
	// reach[i]: the pattern read so far can match the key's first i bytes.
	const std::size_t n = routing_key.size();
	if (n > kMaxTopicChars)
		return false;
	bool reach[kMaxTopicChars + 1] = {true};
	bool next[kMaxTopicChars + 1];
	for (char c : pattern) {
		next[0] = c == '#' && reach[0];
		for (std::size_t j = 1; j <= n; j++) {
			const char k = routing_key[j - 1];
			if (c == '*')  // [^.]+: a non-dot byte after a reachable point or within the run
				next[j] = k != '.' && (reach[j - 1] || next[j - 1]);
			else if (c == '#')  // .*
				next[j] = reach[j] || next[j - 1];
			else
				next[j] = reach[j - 1] && k == c;
		}
		bool any = false;
		for (std::size_t j = 0; j <= n; j++)
			any |= (reach[j] = next[j]);
		if (!any)
			return false;
	}
	return reach[n];
}

bool IsTopicPatternRegex(std::string_view pattern, std::string_view regex) noexcept
{
	// Consumes expected from the front of regex, if it is there.
	auto take = [&regex](std::string_view expected) {
		if (regex.substr(0, expected.size()) != expected)
			return false;
		regex.remove_prefix(expected.size());
		return true;
	};
	if (!take("^"))
		return false;
	for (const char &c : pattern) {
		bool ok;
		if (c == '*')
			ok = take("[^.]+");
		else if (c == '#')
			ok = take(".*");
		else
			ok = (kRegexMetacharacters.find(c) == std::string_view::npos || take("\\")) && take(std::string_view(&c, 1));
		if (!ok)
			return false;
	}
	return take("$") && regex.empty();
}

const char *TopicBindingsSql() noexcept
{
	return "SELECT b.pattern, b.queue_name, b.compiled_regex FROM pgmq.topic_bindings AS b";
}

void CheckTopicSend(bool msg_null, int64_t delay_seconds)
{
	if (msg_null)
		throw CoreError(ErrorKind::NullArgument, "msg cannot be NULL");
	if (delay_seconds < 0)
		Reject("delay cannot be negative, got: " + std::to_string(delay_seconds));
}

std::string InsertTopicBindingSql()
{
	return "INSERT INTO pgmq.topic_bindings (pattern, queue_name) VALUES ($1, $2) "
	       "ON CONFLICT ON CONSTRAINT topic_bindings_unique_pattern_queue DO NOTHING";
}

std::string DeleteTopicBindingSql()
{
	return "DELETE FROM pgmq.topic_bindings WHERE pattern OPERATOR(pg_catalog.=) $1 "
	       "AND queue_name OPERATOR(pg_catalog.=) $2";
}

namespace {

// The distinct queues of text[] literal $1 (those whose bindings match the
// routing key, found by the caller with TopicPatternMatches), by name.
constexpr const char *kMatchingQueues =
	"(SELECT DISTINCT q.queue_name FROM pg_catalog.unnest($1::pg_catalog.text[]) AS q(queue_name) "
	"ORDER BY q.queue_name) AS m";

}  // namespace

std::string SendTopicSql()
{
	return std::string("SELECT pg_catalog.count(*) FROM ") + kMatchingQueues +
	       " CROSS JOIN LATERAL pgmq.send(m.queue_name, $2, $3, $4) AS s(msg_id)";
}

std::string SendBatchTopicSql()
{
	return std::string("SELECT m.queue_name, s.msg_id FROM ") + kMatchingQueues +
	       " CROSS JOIN LATERAL pgmq._send_batch(m.queue_name, $2, $3, $4) AS s(msg_id)";
}

}  // namespace pgmq::core
