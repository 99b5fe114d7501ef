// src/pg/registered_queues.cpp
// The queues listed in pgmq.meta (see registered_queues.hpp).
#include "pgmq/core/queue_name.hpp"

#include "pgmq/pg/executor.hpp"
#include "pgmq/pg/registered_queues.hpp"

extern "C" {
#include "catalog/pg_class_d.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

namespace pgmq::pg {

namespace {

// Validates a meta row's name and resolves its table; false (after one
// WARNING) when the row is to be skipped.
bool ResolveRegistered(RegisteredQueue *entry)
{
	QueueRef *queue = &entry->queue;
	queue->name = VARDATA_ANY(entry->name);
	queue->name_len = VARSIZE_ANY_EXHDR(entry->name);
	queue->queue_relid = InvalidOid;
	Failure failure;
	if (!TryCore(failure, [queue] {
		    const std::string_view view(queue->name, queue->name_len);
		    core::CheckQueueNameCharacters(view);
		    core::WriteQueueTableNames(view, queue->queue_table, queue->archive_table, NAMEDATALEN);
	    })) {
		ereport(WARNING, (errcode(ERRCODE_INVALID_NAME),
		                  errmsg("skipping pgmq.meta row \"%.*s\": %s", queue->name_len, queue->name, failure.message)));
		return false;
	}
	if (!QueueExists(queue)) {
		ereport(WARNING, (errcode(ERRCODE_UNDEFINED_TABLE),
		                  errmsg("skipping queue \"%.*s\": table pgmq.%s does not exist", queue->name_len, queue->name,
		                         quote_identifier(queue->queue_table))));
		return false;
	}
	const char relkind = get_rel_relkind(queue->queue_relid);
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE) {
		ereport(WARNING, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		                  errmsg("skipping queue \"%.*s\": pgmq.%s is not a table", queue->name_len, queue->name,
		                         quote_identifier(queue->queue_table))));
		return false;
	}
	return true;
}

}  // namespace

int ReadRegisteredQueues(RegisteredQueue **queues)
{
	MemoryContext caller_context = CurrentMemoryContext;
	SpiConnect();
	RunCore([] { ExecuteOnce("SELECT queue_name::pg_catalog.text FROM pgmq.meta ORDER BY queue_name"); });
	const uint64 rows = SPI_processed;
	auto *entries = static_cast<RegisteredQueue *>(MemoryContextAllocZero(caller_context, sizeof(RegisteredQueue) * (rows + 1)));
	int count = 0;
	for (uint64 i = 0; i < rows; i++) {
		bool isnull;
		const Datum name = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		if (isnull)
			continue;
		MemoryContext spi_context = MemoryContextSwitchTo(caller_context);
		entries[count].name = DatumGetTextPCopy(name);
		MemoryContextSwitchTo(spi_context);
		if (ResolveRegistered(&entries[count]))
			count++;
	}
	SpiFinish();
	*queues = entries;
	return count;
}

}  // namespace pgmq::pg
