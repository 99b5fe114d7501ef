#!/usr/bin/python3
"""test/integration/console_api.py: pgmq-console's JSON API refuses what it
must and costs what it says (docs/console.md).

  - read-only mode (no --allow-actions): every action answers 403 and the
    queues keep their messages (the dead-letter queue its dead letters);
  - a role with rights on one queue only: the overview lists that queue and
    counts the others as hidden, their pages and messages answer 404, a
    purge of another's queue and a redrive_all of a dead-letter queue it may
    not use answer 403 with SQLSTATE 42501 and move nothing, a pause of a
    queue it does not own answers 403;
  - cross-site requests: a foreign Host (DNS rebinding), Sec-Fetch-Site
    cross-site, an action (purge, redrive_all) without the token, with a
    wrong one, with a foreign Origin or as a form post all answer 403 and
    change nothing; then redrive_all with the token sends the dead letters
    home and says how many went where;
  - bad input answers 400 with the reason (a JSON path that does not parse,
    a header filter that is not an object, a limit out of range), a body
    over the limit 413;
  - a queue owner's code never runs as the console's role: queue tables
    with a row-security policy calling a function, a column of the owner's
    own type, a partial index whose predicate calls the owner's function
    (folded by the planner as the planning role), triggers, are listed as
    refused with pgmq's reason and never read, their pages and messages
    answer 403, a purge or a redrive that would fire their triggers is
    refused (and pgmq.purge_queue itself refuses); a view in place of the
    table is left out; the functions never run, and the owner is not made
    superuser by a console run as a superuser, though the same SELECT run
    directly as that role does run them; a pgmq without the rule
    (_tables_running_foreign_code) since the console started gets 503, no
    queue read; one without it from the start reads by the owner rule, as
    against upstream pgmq;
  - no secret: the password (from --password-file) appears in no answer,
    not on the console's command line (/proc/PID/cmdline) and not in its
    log; a password in the connection string is refused (exit 2);
  - then against the stand-ins of upstream pgmq 1.11, 1.12 and 1.13
    (PGMQ_UPSTREAM_RELEASES; test/lib/console_upstream_cases.py);
  - slow clients: ten connections sending a request a byte at a time do not
    delay an overview, and are cut off at the request deadline (5 s);
  - cost: an overview runs the same number of statements (counted in the
    server log with log_statement = all for the console's role: a
    transaction of two) for its few queues and for 1,000 more, and answers
    for those in under a second;
  - streams: a stream with two groups, one lagging (its last read set 20
    minutes back): the overview's and the stream page's figures of each
    group equal pgmq.stream_groups', its partitions pgmq.stream_partitions',
    the lagging group alone alerts, exactly as the alert queries of
    docs/monitoring.md return it; a stream whose table carries the owner's
    code is refused and stream_groups is not called for it; a plain queue
    its owner lists in pgmq.streams stays a queue; seek, read-only
    (403) and allowed (the group reads again, SQL sees it), and its bad
    input; every query of docs/postgres_exporter.yaml runs and exports the
    streams and their groups; a pgmq without stream_groups: streams not available, no error.

Runs against PGHOST/PGPORT/PGUSER (a superuser) with the console built at
build/console/pgmq-console (PGMQ_CONSOLE_BIN overrides); exit 0 is a pass.
"""
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import console_harness as harness  # noqa: E402
import console_upstream_cases  # noqa: E402
from console_harness import BIN, PASSWORD, overview_statements, run_console, server_log  # noqa: E402
from upstream_install import RELEASES  # noqa: E402

DB = "pgmq_console_api"
TAG = "[console_api]"
check = harness.Checks(TAG)
failures = check.failures


def Console(user, actions, sample_seconds=1):
    return harness.Console(DB, user, actions, sample_seconds)


def page_modules(c):
    """Every script the page loads (index.html's module and what each
    module imports), with the status and Content-Type it is served with."""
    seen = {}
    status, index = c.request("/")
    todo = re.findall(r'<script type="module" src="([^"]+)"', index) if status == 200 else []
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        req = urllib.request.Request(f"http://127.0.0.1:{c.port}{path}", headers={"Host": f"127.0.0.1:{c.port}"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                seen[path] = (r.status, r.headers.get("Content-Type", ""))
                todo += ["/" + m for m in re.findall(r"from '\./([\w.]+)'", r.read().decode())]
        except urllib.error.HTTPError as e:
            seen[path] = (e.code, "")
    return seen


def count(conn, queue):
    return conn.execute(f"SELECT count(*) FROM pgmq.q_{queue}").fetchone()[0]


def read_only_mode(admin):
    c = Console("console_admin", actions=False)
    try:
        check(c.session["actions"] is False, "read-only: the session says actions are off")
        for action in ("purge", "redrive", "redrive_all", "pause", "resume", "seek"):
            status, body = c.act("mine", action)
            check(status == 403 and "read-only" in body["error"], f"read-only: {action} answers 403 ({body})")
        status, body = c.act("home_dead", "redrive_all")
        check(status == 403 and "read-only" in body["error"], f"read-only: redrive_all of home_dead answers 403 ({body})")
        check(count(admin, "mine") == 3, "read-only: the queue keeps its 3 messages")
        check((count(admin, "home"), count(admin, "home_dead")) == (0, 2),
              "read-only: the dead-letter queue keeps its 2 dead letters")
    finally:
        c.stop()


def limited_role(admin):
    c = Console("console_viewer", actions=True)
    try:
        status, overview = c.get("/api/overview")
        names = [q["name"] for q in overview.get("queues", [])]
        total = admin.execute("SELECT count(*) FROM pgmq.meta").fetchone()[0]
        check(status == 200 and names == ["mine"], f"limited role: the overview lists only its queue ({names})")
        check(overview["hidden_queues"] == total - 1, f"limited role: {total - 1} queues hidden")
        check(c.get("/api/queues/other")[0] == 404, "limited role: another queue's page answers 404")
        check(c.get("/api/queues/other/messages")[0] == 404, "limited role: another queue's messages answer 404")
        status, body = c.act("other", "purge")
        check(status == 403 and body.get("sqlstate") == "42501",
              f"limited role: purging another's queue answers 403 / 42501 ({status} {body})")
        check(count(admin, "other") == 2, "limited role: the other queue keeps its 2 messages")
        status, body = c.act("mine", "pause")
        check(status == 403 and body.get("sqlstate") == "42501",
              f"limited role: pausing a queue it does not own answers 403 ({status} {body})")
        status, body = c.act("home_dead", "redrive_all")
        check(status == 403 and body.get("sqlstate") == "42501",
              f"limited role: redrive_all of a dead-letter queue it may not use answers 403 / 42501 ({status} {body})")
        check((count(admin, "home"), count(admin, "home_dead")) == (0, 2),
              "limited role: the dead letters stay where they are")
        status, body = c.get("/api/queues/mine/messages?order=oldest")
        check(status == 200 and [m["msg_id"] for m in body["messages"]] == [1, 2, 3],
              "limited role: browses its own queue")
    finally:
        c.stop()


TRAPS = ("trap_rls", "trap_view", "trap_type", "trap_predicate", "trap_trigger", "trap_redrive", "trap_redrive_dlq")
# Listed as refused (with a reason) rather than read; the view is no table.
REFUSED = ("trap_predicate", "trap_redrive_dlq", "trap_rls", "trap_trigger", "trap_type")


def make_traps(admin):
    admin.execute("CREATE TABLE public.console_trap_log (who text)")
    admin.execute("GRANT INSERT ON public.console_trap_log TO PUBLIC")
    # Stands for the queue owner's code: it records who ran it.
    admin.execute("CREATE FUNCTION public.console_trap() RETURNS boolean LANGUAGE plpgsql AS "
                  "$$BEGIN INSERT INTO public.console_trap_log VALUES (current_user); RETURN true; END$$")
    admin.execute("GRANT USAGE, CREATE ON SCHEMA pgmq TO console_tenant")
    admin.execute("GRANT SELECT, INSERT ON pgmq.meta TO console_tenant")
    with psycopg.connect(dbname=DB, user="console_tenant", autocommit=True) as tenant:
        for queue in TRAPS:
            tenant.execute("SELECT pgmq.create(%s), pgmq.send(%s, '{}')", (queue, queue))
        tenant.execute("ALTER TABLE pgmq.q_trap_rls ENABLE ROW LEVEL SECURITY")
        tenant.execute("CREATE POLICY everyone ON pgmq.q_trap_rls USING (public.console_trap())")
        tenant.execute("ALTER TABLE pgmq.q_trap_view RENAME TO q_trap_view_data")
        tenant.execute("CREATE VIEW pgmq.q_trap_view AS SELECT * FROM pgmq.q_trap_view_data WHERE public.console_trap()")
        tenant.execute("CREATE DOMAIN pgmq.trap_domain AS integer")
        tenant.execute("ALTER TABLE pgmq.q_trap_type ADD COLUMN extra pgmq.trap_domain")
        # The tenant's own code, which makes it superuser when a superuser
        # runs it: in a partial index's predicate (IMMUTABLE, so the planner
        # folds it) and in triggers (TRUNCATE for purge, DELETE for redrive).
        tenant.execute("CREATE FUNCTION pgmq.trap_escalate() RETURNS boolean LANGUAGE plpgsql AS $$BEGIN "
                       "IF current_user <> 'console_tenant' THEN INSERT INTO public.console_trap_log "
                       "VALUES (current_user); END IF; IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) "
                       "THEN EXECUTE 'ALTER ROLE console_tenant SUPERUSER'; END IF; RETURN true; END$$")
        tenant.execute("CREATE FUNCTION pgmq.trap_always() RETURNS boolean LANGUAGE sql IMMUTABLE "
                       "AS 'SELECT pgmq.trap_escalate()'")
        tenant.execute("CREATE INDEX ON pgmq.q_trap_predicate (msg_id) WHERE pgmq.trap_always()")
        tenant.execute("CREATE FUNCTION pgmq.trap_trigger() RETURNS trigger LANGUAGE plpgsql AS "
                       "$$BEGIN PERFORM pgmq.trap_escalate(); RETURN NULL; END$$")
        for queue in ("trap_trigger", "trap_redrive_dlq"):
            tenant.execute(f"CREATE TRIGGER trap AFTER INSERT OR DELETE OR UPDATE ON pgmq.q_{queue} "
                           "FOR EACH ROW EXECUTE FUNCTION pgmq.trap_trigger()")
            tenant.execute(f"CREATE TRIGGER trap_truncate AFTER TRUNCATE ON pgmq.q_{queue} "
                           "FOR EACH STATEMENT EXECUTE FUNCTION pgmq.trap_trigger()")
        tenant.execute("SELECT pgmq.set_dead_letter_queue('trap_redrive', 'trap_redrive_dlq', 3)")
        tenant.execute("""SELECT pgmq.send('trap_redrive_dlq', '{}', '{"x-pgmq-dead-letter": {"queue": "trap_redrive"}}'::jsonb)""")
        for queue in TRAPS:
            tenant.execute(f"GRANT SELECT ON pgmq.q_{queue}, pgmq.q_{queue}_msg_id_seq TO console_viewer")


def trap_ran(admin):
    return admin.execute("SELECT count(*) FROM public.console_trap_log").fetchone()[0]


def tenant_is_superuser(admin):
    return admin.execute("SELECT rolsuper FROM pg_roles WHERE rolname = 'console_tenant'").fetchone()[0]


def refused_names(overview):
    return sorted(q["name"] for q in overview.get("refused_queues", []))


def queue_owner_code(admin):
    make_traps(admin)
    c = Console("console_viewer", actions=True)
    try:
        status, overview = c.get("/api/overview")
        names = [q["name"] for q in overview.get("queues", [])]
        # trap_redrive's own table is clean (its dead-letter queue is not).
        check(status == 200 and names == ["mine", "trap_redrive"],
              f"owner's code: the trap queues are not read ({names})")
        check(refused_names(overview) == sorted(REFUSED),
              f"owner's code: they are listed as refused ({refused_names(overview)})")
        reasons = {q["name"]: q["reason"] for q in overview.get("refused_queues", [])}
        check("calls function pgmq.trap_always()" in reasons.get("trap_predicate", ""),
              f"owner's code: the reason names the predicate's function ({reasons.get('trap_predicate')})")
        check("trigger trap on table pgmq.q_trap_trigger" in reasons.get("trap_trigger", ""),
              f"owner's code: the reason names the trigger ({reasons.get('trap_trigger')})")
        for queue in REFUSED:
            status, body = c.get(f"/api/queues/{queue}/messages")
            check(status == 403 and "its table carries" in body.get("error", ""),
                  f"owner's code: {queue}'s messages answer 403 with the reason ({status})")
            status, _ = c.get(f"/api/queues/{queue}")
            check(status == 403, f"owner's code: {queue}'s page answers 403")
        status, _ = c.get("/api/queues/trap_view/messages")
        check(status == 404, "owner's code: the view in the queue's place answers 404")
        check(trap_ran(admin) == 0, "owner's code: the owner's function never ran as the console's role")
    finally:
        c.stop()
    # A console run as a superuser (the queues' owner): the same, and its
    # actions do not fire the owner's triggers.
    c = Console("console_admin", actions=True)
    try:
        status, overview = c.get("/api/overview")
        names = [q["name"] for q in overview.get("queues", [])]
        check(status == 200 and not set(names) & set(REFUSED) and "mine" in names,
              f"superuser's console: the trap queues are not read ({names})")
        check(refused_names(overview) == sorted(REFUSED),
              f"superuser's console: they are listed as refused ({refused_names(overview)})")
        before = count(admin, "trap_trigger")
        status, body = c.act("trap_trigger", "purge")
        check(status == 403 and body.get("sqlstate") == "42501" and "trigger trap" in body.get("error", ""),
              f"superuser's console: purging a queue whose table has the owner's triggers answers 403 ({body})")
        check(count(admin, "trap_trigger") == before, "superuser's console: that queue keeps its messages")
        dead = count(admin, "trap_redrive_dlq")
        status, body = c.act("trap_redrive", "redrive")
        check(status == 403 and "trap_redrive_dlq" in body.get("error", ""),
              f"superuser's console: a redrive out of a dead-letter queue with triggers answers 403 ({body})")
        check(count(admin, "trap_redrive_dlq") == dead, "superuser's console: the dead letters stay")
        check(trap_ran(admin) == 0 and not tenant_is_superuser(admin),
              "superuser's console: the owner's code never ran, the owner is not superuser")
    finally:
        c.stop()
    # pgmq itself refuses too, whoever asks it.
    try:
        admin.execute("SELECT pgmq.purge_queue('trap_trigger')")
        check(False, "pgmq.purge_queue of that queue by a superuser is refused")
    except psycopg.errors.InsufficientPrivilege as e:
        check("trigger trap" in str(e), f"pgmq.purge_queue of that queue by a superuser is refused ({e})")
    with psycopg.connect(dbname=DB, user="console_viewer", autocommit=True) as viewer:
        viewer.execute("SELECT count(*) FROM pgmq.q_trap_rls").fetchone()
    check(trap_ran(admin) == 1, "owner's code: (the same SELECT run directly does run it)")
    admin.execute("SELECT count(*) FROM pgmq.q_trap_predicate WHERE msg_id > 0").fetchone()
    check(tenant_is_superuser(admin), "owner's code: (a superuser's SELECT run directly makes the owner superuser)")
    admin.execute("ALTER ROLE console_tenant NOSUPERUSER")


def without_the_rule(admin):
    """An older pgmq-cpp, without _tables_running_foreign_code: a console
    started before it went answers 503; one started after reads by the owner
    rule, as against upstream pgmq: the tenant's tables are not read."""
    before = Console("console_admin", actions=True)
    admin.execute("ALTER EXTENSION pgmq DROP FUNCTION pgmq._tables_running_foreign_code(regclass[])")
    admin.execute("DROP FUNCTION pgmq._tables_running_foreign_code(regclass[])")
    try:
        for path in ("/api/overview", "/api/queues/mine", "/api/queues/mine/messages"):
            status, body = before.get(path)
            check(status == 503 and "ALTER EXTENSION pgmq UPDATE" in body.get("error", ""),
                  f"the rule gone since the start: {path} answers 503 ({status} {body.get('error')})")
    finally:
        before.stop()
    ran = trap_ran(admin)
    c = Console("console_admin", actions=True)
    try:
        check(c.session["table_check"] == "owner" and c.session["features"]["table_rule"] is False,
              f"without the rule: the session says the owner rule decides ({c.session.get('table_check')})")
        status, overview = c.get("/api/overview")
        names = [q["name"] for q in overview.get("queues", [])]
        tenant_tables = sorted(set(TRAPS) - {"trap_view"})
        refused = {q["name"]: q for q in overview.get("refused_queues", [])}
        check(status == 200 and "mine" in names and not set(names) & set(TRAPS),
              f"without the rule: the superuser's queues are read, the tenant's not ({names})")
        check(sorted(refused) == tenant_tables and all(
            q["kind"] == "owner" and "is owned by role console_tenant, which does not have the privileges of role "
            "console_admin" in q["reason"] for q in refused.values()),
              f"without the rule: each tenant table is refused for its owner ({refused})")
        status, body = c.get("/api/queues/trap_trigger/messages")
        check(status == 403 and "without pgmq-cpp's rule" in body.get("error", ""),
              f"without the rule: a tenant queue's messages answer 403 ({status} {body.get('error')})")
        status, body = c.act("trap_trigger", "purge")
        check(status == 403 and count(admin, "trap_trigger") > 0, f"without the rule: its purge is refused ({body})")
        check(trap_ran(admin) == ran and not tenant_is_superuser(admin),
              "without the rule: the tenant's code never ran as the console's role")
    finally:
        c.stop()


def cross_site_and_bad_input(admin):
    c = Console("console_admin", actions=True)
    try:
        status, _ = c.request("/api/overview", headers={"Host": f"evil.example:{c.port}"})
        check(status == 403, "cross-site: a foreign Host header is refused (DNS rebinding)")
        status, _ = c.request("/", headers={"Host": f"evil.example:{c.port}"})
        check(status == 403, "cross-site: the page itself is refused under a foreign Host")
        status, _ = c.request("/api/overview", headers={"Sec-Fetch-Site": "cross-site"})
        check(status == 403, "cross-site: a browser's cross-site fetch is refused")
        refused = {
            "no token": {"X-Pgmq-Console-Token": ""},
            "a wrong token": {"X-Pgmq-Console-Token": "0" * 64},
            "a foreign Origin": {"Origin": "http://evil.example"},
            "a form post": {"Content-Type": "application/x-www-form-urlencoded"},
        }
        for what, headers in refused.items():
            for queue, action in (("mine", "purge"), ("home_dead", "redrive_all")):
                status, body = c.act(queue, action, b"qty=1", headers) if "form" in what else c.act(queue, action,
                                                                                                     headers=headers)
                check(status == 403, f"cross-site: a {action} with {what} answers 403 ({body['error']})")
        check(count(admin, "mine") == 3, "cross-site: the queue keeps its 3 messages")
        check((count(admin, "home"), count(admin, "home_dead")) == (0, 2), "cross-site: the dead letters stay")

        status, body = c.act("home_dead", "redrive_all")
        check(status == 200 and body.get("count") == 2 and body.get("queues") == [{"queue_name": "home", "redriven": 2}]
              and body.get("done") == "moved 2 messages from home_dead back to home",
              f"redrive_all: with the token it moves the dead letters home and says so ({status} {body})")
        check((count(admin, "home"), count(admin, "home_dead")) == (2, 0), "redrive_all: SQL sees them home")

        bad = {
            "/api/queues/mine/messages?path=%24.n%20%3F%20(": "42601",
            "/api/queues/mine/messages?header=%5B1%5D": None,
            "/api/queues/mine/messages?limit=0": None,
            "/api/queues/mine/messages?limit=201": None,
            "/api/queues/mine/messages?source=secret": None,
            "/api/queues/mine/messages?cursor=1x": None,
        }
        for path, sqlstate in bad.items():
            status, body = c.get(path)
            check(status == 400 and (sqlstate is None or body.get("sqlstate") == sqlstate),
                  f"bad input: {path} answers 400 ({body})")
        status, _ = c.act("mine", "redrive", b'{"qty": "all"}')
        check(status == 400, "bad input: a redrive qty that is not an integer answers 400")
        status, _ = c.act("mine", "purge", b"x" * (70 * 1024))
        check(status == 413, f"bad input: a 70 KiB body answers 413 (got {status})")
        status, body = c.act("mine", "redrive")
        check(status == 409, f"bad input: redrive without a dead-letter queue answers 409 ({body})")
        status, body = c.act("nope", "redrive_all")
        check(status == 404 and body.get("sqlstate") == "42P01", f"bad input: redrive_all of no queue answers 404 ({body})")
        status, body = c.get("/api/queues/%22%3B%20DROP%20TABLE%20x/messages")
        check(status == 404, f"bad input: a quoted name answers 404 ({body})")

        modules = page_modules(c)
        check(len(modules) > 5 and all(status == 200 and kind.startswith("text/javascript")
                                       for status, kind in modules.values()),
              f"the page's {len(modules)} script modules are all served, as JavaScript ({modules})")
        texts = [c.request(p)[1] for p in ("/", "/main.js", "/api/session", "/api/overview", "/api/queues/mine",
                                           "/api/queues/mine/messages", "/api/queues/nope")]
        check(all(PASSWORD not in t for t in texts), "no secret: the password is in no answer")
        check(PASSWORD not in c.cmdline() and "--password-file" in c.cmdline(),
              "no secret: the password is not on the console's command line (/proc/PID/cmdline)")
        check(c.session["role"] == "console_admin", "the session names the connecting role")

        slow_clients(c)
    finally:
        c.stop()
    check(PASSWORD not in c.log, "no secret: the password is not in the console's log")
    r = subprocess.run([BIN, f"dbname={DB} user=console_admin password={PASSWORD}"], capture_output=True, text=True,
                       timeout=10)
    check(r.returncode == 2 and "--password-file, PGPASSWORD or PGPASSFILE" in r.stderr and PASSWORD not in r.stderr,
          f"no secret: a password in the connection string is refused (exit {r.returncode}: {r.stderr.strip()})")


def slow_clients(c):
    slow = []
    for _ in range(10):
        s = socket.create_connection(("127.0.0.1", c.port))
        s.sendall(b"GET /api/overview HTTP/1.1\r\nHo")
        slow.append(s)
    started = time.time()
    status, _ = c.request("/api/overview")
    took = time.time() - started
    check(status == 200 and took < 2, f"slow clients: an overview answers beside 10 slow ones in {took:.2f} s")
    time.sleep(5.5)
    closed = 0
    for s in slow:
        # Closed by the console: whatever it sent before, then end of stream.
        s.settimeout(2)
        try:
            while s.recv(4096):
                pass
            closed += 1
        except ConnectionResetError:
            closed += 1
        except socket.timeout:
            pass
        s.close()
    check(closed == 10, f"slow clients: {closed} of 10 cut off at the request deadline")


def cost(admin):
    admin.execute("ALTER ROLE console_counted SET log_statement = 'all'")
    log = server_log(admin)
    # The sampler reads once at the start, then an hour later.
    # A leased message: the overview then counts that table too (its second
    # statement), for 3 queues as for 1,003.
    admin.execute("SELECT pgmq.send('third', '{}'), pgmq.read('third', 600, 1)")
    c = Console("console_counted", actions=False, sample_seconds=3600)
    try:
        time.sleep(0.5)
        status, few, few_statements, _ = overview_statements(c, log)
        # BEGIN, the catalog, the depth, COMMIT: the catalog locks what it
        # checks, and the depth reads those tables in the same transaction.
        check(status == 200 and few_statements == 4, f"cost: {few} queues, {few_statements} statements")
        # A hundred at a time: a thousand queues in one transaction take
        # about as many locks as the lock table holds.
        for first in range(1, 1001, 100):
            admin.execute("SELECT pgmq.create('many_' || i) FROM generate_series(%s, %s) AS i", (first, first + 99))
        admin.execute("SELECT pgmq.send('many_' || i, '{}') FROM generate_series(1, 1000, 7) AS i")
        admin.execute("SELECT pgmq.read('many_' || i, 600, 1) FROM generate_series(1, 1000, 14) AS i")
        status, many, many_statements, took = overview_statements(c, log)
        check(status == 200 and many == few + 1000 and many_statements == few_statements,
              f"cost: {many} queues, {many_statements} statements (the same)")
        timings = [overview_statements(c, log)[3] for _ in range(3)]
        best = min(timings)
        print(f"{TAG} overview of {many} queues: {', '.join(f'{t:.3f}' for t in timings)} s")
        check(best < 1.0, f"cost: an overview of {many} queues answers in {best:.2f} s (< 1 s)")
    finally:
        c.stop()


def doc_example(name, page="monitoring.md"):
    """The ```sql block marked <!-- example: NAME --> in docs/PAGE."""
    with open(os.path.join(harness.REPO, "docs", page)) as f:
        text = f.read()
    m = re.search(r"<!-- example: " + re.escape(name) + r" -->\s*```sql\n(.*?)```", text, re.S)
    if not m:
        raise RuntimeError(f"no example {name} in docs/{page}")
    return m.group(1).strip().rstrip(";")


def make_stream(admin):
    """orders: billing read 5 and acked 3 (2 in flight); search read
    nothing, and its last read is set 20 minutes back: it stopped reading."""
    admin.execute("SELECT pgmq.create_stream('orders')")
    admin.execute("SELECT pgmq.subscribe('orders', 'billing'), pgmq.subscribe('orders', 'search')")
    admin.execute("SELECT pgmq.send_batch('orders', array_fill('{\"o\": 1}'::jsonb, ARRAY[5]))")
    ids = [r[0] for r in admin.execute("SELECT msg_id FROM pgmq.read_stream('orders', 'billing', 600, 5)")]
    admin.execute("SELECT pgmq.ack('orders', 'billing', %s::bigint[])", (ids[:3],))
    backdate_group(admin, "orders", "search", "20 minutes")


def backdate_group(admin, stream, group, interval):
    """The group last read (and subscribed) interval ago: its row of
    pgmq.consumer_groups, as only time would otherwise."""
    admin.execute("UPDATE pgmq.consumer_groups SET subscribed_at = now() - %s::interval, "
                  "last_read_at = CASE WHEN last_read_at IS NOT NULL THEN now() - %s::interval END "
                  "WHERE stream_name = %s AND group_name = %s", (interval, interval, stream, group))


GROUP_FIELDS = ("pending", "in_flight", "held_bytes", "ordered", "dead_letter_queue", "max_deliveries")


def streams(admin):
    rows = admin.execute("SELECT group_name, to_jsonb(g) FROM pgmq.stream_groups('orders') AS g ORDER BY 1").fetchall()
    want = {name: {k: g[k] for k in GROUP_FIELDS} for name, g in rows}
    stopped = sorted((r[0], r[1]) for r in admin.execute(doc_example("alert-group-stopped")))
    storage = sorted((r[0], r[1]) for r in admin.execute(doc_example("alert-group-storage")))
    check(stopped == [("orders", "search")] and storage == [],
          f"streams: the alert queries of docs/monitoring.md return search only ({stopped}, {storage})")
    c = Console("console_admin", actions=True)
    try:
        check(c.session["features"].get("streams") is True, "streams: the session says streams are available")
        status, overview = c.get("/api/overview")
        found = {s["name"]: s for s in overview.get("streams") or []}
        queues = {q["name"]: q for q in overview.get("queues", [])}
        check(status == 200 and sorted(found) == ["orders"] and queues.get("orders", {}).get("stream") is True
              and queues.get("mine", {}).get("stream") is False,
              f"streams: the overview lists orders as a stream, mine as a queue ({sorted(found)})")
        groups = {g["group_name"]: g for g in found.get("orders", {}).get("groups", [])}
        got = {name: {k: g.get(k) for k in GROUP_FIELDS} for name, g in groups.items()}
        check(got == want, f"streams: each group's figures are pgmq.stream_groups' ({got} vs {want})")
        alerts = {name: g.get("alerts") for name, g in groups.items()}
        check(alerts == {"billing": [], "search": ["stopped_reading"]} and found["orders"].get("alerts") == ["stopped_reading"],
              f"streams: search alerts 'stopped_reading', as the documented query returns it ({alerts})")
        check(groups.get("search", {}).get("last_read_age_sec") is None or groups["search"]["last_read_age_sec"] > 600,
              f"streams: search's last read is over 10 minutes ago ({groups.get('search')})")
        status, page = c.get("/api/queues/orders")
        stream = page.get("stream") or {}
        parts = [r[0] for r in admin.execute("SELECT partition_name FROM pgmq.stream_partitions('orders')")]
        check(status == 200 and [p.get("partition_name") for p in stream.get("partitions", [])] == parts and parts,
              f"streams: the stream's page lists pgmq.stream_partitions' partitions ({stream.get('partitions')}, {parts})")
        page_groups = {g["group_name"]: {k: g.get(k) for k in GROUP_FIELDS} for g in stream.get("groups", [])}
        check(page_groups == want, f"streams: the stream's page shows the same groups ({page_groups})")
        status, page = c.get("/api/queues/mine")
        check(status == 200 and page.get("stream") is None, "streams: a queue's page has no stream")

        # Seek: bad input, then billing back to the start: its 5 messages again.
        for body, want_status in ((b'{"since": "2020-01-01"}', 400), (b'{"group": "billing"}', 400),
                                  (b'{"group": "billing", "since": "not a time"}', 400)):
            status, answer = c.act("orders", "seek", body)
            check(status == want_status, f"seek: {body.decode()} answers {want_status} ({status} {answer})")
        status, answer = c.act("mine", "seek", b'{"group": "billing", "since": "2020-01-01"}')
        check(status == 409, f"seek: of a queue that is not a stream answers 409 ({status} {answer})")
        status, answer = c.act("orders", "seek", b'{"group": "nobody", "since": "2020-01-01"}')
        check(400 <= status < 500, f"seek: of a group that does not exist answers {status} ({answer})")
        status, answer = c.act("orders", "seek", b'{"group": "billing", "since": "2020-01-01 00:00:00+00"}')
        check(status == 200 and "billing" in answer.get("done", ""), f"seek: billing from 2020 ({status} {answer})")
        again = [r[0] for r in admin.execute("SELECT msg_id FROM pgmq.read_stream('orders', 'billing', 600, 10)")]
        check(len(again) == 5, f"seek: SQL sees billing read the 5 messages again ({again})")
        search = admin.execute("SELECT pending FROM pgmq.stream_groups('orders') WHERE group_name = 'search'").fetchone()[0]
        check(search == want["search"]["pending"], "seek: the other group is not affected")
        status, answer = c.act("orders", "pause")
        paused = admin.execute("SELECT count(*) FROM pgmq.read_stream('orders', 'search', 600, 1)").fetchone()[0]
        c.act("orders", "resume")
        check(status == 200 and paused == 0, f"pause: a paused stream gives a group nothing ({answer}, {paused})")
    finally:
        c.stop()
    # A role granted the stream as a queue (grant_queue_access): its page
    # answers with the groups, and its partitions or why the role may not
    # read them.
    admin.execute("SELECT pgmq.grant_queue_access('orders', 'console_viewer')")
    c = Console("console_viewer", actions=False)
    try:
        status, page = c.get("/api/queues/orders")
        stream = page.get("stream") or {}
        parts = stream.get("partitions")
        check(status == 200 and len(stream.get("groups", [])) == 2
              and (isinstance(parts, list) or (parts or {}).get("sqlstate") == "42501"),
              f"streams: a role granted the stream sees its groups, and its partitions or why not ({status} {parts})")
    finally:
        c.stop()
    stream_owner_code(admin)
    exporter_queries(admin)


def stream_owner_code(admin):
    """The tenant's stream, whose table carries a partial index calling the
    tenant's function (which the planner folds, as the planning role): it is
    refused with pgmq's reason, and its groups are never asked for."""
    with psycopg.connect(dbname=DB, user="console_tenant", autocommit=True) as tenant:
        tenant.execute("SELECT pgmq.create_stream('trap_stream')")
        tenant.execute("SELECT pgmq.subscribe('trap_stream', 'g'), pgmq.send('trap_stream', '{}')")
        tenant.execute("CREATE FUNCTION pgmq.stream_trap() RETURNS boolean LANGUAGE plpgsql AS $$BEGIN "
                       "IF current_user <> 'console_tenant' THEN INSERT INTO public.console_trap_log "
                       "VALUES (current_user); END IF; RETURN true; END$$")
        tenant.execute("CREATE FUNCTION pgmq.stream_trap_always() RETURNS boolean LANGUAGE sql IMMUTABLE "
                       "AS 'SELECT pgmq.stream_trap()'")
        tenant.execute("CREATE INDEX ON pgmq.q_trap_stream (msg_id) WHERE pgmq.stream_trap_always()")
        # A plain queue its owner lists in pgmq.streams: still a queue, as
        # for pgmq (which tells a stream by its table), and no error.
        tenant.execute("SELECT pgmq.create('fake_stream')")
        tenant.execute("INSERT INTO pgmq.streams (stream_name, stream_relid, retention, max_retention) "
                       "VALUES ('fake_stream', 'pgmq.q_fake_stream', '1 day', '7 days')")
    ran = trap_ran(admin)
    c = Console("console_admin", actions=True)
    try:
        status, overview = c.get("/api/overview")
        names = [s["name"] for s in overview.get("streams") or []]
        check(status == 200 and "trap_stream" in refused_names(overview) and "trap_stream" not in names,
              f"streams: a stream whose table runs the owner's code is refused ({refused_names(overview)}, {names})")
        queues = {q["name"]: q for q in overview.get("queues", [])}
        check(queues.get("fake_stream", {}).get("stream") is False and "fake_stream" not in names,
              f"streams: a queue listed in pgmq.streams by its owner is still a queue ({queues.get('fake_stream')})")
        status, _ = c.get("/api/queues/trap_stream")
        check(status == 403, f"streams: its page answers 403 ({status})")
        status, body = c.act("trap_stream", "seek", b'{"group": "g", "since": "2020-01-01"}')
        check(status == 403, f"streams: its seek answers 403 ({status} {body})")
        check(trap_ran(admin) == ran, "streams: the owner's function never ran as the console's role")
    finally:
        c.stop()
        admin.execute("SELECT pgmq.drop_queue('trap_stream'), pgmq.drop_queue('fake_stream')")
        admin.execute("DROP FUNCTION pgmq.stream_trap_always(), pgmq.stream_trap()")


def exporter_queries(admin):
    """Every query of docs/postgres_exporter.yaml runs; the groups' is there."""
    import yaml
    with open(os.path.join(harness.REPO, "docs", "postgres_exporter.yaml")) as f:
        spec = yaml.safe_load(f)
    failed = []
    for name, entry in spec.items():
        try:
            admin.execute(entry["query"]).fetchall()
        except psycopg.Error as e:
            failed.append(f"{name}: {e}")
    check(not failed, f"exporter: the {len(spec)} queries of docs/postgres_exporter.yaml run ({failed})")
    streams = admin.execute(spec["pgmq_stream"]["query"]).fetchall()
    check(streams == [("orders", 86400.0, 604800.0)],
          f"exporter: pgmq_stream has each stream with its retention, as queue_name ({streams})")
    rows = admin.execute(spec["pgmq_stream_group"]["query"]).fetchall()
    labels = sorted((r[0], r[1]) for r in rows)
    metrics = [m for m in spec["pgmq_stream_group"]["metrics"]]
    check(labels == [("orders", "billing"), ("orders", "search")] and len(metrics) == len(rows[0]),
          f"exporter: pgmq_stream_group has a row per group, a metric per column ({labels})")
    by = {r[1]: r for r in rows}
    check(by["search"][5] > 600 and by["billing"][5] < 600,
          f"exporter: seconds_since_last_read is over 600 for search only ({by})")


def without_streams(admin):
    """An older pgmq-cpp, without stream_groups: streams are not available,
    the overview and the stream's page answer, seek answers 409."""
    admin.execute("ALTER EXTENSION pgmq DROP FUNCTION pgmq.stream_groups(text)")
    admin.execute("DROP FUNCTION pgmq.stream_groups(text)")
    c = Console("console_admin", actions=True)
    try:
        check(c.session["features"].get("streams") is False, "without streams: the session says so")
        status, overview = c.get("/api/overview")
        check(status == 200 and overview.get("streams") is None and "orders" in [q["name"] for q in overview["queues"]],
              f"without streams: the overview answers, no streams ({status} {overview.get('streams')})")
        status, page = c.get("/api/queues/orders")
        check(status == 200 and page.get("stream") is None, f"without streams: the stream's page answers ({status})")
        status, body = c.act("orders", "seek", b'{"group": "billing", "since": "2020-01-01"}')
        check(status == 409 and "not available" in body.get("error", ""), f"without streams: seek answers 409 ({body})")
    finally:
        c.stop()


def main():
    if not os.access(BIN, os.X_OK):
        print(f"{TAG} FAILED: no console at {BIN} (cmake --build build)")
        return 1
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
        for role in ("console_admin", "console_viewer", "console_counted", "console_tenant"):
            admin.execute(f"DROP ROLE IF EXISTS {role}")
        admin.execute(f"CREATE ROLE console_admin LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
        admin.execute(f"CREATE ROLE console_viewer LOGIN PASSWORD '{PASSWORD}'")
        admin.execute(f"CREATE ROLE console_counted LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
        admin.execute("CREATE ROLE console_tenant LOGIN")
    try:
        with psycopg.connect(dbname=DB, autocommit=True) as admin:
            admin.execute("CREATE EXTENSION pgmq")
            admin.execute("SELECT pgmq.create('mine'), pgmq.create('other'), pgmq.create('third')")
            admin.execute("SELECT pgmq.send_batch('mine', ARRAY['{\"n\":1}', '{\"n\":2}', '{\"n\":3}']::jsonb[])")
            admin.execute("SELECT pgmq.send_batch('other', ARRAY['{}', '{}']::jsonb[])")
            # home's two messages set aside in home_dead, which redrive_all sends back.
            admin.execute("SELECT pgmq.create('home'), pgmq.create('home_dead')")
            admin.execute("SELECT pgmq.set_dead_letter_queue('home', 'home_dead', 3)")
            admin.execute("SELECT pgmq.send_batch('home', ARRAY['{\"h\":1}', '{\"h\":2}']::jsonb[])")
            admin.execute("SELECT pgmq.dead_letter('home', ARRAY[1, 2]::bigint[], 'broken')")
            admin.execute("SELECT pgmq.grant_queue_access('mine', 'console_viewer')")
            admin.execute("GRANT SELECT ON pgmq.meta TO console_viewer")
            make_stream(admin)
            read_only_mode(admin)
            limited_role(admin)
            queue_owner_code(admin)
            cross_site_and_bad_input(admin)
            cost(admin)
            streams(admin)
            without_the_rule(admin)
            without_streams(admin)
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            for role in ("console_admin", "console_viewer", "console_counted", "console_tenant"):
                admin.execute(f"DROP ROLE IF EXISTS {role}")
    # The same console against upstream pgmq's releases (their stand-ins).
    for release in RELEASES:
        started = time.time()
        console_upstream_cases.run(release, check)
        print(f"{TAG} upstream pgmq {release}: {time.time() - started:.1f} s", flush=True)
    print(f"{TAG} {'FAILED: ' + '; '.join(failures) if failures else 'all checks passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
