#!/usr/bin/python3
"""bench/wakeup.py: read_with_poll wake-up latency and the CPU a waiting
consumer burns. Connects through libpq's environment (PGHOST, PGDATABASE...).

Latency of one trial: a consumer waits in read_with_poll (poll interval
100 ms) on an empty queue; a sender commits one message at a random phase of
that interval; latency = the time read_with_poll's result reaches the
consumer - the time the sender's COMMIT returned. Both clocks are this
process's time.monotonic(), so it can be slightly negative."""
import argparse
import os
import random
import statistics
import threading
import time

import psycopg

POLL_MS = 100


def wait_until_waiting(conn, pid):
    """Returns once the backend pid sleeps inside a statement (or after 2 s)."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        row = conn.execute("SELECT state = 'active' AND wait_event_type IN ('Extension', 'IPC', 'Timeout')"
                           " FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        if row and row[0]:
            return
        time.sleep(0.001)


def start_consumer(conn, max_poll_seconds):
    """Runs read_with_poll in a thread; the returned dict gets 'at' (its
    return time) and 'rows'."""
    result = {}

    def consume():
        rows = conn.execute("SELECT msg_id FROM pgmq.read_with_poll('wq', 30, 1, %s, %s)",
                            (max_poll_seconds, POLL_MS)).fetchall()
        result['at'] = time.monotonic()
        result['rows'] = rows
    thread = threading.Thread(target=consume)
    thread.start()
    return thread, result


def send(conn):
    """Sends one message and returns the time its COMMIT returned."""
    conn.execute("BEGIN")
    conn.execute("SELECT pgmq.send('wq', '{\"wake\": 1}')")
    conn.execute("COMMIT")
    return time.monotonic()


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--cpu-seconds", type=float, default=4)
    parser.add_argument("--label", default="preloaded")
    args = parser.parse_args()

    consumer = psycopg.connect(autocommit=True)
    sender = psycopg.connect(autocommit=True)
    sender.execute("SET client_min_messages = warning")
    sender.execute("SELECT pgmq.create('wq')")
    sender.execute("SELECT pgmq.purge_queue('wq')")
    pid = consumer.execute("SELECT pg_backend_pid()").fetchone()[0]

    latencies = []
    for _ in range(args.trials):
        thread, result = start_consumer(consumer, 5)
        wait_until_waiting(sender, pid)
        time.sleep(random.uniform(0, POLL_MS / 1000))
        committed = send(sender)
        thread.join()
        if not result.get('rows'):
            raise SystemExit("read_with_poll returned no message")
        latencies.append((result['at'] - committed) * 1000)
        sender.execute("SELECT pgmq.delete('wq', %s)", (result['rows'][0][0],))

    thread, result = start_consumer(consumer, int(args.cpu_seconds) + 3)
    wait_until_waiting(sender, pid)
    before = cpu_ticks(pid)
    time.sleep(args.cpu_seconds)
    used = (cpu_ticks(pid) - before) / os.sysconf("SC_CLK_TCK")
    send(sender)
    thread.join()
    sender.execute("SELECT pgmq.drop_queue('wq')")

    q = statistics.quantiles(latencies, n=100, method="inclusive")
    label = args.label
    print(f"wakeup_trials_{label} {len(latencies)} trials")
    print(f"wakeup_p50_{label} {statistics.median(latencies):.2f} ms")
    print(f"wakeup_p90_{label} {q[89]:.2f} ms")
    print(f"wakeup_p99_{label} {q[98]:.2f} ms")
    print(f"waiting_cpu_{label} {100 * used / args.cpu_seconds:.2f} %core")


if __name__ == "__main__":
    main()
