#!/usr/bin/env bash
# Prepared here before the call (scratch/ is carried with .devdeps):
#   scratch/var/old/kernels/{dc_device.cuh,dc_all_reduce.cu,dc_reduce_scatter.cu} = `git show cf22ba0:kernels/<file>`;
#   cp docs/results/2026-12-03-h200/call1/sizes.txt scratch/sizes.txt (25 sizes, 64 KiB .. 256 MiB); git rev-parse --short HEAD > scratch/rev
# Run: device run, kind nvidia-h200, carry .devdeps and scratch: bash scratch/<this file>
# Comparison here: python3 ../call3/cmpv.py BASE VARIANT... beside the unpacked bench-*.txt
# one-H200 call at 028b6cd (2116f2e's code, long lines wrapped), in order of need while device time lasts:
# the six GPU test suites; the tune GPU tests (gpu_tune.sh, gpu_first_call.sh, gpu_table, gpu_backend,
# gpu_auto); all_reduce and reduce_scatter at --offset 2, final against old (cf22ba0, before the shifted
# store), one round; jobs A (fresh) and B (begun with A's header) on 2 virtual ranks and their agreement.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
left() { [ $(( $(date +%s) - t0 )) -lt $1 ]; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
( v=old; rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
  cp -r scratch/var/$v/. /tmp/src-$v/
  mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
  make -j4 -s kernels/bench_detcoll > $R/build-$v.txt 2>&1 ) &
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-old/kernels/bench_detcoll)"
nvidia-smi > $R/env.txt 2>&1
run_t() { local t=$1 n=$(basename $1) s=$(date +%s); timeout $2 $t > $R/$n.log 2>&1; local rc=$?
  el "$n rc $rc: $(grep -c '^ok' $R/$n.log) ok, $(grep -c '^not ok' $R/$n.log) not ok, $(( $(date +%s) - s )) s"; save; }
for t in gpu_sanitize gpu_random gpu_graph gpu_ipc gpu_errors gpu_paths; do run_t /tmp/b/tests/$t 200; done
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
for t in tests/gpu_tune.sh tests/gpu_first_call.sh /tmp/b/tests/gpu_table /tmp/b/tests/gpu_backend /tmp/b/tests/gpu_auto; do
  left 300 || break; run_t $t 90; done
S=$(cat scratch/sizes.txt)
if left 330; then
  for v in old new; do
    bin=/tmp/b-$v/kernels/bench_detcoll; [ $v = new ] && bin=/tmp/b/kernels/bench_detcoll
    for op in all_reduce:one_shot,two_shot,pipeline reduce_scatter:multi_block; do
      $bin --world 2 --op ${op%%:*} --dtype bf16 --sizes $S --impl detcoll --paths ${op#*:} --mode graph --iters 100 --offset 2 > $R/bench-${op%%:*}-o2-$v-1.txt 2>&1
      rc=$?; [ $rc = 0 ] || el "bench ${op%%:*} o2 $v rc $rc"
    done
  done; el "bench"; save
fi
export TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B
job() { local n=$1; shift
  ( time env "$@" timeout 100 $T --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
if left 360; then
  job A X=1
  if left 420; then
    job B DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
    $T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1
  fi
  for f in A B; do [ -f /tmp/$f/thresholds.h ] && cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done > $R/regret.txt
  save
  for f in A B; do [ -f /tmp/$f/tune.db ] && gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done
fi
el done; save
