// src/core/maintenance.cpp
// Partition maintenance and recovery: SQL and id arithmetic (see
// maintenance.hpp). May throw CoreError.
#include "pgmq/core/maintenance.hpp"

#include <algorithm>
#include <limits>

#include "pgmq/core/error.hpp"
#include "pgmq/core/queue_name.hpp"

namespace pgmq::core {

namespace {

std::string Partman(std::string_view partman_schema) { return QuoteIdentifier(partman_schema); }

}  // namespace

std::string PartConfigSql(std::string_view partman_schema)
{
	// Only configuration: no queue table is read, and no function of
	// schema pgmq is called (a role with CREATE there could overload it).
	return "SELECT c.parent_table, c.control, c.partition_interval, c.premake, c.retention, "
	       "(c.retention_keep_table OR c.retention_schema IS NOT NULL), "
	       "c.automatic_maintenance OPERATOR(pg_catalog.=) 'on' "
	       "FROM " +
	       Partman(partman_schema) +
	       ".part_config c "
	       "WHERE NOT c.undo_in_progress AND c.parent_table OPERATOR(pg_catalog.~~) 'pgmq.%'";
}

std::string QueueNamesSql()
{
	return "SELECT m.queue_name::pg_catalog.text FROM pgmq.meta m ORDER BY m.queue_name";
}

std::string TryPartmanMaintenanceLockSql()
{
	return "SELECT pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtext('pg_partman run_maintenance'))";
}

std::string RunPartmanMaintenanceSql(std::string_view partman_schema)
{
	return "SELECT " + Partman(partman_schema) + ".run_maintenance($1)";
}

std::string IdPositionSql(std::string_view queue_table, std::string_view table, bool archive, bool has_default)
{
	// pg_sequence_last_value is NULL until the sequence hands out its first id.
	std::string sql = "SELECT pg_catalog.pg_sequence_last_value("
	                  "pg_catalog.pg_get_serial_sequence($1, 'msg_id')::pg_catalog.regclass), ";
	sql += archive ? "(SELECT pg_catalog.min(msg_id) FROM " + QualifiedTable(queue_table) + "), " : "NULL::pg_catalog.int8, ";
	sql += has_default ? "(SELECT pg_catalog.max(msg_id) FROM ONLY " + QualifiedTable(DefaultPartitionName(table)) + ")"
	                   : "NULL::pg_catalog.int8";
	return sql;
}

int64_t PartitionStart(int64_t id, int64_t step)
{
	// Floor, not truncation: -5 lies in [-10, 0), not in [0, 10). The floor
	// of the lowest ids lies below INT64_MIN: their partition starts there.
	int64_t rem = id % step;
	if (rem < 0)
		rem += step;
	int64_t start = 0;
	if (__builtin_sub_overflow(id, rem, &start))
		return std::numeric_limits<int64_t>::min();
	return start;
}

std::optional<int64_t> PartitionEnd(int64_t start, int64_t step)
{
	int64_t end = 0;
	if (__builtin_add_overflow(start, step, &end))
		return std::nullopt;
	return end;
}

std::vector<int64_t> PremakeStarts(const IdPosition &position, const std::vector<int64_t> &existing)
{
	if (position.step <= 0 || position.premake < 0)
		throw CoreError(ErrorKind::Internal, "partition step and premake must be positive");
	const int64_t step = position.step;
	std::vector<int64_t> missing;
	// The highest partition there can be: its end (exclusive) must be an int8.
	const int64_t highest = PartitionStart(std::numeric_limits<int64_t>::max() - step, step);
	const int64_t newest = PartitionStart(position.last_id.value_or(0), step);
	int64_t ahead = 0;
	int64_t top = 0;
	if (__builtin_mul_overflow(static_cast<int64_t>(position.premake), step, &ahead) ||
	    __builtin_add_overflow(newest, ahead, &top) || top > highest)
		top = highest;
	int64_t low = newest;
	if (position.oldest_queued)
		low = std::min(low, PartitionStart(*position.oldest_queued, step));
	if (position.default_max) {
		const std::optional<int64_t> above = PartitionEnd(PartitionStart(*position.default_max, step), step);
		if (!above)
			return missing;  // rows up to the very top wait in the default partition
		low = std::max(low, *above);
	}
	// Newest first, so that a range too long for one run fills from the top.
	for (int64_t start = top; start >= low && missing.size() < kMaxPremadePerRun;) {
		if (!std::binary_search(existing.begin(), existing.end(), start))
			missing.push_back(start);
		if (__builtin_sub_overflow(start, step, &start))
			break;
	}
	std::reverse(missing.begin(), missing.end());
	return missing;
}

std::vector<int64_t> RetentionDrops(const IdPosition &position, int64_t retention, std::vector<int64_t> starts)
{
	std::vector<int64_t> drops;
	if (!position.last_id || position.step <= 0 || retention < 0 || starts.empty())
		return drops;
	std::sort(starts.begin(), starts.end());
	starts.pop_back();  // never the highest partition
	int64_t limit = 0;
	if (__builtin_sub_overflow(*position.last_id, retention, &limit))
		return drops;  // the line lies below every id: nothing is that old
	for (int64_t start : starts) {
		const std::optional<int64_t> end = PartitionEnd(start, position.step);  // exclusive
		if (!end || *end > limit)
			continue;
		if (position.oldest_queued && *end > *position.oldest_queued)
			continue;
		drops.push_back(start);
	}
	return drops;
}

std::string IdPartitionsSql()
{
	return "SELECT c.relname::pg_catalog.text, b.bound[1]::pg_catalog.int8, b.bound[2]::pg_catalog.int8, "
	       "n.nspname OPERATOR(pg_catalog.=) 'pgmq'::pg_catalog.name AND c.relkind OPERATOR(pg_catalog.=) 'r'::pg_catalog.\"char\" "
	       "AND c.relowner OPERATOR(pg_catalog.=) p.relowner "
	       "FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.inhrelid "
	       "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
	       "JOIN pg_catalog.pg_class p ON p.oid OPERATOR(pg_catalog.=) i.inhparent "
	       "CROSS JOIN LATERAL (SELECT pg_catalog.regexp_match(pg_catalog.pg_get_expr(c.relpartbound, c.oid), "
	       "'^FOR VALUES FROM \\(''?(-?[0-9]+)''?\\) TO \\(''?(-?[0-9]+)''?\\)$')) b(bound) "
	       "WHERE i.inhparent OPERATOR(pg_catalog.=) $1";
}

bool IsPartmanIdPartition(int64_t start, int64_t end, int64_t step)
{
	if (step <= 0 || PartitionStart(start, step) != start)
		return false;
	const std::optional<int64_t> expected = PartitionEnd(start, step);
	return expected && *expected == end;
}

std::string CreateIdPartitionsSql(std::string_view partman_schema, int partman_major)
{
	// 5.x dropped p_analyze (it no longer analyses there).
	return "SELECT " + Partman(partman_schema) + ".create_partition_id($1, $2" +
	       (partman_major >= 5 ? ")" : ", p_analyze := false)");
}

std::string NextBatchSql(std::string_view table)
{
	return "SELECT pg_catalog.pg_sequence_last_value("
	       "pg_catalog.pg_get_serial_sequence($1, 'msg_id')::pg_catalog.regclass), "
	       "(SELECT pg_catalog.min(msg_id) FROM ONLY " +
	       QualifiedTable(DefaultPartitionName(table)) + ")";
}

bool BatchNeedsLock(const std::optional<int64_t> &last_id, const std::optional<int64_t> &default_min, int64_t step)
{
	if (!default_min)
		return false;  // nothing to move
	// The batch covers the partition of default_min; new messages get ids
	// above last_id.
	const std::optional<int64_t> end = PartitionEnd(PartitionStart(*default_min, step), step);
	return !end || *end > last_id.value_or(0);
}

std::string SetLocalLockTimeoutSql() { return "SELECT pg_catalog.set_config('lock_timeout', $1, true)"; }

std::string LockTableShareSql(std::string_view table)
{
	return "LOCK TABLE " + QualifiedTable(table) + " IN SHARE MODE";
}

std::string PartitionIsEmptySql(std::string_view table)
{
	return "SELECT NOT EXISTS (SELECT FROM " + QualifiedTable(table) + ")";
}

std::string DropPartitionSql(std::string_view table) { return "DROP TABLE " + QualifiedTable(table); }

std::string CreatePartmanMoveTableSql(std::string_view default_table)
{
	return "CREATE TEMP TABLE IF NOT EXISTS partman_temp_data_storage (LIKE " + QualifiedTable(default_table) +
	       " INCLUDING INDEXES) ON COMMIT DROP";
}

std::string RelationExistsSql() { return "SELECT pg_catalog.to_regclass($1) IS NOT NULL"; }

std::string DefaultHasRowsSql(std::string_view default_table)
{
	return "SELECT EXISTS (SELECT FROM ONLY " + QualifiedTable(default_table) + ")";
}

std::string MoveOutOfDefaultSql(std::string_view partman_schema, PartitionKind kind)
{
	return "SELECT " + Partman(partman_schema) + (kind == PartitionKind::ById ? ".partition_data_id" : ".partition_data_time") +
	       "($1, p_batch_count := 1, p_analyze := false)";
}

std::string AnalyzeSql(std::string_view table) { return "ANALYZE " + QualifiedTable(table); }

}  // namespace pgmq::core
