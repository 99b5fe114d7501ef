#!/usr/bin/env python3
"""test/integration/bad_input_sweep.py: every public pgmq function, every
argument, every kind of bad value.

The functions come from the catalog (pg_proc in schema pgmq), so a function
added later is swept without editing this file. For each function the sweep
makes one call with good arguments, then one call per (argument, bad value):
NULL in every position, empty, 47/48/63/64-byte and huge names, quotes,
semicolons, backslashes, newlines, unicode and injection attempts, zero,
negative and extreme integers, non-object and deeply nested JSON, arrays
with NULL elements, two dimensions or mismatched lengths, infinite
timestamps, and 100 MB payloads. After every call:

  - the backend that made the call still answers SELECT 1, a second
    connection opened at the start is still alive (a crash restarts every
    backend) and pg_postmaster_start_time() has not changed;
  - an error carries a SQLSTATE listed in docs/errors.md, and never an
    internal-error class (XX...);
  - a failed call left its queue's row count as it was, and two sentinel
    queues (plain and partitioned) that no call names still hold exactly
    their messages and archives, byte for byte.

Then the hostile table shapes (issue 10): for each column of the queue and
archive tables, the column's type swapped for text, for a by-value type, or
the column dropped; msg_id without its identity; either table replaced by a
view; a wrongly typed queue table made before create. Every function that
names a queue (and those that take no argument) is called on each damaged
queue: no crash, a documented SQLSTATE, and for the functions that read or
write the table (read*, pop, set_vt, send*, delete, archive, metrics) an
error that names the damaged table.

Then issue 24's shapes, as a tenant: pgmq's trigger functions attached to
its own table, every queue-naming function on a queue whose tables it
dropped with DROP TABLE, and overloads of every pgmq function name.

Runs in a database of its own on the cluster in PGHOST/PGPORT/PGUSER, which
it drops at the end. Exit 0 when every check held. PGMQ_SWEEP_QUICK=1 skips
the 100 MB payloads. PGMQ_SERVER_LOG=<path of the server log> also fails the
sweep on any "terminated by signal" logged while it ran.
"""
import os
import re
import sys
import time

import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCUMENTED = os.path.join(REPO, "docs", "errors.md")
BIG_PAYLOAD_BYTES = 100 * 1024 * 1024
QUICK = os.environ.get("PGMQ_SWEEP_QUICK") == "1"
SERVER_LOG = os.environ.get("PGMQ_SERVER_LOG")

# Every call runs under these limits: a call that waits longer is cancelled
# (57014), which is a documented outcome, not a hang.
STATEMENT_TIMEOUT = "5s"
LOCK_TIMEOUT = "2s"


def documented_sqlstates():
    """The SQLSTATEs of docs/errors.md: the first column of its tables, `XXXXX`."""
    codes = set()
    with open(DOCUMENTED, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*`([0-9A-Z]{5})`\s*\|", line)
            if m:
                codes.add(m.group(1))
    return codes


# --- values -----------------------------------------------------------------

def names():
    """Bad queue (and table) names. None of them is, or lowercases to, a sentinel."""
    return [
        ("empty", ""),
        ("47 chars", "n" * 47),
        ("48 chars", "n" * 48),
        ("63 bytes", "n" * 63),
        ("64 bytes", "n" * 64),
        ("47 two-byte chars", "é" * 47),
        ("1 MB", "n" * (1024 * 1024)),
        ("double quote", 'quote"name'),
        ("lone double quote", '"'),
        ("single quote", "single'quote"),
        ("semicolon", "semi;colon"),
        ("double dash", "double--dash"),
        ("dollar", "dollar$sign"),
        ("dollar quote", "$$"),
        ("backslash", "back\\slash"),
        ("trailing backslash", "name\\"),
        ("newline", "new\nline"),
        ("tab", "tab\tname"),
        ("unicode", "队列"),
        ("emoji", "🙂queue"),
        ("right-to-left", "\u202equeue"),
        ("mixed case", "MiXeD"),
        ("dot", "dot.name"),
        ("space", "space name"),
        ("comment opener", "x/*"),
        ("printf", "%s%n%x"),
        ("path", "../victim"),
        ("quote then cast", 'victim"::text'),
        ("injection quote", "victim'; DROP TABLE pgmq.q_sentinel; --"),
        ("injection ident", 'victim"; DROP TABLE pgmq.q_sentinel; --'),
        ("injection no semicolon", 'victim" WHERE true OR "'),
        ("injection union", 'x" UNION SELECT * FROM pgmq."q_sentinel'),
        ("table prefix", "q_sentinel"),
        ("catalog", "pg_catalog.pg_class"),
        ("meta", "meta"),
        ("qualified", "pgmq.meta"),
    ]


def texts():
    """Bad values for other text arguments (prefixes, patterns, keys, intervals, roles)."""
    return [
        ("empty", ""),
        ("100 kB", "t" * 100_000),
        ("double quote", 'a"b'),
        ("single quote", "a'b"),
        ("semicolon", "a;b"),
        ("backslash", "a\\b"),
        ("newline", "a\nb"),
        ("unicode", "队列.键"),
        ("injection", "x'); DELETE FROM pgmq.q_sentinel; --"),
        ("hash", "#"),
        ("star", "*"),
        ("dots", ".."),
        ("regex", "(a+)+$"),
        ("zero", "0"),
        ("negative", "-1"),
        ("beyond int4", "2147483648"),
        ("duration", "1 year"),
        ("bad duration", "5 fortnights"),
        ("infinity", "infinity"),
        ("role public", "public"),
        ("printf", "%s%n"),
    ]


def int4s():
    return [("zero", 0), ("minus one", -1), ("min int4", -(2**31)), ("max int4", 2**31 - 1)]


def int8s():
    return [("zero", 0), ("minus one", -1), ("min int8", -(2**63)), ("max int8", 2**63 - 1)]


def nested_array(depth):
    return "[" * depth + "]" * depth


def jsonbs():
    return [
        ("json null", "null"),
        ("number", "0"),
        ("big number", "1e308"),
        ("string", '"text"'),
        ("empty array", "[]"),
        ("array", "[1, null, {}]"),
        ("boolean", "true"),
        ("empty object", "{}"),
        ("null member", '{"a": null}'),
        ("nested 1000", nested_array(1000)),
        ("10k keys", "{" + ", ".join('"k%d": %d' % (i, i) for i in range(10_000)) + "}"),
        ("1 MB string", '{"s": "' + "x" * (1024 * 1024) + '"}'),
        ("unicode escape", '{"s": "\\u00e9\\ud83d\\ude42"}'),
        ("group key", '{"x-pgmq-group": null}'),
    ]


def jsonb_arrays():
    return [
        ("empty", []),
        ("one NULL", [None]),
        ("NULL first", [None, "{}"]),
        ("NULL last", ["{}", None]),
        ("two dimensions", [["{}"], ["{}"]]),
        ("not objects", ["null", "1", '"s"', "[]"]),
        ("one element", ["{}"]),
        ("three elements", ["{}", "{}", "{}"]),
        ("10k elements", ["{}"] * 10_000),
    ]


def int8_arrays():
    return [
        ("empty", []),
        ("one NULL", [None]),
        ("NULL among", [1, None, 2]),
        ("two dimensions", [[1], [2]]),
        ("extremes", [-(2**63), -1, 0, 2**63 - 1]),
        ("duplicates", [1, 1, 1]),
        ("100k ids", list(range(100_000))),
    ]


def text_arrays():
    """Arrays of queue names (read_multi): each bad name of names() alone,
    and arrays that are bad as arrays."""
    return [("[%s]" % label, [value]) for label, value in names() if value is not None] + [
        ("empty", []),
        ("NULL among", ["victim", None]),
        ("two dimensions", [["victim"], ["victim"]]),
        ("one missing", ["victim", "no_such_queue"]),
        ("the same queue in many spellings", ["victim", "VICTIM", "Victim"]),
        ("10k names", ["victim"] * 10_000),
    ]


def timestamps():
    return [
        ("infinity", "infinity"),
        ("minus infinity", "-infinity"),
        ("epoch", "epoch"),
        ("earliest", "4713-11-24 00:00:00+00 BC"),
        ("latest", "294276-12-31 23:59:59+00"),
        ("future", "2200-01-01 00:00:00+00"),
    ]


def booleans():
    return [("true", True), ("false", False)]


def intervals():
    return [
        ("zero", "0"),
        ("negative", "-1 hour"),
        ("one microsecond", "1 microsecond"),
        ("months", "1 month"),
        ("mixed signs", "1 day -25 hours"),
        ("huge", "178000000 years"),
        ("infinity", "infinity"),  # PostgreSQL 17+; earlier ones refuse it as input
    ]


def regclasses():
    return [
        ("another table", "pgmq.meta"),
        ("another queue", "pgmq.q_sentinel"),
        ("a missing OID", "4294967295"),
        ("zero", "0"),
        ("a catalog", "pg_catalog.pg_authid"),
    ]


def roles():
    return [
        ("a missing OID", "4294967295"),
        ("zero", "0"),
        ("a built-in role", "pg_monitor"),
        ("a superuser", "postgres"),
    ]


def role_names():
    return [
        ("empty", ""),
        ("no such role", "no_such_role"),
        ("a built-in role", "pg_monitor"),
        ("public", "public"),
        ("longer than a name", "r" * 100),
    ]


def regclass_arrays():
    return [("empty", [])] + [(what, [value]) for what, value in regclasses()] + [
        ("a NULL element", ["pgmq.q_victim", None]),
        ("every catalog", ["pg_catalog.pg_class", "pg_catalog.pg_proc", "pg_catalog.pg_depend"]),
        ("the same twice", ["pgmq.q_victim", "pgmq.q_victim"]),
    ]


BAD_VALUES = {
    "text": None,  # names() or texts(), by argument name
    "integer": int4s,
    "bigint": int8s,
    "boolean": booleans,
    "jsonb": jsonbs,
    "jsonb[]": jsonb_arrays,
    "text[]": text_arrays,
    "bigint[]": int8_arrays,
    "timestamp with time zone": timestamps,
    "interval": intervals,
    "regclass": regclasses,
    "regclass[]": regclass_arrays,
    "regrole": roles,
    "name": role_names,
}

NAME_ARGUMENTS = {"queue_name", "table_name", "dead_letter_queue", "source", "target"}

# Good values by argument name, then by type: a call with only these should
# reach the function's real work, so that each bad value is tested alone.
GOOD_BY_NAME = {
    "queue_name": "victim",
    "table_name": "victim",
    "msg": '{"ok": 1}',
    "msgs": ['{"ok": 1}', '{"ok": 2}'],
    "vt": 0,
    "qty": 1,
    "conditional": "{}",
    "max_poll_seconds": 0,
    "poll_interval_ms": 10,
    "msg_id": 1,
    "msg_ids": [1, 2],
    "prefix": "q",
    "partition_interval": "10000",
    "retention_interval": "100000",
    "premake": 4,
    "partitioned": False,
    "role_name": "postgres",
    "archive": True,
    "throttle_interval_ms": 250,
    "pattern": "victim.*",
    "routing_key": "victim.a",
    "extension_name": "pgmq",
    # Delivery policies: a dead-letter queue of the victim, made in setup.
    "dead_letter_queue": "victim_dlq",
    "max_deliveries": 5,
    "base_seconds": 1,
    "max_seconds": 10,
    "window": "1 hour",
    "max_age": "1 day",
    "archive_max_age": "1 day",
    "queue_relid": "pgmq.q_victim",
    "dead_letter_relid": "pgmq.q_victim_dlq",
    # move: from the victim to its dead-letter queue; peek: from the start.
    "source": "victim",
    "target": "victim_dlq",
    "after_msg_id": 0,
    "levels": 3,
}
# A plain queue cannot become partitioned: create_partitioned gets a queue of
# its own, created by its first call and found again by the later ones.
GOOD_BY_FUNCTION = {("create_partitioned", "queue_name"): "pvictim"}
GOOD_BY_TYPE = {
    "text": "victim",
    "integer": 1,
    "bigint": 1,
    "boolean": True,
    "jsonb": '{"h": 1}',
    "jsonb[]": ['{"h": 1}', '{"h": 2}'],
    "bigint[]": [1, 2],
    "text[]": ["victim", "victim_dlq"],
    "timestamp with time zone": "2000-01-01 00:00:00+00",
    "interval": "1 hour",
    "regclass": "pgmq.q_victim",
    "regclass[]": ["pgmq.q_victim", "pgmq.a_victim"],
    "regrole": "postgres",
    "name": "postgres",
}


def good_value(arg_name, arg_type, function=None):
    if (function, arg_name) in GOOD_BY_FUNCTION:
        return GOOD_BY_FUNCTION[(function, arg_name)]
    if arg_name in GOOD_BY_NAME:
        value = GOOD_BY_NAME[arg_name]
        # vt/delay are integer or timestamptz depending on the overload.
        if arg_type == "timestamp with time zone" and not isinstance(value, str):
            return GOOD_BY_TYPE[arg_type]
        return value
    return GOOD_BY_TYPE[arg_type]


def bad_values(arg_name, arg_type):
    if arg_type == "text":
        values = names() if arg_name in NAME_ARGUMENTS else texts()
    else:
        values = BAD_VALUES[arg_type]()
    return [("NULL", None)] + values


# --- the sweep ---------------------------------------------------------------

def connect_retrying(dbname):
    """A connection, waiting out a crash restart (recovery) for up to a minute."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return psycopg.connect(dbname=dbname, autocommit=True)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class Sweep:
    def __init__(self, dbname):
        self.dbname = dbname
        self.documented = documented_sqlstates()
        self.failures = []
        self.calls = 0
        self.errors_by_state = {}
        self.rejected_by_type_input = 0
        self.cast_ok = {}
        self.good_call_errors = []
        self.connect()

    def connect(self):
        self.caller = connect_retrying(self.dbname)
        self.caller.execute("SET statement_timeout = '%s'" % STATEMENT_TIMEOUT)
        self.caller.execute("SET lock_timeout = '%s'" % LOCK_TIMEOUT)
        self.caller.execute("SET client_min_messages = error")

    def fail(self, what):
        self.failures.append(what)
        print("FAIL: " + what, flush=True)

    # Setup ------------------------------------------------------------------

    def setup(self):
        c = self.caller
        c.execute("CREATE SCHEMA IF NOT EXISTS partman")
        c.execute("CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman")
        c.execute("CREATE EXTENSION IF NOT EXISTS pgmq")
        # The dead-letter queue the policy functions name (and redrive reads).
        c.execute("SELECT pgmq.create('victim_dlq')")
        # Sentinels: no call names them; they must come out untouched.
        c.execute("SELECT pgmq.create('sentinel')")
        c.execute("SELECT pgmq.send_batch('sentinel', ARRAY(SELECT jsonb_build_object('n', i) "
                  "FROM generate_series(1, 100) i))")
        c.execute("SELECT pgmq.archive('sentinel', ARRAY(SELECT generate_series(1, 10)::bigint))")
        c.execute("SELECT pgmq.create_partitioned('psentinel', '1000', '100000')")
        c.execute("SELECT pgmq.send_batch('psentinel', ARRAY(SELECT jsonb_build_object('n', i) "
                  "FROM generate_series(1, 50) i))")
        c.execute("SELECT pgmq.archive('psentinel', ARRAY(SELECT generate_series(1, 5)::bigint))")
        self.sentinel_state = self.sentinels()
        self.monitor = psycopg.connect(dbname=self.dbname, autocommit=True)
        self.start_time = self.monitor.execute("SELECT pg_postmaster_start_time()").fetchone()[0]

    def sentinels(self):
        """A fingerprint of the sentinel queues: row counts and a hash of every row."""
        parts = []
        for table in ("q_sentinel", "a_sentinel", "q_psentinel", "a_psentinel"):
            parts.append(self.caller.execute(
                "SELECT count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY msg_id), '')) FROM pgmq.%s t" % table
            ).fetchone())
        parts.append(self.caller.execute(
            "SELECT count(*) FROM pgmq.meta WHERE queue_name IN ('sentinel', 'psentinel')").fetchone())
        return parts

    def ensure_victim(self):
        """The queue that calls name: present, with a few visible messages. Returns its row count."""
        c = self.caller
        c.execute("SELECT pgmq.create('victim')")
        count = c.execute("SELECT count(*) FROM pgmq.q_victim").fetchone()[0]
        if count > 1000:
            c.execute("SELECT pgmq.purge_queue('victim')")
            count = 0
        if count < 3:
            c.execute("SELECT pgmq.send_batch('victim', ARRAY['{\"v\": 1}', '{\"v\": 2}', '{\"v\": 3}']::jsonb[])")
            count += 3
        # Keep them visible: a read with a large vt would hide them from later
        # calls, and so would a pause.
        c.execute("UPDATE pgmq.q_victim SET vt = '2000-01-01'")
        if c.execute("SELECT EXISTS (SELECT FROM pgmq.policies WHERE queue_name = 'victim' "
                     "AND paused_at IS NOT NULL)").fetchone()[0]:
            c.execute("SELECT pgmq.resume('victim')")
        return c.execute("SELECT count(*) FROM pgmq.q_victim").fetchone()[0]

    def functions(self):
        return self.caller.execute("""
            SELECT p.proname,
                   pg_get_function_identity_arguments(p.oid),
                   coalesce(p.proargnames[1:p.pronargs], '{}'),
                   ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, i)
                         ORDER BY i)
            FROM pg_proc p
            WHERE p.pronamespace = 'pgmq'::regnamespace
              AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
              AND p.prokind = 'f'
            ORDER BY 1, 2""").fetchall()

    # One call ---------------------------------------------------------------

    def castable(self, value, arg_type):
        """Whether PostgreSQL's own type input accepts the value (else pgmq never sees it)."""
        key = (arg_type, hash(repr(value)))
        if key not in self.cast_ok:
            try:
                self.caller.execute("SELECT (%%s::%s) IS NULL" % arg_type, [value])
                self.cast_ok[key] = True
            except psycopg.Error:
                self.cast_ok[key] = False
        return self.cast_ok[key]

    def call(self, name, arg_types, values, label):
        if not all(self.castable(v, t) for v, t in zip(values, arg_types)):
            self.rejected_by_type_input += 1
            return
        before = self.ensure_victim()
        args = ", ".join("%%s::%s" % t for t in arg_types)
        # count(*) consumes every row server-side: 100 MB results and
        # infinite timestamps never cross to the client.
        statement = 'SELECT count(*) FROM pgmq."%s"(%s) AS r' % (name, args)
        self.calls += 1
        error = None
        try:
            self.caller.execute(statement, values)
        except psycopg.Error as e:
            error = e
        where = "%s(%s) [%s]" % (name, ", ".join(arg_types), label)
        if error is not None and label == "good arguments":
            self.good_call_errors.append("%s(%s): %s" % (name, ", ".join(arg_types), error.sqlstate))
        if error is not None:
            state = error.sqlstate
            self.errors_by_state[state] = self.errors_by_state.get(state, 0) + 1
            if state is None:
                self.fail("%s: error without SQLSTATE: %s" % (where, str(error).strip()[:300]))
            elif state.startswith("XX"):
                self.fail("%s: internal error %s: %s" % (where, state, str(error).strip()[:300]))
            elif state not in self.documented:
                self.fail("%s: SQLSTATE %s is not in docs/errors.md: %s" % (where, state, str(error).strip()[:300]))
        self.check_alive(where)
        if error is not None and self.caller.execute(
                "SELECT to_regclass('pgmq.q_victim') IS NOT NULL").fetchone()[0]:
            after = self.caller.execute("SELECT count(*) FROM pgmq.q_victim").fetchone()[0]
            if after != before:
                self.fail("%s: failed, yet the queue went from %d to %d messages" % (where, before, after))
        state = self.sentinels()
        if state != self.sentinel_state:
            self.fail("%s: a sentinel queue changed: %r -> %r" % (where, self.sentinel_state, state))
            self.sentinel_state = state

    def check_alive(self, where):
        try:
            self.caller.execute("SELECT 1").fetchone()
        except psycopg.Error as e:
            self.fail("%s: the calling backend is gone: %s" % (where, e))
            self.connect()
        try:
            start = self.monitor.execute("SELECT pg_postmaster_start_time()").fetchone()[0]
            if start != self.start_time:
                self.fail("%s: the postmaster restarted (%s -> %s)" % (where, self.start_time, start))
                self.start_time = start
        except psycopg.Error as e:
            self.fail("%s: another backend was killed (crash restart?): %s" % (where, e))
            self.monitor = connect_retrying(self.dbname)
            self.start_time = self.monitor.execute("SELECT pg_postmaster_start_time()").fetchone()[0]

    # The sweep --------------------------------------------------------------

    def run(self):
        self.setup()
        functions = self.functions()
        for name, identity, arg_names, arg_types in functions:
            arg_names = list(arg_names) + [""] * (len(arg_types) - len(arg_names))
            good = [good_value(n, t, name) for n, t in zip(arg_names, arg_types)]
            self.call(name, arg_types, good, "good arguments")
            for i, (arg_name, arg_type) in enumerate(zip(arg_names, arg_types)):
                if arg_type not in BAD_VALUES:
                    self.fail("%s(%s): no bad values for type %s" % (name, identity, arg_type))
                    continue
                for label, value in bad_values(arg_name, arg_type):
                    values = list(good)
                    values[i] = value
                    self.call(name, arg_types, values, "%s = %s" % (arg_name or "$%d" % (i + 1), label))
            # Arrays of mismatched lengths: msgs and headers disagree.
            if "msgs" in arg_names and "headers" in arg_names:
                m, h = arg_names.index("msgs"), arg_names.index("headers")
                for label, msgs, headers in (("2 msgs, 1 header", ['{}', '{}'], ['{}']),
                                             ("1 msg, 2 headers", ['{}'], ['{}', '{}']),
                                             ("1 msg, empty headers", ['{}'], []),
                                             ("1 msg, 2-D headers", ['{}'], [['{}']])):
                    values = list(good)
                    values[m], values[h] = msgs, headers
                    self.call(name, arg_types, values, label)
        self.sweep_big_payloads(functions)
        return functions

    def sweep_big_payloads(self, functions):
        if QUICK:
            print("100 MB payloads skipped (PGMQ_SWEEP_QUICK=1)")
            return
        big = '{"payload": "' + "x" * BIG_PAYLOAD_BYTES + '"}'
        cases = {
            ("send", "queue_name text, msg jsonb"): "msg",
            ("send", "queue_name text, msg jsonb, headers jsonb"): "headers",
            ("send_batch", "queue_name text, msgs jsonb[]"): "msgs",
            ("read", "queue_name text, vt integer, qty integer, conditional jsonb"): "conditional",
        }
        for name, identity, arg_names, arg_types in functions:
            target = cases.get((name, identity))
            if target is None:
                continue
            values = [good_value(n, t) for n, t in zip(arg_names, arg_types)]
            i = list(arg_names).index(target)
            values[i] = [big] if arg_types[i] == "jsonb[]" else big
            started = time.monotonic()
            self.call(name, arg_types, values, "%s = 100 MB" % target)
            print("%s(%s) with a 100 MB %s: %.1f s" % (name, identity, target, time.monotonic() - started))
            self.caller.execute("SELECT pgmq.purge_queue('victim')")


# --- hostile table shapes ------------------------------------------------------

HOSTILE = "hostile"
# Columns of the queue table, with a by-value type that is not theirs.
QUEUE_COLUMNS = [("msg_id", "integer"), ("read_ct", "bigint"), ("enqueued_at", "timestamp"),
                 ("last_read_at", "timestamp"), ("vt", "timestamp"), ("message", "bigint"),
                 ("headers", "bigint")]
ARCHIVE_COLUMNS = QUEUE_COLUMNS[1:] + [("msg_id", "integer"), ("archived_at", "timestamp")]
# The functions that run pgmq's statements on the queue table (all of them
# verify its shape), and those that also use the archive.
TABLE_FUNCTIONS = {"read", "read_with_poll", "pop", "set_vt", "read_grouped", "read_grouped_with_poll",
                   "read_grouped_rr", "read_grouped_rr_with_poll", "read_grouped_head",
                   "read_grouped_head_with_poll", "send", "send_batch", "delete", "archive", "metrics",
                   "peek", "unarchive", "set_priority"}
ARCHIVE_FUNCTIONS = {"archive", "unarchive"}
SHAPE_SQLSTATES = {"42804", "42703", "42809", "42P16"}


def hostile_shapes():
    """(label, table prefix, SQL that damages pgmq.<prefix>_hostile) for every hostile shape."""
    shapes = []
    for prefix, columns in (("q", QUEUE_COLUMNS), ("a", ARCHIVE_COLUMNS)):
        t = "pgmq.%s_%s" % (prefix, HOSTILE)
        for column, by_value in columns:
            # An identity column must stay an integer type.
            unidentify = ("ALTER TABLE %s ALTER COLUMN msg_id DROP IDENTITY; " % t
                          if prefix == "q" and column == "msg_id" else "")
            shapes.append(("%s.%s as text" % (t, column), prefix,
                           unidentify + "ALTER TABLE %s ALTER COLUMN %s TYPE text USING %s::text" % (t, column, column)))
            shapes.append(("%s.%s as %s" % (t, column, by_value), prefix,
                           "ALTER TABLE %s ALTER COLUMN %s TYPE %s USING NULL" % (t, column, by_value)
                           if by_value in ("bigint",) and column in ("message", "headers") else
                           "ALTER TABLE %s ALTER COLUMN %s TYPE %s" % (t, column, by_value)))
            shapes.append(("%s.%s dropped" % (t, column), prefix,
                           "ALTER TABLE %s DROP COLUMN %s CASCADE" % (t, column)))
        shapes.append(("%s replaced by a view" % t, prefix,
                       "CREATE TABLE public.hostile_elsewhere (LIKE %s INCLUDING ALL); DROP TABLE %s; "
                       "CREATE VIEW %s AS SELECT * FROM public.hostile_elsewhere" % (t, t, t)))
    shapes.append(("pgmq.q_hostile.msg_id without identity", "q",
                   "ALTER TABLE pgmq.q_hostile ALTER COLUMN msg_id DROP IDENTITY"))
    shapes.append(("pgmq.q_hostile made before create, message text", "q",
                   "DROP TABLE pgmq.q_hostile; CREATE TABLE pgmq.q_hostile (msg_id bigint GENERATED ALWAYS AS "
                   "IDENTITY PRIMARY KEY, read_ct int DEFAULT 0 NOT NULL, enqueued_at timestamptz DEFAULT now() "
                   "NOT NULL, last_read_at timestamptz, vt timestamptz NOT NULL, message text, headers jsonb); "
                   "INSERT INTO pgmq.q_hostile (vt, message) VALUES ('2000-01-01', 'not json'); "
                   "TRY SELECT pgmq.create('hostile')"))
    return shapes


class ShapeSweep:
    """Every queue-naming function on each hostile shape of the queue 'hostile'."""

    def __init__(self, sweep):
        self.sweep = sweep
        self.c = sweep.caller
        self.calls = 0
        self.outcomes = {}

    def drop(self):
        """Drops the hostile queue's relations, whatever they have become."""
        c = self.c
        for name, relkind in c.execute(
                "SELECT oid::regclass::text, relkind FROM pg_class WHERE oid IN "
                "(to_regclass('pgmq.q_hostile'), to_regclass('pgmq.a_hostile'), to_regclass('public.hostile_elsewhere'))"
        ).fetchall():
            c.execute("DROP %s IF EXISTS %s CASCADE" % ("VIEW" if relkind == "v" else "TABLE", name))
        c.execute("DELETE FROM pgmq.meta WHERE queue_name = %s", [HOSTILE])

    def reset(self):
        c = self.c
        self.drop()
        c.execute("SELECT pgmq.create(%s)", [HOSTILE])
        c.execute("SELECT pgmq.send_batch(%s, ARRAY['{\"v\": 1}', '{\"v\": 2}', '{\"v\": 3}']::jsonb[], "
                  "ARRAY['{\"x-pgmq-group\": \"g\"}', NULL, '{\"h\": 1}']::jsonb[])", [HOSTILE])
        c.execute("SELECT pgmq.archive(%s, 3::bigint)", [HOSTILE])
        # send_topic's good routing key reaches this queue too.
        c.execute("SELECT pgmq.bind_topic(%s, %s)", [GOOD_BY_NAME["pattern"], HOSTILE])

    def damage(self, sql):
        """Rebuilds the queue and damages it; returns a fingerprint of the damage."""
        self.reset()
        for statement in sql.split("; "):
            if statement.startswith("TRY "):
                # create may accept or refuse a table it did not make.
                try:
                    self.c.execute(statement[4:])
                except psycopg.Error:
                    pass
            else:
                self.c.execute(statement)
        return self.fingerprint()

    def fingerprint(self):
        return self.c.execute("""
            SELECT c.relname, c.relkind, a.attname, a.atttypid, a.attidentity
            FROM pg_class c LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relname IN ('q_hostile', 'a_hostile')
            ORDER BY 1, 3""").fetchall()

    def run(self, functions):
        shapes = hostile_shapes()
        for label, prefix, sql in shapes:
            state = self.damage(sql)
            for name, identity, arg_names, arg_types in functions:
                arg_names = list(arg_names) + [""] * (len(arg_types) - len(arg_names))
                if arg_types and not {"queue_name", "table_name", "routing_key"} & set(arg_names):
                    continue
                if self.fingerprint() != state:  # a successful call changed the table
                    state = self.damage(sql)
                values = [HOSTILE if n in NAME_ARGUMENTS else good_value(n, t, name)
                          for n, t in zip(arg_names, arg_types)]
                expect = name in TABLE_FUNCTIONS if prefix == "q" else name in ARCHIVE_FUNCTIONS
                self.call(name, identity, arg_types, values, label, expect)
                if name == "pause":  # else the reads after it would not touch the table
                    self.c.execute("SELECT pgmq.resume(%s)", [HOSTILE])
        self.drop()
        self.c.execute("DELETE FROM pgmq.topic_bindings WHERE queue_name = %s", [HOSTILE])
        if self.sweep.sentinels() != self.sweep.sentinel_state:
            self.sweep.fail("hostile shapes: a sentinel queue changed")
        print("hostile shapes: %d shapes, %d calls; outcomes: %s" % (
            len(shapes), self.calls, ", ".join("%s %d" % kv for kv in sorted(self.outcomes.items()))))

    def call(self, name, identity, arg_types, values, label, expect_shape_error):
        args = ", ".join("%%s::%s" % t for t in arg_types)
        statement = 'SELECT count(*) FROM pgmq."%s"(%s) AS r' % (name, args)
        where = "%s(%s) on %s" % (name, identity, label)
        self.calls += 1
        error = None
        try:
            self.c.execute(statement, values)
        except psycopg.Error as e:
            error = e
        state = error.sqlstate if error is not None else "success"
        key = state or "no SQLSTATE"  # a lost connection has none
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        self.sweep.check_alive(where)
        self.c = self.sweep.caller  # reconnected if the backend died
        if error is not None:
            if state is None or state.startswith("XX") or state not in self.sweep.documented:
                self.sweep.fail("%s: SQLSTATE %s (undocumented or internal): %s" % (where, state, str(error).strip()[:300]))
        if expect_shape_error:
            table = "pgmq.%s_%s" % ("a" if name in ARCHIVE_FUNCTIONS and label.startswith("pgmq.a_") else "q", HOSTILE)
            if error is None:
                self.sweep.fail("%s: succeeded on a damaged table" % where)
            elif state not in SHAPE_SQLSTATES or table not in str(error):
                self.sweep.fail("%s: expected an error naming %s (%s), got %s: %s" % (
                    where, table, "/".join(sorted(SHAPE_SQLSTATES)), state, str(error).strip()[:300]))


class ForeignShapeSweep:
    """Issue 24's shapes, run by a tenant (a role with CREATE on schema pgmq
    and grant_queue_access to one queue): every pgmq trigger function
    attached to tables that are not its own, every queue-naming function on
    a queue whose tables the tenant dropped with DROP TABLE (leaving its meta,
    policy and deduplication rows), and an overload of every pgmq function
    name. Each call: no crash, a documented SQLSTATE; overloads and foreign
    triggers are refused; a queue made again under the dropped one's name
    inherits none of its rows."""

    TENANT = "pgmq_sweep_tenant"

    def __init__(self, sweep):
        self.sweep = sweep
        self.c = sweep.caller
        self.calls = 0
        self.outcomes = {}

    def run(self, functions):
        c = self.c
        c.execute("DROP ROLE IF EXISTS %s" % self.TENANT)
        c.execute("CREATE ROLE %s" % self.TENANT)
        c.execute("GRANT USAGE, CREATE ON SCHEMA pgmq TO %s" % self.TENANT)
        c.execute("GRANT SELECT, INSERT, DELETE ON pgmq.meta TO %s" % self.TENANT)
        c.execute("SELECT pgmq.grant_queue_access('victim', %s)", [self.TENANT])
        try:
            self.foreign_triggers()
            self.leftover_rows(functions)
            self.overloads(functions)
        finally:
            c = self.c = self.sweep.caller
            c.execute("RESET ROLE")
            c.execute("DROP TABLE IF EXISTS public.sweep_foreign")
            c.execute("SELECT pgmq.drop_queue(q) FROM (VALUES ('leftover'), ('leftover_dlq')) AS v(q) "
                      "WHERE to_regclass('pgmq.q_' || q) IS NOT NULL")
            c.execute("DELETE FROM pgmq.meta WHERE queue_name IN ('leftover', 'leftover_dlq')")
            c.execute("DROP OWNED BY %s CASCADE" % self.TENANT)
            c.execute("DROP ROLE %s" % self.TENANT)
        if self.sweep.sentinels() != self.sweep.sentinel_state:
            self.sweep.fail("foreign shapes: a sentinel queue changed")
        print("foreign shapes: %d calls; outcomes: %s" % (
            self.calls, ", ".join("%s %d" % kv for kv in sorted(self.outcomes.items()))))

    def execute(self, sql, where, expect_refusal=False, params=None, also_fine=()):
        """Runs sql; checks the backend lives and any error is documented (or
        one of also_fine, PostgreSQL's own refusals)."""
        self.calls += 1
        error = None
        try:
            self.c.execute(sql, params)
        except psycopg.Error as e:
            error = e
        state = error.sqlstate if error is not None else "success"
        self.outcomes[state or "no SQLSTATE"] = self.outcomes.get(state or "no SQLSTATE", 0) + 1
        self.sweep.check_alive(where)
        self.c = self.sweep.caller
        if error is not None and state not in also_fine and (
                state is None or state.startswith("XX") or state not in self.sweep.documented):
            self.sweep.fail("%s: SQLSTATE %s (undocumented or internal): %s" % (where, state, str(error).strip()[:300]))
        if expect_refusal and error is None:
            self.sweep.fail("%s: was not refused" % where)
        return error

    def foreign_triggers(self):
        c = self.c
        c.execute("CREATE TABLE public.sweep_foreign (n int, t text, j jsonb)")
        c.execute("GRANT ALL ON public.sweep_foreign TO %s" % self.TENANT)
        c.execute("ALTER TABLE public.sweep_foreign OWNER TO %s" % self.TENANT)
        triggers = [r[0] for r in c.execute(
            "SELECT p.oid::regproc::text FROM pg_proc p WHERE p.pronamespace = 'pgmq'::regnamespace "
            "AND p.prorettype = 'trigger'::regtype ORDER BY 1").fetchall()]
        c.execute("SET ROLE %s" % self.TENANT)
        for function in triggers:
            for timing, level in (("BEFORE", "ROW"), ("AFTER", "ROW"), ("AFTER", "STATEMENT")):
                for args in ("", "'victim'", "'sentinel'", "'x;y'"):
                    where = "%s(%s) as a %s %s trigger on a tenant's table" % (function, args, timing, level)
                    self.c.execute("TRUNCATE public.sweep_foreign")
                    self.c.execute("INSERT INTO public.sweep_foreign VALUES (0, 'row', '{}')")
                    if self.execute("CREATE TRIGGER sweep_t %s INSERT OR UPDATE OR DELETE ON public.sweep_foreign "
                                    "FOR EACH %s EXECUTE FUNCTION %s(%s)" % (timing, level, function, args), where):
                        continue
                    for dml in ("INSERT INTO public.sweep_foreign VALUES (1, 'x', '{}')",
                                "UPDATE public.sweep_foreign SET n = 2", "DELETE FROM public.sweep_foreign"):
                        self.execute(dml, where + ": " + dml.split()[0], expect_refusal=True)
                    self.c.execute("DROP TRIGGER sweep_t ON public.sweep_foreign")
        self.c.execute("RESET ROLE")

    def leftover_rows(self, functions):
        c = self.c
        c.execute("GRANT CREATE ON SCHEMA pgmq TO %s" % self.TENANT)
        c.execute("SET ROLE %s" % self.TENANT)
        c.execute("SELECT pgmq.create('leftover')")
        c.execute("SELECT pgmq.create('leftover_dlq')")
        c.execute("SELECT pgmq.set_dead_letter_queue('leftover', 'leftover_dlq', 1)")
        c.execute("SELECT pgmq.set_deduplication('leftover', '1 hour')")
        c.execute("SELECT pgmq.set_retention('leftover', '1 second')")
        c.execute("SELECT pgmq.send('leftover', '{}'::jsonb, '{\"x-pgmq-deduplication-id\": \"d\"}'::jsonb)")
        c.execute("DROP TABLE pgmq.q_leftover, pgmq.a_leftover")
        c.execute("RESET ROLE")
        for name, identity, arg_names, arg_types in functions:
            arg_names = list(arg_names) + [""] * (len(arg_types) - len(arg_names))
            if not {"queue_name", "dead_letter_queue"} & set(arg_names) or name.startswith("create"):
                continue
            values = ["leftover" if n in NAME_ARGUMENTS else good_value(n, t, name)
                      for n, t in zip(arg_names, arg_types)]
            args = ", ".join("%%s::%s" % t for t in arg_types)
            self.execute('SELECT count(*) FROM pgmq."%s"(%s) AS r' % (name, args),
                         "%s(%s) on a queue whose tables were dropped" % (name, identity), params=values)
        # A superuser's new queue of that name adopts nothing.
        c = self.c
        c.execute("SELECT pgmq.create('leftover')")
        inherited = c.execute(
            "SELECT (SELECT count(*) FROM pgmq.policies WHERE queue_name = 'leftover') + "
            "(SELECT count(*) FROM pgmq.deduplication WHERE queue_name = 'leftover') + "
            "(SELECT count(*) FROM pgmq.list_policies() WHERE queue_name = 'leftover')").fetchone()[0]
        if inherited:
            self.sweep.fail("leftover rows: a new queue 'leftover' inherited %d rows of the dropped one" % inherited)

    def overloads(self, functions):
        c = self.c
        c.execute("SET ROLE %s" % self.TENANT)
        for name in sorted({f[0] for f in functions}):
            for signature in ("text", "text, integer, integer", "text, text"):
                # 42723: PostgreSQL's own refusal of a signature pgmq has.
                self.execute("CREATE FUNCTION pgmq.\"%s\"(%s) RETURNS int LANGUAGE sql AS 'SELECT 1'" % (name, signature),
                             "an overload %s(%s) by a tenant" % (name, signature), expect_refusal=True,
                             also_fine=("42723",))
        c = self.c
        c.execute("RESET ROLE")
        for sql in ("SELECT count(*) FROM pgmq.read('victim', 0, 1)", "SELECT count(*) FROM pgmq.pop('victim')",
                    "SELECT pgmq.send('victim', '{}')", "SELECT count(*) FROM pgmq.read_with_poll('victim', 0, 1, 1, 10)"):
            if self.execute(sql, "%s after the overload attempts" % sql):
                self.sweep.fail("%s failed after the overload attempts" % sql)


def crashes_logged(offset):
    """Lines of the server log after byte offset that report a crashed backend."""
    if not SERVER_LOG:
        return []
    with open(SERVER_LOG, "rb") as f:
        f.seek(offset)
        return [l.decode("utf-8", "replace").strip() for l in f if b"terminated by signal" in l]


def main():
    dbname = "pgmq_sweep_%d" % os.getpid()
    log_offset = os.path.getsize(SERVER_LOG) if SERVER_LOG else 0
    admin = psycopg.connect(dbname="postgres", autocommit=True)
    admin.execute('CREATE DATABASE "%s"' % dbname)
    started = time.monotonic()
    try:
        sweep = Sweep(dbname)
        functions = sweep.run()
        ShapeSweep(sweep).run(functions)
        ForeignShapeSweep(sweep).run(functions)
        final = sweep.sentinels()
        sweep.caller.close()
        sweep.monitor.close()
    finally:
        try:
            admin.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % dbname)
        except psycopg.OperationalError:  # killed by a crash restart
            connect_retrying("postgres").execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % dbname)
    print("functions swept: %d" % len(functions))
    print("calls made: %d (another %d values were refused by PostgreSQL's type input before any pgmq code)"
          % (sweep.calls, sweep.rejected_by_type_input))
    print("outcomes: " + ", ".join("%s %d" % (k or "no error", v) for k, v in sorted(
        sweep.errors_by_state.items(), key=lambda kv: kv[0] or "")) +
        ", success %d" % (sweep.calls - sum(sweep.errors_by_state.values())))
    # Calls whose good arguments still fail (by design: a plain queue cannot
    # become partitioned) test their bad values against the early checks only.
    print("good-argument calls that failed: " + (", ".join(sweep.good_call_errors) or "none"))
    print("sentinels at the end: %r" % (final,))
    print("time: %.0f s" % (time.monotonic() - started))
    for line in crashes_logged(log_offset):
        sweep.fail("server log: " + line)
    if SERVER_LOG:
        print("server log checked for crashed backends: %s" % SERVER_LOG)
    if sweep.failures:
        print("%d checks failed" % len(sweep.failures))
        return 1
    print("every call: backend alive, SQLSTATE documented, no message lost")
    return 0


if __name__ == "__main__":
    sys.exit(main())
