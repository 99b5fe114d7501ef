# shellcheck shell=bash
# Sourced by shell integration tests that check SQL results: set TEST_TAG
# (the prefix of every line) first.
#   say TEXT...            one line of output
#   fail TEXT...           says FAIL and exits 1
#   q DB SQL...            runs SQL in DB: unaligned, tuples only, stops at the first error
#   check DB WHAT SQL...   the query must return t
say() { printf '[%s] %s\n' "$TEST_TAG" "$*"; }
fail() {
  say "FAIL: $*"
  exit 1
}
q() {
  local db=$1
  shift
  psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$*"
}
check() {
  local db=$1 what=$2 got
  shift 2
  got=$(q "$db" "$*") || fail "$what: query failed"
  [ "$got" = t ] || fail "$what (got '$got')"
  say "ok: $what"
}
