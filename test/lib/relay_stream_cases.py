"""test/lib/relay_stream_cases.py: the cases of test/integration/relay_stream.py
beyond its main scenario: configurations that stop the relay or subscribe a
group, a group over batch_max_bytes, an ordered group, the relay as a role
granted read access, a group unsubscribed under the relay, and upstream
pgmq. Each takes the scenario's Checks (check) and the relay binary.
"""
import json
import os
import signal
import subprocess
import threading
import time

import psycopg

from relay_harness import Database, Relay, drain, write_config
from upstream_install import install as install_upstream, short_name

ROLE = "pgmq_it_relay_stream_reader"  # a role that may read the stream, not own it


def relay_backend(db):
    """The PostgreSQL session of the one pgmq-relay connected to db, or None."""
    pids = db.sql("SELECT pid FROM pg_stat_activity WHERE application_name = 'pgmq-relay' AND datname = %s",
                  (db.name,))
    return pids[0][0] if len(pids) == 1 else None


def run_relay(binary, config, tmp, name, args=(), timeout=30):
    path = write_config(os.path.join(tmp, name + ".json"), config)
    try:
        return subprocess.run([binary, "--config", path, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(e.cmd, f"still running after {timeout} s", "", "")


def errors_of(result):
    return [line for line in result.stderr.splitlines() if " ERROR " in line or line.startswith("pgmq-relay: ")]


def config_cases(check, binary, base, stream, tmp, db):
    """Configurations that must stop the relay, and one that subscribes."""
    source = base["queues"][0]

    def with_source(**changes):
        config = json.loads(json.dumps(base))
        config["queues"] = [dict(source, **changes)]
        return config

    cases = [
        ("a group that is not subscribed", with_source(group="nobody"),
         ['group "nobody" is not subscribed to stream "' + stream + '"', "pgmq.subscribe"]),
        ("a stream that does not exist", with_source(name="no_such_stream"), ["no_such_stream"]),
        ("a queue that is not a stream", with_source(name="plain_queue"), ["plain_queue"]),
    ]
    db.sql("SELECT pgmq.create('plain_queue')")
    for what, config, words in cases:
        r = run_relay(binary, config, tmp, "case", ["--drain"])
        errors = errors_of(r)
        check(f"{what}: exit 2, one ERROR line naming it", r.returncode == 2 and len(errors) == 1
              and all(w in errors[0] for w in words), f"exit {r.returncode}: {errors or r.stderr[-300:]}")

    r = run_relay(binary, with_source(group="later", subscribe=True, since="not a time"), tmp, "case", ["--drain"])
    errors = errors_of(r)
    check("a since the database does not take: exit 2, one ERROR line", r.returncode == 2 and len(errors) == 1
          and 'cannot subscribe group "later"' in errors[0] and "not a time" in errors[0],
          f"exit {r.returncode}: {errors or r.stderr[-300:]}")

    for what, changes, words in (
            ("after_confirm with a group", {"after_confirm": "archive"}, ["queues[0].after_confirm", "pgmq.ack"]),
            ("since without subscribe", {"since": "-infinity"}, ["queues[0].since", "subscribe"])):
        r = run_relay(binary, with_source(**changes), tmp, "case")
        check(f"{what}: exit 2, one line naming the key", r.returncode == 2 and r.stderr.count("\n") == 1
              and all(w in r.stderr for w in words), f"exit {r.returncode}: {r.stderr.strip()[:300]}")

    # subscribe: a new group made at start, from the stream's first message.
    config = with_source(group="replay", subscribe=True, since="-infinity", exchange="", routing_key="replayed")
    r = run_relay(binary, config, tmp, "replay", ["--drain"], timeout=60)
    groups = [g for (g,) in db.sql("SELECT group_name FROM pgmq.stream_groups(%s)", (stream,))]
    check('"subscribe": true subscribes a missing group, and --drain exits 0', r.returncode == 0 and "replay" in groups
          and "subscribed group \"replay\"" in r.stderr, f"exit {r.returncode}, groups {groups}: {errors_of(r)}")
    # Reads over batch_max_bytes: what is read beyond the limit is released
    # (pgmq.release), comes back, and --drain waits for it.
    config = with_source(group="bytes", subscribe=True, since="-infinity", exchange="", routing_key="bytes")
    config["batch_max_bytes"] = 1024
    t0 = time.monotonic()
    b = run_relay(binary, config, tmp, "bytes", ["--drain"], timeout=120)
    check.say(f"batch_max_bytes 1024: --drain took {time.monotonic() - t0:.1f} s")

    # An ordered group, subscribed by its owner, read by two relays at once
    # over batch_max_bytes: the broker gets the stream in order, each message
    # once (what one relay read beyond the limit goes back to the group only
    # after the rest of its batch is acknowledged).
    db.sql("SELECT pgmq.subscribe(%s, 'ordered', '-infinity', ordered => true)", (stream,))
    config = with_source(group="ordered", exchange="", routing_key="ordered")
    config["batch_max_bytes"] = 1024
    config.pop("metrics_listen", None)  # one port each: none
    ordered = [None, None]

    def relay(i):
        ordered[i] = run_relay(binary, config, tmp, f"ordered{i}", ["--drain"], timeout=120)
    threads = [threading.Thread(target=relay, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return r, b, ordered


def as_reader(check, binary, config, stream, tmp, db, broker, committed):
    """The relay as a role that may read the stream and send to the
    dead-letter queue (grant_queue_access), as the page says, and no more."""
    source = config["queues"][0]
    dead = source["dead_letter_queue"]
    db.sql(f"DROP ROLE IF EXISTS {ROLE}")
    db.sql(f"CREATE ROLE {ROLE} LOGIN")
    for queue in (stream, dead):
        db.sql("SELECT pgmq.grant_queue_access(%s, %s, false)", (queue, ROLE))
    # The group's reader is the relay's role: no other reader of the stream may move it.
    db.sql("SELECT pgmq.subscribe(%s, 'reader', '-infinity', reader => %s::regrole)", (stream, ROLE))
    reader = dict(config, postgres=f"dbname={db.name} user={ROLE}", metrics_listen="",
                  queues=[dict(source, group="reader", exchange="", routing_key="replayed")])
    t0 = time.monotonic()
    r = run_relay(binary, reader, tmp, "reader", ["--drain"], timeout=60)
    check.say(f"as {ROLE}: --drain took {time.monotonic() - t0:.1f} s")
    dead_letters = db.sql(f"SELECT count(*) FROM pgmq.q_{dead} WHERE headers->>'x-pgmq-relay-group' = 'reader'")[0][0]
    relayed = sorted(b["n"] for _, b, _, _ in drain(broker, "replayed"))
    state = db.sql("SELECT pending, in_flight FROM pgmq.stream_groups(%s) WHERE group_name = 'reader'", (stream,))
    check("a role granted read access relays the group and sets refused messages aside", r.returncode == 0
          and relayed == sorted(committed) and dead_letters == 1 and state == [(0, 0)],
          f"exit {r.returncode}, {len(relayed)} relayed of {len(committed)}, {dead_letters} dead letters, {state}: {errors_of(r)}")
    # A group with a dead-letter queue of its own: reading it takes sending
    # there too. Refused until granted (logged, retried), then relayed.
    db.sql("SELECT pgmq.create('guard_dead')")
    db.sql("SELECT pgmq.subscribe(%s, 'guarded', '-infinity', dead_letter_queue => 'guard_dead')", (stream,))
    guarded = dict(reader, queues=[dict(reader["queues"][0], group="guarded")])
    relay = Relay(binary, write_config(os.path.join(tmp, "guarded.json"), guarded), os.path.join(tmp, "guarded.log"))
    relay.start()
    try:
        refused = check.wait_for("reading a group whose dead-letter queue the role may not send to is refused",
                                 lambda: "permission denied to read stream" in relay.text(), 10)
        db.sql("SELECT pgmq.grant_queue_access('guard_dead', %s, false)", (ROLE,))
        caught_up = check.wait_for("once granted, the group is relayed", lambda: db.sql(
            "SELECT pending, in_flight FROM pgmq.stream_groups(%s) WHERE group_name = 'guarded'", (stream,))
            == [(0, 0)], 30)
    finally:
        rc = relay.signal(signal.SIGTERM)
    relayed = len(drain(broker, "replayed"))
    check("a group's own dead-letter queue: refused, logged and retried until granted, then relayed",
          refused and caught_up and rc == 0 and relayed == len(committed), f"exit {rc}, {relayed} relayed")
    reader["queues"] = [dict(reader["queues"][0], group="reader2", subscribe=True)]
    r = run_relay(binary, reader, tmp, "reader2", ["--drain"])
    errors = errors_of(r)
    check("subscribe as a role that does not own the stream: exit 2, one ERROR line saying why", r.returncode == 2
          and len(errors) == 1 and "permission denied to subscribe" in errors[0], f"exit {r.returncode}: {errors}")


def unsubscribed_while_running(check, binary, config, stream, group, tmp, db):
    """The relay's group unsubscribed under it: exit 2, one line naming it."""
    relay = Relay(binary, write_config(os.path.join(tmp, "unsub.json"), config), os.path.join(tmp, "unsub.log"))
    relay.start()
    try:
        check.wait_for("the relay connected", lambda: relay_backend(db) is not None, 10)
        db.sql("SELECT pgmq.unsubscribe(%s, %s)", (stream, group))
        rc = relay.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        rc = "still running after 20 s"
    finally:
        if relay.alive():
            relay.signal(signal.SIGKILL)
    errors = [line for line in relay.text().splitlines() if " ERROR " in line]
    check("a group unsubscribed under the relay stops it: exit 2, one ERROR line naming it", rc == 2
          and len(errors) == 1 and f'consumer group "{group}"' in errors[0], f"exit {rc}: {errors}")


def upstream_case(check, binary, config, stream, tmp, db_name):
    """Against upstream pgmq's stand-in (test/lib/upstream_install.py, ours) a
    group stops the relay: streams are not available."""
    upstream_db = db_name + "_upstream"
    Database(upstream_db, install=lambda name: install_upstream(name, "1.13.1"))
    try:
        with psycopg.connect(dbname=upstream_db, autocommit=True) as conn:
            conn.execute("SELECT pgmq.create(%s)", (stream,))
        upstream = dict(config, postgres=f"dbname={upstream_db}", metrics_listen="")
        r = run_relay(binary, upstream, tmp, "upstream", ["--drain"])
        errors = errors_of(r)
        check("against upstream pgmq a group says streams are not available (exit 2)", r.returncode == 2
              and len(errors) == 1 and f"streams are not available with {short_name('1.13.1')}" in errors[0],
              f"exit {r.returncode}: {errors or r.stderr[-300:]}")
    finally:
        Database.drop(upstream_db)
