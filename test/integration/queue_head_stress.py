#!/usr/bin/env python3
"""test/integration/queue_head_stress.py: the queue's head (head_hint.hpp)
never hides a message whose id committed out of order.

Producers send in transactions that stay open a random while (so ids commit
out of order), some rolled back, with send and send_batch; consumers read
and delete with the head moved after every read (refresh interval 0) and
the rescan that would repair a wrong head switched off (1 hour). Checked at
the end, after the producers stopped and the consumers found nothing more:
every committed message was read, none that was rolled back, and the queue
is empty. A head that passed a message would leave it in the queue, unread.
Needs pgmq preloaded (the head lives in shared memory); runs in a database
of its own on the cluster in PGHOST/PGPORT/PGUSER.
"""
import random
import sys
import threading
import time

import psycopg

QUEUE = "head_stress"
PRODUCERS = 4
CONSUMERS = 3
SECONDS = 8
DB = "pgmq_head_stress"


def connect(**kw):
    return psycopg.connect(dbname=DB, autocommit=True, **kw)


def main():
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        preloaded = admin.execute("SHOW shared_preload_libraries").fetchone()[0]
        if "pgmq" not in preloaded:
            print("[queue_head_stress] skipped: pgmq is not preloaded, reads have no head")
            return 0
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB}")
    try:
        return run()
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")


def run():
    with connect() as conn:
        conn.execute("CREATE EXTENSION pgmq CASCADE")
        conn.execute("SELECT pgmq.create(%s)", (QUEUE,))
    lock = threading.Lock()
    committed, rolled_back, consumed = set(), set(), []
    errors = []
    stop_producing = threading.Event()
    stop_consuming = threading.Event()

    def producer(seed):
        rnd = random.Random(seed)
        try:
            with connect() as conn:
                while not stop_producing.is_set():
                    conn.execute("BEGIN")
                    ids = []
                    if rnd.random() < 0.5:
                        ids.append(conn.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,)).fetchone()[0])
                    else:
                        n = rnd.randint(1, 5)
                        ids += [r[0] for r in conn.execute(
                            "SELECT * FROM pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[%s]))",
                            (QUEUE, n)).fetchall()]
                    time.sleep(rnd.random() * 0.03)  # others commit higher ids meanwhile
                    if rnd.random() < 0.1:
                        conn.execute("ROLLBACK")
                        with lock:
                            rolled_back.update(ids)
                    else:
                        conn.execute("COMMIT")
                        with lock:
                            committed.update(ids)
        except Exception as e:  # reported below
            errors.append(f"producer: {e}")

    def consumer():
        try:
            with connect() as conn:
                conn.execute("SET pgmq.queue_head_refresh_interval = 0")
                conn.execute("SET pgmq.queue_head_rescan_interval = '1h'")
                empty = 0
                while not (stop_consuming.is_set() and empty >= 20):
                    rows = conn.execute(
                        "SELECT msg_id FROM pgmq.read(%s, 600, 5)", (QUEUE,)).fetchall()
                    ids = [r[0] for r in rows]
                    if ids:
                        empty = 0
                        conn.execute("SELECT pgmq.delete(%s, %s::bigint[])", (QUEUE, ids))
                        with lock:
                            consumed.extend(ids)
                    else:
                        empty += 1
                        time.sleep(0.01)
        except Exception as e:
            errors.append(f"consumer: {e}")

    producers = [threading.Thread(target=producer, args=(i,)) for i in range(PRODUCERS)]
    consumers = [threading.Thread(target=consumer) for _ in range(CONSUMERS)]
    for t in producers + consumers:
        t.start()
    time.sleep(SECONDS)
    stop_producing.set()
    for t in producers:
        t.join()
    stop_consuming.set()
    for t in consumers:
        t.join()

    with connect() as conn:
        left = [r[0] for r in conn.execute(f"SELECT msg_id FROM pgmq.q_{QUEUE} ORDER BY msg_id").fetchall()]
    failures = list(errors)
    consumed_set = set(consumed)
    if len(consumed) != len(consumed_set):
        failures.append(f"{len(consumed) - len(consumed_set)} messages read twice")
    if committed - consumed_set:
        missing = sorted(committed - consumed_set)
        failures.append(f"{len(missing)} committed messages never read (first: {missing[:5]}); "
                        f"still in the queue: {left[:5]}")
    if consumed_set & rolled_back:
        failures.append("a rolled-back message was read")
    if left:
        failures.append(f"{len(left)} messages left in the queue")
    print(f"[queue_head_stress] {len(committed)} committed, {len(rolled_back)} rolled back, "
          f"{len(consumed)} read and deleted")
    for f in failures:
        print(f"[queue_head_stress] FAIL: {f}")
    if failures:
        return 1
    print("[queue_head_stress] passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
