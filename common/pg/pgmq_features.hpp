// common/pg/pgmq_features.hpp
// What a database's pgmq offers, asked once at start by pgmq-relay and
// pgmq-console: this extension (pgmq-cpp) or upstream pgmq, installed as an
// extension or as plain SQL in schema pgmq (what managed services that load
// no C extension run), and which of the functions only pgmq-cpp has are
// there. Pure: the programs run kFeaturesSql with their own libpq session.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pgmq::pg {

// One row: extversion (NULL: no extension row), the names of schema pgmq's
// functions (comma-separated; NULL: none), whether pgmq.metrics_result has
// default_partition_length, whether pgmq.policies exists and whether it has
// paused_at. Reads the catalog only.
extern const char kFeaturesSql[];

struct PgmqFeatures {
	bool present = false;    // schema pgmq holds pgmq's functions
	bool extension = false;  // a pg_extension row; else a SQL-only install
	bool pgmq_cpp = false;   // this extension, not upstream pgmq
	std::string version;     // extversion, or the release its functions show ("1.13")
	std::set<std::string> functions;
	// What only pgmq-cpp has (each false with upstream pgmq):
	bool table_rule = false;        // pgmq._tables_running_foreign_code: which tables may run another role's code
	bool policies = false;          // list_policies over pgmq.policies: dead-letter queues, retries, retention
	bool pause = false;             // pause, resume, and pgmq.policies.paused_at
	bool priorities = false;        // set_priority
	bool partition_runway = false;  // partition_status
	bool failure_reasons = false;   // retry and dead_letter, which record why
	bool redrive = false;           // redrive and redrive_all
	bool streams = false;           // consumer groups: create_stream, subscribe, read_stream, ack, ...
	// Upstream has it from 1.13 (a planner estimate there, an exact count here).
	bool default_partition_rows = false;

	bool has(const std::string &function) const { return functions.count(function) > 0; }
	// Of the functions names, those schema pgmq lacks.
	std::vector<std::string> Missing(const std::vector<std::string> &names) const;
};

PgmqFeatures ParseFeatures(const std::optional<std::string> &extversion, const std::optional<std::string> &functions,
						   bool metrics_default_partition, bool policies_table, bool policies_paused_at);

// "pgmq-cpp 1.13.1+cpp.2", "upstream pgmq 1.12.0", "upstream pgmq 1.13": as
// the page says "not available with upstream pgmq 1.12.0".
std::string ShortName(const PgmqFeatures &features);
// ShortName and how it is installed: "upstream pgmq 1.13 (SQL-only install
// in schema pgmq, no extension row: the release its functions show)".
std::string Describe(const PgmqFeatures &features);
// What needs pgmq-cpp and this database lacks, in words ("pause", ...).
std::vector<std::string> NotAvailable(const PgmqFeatures &features);
// "a, b and c"; "" for none.
std::string JoinWords(const std::vector<std::string> &words);

}  // namespace pgmq::pg
