// src/pg/priority.cpp
// The send-side check of message priorities (priority.hpp).
#include "pgmq/core/priority.hpp"

#include "pgmq/pg/priority.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/memutils.h"
}

namespace pgmq::pg {

void CheckPriorityHeader(Jsonb *headers, int32 levels)
{
	if (!headers || !JB_ROOT_IS_OBJECT(headers))
		return;
	const char *key = core::kPriorityHeader;
	JsonbValue *value = getKeyJsonValueFromContainer(&headers->root, key, static_cast<int>(strlen(key)), nullptr);
	if (!value || value->type == jbvNull)
		return;  // no priority, or null: priority 0, as the reads have it
	Jsonb *as_jsonb = JsonbValueToJsonb(value);
	const char *text = JsonbToCString(nullptr, &as_jsonb->root, VARSIZE(as_jsonb));
	const bool is_number = value->type == jbvNumeric;
	RunCore([text, is_number, levels] { core::CheckPriorityValue(text, is_number, levels); });
}

void CheckPriorityHeaders(ArrayType *headers, int32 levels)
{
	if (!headers)
		return;
	// Per element, in memory freed at once: a batch may be large.
	MemoryContext element_context =
		AllocSetContextCreate(CurrentMemoryContext, "pgmq priority check", ALLOCSET_SMALL_SIZES);
	ArrayIterator elements = array_create_iterator(headers, 0, nullptr);
	Datum element;
	bool isnull;
	while (array_iterate(elements, &element, &isnull)) {
		if (isnull)
			continue;
		MemoryContext previous = MemoryContextSwitchTo(element_context);
		CheckPriorityHeader(DatumGetJsonbP(element), levels);
		MemoryContextSwitchTo(previous);
		MemoryContextReset(element_context);
	}
	array_free_iterator(elements);
	MemoryContextDelete(element_context);
}

}  // namespace pgmq::pg
