#!/usr/bin/env bash
# scripts/lib/deb-build.sh: builds the binary packages of one source package
# on the Debian system it runs on (the host, or a suite's root filesystem:
# scripts/build-packages.sh runs it in each), as a Debian build daemon would.
#
#   deb-build.sh DSC OUTDIR [--profiles LIST] [--lintian]
#
# Installs the build tools and build dependencies it lacks (apt-get), makes
# debian/control for this suite's PostgreSQL majors (pg_buildext
# updatecontrol), builds with dpkg-buildpackage -b, and copies the .deb,
# .changes and .buildinfo files into OUTDIR with build.log. --profiles is
# dpkg-buildpackage's (comma-separated). --lintian checks the result with
# this suite's lintian (lintian.txt); then an error or a warning that no
# override accepts fails the script.
# Prints the seconds of each step.
set -euo pipefail

dsc=$(realpath "$1")
out=$2
shift 2
profiles=
lintian=
while [ $# -gt 0 ]; do
  case $1 in
    --profiles) profiles=$2; shift ;;
    --lintian) lintian=1 ;;
    *) echo "deb-build.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
out=$(realpath "$out")
step_started=$SECONDS
step() {
  echo "deb-build: $1 ($((SECONDS - step_started)) s)"
  step_started=$SECONDS
}

export DEBIAN_FRONTEND=noninteractive
tools=(dpkg-dev debhelper postgresql-server-dev-all)
[ -z "$lintian" ] || tools+=(lintian)
missing=()
for p in "${tools[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; } >"$out/apt.log" 2>&1 ||
    { tail -n 20 "$out/apt.log"; exit 1; }
fi
step "build tools"

work=$(mktemp -d /tmp/pgmq-deb-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$work" && dpkg-source -x "$dsc" src >/dev/null)
cd "$work/src"
pg_buildext updatecontrol
profile_args=()
[ -z "$profiles" ] || profile_args=(-P"$profiles")
if ! dpkg-checkbuilddeps "${profile_args[@]}" >/dev/null 2>&1; then
  { apt-get update && apt-get build-dep -y --no-install-recommends "${profile_args[@]}" ./; } >>"$out/apt.log" 2>&1 ||
    { tail -n 20 "$out/apt.log"; exit 1; }
fi
step "build dependencies"

jobs=${PGMQ_BUILD_JOBS:-2}
export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }parallel=$jobs"
if ! dpkg-buildpackage -b -us -uc "${profile_args[@]}" >"$out/build.log" 2>&1; then
  tail -n 40 "$out/build.log"
  echo "deb-build: dpkg-buildpackage failed; the whole log is $out/build.log"
  exit 1
fi
cp ../*.deb ../*.changes ../*.buildinfo "$out/"
step "dpkg-buildpackage, $(cd "$out" && ls ./*.deb | wc -l) packages"
# Warnings of the compilers, the linker, debhelper and dpkg alike.
warnings=$(grep -c 'warning:' "$out/build.log" || true)
echo "deb-build: $warnings warnings in the build log"

if [ -n "$lintian" ]; then
  status=0
  lintian --fail-on error,warning --info --display-info --pedantic "$out"/*.changes >"$out/lintian.txt" 2>&1 || status=$?
  grep -E '^[EWIPX]: ' "$out/lintian.txt" | sort | uniq -c | sed 's/^/  /' || true
  step "lintian (exit $status)"
  exit "$status"
fi
