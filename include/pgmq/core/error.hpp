// include/pgmq/core/error.hpp
// The one exception type the core throws. The adapter maps each kind to a
// SQLSTATE at the error boundary, so core stays free of Postgres codes.
#pragma once

#include <stdexcept>
#include <string>

namespace pgmq::core {

enum class ErrorKind {
	InvalidName,       // a queue name that can never be a queue
	NameTooLong,       // longer than the identifier limits allow
	NullArgument,      // an argument that must not be NULL
	InvalidParameter,  // a value out of its documented range
	PermissionDenied,  // the caller lacks a privilege the operation needs
	Internal,          // a bug: should never reach a user
};

class CoreError : public std::runtime_error {
public:
	CoreError(ErrorKind kind, const std::string &message) : std::runtime_error(message), kind_(kind) {}
	ErrorKind kind() const noexcept { return kind_; }

private:
	ErrorKind kind_;
};

}  // namespace pgmq::core

#include "pgmq/core/no_postgres.hpp"
