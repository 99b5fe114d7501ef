// src/pg/boundary.cpp
// The one place where C++ exceptions and Postgres errors are translated
// (see boundary.hpp), including the ErrorKind -> SQLSTATE table.
#include "pgmq/core/error.hpp"

#include <cstring>
#include <new>

#include "pgmq/pg/boundary.hpp"

namespace pgmq::pg {

namespace {

int SqlStateOf(core::ErrorKind kind) noexcept
{
	switch (kind) {
	case core::ErrorKind::InvalidName:
		return ERRCODE_INVALID_NAME;
	case core::ErrorKind::NameTooLong:
		return ERRCODE_NAME_TOO_LONG;
	case core::ErrorKind::NullArgument:
		return ERRCODE_NULL_VALUE_NOT_ALLOWED;
	case core::ErrorKind::InvalidParameter:
		return ERRCODE_INVALID_PARAMETER_VALUE;
	case core::ErrorKind::PermissionDenied:
		return ERRCODE_INSUFFICIENT_PRIVILEGE;
	case core::ErrorKind::Internal:
		break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

void SetMessage(Failure &failure, const char *message) noexcept
{
	std::strncpy(failure.message, message, sizeof failure.message - 1);
	failure.message[sizeof failure.message - 1] = '\0';
}

}  // namespace

void CaptureException(Failure &failure) noexcept
{
	failure.sqlstate = ERRCODE_INTERNAL_ERROR;
	failure.postgres_error = nullptr;
	failure.message[0] = '\0';
	try {
		throw;
	} catch (const PostgresError &e) {
		failure.postgres_error = e.data();
	} catch (const core::CoreError &e) {
		failure.sqlstate = SqlStateOf(e.kind());
		SetMessage(failure, e.what());
	} catch (const std::bad_alloc &) {
		failure.sqlstate = ERRCODE_OUT_OF_MEMORY;
		SetMessage(failure, "out of memory");
	} catch (const std::exception &e) {
		SetMessage(failure, e.what());
	} catch (...) {
		SetMessage(failure, "unknown C++ exception");
	}
}

void Raise(const Failure &failure)
{
	if (failure.postgres_error)
		ReThrowError(failure.postgres_error);
	ereport(ERROR, (errcode(failure.sqlstate), errmsg("%s", failure.message)));
	pg_unreachable();
}

Datum RunEntry(EntryBody body, FunctionCallInfo fcinfo)
{
	// A C++ throw from inside a PG_TRY would leave these pointing into a dead
	// frame; restore them before raising (pg_duckdb's lesson).
	sigjmp_buf *saved_exception_stack = PG_exception_stack;
	ErrorContextCallback *saved_context_stack = error_context_stack;
	Failure failure;
	try {
		return body(fcinfo);
	} catch (...) {
		CaptureException(failure);
	}
	PG_exception_stack = saved_exception_stack;
	error_context_stack = saved_context_stack;
	Raise(failure);
}

}  // namespace pgmq::pg
