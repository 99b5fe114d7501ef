"""test/lib/tls_cluster.py: a throwaway PostgreSQL cluster that asks what a
managed service asks: TLS only (ssl = on, no plain TCP), a server certificate
for localhost from a CA made here (test/lib/relay_tls.py), a password
(scram-sha-256) and, for the role APP, a client certificate too
(clientcert=verify-full: its common name must be the role's). Listens on
127.0.0.1 at a port of its own; the superuser postgres connects through its
private socket. Runs the server of PG_MAJOR (default 15), as postgres.

    with TlsCluster(tmp) as c:
        c.admin(dbname)            # psycopg connection as postgres (socket)
        c.conninfo(host="localhost", sslrootcert=c.certs["ca"])  # the app's, no password
        c.env(...)                 # the same as PG* variables
"""
import os
import shutil
import socket
import subprocess

import psycopg

from relay_tls import make_certificates

APP = "tls_app"
APP_PASSWORD = "tls-app-pw-8c1f3e"
DB = "tls_db"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(*args):
    return subprocess.run(["runuser", "-u", "postgres", "--", *args], cwd="/", capture_output=True, text=True)


class TlsCluster:
    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "tls-cluster")
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "socket")
        self.bin = f"/usr/lib/postgresql/{os.environ.get('PG_MAJOR', '15')}/bin"
        self.port = _free_port()
        os.makedirs(self.sock)
        os.chmod(tmp, 0o755)
        shutil.chown(self.dir, "postgres", "postgres")
        shutil.chown(self.sock, "postgres", "postgres")
        self.certs = make_certificates(os.path.join(tmp, "tls-certs"), client_cn=APP)
        # libpq takes a client key only when no other user may read it.
        key = os.path.join(tmp, "tls-certs", "client-0600.key")
        shutil.copy(self.certs["client_key"], key)
        os.chmod(key, 0o600)
        self.certs["client_key_0600"] = key
        os.chmod(os.path.join(tmp, "tls-certs"), 0o755)
        self.started = False

    def start(self):
        r = _as_postgres(f"{self.bin}/initdb", "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--locale=C",
                         "-D", self.data)
        if r.returncode:
            raise RuntimeError("initdb: " + r.stdout + r.stderr)
        for name, source in (("server.crt", "server_cert"), ("server.key", "server_key"), ("ca.crt", "ca")):
            path = os.path.join(self.data, name)
            shutil.copy(self.certs[source], path)
            shutil.chown(path, "postgres", "postgres")
            os.chmod(path, 0o600)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"""
listen_addresses = '127.0.0.1'
port = {self.port}
unix_socket_directories = '{self.sock}'
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
ssl_ca_file = 'ca.crt'
password_encryption = 'scram-sha-256'
log_connections = on
""")
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write(f"""local all postgres trust
hostnossl all all 127.0.0.1/32 reject
hostssl all {APP} 127.0.0.1/32 scram-sha-256 clientcert=verify-full
hostssl all all 127.0.0.1/32 scram-sha-256
""")
        r = _as_postgres(f"{self.bin}/pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "server.log"), "-w",
                         "-t", "60", "start")
        if r.returncode:
            raise RuntimeError("pg_ctl start: " + r.stdout + r.stderr + self.server_log())
        self.started = True
        with self.admin("postgres") as conn:
            conn.execute(f"CREATE ROLE {APP} LOGIN PASSWORD '{APP_PASSWORD}'")
            conn.execute(f"CREATE DATABASE {DB} OWNER {APP}")
        return self

    def stop(self):
        if self.started:
            _as_postgres(f"{self.bin}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
            self.started = False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def server_log(self):
        try:
            with open(os.path.join(self.dir, "server.log")) as f:
                return f.read()
        except OSError:
            return ""

    def admin(self, dbname=DB):
        return psycopg.connect(host=self.sock, port=self.port, user="postgres", dbname=dbname, autocommit=True)

    def settings(self, host="localhost", sslrootcert=None, client_cert=True, key=None):
        """libpq's settings of the application role over TLS, no password."""
        out = {"host": host, "port": str(self.port), "dbname": DB, "user": APP, "sslmode": "verify-full",
               "sslrootcert": sslrootcert or self.certs["ca"]}
        if client_cert:
            out["sslcert"] = self.certs["client_cert"]
            out["sslkey"] = key or self.certs["client_key_0600"]
        return out

    def conninfo(self, **kw):
        return " ".join(f"{k}={v}" for k, v in self.settings(**kw).items())

    def env(self, **kw):
        names = {"host": "PGHOST", "port": "PGPORT", "dbname": "PGDATABASE", "user": "PGUSER", "sslmode": "PGSSLMODE",
                 "sslrootcert": "PGSSLROOTCERT", "sslcert": "PGSSLCERT", "sslkey": "PGSSLKEY"}
        return {names[k]: v for k, v in self.settings(**kw).items()}
