#!/usr/bin/env bash
# one-H200 call at scratch/rev: the main job at world 8 on 8 virtual ranks (bf16; all_gather, all_reduce,
# reduce_scatter; eager and graph; offsets 0 and 4; registered buffers), tune replay of it, and tune verify of
# its header at world 8: the 8-GPU job's tuner and table at world 8, rehearsed on one GPU.
. "$(dirname "$0")/call_lib.sh"
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD TUNE_GIT_REV=$(cat scratch/rev) TUNE_BUILD_DIR=/tmp/b
T=/tmp/b/src/tune; mkdir -p /tmp/W
A=(--gpus 8 --virtual-ranks --worlds 8 --dtypes bf16)
( time timeout 400 $T "${A[@]}" --db /tmp/W/tune.db --header /tmp/W/thresholds.h --no-report ) > $R/W.log 2>&1
el "job rc $?: $(grep real $R/W.log)"; grep "regret (" $R/W.log | tee -a $R/timeline.txt; save
[ -f /tmp/W/thresholds.h ] && cp /tmp/W/thresholds.h $R/thresholds-W.h
$T export --db /tmp/W/tune.db --format csv --table regret --out $R/regret-W.csv
( time $T replay "${A[@]}" --db /tmp/W/tune.db --header /tmp/W/replay.h ) > $R/replay.txt 2>&1; el "replay rc $?: $(grep real $R/replay.txt)"
$T compare-headers /tmp/W/thresholds.h /tmp/W/replay.h > $R/replay-agree.txt 2>&1; el "compare-headers rc $?: $(grep -m1 agreement $R/replay-agree.txt)"
if left 60; then ( time timeout $(( 575 - ($(date +%s) - t0) - 5 )) $T verify "${A[@]}" --header /tmp/W/thresholds.h --db /tmp/W/verify.db ) > $R/verify.txt 2>&1; el "verify rc $?: $(grep real $R/verify.txt); $(grep -m1 'sizes with regret\|every size within' $R/verify.txt)"; fi
el done; save
