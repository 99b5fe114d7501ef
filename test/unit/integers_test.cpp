// test/unit/integers_test.cpp
// Integer parsing of the core (pgmq/core/integers.hpp), as PostgreSQL 15's
// int4in/int8in take text: blanks around, one sign, digits only, the
// type's range. create_partitioned reads its intervals with ParseInt4,
// maintenance reads part_config values with ParseInt8.
#include <cstdint>
#include <optional>
#include <string_view>

#include <gtest/gtest.h>

#include "pgmq/core/integers.hpp"

// ---------------------------------------------------------------- ParseInt4

TEST(ParseInt4, Digits)
{
	EXPECT_EQ(pgmq::core::ParseInt4("0"), 0);
	EXPECT_EQ(pgmq::core::ParseInt4("10"), 10);
	EXPECT_EQ(pgmq::core::ParseInt4("10000"), 10000);
	EXPECT_EQ(pgmq::core::ParseInt4("007"), 7);  // leading zeros, as int4in
}

TEST(ParseInt4, SurroundingBlanks)
{
	EXPECT_EQ(pgmq::core::ParseInt4(" 10"), 10);
	EXPECT_EQ(pgmq::core::ParseInt4("10 "), 10);
	EXPECT_EQ(pgmq::core::ParseInt4("\t\n 42 \r\f\v"), 42);
	EXPECT_EQ(pgmq::core::ParseInt4("  -5  "), -5);
}

TEST(ParseInt4, Sign)
{
	EXPECT_EQ(pgmq::core::ParseInt4("+10"), 10);
	EXPECT_EQ(pgmq::core::ParseInt4("-10"), -10);
	EXPECT_EQ(pgmq::core::ParseInt4("-0"), 0);
	EXPECT_EQ(pgmq::core::ParseInt4("+"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt4("-"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt4("--1"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt4("+-1"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt4("- 1"), std::nullopt);  // int4in takes no blank after the sign
	EXPECT_EQ(pgmq::core::ParseInt4("1-"), std::nullopt);
}

TEST(ParseInt4, Limits)
{
	EXPECT_EQ(pgmq::core::ParseInt4("2147483647"), INT32_MAX);
	EXPECT_EQ(pgmq::core::ParseInt4("-2147483648"), INT32_MIN);
	EXPECT_EQ(pgmq::core::ParseInt4("2147483648"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt4("-2147483649"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt4("+2147483648"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt4("00000000002147483647"), INT32_MAX);
	// Far beyond int64 too: no wrap-around back into range.
	EXPECT_EQ(pgmq::core::ParseInt4("99999999999999999999999999999"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt4("18446744073709551626"), std::nullopt);  // 2^64 + 10
}

TEST(ParseInt4, NotIntegers)
{
	for (const char *text : {"", " ", "\t", "1 2", "1.5", "1.", ".5", "1e3", "0x10", "1_000", "10 seconds", "daily", "ten",
	                         "1,000", "\xd9\xa1" /* Arabic-Indic one */, "１" /* fullwidth one */})
		EXPECT_EQ(pgmq::core::ParseInt4(text), std::nullopt) << "'" << text << "'";
}

TEST(ParseInt4, EmbeddedNul)
{
	EXPECT_EQ(pgmq::core::ParseInt4(std::string_view("1\0" "2", 3)), std::nullopt);
}

// ------------------------------------------------------------------ ParseInt8

TEST(ParseInt8, AsInt8Input)
{
	EXPECT_EQ(pgmq::core::ParseInt8("10000"), 10000);
	EXPECT_EQ(pgmq::core::ParseInt8(" 10 "), 10);
	EXPECT_EQ(pgmq::core::ParseInt8("+7"), 7);
	EXPECT_EQ(pgmq::core::ParseInt8("-7"), -7);
	EXPECT_EQ(pgmq::core::ParseInt8("9223372036854775807"), INT64_MAX);
	EXPECT_EQ(pgmq::core::ParseInt8("-9223372036854775808"), INT64_MIN);
	EXPECT_EQ(pgmq::core::ParseInt8("9223372036854775808"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt8("-9223372036854775809"), std::nullopt);
	EXPECT_EQ(pgmq::core::ParseInt8("99999999999999999999999"), std::nullopt);
	for (const char *text : {"", " ", "+", "-", "1 day", "1.5", "1e3", "daily", "1 2", "0x10"})
		EXPECT_EQ(pgmq::core::ParseInt8(text), std::nullopt) << "'" << text << "'";
}

TEST(ParseInt8, EmbeddedNul)
{
	EXPECT_EQ(pgmq::core::ParseInt8(std::string_view("1\0" "2", 3)), std::nullopt);
}
