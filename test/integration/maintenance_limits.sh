#!/usr/bin/env bash
# test/integration/maintenance_limits.sh: issue 19, "lower impact":
#  - convert_archive_partitioned keeps the archive's grants (upstream loses
#    them, and archive() then fails for the roles that had them), and its
#    owner: the conversion runs as the archive's owner, also when a superuser
#    calls it, and a role without the owner's privileges may not convert;
#  - create_partitioned refuses a premake above its limit with 22023 and
#    creates nothing.
# Takes about 5 seconds.
set -euo pipefail
cd "$(dirname "$0")"
. ./partition_lib.sh

READER="pgmq_it_reader_$$"
OWNER="pgmq_it_owner_$$"
part_setup pgmq_it_limits
limits_cleanup() {
  local status=$?
  set +e
  sql_admin "DROP DATABASE IF EXISTS \"$PART_DB\" WITH (FORCE)"
  sql_admin "DROP ROLE IF EXISTS $READER"
  sql_admin "DROP ROLE IF EXISTS $OWNER"
  [ $status -eq 0 ] && say "PASS ($((SECONDS - PART_START)) s)" || say "FAILED (exit $status)"
  exit $status
}
trap limits_cleanup EXIT

sql_admin "CREATE ROLE $READER NOLOGIN; CREATE ROLE $OWNER NOLOGIN"
sql "GRANT USAGE, CREATE ON SCHEMA pgmq TO $OWNER;
     GRANT SELECT, INSERT, DELETE ON pgmq.meta TO $OWNER;
     GRANT USAGE, CREATE ON SCHEMA partman TO $OWNER;
     GRANT ALL ON ALL TABLES IN SCHEMA partman TO $OWNER;
     GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA partman TO $OWNER;
     GRANT USAGE ON SCHEMA pgmq TO $READER;"

# ---------------------------------------------------------------------------
say "convert_archive_partitioned keeps the archive's grants and owner"
# A queue of a non-superuser owner, whose archive grants the reader access;
# a superuser converts it.
sql "SET ROLE $OWNER;
     SELECT pgmq.create('cv');
     GRANT SELECT, UPDATE, DELETE ON pgmq.q_cv TO $READER;
     GRANT SELECT, INSERT ON pgmq.a_cv TO $READER;
     GRANT SELECT ON pgmq.a_cv TO PUBLIC;
     SELECT pgmq.send('cv', '{\"n\": 1}');
     SELECT pgmq.send('cv', '{\"n\": 2}');
     SELECT pgmq.archive('cv', 1::bigint);" >/dev/null
expect_error "a role without the owner's privileges may not convert it" "must be owner of table a_cv" \
  "SET ROLE $READER; SELECT pgmq.convert_archive_partitioned('cv', '10', '100')"
sql "SELECT pgmq.convert_archive_partitioned('cv', '10', '100')" >/dev/null
check "the archive is partitioned and kept its archived message" \
  "SELECT relkind = 'p' AND (SELECT array_agg(msg_id) FROM pgmq.a_cv) = '{1}' FROM pg_class WHERE oid = 'pgmq.a_cv'::regclass"
check "the new archive belongs to the queue's owner, not to the superuser who converted it" \
  "SELECT pg_get_userbyid(relowner) = '$OWNER' FROM pg_class WHERE oid = 'pgmq.a_cv'::regclass"
check "the reader keeps SELECT and INSERT on the archive" \
  "SELECT has_table_privilege('$READER', 'pgmq.a_cv', 'SELECT') AND has_table_privilege('$READER', 'pgmq.a_cv', 'INSERT')
     AND NOT has_table_privilege('$READER', 'pgmq.a_cv', 'DELETE')"
check "PUBLIC keeps SELECT on the archive" \
  "SELECT bool_or(grantee = 0 AND privilege_type = 'SELECT') FROM pg_class, aclexplode(relacl) WHERE oid = 'pgmq.a_cv'::regclass"
check "the reader can still archive" "SET ROLE $READER; SELECT pgmq.archive('cv', 2::bigint)"
check "the archive holds both messages" "SELECT array_agg(msg_id ORDER BY msg_id) = '{1,2}' FROM pgmq.a_cv"

# ---------------------------------------------------------------------------
say "create_partitioned bounds premake"
out=$(psql -X -q -At -v VERBOSITY=verbose -d "$PART_DB" -c "SELECT pgmq.create_partitioned('pm', '10', '100', 501)" 2>&1) &&
  fail "premake 501 was accepted"
grep -q "22023" <<<"$out" && grep -q "premake must be at most 500, got 501" <<<"$out" ||
  fail "premake 501: unexpected error: $out"
say "ok: premake 501 is refused with 22023"
check "nothing was created" "SELECT to_regclass('pgmq.q_pm') IS NULL AND NOT EXISTS (SELECT FROM pgmq.meta WHERE queue_name = 'pm')"
expect_error "premake 2147483647 too" "premake must be at most 500" \
  "SELECT pgmq.create_partitioned('pm', '1 day', '7 days', 2147483647)"
