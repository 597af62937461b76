#!/usr/bin/env bash
# one-H200 call at e103c4c (the threads launcher's spinning barrier): build it and a copy with HEAD~1's
# pthread barrier (oldbar); test_launch and the tune GPU tests on the threads launcher; mpi_backend.sh and
# gpu_skew.sh; eager-only jobs (fp32, offset 0, no reg) oldbar, new, new, oldbar; jobs A (fresh) and B
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
  make -j6 -s src/tune > $R/build-$v.txt 2>&1 ) &
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-oldbar/src/tune)"
nvidia-smi > $R/env.txt 2>&1; nproc >> $R/env.txt
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
run_t() { local t=$1 n=$(basename $1) s=$(date +%s); timeout $2 $t > $R/$n.log 2>&1; local rc=$?
  el "$n rc $rc: $(grep -c '^ok' $R/$n.log) ok, $(grep -c '^not ok' $R/$n.log) not ok, $(( $(date +%s) - s )) s"; save; }
for t in /tmp/b/tests/test_launch /tmp/b/tests/gpu_backend /tmp/b/tests/gpu_auto tests/gpu_tune.sh tests/mpi_backend.sh tests/gpu_skew.sh; do
  left 240 || break; run_t $t 120; done
export TUNE_GIT_REV=$(cat scratch/rev)
job() { local n=$1 bin=$2 lim=$3; shift 3; mkdir -p /tmp/$n
  ( time env TUNE_BUILD_DIR=$(dirname $(dirname $bin)) "$@" timeout $lim $bin --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
if left 300; then
  E="--modes eager --dtypes fp32 --offsets 0 --no-reg"
  job E1-oldbar /tmp/b-oldbar/src/tune 60 $E; job E2-new /tmp/b/src/tune 60 $E
  job E3-new /tmp/b/src/tune 60 $E; job E4-oldbar /tmp/b-oldbar/src/tune 60 $E
  for n in E1-oldbar E2-new E3-new E4-oldbar; do gzip -c /tmp/$n/tune.db > $OUT/$n.db.gz; done; save
fi
if left 380; then
  job A /tmp/b/src/tune 100
  if left 470; then
    job B /tmp/b/src/tune 100 DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
    /tmp/b/src/tune compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1
  fi
  for f in A B; do [ -f /tmp/$f/thresholds.h ] && cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done > $R/regret.txt
  save
  for f in A B; do [ -f /tmp/$f/tune.db ] && gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done
fi
el done; save
