#!/usr/bin/python3
"""test/integration/relay_cluster.py: pgmq-relay against a 3-node RabbitMQ
cluster with a quorum queue, when the node that holds the relay's connection
and leads the queue is killed mid-stream.

Three private nodes (test/lib/private_rabbitmq.py's Cluster: one epmd, one
cookie, ports from 25600-25699) joined into one cluster; a quorum queue
declared on the first node, which therefore leads it. The relay is given the
three nodes' addresses and connects to the first. A producer sends numbered
messages in transactions (a third roll back) while the first node is
SIGKILLed. Then, without restarting the relay by hand:

  - the relay reconnects to a surviving node and the queue drains within
    seconds of the new leader's election (a channel opened during the
    election is nacked: the relay must reopen it, not retry on it);
  - every committed message is in the quorum queue, no rolled-back one, and
    a duplicate repeats its original's message-id.

The PostgreSQL cluster of PGHOST/PGPORT/PGUSER, in a database of its own.
Exit 0 is a pass.
"""
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from private_rabbitmq import Cluster, free_port  # noqa: E402
from relay_harness import Checks, Database, Relay, drain, metric, relay_binary, write_config  # noqa: E402

DB = "pgmq_it_relay_cluster"
QUEUE = "orders"            # the pgmq queue
BROKER_QUEUE = "orders_qq"  # the quorum queue, routed to by name
check = Checks("relay-cluster")


class Producer(threading.Thread):
    """Sends numbered messages in transactions; about a third roll back."""

    def __init__(self):
        super().__init__(daemon=True)
        self.n = 1
        self.committed, self.rolled_back = set(), set()
        self.halt = threading.Event()
        self.error = None

    def run(self):
        rng = random.Random(25)
        try:
            with psycopg.connect(dbname=DB) as conn:
                while not self.halt.is_set():
                    size, commit = rng.randint(1, 8), rng.random() >= 1 / 3
                    numbers = list(range(self.n, self.n + size))
                    self.n += size
                    with conn.transaction(force_rollback=not commit):
                        for n in numbers:
                            conn.execute("SELECT pgmq.send(%s, %s::jsonb)", (QUEUE, json.dumps({"n": n})))
                    (self.committed if commit else self.rolled_back).update(numbers)
                    time.sleep(0.01)
        except Exception as e:  # reported by the main thread
            self.error = e

    def stop(self):
        self.halt.set()
        self.join()


def leader(node):
    """The quorum queue's leader as a surviving node sees it ("" if unknown)."""
    try:
        for line in node.ctl("list_queues", "-q", "name", "leader", "--no-table-headers", timeout=10).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == BROKER_QUEUE:
                return parts[1]
    except Exception:
        pass
    return ""


def main():
    tmp = tempfile.mkdtemp(prefix="pgmq-relay-cluster-")
    cluster = Cluster(tmp, 3)
    relay = producer = None
    try:
        binary = relay_binary()
        check.say(f"cluster of 3 up after {cluster.start():.1f} s")
        first, second, third = cluster.nodes
        conn = first.connect()
        conn.channel().queue_declare(BROKER_QUEUE, durable=True, arguments={"x-queue-type": "quorum"})
        conn.close()
        check("the quorum queue is led by the first node", leader(second) == first.node, leader(second))
        db = Database(DB)
        db.sql("SELECT pgmq.create(%s)", (QUEUE,))
        metrics_port = free_port()
        config = write_config(os.path.join(tmp, "relay.json"), {
            "postgres": f"dbname={DB}",
            "rabbitmq": {"urls": [f"amqp://guest:guest@127.0.0.1:{n.port}/" for n in cluster.nodes],
                         "confirm_timeout_ms": 2000, "connect_timeout_ms": 1000, "heartbeat_s": 10},
            "queues": [{"name": QUEUE, "routing_key": BROKER_QUEUE}],
            "batch_size": 50, "visibility_timeout_s": 5, "poll_s": 1, "report_interval_s": 5,
            "metrics_listen": f"127.0.0.1:{metrics_port}", "backoff_initial_ms": 200, "backoff_max_ms": 1000})
        relay = Relay(binary, config, os.path.join(tmp, "relay.log"))
        relay.start()
        producer = Producer()
        producer.start()
        check.wait_for("the relay delivered to the first node", lambda: (metric(
            metrics_port, "pgmq_relay_relayed_total", QUEUE, timeout=1) or 0) > 100, 20, interval=0.2)
        check("the relay's connection is on the first node",
              f"broker connected (127.0.0.1:{first.port}," in relay.text(), relay.tail(3))

        # The node holding the connection and leading the queue dies mid-stream.
        first.kill()
        killed = time.monotonic()
        check.say("first node SIGKILLed")
        check.wait_for("a new leader was elected", lambda: leader(second) not in ("", first.node), 60, interval=0.5)
        elected = time.monotonic()
        check.say(f"new leader {leader(second)} after {elected - killed:.1f} s")
        time.sleep(3)  # the producer keeps sending across the failover
        producer.stop()
        check("the producer ran without error", producer.error is None, producer.error)
        check.wait_for("the queue drained within 20 s of the election, the relay never restarted by hand",
                       lambda: db.count(QUEUE) == 0 and relay.alive(), 20 + round(time.monotonic() - elected),
                       interval=0.2)
        check.say(f"queue drained {time.monotonic() - elected:.1f} s after the election "
                  f"({time.monotonic() - killed:.1f} s after the kill)")
        nacked = metric(metrics_port, "pgmq_relay_nacked_total", QUEUE)
        rc = relay.signal(signal.SIGTERM)
        check("SIGTERM exits 0", rc == 0, rc)

        received = drain(second, BROKER_QUEUE)
        ids_by_n = {}
        for message_id, body, _, _ in received:
            ids_by_n.setdefault(body["n"], set()).add(message_id)
        arrived = set(ids_by_n)
        missing = producer.committed - arrived
        check.say(f"{len(producer.committed)} committed, {len(producer.rolled_back)} rolled back; the quorum queue "
                  f"holds {len(received)} ({len(received) - len(arrived)} duplicates); {nacked} nacked publishes")
        check("every committed message is in the quorum queue", not missing,
              f"{len(missing)} missing, e.g. {sorted(missing)[:5]}")
        check("no rolled-back message arrived", not arrived & producer.rolled_back)
        check("a duplicate repeats its original's message-id", all(len(v) == 1 for v in ids_by_n.values()))
        failover = [line for line in relay.text().splitlines() if "broker connected" in line][1:2]
        check("the relay reconnected to a surviving node", bool(failover) and f":{first.port}," not in failover[0],
              failover)
    except Exception as e:
        check("the test ran to its end", False, repr(e))
    finally:
        if producer is not None and producer.is_alive():
            producer.stop()
        if relay is not None:
            if relay.alive():
                relay.signal(signal.SIGKILL)
            if check.failures:
                check.say("last lines of the relay's log:\n" + relay.tail(30))
        cluster.close()
        try:
            Database.drop(DB)
        except Exception as e:
            check.say(f"could not drop {DB}: {e}")
        if check.failures:
            check.say(f"kept {tmp} for inspection")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return check.exit_status()


if __name__ == "__main__":
    sys.exit(main())
