"""test/lib/relay_tls.py: a throwaway certificate authority for the TLS tests
(the relay's broker, PostgreSQL's server), made with the openssl command line.

    certs = make_certificates(dir)
    certs["ca"], certs["server_cert"], certs["server_key"], certs["client_cert"],
    certs["client_key"], certs["other_ca"]   # paths

The server certificate names DNS:localhost only (so that connecting to
127.0.0.1 fails host name verification); other_ca signed nothing here.
"""
import os
import subprocess


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _ca(cwd, name):
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
             "-keyout", f"{name}.key", "-out", f"{name}.pem", cwd=cwd)


def _signed(cwd, name, subject, extensions):
    with open(os.path.join(cwd, f"{name}.ext"), "w") as f:
        f.write(extensions)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", f"{name}.key",
             "-out", f"{name}.csr", cwd=cwd)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=cwd)


def make_certificates(directory, client_cn="pgmq-relay"):
    """client_cn: the client certificate's common name (PostgreSQL's
    clientcert=verify-full matches it against the user name)."""
    os.makedirs(directory, exist_ok=True)
    _ca(directory, "ca")
    _ca(directory, "other_ca")
    _signed(directory, "server", "/CN=localhost",
            "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n")
    _signed(directory, "client", f"/CN={client_cn}", "extendedKeyUsage=clientAuth\n")
    for name in os.listdir(directory):
        if name.endswith(".key"):
            os.chmod(os.path.join(directory, name), 0o644)  # the broker runs as this user; a test CA
    p = lambda name: os.path.join(directory, name)  # noqa: E731
    return {"ca": p("ca.pem"), "other_ca": p("other_ca.pem"), "server_cert": p("server.pem"),
            "server_key": p("server.key"), "client_cert": p("client.pem"), "client_key": p("client.key")}
