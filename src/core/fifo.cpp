// src/core/fifo.cpp
// SQL of the FIFO group reads and of their index (see fifo.hpp and
// docs/fifo.md). May throw CoreError, std::bad_alloc.
//
// Every group read runs the same pipeline:
//   grp     the head (lowest msg_id, visible or not) of every group;
//   heads   the open groups' heads, oldest first, each locked FOR UPDATE SKIP
//           LOCKED: a head another transaction holds belongs to a group that
//           is being read right now, so the group is skipped;
//   picked  per locked head its run (visible messages from the head up to the
//           first invisible one), ordered and cut to qty as the strategy says;
//   kept    the picked rows we could lock too, up to the first one we could
//           not in each group (a row another transaction holds ends the run);
//   updated the claim itself (vt, read_ct, last_read_at), returned in
//           delivery order.
#include "pgmq/core/fifo.hpp"

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"
#include "pgmq/core/statements.hpp"

namespace pgmq::core {

namespace {

constexpr const char *kLe = " OPERATOR(pg_catalog.<=) ";
constexpr const char *kMessageColumns = "q.msg_id, q.read_ct, q.enqueued_at, q.last_read_at, q.vt, q.message, q.headers";

// grp(key, msg_id, vt): one row per group, its head.
std::string GroupHeadsCte(bool with_group_index, const std::string &table)
{
	const std::string key = GroupKeyExpression("q");
	const std::string head_after = "SELECT " + key + " AS key, q.msg_id, q.vt FROM " + table + " AS q";
	if (with_group_index) {
		// A loose index scan: one probe of the group index per group, instead of
		// reading every message (PostgreSQL 15 has no skip scan of its own).
		return "grp AS ((" + head_after + " ORDER BY " + key + ", q.msg_id LIMIT 1) UNION ALL " +
		       "SELECT n.key, n.msg_id, n.vt FROM grp AS p CROSS JOIN LATERAL (" + head_after + " WHERE " + key +
		       " OPERATOR(pg_catalog.>) p.key ORDER BY " + key + ", q.msg_id LIMIT 1) AS n)";
	}
	return "grp AS (SELECT DISTINCT ON (" + key + ") " + key + " AS key, q.msg_id, q.vt FROM " + table +
	       " AS q ORDER BY " + key + ", q.msg_id)";
}

// The open groups' heads, oldest first, each fetched and locked only when
// the consumer pulls it (the heads come sorted from grp, so the join keeps
// their order and needs no sort of its own).
std::string LockedHeads(const std::string &table, bool limit_to_qty)
{
	return "(SELECT h.msg_id, " + GroupKeyExpression("h") + " AS key FROM (SELECT grp.msg_id FROM grp WHERE grp.vt" +
	       kLe + "$1 ORDER BY grp.msg_id) AS g JOIN " + table + " AS h ON h.msg_id OPERATOR(pg_catalog.=) g.msg_id " +
	       "WHERE h.vt" + kLe + "$1 ORDER BY g.msg_id" + (limit_to_qty ? " LIMIT $3" : "") +
	       " FOR UPDATE OF h SKIP LOCKED) AS h";
}

// The run of head h: up to qty of its messages from the head on, numbered,
// with `open` false from the first invisible one.
std::string Run(const std::string &table)
{
	return "CROSS JOIN LATERAL (SELECT m.msg_id, pg_catalog.row_number() OVER w AS pos, "
	       "pg_catalog.bool_and(m.vt" + std::string(kLe) + "$1) OVER w AS open FROM (SELECT q.msg_id, q.vt FROM " +
	       table + " AS q WHERE " + GroupKeyExpression("q") + " OPERATOR(pg_catalog.=) h.key AND q.msg_id " +
	       "OPERATOR(pg_catalog.>=) h.msg_id ORDER BY q.msg_id LIMIT $3) AS m WINDOW w AS (ORDER BY m.msg_id)) AS r";
}

}  // namespace

std::string GroupKeyExpression(std::string_view alias)
{
	const std::string column = alias.empty() ? std::string("headers") : std::string(alias) + ".headers";
	return "(COALESCE(" + column + " OPERATOR(pg_catalog.->>) 'x-pgmq-group', '_default_fifo_group') COLLATE pg_catalog.\"C\")";
}

void WriteGroupIndexName(std::string_view queue_table, char *out, std::size_t cap)
{
	static constexpr std::string_view kSuffix = "_fifo_idx";
	const std::size_t needed = queue_table.size() + kSuffix.size();
	if (needed > kMaxIdentifierBytes || needed + 1 > cap)
		throw CoreError(ErrorKind::NameTooLong, "queue name is too long for its FIFO index name");
	queue_table.copy(out, queue_table.size());
	kSuffix.copy(out + queue_table.size(), kSuffix.size());
	out[needed] = '\0';
}

std::string CreateGroupIndexSql(std::string_view queue_table)
{
	char index_name[kMaxIdentifierBytes + 1];
	WriteGroupIndexName(queue_table, index_name, sizeof index_name);
	return "CREATE INDEX IF NOT EXISTS " + QuoteIdentifier(index_name) + " ON " + QualifiedTable(queue_table) + " (" +
	       GroupKeyExpression("") + ", msg_id)";
}

std::string GroupReadSql(GroupRead kind, bool with_group_index, std::string_view queue_table,
                         std::string_view dead_letter_table)
{
	const std::string table = QualifiedTable(queue_table);
	std::string picked;
	std::string delivery_order;
	switch (kind) {
	case GroupRead::Batch:
		// Oldest group first, then the next: the nested loop pulls (and locks)
		// a head only when the groups before it did not fill qty.
		picked = "SELECT r.msg_id, h.msg_id AS head, r.pos FROM " + LockedHeads(table, false) + " " + Run(table) +
		         " WHERE r.open LIMIT $3";
		delivery_order = "u.head, u.pos";
		break;
	case GroupRead::RoundRobin:
		// Layer by layer: every group's first message, then every second one.
		// Each of the (at most qty) groups contributes to the first layer.
		picked = "SELECT r.msg_id, h.msg_id AS head, r.pos FROM " + LockedHeads(table, true) + " " + Run(table) +
		         " WHERE r.open ORDER BY r.pos, h.msg_id LIMIT $3";
		delivery_order = "u.pos, u.head";
		break;
	case GroupRead::Head:
		picked = "SELECT h.msg_id, h.msg_id AS head, 1 AS pos FROM " + LockedHeads(table, true);
		delivery_order = "u.head";
		break;
	default:
		throw CoreError(ErrorKind::Internal, "unknown group read");
	}
	// Heads are locked already; other picked rows are locked here, and a run
	// ends at the first row someone else holds.
	const std::string kept =
		kind == GroupRead::Head
			? std::string("kept AS (SELECT picked.msg_id, picked.head, picked.pos FROM picked)")
			: "locked AS (SELECT q.msg_id FROM " + table + " AS q WHERE q.msg_id OPERATOR(pg_catalog.=) ANY " +
			      "(SELECT picked.msg_id FROM picked) " +
			      "AND q.vt" + kLe + "$1 FOR UPDATE OF q SKIP LOCKED), " +
			      "kept AS (SELECT c.msg_id, c.head, c.pos FROM (SELECT p.msg_id, p.head, p.pos, " +
			      "pg_catalog.bool_and(l.msg_id IS NOT NULL) OVER k AS ok FROM picked AS p LEFT JOIN locked AS l " +
			      "ON l.msg_id OPERATOR(pg_catalog.=) p.msg_id WINDOW k AS (PARTITION BY p.head ORDER BY p.pos)) AS c " +
			      "WHERE c.ok)";
	const bool dead_letter = !dead_letter_table.empty();
	const std::string under_limit = dead_letter ? " AND q.read_ct OPERATOR(pg_catalog.<) $4" : "";
	const std::string dead_letters = dead_letter ? ", " + DeadLetterMoveSql(table, dead_letter_table, "kept") : "";
	return "WITH RECURSIVE " + GroupHeadsCte(with_group_index, table) + ", picked AS (" + picked + "), " + kept +
	       ", updated AS (UPDATE " + table + " AS q SET vt = $2, read_ct = q.read_ct OPERATOR(pg_catalog.+) 1, " +
	       "last_read_at = $1 FROM kept WHERE q.msg_id OPERATOR(pg_catalog.=) kept.msg_id" + under_limit + " RETURNING " +
	       kMessageColumns + ", kept.head, kept.pos)" + dead_letters + " SELECT u.msg_id, u.read_ct, u.enqueued_at, u.last_read_at, u.vt, u.message, " +
	       "u.headers FROM updated AS u ORDER BY " + delivery_order;
}

}  // namespace pgmq::core
