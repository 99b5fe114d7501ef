#!/usr/bin/python3
"""test/integration/relay_hostile.py: pgmq-relay against what production adds
to one broker: hostile senders, a broker alarm, slow /metrics clients, TLS.

One private rabbitmq-server (test/lib/private_rabbitmq.py) with a TLS listener
that wants a client certificate (a CA made here with openssl) and a
max_message_size of 1 MiB; the broker user's password reaches the relay only
through PGMQ_RELAY_AMQP_PASSWORD or a password file. The PostgreSQL cluster
of PGHOST/PGPORT/PGUSER, in a database of its own. The cases:

  senders: a message with a CC header, one over max_message_size, one whose
           x-pgmq-routing-key names a queue it may not pick, one with BCC,
           among ordinary ones: each refused one is moved to the dead-letter
           queue with the reason, the messages after them are delivered, the
           sender's queue gets nothing, an allowed routing key is honoured;
  headers: a message carrying every x-pgmq- header the docs name, an
           application's x-trace-id, a W3C traceparent and a lowercase cc
           arrives with each of them and its value (nested values as JSON
           text); x-pgmq-queue, -msg-id and -read-ct are the relay's, once
           each; CC and BCC are still refused and route nowhere;
  metrics: clients sending one byte every 1.5 s neither hold scrapes nor
           SIGTERM; the server cuts them;
  alarm:   under a memory alarm a publish gives up at the confirm timeout,
           the relay reports it and reconnects, SIGTERM exits promptly, and
           after the alarm everything arrives;
  bytes:   a batch stops at batch_max_bytes: the rows read beyond it are
           made visible again and come in the next batches;
  tls:     amqps with the CA and a client certificate relays; another CA,
           or a host name the certificate does not name, is refused;
  secret:  the password is in no log line and not in /metrics;
  upstream: against the stand-ins of upstream pgmq 1.11.0, 1.12.0 and
           1.13.1 (test/lib/upstream_install.py, ours), with poll_s 0 (a
           read, not read_with_poll, which upstream would return empty): the
           relay names the release, makes its dead-letter queue with
           pgmq.create, sets a CC header, a body over max_message_size and a
           routing key not granted aside there, and delivers the rest.

The relay binary is build/relay/pgmq-relay (PGMQ_RELAY_BIN overrides). Exit 0
is a pass.
"""
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from private_rabbitmq import Broker, free_port  # noqa: E402
from relay_harness import REPO, Checks, Database, Relay, drain, metric, relay_binary, write_config  # noqa: E402
from relay_tls import make_certificates  # noqa: E402
from upstream_install import RELEASES, describe, install  # noqa: E402

DB = "pgmq_it_relay_hostile"
MAX_MESSAGE = 1024 * 1024
check = Checks("relay-hostile")


def broker_conf(tls_port, certs):
    return "\n".join([
        f"listeners.ssl.default = 127.0.0.1:{tls_port}",
        f"ssl_options.cacertfile = {certs['ca']}",
        f"ssl_options.certfile = {certs['server_cert']}",
        f"ssl_options.keyfile = {certs['server_key']}",
        "ssl_options.verify = verify_peer",
        "ssl_options.fail_if_no_peer_cert = true",
        f"max_message_size = {MAX_MESSAGE}", ""])


def declare(broker, *queues):
    conn = broker.connect()
    ch = conn.channel()
    for q in queues:
        ch.queue_declare(q, durable=True)
    conn.close()


def case_senders(ctx):
    """Refused messages cost themselves only; a sender picks no route it was not given."""
    db, broker = ctx["db"], ctx["broker"]
    for q in ("hostile", "hostile_dead"):
        db.sql("SELECT pgmq.create(%s)", (q,))
    declare(broker, "hostile", "hostile_alt", "payments")
    special = {2: ({"n": 2}, {"x-pgmq-routing-key": "payments"}),
               5: ({"n": 5}, {"CC": "anything"}),
               12: ({"n": 12, "pad": "x" * (MAX_MESSAGE + 500000)}, None),
               25: ({"n": 25}, {"x-pgmq-routing-key": "hostile_alt"}),
               30: ({"n": 30}, {"BCC": ["payments"]})}
    ids = {}
    for n in range(1, 41):
        body, headers = special.get(n, ({"n": n}, {"n": n}))
        ids[n] = db.send("hostile", body, headers)
    config = write_config(os.path.join(ctx["tmp"], "senders.json"), {
        "postgres": f"dbname={DB}",
        "rabbitmq": {"url": f"amqp://relay@127.0.0.1:{broker.port}/", "confirm_timeout_ms": 2000},
        "queues": [{"name": "hostile", "dead_letter_queue": "hostile_dead", "routing_key_header": True,
                    "routing_keys": ["hostile_alt"]}],
        "batch_size": 50, "visibility_timeout_s": 5, "poll_s": 1, "report_interval_s": 0,
        "metrics_listen": f"127.0.0.1:{ctx['metrics_port']}", "backoff_initial_ms": 100, "backoff_max_ms": 1000})
    relay = Relay(ctx["binary"], config, os.path.join(ctx["tmp"], "senders.log"), env=ctx["env"])
    ctx["relays"].append(relay)
    relay.start()
    t0 = time.monotonic()
    check.wait_for("the queue emptied past the refused messages", lambda: db.count("hostile") == 0, 20)
    check.say(f"senders: queue empty after {time.monotonic() - t0:.1f} s")
    ordinary = set(range(1, 41)) - set(special)
    got = [m[1]["n"] for m in drain(broker, "hostile")]
    check("every ordinary message, also those after the refused ones, was delivered", set(got) == ordinary,
          f"missing {sorted(ordinary - set(got))}, unexpected {sorted(set(got) - ordinary)}")
    alt = [m[1]["n"] for m in drain(broker, "hostile_alt")]
    check("a routing key from the queue's routing_keys is honoured", alt == [25], alt)
    payments = drain(broker, "payments")
    check("a sender's own routing key lands nowhere: the broker queue it named got nothing", not payments,
          [m[1].get("n") for m in payments])
    dead = {row[0]["n"]: row[1] for row in db.sql("SELECT message, headers FROM pgmq.q_hostile_dead")}
    check("the refused messages are in the dead-letter queue", sorted(dead) == [2, 5, 12, 30], sorted(dead))
    reasons = {n: (h or {}).get("x-pgmq-relay-refused", "") for n, h in dead.items()}
    check("each dead letter says why", '"CC": RabbitMQ routes' in reasons.get(5, "")
          and "larger than configured max size" in reasons.get(12, "") and "payments" in reasons.get(2, "")
          and '"BCC": RabbitMQ routes' in reasons.get(30, ""), reasons)
    check("each dead letter names its source", all((dead[n] or {}).get("x-pgmq-relay-source") == f"hostile:{ids[n]}"
                                                   for n in dead), {n: (h or {}).get("x-pgmq-relay-source")
                                                                    for n, h in dead.items()})
    refused = metric(ctx["metrics_port"], "pgmq_relay_refused_total", "hostile")
    dead_lettered = metric(ctx["metrics_port"], "pgmq_relay_dead_lettered_total", "hostile")
    check("/metrics counts them", refused == 4 and dead_lettered == 4, f"refused {refused}, dead-lettered {dead_lettered}")
    return relay


def case_upstream(ctx, release):
    """Against upstream pgmq (its stand-in): the relay makes its dead-letter
    queue with pgmq.create, sets refused messages aside there with
    pgmq.send and delivers the rest."""
    db = Database(f"{DB}_up", install=lambda name: install(name, release))
    broker = ctx["broker"]
    try:
        db.sql("SELECT pgmq.create('up_q')")
        declare(broker, "up_q")
        special = {3: ({"n": 3}, {"CC": "anything"}), 5: ({"n": 5, "pad": "x" * (MAX_MESSAGE + 1000)}, None),
                   7: ({"n": 7}, {"x-pgmq-routing-key": "elsewhere"})}
        ids = {n: db.send("up_q", *special.get(n, ({"n": n}, {"n": n}))) for n in range(1, 11)}
        config = write_config(os.path.join(ctx["tmp"], f"up-{release}.json"), {
            "postgres": f"dbname={db.name}", "rabbitmq": {"url": f"amqp://relay@127.0.0.1:{broker.port}/"},
            "queues": [{"name": "up_q", "dead_letter_queue": "up_q_dead"}], "create_dead_letter_queues": True,
            "poll_s": 0, "report_interval_s": 0})
        rc, out = run_drain(ctx, config, 30)
        got = drain(broker, "up_q")
        arrived = {m[1]["n"] for m in got}
        # Those published before the broker closed the channel on the big one
        # come again (at least once), with the first copy's message-id.
        check(f"upstream {release}: the relay drained the queue, the ordinary messages arrived",
              rc == 0 and db.count("up_q") == 0 and arrived == {1, 2, 4, 6, 8, 9, 10}
              and all(m[0] == f"up_q:{ids[m[1]['n']]}" for m in got), f"exit {rc}, got {sorted(arrived)}")
        check(f"upstream {release}: its log names the release and the dead-letter queue it made",
              describe(release) in out and 'created its dead_letter_queue "up_q_dead" with pgmq.create' in out,
              [line for line in out.splitlines() if "offers" in line or "created" in line])
        dead = {row[0]["n"]: row[1] for row in db.sql("SELECT message, headers FROM pgmq.q_up_q_dead")}
        check(f"upstream {release}: the refused messages are set aside with their reason and source",
              sorted(dead) == [3, 5, 7] and all(h.get("x-pgmq-relay-source") == f"up_q:{ids[n]}"
                                                and h.get("x-pgmq-relay-refused") for n, h in dead.items()),
              {n: (h or {}).get("x-pgmq-relay-refused", "")[:60] for n, h in dead.items()})
    finally:
        Database.drop(db.name)


def documented_pgmq_headers():
    """Every x-pgmq- header name the user documentation mentions."""
    names = set()
    docs = os.path.join(REPO, "docs")
    for name in os.listdir(docs):
        if name.endswith(".md"):
            with open(os.path.join(docs, name)) as f:
                names.update(re.findall(r"x-pgmq-[a-z]+(?:-[a-z]+)*", f.read()))
    return names


def case_headers(ctx):
    """pgmq's headers and an application's pass unchanged; the relay's own win; CC and BCC are refused."""
    db, broker = ctx["db"], ctx["broker"]
    for q in ("headers_q", "headers_dead"):
        db.sql("SELECT pgmq.create(%s)", (q,))
    declare(broker, "headers_q", "headers_cc")
    failures = [{"at": "2026-01-01T00:00:00Z", "error": "timeout", "read_ct": 1},
                {"at": "2026-01-01T00:01:00Z", "error": "HTTP 503", "read_ct": 2}]
    passed = {
        "x-pgmq-deduplication-id": "order-7-created",
        "x-pgmq-priority": 7,
        "x-pgmq-group": "customer-7",
        "x-pgmq-moved-from": {"queue": "orders_in", "msg_id": 3},
        "x-pgmq-dead-letter": {"queue": "orders", "msg_id": 9, "read_ct": 5,
                               "enqueued_at": "2026-01-01T00:00:00+00:00", "moved_at": "2026-01-01T00:05:00+00:00"},
        "x-pgmq-failures": failures,
        "x-pgmq-routing-key": "headers_q",
        "x-pgmq-relay-refused": "an earlier refusal",
        "x-pgmq-relay-source": "orders:9",
        "x-trace-id": "4bf92f3577b34da6",
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "cc": ["headers_cc"],  # not CC: RabbitMQ would close the channel on a CC that is not an array
        "x-death": "retried by hand",
    }
    relays_own = {"x-pgmq-queue": "payments", "x-pgmq-msg-id": 1, "x-pgmq-read-ct": 0}
    documented = documented_pgmq_headers()
    for name in sorted(documented - set(passed) - set(relays_own)):
        passed[name] = f"value of {name}"  # a header documented later is covered too
    forged_case = {"X-PGMQ-QUEUE": "payments", "X-Pgmq-Msg-Id": 2}
    msg_id = db.send("headers_q", {"n": 1}, {**passed, **relays_own, **forged_case})
    cc_id = db.send("headers_q", {"n": 2}, {"CC": ["headers_cc"], "x-trace-id": "t2"})
    bcc_id = db.send("headers_q", {"n": 3}, {"BCC": ["headers_cc"]})
    config = write_config(os.path.join(ctx["tmp"], "headers.json"), {
        "postgres": f"dbname={DB}", "rabbitmq": {"url": f"amqp://relay@127.0.0.1:{broker.port}/"},
        "queues": [{"name": "headers_q", "dead_letter_queue": "headers_dead", "routing_key_header": True,
                    "routing_keys": ["headers_q"]}],
        "poll_s": 1, "report_interval_s": 0})
    rc, _ = run_drain(ctx, config, 30)
    check("the relay drained the queue", rc == 0 and db.count("headers_q") == 0, f"exit {rc}")
    got = drain(broker, "headers_q")
    check("one message arrived", [m[1] for m in got] == [{"n": 1}], [m[1] for m in got])
    headers = got[0][2] if got else {}

    def as_sent(name):
        # JSON objects and arrays arrive as JSON text.
        value = headers.get(name)
        return json.loads(value) if isinstance(passed[name], (dict, list)) and isinstance(value, str) else value

    wrong = {name: headers.get(name) for name in passed if as_sent(name) != passed[name]}
    check(f"each of {len(passed)} headers arrived with its value (the docs name {len(documented)} x-pgmq- headers)",
          not wrong, wrong)
    relay_values = {name: headers.get(name) for name in relays_own}
    check("x-pgmq-queue, x-pgmq-msg-id and x-pgmq-read-ct are the relay's",
          relay_values == {"x-pgmq-queue": "headers_q", "x-pgmq-msg-id": msg_id, "x-pgmq-read-ct": 1}, relay_values)
    forged = sorted(name for name in headers if name.lower() in relays_own and name not in relays_own)
    check("no other spelling of them reaches the broker", not forged, forged)
    check("the lowercase cc routed nowhere", not drain(broker, "headers_cc"))
    dead = {row[0]["n"]: row[1] for row in db.sql("SELECT message, headers FROM pgmq.q_headers_dead")}
    reasons = {n: h.get("x-pgmq-relay-refused", "") for n, h in dead.items()}
    check("CC and BCC are still refused, with the reason", sorted(dead) == [2, 3] and all(
        "sender-selected distribution" in r for r in reasons.values()), reasons)
    check("their dead letters name their source", {n: h.get("x-pgmq-relay-source") for n, h in dead.items()} ==
          {2: f"headers_q:{cc_id}", 3: f"headers_q:{bcc_id}"}, dead)


def slow_client(port, stop, result):
    """Sends a request one byte every 1.5 s; records when the server cut it."""
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            for byte in b"GET /metrics HTTP/1.1\r\nHost: relay\r\n\r\n":
                if stop.is_set():
                    break
                s.sendall(bytes([byte]))
                if stop.wait(1.5):
                    break
                s.setblocking(False)
                try:
                    if s.recv(1) == b"":
                        result.append(time.monotonic() - t0)
                        return
                except BlockingIOError:
                    pass
                finally:
                    s.setblocking(True)
    except OSError:
        result.append(time.monotonic() - t0)


def case_slow_metrics(ctx, relay):
    """Slow clients hold neither scrapes nor SIGTERM."""
    port = ctx["metrics_port"]
    stop, cut = threading.Event(), []
    clients = [threading.Thread(target=slow_client, args=(port, stop, cut), daemon=True) for _ in range(3)]
    for c in clients:
        c.start()
    time.sleep(0.5)
    scrapes = []
    for _ in range(3):
        t0 = time.monotonic()
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            scrapes.append(round(time.monotonic() - t0, 3))
            ctx["metrics_text"] += text
        except Exception as e:
            scrapes.append(repr(e))
    check("scrapes are answered while slow clients are connected", all(isinstance(s, float) for s in scrapes),
          scrapes)
    check.wait_for("the server cut every slow client", lambda: len(cut) == len(clients), 8, interval=0.2)
    check.say(f"metrics: slow clients cut after {sorted(round(c, 1) for c in cut)} s")
    # SIGTERM while slow clients are connected: the relay exits at once.
    more = [threading.Thread(target=slow_client, args=(port, stop, []), daemon=True) for _ in range(3)]
    for c in more:
        c.start()
    time.sleep(1)
    t0 = time.monotonic()
    rc = relay.signal(signal.SIGTERM, timeout=15)
    took = time.monotonic() - t0
    check("SIGTERM with slow /metrics clients connected exits 0 within 3 s", rc == 0 and took < 3,
          f"exit {rc} after {took:.1f} s")
    stop.set()


def case_alarm(ctx):
    """A memory alarm: bounded publishes, a report, a prompt SIGTERM, then everything."""
    db, broker = ctx["db"], ctx["broker"]
    db.sql("SELECT pgmq.create('alarm_q')")
    declare(broker, "alarm_q")
    config = write_config(os.path.join(ctx["tmp"], "alarm.json"), {
        "postgres": f"dbname={DB}",
        "rabbitmq": {"url": f"amqp://relay@127.0.0.1:{broker.port}/", "confirm_timeout_ms": 2000},
        "queues": ["alarm_q"], "batch_size": 40, "batch_max_bytes": 32 * 1024 * 1024, "visibility_timeout_s": 5,
        "poll_s": 1, "report_interval_s": 0, "metrics_listen": f"127.0.0.1:{ctx['metrics_port']}",
        "backoff_initial_ms": 100, "backoff_max_ms": 500})
    relay = Relay(ctx["binary"], config, os.path.join(ctx["tmp"], "alarm.log"), env=ctx["env"])
    ctx["relays"].append(relay)
    relay.start()
    time.sleep(1)
    broker.ctl("set_vm_memory_high_watermark", "absolute", "1")
    try:
        # 16 MB in one batch, more than the socket buffers on both sides hold
        # (Linux: 4 MB and 6 MB at most): the broker stops reading, and without
        # a limit the publish would wait forever.
        db.sql("SELECT pgmq.send('alarm_q', jsonb_build_object('n', g, 'pad', repeat('y', 400000))) "
               "FROM generate_series(1, 40) g")
        port = ctx["metrics_port"]
        check.wait_for("a publish under the alarm gave up and was reported",
                       lambda: (metric(port, "pgmq_relay_timeouts_total", "alarm_q", timeout=1) or 0) >= 1, 15,
                       interval=0.3)
        blocked = metric(port, "pgmq_relay_broker_blocked", "alarm_q", timeout=1)
        reported = [line for line in relay.text().splitlines() if "publish blocked until the confirm timeout" in line]
        check("the log says the publish was blocked, and why", bool(reported) and "low on memory" in reported[0],
              reported[:1])
        check("/metrics shows the broker blocking the relay", blocked == 1, blocked)
        time.sleep(1)
        t0 = time.monotonic()
        rc = relay.signal(signal.SIGTERM, timeout=20)
        took = time.monotonic() - t0
        check("SIGTERM under the alarm exits 0 within the confirm timeout and 2 s", rc == 0 and took < 4,
              f"exit {rc} after {took:.1f} s")
    finally:
        broker.ctl("set_vm_memory_high_watermark", "0.4")
    relay.start()
    check.wait_for("the queue drained after the alarm", lambda: db.count("alarm_q") == 0, 30, interval=0.3)
    relay.signal(signal.SIGTERM)
    got = {m[1]["n"] for m in drain(broker, "alarm_q")}
    check("after the alarm every message arrived", got == set(range(1, 41)), f"{len(got)} of 40")


def case_bytes(ctx):
    """batch_max_bytes bounds a batch: 3 of 300 kB fit in 1 MiB, the rest comes later."""
    db, broker = ctx["db"], ctx["broker"]
    db.sql("SELECT pgmq.create('bytes_q')")
    declare(broker, "bytes_q")
    db.sql("SELECT pgmq.send('bytes_q', jsonb_build_object('n', g, 'pad', repeat('z', 300000))) "
           "FROM generate_series(1, 12) g")
    config = write_config(os.path.join(ctx["tmp"], "bytes.json"), {
        "postgres": f"dbname={DB}", "rabbitmq": {"url": f"amqp://relay@127.0.0.1:{broker.port}/"},
        "queues": ["bytes_q"], "batch_size": 100, "batch_max_bytes": 1024 * 1024, "poll_s": 1,
        "report_interval_s": 0})
    rc, _ = run_drain(ctx, config, 30)
    read_ct = {m[1]["n"]: m[2].get("x-pgmq-read-ct") for m in drain(broker, "bytes_q")}
    # Each read takes 3 messages and makes the rest visible again, so the
    # n-th message is read ceil(n / 3) times before it is relayed.
    check("batches stop at batch_max_bytes, the rest comes in later batches",
          rc == 0 and read_ct == {n: (n + 2) // 3 for n in range(1, 13)}, f"exit {rc}, read counts {read_ct}")


def run_drain(ctx, config_path, seconds):
    """pgmq-relay --drain for at most seconds: (exit status or None, log)."""
    r = subprocess.Popen([ctx["binary"], "--config", config_path, "--drain"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=ctx["env"])
    try:
        out, _ = r.communicate(timeout=seconds)
        rc = r.returncode
    except subprocess.TimeoutExpired:
        r.kill()
        out, _ = r.communicate()
        rc = None
    ctx["logs"].append(out)
    return rc, out


def case_tls(ctx):
    """amqps with a verified broker and a client certificate."""
    db, broker, certs = ctx["db"], ctx["broker"], ctx["certs"]
    db.sql("SELECT pgmq.create('tls_q')")
    declare(broker, "tls_q")
    db.sql("SELECT pgmq.send('tls_q', jsonb_build_object('n', g)) FROM generate_series(1, 50) g")
    password_file = os.path.join(ctx["tmp"], "amqp-password")
    with open(password_file, "w") as f:
        f.write(ctx["password"] + "\n")

    def config(name, host, ca):
        return write_config(os.path.join(ctx["tmp"], name), {
            "postgres": f"dbname={DB}",
            "rabbitmq": {"url": f"amqps://relay@{host}:{ctx['tls_port']}/", "password_file": password_file,
                         "tls": {"ca_file": ca, "cert_file": certs["client_cert"], "key_file": certs["client_key"]},
                         "connect_timeout_ms": 2000},
            "queues": ["tls_q"], "poll_s": 1, "report_interval_s": 0, "backoff_initial_ms": 200,
            "backoff_max_ms": 500})

    rc, out = run_drain(ctx, config("tls-other-ca.json", "localhost", certs["other_ca"]), 3)
    check("a broker certificate from another CA is refused", rc is None and "verification failed" in out
          and db.count("tls_q") == 50, out.splitlines()[-1] if out else rc)
    rc, out = run_drain(ctx, config("tls-wrong-host.json", "127.0.0.1", certs["ca"]), 3)
    check("a host name the certificate does not name is refused", rc is None
          and "hostname verification failed" in out and db.count("tls_q") == 50,
          out.splitlines()[-1] if out else rc)
    env = dict(ctx["env"])
    env.pop("PGMQ_RELAY_AMQP_PASSWORD", None)  # this one reads the password file
    ctx_file = dict(ctx, env=env)
    rc, out = run_drain(ctx_file, config("tls.json", "localhost", certs["ca"]), 20)
    got = {m[1]["n"] for m in drain(broker, "tls_q")}
    check("amqps with the CA, a client certificate and the password from a file relays everything",
          rc == 0 and got == set(range(1, 51)) and ", TLS, confirm mode" in out, f"exit {rc}, {len(got)} of 50")


def main():
    tmp = tempfile.mkdtemp(prefix="pgmq-relay-hostile-")
    certs = make_certificates(os.path.join(tmp, "certs"))
    tls_port = free_port()
    broker = Broker(os.path.join(tmp, "broker"), conf=broker_conf(tls_port, certs))
    password = "pw-" + secrets.token_hex(12)
    ctx = {"tmp": tmp, "certs": certs, "tls_port": tls_port, "broker": broker, "password": password,
           "metrics_port": free_port(), "relays": [], "logs": [], "metrics_text": "",
           "env": dict(os.environ, PGMQ_RELAY_AMQP_PASSWORD=password)}
    try:
        ctx["binary"] = relay_binary()
        check.say(f"broker up after {broker.start():.1f} s (AMQP {broker.port}, TLS {tls_port})")
        broker.ctl("add_user", "relay", password)
        broker.ctl("set_permissions", "-p", "/", "relay", ".*", ".*", ".*")
        ctx["db"] = Database(DB)
        for name, case in (("senders", lambda: case_slow_metrics(ctx, case_senders(ctx))),
                           ("headers", lambda: case_headers(ctx)), ("alarm", lambda: case_alarm(ctx)),
                           ("bytes", lambda: case_bytes(ctx)),
                           ("tls", lambda: case_tls(ctx))) + tuple(
                (f"upstream {r}", lambda r=r: case_upstream(ctx, r)) for r in RELEASES):
            t0 = time.monotonic()
            try:
                case()
            except Exception as e:
                check(f"case {name} ran to its end", False, repr(e))
            check.say(f"case {name}: {time.monotonic() - t0:.1f} s")
        logs = "".join(r.text() for r in ctx["relays"]) + "".join(ctx["logs"])
        check("the broker password is in no log line and not in /metrics",
              password not in logs and password not in ctx["metrics_text"] and ctx["metrics_text"] != "")
    except Exception as e:
        check("the test ran to its end", False, repr(e))
    finally:
        for relay in ctx["relays"]:
            if relay.alive():
                relay.signal(signal.SIGKILL)
        if check.failures:
            for relay in ctx["relays"]:
                check.say(f"last lines of {relay.log_path}:\n" + relay.tail(25))
        broker.close()
        try:
            Database.drop(DB)
        except Exception as e:
            check.say(f"could not drop {DB}: {e}")
        if check.failures:
            check.say(f"kept {tmp} for inspection")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return check.exit_status()


if __name__ == "__main__":
    sys.exit(main())
