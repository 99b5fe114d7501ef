// test/unit/core_error_assert.hpp
// The one way unit tests assert a pgmq::core::CoreError: EXPECT_TRUE of
// ThrowsCoreError (exact kind and message), ThrowsCoreErrorContaining (kind,
// and a part of the message) or ThrowsCoreErrorKind (kind only); each says
// which of the three went wrong. EXPECT_NO_THROW for the accepted cases.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "pgmq/core/error.hpp"

namespace pgmq_test {

inline const char *KindName(pgmq::core::ErrorKind kind)
{
	using pgmq::core::ErrorKind;
	switch (kind) {
	case ErrorKind::InvalidName:
		return "InvalidName";
	case ErrorKind::NameTooLong:
		return "NameTooLong";
	case ErrorKind::NullArgument:
		return "NullArgument";
	case ErrorKind::InvalidParameter:
		return "InvalidParameter";
	case ErrorKind::PermissionDenied:
		return "PermissionDenied";
	case ErrorKind::Internal:
		return "Internal";
	default:
		return "(unlisted ErrorKind)";
	}
}

template <typename F>
::testing::AssertionResult ThrowsCoreError(F &&f, pgmq::core::ErrorKind kind, const std::string &message)
{
	try {
		std::forward<F>(f)();
	} catch (const pgmq::core::CoreError &e) {
		if (e.kind() != kind || e.what() != message)
			return ::testing::AssertionFailure()
			       << "threw CoreError(" << KindName(e.kind()) << ", \"" << e.what() << "\"), expected CoreError("
			       << KindName(kind) << ", \"" << message << "\")";
		return ::testing::AssertionSuccess();
	} catch (const std::exception &e) {
		return ::testing::AssertionFailure() << "threw a non-CoreError exception: " << e.what();
	} catch (...) {
		return ::testing::AssertionFailure() << "threw something that is not a std::exception";
	}
	return ::testing::AssertionFailure() << "did not throw; expected CoreError(" << KindName(kind) << ", \"" << message
	                                     << "\")";
}

// Same, for when only the kind is fixed by the contract.
template <typename F>
::testing::AssertionResult ThrowsCoreErrorKind(F &&f, pgmq::core::ErrorKind kind)
{
	try {
		std::forward<F>(f)();
	} catch (const pgmq::core::CoreError &e) {
		if (e.kind() != kind)
			return ::testing::AssertionFailure() << "threw CoreError(" << KindName(e.kind()) << ", \"" << e.what()
			                                     << "\"), expected kind " << KindName(kind);
		if (std::string(e.what()).empty())
			return ::testing::AssertionFailure() << "threw CoreError(" << KindName(kind) << ") with an empty message";
		return ::testing::AssertionSuccess();
	} catch (const std::exception &e) {
		return ::testing::AssertionFailure() << "threw a non-CoreError exception: " << e.what();
	} catch (...) {
		return ::testing::AssertionFailure() << "threw something that is not a std::exception";
	}
	return ::testing::AssertionFailure() << "did not throw; expected kind " << KindName(kind);
}

// Same, for a message of which only a part is fixed by the contract.
template <typename F>
::testing::AssertionResult ThrowsCoreErrorContaining(F &&f, pgmq::core::ErrorKind kind, const std::string &part)
{
	try {
		std::forward<F>(f)();
	} catch (const pgmq::core::CoreError &e) {
		if (e.kind() != kind || std::string(e.what()).find(part) == std::string::npos)
			return ::testing::AssertionFailure() << "threw CoreError(" << KindName(e.kind()) << ", \"" << e.what()
			                                     << "\"), expected CoreError(" << KindName(kind) << ") containing \""
			                                     << part << "\"";
		return ::testing::AssertionSuccess();
	} catch (const std::exception &e) {
		return ::testing::AssertionFailure() << "threw a non-CoreError exception: " << e.what();
	} catch (...) {
		return ::testing::AssertionFailure() << "threw something that is not a std::exception";
	}
	return ::testing::AssertionFailure() << "did not throw; expected CoreError(" << KindName(kind) << ") containing \""
	                                     << part << "\"";
}

}  // namespace pgmq_test
