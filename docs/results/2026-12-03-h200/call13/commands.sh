#!/usr/bin/env bash
# one-H200 call at 1c6735d (the spinning barrier, the after pass up to 4x --max-trials): build it and a copy with c111d37's
# pthread barrier (oldbar); test_launch, gpu_tune.sh, gpu_first_call.sh; eager-only jobs (fp32, offset 0, no reg) oldbar, new, new, oldbar; jobs A (fresh) and B
# (begun with A's header) on 2 virtual ranks with the new barrier and their agreement.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
left() { [ $(( $(date +%s) - t0 )) -lt $1 ]; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
( v=oldbar; rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
  cp -r scratch/var/$v/. /tmp/src-$v/
  mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
  make -j6 -s all > $R/build-$v.txt 2>&1 ) &
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-oldbar/src/tune)"
nvidia-smi > $R/env.txt 2>&1; nproc >> $R/env.txt
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
run_t() { local t=$1 n=$(basename $1) s=$(date +%s); timeout $2 $t > $R/$n.log 2>&1; local rc=$?
  el "$n rc $rc: $(grep -c '^ok' $R/$n.log) ok, $(grep -c '^not ok' $R/$n.log) not ok, $(( $(date +%s) - s )) s"; save; }
for t in /tmp/b/tests/test_launch tests/gpu_tune.sh tests/gpu_first_call.sh; do
  left 240 || break; run_t $t 120; done
export TUNE_GIT_1c6735d=$(cat scratch/rev)
job() { local n=$1 bin=$2 lim=$3; shift 3; mkdir -p /tmp/$n
  ( time env TUNE_BUILD_DIR=$(dirname $(dirname $bin)) "$@" timeout $lim $bin --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ${JOBOPTS:-} ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
if left 200; then
  export JOBOPTS="--modes eager --dtypes fp32 --offsets 0 --no-reg"
  job E1-oldbar /tmp/b-oldbar/src/tune 90 X=1; job E2-new /tmp/b/src/tune 90 X=1
  job E3-new /tmp/b/src/tune 90 X=1; job E4-oldbar /tmp/b-oldbar/src/tune 90 X=1
  for n in E1-oldbar E2-new E3-new E4-oldbar; do gzip -c /tmp/$n/tune.db > $OUT/$n.db.gz; done; save
  unset JOBOPTS
fi
if left 330; then
  job A /tmp/b/src/tune 150
  if left 450; then
    job B /tmp/b/src/tune 150 DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
    /tmp/b/src/tune compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1
  fi
  for f in A B; do [ -f /tmp/$f/thresholds.h ] && cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done > $R/regret.txt
  save
  for f in A B; do [ -f /tmp/$f/tune.db ] && gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done
fi
el done; save
