// include/pgmq/core/topic.hpp
// Topic routing (AMQP-style fan-out): a routing key such as "logs.api.error"
// is matched against the patterns queues are bound to ("logs.*.error",
// "logs.#"); a message sent to the key goes to every matching queue.
// Wording: a *segment* is the text between dots; `*` matches exactly one
// non-empty segment, `#` zero or more characters (so zero or more segments).
// Validation rules, their order and their messages are upstream pgmq 1.11's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pgmq::core {

// Longest routing key or pattern, in characters.
constexpr std::size_t kMaxTopicChars = 255;

// Upstream's routing-key rules, in its order: not empty, at most 255
// characters, only [a-zA-Z0-9._-], no leading, trailing or doubled dot.
// A NULL key is passed as empty (same message). May throw
// CoreError(InvalidParameter).
void CheckRoutingKey(std::string_view routing_key);

// Upstream's pattern rules, in its order: the routing-key rules with * and #
// also allowed, then no "**", no "##", no "*#" or "#*". May throw
// CoreError(InvalidParameter).
void CheckTopicPattern(std::string_view pattern);

// The anchored regular expression a pattern compiles to (the generated
// compiled_regex column): regex metacharacters .+?{}()|[]\^$ escaped, `*`
// becomes [^.]+, `#` becomes .*, wrapped in ^...$. Defined for any text, not
// only valid patterns, so rows inserted directly get upstream's value too.
std::string TopicPatternRegex(std::string_view pattern);

// Whether routing_key matches pattern exactly as `routing_key ~
// TopicPatternRegex(pattern)` does in PostgreSQL, without a regular
// expression: other characters match themselves, `*` one or more characters
// other than a dot, `#` any run of characters, possibly empty. For any
// pattern text; routing_key must be at most kMaxTopicChars bytes (a valid
// key), a longer one never matches. send_topic routes with it: compiling one
// regex per binding on every call cost 20-150 ms with 2,000 bindings.
bool TopicPatternMatches(std::string_view pattern, std::string_view routing_key) noexcept;

// Whether regex is TopicPatternRegex(pattern) (a stored compiled_regex can
// only differ if someone altered the generated column: then the stored regex
// is the rule, and PostgreSQL matches it).
bool IsTopicPatternRegex(std::string_view pattern, std::string_view regex) noexcept;

// Every binding: (pattern, queue_name, compiled_regex).
const char *TopicBindingsSql() noexcept;

// send_topic's own argument rules after the key: "msg cannot be NULL",
// "delay cannot be negative, got: N". May throw CoreError.
void CheckTopicSend(bool msg_null, int64_t delay_seconds);

// SQL of the topic functions that are not per-message (run once per call):
// ($1 pattern, $2 queue name): a duplicate binding is a no-op.
std::string InsertTopicBindingSql();
// ($1 pattern, $2 queue name) -> one row per deleted binding.
std::string DeleteTopicBindingSql();

// The statement text behind Statement::SendTopic and SendBatchTopic: every
// distinct queue of $1 (the names of the queues whose bindings match the
// routing key, as a text[] literal), in name order, gets pgmq.send /
// pgmq._send_batch with $2 message(s), $3 header(s), $4 vt.
std::string SendTopicSql();
std::string SendBatchTopicSql();

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
