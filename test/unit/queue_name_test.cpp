// test/unit/queue_name_test.cpp
// Queue-name rules (API.md §2.1): the invalid-character check, the 47
// character limit, table naming and identifier quoting.
#include "pgmq/core/queue_name.hpp"

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core_error_assert.hpp"
#include "pgmq/core/error.hpp"
#include "sql_lexer.hpp"

namespace {

using pgmq::core::CheckQueueNameCharacters;
using pgmq::core::CheckQueueNameLength;
using pgmq::core::ErrorKind;
using pgmq::core::kMaxIdentifierBytes;
using pgmq::core::kMaxQueueNameChars;
using pgmq::core::QualifiedTable;
using pgmq::core::QuoteIdentifier;
using pgmq::core::TableName;
using pgmq::core::Utf8Length;
using pgmq::core::WriteQueueTableNames;
using pgmq::core::WriteTableName;
using pgmq_test::ThrowsCoreError;
using pgmq_test::ThrowsCoreErrorKind;

const char kInvalidCharacters[] = "queue name contains invalid characters: $, ;, --, or '";
const char kTooLong[] = "queue name is too long, maximum length is 47 characters";

std::string Repeat(const std::string &unit, std::size_t times)
{
	std::string out;
	for (std::size_t i = 0; i < times; ++i)
		out += unit;
	return out;
}

// Test names for ctest: the index, then the name's ASCII letters and digits.
std::string CaseName(const ::testing::TestParamInfo<std::string> &info)
{
	std::string out = "n" + std::to_string(info.index) + "_";
	for (char c : info.param)
		out.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
	return out;
}

const std::string kE2 = "\xC3\xA9";          // é, 2 bytes
const std::string kK3 = "\xE6\x97\xA5";      // 日, 3 bytes
const std::string kS4 = "\xF0\x9F\x98\x80";  // 😀, 4 bytes

// ---------------------------------------------------------------------------
// Constants

TEST(QueueNameConstants, MatchUpstreamLimits)
{
	EXPECT_EQ(kMaxQueueNameChars, 47u);
	EXPECT_EQ(kMaxIdentifierBytes, 63u);
	// partman v5 template table: "template_pgmq_q_" + 47 characters = 63.
	EXPECT_EQ(std::strlen("template_pgmq_q_") + kMaxQueueNameChars, kMaxIdentifierBytes);
}

// ---------------------------------------------------------------------------
// CheckQueueNameCharacters

class RejectedCharacters : public ::testing::TestWithParam<std::string> {};

TEST_P(RejectedCharacters, FailWithUpstreamMessage)
{
	const std::string name = GetParam();
	EXPECT_TRUE(ThrowsCoreError([&] { CheckQueueNameCharacters(name); }, ErrorKind::InvalidName, kInvalidCharacters))
		<< "name: " << name;
}

INSTANTIATE_TEST_SUITE_P(
	UpstreamAndEdgeCases, RejectedCharacters,
	::testing::Values(
		// upstream's own failure cases
		"dollar$fail", "double--hyphen-fail", "semicolon;fail", "single'quote-fail",
		// upstream's SQL-injection attempt
		"bad; create table pgmq.evil(id int)",
		// each character alone, at either end, repeated
		"$", ";", "--", "'", "$leading", "trailing$", ";x", "x;", "'x", "x'", "--x", "x--", "a---b", "''",
		// hidden among otherwise valid characters
		"Queue-With.Dots and;Spaces", "\xC3\xA9t\xC3\xA9$", "x\"; DROP TABLE t; --"),
	CaseName);

TEST(QueueNameCharacters, EmbeddedNulIsRejected)
{
	const std::string name("ab\0cd", 5);
	EXPECT_TRUE(ThrowsCoreError([&] { CheckQueueNameCharacters(name); }, ErrorKind::InvalidName, kInvalidCharacters));
}

TEST(QueueNameCharacters, EmptyNameIsRejected)
{
	EXPECT_TRUE(ThrowsCoreError([] { CheckQueueNameCharacters(""); }, ErrorKind::InvalidName,
	                            "queue name cannot be empty"));
}

class AcceptedNames : public ::testing::TestWithParam<std::string> {};

TEST_P(AcceptedNames, PassTheCharacterCheck)
{
	const std::string name = GetParam();
	EXPECT_NO_THROW(CheckQueueNameCharacters(name)) << "name: " << name;
}

INSTANTIATE_TEST_SUITE_P(
	UpstreamAndEdgeCases, AcceptedNames,
	::testing::Values(
		// upstream's accepted names
		"queue-hyphened", "QueueCased", "cat-dog", "cat_dog",
		// single hyphens anywhere, dots, spaces, uppercase, digits
		"-", "a-", "-a", "a-b-c", "-a-", "with.dot", ".", "with space", " ", "UPPER", "0", "123abc",
		// unicode
		"\xC3\xA9t\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80",
		// quoting characters other than ' are fine: identifiers are always quoted
		"\"", "a\"b", "back\\slash", "percent%", "tab\tname", "select", "x\" DROP TABLE t"),
	CaseName);

// ---------------------------------------------------------------------------
// Utf8Length

TEST(Utf8Length, CountsCharactersNotBytes)
{
	EXPECT_EQ(Utf8Length(""), 0u);
	EXPECT_EQ(Utf8Length("a"), 1u);
	EXPECT_EQ(Utf8Length("abc"), 3u);
	EXPECT_EQ(Utf8Length(kE2), 1u);
	EXPECT_EQ(Utf8Length(kK3), 1u);
	EXPECT_EQ(Utf8Length(kS4), 1u);
	EXPECT_EQ(Utf8Length("a" + kE2 + "b" + kK3 + "c" + kS4), 6u);
	EXPECT_EQ(Utf8Length(Repeat(kE2, 47)), 47u);
	EXPECT_EQ(Utf8Length(Repeat(kS4, 10)), 10u);
}

// ---------------------------------------------------------------------------
// CheckQueueNameLength

TEST(QueueNameLength, FortySevenAsciiCharactersAreAccepted)
{
	EXPECT_NO_THROW(CheckQueueNameLength(std::string(47, 'a')));
	EXPECT_NO_THROW(CheckQueueNameLength("a"));
	EXPECT_NO_THROW(CheckQueueNameLength(std::string(46, 'Z')));
}

TEST(QueueNameLength, FortyEightAsciiCharactersFailWithUpstreamMessage)
{
	EXPECT_TRUE(ThrowsCoreError([] { CheckQueueNameLength(std::string(48, 'a')); }, ErrorKind::NameTooLong, kTooLong));
	EXPECT_TRUE(ThrowsCoreError([] { CheckQueueNameLength(std::string(200, 'a')); }, ErrorKind::NameTooLong, kTooLong));
}

TEST(QueueNameLength, LimitCountsCharactersNotBytes)
{
	// 48 two-byte characters: too long in characters, so upstream's message.
	EXPECT_TRUE(ThrowsCoreError([] { CheckQueueNameLength(Repeat(kE2, 48)); }, ErrorKind::NameTooLong, kTooLong));
	// 23 two-byte characters + 1 ASCII = 24 characters in 47 bytes: fits everywhere.
	EXPECT_NO_THROW(CheckQueueNameLength(Repeat(kE2, 23) + "a"));
	// 15 three-byte characters + 2 ASCII = 47 bytes.
	EXPECT_NO_THROW(CheckQueueNameLength(Repeat(kK3, 15) + "ab"));
}

TEST(QueueNameLength, MultibyteNamesWhoseDerivedNamesExceed63BytesFail)
{
	// 47 characters, but 94 bytes: q_/a_ tables would be 96 bytes.
	EXPECT_TRUE(ThrowsCoreErrorKind([] { CheckQueueNameLength(Repeat(kE2, 47)); }, ErrorKind::NameTooLong));
	EXPECT_TRUE(ThrowsCoreErrorKind([] { CheckQueueNameLength(Repeat(kS4, 47)); }, ErrorKind::NameTooLong));
	EXPECT_TRUE(ThrowsCoreErrorKind([] { CheckQueueNameLength(Repeat(kK3, 30)); }, ErrorKind::NameTooLong));
}

TEST(QueueNameLength, ByteLimitIsSetByTheArchiveIndexName)
{
	// "archived_at_idx_" (16 bytes) + name is the longest derived identifier:
	// 48 bytes would make it 64. 24 two-byte characters = 48 bytes.
	EXPECT_TRUE(ThrowsCoreError([] { CheckQueueNameLength(Repeat(kE2, 24)); }, ErrorKind::NameTooLong,
	                            "queue name is too long, its table names would exceed 63 bytes"));
	EXPECT_TRUE(ThrowsCoreError([] { CheckQueueNameLength(Repeat(kS4, 12)); }, ErrorKind::NameTooLong,
	                            "queue name is too long, its table names would exceed 63 bytes"));
	EXPECT_NO_THROW(CheckQueueNameLength(Repeat(kS4, 11) + "abc"));  // 47 bytes
}

TEST(QueueNameLength, EveryAcceptedNameHasDerivedNamesThatFitAnIdentifier)
{
	for (const std::string &unit : {std::string("a"), kE2, kK3, kS4}) {
		for (std::size_t count = 1; count <= 60; ++count) {
			const std::string name = Repeat(unit, count);
			// Accepted exactly when both limits hold.
			const bool accepted = count <= kMaxQueueNameChars && name.size() + 16 <= kMaxIdentifierBytes;
			if (!accepted) {
				EXPECT_TRUE(ThrowsCoreErrorKind([&] { CheckQueueNameLength(name); }, ErrorKind::NameTooLong))
					<< unit.size() << "-byte unit x " << count;
				continue;
			}
			EXPECT_NO_THROW(CheckQueueNameLength(name)) << unit.size() << "-byte unit x " << count;
			for (const std::string &derived :
			     {TableName("q", name), TableName("a", name), TableName("q", name) + "_vt_idx",
			      TableName("q", name) + "_msg_id_seq", "archived_at_idx_" + name, "template_pgmq_q_" + name})
				EXPECT_LE(derived.size(), kMaxIdentifierBytes) << derived;
		}
	}
}

TEST(QueueNameLength, DoesNotCheckCharacters)
{
	// The two checks are separate: create* runs characters first, then length.
	EXPECT_NO_THROW(CheckQueueNameLength("semicolon;fail"));
	EXPECT_NO_THROW(CheckQueueNameLength(""));
}

// ---------------------------------------------------------------------------
// WriteTableName

TEST(WriteTableName, LowercasesPrefixUnderscoreName)
{
	char buffer[64];
	EXPECT_EQ(WriteTableName("q", "QueueCased", buffer, sizeof buffer), 12u);
	EXPECT_STREQ(buffer, "q_queuecased");
	EXPECT_EQ(WriteTableName("A", "MiXeD-Name.1", buffer, sizeof buffer), 14u);
	EXPECT_STREQ(buffer, "a_mixed-name.1");
	EXPECT_EQ(WriteTableName("q", "already_lower", buffer, sizeof buffer), 15u);
	EXPECT_STREQ(buffer, "q_already_lower");
}

TEST(WriteTableName, LowercasesOnlyAscii)
{
	// "ÉTÉ": the ASCII T is lowered, the multibyte É bytes are left as given.
	char buffer[64];
	const std::string name = "\xC3\x89T\xC3\x89";
	EXPECT_EQ(WriteTableName("q", name, buffer, sizeof buffer), 2 + name.size());
	EXPECT_EQ(std::string(buffer), "q_\xC3\x89t\xC3\x89");
}

TEST(WriteTableName, DoesNotValidate)
{
	char buffer[64];
	WriteTableName("q", "a$b;c--d'e", buffer, sizeof buffer);
	EXPECT_STREQ(buffer, "q_a$b;c--d'e");
	EXPECT_EQ(WriteTableName("q", "", buffer, sizeof buffer), 2u);
	EXPECT_STREQ(buffer, "q_");
}

TEST(WriteTableName, ReturnsNeededLengthWithoutWritingWhenItDoesNotFit)
{
	// "q_abc" needs 5 bytes + NUL.
	for (std::size_t cap = 0; cap <= 5; ++cap) {
		char buffer[16];
		std::memset(buffer, '#', sizeof buffer);
		EXPECT_EQ(WriteTableName("q", "ABC", buffer, cap), 5u) << "cap " << cap;
		for (char c : buffer)
			ASSERT_EQ(c, '#') << "wrote into a buffer of cap " << cap;
	}
}

TEST(WriteTableName, FillsAnExactlySizedBufferAndNothingBeyond)
{
	char buffer[16];
	std::memset(buffer, '#', sizeof buffer);
	EXPECT_EQ(WriteTableName("q", "ABC", buffer, 6), 5u);
	EXPECT_STREQ(buffer, "q_abc");
	for (std::size_t i = 6; i < sizeof buffer; ++i)
		EXPECT_EQ(buffer[i], '#') << "byte " << i;
}

TEST(WriteTableName, SizingCallWithNullBuffer)
{
	// How the adapter sizes a palloc: cap 0, no buffer.
	EXPECT_EQ(WriteTableName("q", "QueueCased", nullptr, 0), 12u);
	EXPECT_EQ(WriteTableName("prefix", std::string(100, 'x'), nullptr, 0), 107u);
}

// ---------------------------------------------------------------------------
// WriteQueueTableNames

TEST(WriteQueueTableNames, WritesBothLowercasedNames)
{
	char queue_table[64];
	char archive_table[64];
	WriteQueueTableNames("QueueCased", queue_table, archive_table, sizeof queue_table);
	EXPECT_STREQ(queue_table, "q_queuecased");
	EXPECT_STREQ(archive_table, "a_queuecased");
}

TEST(WriteQueueTableNames, AcceptsNamesUpTo63ByteTablesInANamedatalenBuffer)
{
	char queue_table[64];
	char archive_table[64];
	const std::string name(61, 'N');  // q_ + 61 = 63 bytes
	WriteQueueTableNames(name, queue_table, archive_table, 64);
	EXPECT_EQ(std::string(queue_table), "q_" + std::string(61, 'n'));
	EXPECT_EQ(std::string(archive_table), "a_" + std::string(61, 'n'));
}

TEST(WriteQueueTableNames, ThrowsNameTooLongWhenTheyDoNotFit)
{
	char queue_table[64];
	char archive_table[64];
	EXPECT_TRUE(ThrowsCoreError([&] { WriteQueueTableNames(std::string(62, 'n'), queue_table, archive_table, 64); },
	                            ErrorKind::NameTooLong, "queue name is too long for its table names"));
	// Small buffers: "q_abc" needs 6 bytes.
	EXPECT_NO_THROW(WriteQueueTableNames("abc", queue_table, archive_table, 6));
	EXPECT_STREQ(archive_table, "a_abc");
	EXPECT_TRUE(ThrowsCoreError([&] { WriteQueueTableNames("abc", queue_table, archive_table, 5); },
	                            ErrorKind::NameTooLong, "queue name is too long for its table names"));
}

// ---------------------------------------------------------------------------
// TableName

TEST(TableName, MatchesWriteTableName)
{
	EXPECT_EQ(TableName("q", "QueueCased"), "q_queuecased");
	EXPECT_EQ(TableName("a", "QueueCased"), "a_queuecased");
	EXPECT_EQ(TableName("q", "queue-hyphened"), "q_queue-hyphened");
	EXPECT_EQ(TableName("q", ""), "q_");
	const std::string long_name(300, 'X');
	const std::string table = TableName("a", long_name);
	EXPECT_EQ(table.size(), 302u);  // no truncation, no trailing NUL
	EXPECT_EQ(table, "a_" + std::string(300, 'x'));
	EXPECT_EQ(std::strlen(table.c_str()), table.size());
}

TEST(TableName, DifferentSpellingsShareTables)
{
	// create('MyQ') then create('myq') reuse the same tables (API.md §2.1).
	EXPECT_EQ(TableName("q", "MyQ"), TableName("q", "myq"));
	EXPECT_EQ(TableName("a", "MyQ"), TableName("a", "MYQ"));
}

// ---------------------------------------------------------------------------
// QuoteIdentifier / QualifiedTable

TEST(QuoteIdentifier, AlwaysQuotes)
{
	EXPECT_EQ(QuoteIdentifier("abc"), "\"abc\"");
	EXPECT_EQ(QuoteIdentifier("select"), "\"select\"");
	EXPECT_EQ(QuoteIdentifier("MixedCase"), "\"MixedCase\"");
	EXPECT_EQ(QuoteIdentifier(""), "\"\"");
	EXPECT_EQ(QuoteIdentifier("with space"), "\"with space\"");
	EXPECT_EQ(QuoteIdentifier(kE2), "\"" + kE2 + "\"");
}

TEST(QuoteIdentifier, DoublesEmbeddedDoubleQuotes)
{
	EXPECT_EQ(QuoteIdentifier("a\"b"), "\"a\"\"b\"");
	EXPECT_EQ(QuoteIdentifier("\""), "\"\"\"\"");
	EXPECT_EQ(QuoteIdentifier("\"\""), "\"\"\"\"\"\"");
	// Single quotes and backslashes are not special inside an identifier.
	EXPECT_EQ(QuoteIdentifier("it's\\"), "\"it's\\\"");
}

TEST(QuoteIdentifier, InjectionStaysInsideOneIdentifier)
{
	const std::string hostile[] = {
		"x\"; DROP TABLE t; --",
		"\"; DROP SCHEMA pgmq CASCADE; SELECT \"",
		"x\"\"; --",
		"a\" OR \"1\"=\"1",
	};
	for (const std::string &name : hostile) {
		const std::string quoted = QuoteIdentifier(name);
		const std::vector<pgmq_test::Token> tokens = pgmq_test::Lex(quoted);
		ASSERT_EQ(tokens.size(), 1u) << quoted;
		EXPECT_EQ(tokens[0].kind, pgmq_test::TokenKind::QuotedIdent) << quoted;
		EXPECT_EQ(tokens[0].text, name) << quoted;
	}
	EXPECT_EQ(QuoteIdentifier("x\"; DROP TABLE t; --"), "\"x\"\"; DROP TABLE t; --\"");
}

TEST(QualifiedTable, PrefixesTheSchemaAndQuotes)
{
	EXPECT_EQ(QualifiedTable("q_x"), "pgmq.\"q_x\"");
	EXPECT_EQ(QualifiedTable("a_Mixed"), "pgmq.\"a_Mixed\"");  // no lowercasing here
	EXPECT_EQ(QualifiedTable("q_a\"b"), "pgmq.\"q_a\"\"b\"");
	const std::vector<pgmq_test::Token> tokens = pgmq_test::Lex(QualifiedTable("q_x\"; DROP TABLE t; --"));
	ASSERT_EQ(tokens.size(), 3u);
	EXPECT_EQ(tokens[0].text, "pgmq");
	EXPECT_EQ(tokens[1].text, ".");
	EXPECT_EQ(tokens[2].kind, pgmq_test::TokenKind::QuotedIdent);
	EXPECT_EQ(tokens[2].text, "q_x\"; DROP TABLE t; --");
}

}  // namespace
