#!/usr/bin/env bash
# bench/queue_head_model.sh: the queue head's randomized model test
# (test/integration/queue_head_model.py) for longer than CI runs it.
#
#   bench/queue_head_model.sh [SECONDS [SEED]]     default 600 s, a random seed
#
# Uses the PostgreSQL server of PGHOST/PGPORT/PGUSER with pgmq preloaded and
# max_prepared_transactions >= 5, e.g. `bash test/dev.sh PORT bench/queue_head_model.sh 1800`.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(--seconds "${1:-600}")
[ -n "${2:-}" ] && args+=(--seed "$2")
exec /usr/bin/python3 test/integration/queue_head_model.py "${args[@]}"
