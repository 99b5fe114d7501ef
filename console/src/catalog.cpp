// console/src/catalog.cpp
#include "catalog.hpp"

namespace pgmq::console {

using nlohmann::json;

namespace {

constexpr char kRoleSql[] =
	"SELECT rolname, rolsuper OR rolcreaterole OR rolbypassrls OR rolreplication FROM pg_roles "
	"WHERE rolname = current_user";

bool IsTrue(const Value &value) { return value && *value == "t"; }

}  // namespace

void QueueCatalog::Detect(pgmq::console::Session &session, bool trust_owners)
{
	Row row = session.Exec(pg::kFeaturesSql).at(0);
	features_ = pg::ParseFeatures(row.at(0), row.at(1), IsTrue(row.at(2)), IsTrue(row.at(3)), IsTrue(row.at(4)));
	Row role = session.Exec(kRoleSql).at(0);
	role_ = role.at(0).value_or("");
	privileged_ = IsTrue(role.at(1));
	shape_.table_rule = features_.table_rule;
	shape_.policies = features_.policies;
	shape_.pause = features_.pause;
	shape_.partition_status = features_.partition_runway;
	// Streams (docs/streams.md): a pgmq-cpp that has them; "not available"
	// with upstream pgmq and older releases.
	shape_.streams = features_.has("stream_groups") && features_.has("stream_partitions");
	shape_.trust_owners = trust_owners && !features_.table_rule;
	sql_ = CatalogSql(shape_);
}

std::string QueueCatalog::TableCheck() const
{
	return shape_.table_rule ? "rule" : shape_.trust_owners ? "trust" : "owner";
}

void QueueCatalog::Describe(json &session) const
{
	const pg::PgmqFeatures &f = features_;
	session["pgmq"] = {{"name", pg::ShortName(f)}, {"description", pg::Describe(f)}, {"version", f.version},
					   {"extension", f.extension}, {"pgmq_cpp", f.pgmq_cpp}};
	session["features"] = {{"dead_letter_policies", f.policies},
						   {"pause", f.pause},
						   {"priorities", f.priorities},
						   {"partition_runway", f.partition_runway},
						   {"failure_reasons", f.failure_reasons},
						   {"redrive", f.redrive},
						   {"table_rule", f.table_rule},
						   {"default_partition_rows", f.default_partition_rows},
						   {"streams", shape_.streams}};
	session["table_check"] = TableCheck();
}

std::string QueueCatalog::LogLine() const
{
	std::string line = "the database offers " + pg::Describe(features_);
	std::vector<std::string> missing = pg::NotAvailable(features_);
	if (!missing.empty())
		line += "; not available with it: " + pg::JoinWords(missing);
	std::string check = TableCheck();
	if (check == "rule")
		line += "; queue tables are read where pgmq's rule for them allows";
	else if (check == "trust")
		line += "; every queue table role " + role_ + " may read is read (--trust-queue-owners: no table rule)";
	else
		line += "; queue tables are read only where their owner has role " + role_ +
				"'s privileges (no rule for queue tables in it; see --trust-queue-owners)";
	return line;
}

std::vector<json> QueueCatalog::Rows(pgmq::console::Session &session, const Value &name) const
{
	std::vector<Row> rows;
	if (shape_.table_rule) {
		rows = session.Exec(sql_, {name});
	} else {
		// LOCK TABLE takes ACCESS SHARE and runs none of the tables' code: a
		// table can then not be dropped and replaced under its name by
		// another role's before it is read. ONLY: the role may lack the
		// privileges on partitions that LOCK TABLE would check; what they
		// are is the table owner's to change, whom the owner rule trusts.
		std::string oids = "{", tables;
		for (const Row &table : session.Exec(kLockableSql, {name})) {
			oids += (oids.size() > 1 ? "," : "") + table.at(0).value_or("0");
			tables += (tables.empty() ? "" : ", ") + table.at(1).value_or("");
		}
		oids += "}";
		if (!tables.empty())
			session.Exec("LOCK TABLE ONLY " + tables + " IN ACCESS SHARE MODE");
		rows = session.Exec(sql_, {name, oids});
	}
	std::vector<json> entries;
	entries.reserve(rows.size());
	for (const Row &row : rows)
		entries.push_back(json::parse(row.at(0).value_or("null")));
	return entries;
}

}  // namespace pgmq::console
