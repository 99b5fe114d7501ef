// include/pgmq/core/queue_name.hpp
// Queue-name rules and the names of the objects behind a queue.
// A queue "x" lives in tables pgmq.q_x (messages) and pgmq.a_x (archive);
// table names are lowercased, the meta row keeps the name as given.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pgmq::core {

// Longest queue name create* accepts, in characters (upstream's limit:
// partman v5's "template_pgmq_q_" prefix + 47 = 63).
constexpr std::size_t kMaxQueueNameChars = 47;
// Longest identifier Postgres keeps (NAMEDATALEN - 1).
constexpr std::size_t kMaxIdentifierBytes = 63;

// Rejects names upstream's format_table_name rejects ($ ; -- ') and the empty
// name. May throw CoreError(InvalidName).
void CheckQueueNameCharacters(std::string_view name);

// Rejects names longer than kMaxQueueNameChars characters (UTF-8 aware), and
// names whose table names would not fit an identifier. May throw.
void CheckQueueNameLength(std::string_view name);

// Number of UTF-8 characters in text (continuation bytes not counted).
std::size_t Utf8Length(std::string_view text);

// lower(prefix || '_' || name), as upstream's format_table_name (ASCII
// lowercasing; see docs/compatibility.md). Writes into out when it fits
// (cap includes the terminating NUL) and returns the length it needs, so
// the hot path reuses a fixed buffer. Does not validate.
std::size_t WriteTableName(std::string_view prefix, std::string_view name, char *out, std::size_t cap) noexcept;

// q_<name> and a_<name> into buffers of cap bytes each. May throw
// CoreError(NameTooLong) when they do not fit.
void WriteQueueTableNames(std::string_view name, char *queue_table, char *archive_table, std::size_t cap);

// Same as WriteTableName, as a string.
std::string TableName(std::string_view prefix, std::string_view name);

// "ident" with embedded quotes doubled: always quoted, so no keyword list.
std::string QuoteIdentifier(std::string_view identifier);

// pgmq."<table>"
std::string QualifiedTable(std::string_view table);

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
