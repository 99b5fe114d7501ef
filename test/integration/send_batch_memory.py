#!/usr/bin/python3
"""test/integration/send_batch_memory.py: send_batch returns its ids in
bounded memory. Its rows stream into the result's tuplestore, which spills to
disk beyond work_mem, instead of first being collected in SPI_tuptable (which
took 54 MB more for 500,000 messages).

The measure is the backend's peak private memory (RssAnon in /proc, sampled
every 2 ms while the statement runs), so this must run on the server's host,
as test/run does. The statement's input array alone is measured the same way
in a fresh backend; send_batch may add at most LIMIT_MB to it.

Runs against PGHOST/PGPORT/PGUSER; exit 0 is a pass.
"""
import sys
import threading
import time

import psycopg

DB = "pgmq_it_batch_memory"
MESSAGES = 500000
LIMIT_MB = 25
ARRAY_SQL = "ARRAY(SELECT pg_catalog.jsonb_build_object('i', g) FROM pg_catalog.generate_series(1, %s) AS g)"


def admin(sql):
    with psycopg.connect(dbname="postgres", autocommit=True) as conn:
        conn.execute(sql)


def rss_anon_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_of(sql, params):
    """Runs sql in a fresh backend; returns (its peak RssAnon in MB, the first column of its row)."""
    with psycopg.connect(dbname=DB, autocommit=True) as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        peak = [rss_anon_mb(pid)]
        running = [True]

        def sample():
            while running[0]:
                peak[0] = max(peak[0], rss_anon_mb(pid))
                time.sleep(0.002)
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            value = conn.execute(sql, params).fetchone()[0]
        finally:
            running[0] = False
            sampler.join()
        return peak[0], value


def main():
    admin(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    admin(f"CREATE DATABASE {DB}")
    try:
        with psycopg.connect(dbname=DB, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pgmq")
            conn.execute("SELECT pgmq.create('big')")
        array_peak, _ = peak_of(f"SELECT pg_catalog.cardinality({ARRAY_SQL})", (MESSAGES,))
        batch_peak, returned = peak_of(f"SELECT count(*) FROM pgmq.send_batch('big', {ARRAY_SQL})", (MESSAGES,))
        extra = batch_peak - array_peak
        ok = returned == MESSAGES and extra <= LIMIT_MB
        print(f"[send_batch_memory] {'ok' if ok else 'FAIL'}: send_batch of {MESSAGES} messages returned {returned}"
              f" ids with a peak of {batch_peak:.0f} MB, {extra:.0f} MB over the input array's {array_peak:.0f} MB"
              f" (limit {LIMIT_MB} MB)")
        return 0 if ok else 1
    finally:
        admin(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")


if __name__ == "__main__":
    sys.exit(main())
