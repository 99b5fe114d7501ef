#!/bin/bash
# The console image's HEALTHCHECK: healthy (exit 0) when /healthz, at
# PGMQ_CONSOLE_LISTEN, answers 200: a database session answers. bash's
# /dev/tcp: the image carries no HTTP client.
set -euo pipefail
listen=${PGMQ_CONSOLE_LISTEN:-0.0.0.0:8432}
port=${listen##*:}
host=${listen%:*}
host=${host#[}
host=${host%]}
case $host in "" | 0.0.0.0) host=127.0.0.1 ;; ::) host=::1 ;; esac
exec 3<>"/dev/tcp/$host/$port"
printf 'GET /healthz HTTP/1.0\r\nHost: %s\r\n\r\n' "$host" >&3
answer=$(timeout 4 cat <&3)
case ${answer%%$'\r'*} in "HTTP/1."?" 200"*) ;; *) echo "unhealthy: ${answer##*$'\n'}"; exit 1 ;; esac
