#!/usr/bin/env python3
"""test/integration/queue_head_model.py: a randomized model test of the
queue's head (src/pg/head_hint.cpp): reads never miss a committed, visible
message, whatever sessions, roles, rollbacks and plain SQL do around them.

Several sessions, as three roles owning or sharing four queues (one with a
dead-letter policy), run random transactions of send, send_batch, read, pop,
delete, archive, set_vt, unarchive (old ids: the oldest archived, below the
head, or the newest, often between the head and a raise a read computed),
move, a read followed in its transaction by an unarchive, a move or a
plain-SQL insert into the queue it read (its refresh keeps a raise of the
head for the commit),
dead-letter moves, plain-SQL inserts into queue tables (new ids, and
archived messages put back with their old ids), with savepoints rolled back
to, whole-transaction rollbacks and prepared transactions. The head's
refresh and rescan intervals are at 0 first, then refreshes at 0 with no
rescan (plain SQL then only into the queue with insert notifications, whose
trigger tells the head: nothing may repair a wrong head), then at their
defaults. At each quiet point (every session idle, nothing prepared) read,
pop and read_with_poll, each in a transaction rolled back afterwards, must
return exactly the messages that plain SQL says are visible; a message
written with plain SQL into a queue without insert notifications may be
missing only until one rescan interval after its commit (the documented
bound), and is checked again once that passed.

  queue_head_model.py [--seconds N] [--seed S] [--sessions N]

Defaults: 60 s in all (PGMQ_HEAD_MODEL_SECONDS; a third per interval setting),
a random seed, printed
so that a failure can be replayed (the interleaving still varies: it is a
property test, not a recording). bench/queue_head_model.sh runs it longer.
Needs pgmq preloaded; runs in a database of its own on the cluster in
PGHOST/PGPORT/PGUSER.
"""
import argparse
import os
import random
import sys
import threading
import time

import psycopg

DB = "pgmq_head_model"
TAG = "[queue_head_model]"
MAX_DELIVERIES = 3
# Queue -> the roles that use it (the first owns it).
QUEUES = {
    "ma1": ["model_a", "model_c"],
    "ma2": ["model_a"],
    "mb1": ["model_b", "model_c"],  # dead letters go to mb_dlq
    "mb_dlq": ["model_b", "model_c"],
}
ROLES = ["model_a", "model_b", "model_c"]
# Queues with insert notifications: pgmq's trigger sees plain-SQL rows, which
# reads must then find at once.
NOTIFIED = {"ma2"}
DEFAULT_RESCAN_S = 1.0
VERBOSE = False


def admin_connect(dbname=DB):
    return psycopg.connect(dbname=dbname, autocommit=True)


def setup(conn):
    conn.execute("CREATE EXTENSION pgmq CASCADE")
    for role in ROLES:
        conn.execute(f"DROP ROLE IF EXISTS {role}")
        conn.execute(f"CREATE ROLE {role} LOGIN")
    conn.execute("GRANT USAGE, CREATE ON SCHEMA pgmq TO model_a, model_b")
    conn.execute("GRANT SELECT, INSERT, DELETE ON pgmq.meta TO model_a, model_b")
    for queue, (owner, *users) in QUEUES.items():
        conn.execute(f"SET ROLE {owner}")
        conn.execute("SELECT pgmq.create(%s)", (queue,))
        conn.execute("RESET ROLE")
        for user in users:
            conn.execute("SELECT pgmq.grant_queue_access(%s, %s)", (queue, user))
    for queue in NOTIFIED:
        conn.execute("SELECT pgmq.enable_notify_insert(%s)", (queue,))
    # The trigger reads and stamps the queue's throttle row as the sender.
    conn.execute(f"GRANT SELECT, UPDATE ON pgmq.notify_insert_throttle TO {', '.join(ROLES)}")
    conn.execute("SET ROLE model_b")
    conn.execute("SELECT pgmq.set_dead_letter_queue('mb1', 'mb_dlq', %s)", (MAX_DELIVERIES,))
    conn.execute("RESET ROLE")


class Model:
    """What the sessions did that the check needs: the plain-SQL writes and
    their commit times, and counters for the report."""

    def __init__(self):
        self.lock = threading.Lock()
        self.plain_commits = []  # (queue, msg_id, commit time)
        self.counts = {}
        self.errors = []

    def count(self, what, n=1):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n


class Session:
    """One connection as one role, running random transactions."""

    def __init__(self, number, role, model, rnd, prepared_ok):
        self.number = number
        self.role = role
        self.model = model
        self.rnd = rnd
        self.prepared_ok = prepared_ok
        self.queues = [q for q, roles in QUEUES.items() if role in roles]
        self.conn = psycopg.connect(dbname=DB, user=role, autocommit=True)
        # Plain-SQL writes need the owner's rights: done by the admin session.
        self.admin = admin_connect()
        self.prepared = 0
        self.notifies = False  # the transaction inserted into a NOTIFIED queue: cannot be prepared
        self.plain_sql = True  # only into NOTIFIED while no rescan would find plain-SQL rows

    def set_intervals(self, refresh, rescan):
        for c in (self.conn, self.admin):
            c.execute(f"SET pgmq.queue_head_refresh_interval = '{refresh}'")
            c.execute(f"SET pgmq.queue_head_rescan_interval = '{rescan}'")

    def close(self):
        self.conn.close()
        self.admin.close()

    def run(self, until):
        try:
            while time.monotonic() < until:
                if self.rnd.random() < 0.15:
                    self.plain_write()
                else:
                    self.transaction()
        except Exception as e:  # reported by the main thread
            self.model.errors.append(f"session {self.number} ({self.role}): {type(e).__name__}: {e}")

    def op(self, read_ids):
        """One random pgmq call inside the current transaction. Consumers
        outpace producers, so queues stay short and heads keep moving."""
        rnd, c = self.rnd, self.conn
        q = rnd.choice(self.queues)
        self.notifies = self.notifies or q in NOTIFIED
        kind = rnd.choices(["send", "batch", "read", "read+delete", "pop", "delete", "archive", "set_vt",
                            "unarchive", "move", "read+unarchive", "read+move in", "read+plain insert"],
                           [3, 1, 2, 4, 3, 1, 2, 1, 1, 1, 2, 1, 1])[0]
        # Short delays and leases: they end within the run, never hold a head.
        delay = 0 if rnd.random() < 0.9 else 1
        if kind == "send":
            c.execute("SELECT pgmq.send(%s, '{}', %s)", (q, delay))
        elif kind == "batch":
            c.execute("SELECT * FROM pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[%s]), %s)",
                      (q, rnd.randint(1, 3), delay))
        elif kind in ("read", "read+delete"):
            vt = 0 if rnd.random() < 0.7 else 1
            rows = c.execute("SELECT msg_id FROM pgmq.read(%s, %s, %s)", (q, vt, rnd.randint(1, 4))).fetchall()
            ids = [r[0] for r in rows]
            if kind == "read+delete" and ids:
                c.execute("SELECT pgmq.delete(%s, %s::bigint[])", (q, ids))
            else:
                read_ids.extend((q, i) for i in ids)
        elif kind == "pop":
            c.execute("SELECT * FROM pgmq.pop(%s, %s)", (q, rnd.randint(1, 3)))
        elif kind in ("unarchive", "read+unarchive"):
            # Old ids: visible at once, no rescan needed. Archives are their
            # owner's.
            if QUEUES[q][0] != self.role:
                return
            if kind == "read+unarchive":
                # The read's refresh keeps a raise past the newest archived
                # ids for the commit; the unarchive must void it.
                read_ids.extend((q, r[0]) for r in c.execute("SELECT msg_id FROM pgmq.read(%s, 0, 1)", (q,)))
            order = "" if kind == "unarchive" and rnd.random() < 0.5 else " DESC"
            c.execute(f"SELECT * FROM pgmq.unarchive(%s, ARRAY(SELECT msg_id FROM pgmq.a_{q} ORDER BY msg_id{order} "
                      f"LIMIT %s))", (q, rnd.randint(1, 2)))
        elif kind == "read+plain insert":
            # An archived message put back by hand, in the reading transaction,
            # into a queue whose insert-notification trigger tells the head.
            if q not in NOTIFIED or QUEUES[q][0] != self.role:
                return
            read_ids.extend((q, r[0]) for r in c.execute("SELECT msg_id FROM pgmq.read(%s, 0, 1)", (q,)))
            c.execute(plain_put_back_sql(q, "max"))
        elif kind == "read+move in":
            # New ids in the queue just read: above any raise its read computed.
            source = rnd.choice([t for t in self.queues if t != q])
            read_ids.extend((q, r[0]) for r in c.execute("SELECT msg_id FROM pgmq.read(%s, 0, 1)", (q,)))
            moving = [r[0] for r in c.execute("SELECT msg_id FROM pgmq.read(%s, 0, 1)", (source,))]
            if moving:
                c.execute("SELECT * FROM pgmq.move(%s, %s, %s::bigint[])", (source, q, moving))
        elif kind == "move" and read_ids and len(self.queues) > 1:
            rq, rid = rnd.choice(read_ids)
            target = rnd.choice([t for t in self.queues if t != rq])
            self.notifies = self.notifies or target in NOTIFIED
            c.execute("SELECT * FROM pgmq.move(%s, %s, %s::bigint[])", (rq, target, [rid]))
        elif read_ids:
            rq, rid = rnd.choice(read_ids)
            if kind == "delete":
                c.execute("SELECT pgmq.delete(%s, %s::bigint)", (rq, rid))
            elif kind == "archive":
                c.execute("SELECT pgmq.archive(%s, %s::bigint)", (rq, rid))
            else:
                c.execute("SELECT * FROM pgmq.set_vt(%s, %s::bigint, 0)", (rq, rid))
        self.model.count(kind)

    def transaction(self):
        rnd, c = self.rnd, self.conn
        read_ids = []
        if rnd.random() < 0.35:  # autocommit: most consumers' loop
            self.op(read_ids)
            return
        c.execute("BEGIN")
        self.notifies = False
        for _ in range(rnd.randint(1, 4)):
            if rnd.random() < 0.2:
                c.execute("SAVEPOINT s")
                self.op(read_ids)
                if rnd.random() < 0.6:
                    c.execute("ROLLBACK TO SAVEPOINT s")
                    self.model.count("rollback to savepoint")
                else:
                    c.execute("RELEASE SAVEPOINT s")
            else:
                self.op(read_ids)
            time.sleep(rnd.random() * 0.02)  # others commit and read meanwhile
        end = rnd.random()
        if self.prepared_ok and not self.notifies and end < 0.08:
            gid = f"model_{self.number}_{self.prepared}"
            self.prepared += 1
            c.execute(f"PREPARE TRANSACTION '{gid}'")
            time.sleep(rnd.random() * 0.02)
            finish = "COMMIT" if rnd.random() < 0.6 else "ROLLBACK"
            c.execute(f"{finish} PREPARED '{gid}'")
            self.model.count(f"prepared, {finish.lower()}")
        elif end < 0.38:
            c.execute("ROLLBACK")
            self.model.count("rollback")
        else:
            c.execute("COMMIT")
            self.model.count("commit")

    def plain_write(self):
        """Plain SQL into a queue table, not through pgmq: a new row, or an
        archived message put back with its old id (below the head)."""
        rnd, a = self.rnd, self.admin
        q = rnd.choice(self.queues if self.plain_sql else [q for q in self.queues if q in NOTIFIED] or [None])
        if q is None:
            return
        a.execute("BEGIN")
        if rnd.random() < 0.5:
            row = a.execute(f"INSERT INTO pgmq.q_{q} (vt, message) VALUES (now(), '{{}}') RETURNING msg_id").fetchone()
        else:
            row = a.execute(plain_put_back_sql(q, rnd.choice(["min", "max"]))).fetchone()
        time.sleep(rnd.random() * 0.02)
        if rnd.random() < 0.3:
            a.execute("ROLLBACK")
            self.model.count("plain sql, rolled back")
            return
        a.execute("COMMIT")
        if row and q not in NOTIFIED:
            with self.model.lock:
                self.model.plain_commits.append((q, row[0], time.monotonic()))
        self.model.count("plain sql, notified queue" if q in NOTIFIED else "plain sql")


def plain_put_back_sql(queue, which):
    """The oldest (min) or newest (max) archived message of queue back in it
    with its old id, by plain SQL."""
    return (f"WITH back AS (DELETE FROM pgmq.a_{queue} WHERE msg_id = (SELECT {which}(msg_id) FROM pgmq.a_{queue}) "
            f"RETURNING msg_id, message, headers) INSERT INTO pgmq.q_{queue} (msg_id, vt, message, headers) "
            f"OVERRIDING SYSTEM VALUE SELECT msg_id, now(), message, headers FROM back RETURNING msg_id")


def visible(admin, queue, dead_letters):
    """What plain SQL says a read must return (visible messages; with
    dead_letters, those below the delivery limit: the others are moved), and
    what it may also return (messages whose lease or delay ends within 2 s)."""
    limit = f" AND read_ct < {MAX_DELIVERIES}" if dead_letters else ""
    rows = admin.execute(f"SELECT msg_id, vt <= now() FROM pgmq.q_{queue} "
                         f"WHERE vt <= now() + interval '2 s'{limit}").fetchall()
    return {i for i, sure in rows if sure}, {i for i, sure in rows if not sure}


def check(checker, admin, model, rescan_s, label):
    """Compares what reads return with plain SQL, at a quiet point. Returns
    the failures, and whether some plain-SQL row may still be missing."""
    failures = []
    now = time.monotonic()
    with model.lock:
        slack = rescan_s + 0.25 if rescan_s > 0 else 0
        recent = {(q, i) for q, i, t in model.plain_commits if now - t < slack}
    pending = False
    time.sleep(0.01)  # vt = clock_timestamp() of a read with vt 0 is in the past
    for queue in QUEUES:
        calls = {
            "read": f"SELECT msg_id FROM pgmq.read('{queue}', 0, 100000)",
            "pop": f"SELECT msg_id FROM pgmq.pop('{queue}', 100000)",
            "read_with_poll": f"SELECT msg_id FROM pgmq.read_with_poll('{queue}', 0, 100000, 1, 10)",
        }
        for name, sql in calls.items():
            # pop has no dead-letter move.
            expected_here, maybe = visible(admin, queue, queue == "mb1" and name != "pop")
            if name == "read_with_poll" and not expected_here:
                continue  # it would wait its whole second
            checker.execute("BEGIN")
            got = {r[0] for r in checker.execute(sql).fetchall()}
            checker.execute("ROLLBACK")
            missing = expected_here - got
            if VERBOSE:
                print(f"{TAG} {label} {name}({queue}): expected {len(expected_here)}, got {len(got)}, "
                      f"missing {sorted(missing)[:5]}", flush=True)
            allowed = {i for i in missing if (queue, i) in recent}
            pending = pending or bool(allowed)
            if missing - allowed:
                failures.append(f"{label}: {name}('{queue}') missed {len(missing - allowed)} visible messages "
                                f"(ids {sorted(missing - allowed)[:8]}; returned {len(got)} of {len(expected_here)})")
            if got - expected_here - maybe:
                failures.append(f"{label}: {name}('{queue}') returned messages plain SQL does not see: "
                                f"{sorted(got - expected_here - maybe)[:8]}")
    return failures, pending


def run_phase(label, refresh, rescan, rescan_s, seconds, sessions, model, checker, admin):
    for s in sessions:
        s.set_intervals(refresh, rescan)
        s.plain_sql = rescan_s is not None
    rescan_s = rescan_s or 0.0
    checker.execute(f"SET pgmq.queue_head_refresh_interval = '{refresh}'")
    checker.execute(f"SET pgmq.queue_head_rescan_interval = '{rescan}'")
    failures, checks = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end and not failures:
        until = min(end, time.monotonic() + sessions[0].rnd.uniform(1.0, 3.0))
        threads = [threading.Thread(target=s.run, args=(until,)) for s in sessions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if model.errors:
            failures += model.errors
            break
        found, pending = check(checker, admin, model, rescan_s, label)
        checks += 1
        failures += found
        if pending and not found:
            # The plain-SQL rows a rescan had not reached yet: after one
            # interval every read must return them.
            time.sleep(rescan_s + 0.3)
            found, _ = check(checker, admin, model, -1.0, label + " after a rescan interval")
            checks += 1
            failures += found
    return failures, checks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("PGMQ_HEAD_MODEL_SECONDS", 60)))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"{TAG} seed {seed} (replay: --seed {seed}), {args.seconds:g} s, {args.sessions} sessions", flush=True)
    with admin_connect("postgres") as admin:
        if "pgmq" not in admin.execute("SHOW shared_preload_libraries").fetchone()[0]:
            print(f"{TAG} skipped: pgmq is not preloaded, reads have no head")
            return 0
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB}")
    try:
        return run(args, seed)
    finally:
        with admin_connect("postgres") as admin:
            for (gid,) in admin.execute("SELECT gid FROM pg_prepared_xacts WHERE database = %s", (DB,)).fetchall():
                admin.execute(f"ROLLBACK PREPARED '{gid}'")
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            for role in ROLES:
                admin.execute(f"DROP ROLE IF EXISTS {role}")


def run(args, seed):
    rnd = random.Random(seed)
    with admin_connect() as admin:
        setup(admin)
        prepared_ok = int(admin.execute("SHOW max_prepared_transactions").fetchone()[0]) >= args.sessions
    if not prepared_ok:
        print(f"{TAG} note: max_prepared_transactions < {args.sessions}: no prepared transactions")
    model = Model()
    sessions = [Session(i, ROLES[i % len(ROLES)], model, random.Random(rnd.random()), prepared_ok)
                for i in range(args.sessions)]
    failures, checks = [], 0
    with admin_connect() as admin, psycopg.connect(dbname=DB, autocommit=True) as checker:
        # rescan_s None: no rescan, no plain SQL (a wrong head stays wrong).
        for label, refresh, rescan, rescan_s in (("intervals 0", "0", "0", 0.0),
                                                  ("no rescans", "0", "1h", None),
                                                  ("default intervals", "20ms", "1s", DEFAULT_RESCAN_S)):
            found, n = run_phase(label, refresh, rescan, rescan_s, args.seconds / 3, sessions, model, checker, admin)
            failures += found
            checks += n
            if failures:
                break
    for s in sessions:
        s.close()
    print(f"{TAG} {checks} quiet-point checks; operations: "
          + ", ".join(f"{k} {v}" for k, v in sorted(model.counts.items())))
    for f in failures[:10]:
        print(f"{TAG} FAIL: {f}")
    if failures:
        print(f"{TAG} failed with seed {seed}")
        return 1
    print(f"{TAG} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
