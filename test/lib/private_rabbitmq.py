"""test/lib/private_rabbitmq.py: a private rabbitmq-server for a test or a
benchmark (Debian's rabbitmq-server, run as the calling user, root here).

Everything is its own: node name, AMQP port, distribution port, epmd (started
here on a port of its own, so the machine's epmd and other brokers are never
touched), data and log directories under the directory given. stop() and
close() end exactly the processes started here, by pid and process group.

    broker = Broker(tmpdir)
    broker.start()          # seconds until it accepted an AMQP connection
    conn = broker.connect() # a pika BlockingConnection
    broker.ctl("list_queues")  # rabbitmqctl against this node
    broker.stop(); broker.start()  # a restart keeps durable queues
    broker.kill()           # SIGKILL, as a crash
    broker.close()          # the broker and its epmd

Broker(tmp, conf="...") adds rabbitmq.conf lines (a TLS listener,
max_message_size); Cluster(tmp, 3) is three nodes joined into one cluster.
Ports come from PGMQ_TEST_RABBITMQ_PORTS (default 25600-25699) so that
brokers of other work on the machine are never hit.
"""
import os
import random
import signal
import socket
import subprocess
import time

import pika

PORT_RANGE = tuple(int(p) for p in os.environ.get("PGMQ_TEST_RABBITMQ_PORTS", "25600-25699").split("-"))
_taken = set()


def free_port():
    """A port of the range nobody listens on (and not handed out before)."""
    low, high = PORT_RANGE
    ports = list(range(low, high + 1))
    random.shuffle(ports)
    for port in ports:
        if port in _taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _taken.add(port)
        return port
    raise RuntimeError(f"no free port in {low}-{high}")


class Broker:
    """A private rabbitmq-server: its own epmd, node, ports and directories.

    A cluster's nodes share one epmd (epmd_port) and one Erlang cookie (home)."""

    def __init__(self, tmp, conf="", name=None, epmd_port=None, home=None):
        self.tmp = tmp
        self.port = free_port()
        self.dist_port = free_port()
        self.own_epmd = epmd_port is None
        self.epmd_port = epmd_port or free_port()
        self.node = f"{name or 'relayit' + str(self.port)}@localhost"
        for d in ("home", "mnesia", "log"):
            os.makedirs(os.path.join(tmp, d), exist_ok=True)
        with open(os.path.join(tmp, "rabbitmq.conf"), "w") as f:
            f.write(conf)
        self.env = dict(os.environ,
                        HOME=home or os.path.join(tmp, "home"),
                        ERL_EPMD_PORT=str(self.epmd_port),
                        ERL_EPMD_ADDRESS="127.0.0.1",
                        RABBITMQ_NODENAME=self.node,
                        RABBITMQ_NODE_IP_ADDRESS="127.0.0.1",
                        RABBITMQ_NODE_PORT=str(self.port),
                        RABBITMQ_DIST_PORT=str(self.dist_port),
                        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}",
                        RABBITMQ_MNESIA_BASE=os.path.join(tmp, "mnesia"),
                        RABBITMQ_LOG_BASE=os.path.join(tmp, "log"),
                        RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(tmp, "enabled_plugins"),
                        RABBITMQ_CONFIG_FILE=os.path.join(tmp, "rabbitmq.conf"),
                        RABBITMQ_ADVANCED_CONFIG_FILE=os.path.join(tmp, "advanced.config"),
                        RABBITMQ_CONF_ENV_FILE=os.path.join(tmp, "rabbitmq-env.conf"))
        self.epmd = None
        if self.own_epmd:
            self.epmd = subprocess.Popen(["epmd", "-port", str(self.epmd_port), "-address", "127.0.0.1"],
                                         env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.proc = None
        self.log = open(os.path.join(tmp, "server.out"), "ab")

    def launch(self):
        # Its own session and process group: stop() signals exactly the
        # broker's processes (the script, beam.smp and its helpers).
        self.proc = subprocess.Popen(["/usr/lib/rabbitmq/bin/rabbitmq-server"], env=self.env, cwd=self.tmp,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, t0, timeout=60):
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"rabbitmq-server exited with {self.proc.returncode}; see {self.tmp}/server.out")
            try:
                self.connect().close()
                return time.monotonic() - t0
            except Exception:
                time.sleep(0.2)
        raise RuntimeError("rabbitmq-server did not accept connections within %d s" % timeout)

    def start(self, timeout=60):
        t0 = time.monotonic()
        self.launch()
        return self.wait_ready(t0, timeout)

    def stop(self):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        except ProcessLookupError:
            pass
        self.proc = None

    def kill(self):
        """SIGKILL of the node's processes: a crash, no goodbye to clients."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.proc = None

    def close(self):
        self.stop()
        if self.epmd is not None:
            self.epmd.terminate()
            self.epmd.wait()
        self.log.close()

    def ctl(self, *args, timeout=60):
        """rabbitmqctl against this node; returns its stdout, raises on failure."""
        r = subprocess.run(["/usr/lib/rabbitmq/bin/rabbitmqctl", "-n", self.node, *args], env=self.env,
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"rabbitmqctl {' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
        return r.stdout

    def connect(self, **kw):
        return pika.BlockingConnection(pika.ConnectionParameters(
            "127.0.0.1", self.port, connection_attempts=1, socket_timeout=2, blocked_connection_timeout=5, **kw))


class Cluster:
    """Nodes joined into one RabbitMQ cluster on this machine: one epmd and one
    Erlang cookie for all, each node its own ports and directories."""

    def __init__(self, tmp, size=3):
        self.tmp = tmp
        self.epmd_port = free_port()
        home = os.path.join(tmp, "home")
        os.makedirs(home, exist_ok=True)
        with open(os.path.join(home, ".erlang.cookie"), "w") as f:
            f.write("pgmqrelaycluster%08d" % random.randrange(10 ** 8))
        os.chmod(os.path.join(home, ".erlang.cookie"), 0o400)
        self.epmd = subprocess.Popen(["epmd", "-port", str(self.epmd_port), "-address", "127.0.0.1"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.2)
        self.nodes = []
        for i in range(size):
            d = os.path.join(tmp, "node%d" % i)
            os.makedirs(d, exist_ok=True)
            self.nodes.append(Broker(d, name="relayc%d_%d" % (i, self.epmd_port), epmd_port=self.epmd_port,
                                     home=home))

    def start(self):
        """Starts every node (at once), then joins the others to the first."""
        t0 = time.monotonic()
        for node in self.nodes:
            node.launch()
        for node in self.nodes:
            node.wait_ready(t0, timeout=120)
        first = self.nodes[0]
        for node in self.nodes[1:]:
            node.ctl("stop_app")
            node.ctl("join_cluster", first.node)
            node.ctl("start_app")
        return time.monotonic() - t0

    def close(self):
        for node in self.nodes:
            node.close()
        self.epmd.terminate()
        self.epmd.wait()
