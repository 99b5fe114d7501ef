#!/usr/bin/env bash
# docker/base-image.sh SUITE: makes the image docker.io/library/debian:SUITE-slim
# with debootstrap (variant minbase) and `podman import`, unless podman has
# one already, for builds with --pull=never where no registry is reachable.
# The extension's image test (docker/test-image.sh) and the programs' images
# test (test/integration/program_images.py) share it, and so share the image.
# forky's Release file can be past its Valid-Until date, which debootstrap
# refuses: its base is trixie with the sources moved to forky. Needs root,
# podman, debootstrap and Debian's archive; about 30 s.
set -euo pipefail
suite=${1:?usage: docker/base-image.sh SUITE}
ref=docker.io/library/debian:$suite-slim
podman image exists "$ref" && exit 0
# The archive the host uses (the same address serves every suite).
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}
from=$suite
[ "$suite" = forky ] && from=trixie
work=$(mktemp -d /tmp/pgmq-base-image.XXXXXX)
trap 'findmnt -rn -o TARGET | grep "^$work/" | sort -r | while read -r m; do umount -l "$m"; done; rm -rf --one-file-system "$work"' EXIT
echo "== making base image $ref (debootstrap $from)"
t0=$SECONDS
debootstrap --variant=minbase "$from" "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
if [ "$suite" = forky ]; then
  echo "deb [check-valid-until=no] $mirror forky main" >"$work/root/etc/apt/sources.list"
fi
rm -rf "$work"/root/var/cache/apt/archives/*.deb "$work"/root/var/lib/apt/lists/*
tar -C "$work/root" -c . | podman import --change 'CMD ["bash"]' - "$ref" >"$work/import.log" 2>&1 ||
  { cat "$work/import.log" >&2; exit 1; }
echo "base image $ref: $((SECONDS - t0)) s"
