// src/pg/group_row.cpp
// Where each consumer group's row is (see group_row.hpp for the invariant):
// a backend-local table from (stream, group) to the ctid of the row version
// this backend last saw or wrote.
#include "pgmq/pg/group_row.hpp"

extern "C" {
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
}

#include <cstring>

namespace pgmq::pg {

namespace {

// A group name is at most 63 characters (the table's check), 4 bytes each.
constexpr size_t kMaxGroupBytes = 4 * 63;
// Beyond this many groups, the table starts again empty (a backend that
// reads as very many groups, or streams dropped and made again).
constexpr long kMaxEntries = 1024;

struct GroupKey {
	Oid stream_relid;
	char group[kMaxGroupBytes + 1];
};

struct GroupEntry {
	GroupKey key;
	Oid groups_relid;  // pgmq.consumer_groups when it was seen: made again with the extension
	ItemPointerData ctid;
};

bool hint_enabled = true;
HTAB *group_rows = nullptr;

bool KeyOf(Oid stream_relid, Datum group, GroupKey *key)
{
	text *name = DatumGetTextPP(group);
	const size_t length = VARSIZE_ANY_EXHDR(name);
	if (length > kMaxGroupBytes)
		return false;
	memset(key, 0, sizeof *key);
	key->stream_relid = stream_relid;
	memcpy(key->group, VARDATA_ANY(name), length);
	return true;
}

GroupEntry *Find(Oid stream_relid, Datum group, HASHACTION action)
{
	GroupKey key;
	if (!KeyOf(stream_relid, group, &key))
		return nullptr;
	if (group_rows == nullptr || (action == HASH_ENTER && hash_get_num_entries(group_rows) >= kMaxEntries)) {
		if (action != HASH_ENTER)
			return nullptr;
		if (group_rows != nullptr)
			hash_destroy(group_rows);
		HASHCTL ctl{};
		ctl.keysize = sizeof(GroupKey);
		ctl.entrysize = sizeof(GroupEntry);
		ctl.hcxt = TopMemoryContext;
		group_rows = hash_create("pgmq consumer group rows", 16, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	return static_cast<GroupEntry *>(hash_search(group_rows, &key, action, nullptr));
}

}  // namespace

Oid ConsumerGroupsRelid()
{
	const Oid pgmq_namespace = get_namespace_oid("pgmq", true);
	return OidIsValid(pgmq_namespace) ? get_relname_relid("consumer_groups", pgmq_namespace) : InvalidOid;
}

void InitGroupRowHints()
{
	DefineCustomBoolVariable("pgmq.group_row_hint",
	                         "Whether a consumer group's statements fetch its row where this session last saw it "
	                         "(following its updates) instead of looking it up by its key.",
	                         nullptr, &hint_enabled, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
}

void FindGroupRow(Oid stream_relid, Datum group, ItemPointer location)
{
	ItemPointerSetInvalid(location);
	const GroupEntry *entry = hint_enabled ? Find(stream_relid, group, HASH_FIND) : nullptr;
	const Oid groups_relid = entry != nullptr ? ConsumerGroupsRelid() : InvalidOid;
	if (entry == nullptr || !OidIsValid(groups_relid) || entry->groups_relid != groups_relid)
		return;
	*location = entry->ctid;
	// The statement that uses the location takes its own snapshot after
	// this one: a version that commits in between makes it select nothing,
	// and its caller looks the row up by key.
	Relation groups = table_open(groups_relid, AccessShareLock);
	Snapshot snapshot = IsolationUsesXactSnapshot() ? GetTransactionSnapshot() : GetLatestSnapshot();
	TableScanDesc scan = table_beginscan_tid(groups, snapshot);
	if (table_tuple_tid_valid(scan, location)) {
		table_tuple_get_latest_tid(scan, location);
		// What a lookup by key would do on the page (a fetch by ctid does
		// not): remove the row's versions no snapshot sees any longer, so
		// that its next versions fit on the same page.
		if (groups->rd_tableam == GetHeapamTableAmRoutine()) {
			Buffer buffer = ReadBuffer(groups, ItemPointerGetBlockNumber(location));
			heap_page_prune_opt(groups, buffer);
			ReleaseBuffer(buffer);
		}
	} else {
		ItemPointerSetInvalid(location);
	}
	table_endscan(scan);
	table_close(groups, AccessShareLock);
}

void RememberGroupRow(Oid stream_relid, Datum group, Datum ctid)
{
	if (!hint_enabled)
		return;
	const Oid groups_relid = ConsumerGroupsRelid();
	GroupEntry *entry = OidIsValid(groups_relid) ? Find(stream_relid, group, HASH_ENTER) : nullptr;
	if (entry == nullptr)
		return;
	entry->groups_relid = groups_relid;
	entry->ctid = *reinterpret_cast<ItemPointer>(DatumGetPointer(ctid));
}

}  // namespace pgmq::pg
