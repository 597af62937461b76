#!/usr/bin/env bash
# last one-H200 call at the final commit: build, the GPU tests most touched by the merges, a small paired job, verify.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD TUNE_GIT_REV=$(cat scratch/rev)
for t in gpu_backend gpu_graph gpu_table gpu_auto gpu_random; do timeout 40 /tmp/b/tests/$t > $R/$t.log 2>&1; el "$t rc=$? ok=$(grep -c '^ok' $R/$t.log) notok=$(grep -c '^not ok' $R/$t.log)"; done
timeout 30 tests/gpu_tune.sh > $R/gpu_tune.log 2>&1; el "gpu_tune.sh rc=$? ok=$(grep -c '^ok' $R/gpu_tune.log) notok=$(grep -c '^not ok' $R/gpu_tune.log)"
T=/tmp/b/src/tune; mkdir -p /tmp/p
timeout 40 $T --gpus 2 --virtual-ranks --ops all_reduce --dtypes bf16 --db /tmp/p/t.db --header /tmp/p/h.h --no-report > $R/job.log 2>&1; el "job rc $?"
timeout 20 $T verify --gpus 2 --virtual-ranks --ops all_reduce --dtypes bf16 --header /tmp/p/h.h --db /tmp/p/v.db > $R/verify.log 2>&1; el "verify rc $?"; tail -3 $R/verify.log
cd $R && tar czf $OUT/rl.tgz . && cd - >/dev/null
