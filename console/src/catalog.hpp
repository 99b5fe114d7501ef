// console/src/catalog.hpp
// What the database's pgmq offers, asked once at start, and the catalog of
// its queues read accordingly: with pgmq-cpp's rule for queue tables, or,
// without it (upstream pgmq), with the owner rule of queries.cpp or, when
// the operator trusts every queue owner, the role's privileges alone.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "database.hpp"
#include "pgmq/console/queries.hpp"
#include "pgmq_features.hpp"

namespace pgmq::console {

class QueueCatalog {
  public:
	// Asks the database which pgmq it runs and what the role is. Throws
	// DatabaseError. Called once, before any request is served.
	void Detect(pgmq::console::Session &session, bool trust_owners);

	const pg::PgmqFeatures &features() const { return features_; }
	const CatalogShape &shape() const { return shape_; }
	// SUPERUSER, CREATEROLE, BYPASSRLS or REPLICATION: powers that code run
	// with the role's rights would have.
	bool role_privileged() const { return privileged_; }
	const std::string &role() const { return role_; }
	// How queue tables are judged: "rule" (pgmq-cpp's), "owner" or "trust".
	std::string TableCheck() const;
	// The session's "pgmq" and "features" objects, and its table_check.
	void Describe(nlohmann::json &session) const;
	// The line the console logs at start.
	std::string LogLine() const;

	// The catalog's rows ($1: a queue, or every queue), parsed. Inside a
	// transaction: without the rule, the tables are listed and locked first,
	// so that their owners cannot change before they are read.
	std::vector<nlohmann::json> Rows(pgmq::console::Session &session, const Value &name) const;

  private:
	pg::PgmqFeatures features_;
	CatalogShape shape_;
	std::string sql_;
	bool privileged_ = false;
	std::string role_;
};

}  // namespace pgmq::console
