#!/usr/bin/env bash
# test/integration/client_libraries.sh: upstream pgmq's client libraries
# against this extension, as docs/getting-started.md#client-libraries says
# they were tried.
#
#   - JavaScript: pgmq-js from npm, at the version test/clients/package.json
#     pins (package-lock.json fixes its dependencies), installed with `npm ci`
#     into test/clients/node_modules (gitignored); test/clients/pgmq_js.mjs
#     sends, reads, archives, deletes, pops and checks each result in SQL.
#     The ```js example of docs/getting-started.md runs as it stands.
#   - Python: psycopg 3 (Debian's python3-psycopg), the way the Python
#     examples of the documentation use it: a connection string, Jsonb for
#     payloads, read_with_poll, delete, archive.
#
# test/run runs it with PGHOST/PGPORT/PGUSER set; exit 0 is a pass. Needs
# Node.js with npm (installed from Debian when missing) and the npm registry
# (or npm's cache). A few seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."

say() { echo "client_libraries: $*"; }
fail() { echo "client_libraries: FAIL: $*" >&2; exit 1; }

if ! command -v npm >/dev/null 2>&1; then
  say "npm not on PATH: installing Debian's nodejs and npm"
  { apt-get update -q && apt-get install -y -q nodejs npm; } >/dev/null || fail "could not install nodejs and npm"
fi

db=pgmq_it_clients_$$
work=$(mktemp -d /tmp/pgmq-clients-test.XXXXXX)
cleanup() {
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

(cd test/clients && npm ci --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1) ||
  { cat "$work/npm.log" >&2; fail "npm ci in test/clients failed"; }
say "pgmq-js $(node -p 'require("./test/clients/node_modules/pgmq-js/package.json").version')," \
  "node-postgres $(node -p 'require("./test/clients/node_modules/pg/package.json").version'), Node.js $(node --version)"

psql -X -q -d postgres -c "CREATE DATABASE $db" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "CREATE EXTENSION pgmq" >/dev/null

status=0
(cd test/clients && PGDATABASE=$db timeout 60 node pgmq_js.mjs) || status=1

# The pgmq-js example of docs/getting-started.md (its one ```js block), as
# it stands, with DATABASE_URL naming this database. It lives under
# node_modules so that its import finds pgmq-js; gitignored there.
snippet=test/clients/node_modules/.getting-started-example.mjs
awk '/^```js$/ { on = 1; next } on && /^```$/ { exit } on' docs/getting-started.md >"$snippet"
[ -s "$snippet" ] || fail "no \`\`\`js block in docs/getting-started.md"
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "SELECT pgmq.create('tasks')" >/dev/null
url="postgresql://${PGUSER:-postgres}@/$db?host=${PGHOST:-/var/run/postgresql}&port=${PGPORT:-5432}"
if out=$(DATABASE_URL=$url timeout 60 node "$snippet" 2>&1) && [ "$out" = "read 1 resize" ] &&
  [ "$(psql -X -tA -d "$db" -c 'SELECT count(*) FROM pgmq.q_tasks')" = 0 ]; then
  say "ok: the pgmq-js example of docs/getting-started.md sends, reads and deletes"
else
  say "FAIL: the pgmq-js example of docs/getting-started.md printed: $out"
  status=1
fi
rm -f "$snippet"

# psycopg 3, with an explicit connection string as the documentation's
# examples use (built here from the test's PG* variables).
PGMQ_TEST_DB=$db timeout 60 /usr/bin/python3 - <<'PY' || status=1
import os
import sys

import psycopg
from psycopg.types.json import Jsonb

conninfo = psycopg.conninfo.make_conninfo(
    host=os.environ["PGHOST"], port=os.environ.get("PGPORT", "5432"),
    user=os.environ.get("PGUSER", "postgres"), dbname=os.environ["PGMQ_TEST_DB"])
failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"[psycopg {psycopg.__version__}] {'ok' if ok else 'FAIL'}: {what}" + (f" ({detail})" if detail else ""))
    failures += not ok


with psycopg.connect(conninfo, autocommit=True) as conn:
    conn.execute("SELECT pgmq.create('py_orders')")
    order = {"order_id": 17, "items": [{"sku": "A-1", "qty": 2}], "note": "ünïcode ✓"}
    (msg_id,) = conn.execute("SELECT pgmq.send(%s, %s)", ("py_orders", Jsonb(order))).fetchone()
    (later,) = conn.execute("SELECT pgmq.send(%s, %s, %s)", ("py_orders", Jsonb({"later": True}), 3600)).fetchone()
    try:
        conn.execute("SELECT pgmq.send(%s, %s)", ("py_orders", order))
        check("a dict without Jsonb is refused by psycopg", False, "it was sent")
    except psycopg.ProgrammingError as e:
        check("a dict without Jsonb is refused by psycopg", "cannot adapt type 'dict'" in str(e), e)
    rows = conn.execute("SELECT msg_id, read_ct, message FROM pgmq.read_with_poll(%s, 30, 10, 1)",
                        ("py_orders",)).fetchall()
    check("read_with_poll returns the visible message as sent, as a dict",
          rows == [(msg_id, 1, order)], rows)
    (deleted,) = conn.execute("SELECT pgmq.delete(%s, %s::bigint)", ("py_orders", msg_id)).fetchone()
    check("delete with a bigint placeholder", deleted is True)
    (archived,) = conn.execute("SELECT pgmq.archive(%s, %s::bigint)", ("py_orders", later)).fetchone()
    (left,) = conn.execute("SELECT count(*) FROM pgmq.q_py_orders").fetchone()
    (kept,) = conn.execute("SELECT message FROM pgmq.a_py_orders WHERE msg_id = %s", (later,)).fetchone()
    check("archive moves the delayed message to the archive", archived and left == 0 and kept == {"later": True},
          (archived, left, kept))
    ids = [r[0] for r in conn.execute("SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])",
                                      ("py_orders", [Jsonb({"n": 1}), Jsonb({"n": 2})])).fetchall()]
    done = sorted(r[0] for r in conn.execute("SELECT * FROM pgmq.delete(%s, %s::bigint[])",
                                             ("py_orders", ids)).fetchall())
    check("send_batch of Jsonb values, delete of a list of ids", len(ids) == 2 and done == sorted(ids), (ids, done))
sys.exit(1 if failures else 0)
PY

[ "$status" -eq 0 ] || fail "a client library check failed (above)"
say "PASS"
