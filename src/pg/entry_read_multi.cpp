// src/pg/entry_read_multi.cpp
// read_multi and read_multi_with_poll (not in upstream, docs/api.md): one
// read over several queues. Each queue is claimed through the one claim path
// (claim.hpp: its policies, pause and head apply), in turn: every pass gives
// each queue that still has messages an equal share of what is left, and the
// first queue of a call rotates from call to call, so a busy queue cannot
// starve the others, even with qty below the number of queues.
#include "pgmq/core/arguments.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/stream.hpp"
#include "pgmq/pg/claim.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/standby.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// The result's columns: queue_name, then message_record's but last_read_at.
constexpr int kResultColumns = 7;
// message_record's columns that the result takes, 1-based, and their types.
constexpr int kTakenColumns[] = {1, 2, 3, 5, 6, 7};
constexpr Oid kTakenTypes[] = {INT8OID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID, JSONBOID, JSONBOID};

// Which queue a call starts with: rotates, so that with fewer messages than
// queues every queue gets its turn.
uint32 next_first_queue = 0;

struct MultiRead {
	FunctionCallInfo fcinfo;
	ClaimRequest *requests;  // one per distinct queue
	Datum *names;            // each queue's name as given (text)
	int count;
	int64 qty;
};

// Decodes the queue_names array into distinct, existing queues.
void DecodeQueues(FunctionCallInfo fcinfo, MultiRead *read)
{
	RequireArgument(fcinfo, 0, "queue_names");
	ArrayType *array = PG_GETARG_ARRAYTYPE_P(0);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("queue_names must be a one-dimensional array")));
	Datum *elements;
	bool *nulls;
	int count;
	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &elements, &nulls, &count);
	read->requests = static_cast<ClaimRequest *>(palloc0(sizeof(ClaimRequest) * Max(count, 1)));
	read->names = static_cast<Datum *>(palloc(sizeof(Datum) * Max(count, 1)));
	read->count = 0;
	for (int i = 0; i < count; i++) {
		if (nulls[i])
			ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("queue_names cannot contain NULL")));
		ClaimRequest *request = &read->requests[read->count];
		ResolveQueueName(DatumGetTextPP(elements[i]), &request->queue);
		RefuseStream(request->queue);
		bool repeated = false;
		for (int j = 0; j < read->count && !repeated; j++)
			repeated = read->requests[j].queue.queue_relid == request->queue.queue_relid;
		if (repeated)
			continue;
		read->names[read->count] = elements[i];
		read->count++;
	}
}

// Decodes (queue_names, vt, qty) into one plain read per queue.
void DecodeMultiRead(FunctionCallInfo fcinfo, MultiRead *read)
{
	read->fcinfo = fcinfo;
	DecodeQueues(fcinfo, read);
	RequireArgument(fcinfo, 1, "vt");
	RequireArgument(fcinfo, 2, "qty");
	read->qty = PG_GETARG_INT32(2);
	RunCore([read] { core::CheckQuantity(read->qty); });
	for (int i = 0; i < read->count; i++) {
		ClaimRequest *request = &read->requests[i];
		request->statement = core::Statement::Read;
		request->vt_seconds = PG_GETARG_INT32(1);
	}
}

// Appends the `rows` rows of the last claim, of queue `index`, to the result.
void EmitQueueRows(const MultiRead &read, int index, uint64 rows)
{
	auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(read.fcinfo->resultinfo);
	if (rsinfo->setDesc->natts != kResultColumns)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("read_multi returns %d columns, pgmq expects %d", rsinfo->setDesc->natts, kResultColumns)));
	const char *table = read.requests[index].queue.queue_table;
	for (uint64 row = 0; row < rows; row++) {
		Datum values[kResultColumns];
		bool nulls[kResultColumns];
		values[0] = read.names[index];
		nulls[0] = false;
		for (int c = 0; c < kResultColumns - 1; c++)
			values[c + 1] = ResultValue(row, kTakenColumns[c], kTakenTypes[c], &nulls[c + 1], table);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

// One pass after another over the queues that still have messages, each
// claiming an equal share of what is left, until qty rows are claimed or
// every queue ran dry. A vt of 0 or less leaves the claimed messages
// visible, and a second pass would claim them again: then one pass only.
// Returns whether it claimed any. Requires SPI.
bool ReadInTurn(void *context)
{
	auto *read = static_cast<MultiRead *>(context);
	if (read->count == 0)
		return false;
	bool *dry = static_cast<bool *>(palloc0(sizeof(bool) * read->count));
	int active = read->count;
	int64 remaining = read->qty;
	const int first = static_cast<int>(next_first_queue++ % static_cast<uint32>(read->count));
	const bool one_pass = read->requests[0].vt_seconds <= 0;
	for (bool again = true; again && remaining > 0 && active > 0; again = !one_pass) {
		const int64 share = Max(remaining / active, 1);
		for (int k = 0; k < read->count && remaining > 0; k++) {
			const int i = (first + k) % read->count;
			if (dry[i])
				continue;
			ClaimRequest *request = &read->requests[i];
			request->qty = Min(share, remaining);
			const uint64 claimed = ClaimAttempt(request);
			if (claimed > 0)
				EmitQueueRows(*read, i, claimed);
			SPI_freetuptable(SPI_tuptable);
			remaining -= static_cast<int64>(claimed);
			if (static_cast<int64>(claimed) < request->qty) {
				dry[i] = true;
				active--;
			}
		}
	}
	pfree(dry);
	return remaining < read->qty;
}

Datum ReadMulti(FunctionCallInfo fcinfo, bool poll)
{
	MultiRead read;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	DecodeMultiRead(fcinfo, &read);
	core::PollSchedule schedule{};
	if (poll) {
		// Decoded as a claim decodes it.
		ClaimRequest decoded;
		DecodePollSchedule(fcinfo, 3, 4, &decoded);
		schedule = decoded.schedule;
	}
	SpiConnect();
	QueueRef *queues = static_cast<QueueRef *>(palloc(sizeof(QueueRef) * Max(read.count, 1)));
	for (int i = 0; i < read.count; i++)
		queues[i] = read.requests[i].queue;
	if (poll && read.count > 0)
		PollUntilClaimed(schedule, queues, read.count, ReadInTurn, &read);
	else
		ReadInTurn(&read);
	SpiFinish();
	return Datum(0);
}

}  // namespace

// read_multi(queue_names text[], vt integer, qty integer)
PGMQ_FUNCTION(pgmq_read_multi) { return ReadMulti(fcinfo, false); }

// read_multi_with_poll(queue_names text[], vt integer, qty integer,
//                      max_poll_seconds integer DEFAULT 5, poll_interval_ms integer DEFAULT 100)
// Reads at once, then again whenever a send to one of the queues commits
// (or each poll interval), until a message is claimed or max_poll_seconds
// have passed.
PGMQ_FUNCTION(pgmq_read_multi_with_poll) { return ReadMulti(fcinfo, true); }
