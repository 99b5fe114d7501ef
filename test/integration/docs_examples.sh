#!/usr/bin/env bash
# test/integration/docs_examples.sh: runs every ```sql and ```python block of
# README.md, docs/*.md and docker/README.md, and compares what it prints with
# the output the page shows, so that the examples in the documentation cannot
# drift.
#
# Each page gets a fresh database with pg_partman (schema partman) and pgmq
# installed. Its blocks run in order, each in its own session: a sql block
# in psql with ON_ERROR_STOP, a python block in /usr/bin/python3 with
# DATABASE_URL (the connection string the examples read) and PGDATABASE
# set to the page's database. So a block may build on the queues and rows
# of the blocks before it, but not on session state (psql variables,
# temporary tables, an open transaction). A block fails the test when any
# statement in it fails (python: exits non-zero).
#
# A page with the line <!-- after-quickstart --> goes on where the quick
# start left its database: before the page's blocks, its database gets what
# scripts/quickstart.sh does there (scripts/lib/quickstart_demo.sh, the same
# code), so a page that collides with the quick start's queue fails here.
#
# Output: a ```text block that follows a sql or python block with nothing but
# blank lines between them is what that block prints (psql: results,
# NOTICEs, errors, as `psql -q` shows them with default verbosity; python:
# stdout and stderr). It is compared line by line, trailing blanks ignored,
# as pg_regress compares: a page that shows output is checked against it.
#
# Markers, on the last non-blank line before the opening fence:
#   <!-- not-run: REASON -->     the block is not run; REASON, required, says
#                                why it cannot run here (another server, a
#                                restart, a placeholder to fill in);
#   <!-- expect-error XXXXX -->  the sql block must fail, with SQLSTATE XXXXX,
#                                at its last statement (troubleshooting examples).
#
# Pages run in parallel (PGMQ_DOCS_JOBS, default 3; blocks that wait, such as
# pg_sleep or read_with_poll, overlap). Roles that examples create are not
# per database: they are dropped at the end, and two pages must not create
# the same role.
#
# test/run runs it with PGHOST/PGPORT/PGUSER set; exit 0 is a pass.
# Usage: test/integration/docs_examples.sh [FILE.md ...]   (default: all)
# PGMQ_DOCS_SHOW=1 prints what every block printed: for writing a page, not
# for copying into it unread.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/quickstart_demo.sh
. scripts/lib/quickstart_demo.sh

if [ $# -gt 0 ]; then
  files=("$@")
else
  files=(README.md docker/README.md)
  for f in docs/*.md; do
    [ -e "$f" ] && files+=("$f")
  done
fi
jobs=${PGMQ_DOCS_JOBS:-3}

work=$(mktemp -d /tmp/pgmq-docs-test.XXXXXX)
# database_for FILE: the database a page runs in (at most 63 bytes).
database_for() {
  local name
  name=$(tr -c 'a-zA-Z0-9\n' _ <<<"${1%.md}")
  name="pgmq_docs_${name,,}_$$"
  echo "${name:0:63}"
}
roles_query="SELECT rolname FROM pg_roles ORDER BY 1"
psql -X -q -tA -d postgres -c "$roles_query" >"$work/roles.before"
cleanup() {
  local f role
  # Each DROP DATABASE waits for a checkpoint; dropped together, they share
  # one or two instead of taking a second each.
  for f in "${files[@]}"; do
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS \"$(database_for "$f")\" WITH (FORCE)" >/dev/null 2>&1 &
  done
  wait
  psql -X -q -tA -d postgres -c "$roles_query" >"$work/roles.after" 2>/dev/null || true
  comm -13 "$work/roles.before" "$work/roles.after" | while read -r role; do
    psql -X -q -d postgres -c "DROP ROLE IF EXISTS \"$role\"" >/dev/null 2>&1 || echo "could not drop role $role"
  done
  rm -rf "$work"
}
trap cleanup EXIT

# extract FILE OUTDIR: writes each ```sql or ```python block of FILE as
# OUTDIR/NNN.sql or OUTDIR/NNN.py, the ```text block right after it (if any)
# as OUTDIR/NNN.expected, and one line per such block to OUTDIR/index:
# "NNN LINE LANG MODE [ARGUMENT]", where LANG is sql or py and MODE is run,
# skip (ARGUMENT: the reason) or error (ARGUMENT: the SQLSTATE); a not-run
# marker without a reason is MODE "unexplained". Fenced blocks of other
# languages are passed over. A block's lines lose the indentation of its
# opening fence (blocks inside list items).
extract() {
  awk -v out="$2" '
    function strip_indent(line) {
      if (indent > 0 && substr(line, 1, indent) ~ /^[[:space:]]*$/) return substr(line, indent + 1)
      return line
    }
    BEGIN { n = 0; kind = ""; prev = ""; follows_code = 0 }
    {
      if (kind != "") {
        if ($0 ~ /^[[:space:]]*```[[:space:]]*$/) {
          if (kind != "other") close(file)
          follows_code = (kind == "code")
          kind = ""; prev = ""
          next
        }
        if (kind != "other") print strip_indent($0) > file
        next
      }
      if ($0 ~ /^[[:space:]]*```/) {
        match($0, /^[[:space:]]*/); indent = RLENGTH
        lang = $0; sub(/^[[:space:]]*```[[:space:]]*/, "", lang); sub(/[[:space:]]+$/, "", lang)
        if (lang == "sql" || lang == "python") {
          n++
          ext = (lang == "sql") ? "sql" : "py"
          kind = "code"; file = sprintf("%s/%03d.%s", out, n, ext)
          mode = "run"; arg = ""
          if (prev ~ /<!--[[:space:]]*not-run[[:space:]]*:[[:space:]]*[^[:space:]-][^>]*-->/) {
            mode = "skip"; arg = prev
            sub(/.*not-run[[:space:]]*:[[:space:]]*/, "", arg); sub(/[[:space:]]*-->.*/, "", arg)
          } else if (prev ~ /<!--[[:space:]]*not-run/) {
            mode = "unexplained"
          } else if (prev ~ /<!--[[:space:]]*expect-error[[:space:]]+[0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][[:space:]]*-->/) {
            mode = "error"; arg = prev
            sub(/.*expect-error[[:space:]]+/, "", arg); sub(/[[:space:]]*-->.*/, "", arg)
          }
          printf "%03d %d %s %s %s\n", n, NR, ext, mode, arg >> (out "/index")
          printf "" > file
        } else if (lang == "text" && follows_code) {
          kind = "text"; file = sprintf("%s/%03d.expected", out, n)
          printf "" > file
        } else {
          kind = "other"
        }
        follows_code = 0
        next
      }
      if ($0 ~ /[^[:space:]]/) { prev = $0; follows_code = 0 }
    }
    END { if (kind != "") { printf "unterminated ``` block\n" > "/dev/stderr"; exit 1 } }
  ' "$1"
}

# normalise: psql's output as a user sees it with default verbosity. The test
# runs psql verbose, to check SQLSTATEs: drop the SQLSTATE after the
# severity, the fields only verbose errors show (LOCATION, a C source line,
# which differs between PostgreSQL majors; SCHEMA NAME and the like) and the
# "psql:FILE:LINE: " prefix of messages. Then, on both sides, trailing blanks
# and leading and trailing blank lines go.
normalise() {
  sed -E -e 's/^psql:[^:]*:[0-9]+: //' \
    -e 's/^(ERROR|WARNING|NOTICE|INFO|LOG|DEBUG|FATAL|PANIC):  [0-9A-Z]{5}: /\1:  /' \
    -e '/^(LOCATION|SCHEMA NAME|TABLE NAME|COLUMN NAME|DATATYPE NAME|CONSTRAINT NAME):  /d' "$1" | trim_blank
}
trim_blank() {
  sed -E 's/[[:space:]]+$//' | awk '
    /[^[:space:]]/ { for (; blanks > 0; blanks--) print ""; print; seen = 1; next }
    seen { blanks++ }'
}

# run_page FILE: runs one page's blocks in its own database; prints what
# failed, and a last line "blocks RUN SKIPPED COMPARED FAILED".
run_page() {
  local f=$1 dir db n line lang mode arg block status problem err_line last_end
  local ran=0 skipped=0 compared=0 failed=0
  dir=$work/$(tr -c 'a-zA-Z0-9\n' _ <<<"${f%.md}")
  mkdir -p "$dir"
  : >"$dir/index"
  if ! extract "$f" "$dir"; then
    echo "FAIL $f: could not extract its blocks"
    echo "blocks 0 0 0 1"
    return
  fi
  if grep -q ' \(run\|error\) ' "$dir/index"; then
    db=$(database_for "$f")
    psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE \"$db\"" >/dev/null
    # A page's database stands for one whose partitions are maintained.
    psql -X -q -v ON_ERROR_STOP=1 -d postgres \
      -c "ALTER DATABASE \"$db\" SET pgmq.partition_maintenance_warning = off" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE EXTENSION pgmq;
SQL
    if grep -q '^<!-- after-quickstart -->$' "$f" && ! quickstart_demo "$db" >"$dir/quickstart.out" 2>&1; then
      echo "FAIL $f: the quick start (scripts/lib/quickstart_demo.sh) failed in its database:"
      sed 's/^/  /' "$dir/quickstart.out"
      echo "blocks 0 0 0 1"
      return
    fi
  fi

  while read -r n line lang mode arg; do
    block=$dir/$n.$lang
    problem=
    case $mode in
      skip)
        skipped=$((skipped + 1))
        continue
        ;;
      unexplained)
        failed=$((failed + 1))
        echo "FAIL $f:$line: <!-- not-run --> needs a reason: <!-- not-run: why it cannot run here -->"
        continue
        ;;
    esac
    ran=$((ran + 1))
    status=0
    if [ "$lang" = py ]; then
      (cd / && PGDATABASE=$db DATABASE_URL="postgresql://${PGUSER:-postgres}@/$db?host=${PGHOST:-/var/run/postgresql}&port=${PGPORT:-5432}" \
        /usr/bin/python3 "$block") >"$block.out" 2>&1 || status=$?
    else
      (cd / && psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d "$db" -f "$block") >"$block.out" 2>&1 || status=$?
    fi
    if [ "$mode" = run ] && [ "$status" -ne 0 ]; then
      problem="failed (exit status $status)"
    elif [ "$mode" = error ]; then
      if [ "$status" -eq 0 ]; then
        problem="was expected to fail with SQLSTATE $arg, but succeeded"
      elif ! grep -q "ERROR:  $arg:" "$block.out"; then
        problem="was expected to fail with SQLSTATE $arg"
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
    if [ -n "${PGMQ_DOCS_SHOW:-}" ]; then
      echo "--- $f:$line ($mode)"
      normalise "$block.out"
    fi
    if [ -z "$problem" ] && [ -f "$dir/$n.expected" ]; then
      compared=$((compared + 1))
      normalise "$block.out" >"$block.actual"
      trim_blank <"$dir/$n.expected" >"$block.wanted"
      if ! cmp -s "$block.wanted" "$block.actual"; then
        problem="printed other output than the page shows (- page, + printed)"
        diff -U 2 --label page --label printed "$block.wanted" "$block.actual" | tail -n +3 | sed 's/^/  /' >"$block.diff" || true
      fi
    fi
    if [ -n "$problem" ]; then
      failed=$((failed + 1))
      echo "FAIL $f:$line: the ${lang/py/python} block $problem"
      if [ -f "$block.diff" ]; then
        cat "$block.diff"
      else
        sed 's/^/  | /' "$block"
        sed 's/^/  > /' "$block.out"
      fi
      # Later blocks of this page build on this one: do not pile up failures.
      break
    fi
  done <"$dir/index"
  echo "blocks $ran $skipped $compared $failed"
}

started=$(date +%s.%N)
i=0
for f in "${files[@]}"; do
  i=$((i + 1))
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  run_page "$f" >"$work/page.$i.log" 2>&1 &
done
wait

total=0
skipped=0
compared=0
failed=0
i=0
for f in "${files[@]}"; do
  i=$((i + 1))
  log=$work/page.$i.log
  summary=$(grep '^blocks ' "$log" | tail -n 1 || true)
  if [ -z "$summary" ]; then
    echo "FAIL $f: the page's run ended early:"
    sed 's/^/  /' "$log"
    failed=$((failed + 1))
    continue
  fi
  grep -v '^blocks ' "$log" || true
  read -r _ r s c x <<<"$summary"
  total=$((total + r))
  skipped=$((skipped + s))
  compared=$((compared + c))
  failed=$((failed + x))
done

# Links between the pages drift too: every relative link must name a file
# that exists, and an anchor must be a heading of that page (GitHub's
# slugs: lower case, punctuation dropped, spaces to hyphens). Links to files
# other than pages are checked in a checkout only: test/run copies the tree
# into other majors' root filesystems without some of them (docker/init.d).
link_problems=$(/usr/bin/python3 - "${files[@]}" <<'PY'
import os, re, sys
checkout = os.path.exists(".git")
def slug(title):
    title = re.sub(r"`|\*\*|\[|\]\([^)]*\)", "", title).strip().lower()
    return re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
anchors = {}
def anchors_of(path):
    if path not in anchors:
        seen, fence = {}, False
        for line in open(path, encoding="utf-8"):
            if line.lstrip().startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                base = slug(line.lstrip("#"))
                n = seen.get(base, 0)
                seen[base] = n + 1
                seen.setdefault(base if n == 0 else f"{base}-{n}", 1)
        anchors[path] = set(seen)
    return anchors[path]
for page in sys.argv[1:]:
    fence = False
    for number, line in enumerate(open(page, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence:
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            path = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(path):
                if checkout or path.endswith(".md"):
                    print(f"FAIL {page}:{number}: the link {target} names no file")
            elif anchor and path.endswith(".md") and anchor not in anchors_of(path):
                print(f"FAIL {page}:{number}: the link {target} names no heading of {path}")
PY
)
if [ -n "$link_problems" ]; then
  echo "$link_problems"
  failed=$((failed + $(wc -l <<<"$link_problems")))
fi

# Not a failure (other pages may still be in the works), but worth seeing:
# functions of the install script that no page mentions.
sed -nE 's/^CREATE (OR REPLACE )?FUNCTION pgmq\."?([a-z_0-9]+)"?.*/\2/p' sql/pgmq--*.sql | sort -u >"$work/functions"
cat docs/*.md | grep -oE '[a-z_0-9]+' | sort -u >"$work/words"
comm -23 "$work/functions" "$work/words" | sed 's/^/note: pgmq./; s/$/ is not mentioned in docs\//'

elapsed=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
echo "docs examples: $total blocks run ($compared outputs compared), $skipped not run (marked), $failed failed, in ${#files[@]} files, ${elapsed} s"
[ "$failed" -eq 0 ]
