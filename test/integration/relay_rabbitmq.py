#!/usr/bin/python3
"""test/integration/relay_rabbitmq.py: pgmq-relay against a real RabbitMQ.

Starts its own rabbitmq-server (own node name, ports, epmd, data and log
directories under a temporary directory; everything stopped by pid at the
end) and uses the PostgreSQL cluster of PGHOST/PGPORT/PGUSER, in a database
of its own. A producer sends messages in transactions of which about a third
roll back, while the relay runs through fault rounds, each several times:

  - sigkill:   SIGKILL of the relay while a batch is read but not deleted;
  - broker:    the broker stopped and started again under the relay;
  - terminate: pg_terminate_backend of the relay's database connections;
  - sigterm:   SIGTERM under load: exit 0, and no message left invisible
               (the batch in flight was finished, not abandoned).

All of it runs against this extension (RELAY_IT_ROUNDS rounds, default 3),
then against the TEST-ONLY stand-ins of upstream pgmq 1.11.0 (plain SQL),
1.12.0 (an extension) and 1.13.1 (plain SQL) (test/lib/upstream_install.py,
ours, not upstream's code; PGMQ_UPSTREAM_RELEASES) with one round each
(RELAY_IT_UPSTREAM_ROUNDS), where the relay's log must name the release.
It ends with bench/relay.sh --smoke, so that the benchmark keeps working.
Around the rounds: a configuration error is one line (file, key, what was
expected; no usage text), a queue that does not exist ends the relay (exit 2,
one line naming it) also under --drain, and every line of the relay's log is
one event (libpq's multi-line errors folded). Hostile senders, TLS, alarms and
/metrics clients are in relay_hostile.py; a RabbitMQ cluster in
relay_cluster.py.

Then it drains the queue and reads everything the broker holds with pika:
every committed message arrived at least once, no rolled-back one ever, a
duplicate always repeats the message-id of its original (and one message-id
never names two messages), the queue ends empty, the archive-mode queue ends
archived, and an unroutable message (mandatory flag, basic.return) is never
taken as confirmed: it is still in its queue.

The relay binary is build/relay/pgmq-relay (PGMQ_RELAY_BIN overrides); when
missing it is built with cmake into build/. Exit 0 is a pass.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "test", "lib"))
from private_rabbitmq import Broker, free_port  # noqa: E402
from relay_harness import stray_log_lines  # noqa: E402
from upstream_install import RELEASES, describe, install  # noqa: E402
DB = "pgmq_it_relay"  # the scenario's database
QUEUE = "relay_it"            # delete after confirm, exchange + routing key + header override
ARCHIVE_QUEUE = "relay_it_arch"   # archive after confirm, default exchange
UNROUTABLE_QUEUE = "relay_it_lost"  # routing key that nothing is bound to
EXCHANGE = "relay_it_x"
ROUNDS = int(os.environ.get("RELAY_IT_ROUNDS", "3"))
UPSTREAM_ROUNDS = int(os.environ.get("RELAY_IT_UPSTREAM_ROUNDS", "1"))
VT = 3  # visibility timeout: how long a killed relay's batch stays invisible

failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"[relay] {'ok' if ok else 'FAIL'}: {what}{' (' + str(detail) + ')' if detail else ''}", flush=True)
    if not ok:
        failures += 1


def relay_binary():
    path = os.environ.get("PGMQ_RELAY_BIN", os.path.join(REPO, "build", "relay", "pgmq-relay"))
    if not os.access(path, os.X_OK):
        print("[relay] building pgmq-relay with cmake into build/", flush=True)
        subprocess.run(["cmake", "-S", REPO, "-B", os.path.join(REPO, "build")], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", os.path.join(REPO, "build"), "--target", "pgmq-relay", "-j2"],
                       check=True, stdout=subprocess.DEVNULL)
    return path


class Relay:
    def __init__(self, binary, config_path, log_path):
        self.binary, self.config_path, self.log_path = binary, config_path, log_path
        self.proc = None
        self.starts = 0

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([self.binary, "--config", self.config_path], stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self.starts += 1

    def signal(self, sig, timeout=30):
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            rc = f"timeout, killed ({rc})"
        self.log.close()
        self.proc = None
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def tail(self, lines=40):
        with open(self.log_path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")


class Producer(threading.Thread):
    """Sends numbered messages in transactions; about a third roll back."""

    def __init__(self, first_n, pace_s=0.01):
        super().__init__(daemon=True)
        self.n = first_n
        self.pace_s = pace_s
        self.committed, self.rolled_back = set(), set()
        self.halt = threading.Event()
        self.error = None

    def run(self):
        try:
            with psycopg.connect(dbname=DB) as conn:
                rng = random.Random(self.n)
                while not self.halt.is_set():
                    self.batch(conn, rng)
                    time.sleep(self.pace_s)
        except Exception as e:  # reported by the main thread
            self.error = e

    def batch(self, conn, rng):
        size = rng.randint(1, 8)
        commit = rng.random() >= 1 / 3
        numbers = list(range(self.n, self.n + size))
        self.n += size
        with conn.transaction(force_rollback=not commit):
            for n in numbers:
                # Every fourth message chooses its routing key by header.
                headers = {"x-pgmq-routing-key": "orders.alt"} if n % 4 == 0 else {"n": n}
                conn.execute("SELECT pgmq.send(%s, %s::jsonb, %s::jsonb)",
                             (QUEUE, json.dumps({"n": n, "committed": commit}), json.dumps(headers)))
        (self.committed if commit else self.rolled_back).update(numbers)

    def stop(self):
        self.halt.set()
        self.join()


def sql(query, args=()):
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        cur = conn.execute(query, args)
        return cur.fetchall() if cur.description else []


def setup_database(install):
    with psycopg.connect(dbname="postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DB}")
    install(DB)
    for q in (QUEUE, ARCHIVE_QUEUE, UNROUTABLE_QUEUE):
        sql("SELECT pgmq.create(%s)", (q,))


def setup_broker(broker):
    conn = broker.connect()
    ch = conn.channel()
    ch.exchange_declare(EXCHANGE, "direct", durable=True)
    for q, key in (("it_orders", "orders"), ("it_orders_alt", "orders.alt")):
        ch.queue_declare(q, durable=True)
        ch.queue_bind(q, EXCHANGE, key)
    ch.queue_declare(ARCHIVE_QUEUE, durable=True)  # default exchange, routed by name
    conn.close()


def wait_for(what, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    check(f"{what} within {timeout} s", False)
    return False


class Watcher:
    """One open connection for the checks that poll fast."""

    def __init__(self):
        self.conn = psycopg.connect(dbname=DB, autocommit=True)

    def now(self):
        return self.conn.execute("SELECT clock_timestamp()").fetchone()[0]

    def in_flight(self, since=None):
        """Messages read (after since) and neither deleted nor visible again:
        a batch the relay holds between its read and its delete."""
        return self.conn.execute(
            f"SELECT count(*) FROM pgmq.q_{QUEUE} WHERE read_ct > 0 AND vt > clock_timestamp() "
            "AND (%s::timestamptz IS NULL OR last_read_at > %s)", (since, since)).fetchone()[0]

    def wait_in_flight(self, since=None, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            n = self.in_flight(since)
            if n:
                return n
        return 0


def relay_pids():
    return [r[0] for r in sql("SELECT pid FROM pg_stat_activity WHERE application_name = 'pgmq-relay' "
                              "AND datname = %s", (DB,))]


def drain(broker, queue):
    """Everything a broker queue holds: (message_id, body, headers)."""
    conn = broker.connect()
    ch = conn.channel()
    out = []
    while True:
        method, props, body = ch.basic_get(queue, auto_ack=True)
        if method is None:
            break
        out.append((props.message_id, json.loads(body), props.headers or {}, props.delivery_mode))
    conn.close()
    return out


def metric(port, name, queue):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(f'{name}{{queue="{queue}"}} '):
            return float(line.split()[-1])
    return None


def config_checks(binary, broker, tmp):
    """A bad configuration is refused with exit status 2 and says why; a
    queue that does not exist ends the relay, also under --drain."""
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"queues": [{"name": "x", "after_confirm": "drop"}]}')
    r = subprocess.run([binary, "--config", bad], capture_output=True, text=True)
    check("a bad configuration exits 2 and names the key", r.returncode == 2 and "after_confirm" in r.stderr,
          r.stderr.splitlines()[0] if r.stderr else r.returncode)
    # A misspelt top-level key: one line naming the file and the key path,
    # not the whole usage text.
    with open(bad, "w") as f:
        f.write('{"queues": ["x"], "batchsize": 5}')
    r = subprocess.run([binary, "--config", bad], capture_output=True, text=True)
    check("an unknown key is one line naming the file and the key", r.returncode == 2
          and r.stderr.count("\n") == 1 and r.stderr.startswith(f"pgmq-relay: {bad}: batchsize: unknown key"),
          repr(r.stderr[:300]))
    t0 = time.monotonic()
    try:
        r = subprocess.run([binary, "--postgres", f"dbname={DB}", "--amqp-url",
                            f"amqp://guest:guest@127.0.0.1:{broker.port}/", "--queue", "relay_it_typo", "--drain",
                            "--poll", "1", "--report-interval", "0"], capture_output=True, text=True, timeout=20)
        errors = [line for line in r.stderr.splitlines() if " ERROR " in line]
        check("a missing queue exits 2 at once with one line naming it", r.returncode == 2 and len(errors) == 1
              and "relay_it_typo" in errors[0] and "does not exist" in errors[0],
              f"exit {r.returncode} after {time.monotonic() - t0:.1f} s: {errors}")
    except subprocess.TimeoutExpired:
        check("a missing queue exits 2 at once with one line naming it", False, "still running after 20 s")


def fault_rounds(relay, broker, metrics_port, rounds, counts):
    """Each round: SIGKILL with a batch in flight, a broker restart,
    pg_terminate_backend twice, SIGTERM under load (exit 0, nothing left in
    flight); the relay started again after each."""
    watch = Watcher()
    for round_no in range(rounds):
        was_in_flight = watch.wait_in_flight()
        relay.proc.kill()
        relay.proc.wait()
        relay.log.close()
        counts["sigkill"] += 1
        counts["sigkill_in_flight"] += 1 if was_in_flight else 0
        print(f"[relay] round {round_no + 1}: SIGKILL with {was_in_flight} message(s) in flight", flush=True)
        relay.start()
        time.sleep(0.5)

        broker.stop()
        time.sleep(0.5)
        secs = broker.start()
        counts["broker"] += 1
        print(f"[relay] round {round_no + 1}: broker restarted ({secs:.1f} s)", flush=True)
        wait_for("the relay reconnected to the broker", lambda: metric(metrics_port, "pgmq_relay_broker_up", QUEUE) == 1, 20)

        for _ in range(2):
            time.sleep(0.3)
            pids = relay_pids()
            sql("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) pid", (pids,))
            counts["terminate"] += 1
        print(f"[relay] round {round_no + 1}: terminated relay backends", flush=True)
        time.sleep(0.5)

        # SIGTERM under load, while a batch is in flight: exit 0, and every
        # batch read since the last fault was finished. (A batch whose
        # delete a terminated connection lost stays invisible until its
        # vt: those are the duplicates, with their message-id.)
        since = watch.now()
        caught = watch.wait_in_flight(since)
        rc = relay.signal(signal.SIGTERM)
        left = watch.in_flight(since)
        counts["sigterm"] += 1
        counts["sigterm_in_flight"] += 1 if caught else 0
        check(f"round {round_no + 1}: SIGTERM ({caught} in flight) exits 0 and finishes the batch",
              rc == 0 and left == 0, f"exit {rc}, {left} left in flight")
        relay.start()
        time.sleep(0.5)


def scenario(binary, broker, tmp, label, rounds, install):
    """The relay through rounds of faults against the database install()
    fills with pgmq; then what arrived at the broker is checked."""
    global DB
    DB = "pgmq_it_relay" + ("" if label == "pgmq-cpp" else "_" + label.split()[-1].replace(".", "_"))
    setup_database(install)
    metrics_port = free_port()
    config = {
        "postgres": f"dbname={DB}",
        "rabbitmq": {"url": f"amqp://guest:guest@127.0.0.1:{broker.port}/", "confirm_timeout_ms": 2000,
                     "heartbeat_s": 10, "connect_timeout_ms": 2000},
        "queues": [
            {"name": QUEUE, "exchange": EXCHANGE, "routing_key": "orders", "routing_key_header": True},
            {"name": ARCHIVE_QUEUE, "after_confirm": "archive"},
            {"name": UNROUTABLE_QUEUE, "exchange": EXCHANGE, "routing_key": "nobody-listens"},
        ],
        "batch_size": 50, "visibility_timeout_s": VT, "poll_s": 1, "report_interval_s": 5,
        "metrics_listen": f"127.0.0.1:{metrics_port}", "backoff_initial_ms": 100, "backoff_max_ms": 1000,
    }
    config_path = os.path.join(tmp, f"relay-{DB}.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    relay = Relay(binary, config_path, os.path.join(tmp, f"relay-{DB}.log"))
    producer = None
    try:
        if label == "pgmq-cpp":
            config_checks(binary, broker, tmp)
        sql("SELECT pgmq.send(%s, '{\"lost\": 1}')", (UNROUTABLE_QUEUE,))
        archived_ids = [r[0] for r in sql("SELECT pgmq.send(%s, jsonb_build_object('a', g)) FROM generate_series(1, 20) g",
                                          (ARCHIVE_QUEUE,))]

        # Round 0: a clean run of 300 messages sent before the relay starts.
        base = Producer(1)
        rng = random.Random(7)
        with psycopg.connect(dbname=DB) as conn:
            while base.n <= 300:
                base.batch(conn, rng)
        relay.start()
        wait_for("the first 300 messages relayed", lambda: sql(f"SELECT count(*) FROM pgmq.q_{QUEUE}")[0][0] == 0, 30)
        producer = Producer(1000)
        producer.start()
        counts = {"sigkill": 0, "sigkill_in_flight": 0, "broker": 0, "terminate": 0, "sigterm": 0,
                  "sigterm_in_flight": 0}
        fault_rounds(relay, broker, metrics_port, rounds, counts)
        producer.stop()
        check("the producer ran without error", producer.error is None, producer.error)
        wait_for("the queue drained after the faults",
                 lambda: sql(f"SELECT count(*) FROM pgmq.q_{QUEUE}")[0][0] == 0, 60)
        wait_for("the archive-mode queue drained",
                 lambda: sql(f"SELECT count(*) FROM pgmq.q_{ARCHIVE_QUEUE}")[0][0] == 0, 20)
        rc = relay.signal(signal.SIGTERM)
        check("final SIGTERM exits 0", rc == 0, rc)
        check_arrivals(broker, base, producer, counts, relay, archived_ids)
        with open(relay.log_path) as f:
            log = f.read()
        check(f"the relay's log says which pgmq it found ({label})", "the database offers " + (
            "pgmq-cpp" if label == "pgmq-cpp" else describe(label.split()[-1])) in log)
        stray = stray_log_lines(relay.tail(10 ** 9))
        check("every log line is one event (multi-line errors folded)", not stray, stray[:3])
    finally:
        if producer is not None and producer.is_alive():
            producer.stop()
        if relay.alive():
            relay.signal(signal.SIGKILL)
        if failures:
            print("[relay] last lines of the relay's log:\n" + relay.tail(), flush=True)
        try:
            with psycopg.connect(dbname="postgres", autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        except Exception as e:
            print(f"[relay] could not drop {DB}: {e}")


def check_arrivals(broker, base, producer, counts, relay, archived_ids):
    committed = base.committed | producer.committed
    rolled_back = base.rolled_back | producer.rolled_back
    main_queue, alt_queue = drain(broker, "it_orders"), drain(broker, "it_orders_alt")
    received = main_queue + alt_queue
    ids_by_n, n_by_id = {}, {}
    for message_id, body, headers, mode in received:
        ids_by_n.setdefault(body["n"], set()).add(message_id)
        n_by_id.setdefault(message_id, set()).add(body["n"])
    arrived = set(ids_by_n)
    duplicates = len(received) - len(arrived)
    print(f"[relay] sent {len(committed)} committed and {len(rolled_back)} rolled-back messages; "
          f"broker holds {len(received)} ({duplicates} duplicates); faults: {counts}; "
          f"relay started {relay.starts} times", flush=True)
    missing = committed - arrived
    check("every committed message arrived at least once", not missing, f"{len(missing)} missing, e.g. {sorted(missing)[:5]}")
    ghosts = arrived & rolled_back
    check("no rolled-back message arrived", not ghosts, sorted(ghosts)[:5])
    check("nothing arrived that was never sent", arrived <= committed | rolled_back)
    check("a duplicate repeats its original's message-id", all(len(v) == 1 for v in ids_by_n.values()))
    check("a message-id names one message", all(len(v) == 1 for v in n_by_id.values()))
    check("message-ids are <queue>:<msg_id>",
          all(mid.startswith(QUEUE + ":") and h.get("x-pgmq-msg-id") == int(mid.split(":")[1])
              for mid, _, h, _ in received))
    check("every message is persistent (delivery mode 2)", all(mode == 2 for *_, mode in received))
    check("x-pgmq-routing-key chose the binding", bool(alt_queue) and all(b["n"] % 4 == 0 for _, b, _, _ in alt_queue)
          and all(b["n"] % 4 != 0 for _, b, _, _ in main_queue), f"{len(alt_queue)} by header, {len(main_queue)} by config")
    check("the queue ends empty", sql(f"SELECT count(*) FROM pgmq.q_{QUEUE}")[0][0] == 0)
    check("SIGKILL rounds hit a batch in flight", counts["sigkill_in_flight"] > 0, counts["sigkill_in_flight"])
    check("SIGTERM rounds hit a batch in flight", counts["sigterm_in_flight"] > 0, counts["sigterm_in_flight"])

    arch_received = drain(broker, ARCHIVE_QUEUE)
    arch_archived = [r[0] for r in sql(f"SELECT msg_id FROM pgmq.a_{ARCHIVE_QUEUE} ORDER BY msg_id")]
    check("archive mode: every message confirmed and archived", arch_archived == archived_ids and
          {m[0] for m in arch_received} == {f"{ARCHIVE_QUEUE}:{i}" for i in archived_ids},
          f"{len(arch_archived)} archived, {len(arch_received)} received")

    lost = sql(f"SELECT read_ct FROM pgmq.q_{UNROUTABLE_QUEUE}")
    with open(relay.log_path) as f:
        returns = f.read().count(f"queue {UNROUTABLE_QUEUE}: 1 message(s) unroutable")
    check("an unroutable message is returned, never confirmed: still in its queue", len(lost) == 1
          and lost[0][0] >= 2 and returns >= 2, f"read {lost[0][0] if lost else 0} times, {returns} returns logged")


def main():
    tmp = tempfile.mkdtemp(prefix="pgmq-relay-it-")
    broker = Broker(tmp)
    try:
        binary = relay_binary()
        started = broker.start()
        print(f"[relay] broker up on port {broker.port} after {started:.1f} s", flush=True)
        setup_broker(broker)
        t0 = time.monotonic()
        scenario(binary, broker, tmp, "pgmq-cpp", ROUNDS, lambda db: sql("CREATE EXTENSION pgmq"))
        print(f"[relay] pgmq-cpp: {time.monotonic() - t0:.1f} s", flush=True)
        # Upstream pgmq's releases (their stand-ins): one round of each fault.
        for release in RELEASES:
            t0 = time.monotonic()
            scenario(binary, broker, tmp, f"upstream {release}", UPSTREAM_ROUNDS,
                     lambda db, release=release: install(db, release))
            print(f"[relay] upstream {release}: {time.monotonic() - t0:.1f} s", flush=True)

        # bench/relay.sh in miniature, so that the benchmark cannot rot.
        r = subprocess.run([os.path.join(REPO, "bench", "relay.sh"), "--smoke"], capture_output=True, text=True,
                           env=dict(os.environ, PGMQ_RELAY_BIN=binary), timeout=120)
        lines = [l for l in r.stdout.splitlines() if l.startswith("relay_batch") and l.endswith(" msgs/s")]
        check("bench/relay.sh --smoke prints both figures", r.returncode == 0 and len(lines) == 2,
              (r.stdout + r.stderr).strip()[-300:])
    except Exception as e:
        check("the test ran to its end", False, repr(e))
    finally:
        broker.close()
        if failures:
            print(f"[relay] kept {tmp} for inspection")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"[relay] {'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
