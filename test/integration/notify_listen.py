#!/usr/bin/python3
"""test/integration/notify_listen.py: insert notifications as a client sees them.

A client LISTENs on "pgmq.q_<queue name>.INSERT" (API.md §2.13) and checks:
  - a committed batch gives exactly one notification, a rolled-back one none;
  - a mixed-case queue notifies on the channel spelled as the queue was created;
  - interval 0 notifies every committed inserting transaction; a long interval
    lets only the first one through;
  - a rolled-back savepoint does not swallow the notification of a later insert
    in the same transaction;
  - a send to a paused queue notifies, and so does its resume (the messages
    can be read from then on), once it commits, and only when it was paused;
  - a sender does not wait for another sender's open transaction (upstream's
    trigger makes it wait on the throttle row);
  - a committed send notifies even when the concurrent sender that held the
    throttle row rolls back;
  - a trigger whose throttle row is gone (crash recovery empties the UNLOGGED
    table) keeps notifying, unthrottled;
  - disable_notify_insert stops notifications.
Runs with Debian's python3-psycopg (psycopg 3) against PGHOST/PGPORT/PGUSER, in
a database of its own. Exit 0 is a pass.
"""
import sys
import time

import psycopg

DB = "pgmq_it_notify"
QUEUE = "NotifyListen"
CHANNEL = f"pgmq.q_{QUEUE}.INSERT"


def admin(sql):
    with psycopg.connect(dbname="postgres", autocommit=True) as conn:
        conn.execute(sql)


class Listener:
    """A LISTENing connection that collects notifications when polled."""

    def __init__(self):
        self.conn = psycopg.connect(dbname=DB, autocommit=True)
        self.received = []
        self.conn.add_notify_handler(lambda notify: self.received.append(notify))
        self.conn.execute(f'LISTEN "{CHANNEL}"')

    def collect(self, expected, settle=0.5, timeout=5.0):
        """Waits until `expected` notifications arrived (or timeout), then
        `settle` seconds more for any extra one; returns and clears them."""
        deadline = time.monotonic() + timeout
        while len(self.received) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
            self.conn.execute("SELECT 1")  # delivers pending notifications
        time.sleep(settle)
        self.conn.execute("SELECT 1")
        got, self.received = self.received, []
        return got


failures = 0


def check(what, ok, detail=""):
    global failures
    print(f"[notify_listen] {'ok' if ok else 'FAIL'}: {what}{' (' + detail + ')' if detail and not ok else ''}")
    if not ok:
        failures += 1


def expect(listener, what, count):
    got = listener.collect(count)
    channels = [n.channel for n in got]
    payloads = [n.payload for n in got]
    check(what, len(got) == count and all(c == CHANNEL for c in channels) and all(p == "" for p in payloads),
          f"expected {count} on {CHANNEL}, got {list(zip(channels, payloads))}")


def main():
    admin(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    admin(f"CREATE DATABASE {DB}")
    try:
        with psycopg.connect(dbname=DB, autocommit=True) as setup:
            setup.execute("CREATE EXTENSION pgmq")
            setup.execute("SELECT pgmq.create(%s)", (QUEUE,))
            setup.execute("SELECT pgmq.enable_notify_insert(%s, 0)", (QUEUE,))
        listener = Listener()
        sender = psycopg.connect(dbname=DB)  # transactions are explicit
        other = psycopg.connect(dbname=DB)
        batch = [f'{{"i": {i}}}' for i in range(10)]

        with sender.transaction():
            sender.execute("SELECT pgmq.send_batch(%s, %s::jsonb[])", (QUEUE, batch))
        expect(listener, "a committed batch of 10 gives exactly one notification", 1)

        with sender.cursor() as cur:
            cur.execute("SELECT pgmq.send_batch(%s, %s::jsonb[])", (QUEUE, batch))
        sender.rollback()
        expect(listener, "a rolled-back batch gives none", 0)

        for _ in range(2):
            with sender.transaction():
                sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        expect(listener, "interval 0: two committed transactions give two notifications", 2)

        with sender.transaction():
            with sender.transaction():  # a savepoint, rolled back
                sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
                raise psycopg.Rollback()
            sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        expect(listener, "an insert after a rolled-back savepoint still notifies", 1)

        # A pause holds delivery, not inserts: the send notifies, and the
        # resume tells listeners that its message can be read now.
        with sender.transaction():
            sender.execute("SELECT pgmq.pause(%s)", (QUEUE,))
        expect(listener, "a pause gives none", 0)
        with sender.transaction():
            sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        expect(listener, "a send to a paused queue notifies", 1)
        with sender.cursor() as cur:
            cur.execute("SELECT pgmq.resume(%s)", (QUEUE,))
        sender.rollback()
        expect(listener, "a rolled-back resume gives none", 0)
        with sender.transaction():
            sender.execute("SELECT pgmq.resume(%s)", (QUEUE,))
        expect(listener, "a committed resume of the paused queue notifies once", 1)
        with sender.transaction():
            sender.execute("SELECT pgmq.resume(%s)", (QUEUE,))
        expect(listener, "resuming a queue that is not paused gives none", 0)

        # Concurrent senders: `other` holds an open inserting transaction (and
        # the throttle row); `sender` must not wait for it.
        other.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        with sender.transaction():  # a session setting, kept after the commit
            sender.execute("SET statement_timeout = '3s'")
        started = time.monotonic()
        try:
            with sender.transaction():
                sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
            waited = time.monotonic() - started
            check("a sender does not wait for another sender's open transaction", waited < 1.0, f"took {waited:.2f}s")
        except psycopg.errors.QueryCanceled:
            check("a sender does not wait for another sender's open transaction", False, "blocked until timeout")
        expect(listener, "the sender that did not wait still notified", 1)
        other.commit()
        expect(listener, "the other sender notified at its commit", 1)

        with sender.transaction():
            sender.execute("SELECT pgmq.update_notify_insert(%s, 3600000)", (QUEUE,))
        for _ in range(3):
            with sender.transaction():
                sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        expect(listener, "interval of an hour: three transactions give one notification", 1)

        # The transaction that stamped the throttle row rolls back, after a
        # concurrent sender found the row locked and committed: that committed
        # send must still notify (the old trigger left it to the row's holder,
        # and nobody notified).
        with sender.transaction():
            sender.execute("SELECT pgmq.update_notify_insert(%s, 3600000)", (QUEUE,))
        other.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))  # stamps the row, keeps it locked
        with sender.transaction():
            sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        other.rollback()
        expect(listener, "a committed send notifies when the throttle row's holder rolls back", 1)
        # The row's stamp died with the rollback: the next send notifies, and
        # stamps it; the one after that is throttled.
        for _ in range(2):
            with sender.transaction():
                sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        expect(listener, "then the throttle holds again: two more sends give one notification", 1)
        # Both commit, the holder first: the holder's notification covers the
        # other, as upstream's (which waits for the holder, then finds the
        # row stamped) would.
        with sender.transaction():
            sender.execute("SELECT pgmq.update_notify_insert(%s, 3600000)", (QUEUE,))
        other.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        other.commit()
        sender.commit()
        expect(listener, "when the holder commits first, concurrent senders share its notification", 1)

        # Crash recovery empties the UNLOGGED throttle table; the trigger stays.
        with sender.transaction():
            sender.execute("DELETE FROM pgmq.notify_insert_throttle WHERE queue_name = %s", (QUEUE,))
        for _ in range(2):
            with sender.transaction():
                sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        expect(listener, "without its throttle row (as after a crash) the trigger still notifies, unthrottled", 2)

        with sender.transaction():
            sender.execute("SELECT pgmq.disable_notify_insert(%s)", (QUEUE,))
            sender.execute("SELECT pgmq.send(%s, '{}')", (QUEUE,))
        expect(listener, "after disable_notify_insert: none", 0)

        for conn in (listener.conn, sender, other):
            conn.close()
    finally:
        admin(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    print(f"[notify_listen] {'passed' if failures == 0 else f'{failures} failed'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
