#!/usr/bin/env bash
# one-H200 call at b42dec4 (dc_copy: one noinline copy for every unaligned case): gpu tests first;
# then SASS of dc_ag (old, new) and all_gather fused/multi_block at offset 0, old (5fe6c1d's
# dc_device.cuh) / new / v2w (new with old's inlined 2- and 1-byte copies back for b not 0 mod 4).
# Before the call, here (scratch/ is carried with .devdeps):
#   mkdir -p scratch/var/old scratch/var/v2w
#   git show 5fe6c1d:kernels/dc_device.cuh > scratch/var/old/dc_device.cuh
#   git show b42dec4:kernels/dc_device.cuh > scratch/var/v2w/dc_device.cuh
#   patch scratch/var/v2w/dc_device.cuh < docs/results/2026-12-03-h200/call4-not-run/var/v2w.diff
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
for v in old v2w; do
  ( rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
    cp scratch/var/$v/dc_device.cuh /tmp/src-$v/kernels/
    mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
      SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
    make -j4 -s kernels/bench_detcoll > $R/build-$v.txt 2>&1 ) &
done
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-*/kernels/bench_detcoll | tr '\n' ' ')"
run_t() { local t=$1; local s=$(date +%s); "/tmp/b/tests/$t" > $R/$t.log 2>&1; local rc=$?
  el "$t rc $rc: $(grep -c '^ok' $R/$t.log) ok, $(grep -c '^not ok' $R/$t.log) not ok, $(( $(date +%s) - s )) s"; save; }
for t in gpu_sanitize gpu_random gpu_graph gpu_ipc gpu_errors gpu_paths; do run_t $t; done
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for v in old new v2w; do d=/tmp/b-$v; [ $v = new ] && d=/tmp/b; $CUOBJ -sass $d/kernels/dc_all_gather.o > $R/sass-dc_all_gather-$v.txt 2>&1; done
save
S=65536,262144,1048576,2965760
for rep in 1 2; do for v in old new v2w; do
  bin=/tmp/b-$v/kernels/bench_detcoll; [ $v = new ] && bin=/tmp/b/kernels/bench_detcoll
  $bin --world 2 --op all_gather --sizes $S --impl detcoll --paths fused,multi_block --mode graph > $R/ag-$v-$rep.txt 2>&1
done; done
el done; save
