#!/usr/bin/env bash
# replay.sh: tune replay on the sim backend. A job's crossover search run
# again over its database writes the job's own rows back, with every trial
# it asks for found there; a job of other options, a run that is not a main
# job's, a sweep that ran with another compiled-in table and stored no copy
# of it (a job of an older tune), a malformed --incumbent, and the database
# as the output are refused before anything is written; the database is
# only read.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
args=(--backend sim --gpus 2 --worlds 2 --ops all_reduce,all_gather --dtypes bf16 --trials 12 --seed 3)
"$tune" "${args[@]}" --db "$tmp/j/t.db" --no-report >"$tmp/j.out" 2>&1
ok $? "the job runs"
sum=$(cksum <"$tmp/j/t.db")

"$tune" replay "${args[@]}" --db "$tmp/j/t.db" --header "$tmp/r.h" 2>"$tmp/r.err"
ok $? "replay exits 0"
grep -q "; of those the database lacks, 0 stood in by its trials at that size, 0 by the sizes either side, 0 by the path losing" "$tmp/r.err"
ok $? "every trial the search asks for is in the database: $(cat "$tmp/r.err")"
"$tune" compare-headers "$tmp/j/thresholds.h" "$tmp/r.h" --all-rows --require 100 >"$tmp/agree" 2>&1
ok $? "the replayed table is the job's header, point for point: $(sed -n 's/^agreement: //p' "$tmp/agree")"
"$tune" replay "${args[@]}" --db "$tmp/j/t.db" --run 2 2>/dev/null >"$tmp/r2.h"
cmp -s "$tmp/r.h" "$tmp/r2.h"
ok $? "the job of --run 2 (its sweep), to standard output, is the same table"

# Refusals: exit 2, a message, nothing written.
refused() { # refused NAME PATTERN replay-arguments...
  local name=$1 pattern=$2
  shift 2
  "$tune" replay "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  [ $rc -eq 2 ] && grep -q "$pattern" "$tmp/$name.err" && [ ! -s "$tmp/$name.out" ]
  ok $? "$name: refused (exit $rc): $(head -1 "$tmp/$name.err")"
}
refused options "no finished sweep of these options; its newest finished job was run with trials=12..160 (given: 3..160), seed=3 (given: 1)$" \
  "${args[@]/--seed/--trials}" --db "$tmp/j/t.db"
refused only-given "its newest finished job was run with no_incumbent=none (given: 1)$" "${args[@]}" \
  --no-incumbent --db "$tmp/j/t.db"
refused run "has no run 9 of a main job" "${args[@]}" --db "$tmp/j/t.db" --run 9
refused db "is the database" "${args[@]}" --db "$tmp/j/t.db" --header "$tmp/j/t.db"
refused folder "folder $tmp/nowhere" "${args[@]}" --db "$tmp/j/t.db" --header "$tmp/nowhere/t.h"
cp "$tmp/j/t.db" "$tmp/other.db"
sqlite3 "$tmp/other.db" "update runs set thresholds = 'run 7 gpu elsewhere' where kind = 'sweep';
  delete from header_rows where header_id in (select h.id from headers h join runs r on r.id = h.run_id where r.kind = 'before');
  delete from headers where run_id in (select id from runs where kind = 'before')"
refused table "ran with the table \"run 7 gpu elsewhere\", this tune" "${args[@]}" --db "$tmp/other.db"
printf '{90, 2, nvlink, all_reduce}\n' >"$tmp/bad.h"
refused incumbent "\-\-incumbent: " "${args[@]}" --db "$tmp/j/t.db" --incumbent "$tmp/bad.h"
refused both "\-\-incumbent and \-\-no-incumbent" "${args[@]}" --db "$tmp/j/t.db" --incumbent "$tmp/j/thresholds.h" --no-incumbent
test "$sum" = "$(cksum <"$tmp/j/t.db")"
ok $? "the database is byte for byte as it was"
tap_end
