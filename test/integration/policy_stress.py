#!/usr/bin/env python3
"""test/integration/policy_stress.py: delivery policies under concurrency.

Dead letters: 2,000 messages on a queue with max_deliveries 3; 6 consumers
read (half read(), half read_grouped_rr() on a grouped copy) with a
visibility timeout of 0 and never delete, so every message is redelivered
until it is moved. At the end each message is in the dead-letter queue
exactly once, none is left in the queue, and each was delivered exactly 3
times in all (never 4: a message is never both delivered and moved, and
never delivered past the limit).

Deduplication: 6 producers each send the same 1,000 ids (single sends and
batches that repeat ids), in random order and transaction sizes, some of
them rolled back. At the end each id committed by anyone is exactly one
message, and every committed send of an id returned that message's msg_id.

PGMQ_POLICY_STRESS_MESSAGES scales both counts. Runs in a database of its
own on the cluster in PGHOST/PGPORT/PGUSER.
"""
import collections
import os
import random
import sys
import threading
import time

import psycopg

N = int(os.environ.get("PGMQ_POLICY_STRESS_MESSAGES", "2000"))
MAX_DELIVERIES = 3
WORKERS = 6
DB = "pgmq_it_policy_stress_%d" % os.getpid()


def connect(dbname=DB):
    return psycopg.connect(dbname=dbname, autocommit=True)


def fail(text):
    print("FAIL: " + text, flush=True)
    sys.exit(1)


def dead_letters(errors):
    with connect() as c:
        for q in ("dl_plain", "dl_grouped", "dl_dead"):
            c.execute("SELECT pgmq.create(%s)", (q,))
        c.execute("SELECT pgmq.set_dead_letter_queue('dl_plain', 'dl_dead', %s)", (MAX_DELIVERIES,))
        c.execute("SELECT pgmq.set_dead_letter_queue('dl_grouped', 'dl_dead', %s)", (MAX_DELIVERIES,))
        c.execute("SELECT pgmq.create_fifo_index('dl_grouped')")
        half = N // 2
        c.execute("SELECT count(*) FROM pgmq.send_batch('dl_plain', (SELECT array_agg(jsonb_build_object('k', i)) "
                  "FROM generate_series(1, %s::int) i))", (half,))
        c.execute("SELECT count(*) FROM pgmq.send_batch('dl_grouped', (SELECT array_agg(jsonb_build_object('k', i)) "
                  "FROM generate_series(%s::int, %s::int) i), (SELECT array_agg(jsonb_build_object('x-pgmq-group', i %% 17)) "
                  "FROM generate_series(%s::int, %s::int) i))", (half + 1, N, half + 1, N))
    deliveries = collections.Counter()
    lock = threading.Lock()

    def consumer(index):
        statement = ("SELECT message->>'k', read_ct FROM pgmq.read('dl_plain', 0, 7)" if index % 2 == 0 else
                     "SELECT message->>'k', read_ct FROM pgmq.read_grouped_rr('dl_grouped', 0, 7)")
        try:
            with connect() as c:
                deadline = time.monotonic() + 240
                while time.monotonic() < deadline:
                    rows = c.execute(statement).fetchall()
                    # Done when both queues are empty (another consumer may
                    # hold the last messages for a moment).
                    if not rows and c.execute("SELECT NOT EXISTS (SELECT FROM pgmq.q_dl_plain) AND "
                                              "NOT EXISTS (SELECT FROM pgmq.q_dl_grouped)").fetchone()[0]:
                        break
                    with lock:
                        for key, read_ct in rows:
                            deliveries[int(key)] += 1
                            if read_ct > MAX_DELIVERIES:
                                errors.append("message %s delivered with read_ct %d" % (key, read_ct))
        except psycopg.Error as e:
            errors.append("consumer %d: %s" % (index, e))

    threads = [threading.Thread(target=consumer, args=(i,)) for i in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    with connect() as c:
        left = c.execute("SELECT count(*) FROM pgmq.q_dl_plain").fetchone()[0] + \
            c.execute("SELECT count(*) FROM pgmq.q_dl_grouped").fetchone()[0]
        dead = c.execute("SELECT (message->>'k')::int, count(*), min((headers->'x-pgmq-dead-letter'->>'read_ct')::int), "
                         "max((headers->'x-pgmq-dead-letter'->>'read_ct')::int) FROM pgmq.q_dl_dead GROUP BY 1").fetchall()
    if left:
        errors.append("%d messages left in the queues" % left)
    if len(dead) != N:
        errors.append("%d distinct messages dead-lettered, expected %d" % (len(dead), N))
    for key, count, low, high in dead:
        if count != 1:
            errors.append("message %d dead-lettered %d times" % (key, count))
        if low != MAX_DELIVERIES or high != MAX_DELIVERIES:
            errors.append("message %d moved with read_ct %s..%s" % (key, low, high))
    wrong = [k for k in range(1, N + 1) if deliveries[k] != MAX_DELIVERIES]
    if wrong:
        errors.append("%d messages not delivered exactly %d times, e.g. %d: %d" %
                      (len(wrong), MAX_DELIVERIES, wrong[0], deliveries[wrong[0]]))
    print("dead letters: %d messages, %d deliveries, all moved once after %d deliveries"
          % (N, sum(deliveries.values()), MAX_DELIVERIES), flush=True)


def deduplication(errors):
    ids = N // 2
    with connect() as c:
        c.execute("SELECT pgmq.create('dd')")
        c.execute("SELECT pgmq.set_deduplication('dd', '1 hour')")
    returned = collections.defaultdict(set)  # id -> msg_ids returned by committed sends
    lock = threading.Lock()
    deadlocks = [0]

    def producer(index):
        rng = random.Random(index)
        order = list(range(ids))
        rng.shuffle(order)
        try:
            with connect() as c:
                pos = 0
                while pos < len(order):
                    chunk = order[pos:pos + rng.choice((1, 1, 3, 10))]
                    pos += len(chunk)
                    rollback = rng.random() < 0.1
                    got = []
                    try:
                        with c.transaction(force_rollback=rollback):
                            if len(chunk) == 1 or rng.random() < 0.5:
                                for i in chunk:
                                    row = c.execute("SELECT * FROM pgmq.send('dd', %s::jsonb, %s::jsonb)",
                                                    ('{"p": %d}' % index,
                                                     '{"x-pgmq-deduplication-id": "id-%d"}' % i)).fetchone()
                                    got.append((i, row[0]))
                            else:
                                batch = chunk + chunk[:1]  # a repeat inside the batch
                                rows = c.execute("SELECT * FROM pgmq.send_batch('dd', %s::jsonb[], %s::jsonb[])",
                                                 (['{"p": %d}' % index] * len(batch),
                                                  ['{"x-pgmq-deduplication-id": "id-%d"}' % i for i in batch])).fetchall()
                                got.extend((i, r[0]) for i, r in zip(batch, rows))
                    except psycopg.errors.DeadlockDetected:
                        # Two producers sending the same ids in other orders
                        # wait on each other, as any unique inserts do;
                        # PostgreSQL rolls one back (docs/errors.md, 40P01).
                        rollback = True
                        with lock:
                            deadlocks[0] += 1
                    if not rollback:
                        with lock:
                            for i, msg_id in got:
                                returned[i].add(msg_id)
        except psycopg.Error as e:
            errors.append("producer %d: %s" % (index, e))

    threads = [threading.Thread(target=producer, args=(i,)) for i in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    with connect() as c:
        stored = dict(c.execute("SELECT deduplication_id, msg_id FROM pgmq.deduplication WHERE queue_name = 'dd'").fetchall())
        messages = dict(c.execute("SELECT headers->>'x-pgmq-deduplication-id', count(*) FROM pgmq.q_dd GROUP BY 1").fetchall())
        ids_of = dict(c.execute("SELECT headers->>'x-pgmq-deduplication-id', min(msg_id) FROM pgmq.q_dd GROUP BY 1").fetchall())
    for i, msg_ids in returned.items():
        key = "id-%d" % i
        if messages.get(key) != 1:
            errors.append("%s: %s messages" % (key, messages.get(key)))
        elif msg_ids != {ids_of[key]} or stored.get(key) != ids_of[key]:
            errors.append("%s: sends returned %s, the message is %s, the row names %s" %
                          (key, sorted(msg_ids), ids_of[key], stored.get(key)))
    extra = set(messages) - {"id-%d" % i for i in returned}
    if extra:
        errors.append("%d messages of ids no committed send returned" % len(extra))
    print("deduplication: %d ids committed by %d producers, one message each, every send returned it "
          "(%d transactions rolled back by a deadlock)" % (len(returned), WORKERS, deadlocks[0]), flush=True)


def main():
    with connect("postgres") as admin:
        admin.execute('CREATE DATABASE "%s"' % DB)
    try:
        with connect() as c:
            c.execute("CREATE EXTENSION pgmq")
        errors = []
        dead_letters(errors)
        deduplication(errors)
        for e in errors[:20]:
            print("FAIL: " + e, flush=True)
        if errors:
            sys.exit(1)
        print("policies under concurrency: passed")
    finally:
        with connect("postgres") as admin:
            admin.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % DB)


if __name__ == "__main__":
    main()
