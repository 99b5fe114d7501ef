#!/usr/bin/env python3
"""test/integration/composition.py: the features together, as an application
combines them, against a real server, a real RabbitMQ broker, pgmq-relay and
pgmq-console.

The story: an `orders` queue with priorities, retry with backoff and a
dead-letter queue `failed` that it shares with `emails`, read by a worker
role that was given access with grant_queue_access (and nothing else);
finished orders are moved to `shipments`, an outbox with deduplication that
pgmq-relay publishes to RabbitMQ with trace headers; an operator pauses and
resumes orders and redrives its dead letters from the console.

What it checks, step by step:
  - the worker reads by priority, retries with reasons, and its reads move a
    message at its delivery limit into the shared dead-letter queue (no
    42501), where dead_letter() set another aside with a reason;
  - queue_state and list_policies count each queue's own dead letters;
  - while orders is paused the worker reads nothing and sends are kept;
  - move keeps the priority header and adds x-pgmq-moved-from;
  - a duplicate send to the outbox is the first copy; the relay publishes
    each message once with pgmq's headers and the trace headers;
  - the console's overview shows the pause and the dead letters, its redrive
    of orders moves exactly the count it showed, back to orders only, with
    their failure history, and the emails' dead letter stays.

Needs PGHOST/PGPORT/PGUSER (a superuser), rabbitmq-server, and the relay and
console built by CMake (build/). Exit status 0 is a pass.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

import psycopg  # noqa: E402
from psycopg.types.json import Jsonb  # noqa: E402
from private_rabbitmq import Broker  # noqa: E402
from relay_harness import REPO, Checks, Database, drain, relay_binary, write_config  # noqa: E402

DB = "pgmq_it_composition"
WORKER = "pgmq_it_comp_worker"
check = Checks("composition")
CONSOLE_BIN = os.environ.get("PGMQ_CONSOLE_BIN", os.path.join(REPO, "build", "console", "pgmq-console"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Console:
    """pgmq-console with actions, as the queues' owner."""

    def __init__(self):
        self.port = free_port()
        self.proc = subprocess.Popen([CONSOLE_BIN, "--allow-actions", "--listen", f"127.0.0.1:{self.port}",
                                      "--sample-seconds", "1", f"dbname={DB}"], stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.token = self.get("/api/session")["csrf_token"]
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def request(self, path, method="GET", body=None, headers=None):
        hdrs = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=body, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read().decode())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read().decode())

    def get(self, path):
        return self.request(path)[1]

    def act(self, queue, action, body=None):
        return self.request(f"/api/queues/{queue}/{action}", "POST", json.dumps(body or {}).encode(),
                            {"Content-Type": "application/json", "X-Pgmq-Console-Token": self.token})

    def stop(self):
        self.proc.terminate()
        return self.proc.communicate(timeout=10)[1]


def worker_sql(query, args=()):
    """One statement as the worker role, which has only grant_queue_access's grants."""
    with psycopg.connect(dbname=DB, user=WORKER, autocommit=True) as conn:
        cur = conn.execute(query, args)
        return cur.fetchall() if cur.description else []


def setup(db):
    db.sql(f"DROP ROLE IF EXISTS {WORKER}")
    db.sql(f"CREATE ROLE {WORKER} LOGIN")
    for q in ("orders", "emails", "failed", "shipments"):
        db.sql("SELECT pgmq.create(%s)", (q,))
    db.sql("SELECT pgmq.set_priority('orders', 3)")
    db.sql("SELECT pgmq.set_retry_backoff('orders', 0, 0)")
    db.sql("SELECT pgmq.set_dead_letter_queue('orders', 'failed', 3)")
    db.sql("SELECT pgmq.set_dead_letter_queue('emails', 'failed', 1)")
    db.sql("SELECT pgmq.set_deduplication('shipments', '1 hour')")
    db.sql("SELECT pgmq.set_priority('shipments', 3)")
    db.sql("SELECT pgmq.grant_queue_access('orders', %s)", (WORKER,))


def step_worker(db):
    """Priorities, retry with reasons and dead letters, as the worker."""
    ids = {}
    for name, priority in (("low", None), ("urgent", 2), ("normal", 1)):
        headers = {"x-pgmq-priority": priority} if priority is not None else {}
        ids[name] = db.send("orders", {"order": name}, headers)
    got = [r[0]["order"] for r in worker_sql("SELECT message FROM pgmq.read('orders', 30, 3)")]
    check("the worker reads by priority", got == ["urgent", "normal", "low"], got)
    # "low" fails every time: retried with reasons until the read that would
    # deliver it a fourth time moves it to the shared dead-letter queue.
    for attempt in range(1, 3):
        worker_sql("SELECT pgmq.retry('orders', %s, %s)", (ids["low"], f"payment API timed out ({attempt})"))
        got = worker_sql("SELECT msg_id FROM pgmq.read('orders', 30, 10)")
        check(f"the retried message comes back (attempt {attempt})", [r[0] for r in got] == [ids["low"]], got)
    worker_sql("SELECT pgmq.retry('orders', %s, 'payment API timed out (3)')", (ids["low"],))
    got = worker_sql("SELECT msg_id FROM pgmq.read('orders', 30, 10)")
    check("the read at the delivery limit moves it, as the worker, with no 42501", got == [], got)
    # "normal" cannot be processed at all: set aside at once, with a reason.
    moved = worker_sql("SELECT pgmq.dead_letter('orders', %s, 'unknown product')", (ids["normal"],))
    check("dead_letter sets a message aside", moved == [(True,)], moved)
    db.send("emails", {"to": "ada@example.com"})
    db.sql("SELECT count(*) FROM pgmq.read('emails', 0, 1)")
    db.sql("SELECT count(*) FROM pgmq.read('emails', 0, 1)")
    dead = db.sql("SELECT message, headers FROM pgmq.q_failed ORDER BY msg_id")
    sources = [(m.get("order") or m.get("to"), h["x-pgmq-dead-letter"]["queue"], h["x-pgmq-dead-letter"]["reason"])
               for m, h in dead]
    check("the shared dead-letter queue holds each message with its source and reason", sources == [
        ("low", "orders", "max_deliveries reached"), ("normal", "orders", "unknown product"),
        ("ada@example.com", "emails", "max_deliveries reached")], sources)
    history = [f["reason"] for f in dead[0][1].get("x-pgmq-failures", [])]
    check("the failure history came along", history == [f"payment API timed out ({i})" for i in (1, 2, 3)], history)
    counts = dict(db.sql("SELECT queue_name, dead_lettered FROM pgmq.queue_state_all() "
                         "WHERE queue_name IN ('orders', 'emails')"))
    policies = dict(db.sql("SELECT queue_name, dead_lettered FROM pgmq.list_policies() "
                           "WHERE queue_name IN ('orders', 'emails')"))
    check("queue_state and list_policies count each queue's own dead letters",
          counts == policies == {"orders": 2, "emails": 1}, (counts, policies))
    return ids


def step_pause(db, ids):
    """A pause holds the worker's reads; sends are kept; resume delivers."""
    db.sql("SELECT pgmq.pause('orders')")
    late = db.send("orders", {"order": "late"})
    got = worker_sql("SELECT msg_id FROM pgmq.read_with_poll('orders', 30, 10, 1, 100)")
    paused = db.sql("SELECT paused, visible_length FROM pgmq.queue_state('orders')")
    check("while paused the worker reads nothing and the send is kept", got == [] and paused == [(True, 1)],
          (got, paused))
    db.sql("SELECT pgmq.resume('orders')")
    got = worker_sql("SELECT msg_id FROM pgmq.read('orders', 30, 10)")
    check("after resume the worker reads it", [r[0] for r in got] == [late], got)
    ids["late"] = late


def step_move_and_relay(db, broker, tmp, ids):
    """Finished orders move to the outbox; the relay publishes each once."""
    shipped = db.sql("SELECT * FROM pgmq.move('orders', 'shipments', %s)", ([ids["urgent"], ids["late"]],))
    check("move takes both orders to the outbox", len(shipped) == 2, shipped)
    headers = dict(db.sql("SELECT message->>'order', headers FROM pgmq.q_shipments"))
    urgent = headers.get("urgent") or {}
    check("move keeps the priority header and adds x-pgmq-moved-from",
          urgent.get("x-pgmq-priority") == 2 and urgent.get("x-pgmq-moved-from", {}).get("queue") == "orders", urgent)
    trace = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "x-trace-id": "trace-7"}
    first = db.send("shipments", {"invoice": 7}, {"x-pgmq-deduplication-id": "invoice-7", **trace})
    again = db.send("shipments", {"invoice": 7}, {"x-pgmq-deduplication-id": "invoice-7", **trace})
    check("a duplicate send returns the first copy's id", first == again, (first, again))
    conn = broker.connect()
    conn.channel().queue_declare("shipments", durable=True)
    conn.close()
    config = write_config(os.path.join(tmp, "relay.json"), {
        "postgres": f"dbname={DB}", "rabbitmq": {"url": f"amqp://guest:guest@127.0.0.1:{broker.port}/"},
        "queues": ["shipments"], "poll_s": 1, "report_interval_s": 0})
    r = subprocess.run([relay_binary(), "--config", config, "--drain"], capture_output=True, text=True, timeout=60)
    check("the relay drains the outbox", r.returncode == 0 and db.count("shipments") == 0, r.stdout[-500:])
    got = drain(broker, "shipments")
    bodies = sorted(json.dumps(m[1], sort_keys=True) for m in got)
    check("each message is published once", bodies == sorted(json.dumps(b, sort_keys=True) for b in (
        {"order": "urgent"}, {"order": "late"}, {"invoice": 7})), bodies)
    by_body = {json.dumps(m[1], sort_keys=True): m[2] for m in got}
    invoice = by_body.get(json.dumps({"invoice": 7}), {})
    check("pgmq's and the trace headers reach the broker",
          invoice.get("x-pgmq-deduplication-id") == "invoice-7" and invoice.get("traceparent") == trace["traceparent"]
          and invoice.get("x-trace-id") == "trace-7" and invoice.get("x-pgmq-queue") == "shipments", invoice)
    moved = by_body.get(json.dumps({"order": "urgent"}), {})
    check("a moved message keeps x-pgmq-moved-from and its priority on the broker",
          "x-pgmq-moved-from" in moved and str(moved.get("x-pgmq-priority")) == "2", moved)


def step_console(db):
    """The operator pauses, resumes and redrives from the console."""
    # Messages that waited ten minutes: in a plain queue that is an alert, in
    # the dead-letter queue it is the dead-letter alert's business.
    db.sql("SELECT pgmq.create('stale')")
    db.send("stale", {"waits": True})
    db.sql("UPDATE pgmq.q_stale SET enqueued_at = now() - interval '10 minutes'")
    db.sql("UPDATE pgmq.q_failed SET enqueued_at = now() - interval '10 minutes'")
    console = Console()
    try:
        overview = {q["name"]: q for q in console.get("/api/overview")["queues"]}
        orders, failed = overview.get("orders", {}), overview.get("failed", {})
        check("a plain queue whose message waited ten minutes alerts",
              "oldest_visible" in overview.get("stale", {}).get("alerts", []), overview.get("stale"))
        check("the dead-letter queue's old messages do not say 'wait too long'",
              failed.get("dead_letter_for") == ["emails", "orders"] and "oldest_visible" not in failed.get("alerts", []),
              failed)
        check("the console counts orders' own dead letters", orders.get("dead_lettered") == 2, orders)
        status, body = console.act("orders", "pause")
        paused = {q["name"]: q for q in console.get("/api/overview")["queues"]}.get("orders", {})
        check("the console pauses orders", status == 200 and paused.get("paused") is True, (status, body, paused))
        status, body = console.act("orders", "resume")
        check("the console resumes orders", status == 200 and db.sql(
            "SELECT paused FROM pgmq.queue_state('orders')") == [(False,)], (status, body))
        status, body = console.act("orders", "redrive", {})
        check("the console's redrive moves the count it showed", status == 200 and body.get("count") == 2,
              (status, body))
        back = db.sql("SELECT message->>'order', jsonb_array_length(headers->'x-pgmq-failures') FROM pgmq.q_orders "
                      "WHERE message ? 'order' ORDER BY msg_id")
        check("orders' dead letters are back in orders, in their order, with their failure history",
              back == [("low", 3), ("normal", 1)], back)
        left = db.sql("SELECT headers->'x-pgmq-dead-letter'->>'queue' FROM pgmq.q_failed")
        check("the emails' dead letter stays in the shared queue", left == [("emails",)], left)
    finally:
        err = console.stop()
        if check.failures:
            check.say("console stderr:\n" + err[-2000:])


def main():
    tmp = tempfile.mkdtemp(prefix="pgmq-composition-")
    broker = Broker(os.path.join(tmp, "broker"))
    try:
        check.say(f"broker up after {broker.start():.1f} s")
        db = Database(DB)
        setup(db)
        ids = step_worker(db)
        step_pause(db, ids)
        step_move_and_relay(db, broker, tmp, ids)
        step_console(db)
    except Exception as e:
        check("the scenario ran to its end", False, repr(e))
    finally:
        broker.close()
        try:
            Database.drop(DB)
            with psycopg.connect(dbname="postgres", autocommit=True) as conn:
                conn.execute(f"DROP ROLE IF EXISTS {WORKER}")
        except Exception as e:
            check.say(f"could not clean up: {e}")
    return check.exit_status()


if __name__ == "__main__":
    sys.exit(main())
