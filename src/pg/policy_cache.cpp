// src/pg/policy_cache.cpp
// Per-backend copies of the queues' delivery policies (see policy_cache.hpp),
// with the kept plans of their dead-letter claims, whose SQL names the
// dead-letter queue's table. Entries live in their own context under
// CacheMemoryContext. An invalidation only marks an entry: it may arrive
// while the entry is in use (any catalog access processes invalidations), so
// the entry is read again on its next use, and plans it replaces are freed
// at the end of the transaction, as the plan cache does with evicted ones.
#include "pgmq/core/error.hpp"
#include "pgmq/core/policy.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/statements.hpp"

#include <string>

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/plan_cache.hpp"
#include "pgmq/pg/policy_cache.hpp"
#include "pgmq/pg/queue.hpp"
#include "pgmq/pg/table_shape.hpp"
#include "pgmq/pg/table_trust.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type_d.h"
#include "nodes/pg_list.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
}

namespace pgmq::pg {

namespace {

constexpr int kDeadLetterClaims =
	static_cast<int>(core::Statement::ReadConditionalPriorityDeadLetter) - static_cast<int>(core::Statement::ReadDeadLetter) + 1;

struct PolicyEntry {
	char queue_table[NAMEDATALEN];  // key, must be first
	Oid queue_relid;
	bool valid;
	QueuePolicy policy;
	char dead_letter_table[NAMEDATALEN];
	Oid dead_letter_relid;  // InvalidOid: no dead-letter queue, or its table is gone
	SPIPlanPtr plans[kDeadLetterClaims];
	Oid verified_user;        // whom both tables were last verified for (InvalidOid: no one)
	uint64 trust_generation;  // and TrustGeneration() then
};

HTAB *policy_table = nullptr;
MemoryContext policy_context = nullptr;
List *replaced_plans = NIL;  // in policy_context, freed at transaction end
uint64 invalidations = 0;

HTAB *PolicyTable()
{
	if (!policy_table) {
		HASHCTL ctl;
		memset(&ctl, 0, sizeof ctl);
		ctl.keysize = NAMEDATALEN;
		ctl.entrysize = sizeof(PolicyEntry);
		policy_context = AllocSetContextCreate(CacheMemoryContext, "pgmq policy cache", ALLOCSET_SMALL_SIZES);
		ctl.hcxt = policy_context;
		policy_table = hash_create("pgmq policies", 64, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	return policy_table;
}

void FreeReplacedPlans(XactEvent event, void *)
{
	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT && event != XACT_EVENT_PREPARE)
		return;
	ListCell *cell;
	foreach (cell, replaced_plans)
		SPI_freeplan(static_cast<SPIPlanPtr>(lfirst(cell)));
	list_free(replaced_plans);
	replaced_plans = NIL;
}

void ReplacePlans(PolicyEntry *entry)
{
	MemoryContext previous = MemoryContextSwitchTo(policy_context);
	for (auto &plan : entry->plans) {
		if (plan)
			replaced_plans = lappend(replaced_plans, plan);
		plan = nullptr;
	}
	MemoryContextSwitchTo(previous);
}

// Copies a text column of the policy row into a name buffer ("" for NULL).
void CopyTextColumn(int column, char *out)
{
	bool isnull = true;
	const Datum value = ResultValue(0, column, TEXTOID, &isnull);
	out[0] = '\0';
	if (!isnull)
		text_to_cstring_buffer(DatumGetTextPP(value), out, NAMEDATALEN);
}

bool Int4Column(int column, int32 *out)
{
	bool isnull = true;
	const Datum value = ResultValue(0, column, INT4OID, &isnull);
	*out = isnull ? 0 : DatumGetInt32(value);
	return !isnull;
}

bool IntervalColumn(int column, Interval *out)
{
	bool isnull = true;
	const Datum value = ResultValue(0, column, INTERVALOID, &isnull);
	memset(out, 0, sizeof *out);
	if (!isnull)
		*out = *DatumGetIntervalP(value);
	return !isnull;
}

// Reads the queue's policy row into entry. Requires SPI.
void ReadPolicy(const QueueRef &queue, PolicyEntry *entry)
{
	QueuePolicy *policy = &entry->policy;
	memset(policy, 0, sizeof *policy);
	entry->dead_letter_table[0] = '\0';
	entry->dead_letter_relid = InvalidOid;
	if (!PolicyTablesExist())
		return;
	Oid types[2] = {TEXTOID, REGCLASSOID};
	// q_<lowercased name>: the name as every table name has it.
	Datum values[2] = {CStringGetTextDatum(queue.queue_table + 2), ObjectIdGetDatum(queue.queue_relid)};
	const int rc = SPI_execute_with_args(core::LoadPolicySql().c_str(), 2, types, values, nullptr, false, 1);
	if (rc != SPI_OK_SELECT)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq could not read the policies of pgmq.%s: %s",
		                                                        queue.queue_table, SPI_result_code_string(rc))));
	if (SPI_processed == 0)
		return;
	policy->exists = true;
	CopyTextColumn(1, policy->queue_name);
	CopyTextColumn(2, policy->dead_letter_queue);
	policy->dead_letter = Int4Column(3, &policy->max_deliveries) && policy->dead_letter_queue[0] != '\0';
	policy->retry_backoff = Int4Column(4, &policy->retry_base_seconds);
	policy->retry_backoff = Int4Column(5, &policy->retry_max_seconds) && policy->retry_backoff;
	policy->deduplication = IntervalColumn(6, &policy->deduplication_window);
	policy->retention = IntervalColumn(7, &policy->retention_max_age);
	policy->archive_retention = IntervalColumn(8, &policy->retention_archive_max_age);
	bool pinned_null = true;
	const Oid pinned = DatumGetObjectId(ResultValue(0, 9, OIDOID, &pinned_null));
	bool paused_null = true;
	policy->paused = DatumGetBool(ResultValue(0, 10, BOOLOID, &paused_null)) && !paused_null;
	Int4Column(11, &policy->priority_levels);
	SPI_freetuptable(SPI_tuptable);
	if (!policy->dead_letter)
		return;
	// Only the table the policy was set for: one made later under its name
	// (after a DROP TABLE) is not the dead-letter queue its owner chose.
	QueueRef dead_letter;
	if (!pinned_null && FindQueueQuietly(policy->dead_letter_queue, static_cast<int>(strlen(policy->dead_letter_queue)),
	                                     &dead_letter) &&
	    dead_letter.queue_relid == pinned) {
		strlcpy(entry->dead_letter_table, dead_letter.queue_table, NAMEDATALEN);
		entry->dead_letter_relid = dead_letter.queue_relid;
	}
}

PolicyEntry *ValidEntry(const QueueRef &queue)
{
	bool found = false;
	auto *entry = static_cast<PolicyEntry *>(hash_search(PolicyTable(), queue.queue_table, HASH_FIND, nullptr));
	if (entry && entry->valid && entry->queue_relid == queue.queue_relid)
		return entry;
	if (!entry) {
		entry = static_cast<PolicyEntry *>(hash_search(policy_table, queue.queue_table, HASH_ENTER, &found));
		memset(reinterpret_cast<char *>(entry) + NAMEDATALEN, 0, sizeof *entry - NAMEDATALEN);
	}
	ReplacePlans(entry);
	entry->valid = false;
	entry->verified_user = InvalidOid;
	const uint64 before = invalidations;
	ReadPolicy(queue, entry);
	entry->queue_relid = queue.queue_relid;
	// An invalidation that came in while reading may concern this queue:
	// this call uses what it read, the next one reads again.
	entry->valid = invalidations == before;
	return entry;
}

}  // namespace

bool PolicyTablesExist()
{
	const Oid pgmq_namespace = get_namespace_oid("pgmq", false);
	return OidIsValid(get_relname_relid("policies", pgmq_namespace)) &&
	       OidIsValid(get_relname_relid("deduplication", pgmq_namespace));
}

void LoadPolicy(const QueueRef &queue, QueuePolicy *policy) { *policy = ValidEntry(queue)->policy; }

Datum QueueNameAsCreated(const QueueRef &queue)
{
	const PolicyEntry *entry = ValidEntry(queue);
	if (entry->policy.exists)
		return CStringGetTextDatum(entry->policy.queue_name);
	const Oid meta = get_relname_relid("meta", get_namespace_oid("pgmq", false));
	if (OidIsValid(meta) && pg_class_aclcheck(meta, GetUserId(), ACL_SELECT) == ACLCHECK_OK)
		return MetaQueueName(queue);
	return PointerGetDatum(cstring_to_text_with_len(queue.name, queue.name_len));
}

void ReloadPolicy(const QueueRef &queue, QueuePolicy *policy)
{
	if (auto *entry = static_cast<PolicyEntry *>(hash_search(PolicyTable(), queue.queue_table, HASH_FIND, nullptr)))
		entry->valid = false;
	LoadPolicy(queue, policy);
}

namespace {

// Where entry's messages may be dead-lettered: its dead-letter queue's table
// exists, the queue's owner may insert into it (checked where it is used,
// whoever wrote the row: messages of a queue go only where its owner could
// have sent them; `owner_checked` when a kept plan proved it), and the
// current role may, since a read moves the messages as its reader.
void RequireDeadLetterTarget(const QueueRef &queue, const PolicyEntry *entry, bool owner_checked)
{
	if (!OidIsValid(entry->dead_letter_relid))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
		                errmsg("dead-letter queue \"%s\" of queue \"%s\" does not exist", entry->policy.dead_letter_queue,
		                       entry->policy.queue_name),
		                errhint("Create it, or run SELECT pgmq.clear_dead_letter_queue('%s');", entry->policy.queue_name)));
	if (!owner_checked) {
		const Oid owner = RelationOwner(queue.queue_relid);
		if (pg_class_aclcheck(entry->dead_letter_relid, owner, ACL_INSERT) != ACLCHECK_OK)
			ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			                errmsg("queue \"%s\" may not dead-letter into queue \"%s\"", entry->policy.queue_name,
			                       entry->policy.dead_letter_queue),
			                errdetail("Role \"%s\", the owner of pgmq.%s, may not insert into pgmq.%s.",
			                          GetUserNameFromId(owner, true), queue.queue_table, entry->dead_letter_table),
			                errhint("Grant it INSERT on that queue, or run SELECT pgmq.clear_dead_letter_queue('%s');",
			                        entry->policy.queue_name)));
	}
	if (pg_class_aclcheck(entry->dead_letter_relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("permission denied to move messages of queue \"%s\" to its dead-letter queue \"%s\"",
		                       entry->policy.queue_name, entry->policy.dead_letter_queue),
		                errdetail("Role \"%s\" may not insert into pgmq.%s; a read moves the messages at the delivery "
		                          "limit there.", GetUserNameFromId(GetUserId(), true), entry->dead_letter_table),
		                errhint("Give the role access with SELECT pgmq.grant_queue_access('%s', '%s'), which covers the "
		                        "dead-letter queue.", entry->policy.queue_name, GetUserNameFromId(GetUserId(), true))));
}

}  // namespace

Oid RequireDeadLetterQueue(const QueueRef &queue, char *dead_letter_table)
{
	const PolicyEntry *entry = ValidEntry(queue);
	if (!entry->policy.dead_letter)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("queue \"%.*s\" has no dead-letter queue", queue.name_len, queue.name),
		                errhint("Set one with pgmq.set_dead_letter_queue(queue_name, dead_letter_queue, max_deliveries).")));
	RequireDeadLetterTarget(queue, entry, false);
	strlcpy(dead_letter_table, entry->dead_letter_table, NAMEDATALEN);
	return entry->dead_letter_relid;
}

SPIPlanPtr DeadLetterPlan(const QueueRef &queue, core::Statement claim, Oid *dead_letter_relid)
{
	if (!core::IsDeadLetterClaim(claim))
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("pgmq statement %d is no dead-letter claim", static_cast<int>(claim))));
	// Both tables locked as the claim locks them, before they are checked
	// (as PlanFor does): DDL that would attach code to them waits.
	LockRelationOid(queue.queue_relid, RowExclusiveLock);
	PolicyEntry *entry = ValidEntry(queue);
	if (OidIsValid(entry->dead_letter_relid)) {
		LockRelationOid(entry->dead_letter_relid, RowExclusiveLock);
		// The lock processed the invalidations that arrived.
		if (!entry->valid)
			entry = ValidEntry(queue);
	}
	const int index = static_cast<int>(claim) - static_cast<int>(core::Statement::ReadDeadLetter);
	*dead_letter_relid = entry->dead_letter_relid;
	const bool verified = entry->plans[index] && entry->verified_user == GetUserId() &&
	                      entry->trust_generation == TrustGeneration();
	RequireDeadLetterTarget(queue, entry, verified);
	if (verified) {
		LockTree(queue.queue_relid, RowExclusiveLock);
		LockTree(entry->dead_letter_relid, RowExclusiveLock);
		return entry->plans[index];
	}
	const uint64 generation = TrustGeneration();
	VerifyTableShape(queue.queue_relid, queue.queue_table, TableRole::Queue);
	VerifyTableShape(entry->dead_letter_relid, entry->dead_letter_table, TableRole::Queue);
	// Every plan of the entry uses these two tables: verified for all of them.
	entry->verified_user = GetUserId();
	entry->trust_generation = generation;
	if (entry->plans[index])
		return entry->plans[index];
	SPIPlanPtr plan = nullptr;
	const char *queue_table = queue.queue_table;
	const char *dead_letter_table = entry->dead_letter_table;
	RunCore([&] {
		const core::StatementShape &shape = core::ShapeOf(claim);
		Oid types[core::kMaxStatementParams];
		for (int i = 0; i < shape.nparams; i++)
			types[i] = ParamTypeOid(shape.params[i]);
		const std::string sql = core::DeadLetterSql(claim, queue_table, dead_letter_table);
		const int options = shape.generic_plan ? CURSOR_OPT_GENERIC_PLAN : 0;
		plan = CallPostgres([&] { return SPI_prepare_cursor(sql.c_str(), shape.nparams, types, options); });
		if (!plan)
			throw core::CoreError(core::ErrorKind::Internal,
			                      std::string("SPI_prepare failed: ") + SPI_result_code_string(SPI_result));
		if (CallPostgres([&] { return SPI_keepplan(plan); }) != 0)
			throw core::CoreError(core::ErrorKind::Internal, "SPI_keepplan failed");
	});
	// The entry may have been invalidated meanwhile (catalog access): keep
	// the plan in it all the same; the next use reads the policy again and
	// replaces it.
	entry->plans[index] = plan;
	return plan;
}

bool DescribeDeadLetterPlan(SPIPlanPtr plan, const char **queue_table, core::Statement *statement)
{
	if (!policy_table)
		return false;
	HASH_SEQ_STATUS scan;
	hash_seq_init(&scan, policy_table);
	for (auto *entry = static_cast<PolicyEntry *>(hash_seq_search(&scan)); entry;
	     entry = static_cast<PolicyEntry *>(hash_seq_search(&scan)))
		for (int i = 0; i < kDeadLetterClaims; i++)
			if (entry->plans[i] == plan) {
				hash_seq_term(&scan);
				*queue_table = entry->queue_table;
				*statement = static_cast<core::Statement>(static_cast<int>(core::Statement::ReadDeadLetter) + i);
				return true;
			}
	return false;
}

void ForgetPolicies(Oid relid)
{
	invalidations++;
	if (!policy_table)
		return;
	HASH_SEQ_STATUS scan;
	hash_seq_init(&scan, policy_table);
	for (auto *entry = static_cast<PolicyEntry *>(hash_seq_search(&scan)); entry;
	     entry = static_cast<PolicyEntry *>(hash_seq_search(&scan)))
		if (!OidIsValid(relid) || entry->queue_relid == relid || entry->dead_letter_relid == relid)
			entry->valid = false;
}

void InitPolicyCache() { RegisterXactCallback(FreeReplacedPlans, nullptr); }

}  // namespace pgmq::pg
