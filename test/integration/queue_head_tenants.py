#!/usr/bin/env python3
"""test/integration/queue_head_tenants.py: one tenant cannot blind another
tenant's queue through the queue heads in shared memory (issue 23).

The attack, as a review found it: a role that owns one queue gives its table
FORCE row security whose policy function, during a refresh of that queue's
head, catches an error (a subtransaction abort), reads 4,095 of its own
cheap views named like queues through pgmq.read (so that its own head is the
least recently used), and reads the victim's queue (which it has no rights
on). With the refresh
writing through a pointer to an evicted and reused entry, the victim's queue
then returned nothing to anyone. Here the victim's messages must still be
read by its owner, by a superuser, by pop and by read_with_poll, also ones
sent afterwards. Runs in a database of its own on the cluster in
PGHOST/PGPORT/PGUSER; needs pgmq preloaded.
"""
import sys

import psycopg

DB = "pgmq_head_tenants"
TAG = "[queue_head_tenants]"
VIEWS = 4096  # as many as there are heads

ATTACK = f"""
CREATE FUNCTION pgmq.evil_read_views(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    BEGIN
      PERFORM * FROM pgmq.read('v' || i, 0, 1);
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
  END LOOP;
END $$;
CREATE FUNCTION pgmq.evil_policy(msg_id bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  i int;
BEGIN
  -- Only for the leased row, which only a refresh's scan reaches.
  IF msg_id <> 1000000001 OR current_setting('evil.done', true) = 'yes' THEN
    RETURN true;
  END IF;
  PERFORM set_config('evil.done', 'yes', false);
  -- A caught error: a subtransaction abort, during this queue's refresh.
  BEGIN
    RAISE EXCEPTION 'caught';
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  -- Heads for all views but one again: this queue's is then the oldest.
  PERFORM pgmq.evil_read_views({VIEWS} - 1);
  -- The victim's head, added again, in the place of the oldest.
  BEGIN
    PERFORM * FROM pgmq.read('victim', 0, 1);
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  RETURN true;
END $$;
"""


def connect(**kw):
    return psycopg.connect(dbname=DB, autocommit=True, **kw)


def ids(conn, sql):
    return sorted(r[0] for r in conn.execute(sql).fetchall())


def main():
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        if "pgmq" not in admin.execute("SHOW shared_preload_libraries").fetchone()[0]:
            print(f"{TAG} skipped: pgmq is not preloaded, reads have no head")
            return 0
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB}")
    try:
        return run()
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            for role in ("head_victim", "head_evil"):
                admin.execute(f"DROP ROLE IF EXISTS {role}")


def run():
    failures = []
    with connect() as admin:
        admin.execute("CREATE EXTENSION pgmq CASCADE")
        for role in ("head_victim", "head_evil"):
            admin.execute(f"DROP ROLE IF EXISTS {role}")
            admin.execute(f"CREATE ROLE {role} LOGIN")
            admin.execute(f"GRANT USAGE, CREATE ON SCHEMA pgmq TO {role}")
            admin.execute(f"GRANT SELECT, INSERT, DELETE ON pgmq.meta TO {role}")
        admin.execute("SET pgmq.queue_head_refresh_interval = 0")
        admin.execute("SET pgmq.queue_head_rescan_interval = '1h'")
        with connect(user="head_victim") as victim:
            victim.execute("SELECT pgmq.create('victim')")
            victim.execute("SELECT pgmq.send_batch('victim', array_fill('{}'::jsonb, ARRAY[3]))")
        # The victim's queue has a head (its first read adds it, the next moves it).
        admin.execute("SELECT * FROM pgmq.read('victim', 0, 1)")
        admin.execute("SELECT * FROM pgmq.read('victim', 0, 1)")

        with connect(user="head_evil") as evil:
            evil.execute("SELECT pgmq.create('evil')")
            evil.execute("SELECT pgmq.send('evil', '{}')")
            evil.execute("ALTER SEQUENCE pgmq.q_evil_msg_id_seq RESTART 1000000000")
            evil.execute("SELECT pgmq.send_batch('evil', array_fill('{}'::jsonb, ARRAY[4]))")
            evil.execute("DELETE FROM pgmq.q_evil WHERE msg_id < 1000000000")
            # 1000000001 leased: a pop takes 1000000000, its head's refresh scans on.
            evil.execute("UPDATE pgmq.q_evil SET vt = now() + interval '1 hour' WHERE msg_id = 1000000001")
            evil.execute(f"DO $$ BEGIN FOR i IN 1..{VIEWS} LOOP "
                         "EXECUTE format('CREATE VIEW pgmq.q_v%s AS SELECT 1 AS msg_id', i); END LOOP; END $$")
            evil.execute(ATTACK)
            evil.execute("ALTER TABLE pgmq.q_evil ENABLE ROW LEVEL SECURITY")
            evil.execute("ALTER TABLE pgmq.q_evil FORCE ROW LEVEL SECURITY")
            evil.execute("CREATE POLICY evil ON pgmq.q_evil USING (pgmq.evil_policy(msg_id))")
            evil.execute("SET pgmq.queue_head_refresh_interval = 0")
            evil.execute("SET pgmq.queue_head_rescan_interval = '1h'")
            # Views' heads in every entry, then evil's queue's head, the newest;
            # the pop refreshes it.
            evil.execute(f"SELECT pgmq.evil_read_views({VIEWS})")
            evil.execute("SELECT * FROM pgmq.read('evil', 0, 1)")
            evil.execute("SELECT * FROM pgmq.pop('evil')")
            ran = evil.execute("SELECT current_setting('evil.done', true)").fetchone()[0] == "yes"
            print(f"{TAG} the policy function's attack {'ran' if ran else 'never ran (no refresh runs it)'}")

        expected = ids(admin, "SELECT msg_id FROM pgmq.q_victim")
        with connect(user="head_victim") as victim:
            got = ids(victim, "SELECT msg_id FROM pgmq.read('victim', 0, 10)")
            if got != expected:
                failures.append(f"the victim's owner read {got}, the table holds {expected}")
            victim.execute("SELECT pgmq.send('victim', '{}')")
        expected = ids(admin, "SELECT msg_id FROM pgmq.q_victim")
        checks = {
            "a superuser's read": "SELECT msg_id FROM pgmq.read('victim', 0, 10)",
            "read_with_poll": "SELECT msg_id FROM pgmq.read_with_poll('victim', 0, 10, 1, 10)",
        }
        for what, sql in checks.items():
            got = ids(admin, sql)
            if got != expected:
                failures.append(f"{what} returned {got}, the table holds {expected}")
        admin.execute("BEGIN")
        got = ids(admin, "SELECT msg_id FROM pgmq.pop('victim', 10)")
        admin.execute("ROLLBACK")
        if got != expected:
            failures.append(f"pop returned {got}, the table holds {expected}")

    for f in failures:
        print(f"{TAG} FAIL: {f}")
    if failures:
        return 1
    print(f"{TAG} passed: the victim's {len(expected)} messages were read by its owner, a superuser, "
          "read_with_poll and pop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
