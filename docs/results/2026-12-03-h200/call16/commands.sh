#!/usr/bin/env bash
# one-H200 call at efce6b1 (the session's final code): the six GPU test suites (gpu_paths included, as
# dc_comm.cu's auto lookup changed), test_launch, mpi_backend.sh, gpu_skew.sh and the tune GPU tests;
# then jobs A (fresh) and B (begun with A's header) on 2 virtual ranks, a second pair after call15's.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
left() { [ $(( $(date +%s) - t0 )) -lt $1 ]; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1
el "build: $(tail -1 $R/build.txt)"
nvidia-smi > $R/env.txt 2>&1; nproc >> $R/env.txt
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
run_t() { local t=$1 n=$(basename $1) s=$(date +%s); timeout $2 $t > $R/$n.log 2>&1; local rc=$?
  el "$n rc $rc: $(grep -c '^ok' $R/$n.log) ok, $(grep -c '^not ok' $R/$n.log) not ok, $(( $(date +%s) - s )) s"; save; }
for t in test_launch gpu_sanitize gpu_random gpu_graph gpu_ipc gpu_errors gpu_auto gpu_table gpu_backend gpu_paths; do
  left 250 || break; run_t /tmp/b/tests/$t 150; done
for t in tests/mpi_backend.sh tests/gpu_skew.sh tests/gpu_tune.sh tests/gpu_first_call.sh; do left 280 || break; run_t $t 120; done
export TUNE_GIT_REV=$(cat scratch/rev)
job() { local n=$1 bin=$2 lim=$3; shift 3; mkdir -p /tmp/$n
  ( time env TUNE_BUILD_DIR=$(dirname $(dirname $bin)) "$@" timeout $lim $bin --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
if left 330; then
  job A /tmp/b/src/tune 120
  if left 420; then
    job B /tmp/b/src/tune 120 DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
    /tmp/b/src/tune compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1
    /tmp/b/src/tune compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/A/tune.db > $R/agree-on-A.txt 2>&1
  fi
  for f in A B; do [ -f /tmp/$f/thresholds.h ] && cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done > $R/regret.txt
  for f in A B; do [ -f /tmp/$f/tune.db ] && /tmp/b/src/tune export --db /tmp/$f/tune.db --format csv --table regret --out $R/regret-$f.csv; done
fi
el done; save
