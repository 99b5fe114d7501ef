#!/usr/bin/python3
"""test/integration/poll_wakeup.py: who a committed send wakes, and how often
a woken read_with_poll reads again. Needs pgmq in shared_preload_libraries
(as docker/postgresql.conf has it).

  - databases: a send in one database does not wake a waiter on the
    same-named queue of another database; a send in its own database does;
  - pacing: a waiter whose `conditional` never matches reads at most about
    once per poll_interval_ms while non-matching messages keep arriving, and a
    matching one is still returned without waiting for the deadline;
  - resume: a read_with_poll waiting on a paused queue that holds a message
    returns it when pgmq.resume commits (median of 5 within 10 ms of the
    commit, every one long before its 60 s poll interval);
  - move and unarchive: a message moved into the waiter's queue, or put
    back there from its archive, wakes it;
  - read_multi_with_poll: a send to any of its queues wakes it, also when it
    waits on more queues (nine) than a backend's wait slot names (eight);
  - two-phase commit: COMMIT PREPARED of a transaction that sent wakes the
    waiter; ROLLBACK PREPARED does not. PREPARE TRANSACTION needs
    max_prepared_transactions > 0, which the image's configuration leaves at
    PostgreSQL's 0, so this part runs on a small cluster of its own, made with
    the binaries of the server under test (the postgres executable of one of
    its backends) and docker/postgresql.conf plus max_prepared_transactions.

The observable for "how often it read" is the waiting transaction's own scan
count of the queue table (pg_stat_xact_user_tables: one index scan per
attempt on an empty queue, or one on a queue whose messages do not match),
read in the same transaction right after read_with_poll returns.

Runs against PGHOST/PGPORT/PGUSER; exit 0 is a pass.
"""
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DB_A = "pgmq_it_wake_a"
DB_B = "pgmq_it_wake_b"
PRIVATE_PORT = int(os.environ.get("PGMQ_WAKE_PORT", "5437"))

failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"[poll_wakeup] {'ok' if ok else 'FAIL'}: {what}{' (' + detail + ')' if detail and not ok else ''}")
    if not ok:
        failures += 1


def admin(sql, **connect):
    with psycopg.connect(dbname="postgres", autocommit=True, **connect) as conn:
        conn.execute(sql)


def wait_until_waiting(conn, pid, timeout=5.0):
    """Returns once backend pid sleeps on its latch inside a statement."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = conn.execute("SELECT state = 'active' AND wait_event_type = 'Extension'"
                           " FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        if row and row[0]:
            return True
        time.sleep(0.005)
    return False


class Waiter:
    """A connection that runs one read_with_poll in a transaction of its own,
    in a thread, and counts the scans (attempts) it made of the queue table."""

    def __init__(self, **connect):
        self.conn = psycopg.connect(autocommit=True, **connect)
        # Reads move the queue's head with scans of their own (head_hint.hpp);
        # not in this connection, whose scans count its read attempts.
        self.conn.execute("SET pgmq.queue_head = off")
        self.pid = self.conn.execute("SELECT pg_backend_pid()").fetchone()[0]

    def scans(self, queue):
        row = self.conn.execute("SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)"
                                " FROM pg_stat_xact_user_tables"
                                " WHERE schemaname = 'pgmq' AND relname = %s", ("q_" + queue,)).fetchone()
        return int(row[0])

    def start(self, queue, max_poll_seconds, poll_interval_ms, conditional="{}"):
        self.result = {}

        def run():
            try:
                self.conn.execute("BEGIN")
                # Warm up (plan preparation scans too), then count one call.
                self.conn.execute("SELECT pgmq.read(%s, 0, 0)", (queue,))
                before = self.scans(queue)
                started = time.monotonic()
                rows = self.conn.execute(
                    "SELECT msg_id, message FROM pgmq.read_with_poll(%s, 30, 1, %s, %s, %s::jsonb)",
                    (queue, max_poll_seconds, poll_interval_ms, conditional)).fetchall()
                self.result["at"] = time.monotonic()
                self.result["elapsed"] = self.result["at"] - started
                self.result["rows"] = rows
                self.result["attempts"] = self.scans(queue) - before
                self.conn.execute("COMMIT")
            except Exception as e:  # reported by the caller
                self.result["error"] = e
        self.thread = threading.Thread(target=run)
        self.thread.start()

    def join(self):
        self.thread.join()
        if "error" in self.result:
            raise self.result["error"]
        return self.result

    def close(self):
        self.conn.close()


def send(conn, queue, message='{"n": 1}'):
    conn.execute("SELECT pgmq.send(%s, %s::jsonb)", (queue, message))
    return time.monotonic()


def test_databases():
    for db in (DB_A, DB_B):
        admin(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        admin(f"CREATE DATABASE {db}")
        with psycopg.connect(dbname=db, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pgmq")
            conn.execute("SELECT pgmq.create('same')")
    waiter = Waiter(dbname=DB_A)
    monitor = psycopg.connect(dbname="postgres", autocommit=True)
    sender_b = psycopg.connect(dbname=DB_B, autocommit=True)
    sender_a = psycopg.connect(dbname=DB_A, autocommit=True)
    try:
        # Interval of a minute, deadline 2 s: unwoken, it reads at the start and at the deadline.
        waiter.start("same", 2, 60000)
        check("the waiter waits", wait_until_waiting(monitor, waiter.pid))
        for _ in range(5):
            send(sender_b, "same")
            time.sleep(0.1)
        result = waiter.join()
        # 2 attempts unwoken. Each of the 5 sends woke it before the fix (7);
        # with the hold-off after a fruitless wake-up, one wrong wake-up
        # would still show as 3.
        check("sends to the same-named queue of another database do not wake the waiter",
              result["attempts"] == 2 and not result["rows"],
              f"{result['attempts']} attempts (2 = unwoken), rows {result['rows']}")

        waiter.start("same", 10, 60000)
        check("the waiter waits again", wait_until_waiting(monitor, waiter.pid))
        sent = send(sender_a, "same")
        result = waiter.join()
        check("a send in the waiter's own database wakes it",
              len(result["rows"]) == 1 and result["at"] - sent < 3,
              f"rows {result['rows']}, returned {result['at'] - sent:.2f} s after the commit")
    finally:
        for conn in (sender_a, sender_b, monitor):
            conn.close()
        waiter.close()


def test_resume():
    with psycopg.connect(dbname=DB_A, autocommit=True) as conn:
        conn.execute("SELECT pgmq.create('held')")
    waiter = Waiter(dbname=DB_A)
    monitor = psycopg.connect(dbname="postgres", autocommit=True)
    owner = psycopg.connect(dbname=DB_A, autocommit=True)
    latencies = []
    try:
        for _ in range(5):
            owner.execute("SELECT pgmq.pause('held')")
            send(owner, "held")
            # A minute between reads: only a wake-up returns it early.
            waiter.start("held", 10, 60000)
            waiting = wait_until_waiting(monitor, waiter.pid)
            time.sleep(0.2)
            still_waiting = not waiter.result
            owner.execute("SELECT pgmq.resume('held')")
            resumed = time.monotonic()
            result = waiter.join()
            if not (waiting and still_waiting and len(result["rows"]) == 1):
                check("a paused queue holds its waiter back until resume",
                      False, f"waiting {waiting}, still waiting {still_waiting}, rows {result['rows']}")
            latencies.append(result["at"] - resumed)
        latencies.sort()
        # Unwoken, a waiter would return at its 10 s deadline (a minute between
        # reads): a second is a wake-up on any machine, however loaded.
        check("a waiter on a paused queue returns its message when resume commits",
              latencies[-1] < 1.0,
              "after the commit: " + ", ".join(f"{x * 1000:.1f} ms" for x in latencies))
        print("[poll_wakeup] resume to returned message: median %.1f ms, max %.1f ms"
              % (latencies[2] * 1000, latencies[-1] * 1000))
    finally:
        for conn in (owner, monitor):
            conn.close()
        waiter.close()


def test_move_unarchive():
    with psycopg.connect(dbname=DB_A, autocommit=True) as conn:
        conn.execute("SELECT pgmq.create('moved_from')")
        conn.execute("SELECT pgmq.create('moved_to')")
    waiter = Waiter(dbname=DB_A)
    monitor = psycopg.connect(dbname="postgres", autocommit=True)
    mover = psycopg.connect(dbname=DB_A, autocommit=True)
    try:
        for what, sql in (
                ("move", "SELECT pgmq.move('moved_from', 'moved_to', ARRAY[%s::bigint])"),
                ("unarchive", "SELECT pgmq.unarchive('moved_to', ARRAY[%s::bigint])")):
            if what == "move":
                msg_id = mover.execute("SELECT pgmq.send('moved_from', '{}')").fetchone()[0]
            else:
                msg_id = mover.execute("SELECT msg_id FROM pgmq.a_moved_to").fetchone()[0]
            # A minute between reads: only a wake-up returns it early.
            waiter.start("moved_to", 10, 60000)
            waiting = wait_until_waiting(monitor, waiter.pid)
            mover.execute(sql, (msg_id,))
            done = time.monotonic()
            result = waiter.join()
            check(f"{what} into a queue wakes its waiter", waiting and len(result["rows"]) == 1 and
                  result["at"] - done < 3,
                  f"waiting {waiting}, rows {result['rows']}, {result['at'] - done:.2f} s after the commit")
            if what == "move":  # the next round puts it back from the archive
                mover.execute("SELECT pgmq.archive('moved_to', %s::bigint)", (result["rows"][0][0],))
    finally:
        for conn in (mover, monitor):
            conn.close()
        waiter.close()


def test_read_multi():
    queues = ["multi_%d" % i for i in range(9)]
    with psycopg.connect(dbname=DB_A, autocommit=True) as conn:
        for q in queues:
            conn.execute("SELECT pgmq.create(%s)", (q,))
    monitor = psycopg.connect(dbname="postgres", autocommit=True)
    sender = psycopg.connect(dbname=DB_A, autocommit=True)
    reader = psycopg.connect(dbname=DB_A, autocommit=True)
    pid = reader.execute("SELECT pg_backend_pid()").fetchone()[0]
    try:
        for waited_on, sent_to in ((queues[:2], queues[1]), (queues, queues[8])):
            result = {}

            def run():
                started = time.monotonic()
                result["rows"] = reader.execute(
                    "SELECT queue_name FROM pgmq.read_multi_with_poll(%s, 30, 5, 10, 60000)",
                    (waited_on,)).fetchall()
                result["at"] = time.monotonic()
                result["elapsed"] = result["at"] - started
            thread = threading.Thread(target=run)
            thread.start()
            waiting = wait_until_waiting(monitor, pid)
            sent = send(sender, sent_to)
            thread.join()
            check("read_multi_with_poll on %d queues wakes on a send to %s" % (len(waited_on), sent_to),
                  waiting and result["rows"] == [(sent_to,)] and result["at"] - sent < 3,
                  f"waiting {waiting}, rows {result['rows']}, {result['at'] - sent:.2f} s after the commit")
    finally:
        for conn in (sender, reader, monitor):
            conn.close()


def test_pacing():
    with psycopg.connect(dbname=DB_A, autocommit=True) as conn:
        conn.execute("SELECT pgmq.create('cond')")
    waiter = Waiter(dbname=DB_A)
    monitor = psycopg.connect(dbname="postgres", autocommit=True)
    sender = psycopg.connect(dbname=DB_A, autocommit=True)
    try:
        # 3 s with a 1 s interval, while 25 non-matching messages arrive over
        # 2.5 s: a read at the start, one at the first wake-up, then at most one
        # per second and one at the deadline; before the fix, one per send.
        waiter.start("cond", 3, 1000, '{"kind": "wanted"}')
        check("the conditional waiter waits", wait_until_waiting(monitor, waiter.pid))
        for _ in range(25):
            send(sender, "cond", '{"kind": "other"}')
            time.sleep(0.1)
        result = waiter.join()
        check("a waiter whose filter never matches reads about once per interval, not once per send",
              not result["rows"] and 3 <= result["attempts"] <= 6,
              f"{result['attempts']} attempts for 25 sends in 3 s at 1 s intervals, rows {result['rows']}")

        # Woken by a non-matching send, then a matching one arrives while the
        # waiter holds off: it is returned at the next interval, long before
        # the 20 s deadline.
        waiter.start("cond", 20, 1000, '{"kind": "wanted"}')
        check("the conditional waiter waits again", wait_until_waiting(monitor, waiter.pid))
        send(sender, "cond", '{"kind": "other"}')
        time.sleep(0.2)
        sent = send(sender, "cond", '{"kind": "wanted"}')
        result = waiter.join()
        check("a matching message sent while the waiter holds off is returned at the next interval",
              len(result["rows"]) == 1 and result["at"] - sent < 3,
              f"rows {result['rows']}, returned {result['at'] - sent:.2f} s after the commit")

        # A quiet queue, then a matching send: the first wake-up reads at once.
        waiter.start("cond", 20, 60000, '{"kind": "wanted"}')
        check("the conditional waiter waits a third time", wait_until_waiting(monitor, waiter.pid))
        sent = send(sender, "cond", '{"kind": "wanted"}')
        result = waiter.join()
        check("the first wake-up still reads at once",
              len(result["rows"]) == 1 and result["at"] - sent < 3,
              f"rows {result['rows']}, returned {result['at'] - sent:.2f} s after the commit")
    finally:
        sender.close()
        monitor.close()
        waiter.close()


class PrivateCluster:
    """A throwaway cluster with max_prepared_transactions > 0, run by the
    binaries (and so the pgmq) of the server under test."""

    def __init__(self, bindir):
        self.bindir = bindir
        self.base = tempfile.mkdtemp(prefix="pgmq-wake.", dir="/tmp")
        self.data = os.path.join(self.base, "data")
        self.socket = os.path.join(self.base, "socket")
        self.log = os.path.join(self.base, "server.log")
        os.makedirs(self.data)
        os.makedirs(self.socket)
        open(self.log, "a").close()
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            for path in (self.base, self.data, self.socket, self.log):
                os.chown(path, pw.pw_uid, pw.pw_gid)
        os.chmod(self.data, 0o700)

    def run(self, *args):
        command = list(args)
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--"] + command
        return subprocess.run(command, cwd="/", check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)

    def start(self):
        result = self.run(os.path.join(self.bindir, "initdb"), "--auth=trust", "-U", "postgres",
                          "--encoding=UTF8", "--locale=C", "-D", self.data)
        if result.returncode != 0:
            raise RuntimeError("initdb failed:\n" + result.stdout)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\ninclude '%s/docker/postgresql.conf'\n" % REPO)
            f.write("listen_addresses = ''\nport = %d\nunix_socket_directories = '%s'\n"
                    % (PRIVATE_PORT, self.socket))
            f.write("max_prepared_transactions = 4\npgmq.maintenance_interval = 0\n")
        result = self.run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-t", "60",
                          "start")
        if result.returncode != 0:
            with open(self.log, errors="replace") as f:
                raise RuntimeError("server did not start:\n%s\n%s" % (result.stdout, f.read()[-3000:]))

    def connect(self, **kwargs):
        return psycopg.connect(host=self.socket, port=PRIVATE_PORT, user="postgres", dbname="postgres",
                               autocommit=True, **kwargs)

    def stop(self):
        self.run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.base, ignore_errors=True)


def server_bindir():
    """The bin directory of the server under test: that of its backends."""
    with psycopg.connect(dbname="postgres", autocommit=True) as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        return os.path.dirname(os.readlink(f"/proc/{pid}/exe"))


def test_two_phase():
    cluster = PrivateCluster(server_bindir())
    cluster.start()
    try:
        connect = dict(host=cluster.socket, port=PRIVATE_PORT, user="postgres", dbname="postgres")
        with cluster.connect() as conn:
            conn.execute("CREATE EXTENSION pgmq")
            conn.execute("SELECT pgmq.create('tp')")
        waiter = Waiter(**connect)
        monitor = cluster.connect()
        preparer = cluster.connect()
        committer = cluster.connect()
        try:
            waiter.start("tp", 8, 60000)
            check("the waiter waits (2PC)", wait_until_waiting(monitor, waiter.pid))
            preparer.execute("BEGIN")
            send(preparer, "tp")
            preparer.execute("PREPARE TRANSACTION 'pgmq_wake_rollback'")
            committer.execute("ROLLBACK PREPARED 'pgmq_wake_rollback'")
            preparer.execute("BEGIN")
            send(preparer, "tp")
            preparer.execute("PREPARE TRANSACTION 'pgmq_wake_commit'")
            time.sleep(0.5)
            committer.execute("COMMIT PREPARED 'pgmq_wake_commit'")
            committed = time.monotonic()
            result = waiter.join()
            check("COMMIT PREPARED of a transaction that sent wakes the waiter",
                  len(result["rows"]) == 1 and result["at"] - committed < 3,
                  f"rows {result['rows']}, returned {result['at'] - committed:.2f} s after COMMIT PREPARED"
                  " (8 s: not woken)")
            # Waking at PREPARE (the transaction might still roll back) or at
            # ROLLBACK PREPARED would show as more than 3 scans: one by the
            # first attempt, two by the one that claimed the message.
            check("PREPARE and ROLLBACK PREPARED wake nobody", result["attempts"] <= 3,
                  f"{result['attempts']} attempts")
        finally:
            for conn in (committer, preparer, monitor):
                conn.close()
            waiter.close()
    finally:
        cluster.stop()


def main():
    try:
        test_databases()
        test_pacing()
        test_resume()
        test_move_unarchive()
        test_read_multi()
        test_two_phase()
    finally:
        for db in (DB_A, DB_B):
            admin(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    print(f"[poll_wakeup] {'passed' if failures == 0 else f'{failures} failed'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
