"""test/lib/console_upstream_cases.py: pgmq-console's API against one upstream
pgmq release (its TEST-ONLY stand-in, test/lib/upstream_install.py: ours,
not upstream's code), run by test/integration/console_api.py for each.

  - it says which pgmq it found, in its first log line and in /api/session
    (pgmq, features all false, table_check "owner");
  - the overview's figures (visible, leased, delayed, total, oldest visible)
    match SQL; what needs pgmq-cpp is null (paused, dead-letter queue,
    runway; default_partition_rows too before 1.13, upstream's estimate from
    1.13); browsing changes no read_ct; the archive is browsed;
  - the owner rule: a tenant's table, which the console's role may read but
    whose owner lacks its privileges, is refused with the owner named (page,
    messages, purge: 403), and the tenant's trigger and index predicate never
    run; a superuser console reads only superusers' queues; with
    --trust-queue-owners a superuser console does not start, another role's
    reads the tenant's table (and so runs its code: what the flag means);
  - actions: purge works (upstream's count), pause, resume, redrive and
    redrive_all answer 409 naming the release;
  - cost: an overview is the same six statements for a few queues and 200 more.
"""
import psycopg

from console_harness import Console, overview_statements, run_console, server_log
from upstream_install import describe, install, install_mode

ROLES = ("up_admin", "up_app", "up_tenant")


def setup(db, release):
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {db}")
        for role in ROLES:
            admin.execute(f"DROP ROLE IF EXISTS {role}")
        admin.execute("CREATE ROLE up_admin LOGIN SUPERUSER")
        admin.execute("CREATE ROLE up_app LOGIN")
        admin.execute("CREATE ROLE up_tenant LOGIN")
    install(db, release)
    with psycopg.connect(dbname=db, autocommit=True) as admin:
        admin.execute("GRANT USAGE, CREATE ON SCHEMA pgmq TO up_app, up_tenant")
        admin.execute("GRANT SELECT, INSERT ON pgmq.meta TO up_app, up_tenant")
        admin.execute("CREATE TABLE public.trap_log (who text)")
        admin.execute("GRANT INSERT ON public.trap_log TO PUBLIC")
        # A partitioned queue of the installing superuser, readable by up_app.
        admin.execute("SELECT pgmq.create_partitioned('events', '10', '100')")
        admin.execute("SELECT pgmq.send_batch('events', array_fill('{}'::jsonb, ARRAY[60]))")
        admin.execute("ANALYZE pgmq.q_events_default")
        admin.execute("GRANT SELECT ON pgmq.q_events, pgmq.q_events_msg_id_seq, pgmq.a_events TO up_app")
    with psycopg.connect(dbname=db, user="up_app", autocommit=True) as app:
        # jobs: 1, 2 archived; 3, 4, 5 leased; 6 to 10 visible; 11, 12 delayed.
        app.execute("SELECT pgmq.create('jobs')")
        app.execute("SELECT pgmq.send_batch('jobs', ARRAY(SELECT jsonb_build_object('n', i) "
                    "FROM generate_series(1, 10) AS i))")
        app.execute("SELECT pgmq.archive('jobs', ARRAY[1, 2]::bigint[])")
        app.execute("SELECT * FROM pgmq.read('jobs', 600, 3)")
        app.execute("SELECT pgmq.send('jobs', '{\"later\": true}', 3600) FROM generate_series(1, 2)")
        app.execute("SELECT pgmq.create('outbox')")
        app.execute("SELECT pgmq.send('outbox', '{}') FROM generate_series(1, 4)")
    with psycopg.connect(dbname=db, user="up_tenant", autocommit=True) as tenant:
        # The tenant's queue, readable by up_app, carrying the tenant's code:
        # an index predicate the planner folds, and a trigger.
        tenant.execute("SELECT pgmq.create('tenant_q'), pgmq.send('tenant_q', '{}')")
        tenant.execute("CREATE FUNCTION pgmq.tenant_code() RETURNS boolean LANGUAGE plpgsql AS $$BEGIN "
                       "IF current_user <> 'up_tenant' THEN INSERT INTO public.trap_log VALUES (current_user); END IF; "
                       "RETURN true; END$$")
        tenant.execute("CREATE FUNCTION pgmq.tenant_always() RETURNS boolean LANGUAGE sql IMMUTABLE "
                       "AS 'SELECT pgmq.tenant_code()'")
        tenant.execute("CREATE INDEX ON pgmq.q_tenant_q (msg_id) WHERE pgmq.tenant_always()")
        tenant.execute("CREATE FUNCTION pgmq.tenant_trigger() RETURNS trigger LANGUAGE plpgsql AS "
                       "$$BEGIN PERFORM pgmq.tenant_code(); RETURN NULL; END$$")
        tenant.execute("CREATE TRIGGER trap AFTER TRUNCATE ON pgmq.q_tenant_q "
                       "FOR EACH STATEMENT EXECUTE FUNCTION pgmq.tenant_trigger()")
        tenant.execute("GRANT SELECT ON pgmq.q_tenant_q, pgmq.q_tenant_q_msg_id_seq TO up_app")


def sql_depth(admin, queue):
    return admin.execute(f"""
        SELECT count(*) FILTER (WHERE vt <= now()), count(*) FILTER (WHERE vt > now() AND read_ct > 0),
               count(*) FILTER (WHERE vt > now() AND read_ct = 0), count(*) FROM pgmq.q_{queue}""").fetchone()


def trap_ran(admin):
    return admin.execute("SELECT count(*) FROM public.trap_log").fetchone()[0]


def check_session_and_figures(check, c, admin, release, tag):
    s = c.session
    check(s.get("pgmq", {}).get("description", "").startswith(describe(release)) and s.get("table_check") == "owner"
          and not any(s.get("features", {}).get(k) for k in ("dead_letter_policies", "pause", "priorities",
                                                              "partition_runway", "failure_reasons", "redrive",
                                                              "table_rule")),
          f"{tag}: the session names {describe(release)}, the owner rule, and no pgmq-cpp feature ({s.get('pgmq')})")
    status, overview = c.get("/api/overview")
    queues = {q["name"]: q for q in overview.get("queues", [])}
    check(status == 200 and sorted(queues) == ["events", "jobs", "outbox"],
          f"{tag}: the overview lists the queues whose owners it trusts ({sorted(queues)})")
    jobs = queues.get("jobs", {})
    figures = (jobs.get("visible"), jobs.get("leased"), jobs.get("delayed"), jobs.get("total"))
    check(figures == tuple(sql_depth(admin, "jobs")) == (5, 3, 2, 10),
          f"{tag}: jobs' visible, leased, delayed and total match SQL ({figures})")
    check(jobs.get("oldest_visible_age_sec") is not None, f"{tag}: jobs' oldest visible message has an age")
    nulls = {k: jobs.get(k) for k in ("paused", "dead_letter_queue", "max_deliveries", "dead_lettered",
                                      "dead_letter_for", "runway_messages", "runway_seconds")}
    check(all(v is None for v in nulls.values()), f"{tag}: what needs pgmq-cpp is null ({nulls})")
    events = queues.get("events", {})
    estimate = events.get("default_partition_rows")
    has_estimate = release >= "1.13"
    check(estimate == 11 if has_estimate else estimate is None,
          f"{tag}: events' default-partition rows: {'upstream 1.13 estimate 11' if has_estimate else 'null'} "
          f"({estimate})")
    status, page = c.get("/api/queues/events")
    check(status == 200 and page.get("policies") is None and page.get("partitions") == [],
          f"{tag}: a partitioned queue's page has no policies and no runway ({page.get('policies')}, "
          f"{page.get('partitions')})")
    before = admin.execute("SELECT array_agg(read_ct ORDER BY msg_id) FROM pgmq.q_jobs").fetchone()[0]
    status, body = c.get("/api/queues/jobs/messages?order=oldest")
    check(status == 200 and [m["msg_id"] for m in body["messages"]] == list(range(3, 13))
          and admin.execute("SELECT array_agg(read_ct ORDER BY msg_id) FROM pgmq.q_jobs").fetchone()[0] == before,
          f"{tag}: browsing jobs lists its messages and changes no read_ct")
    status, body = c.get("/api/queues/jobs/messages?source=archive")
    check(status == 200 and [m["msg_id"] for m in body["messages"]] == [2, 1], f"{tag}: the archive is browsed")
    status, body = c.get("/api/queues/jobs/messages?source=dead")
    check(status == 409 and f"not available with upstream pgmq" in body.get("error", ""),
          f"{tag}: dead letters answer 409, not available ({status} {body.get('error')})")
    return overview


def check_owner_rule(check, c, admin, overview, tag, role):
    refused = {q["name"]: q for q in overview.get("refused_queues", [])}
    reason = refused.get("tenant_q", {}).get("reason", "")
    check(list(refused) == ["tenant_q"] and refused["tenant_q"]["kind"] == "owner"
          and f"owned by role up_tenant, which does not have the privileges of role {role}" in reason,
          f"{tag}: the tenant's queue is refused, its owner named ({refused})")
    for path in ("/api/queues/tenant_q", "/api/queues/tenant_q/messages"):
        status, body = c.get(path)
        check(status == 403 and "up_tenant" in body.get("error", ""), f"{tag}: {path} answers 403 ({status})")


def run(release, check):
    db = "pgmq_console_up_" + release.replace(".", "_")
    tag = f"upstream {release} ({install_mode(release)})"
    setup(db, release)
    try:
        with psycopg.connect(dbname=db, autocommit=True) as admin:
            admin.execute("ALTER ROLE up_app SET log_statement = 'all'")
            c = Console(db, "up_app", actions=True, sample_seconds=3600)
            try:
                check(c.get("/healthz", headers={"Host": "elsewhere"})[0] == 200,
                      f"{tag}: /healthz answers 200 whatever the Host")
                overview = check_session_and_figures(check, c, admin, release, tag)
                check_owner_rule(check, c, admin, overview, tag, "up_app")
                for action in ("pause", "resume", "redrive", "redrive_all"):
                    status, body = c.act("jobs", action)
                    check(status == 409 and f"not available with upstream pgmq" in body.get("error", ""),
                          f"{tag}: {action} answers 409, not available ({body.get('error')})")
                status, body = c.act("tenant_q", "purge")
                # Counted as the tenant: a superuser's count would run its code.
                with psycopg.connect(dbname=db, user="up_tenant") as tenant:
                    kept = tenant.execute("SELECT count(*) FROM pgmq.q_tenant_q").fetchone()[0]
                check(status == 403 and kept == 1, f"{tag}: purging the tenant's queue is refused ({body.get('error')})")
                status, few, few_statements, _ = overview_statements(c, server_log(admin))
                with psycopg.connect(dbname=db, user="up_app", autocommit=True) as app:
                    app.execute("SELECT pgmq.create('many_' || i) FROM generate_series(1, 200) AS i")
                    app.execute("SELECT pgmq.send('many_' || i, '{}') FROM generate_series(1, 200, 5) AS i")
                    app.execute("SELECT pgmq.read('many_' || i, 600, 1) FROM generate_series(1, 200, 10) AS i")
                status, many, many_statements, took = overview_statements(c, server_log(admin))
                # BEGIN, the tables to lock, LOCK TABLE, the catalog, the depth, COMMIT.
                check(few_statements == many_statements == 6 and many == few + 200,
                      f"{tag}: an overview of {few} and of {many} queues is {few_statements} and {many_statements} "
                      f"statements ({took:.2f} s)")
                status, body = c.act("jobs", "purge")
                check(status == 200 and body.get("count") == 10 and sql_depth(admin, "jobs")[3] == 0,
                      f"{tag}: purge empties jobs and says how many ({body})")
            finally:
                c.stop()
            check(describe(release) in c.log and "not available with it: dead-letter policies" in c.log,
                  f"{tag}: the console's first line says what it found ({c.log.splitlines()[:1]})")
            admin.execute("ALTER ROLE up_app RESET log_statement")

            c = Console(db, "up_admin", actions=False)
            try:
                status, overview = c.get("/api/overview")
                names = [q["name"] for q in overview.get("queues", [])]
                refused = sorted(q["name"] for q in overview.get("refused_queues", []))
                check(names == ["events"] and "jobs" in refused and "tenant_q" in refused,
                      f"{tag}: a superuser console reads only superusers' queues ({names}, refused {refused[:3]})")
            finally:
                c.stop()
            status, err = run_console(db, "up_admin", "--trust-queue-owners")
            check(status == 2 and "--trust-queue-owners with role up_admin" in err,
                  f"{tag}: --trust-queue-owners as a superuser is refused (exit {status}: {err.strip()[-160:]})")
            who = admin.execute("SELECT string_agg(who, ', ') FROM public.trap_log").fetchone()[0]
            check(trap_ran(admin) == 0, f"{tag}: the tenant's code never ran as a console's role ({who})")
            c = Console(db, "up_app", actions=True, extra=["--trust-queue-owners"])
            try:
                status, body = c.get("/api/queues/tenant_q/messages")
                check(status == 200 and c.session.get("table_check") == "trust" and trap_ran(admin) > 0,
                      f"{tag}: --trust-queue-owners reads the tenant's queue, and runs its code ({status})")
            finally:
                c.stop()
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
            for role in ROLES:
                admin.execute(f"DROP ROLE IF EXISTS {role}")
