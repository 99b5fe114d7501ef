// include/pgmq/pg/boundary.hpp
// The error boundary between C++ and Postgres, written once.
//
// Postgres raises errors with ereport, which longjmps: jumping over a C++
// frame that owns objects with destructors is undefined behaviour. A C++
// exception escaping into Postgres kills the backend. So:
//   - adapter functions are "POD frames": they call Postgres directly and own
//     no C++ object with a destructor;
//   - C++ code runs inside RunCore/TryCore, which turn any exception into a
//     plain Failure that is raised as an ERROR once the C++ frames are gone;
//   - C++ code that must call Postgres does it through CallPostgres, which
//     turns the Postgres error into a C++ exception carrying the original
//     ErrorData (SQLSTATE, message, detail, hint), re-raised unchanged;
//   - a POD frame that must survive a Postgres error (one table's failed
//     maintenance) runs the risky part with InSubtransaction, and one that
//     adds to an error (a short context) with EditingErrors;
//   - every SQL-callable function is declared with PGMQ_FUNCTION, whose
//     entry point catches whatever C++ exception could still escape.
#pragma once

#include <exception>
#include <type_traits>

extern "C" {
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
}

#include "pgmq/pg/compat.hpp"

namespace pgmq::pg {

// A caught exception in plain storage: filling it cannot allocate or throw.
struct Failure {
	int sqlstate;
	ErrorData *postgres_error;  // set when the exception carried a Postgres error
	char message[512];
};

// A Postgres error caught by CallPostgres on its way through C++ frames.
class PostgresError : public std::exception {
public:
	explicit PostgresError(ErrorData *data) : data_(data) {}
	ErrorData *data() const noexcept { return data_; }
	const char *what() const noexcept override { return data_->message ? data_->message : "postgres error"; }

private:
	ErrorData *data_;
};

// Records the exception being handled. Call only inside a catch handler.
void CaptureException(Failure &failure) noexcept;

// Raises failure as a Postgres ERROR (the original one for a PostgresError).
// Call only outside catch handlers, with no C++ object alive in the stack.
[[noreturn]] void Raise(const Failure &failure);

// Runs C++ code; returns false and fills failure if it threw.
template <typename Fn>
bool TryCore(Failure &failure, Fn &&fn) noexcept
{
	try {
		fn();
		return true;
	} catch (...) {
		CaptureException(failure);
		return false;
	}
}

// Runs C++ code from a POD frame; an exception becomes a Postgres ERROR.
// May ereport.
template <typename Fn>
void RunCore(Fn &&fn)
{
	Failure failure;
	if (!TryCore(failure, fn))
		Raise(failure);
}

// Calls Postgres from C++ code: a Postgres error becomes PostgresError.
// May throw. The error must be re-raised (by the boundary) before anything
// else touches Postgres: the transaction is already failed.
template <typename Fn>
auto CallPostgres(Fn &&fn) -> decltype(fn())
{
	MemoryContext caller_context = CurrentMemoryContext;
	ErrorData *volatile error = nullptr;
	if constexpr (std::is_void_v<decltype(fn())>) {
		sigjmp_buf *const saved_exception_stack = PG_exception_stack;
		ErrorContextCallback *const saved_context_stack = error_context_stack;
		PG_TRY();
		{
			try {
				fn();
			} catch (...) {
				// A C++ exception from fn would leave PG_TRY's jump buffer
				// installed, and the next ERROR would jump into this dead frame.
				PG_exception_stack = saved_exception_stack;
				error_context_stack = saved_context_stack;
				throw;
			}
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(caller_context);
			error = CopyErrorData();
			FlushErrorState();
		}
		PG_END_TRY();
		if (error)
			throw PostgresError(error);
	} else {
		// The result lives outside the PG_TRY frame, so longjmp cannot clobber it.
		decltype(fn()) result{};
		CallPostgres([&] { result = fn(); });
		return result;
	}
}

// Runs fn, a POD-frame function that may ereport, in a subtransaction.
// Returns nullptr when it succeeded, or its error after rolling the
// subtransaction back, copied into error_context (default: the caller's
// memory context; maintenance.hpp's CommitBetweenTables frees it); a
// query cancel is raised again. Must not be called from C++ code that owns
// objects with destructors.
template <typename Fn>
ErrorData *InSubtransaction(Fn &&fn, MemoryContext error_context = nullptr)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData *volatile error = nullptr;
	BeginInternalSubTransaction(nullptr);
	MemoryContextSwitchTo(context);
	PG_TRY();
	{
		fn();
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(error_context != nullptr ? error_context : context);
		error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	// A cancel (or statement_timeout) stops the whole call, as PL/pgSQL's
	// EXCEPTION WHEN OTHERS lets it: it is the user's, not the table's.
	if (error != nullptr && error->sqlerrcode == ERRCODE_QUERY_CANCELED)
		ReThrowError(error);
	return error;
}

// Runs fn, a POD-frame function that may ereport; an error it raises is
// raised again, unchanged but for what edit(ErrorData *) changes in its
// copy (executor.cpp: the context line of a statement). Must not be called
// from C++ code that owns objects with destructors.
template <typename Fn, typename Edit>
void EditingErrors(Fn &&fn, Edit &&edit)
{
	MemoryContext context = CurrentMemoryContext;
	PG_TRY();
	{
		fn();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(context);
		ErrorData *error = CopyErrorData();
		FlushErrorState();
		edit(error);
		ReThrowError(error);
	}
	PG_END_TRY();
}

using EntryBody = Datum (*)(FunctionCallInfo);

// Runs the body of a SQL-callable function: the last line of defence that no
// C++ exception reaches Postgres. May ereport.
Datum RunEntry(EntryBody body, FunctionCallInfo fcinfo);

}  // namespace pgmq::pg

// Declares SQL-callable function `name`; the block that follows is its body,
// a POD frame (see above).
#define PGMQ_FUNCTION(name)                                                                                           \
	static Datum name##_body([[maybe_unused]] FunctionCallInfo fcinfo);                                               \
	extern "C" {                                                                                                      \
	PG_FUNCTION_INFO_V1(name);                                                                                        \
	}                                                                                                                 \
	extern "C" Datum name(PG_FUNCTION_ARGS) { return pgmq::pg::RunEntry(name##_body, fcinfo); }                      \
	static Datum name##_body([[maybe_unused]] FunctionCallInfo fcinfo)
