#!/usr/bin/env python3
"""test/integration/trap_sweep.py: a queue owner's code never runs as another
role through pgmq (docs/permissions.md, "Whose code a queue's table may
run").

A tenant (a queue owner with the grants of docs/permissions.md) plants every
kind of trap a table can carry, each on a queue of its own: an index
predicate and an index expression (IMMUTABLE, folded by the planner), an
operator class, a CHECK constraint, a default, a generated column, a domain
column, a column of its own type, a row-security policy, row and TRUNCATE
triggers on the queue and on its archive, a rule, extended statistics, a
table access method, a default calling set_config, a CHECK calling
query_to_xml, a default calling a pgmq function, an inheritance child, a
foreign partition, a trigger on a partition, a dead-letter queue with a
trigger. Each trap records the role that ran it (a WARNING, seen even when
the call then fails, and a row in a log table) and makes the tenant
superuser when it can.

Then every pgmq function (pg_proc of the extension, functions and
procedures) is called on each trapped queue, in every argument that names a
queue, as a superuser and as an application role with grant_queue_access;
and pgmq-console (when built) is started as a superuser and asked for every
endpoint and action on them. The checks: no trap ran as anyone but the
tenant, the tenant never became superuser, no session setting was changed
by a trap, a queue no call names keeps its messages, no backend crashed; a
function that runs a statement on a trapped table was refused with 42501;
and the tenant itself still uses its queues (send, read, metrics).

Runs in a database of its own on the cluster in PGHOST/PGPORT/PGUSER (a
superuser), which it drops at the end. Exit 0 when every check held.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bad_input_sweep as inputs  # noqa: E402  (good values by argument name and type)

DB = "pgmq_trap_sweep"
TAG = "[trap_sweep]"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONSOLE = os.environ.get("PGMQ_CONSOLE_BIN", os.path.join(REPO, "build/console/pgmq-console"))
TENANT, APP = "trap_tenant", "trap_app"
RAN = re.compile(r"trap (.+) ran as (\S+)")

# kind -> SQL that plants it as the tenant on its queue (%(q)s: pgmq."q_trap_<kind>",
# %(a)s: its archive, %(t)s: the bare table name).
TRAPS = {
    "index_predicate": "CREATE INDEX ON %(q)s (msg_id) WHERE pgmq.trap_always()",
    "index_expression": "CREATE INDEX ON %(q)s (pgmq.trap_imm(read_ct))",
    "index_opclass": "CREATE INDEX ON %(q)s (msg_id pgmq.trap_ops)",
    "check": "ALTER TABLE %(q)s ADD CONSTRAINT trap CHECK (pgmq.trap_imm(read_ct) IS NOT NULL)",
    "default": "ALTER TABLE %(q)s ADD COLUMN trap integer DEFAULT pgmq.trap_imm(1)",
    "generated": "ALTER TABLE %(q)s ADD COLUMN trap integer GENERATED ALWAYS AS (pgmq.trap_imm(read_ct)) STORED",
    "domain": "ALTER TABLE %(q)s ADD COLUMN trap pgmq.trap_checked",
    "own_type": "ALTER TABLE %(q)s ADD COLUMN trap pgmq.trap_mood",
    "row_security": "ALTER TABLE %(q)s ENABLE ROW LEVEL SECURITY; "
                    "CREATE POLICY trap ON %(q)s USING (pgmq.trap('policy')) WITH CHECK (pgmq.trap('policy'))",
    "trigger": "CREATE TRIGGER trap BEFORE INSERT OR UPDATE OR DELETE ON %(q)s FOR EACH ROW "
               "EXECUTE FUNCTION pgmq.trap_trigger(); CREATE TRIGGER trap_truncate BEFORE TRUNCATE ON %(q)s "
               "FOR EACH STATEMENT EXECUTE FUNCTION pgmq.trap_trigger()",
    "archive_trigger": "CREATE TRIGGER trap BEFORE INSERT OR UPDATE OR DELETE ON %(a)s FOR EACH ROW "
                       "EXECUTE FUNCTION pgmq.trap_trigger()",
    "rule": "CREATE RULE trap AS ON UPDATE TO %(q)s DO ALSO SELECT pgmq.trap('rule')",
    "statistics": "CREATE STATISTICS pgmq.trap_stats ON (pgmq.trap_imm(read_ct)), msg_id FROM %(q)s; ANALYZE %(q)s",
    "access_method": "ALTER TABLE %(q)s SET ACCESS METHOD trap_am",
    "set_config": "ALTER TABLE %(q)s ADD COLUMN trap text "
                  "DEFAULT pg_catalog.set_config('trap.seen', CURRENT_USER, false)",
    "query_to_xml": "ALTER TABLE %(q)s ADD CONSTRAINT trap CHECK "
                    "(pg_catalog.query_to_xml('SELECT pgmq.trap(''query'')', true, true, '') IS NOT NULL)",
    "pgmq_default": "ALTER TABLE %(q)s ADD COLUMN trap bigint; "
                    "ALTER TABLE %(q)s ALTER COLUMN trap SET DEFAULT pgmq.purge_queue('bystander')",
    "inheritance": "CREATE TABLE pgmq.%(t)s_child () INHERITS (%(q)s); "
                   "CREATE INDEX ON pgmq.%(t)s_child (msg_id) WHERE pgmq.trap_always()",
    "partition_trigger": None,   # a partitioned queue table of the tenant's own, below
    "foreign_partition": None,   # likewise, with a foreign partition
    "dead_letter": "SELECT pgmq.set_dead_letter_queue('trap_dead_letter', 'trap_dlq', 1)",
}
# Of send, read, peek and metrics, those that reach the trapped table, where
# it is not the queue's own (all of them otherwise): the archive's trigger
# is reached by none, the dead-letter queue's by a read (which may move).
TOUCHES = {"archive_trigger": "", "dead_letter": "read"}
# What still works for the owner on its own trapped queue is all but these,
# whose traps break the call itself (as they would any table's).
OWNER_BREAKS = {"rule": "read", "pgmq_default": "send", "foreign_partition": "send read metrics"}


def connect(user=None, notices=None):
    conn = psycopg.connect(dbname=DB, user=user, autocommit=True) if user else \
        psycopg.connect(dbname=DB, autocommit=True)
    conn.execute("SET statement_timeout = '10s'")
    conn.execute("SET lock_timeout = '2s'")
    if notices is not None:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
    return conn


class Sweep:
    def __init__(self):
        self.failures = []
        self.calls = 0
        self.refused = 0
        self.notices = []

    def fail(self, what):
        self.failures.append(what)
        print(f"{TAG} FAILED: {what}", flush=True)

    # Setup -------------------------------------------------------------------

    def setup(self):
        with psycopg.connect(dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {DB}")
            for role in (TENANT, APP):
                admin.execute(f"DROP ROLE IF EXISTS {role}")
                admin.execute(f"CREATE ROLE {role} LOGIN")
        self.admin = connect(notices=self.notices)
        a = self.admin
        a.execute("CREATE SCHEMA partman")
        a.execute("CREATE EXTENSION pg_partman SCHEMA partman")
        a.execute("CREATE EXTENSION pgmq")
        a.execute(f"GRANT USAGE, CREATE ON SCHEMA pgmq TO {TENANT}")
        a.execute(f"GRANT SELECT, INSERT, DELETE ON pgmq.meta TO {TENANT}")
        a.execute(f"GRANT SELECT, INSERT, DELETE ON pgmq.topic_bindings TO {TENANT}")
        a.execute(f"GRANT USAGE ON SCHEMA pgmq TO {APP}")
        a.execute("CREATE TABLE public.trap_log (role name, trap text)")
        a.execute("GRANT INSERT ON public.trap_log TO PUBLIC")
        # What a superuser provides and the tenant may use.
        a.execute("CREATE ACCESS METHOD trap_am TYPE TABLE HANDLER heap_tableam_handler")
        a.execute("CREATE OPERATOR CLASS pgmq.trap_ops FOR TYPE bigint USING btree AS OPERATOR 1 <, OPERATOR 2 <=, "
                  "OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btint8cmp(bigint, bigint)")
        a.execute("CREATE FOREIGN DATA WRAPPER trap_fdw")
        a.execute("CREATE SERVER trap_server FOREIGN DATA WRAPPER trap_fdw")
        a.execute(f"GRANT USAGE ON FOREIGN SERVER trap_server TO {TENANT}")
        # Queues no trap touches: a bystander (a default tries to purge it),
        # and clean queues to pair with the trapped ones.
        for queue in ("bystander", "clean", "clean_dlq"):
            a.execute("SELECT pgmq.create(%s)", [queue])
        a.execute("SELECT pgmq.send_batch('bystander', ARRAY['{\"keep\": 1}', '{\"keep\": 2}']::jsonb[])")
        a.execute(f"SELECT pgmq.grant_queue_access('clean', '{APP}'), pgmq.grant_queue_access('clean_dlq', '{APP}')")
        self.tenant = connect(TENANT, self.notices)
        t = self.tenant
        # The tenant's code. When another role runs it, it says so, records
        # it and makes the tenant superuser if it can.
        t.execute(f"""CREATE FUNCTION pgmq.trap(what text) RETURNS boolean LANGUAGE plpgsql AS $$
            BEGIN
                IF current_user <> '{TENANT}' THEN
                    RAISE WARNING 'trap % ran as %', what, current_user;
                    INSERT INTO public.trap_log VALUES (current_user, what);
                    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
                        EXECUTE 'ALTER ROLE {TENANT} SUPERUSER';
                    END IF;
                END IF;
                RETURN true;
            END $$""")
        t.execute("CREATE FUNCTION pgmq.trap_always() RETURNS boolean LANGUAGE sql IMMUTABLE "
                  "AS $$SELECT pgmq.trap('always')$$")
        t.execute("CREATE FUNCTION pgmq.trap_imm(n integer) RETURNS integer LANGUAGE sql IMMUTABLE "
                  "AS $$SELECT CASE WHEN pgmq.trap('imm') THEN n END$$")
        t.execute("CREATE FUNCTION pgmq.trap_trigger() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN "
                  "PERFORM pgmq.trap('trigger ' || TG_OP); RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END; "
                  "END $$")
        t.execute("CREATE DOMAIN pgmq.trap_checked AS integer CHECK (pgmq.trap_imm(coalesce(VALUE, 0)) IS NOT NULL)")
        t.execute("CREATE TYPE pgmq.trap_mood AS ENUM ('calm', 'angry')")
        for kind in TRAPS:
            self.make_trap(kind)
        # A clean queue of the tenant, bound to the topic the sweep sends to.
        t.execute("SELECT pgmq.create('tenant_clean')")

    def make_trap(self, kind):
        t = self.tenant
        queue = "trap_" + kind
        names = {"q": f'pgmq."q_{queue}"', "a": f'pgmq."a_{queue}"', "t": "q_" + queue}
        if kind in ("partition_trigger", "foreign_partition"):
            t.execute(f"CREATE TABLE {names['q']} (msg_id bigint GENERATED BY DEFAULT AS IDENTITY, "
                      "read_ct integer DEFAULT 0 NOT NULL, enqueued_at timestamptz DEFAULT now() NOT NULL, "
                      "last_read_at timestamptz, vt timestamptz NOT NULL, message jsonb, headers jsonb) "
                      "PARTITION BY RANGE (msg_id)")
            t.execute(f"CREATE TABLE pgmq.q_{queue}_1 PARTITION OF {names['q']} FOR VALUES FROM (1) TO (1000000)")
            t.execute(f"CREATE TABLE {names['a']} (msg_id bigint PRIMARY KEY, read_ct integer DEFAULT 0 NOT NULL, "
                      "enqueued_at timestamptz DEFAULT now() NOT NULL, last_read_at timestamptz, "
                      "archived_at timestamptz DEFAULT now() NOT NULL, vt timestamptz NOT NULL, message jsonb, "
                      "headers jsonb)")
            t.execute("INSERT INTO pgmq.meta (queue_name, is_partitioned, is_unlogged) VALUES (%s, true, false)",
                      [queue])
        else:
            t.execute("SELECT pgmq.create(%s)", [queue])
        if kind == "dead_letter":
            t.execute("SELECT pgmq.create('trap_dlq')")
            t.execute("CREATE OR REPLACE TRIGGER trap BEFORE INSERT ON pgmq.q_trap_dlq FOR EACH ROW "
                      "EXECUTE FUNCTION pgmq.trap_trigger()")
        t.execute("SELECT count(*) FROM pgmq.send_batch(%s, ARRAY['{\"n\": 1}', '{\"n\": 2}', '{\"n\": 3}', "
                  "'{\"n\": 4}', '{\"n\": 5}']::jsonb[])", [queue])
        t.execute("SELECT pgmq.archive(%s, ARRAY[4, 5]::bigint[])", [queue])
        if kind == "partition_trigger":
            t.execute(f"CREATE TRIGGER trap BEFORE INSERT OR UPDATE OR DELETE ON pgmq.q_{queue}_1 FOR EACH ROW "
                      "EXECUTE FUNCTION pgmq.trap_trigger()")
        elif kind == "foreign_partition":
            t.execute(f"CREATE FOREIGN TABLE pgmq.q_{queue}_2 PARTITION OF {names['q']} "
                      "FOR VALUES FROM (1000000) TO (2000000) SERVER trap_server")
        else:
            t.execute(TRAPS[kind] % names)
        t.execute("SELECT pgmq.bind_topic('trapped.#', %s)", [queue])
        t.execute("SELECT pgmq.grant_queue_access(%s, %s)", [queue, APP])
        if kind == "dead_letter":
            t.execute("SELECT pgmq.grant_queue_access('trap_dlq', %s)", [APP])

    def ensure(self, queue):
        """A call may have dropped or emptied a trapped queue: make it again."""
        kind = queue[len("trap_"):]
        if kind not in TRAPS:
            return
        exists = self.admin.execute("SELECT to_regclass(%s) IS NOT NULL", [f'pgmq."q_{queue}"']).fetchone()[0]
        if not exists:
            self.admin.execute(f"DROP TABLE IF EXISTS pgmq.\"a_{queue}\", pgmq.\"q_{queue}_child\"")
            self.admin.execute("DELETE FROM pgmq.meta WHERE queue_name = %s", [queue])
            self.make_trap(kind)

    # The calls ---------------------------------------------------------------

    def functions(self):
        return self.admin.execute("""
            SELECT p.proname, p.prokind, coalesce(p.proargnames[1:p.pronargs], '{}'),
                   ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, i)
                         ORDER BY i)
            FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
             AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
            JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgmq'
            WHERE p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
            ORDER BY 1, 4::text""").fetchall()

    @staticmethod
    def names_queue(arg_name, arg_type):
        return arg_type in ("regclass", "regclass[]") or (arg_type in ("text", "text[]") and (
            arg_name in inputs.NAME_ARGUMENTS or "queue" in arg_name))

    @staticmethod
    def value_for(arg_name, arg_type, queue):
        """queue in this argument (a name, an array of names, its table)."""
        if arg_type == "text[]":
            return [queue, "clean"]
        if arg_type == "regclass":
            return f'pgmq."q_{queue}"'
        if arg_type == "regclass[]":
            return [f'pgmq."q_{queue}"', f'pgmq."a_{queue}"']
        return queue

    def calls_for(self, name, arg_names, arg_types, queue):
        """Argument lists naming queue in each position that names a queue, clean queues elsewhere."""
        arg_names = list(arg_names) + [""] * (len(arg_types) - len(arg_names))
        base = []
        for n, t in zip(arg_names, arg_types):
            if self.names_queue(n, t):
                base.append(self.value_for(n, t, "clean_dlq" if n in ("dead_letter_queue", "target") else "clean"))
            elif n == "routing_key":
                base.append("trapped.x")
            elif n == "role_name":
                base.append(APP)
            else:
                base.append(inputs.good_value(n, t, name))
        positions = [i for i, (n, t) in enumerate(zip(arg_names, arg_types)) if self.names_queue(n, t)]
        if not positions:
            return [base]
        out = []
        for i in positions:
            values = list(base)
            values[i] = self.value_for(arg_names[i], arg_types[i], queue)
            out.append(values)
        return out

    def call(self, conn, who, name, prokind, arg_types, values, queue):
        self.ensure(queue)
        args = ", ".join("%%s::%s" % t for t in arg_types)
        sql = f'CALL pgmq."{name}"({args})' if prokind == "p" else f'SELECT count(*) FROM pgmq."{name}"({args}) AS r'
        self.calls += 1
        del self.notices[:]
        error = None
        try:
            conn.execute(sql, values)
        except psycopg.Error as e:
            error = e
        where = f"{who}: {name}({', '.join(arg_types)}) on {queue}"
        for message in self.notices:
            m = RAN.search(message)
            if m and m.group(2) != TENANT:
                self.fail(f"{where}: the tenant's trap {m.group(1)} ran as {m.group(2)}")
        if error is not None and error.sqlstate == "42501" and "carries" in str(error):
            self.refused += 1
        if error is not None and (error.sqlstate is None or error.sqlstate.startswith("XX")):
            self.fail(f"{where}: {error.sqlstate} {str(error).strip()[:200]}")
        try:
            conn.execute("SELECT 1")
        except psycopg.Error as e:
            self.fail(f"{where}: the backend is gone ({e})")
            raise
        return error

    def sweep_as(self, conn, who, functions):
        for name, prokind, arg_names, arg_types in functions:
            for queue in ["trap_" + kind for kind in TRAPS]:
                for values in self.calls_for(name, arg_names, arg_types, queue):
                    self.call(conn, who, name, prokind, arg_types, values, queue)
                if not any(self.names_queue(n, t) for n, t in zip(list(arg_names) + [""] * len(arg_types),
                                                                   arg_types)):
                    break  # no queue argument: once is enough

    def statement_functions_refused(self, conn, who):
        """The calls that run a statement on a trapped table are refused with 42501 and the reason."""
        for kind in TRAPS:
            queue = "trap_" + kind
            self.ensure(queue)
            for op, sql in (("send", "SELECT count(*) FROM pgmq.send(%s, '{}'::jsonb)"),
                            ("read", "SELECT count(*) FROM pgmq.read(%s, 0, 1)"),
                            ("peek", "SELECT count(*) FROM pgmq.peek(%s)"),
                            ("metrics", "SELECT count(*) FROM pgmq.metrics(%s)")):
                try:
                    conn.execute(sql, [queue])
                    if op in TOUCHES.get(kind, op):
                        self.fail(f"{who}: {sql % repr(queue)} ran on a trapped table")
                except psycopg.Error as e:
                    if e.sqlstate != "42501" or "carries" not in str(e):
                        self.fail(f"{who}: {sql % repr(queue)}: {e.sqlstate} {str(e).strip()[:200]}")

    def owner_uses_its_queues(self):
        for kind in TRAPS:
            queue = "trap_" + kind
            self.ensure(queue)
            for op, sql in (("send", "SELECT count(*) FROM pgmq.send(%s, '{}'::jsonb)"),
                            ("read", "SELECT count(*) FROM pgmq.read(%s, 0, 1)"),
                            ("metrics", "SELECT count(*) FROM pgmq.metrics(%s)")):
                try:
                    self.tenant.execute(sql, [queue])
                except psycopg.Error as e:
                    if op not in OWNER_BREAKS.get(kind, ""):
                        self.fail(f"owner: {op} on its own {queue}: {e.sqlstate} {str(e).strip()[:200]}")

    # The console -------------------------------------------------------------

    def console(self):
        if not os.access(CONSOLE, os.X_OK):
            print(f"{TAG} console part skipped: no console at {CONSOLE}")
            return
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        user = self.admin.execute("SELECT current_user").fetchone()[0]
        proc = subprocess.Popen([CONSOLE, "--allow-actions", "--listen", f"127.0.0.1:{port}",
                                 f"dbname={DB} user={user}"], stderr=subprocess.PIPE, text=True)

        def request(path, method="GET", body=None, token=None):
            headers = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json"}
            if token:
                headers["X-Pgmq-Console-Token"] = token
            req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=20) as r:
                    return r.status, json.loads(r.read().decode())
            except urllib.error.HTTPError as e:
                return e.code, json.loads(e.read().decode())

        try:
            deadline = time.time() + 10
            while True:
                try:
                    session = request("/api/session")[1]
                    break
                except OSError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.1)
            del self.notices[:]
            status, overview = request("/api/overview")
            read = {q["name"] for q in overview.get("queues", [])}
            refused = {q["name"] for q in overview.get("refused_queues", [])}
            trapped = {"trap_" + kind for kind in TRAPS} - {"trap_archive_trigger", "trap_dead_letter"}
            if status != 200 or read & trapped or trapped - refused:
                self.fail(f"console: the overview reads trapped queues ({sorted(read & trapped)}) or does not "
                          f"list them as refused ({sorted(trapped - refused)})")
            for kind in TRAPS:
                queue = "trap_" + kind
                self.ensure(queue)
                for path in (f"/api/queues/{queue}", f"/api/queues/{queue}/messages",
                             f"/api/queues/{queue}/messages?source=archive",
                             f"/api/queues/{queue}/messages?source=dead"):
                    status, _ = request(path)
                    self.calls += 1
                    if status == 200 and queue in trapped:
                        self.fail(f"console: {path} answered 200 for a trapped queue")
                for action in ("purge", "redrive", "pause", "resume"):
                    request(f"/api/queues/{queue}/{action}", "POST", b"{}", session["csrf_token"])
                    self.calls += 1
        finally:
            proc.terminate()
            proc.communicate(timeout=10)

    # The verdict -------------------------------------------------------------

    def verdict(self):
        ran = self.admin.execute(f"SELECT role, trap, count(*) FROM public.trap_log WHERE role <> '{TENANT}' "
                                 "GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
        if ran:
            self.fail(f"traps ran as other roles: {ran}")
        if self.admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", [TENANT]).fetchone()[0]:
            self.fail("the tenant became superuser")
        for conn in (self.admin, self.app):
            seen = conn.execute("SELECT current_setting('trap.seen', true)").fetchone()[0]
            if seen not in (None, ""):
                self.fail(f"a trap's set_config ran in another role's session (trap.seen = {seen})")
        kept = self.admin.execute("SELECT count(*) FROM pgmq.q_bystander").fetchone()[0]
        if kept != 2:
            self.fail(f"the bystander queue has {kept} messages, not 2")

    def run(self):
        self.setup()
        self.app = connect(APP, self.notices)
        functions = self.functions()
        started = time.time()
        # Before the sweep's own calls change the queues' policies.
        self.owner_uses_its_queues()
        self.statement_functions_refused(self.admin, "superuser")
        self.statement_functions_refused(self.app, APP)
        self.sweep_as(self.admin, "superuser", functions)
        self.sweep_as(self.app, APP, functions)
        self.console()
        self.verdict()
        print(f"{TAG} {len(functions)} functions and procedures, {len(TRAPS)} traps: {self.calls} calls in "
              f"{time.time() - started:.0f} s, {self.refused} refused naming what the table carries")


def main():
    sweep = Sweep()
    try:
        sweep.run()
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            for role in (TENANT, APP):
                admin.execute(f"DROP ROLE IF EXISTS {role}")
    print(f"{TAG} {'FAILED: ' + str(len(sweep.failures)) + ' checks' if sweep.failures else 'all checks passed'}")
    return 1 if sweep.failures else 0


if __name__ == "__main__":
    sys.exit(main())
