#!/usr/bin/python3
"""test/integration/program_images.py: the container images of pgmq-relay and
pgmq-console (docker/programs.Dockerfile), built with podman from this
checkout's files and started next to a database as a managed service runs
it: TLS only, a CA file, a client certificate, a password (the cluster of
test/lib/tls_cluster.py with upstream pgmq 1.13.1's stand-in as plain SQL,
ours, not upstream's code).

  - each image: built (the base is docker.io/library/debian:bookworm-slim,
    made by docker/base-image.sh as the extension's image test makes its
    own), its USER is not root, it keeps its HEALTHCHECK, it holds no
    compiler, every library the program needs is there; its size printed;
  - the relay's image, started as `podman run` would (test/lib/container_root.py:
    podman create, mount, chroot as its USER with its ENV), its configuration,
    certificates and password mounted, relays a queue to a private broker;
    the console's, configured by PG* and PGMQ_CONSOLE_* variables with a
    mounted password file, serves the queue and names the release;
  - both HEALTHCHECK commands pass, and fail once the database is gone;
  - the password is on neither's command line nor in their logs; both exit
    0 on their STOPSIGNAL.

Prints how long the base, each build and the checks took. Needs root,
podman, debootstrap (docker/base-image.sh installs nothing: apt-get install
podman debootstrap) and Debian's archive. Exit 0 is a pass.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from console_harness import free_port  # noqa: E402
from container_root import ContainerRoot, inspect  # noqa: E402
from private_rabbitmq import Broker  # noqa: E402
from relay_harness import REPO, Checks, drain  # noqa: E402
from tls_cluster import APP, APP_PASSWORD, DB, TlsCluster  # noqa: E402
from upstream_install import install  # noqa: E402

RELEASE = "1.13.1"
UID = 10001  # the images' user, pgmq
check = Checks("program-images")
timings = {}


def timed(name, fn):
    t0 = time.monotonic()
    try:
        return fn()
    finally:
        timings[name] = time.monotonic() - t0


def build(context, target, tmp):
    image = f"localhost/pgmq-{target}:test"
    r = subprocess.run(["podman", "build", "--isolation", "chroot", "--pull=never", "--format", "docker",
                        "-f", os.path.join(context, "docker/programs.Dockerfile"), "--target", target, "-t", image,
                        context], capture_output=True, text=True)
    with open(os.path.join(tmp, f"build-{target}.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    if not check(f"the {target} image builds", r.returncode == 0, "" if r.returncode == 0 else (r.stdout + r.stderr)[-1500:]):
        raise RuntimeError(f"podman build --target {target} failed")
    return image


def image_checks(image, target, binary):
    config = inspect(image)
    user = config.get("User") or ""
    check(f"{target}: runs as an unprivileged user", user not in ("", "root", "0") and not user.startswith("0:"), user)
    test = config["Healthcheck"].get("Test") or []
    check(f"{target}: keeps its HEALTHCHECK", test[:1] == ["CMD"] and len(test) > 1, test)
    c = ContainerRoot(image, f"pgmq-{target}-probe-{os.getpid()}")
    try:
        check(f"{target}: no compiler or package build tools in it",
              not any(os.path.exists(c.root + p) for p in ("/usr/bin/g++", "/usr/bin/cmake", "/usr/include/libpq-fe.h")))
        r = subprocess.run(["chroot", c.root, "ldd", binary], capture_output=True, text=True)
        missing = [line.strip() for line in r.stdout.splitlines() if "not found" in line]
        check(f"{target}: every library {binary} needs is in the image",
              r.returncode == 0 and not missing, missing or r.stderr or f"{len(r.stdout.splitlines())} libraries")
        uid = (c.uid, c.user)
    finally:
        c.close()
    size = config["Size"] / 1e6
    check.say(f"{target}: {size:.0f} MB, user {uid[1]} (uid {uid[0]}), entrypoint {config.get('Entrypoint')}, "
              f"cmd {config.get('Cmd')}, health check {test}")
    check(f"{target}: under 200 MB (the Debian base, the program and its libraries)", size < 200, f"{size:.0f} MB")


def owned_files(directory, files):
    """Files the images' user reads, as a deployment would mount them."""
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o755)
    for name, source in files.items():
        path = os.path.join(directory, name)
        if isinstance(source, bytes):
            with open(path, "wb") as f:
                f.write(source)
        else:
            shutil.copy(source, path)
        os.chown(path, UID, UID)
        os.chmod(path, 0o600)


def wait_for(what, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.3)
    return check(f"{what} within {timeout} s", False)


def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")


def run_images(tmp, relay_image, console_image, cluster, broker):
    certs = cluster.certs
    conf = os.path.join(tmp, "relay-conf")
    secrets = os.path.join(tmp, "secrets")
    owned_files(secrets, {"pg-password": (APP_PASSWORD + "\n").encode()})
    settings = cluster.settings(sslrootcert="/etc/pgmq/ca.pem")
    settings.update(sslcert="/etc/pgmq/client.pem", sslkey="/etc/pgmq/client.key")
    relay_json = {"postgres": " ".join(f"{k}={v}" for k, v in settings.items()),
                  "rabbitmq": {"url": f"amqp://guest:guest@127.0.0.1:{broker.port}/"},
                  "queues": ["img_q"], "poll_s": 1, "report_interval_s": 0}
    owned_files(conf, {"relay.json": json.dumps(relay_json).encode(), "ca.pem": certs["ca"],
                       "client.pem": certs["client_cert"], "client.key": certs["client_key"]})
    relay_port, console_port = free_port(), free_port()
    relay = ContainerRoot(relay_image, f"pgmq-relay-test-{os.getpid()}")
    console = ContainerRoot(console_image, f"pgmq-console-test-{os.getpid()}")
    try:
        # podman run -v relay-conf:/etc/pgmq-relay:ro -v relay-conf:/etc/pgmq:ro -v secrets:/run/secrets:ro
        #   -e PGMQ_RELAY_POSTGRES_PASSWORD_FILE=... -p 127.0.0.1:PORT:9464 pgmq-relay
        relay.bind(conf, "/etc/pgmq-relay")
        relay.bind(conf, "/etc/pgmq")
        relay.bind(secrets, "/run/secrets")
        relay.start({"PGMQ_RELAY_POSTGRES_PASSWORD_FILE": "/run/secrets/pg-password",
                     "PGMQ_RELAY_METRICS_LISTEN": f"127.0.0.1:{relay_port}"}, os.path.join(tmp, "relay.log"))
        console.bind(conf, "/etc/pgmq")
        console.bind(secrets, "/run/secrets")
        env = {f"PG{k.upper()}": v for k, v in settings.items() if k in ("host", "port", "user")}
        env.update(PGDATABASE=DB, PGSSLMODE="verify-full", PGSSLROOTCERT="/etc/pgmq/ca.pem",
                   PGSSLCERT="/etc/pgmq/client.pem", PGSSLKEY="/etc/pgmq/client.key",
                   PGMQ_CONSOLE_PASSWORD_FILE="/run/secrets/pg-password",
                   PGMQ_CONSOLE_LISTEN=f"127.0.0.1:{console_port}")
        console.start(env, os.path.join(tmp, "console.log"))

        got = []
        check("the relay's container relays the queue over TLS to the broker", wait_for(
            "the queue relayed", lambda: got.extend(drain(broker, "img_q")) or len(got) >= 20, 30)
            and {m[1]["n"] for m in got} == set(range(1, 21)), f"{len(got)} of 20")
        session = {}
        wait_for("the console's container answers", lambda: session.update(json.loads(urllib.request.urlopen(
            f"http://127.0.0.1:{console_port}/api/session", timeout=3).read())) or True, 20)
        overview = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{console_port}/api/overview", timeout=5).read())
        check("the console's container serves the queue and names the release",
              session.get("pgmq", {}).get("name") == "upstream pgmq 1.13" and session.get("role") == APP
              and [q["name"] for q in overview["queues"]] == ["img_q"], session.get("pgmq"))
        for name, c in (("relay", relay), ("console", console)):
            line = cmdline(c.proc.pid)
            check(f"{name}: the password is not on its command line", APP_PASSWORD not in line, line)
            status, out = c.health()
            check(f"{name}: its HEALTHCHECK passes", status == 0, out)
        cluster.stop()
        for name, c in (("relay", relay), ("console", console)):
            check(f"{name}: its HEALTHCHECK fails once the database is gone",
                  wait_for(f"{name} unhealthy", lambda c=c: c.health()[0] not in (0, None), 15), c.health())
        for name, c in (("relay", relay), ("console", console)):
            status = c.stop()
            with open(os.path.join(tmp, f"{name}.log")) as f:
                log = f.read()
            check(f"{name}: exits 0 on its STOPSIGNAL", status == 0, status if status == 0 else f"{status}: {log[-300:]}")
            check(f"{name}: the password is not in its log", APP_PASSWORD not in log and log != "")
    finally:
        relay.close()
        console.close()


def main():
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="pgmq-program-images-")
    broker = Broker(os.path.join(tmp, "broker"))
    cluster = TlsCluster(tmp)
    try:
        r = timed("base image", lambda: subprocess.run([os.path.join(REPO, "docker/base-image.sh"), "bookworm"],
                                                       capture_output=True, text=True))
        if not check("the base image debian:bookworm-slim", r.returncode == 0, (r.stdout + r.stderr)[-800:]):
            return check.exit_status()
        # The context: the checkout's tracked and unignored files, as a clone has them.
        context = os.path.join(tmp, "context")
        os.makedirs(context)
        subprocess.run(f"git ls-files -z --cached --others --exclude-standard | tar --null -T - -c | tar -x -C {context}",
                       shell=True, cwd=REPO, check=True)
        relay_image = timed("relay build", lambda: build(context, "relay", tmp))
        console_image = timed("console build", lambda: build(context, "console", tmp))
        t_checks = time.monotonic()
        image_checks(relay_image, "relay", "/usr/bin/pgmq-relay")
        image_checks(console_image, "console", "/usr/bin/pgmq-console")
        cluster.start()
        install(DB, RELEASE, mode="sql", with_partman=False, host=cluster.sock, port=cluster.port, user="postgres")
        with cluster.admin() as admin:
            admin.execute(f"GRANT USAGE, CREATE ON SCHEMA pgmq TO {APP}")
            admin.execute(f"GRANT SELECT, INSERT ON pgmq.meta TO {APP}")
            admin.execute(f"SET ROLE {APP}")
            admin.execute("SELECT pgmq.create('img_q')")
            admin.execute("SELECT pgmq.send('img_q', jsonb_build_object('n', g)) FROM generate_series(1, 20) g")
        broker.start()
        conn = broker.connect()
        conn.channel().queue_declare("img_q", durable=True)
        conn.close()
        run_images(tmp, relay_image, console_image, cluster, broker)
        timings["checks"] = time.monotonic() - t_checks
    except Exception as e:
        check("the test ran to its end", False, repr(e))
    finally:
        broker.close()
        cluster.stop()
        if check.failures:
            check.say(f"kept {tmp} for inspection")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    check.say(", ".join(f"{k} {v:.0f} s" for k, v in timings.items()) + f"; {time.monotonic() - t0:.0f} s in all")
    return check.exit_status()


if __name__ == "__main__":
    sys.exit(main())
