#!/usr/bin/env bash
# one-H200 call at scratch/rev: the GPU and MPI suites (device_run.sh, no bench); then the new library tests
# (gpu_ipc, gpu_table, gpu_errors) built against a111d45's host code of libdetcoll (dc_comm.cu, dc_direct.cu,
# in scratch/oldlib), where they must fail; then one main job J on 2 virtual ranks and tune replay of it; then
# two small jobs without --gpus.
. "$(dirname "$0")/call_lib.sh"
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
TUNE_NO_BENCH=1 timeout 330 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"; save
bash "$(dirname "$0")/callOld.sh" # the old host code with the new tests
export TUNE_GIT_REV=$(cat scratch/rev) TUNE_BUILD_DIR=/tmp/b
T=/tmp/b/src/tune; mkdir -p /tmp/J
( time timeout 120 $T --gpus 2 --virtual-ranks --db /tmp/J/tune.db --header /tmp/J/thresholds.h --no-report ) > $R/J.log 2>&1
el "job rc $?: $(grep real $R/J.log)"; grep "regret (" $R/J.log | tee -a $R/timeline.txt
cp /tmp/J/thresholds.h $R/thresholds-J.h
( time $T replay --db /tmp/J/tune.db --gpus 2 --virtual-ranks --header /tmp/J/replay.h ) > $R/replay.txt 2>&1; el "replay rc $?: $(grep real $R/replay.txt)"
$T compare-headers /tmp/J/thresholds.h /tmp/J/replay.h --db /tmp/J/tune.db > $R/replay-agree.txt 2>&1; el "compare-headers rc $?: $(grep -m1 agreement $R/replay-agree.txt)"
xz -c /tmp/J/tune.db > $R/J.db.xz
# Without --gpus (d2e36db: the worlds of the ranks found), on one GPU, with and without --virtual-ranks.
for v in plain --virtual-ranks; do o=; [ $v = plain ] || o=$v; mkdir -p /tmp/N$v
  ( timeout 60 $T $o --ops all_reduce --dtypes bf16 --modes graph --offsets 0 --max-bytes 64K --trials 4 --max-trials 8 \
    --db /tmp/N$v/t.db --header /tmp/N$v/t.h --no-report ) > $R/nogpus-$v.log 2>&1
  el "no --gpus ($v) rc $?: worlds $($T export --db /tmp/N$v/t.db --format csv --table configs 2>/dev/null | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "world") c = i } NR > 1 { print $c }' | sort -u | xargs)"; tail -2 $R/nogpus-$v.log | tee -a $R/timeline.txt; done
el done; save
