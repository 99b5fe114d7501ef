#!/bin/bash
# The relay image's HEALTHCHECK: healthy (exit 0) when /metrics, at
# PGMQ_RELAY_METRICS_LISTEN, answers 200 and no queue's PostgreSQL or
# broker connection is down. bash's /dev/tcp: the image carries no HTTP client.
set -euo pipefail
listen=${PGMQ_RELAY_METRICS_LISTEN:-0.0.0.0:9464}
port=${listen##*:}
host=${listen%:*}
host=${host#[}
host=${host%]}
case $host in "" | 0.0.0.0) host=127.0.0.1 ;; ::) host=::1 ;; esac
exec 3<>"/dev/tcp/$host/$port"
printf 'GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n' "$host" >&3
answer=$(timeout 4 cat <&3)
case ${answer%%$'\r'*} in "HTTP/1."?" 200"*) ;; *) echo "unhealthy: ${answer%%$'\n'*}"; exit 1 ;; esac
if grep -Eq '^pgmq_relay_(postgres|broker)_up\{[^}]*\} 0$' <<<"$answer"; then
  grep -E '^pgmq_relay_(postgres|broker)_up\{[^}]*\} 0$' <<<"$answer" | sed 's/^/unhealthy: /'
  exit 1
fi
