#!/usr/bin/python3
"""test/integration/relay_stream.py: pgmq-relay reading a stream as a
consumer group (docs/relay.md, "Relaying a stream"), against a real RabbitMQ.

Starts its own rabbitmq-server (test/lib/private_rabbitmq.py: own node name,
ports, epmd and directories, stopped by pid at the end) and uses the
PostgreSQL cluster of PGHOST/PGPORT/PGUSER, in a database of its own. The
page's sql and json blocks that follow <!-- run by test/integration/relay_stream.py -->
are run as they stand: the sql makes the stream and subscribes the groups,
the json is the relay's configuration, with the test's database and broker
put in for the page's postgres and rabbitmq (and the test's batch size,
visibility timeout, poll and metrics port added); its "queues" entry is
used unchanged. The broker gets what the page's "Against one broker" makes:
exchange events (topic), queue orders bound with orders.#.

  - once each: 300 messages sent in transactions (a third roll back) with
    two other groups subscribed (billing from the page, search) reach the
    broker exactly once each, with message-id <stream>:<msg_id>, the
    relay's headers, persistent; a message with a CC header is refused and
    set aside in the dead-letter queue with the reason, its source and the
    group, and acknowledged for the group;
  - faults: a producer sends while the relay is SIGKILLed with a batch in
    flight three times (its database session terminated after each
    restart), and once between the broker's confirm and pgmq.ack (the test
    holds the group's row lock while a batch is in flight, so the ack waits;
    the relay is killed once /metrics counts more confirmed than relayed,
    and its session ended before the ack can commit): every committed
    message arrives, none rolled back, the killed batches come again
    (x-pgmq-read-ct 2 or more), and every duplicate repeats its first
    copy's message-id; SIGTERM exits 0;
  - the other groups: billing and search each read every committed message
    exactly once, the one the relay refused included, and the relay's group
    ends with nothing pending or leased (also on /metrics);
  - test/lib/relay_stream_cases.py: a group that is not subscribed, a
    stream that does not exist, a queue that is not a stream, a since the
    database refuses and a group unsubscribed while the relay runs each
    stop the relay (exit 2, one ERROR line naming them); after_confirm or
    since where they do not apply are one-line errors (exit 2); "subscribe":
    true with "since": "-infinity" subscribes a new group that relays every
    message the stream holds (--drain exits 0), also with batch_max_bytes
    at its minimum; an ordered group read by two relays over
    batch_max_bytes reaches the broker in the stream's order, each message
    once; the relay as a role granted read access (grant_queue_access)
    relays and sets refused messages aside but may not subscribe, and a
    group with a dead-letter queue of its own is refused to it (logged,
    retried) until it may send there; against upstream pgmq's stand-in
    (test/lib/upstream_install.py, ours) a group says streams are not
    available (exit 2).

The relay binary is build/relay/pgmq-relay (PGMQ_RELAY_BIN overrides; built
with cmake when missing). Exit 0 is a pass.
"""
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import threading
import time

import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "test", "lib"))
from private_rabbitmq import Broker, free_port  # noqa: E402
from relay_harness import Checks, Database, Relay, drain, metric, relay_binary, stray_log_lines, write_config  # noqa: E402
from relay_stream_cases import (ROLE, as_reader, config_cases, errors_of, relay_backend,  # noqa: E402
                                unsubscribed_while_running, upstream_case)

DB = "pgmq_it_relay_stream"
MARKER = "<!-- run by test/integration/relay_stream.py -->"
OTHER_GROUPS = ("billing", "search")  # billing is the page's; search is the test's
EXCHANGE, BROKER_QUEUE = "events", "orders"  # the page's broker setup
VT = 3

check = Checks("relay_stream")


def page_blocks():
    """The sql and json blocks of docs/relay.md that follow the marker."""
    with open(os.path.join(REPO, "docs", "relay.md")) as f:
        text = f.read()
    blocks = re.findall(re.escape(MARKER) + r"\s*\n```(\w+)\n(.*?)\n```", text, re.S)
    sql = [body for kind, body in blocks if kind == "sql"]
    config = [json.loads(body) for kind, body in blocks if kind == "json"]
    if len(sql) != 1 or len(config) != 1:
        raise RuntimeError(f"docs/relay.md: expected one sql and one json block after {MARKER}, found {blocks}")
    return sql[0], config[0]


class Producer(threading.Thread):
    """Sends numbered messages to the stream in transactions; about a third roll back."""

    def __init__(self, db, stream, first_n, pace_s=0.01):
        super().__init__(daemon=True)
        self.db, self.stream, self.n, self.pace_s = db, stream, first_n, pace_s
        self.committed, self.rolled_back = set(), set()
        self.halt = threading.Event()
        self.error = None

    def batch(self, conn, rng):
        size = rng.randint(1, 8)
        commit = rng.random() >= 1 / 3
        numbers = list(range(self.n, self.n + size))
        self.n += size
        with conn.transaction(force_rollback=not commit):
            for n in numbers:
                conn.execute("SELECT pgmq.send(%s, %s::jsonb, %s::jsonb)",
                             (self.stream, json.dumps({"n": n}), json.dumps({"n": n})))
        (self.committed if commit else self.rolled_back).update(numbers)

    def fill(self, count):
        with psycopg.connect(dbname=self.db) as conn:
            rng = random.Random(self.n)
            while len(self.committed) + len(self.rolled_back) < count:
                self.batch(conn, rng)

    def run(self):
        try:
            with psycopg.connect(dbname=self.db) as conn:
                rng = random.Random(self.n)
                while not self.halt.is_set():
                    self.batch(conn, rng)
                    time.sleep(self.pace_s)
        except Exception as e:  # reported by the main thread
            self.error = e

    def stop(self):
        self.halt.set()
        self.join()


class Group:
    """One group's figures from pgmq.stream_groups, on one open connection."""

    def __init__(self, db, stream, group):
        self.conn = psycopg.connect(dbname=db, autocommit=True)
        self.stream, self.group = stream, group

    def state(self):
        row = self.conn.execute("SELECT pending, in_flight FROM pgmq.stream_groups(%s) WHERE group_name = %s",
                                (self.stream, self.group)).fetchone()
        return row if row else (None, None)

    def wait_in_flight(self, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _, in_flight = self.state()
            if in_flight:
                return in_flight
        return 0

    def close(self):
        self.conn.close()


def read_group(db, stream, group):
    """Everything a group has to read, acknowledged: [(n or the body, read_ct)]."""
    out = []
    with psycopg.connect(dbname=db, autocommit=True) as conn:
        while True:
            rows = conn.execute("SELECT msg_id, read_ct, message FROM pgmq.read_stream(%s, %s, 30, 1000)",
                                (stream, group)).fetchall()
            if not rows:
                return out
            out += [(m.get("n", json.dumps(m)), ct) for _, ct, m in rows]
            conn.execute("SELECT pgmq.ack(%s, %s, %s::bigint[])", (stream, group, [r[0] for r in rows]))


def setup_broker(broker):
    conn = broker.connect()
    ch = conn.channel()
    ch.exchange_declare(EXCHANGE, "topic", durable=True)
    ch.queue_declare(BROKER_QUEUE, durable=True)
    ch.queue_bind(BROKER_QUEUE, EXCHANGE, "orders.#")
    for name in ("replayed", "bytes", "ordered"):  # the default exchange routes by name
        ch.queue_declare(name, durable=True)
    conn.close()


def kill_between_confirm_and_ack(relay, db, watch, metrics_port, attempts=20):
    """SIGKILL of the relay after the broker confirmed a batch and before
    pgmq.ack took it. While a batch is in flight the test holds the group's
    row lock, which every ack of the group waits for; once /metrics shows
    more confirmed than relayed, and still does a moment later (an ack that
    committed before the lock is counted as relayed at once), the relay is
    killed and its session ended while its ack waits: the ack never commits.
    Returns how many messages were left confirmed and unacknowledged (0: no
    attempt caught one)."""
    for _ in range(attempts):
        backend = relay_backend(db)
        if backend is None or not watch.wait_in_flight():
            time.sleep(0.2)
            continue
        with psycopg.connect(dbname=db.name) as lock:  # one transaction: the lock lasts until its end
            if lock.execute("SELECT 1 FROM pgmq.consumer_groups WHERE stream_name = %s AND group_name = %s "
                            "FOR UPDATE SKIP LOCKED", (watch.stream, watch.group)).fetchone() is None:
                continue  # the relay's own statement holds it
            gap = confirmed_not_relayed(metrics_port, watch.stream, seconds=2)
            if gap > 0:
                relay.proc.kill()
                relay.proc.wait()
                relay.log.close()
                lock.execute("SELECT pg_terminate_backend(%s, 5000)", (backend,))
            lock.rollback()
        if gap > 0 and watch.state()[1]:
            return int(gap)
        if gap > 0:
            relay.start()
    return 0


def confirmed_not_relayed(metrics_port, stream, seconds):
    """How many messages the relay counts as confirmed by the broker and not
    yet acknowledged, once that stayed above 0 for 0.3 s; 0 if it did not
    within seconds."""
    def gap():
        confirmed = metric(metrics_port, "pgmq_relay_confirmed_total", stream)
        relayed = metric(metrics_port, "pgmq_relay_relayed_total", stream)
        return (confirmed or 0) - (relayed or 0)

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gap() > 0:
            time.sleep(0.3)
            return max(gap(), 0)
        time.sleep(0.05)
    return 0


def main():
    tmp = tempfile.mkdtemp(prefix="pgmq-relay-stream-")
    broker = Broker(tmp)
    relay = None
    producer = None
    try:
        binary = relay_binary()
        check.say(f"broker up on port {broker.port} after {broker.start():.1f} s")
        setup_broker(broker)
        page_sql, page_config = page_blocks()
        source = page_config["queues"][0]
        stream, group = source["name"], source["group"]
        db = Database(DB)
        dead = source.get("dead_letter_queue") or page_config.get("dead_letter_queue")
        db.sql("SELECT pgmq.create(%s)", (dead,))  # made earlier on the page
        with psycopg.connect(dbname=DB, autocommit=True) as conn:
            conn.execute(page_sql)
        for other in OTHER_GROUPS:
            db.sql("SELECT pgmq.subscribe(%s, %s)", (stream, other))

        metrics_port = free_port()
        config = dict(page_config)
        config["postgres"] = f"dbname={DB}"
        config["rabbitmq"] = {"url": f"amqp://guest:guest@127.0.0.1:{broker.port}/", "confirm_timeout_ms": 2000,
                              "heartbeat_s": 10, "connect_timeout_ms": 2000}
        config.update({"batch_size": 50, "visibility_timeout_s": VT, "poll_s": 1, "report_interval_s": 5,
                       "metrics_listen": f"127.0.0.1:{metrics_port}", "backoff_initial_ms": 100,
                       "backoff_max_ms": 1000})
        config_path = write_config(os.path.join(tmp, "relay.json"), config)
        relay = Relay(binary, config_path, os.path.join(tmp, "relay.log"))
        watch = Group(DB, stream, group)

        # Once each: what is sent before the relay starts, no faults.
        base = Producer(DB, stream, 1)
        base.fill(300)
        refused_id = db.send(stream, {"refused": True}, {"CC": "audit.all"})
        relay.start()
        check.wait_for("the first 300 messages relayed", lambda: watch.state() == (0, 0), 30)
        first = drain(broker, BROKER_QUEUE)
        ns = [b["n"] for _, b, _, _ in first]
        check("each committed message reached the broker once", sorted(ns) == sorted(base.committed),
              f"{len(ns)} at the broker for {len(base.committed)} committed, {len(set(ns))} distinct")
        check("message-id <stream>:<msg_id>, the relay's headers, persistent", all(
            mid == f"{stream}:{h.get('x-pgmq-msg-id')}" and h.get("x-pgmq-queue") == stream
            and h.get("x-pgmq-read-ct") == 1 and h.get("n") == b["n"] and mode == 2 for mid, b, h, mode in first),
            first[:1])
        dead_rows = db.sql(f"SELECT message, headers FROM pgmq.q_{dead}")
        check("a refused message is set aside with the reason, its source and the group", len(dead_rows) == 1
              and dead_rows[0][0] == {"refused": True}
              and "CC" in dead_rows[0][1].get("x-pgmq-relay-refused", "")
              and dead_rows[0][1].get("x-pgmq-relay-source") == f"{stream}:{refused_id}"
              and dead_rows[0][1].get("x-pgmq-relay-group") == group, dead_rows)

        # Faults: SIGKILL with a batch in flight, under load.
        producer = Producer(DB, stream, 10000)
        producer.start()
        kills = 0
        for round_no in range(3):
            time.sleep(0.5)
            in_flight = watch.wait_in_flight()
            relay.proc.kill()
            relay.proc.wait()
            relay.log.close()
            kills += 1 if in_flight else 0
            check.say(f"round {round_no + 1}: SIGKILL with {in_flight} message(s) in flight")
            relay.start()
            # The relay's database session ended under it: it reconnects.
            time.sleep(0.5)
            db.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pgmq-relay' "
                   "AND datname = %s", (DB,))
        # A batch confirmed by the broker and not acknowledged when the relay dies.
        unacked = kill_between_confirm_and_ack(relay, db, watch, metrics_port)
        check("SIGKILL between the confirm and the ack", unacked > 0, f"{unacked} confirmed, not acknowledged")
        relay.start()
        time.sleep(1)
        producer.stop()
        check("the producer ran without error", producer.error is None, producer.error)
        check.wait_for("the group caught up after the faults", lambda: watch.state() == (0, 0), 60)
        check.wait_for("/metrics: the group's pending messages (pgmq_relay_queue_length) at 0",
                       lambda: metric(metrics_port, "pgmq_relay_queue_length", stream) == 0, 10, interval=0.5)
        rc = relay.signal(signal.SIGTERM)
        check("SIGTERM exits 0", rc == 0, rc)

        received = first + drain(broker, BROKER_QUEUE)
        committed = base.committed | producer.committed
        rolled_back = base.rolled_back | producer.rolled_back
        ids_by_n, n_by_id = {}, {}
        for mid, body, headers, _ in received:
            ids_by_n.setdefault(body["n"], set()).add(mid)
            n_by_id.setdefault(mid, set()).add(body["n"])
        duplicates = len(received) - len(ids_by_n)
        redelivered = [h for _, _, h, _ in received if h.get("x-pgmq-read-ct", 0) >= 2]
        check.say(f"sent {len(committed)} committed and {len(rolled_back)} rolled-back messages; the broker got "
                  f"{len(received)} ({duplicates} duplicates, {len(redelivered)} redelivered); relay started "
                  f"{relay.starts} times")
        missing = committed - set(ids_by_n)
        check("every committed message arrived", not missing, sorted(missing)[:5])
        check("no rolled-back message arrived", not (set(ids_by_n) & rolled_back))
        check("SIGKILL hit a batch in flight", kills > 0, kills)
        check("a killed batch came again (x-pgmq-read-ct 2 or more)", bool(redelivered), len(redelivered))
        check("a duplicate repeats its first copy's message-id", duplicates > 0
              and all(len(v) == 1 for v in ids_by_n.values()), f"{duplicates} duplicates")
        check("a message-id names one message", all(len(v) == 1 for v in n_by_id.values()))

        # The other groups are not touched by the relay's.
        everything = sorted(committed) + [json.dumps({"refused": True})]
        for other in OTHER_GROUPS:
            got = read_group(DB, stream, other)
            check(f"group {other} reads every committed message once", sorted(n for n, _ in got if isinstance(n, int))
                  == sorted(committed) and len(got) == len(everything) and all(ct == 1 for _, ct in got),
                  f"{len(got)} read for {len(everything)}")

        stray = stray_log_lines(relay.text())
        check("every log line is one event", not stray, stray[:3])

        replay, limited, ordered = config_cases(check, binary, config, stream, tmp, db)
        replayed = drain(broker, "replayed")
        check("the subscribed group relayed every message the stream holds",
              sorted(b["n"] for _, b, _, _ in replayed) == sorted(committed), f"{len(replayed)} for {len(committed)}"
              + ("" if replay.returncode == 0 else f": {replay.stderr[-300:]}"))
        by_bytes = drain(broker, "bytes")
        check("batch_max_bytes: every message once, and --drain exits 0 only then", limited.returncode == 0
              and sorted(b["n"] for _, b, _, _ in by_bytes) == sorted(committed),
              f"exit {limited.returncode}, {len(by_bytes)} for {len(committed)}: {errors_of(limited)}")
        in_order = [b["n"] for _, b, _, _ in drain(broker, "ordered")]
        check("an ordered group read by two relays over batch_max_bytes: every message once, in the stream's order",
              [o.returncode for o in ordered] == [0, 0] and in_order == sorted(committed),
              f"exit {[o.returncode for o in ordered]}, {len(in_order)} for {len(committed)}, "
              f"{sum(a > b for a, b in zip(in_order, in_order[1:]))} out of order")
        as_reader(check, binary, config, stream, tmp, db, broker, committed)
        unsubscribed_while_running(check, binary, config, stream, group, tmp, db)

        upstream_case(check, binary, config, stream, tmp, DB)
        watch.close()
    except Exception as e:
        check("the test ran to its end", False, repr(e))
    finally:
        if producer is not None and producer.is_alive():
            producer.stop()
        if relay is not None and relay.alive():
            relay.signal(signal.SIGKILL)
        if relay is not None and check.failures:
            check.say("last lines of the relay's log:\n" + relay.tail())
        broker.close()
        try:
            Database.drop(DB)
            with psycopg.connect(dbname="postgres", autocommit=True) as conn:
                conn.execute(f"DROP ROLE IF EXISTS {ROLE}")
        except Exception as e:
            check.say(f"could not drop {DB} or {ROLE}: {e}")
        if check.failures:
            check.say(f"kept {tmp} for inspection")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return check.exit_status()


if __name__ == "__main__":
    sys.exit(main())
