#!/usr/bin/env bash
# gpu_first_call.sh: the first calls of fresh communicators under the threads
# launcher (one host thread per rank), in fresh processes: each run is a small
# main job with 8 virtual ranks on GPU 0 (worlds 1 with NCCL beside, 2, 4 and 8; eager and graph),
# and must finish without a watchdog timeout. TUNE_FIRST_CALL_RUNS sets the
# number of runs (default 3). A last run makes rank 1 miss a call on purpose
# and checks that the job measures again once and finishes. Skips (77)
# without a GPU.
set -u
tune=${TUNE_BIN:?TUNE_BIN is set by the harness}
ls /dev/nvidia[0-9]* >/dev/null 2>&1 || { echo "1..0 # SKIP no GPU"; exit 77; }
runs=${TUNE_FIRST_CALL_RUNS:-3}
case $runs in '' | *[!0-9]*) echo "TUNE_FIRST_CALL_RUNS=$runs: not a number" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A hang shows within 2 s instead of the default 5.
export DC_TIMEOUT_NS=${DC_TIMEOUT_NS:-2000000000}
n=0 failed=0
# result PASSED MESSAGE: one TAP line; the job's output as comments when it failed.
result() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    sed 's/^/# /' "$tmp/out"
    failed=$((failed + 1))
  fi
}
small=(--virtual-ranks --gpus 8 --dtypes bf16 --offsets 0 --trials 4 --max-trials 8 --warmup 1 --no-report)
for i in $(seq "$runs"); do
  start=$(date +%s%N)
  "$tune" "${small[@]}" --worlds 1,2,4,8 --ops all_gather,all_reduce --min-bytes 1K --max-bytes 16K \
    --seed "$i" --db "$tmp/$i.db" --header "$tmp/$i.h" >"$tmp/out" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  [ $rc -eq 0 ] && ! grep -q watchdog "$tmp/out"
  result $? "run $i: fresh communicators, exit $rc, no watchdog timeout ($secs s)"
done
# The retry: rank 1 skips its first call (TUNE_MISSING_RANK), its peers'
# watchdogs fire, and the job measures that configuration again on fresh
# communicators, once, and finishes.
TUNE_MISSING_RANK=1 DC_TIMEOUT_NS=1000000000 "$tune" "${small[@]}" --worlds 2,4 --ops all_reduce --modes eager \
  --min-bytes 1K --max-bytes 4K --db "$tmp/retry.db" --header "$tmp/retry.h" >"$tmp/out" 2>&1
rc=$?
retries=$(grep -c "measuring again once on fresh communicators" "$tmp/out")
[ $rc -eq 0 ] && [ "$retries" -eq 1 ]
result $? "a missing rank's watchdog timeout is measured again once (exit $rc, $retries retries; want 0 and 1)"
echo "1..$n"
[ "$failed" -eq 0 ]
