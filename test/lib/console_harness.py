"""test/lib/console_harness.py: what the console's API tests share.

Checks counts failures and prints one line per check; Console runs
pgmq-console against a database, with its password in a file (never on the
command line), and talks to its JSON API as the page does.
"""
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("PGMQ_CONSOLE_BIN", os.path.join(REPO, "build/console/pgmq-console"))
PASSWORD = "s3cret-console-pw-4711"


class Checks:
    def __init__(self, tag):
        self.tag = tag
        self.failures = []

    def __call__(self, ok, what):
        print(f"{self.tag} {'ok' if ok else 'FAILED'}: {what}", flush=True)
        if not ok:
            self.failures.append(what)
        return ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def password_file():
    """A file holding PASSWORD, as --password-file reads it."""
    fd, path = tempfile.mkstemp(prefix="pgmq-console-pw-")
    with os.fdopen(fd, "w") as f:
        f.write(PASSWORD + "\n")
    return path


class Console:
    """pgmq-console for dbname as user; extra: more options."""

    def __init__(self, dbname, user, actions, sample_seconds=1, extra=(), env=None):
        self.port = free_port()
        self.password_path = password_file()
        conninfo = f"dbname={dbname} user={user}"
        args = [BIN, "--listen", f"127.0.0.1:{self.port}", "--sample-seconds", str(sample_seconds),
                "--password-file", self.password_path, *extra, conninfo]
        if actions:
            args.insert(1, "--allow-actions")
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
        self.log = ""
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                self.session = self.get("/api/session")[1]
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
        raise RuntimeError("the console did not answer: " + self.stop())

    def cmdline(self):
        with open(f"/proc/{self.proc.pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        _, err = self.proc.communicate(timeout=10)
        self.log = err
        os.unlink(self.password_path)
        return err

    def request(self, path, method="GET", body=None, headers=None):
        hdrs = {"Host": f"127.0.0.1:{self.port}"}
        hdrs.update(headers or {})
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=body, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def get(self, path, headers=None):
        status, text = self.request(path, headers=headers)
        return status, json.loads(text)

    def act(self, queue, action, body=b"{}", headers=None):
        hdrs = {"Content-Type": "application/json", "X-Pgmq-Console-Token": self.session["csrf_token"]}
        hdrs.update(headers or {})
        status, text = self.request(f"/api/queues/{queue}/{action}", "POST", body, hdrs)
        return status, json.loads(text)


def run_console(dbname, user, *args, env=None, timeout=10):
    """pgmq-console expected to exit at once: (exit status, stderr)."""
    path = password_file()
    try:
        r = subprocess.run([BIN, "--listen", f"127.0.0.1:{free_port()}", "--password-file", path, *args,
                            f"dbname={dbname} user={user}"], capture_output=True, text=True, timeout=timeout, env=env)
        return r.returncode, r.stderr
    except subprocess.TimeoutExpired as e:
        return None, (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    finally:
        os.unlink(path)


def server_log(admin):
    data = admin.execute("SELECT current_setting('data_directory')").fetchone()[0]
    return os.path.join(os.path.dirname(data), "server.log")


def overview_statements(c, log):
    """An overview's status, queue count, statements logged and seconds."""
    c.get("/api/overview")  # every pool session made and warm
    start = os.path.getsize(log)
    started = time.time()
    status, overview = c.get("/api/overview")
    took = time.time() - started
    time.sleep(0.3)
    with open(log, encoding="utf-8", errors="replace") as f:
        f.seek(start)
        lines = [line for line in f if "LOG:  statement:" in line or "LOG:  execute" in line]
    return status, len(overview["queues"]), len(lines), took
