// src/pg/entry_fifo.cpp
// FIFO group reads: read_grouped (fill from the oldest group), read_grouped_rr
// (round-robin across groups), read_grouped_head (one message per group), each
// with a polling variant, and create_fifo_index(es_all). A group is the set of
// messages with the same x-pgmq-group header; within it messages are delivered
// in msg_id order and never while an earlier one is in flight (see
// include/pgmq/core/fifo.hpp and docs/fifo.md).
#include "pgmq/core/fifo.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/statements.hpp"

#include "pgmq/pg/claim.hpp"
#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/registered_queues.hpp"
#include "pgmq/pg/standby.hpp"
#include "pgmq/pg/table_shape.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_index.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

using namespace pgmq;
using namespace pgmq::pg;

namespace {

// The two statements of one group-read strategy: heads found by reading the
// whole queue, or through the group index.
struct GroupStatements {
	core::Statement scan;
	core::Statement indexed;
};

constexpr GroupStatements kBatch = {core::Statement::ReadGrouped, core::Statement::ReadGroupedIndexed};
constexpr GroupStatements kRoundRobin = {core::Statement::ReadGroupedRr, core::Statement::ReadGroupedRrIndexed};
constexpr GroupStatements kHead = {core::Statement::ReadGroupedHead, core::Statement::ReadGroupedHeadIndexed};

// Whether index `index` is the group index of the queue table: a btree on
// (group key collated "C", msg_id). An index of that name with another shape
// (upstream's GIN on headers, say) cannot serve the index-walking statement,
// which would then degrade to one full scan per group. May ereport.
bool IsGroupIndex(Oid index, Oid table)
{
	HeapTuple class_tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(index));
	if (!HeapTupleIsValid(class_tuple))
		return false;
	const bool btree = reinterpret_cast<Form_pg_class>(GETSTRUCT(class_tuple))->relam == BTREE_AM_OID;
	ReleaseSysCache(class_tuple);
	if (!btree)
		return false;
	HeapTuple index_tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(index));
	if (!HeapTupleIsValid(index_tuple))
		return false;
	const auto *form = reinterpret_cast<Form_pg_index>(GETSTRUCT(index_tuple));
	bool ours = form->indrelid == table && form->indnatts == 2 && form->indkey.values[0] == InvalidAttrNumber &&
	            form->indkey.values[1] == get_attnum(table, "msg_id");
	if (ours) {
		bool isnull;
		const Datum collations = SysCacheGetAttr(INDEXRELID, index_tuple, Anum_pg_index_indcollation, &isnull);
		ours = !isnull && reinterpret_cast<oidvector *>(DatumGetPointer(collations))->values[0] == C_COLLATION_OID;
	}
	ReleaseSysCache(index_tuple);
	return ours;
}

// Whether the queue has its group index (q_<name>_fifo_idx). May ereport.
bool HasGroupIndex(const QueueRef &queue)
{
	char index_name[NAMEDATALEN];
	Failure failure;
	// A name too long for an index name has no group index.
	if (!TryCore(failure, [&] { core::WriteGroupIndexName(queue.queue_table, index_name, sizeof index_name); }))
		return false;
	const Oid index = get_relname_relid(index_name, get_rel_namespace(queue.queue_relid));
	return OidIsValid(index) && IsGroupIndex(index, queue.queue_relid);
}

// Decodes (queue_name, vt, qty) into a claim with the strategy's statement:
// the indexed one when the queue has its group index. May ereport.
void DecodeGroupRead(FunctionCallInfo fcinfo, const GroupStatements &statements, ClaimRequest *request)
{
	DecodeClaim(fcinfo, statements.scan, request);
	if (HasGroupIndex(request->queue))
		request->statement = statements.indexed;
}

// read_grouped*(queue_name, vt, qty)
Datum GroupRead(FunctionCallInfo fcinfo, const GroupStatements &statements)
{
	ClaimRequest request;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	DecodeGroupRead(fcinfo, statements, &request);
	Claim(fcinfo, request);
	return Datum(0);
}

// read_grouped*_with_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms):
// reads at once, then after each wait until a message is claimed or
// max_poll_seconds have passed, as read_with_poll does.
Datum GroupReadWithPoll(FunctionCallInfo fcinfo, const GroupStatements &statements)
{
	ClaimRequest request;
	RefuseDuringRecovery(fcinfo);
	BeginRowsResult(fcinfo);
	DecodeGroupRead(fcinfo, statements, &request);
	DecodePollSchedule(fcinfo, 3, 4, &request);
	Claim(fcinfo, request);
	return Datum(0);
}

}  // namespace

// read_grouped(queue_name text, vt integer, qty integer)
PGMQ_FUNCTION(pgmq_read_grouped) { return GroupRead(fcinfo, kBatch); }
// read_grouped_with_poll(queue_name, vt, qty, max_poll_seconds DEFAULT 5, poll_interval_ms DEFAULT 100)
PGMQ_FUNCTION(pgmq_read_grouped_with_poll) { return GroupReadWithPoll(fcinfo, kBatch); }
// read_grouped_rr(queue_name text, vt integer, qty integer)
PGMQ_FUNCTION(pgmq_read_grouped_rr) { return GroupRead(fcinfo, kRoundRobin); }
// read_grouped_rr_with_poll(queue_name, vt, qty, max_poll_seconds DEFAULT 5, poll_interval_ms DEFAULT 100)
PGMQ_FUNCTION(pgmq_read_grouped_rr_with_poll) { return GroupReadWithPoll(fcinfo, kRoundRobin); }
// read_grouped_head(queue_name text, vt integer, qty integer)
PGMQ_FUNCTION(pgmq_read_grouped_head) { return GroupRead(fcinfo, kHead); }
// read_grouped_head_with_poll(queue_name, vt, qty, max_poll_seconds DEFAULT 5, poll_interval_ms DEFAULT 100)
PGMQ_FUNCTION(pgmq_read_grouped_head_with_poll) { return GroupReadWithPoll(fcinfo, kHead); }

// create_fifo_index(queue_name text), _create_fifo_index_if_not_exists(queue_name text):
// builds q_<name>_fifo_idx, the btree on (group key, msg_id) that lets group
// reads find each group's head with one index probe. Idempotent.
PGMQ_FUNCTION(pgmq_create_fifo_index)
{
	QueueRef queue;
	ResolveQueue(fcinfo, 0, &queue);
	// The index is on headers->>'x-pgmq-group': a clear error if headers is not jsonb.
	// CREATE INDEX runs the table's code as its owner: the shape is enough.
	VerifyTableColumns(queue.queue_relid, queue.queue_table, TableRole::Queue);
	SpiConnect();
	RunCore([&] { ExecuteOnce(core::CreateGroupIndexSql(queue.queue_table)); });
	SpiFinish();
	PG_RETURN_VOID();
}

// create_fifo_indexes_all(): create_fifo_index for every queue in pgmq.meta;
// a row that is not a usable queue is skipped with a WARNING.
PGMQ_FUNCTION(pgmq_create_fifo_indexes_all)
{
	RegisteredQueue *queues;
	const int count = ReadRegisteredQueues(&queues);
	SpiConnect();
	for (int i = 0; i < count; i++) {
		const QueueRef &queue = queues[i].queue;
		VerifyTableColumns(queue.queue_relid, queue.queue_table, TableRole::Queue);
		RunCore([&queue] { ExecuteOnce(core::CreateGroupIndexSql(queue.queue_table)); });
	}
	SpiFinish();
	PG_RETURN_VOID();
}
