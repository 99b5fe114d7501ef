# shellcheck shell=bash
# Sourced by test/run: a Debian root filesystem per PostgreSQL major that the
# host (Debian 12) does not package, made with debootstrap from Debian's
# archive and kept for the next run. Mixing newer suites into the host would
# pull a newer libc; a root of its own keeps the host as it is.
#
#   major  suite    PostgreSQL  pg_partman
#   15     bookworm 15.x        4.7.x   (the host's; roots for the package tests)
#   17     trixie   17.x        5.2.x
#   18     forky    18.x        5.5.x
#
# Needs root. The packages themselves are installed inside by test/run's
# ensure_packages, the same way as on the host.

PGMQ_ROOTFS_CACHE=${PGMQ_ROOTFS_CACHE:-/var/cache/pgmq-rootfs}

# rootfs_suite MAJOR: the Debian suite that packages PostgreSQL MAJOR.
rootfs_suite() {
  case $1 in
    15) echo bookworm ;;
    17) echo trixie ;;
    18) echo forky ;;
    *) return 1 ;;
  esac
}

# rootfs_mirror: the archive the host uses (the same address serves every suite).
rootfs_mirror() {
  local mirror
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
  echo "${mirror:-http://deb.debian.org/debian}"
}

# minbase_rootfs SUITE: prints a debootstrap --variant=minbase root of SUITE
# (bookworm, trixie or forky), made once and then left untouched: the test
# roots start as copies of it, and the package tests install into fresh
# copies, where apt must resolve every dependency itself.
minbase_rootfs() {
  local suite=$1 root from
  root=$PGMQ_ROOTFS_CACHE/minbase-$suite
  if [ ! -f "$root/.pgmq-ready" ]; then
    command -v debootstrap >/dev/null ||
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap >&2 || return 1
    rm -rf "$root"
    mkdir -p "$PGMQ_ROOTFS_CACHE"
    # forky's Release file can be past its Valid-Until date, which debootstrap
    # would refuse: start from trixie and move the sources to forky.
    from=$suite
    [ "$suite" = forky ] && from=trixie
    echo "== making a $suite root filesystem in $root (debootstrap)" >&2
    debootstrap --variant=minbase "$from" "$root" "$(rootfs_mirror)" >"$PGMQ_ROOTFS_CACHE/$suite.debootstrap.log" 2>&1 ||
      { tail -n 20 "$PGMQ_ROOTFS_CACHE/$suite.debootstrap.log" >&2; return 1; }
    if [ "$suite" = forky ]; then
      echo "deb [check-valid-until=no] $(rootfs_mirror) forky main" >"$root/etc/apt/sources.list"
    else
      # A stable suite with its updates, as a server has them (the host's
      # PostgreSQL, and so the packages built against it, can be newer than
      # the suite's release).
      printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s-security %s-security main\n' \
        "$(rootfs_mirror)" "$suite" "$(rootfs_mirror)" "$suite" "$(rootfs_mirror)" "$suite" >"$root/etc/apt/sources.list"
    fi
    touch "$root/.pgmq-ready"
  fi
  echo "$root"
}

# copy_rootfs SRC DEST: DEST becomes a copy of the root SRC (whole or not at
# all: an interrupted copy must not pass for a ready root).
copy_rootfs() {
  rm -rf "$2" "$2.copying" && mkdir -p "$(dirname "$2")" && cp -a "$1" "$2.copying" && mv "$2.copying" "$2"
}

# ensure_rootfs MAJOR: prints the root directory for MAJOR, making it first
# (a copy of its suite's minbase root) when it is missing or was left half-made.
ensure_rootfs() {
  local major=$1 suite root base
  suite=$(rootfs_suite "$major") || { echo "no Debian suite known for PostgreSQL $major" >&2; return 1; }
  root=$PGMQ_ROOTFS_CACHE/$suite
  if [ ! -f "$root/.pgmq-ready" ]; then
    base=$(minbase_rootfs "$suite") || return 1
    copy_rootfs "$base" "$root" || return 1
  fi
  echo "$root"
}

# prepare_rootfs MAJOR: ensure_rootfs, then inside it the packages that
# test/run would install there first (ensure_packages of scripts/lib/cluster.sh),
# so that test/run can make the root while the host's tier builds.
prepare_rootfs() {
  local major=$1 root
  root=$(ensure_rootfs "$major") || return 1
  cp "$PGMQ_REPO/scripts/lib/cluster.sh" "$root/tmp/pgmq-packages.sh"
  in_rootfs "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    PG_MAJOR="$major" PGMQ_IN_ROOTFS=1 bash -c '. /tmp/pgmq-packages.sh && ensure_packages'
}

# mount_rootfs ROOT: mounts what a server needs inside ROOT: a procfs and
# sysfs of the root's own (not binds of the host's), /dev bound.
mount_rootfs() {
  local root=$1
  mountpoint -q "$root/proc" || mount -t proc proc "$root/proc" || return 1
  mountpoint -q "$root/sys" || mount -t sysfs sysfs "$root/sys" || return 1
  mountpoint -q "$root/dev" || mount --bind /dev "$root/dev" || return 1
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}

# umount_rootfs ROOT: undoes mount_rootfs.
umount_rootfs() {
  local m
  for m in sys dev proc; do
    umount -l "$1/$m" 2>/dev/null || true
  done
}

# in_rootfs ROOT CMD...: runs CMD inside ROOT with /proc, /dev and /sys
# mounted (a server needs them), unmounting them afterwards.
in_rootfs() {
  local root=$1 status=0
  shift
  mount_rootfs "$root" || return 1
  chroot "$root" "$@" || status=$?
  umount_rootfs "$root"
  return "$status"
}
