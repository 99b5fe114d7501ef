#!/usr/bin/python3
"""test/integration/failover.py: pgmq survives a failover to a streaming
standby, and a point-in-time restore (issue 28).

It makes its own clusters, with the binaries of the server under test
(PGHOST/PGPORT/PGUSER) and docker/postgresql.conf, under /tmp:

  1. a primary and a standby made with pg_basebackup, synchronous
     replication (synchronous_standby_names, synchronous_commit = on), pgmq
     and pg_partman preloaded on both, WAL archived to a directory, and a
     base backup for the point-in-time restore;
  2. clients under load through one connection string naming both servers
     (target_session_attrs=read-write, as an application configures it):
     producers (send, send_batch, committed, in a transaction, rolled back),
     consumers (read + delete, read + archive in a transaction, pop in a
     transaction, read_with_poll + delete), a partitioned queue with a short
     runway (100 ids per partition, 4 premade), a queue with a dead-letter
     policy whose consumer never acknowledges, a queue with a retention
     policy; every client logs what the server acknowledged and what was in
     flight when its connection died;
  3. on the standby, while it is one: metrics, metrics_all (which leaves
     out the unlogged queue), list_queues, partition_status and
     list_policies answer, and so does peek; send, send_batch, read,
     read_with_poll, pop, read_multi, move, unarchive, pause, set_priority,
     delete, archive, set_vt, read_grouped, send_topic, create, drop_queue,
     set_retention and purge_queue fail with SQLSTATE 25006, on logged and
     unlogged queues alike, and the session goes on; no pgmq maintenance
     launcher runs and the standby logs no error or warning;
  4. SIGKILL to the primary and its processes, `pg_ctl promote` of the
     standby; the clients reconnect. Then on the new primary: every
     acknowledged send is there, every acknowledged delete, pop and archive
     stays done, nothing rolled back appears, no message twice ("lost: 0");
     the clients' reads resume within seconds; ids continue above every id
     handed out; the unlogged queue is there, empty; a waiting
     read_with_poll wakes on a send long before its poll interval; LISTEN
     gets the insert notification, and the throttle's interval (an unlogged
     table) is gone until set again; pgmq's maintenance
     worker starts, premakes the partitioned queue's partitions and applies
     retention; the dead-letter policy moves a message; and reads drain
     every queue (no message hidden: the queue heads start empty there);
  5. a copy of the base backup, recovered from the WAL archive to a restore
     point taken mid-load (clients paused, contents recorded): every queue
     and archive is exactly as recorded, reads drain it, sends continue.

Prints the counts (committed, acknowledged, found after failover, lost) and
exits 0 when every check held. PGMQ_FAILOVER_PORT (default 5635) is the
primary's port, the standby and the restored copy use the next two;
PGMQ_FAILOVER_SECONDS (default 10) is the load before the kill;
PGMQ_FAILOVER_KEEP=1 keeps the clusters' directory for a post-mortem.
"""
import json
import os
import pwd
import random
import re
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
BASE_PORT = int(os.environ.get("PGMQ_FAILOVER_PORT", "5635"))
LOAD_SECONDS = float(os.environ.get("PGMQ_FAILOVER_SECONDS", "10"))
DB = "postgres"  # the database pgmq's worker maintains in docker/postgresql.conf
RESTORE_POINT = "pgmq_failover_mid_load"
CLIENT_VT = 2  # seconds a consumer's claim hides a message: short, so claims of dead clients expire soon

failures = 0
started = time.monotonic()


def say(text):
    print(f"[failover {time.monotonic() - started:5.1f}s] {text}", flush=True)


def check(what, ok, detail=""):
    global failures
    if ok:
        say(f"ok: {what}" + (f" ({detail})" if detail else ""))
    else:
        failures += 1
        say(f"FAIL: {what}" + (f" ({detail})" if detail else ""))
    return ok


# --- binaries and clusters -----------------------------------------------------------

def find_bindirs():
    """The server binaries of the server under test (its BINDIR: a private
    installation's when test/dev.sh made one) and the client tools
    (pg_basebackup), which a private installation does not copy."""
    with psycopg.connect(dbname="postgres", autocommit=True) as conn:
        bindir = conn.execute("SELECT setting FROM pg_catalog.pg_config WHERE name = 'BINDIR'").fetchone()[0]
        major = conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0]
    tools = bindir
    if not os.path.exists(os.path.join(tools, "pg_basebackup")):
        tools = f"/usr/lib/postgresql/{major}/bin"
    return bindir, tools, major


def as_postgres(*args, check_status=True, timeout=120):
    command = list(args)
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--"] + command
    result = subprocess.run(command, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=timeout)
    if check_status and result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{result.stdout}")
    return result


def give_to_postgres(*paths):
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        for path in paths:
            os.chown(path, pw.pw_uid, pw.pw_gid)


class Cluster:
    def __init__(self, root, name, port):
        self.name = name
        self.port = port
        self.dir = os.path.join(root, name)
        self.data = os.path.join(self.dir, "data")
        self.socket = os.path.join(self.dir, "socket")
        self.log = os.path.join(self.dir, "server.log")
        os.makedirs(self.socket)
        open(self.log, "a").close()
        give_to_postgres(self.dir, self.socket, self.log)

    def configure(self, lines):
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# failover.py: %s\n%s\n" % (self.name, "\n".join(lines)))

    def listen_here(self):
        return ["listen_addresses = ''", f"port = {self.port}", f"unix_socket_directories = '{self.socket}'"]

    def start(self):
        result = as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-t", "60",
                             "start", check_status=False)
        if result.returncode != 0:
            raise RuntimeError(f"{self.name} did not start:\n{result.stdout}\n{self.tail()}")

    def stop(self):
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop",
                        check_status=False)

    def postmaster_pid(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def kill(self):
        """SIGKILL to the postmaster and every process it started: the
        machine under the primary is gone."""
        postmaster = self.postmaster_pid()
        children = children_of(postmaster)
        for pid in [postmaster] + children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 30
        for pid in [postmaster] + children:
            while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
                reap_children()
                time.sleep(0.02)

    def connect(self, autocommit=True):
        return psycopg.connect(host=self.socket, port=self.port, user="postgres", dbname=DB, autocommit=autocommit,
                               connect_timeout=10)

    def query(self, sql, params=None):
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()

    def process_titles(self):
        titles = []
        for pid in children_of(self.postmaster_pid()):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    titles.append(f.read().replace(b"\0", b" ").decode(errors="replace").strip())
            except OSError:
                pass
        return titles

    def log_size(self):
        return os.path.getsize(self.log)

    def log_since(self, offset):
        with open(self.log, errors="replace") as f:
            f.seek(offset)
            return f.read()

    def tail(self, lines=25):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


# --- what the clients were told ---------------------------------------------------------

# Where a queue's messages can be: its own table, its archive, and for the
# queue with a dead-letter policy the dead-letter queue.
PLACES = {
    "plain": {"live": ["q_plain"], "archived": ["a_plain"]},
    "parted": {"live": ["q_parted"], "archived": ["a_parted"]},
    "dl_src": {"live": ["q_dl_src", "q_dl_dead"], "archived": ["a_dl_src", "a_dl_dead"]},
}


class Ledger:
    """Every message carries a unique key; the ledger holds, per key, what
    the server acknowledged (a statement or COMMIT that returned) and what
    was in flight when a connection died (in doubt)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sent = {}            # key -> queue
        self.sent_doubt = {}      # key -> queue
        self.rolled_back = set()
        self.removed = {}         # key -> "deleted" | "archived" | "popped"
        self.removed_doubt = {}   # key -> how
        self.max_id = {}          # queue -> highest msg_id acknowledged

    def acked_send(self, queue, keys, ids):
        with self.lock:
            for key in keys:
                self.sent[key] = queue
            if ids:
                self.max_id[queue] = max(self.max_id.get(queue, 0), max(ids))

    def doubt_send(self, queue, keys):
        with self.lock:
            for key in keys:
                self.sent_doubt[key] = queue

    def rolled_back_send(self, keys):
        with self.lock:
            self.rolled_back.update(keys)

    def acked_removal(self, keys, how):
        with self.lock:
            for key in keys:
                self.removed[key] = how

    def doubt_removal(self, keys, how):
        with self.lock:
            for key in keys:
                self.removed_doubt[key] = how


# --- clients ------------------------------------------------------------------------------

class Gate:
    """Lets the test pause every client between two of its steps (for the
    restore point), with no transaction open."""

    def __init__(self):
        self.cond = threading.Condition()
        self.paused = False
        self.waiting = 0

    def between_steps(self, stop):
        with self.cond:
            if not self.paused:
                return
            self.waiting += 1
            self.cond.notify_all()
            while self.paused and not stop.is_set():
                self.cond.wait(0.1)
            self.waiting -= 1

    def pause(self, clients, timeout=15):
        with self.cond:
            self.paused = True
            deadline = time.monotonic() + timeout
            while self.waiting < clients and time.monotonic() < deadline:
                self.cond.wait(0.1)
            return self.waiting == clients

    def resume(self):
        with self.cond:
            self.paused = False
            self.cond.notify_all()


class Client(threading.Thread):
    """One application process: connects through the two-server connection
    string, runs its step in a loop, and reconnects when its connection dies."""

    def __init__(self, name, step, world, pause_ms=0):
        super().__init__(name=name, daemon=True)
        self.step = step
        self.world = world
        self.pause_ms = pause_ms
        self.rng = random.Random(name)
        self.serial = 0
        self.in_flight = None   # (callable recording the doubt) while a call's outcome is unknown
        self.conn = None
        self.first_ok_after_kill = None
        self.errors = []

    def key(self):
        self.serial += 1
        return f"{self.name}-{self.serial}"

    def run(self):
        world = self.world
        while not world.stop.is_set():
            world.gate.between_steps(world.stop)
            if self.conn is None and not self.reconnect():
                continue
            began = time.monotonic()
            try:
                self.step(self)
                if world.killed_at is not None and began > world.killed_at and self.first_ok_after_kill is None:
                    self.first_ok_after_kill = time.monotonic()
            except psycopg.OperationalError as error:
                # Losing the connection (no SQLSTATE, class 08, or a backend
                # told the postmaster died: 57P*) is expected at the kill, and
                # only then; any other error (a statement timeout) is not.
                code = error.sqlstate or ""
                if world.killed_at is None or not (code == "" or code.startswith(("08", "57P"))):
                    self.errors.append(f"{type(error).__name__} ({code}): {error}")
                self.lost()
            except psycopg.Error as error:
                self.errors.append(f"{type(error).__name__} ({error.sqlstate}): {error}")
                self.lost()
            if self.pause_ms:
                time.sleep(self.pause_ms / 1000)

    def reconnect(self):
        try:
            self.conn = psycopg.connect(self.world.conninfo, autocommit=True)
            return True
        except psycopg.OperationalError:
            time.sleep(0.05)
            return False

    def lost(self):
        """The connection died (or a statement failed): whatever was in
        flight may or may not have committed."""
        if self.in_flight is not None:
            self.in_flight()
            self.in_flight = None
        try:
            self.conn.close()
        except Exception:
            pass
        self.conn = None

    def sql(self, statement, params=None):
        cursor = self.conn.execute(statement, params)
        return cursor.fetchall() if cursor.description is not None else []


def message(key):
    return json.dumps({"k": key})


def produce(queue):
    """A producer's step: a send, a send_batch, both in a committed
    transaction, or both rolled back."""
    def step(client):
        ledger = client.world.ledger
        choice = client.rng.random()
        if choice < 0.4:
            keys = [client.key()]
            client.in_flight = lambda: ledger.doubt_send(queue, keys)
            ids = [r[0] for r in client.sql("SELECT * FROM pgmq.send(%s, %s::jsonb)", (queue, message(keys[0])))]
            client.in_flight = None
            ledger.acked_send(queue, keys, ids)
        elif choice < 0.7:
            keys = [client.key() for _ in range(client.rng.randint(2, 5))]
            client.in_flight = lambda: ledger.doubt_send(queue, keys)
            ids = [r[0] for r in client.sql("SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])",
                                            (queue, [message(k) for k in keys]))]
            client.in_flight = None
            ledger.acked_send(queue, keys, ids)
        else:
            commit = choice < 0.9
            keys = [client.key() for _ in range(3)]
            if not commit:
                ledger.rolled_back_send(keys)
            client.sql("BEGIN")
            ids = [r[0] for r in client.sql("SELECT * FROM pgmq.send(%s, %s::jsonb)", (queue, message(keys[0])))]
            ids += [r[0] for r in client.sql("SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])",
                                             (queue, [message(k) for k in keys[1:]]))]
            if commit:
                client.in_flight = lambda: ledger.doubt_send(queue, keys)
                client.sql("COMMIT")
                client.in_flight = None
                ledger.acked_send(queue, keys, ids)
            else:
                client.sql("ROLLBACK")
    return step


def remove(client, queue, claimed, how, in_transaction):
    """Deletes or archives the claimed rows [(msg_id, key)]; the keys it
    reports removed are acknowledged at the statement (autocommit) or at
    COMMIT."""
    ledger = client.world.ledger
    if not claimed:
        if in_transaction:
            client.sql("COMMIT")
        return
    keys_of = dict(claimed)
    function = "pgmq.delete" if how == "deleted" else "pgmq.archive"
    if not in_transaction:
        client.in_flight = lambda: ledger.doubt_removal(keys_of.values(), how)
    done = [r[0] for r in client.sql(f"SELECT * FROM {function}(%s, %s::bigint[])", (queue, list(keys_of)))]
    if in_transaction:
        client.in_flight = lambda: ledger.doubt_removal([keys_of[i] for i in done], how)
        client.sql("COMMIT")
    client.in_flight = None
    ledger.acked_removal([keys_of[i] for i in done], how)


def read_then(queue, how):
    """read + delete (two autocommit statements)."""
    def step(client):
        claimed = client.sql("SELECT msg_id, message->>'k' FROM pgmq.read(%s, %s, 5)", (queue, CLIENT_VT))
        remove(client, queue, claimed, how, False)
    return step


def read_archive_in_transaction(queue):
    def step(client):
        client.sql("BEGIN")
        claimed = client.sql("SELECT msg_id, message->>'k' FROM pgmq.read(%s, %s, 5)", (queue, CLIENT_VT))
        remove(client, queue, claimed, "archived", True)
    return step


def poll_then_delete(queue):
    def step(client):
        claimed = client.sql("SELECT msg_id, message->>'k' FROM pgmq.read_with_poll(%s, %s, 5, 1, 100)",
                             (queue, CLIENT_VT))
        remove(client, queue, claimed, "deleted", False)
    return step


def pop_in_transaction(queue):
    """pop inside BEGIN/COMMIT: an in-flight pop is then always one whose
    keys the client already holds (an autocommit pop whose answer is lost
    could have removed messages nobody can name)."""
    def step(client):
        ledger = client.world.ledger
        client.sql("BEGIN")
        keys = [r[0] for r in client.sql("SELECT message->>'k' FROM pgmq.pop(%s, 3)", (queue,))]
        client.in_flight = lambda: ledger.doubt_removal(keys, "popped")
        client.sql("COMMIT")
        client.in_flight = None
        ledger.acked_removal(keys, "popped")
    return step


def read_never_acknowledge(queue):
    """A consumer that fails every message: read with vt 0, no delete, so
    the dead-letter policy moves each message after its last delivery."""
    def step(client):
        client.sql("SELECT msg_id FROM pgmq.read(%s, 0, 5)", (queue,))
    return step


class World:
    def __init__(self, conninfo):
        self.conninfo = conninfo
        self.ledger = Ledger()
        self.gate = Gate()
        self.stop = threading.Event()
        self.killed_at = None
        self.clients = []

    def start_clients(self):
        specs = [
            ("produce-plain-1", produce("plain"), 0),
            ("produce-plain-2", produce("plain"), 0),
            # About 100 messages a second: the worker (every second) keeps
            # the runway of 400 to 499 ids ahead of it.
            ("produce-parted", produce("parted"), 25),
            ("produce-dl", produce("dl_src"), 20),
            ("produce-retained", produce("retained"), 100),
            ("read-delete-plain", read_then("plain", "deleted"), 0),
            ("read-archive-plain", read_archive_in_transaction("plain"), 0),
            ("poll-delete-plain", poll_then_delete("plain"), 0),
            ("pop-plain", pop_in_transaction("plain"), 5),
            ("read-archive-parted", read_archive_in_transaction("parted"), 10),
            ("read-delete-parted", read_then("parted", "deleted"), 10),
            ("read-fail-dl", read_never_acknowledge("dl_src"), 10),
        ]
        for name, step, pause_ms in specs:
            client = Client(name, step, self, pause_ms)
            self.clients.append(client)
            client.start()

    def stop_clients(self):
        self.stop.set()
        self.gate.resume()
        for client in self.clients:
            client.join(30)
            if client.conn is not None:
                client.conn.close()


# --- the test -------------------------------------------------------------------------------

def setup_primary(root):
    primary = Cluster(root, "primary", BASE_PORT)
    archive = os.path.join(root, "wal_archive")
    os.makedirs(archive)
    give_to_postgres(archive)
    # Setup writes no fsync (a process kill loses nothing the OS holds), and
    # 1 MB WAL segments keep the archive and the copies small: the test
    # writes about 400 MB less, which counts on a busy CI machine.
    as_postgres(os.path.join(PG_BIN, "initdb"), "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--locale=C",
                "--no-sync", "--wal-segsize=1", "-D", primary.data)
    primary.configure([
        f"include '{REPO}/docker/postgresql.conf'",
        *primary.listen_here(),
        "max_worker_processes = 16",
        "wal_level = replica",
        "max_wal_senders = 5",
        "synchronous_commit = on",
        "archive_mode = on",
        # A promoted standby archives again the segments it got with its base
        # backup: an identical file already archived is a success.
        f"archive_command = 'test ! -f {archive}/%f && cp %p {archive}/%f || cmp -s %p {archive}/%f'",
        # pgmq's worker every second; pg_partman's own worker off, so that the
        # partitions premade on the new primary are pgmq's worker's.
        "pgmq.maintenance_interval = 1",
        "pg_partman_bgw.dbname = ''",
    ])
    primary.start()
    with primary.connect() as conn:
        conn.execute("""
            CREATE SCHEMA partman;
            CREATE EXTENSION pg_partman SCHEMA partman;
            CREATE EXTENSION pgmq;
            SELECT pgmq.create('plain');
            SELECT pgmq.enable_notify_insert('plain', 100);
            SELECT pgmq.create_partitioned('parted', '100', '100000', 4);
            SELECT pgmq.create('dl_src');
            SELECT pgmq.create('dl_dead');
            SELECT pgmq.set_dead_letter_queue('dl_src', 'dl_dead', 2);
            SELECT pgmq.create('retained');
            SELECT pgmq.set_retention('retained', interval '2 seconds');
            SELECT pgmq.create('polled');
            SELECT pgmq.bind_topic('events.#', 'polled');
            SELECT pgmq.create_unlogged('scratch');
            SELECT pgmq.send_batch('scratch', ARRAY['{}', '{}']::jsonb[]);
        """)
    return primary, archive


def make_standby(root, primary):
    standby = Cluster(root, "standby", BASE_PORT + 1)
    as_postgres(os.path.join(TOOLS_BIN, "pg_basebackup"), "-h", primary.socket, "-p", str(primary.port),
                "-U", "postgres", "-d", "application_name=standby", "-D", standby.data, "-R", "-X", "stream",
                "-c", "fast", "--no-sync")
    standby.configure([
        *standby.listen_here(),
        # Once promoted it has no synchronous standby of its own: with the
        # primary's setting every COMMIT would wait for one forever.
        "synchronous_standby_names = ''",
    ])
    standby.start()
    # Synchronous replication from now on: a COMMIT on the primary returns
    # once the standby has flushed its WAL. (Set before a standby exists, it
    # would make every commit wait.)
    with primary.connect() as conn:
        conn.execute("ALTER SYSTEM SET synchronous_standby_names = 'standby'")
        conn.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + 30
    state = []
    while time.monotonic() < deadline:
        state = primary.query("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'")
        if state == [("sync",)]:
            break
        time.sleep(0.1)
    if not check("the standby streams, synchronously", state == [("sync",)], f"pg_stat_replication: {state}"):
        raise RuntimeError("no synchronous standby")
    return standby


def snapshot_rows(cluster, tables):
    """Every row of the tables, as (table, msg_id, read_ct, vt, key)."""
    rows = []
    with cluster.connect() as conn:
        for table in tables:
            rows += conn.execute(
                f"SELECT %s, msg_id, read_ct, vt, message->>'k' FROM pgmq.{table} ORDER BY msg_id",
                (table,)).fetchall()
    return rows


SNAPSHOT_TABLES = ["q_plain", "a_plain", "q_parted", "a_parted", "q_dl_src", "a_dl_src", "q_dl_dead", "a_dl_dead"]


def mark_restore_point(world, primary):
    """Pauses the clients, records every queue's rows, writes the restore
    point and waits until its WAL is archived."""
    paused = world.gate.pause(len(world.clients))
    try:
        check("every client paused between steps for the restore point", paused)
        rows = snapshot_rows(primary, SNAPSHOT_TABLES)
        with primary.connect() as conn:
            last_id = conn.execute("SELECT last_value FROM pgmq.q_plain_msg_id_seq").fetchone()[0]
            conn.execute("SELECT pg_create_restore_point(%s)", (RESTORE_POINT,))
            segment = conn.execute("SELECT pg_walfile_name(pg_switch_wal())").fetchone()[0]
    finally:
        world.gate.resume()
    deadline = time.monotonic() + 20
    archived = None
    while time.monotonic() < deadline:
        archived = primary.query("SELECT last_archived_wal FROM pg_stat_archiver")[0][0]
        if archived is not None and archived >= segment:
            break
        time.sleep(0.1)
    check("the restore point's WAL is archived", archived is not None and archived >= segment,
          f"segment {segment}, last archived {archived}")
    say(f"restore point {RESTORE_POINT}: {len(rows)} rows recorded, plain's last id {last_id}")
    return rows, last_id


def expect_25006(conn, what, sql):
    try:
        conn.execute(sql)
        check(f"standby: {what} fails", False, "it succeeded")
    except psycopg.Error as error:
        check(f"standby: {what} fails with SQLSTATE 25006", error.sqlstate == "25006",
              f"got {error.sqlstate}: {error}".strip())
    alive = conn.execute("SELECT 1").fetchone() == (1,)
    check(f"standby: the session goes on after {what}", alive)


def check_standby(primary, standby, log_start):
    say("--- the standby, while it is one")
    # Everything the standby logged since it started, before the probes below
    # add their own errors: its workers must have stayed quiet.
    quiet_log = standby.log_since(log_start)
    noisy = [line for line in quiet_log.splitlines()
             if re.search(r"\b(ERROR|WARNING|FATAL|PANIC):|pgmq maintenance|pg_partman", line)]
    check("standby: no error, warning or worker line in its log under load", not noisy,
          f"{len(quiet_log.splitlines())} lines; " + "; ".join(noisy[:3]))
    titles = standby.process_titles()
    check("standby: no pgmq maintenance launcher runs during recovery",
          not any("pgmq maintenance" in t for t in titles), "; ".join(titles))
    check("primary: its pgmq maintenance launcher runs",
          any("pgmq maintenance launcher" in t for t in primary.process_titles()))
    standby_pid = standby.postmaster_pid()
    with standby.connect() as conn:
        check("standby: pg_is_in_recovery()", conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,))
        # One snapshot for both, while replay goes on underneath.
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        row = conn.execute("SELECT queue_length, total_messages FROM pgmq.metrics('plain')").fetchone()
        plain_rows = conn.execute("SELECT count(*) FROM pgmq.q_plain").fetchone()[0]
        conn.execute("COMMIT")
        check("standby: metrics('plain') answers, queue_length as the table says", row[0] == plain_rows,
              f"queue_length {row[0]}, rows {plain_rows}, total_messages {row[1]}")
        notices = []
        conn.add_notice_handler(lambda notice: notices.append(notice.message_primary))
        names = sorted(r[0] for r in conn.execute("SELECT queue_name FROM pgmq.metrics_all()"))
        check("standby: metrics_all() answers for every logged queue, skipping the unlogged one with a NOTICE",
              names == ["dl_dead", "dl_src", "parted", "plain", "polled", "retained"] and
              any('"scratch"' in n for n in notices), f"{names}, notices {notices}")
        names = sorted(r[0] for r in conn.execute("SELECT queue_name FROM pgmq.list_queues()"))
        check("standby: list_queues() answers", len(names) == 7, str(names))
        status = conn.execute("SELECT parent_table, runway_messages FROM pgmq.partition_status('parted') "
                              "ORDER BY 1").fetchall()
        check("standby: partition_status('parted') answers", [s[0] for s in status] == ["pgmq.a_parted",
                                                                                         "pgmq.q_parted"],
              str(status))
        policies = conn.execute("SELECT queue_name, dead_letter_queue, max_deliveries, retention_max_age "
                                "FROM pgmq.list_policies() ORDER BY 1").fetchall()
        # The throttle table is unlogged, as upstream's: not on a standby.
        try:
            conn.execute("SELECT * FROM pgmq.list_notify_insert_throttles()")
            check("standby: list_notify_insert_throttles() fails (its table is unlogged)", False, "it answered")
        except psycopg.Error as error:
            check("standby: list_notify_insert_throttles() fails with 0A000 (its table is unlogged)",
                  error.sqlstate == "0A000", f"{error.sqlstate}: {error}")
        check("standby: list_policies() answers", [p[:3] for p in policies] == [("dl_src", "dl_dead", 2),
                                                                                ("retained", None, None)],
              str(policies))
        # "retained" keeps its last 2 seconds of sends, which nobody reads
        # ("plain" may be drained at any moment).
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        peeked = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.peek('retained', 5)").fetchall()]
        first = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.q_retained ORDER BY msg_id LIMIT 5").fetchall()]
        conn.execute("COMMIT")
        check("standby: peek('retained') answers, the table's first messages", peeked == first and len(first) > 0,
              f"peek {peeked}, table {first}")
        for what, sql in [
            ("send", "SELECT pgmq.send('plain', '{\"standby\": 1}')"),
            ("send_batch", "SELECT pgmq.send_batch('plain', ARRAY['{}']::jsonb[])"),
            ("read", "SELECT * FROM pgmq.read('plain', 30, 1)"),
            ("read_with_poll", "SELECT * FROM pgmq.read_with_poll('plain', 30, 1, 1, 100)"),
            ("pop", "SELECT * FROM pgmq.pop('plain')"),
            ("read_multi", "SELECT * FROM pgmq.read_multi(ARRAY['plain', 'polled'], 30, 1)"),
            ("move", "SELECT * FROM pgmq.move('plain', 'polled', ARRAY[1::bigint])"),
            ("unarchive", "SELECT * FROM pgmq.unarchive('plain', ARRAY[1::bigint])"),
            ("pause", "SELECT pgmq.pause('plain')"),
            ("set_priority", "SELECT pgmq.set_priority('plain', 3)"),
            ("delete", "SELECT pgmq.delete('plain', 1::bigint)"),
            ("archive", "SELECT pgmq.archive('plain', 1::bigint)"),
            ("read on the dead-letter queue's source", "SELECT * FROM pgmq.read('dl_src', 30, 1)"),
            ("set_vt", "SELECT * FROM pgmq.set_vt('plain', 1::bigint, 30)"),
            ("read_grouped", "SELECT * FROM pgmq.read_grouped('plain', 30, 1)"),
            ("send_topic to a bound queue", "SELECT pgmq.send_topic('events.new', '{}')"),
            ("create", "SELECT pgmq.create('on_standby')"),
            ("drop_queue", "SELECT pgmq.drop_queue('polled')"),
            ("set_retention", "SELECT pgmq.set_retention('plain', interval '1 day')"),
            ("purge_queue", "SELECT pgmq.purge_queue('plain')"),
            # An unlogged queue's table is not on the standby at all.
            ("send to an unlogged queue", "SELECT pgmq.send('scratch', '{}')"),
            ("read of an unlogged queue", "SELECT * FROM pgmq.read('scratch', 30, 1)"),
            ("pop of an unlogged queue", "SELECT * FROM pgmq.pop('scratch')"),
            ("delete in an unlogged queue", "SELECT pgmq.delete('scratch', 1::bigint)"),
        ]:
            expect_25006(conn, what, sql)
    check("standby: still the same server (no backend crashed)", standby.postmaster_pid() == standby_pid and
          "terminated by signal" not in standby.log_since(log_start))


def fail_over(world, primary, standby):
    say("--- SIGKILL to the primary, promote the standby")
    world.killed_at = time.monotonic()
    primary.kill()
    killed = time.monotonic()
    as_postgres(os.path.join(PG_BIN, "pg_ctl"), "-D", standby.data, "-w", "-t", "60", "promote")
    promoted = time.monotonic()
    say(f"primary killed; standby promoted {promoted - killed:.2f} s later")
    return promoted


def check_reconnects(world, promoted):
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(c.first_ok_after_kill is None for c in world.clients):
        time.sleep(0.1)
    late = [c.name for c in world.clients if c.first_ok_after_kill is None]
    check("every client reconnected to the new primary and completed a step", not late, ", ".join(late))
    # From the kill: a client may get in before pg_ctl promote has seen the
    # promotion through.
    readers = [c for c in world.clients if not c.name.startswith("produce") and c.first_ok_after_kill]
    if readers:
        slowest = max(c.first_ok_after_kill - world.killed_at for c in readers)
        check("reads resume within 5 seconds of the kill", slowest < 5.0,
              f"slowest reader: {slowest:.2f} s after the kill, {promoted - world.killed_at:.2f} s after it "
              f"the promotion had returned")
    errors = [f"{c.name}: {e}" for c in world.clients for e in c.errors]
    check("no client got an error other than its connection dying at the kill", not errors, "; ".join(errors[:3]))


def account(world, server):
    """The ledger against what the new primary holds."""
    say("--- every committed message after the failover")
    ledger = world.ledger
    found = {}     # key -> [(queue, "live" | "archived")]
    with server.connect() as conn:
        for queue, places in PLACES.items():
            for kind, tables in places.items():
                for table in tables:
                    for (key,) in conn.execute(f"SELECT message->>'k' FROM pgmq.{table}"):
                        found.setdefault(key, []).append((queue, kind))
    sent_queues = {**ledger.sent_doubt, **ledger.sent}
    lost, undone, phantom, duplicated = [], [], [], []
    for key, queue in ledger.sent.items():
        # retention deletes from "retained" without telling anyone
        if queue not in PLACES or key in ledger.removed_doubt:
            continue
        how = ledger.removed.get(key)
        places = [kind for q, kind in found.get(key, []) if q == queue]
        if how in ("deleted", "popped"):
            if places:
                undone.append(key)
        elif how == "archived":
            if "archived" not in places:
                (undone if places else lost).append(key)
        elif not places:
            lost.append(key)
    for key, places in found.items():
        if len(places) > 1:
            duplicated.append(key)
        if key in ledger.rolled_back or key not in sent_queues:
            phantom.append(key)
    removed = {how: sum(1 for h in ledger.removed.values() if h == how) for how in ("deleted", "archived", "popped")}
    committed = {q: sum(1 for v in ledger.sent.values() if v == q) for q in PLACES}
    live = sum(1 for places in found.values() for _, kind in places if kind == "live")
    say(f"committed sends: {sum(committed.values())} ({', '.join(f'{q} {n}' for q, n in committed.items())}), "
        f"in doubt at the kill: {len(ledger.sent_doubt)}, rolled back: {len(ledger.rolled_back)}")
    say(f"acknowledged removals: {sum(removed.values())} (deleted {removed['deleted']}, archived "
        f"{removed['archived']}, popped {removed['popped']}), in doubt at the kill: {len(ledger.removed_doubt)}")
    say(f"found after failover: {len(found)} ({live} in queues, {len(found) - live} archived)")
    say(f"lost: {len(lost)}, removals undone: {len(undone)}, rolled back or unknown but present: {len(phantom)}, "
        f"duplicated: {len(duplicated)}")
    check("the clients committed sends and removals before the kill",
          sum(committed.values()) > 200 and sum(removed.values()) > 100)
    check("lost: 0 (every committed send is on the new primary)", not lost, f"lost: {lost[:5]}")
    check("every acknowledged delete, pop and archive stays done", not undone, f"undone: {undone[:5]}")
    check("no rolled-back or unknown message appears", not phantom, f"{phantom[:5]}")
    check("no message is in two places", not duplicated, f"{duplicated[:5]}")
    return found


def check_new_primary(world, server):
    say("--- the new primary")
    with server.connect() as conn:
        highest = max(world.ledger.max_id.get("plain", 0),
                      conn.execute("SELECT coalesce(max(msg_id), 0) FROM pgmq.a_plain").fetchone()[0])
        new_id = conn.execute("SELECT * FROM pgmq.send('plain', '{\"k\": \"after-failover\"}')").fetchone()[0]
        check("a send continues above every id handed out before", new_id > highest,
              f"new id {new_id}, highest before {highest}")
        conn.execute("SELECT pgmq.delete('plain', %s::bigint)", (new_id,))
        # Unlogged tables are not replicated: the new primary has the queue, empty.
        left = conn.execute("SELECT count(*) FROM pgmq.q_scratch").fetchone()[0]
        sent = conn.execute("SELECT count(*) FROM pgmq.send_batch('scratch', ARRAY['{}']::jsonb[])").fetchone()[0]
        check("new primary: the unlogged queue is there, empty, and takes sends", left == 0 and sent == 1,
              f"{left} messages left, {sent} sent")
    titles = server.process_titles()
    check("new primary: pgmq's maintenance launcher started", any("pgmq maintenance launcher" in t for t in titles),
          "; ".join(titles))

    # A read_with_poll waiting on the new primary wakes at the send's commit,
    # not at its next poll 3 seconds later (shared memory starts afresh there).
    result = {}
    with server.connect() as waiter_conn, server.connect() as sender:
        pid = waiter_conn.execute("SELECT pg_backend_pid()").fetchone()[0]

        def wait():
            began = time.monotonic()
            rows = waiter_conn.execute("SELECT msg_id FROM pgmq.read_with_poll('polled', 30, 1, 10, 3000)").fetchall()
            result["rows"], result["returned"] = rows, time.monotonic()
            result["began"] = began

        waiter = threading.Thread(target=wait)
        waiter.start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            waiting = sender.execute("SELECT state = 'active' AND wait_event_type = 'Extension' "
                                     "FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
            if waiting == (True,):
                break
            time.sleep(0.02)
        time.sleep(0.3)
        sent_at = time.monotonic()
        sender.execute("SELECT pgmq.send('polled', '{\"wake\": 1}')")
        waiter.join(15)
    latency = result.get("returned", float("inf")) - sent_at
    check("new primary: a waiting read_with_poll wakes on a send (poll interval 3 s)",
          len(result.get("rows", [])) == 1 and latency < 1.0, f"returned {latency:.3f} s after the send")

    # LISTEN: the insert notification (its throttle state lives in shared
    # memory and in the throttle table) reaches a listener on the new primary.
    with server.connect() as listener, server.connect() as sender:
        received = []
        listener.add_notify_handler(lambda notification: received.append(notification.channel))
        listener.execute('LISTEN "pgmq.q_plain.INSERT"')
        time.sleep(0.2)  # past the 100 ms throttle of the last send
        sender.execute("SELECT pgmq.send('plain', '{\"k\": \"notify-check\"}')")
        deadline = time.monotonic() + 3
        while not received and time.monotonic() < deadline:
            listener.execute("SELECT 1")  # notifications arrive with a statement's results
            time.sleep(0.05)
        check("new primary: LISTEN gets the insert notification", received[:1] == ["pgmq.q_plain.INSERT"],
              str(received))
        sender.execute("DELETE FROM pgmq.q_plain WHERE message->>'k' = 'notify-check'")
        # The throttle table is unlogged: its rows (the intervals) did not
        # reach the standby, so the new primary notifies unthrottled until
        # enable_notify_insert is called again (docs/operations.md).
        lost = sender.execute("SELECT count(*) FROM pgmq.list_notify_insert_throttles()").fetchone()[0]
        sender.execute("SELECT pgmq.enable_notify_insert('plain', 100)")
        back = sender.execute("SELECT throttle_interval_ms FROM pgmq.list_notify_insert_throttles()").fetchall()
        check("new primary: the throttle's interval is gone until enable_notify_insert sets it again",
              lost == 0 and back == [(100,)], f"{lost} rows after the failover, {back} after enable_notify_insert")


def check_maintenance(server):
    """pgmq's worker on the new primary premakes the partitioned queue's
    partitions and applies the retention policy."""
    say("--- maintenance on the new primary")
    with server.connect() as conn:
        def status():
            return conn.execute("SELECT current_position::bigint, premade_until::bigint, default_partition_rows "
                                "FROM pgmq.partition_status('parted') WHERE parent_table = 'pgmq.q_parted'").fetchone()

        position, premade, _ = status()
        # Up to 20 ids short of the last premade partition's end: without a
        # new partition, the next sends would land in the default partition.
        filler = premade - position - 20
        say(f"parted at the promotion: position {position}, premade until {premade}, sending {filler}")
        while filler > 0:
            batch = min(filler, 500)
            conn.execute("SELECT pgmq.send_batch('parted', array_fill('{}'::jsonb, ARRAY[%s]))", (batch,))
            filler -= batch
        began = time.monotonic()
        grown = premade
        while time.monotonic() - began < 10:
            grown = status()[1]
            if grown > premade:
                break
            time.sleep(0.1)
        check("new primary: the worker premade partitions past the runway left at the promotion", grown > premade,
              f"premade until {premade} -> {grown} in {time.monotonic() - began:.1f} s")
        conn.execute("SELECT pgmq.send_batch('parted', array_fill('{}'::jsonb, ARRAY[100]))")
        rows = conn.execute("SELECT default_partition_rows FROM pgmq.partition_status('parted')").fetchall()
        check("new primary: nothing landed in a default partition", rows == [(0,), (0,)], str(rows))

        ids = [r[0] for r in conn.execute("SELECT * FROM pgmq.send_batch('retained', "
                                          "array_fill('{\"k\": \"retention-check\"}'::jsonb, ARRAY[10]))")]
        began = time.monotonic()
        left = len(ids)
        while time.monotonic() - began < 10 and left:
            time.sleep(0.2)
            left = conn.execute("SELECT count(*) FROM pgmq.q_retained WHERE msg_id = ANY(%s)", (ids,)).fetchone()[0]
        check("new primary: the worker applied the retention policy (max_age 2 s)", left == 0,
              f"{len(ids) - left} of {len(ids)} deleted {time.monotonic() - began:.1f} s after the send")

        # The dead-letter policy (max_deliveries 2): two deliveries, then the
        # third read moves the message.
        msg_id = conn.execute("SELECT * FROM pgmq.send('dl_src', '{\"k\": \"dead-letter-check\"}')").fetchone()[0]
        reads = [conn.execute("SELECT count(*) FROM pgmq.read('dl_src', 0, 100) WHERE msg_id = %s",
                              (msg_id,)).fetchone()[0] for _ in range(3)]
        moved = conn.execute("SELECT count(*) FROM pgmq.q_dl_dead WHERE message->>'k' = 'dead-letter-check' "
                             "AND (headers->'x-pgmq-dead-letter'->>'msg_id')::bigint = %s", (msg_id,)).fetchone()[0]
        check("new primary: the dead-letter policy moves a message after 2 deliveries", reads == [1, 1, 0] and
              moved == 1, f"delivered {reads}, moved {moved}")


def drain(server, queues, label):
    """Reads (read + delete) every queue until it is empty; a message that
    stays visible while reads return nothing is hidden from them. Claims of
    the killed clients (vt 2 s) expire meanwhile."""
    hidden = {}
    drained = 0
    with server.connect() as conn:
        for queue in queues:
            deadline = time.monotonic() + 3 * CLIENT_VT + 5
            previous_visible = None
            while True:
                ids = [r[0] for r in conn.execute("SELECT msg_id FROM pgmq.read(%s, 300, 1000)", (queue,))]
                if ids:
                    conn.execute("SELECT pgmq.delete(%s, %s::bigint[])", (queue, ids))
                    drained += len(ids)
                    continue
                total, visible = conn.execute(
                    f"SELECT count(*), count(*) FILTER (WHERE vt <= clock_timestamp() - interval '50 ms') "
                    f"FROM pgmq.q_{queue}").fetchone()
                if total == 0:
                    break
                # A read that moved every row it picked to the dead-letter
                # queue returns nothing but makes progress: read again.
                if visible > 0 and visible == previous_visible or time.monotonic() > deadline:
                    hidden[queue] = visible
                    break
                previous_visible = visible
                if visible == 0:
                    time.sleep(0.1)  # claims still running out
    check(f"{label}: reads drain every queue, none hidden", not hidden,
          f"{drained} read; left visible but not read: {hidden}" if hidden else f"{drained} read")
    return drained


def restore_to_point(root, base, archive, recorded, highest):
    """The base backup, recovered from the archive up to the restore point."""
    say("--- point-in-time restore of the base backup to the restore point")
    copy = Cluster(root, "pitr", BASE_PORT + 2)
    shutil.copytree(base, copy.data, symlinks=True)
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "postgres:postgres", copy.data], check=True)
    os.chmod(copy.data, 0o700)
    copy.configure([
        *copy.listen_here(),
        "synchronous_standby_names = ''",
        "archive_mode = off",
        f"restore_command = 'cp {archive}/%f %p'",
        f"recovery_target_name = '{RESTORE_POINT}'",
        "recovery_target_action = 'promote'",
    ])
    open(os.path.join(copy.data, "recovery.signal"), "w").close()
    give_to_postgres(os.path.join(copy.data, "recovery.signal"))
    copy.start()
    try:
        deadline = time.monotonic() + 60
        while copy.query("SELECT pg_is_in_recovery()")[0][0] and time.monotonic() < deadline:
            time.sleep(0.1)
        check("the restored copy reached the restore point and was promoted",
              "recovery stopping at restore point" in copy.log_since(0) and
              not copy.query("SELECT pg_is_in_recovery()")[0][0])
        rows = snapshot_rows(copy, SNAPSHOT_TABLES)
        differ = set(rows) ^ set(recorded)
        check("restored copy: every queue and archive row (msg_id, read_ct, vt, message) as recorded "
              "at the restore point", not differ and len(rows) == len(recorded),
              f"{len(rows)} rows, {len(recorded)} recorded, {len(differ)} differ, e.g. {sorted(differ)[:3]}")
        with copy.connect() as conn:
            new_id = conn.execute("SELECT * FROM pgmq.send('plain', '{\"k\": \"after-restore\"}')").fetchone()[0]
        check("restored copy: a send continues above the last id handed out before the restore point",
              new_id > highest, f"new id {new_id}, last before {highest}")
        drain(copy, ["plain", "parted", "dl_src", "dl_dead"], "restored copy")
    finally:
        copy.stop()


def main():
    global PG_BIN, TOOLS_BIN
    become_subreaper()
    # test/run's timeout sends SIGTERM: stop the clusters on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    PG_BIN, TOOLS_BIN, major = find_bindirs()
    root = tempfile.mkdtemp(prefix="pgmq-failover.", dir="/tmp")
    give_to_postgres(root)
    clusters = []
    world = None
    try:
        say(f"PostgreSQL {major}, server binaries {PG_BIN}, clusters under {root}")
        primary, archive = setup_primary(root)
        clusters.append(primary)
        base = os.path.join(root, "base_backup")
        as_postgres(os.path.join(TOOLS_BIN, "pg_basebackup"), "-h", primary.socket, "-p", str(primary.port),
                    "-U", "postgres", "-D", base, "-X", "stream", "-c", "fast", "--no-sync")
        standby = make_standby(root, primary)
        clusters.append(standby)
        standby_log_start = 0

        conninfo = (f"host={primary.socket},{standby.socket} port={primary.port},{standby.port} user=postgres "
                    f"dbname={DB} target_session_attrs=read-write connect_timeout=2 "
                    f"options='-c statement_timeout=20s'")
        say(f"clients connect with: {conninfo}")
        world = World(conninfo)
        world.start_clients()
        time.sleep(LOAD_SECONDS / 2)
        recorded, recorded_last_id = mark_restore_point(world, primary)
        check_standby(primary, standby, standby_log_start)
        time.sleep(LOAD_SECONDS / 2)

        promoted = fail_over(world, primary, standby)
        check_reconnects(world, promoted)
        time.sleep(2)  # the clients work on the new primary for a while
        world.stop_clients()
        account(world, standby)
        check_new_primary(world, standby)
        check_maintenance(standby)
        drain(standby, ["plain", "parted", "dl_src", "dl_dead"], "new primary")
        restore_to_point(root, base, archive, recorded, recorded_last_id)
    except Exception as error:  # a broken step fails the test with its reason, and cleanup still runs
        check("the test ran to its end", False, f"{type(error).__name__}: {error}")
        raise
    finally:
        if world is not None and not world.stop.is_set():
            world.stop_clients()
        if failures:
            for cluster in clusters:
                say(f"last lines of the {cluster.name}'s log:\n{cluster.tail()}")
        for cluster in clusters:
            cluster.stop()
        if os.environ.get("PGMQ_FAILOVER_KEEP"):
            say(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    say(f"{'PASS' if failures == 0 else f'FAILED ({failures} checks)'} in {time.monotonic() - started:.0f} s")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
