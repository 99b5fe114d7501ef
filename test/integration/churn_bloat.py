#!/usr/bin/env python3
"""test/integration/churn_bloat.py: the queue table's size stays bounded
under a long send/read/delete churn, with autovacuum at its defaults.

Two producers send_batch, two consumers read(queue, 30, 50) and delete the
batch they read, for RUN_SECONDS, keeping a steady backlog of about
BACKLOG messages. Every SAMPLE_SECONDS the script records the queue table's
heap size (pg_relation_size), its total size (pg_total_relation_size), each
index's size, n_live_tup / n_dead_tup / autovacuum_count from
pg_stat_user_tables and the messages processed so far, and prints them as a
table at the end.

It passes when, without any server setting changed (the cluster runs
docker/postgresql.conf, autovacuum at its defaults):

  - autovacuum vacuumed the queue table at least once during the run (so the
    bound below is autovacuum's doing, not an idle table's);
  - over the last third of the run, the table (heap and indexes) grew by at
    most GROWTH_PER_WRITTEN_BOUND times the row versions written meanwhile
    (messages processed x 2 x the average row size): a table that never
    reuses space grows by at least all of them (see the comment at
    GROWTH_PER_WRITTEN_BOUND).

Runs in a database of its own on the cluster in PGHOST/PGPORT/PGUSER, which
it drops at the end. Exit 0 when every check held.
"""
import os
import sys
import threading
import time

import psycopg

QUEUE = "churn"
RUN_SECONDS = float(os.environ.get("PGMQ_CHURN_SECONDS", "150"))
# Two autovacuum visits (naptime 60 s) must fall inside the run, see below.
MIN_RUN_SECONDS = 130
SAMPLE_SECONDS = 10.0
BACKLOG = 3000          # consumers read only while more messages than this wait
# Messages per second, both producers together. A fixed rate, not as fast as
# the machine goes, so that the figures (and the bound) do not depend on the
# machine: the size a queue table settles at is about the churn between two
# autovacuum visits, rate x naptime.
RATE = float(os.environ.get("PGMQ_CHURN_RATE", "3000"))
SEND_BATCH = 50
READ_VT = 30
READ_QTY = 50
# Boundedness, judged over the last third of the run: how much the table
# (heap and indexes) grew there, against the row versions written there
# (each message writes two: send inserts one, read's UPDATE of vt, an indexed
# column, writes a second that is never HOT). A table that never reuses space
# grows by at least what is written (ratio >= 1). Autovacuum visits a
# database once per naptime (60 s), so by t = 120 s the queue table has been
# vacuumed twice and grows only into reclaimed space; the span starts at
# t = 100 s, so at worst 20 s of it precede that visit (ratio about 0.4).
# Measured at 3000 messages/s: 0.01 and 0.08 (docs/monitoring.md).
GROWTH_PER_WRITTEN_BOUND = 0.6

PAYLOAD = '{"order": 12345, "customer": "c-0042", "items": [1, 2, 3], "note": "churn test payload"}'


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.sent = 0
        self.deleted = 0
        self.errors = []

    def add(self, sent=0, deleted=0):
        with self.lock:
            self.sent += sent
            self.deleted += deleted

    def snapshot(self):
        with self.lock:
            return self.sent, self.deleted


def producer(dbname, stop, counters):
    try:
        with psycopg.connect(dbname=dbname, autocommit=True) as conn:
            batch = [PAYLOAD] * SEND_BATCH
            interval = SEND_BATCH / (RATE / 2)
            next_at = time.monotonic()
            while not stop.is_set():
                delay = next_at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                conn.execute("SELECT pgmq.send_batch(%s, %s::jsonb[])", (QUEUE, batch))
                counters.add(sent=SEND_BATCH)
                next_at += interval
    except Exception as e:  # reported by main
        counters.errors.append("producer: %r" % e)
        stop.set()


def consumer(dbname, stop, counters):
    try:
        with psycopg.connect(dbname=dbname, autocommit=True) as conn:
            while not stop.is_set():
                sent, deleted = counters.snapshot()
                if sent - deleted <= BACKLOG:
                    time.sleep(0.005)
                    continue
                ids = [r[0] for r in conn.execute(
                    "SELECT msg_id FROM pgmq.read(%s, %s, %s)", (QUEUE, READ_VT, READ_QTY))]
                if not ids:
                    time.sleep(0.005)
                    continue
                n = len(conn.execute("SELECT pgmq.delete(%s, %s::bigint[])",
                                     (QUEUE, ids)).fetchall())
                counters.add(deleted=len(ids))
                if n < 1:
                    raise RuntimeError("delete returned nothing for %d ids" % len(ids))
    except Exception as e:
        counters.errors.append("consumer: %r" % e)
        stop.set()


def sample(conn, t, counters):
    table = "pgmq.q_" + QUEUE
    heap, total = conn.execute(
        "SELECT pg_relation_size(%s::regclass), pg_total_relation_size(%s::regclass)",
        (table, table)).fetchone()
    indexes = dict(conn.execute(
        "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) "
        "FROM pg_index WHERE indrelid = %s::regclass ORDER BY 1", (table,)).fetchall())
    # Statistics are flushed by other backends at most once a second; clear
    # this transaction's snapshot of them so every sample reads fresh ones.
    conn.execute("SELECT pg_stat_clear_snapshot()")
    live, dead, av, vac = conn.execute(
        "SELECT n_live_tup, n_dead_tup, autovacuum_count, vacuum_count "
        "FROM pg_stat_user_tables WHERE relid = %s::regclass", (table,)).fetchone()
    sent, deleted = counters.snapshot()
    return dict(t=t, heap=heap, total=total, indexes=indexes, live=live, dead=dead,
                autovacuum=av, vacuum=vac, sent=sent, deleted=deleted)


def kb(n):
    return "%d" % (n // 1024)


def print_table(samples):
    idx_names = list(samples[0]["indexes"])
    short = [n.split(".")[-1] for n in idx_names]
    head = ["t_s", "heap_kB", "total_kB"] + [s + "_kB" for s in short] + \
        ["live_tup", "dead_tup", "autovac", "processed"]
    rows = [head]
    for s in samples:
        rows.append(["%.0f" % s["t"], kb(s["heap"]), kb(s["total"])] +
                    [kb(s["indexes"].get(n, 0)) for n in idx_names] +
                    [str(s["live"]), str(s["dead"]), str(s["autovacuum"]), str(s["deleted"])])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))


def main():
    if RUN_SECONDS < MIN_RUN_SECONDS:
        print("churn_bloat: PGMQ_CHURN_SECONDS=%g is too short to judge autovacuum "
              "(at least %d s)" % (RUN_SECONDS, MIN_RUN_SECONDS))
        return 1
    dbname = "pgmq_churn_%d" % os.getpid()
    admin = psycopg.connect(dbname="postgres", autocommit=True)
    admin.execute('CREATE DATABASE "%s"' % dbname)
    failures = []
    try:
        with psycopg.connect(dbname=dbname, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pgmq")
            conn.execute("SELECT pgmq.create(%s)", (QUEUE,))
            av_settings = dict(conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN "
                "('autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_scale_factor', "
                "'autovacuum_vacuum_threshold', 'autovacuum_vacuum_insert_scale_factor')"
            ).fetchall())
            print("autovacuum settings: %s" % ", ".join(
                "%s=%s" % kv for kv in sorted(av_settings.items())))

            stop = threading.Event()
            counters = Counters()
            threads = [threading.Thread(target=producer, args=(dbname, stop, counters))
                       for _ in range(2)]
            threads += [threading.Thread(target=consumer, args=(dbname, stop, counters))
                        for _ in range(2)]
            start = time.monotonic()
            for th in threads:
                th.start()
            samples = []
            try:
                next_at = start + SAMPLE_SECONDS
                while time.monotonic() - start < RUN_SECONDS and not stop.is_set():
                    time.sleep(max(0.0, next_at - time.monotonic()))
                    next_at += SAMPLE_SECONDS
                    samples.append(sample(conn, time.monotonic() - start, counters))
            finally:
                stop.set()
                for th in threads:
                    th.join()
            if counters.errors:
                failures.extend(counters.errors)

            print_table(samples)

            # Average on-disk size of one queue row: the tuple (header and
            # data, pg_column_size of the row) plus its 4-byte line pointer.
            avg_row = conn.execute(
                "SELECT avg(pg_column_size(q.*)) + 4 FROM pgmq.q_" + QUEUE + " q").fetchone()[0]
            avg_row = float(avg_row or 0)
            processed = samples[-1]["deleted"] if samples else 0
            final_total = samples[-1]["total"] if samples else 0
            third = max(1, len(samples) // 3)
            av_runs = (samples[-1]["autovacuum"] - 0) if samples else 0
            print("messages sent %d, processed (read and deleted) %d in %.0f s"
                  % (counters.sent, processed, samples[-1]["t"] if samples else 0))
            print("average row %.0f B; processed x row = %.1f MB; final total size %.1f MB"
                  % (avg_row, processed * avg_row / 1e6, final_total / 1e6))
            print("autovacuum runs on the queue table: %d" % av_runs)
            span_start = samples[-third - 1] if len(samples) > third else samples[0]
            growth = final_total - span_start["total"]
            written = (processed - span_start["deleted"]) * 2 * avg_row
            print("last third (t=%.0f-%.0f s): total size grew %.1f MB while %.1f MB of row versions "
                  "were written (ratio %.2f)" % (span_start["t"], samples[-1]["t"], growth / 1e6,
                                                 written / 1e6, growth / written if written else 0))

            if len(samples) < 6:
                failures.append("only %d samples" % len(samples))
            if av_runs < 1:
                failures.append("autovacuum never vacuumed the queue table")
            if written <= 0 or growth > GROWTH_PER_WRITTEN_BOUND * written:
                failures.append("the table grew %d bytes while %d bytes were written (> %.1fx): "
                                "space is not reused" % (growth, written, GROWTH_PER_WRITTEN_BOUND))
    finally:
        admin.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % dbname)
        admin.close()

    for f in failures:
        print("FAIL: " + f)
    if failures:
        print("churn_bloat: %d check(s) failed" % len(failures))
        return 1
    print("churn_bloat: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
