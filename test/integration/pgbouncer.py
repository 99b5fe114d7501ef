#!/usr/bin/python3
"""test/integration/pgbouncer.py: pgmq through PgBouncer in transaction
pooling mode, as docs/operations.md#connection-poolers describes it.

Starts a private pgbouncer (Debian's package; its own directory, Unix socket
and configuration, stopped by pid at the end) in front of the PostgreSQL
cluster of PGHOST/PGPORT/PGUSER, with pool_mode = transaction and small
pools, so that clients share few server connections. Through it:

  - what works: send, send_batch, read, pop, delete, archive; read_with_poll
    woken by a send through the pooler, and read_multi_with_poll; the
    policies (a dead-letter queue that reads fill, retry with backoff,
    deduplication) set by one client and applied by the reads and sends of
    others; a queue dropped and created again under backends that cached its
    plans; twelve clients on a pool of three taking 300 messages exactly
    once; upstream's JavaScript client pgmq-js (test/clients/pgmq_js.mjs);
  - what a waiting read_with_poll costs: it holds its server connection for
    the whole wait, so a pool of two with two waiting calls makes a third
    client wait until one returns, and a pool of three does not;
  - what does not work, each next to the alternative the page gives:
    LISTEN (the notification does not reach the client, while a direct
    connection gets it), a session SET (it stays on the server connection
    for the next client; ALTER DATABASE ... SET and SET LOCAL work), and
    psycopg's automatic prepared statements with PgBouncer 1.18 (Debian
    12's: "prepared statement ... does not exist"; prepare_threshold=None
    works).

Exit 0 is a pass. About 10 s.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import psycopg
from psycopg.types.json import Jsonb

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DB = f"pgmq_it_pgbouncer_{os.getpid()}"
PGBOUNCER = os.environ.get("PGMQ_PGBOUNCER", "/usr/sbin/pgbouncer")
BOUNCER_PORT = 6432  # on a Unix socket in the test's own directory

failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"[pgbouncer] {'ok' if ok else 'FAIL'}: {what}" + (f" ({detail})" if detail != "" else ""), flush=True)
    if not ok:
        failures += 1


def direct(dbname=DB):
    return psycopg.connect(dbname=dbname, autocommit=True)


class Bouncer:
    """A private pgbouncer: pools 'app' (3 server connections), 'two' (2)
    and 'one' (1), all for database DB, in transaction pooling mode."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="pgmq-pgbouncer-test.")
        os.chmod(self.dir, 0o755)
        target = f"host={os.environ.get('PGHOST', '/var/run/postgresql')} port={os.environ.get('PGPORT', '5432')} dbname={DB}"
        user = os.environ.get("PGUSER", "postgres")
        with open(os.path.join(self.dir, "userlist.txt"), "w") as f:
            f.write(f'"{user}" ""\n')
        with open(os.path.join(self.dir, "pgbouncer.ini"), "w") as f:
            f.write(f"""[databases]
app = {target} pool_size=3
two = {target} pool_size=2
one = {target} pool_size=1

[pgbouncer]
listen_addr =
listen_port = {BOUNCER_PORT}
unix_socket_dir = {self.dir}
auth_type = trust
auth_file = {self.dir}/userlist.txt
admin_users = {user}
pool_mode = transaction
max_client_conn = 100
logfile = {self.dir}/pgbouncer.log
""")
            # PgBouncer refuses to run as root; started as root it switches
            # to this user itself.
            if os.geteuid() == 0:
                f.write("user = postgres\n")
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            for name in os.listdir(self.dir):
                shutil.chown(os.path.join(self.dir, name), "postgres", "postgres")
        self.out = open(os.path.join(self.dir, "stdout"), "w")
        self.proc = subprocess.Popen([PGBOUNCER, os.path.join(self.dir, "pgbouncer.ini")],
                                     stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.admin("SHOW VERSION")
                return
            except psycopg.Error:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    with open(os.path.join(self.dir, "stdout")) as f:
                        print(f.read())
                    raise RuntimeError("pgbouncer did not start")
                time.sleep(0.1)

    def conninfo(self, pool="app"):
        return psycopg.conninfo.make_conninfo(host=self.dir, port=BOUNCER_PORT, dbname=pool,
                                              user=os.environ.get("PGUSER", "postgres"))

    def connect(self, pool="app", **kw):
        # prepare_threshold=None: psycopg's own prepared statements do not
        # survive transaction pooling (checked below).
        kw.setdefault("prepare_threshold", None)
        return psycopg.connect(self.conninfo(pool), autocommit=True, **kw)

    def admin(self, command):
        # The admin console speaks the simple query protocol only.
        with psycopg.connect(self.conninfo("pgbouncer"), autocommit=True) as c:
            cur = c.cursor()
            cur.execute(command, prepare=False)
            return cur.fetchall() if cur.description else None

    def close(self):
        self.proc.send_signal(signal.SIGINT)  # PgBouncer's safe shutdown
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def one(conn, sql, params=None):
    return conn.execute(sql, params).fetchone()


def basics(b):
    with b.connect() as c1, b.connect() as c2, b.connect() as c3:
        one(c1, "SELECT pgmq.create('work')")
        a = one(c1, "SELECT pgmq.send(%s, %s)", ("work", Jsonb({"n": 1})))[0]
        ids = [r[0] for r in c2.execute("SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])",
                                        ("work", [Jsonb({"n": 2}), Jsonb({"n": 3}), Jsonb({"n": 4})]))]
        check("send and send_batch return consecutive ids", ids == [a + 1, a + 2, a + 3], (a, ids))
        got = c3.execute("SELECT msg_id, read_ct, message FROM pgmq.read('work', 30, 2)").fetchall()
        check("read leases the two oldest", got == [(a, 1, {"n": 1}), (a + 1, 1, {"n": 2})], got)
        popped = one(c1, "SELECT msg_id, message FROM pgmq.pop('work')")
        check("pop takes the next visible one", popped == (a + 2, {"n": 3}), popped)
        check("delete", one(c2, "SELECT pgmq.delete('work', %s::bigint)", (a,))[0] is True)
        check("archive", one(c3, "SELECT pgmq.archive('work', %s::bigint)", (a + 1,))[0] is True)
        left = [r[0] for r in c1.execute("SELECT msg_id FROM pgmq.q_work ORDER BY 1")]
        kept = [r[0] for r in c1.execute("SELECT msg_id FROM pgmq.a_work ORDER BY 1")]
        check("one message left in the queue, one in the archive", left == [a + 3] and kept == [a + 1], (left, kept))
        one(c1, "SELECT pgmq.purge_queue('work')")


def polls(b):
    with b.connect() as setup:
        for q in ("wake", "multi_a", "multi_b"):
            one(setup, "SELECT pgmq.create(%s)", (q,))
    result = {}

    def poll(key, sql):
        with b.connect() as c:
            t0 = time.monotonic()
            rows = c.execute(sql).fetchall()
            result[key] = (rows, time.monotonic())
            result[key + "_t0"] = t0

    # A poll interval of 5 s: a wake-up earlier than that came from the
    # sender's commit (pgmq is preloaded in the test cluster).
    t = threading.Thread(target=poll, args=("single", "SELECT msg_id, message FROM pgmq.read_with_poll('wake', 30, 1, 10, 5000)"))
    t.start()
    time.sleep(0.5)
    with b.connect() as s:
        sent_at = time.monotonic()
        mid = one(s, "SELECT pgmq.send('wake', '{\"hello\": 1}')")[0]
    t.join(15)
    rows, done = result.get("single", ([], 0))
    check("read_with_poll through the pooler returns the message sent by another client",
          rows == [(mid, {"hello": 1})], rows)
    check("... woken by the send's commit, not at its next poll", done - sent_at < 4, f"{done - sent_at:.2f} s")

    t = threading.Thread(target=poll, args=("multi", "SELECT queue_name, msg_id FROM pgmq.read_multi_with_poll("
                                                     "ARRAY['multi_a', 'multi_b'], 30, 5, 10, 200)"))
    t.start()
    time.sleep(0.5)
    with b.connect() as s:
        mid = one(s, "SELECT pgmq.send('multi_b', '{}')")[0]
    t.join(15)
    rows = result.get("multi", ([], 0))[0]
    check("read_multi_with_poll through the pooler returns the message of the second queue",
          rows == [("multi_b", mid)], rows)


def policies(b):
    with b.connect() as c:
        for q in ("orders", "orders_dead"):
            one(c, "SELECT pgmq.create(%s)", (q,))
        one(c, "SELECT pgmq.set_dead_letter_queue('orders', 'orders_dead', 2)")
        one(c, "SELECT pgmq.set_retry_backoff('orders', 5, 300)")
        one(c, "SELECT pgmq.set_deduplication('orders', interval '1 hour')")
    # Every statement from a new client: they land on whichever of the
    # pool's server connections is free.
    with b.connect() as c:
        poison = one(c, "SELECT pgmq.send('orders', '{\"bad\": true}')")[0]
    reads = []
    for _ in range(3):
        with b.connect() as c:
            reads.append([tuple(r) for r in c.execute("SELECT msg_id, read_ct FROM pgmq.read('orders', 0, 1)")])
    with b.connect() as c:
        dead = c.execute("SELECT message, headers->'x-pgmq-dead-letter'->>'queue' FROM pgmq.q_orders_dead").fetchall()
        left = one(c, "SELECT count(*) FROM pgmq.q_orders")[0]
    check("dead letters: two deliveries, then the third read moves the message",
          reads == [[(poison, 1)], [(poison, 2)], []] and dead == [({"bad": True}, "orders")] and left == 0,
          (reads, dead, left))

    with b.connect() as c:
        mid = one(c, "SELECT pgmq.send('orders', '{\"charge\": 1}')")[0]
    with b.connect() as c:
        one(c, "SELECT msg_id FROM pgmq.read('orders', 30, 1)")
    with b.connect() as c:
        r = one(c, "SELECT msg_id, vt BETWEEN clock_timestamp() + interval '4 s' AND clock_timestamp() + interval '5 s' "
                   "FROM pgmq.retry('orders', %s::bigint)", (mid,))
    check("retry with backoff: visible again in 4.5 to 5 s", r == (mid, True), r)

    headers = Jsonb({"x-pgmq-deduplication-id": "order-17"})
    sent = []
    for _ in range(2):
        with b.connect() as c:
            sent.append(one(c, "SELECT pgmq.send('orders', %s, %s)", (Jsonb({"credit": 100}), headers))[0])
    with b.connect() as c:
        n = one(c, "SELECT count(*) FROM pgmq.q_orders WHERE message->>'credit' = '100'")[0]
    check("deduplication: the second send returns the first one's id and adds nothing",
          sent[0] == sent[1] and n == 1, (sent, n))


def plans_and_concurrency(b):
    # The pool's backends keep plans for 'cycle'; dropping and creating it
    # again must not leave them a stale table.
    ok = True
    for i in range(5):
        with b.connect() as c:
            one(c, "SELECT pgmq.create('cycle')")
            one(c, "SELECT pgmq.send('cycle', %s)", (Jsonb({"i": i}),))
        with b.connect() as c:
            got = one(c, "SELECT message FROM pgmq.read('cycle', 30, 1)")
            ok = ok and got == ({"i": i},)
            one(c, "SELECT pgmq.drop_queue('cycle')")
    check("a queue dropped and created again five times, used by clients that share backends", ok)

    with b.connect() as c:
        one(c, "SELECT pgmq.create('many')")
    taken, errors = [], []
    lock = threading.Lock()

    def worker(k):
        try:
            with b.connect() as c:
                for i in range(25):
                    one(c, "SELECT pgmq.send('many', %s)", (Jsonb({"k": k, "i": i}),))
                    for mid, msg in c.execute("SELECT msg_id, message FROM pgmq.read('many', 60, 2)").fetchall():
                        with lock:
                            taken.append((msg["k"], msg["i"]))
                        one(c, "SELECT pgmq.delete('many', %s::bigint)", (mid,))
                while True:
                    rows = c.execute("SELECT msg_id, message FROM pgmq.read('many', 60, 5)").fetchall()
                    if not rows:
                        break
                    for mid, msg in rows:
                        with lock:
                            taken.append((msg["k"], msg["i"]))
                        one(c, "SELECT pgmq.delete('many', %s::bigint)", (mid,))
        except Exception as e:  # noqa: BLE001 - reported as a failure below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    with b.connect() as c:
        left = one(c, "SELECT count(*) FROM pgmq.q_many")[0]
    check("12 clients on a pool of 3: 300 messages, each taken exactly once, none left",
          not errors and len(taken) == 300 and len(set(taken)) == 300 and left == 0,
          (errors[:2], len(taken), len(set(taken)), left))


def pool_size_for_polls(b):
    """Two waiting read_with_poll calls hold two server connections."""
    with b.connect() as c:
        one(c, "SELECT pgmq.create('idle')")
        one(c, "SELECT pgmq.create('busy')")

    def waited(pool):
        def poller():
            with b.connect(pool) as c:
                c.execute("SELECT * FROM pgmq.read_with_poll('idle', 30, 1, 4)").fetchall()
        pollers = [threading.Thread(target=poller) for _ in range(2)]
        for t in pollers:
            t.start()
        # Send once both wait in the server, so that the send comes after them.
        deadline = time.monotonic() + 3
        with direct() as c:
            while time.monotonic() < deadline:
                waiting = one(c, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                                 "AND query LIKE '%read_with_poll(''idle''%' AND pid <> pg_backend_pid()")[0]
                if waiting == 2:
                    break
                time.sleep(0.05)
        with b.connect(pool) as c:
            t0 = time.monotonic()
            one(c, "SELECT pgmq.send('busy', '{}')")
            took = time.monotonic() - t0
        for t in pollers:
            t.join(10)
        return took

    took = waited("two")
    check("pool of 2, two read_with_poll waiting 4 s: a send waits for a server connection", took > 2, f"{took:.2f} s")
    took = waited("app")
    check("pool of 3, two read_with_poll waiting: a send goes through at once", took < 1.5, f"{took:.2f} s")


def not_working(b):
    # LISTEN: the server connection that ran it goes back to the pool.
    with direct() as c:
        one(c, "SELECT pgmq.create('events')")
        one(c, "SELECT pgmq.enable_notify_insert('events')")
    got = {"pooled": [], "direct": []}
    pooled, plain = b.connect(), direct()
    try:
        for key, conn in (("pooled", pooled), ("direct", plain)):
            conn.add_notify_handler(lambda n, key=key: got[key].append(n.channel))
            conn.execute('LISTEN "pgmq.q_events.INSERT"')
        with b.connect() as s:
            one(s, "SELECT pgmq.send('events', '{}')")
        time.sleep(1)
        # psycopg hands over notifications as it reads from the connection.
        for conn in (pooled, plain):
            conn.execute("SELECT 1")
    finally:
        pooled.close()
        plain.close()
    check("LISTEN through the pooler hears nothing, a direct connection hears the send",
          got == {"pooled": [], "direct": ["pgmq.q_events.INSERT"]}, got)

    # A session setting stays on the server connection: the next client of
    # the one-connection pool gets it.
    with b.connect("one") as c:
        c.execute("SET pgmq.plan_cache_size = 64")
    with b.connect("one") as c:
        leaked = one(c, "SHOW pgmq.plan_cache_size")[0]
        c.execute("RESET pgmq.plan_cache_size")
    check("SET through the pooler: another client gets the setting", leaked == "64", leaked)
    with b.connect("one") as c:
        with c.transaction():
            c.execute("SET LOCAL pgmq.plan_cache_size = 32")
            inside = one(c, "SHOW pgmq.plan_cache_size")[0]
        after = one(c, "SHOW pgmq.plan_cache_size")[0]
    check("SET LOCAL holds for its transaction only", (inside, after) == ("32", "1024"), (inside, after))
    with direct() as c:
        c.execute(f"ALTER DATABASE {DB} SET pgmq.plan_cache_size = 128")
    b.admin("RECONNECT one")  # new server connections, as after a restart of the pool
    with b.connect("one") as c:
        per_db = one(c, "SHOW pgmq.plan_cache_size")[0]
    check("ALTER DATABASE ... SET reaches every server connection of the pool", per_db == "128", per_db)

    # psycopg prepares a statement it has run 5 times (prepare_threshold's
    # default); PgBouncer 1.18 then runs it on another server connection.
    a = b.connect("two", prepare_threshold=5)
    other = b.connect("two")
    error = None
    try:
        for _ in range(8):
            one(a, "SELECT pgmq.send('events', %s)", (Jsonb({}),))
            # Holds the connection 'a' used last, so a's next statement gets the other one.
            other.execute("BEGIN")
            other.execute("SELECT 1")
            one(a, "SELECT pgmq.send('events', %s)", (Jsonb({}),))
            other.execute("COMMIT")
    except psycopg.Error as e:
        error = e
    finally:
        a.close()
        other.close()
    check("psycopg's automatic prepared statements fail through the pooler",
          isinstance(error, psycopg.errors.InvalidSqlStatementName), repr(error))
    a = b.connect("two")  # prepare_threshold=None
    other = b.connect("two")
    try:
        for _ in range(8):
            one(a, "SELECT pgmq.send('events', %s)", (Jsonb({}),))
            other.execute("BEGIN")
            other.execute("SELECT 1")
            one(a, "SELECT pgmq.send('events', %s)", (Jsonb({}),))
            other.execute("COMMIT")
        error = None
    except psycopg.Error as e:
        error = e
    finally:
        a.close()
        other.close()
    check("... and work with prepare_threshold=None", error is None, repr(error))


def javascript(b):
    """Upstream's JavaScript client through the pooler (node-postgres sends
    unnamed statements, which transaction pooling carries)."""
    clients = os.path.join(REPO, "test", "clients")
    if shutil.which("npm") is None:
        check("pgmq-js through the pooler: npm is installed", False, "no npm on PATH")
        return
    if not os.path.exists(os.path.join(clients, "node_modules", "pgmq-js")):
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=clients,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            check("pgmq-js through the pooler: npm ci in test/clients", False, r.stdout + r.stderr)
            return
    env = dict(os.environ, PGHOST=b.dir, PGPORT=str(BOUNCER_PORT), PGDATABASE="app")
    r = subprocess.run(["node", "pgmq_js.mjs"], cwd=clients, env=env, capture_output=True, text=True, timeout=60)
    ok = r.returncode == 0
    check("pgmq-js 1.3.1's own checks through the pooler", ok, "" if ok else r.stdout[-2000:] + r.stderr[-1000:])


def main():
    if not os.access(PGBOUNCER, os.X_OK):
        print(f"[pgbouncer] FAIL: no {PGBOUNCER}: install Debian's package pgbouncer (test/run does)", flush=True)
        return 1
    with direct("postgres") as c:
        c.execute(f"CREATE DATABASE {DB}")
    b = None
    try:
        with direct() as c:
            c.execute("CREATE EXTENSION pgmq")
        b = Bouncer()
        print(f"[pgbouncer] {b.admin('SHOW VERSION')[0][0]}, transaction pooling, in {b.dir}", flush=True)
        t0 = time.monotonic()
        basics(b)
        polls(b)
        policies(b)
        plans_and_concurrency(b)
        pool_size_for_polls(b)
        not_working(b)
        javascript(b)
        print(f"[pgbouncer] {time.monotonic() - t0:.1f} s", flush=True)
    finally:
        if b is not None:
            b.close()
        with direct("postgres") as c:
            c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    print("[pgbouncer] PASS" if failures == 0 else f"[pgbouncer] {failures} check(s) failed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
