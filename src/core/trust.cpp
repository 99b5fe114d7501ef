// src/core/trust.cpp
// The SQL of the rule for what a queue's table may carry (see trust.hpp).
// May throw std::bad_alloc.
#include "pgmq/core/trust.hpp"

namespace pgmq::core {

namespace {

// The table and every table that inherits from it (partitions, at any depth,
// and plain inheritance children): a statement on the table reads them too.
constexpr const char kTree[] =
	"tree AS ("
	"SELECT c.oid AS root, c.oid AS relid FROM pg_catalog.pg_class AS c WHERE c.oid OPERATOR(pg_catalog.=) ANY ($1) "
	"UNION SELECT t.root, i.inhrelid FROM tree AS t CROSS JOIN LATERAL (SELECT i.inhrelid "
	"FROM pg_catalog.pg_inherits AS i WHERE i.inhparent OPERATOR(pg_catalog.=) t.relid OFFSET 0) AS i)";

// What is attached to those tables, at any depth: objects that depend on
// them automatically or internally (indexes, constraints, defaults,
// triggers, policies, rules, statistics, sequences, row types, partitions'
// indexes), of the kinds that can carry code. A publication's membership
// also depends on a table automatically, but runs nothing in its statements.
constexpr const char kParts[] =
	"parts AS ("
	"SELECT t.root, 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AS classid, t.relid AS objid "
	"FROM tree AS t "
	"UNION SELECT p.root, d.classid, d.objid FROM parts AS p CROSS JOIN LATERAL (SELECT d.classid, d.objid "
	"FROM pg_catalog.pg_depend AS d "
	"WHERE d.refclassid OPERATOR(pg_catalog.=) p.classid AND d.refobjid OPERATOR(pg_catalog.=) p.objid "
	"AND d.deptype OPERATOR(pg_catalog.=) ANY ('{a,i,P,S}'::pg_catalog.char[]) "
	"AND d.classid OPERATOR(pg_catalog.=) ANY ('{pg_class,pg_type,pg_constraint,pg_attrdef,pg_trigger,pg_policy,"
	"pg_rewrite,pg_statistic_ext}'::pg_catalog.regclass[]::pg_catalog.oid[]) OFFSET 0) AS d)";

constexpr const char kTrusted[] =
	"trusted AS (SELECT e.oid FROM pg_catalog.pg_extension AS e "
	"WHERE e.extname OPERATOR(pg_catalog.=) ANY ('{pgmq,pg_partman}'::pg_catalog.name[]))";

// Whether every table of the tree belongs to a role with the caller's
// privileges: then what the tables run, runs as (no more than) their owner.
constexpr const char kOwnersOk[] =
	"owners_ok AS (SELECT t.root, pg_catalog.bool_and(pg_catalog.pg_has_role((SELECT c.relowner "
	"FROM pg_catalog.pg_class AS c WHERE c.oid OPERATOR(pg_catalog.=) t.relid), CURRENT_USER, 'USAGE')) AS ok "
	"FROM tree AS t GROUP BY t.root)";

// What the parts depend on that is neither attached to the table, nor built
// in, nor pgmq's or pg_partman's. Schemas hold objects but run nothing;
// extension membership ('e', 'x') is not a use.
constexpr const char kForeignRefs[] =
	"foreign_refs AS ("
	"SELECT p.root, p.classid, p.objid, d.objsubid, d.refclassid, d.refobjid FROM parts AS p "
	"CROSS JOIN LATERAL (SELECT d.objsubid, d.refclassid, d.refobjid, d.deptype FROM pg_catalog.pg_depend AS d "
	"WHERE d.classid OPERATOR(pg_catalog.=) p.classid AND d.objid OPERATOR(pg_catalog.=) p.objid OFFSET 0) AS d "
	"WHERE d.deptype OPERATOR(pg_catalog.<>) ALL ('{e,x}'::pg_catalog.char[]) "
	"AND d.refclassid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_namespace'::pg_catalog.regclass "
	"AND d.refobjid OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid "
	"AND NOT EXISTS (SELECT FROM parts AS q WHERE q.root OPERATOR(pg_catalog.=) p.root "
	"AND q.classid OPERATOR(pg_catalog.=) d.refclassid "
	"AND q.objid OPERATOR(pg_catalog.=) d.refobjid) "
	"AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS m JOIN trusted AS e ON m.refobjid OPERATOR(pg_catalog.=) e.oid "
	"WHERE m.classid OPERATOR(pg_catalog.=) d.refclassid AND m.objid OPERATOR(pg_catalog.=) d.refobjid "
	"AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass "
	"AND m.deptype OPERATOR(pg_catalog.=) 'e'))";

// Every expression the parts store, as a node tree.
constexpr const char kExpressions[] =
	"expressions AS ("
	"SELECT p.root, p.classid, p.objid, x.tree FROM parts AS p CROSS JOIN LATERAL ("
	"SELECT a.adbin FROM pg_catalog.pg_attrdef AS a WHERE a.oid OPERATOR(pg_catalog.=) p.objid "
	"AND p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass "
	"UNION ALL SELECT c.conbin FROM pg_catalog.pg_constraint AS c WHERE c.oid OPERATOR(pg_catalog.=) p.objid "
	"AND p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass "
	"UNION ALL SELECT v.e FROM pg_catalog.pg_index AS i CROSS JOIN LATERAL (VALUES (i.indexprs), (i.indpred)) AS v(e) "
	"WHERE i.indexrelid OPERATOR(pg_catalog.=) p.objid "
	"AND p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass "
	"UNION ALL SELECT v.e FROM pg_catalog.pg_policy AS o CROSS JOIN LATERAL (VALUES (o.polqual), (o.polwithcheck)) AS v(e) "
	"WHERE o.oid OPERATOR(pg_catalog.=) p.objid "
	"AND p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass "
	"UNION ALL SELECT g.tgqual FROM pg_catalog.pg_trigger AS g WHERE g.oid OPERATOR(pg_catalog.=) p.objid "
	"AND p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_trigger'::pg_catalog.regclass "
	"UNION ALL SELECT v.e FROM pg_catalog.pg_rewrite AS r CROSS JOIN LATERAL (VALUES (r.ev_qual), (r.ev_action)) AS v(e) "
	"WHERE r.oid OPERATOR(pg_catalog.=) p.objid "
	"AND p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass "
	"UNION ALL SELECT s.stxexprs FROM pg_catalog.pg_statistic_ext AS s WHERE s.oid OPERATOR(pg_catalog.=) p.objid "
	"AND p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass "
	"UNION ALL SELECT k.partexprs FROM pg_catalog.pg_partitioned_table AS k "
	"WHERE k.partrelid OPERATOR(pg_catalog.=) p.objid "
	"AND p.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
	") AS x(tree) WHERE x.tree IS NOT NULL)";

// The functions those expressions call (function, operator, aggregate and
// window calls name them by OID in the node tree; string constants are
// stored as bytes, so a value cannot pose as one) that are not IMMUTABLE:
// whatever else they do, beyond their arguments, they do with the caller's
// rights. The clock is allowed: pgmq's own defaults read it; so is the
// transaction id, a stream's xid column's default (it only assigns one).
constexpr const char kCalls[] =
	"calls AS ("
	"SELECT e.root, e.classid, e.objid, f.oid AS funcid, f.proowner FROM expressions AS e "
	"CROSS JOIN LATERAL pg_catalog.regexp_matches(e.tree::pg_catalog.text, "
	"':(?:funcid|opfuncid|hashfuncid|negfuncid|aggfnoid|winfnoid) ([0-9]+)', 'g') AS m(v) "
	"CROSS JOIN LATERAL (SELECT f.oid, f.proowner, f.provolatile FROM pg_catalog.pg_proc AS f "
	"WHERE f.oid OPERATOR(pg_catalog.=) m.v[1]::pg_catalog.oid OFFSET 0) AS f "
	"WHERE f.provolatile OPERATOR(pg_catalog.<>) 'i' "
	"AND f.oid OPERATOR(pg_catalog.<>) ALL ('{pg_catalog.now(),pg_catalog.transaction_timestamp(),"
	"pg_catalog.pg_current_xact_id(),pg_catalog.statement_timestamp(),pg_catalog.clock_timestamp()}'"
	"::pg_catalog.regprocedure[]::pg_catalog.oid[]))";

// The owner of a foreign object, for the kinds that have one (NULL for the
// rest, which only a superuser makes: access methods, languages, ...).
constexpr const char kRefOwner[] =
	"CASE r.refclassid "
	"WHEN 'pg_catalog.pg_proc'::pg_catalog.regclass THEN (SELECT o.proowner FROM pg_catalog.pg_proc AS o "
	"WHERE o.oid OPERATOR(pg_catalog.=) r.refobjid) "
	"WHEN 'pg_catalog.pg_type'::pg_catalog.regclass THEN (SELECT o.typowner FROM pg_catalog.pg_type AS o "
	"WHERE o.oid OPERATOR(pg_catalog.=) r.refobjid) "
	"WHEN 'pg_catalog.pg_class'::pg_catalog.regclass THEN (SELECT o.relowner FROM pg_catalog.pg_class AS o "
	"WHERE o.oid OPERATOR(pg_catalog.=) r.refobjid) "
	"WHEN 'pg_catalog.pg_operator'::pg_catalog.regclass THEN (SELECT o.oprowner FROM pg_catalog.pg_operator AS o "
	"WHERE o.oid OPERATOR(pg_catalog.=) r.refobjid) "
	"WHEN 'pg_catalog.pg_opclass'::pg_catalog.regclass THEN (SELECT o.opcowner FROM pg_catalog.pg_opclass AS o "
	"WHERE o.oid OPERATOR(pg_catalog.=) r.refobjid) "
	"WHEN 'pg_catalog.pg_opfamily'::pg_catalog.regclass THEN (SELECT o.opfowner FROM pg_catalog.pg_opfamily AS o "
	"WHERE o.oid OPERATOR(pg_catalog.=) r.refobjid) "
	"WHEN 'pg_catalog.pg_collation'::pg_catalog.regclass THEN (SELECT o.collowner FROM pg_catalog.pg_collation AS o "
	"WHERE o.oid OPERATOR(pg_catalog.=) r.refobjid) "
	"WHEN 'pg_catalog.pg_foreign_server'::pg_catalog.regclass THEN (SELECT o.srvowner FROM "
	"pg_catalog.pg_foreign_server AS o WHERE o.oid OPERATOR(pg_catalog.=) r.refobjid) END";

// Each problem with its rank (the first kind found is reported), the
// object carrying it, what it does, and whose code it is.
std::string Problems()
{
	return std::string("problems AS (") +
	       "SELECT r.root, 0 AS rank, pg_catalog.pg_describe_object(r.classid, r.objid, r.objsubid) AS carrier, "
	       "CASE r.refclassid WHEN 'pg_catalog.pg_proc'::pg_catalog.regclass THEN 'calls ' "
	       "WHEN 'pg_catalog.pg_class'::pg_catalog.regclass THEN 'refers to ' ELSE 'uses ' END "
	       "OPERATOR(pg_catalog.||) pg_catalog.pg_describe_object(r.refclassid, r.refobjid, 0) "
	       "OPERATOR(pg_catalog.||) ', neither built in nor pgmq''s' AS problem, " +
	       kRefOwner +
	       " AS owner FROM foreign_refs AS r "
	       "UNION ALL SELECT c.root, 1, pg_catalog.pg_describe_object(c.classid, c.objid, 0), "
	       "'calls function ' OPERATOR(pg_catalog.||) c.funcid::pg_catalog.regprocedure::pg_catalog.text "
	       "OPERATOR(pg_catalog.||) ', which is not immutable', c.proowner FROM calls AS c "
	       "UNION ALL SELECT t.root, 2, pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, "
	       "c.oid, 0), "
	       "'is not a plain or partitioned table', c.relowner FROM tree AS t CROSS JOIN LATERAL (SELECT c.oid, "
	       "c.relowner, c.relkind FROM pg_catalog.pg_class AS c WHERE c.oid OPERATOR(pg_catalog.=) t.relid OFFSET 0) AS c "
	       "WHERE c.relkind OPERATOR(pg_catalog.<>) ALL ('{r,p}'::pg_catalog.char[]))";
}

}  // namespace

std::string ForeignCodeSql()
{
	return std::string("WITH RECURSIVE ") + kTree + ", " + kParts + ", " + kTrusted + ", " + kOwnersOk + ", " +
	       kForeignRefs + ", " + kExpressions + ", " + kCalls + ", " + Problems() +
	       " SELECT DISTINCT ON (p.root) p.root, p.carrier, p.problem FROM problems AS p JOIN owners_ok AS o "
	       "ON o.root OPERATOR(pg_catalog.=) p.root "
	       "WHERE NOT (o.ok AND (p.owner IS NULL OR pg_catalog.pg_has_role(p.owner, CURRENT_USER, 'USAGE'))) "
	       "ORDER BY p.root, p.rank, p.carrier, p.problem";
}

}  // namespace pgmq::core
