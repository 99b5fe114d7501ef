// src/core/moves.cpp
// SQL of move and unarchive (moves.hpp).
#include "pgmq/core/moves.hpp"

#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

std::string MoveSql(std::string_view from_table, std::string_view to_table)
{
	const std::string moved_from = "pg_catalog.jsonb_build_object('queue', $3::pg_catalog.text, 'msg_id', m.msg_id)";
	const std::string header = std::string("'") + kMovedFromHeader + "'";
	// Object headers keep every key; others are kept inside the new header.
	const std::string headers =
		"CASE WHEN m.headers IS NULL THEN pg_catalog.jsonb_build_object(" + header + ", " + moved_from +
		") WHEN pg_catalog.jsonb_typeof(m.headers) OPERATOR(pg_catalog.=) 'object' THEN m.headers "
		"OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object(" + header + ", " + moved_from +
		") ELSE pg_catalog.jsonb_build_object(" + header + ", " + moved_from +
		" OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('headers', m.headers)) END";
	return "WITH moved AS (DELETE FROM " + QualifiedTable(from_table) +
	       " AS q WHERE q.msg_id OPERATOR(pg_catalog.=) ANY ($1) RETURNING q.msg_id, q.message, q.headers) "
	       "INSERT INTO " + QualifiedTable(to_table) + " (vt, message, headers) SELECT $2, m.message, " + headers +
	       " FROM moved AS m ORDER BY m.msg_id RETURNING msg_id";
}

std::string UnarchiveSql(std::string_view queue_table, std::string_view archive_table)
{
	const char *columns = "msg_id, read_ct, enqueued_at, last_read_at, message, headers";
	return "WITH restored AS (DELETE FROM " + QualifiedTable(archive_table) +
	       " AS a WHERE a.msg_id OPERATOR(pg_catalog.=) ANY ($1) RETURNING " + columns + ") INSERT INTO " +
	       QualifiedTable(queue_table) + " (" + columns + ", vt) OVERRIDING SYSTEM VALUE SELECT " + columns +
	       ", $2 FROM restored ORDER BY msg_id RETURNING msg_id";
}

}  // namespace pgmq::core
