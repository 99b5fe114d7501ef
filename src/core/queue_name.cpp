// src/core/queue_name.cpp
// Queue-name validation, table naming and identifier quoting. May throw
// CoreError; pure functions of their inputs.
#include "pgmq/core/queue_name.hpp"

#include "pgmq/core/error.hpp"

namespace pgmq::core {

void CheckQueueNameCharacters(std::string_view name)
{
	if (name.empty())
		throw CoreError(ErrorKind::InvalidName, "queue name cannot be empty");
	bool bad = name.find_first_of("$;'") != std::string_view::npos || name.find("--") != std::string_view::npos;
	// A NUL cannot reach us from text, but names are also used as C strings.
	bad = bad || name.find('\0') != std::string_view::npos;
	if (bad)
		throw CoreError(ErrorKind::InvalidName, "queue name contains invalid characters: $, ;, --, or '");
}

std::size_t Utf8Length(std::string_view text)
{
	std::size_t chars = 0;
	for (unsigned char c : text)
		chars += (c & 0xC0) != 0x80;
	return chars;
}

void CheckQueueNameLength(std::string_view name)
{
	if (Utf8Length(name) > kMaxQueueNameChars)
		throw CoreError(ErrorKind::NameTooLong, "queue name is too long, maximum length is 47 characters");
	// 47 multi-byte characters can still overflow an identifier; upstream would
	// silently truncate the table name, we refuse instead. The longest derived
	// name is the archive index "archived_at_idx_<name>".
	if (name.size() + 16 > kMaxIdentifierBytes)
		throw CoreError(ErrorKind::NameTooLong, "queue name is too long, its table names would exceed 63 bytes");
}

std::size_t WriteTableName(std::string_view prefix, std::string_view name, char *out, std::size_t cap) noexcept
{
	const std::size_t needed = prefix.size() + 1 + name.size();
	if (needed + 1 > cap)
		return needed;
	std::size_t pos = 0;
	auto put = [&](char c) { out[pos++] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
	for (char c : prefix)
		put(c);
	put('_');
	for (char c : name)
		put(c);
	out[pos] = '\0';
	return needed;
}

void WriteQueueTableNames(std::string_view name, char *queue_table, char *archive_table, std::size_t cap)
{
	if (WriteTableName("q", name, queue_table, cap) >= cap || WriteTableName("a", name, archive_table, cap) >= cap)
		throw CoreError(ErrorKind::NameTooLong, "queue name is too long for its table names");
}

std::string TableName(std::string_view prefix, std::string_view name)
{
	std::string out(prefix.size() + 1 + name.size() + 1, '\0');
	WriteTableName(prefix, name, out.data(), out.size());
	out.pop_back();
	return out;
}

static std::string Quote(std::string_view text, char quote)
{
	std::string out;
	out.reserve(text.size() + 2);
	out.push_back(quote);
	for (char c : text) {
		if (c == quote)
			out.push_back(quote);
		out.push_back(c);
	}
	out.push_back(quote);
	return out;
}

std::string QuoteIdentifier(std::string_view identifier) { return Quote(identifier, '"'); }

std::string QualifiedTable(std::string_view table) { return "pgmq." + QuoteIdentifier(table); }

}  // namespace pgmq::core
