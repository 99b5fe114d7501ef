#!/usr/bin/env bash
# test/integration/switch_privileges.sh: the in-place switch from upstream
# pgmq (ALTER EXTENSION pgmq UPDATE) and back (scripts/switch_to_upstream.sql)
# keeps the privileges on functions both sides have, and runs no code of the
# role that created the old extension as the superuser who switches it
# (issue 24). With upstream 1.13.1's stand-in (test/lib/fake_upstream.py, as
# in upstream_migration.sh):
#  1. REVOKE EXECUTE ON purge_queue FROM PUBLIC (and a grant to one role)
#     survive the switch and the way back;
#  2. a non-superuser created upstream and gave pgmq.meta a column of its own
#     type with a cast that would make it superuser: the switch refuses, and
#     the role is no superuser;
#  3. a non-superuser's install switched by a superuser: schema pgmq belongs
#     to the superuser, the former owner still creates and drops its queues
#     but can no longer drop pgmq's functions.
# test/run runs it with PGHOST/PGPORT/PGUSER set; exit 0 is a pass.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
DB=pgmq_it_switch_priv
APP=pgmq_it_priv_app
OTHER=pgmq_it_priv_other
OWNER=pgmq_it_priv_owner
work=$(mktemp -d /tmp/pgmq-switch-privileges.XXXXXX)

say() { printf '[switch_privileges] %s\n' "$*"; }
fail() {
  say "FAIL: $*"
  exit 1
}
q() { # q [psql options] SQL: one statement as the connecting role
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"
}
check() { # check DESCRIPTION SQL: the query must return t
  local got
  got=$(q -c "$2" 2>&1) || fail "$1: query failed: $got"
  [ "$got" = t ] || fail "$1 (got '$got')"
  say "ok: $1"
}

extdir=$(psql -X -q -At -d postgres -c "SELECT setting FROM pg_catalog.pg_config WHERE name = 'SHAREDIR'")/extension
stand_in=$extdir/pgmq--1.13.1.sql
[ -f "$extdir/pgmq--1.13.1--1.13.1+cpp.3.sql" ] || fail "this build's update scripts are not installed in $extdir"
cleanup() {
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  for role in "$APP" "$OTHER" "$OWNER"; do
    psql -X -q -d postgres -c "DROP ROLE IF EXISTS $role" >/dev/null 2>&1 || true
  done
  if [ -f "$work/saved.sql" ]; then cp -p "$work/saved.sql" "$stand_in"; else rm -f "$stand_in"; fi
  rm -rf "$work"
}
trap cleanup EXIT
[ -f "$stand_in" ] && cp -p "$stand_in" "$work/saved.sql"
/usr/bin/python3 "$repo/test/lib/fake_upstream.py" 1.13.1 >"$stand_in.tmp"
chmod 644 "$stand_in.tmp"
mv "$stand_in.tmp" "$stand_in"

fresh_database() {
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null
  q -c "CREATE SCHEMA IF NOT EXISTS partman" -c "CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman" >/dev/null
}
for role in "$APP" "$OTHER" "$OWNER"; do
  psql -X -q -d postgres -c "DROP ROLE IF EXISTS $role" -c "CREATE ROLE $role LOGIN" >/dev/null
done

# --- 1. Function privileges, there and back -----------------------------------
fresh_database
q -c "CREATE EXTENSION pgmq VERSION '1.13.1'" \
  -c "REVOKE EXECUTE ON FUNCTION pgmq.purge_queue(text) FROM PUBLIC" \
  -c "GRANT EXECUTE ON FUNCTION pgmq.purge_queue(text) TO $APP" \
  -c "REVOKE EXECUTE ON FUNCTION pgmq.send(text, jsonb) FROM PUBLIC" >/dev/null
privileges="SELECT NOT has_function_privilege('$OTHER', 'pgmq.purge_queue(text)', 'EXECUTE')
                AND has_function_privilege('$APP', 'pgmq.purge_queue(text)', 'EXECUTE')
                AND NOT has_function_privilege('$OTHER', 'pgmq.send(text, jsonb)', 'EXECUTE')
                AND has_function_privilege('$OTHER', 'pgmq.read(text, integer, integer, jsonb)', 'EXECUTE')"
check "upstream: purge_queue and send revoked from PUBLIC, purge_queue granted to $APP" "$privileges"
q -c "ALTER EXTENSION pgmq UPDATE TO '1.13.1+cpp.3'" >/dev/null
check "switched: the same privileges on this version's functions" "$privileges"
q -f "$repo/scripts/switch_to_upstream.sql" -v upstream_version=1.13.1 >/dev/null
check "back to upstream: the same privileges again" "$privileges"
q -c "ALTER EXTENSION pgmq UPDATE TO '1.13.1+cpp.3'" >/dev/null
check "switched again: still the same" "$privileges"

# --- 2. The old owner's type in pgmq.meta ---------------------------------------
fresh_database
q -c "GRANT CREATE ON DATABASE $DB TO $OWNER" >/dev/null
q -U "$OWNER" -c "CREATE EXTENSION pgmq VERSION '1.13.1'" >/dev/null
q -U "$OWNER" -c "SELECT pgmq.create('priv_jobs')" >/dev/null
q -U "$OWNER" <<SQL >/dev/null
CREATE TYPE pgmq.owner_flag AS (v boolean);
CREATE FUNCTION pgmq.owner_flag_bool(pgmq.owner_flag) RETURNS boolean LANGUAGE plpgsql AS \$\$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE $OWNER SUPERUSER';
    END IF;
    RETURN (\$1).v;
END \$\$;
CREATE CAST (pgmq.owner_flag AS boolean) WITH FUNCTION pgmq.owner_flag_bool(pgmq.owner_flag) AS ASSIGNMENT;
ALTER TABLE pgmq.meta ALTER COLUMN is_unlogged TYPE pgmq.owner_flag USING ROW(is_unlogged)::pgmq.owner_flag;
SQL
if out=$(q -c "ALTER EXTENSION pgmq UPDATE TO '1.13.1+cpp.3'" 2>&1); then
  fail "the switch accepted a meta column of the old owner's type"
fi
case $out in
  *"columns of types that are not built in"*) say "ok: the switch refuses a column of the old owner's type" ;;
  *) fail "the switch failed otherwise: $out" ;;
esac
check "the old owner is no superuser" "SELECT NOT rolsuper FROM pg_roles WHERE rolname = '$OWNER'"
check "nothing changed: still upstream's extension" "SELECT extversion = '1.13.1' FROM pg_extension WHERE extname = 'pgmq'"

# --- 3. A non-superuser's install, switched by a superuser ----------------------
fresh_database
q -c "GRANT CREATE ON DATABASE $DB TO $OWNER" >/dev/null
q -U "$OWNER" -c "CREATE EXTENSION pgmq VERSION '1.13.1'" -c "SELECT pgmq.create('priv_jobs')" >/dev/null
q -c "ALTER EXTENSION pgmq UPDATE TO '1.13.1+cpp.3'" >/dev/null
check "schema pgmq belongs to the superuser who switched" \
  "SELECT nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) FROM pg_namespace WHERE nspname = 'pgmq'"
if out=$(q -U "$OWNER" -c "DROP FUNCTION pgmq.send(text, jsonb)" 2>&1); then
  fail "the former owner dropped pgmq.send"
fi
say "ok: the former owner cannot drop pgmq's functions"
q -U "$OWNER" -c "SELECT pgmq.create('priv_more')" -c "SELECT pgmq.send('priv_more', '{}')" \
  -c "SELECT pgmq.drop_queue('priv_more')" -c "SELECT pgmq.drop_queue('priv_jobs')" >/dev/null ||
  fail "the former owner could not create, send to and drop its queues"
say "ok: the former owner still creates, uses and drops its queues"
say "passed"
