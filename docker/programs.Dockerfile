# syntax=docker/dockerfile:1
# docker/programs.Dockerfile: container images of pgmq-relay and pgmq-console,
# to run them next to any PostgreSQL with pgmq: this extension, or upstream
# pgmq on a managed service (docs/managed-databases.md). Build from the
# repository root, one target per program:
#   podman build --format docker -f docker/programs.Dockerfile --target relay -t pgmq-relay .
#   podman build --format docker -f docker/programs.Dockerfile --target console -t pgmq-console .
# (--format docker keeps the HEALTHCHECK; Docker's build keeps it anyway.)
# Debian 12: its cpp-httplib (0.11) is the one common/http is written for.
# Each image is the Debian base, the program and its runtime libraries, run
# as the unprivileged user pgmq (uid 10001), configured by environment
# variables and mounted files. test/integration/program_images.py builds and
# starts both.

# Build stage: both programs, without the unit tests.
FROM debian:bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake g++ make pkg-config nlohmann-json3-dev libpq-dev librabbitmq-dev libssl-dev libcpp-httplib-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY include/ include/
COPY src/core/ src/core/
COPY common/ common/
COPY relay/ relay/
COPY console/ console/
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null \
 && cmake --build build -j"$(nproc)" --target pgmq-relay pgmq-console \
 && strip build/relay/pgmq-relay build/console/pgmq-console

# What both run on: libpq, the CA certificates (amqps without ca_file), and
# the user. No shell for it; /nonexistent as its home: it writes no file.
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libpq5 ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && useradd --system --uid 10001 --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin pgmq

# pgmq-relay: mount its configuration at /etc/pgmq-relay/relay.json (and the
# certificates and password files it names); PGMQ_RELAY_POSTGRES_PASSWORD_FILE
# and PGMQ_RELAY_AMQP_PASSWORD take passwords from the environment's side.
# /metrics on port 9464, which the health check asks.
FROM runtime AS relay
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends librabbitmq4 libcpp-httplib0.11 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
COPY --from=build /src/build/relay/pgmq-relay /usr/bin/pgmq-relay
COPY docker/programs/relay-healthcheck.sh /usr/lib/pgmq/healthcheck
ENV PGMQ_RELAY_METRICS_LISTEN=0.0.0.0:9464
USER pgmq
EXPOSE 9464
# Healthy while /metrics answers and says both connections are up.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["/usr/lib/pgmq/healthcheck"]
# SIGTERM: it finishes the batches in flight (at most the confirm timeout).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/pgmq-relay"]
CMD ["--config", "/etc/pgmq-relay/relay.json"]

# pgmq-console: the database from libpq's PG* variables (PGHOST, PGSSLMODE,
# PGSSLROOTCERT, ...) or a connection string as the command's argument, the
# password from PGMQ_CONSOLE_PASSWORD_FILE; options as PGMQ_CONSOLE_*
# variables. It serves on port 8432 of every address of the container; put a
# proxy that authenticates in front of it.
FROM runtime AS console
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libcpp-httplib0.11 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
COPY --from=build /src/build/console/pgmq-console /usr/bin/pgmq-console
COPY docker/programs/console-healthcheck.sh /usr/lib/pgmq/healthcheck
ENV PGMQ_CONSOLE_LISTEN=0.0.0.0:8432
USER pgmq
EXPOSE 8432
# Healthy while /healthz says a database session answers.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/lib/pgmq/healthcheck"]
ENTRYPOINT ["/usr/bin/pgmq-console"]
