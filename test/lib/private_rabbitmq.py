"""test/lib/private_rabbitmq.py: a private rabbitmq-server for a test or a
benchmark (Debian's rabbitmq-server, run as the calling user, root here).

Everything is its own: node name, AMQP port, distribution port, epmd (started
here on a port of its own, so the machine's epmd and other brokers are never
touched), data and log directories under the directory given. stop() and
close() end exactly the processes started here, by pid and process group.

    broker = Broker(tmpdir)
    broker.start()          # seconds until it accepted an AMQP connection
    conn = broker.connect() # a pika BlockingConnection
    broker.stop(); broker.start()  # a restart keeps durable queues
    broker.close()          # the broker and its epmd
"""
import os
import signal
import socket
import subprocess
import time

import pika


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """A private rabbitmq-server: its own epmd, node, ports and directories."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.port = free_port()
        self.epmd_port = free_port()
        dist_port = free_port()
        for d in ("home", "mnesia", "log"):
            os.makedirs(os.path.join(tmp, d), exist_ok=True)
        self.env = dict(os.environ,
                        HOME=os.path.join(tmp, "home"),
                        ERL_EPMD_PORT=str(self.epmd_port),
                        RABBITMQ_NODENAME=f"relayit{self.port}@localhost",
                        RABBITMQ_NODE_IP_ADDRESS="127.0.0.1",
                        RABBITMQ_NODE_PORT=str(self.port),
                        RABBITMQ_DIST_PORT=str(dist_port),
                        RABBITMQ_MNESIA_BASE=os.path.join(tmp, "mnesia"),
                        RABBITMQ_LOG_BASE=os.path.join(tmp, "log"),
                        RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(tmp, "enabled_plugins"),
                        RABBITMQ_CONFIG_FILE=os.path.join(tmp, "rabbitmq"),
                        RABBITMQ_ADVANCED_CONFIG_FILE=os.path.join(tmp, "advanced.config"),
                        RABBITMQ_CONF_ENV_FILE=os.path.join(tmp, "rabbitmq-env.conf"))
        self.epmd = subprocess.Popen(["epmd", "-port", str(self.epmd_port)], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.proc = None
        self.log = open(os.path.join(tmp, "server.out"), "ab")

    def start(self, timeout=60):
        t0 = time.monotonic()
        # Its own session and process group: stop() signals exactly the
        # broker's processes (the script, beam.smp and its helpers).
        self.proc = subprocess.Popen(["/usr/lib/rabbitmq/bin/rabbitmq-server"], env=self.env, cwd=self.tmp,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"rabbitmq-server exited with {self.proc.returncode}; see {self.tmp}/server.out")
            try:
                self.connect().close()
                return time.monotonic() - t0
            except Exception:
                time.sleep(0.2)
        raise RuntimeError("rabbitmq-server did not accept connections within %d s" % timeout)

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

    def close(self):
        self.stop()
        self.epmd.terminate()
        self.epmd.wait()
        self.log.close()

    def connect(self):
        return pika.BlockingConnection(pika.ConnectionParameters(
            "127.0.0.1", self.port, connection_attempts=1, socket_timeout=2, blocked_connection_timeout=5))
