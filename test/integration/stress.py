#!/usr/bin/env python3
"""test/integration/stress.py: 4 producers and 8 consumers on one queue.

Producers send 100,000 messages (send_batch of 1 to 50 messages, and single
sends), each carrying a unique (producer, sequence) key. Consumers read with a
visibility timeout far longer than the run, then delete what they read; half
of them read with read(), half with read_with_poll(), so waiting consumers
are woken by producers' commits. Checked at the end:

  - every message sent was delivered exactly once (by key and by msg_id),
    with read_ct 1, and deleted exactly once (delete returned its id once);
  - no message was delivered that was not sent;
  - msg_ids are unique and the queue is empty afterwards.

PGMQ_STRESS_MESSAGES sets the count (default 100000) for quick runs. Runs in
a database of its own on the cluster in PGHOST/PGPORT/PGUSER.
"""
import os
import random
import sys
import threading
import time

import psycopg

MESSAGES = int(os.environ.get("PGMQ_STRESS_MESSAGES", "100000"))
PRODUCERS = 4
CONSUMERS = 8
QUEUE = "stress"
TIME_LIMIT = 240  # seconds; the run takes far less


class Shared:
    def __init__(self):
        self.lock = threading.Lock()
        self.deleted = 0
        self.stop = threading.Event()
        self.errors = []

    def error(self, text):
        with self.lock:
            self.errors.append(text)
        self.stop.set()


def producer(dbname, index, count, shared, sent_ids):
    rng = random.Random(index)
    try:
        with psycopg.connect(dbname=dbname, autocommit=True) as conn:
            seq = 0
            while seq < count and not shared.stop.is_set():
                n = min(count - seq, rng.choice((1, 1, 5, 20, 50)))
                keys = ['{"p": %d, "s": %d}' % (index, seq + i) for i in range(n)]
                if n == 1:
                    rows = conn.execute("SELECT * FROM pgmq.send(%s, %s::jsonb)", (QUEUE, keys[0])).fetchall()
                else:
                    rows = conn.execute("SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])", (QUEUE, keys)).fetchall()
                if len(rows) != n:
                    shared.error("producer %d: %d ids for %d messages" % (index, len(rows), n))
                    return
                sent_ids.extend(r[0] for r in rows)
                seq += n
    except Exception as e:  # noqa: BLE001 - any failure fails the run
        shared.error("producer %d: %r" % (index, e))


def consumer(dbname, index, shared, delivered, deleted_ids):
    poll = index % 2 == 1
    try:
        with psycopg.connect(dbname=dbname, autocommit=True) as conn:
            while not shared.stop.is_set():
                if poll:
                    rows = conn.execute(
                        "SELECT msg_id, read_ct, message->>'p', message->>'s' "
                        "FROM pgmq.read_with_poll(%s, 600, 10, 1, 50)", (QUEUE,)).fetchall()
                else:
                    rows = conn.execute(
                        "SELECT msg_id, read_ct, message->>'p', message->>'s' "
                        "FROM pgmq.read(%s, 600, 10)", (QUEUE,)).fetchall()
                if not rows:
                    with shared.lock:
                        if shared.deleted >= MESSAGES:
                            return
                    if not poll:
                        time.sleep(0.01)
                    continue
                delivered.extend(rows)
                ids = [r[0] for r in rows]
                gone = [r[0] for r in conn.execute("SELECT * FROM pgmq.delete(%s, %s::bigint[])",
                                                   (QUEUE, ids)).fetchall()]
                deleted_ids.extend(gone)
                with shared.lock:
                    shared.deleted += len(gone)
                    if shared.deleted >= MESSAGES:
                        shared.stop.set()
    except Exception as e:  # noqa: BLE001
        shared.error("consumer %d: %r" % (index, e))


def check(conn, sent_ids, delivered, deleted_ids):
    problems = []
    if len(sent_ids) != MESSAGES or len(set(sent_ids)) != MESSAGES:
        problems.append("sent %d ids, %d distinct, expected %d" % (len(sent_ids), len(set(sent_ids)), MESSAGES))
    ids = [r[0] for r in delivered]
    keys = [(int(r[2]), int(r[3])) for r in delivered]
    if len(ids) != len(set(ids)):
        problems.append("%d deliveries of %d distinct msg_ids" % (len(ids), len(set(ids))))
    if len(keys) != len(set(keys)):
        problems.append("%d deliveries of %d distinct keys" % (len(keys), len(set(keys))))
    expected_keys = {(p, s) for p in range(PRODUCERS) for s in range(MESSAGES // PRODUCERS + (p < MESSAGES % PRODUCERS))}
    if set(keys) != expected_keys:
        problems.append("keys delivered != keys sent: %d missing, %d unexpected"
                        % (len(expected_keys - set(keys)), len(set(keys) - expected_keys)))
    if set(ids) != set(sent_ids):
        problems.append("msg_ids delivered != msg_ids sent")
    redelivered = [r for r in delivered if r[1] != 1]
    if redelivered:
        problems.append("%d deliveries with read_ct != 1, e.g. %r" % (len(redelivered), redelivered[:3]))
    if len(deleted_ids) != MESSAGES or len(set(deleted_ids)) != MESSAGES or set(deleted_ids) != set(sent_ids):
        problems.append("deleted %d ids, %d distinct" % (len(deleted_ids), len(set(deleted_ids))))
    left = conn.execute("SELECT count(*) FROM pgmq.q_stress").fetchone()[0]
    if left:
        problems.append("%d messages left in the queue" % left)
    archived = conn.execute("SELECT count(*) FROM pgmq.a_stress").fetchone()[0]
    if archived:
        problems.append("%d messages in the archive" % archived)
    total = conn.execute("SELECT total_messages FROM pgmq.metrics(%s)", (QUEUE,)).fetchone()[0]
    if total != MESSAGES:
        problems.append("metrics.total_messages is %d" % total)
    return problems


def main():
    dbname = "pgmq_stress_%d" % os.getpid()
    admin = psycopg.connect(dbname="postgres", autocommit=True)
    admin.execute('CREATE DATABASE "%s"' % dbname)
    try:
        with psycopg.connect(dbname=dbname, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pgmq")
            conn.execute("SELECT pgmq.create(%s)", (QUEUE,))
            shared = Shared()
            sent_ids, delivered, deleted_ids = [], [], []
            per_producer = [MESSAGES // PRODUCERS + (p < MESSAGES % PRODUCERS) for p in range(PRODUCERS)]
            threads = [threading.Thread(target=consumer, args=(dbname, i, shared, delivered, deleted_ids))
                       for i in range(CONSUMERS)]
            threads += [threading.Thread(target=producer, args=(dbname, p, per_producer[p], shared, sent_ids))
                        for p in range(PRODUCERS)]
            started = time.monotonic()
            for t in threads:
                t.start()
            deadline = started + TIME_LIMIT
            for t in threads:
                t.join(max(0.0, deadline - time.monotonic()))
            elapsed = time.monotonic() - started
            if any(t.is_alive() for t in threads):
                shared.error("not finished after %d s (%d of %d deleted)" % (TIME_LIMIT, shared.deleted, MESSAGES))
                for t in threads:
                    t.join(30)
            problems = shared.errors + check(conn, sent_ids, delivered, deleted_ids)
    finally:
        admin.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % dbname)
    print("%d producers, %d consumers, %d messages: %d delivered, %d deleted in %.1f s (%.0f messages/s)"
          % (PRODUCERS, CONSUMERS, MESSAGES, len(delivered), len(deleted_ids), elapsed, MESSAGES / elapsed))
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print("every message delivered exactly once and deleted exactly once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
