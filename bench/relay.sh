#!/usr/bin/env bash
# bench/relay.sh: pgmq-relay's throughput, queue to broker with publisher
# confirms (persistent messages, durable queue, mandatory flag), at batch
# sizes 1 and 100 (docs/relay.md has the figures).
#
#   bench/relay.sh [--messages N] [--rounds N] [--smoke]
#
# Uses the PostgreSQL server of PGHOST/PGPORT/PGUSER (a database of its own,
# dropped at the end), e.g. `bash test/dev.sh PORT bench/relay.sh`, and a
# private rabbitmq-server it starts and stops (test/lib/private_rabbitmq.py).
# Builds build/relay/pgmq-relay with cmake when it is missing.
# Output: "relay_batch<B> <msgs/s> msgs/s", the median of the rounds; each
# round fills the queue with N messages, then times `pgmq-relay --drain`
# from its start until it exited with the queue empty.
set -euo pipefail
cd "$(dirname "$0")/.."
exec /usr/bin/python3 bench/relay_bench.py "$@"
