"""test/lib/package_services.py ROOT: starts pgmq-relay and pgmq-console the
way their systemd units would, in a root filesystem where their Debian
packages and a running PostgreSQL cluster (the root's own, on
/run/postgresql) are installed. No systemd runs here, so each unit's
ExecStart= is read from the installed unit, expanded with its
EnvironmentFile= as systemd expands it ($VAR split at whitespace, ${VAR} one
argument), and run as its User= inside the root.

  relay:   its configuration file is edited as an administrator would (the
           queue, a private RabbitMQ broker on this machine, a password file
           only pgmq_relay reads); a message sent to the queue must reach the
           broker and leave the queue; SIGTERM ends it with status 0.
  console: its /etc/default file gets a free port; /api/session must answer
           as role pgmq_console with actions off, /api/overview must list the
           queue; SIGTERM ends it with status 0.

Run by test/integration/debian_packages.sh (as root, /proc, /sys and /dev
mounted in ROOT); exits 0 when both pass.
"""
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import private_rabbitmq  # noqa: E402

ROOT = sys.argv[1]
PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def say(text):
    print(f"[package_services] {text}", flush=True)


def fail(text):
    say(f"FAIL: {text}")
    sys.exit(1)


def psql(sql):
    """SQL in the root's cluster, database postgres, as postgres."""
    r = subprocess.run(["chroot", ROOT, "env", "-i", f"PATH={PATH}", "LANG=C.UTF-8", "runuser", "-u", "postgres",
                        "--", "psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-c", sql],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail(f"psql: {sql}: {r.stderr.strip()}")
    return r.stdout.strip()


def unit(name):
    """The [Service] settings of an installed unit: key -> list of values."""
    settings = {}
    with open(os.path.join(ROOT, "lib/systemd/system", name)) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", ";", "[")):
                key, _, value = line.partition("=")
                settings.setdefault(key, []).append(value)
    return settings


def environment_file(path):
    """KEY=VALUE lines as systemd reads them: comments, quotes removed."""
    env = {}
    with open(os.path.join(ROOT, path.lstrip("-").lstrip("/"))) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            key, _, value = line.partition("=")
            words = shlex.split(value) or [""]
            env[key.strip()] = words[0]
    return env


def command_line(settings):
    """ExecStart= as systemd would run it: the unit's environment expanded."""
    env = {}
    for path in settings.get("EnvironmentFile", []):
        env.update(environment_file(path))
    argv = []
    for word in shlex.split(settings["ExecStart"][0]):
        whole = re.fullmatch(r"\$\{(\w+)\}", word)
        split = re.fullmatch(r"\$(\w+)", word)
        if whole:
            argv.append(env.get(whole.group(1), ""))
        elif split:
            argv.extend(env.get(split.group(1), "").split())
        else:
            argv.append(re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), word))
    return argv, env


def start(name):
    """Runs the unit's ExecStart in ROOT as its User= and Group=, with its environment."""
    settings = unit(name)
    argv, env = command_line(settings)
    user = settings["User"][0]
    say(f"{name}: ExecStart as {user}: {shlex.join(argv)}")
    env_args = [f"{k}={v}" for k, v in env.items()]
    log = tempfile.TemporaryFile()
    # setpriv execs (runuser would fork and keep the signal to itself): the
    # process signalled is the program, as systemd's main process. Like the
    # unit: its user and group, no new privileges, no capabilities.
    group = settings.get("Group", [user])[0]
    proc = subprocess.Popen(["chroot", ROOT, "env", "-i", f"PATH={PATH}", "LANG=C.UTF-8",
                             "setpriv", f"--reuid={user}", f"--regid={group}", "--init-groups", "--no-new-privs",
                             "--bounding-set=-all", "--inh-caps=-all", "--",
                             "env", *env_args, *argv], stdout=log, stderr=subprocess.STDOUT)
    return proc, log


def output(log):
    log.seek(0)
    return log.read().decode(errors="replace")


def stop(name, proc, log):
    proc.send_signal(signal.SIGTERM)
    try:
        status = proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail(f"{name} did not stop within 30 s of SIGTERM:\n{output(log)}")
    if status != 0:
        fail(f"{name} exited with {status} after SIGTERM:\n{output(log)}")
    say(f"ok: {name} stopped on SIGTERM with status 0")


def wait_for(what, predicate, timeout, proc, log):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail(f"{what}: it exited with {proc.returncode}:\n{output(log)}")
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    fail(f"{what}: not within {timeout} s:\n{output(log)}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def relay(tmp):
    broker = private_rabbitmq.Broker(os.path.join(tmp, "broker"))
    try:
        say(f"broker ready after {broker.start():.1f} s")
        conn = broker.connect()
        channel = conn.channel()
        channel.queue_declare("pkg_outbox", durable=True)
        psql("SELECT pgmq.create('pkg_outbox')")
        psql("DO $$BEGIN CREATE ROLE pgmq_relay LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$")
        psql("SELECT pgmq.grant_queue_access('pkg_outbox', 'pgmq_relay', false)")
        # The administrator's edit: the broker's address and a password file
        # only the service reads (the configuration keeps its owner and mode).
        conf = os.path.join(ROOT, "etc/pgmq-relay/relay.json")
        with open(conf) as f:
            config = json.load(f)
        config["queues"] = ["pkg_outbox"]
        config["rabbitmq"]["url"] = f"amqp://guest@127.0.0.1:{broker.port}/"
        config["metrics_listen"] = f"127.0.0.1:{free_port()}"
        with open(conf, "w") as f:
            json.dump(config, f, indent=2)
        password = os.path.join(ROOT, "etc/pgmq-relay/amqp-password")
        with open(password, "w") as f:
            f.write("guest\n")
        subprocess.run(["chroot", ROOT, "sh", "-c", "chown root:pgmq_relay /etc/pgmq-relay/amqp-password && "
                        "chmod 0640 /etc/pgmq-relay/amqp-password"], check=True)

        proc, log = start("pgmq-relay.service")
        wait_for("the relay's start", lambda: "pgmq-relay started" in output(log), 20, proc, log)
        msg_id = psql("SELECT pgmq.send('pkg_outbox', '{\"order\": 42}')")

        def received():
            method, properties, body = channel.basic_get("pkg_outbox", auto_ack=True)
            return (properties.message_id, body) if method else None
        message_id, body = wait_for("the message at the broker", received, 20, proc, log)
        if message_id != f"pkg_outbox:{msg_id}" or json.loads(body) != {"order": 42}:
            fail(f"the broker got {message_id} {body!r}")
        say(f"ok: the relay published {message_id} to the broker")
        wait_for("the message gone from the queue",
                 lambda: psql("SELECT queue_length FROM pgmq.metrics('pkg_outbox')") == "0", 20, proc, log)
        say("ok: ... and deleted it from the queue after the confirm")
        stop("pgmq-relay", proc, log)
        conn.close()
    finally:
        broker.close()


def console():
    port = free_port()
    defaults = os.path.join(ROOT, "etc/default/pgmq-console")
    with open(defaults) as f:
        text = f.read()
    # The administrator's edit: another port (8432 may be taken on this machine).
    text, edits = re.subn(r'^PGMQ_CONSOLE_OPTIONS=.*$', f'PGMQ_CONSOLE_OPTIONS="--listen 127.0.0.1:{port}"', text,
                          flags=re.M)
    if edits != 1:
        fail("/etc/default/pgmq-console has no PGMQ_CONSOLE_OPTIONS line")
    with open(defaults, "w") as f:
        f.write(text)
    psql("DO $$BEGIN CREATE ROLE pgmq_console LOGIN IN ROLE pg_monitor; "
         "EXCEPTION WHEN duplicate_object THEN NULL; END$$")

    proc, log = start("pgmq-console.service")
    wait_for("the console's start", lambda: f"serving http://127.0.0.1:{port}/" in output(log), 20, proc, log)

    def get(path):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return json.load(r)
    session = get("/api/session")
    if session.get("role") != "pgmq_console" or session.get("database") != "postgres" or session.get("actions"):
        fail(f"/api/session: {session}")
    say("ok: the console serves /api/session as role pgmq_console on database postgres, read-only")
    names = [q.get("name") for q in get("/api/overview").get("queues", [])]
    if "pkg_outbox" not in names:
        fail(f"/api/overview lists {names}")
    say(f"ok: ... and its overview lists the queues ({len(names)})")
    stop("pgmq-console", proc, log)


with tempfile.TemporaryDirectory(prefix="pgmq-package-services.") as tmp:
    relay(tmp)
    console()
say("passed")
