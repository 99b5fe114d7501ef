// test/unit/error_test.cpp
// CoreError: the one exception type of the core, carrying a kind the
// adapter maps to a SQLSTATE.
#include "pgmq/core/error.hpp"

#include <exception>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <gtest/gtest.h>

namespace {

using pgmq::core::CoreError;
using pgmq::core::ErrorKind;

TEST(CoreError, CarriesKindAndMessage)
{
	const CoreError error(ErrorKind::NameTooLong, "queue name is too long, maximum length is 47 characters");
	EXPECT_EQ(error.kind(), ErrorKind::NameTooLong);
	EXPECT_STREQ(error.what(), "queue name is too long, maximum length is 47 characters");
}

TEST(CoreError, IsARuntimeError)
{
	static_assert(std::is_base_of<std::runtime_error, CoreError>::value, "caught as std::exception at the boundary");
	static_assert(noexcept(std::declval<const CoreError &>().kind()), "kind() cannot throw");
	try {
		throw CoreError(ErrorKind::InvalidParameter, "qty must be non-negative, got: -1");
	} catch (const std::exception &e) {
		EXPECT_STREQ(e.what(), "qty must be non-negative, got: -1");
		const auto *core = dynamic_cast<const CoreError *>(&e);
		ASSERT_NE(core, nullptr);
		EXPECT_EQ(core->kind(), ErrorKind::InvalidParameter);
	}
}

TEST(CoreError, CopiesKeepKindAndMessage)
{
	const CoreError original(ErrorKind::NullArgument, "msgs cannot be NULL or empty");
	const CoreError copy = original;  // NOLINT: the copy is the point
	EXPECT_EQ(copy.kind(), ErrorKind::NullArgument);
	EXPECT_STREQ(copy.what(), "msgs cannot be NULL or empty");
	std::exception_ptr stored;
	try {
		throw original;
	} catch (...) {
		stored = std::current_exception();
	}
	try {
		std::rethrow_exception(stored);
	} catch (const CoreError &e) {
		EXPECT_EQ(e.kind(), ErrorKind::NullArgument);
		EXPECT_STREQ(e.what(), "msgs cannot be NULL or empty");
	}
}

TEST(CoreError, KindsAreDistinct)
{
	const std::set<ErrorKind> kinds = {ErrorKind::InvalidName,      ErrorKind::NameTooLong,
	                                   ErrorKind::NullArgument,     ErrorKind::InvalidParameter,
	                                   ErrorKind::PermissionDenied, ErrorKind::Internal};
	EXPECT_EQ(kinds.size(), 6u);
	for (ErrorKind kind : kinds)
		EXPECT_EQ(CoreError(kind, "m").kind(), kind);
}

TEST(CoreError, KeepsMessagesVerbatim)
{
	// The backslash of upstream's message must survive untouched.
	const std::string message = "queue name contains invalid characters: $, ;, --, or '";
	EXPECT_EQ(std::string(CoreError(ErrorKind::InvalidName, message).what()), message);
	EXPECT_STREQ(CoreError(ErrorKind::Internal, "").what(), "");
}

}  // namespace
