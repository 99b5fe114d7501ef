#!/usr/bin/python3
"""bench/relay_bench.py: the measurement behind bench/relay.sh (see there)."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import psycopg

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "test", "lib"))
from private_rabbitmq import Broker  # noqa: E402

DB = "pgmq_bench_relay"
QUEUE = "bench_relay"
PAYLOAD = '{"event": "order.created", "order_id": 123456789, "customer": "customer-000042", "amount": 99.95}'


def relay_binary():
    path = os.environ.get("PGMQ_RELAY_BIN", os.path.join(REPO, "build", "relay", "pgmq-relay"))
    if not os.access(path, os.X_OK):
        subprocess.run(["cmake", "-S", REPO, "-B", os.path.join(REPO, "build")], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", os.path.join(REPO, "build"), "--target", "pgmq-relay", "-j2"], check=True,
                       stdout=subprocess.DEVNULL)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny: 200 messages, one round")
    args = parser.parse_args()
    if args.smoke:
        args.messages, args.rounds = 200, 1
    binary = relay_binary()
    tmp = tempfile.mkdtemp(prefix="pgmq-relay-bench-")
    broker = Broker(tmp)
    try:
        broker.start()
        conn = broker.connect()
        conn.channel().queue_declare(QUEUE, durable=True)
        conn.close()
        with psycopg.connect(dbname="postgres", autocommit=True) as pg:
            pg.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
            pg.execute(f"CREATE DATABASE {DB}")
        with psycopg.connect(dbname=DB, autocommit=True) as pg:
            pg.execute("CREATE EXTENSION pgmq")
            pg.execute("SELECT pgmq.create(%s)", (QUEUE,))
            for batch in (1, 100):
                # Batch size 1 pays a round trip to both servers per message:
                # a fifth of the messages keeps its rounds as long.
                n = args.messages if batch > 1 else max(args.messages // 5, 1)
                rates = []
                for _ in range(args.rounds):
                    pg.execute(f"TRUNCATE pgmq.q_{QUEUE}")
                    pg.execute("SELECT pgmq.send_batch(%s, array_fill(%s::jsonb, ARRAY[%s]))", (QUEUE, PAYLOAD, n))
                    pg.execute(f"VACUUM ANALYZE pgmq.q_{QUEUE}")
                    amqp = broker.connect()
                    amqp.channel().queue_purge(QUEUE)
                    amqp.close()
                    t0 = time.monotonic()
                    r = subprocess.run([binary, "--postgres", f"dbname={DB}",
                                        "--amqp-url", f"amqp://127.0.0.1:{broker.port}/", "--queue", QUEUE,
                                        "--batch-size", str(batch), "--poll", "0", "--drain",
                                        "--report-interval", "0"], capture_output=True, text=True)
                    seconds = time.monotonic() - t0
                    if r.returncode != 0:
                        print(r.stderr, file=sys.stderr)
                        return 1
                    left = pg.execute(f"SELECT count(*) FROM pgmq.q_{QUEUE}").fetchone()[0]
                    amqp = broker.connect()
                    arrived = amqp.channel().queue_declare(QUEUE, durable=True, passive=True).method.message_count
                    amqp.close()
                    if left != 0 or arrived != n:
                        print(f"round incomplete: {left} left in the queue, {arrived} of {n} at the broker",
                              file=sys.stderr)
                        return 1
                    rates.append(n / seconds)
                print(f"relay_batch{batch} {statistics.median(rates):.0f} msgs/s", flush=True)
        return 0
    finally:
        broker.close()
        try:
            with psycopg.connect(dbname="postgres", autocommit=True) as pg:
                pg.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        except Exception:
            pass
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
