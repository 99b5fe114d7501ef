#!/usr/bin/python3
"""test/integration/relay_broker_setup.py: the broker-side setup of
docs/relay.md ("Prepare the broker"), run as the page shows it, then the
relay against what it made.

Starts a private rabbitmq-server (test/lib/private_rabbitmq.py: its own
node, ports, epmd and directories, stopped by pid at the end) and runs the
page's sh block that follows <!-- run by test/integration/relay_broker_setup.py -->
with bash, unchanged but for one thing: /etc/pgmq-relay/ becomes a
directory of the test's. rabbitmqctl and rabbitmq-plugins reach the private
node through the environment (RABBITMQ_NODENAME, ERL_EPMD_PORT, the Erlang
cookie in HOME), rabbitmqadmin through ~/.rabbitmqadmin.conf in that HOME
(the management listener's port, user guest).

Then, with the PostgreSQL cluster of PGHOST/PGPORT/PGUSER:
  - the relay, with the page's exchange and routing key and the password
    file the block made, carries three messages of order_events to the
    broker queue orders, and the pgmq queue ends empty;
  - with a routing key that no binding matches (invoices.created) the
    message is returned: it stays in the pgmq queue, read again and again,
    and the relay logs it as unroutable, as the page says;
  - the relay's broker user may publish but not consume: a basic.get on
    orders as relay is refused (ACCESS_REFUSED).

The relay binary is build/relay/pgmq-relay (PGMQ_RELAY_BIN overrides; built
with cmake when missing). Exit 0 is a pass. About 25 s, most of it the
broker's start and the management plugin's.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pika
import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "test", "lib"))
from private_rabbitmq import Broker, free_port  # noqa: E402
from relay_harness import relay_binary  # noqa: E402

DB = f"pgmq_it_relay_setup_{os.getpid()}"
MARKER = "<!-- run by test/integration/relay_broker_setup.py -->"

failures = 0


def check(what, ok, detail=""):
    global failures
    if ok and len(str(detail)) > 100:
        detail = ""  # the long ones (logs, listings) only to explain a failure
    print(f"[relay_broker_setup] {'ok' if ok else 'FAIL'}: {what}" + (f" ({detail})" if detail != "" else ""),
          flush=True)
    if not ok:
        failures += 1


def page_block():
    """The sh block right after the marker in docs/relay.md."""
    lines = open(os.path.join(REPO, "docs", "relay.md"), encoding="utf-8").read().split("\n")
    start = lines.index(MARKER)
    if lines[start + 1].strip() != "```sh":
        raise SystemExit(f"docs/relay.md: no ```sh block right after {MARKER}")
    end = lines.index("```", start + 2)
    return "\n".join(lines[start + 2:end]) + "\n"


def relay(binary, broker, etc, routing_key, seconds=None):
    """Runs the relay on order_events; with seconds, stops it by SIGTERM
    after that long (a returned message never drains), else with --drain."""
    args = [binary, "--postgres", f"dbname={DB}", "--amqp-url", f"amqp://relay@127.0.0.1:{broker.port}/",
            "--amqp-password-file", os.path.join(etc, "amqp-password"),
            "--queue", "order_events", "--exchange", "events", "--routing-key", routing_key,
            "--vt", "2", "--confirm-timeout", "1000", "--poll", "1", "--report-interval", "0"]
    if seconds is None:
        return subprocess.run(args + ["--drain"], capture_output=True, text=True, timeout=60)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(seconds)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    return subprocess.CompletedProcess(args, proc.returncode, out, "")


def main():
    block = page_block()
    binary = relay_binary()
    tmp = tempfile.mkdtemp(prefix="pgmq-relay-setup-test.")
    mgmt_port = free_port()
    broker = Broker(os.path.join(tmp, "broker"),
                    conf=f"management.tcp.port = {mgmt_port}\nmanagement.tcp.ip = 127.0.0.1\n")
    with psycopg.connect(dbname="postgres", autocommit=True) as c:
        c.execute(f"CREATE DATABASE {DB}")
    try:
        with psycopg.connect(dbname=DB, autocommit=True) as c:
            c.execute("CREATE EXTENSION pgmq")
            c.execute("SELECT pgmq.create('order_events')")
        print(f"[relay_broker_setup] broker started in {broker.start():.1f} s", flush=True)

        # The page's commands, by name, against the private node.
        bindir = os.path.join(tmp, "bin")
        os.makedirs(bindir)
        for tool in ("rabbitmqctl", "rabbitmq-plugins"):
            # Debian's /usr/sbin wrappers switch to user rabbitmq and lose
            # the environment; the scripts they run take it.
            with open(os.path.join(bindir, tool), "w") as f:
                f.write(f'#!/bin/sh\nexec /usr/lib/rabbitmq/bin/{tool} "$@"\n')
            os.chmod(os.path.join(bindir, tool), 0o755)
        env = dict(broker.env, PATH=bindir + ":" + os.environ["PATH"])
        with open(os.path.join(env["HOME"], ".rabbitmqadmin.conf"), "w") as f:
            f.write(f"[default]\nhostname = 127.0.0.1\nport = {mgmt_port}\nusername = guest\npassword = guest\n")
        etc = os.path.join(tmp, "etc-pgmq-relay")
        script = block.replace("/etc/pgmq-relay", etc)
        t0 = time.monotonic()
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env, capture_output=True, text=True,
                           timeout=180)
        check("the page's broker setup runs", r.returncode == 0,
              f"{time.monotonic() - t0:.1f} s" if r.returncode == 0 else (r.stdout + r.stderr)[-3000:])
        if r.returncode != 0:
            return
        mode = os.stat(os.path.join(etc, "amqp-password")).st_mode & 0o777
        check("the password file is readable by its owner only", mode == 0o600, oct(mode))
        bindings = broker.ctl("list_bindings", "source_name", "destination_name", "routing_key")
        check("exchange events is bound to queue orders by orders.#",
              re.search(r"^events\torders\torders\.#$", bindings, re.M) is not None, bindings)

        with psycopg.connect(dbname=DB, autocommit=True) as c:
            for i in range(3):
                c.execute("SELECT pgmq.send('order_events', %s::jsonb)", (f'{{"order_id": {i}}}',))
        r = relay(binary, broker, etc, "orders.created")
        with broker.connect() as conn:
            ch = conn.channel()
            got = []
            while True:
                method, props, body = ch.basic_get("orders", auto_ack=True)
                if method is None:
                    break
                got.append((method.routing_key, body.decode()))
        with psycopg.connect(dbname=DB) as c:
            left = c.execute("SELECT count(*) FROM pgmq.q_order_events").fetchone()[0]
        check("the relay, as user relay, carries the messages to queue orders through the binding",
              r.returncode == 0 and left == 0
              and sorted(got) == [("orders.created", f'{{"order_id": {i}}}') for i in range(3)],
              (r.returncode, left, got, r.stderr[-1500:]))

        with psycopg.connect(dbname=DB, autocommit=True) as c:
            mid = c.execute("SELECT pgmq.send('order_events', '{\"invoice\": 1}')").fetchone()[0]
        r = relay(binary, broker, etc, "invoices.created", seconds=5)
        with psycopg.connect(dbname=DB) as c:
            row = c.execute("SELECT read_ct FROM pgmq.q_order_events WHERE msg_id = %s", (mid,)).fetchone()
        check("without a matching binding the message is returned, stays in the queue and is tried again",
              row is not None and row[0] >= 2 and "unroutable" in r.stdout,
              (row, r.returncode, r.stdout[-1500:]))

        password = open(os.path.join(etc, "amqp-password")).read().strip()
        refused = ""
        try:
            conn = pika.BlockingConnection(pika.ConnectionParameters(
                "127.0.0.1", broker.port, credentials=pika.PlainCredentials("relay", password),
                connection_attempts=1, socket_timeout=5))
            try:
                conn.channel().basic_get("orders")
            except pika.exceptions.ChannelClosedByBroker as e:
                refused = str(e)
            finally:
                if conn.is_open:
                    conn.close()
        except pika.exceptions.AMQPError as e:
            refused = f"login failed: {e!r}"
        check("user relay may not consume", "ACCESS_REFUSED" in refused, refused)
    finally:
        broker.close()
        with psycopg.connect(dbname="postgres", autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
    print("[relay_broker_setup] PASS" if failures == 0 else f"[relay_broker_setup] {failures} check(s) failed",
          flush=True)
    sys.exit(1 if failures else 0)
