#!/usr/bin/env bash
# one-H200 call at 9f8bb7b (all_gather measured once, as bf16; a regret miss holds at two looks; the spinning
# barrier; the after pass up to 4x --max-trials): GPU suites but gpu_paths; test_launch and the tune GPU
# tests; an fp32-only eager job (F: its all_gather rows must be the ones the after pass uses); jobs A
# (fresh) and B (begun with A's header) on 2 virtual ranks and their agreement.
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
for t in test_launch gpu_sanitize gpu_random gpu_graph gpu_ipc gpu_errors gpu_auto gpu_table gpu_backend; do
  left 200 || break; run_t /tmp/b/tests/$t 120; done
for t in tests/gpu_tune.sh tests/gpu_first_call.sh; do left 240 || break; run_t $t 120; done
export TUNE_GIT_REV=$(cat scratch/rev)
job() { local n=$1 bin=$2 lim=$3; shift 3; mkdir -p /tmp/$n
  ( time env TUNE_BUILD_DIR=$(dirname $(dirname $bin)) "$@" timeout $lim $bin --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ${JOBOPTS:-} ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
if left 260; then
  JOBOPTS="--modes eager --dtypes fp32 --offsets 0 --no-reg" job F /tmp/b/src/tune 90 X=1
  gzip -c /tmp/F/tune.db > $OUT/F.db.gz; save
fi
if left 300; then
  job A /tmp/b/src/tune 150
  if left 430; then
    job B /tmp/b/src/tune 150 DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
    /tmp/b/src/tune compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1
  fi
  for f in A B; do [ -f /tmp/$f/thresholds.h ] && cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done > $R/regret.txt
  save
  for f in A B; do [ -f /tmp/$f/tune.db ] && gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done
fi
el done; save
