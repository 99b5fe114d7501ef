#!/usr/bin/python3
"""bench/streams_latency.py (run by bench/streams.sh): the time from a
send's COMMIT to a waiting consumer getting the message, for a stream's
group (read_stream_with_poll) and for a queue (read_with_poll), trials of the
two taking turns. Connects through libpq's environment (PGHOST, PGDATABASE...).

One trial: the consumer waits (poll interval 100 ms) on an empty stream or
queue; a sender commits one message at a random phase of that interval;
latency = the time the consumer's call returned - the time the sender's
COMMIT returned, both this process's time.monotonic() (so it can be slightly
negative). The consumer then acknowledges (stream) or deletes (queue) it."""
import argparse
import random
import statistics
import threading
import time

import psycopg

POLL_MS = 100
READ = {
    "stream": "SELECT msg_id FROM pgmq.read_stream_with_poll('ls', 'g', 30, 1, 5, %s)" % POLL_MS,
    "queue": "SELECT msg_id FROM pgmq.read_with_poll('lq', 30, 1, 5, %s)" % POLL_MS,
}
DONE = {
    "stream": "SELECT pgmq.ack('ls', 'g', %s::bigint)",
    "queue": "SELECT pgmq.delete('lq', %s::bigint)",
}
TARGET = {"stream": "ls", "queue": "lq"}


def wait_until_waiting(conn, pid):
    """Returns once the backend pid waits inside its statement (or after 1 s)."""
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline:
        row = conn.execute("SELECT state = 'active' AND wait_event IS NOT NULL"
                           " AND wait_event_type NOT IN ('Client', 'Activity')"
                           " FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        if row and row[0]:
            return
        time.sleep(0.001)


def trial(kind, consumer, pid, sender):
    result = {}

    def consume():
        result["rows"] = consumer.execute(READ[kind]).fetchall()
        result["at"] = time.monotonic()
    thread = threading.Thread(target=consume)
    thread.start()
    wait_until_waiting(sender, pid)
    time.sleep(random.uniform(0, POLL_MS / 1000))
    sender.execute("BEGIN")
    sender.execute("SELECT pgmq.send(%s, '{\"wake\": 1}')", (TARGET[kind],))
    sender.execute("COMMIT")
    committed = time.monotonic()
    thread.join()
    if not result.get("rows"):
        raise SystemExit(f"{kind}: the poll returned no message")
    consumer.execute(DONE[kind], (result["rows"][0][0],))
    return (result["at"] - committed) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=300)
    args = parser.parse_args()

    consumer = psycopg.connect(autocommit=True)
    sender = psycopg.connect(autocommit=True)
    sender.execute("SET client_min_messages = warning")
    sender.execute("SELECT pgmq.create_stream('ls')")
    sender.execute("SELECT pgmq.subscribe('ls', 'g')")
    sender.execute("SELECT pgmq.create('lq')")
    pid = consumer.execute("SELECT pg_backend_pid()").fetchone()[0]

    latencies = {"stream": [], "queue": []}
    for _ in range(2):  # warm-up: plans, caches
        for kind in latencies:
            trial(kind, consumer, pid, sender)
    for i in range(args.trials):
        for kind in (("stream", "queue") if i % 2 == 0 else ("queue", "stream")):
            latencies[kind].append(trial(kind, consumer, pid, sender))

    for kind, values in latencies.items():
        q = statistics.quantiles(values, n=100, method="inclusive")
        print(f"{kind}_latency_p50 {statistics.median(values):.2f} ms")
        print(f"{kind}_latency_p99 {q[98]:.2f} ms")
    print(f"latency_trials {args.trials} trials")


if __name__ == "__main__":
    main()
