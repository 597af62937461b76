#!/usr/bin/env bash
# world_sizes.sh: the worlds the main job measures by default for a --gpus
# that is none of 2, 4, 8 (3, 6): 2, 4, 8 up to N and N itself, so that the
# whole machine's world has rows of its own (auto dispatch of a world with
# none takes the largest smaller world's, dc_table_find, measured on fewer
# GPUs); --worlds keeps exactly the worlds it lists.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
quick=(--backend sim --ops all_reduce --dtypes bf16 --modes graph --offsets 0 --no-reg --max-bytes 64K
  --trials 6 --seed 3 --no-report)

# job NAME ARGS...: the job into $tmp/NAME, its worlds (ascending, comma-separated) on stdout.
job() {
  local name=$1
  shift
  mkdir -p "$tmp/$name"
  "$tune" "${quick[@]}" --db "$tmp/$name/t.db" "$@" >"$tmp/$name/out" 2>"$tmp/$name/err" ||
    { sed 's/^/# /' "$tmp/$name/err" | tail -5; return 1; }
  sqlite3 -batch -noheader "$tmp/$name/t.db" \
    "select group_concat(world) from (select distinct world from configs order by world)"
}

for case in "3 2,3" "5 2,4,5" "6 2,4,6" "7 2,4,7" "8 2,4,8" "1 1"; do
  set -- $case
  got=$(job g$1 --gpus "$1")
  ok $(( $? != 0 )) "--gpus $1: the job exits 0"
  test "$got" = "$2"
  ok $? "--gpus $1 measures worlds $2 (got $got)"
done
n=$(grep -c "^  {90, 6, " "$tmp/g6/thresholds.h")
ok $(( n == 0 )) "--gpus 6: the header has rows of world 6 ($n)"
# Every command that takes --gpus says so (fleet's and merge's said
# "2, 4, 8 up to N" though their nodes measure N too).
for c in run verify replay fleet merge; do
  "$tune" "$c" --help 2>&1 | sed -n '/^  --gpus/,/^  --[a-fh-z]/p' | tr -s ' \n' ' ' | grep -q '2, 4, 8 up to N, and N'
  ok $? "tune $c --help: world sizes 2, 4, 8 up to N, and N"
done
got=$(job given --gpus 6 --worlds 4,2)
ok $(( $? != 0 )) "--gpus 6 --worlds 4,2: the job exits 0"
test "$got" = "2,4"
ok $? "--worlds 4,2 measures worlds 2,4 alone (got $got)"
tap_end
