#!/usr/bin/env bash
# wrong_results.sh: a main job in which a path returned wrong results fails
# (exit 1, the count and the first named), as verify and compare fail, where
# it used to exit 0 with only warnings in its log. Everything it measured is
# still stored, the header written, and no row of it takes the broken path.
# A fleet or merge with a node's wrong results exits 3. The sim makes a
# path wrong with TUNE_SIM_PATH's OP:PATH!.
set -u
. "$(dirname "$0")/tap.sh"
cd "$tmp" || exit 1
job() {
  "$tune" --backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes graph --offsets 0 \
    --trials 3 --max-trials 3 --no-report "$@"
}

TUNE_SIM_PATH='all_reduce:one_shot!' job --db w/t.db >out 2>err
rc=$?
ok $(( rc != 1 )) "a job with wrong results exits 1 (got $rc)"
grep -q 'configurations of this job returned wrong results, the first: .* world 2, .* bytes per rank' err
ok $? "it says so, naming the first ($(grep -m1 'wrong results' err | cut -c1-160))"
n=$(sqlite3 w/t.db "select count(*) from configs where wrong_elems > 0")
grep -q "error: $n configurations" err
ok $? "with their number ($n in the database)"
ok $(( $(sqlite3 w/t.db "select count(*) from runs where finished_at is null") != 0 )) \
  "every run is finished: all that was measured is stored"
rows=$(grep -c '{90, 2, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_FP32' w/thresholds.h)
ok $(( rows == 0 )) "the header is written, with its measured rows ($rows)"
bad=$(grep '{90, 2, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_FP32' w/thresholds.h | grep -c ONE_SHOT)
ok $(( bad != 0 )) "no measured row takes the wrong path ($bad do)"

job --db ok/t.db >out 2>err
ok $? "the same job without the fault exits 0"
good=$(grep '{90, 2, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_FP32' ok/thresholds.h | grep -c ONE_SHOT)
ok $(( good == 0 )) "and takes that path in $good rows (so the check above can fail)"

# A fleet (merged here from the two jobs as nodes) fails its gate on the
# node with wrong results, naming it: the node's job does not fail there.
merge() { "$tune" merge --backend sim --gpus 2 --launcher threads --worlds 2 --ops all_reduce --dtypes fp32 \
  --modes graph --offsets 0 --trials 3 --max-trials 3 --no-report "$@"; }
mkdir -p f && cp w/t.db f/bad.db && cp ok/t.db f/good.db && cp ok/t.db f/good2.db
merge --db f/w.db f/bad.db f/good.db >out 2>err
ok $(( $? != 3 )) "a fleet with a node's wrong results exits 3, as for an outlier$(head -n1 err | sed 's/^/: /')"
grep -q '^node 0 (bad) returned wrong results in [0-9]* configurations, the first: .* world 2, ' out
ok $? "it names the node ($(grep -m1 'wrong results' out | cut -c1-100))"
grep -q ' 1 with wrong results;' out
ok $? "and counts it in its summary ($(grep -m1 '^fleet: ' out))"
merge --db f/ok.db f/good.db f/good2.db >out 2>err
ok $? "without wrong results the same fleet exits 0 ($(tail -n1 err))"

# tune skew with a path that returns wrong results exited 0, with a log
# line only (a review): it fails, naming the first, everything stored.
TUNE_SIM_PATH='all_reduce:one_shot!' "$tune" skew --backend sim --trials 3 --warmup 0 --mode eager \
  --skew-delays-us 0 50 --no-report --db s/t.db --path one_shot >out 2>err
rc=$?
[ $rc -eq 1 ] && grep -q "configurations of this run returned wrong results, the first: detcoll all_reduce eager" err &&
  [ "$(sqlite3 s/t.db "select count(*) from runs where kind = 'skew' and finished_at is not null")" = 1 ]
ok $? "skew with wrong results exits 1, saying so, its run stored (rc $rc)"
# verify: the path with wrong results is named, loses every comparison
# (it was taken as the best path), and the summary counts it apart from
# regret (a review: sizes with wrong results were counted as regret).
job --db v/t.db >/dev/null 2>&1
TUNE_SIM_PATH='all_reduce:one_shot!' "$tune" verify --backend sim --gpus 2 --worlds 2 --ops all_reduce \
  --dtypes fp32 --modes graph --offsets 0 --trials 5 --max-trials 10 --no-reg --header v/thresholds.h --db v/v.db \
  >out 2>err
rc=$?
[ $rc -eq 1 ] && grep -q "WRONG RESULTS: one_shot" out && grep -q "sizes where a path returned wrong results" out
ok $? "verify with a wrong path exits 1, naming it (rc $rc): $(grep -m1 'wrong results' out)"
best=$(sqlite3 v/v.db "select count(*) from regret where best_path = 'one_shot'")
ok $(( best != 0 )) "no regret row takes the wrong path as the best ($best do)"

TUNE_SIM_PATH='all_reduce:two_shot!x' job --db bad/t.db >out 2>err
ok $(( $? != 2 )) "a malformed OP:PATH! is refused (exit 2)"
grep -q "TUNE_SIM_PATH: 'all_reduce:two_shot!x'" err
ok $? "naming it"
ok $(( $(ls -A bad 2>/dev/null | wc -l) != 0 )) "before anything is written"
tap_end
