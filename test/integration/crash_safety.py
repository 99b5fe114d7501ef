#!/usr/bin/env python3
"""test/integration/crash_safety.py: kill -9 the server under load, restart,
and check from the clients' own logs that no acknowledged message was lost
or duplicated.

It starts a cluster of its own (a private data directory and socket, port
PGMQ_CRASH_PORT or 5436, configured like the Docker image by including
docker/postgresql.conf) with the installed pgmq, and runs PGMQ_CRASH_ROUNDS
(default 5) rounds of:

  1. concurrent clients on two logged queues, one plain and one partitioned
     (pg_partman): producers calling send and send_batch, consumers doing
     read + delete, read + archive in a transaction, and pop; and on an
     unlogged queue, a producer and an archiving consumer. Every client logs
     what the server acknowledged (a call that returned, a COMMIT that
     returned) and what was in flight when its connection died ("in doubt");
  2. SIGKILL to the postmaster and then to every server process, mid-run;
  3. a restart (crash recovery), then the checks below.

For each logged queue, against the logs of all rounds so far:
  - every acknowledged send is present exactly once, in the queue or in the
    archive, unless it was acknowledged deleted or popped (or a removal of
    it was in doubt, or an in-doubt pop can account for it);
  - every acknowledged archive is in the archive and not in the queue;
    every acknowledged delete and pop is in neither;
  - no message is in both tables, no msg_id or payload key appears twice,
    every stored message was sent by a client, and nothing is in the
    archive that nobody archived;
  - a send after the restart gets an id above every id ever seen.
For the unlogged queue: its table is empty after each crash, as documented;
its archive holds exactly the acknowledged archives (plus in-doubt ones),
intact; a send continues above the old ids and can be archived.

Runs as root (the server then runs as the postgres OS user) or as postgres.
Exit 0 when every check held.
"""
import os
import pwd
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from orphans import become_subreaper, children_of, reap_children  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG_BIN = os.environ.get("PGMQ_PG_BIN", "/usr/lib/postgresql/%s/bin" % os.environ.get("PG_MAJOR", "15"))
PORT = int(os.environ.get("PGMQ_CRASH_PORT", "5436"))
ROUNDS = int(os.environ.get("PGMQ_CRASH_ROUNDS", "5"))
DBNAME = "crash"
LOGGED_QUEUES = ("plain", "parted")
UNLOGGED_QUEUE = "scratch"


# --- the cluster ---------------------------------------------------------------

class Cluster:
    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="pgmq-crash.", dir="/tmp")
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

    def run(self, *args, check=True):
        command = list(args)
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--"] + command
        return subprocess.run(command, cwd="/", check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)

    def init(self):
        self.run(os.path.join(PG_BIN, "initdb"), "--auth=trust", "-U", "postgres", "--encoding=UTF8",
                 "--locale=C", "-D", self.data)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\ninclude '%s/docker/postgresql.conf'\n" % REPO)
            f.write("listen_addresses = ''\nport = %d\nunix_socket_directories = '%s'\n" % (PORT, self.socket))

    def start(self):
        result = self.run(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-t", "120",
                          "start", check=False)
        if result.returncode != 0:
            raise RuntimeError("server did not start:\n%s\n%s" % (result.stdout, self.tail()))

    def stop(self):
        self.run(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop", check=False)

    def postmaster_pid(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def kill(self):
        """SIGKILL to the postmaster, then to every process it started: a crash."""
        postmaster = self.postmaster_pid()
        children = children_of(postmaster)
        os.kill(postmaster, signal.SIGKILL)
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # Wait until they are gone, reaping those reparented to us: an unreaped
        # zombie still "exists" for kill(pid, 0), and the restarted postmaster
        # would take it for a running server that holds the data directory.
        deadline = time.monotonic() + 30
        for pid in [postmaster] + children:
            while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
                reap_children()
                time.sleep(0.05)
        return len(children)

    def connect(self, dbname=DBNAME, autocommit=True):
        return psycopg.connect(host=self.socket, port=PORT, user="postgres", dbname=dbname, autocommit=autocommit,
                               connect_timeout=10)

    def tail(self, lines=30):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def remove(self):
        shutil.rmtree(self.base, ignore_errors=True)


# --- what the clients know -------------------------------------------------------

class QueueLog:
    """What clients were told about one queue, over all rounds."""

    def __init__(self, name):
        self.name = name
        self.lock = threading.Lock()
        self.sent = {}             # key -> msg_id, acknowledged
        self.sent_doubt = set()    # keys whose send was in flight at a crash
        self.removed = {}          # msg_id -> "deleted" | "archived", acknowledged
        self.removed_doubt = {}    # msg_id -> "deleted" | "archived", in flight at a crash
        self.pop_doubt = 0         # messages an in-flight pop may have taken, ids unknown
        self.max_id = 0

    def acked_send(self, keys, ids):
        with self.lock:
            for key, msg_id in zip(keys, ids):
                self.sent[key] = msg_id
                self.max_id = max(self.max_id, msg_id)

    def doubt_send(self, keys):
        with self.lock:
            self.sent_doubt.update(keys)

    def acked_removal(self, ids, how):
        with self.lock:
            for msg_id in ids:
                self.removed[msg_id] = how
                self.removed_doubt.pop(msg_id, None)

    def doubt_removal(self, ids, how):
        with self.lock:
            for msg_id in ids:
                if msg_id not in self.removed:
                    self.removed_doubt[msg_id] = how


# --- clients ------------------------------------------------------------------

class Round:
    def __init__(self, cluster, number, logs):
        self.cluster = cluster
        self.number = number
        self.logs = logs
        self.stop = threading.Event()
        self.unexpected = []

    def key(self, worker, seq):
        return "r%d-%s-%d" % (self.number, worker, seq)

    def client(self, worker, body):
        """Runs body(conn) until the server goes away; any other failure is a finding."""
        try:
            conn = self.cluster.connect()
        except psycopg.Error as e:
            if not self.stop.is_set():  # after the kill, refusal is expected
                self.unexpected.append("%s: could not connect: %s" % (worker, e))
            return
        try:
            body(conn)
        except psycopg.OperationalError:
            pass  # the crash: expected
        except psycopg.Error as e:
            if not self.stop.is_set() or e.sqlstate not in (None, "57P01", "57P02", "57P03"):
                self.unexpected.append("%s: %s %s" % (worker, e.sqlstate, e))
        finally:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def producer(self, log, worker, batch):
        def body(conn):
            seq = 0
            rng = random.Random(worker)
            while not self.stop.is_set():
                n = rng.randint(2, 20) if batch else 1
                keys = [self.key(worker, seq + i) for i in range(n)]
                seq += n
                payloads = ['{"k": "%s"}' % k for k in keys]
                try:
                    if batch:
                        ids = [r[0] for r in conn.execute("SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])",
                                                          (log.name, payloads)).fetchall()]
                    else:
                        ids = [r[0] for r in conn.execute("SELECT * FROM pgmq.send(%s, %s::jsonb)",
                                                          (log.name, payloads[0])).fetchall()]
                except psycopg.Error:
                    log.doubt_send(keys)
                    raise
                log.acked_send(keys, ids)
        self.client(worker, body)

    def deleter(self, log, worker):
        """read, then delete one by one or as a batch, in autocommit."""
        def body(conn):
            rng = random.Random(worker)
            while not self.stop.is_set():
                ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 600, 5)", (log.name,))]
                if not ids:
                    time.sleep(0.01)
                    continue
                if rng.random() < 0.5:
                    for msg_id in ids:
                        try:
                            done = conn.execute("SELECT pgmq.delete(%s, %s::bigint)", (log.name, msg_id)).fetchone()[0]
                        except psycopg.Error:
                            log.doubt_removal([msg_id], "deleted")
                            raise
                        if not done:
                            self.unexpected.append("%s: delete(%d) of a message it had read returned false"
                                                   % (worker, msg_id))
                        log.acked_removal([msg_id], "deleted")
                else:
                    try:
                        done = [r[0] for r in conn.execute("SELECT * FROM pgmq.delete(%s, %s::bigint[])",
                                                           (log.name, ids))]
                    except psycopg.Error:
                        log.doubt_removal(ids, "deleted")
                        raise
                    if sorted(done) != sorted(ids):
                        self.unexpected.append("%s: delete(%r) returned %r" % (worker, ids, done))
                    log.acked_removal(done, "deleted")
        self.client(worker, body)

    def archiver(self, log, worker):
        """BEGIN; read; archive what was read; COMMIT. Acknowledged only by COMMIT."""
        def body(conn):
            while not self.stop.is_set():
                archived = []
                try:
                    with conn.transaction():
                        ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 600, 5)", (log.name,))]
                        if ids:
                            archived = [r[0] for r in conn.execute("SELECT * FROM pgmq.archive(%s, %s::bigint[])",
                                                                   (log.name, ids))]
                            if sorted(archived) != sorted(ids):
                                self.unexpected.append("%s: archive(%r) returned %r" % (worker, ids, archived))
                except psycopg.Error:
                    log.doubt_removal(archived, "archived")
                    raise
                if archived:
                    log.acked_removal(archived, "archived")
                else:
                    time.sleep(0.01)
        self.client(worker, body)

    def popper(self, log, worker):
        def body(conn):
            while not self.stop.is_set():
                try:
                    ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.pop(%s, 3)", (log.name,))]
                except psycopg.Error:
                    with log.lock:
                        log.pop_doubt += 3
                    raise
                if ids:
                    log.acked_removal(ids, "deleted")
                else:
                    time.sleep(0.01)
        self.client(worker, body)

    def run(self, load_seconds):
        threads = []
        for name in LOGGED_QUEUES:
            log = self.logs[name]
            threads += [
                threading.Thread(target=self.producer, args=(log, name + "-send", False)),
                threading.Thread(target=self.producer, args=(log, name + "-batch", True)),
                threading.Thread(target=self.deleter, args=(log, name + "-delete")),
                threading.Thread(target=self.archiver, args=(log, name + "-archive")),
                threading.Thread(target=self.popper, args=(log, name + "-pop")),
            ]
        log = self.logs[UNLOGGED_QUEUE]
        threads += [
            threading.Thread(target=self.producer, args=(log, UNLOGGED_QUEUE + "-batch", True)),
            threading.Thread(target=self.archiver, args=(log, UNLOGGED_QUEUE + "-archive")),
        ]
        for t in threads:
            t.start()
        time.sleep(load_seconds)
        killed = self.cluster.kill()
        self.stop.set()
        for t in threads:
            t.join(60)
        return killed


# --- checks ----------------------------------------------------------------------

def rows(conn, table):
    return conn.execute("SELECT msg_id, message->>'k' FROM pgmq.%s" % table).fetchall()


def check_logged(conn, log):
    """Returns (problems, messages checked)."""
    problems = []
    q, a = rows(conn, "q_" + log.name), rows(conn, "a_" + log.name)
    q_ids, a_ids = [r[0] for r in q], [r[0] for r in a]
    if len(set(q_ids)) != len(q_ids):
        problems.append("duplicate msg_ids in the queue")
    if len(set(a_ids)) != len(a_ids):
        problems.append("duplicate msg_ids in the archive")
    both = set(q_ids) & set(a_ids)
    if both:
        problems.append("%d messages in both queue and archive, e.g. %r" % (len(both), sorted(both)[:5]))
    keys = [r[1] for r in q + a]
    if len(set(keys)) != len(keys):
        problems.append("a payload key stored twice")
    unknown = [r for r in q + a if r[1] not in log.sent and r[1] not in log.sent_doubt]
    if unknown:
        problems.append("%d stored messages no client sent, e.g. %r" % (len(unknown), unknown[:3]))
    wrong_id = [r for r in q + a if r[1] in log.sent and log.sent[r[1]] != r[0]]
    if wrong_id:
        problems.append("%d messages under another msg_id than acknowledged, e.g. %r" % (len(wrong_id), wrong_id[:3]))
    in_q, in_a = set(q_ids), set(a_ids)
    missing = 0
    for key, msg_id in log.sent.items():
        how = log.removed.get(msg_id)
        if how == "deleted":
            if msg_id in in_q or msg_id in in_a:
                problems.append("msg %d acknowledged deleted, still stored" % msg_id)
        elif how == "archived":
            if msg_id not in in_a or msg_id in in_q:
                problems.append("msg %d acknowledged archived, not (only) in the archive" % msg_id)
        elif msg_id not in in_q and msg_id not in in_a and msg_id not in log.removed_doubt:
            missing += 1
    if missing > log.pop_doubt:
        problems.append("%d acknowledged messages missing, in-doubt pops account for at most %d"
                        % (missing, log.pop_doubt))
    archived_by_nobody = [i for i in in_a if log.removed.get(i) != "archived" and log.removed_doubt.get(i) != "archived"]
    if archived_by_nobody:
        problems.append("%d archived messages nobody archived, e.g. %r" % (len(archived_by_nobody),
                                                                        archived_by_nobody[:5]))
    problems += check_next_id(conn, log, q_ids + a_ids)
    return problems, len(log.sent) + len(log.sent_doubt)


def check_next_id(conn, log, stored_ids):
    highest = max([log.max_id] + stored_ids + list(log.removed) + list(log.removed_doubt))
    key = "probe-%d" % highest
    msg_id = conn.execute("SELECT * FROM pgmq.send(%s, %s::jsonb)", (log.name, '{"k": "%s"}' % key)).fetchone()[0]
    log.acked_send([key], [msg_id])
    if msg_id <= highest:
        return ["a send after the restart got msg_id %d, not above %d" % (msg_id, highest)]
    return []


def check_unlogged(conn, log):
    problems = []
    q, a = rows(conn, "q_" + log.name), rows(conn, "a_" + log.name)
    if q:
        problems.append("unlogged queue holds %d messages after the crash" % len(q))
    a_ids = {r[0] for r in a}
    if len(a_ids) != len(a):
        problems.append("duplicate msg_ids in the unlogged queue's archive")
    acked = {i for i, how in log.removed.items() if how == "archived"}
    doubt = {i for i, how in log.removed_doubt.items() if how == "archived"}
    if not acked <= a_ids:
        problems.append("%d acknowledged archives missing from the archive" % len(acked - a_ids))
    if not a_ids <= acked | doubt:
        problems.append("%d archived messages nobody archived" % len(a_ids - acked - doubt))
    if any(r[1] not in log.sent and r[1] not in log.sent_doubt for r in a):
        problems.append("the archive holds a message no client sent")
    wrong = [r for r in a if r[1] in log.sent and log.sent[r[1]] != r[0]]
    if wrong:
        problems.append("%d archived messages under another msg_id, e.g. %r" % (len(wrong), wrong[:3]))
    # Messages of the lost table are gone for good: forget them.
    lost = [k for k, i in log.sent.items() if i not in a_ids]
    for k in lost:
        del log.sent[k]
    problems += check_next_id(conn, log, list(a_ids))
    probe = max(i for i in log.sent.values())
    try:
        if not conn.execute("SELECT pgmq.archive(%s, %s::bigint)", (log.name, probe)).fetchone()[0]:
            problems.append("could not archive the probe message %d" % probe)
        log.acked_removal([probe], "archived")
    except psycopg.Error as e:
        problems.append("archiving a new message after the crash failed: %s %s" % (e.sqlstate, e))
    return problems, len(a)


# --- main ------------------------------------------------------------------------

def setup(cluster):
    with cluster.connect(dbname="postgres") as conn:
        conn.execute("CREATE DATABASE %s" % DBNAME)
    with cluster.connect() as conn:
        conn.execute("SET client_min_messages = warning")
        conn.execute("CREATE SCHEMA partman")
        conn.execute("CREATE EXTENSION pg_partman SCHEMA partman")
        conn.execute("CREATE EXTENSION pgmq")
        conn.execute("SELECT pgmq.create('plain')")
        conn.execute("SELECT pgmq.create_partitioned('parted', '10000', '10000000')")
        conn.execute("SELECT pgmq.create_unlogged(%s)", (UNLOGGED_QUEUE,))


def main():
    become_subreaper()
    cluster = Cluster()
    logs = {name: QueueLog(name) for name in LOGGED_QUEUES + (UNLOGGED_QUEUE,)}
    failures = []
    checked = 0
    started = time.monotonic()
    rng = random.Random(os.environ.get("PGMQ_CRASH_SEED", "pgmq"))
    try:
        cluster.init()
        cluster.start()
        setup(cluster)
        for number in range(1, ROUNDS + 1):
            load = rng.uniform(1.5, 3.5)
            rnd = Round(cluster, number, logs)
            killed = rnd.run(load)
            cluster.start()
            round_problems = ["round %d: %s" % (number, u) for u in rnd.unexpected]
            with cluster.connect() as conn:
                for name in LOGGED_QUEUES:
                    problems, n = check_logged(conn, logs[name])
                    round_problems += ["round %d, queue %s: %s" % (number, name, p) for p in problems]
                    checked += n
                problems, n = check_unlogged(conn, logs[UNLOGGED_QUEUE])
                round_problems += ["round %d, unlogged queue: %s" % (number, p) for p in problems]
            summary = ", ".join(
                "%s: %d sent (%d in doubt), %d removed (%d in doubt)" % (
                    name, len(logs[name].sent), len(logs[name].sent_doubt), len(logs[name].removed),
                    len(logs[name].removed_doubt)) for name in LOGGED_QUEUES)
            print("round %d: killed the postmaster and %d server processes after %.1f s of load; %s"
                  % (number, killed, load, summary), flush=True)
            for p in round_problems:
                print("FAIL: " + p, flush=True)
            failures += round_problems
    except Exception as e:  # noqa: BLE001 - report, then clean up
        failures.append("%s: %s" % (type(e).__name__, e))
        print("FAIL: %s\nserver log:\n%s" % (failures[-1], cluster.tail()), flush=True)
    finally:
        cluster.stop()
        cluster.remove()
    distinct = sum(len(logs[n].sent) + len(logs[n].sent_doubt) for n in LOGGED_QUEUES)
    print("%d crash rounds survived; %d messages sent to the logged queues, each checked after every later crash "
          "(%d message checks in all), %.0f s" % (ROUNDS, distinct, checked, time.monotonic() - started))
    if failures:
        print("%d checks failed" % len(failures))
        return 1
    print("every acknowledged message survived exactly once; ids never repeat")
    return 0


if __name__ == "__main__":
    sys.exit(main())
