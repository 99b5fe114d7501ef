"""test/lib/relay_harness.py: what the relay's integration tests share.

check() counts failures; Relay runs pgmq-relay with a configuration file and
a log; Database is a throwaway PostgreSQL database with pgmq (from
PGHOST/PGPORT/PGUSER); metric() reads one sample from /metrics; drain() takes
everything a broker queue holds.
"""
import json
import os
import re
import subprocess
import time
import urllib.request

import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Checks:
    def __init__(self, tag):
        self.tag = tag
        self.failures = 0

    def __call__(self, what, ok, detail=""):
        print(f"[{self.tag}] {'ok' if ok else 'FAIL'}: {what}{' (' + str(detail) + ')' if detail != '' else ''}",
              flush=True)
        if not ok:
            self.failures += 1
        return ok

    def say(self, text):
        print(f"[{self.tag}] {text}", flush=True)

    def wait_for(self, what, predicate, timeout, interval=0.05):
        """Polls predicate; a check that fails when it stays false."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(interval)
        return self(f"{what} within {timeout} s", False)

    def exit_status(self):
        self.say("passed" if self.failures == 0 else f"{self.failures} check(s) failed")
        return 0 if self.failures == 0 else 1


def relay_binary():
    """build/relay/pgmq-relay (PGMQ_RELAY_BIN overrides), built when missing."""
    path = os.environ.get("PGMQ_RELAY_BIN", os.path.join(REPO, "build", "relay", "pgmq-relay"))
    if not os.access(path, os.X_OK):
        print("building pgmq-relay with cmake into build/", flush=True)
        subprocess.run(["cmake", "-S", REPO, "-B", os.path.join(REPO, "build")], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", os.path.join(REPO, "build"), "--target", "pgmq-relay", "-j2"],
                       check=True, stdout=subprocess.DEVNULL)
    return path


class Relay:
    """One pgmq-relay process at a time, appending to one log file."""

    def __init__(self, binary, config_path, log_path, env=None, args=()):
        self.binary, self.config_path, self.log_path = binary, config_path, log_path
        self.env = env
        self.args = list(args)
        self.proc = None
        self.log = None
        self.starts = 0

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([self.binary, "--config", self.config_path, *self.args], stdout=self.log,
                                     stderr=subprocess.STDOUT, env=self.env)
        self.starts += 1

    def signal(self, sig, timeout=30):
        """Sends sig and waits; returns the exit status, or a string when it
        did not exit within timeout (then it is killed)."""
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = f"no exit within {timeout} s, killed ({self.proc.wait()})"
        self.log.close()
        self.proc = None
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def tail(self, lines=40):
        return "\n".join(self.text().splitlines()[-lines:])


def write_config(path, config):
    with open(path, "w") as f:
        json.dump(config, f)
    return path


class Database:
    """A database of its own on the test server, with pgmq."""

    def __init__(self, name, install=None):
        """install(name) puts pgmq in (upstream's stand-in, say); default:
        CREATE EXTENSION pgmq, this extension."""
        self.name = name
        with psycopg.connect(dbname="postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
        if install:
            install(name)
        else:
            self.sql("CREATE EXTENSION pgmq")

    @staticmethod
    def drop(name):
        with psycopg.connect(dbname="postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def sql(self, query, args=()):
        with psycopg.connect(dbname=self.name, autocommit=True) as conn:
            cur = conn.execute(query, args)
            return cur.fetchall() if cur.description else []

    def count(self, queue):
        return self.sql(f"SELECT count(*) FROM pgmq.q_{queue}")[0][0]

    def send(self, queue, message, headers=None):
        if headers is None:
            return self.sql("SELECT pgmq.send(%s, %s::jsonb)", (queue, json.dumps(message)))[0][0]
        return self.sql("SELECT pgmq.send(%s, %s::jsonb, %s::jsonb)",
                        (queue, json.dumps(message), json.dumps(headers)))[0][0]


def metric(port, name, queue, timeout=5):
    """One sample of /metrics, or None when missing or unreachable."""
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout).read().decode()
    except Exception:
        return None
    for line in text.splitlines():
        if line.startswith(f'{name}{{queue="{queue}"}} '):
            return float(line.split()[-1])
    return None


def drain(broker, queue):
    """Everything a broker queue holds: (message_id, body, headers, delivery_mode)."""
    conn = broker.connect()
    ch = conn.channel()
    out = []
    while True:
        method, props, body = ch.basic_get(queue, auto_ack=True)
        if method is None:
            break
        out.append((props.message_id, json.loads(body), props.headers or {}, props.delivery_mode))
    conn.close()
    return out


LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARNING|ERROR) ")


def stray_log_lines(text):
    """Lines of a relay log that are not an event of their own (a folded
    libpq error leaves none)."""
    return [line for line in text.splitlines() if line and not LOG_LINE.match(line)]

