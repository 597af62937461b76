#!/usr/bin/env bash
# two-H200 call, part 1: build HEAD and a 512-thread-bound variant, bounds A/B (alternating), bench beside NCCL with --p2p,
# job A, job B begun with A's header (DC_THRESHOLDS_FILE), compare-headers, verify, compare.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { [ $(( 560 - ($(date +%s) - t0) )) -ge "$1" ]; }
mkdir -p /tmp/v && cp -r . /tmp/v/ 2>/dev/null
sed -i 's/#define DC_KERNEL_BOUNDS __launch_bounds__(1024)/#define DC_KERNEL_BOUNDS __launch_bounds__(512)/' /tmp/v/kernels/dc_device.cuh
grep -n "define DC_KERNEL_BOUNDS" /tmp/v/kernels/dc_device.cuh > $R/bounds-variant.txt
( cd /tmp/v && bash tests/device_build.sh /tmp/bv .devdeps > $R/build-v.txt 2>&1 ) &
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
wait; el build; tail -1 $R/build-v.txt
nvidia-smi topo -m > $R/topo.txt 2>&1
for round in 1 2; do for v in b bv; do
  echo "##### $v round $round" >> $R/bounds.txt
  timeout 60 /tmp/$v/kernels/bench_detcoll --world 2 --op all --impl detcoll --mode graph --paths pipeline,two_shot,one_shot,multi_block,fused --sizes 1M,16M,64M,256M >> $R/bounds.txt 2>&1 || echo "rc $?" >> $R/bounds.txt
done; el "bounds round $round"; done
B=/tmp/b/kernels/bench_detcoll
timeout 150 $B --world 2 --op all --sizes 1K,4K,8K,16K,64K,256K,1M,16M,64M,256M,512M --mode both --p2p > $R/bench.txt 2>&1 || echo "bench rc $?"
el bench; grep "^#   " $R/bench.txt | head -20
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/j1 /tmp/j2 /tmp/v1
if left 120; then ( time timeout 110 $T --gpus 2 --db /tmp/j1/tune.db --header /tmp/j1/thresholds.h --no-report ) > $R/A.log 2>&1; el "tune A rc $?"; tail -14 $R/A.log; fi
if left 100 && [ -f /tmp/j1/thresholds.h ]; then ( time DC_THRESHOLDS_FILE=/tmp/j1/thresholds.h timeout 95 $T --gpus 2 --db /tmp/j2/tune.db --header /tmp/j2/thresholds.h --no-report ) > $R/B.log 2>&1; el "tune B rc $?"; tail -4 $R/B.log
  $T compare-headers /tmp/j1/thresholds.h /tmp/j2/thresholds.h --db /tmp/j2/tune.db > $R/agree.txt 2>&1; tail -6 $R/agree.txt; fi
if left 60 && [ -f /tmp/j1/thresholds.h ]; then ( time timeout 55 $T verify --gpus 2 --header /tmp/j1/thresholds.h --db /tmp/v1/verify.db ) > $R/verify.txt 2>&1; el "verify rc $?"; tail -8 $R/verify.txt; fi
[ -f /tmp/j2/tune.db ] && { $T compare --db /tmp/j2/tune.db --baseline /tmp/j1/tune.db > $R/compare.txt 2>&1; tail -4 $R/compare.txt; }
for f in j1 j2; do [ -f /tmp/$f/thresholds.h ] && cp /tmp/$f/thresholds.h $R/thresholds-$f.h; [ -f /tmp/$f/tune.db ] && gzip -c /tmp/$f/tune.db > $R/$f.db.gz; done
el done
cd $R && tar czf $OUT/rx.tgz . && cd - >/dev/null
