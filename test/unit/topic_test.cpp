// test/unit/topic_test.cpp
// Topic routing rules of the core (include/pgmq/core/topic.hpp): every
// routing-key and pattern rule with upstream's exact message and order, the
// pattern -> regex compilation, and what the compiled patterns match.
#include "pgmq/core/topic.hpp"

#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pgmq/core/error.hpp"

#include "core_error_assert.hpp"

namespace {

using pgmq::core::CheckRoutingKey;
using pgmq::core::CheckTopicPattern;
using pgmq::core::CheckTopicSend;
using pgmq::core::ErrorKind;
using pgmq::core::TopicPatternRegex;
using pgmq_test::ThrowsCoreError;

// Whether routing key `key` matches `pattern` the way Postgres' `key ~
// compiled_regex` does. The compiled regexes use only literals, [^.]+ and
// .*, which mean the same in ECMAScript as in Postgres' ARE flavour.
bool Routes(const std::string &pattern, const std::string &key)
{
	return std::regex_search(key, std::regex(TopicPatternRegex(pattern)));
}

// ---------------------------------------------------------------------------
// Routing keys

TEST(RoutingKey, AcceptsUpstreamExamples)
{
	for (const char *key : {"logs.error", "app.user-service.auth", "system_events.db.connection_failed", "a", "A-9_z",
	                        "x.y.z.w.v"})
		EXPECT_NO_THROW(CheckRoutingKey(key)) << key;
}

TEST(RoutingKey, EmptyOrNull)
{
	// The adapter passes NULL as empty: one message for both, as upstream.
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey(""); }, ErrorKind::InvalidParameter,
	                            "routing_key cannot be NULL or empty"));
}

TEST(RoutingKey, LengthCountsCharacters)
{
	EXPECT_NO_THROW(CheckRoutingKey(std::string(255, 'a')));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey(std::string(256, 'a')); }, ErrorKind::InvalidParameter,
	                            "routing_key length cannot exceed 255 characters, got 256 characters"));
	// 200 two-byte characters: 400 bytes, but only 200 characters, so the
	// length rule passes and the character rule reports them.
	std::string wide;
	for (int i = 0; i < 200; ++i)
		wide += "\xC3\xA9";
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey(wide); }, ErrorKind::InvalidParameter,
	                            "routing_key contains invalid characters. Only alphanumeric, dots, hyphens, and "
	                            "underscores are allowed. Got: " + wide));
	std::string too_wide;
	for (int i = 0; i < 256; ++i)
		too_wide += "\xC3\xA9";
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey(too_wide); }, ErrorKind::InvalidParameter,
	                            "routing_key length cannot exceed 255 characters, got 256 characters"));
}

TEST(RoutingKey, InvalidCharacters)
{
	const std::string prefix =
		"routing_key contains invalid characters. Only alphanumeric, dots, hyphens, and underscores are allowed. Got: ";
	for (const char *key : {"logs.error!", "logs error", "logs.*", "logs.#", "a/b", "caf\xC3\xA9", "a\tb", "a$b"})
		EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey(key); }, ErrorKind::InvalidParameter,
	                            prefix + key)) << key;
}

TEST(RoutingKey, DotRulesInUpstreamOrder)
{
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey(".logs.error"); }, ErrorKind::InvalidParameter,
	                            "routing_key cannot start with a dot. Got: .logs.error"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey("logs.error."); }, ErrorKind::InvalidParameter,
	                            "routing_key cannot end with a dot. Got: logs.error."));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey("logs..error"); }, ErrorKind::InvalidParameter,
	                            "routing_key cannot contain consecutive dots. Got: logs..error"));
	// Several broken rules: the first in upstream's order is reported.
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey(".a."); }, ErrorKind::InvalidParameter,
	                            "routing_key cannot start with a dot. Got: .a."));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey("a..b."); }, ErrorKind::InvalidParameter,
	                            "routing_key cannot end with a dot. Got: a..b."));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey("."); }, ErrorKind::InvalidParameter,
	                            "routing_key cannot start with a dot. Got: ."));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckRoutingKey("..!"); }, ErrorKind::InvalidParameter,
	                            "routing_key contains invalid characters. Only alphanumeric, dots, hyphens, and "
	                            "underscores are allowed. Got: ..!"));
}

// ---------------------------------------------------------------------------
// Patterns

TEST(TopicPattern, AcceptsUpstreamExamples)
{
	for (const char *pattern : {"logs.*", "logs.#", "*.error", "#.error", "app.*.#", "#", "*", "a*b", "a#b.c",
	                            "logs.error"})
		EXPECT_NO_THROW(CheckTopicPattern(pattern)) << pattern;
}

TEST(TopicPattern, EachRuleWithItsMessage)
{
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern(""); }, ErrorKind::InvalidParameter,
	                            "pattern cannot be NULL or empty"));
	EXPECT_NO_THROW(CheckTopicPattern(std::string(255, 'a')));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern(std::string(256, '#')); }, ErrorKind::InvalidParameter,
	                            "pattern length cannot exceed 255 characters, got 256 characters"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("logs.error!"); }, ErrorKind::InvalidParameter,
	                            "pattern contains invalid characters. Only alphanumeric, dots, hyphens, "
	                            "underscores, *, and # are allowed. Got: logs.error!"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern(".logs.*"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot start with a dot. Got: .logs.*"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("logs.*."); }, ErrorKind::InvalidParameter,
	                            "pattern cannot end with a dot. Got: logs.*."));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("logs..error"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain consecutive dots. Got: logs..error"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("logs.**"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain consecutive stars (**). Use # for multi-segment matching. Got: logs.**"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("logs.##"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain consecutive hashes (##). A single # already matches "
	                            "zero or more segments. Got: logs.##"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("logs.*#"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain adjacent wildcards (*# or #*). Separate wildcards with dots. Got: logs.*#"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("logs.#*"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain adjacent wildcards (*# or #*). Separate wildcards with dots. Got: logs.#*"));
}

TEST(TopicPattern, RulesApplyInUpstreamOrder)
{
	// Length before characters, characters before dots, dots before wildcards,
	// stars before hashes before adjacency.
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern(std::string(300, '!')); }, ErrorKind::InvalidParameter,
	                            "pattern length cannot exceed 255 characters, got 300 characters"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern(".a!"); }, ErrorKind::InvalidParameter,
	                            "pattern contains invalid characters. Only alphanumeric, dots, hyphens, "
	                            "underscores, *, and # are allowed. Got: .a!"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern(".**"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot start with a dot. Got: .**"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("a..**"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain consecutive dots. Got: a..**"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("**.##"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain consecutive stars (**). Use # for multi-segment matching. Got: **.##"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("##.*#"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain consecutive hashes (##). A single # already matches "
	                            "zero or more segments. Got: ##.*#"));
	// *** holds both ** and, read as a whole, nothing else: the star rule.
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicPattern("***"); }, ErrorKind::InvalidParameter,
	                            "pattern cannot contain consecutive stars (**). Use # for multi-segment matching. Got: ***"));
}

// ---------------------------------------------------------------------------
// Compilation

TEST(TopicRegex, CompilesAsUpstreamsGeneratedColumn)
{
	EXPECT_EQ(TopicPatternRegex("logs.*"), "^logs\\.[^.]+$");
	EXPECT_EQ(TopicPatternRegex("logs.#"), "^logs\\..*$");
	EXPECT_EQ(TopicPatternRegex("#"), "^.*$");
	EXPECT_EQ(TopicPatternRegex("*.error"), "^[^.]+\\.error$");
	EXPECT_EQ(TopicPatternRegex("app.*.#"), "^app\\.[^.]+\\..*$");
	EXPECT_EQ(TopicPatternRegex("a-b_c"), "^a-b_c$");
	EXPECT_EQ(TopicPatternRegex(""), "^$");
}

TEST(TopicRegex, EscapesEveryRegexMetacharacter)
{
	// Rows inserted without bind_topic are not validated; their regex must
	// still match only the literal text, as upstream's regexp_replace makes it.
	EXPECT_EQ(TopicPatternRegex(".+?{}()|[]\\^$"), "^\\.\\+\\?\\{\\}\\(\\)\\|\\[\\]\\\\\\^\\$$");
	EXPECT_EQ(TopicPatternRegex("a b"), "^a b$");
	EXPECT_TRUE(Routes("a+b", "a+b"));
	EXPECT_FALSE(Routes("a+b", "aab"));
	EXPECT_TRUE(Routes("(x)", "(x)"));
}

// ---------------------------------------------------------------------------
// Routing semantics: * one non-empty segment, # any text (zero or more segments)

TEST(TopicRouting, StarMatchesExactlyOneSegment)
{
	EXPECT_TRUE(Routes("logs.*", "logs.error"));
	EXPECT_FALSE(Routes("logs.*", "logs.api.error"));
	EXPECT_FALSE(Routes("logs.*", "logs"));
	EXPECT_TRUE(Routes("*.error", "db.error"));
	EXPECT_FALSE(Routes("*.error", "error"));
	EXPECT_TRUE(Routes("*", "anything"));
	EXPECT_FALSE(Routes("*", "two.segments"));
	// Inside a segment * is one or more characters of that segment.
	EXPECT_TRUE(Routes("a*b", "axxb"));
	EXPECT_FALSE(Routes("a*b", "ab"));
	EXPECT_FALSE(Routes("a*b", "a.b"));
}

TEST(TopicRouting, HashMatchesZeroOrMoreSegments)
{
	EXPECT_TRUE(Routes("#", "a"));
	EXPECT_TRUE(Routes("#", "a.b.c"));
	EXPECT_TRUE(Routes("logs.#", "logs.error"));
	EXPECT_TRUE(Routes("logs.#", "logs.api.error"));
	// Upstream's consequences (API.md §2.14): logs.# needs "logs." and more,
	// #.error needs a dot before error.
	EXPECT_FALSE(Routes("logs.#", "logs"));
	EXPECT_TRUE(Routes("#.error", "app.error"));
	EXPECT_TRUE(Routes("#.error", "x.y.error"));
	EXPECT_FALSE(Routes("#.error", "error"));
	EXPECT_TRUE(Routes("app.*.#", "app.auth.login.failed"));
	EXPECT_FALSE(Routes("app.*.#", "app.auth"));
}

TEST(TopicRouting, LiteralsAreExactAndCaseSensitive)
{
	EXPECT_TRUE(Routes("logs.error", "logs.error"));
	EXPECT_FALSE(Routes("logs.error", "logs.errors"));
	EXPECT_FALSE(Routes("logs.error", "xlogs.error"));
	EXPECT_FALSE(Routes("logs.error", "Logs.Error"));
	// The dot is literal, not "any character".
	EXPECT_FALSE(Routes("logs.error", "logsXerror"));
}

// ---------------------------------------------------------------------------
// send_topic arguments

TEST(TopicSend, MessageThenDelay)
{
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicSend(true, -1); }, ErrorKind::NullArgument,
	                            "msg cannot be NULL"));
	EXPECT_TRUE(ThrowsCoreError([&] { CheckTopicSend(false, -1); }, ErrorKind::InvalidParameter,
	                            "delay cannot be negative, got: -1"));
	EXPECT_NO_THROW(CheckTopicSend(false, 0));
	EXPECT_NO_THROW(CheckTopicSend(false, 2147483647));
}

}  // namespace

// TopicPatternMatches: the same answer as `key ~ TopicPatternRegex(pattern)`
// in PostgreSQL (sql/topic_matching.sql checks the two against each other).
namespace {

using pgmq::core::IsTopicPatternRegex;
using pgmq::core::TopicPatternMatches;
using pgmq::core::TopicPatternRegex;

TEST(TopicPatternMatches, LiteralsMatchThemselvesWholly)
{
	EXPECT_TRUE(TopicPatternMatches("logs.api.error", "logs.api.error"));
	EXPECT_FALSE(TopicPatternMatches("logs.api", "logs.api.error"));
	EXPECT_FALSE(TopicPatternMatches("logs.api.error", "logs.api"));
	EXPECT_FALSE(TopicPatternMatches("Logs", "logs"));
	EXPECT_FALSE(TopicPatternMatches("", "a"));
	EXPECT_TRUE(TopicPatternMatches("", ""));
}

TEST(TopicPatternMatches, StarIsOneOrMoreNonDotCharacters)
{
	EXPECT_TRUE(TopicPatternMatches("logs.*.error", "logs.api.error"));
	EXPECT_FALSE(TopicPatternMatches("logs.*.error", "logs..error"));
	EXPECT_FALSE(TopicPatternMatches("logs.*.error", "logs.a.b.error"));
	EXPECT_TRUE(TopicPatternMatches("logs.*", "logs.x"));
	EXPECT_FALSE(TopicPatternMatches("logs.*", "logs."));
	EXPECT_TRUE(TopicPatternMatches("a*c", "abbc"));   // inside a segment, too
	EXPECT_FALSE(TopicPatternMatches("a*c", "ac"));
	EXPECT_TRUE(TopicPatternMatches("**", "ab"));      // invalid, but defined: two runs
	EXPECT_FALSE(TopicPatternMatches("**", "a"));
}

TEST(TopicPatternMatches, HashIsAnyRunIncludingEmptyAndDots)
{
	EXPECT_TRUE(TopicPatternMatches("logs.#", "logs.a.b.c"));
	EXPECT_TRUE(TopicPatternMatches("logs.#", "logs."));
	EXPECT_FALSE(TopicPatternMatches("logs.#", "logs"));
	EXPECT_TRUE(TopicPatternMatches("#", ""));
	EXPECT_TRUE(TopicPatternMatches("#.error", "a.b.error"));
	EXPECT_TRUE(TopicPatternMatches("#.error", ".error"));
	EXPECT_TRUE(TopicPatternMatches("a.#.z", "a..z"));
	EXPECT_FALSE(TopicPatternMatches("a.#.z", "a.z"));
}

TEST(TopicPatternMatches, RegexMetacharactersAreLiterals)
{
	EXPECT_TRUE(TopicPatternMatches("a+b", "a+b"));
	EXPECT_FALSE(TopicPatternMatches("a+b", "aab"));
	EXPECT_TRUE(TopicPatternMatches("a.b", "a.b"));
	EXPECT_FALSE(TopicPatternMatches("a.b", "axb"));  // '.' is a dot, not any character
	EXPECT_TRUE(TopicPatternMatches("[x]", "[x]"));
}

TEST(TopicPatternMatches, KeysLongerThanTheLimitNeverMatch)
{
	const std::string long_key(256, 'a');
	EXPECT_FALSE(TopicPatternMatches("#", long_key));
	EXPECT_TRUE(TopicPatternMatches("#", std::string(255, 'a')));
}

TEST(IsTopicPatternRegex, RecognisesExactlyTheGeneratedRegex)
{
	for (const char *pattern : {"logs.*.error", "#", "a+b.[x]\\y$", "", "**", "x#y*z"})
		EXPECT_TRUE(IsTopicPatternRegex(pattern, TopicPatternRegex(pattern))) << pattern;
	EXPECT_FALSE(IsTopicPatternRegex("a.b", "^a.b$"));
	EXPECT_FALSE(IsTopicPatternRegex("a", "^a$x"));
	EXPECT_FALSE(IsTopicPatternRegex("a", "^a"));
	EXPECT_FALSE(IsTopicPatternRegex("*", "^.*$"));
	EXPECT_FALSE(IsTopicPatternRegex("a", "^(a|b)$"));
}

}  // namespace

namespace {

// Every pattern over {a, b, ., *, #} of up to 4 characters against every key
// over {a, b, .} of up to 5: TopicPatternMatches agrees with the regex.
TEST(TopicPatternMatches, AgreesWithTheRegexOnEverySmallCase)
{
	const std::string pattern_alphabet = "ab.*#";
	const std::string key_alphabet = "ab.";
	auto all = [](const std::string &alphabet, std::size_t max_len) {
		std::vector<std::string> out{""};
		for (std::size_t start = 0; out.back().size() < max_len;) {
			const std::size_t end = out.size();
			for (std::size_t i = start; i < end; i++)
				for (char c : alphabet)
					out.push_back(out[i] + c);
			start = end;
		}
		return out;
	};
	const std::vector<std::string> keys = all(key_alphabet, 5);
	for (const std::string &pattern : all(pattern_alphabet, 4)) {
		const std::regex regex(pgmq::core::TopicPatternRegex(pattern));
		for (const std::string &key : keys)
			ASSERT_EQ(pgmq::core::TopicPatternMatches(pattern, key), std::regex_search(key, regex))
				<< "pattern " << pattern << " key " << key;
	}
}

}  // namespace
