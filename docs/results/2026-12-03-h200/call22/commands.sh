#!/usr/bin/env bash
# one-H200 call at the commit in scratch/rev (dc_copy_w: 256-byte aligned dst for copies of 256 KiB or more) against
# old2 (a1bd196's dc_device.cuh): the GPU suites on the new full build; bench_detcoll on 2 virtual ranks, graph, detcoll
# only, checked: large (chunks 2^27 and 2^27 + 16, offset 0; 2^27 at offset 16) and small (1K..4M, every op and path),
# alternating old2 new, then reversed.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r3; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
( v=old2; rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
  cp -r scratch/var/$v/. /tmp/src-$v/
  mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
  make -j4 -s kernels/bench_detcoll > $R/build-$v.txt 2>&1; echo "old2 rc $?" >> $R/builds.txt ) &
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1; echo "new rc $?" >> $R/builds.txt; wait
el "builds: $(cat $R/builds.txt | tr '\n' ' ')"
nvidia-smi > $R/env.txt 2>&1
one() { local v=$1 r=$2 B=$3
  timeout 40 $B --world 2 --impl detcoll --mode graph --op all --sizes 268435456,268435488,134217728,134217744 > $R/$v-large-r$r.txt 2>&1
  timeout 30 $B --world 2 --impl detcoll --mode graph --op all --sizes 268435456,134217728 --offset 16 > $R/$v-large-off16-r$r.txt 2>&1
  timeout 60 $B --world 2 --impl detcoll --mode graph --op all --sizes 1K,16K,64K,256K,1M,4M > $R/$v-small-r$r.txt 2>&1
  el "$v round $r: $(cat $R/$v-*-r$r.txt | awk '$1 ~ /^all|^reduce/ && $NF != 0' | wc -l) rows with #wrong"; }
one old2 1 /tmp/b-old2/kernels/bench_detcoll; one new 1 /tmp/b/kernels/bench_detcoll; save
one new 2 /tmp/b/kernels/bench_detcoll; one old2 2 /tmp/b-old2/kernels/bench_detcoll; save
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
for t in gpu_paths gpu_random gpu_graph gpu_sanitize gpu_ipc gpu_auto gpu_errors; do s=$(date +%s)
  timeout 150 /tmp/b/tests/$t > $R/$t.log 2>&1; rc=$?
  el "$t rc $rc: $(grep -c '^ok' $R/$t.log) ok, $(grep -c '^not ok' $R/$t.log) not ok, $(( $(date +%s) - s )) s"; save; done
el done; save
