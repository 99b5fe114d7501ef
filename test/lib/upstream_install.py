"""test/lib/upstream_install.py: a database with the TEST-ONLY stand-in of an
upstream pgmq release (test/lib/fake_upstream.py, ours, not upstream's code)
instead of this extension, installed as managed services install pgmq:

  - "sql": plain SQL in a new schema pgmq, no extension row (services that
    load no C extension; upstream's SQL-only install);
  - "extension": CREATE EXTENSION pgmq VERSION '<release>' from a stand-in
    install script put into the server's extension directory for that
    statement only (as a service that ships upstream's extension has it).

RELEASES are the upstream releases pgmq-relay and pgmq-console are tested
against; PGMQ_UPSTREAM_RELEASES overrides ("" for none). install_mode()
says how each is installed in the tests: 1.12.0 as an extension, the others
as plain SQL, so that both ways are covered.
"""
import os
import subprocess

import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
RELEASES = os.environ.get("PGMQ_UPSTREAM_RELEASES", "1.11.0 1.12.0 1.13.1").split()


def install_mode(release):
    return "extension" if release == "1.12.0" else "sql"


def script(release, sql_only):
    args = ["/usr/bin/python3", os.path.join(HERE, "fake_upstream.py"), release] + (["--sql-only"] if sql_only else [])
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def install(dbname, release, mode=None, with_partman=True, **connect):
    """Installs the stand-in of release into dbname (which has no pgmq yet),
    with pg_partman in schema partman first when with_partman; connect: more
    of psycopg's connection parameters (PGHOST etc. otherwise)."""
    mode = mode or install_mode(release)
    with psycopg.connect(dbname=dbname, autocommit=True, **connect) as conn:
        if with_partman:
            conn.execute("CREATE SCHEMA IF NOT EXISTS partman")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman")
        if mode == "sql":
            with conn.transaction():
                conn.execute(script(release, sql_only=True))
            return
        sharedir = conn.execute("SELECT setting FROM pg_catalog.pg_config WHERE name = 'SHAREDIR'").fetchone()[0]
        path = os.path.join(sharedir, "extension", f"pgmq--{release}.sql")
        if os.path.exists(path):
            raise RuntimeError(f"{path} exists: not a stand-in this test may replace")
        with open(path, "w") as f:
            f.write(script(release, sql_only=False))
        try:
            conn.execute(f"CREATE EXTENSION pgmq VERSION '{release}'")
        finally:
            os.remove(path)


def short_name(release, mode=None):
    """How the relay and the console name it: "upstream pgmq 1.12.0" (an
    extension's version), "upstream pgmq 1.13" (the release a SQL-only
    install's functions show)."""
    mode = mode or install_mode(release)
    return "upstream pgmq " + (release if mode == "extension" else ".".join(release.split(".")[:2]))


def describe(release, mode=None):
    """The start of how they describe it in their log line."""
    mode = mode or install_mode(release)
    return short_name(release, mode) + (" (extension)" if mode == "extension" else " (SQL-only install")
