#!/usr/bin/env bash
# table_env.sh: DC_THRESHOLDS_FILE gives auto dispatch a table without a
# rebuild. The sim backend holds its table as a libdetcoll comm does, so a
# before pass under a table whose single_block segment ends at 1 KiB takes
# one_shot where the compiled-in table takes single_block; a file of one
# row leaves the header every compiled-in row; a malformed file is refused
# by name before anything is measured or written.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
args=(--backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes bf16 --modes graph --offsets 0 --no-reg
  --max-bytes 64K --trials 4 --no-report)
chosen() { # db: the paths auto dispatch took in the before pass, per size
  sqlite3 -batch -noheader "$1" "select c.bytes || ' ' || c.chosen_path from configs c join runs r on r.id = c.run_id
    where r.kind = 'before' and c.path = 'auto' order by c.bytes"
}

"$tune" table | sed 's/{16384, DC_PATH_SINGLE_BLOCK}/{1024, DC_PATH_SINGLE_BLOCK}/' >"$tmp/rows.h"
"$tune" "${args[@]}" --db "$tmp/a/t.db" >/dev/null 2>"$tmp/err"
ok $? "a job with the compiled-in table"
DC_THRESHOLDS_FILE=$tmp/rows.h "$tune" "${args[@]}" --db "$tmp/b/t.db" >/dev/null 2>"$tmp/err"
ok $? "a job with DC_THRESHOLDS_FILE"
chosen "$tmp/a/t.db" >"$tmp/a.txt"
chosen "$tmp/b/t.db" >"$tmp/b.txt"
grep -q "^8192 single_block$" "$tmp/a.txt"
ok $? "compiled-in table: single_block at 8 KiB"
grep -q "^8192 one_shot$" "$tmp/b.txt"
ok $? "the file's table: one_shot at 8 KiB"
test "$(head -n1 "$tmp/a.txt")" = "$(head -n1 "$tmp/b.txt")"
ok $? "and the same path below 1 KiB where the tables agree"
sqlite3 -batch -noheader "$tmp/b/t.db" "select thresholds from runs where kind = 'before'" |
  grep -q "^DC_THRESHOLDS_FILE $tmp/rows.h (table $("$tune" table --file "$tmp/rows.h" --hash))$"
ok $? "the before run records the file's table and its hash"

# A file of one row: the job's header still keeps every compiled-in row
# the job did not measure, not only the file's.
"$tune" table | grep -m1 '^  {' >"$tmp/one.h"
DC_THRESHOLDS_FILE=$tmp/one.h "$tune" "${args[@]}" --db "$tmp/d/t.db" >/dev/null 2>"$tmp/err"
ok $? "a job with a one-row DC_THRESHOLDS_FILE"
keys() { grep '^  {' | cut -d, -f1-8 | sort -u; }
missing=$(comm -23 <("$tune" table | keys) <(keys <"$tmp/d/thresholds.h") | wc -l)
ok $(( missing != 0 )) "its header keeps the key of every compiled-in row ($missing missing)"

printf '{90, 2, nvlink, all_reduce, bf16, align16, graph, 0, 2, {{4096, push}}}\n' >"$tmp/bad.h"
DC_THRESHOLDS_FILE=$tmp/bad.h "$tune" "${args[@]}" --db "$tmp/c/t.db" >/dev/null 2>"$tmp/err"
rc=$?
ok $(( rc == 0 )) "a malformed DC_THRESHOLDS_FILE fails the job (rc $rc)"
grep -q "DC_THRESHOLDS_FILE: $tmp/bad.h: line 1: expected" "$tmp/err"
ok $? "naming the variable, the file and the line: $(head -n1 "$tmp/err")"
test ! -e "$tmp/c"
ok $? "before anything is written"
DC_THRESHOLDS_FILE=$tmp/missing.h "$tune" "${args[@]}" --db "$tmp/c/t.db" >/dev/null 2>"$tmp/err"
ok $(( $? == 0 )) "a missing DC_THRESHOLDS_FILE fails the job: $(head -n1 "$tmp/err")"
tap_end
