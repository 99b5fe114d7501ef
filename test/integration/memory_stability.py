#!/usr/bin/env python3
"""test/integration/memory_stability.py: one backend, 1,000,000 pgmq calls,
flat memory.

A single session runs a PL/pgSQL procedure that loops send, read, delete on
one queue, committing every 100 iterations (so the backend lives through
many transactions, as a long-lived consumer does), VACUUMing the queue
between batches of iterations. It measures the backend's memory after a
warm-up and then after every batch:

  - the sum of total_bytes over pg_backend_memory_contexts (everything
    palloc'd, including pgmq's plan cache context);
  - RssAnon of the backend process (private memory: malloc and C++ heap
    too; shared buffers are not counted), when /proc/<pid>/status is
    readable (the test runs on the server's host).

It fails if either grows beyond a small allowance from the warm-up level to
the end, or grows steadily (the last third of samples all above the first
third's maximum by more than the allowance). PGMQ_MEMORY_CALLS sets the
number of calls (default 1,000,000, i.e. 333,334 iterations of three calls).

Runs in a database of its own on the cluster in PGHOST/PGPORT/PGUSER.
"""
import os
import sys
import time

import psycopg

CALLS = int(os.environ.get("PGMQ_MEMORY_CALLS", "1000000"))
ITERATIONS = (CALLS + 2) // 3
BATCH = 20_000          # iterations between measurements (and VACUUMs)
WARMUP = 5_000
CONTEXT_ALLOWANCE = 256 * 1024      # bytes of palloc'd memory
RSS_ALLOWANCE = 4 * 1024 * 1024     # bytes of process memory

PROCEDURE = """
CREATE PROCEDURE churn(iterations integer) LANGUAGE plpgsql AS $$
DECLARE
    sent bigint;
    got bigint;
BEGIN
    FOR i IN 1..iterations LOOP
        SELECT s INTO sent FROM pgmq.send('memory', '{"payload": "x"}'::jsonb) AS s;
        SELECT msg_id INTO got FROM pgmq.read('memory', 30, 1);
        IF got IS DISTINCT FROM sent THEN
            RAISE EXCEPTION 'read % after sending %', got, sent;
        END IF;
        IF NOT pgmq.delete('memory', got) THEN
            RAISE EXCEPTION 'delete % found nothing', got;
        END IF;
        IF i % 100 = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
END $$
"""


def rss_anon(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def measure(conn, pid):
    contexts = conn.execute("SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts").fetchone()[0]
    plan_cache = conn.execute("SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts "
                              "WHERE name = 'pgmq plan cache'").fetchone()[0]
    return contexts, plan_cache, rss_anon(pid)


def grows_steadily(values, allowance):
    """True when the last third of the samples all lie above the first third's maximum + allowance."""
    if len(values) < 6:
        return False
    third = len(values) // 3
    return min(values[-third:]) > max(values[:third]) + allowance


def main():
    dbname = "pgmq_memory_%d" % os.getpid()
    admin = psycopg.connect(dbname="postgres", autocommit=True)
    admin.execute('CREATE DATABASE "%s"' % dbname)
    problems = []
    try:
        with psycopg.connect(dbname=dbname, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pgmq")
            conn.execute("SELECT pgmq.create('memory')")
            conn.execute(PROCEDURE)
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            conn.execute("CALL churn(%d)" % WARMUP)
            conn.execute("VACUUM pgmq.q_memory")
            start = measure(conn, pid)
            samples = [start]
            done = WARMUP
            started = time.monotonic()
            while done < ITERATIONS:
                n = min(BATCH, ITERATIONS - done)
                conn.execute("CALL churn(%d)" % n)
                conn.execute("VACUUM pgmq.q_memory")
                done += n
                samples.append(measure(conn, pid))
            elapsed = time.monotonic() - started
            end = samples[-1]
            left = conn.execute("SELECT count(*) FROM pgmq.q_memory").fetchone()[0]
            if left:
                problems.append("%d messages left in the queue" % left)
    finally:
        admin.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % dbname)

    calls = 3 * (done - WARMUP)
    print("%d calls (send, read, delete x %d) in one backend in %.1f s (%.0f calls/s), after %d warm-up iterations"
          % (calls, done - WARMUP, elapsed, calls / elapsed, WARMUP))
    print("memory contexts: %d -> %d bytes (max %d); pgmq plan cache: %d -> %d bytes"
          % (start[0], end[0], max(s[0] for s in samples), start[1], end[1]))
    contexts = [s[0] for s in samples]
    if end[0] - start[0] > CONTEXT_ALLOWANCE or grows_steadily(contexts, CONTEXT_ALLOWANCE):
        problems.append("memory contexts grew: %r" % contexts)
    if end[1] != start[1]:
        problems.append("the plan cache grew from %d to %d bytes" % (start[1], end[1]))
    if start[2] is not None and end[2] is not None:
        rss = [s[2] for s in samples]
        print("RssAnon: %d -> %d kB (max %d kB)" % (start[2] // 1024, end[2] // 1024, max(rss) // 1024))
        if end[2] - start[2] > RSS_ALLOWANCE or grows_steadily(rss, RSS_ALLOWANCE):
            problems.append("RssAnon grew: %r" % [r // 1024 for r in rss])
    else:
        print("RssAnon: not readable here (the server runs elsewhere); memory contexts only")
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print("memory flat")
    return 0


if __name__ == "__main__":
    sys.exit(main())
