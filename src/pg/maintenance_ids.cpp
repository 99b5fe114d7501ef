// src/pg/maintenance_ids.cpp
// Id partitions made and retired from a queue's msg_id sequence rather than
// from its rows (see maintenance.hpp: MaintainFromSequence), so that a queue
// that consumers keep empty neither overruns nor keeps old partitions.
#include "pgmq/core/integers.hpp"
#include "pgmq/core/maintenance.hpp"
#include "pgmq/core/partition.hpp"
#include "pgmq/core/queue_name.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/maintenance.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/array.h"
}

namespace pgmq::pg {

namespace {

// Column `column` of row `row` of the last SPI result as text, or nullptr
// for NULL. Allocated in the current context. From C++ code: may throw.
const char *ValueText(uint64 row, int column)
{
	return CallPostgres([&] { return SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, column); });
}

// Column `column` of the first row of the last SPI result as int8, if not NULL.
std::optional<int64_t> ValueInt8(int column)
{
	bool isnull = true;
	const Datum value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column, &isnull);
	if (isnull)
		return std::nullopt;
	return DatumGetInt64(value);
}

// A bigint[] of values, in the current context. May throw.
Datum Int8ArrayDatum(const std::vector<int64_t> &values)
{
	return CallPostgres([&] {
		Datum *elements = static_cast<Datum *>(palloc(sizeof(Datum) * std::max<size_t>(values.size(), 1)));
		for (size_t i = 0; i < values.size(); i++)
			elements[i] = Int64GetDatum(values[i]);
		return PointerGetDatum(construct_array(elements, static_cast<int>(values.size()), INT8OID, sizeof(int64),
		                                       FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	});
}

// The id partitions of a table, by first id.
struct Partition {
	int64_t start;
	std::string name;  // in schema pgmq when droppable
	bool droppable;    // pgmq's to drop: see core::IdPartitionsSql, IsPartmanIdPartition
	bool operator<(const Partition &other) const { return start < other.start; }
};
using Partitions = std::vector<Partition>;

// From C++ code inside RunCore, as the table's owner (they may throw):
// the id partitions of table.
Partitions ExistingPartitions(const MaintainedTable &table)
{
	Oid types[1] = {OIDOID};
	Datum values[1] = {ObjectIdGetDatum(table.relid)};
	const uint64 rows = ExecuteOnce(core::IdPartitionsSql(), 1, types, values);
	Partitions partitions;
	for (uint64 i = 0; i < rows; i++) {
		const char *start = ValueText(i, 2);
		const char *end = ValueText(i, 3);
		if (start == nullptr || end == nullptr)  // the default partition
			continue;
		const std::optional<int64_t> first = core::ParseInt8(start);
		const std::optional<int64_t> last = core::ParseInt8(end);
		if (!first || !last)
			continue;
		bool isnull = true;
		const bool ours = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 4, &isnull)) && !isnull;
		partitions.push_back(Partition{*first, ValueText(i, 1), ours && core::IsPartmanIdPartition(*first, *last, table.step)});
	}
	std::sort(partitions.begin(), partitions.end());
	return partitions;
}

// Where table stands (see core::IdPosition).
core::IdPosition ReadIdPosition(const MaintainedTable &table)
{
	Oid types[1] = {TEXTOID};
	Datum default_name[1] = {TextDatum(core::QualifiedTable(core::DefaultPartitionName(table.table)))};
	ExecuteOnce(core::RelationExistsSql(), 1, types, default_name);
	const bool has_default = FirstRowBool(1);
	Datum queue_table[1] = {TextDatum(core::QualifiedTable(table.queue_table))};
	ExecuteOnce(core::IdPositionSql(table.queue_table, table.table, table.is_archive, has_default), 1, types,
	            queue_table);
	core::IdPosition position;
	position.step = table.step;
	position.premake = table.premake;
	position.last_id = ValueInt8(1);
	position.oldest_queued = ValueInt8(2);
	position.default_max = ValueInt8(3);
	return position;
}

// Creates the partitions starting at starts; returns how many.
int64 CreatePartitions(const Partman &partman, const MaintainedTable &table, const std::vector<int64_t> &starts)
{
	if (starts.empty())
		return 0;
	Oid types[2] = {TEXTOID, INT8ARRAYOID};
	Datum values[2] = {TextDatum(table.parent), Int8ArrayDatum(starts)};
	ExecuteOnce(core::CreateIdPartitionsSql(partman.schema, partman.major_version), 2, types, values);
	return static_cast<int64>(starts.size());
}

// Their first ids, ascending.
std::vector<int64_t> PartitionStarts(const Partitions &partitions)
{
	std::vector<int64_t> starts;
	for (const auto &partition : partitions)
		starts.push_back(partition.start);
	return starts;
}

}  // namespace

void MaintainFromSequence(const Partman &partman, const MaintainedTable &table, bool apply_retention, int64 *created,
                          int64 *dropped)
{
	int64 made = 0;
	int64 removed = 0;
	AsTableOwner(table, [&] {
		RunCore([&] {
			const core::IdPosition position = ReadIdPosition(table);
			const Partitions existing = ExistingPartitions(table);
			std::vector<int64_t> starts = PartitionStarts(existing);
			const std::vector<int64_t> missing = core::PremakeStarts(position, starts);
			made = CreatePartitions(partman, table, missing);
			if (!apply_retention || !table.has_retention || table.keeps_tables)
				return;
			starts.insert(starts.end(), missing.begin(), missing.end());
			for (int64_t start : core::RetentionDrops(position, table.retention, starts)) {
				// Retention lines lie below every premade partition: each is an
				// existing one. Only a partition pgmq can tell is pg_partman's,
				// in schema pgmq, is dropped, by the name the catalog gives it.
				const auto it = std::lower_bound(existing.begin(), existing.end(), Partition{start, "", false});
				if (it == existing.end() || it->start != start || !it->droppable)
					continue;
				ExecuteOnce(core::PartitionIsEmptySql(it->name));
				if (!FirstRowBool(1))
					continue;
				ExecuteOnce(core::DropPartitionSql(it->name));
				removed++;
			}
		});
	});
	*created += made;
	*dropped += removed;
}

}  // namespace pgmq::pg
