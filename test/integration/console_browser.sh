#!/usr/bin/env bash
# test/integration/console_browser.sh: the console's page in a real browser.
#
# Makes a database with queues in every state the overview shows (empty, a
# backlog with leased and delayed messages and an old head, paused, dead
# letters with their reasons in a dead-letter queue shared by two queues, an
# archive, two partitioned queues: one short of runway, one overrun into its
# default partition), starts build/console/pgmq-console on it twice (with
# --allow-actions, and read-only), and runs test/browser/console.mjs:
# Playwright (playwright-core, no downloaded browser) drives Debian's
# headless Chromium through the page, checks its numbers and dead letters
# against SQL, browses messages, performs a redrive, a redrive of every
# dead letter, a purge and a pause/resume through the page, and saves the
# screenshots of docs/console.md in docs/images/. Then, for each upstream
# release in PGMQ_UPSTREAM_RELEASES (default 1.11.0 1.12.0 1.13.1), a
# database with that release's stand-in (test/lib/upstream_install.py) and
# test/browser/console_upstream.mjs: what needs pgmq-cpp named as not
# available, the figures, a tenant's queue not read, browsing and a purge.
#
# test/run runs it with PGHOST/PGPORT/PGUSER set (a superuser); exit 0 is a
# pass. PGMQ_CONSOLE_BIN overrides the binary (default
# build/console/pgmq-console, from `cmake --build build`). Takes about 30 s,
# and about 8 s for each upstream release.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

say() { echo "console_browser: $*"; }
fail() { echo "console_browser: FAIL: $*" >&2; exit 1; }

bin=${PGMQ_CONSOLE_BIN:-build/console/pgmq-console}
[ -x "$bin" ] || fail "no console binary at $bin: build it first (cmake -S . -B build && cmake --build build --target pgmq-console), or set PGMQ_CONSOLE_BIN"
chromium=${PGMQ_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || fail "no Chromium at $chromium (Debian package chromium)"

if ! command -v npm >/dev/null 2>&1; then
  say "npm not on PATH: installing Debian's nodejs and npm"
  { apt-get update -q && apt-get install -y -q nodejs npm; } >/dev/null || fail "could not install nodejs and npm"
fi

db=pgmq_it_console_$$
work=$(mktemp -d /tmp/pgmq-console-test.XXXXXX)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The npm dependencies first: the queues' ages run from their creation.
(cd test/browser && npm ci --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1) ||
  { cat "$work/npm.log" >&2; fail "npm ci in test/browser failed"; }

psql -X -q -d postgres -c "CREATE DATABASE $db" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null <<'SQL'
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE EXTENSION pgmq;

-- empty: nothing in it.
SELECT pgmq.create('empty');

-- jobs: a backlog of 60 messages with headers, 8 of them archived, the 22
-- oldest left in the queue made 10 minutes old (the "messages wait too
-- long" alert), 5 leased for an hour, 3 more sent with an hour's delay, and
-- one whose body is markup (the page must show it as text).
SELECT pgmq.create('jobs');
SELECT pgmq.send('jobs',
                 jsonb_strip_nulls(jsonb_build_object(
                   'customer', (ARRAY['acme', 'globex', 'initech'])[1 + i % 3],
                   'order', i,
                   'priority', CASE WHEN i % 4 = 0 THEN 1 END)),
                 jsonb_build_object('tenant', CASE WHEN i % 2 = 0 THEN 'north' ELSE 'south' END,
                                    'trace', 't' || i))
  FROM generate_series(1, 60) AS i;
SELECT pgmq.archive('jobs', ARRAY[1, 2, 3, 4, 5, 6, 7, 8]::bigint[]);
UPDATE pgmq.q_jobs SET enqueued_at = now() - interval '10 minutes' WHERE msg_id <= 30;
SELECT * FROM pgmq.read('jobs', 3600, 5);
SELECT pgmq.send('jobs', jsonb_build_object('customer', 'acme', 'later', true),
                 '{"tenant": "north"}'::jsonb, 3600)
  FROM generate_series(1, 3);
SELECT pgmq.send('jobs', '{"note": "<img src=x onerror=alert(1)><b>bold</b>"}'::jsonb,
                 '{"tenant": "<script>alert(2)</script>"}'::jsonb);

-- mail: paused, with 4 messages waiting, and deduplication, retention and
-- priorities (the pause shares their row of pgmq.policies: a resume and a
-- pause through the page must keep them).
SELECT pgmq.create('mail');
SELECT pgmq.send_batch('mail', array_fill('{"to": "ops@example.com"}'::jsonb, ARRAY[4]));
SELECT pgmq.set_deduplication('mail', '1 hour');
SELECT pgmq.set_retention('mail', '7 days', '30 days');
SELECT pgmq.set_priority('mail', 3);
SELECT pgmq.pause('mail');

-- payments and refunds share the dead-letter queue payments_dead.
-- payments: 2 deliveries, then moved; its 5 messages are read past the
-- limit with vt 0, the first also retried after each of its two deliveries
-- with a reason (its x-pgmq-failures); 2 fresh ones stay.
SELECT pgmq.create('payments');
SELECT pgmq.create('refunds');
SELECT pgmq.create('payments_dead');
SELECT pgmq.set_dead_letter_queue('payments', 'payments_dead', 2);
SELECT pgmq.set_dead_letter_queue('refunds', 'payments_dead', 3);
SELECT pgmq.set_retry_backoff('payments', 5, 300);
SELECT pgmq.send('payments', jsonb_build_object('charge', i * 100), jsonb_build_object('trace', 'p' || i))
  FROM generate_series(1, 5) AS i;
SELECT * FROM pgmq.read('payments', 0, 10);
SELECT * FROM pgmq.retry('payments', 1, 'card declined');
UPDATE pgmq.q_payments SET vt = now() WHERE msg_id = 1;
SELECT * FROM pgmq.read('payments', 0, 10);
SELECT * FROM pgmq.retry('payments', 1, 'gateway timed out');
UPDATE pgmq.q_payments SET vt = now() WHERE msg_id = 1;
SELECT * FROM pgmq.read('payments', 0, 10);
SELECT pgmq.send('payments', '{"charge": 700}'::jsonb);
SELECT pgmq.send('payments', '{"charge": 800}'::jsonb);
-- refunds: its consumer sets one of its 2 messages aside, with a reason.
SELECT pgmq.send('refunds', jsonb_build_object('refund', i)) FROM generate_series(1, 2) AS i;
SELECT * FROM pgmq.read('refunds', 30, 1);
SELECT pgmq.dead_letter('refunds', 1, 'customer account closed');
-- outbox: 7 messages, purged through the page.
SELECT pgmq.create('outbox');
SELECT pgmq.send_batch('outbox', array_fill('{"event": "order.created"}'::jsonb, ARRAY[7]));

-- stream: the test sends to it while the console samples (the sparkline).
SELECT pgmq.create('stream');

-- events: partitioned by 10 ids, 4 premade; 45 messages leave a runway of
-- 4 messages, seconds at this rate (the runway alert).
SELECT pgmq.create_partitioned('events', '10', '100');
SELECT pgmq.send_batch('events', array_fill('{"kind": "click"}'::jsonb, ARRAY[45]));

-- spill: 60 messages into partitions premade to id 49: 11 in the default
-- partition (the default-partition alert).
SELECT pgmq.create_partitioned('spill', '10', '100');
SELECT pgmq.send_batch('spill', array_fill('{"kind": "view"}'::jsonb, ARRAY[60]));
SQL
say "database $db: queues made"

# wait_for_session PORT: until GET /api/session answers (5 s at most).
wait_for_session() {
  local port=$1 i
  for i in $(seq 1 50); do
    if curl -fsS "http://127.0.0.1:$port/api/session" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# free_port: a TCP port nothing listens on now.
free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

port=$(free_port)
"$bin" --listen "127.0.0.1:$port" --allow-actions --sample-seconds 1 "dbname=$db" >"$work/console.log" 2>&1 &
pids+=($!)
ro_port=$(free_port)
"$bin" --listen "127.0.0.1:$ro_port" --sample-seconds 1 "dbname=$db" >"$work/console-ro.log" 2>&1 &
pids+=($!)
if ! wait_for_session "$port" || ! wait_for_session "$ro_port"; then
  cat "$work/console.log" "$work/console-ro.log" >&2
  fail "the console did not answer GET /api/session within 5 s"
fi
say "console on 127.0.0.1:$port (actions), 127.0.0.1:$ro_port (read-only)"

mkdir -p docs/images
status=0
CONSOLE_URL="http://127.0.0.1:$port" CONSOLE_RO_URL="http://127.0.0.1:$ro_port" \
  PGDATABASE="$db" CHROMIUM="$chromium" SCREENSHOT_DIR="$root/docs/images" \
  timeout 120 node test/browser/console.mjs || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- console log (last lines)" >&2
  tail -n 20 "$work/console.log" >&2
  fail "browser checks failed (exit $status)"
fi
say "pgmq-cpp: PASS"
for pid in "${pids[@]}"; do
  kill "$pid" 2>/dev/null || true
done
pids=()

# The same page against upstream pgmq: the stand-in of each release
# (test/lib/upstream_install.py; ours, not upstream's code), with a backlog,
# an archive, a partitioned queue, a queue to purge and a tenant's queue the
# console must not read (its owner lacks the console role's privileges).
releases=${PGMQ_UPSTREAM_RELEASES-1.11.0 1.12.0 1.13.1}
psql -X -q -d postgres -c "DROP ROLE IF EXISTS browser_tenant" -c "CREATE ROLE browser_tenant LOGIN" >/dev/null
cleanup_upstream() {
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS ${db}_up WITH (FORCE)" -c "DROP ROLE IF EXISTS browser_tenant" \
    >/dev/null 2>&1 || true
}
trap 'cleanup_upstream; cleanup' EXIT
for release in $releases; do
  started=$SECONDS
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS ${db}_up WITH (FORCE)" -c "CREATE DATABASE ${db}_up" >/dev/null
  PYTHONPATH=$root/test/lib /usr/bin/python3 -c 'import sys, upstream_install as u; u.install(sys.argv[1], sys.argv[2])' \
    "${db}_up" "$release" || fail "upstream $release: the stand-in did not install"
  psql -X -q -v ON_ERROR_STOP=1 -d "${db}_up" >/dev/null <<'SQL'
SELECT pgmq.create('jobs');
SELECT pgmq.send_batch('jobs', ARRAY(SELECT jsonb_build_object('n', i) FROM generate_series(1, 12) AS i));
SELECT pgmq.archive('jobs', ARRAY[1, 2]::bigint[]);
SELECT * FROM pgmq.read('jobs', 3600, 3);
SELECT pgmq.send('jobs', '{"later": true}', 3600);
SELECT pgmq.create('outbox');
SELECT pgmq.send('outbox', '{}') FROM generate_series(1, 5);
SELECT pgmq.create_partitioned('events', '10', '100');
SELECT pgmq.send_batch('events', array_fill('{}'::jsonb, ARRAY[20]));
GRANT USAGE, CREATE ON SCHEMA pgmq TO browser_tenant;
GRANT SELECT, INSERT ON pgmq.meta TO browser_tenant;
SET ROLE browser_tenant;
SELECT pgmq.create('tenant_q');
SQL
  upstream_name=$(PYTHONPATH=$root/test/lib /usr/bin/python3 -c \
    'import sys, upstream_install as u; print(u.short_name(sys.argv[1]))' "$release")
  default_rows=0
  [ "$(printf '%s\n%s\n' 1.13.0 "$release" | sort -V | head -n 1)" = 1.13.0 ] && default_rows=1
  port=$(free_port)
  "$bin" --listen "127.0.0.1:$port" --allow-actions --sample-seconds 1 "dbname=${db}_up" >"$work/console-up.log" 2>&1 &
  pids+=($!)
  wait_for_session "$port" || { cat "$work/console-up.log" >&2; fail "upstream $release: the console did not answer"; }
  status=0
  shot=
  [ "$release" = 1.13.1 ] && shot=$root/docs/images/console-upstream.png
  CONSOLE_URL="http://127.0.0.1:$port" PGDATABASE="${db}_up" UPSTREAM_NAME="$upstream_name" DEFAULT_ROWS=$default_rows \
    CHROMIUM="$chromium" SCREENSHOT=$shot timeout 60 node test/browser/console_upstream.mjs || status=$?
  kill "${pids[-1]}" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    tail -n 20 "$work/console-up.log" >&2
    fail "upstream $release: browser checks failed (exit $status)"
  fi
  say "upstream $release: PASS ($((SECONDS - started)) s)"
done
say "PASS"
