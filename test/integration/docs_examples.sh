#!/usr/bin/env bash
# test/integration/docs_examples.sh: runs every ```sql block of README.md and
# docs/*.md, so the examples in the documentation cannot rot.
#
# Each file gets a fresh database with pg_partman (schema partman) and pgmq
# installed. Its blocks run in order, each in its own psql session with
# ON_ERROR_STOP, so a block may build on the queues and rows of the blocks
# before it, but not on session state (psql variables, temporary tables, an
# open transaction). A block fails the test when any statement in it fails.
#
# Markers, on the last non-blank line before the opening fence:
#   <!-- not-run -->           the block is illustrative and is not run
#                              (use sparingly: a block that cannot run here);
#   <!-- expect-error XXXXX -->  the block must fail, with SQLSTATE XXXXX, at
#                              its last statement (troubleshooting examples).
#
# test/run runs it with PGHOST/PGPORT/PGUSER set; exit 0 is a pass.
# Usage: test/integration/docs_examples.sh [FILE.md ...]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ $# -gt 0 ]; then
  files=("$@")
else
  files=(README.md)
  for f in docs/*.md; do
    [ -e "$f" ] && files+=("$f")
  done
fi

work=$(mktemp -d /tmp/pgmq-docs-test.XXXXXX)
databases=()
# Roles are not per database: those the examples create are dropped at the
# end, after the databases that held their privileges.
roles_query="SELECT rolname FROM pg_roles ORDER BY 1"
psql -X -q -tA -d postgres -c "$roles_query" >"$work/roles.before"
cleanup() {
  local db role
  for db in "${databases[@]}"; do
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
  done
  psql -X -q -tA -d postgres -c "$roles_query" >"$work/roles.after" 2>/dev/null || true
  comm -13 "$work/roles.before" "$work/roles.after" | while read -r role; do
    psql -X -q -d postgres -c "DROP ROLE IF EXISTS \"$role\"" >/dev/null 2>&1 || echo "could not drop role $role"
  done
  rm -rf "$work"
}
trap cleanup EXIT

# extract FILE OUTDIR: writes each ```sql block of FILE as OUTDIR/NNN.sql and
# one line per block to OUTDIR/index: "NNN LINE MODE [SQLSTATE]", where MODE
# is run, skip or error.
extract() {
  awk -v out="$2" '
    function flush_marker() { marker = ""; state = "" }
    BEGIN { n = 0; inblock = 0; prev = "" }
    {
      if (inblock) {
        if ($0 ~ /^[[:space:]]*```[[:space:]]*$/) { inblock = 0; close(file); prev = ""; next }
        line = $0
        if (indent > 0 && substr(line, 1, indent) ~ /^[[:space:]]*$/) line = substr(line, indent + 1)
        print line > file
        next
      }
      if ($0 ~ /^[[:space:]]*```sql[[:space:]]*$/) {
        n++
        file = sprintf("%s/%03d.sql", out, n)
        match($0, /^[[:space:]]*/); indent = RLENGTH
        mode = "run"; code = ""
        if (prev ~ /<!--[[:space:]]*not-run[[:space:]]*-->/) mode = "skip"
        else if (prev ~ /<!--[[:space:]]*expect-error[[:space:]]+[0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][[:space:]]*-->/) {
          mode = "error"; code = prev
          sub(/.*expect-error[[:space:]]+/, "", code); sub(/[[:space:]]*-->.*/, "", code)
        }
        printf "%03d %d %s %s\n", n, NR, mode, code >> (out "/index")
        printf "" > file
        inblock = 1
        next
      }
      if ($0 ~ /[^[:space:]]/) prev = $0
    }
    END { if (inblock) { printf "unterminated ```sql block\n" > "/dev/stderr"; exit 1 } }
  ' "$1"
}

total=0
skipped=0
failed=0
for f in "${files[@]}"; do
  name=$(tr -c 'a-zA-Z0-9\n' _ <<<"${f%.md}")
  dir=$work/$name
  mkdir -p "$dir"
  : >"$dir/index"
  if ! extract "$f" "$dir"; then
    echo "FAIL $f: could not extract its sql blocks"
    failed=$((failed + 1))
    continue
  fi
  grep -q ' run \| error ' "$dir/index" || {
    skipped=$((skipped + $(grep -c ' skip ' "$dir/index" || true)))
    continue
  }

  db="pgmq_docs_${name,,}_$$"
  db=${db:0:63}
  databases+=("$db")
  psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE \"$db\"" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE EXTENSION pgmq;
SQL

  while read -r n line mode code; do
    block=$dir/$n.sql
    if [ "$mode" = skip ]; then
      skipped=$((skipped + 1))
      continue
    fi
    total=$((total + 1))
    status=0
    (cd / && psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d "$db" -f "$block") >"$block.out" 2>&1 || status=$?
    problem=
    if [ "$mode" = run ] && [ "$status" -ne 0 ]; then
      problem="failed (psql exit $status)"
    elif [ "$mode" = error ]; then
      if [ "$status" -eq 0 ]; then
        problem="was expected to fail with SQLSTATE $code, but succeeded"
      elif ! grep -q "ERROR:  $code:" "$block.out"; then
        problem="was expected to fail with SQLSTATE $code"
      else
        # The failing statement must be the last one, so that everything
        # before it is shown to work. psql reports the line where the failing
        # statement ends; the last statement ends at the last line with a ';'
        # that is not a comment.
        err_line=$(grep -o '^psql:[^:]*:[0-9]*: ERROR' "$block.out" | head -n 1 | cut -d: -f3)
        last_end=$(grep -n ';' "$block" | grep -v '^[0-9]*:[[:space:]]*--' | tail -n 1 | cut -d: -f1)
        if [ -n "$err_line" ] && [ -n "$last_end" ] && [ "$err_line" -lt "$last_end" ]; then
          problem="failed at line $err_line, before its last statement"
        fi
      fi
    fi
    if [ -n "$problem" ]; then
      failed=$((failed + 1))
      echo "FAIL $f:$line: the sql block $problem"
      sed 's/^/  | /' "$block"
      sed 's/^/  > /' "$block.out"
      # Later blocks of this file build on this one: do not pile up failures.
      break
    fi
  done <"$dir/index"
done

# Not a failure (other pages may still be in the works), but worth seeing:
# functions of the install script that no page mentions.
sed -nE 's/^CREATE (OR REPLACE )?FUNCTION pgmq\."?([a-z_0-9]+)"?.*/\2/p' sql/pgmq--*.sql | sort -u |
  while read -r fn; do
    grep -q -- "$fn" docs/*.md 2>/dev/null || echo "note: pgmq.$fn is not mentioned in docs/"
  done

echo "docs examples: $total blocks run, $skipped not run (marked), $failed failed, in ${#files[@]} files"
[ "$failed" -eq 0 ]
