#!/usr/bin/env python3
"""test/integration/stream_model.py: a randomized model test of streams with
consumer groups (docs/streams.md): what each group is given, against what
the producers' transactions committed.

Producers (several connections) send to a stream with send and send_batch,
with and without headers, in transactions that are autocommit, short, long
(held open while the others commit higher ids), rolled back, with sends
undone by ROLLBACK TO SAVEPOINT, and prepared (PREPARE TRANSACTION, then
COMMIT PREPARED or ROLLBACK PREPARED later, by a coordinator on a connection
of its own).
Three consumer groups, subscribed before the first send, each read by two or
more consumers: read_stream with a short vt (sometimes read_stream_with_poll,
sometimes a read in a transaction that is rolled back, or one whose acks
are in its transaction, the others waiting for it), acknowledging each
message or the batch by array; in some groups a consumer sometimes "crashes"
(acknowledges part of the batch or nothing, so the lease runs out and the
group is given the rest again) or gives part of it back with pgmq.release
(at once or after a second). Each consumer switches pgmq.group_row_hint on
and off at random. Every call is timed on the client, and the checks use
only what those times prove (a lease of vt seconds taken by a read that
started at t lasts at least until t + vt; a release started at t with a
delay of d, until t + d; an ack or a release acts on whichever lease holds
the message, also another consumer's). In the first phase partition
maintenance (CALL pgmq.run_partition_maintenance, what pgmq's worker runs)
runs all along, with retention 0: partitions are made ahead as the traffic
crosses into them, and reclaimed once every group has passed them.

The second phase also subscribes two groups while the traffic runs: one
with since NULL, one with since a time a second before.

After the producers stop, every group is drained, then checked:
  - every committed message was delivered to every group subscribed before
    it committed, with its body and headers, and was acknowledged; none
    that rolled back (transaction, savepoint or prepared) was ever
    delivered; a group subscribed with since NULL got none that committed
    before the subscribe began, one subscribed since a time got exactly the
    messages whose enqueued_at is at or after it;
  - leases: no message is given to a read while another read's lease on it
    runs (not acknowledged, vt not over), nor after an acknowledgement that
    returned true; an acknowledgement inside the lease returns true, a second
    one false;
  - read_ct is 1 at the first delivery to a group and one higher at each
    redelivery (a rolled-back read delivers nothing: the next read has the
    same read_ct);
  - a group whose consumers never crash gets every message exactly once
    (but for one a slow consumer acknowledged after its lease could end);
  - order of first deliveries: a transaction's messages by msg_id, together
    within a read; a transaction that committed before another started its
    commit is not delivered after it (unless both can be in one batch and
    the later one is first by xid or msg_id);
then a phase with groups subscribed ordered => true: no read gets messages
while another read's lease runs, a transaction's messages are delivered
together, and a read after a lease ran out starts with that lease's
unacknowledged messages, in order, before any new one.

  stream_model.py [--seconds N] [--seed S]

Defaults: 24 s of traffic in all (PGMQ_STREAM_MODEL_SECONDS; a little over
half unordered, the rest ordered), plus the drains; a random seed
(PGMQ_SEED), printed so that a failure can be replayed (the interleaving
still varies: it is a property test, not a recording). Prepared transactions
need max_prepared_transactions > 0 (test/lib/test-cluster.conf); without
it the test runs without them and says so. PGMQ_STREAM_MODEL_DUMP=PREFIX
writes every read, ack and transaction to PREFIX.<stream>.json and every
failure to PREFIX.failures, for a post-mortem. Runs in a database of its own
on the cluster in PGHOST/PGPORT/PGUSER.
"""
import argparse
import bisect
import json
import os
import random
import sys
import threading
import time

import psycopg

DB = "pgmq_stream_model"
TAG = "[stream_model]"
# Client and server clocks: a lease end seen from the client is only trusted
# to this precision (seconds).
MARGIN = 0.02
MAX_PREPARED = 3  # outstanding at once, across producers


def connect(dbname=DB):
    return psycopg.connect(dbname=dbname, autocommit=True)


def now():
    return time.monotonic()


class Group:
    """A consumer group: subscribed before the traffic (since NULL or
    '-infinity'), or `late` = (kind, fraction): after that fraction of the
    phase, since NULL ("now": the messages that commit after the subscribe)
    or since a time a second before ("time": the messages sent at or after
    it, also those that committed before the subscribe)."""

    def __init__(self, name, vt, crash_p, array_p, consumers, ordered=False, since=None, late=None):
        self.name, self.vt, self.crash_p, self.array_p = name, vt, crash_p, array_p
        self.consumers, self.ordered, self.since, self.late = consumers, ordered, since, late
        self.ready = threading.Event()
        self.sub_start = self.sub_end = self.since_time = None


class Tx:
    """One producer transaction: the ids it sent (in order), those undone by
    a savepoint rollback, its xid, how it ended and when its commit ran."""

    def __init__(self, seq, producer, kind):
        self.seq, self.producer, self.kind = seq, producer, kind
        self.ids = []         # sent and not undone by ROLLBACK TO SAVEPOINT
        self.undone = []      # undone by ROLLBACK TO SAVEPOINT
        self.xid = None
        self.status = "open"  # open, prepared, committed, rolled back
        self.commit_start = self.commit_end = None


class Read:
    """One read_stream call: when, by whom, what it returned, whether its
    transaction committed, and the acknowledgements of its rows."""
    __slots__ = ("group", "consumer", "kind", "start", "end", "rollback_at", "rows", "committed", "acks", "releases")

    def __init__(self, group, consumer, kind, start, end, rows, committed, rollback_at=None):
        self.group, self.consumer, self.kind = group, consumer, kind
        self.start, self.end, self.rows, self.committed = start, end, rows, committed
        self.rollback_at = rollback_at
        self.acks = {}  # msg_id -> (start, end, returned true)
        self.releases = {}  # msg_id -> (start, end, returned true, delay seconds)



class Model:
    def __init__(self):
        self.lock = threading.Lock()
        self.txs = []
        self.msgs = {}     # msg_id -> (tx, body, headers)
        self.reads = {}    # group -> [Read]
        self.reacks = []   # (group, msg_id, result) of acks of an acknowledged message
        self.prepared = []  # (due, tx, gid, commit?)
        self.enqueued = {}  # msg_id -> enqueued_at, read from the stream's table at the end
        self.counts = {}
        self.errors = []
        self.tx_seq = 0

    def count(self, what, n=1):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def new_tx(self, producer, kind):
        with self.lock:
            self.tx_seq += 1
            tx = Tx(self.tx_seq, producer, kind)
            self.txs.append(tx)
            return tx

    def log_read(self, rd):
        with self.lock:
            self.reads.setdefault(rd.group, []).append(rd)


class Producer:
    def __init__(self, number, stream, model, rnd, prepared_ok):
        self.number, self.stream, self.model, self.rnd = number, stream, model, rnd
        self.prepared_ok = prepared_ok
        self.conn = connect()
        self.gids = 0

    def close(self):
        self.conn.close()

    def run(self, until):
        try:
            while now() < until:
                self.transaction()
                time.sleep(self.rnd.random() * 0.03)
        except Exception as e:  # reported by the main thread
            self.model.errors.append(f"producer {self.number}: {type(e).__name__}: {e}")

    def send(self, tx, autocommit=False):
        """One send or send_batch of 1-4 messages, some with headers, in the
        current transaction (or as one autocommit statement, which also
        returns the xid)."""
        rnd, c = self.rnd, self.conn
        n = 1 if rnd.random() < 0.6 else rnd.randint(2, 4)
        bodies = [{"p": self.number, "tx": tx.seq, "k": len(tx.ids) + len(tx.undone) + i, "pad": "x" * rnd.randint(0, 40)}
                  for i in range(n)]
        headers = [{"h": b["k"], "tx": tx.seq} for b in bodies] if rnd.random() < 0.3 else None
        xid = "pg_current_xact_id()::text::bigint" if autocommit else "NULL::bigint"
        if n == 1 and rnd.random() < 0.7:
            if headers:
                sql = f"SELECT s, {xid} FROM pgmq.send(%s, %s::jsonb, %s::jsonb) AS s"
                args = (self.stream, psycopg.types.json.Jsonb(bodies[0]), psycopg.types.json.Jsonb(headers[0]))
            else:
                sql = f"SELECT s, {xid} FROM pgmq.send(%s, %s::jsonb) AS s"
                args = (self.stream, psycopg.types.json.Jsonb(bodies[0]))
        else:
            if headers:
                sql = f"SELECT s, {xid} FROM pgmq.send_batch(%s, %s::text[]::jsonb[], %s::text[]::jsonb[]) AS s"
                args = (self.stream, [json.dumps(b) for b in bodies], [json.dumps(h) for h in headers])
            else:
                sql = f"SELECT s, {xid} FROM pgmq.send_batch(%s, %s::text[]::jsonb[]) AS s"
                args = (self.stream, [json.dumps(b) for b in bodies])
        rows = c.execute(sql, args).fetchall()
        ids = [r[0] for r in rows]
        if len(ids) != n:
            raise AssertionError(f"send of {n} messages returned {len(ids)} ids")
        with self.model.lock:
            for i, msg_id in enumerate(ids):
                self.model.msgs[msg_id] = (tx, bodies[i], headers[i] if headers else None)
        if autocommit:
            tx.xid = rows[0][1]
        return ids

    def transaction(self):
        rnd, c = self.rnd, self.conn
        prepared_ok = self.prepared_ok and len(self.model.prepared) < MAX_PREPARED
        kind = rnd.choices(["autocommit", "short", "long", "rollback", "savepoint", "prepared"],
                           [3, 4, 1.2, 1.2, 1.5, 1.2 if prepared_ok else 0])[0]
        tx = self.model.new_tx(self.number, kind)
        if kind == "autocommit":
            tx.commit_start = now()
            tx.ids += self.send(tx, autocommit=True)
            tx.commit_end = now()
            tx.status = "committed"
            self.model.count("tx autocommit")
            return
        c.execute("BEGIN")
        parts = rnd.randint(1, 3)
        for part in range(parts):
            if kind == "savepoint" and rnd.random() < 0.6:
                c.execute("SAVEPOINT s")
                ids = self.send(tx)
                if rnd.random() < 0.7:
                    c.execute("ROLLBACK TO SAVEPOINT s")
                    tx.undone += ids
                    self.model.count("savepoint sends undone", len(ids))
                else:
                    c.execute("RELEASE SAVEPOINT s")
                    tx.ids += ids
            else:
                tx.ids += self.send(tx)
            if tx.xid is None:
                tx.xid = c.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()[0]
            if kind == "long" and part == 0:
                # Held open: the others commit higher ids meanwhile.
                time.sleep(rnd.uniform(0.3, 1.2))
            else:
                time.sleep(rnd.random() * 0.01)
        if kind == "rollback":
            c.execute("ROLLBACK")
            tx.status = "rolled back"
        elif kind == "prepared":
            self.gids += 1
            gid = f"sm_{self.stream}_{self.number}_{self.gids}"
            c.execute(f"PREPARE TRANSACTION '{gid}'")
            tx.status = "prepared"
            with self.model.lock:
                self.model.prepared.append((now() + rnd.uniform(0.1, 1.5), tx, gid, rnd.random() < 0.7))
        else:
            tx.commit_start = now()
            c.execute("COMMIT")
            tx.commit_end = now()
            tx.status = "committed"
        self.model.count(f"tx {kind}")

    def resolve_prepared(self, due_only):
        """COMMIT PREPARED or ROLLBACK PREPARED of the prepared transactions
        (those due): the coordinator's work, on a connection of its own (a
        producer that waits for a lock cannot end the prepared transaction
        that holds it)."""
        while True:
            with self.model.lock:
                due = [p for p in self.model.prepared if not due_only or p[0] <= now()]
                if not due:
                    return
                self.model.prepared.remove(due[0])
            _, tx, gid, commit = due[0]
            if commit:
                tx.commit_start = now()
                self.conn.execute(f"COMMIT PREPARED '{gid}'")
                tx.commit_end = now()
                tx.status = "committed"
                self.model.count("prepared, committed")
            else:
                self.conn.execute(f"ROLLBACK PREPARED '{gid}'")
                tx.status = "rolled back"
                self.model.count("prepared, rolled back")


READ_SQL = "SELECT msg_id, read_ct, message, headers FROM pgmq.read_stream(%s, %s, %s, %s)"
POLL_SQL = "SELECT msg_id, read_ct, message, headers FROM pgmq.read_stream_with_poll(%s, %s, %s, %s, 1, 20)"


class Consumer:
    def __init__(self, name, stream, group, model, rnd, crashes=True):
        self.name, self.stream, self.group, self.model, self.rnd = name, stream, group, model, rnd
        self.crashes = crashes
        self.conn = connect()
        self.acked = []  # ids this consumer acknowledged inside their lease

    def close(self):
        self.conn.close()

    def run(self, until):
        try:
            self.group.ready.wait(max(0, until - now()))
            while now() < until:
                self.step()
        except Exception as e:
            self.model.errors.append(f"consumer {self.name}: {type(e).__name__}: {e}")

    def read(self, kind, qty):
        g, c = self.group, self.conn
        start = now()
        rollback_at = None
        if kind == "in transaction":
            c.execute("BEGIN")
            rows = c.execute(READ_SQL, (self.stream, g.name, g.vt, qty)).fetchall()
        elif kind == "rolled back":
            c.execute("BEGIN")
            rows = c.execute(READ_SQL, (self.stream, g.name, g.vt, qty)).fetchall()
            time.sleep(self.rnd.random() * 0.01)
            rollback_at = now()
            c.execute("ROLLBACK")
        else:
            rows = c.execute(POLL_SQL if kind == "poll" else READ_SQL, (self.stream, g.name, g.vt, qty)).fetchall()
        rd = Read(g.name, self.name, kind, start, now(), rows, kind != "rolled back", rollback_at)
        self.model.log_read(rd)
        return rd

    def ack_each(self, rd, ids):
        for msg_id in ids:
            start = now()
            ok = self.conn.execute("SELECT pgmq.ack(%s, %s, %s::bigint)", (self.stream, self.group.name, msg_id)).fetchone()[0]
            rd.acks[msg_id] = (start, now(), ok)

    def release_each(self, rd, ids, delay):
        for msg_id in ids:
            start = now()
            ok = self.conn.execute("SELECT pgmq.release(%s, %s, %s::bigint, %s)",
                                   (self.stream, self.group.name, msg_id, delay)).fetchone()[0]
            rd.releases[msg_id] = (start, now(), ok, delay)

    def ack_array(self, rd, ids):
        start = now()
        got = {r[0] for r in self.conn.execute("SELECT * FROM pgmq.ack(%s, %s, %s::bigint[])",
                                               (self.stream, self.group.name, ids)).fetchall()}
        end = now()
        for msg_id in ids:
            rd.acks[msg_id] = (start, end, msg_id in got)
        if got - set(ids):
            self.model.errors.append(f"{self.group.name}: ack by array of {ids} returned ids not asked for: {sorted(got - set(ids))}")

    def step(self):
        rnd = self.rnd
        if rnd.random() < 0.02:
            # Where the session last saw the group's row (pgmq.group_row_hint):
            # off, the statements look it up by key; on again, from a place
            # that other readers' updates (and its own, unremembered) have left.
            hint = rnd.choice(["on", "off"])
            self.conn.execute(f"SET pgmq.group_row_hint = {hint}")
            self.model.count(f"group row hint {hint}")
        kind = rnd.choices(["read", "poll", "rolled back", "in transaction"], [8, 1, 1, 1])[0]
        rd = self.read(kind, rnd.randint(1, 6))
        self.model.count(f"reads {kind}{'' if rd.rows else ', empty'}")
        try:
            if rd.rows and rd.committed:
                self.process(rd)
        finally:
            if kind == "in transaction":
                # The read and the acks commit together; meanwhile the
                # group's other readers wait for its lock.
                self.conn.execute("COMMIT")
        if not rd.rows:
            time.sleep(rnd.uniform(0.002, 0.02))

    def process(self, rd):
        rnd, g = self.rnd, self.group
        time.sleep(rnd.random() * 0.01)  # the work
        ids = [r[0] for r in rd.rows]
        if self.crashes and g.crash_p and rnd.random() < g.crash_p / 2:
            # Gives part of the batch back (at once, or after a short delay)
            # and acknowledges the rest. In an ordered group, as docs/streams.md
            # says: acknowledge first, then release one; the whole lease comes
            # back, and another consumer may take it at once.
            back = [i for i in ids if rnd.random() < 0.5]
            delay = rnd.choice([0, 0, 1])
            if g.ordered:
                self.ack_each(rd, [i for i in ids if i not in back])
                self.release_each(rd, back[:1], delay)
            else:
                self.release_each(rd, back, delay)
                self.ack_each(rd, [i for i in ids if i not in back])
            self.model.count(f"releases ({g.name})")
        elif self.crashes and g.crash_p and rnd.random() < g.crash_p:
            # Acknowledges part of the batch (maybe none) and forgets the rest.
            self.ack_each(rd, [i for i in ids if rnd.random() < 0.3])
            self.model.count(f"crashes ({g.name})")
        elif rnd.random() < g.array_p:
            self.ack_array(rd, ids)
        else:
            self.ack_each(rd, ids)
        for msg_id, (a_start, a_end, ok) in rd.acks.items():
            if ok and a_end < rd.start + g.vt - MARGIN:
                self.acked.append(msg_id)
        del self.acked[:-50]
        if self.acked and rnd.random() < 0.05:
            # Acknowledged already: the group holds no lease on it.
            msg_id = rnd.choice(self.acked)
            ok = self.conn.execute("SELECT pgmq.ack(%s, %s, %s::bigint)", (self.stream, g.name, msg_id)).fetchone()[0]
            with self.model.lock:
                self.model.reacks.append((g.name, msg_id, ok))


def drain(stream, group, model, rnd):
    """Reads the group until nothing is left, acknowledging every batch, also
    after every lease a crashed consumer left has run out."""
    d = Consumer(f"drain-{group.name}", stream, group, model, rnd, crashes=False)
    deadline = now() + 30
    rounds = 0
    try:
        while now() < deadline:
            got = 0
            while True:
                rd = d.read("read", 200)
                if not rd.rows:
                    break
                got += len(rd.rows)
                d.ack_array(rd, [r[0] for r in rd.rows])
            if not got and rounds:
                return True
            rounds += 1
            model.count(f"drained {group.name}", got)
            time.sleep(group.vt + 0.3)  # the leases of crashed consumers run out
        return False
    finally:
        d.close()


class LeaseEnds:
    """Lower bounds of when a read's lease ended. Acknowledgements and
    releases name a message, not a read: whoever calls them ends the lease
    that holds the message then, also one another consumer took after the
    caller's own lease ran out. So every ack and release of the group that
    returned true and ended after the read started counts, whichever
    consumer called it."""

    def __init__(self, reads, vt, ordered):
        self.vt, self.ordered = vt, ordered
        self.acks = {}      # msg_id -> [(start, end)] of acks that returned true
        self.releases = {}  # msg_id -> [(end, start + delay)] of releases that returned true
        for rd in reads:
            for m, (start, end, ok) in rd.acks.items():
                if ok:
                    self.acks.setdefault(m, []).append((start, end))
            for m, (start, end, ok, delay) in rd.releases.items():
                if ok:
                    self.releases.setdefault(m, []).append((end, start + delay))

    def _start(self, rd):
        end = rd.start + self.vt
        return end if rd.committed else min(end, rd.rollback_at)

    def _released(self, rd, ids):
        return min((due for m in ids for end, due in self.releases.get(m, ()) if end >= rd.start), default=float("inf"))

    def _acked(self, rd, msg_id):
        return min((start for start, end in self.acks.get(msg_id, ()) if end >= rd.start), default=float("inf"))

    def on(self, rd, msg_id):
        """rd's lease on msg_id: its vt, a release of it (in an ordered group,
        of any message of the lease: the whole lease comes back), an ack of
        it, or the read's rollback."""
        ids = [r[0] for r in rd.rows] if self.ordered else [msg_id]
        return min(self._start(rd), self._released(rd, ids), self._acked(rd, msg_id))

    def whole(self, rd):
        """rd's whole lease: as `on`, or once every message of it was acknowledged."""
        ids = [r[0] for r in rd.rows]
        return min(self._start(rd), self._released(rd, ids), max((self._acked(rd, m) for m in ids), default=float("inf")))


def check_group(model, group, failures):
    """The checks of one group's reads against the producers' transactions."""
    name, vt = group.name, group.vt
    reads = sorted(model.reads.get(name, []), key=lambda r: r.start)
    committed_ids = {m for m, (tx, _, _) in model.msgs.items() if tx.status == "committed" and m in tx.ids}
    # What the group must be given, and what it may be given.
    if group.late is None:
        must = may = committed_ids
    elif group.late[0] == "now":
        must = {m for m in committed_ids if model.msgs[m][0].commit_start > group.sub_end}
        may = {m for m in committed_ids if model.msgs[m][0].commit_end > group.sub_start}
    else:
        must = may = {m for m in committed_ids if model.enqueued[m] >= group.since_time}

    def fail(msg):
        failures.append(f"{name}: {msg}")

    # Per message, its deliveries in the order they ended: a read returns as
    # soon as it leased (a poll may wait long before), and a read that got a
    # message after another one's lease on it ended after that read ended.
    deliveries = {}  # msg_id -> [(Read, read_ct)]
    for rd in reads:
        seen = set()
        for msg_id, read_ct, message, headers in rd.rows:
            if msg_id in seen:
                fail(f"one read returned msg {msg_id} twice")
            seen.add(msg_id)
            deliveries.setdefault(msg_id, []).append((rd, read_ct))
            if msg_id not in model.msgs:
                fail(f"delivered msg {msg_id}, which no producer sent")
                continue
            tx, body, sent_headers = model.msgs[msg_id]
            if msg_id not in committed_ids:
                why = "undone by ROLLBACK TO SAVEPOINT" if msg_id in tx.undone else f"its transaction ({tx.kind}) {tx.status}"
                fail(f"delivered msg {msg_id}, which never committed: {why}")
            elif msg_id not in may:
                fail(f"delivered msg {msg_id}, which " + (
                    "committed before the group subscribed" if group.late[0] == "now" else
                    f"was sent at {model.enqueued[msg_id]}, before the group's since {group.since_time}"))
            if message != body:
                fail(f"msg {msg_id} delivered with body {message}, sent {body}")
            if headers != sent_headers and not (sent_headers is None and headers == {}):
                fail(f"msg {msg_id} delivered with headers {headers}, sent {sent_headers}")

    for ds in deliveries.values():
        ds.sort(key=lambda d: d[0].end)

    # At least once, and acknowledged in the end.
    acked = {}  # msg_id -> earliest end of an ack that returned true
    for rd in reads:
        for msg_id, (a_start, a_end, ok) in rd.acks.items():
            if ok:
                acked[msg_id] = min(acked.get(msg_id, a_end), a_end)
    never = sorted(m for m in must if not any(rd.committed for rd, _ in deliveries.get(m, [])))
    if never:
        fail(f"{len(never)} committed messages never delivered (ids {never[:8]}; "
             + "; ".join(f"{m}: tx {model.msgs[m][0].kind}" for m in never[:4]) + ")")
    unacked = sorted(m for m, ds in deliveries.items() if m not in acked and any(rd.committed for rd, _ in ds))
    if unacked:
        fail(f"{len(unacked)} delivered messages still not acknowledged after the drain (ids {unacked[:8]})")

    # Leases, acknowledgements, read_ct, exactly once.
    slow = 0
    first = {}  # msg_id -> the first committed read that delivered it
    leases = LeaseEnds(reads, vt, group.ordered)

    for msg_id, ds in deliveries.items():
        n_committed = 0
        done = [rd for rd, _ in ds if rd.committed]
        for i, (rd, read_ct) in enumerate(ds):
            if rd.committed:
                expected = (n_committed + 1, n_committed + 1)
            else:
                # Reads that overlap in time ran in either order.
                expected = (sum(1 for d in done if d.end < rd.start) + 1, sum(1 for d in done if d.start < rd.end) + 1)
            if not expected[0] <= read_ct <= expected[1]:
                fail(f"msg {msg_id}: read_ct {read_ct} at its delivery number {expected[0]} "
                     f"({'rolled-back read' if not rd.committed else rd.kind} by {rd.consumer})")
            for prev, _ in ds[:i]:
                # prev ended first; if the reads overlap, the server may have
                # run them in either order: a violation both ways is one.
                bad = rd.end < leases.on(prev, msg_id) - MARGIN
                if prev.end >= rd.start:
                    bad = bad and prev.end < leases.on(rd, msg_id) - MARGIN
                ack = prev.acks.get(msg_id)
                if bad:
                    fail(f"msg {msg_id} given to {rd.consumer} ({rd.kind}, {rd.start:.3f}-{rd.end:.3f}) while "
                         f"{prev.consumer}'s lease from {prev.start:.3f} ran (vt {vt}; ack {ack})")
                if prev.committed and ack and ack[2] and rd.start > ack[1]:
                    fail(f"msg {msg_id} delivered again ({rd.consumer}, read_ct {read_ct}) after "
                         f"{prev.consumer}'s ack returned true")
            if rd.committed and n_committed and not group.crash_p:
                # Exactly once, but for a consumer that acknowledged after
                # its lease could have ended.
                prev = [p for p, _ in ds[:i] if p.committed][-1]
                ack = prev.acks.get(msg_id)
                if ack and ack[0] >= prev.start + vt - MARGIN:
                    slow += 1
                else:
                    fail(f"msg {msg_id} delivered again (read_ct {read_ct}, to {rd.consumer}) in a group whose "
                         f"consumers never crash; {prev.consumer} acknowledged it at "
                         f"{'never' if ack is None else f'{ack[0]:.3f}'} after its read at {prev.start:.3f}")
            if rd.committed:
                n_committed += 1
                first.setdefault(msg_id, rd)
        # An ack inside the lease returns true.
        for rd, _ in ds:
            ack = rd.acks.get(msg_id)
            if ack and not ack[2] and ack[1] < leases.on(rd, msg_id) - MARGIN:
                fail(f"ack of msg {msg_id} by {rd.consumer} returned false inside its lease "
                     f"(read {rd.start:.3f}, ack done {ack[1]:.3f}, vt {vt})")
    for g, msg_id, ok in model.reacks:
        if g == name and ok:
            fail(f"a second ack of msg {msg_id} returned true")

    # Order of first deliveries.
    for rd in reads:
        if not rd.committed:
            continue
        ended = set()
        last = {}  # tx seq -> last id
        prev_tx = None
        for msg_id, *_ in rd.rows:
            if first.get(msg_id) is not rd or msg_id not in model.msgs:
                continue
            t = model.msgs[msg_id][0].seq
            if t != prev_tx:
                if t in ended:
                    fail(f"a read's new messages mix transactions: transaction {t}'s resume after another's "
                         f"(read {[r[0] for r in rd.rows]})")
                if prev_tx is not None:
                    ended.add(prev_tx)
                prev_tx = t
            if msg_id < last.get(t, 0):
                fail(f"a read returned transaction {t}'s messages out of msg_id order: {[r[0] for r in rd.rows]}")
            last[t] = msg_id
    by_tx = {}
    for msg_id, rd in first.items():
        if msg_id in model.msgs:
            by_tx.setdefault(model.msgs[msg_id][0], []).append((rd, msg_id))
    for tx, fs in by_tx.items():
        fs.sort(key=lambda e: e[0].start)
        for i, (x, a) in enumerate(fs):
            for y, b in fs[i + 1:]:
                if x.end < y.start and a > b:
                    fail(f"transaction {tx.seq}'s msg {b} first delivered after its msg {a} (later reads)")
    # Commit order: tx1 committed before tx2 began its commit, so it is in an
    # earlier batch or the same one.
    txs = [t for t in by_tx if t.commit_end is not None]
    for t in txs:
        t_fs = by_tx[t]
        t.min_end = min(rd.end for rd, _ in t_fs)
        t.max_start = max(rd.start for rd, _ in t_fs)
        t.min_id = min(t.ids)
    txs.sort(key=lambda t: t.commit_start)
    starts = [t.commit_start for t in txs]
    for t1 in txs:
        for t2 in txs[bisect.bisect_right(starts, t1.commit_end):]:
            if t2.commit_start > t1.max_start:
                break
            if t2.min_end < t1.max_start and not (t2.xid < t1.xid or t2.min_id < t1.min_id):
                fail(f"transaction {t1.seq} ({t1.kind}, ids {t1.ids}) committed before transaction {t2.seq} "
                     f"({t2.kind}, ids {t2.ids}) began its commit, but was first delivered after it")

    if group.ordered:
        check_ordered(model, group, reads, first, leases, fail)
    redelivered = sum(1 for ds in deliveries.values() if sum(1 for rd, _ in ds if rd.committed) > 1)
    return {"delivered": len(deliveries), "redelivered": redelivered, "slow acks": slow, "reads": len(reads),
            "reads rolled back": sum(1 for rd in reads if not rd.committed)}


def check_ordered(model, group, reads, first, leases, fail):
    """One lease at a time; a lease's unacknowledged messages come again
    before any new one; a transaction's messages are delivered together."""
    vt = group.vt
    got = [rd for rd in reads if rd.rows]

    for i, x in enumerate(got):
        release = leases.whole(x)
        for y in got[i + 1:]:
            if y.start > release:
                break
            # Overlapping reads ran in either order: a violation both ways.
            if y.end < release - MARGIN and (x.end < y.start or x.end < leases.whole(y) - MARGIN):
                fail(f"ordered: {y.consumer}'s read ({y.start:.3f}-{y.end:.3f}) got {[r[0] for r in y.rows]} while "
                     f"{x.consumer}'s lease on {[r[0] for r in x.rows]} from {x.start:.3f} ran (vt {vt})")
                break
    # Redeliveries first, in first-delivery order, and no new message while
    # an earlier one is neither acknowledged nor delivered again. Reads in
    # the order they ended (see check_group); a message counts as surely
    # unacknowledged at a read unless an ack of it that returned true
    # started before the read ended.
    position = {}  # msg_id -> place in the first-delivery sequence
    order = []
    acked_from = {}  # msg_id -> the earliest start of an ack of it that returned true
    for rd in sorted(reads, key=lambda r: r.end):
        if not rd.committed or not rd.rows:
            continue
        ids = [r[0] for r in rd.rows]
        again = [m for m in ids if m in position]
        new = [m for m in ids if m not in position]
        surely_open = [m for m in order if not (m in acked_from and acked_from[m] <= rd.end)]
        if again and new and ids.index(new[0]) < ids.index(again[-1]):
            fail(f"ordered: read {ids} by {rd.consumer} gives new messages before redelivered ones")
        elif again != sorted(again, key=position.get):
            fail(f"ordered: read {ids} by {rd.consumer} redelivers out of first-delivery order")
        elif again and any(m not in again and position[m] < position[again[-1]] for m in surely_open):
            fail(f"ordered: read {ids} by {rd.consumer} skips earlier unacknowledged "
                 f"{[m for m in surely_open if m not in again and position[m] < position[again[-1]]][:8]}")
        elif new and any(m not in again for m in surely_open):
            fail(f"ordered: read {ids} by {rd.consumer} gives new messages while "
                 f"{[m for m in surely_open if m not in again][:8]} are neither acknowledged nor delivered again")
        for m in ids:
            if m not in position:
                position[m] = len(order)
                order.append(m)
            a = rd.acks.get(m)
            if a and a[2]:
                acked_from[m] = min(acked_from.get(m, a[0]), a[0])
        # Surely acknowledged for every later read: out of the way.
        if len(order) > 200:
            order = [m for m in order if not (m in acked_from and acked_from[m] < rd.start)]
    # Transactions together in the first-delivery sequence.
    seq = [m for rd in sorted(reads, key=lambda r: r.end) if rd.committed
           for m, *_ in rd.rows if first.get(m) is rd and m in model.msgs]
    done, cur = set(), None
    for m in seq:
        t = model.msgs[m][0].seq
        if t != cur:
            if t in done:
                fail(f"ordered: transaction {t}'s messages are not delivered together (msg {m})")
                break
            if cur is not None:
                done.add(cur)
            cur = t


def stream_groups(admin, stream):
    cur = admin.execute("SELECT * FROM pgmq.stream_groups(%s)", (stream,))
    cols = [d.name for d in cur.description]
    return {r[cols.index("group_name")]: dict(zip(cols, r)) for r in cur.fetchall()}


def coordinate(coordinator, stop):
    """Ends the prepared transactions when they are due, until every
    producer and consumer stopped (one may wait for a lock that a prepared
    transaction holds)."""
    try:
        while not stop.is_set():
            coordinator.resolve_prepared(due_only=True)
            time.sleep(0.02)
    except Exception as e:
        coordinator.model.errors.append(f"coordinator: {type(e).__name__}: {e}")


def subscribe_late(stream, groups, start, seconds, model):
    """Subscribes the late groups at their time into the phase, then lets
    their consumers read."""
    try:
        with connect() as c:
            for g in sorted((g for g in groups if g.late), key=lambda g: g.late[1]):
                time.sleep(max(0, start + g.late[1] * seconds - now()))
                if g.late[0] == "time":
                    g.since_time = c.execute("SELECT now() - interval '1 s'").fetchone()[0]
                g.sub_start = now()
                c.execute("SELECT pgmq.subscribe(%s, %s, since => %s)", (stream, g.name, g.since_time))
                g.sub_end = now()
                g.ready.set()
    except Exception as e:
        model.errors.append(f"subscribe: {type(e).__name__}: {e}")


def partitions(admin, stream):
    return admin.execute("SELECT partition_name, from_xid::text::int8, to_xid::text::int8, bytes "
                         "FROM pgmq.stream_partitions(%s) WHERE NOT is_default ORDER BY from_xid", (stream,)).fetchall()


def maintain(stream, model, until):
    """Partition maintenance of the stream, again and again: partitions made
    ahead, and those every group passed reclaimed (retention 0) while the
    groups read the next."""
    try:
        with connect() as c:
            while now() < until:
                start = now()
                c.execute("CALL pgmq.run_partition_maintenance(%s)", (stream,))
                model.count("maintenance runs")
                with model.lock:
                    model.counts["maintenance, longest run (ms)"] = max(model.counts.get("maintenance, longest run (ms)", 0),
                                                                         round((now() - start) * 1000))
                time.sleep(0.2)
    except Exception as e:
        model.errors.append(f"maintenance: {type(e).__name__}: {e}")


def run_phase(label, stream, groups, seconds, args, rnd, prepared_ok, admin, maintained=False):
    print(f"{TAG} {label}: stream {stream}, groups "
          + ", ".join(f"{g.name} (vt {g.vt}, {g.consumers} consumers{', crashes' if g.crash_p else ''}"
                      f"{', ordered' if g.ordered else ''})" for g in groups) + f", {seconds:g} s"
          + (", partition maintenance with retention 0" if maintained else ""), flush=True)
    if maintained:
        admin.execute("SELECT pgmq.create_stream(%s, retention => '0 s', max_retention => '1 h')", (stream,))
    else:
        admin.execute("SELECT pgmq.create_stream(%s)", (stream,))
    for g in groups:
        if not g.late:
            admin.execute("SELECT pgmq.subscribe(%s, %s, since => %s, ordered => %s)", (stream, g.name, g.since, g.ordered))
            g.ready.set()
    if maintained:
        # Transaction ids used up to just before the end of the premade
        # partitions: the traffic crosses into the next ones.
        upper = max(p[2] for p in partitions(admin, stream))
        burn = upper - admin.execute("SELECT pg_current_xact_id()::text::int8").fetchone()[0] - 1500
        admin.execute("SET synchronous_commit = off")
        admin.execute(f"DO $$ BEGIN FOR i IN 1..{max(burn, 0)} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$")
        admin.execute("RESET synchronous_commit")
        print(f"{TAG} {label}: partitions at the start {partitions(admin, stream)}", flush=True)
    model = Model()
    producers = [Producer(i, stream, model, random.Random(rnd.random()), prepared_ok) for i in range(args.producers)]
    coordinator = Producer("coordinator", stream, model, None, False)
    consumers = [Consumer(f"{g.name}/{i}", stream, g, model, random.Random(rnd.random()))
                 for g in groups for i in range(g.consumers)]
    start = now()
    until = start + seconds
    threads = [threading.Thread(target=w.run, args=(until,)) for w in producers + consumers]
    threads.append(threading.Thread(target=subscribe_late, args=(stream, groups, start, seconds, model)))
    stop = threading.Event()
    coordinating = threading.Thread(target=coordinate, args=(coordinator, stop))
    coordinating.start()
    if maintained:
        threads.append(threading.Thread(target=maintain, args=(stream, model, until)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    coordinating.join()
    coordinator.resolve_prepared(due_only=False)
    failures = list(model.errors)
    drain_threads = []
    drained = {}
    for g in groups:
        t = threading.Thread(target=lambda g=g: drained.__setitem__(g.name, drain(stream, g, model, random.Random(rnd.random()))))
        t.start()
        drain_threads.append(t)
    for t in drain_threads:
        t.join()
    failures += model.errors[len(failures):]
    for w in producers + consumers + [coordinator]:
        w.close()
    for g in groups:
        if not drained.get(g.name):
            failures.append(f"{g.name}: the drain did not end in 30 s")
    if maintained:
        admin.execute("CALL pgmq.run_partition_maintenance(%s)", (stream,))
        print(f"{TAG} {label}: partitions at the end {partitions(admin, stream)}", flush=True)
    model.enqueued = dict(admin.execute(f"SELECT msg_id, enqueued_at FROM pgmq.q_{stream}").fetchall())
    info = stream_groups(admin, stream)
    for g in groups:
        row = info.get(g.name)
        if row is None:
            failures.append(f"stream_groups('{stream}') has no row for {g.name}")
        elif row.get("pending") or row.get("in_flight"):
            failures.append(f"{g.name}: after the drain stream_groups says pending {row.get('pending')}, "
                            f"in_flight {row.get('in_flight')}")
    if any(tx.status in ("open", "prepared") for tx in model.txs):
        failures.append("a transaction was left open or prepared")
    committed = sum(len(tx.ids) for tx in model.txs if tx.status == "committed")
    lost = sum(len(tx.ids) for tx in model.txs if tx.status == "rolled back") + sum(len(tx.undone) for tx in model.txs)
    print(f"{TAG} {label}: {committed} messages committed, {lost} rolled back; "
          + ", ".join(f"{k} {v}" for k, v in sorted(model.counts.items())), flush=True)
    # The run must have exercised what it checks: transactions that commit
    # after one with higher ids committed.
    done = sorted((t for t in model.txs if t.status == "committed" and t.ids), key=lambda t: t.commit_end)
    ends, highest, late = [t.commit_end for t in done], [], 0
    for t in done:
        highest.append(max(highest[-1] if highest else 0, max(t.ids)))
    for t in done:
        k = bisect.bisect_left(ends, t.commit_start)
        late += bool(k and highest[k - 1] > min(t.ids))
    print(f"{TAG} {label}: {late} transactions committed after one with higher ids", flush=True)
    if late == 0 and seconds >= 5:
        failures.append("no transaction committed after one with higher ids (the model is too tame)")
    if os.environ.get("PGMQ_STREAM_MODEL_DUMP"):
        # Every read, ack and transaction, for a failure's post-mortem.
        with open(f"{os.environ['PGMQ_STREAM_MODEL_DUMP']}.{stream}.json", "w") as f:
            json.dump({"reads": {g: [{"consumer": r.consumer, "kind": r.kind, "start": r.start, "end": r.end,
                                      "committed": r.committed, "rows": [[m, ct] for m, ct, *_ in r.rows],
                                      "acks": {str(k): v for k, v in r.acks.items()},
                                      "releases": {str(k): v for k, v in r.releases.items()}} for r in rs]
                                 for g, rs in model.reads.items()},
                       "txs": [{"seq": t.seq, "kind": t.kind, "xid": t.xid, "ids": t.ids, "undone": t.undone,
                                "status": t.status, "commit": [t.commit_start, t.commit_end]} for t in model.txs]}, f)
    for g in groups:
        before = len(failures)
        stats = check_group(model, g, failures)
        print(f"{TAG} {label}: {g.name}: " + ", ".join(f"{k} {v}" for k, v in stats.items())
              + ("" if len(failures) == before else f", {len(failures) - before} failures"), flush=True)
        if g.crash_p and stats["redelivered"] == 0 and seconds >= 5:
            failures.append(f"{g.name}: crashes, but no message was delivered twice")
    if prepared_ok and not model.counts.get("prepared, committed") and seconds >= 5:
        failures.append("no prepared transaction committed (the model is too tame)")
    if admin.execute("SELECT pgmq.drop_queue(%s)", (stream,)).fetchone()[0] is not True:
        failures.append(f"drop_queue('{stream}') did not return true")
    return failures


def drop_database(admin):
    """Drops the test's database, with the prepared transactions a run left
    in it (a failed or interrupted one)."""
    gids = [r[0] for r in admin.execute("SELECT gid FROM pg_prepared_xacts WHERE database = %s", (DB,))]
    if gids:
        with connect() as c:  # ROLLBACK PREPARED runs in the transaction's database
            for gid in gids:
                c.execute(f"ROLLBACK PREPARED '{gid}'")
    admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("PGMQ_STREAM_MODEL_SECONDS", 24)))
    parser.add_argument("--seed", type=int, default=int(os.environ["PGMQ_SEED"]) if os.environ.get("PGMQ_SEED") else None)
    parser.add_argument("--producers", type=int, default=3)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"{TAG} seed {seed} (replay: PGMQ_SEED={seed}), {args.seconds:g} s, {args.producers} producers", flush=True)
    with connect("postgres") as admin:
        drop_database(admin)
        admin.execute(f"CREATE DATABASE {DB}")
    try:
        failures = run(args, seed)
    finally:
        with connect("postgres") as admin:
            drop_database(admin)
    if os.environ.get("PGMQ_STREAM_MODEL_DUMP"):
        with open(f"{os.environ['PGMQ_STREAM_MODEL_DUMP']}.failures", "w") as f:
            f.write("".join(x + "\n" for x in failures))
    for f in failures[:25]:
        print(f"{TAG} FAIL: {f}")
    if len(failures) > 25:
        print(f"{TAG} ... and {len(failures) - 25} more failures")
    if failures:
        print(f"{TAG} failed with seed {seed}")
        return 1
    print(f"{TAG} passed")
    return 0


def run(args, seed):
    rnd = random.Random(seed)
    with connect() as admin:
        admin.execute("CREATE EXTENSION pgmq CASCADE")
        prepared_ok = int(admin.execute("SHOW max_prepared_transactions").fetchone()[0]) >= 2 * MAX_PREPARED
        if not prepared_ok:
            print(f"{TAG} note: max_prepared_transactions < {2 * MAX_PREPARED}: no prepared transactions")
        failures = run_phase("unordered", "sm_events", [
            Group("g_crash", vt=1, crash_p=0.1, array_p=0.3, consumers=2),
            Group("g_array", vt=1, crash_p=0.05, array_p=0.8, consumers=3, since="-infinity"),
            Group("g_exact", vt=3, crash_p=0, array_p=0.4, consumers=2),
        ], args.seconds * 0.55, args, rnd, prepared_ok, admin, maintained=True)
        return failures + run_phase("ordered", "sm_ordered", [
            Group("o_crash", vt=1, crash_p=0.04, array_p=0.4, consumers=3, ordered=True),
            Group("o_exact", vt=3, crash_p=0, array_p=0.4, consumers=2, ordered=True),
            Group("u_exact", vt=3, crash_p=0, array_p=0.4, consumers=2),
            Group("u_late", vt=3, crash_p=0, array_p=0.4, consumers=1, late=("now", 0.3)),
            Group("u_since", vt=1, crash_p=0.05, array_p=0.4, consumers=1, late=("time", 0.6)),
        ], args.seconds * 0.45, args, rnd, prepared_ok, admin)


if __name__ == "__main__":
    sys.exit(main())
