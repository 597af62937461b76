#!/usr/bin/env bash
# merge_inputs.sh: tune merge refuses, before it writes anything, inputs
# that would make a wrong or destructive fleet run: two node databases of
# one name (copied from two folders: the same node twice; it failed half
# way on a UNIQUE constraint, leaving an unfinished fleet run in --db), and
# a consensus header or report that is already there -- a file of a fleet
# run --db no longer records, or a node database copied under the header's
# name, which the merge overwrote with the header; and it leaves a node
# database whose last commits are in its -wal as it was. Node databases are
# plain sim jobs (--launcher threads, one process per node), so no MPI.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
args=(--backend sim --gpus 2 --launcher threads --worlds 2 --ops all_reduce --dtypes bf16 --modes graph
  --offsets 0 --no-reg --max-bytes 64K --trials 6 --seed 5)
for n in 0 1; do
  "$tune" "${args[@]}" --no-report --db "$tmp/n/node$n.db" >"$tmp/out" 2>&1
  ok $? "node $n's job"
done
mkdir -p "$tmp/c1" "$tmp/c2" "$tmp/h" "$tmp/s" "$tmp/r/g-fleet-1-report" || exit 1
cp "$tmp/n/node0.db" "$tmp/c1/node0.db" && cp "$tmp/n/node0.db" "$tmp/c2/node0.db" || exit 1

"$tune" merge "${args[@]}" --db "$tmp/d/g.db" "$tmp/c1/node0.db" "$tmp/c2/node0.db" "$tmp/n/node1.db" \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 2 )) "two node databases of one name: refused (rc $rc)"
grep -q "c1/node0.db and .*c2/node0.db are both node node0" "$tmp/err"
ok $? "naming both files"
[ ! -e "$tmp/d" ]
ok $? "nothing written"

# A node database that is not there: named, with why.
"$tune" merge "${args[@]}" --db "$tmp/d/g.db" "$tmp/n/node0.db" "$tmp/n/nosuch.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 2 )) "a missing node database: refused (rc $rc)"
grep -q "n/nosuch.db: No such file or directory" "$tmp/err" && [ ! -e "$tmp/d" ]
ok $? "saying so, nothing written: $(head -n1 "$tmp/err")"

# A node database copied to where the consensus header goes.
cp "$tmp/n/node0.db" "$tmp/h/g-fleet-1-thresholds.h" || exit 1
sum=$(cksum <"$tmp/h/g-fleet-1-thresholds.h")
"$tune" merge "${args[@]}" --db "$tmp/h/g.db" "$tmp/h/g-fleet-1-thresholds.h" "$tmp/n/node1.db" \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 2 )) "an input where the consensus header goes: refused (rc $rc)"
grep -q "g-fleet-1-thresholds.h is already there" "$tmp/err"
ok $? "naming it"
test "$(cksum <"$tmp/h/g-fleet-1-thresholds.h")" = "$sum" && [ ! -e "$tmp/h/g.db" ]
ok $? "the input as it was, no --db"

# A header or a report of a fleet run --db does not record (--db removed).
echo "a header of another fleet database" >"$tmp/s/g-fleet-1-thresholds.h"
"$tune" merge "${args[@]}" --db "$tmp/s/g.db" "$tmp/n/node0.db" "$tmp/n/node1.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 2 )) "a header already there: refused (rc $rc)"
test "$(cat "$tmp/s/g-fleet-1-thresholds.h")" = "a header of another fleet database" && [ ! -e "$tmp/s/g.db" ]
ok $? "left alone, no --db"
"$tune" merge "${args[@]}" --db "$tmp/r/g.db" "$tmp/n/node0.db" "$tmp/n/node1.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 2 )) "a report folder already there: refused (rc $rc)"
grep -q "g-fleet-1-report is already there" "$tmp/err" && [ ! -e "$tmp/r/g.db" ]
ok $? "naming it, no --db"

# Node names past 127 bytes were cut, and two files then refused as one
# node (a review): a name too long is refused, saying so.
long=$(printf 'n%.0s' $(seq 130))
mkdir -p "$tmp/ln" && cp "$tmp/n/node0.db" "$tmp/ln/${long}A.db" && cp "$tmp/n/node1.db" "$tmp/ln/${long}B.db" || exit 1
"$tune" merge "${args[@]}" --db "$tmp/lq/g.db" "$tmp/ln/${long}A.db" "$tmp/ln/${long}B.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "${long}A.db: a node is named after its file, and this name is 131 bytes (at most 127)" "$tmp/err" &&
  [ ! -e "$tmp/lq" ]
ok $? "a node name of 131 bytes: refused, exit 2, nothing written (rc $rc)"

# The lock of the fleet outputs' names is no database's job lock: a folder
# named f-fleet beside f.db, and a held job of a database named f-fleet,
# refused every merge into f.db (a review).
mkdir -p "$tmp/nl/f-fleet"
"$tune" merge "${args[@]}" --no-report --db "$tmp/nl/f.db" "$tmp/n/node0.db" "$tmp/n/node1.db" >"$tmp/out" 2>"$tmp/err"
ok $? "a merge beside a folder named f-fleet: $(head -n1 "$tmp/err")"
TUNE_SIM_PAUSE_AFTER=4 "$tune" "${args[@]}" --no-report --db "$tmp/nl/g-fleet" >/dev/null 2>&1 &
hpid=$!
for _ in $(seq 200); do grep -q "pid $hpid" "$tmp/nl/g-fleet.lock" 2>/dev/null && break; sleep 0.05; done
"$tune" merge "${args[@]}" --no-report --db "$tmp/nl/g.db" "$tmp/n/node0.db" "$tmp/n/node1.db" >"$tmp/out" 2>"$tmp/err"
ok $? "a merge into g.db while a job of g-fleet runs: $(head -n1 "$tmp/err")"
kill -TERM $hpid 2>/dev/null
wait $hpid 2>/dev/null

# A --report-dir that is --db, or where the consensus header goes: the
# merge wrote, then failed at its report (a review); refused up front.
for rd in "$tmp/q/g.db" "$tmp/q/g-fleet-1-thresholds.h"; do
  "$tune" merge "${args[@]}" --db "$tmp/q/g.db" --report-dir "$rd" "$tmp/n/node0.db" "$tmp/n/node1.db" \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc -eq 2 ] && [ ! -e "$tmp/q" ]
  ok $? "--report-dir ${rd#$tmp/}: refused, exit 2, nothing written (rc $rc): $(head -n1 "$tmp/err")"
done

# The same nodes, merged twice into one --db: fleet runs 1 and 2, each
# with its own header.
for i in 1 2; do
  "$tune" merge "${args[@]}" --db "$tmp/m/g.db" "$tmp/n/node0.db" "$tmp/n/node1.db" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ok $rc "merge $i (rc $rc)"
  [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | head -5
done
test -s "$tmp/m/g-fleet-1-thresholds.h" && test -s "$tmp/m/g-fleet-2-thresholds.h"
ok $? "two fleet runs, two headers"
ok $(( $(sqlite3 -readonly -batch -noheader "$tmp/m/g.db" \
  "select count(*) from runs where kind = 'fleet' and finished_at is not null") != 2 )) "both finished"

# A merge stopped part way (SIGINT while it draws its report: a gnuplot
# that signals tune) leaves nothing: its fleet run gone from --db (it was
# left unfinished, for tune fleet --resume to take up), no header, no
# report folder; run again, it finishes as that run.
mkdir -p "$tmp/i/bin" || exit 1
printf '#!/bin/sh\ncase "$1" in -d) kill -INT "$PPID" ;; esac\nexit 0\n' >"$tmp/i/bin/gnuplot"
chmod +x "$tmp/i/bin/gnuplot"
"$tune" merge "${args[@]}" --no-report --db "$tmp/i/g.db" "$tmp/n/node0.db" "$tmp/n/node1.db" >"$tmp/out" 2>&1
ok $? "a first merge into --db"
before=$(sqlite3 "$tmp/i/g.db" .dump)
GNUPLOT=$tmp/i/bin/gnuplot "$tune" merge "${args[@]}" --db "$tmp/i/g.db" "$tmp/n/node0.db" "$tmp/n/node1.db" \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 130 )) "a second, interrupted: exit 130 (rc $rc)"
grep -q "merge interrupted: fleet run 2 removed from $tmp/i/g.db, with the header and report it wrote" "$tmp/err"
ok $? "saying the run is removed: $(tail -n1 "$tmp/err")"
[ "$(sqlite3 "$tmp/i/g.db" .dump)" = "$before" ] && [ ! -e "$tmp/i/g-fleet-2-thresholds.h" ] &&
  [ ! -e "$tmp/i/g-fleet-2-report" ] && [ -e "$tmp/i/g-fleet-1-thresholds.h" ]
ok $? "--db as it was, no header or report of run 2, run 1's header kept"
"$tune" merge "${args[@]}" --no-report --db "$tmp/i/g.db" "$tmp/n/node0.db" "$tmp/n/node1.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ -s "$tmp/i/g-fleet-2-thresholds.h" ] &&
  [ "$(sqlite3 "$tmp/i/g.db" "select count(*) from runs where kind = 'fleet' and finished_at is not null")" = 2 ]
ok $? "run again, it finishes as fleet run 2 (rc $rc)"
# Interrupted too: a merge into a --db it makes, in folders it makes (the
# database, its lock and the folders stayed, a review), and one whose
# --report-dir is a folder of the user's (the report's files it wrote
# stayed, naming the removed run): only the user's file is left.
GNUPLOT=$tmp/i/bin/gnuplot "$tune" merge "${args[@]}" --db "$tmp/i/new/sub/g.db" "$tmp/n/node0.db" \
  "$tmp/n/node1.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 130 ] && [ ! -e "$tmp/i/new" ] && grep -q "$tmp/i/new/sub/g.db, which it made, removed" "$tmp/err"
ok $? "into a new --db: exit 130, no database, lock or folder left (rc $rc): $(tail -n1 "$tmp/err")"
mkdir -p "$tmp/i/rep" && echo "the user's" >"$tmp/i/rep/notes.txt" && echo "an old report" >"$tmp/i/rep/report.md"
GNUPLOT=$tmp/i/bin/gnuplot "$tune" merge "${args[@]}" --db "$tmp/i/g.db" --report-dir "$tmp/i/rep" \
  "$tmp/n/node0.db" "$tmp/n/node1.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 130 ] && [ "$(ls "$tmp/i/rep")" = notes.txt ] && [ ! -e "$tmp/i/g-fleet-3-thresholds.h" ] &&
  [ "$(sqlite3 "$tmp/i/g.db" "select count(*) from runs where kind = 'fleet'")" = 2 ]
ok $? "with --report-dir: the report's files gone, the user's kept, no run 3 (rc $rc): $(ls "$tmp/i/rep" | tr '\n' ' ')"

# A node is named after its file, which may hold '|' or a newline: the
# report's nodes table keeps one row per node, one cell per column.
mkdir -p "$tmp/o" && cp "$tmp/n/node0.db" "$tmp/o/a|b.db" && cp "$tmp/n/node1.db" "$tmp/o/c
# d.db" || exit 1
"$tune" merge "${args[@]}" --db "$tmp/o/m.db" "$tmp/o/a|b.db" "$tmp/o/c
# d.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
md=$tmp/o/m-fleet-1-report/report.md
grep -qF '| 0 | a\|b | ok |' "$md" && grep -qF '| 1 | c # d | ok |' "$md" && ! grep -q '^# d' "$md"
ok $(( $? != 0 || rc != 0 )) "node names of '|' and a newline stay in their cells of report.md (rc $rc)"
# A node database whose last commits are still in its -wal (its node was
# stopped before a checkpoint): merge reads them and leaves the input and
# its -wal byte for byte as they were (DETACH used to checkpoint it).
if command -v python3 >/dev/null; then
  mkdir -p "$tmp/w" && cp "$tmp/n/node1.db" "$tmp/w/node1.db"
  python3 - "$tmp/w/node1.db" <<'PY'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("pragma journal_mode=wal")
c.execute("pragma wal_autocheckpoint=0")
c.execute("update runs set host = 'walhost' where id = 1")
os._exit(0)  # no close: the commit stays in the -wal
PY
  test -s "$tmp/w/node1.db-wal"
  ok $? "node1's copy holds a commit in its -wal"
  sums=$(cksum "$tmp/w/node1.db" "$tmp/w/node1.db-wal")
  "$tune" merge "${args[@]}" --db "$tmp/wd/g.db" "$tmp/n/node0.db" "$tmp/w/node1.db" >"$tmp/out" 2>"$tmp/err"
  ok $? "merge with it runs: $(head -n1 "$tmp/err")"
  test "$(cksum "$tmp/w/node1.db" "$tmp/w/node1.db-wal")" = "$sums"
  ok $? "the input and its -wal are byte for byte as they were"
fi

tap_end
