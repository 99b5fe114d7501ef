// include/pgmq/pg/partman.hpp
// Finding pg_partman: its schema is discovered, never assumed, and its major
// version picks the create_parent call shape. Requires SPI; may ereport.
#pragma once

#include <string>

#include "pgmq/pg/boundary.hpp"

namespace pgmq::pg {

struct Partman {
	bool installed;
	char schema[NAMEDATALEN];
	int major_version;
};

// Looks pg_partman up in pg_extension.
void FindPartman(Partman *partman);

// The one "pg_partman is required for partitioned queues" check: ERROR
// 55000 unless pg_partman is installed.
void RequirePartman(const Partman &partman);

// The one interval check of create_partitioned and
// convert_archive_partitioned, from C++ code inside RunCore (may throw):
// both values cast to interval, the partition interval as the duration a
// pg_partman 4.x name ('daily') stands for, so a bad one fails with a clear
// "invalid input syntax for type interval" before pg_partman sees it.
void CheckTimeIntervals(const char *retention_interval, const char *partition_interval);

// From C++ code, with SPI: ten partition intervals, as text (the retention
// of a time-partitioned queue created without one). May throw.
std::string DefaultTimeRetention(const char *partition_interval);

}  // namespace pgmq::pg
