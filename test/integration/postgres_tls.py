#!/usr/bin/python3
"""test/integration/postgres_tls.py: pgmq-relay and pgmq-console reach
PostgreSQL as a managed service wants it: over TLS with sslmode=verify-full
and a CA file, a client certificate, and a password from a file or the
environment that never shows on the command line or in a log.

A throwaway cluster (test/lib/tls_cluster.py) with a CA made here by openssl
and a server certificate for localhost, TLS only, scram-sha-256 and, for its
role tls_app, a client certificate too; upstream pgmq 1.13.1's stand-in
(test/lib/upstream_install.py, ours) installed as plain SQL, as on a service
that loads no C extension. A private broker for the relay. The cases:

  relay:   with --postgres-password-file's file and the client certificate it
           relays a queue over TLS (pg_stat_ssl says so), the password is
           neither in /proc/PID/cmdline nor in the log; with PGPASSWORD
           instead it relays too; refused, each with a log line that names the
           cause and the setting to fix: connecting by 127.0.0.1 (the
           certificate names localhost), another CA, no client certificate, a
           client key others may read, a wrong password; --postgres with a
           password is refused (exit 2);
  console: a connection string with the TLS settings and --password-file
           serves the queue (and its log names the release), so does the same
           in PG* variables with PGPASSWORD; connecting by 127.0.0.1 and
           another CA end it with exit 2 and a message that names the cause
           and the setting; the password is in no answer, log or command line.

Runs as root with PGHOST etc. unused (the cluster is its own). The relay and
the console are build/relay/pgmq-relay and build/console/pgmq-console
(PGMQ_RELAY_BIN, PGMQ_CONSOLE_BIN). Exit 0 is a pass.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from console_harness import BIN as CONSOLE_BIN, free_port  # noqa: E402
from private_rabbitmq import Broker  # noqa: E402
from relay_harness import Checks, drain, relay_binary  # noqa: E402
from tls_cluster import APP, APP_PASSWORD, DB, TlsCluster  # noqa: E402
from upstream_install import describe, install  # noqa: E402

RELEASE = "1.13.1"
check = Checks("postgres-tls")


def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")


def relay(ctx, name, postgres, env=None, seconds=4, password_file=True):
    """pgmq-relay with --drain for at most seconds: (exit status or None if it
    was still retrying, its log, its command line while it ran)."""
    config = {"postgres": postgres, "rabbitmq": {"url": f"amqp://guest:guest@127.0.0.1:{ctx['broker'].port}/"},
              "queues": ["tls_q"], "poll_s": 1, "report_interval_s": 0, "backoff_initial_ms": 200,
              "backoff_max_ms": 500}
    if password_file:
        config["postgres_password_file"] = ctx["password_file"]
    path = os.path.join(ctx["tmp"], f"{name}.json")
    with open(path, "w") as f:
        json.dump(config, f)
    proc = subprocess.Popen([ctx["relay"], "--config", path, "--drain"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=dict(os.environ, **(env or {})))
    time.sleep(0.3)
    line = cmdline(proc.pid) if proc.poll() is None else ""
    try:
        out, _ = proc.communicate(timeout=seconds)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=15)
        rc = None
    ctx["logs"].append(out)
    return rc, out, line


def refused(ctx, what, postgres, cause, setting, **kw):
    rc, out, _ = relay(ctx, what.replace(" ", "-"), postgres, seconds=2.5, **kw)
    lines = [line for line in out.splitlines() if "cannot connect to PostgreSQL" in line]
    check(f"relay, {what}: refused, the log names the cause and the setting to fix", rc is None and lines
          and cause in lines[0] and setting in lines[0], lines[:1] or out[-300:])


def relay_cases(ctx, c):
    cluster = ctx["cluster"]
    with cluster.admin() as admin:
        admin.execute("SELECT pgmq.send('tls_q', jsonb_build_object('n', g)) FROM generate_series(1, 20) g")
    rc, out, line = relay(ctx, "good", cluster.conninfo(), seconds=20)
    got = {m[1]["n"] for m in drain(ctx["broker"], "tls_q")}
    check("relay over TLS with a client certificate and the password from a file relays everything",
          rc == 0 and got == set(range(1, 21)) and describe(RELEASE) in out, f"exit {rc}, {len(got)} of 20")
    check("relay: the password is not on its command line", APP_PASSWORD not in line and "--config" in line, line)
    with cluster.admin() as admin:
        admin.execute("SELECT pgmq.send('tls_q', '{\"n\": 21}')")
    rc, out, _ = relay(ctx, "pgpassword", cluster.conninfo(), env={"PGPASSWORD": APP_PASSWORD}, password_file=False,
                       seconds=20)
    check("relay with PGPASSWORD instead of a file relays too", rc == 0 and [m[1]["n"] for m in drain(
        ctx["broker"], "tls_q")] == [21], f"exit {rc}: {out[-200:]}")
    refused(ctx, "by 127.0.0.1", cluster.conninfo(host="127.0.0.1"), 'does not match host name "127.0.0.1"',
            "set host to the name the certificate carries")
    refused(ctx, "another CA", cluster.conninfo(sslrootcert=cluster.certs["other_ca"]), "certificate verify failed",
            "set sslrootcert")
    refused(ctx, "no client certificate", cluster.conninfo(client_cert=False), "certificate",
            "set sslcert and sslkey")
    refused(ctx, "a client key others may read", cluster.conninfo(key=cluster.certs["client_key"]),
            "group or world access", "0600")
    with open(ctx["wrong_password_file"], "w") as f:
        f.write("not-the-password\n")
    wrong = dict(ctx, password_file=ctx["wrong_password_file"])
    refused(wrong, "a wrong password", cluster.conninfo(), "password authentication failed", "postgres_password_file")
    r = subprocess.run([ctx["relay"], "--postgres", cluster.conninfo() + f" password={APP_PASSWORD}", "--queue",
                        "tls_q"], capture_output=True, text=True, timeout=10)
    check("relay: --postgres with a password is refused, without repeating it",
          r.returncode == 2 and "--postgres-password-file" in r.stderr and APP_PASSWORD not in r.stderr,
          f"exit {r.returncode}: {r.stderr.strip()}")


def console(ctx, args, env=None, serve=True):
    """pgmq-console: (its process and port) serving, or (exit status, log) when not serve."""
    port = free_port()
    proc = subprocess.Popen([CONSOLE_BIN, "--listen", f"127.0.0.1:{port}", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=dict(os.environ, **(env or {})))
    if not serve:
        try:
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        ctx["logs"].append(out)
        return proc.returncode, out
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/overview", timeout=5) as r:
                return proc, json.loads(r.read())
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    return proc, None


def stop(ctx, proc):
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    ctx["logs"].append(out)
    return out


def console_cases(ctx, c):
    cluster = ctx["cluster"]
    proc, overview = console(ctx, ["--password-file", ctx["password_file"], cluster.conninfo()])
    line = cmdline(proc.pid) if proc.poll() is None else ""
    out = stop(ctx, proc)
    names = [q["name"] for q in (overview or {}).get("queues", [])]
    check("console over TLS with a client certificate and --password-file serves the queues",
          names == ["tls_q"] and describe(RELEASE) in out, f"{names}: {out.splitlines()[:1]}")
    check("console: the password is not on its command line", APP_PASSWORD not in line and "sslmode" in line, line)
    env = dict(cluster.env(), PGPASSWORD=APP_PASSWORD)
    proc, overview = console(ctx, [], env=env)
    stop(ctx, proc)
    check("console configured by PG* variables (PGSSLMODE, PGSSLROOTCERT, ..., PGPASSWORD) serves the queues",
          [q["name"] for q in (overview or {}).get("queues", [])] == ["tls_q"], overview)
    for what, conninfo, cause, setting in (
            ("by 127.0.0.1", cluster.conninfo(host="127.0.0.1"), 'does not match host name "127.0.0.1"',
             "set host to the name the certificate carries"),
            ("another CA", cluster.conninfo(sslrootcert=cluster.certs["other_ca"]), "certificate verify failed",
             "set sslrootcert")):
        rc, out = console(ctx, ["--password-file", ctx["password_file"], conninfo], serve=False)
        check(f"console, {what}: exit 2 with a message that names the cause and the setting",
              rc == 2 and cause in out and setting in out, f"exit {rc}: {out.strip().splitlines()[-1:]}")


def main():
    tmp = tempfile.mkdtemp(prefix="pgmq-postgres-tls-")
    ctx = {"tmp": tmp, "logs": [], "password_file": os.path.join(tmp, "pg-password"),
           "wrong_password_file": os.path.join(tmp, "pg-wrong-password")}
    with open(ctx["password_file"], "w") as f:
        f.write(APP_PASSWORD + "\n")
    os.chmod(ctx["password_file"], 0o600)
    broker = ctx["broker"] = Broker(os.path.join(tmp, "broker"))
    cluster = TlsCluster(tmp)
    t0 = time.monotonic()
    try:
        ctx["relay"] = relay_binary()
        cluster.start()
        ctx["cluster"] = cluster
        install(DB, RELEASE, mode="sql", with_partman=False, host=cluster.sock, port=cluster.port, user="postgres")
        with cluster.admin() as admin:
            admin.execute(f"GRANT USAGE, CREATE ON SCHEMA pgmq TO {APP}")
            admin.execute(f"GRANT SELECT, INSERT ON pgmq.meta TO {APP}")
        with cluster.admin() as admin:
            admin.execute(f"SET ROLE {APP}")
            admin.execute("SELECT pgmq.create('tls_q')")
        check.say(f"cluster on 127.0.0.1:{cluster.port} with TLS, broker after {broker.start():.1f} s")
        conn = broker.connect()
        conn.channel().queue_declare("tls_q", durable=True)
        conn.close()
        for name, case in (("relay", relay_cases), ("console", console_cases)):
            started = time.monotonic()
            try:
                case(ctx, check)
            except Exception as e:
                check(f"the {name} cases ran to their end", False, repr(e))
            check.say(f"{name} cases: {time.monotonic() - started:.1f} s")
        logs = "".join(ctx["logs"])
        check("the password is in no log line of the relay or the console", APP_PASSWORD not in logs and logs != "")
        authorized = [line for line in cluster.server_log().splitlines()
                      if "connection authorized: user=tls_app" in line]
        check(f"each of the {len(authorized)} connections the server let in as tls_app came over TLS",
              authorized and all("SSL enabled" in line for line in authorized), authorized[:1])
    except Exception as e:
        check("the test ran to its end", False, repr(e))
    finally:
        broker.close()
        cluster.stop()
        if check.failures:
            check.say(f"kept {tmp} for inspection; server log tail:\n" + cluster.server_log()[-1500:])
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    check.say(f"{time.monotonic() - t0:.1f} s in all")
    return check.exit_status()


if __name__ == "__main__":
    sys.exit(main())
