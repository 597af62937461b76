#!/usr/bin/env bash
# one-H200 call at a1bd196's kernels: dc_copy_w's head aligning dst to 32 or 256 bytes (a32, a256) against HEAD (src to
# 16 bytes): bench_detcoll on 2 virtual ranks, graph, detcoll only, all_gather fused/pipeline/multi_block/direct at chunks
# 2^27 + 0/16/64 (offset 0) and 2^27 at offset 16, alternating head a32 a256 then reversed; then the GPU suites that
# check every path's output (gpu_paths, gpu_random, gpu_graph, gpu_sanitize, gpu_ipc) on a256's full build.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r2; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
vb() { local v=$1 j=$2 tgt=$3; rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
  [ $v = head ] || cp -r scratch/var/$v/. /tmp/src-$v/
  mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
  make -j$j -s $tgt > $R/build-$v.txt 2>&1; echo "$v rc $?" >> $R/builds.txt; }
vb head 3 kernels/bench_detcoll & vb a32 3 kernels/bench_detcoll & vb a256 10 "all check TESTS=" & wait
el "builds: $(cat $R/builds.txt | tr '\n' ' ')"
AG=268435456; for k in 16 64; do AG=$AG,$((268435456 + 2 * k)); done
one() { local v=$1 r=$2 B=/tmp/b-$1/kernels/bench_detcoll
  timeout 40 $B --world 2 --impl detcoll --mode graph --paths fused,pipeline,multi_block,direct --op all_gather --sizes $AG > $R/$v-ag-r$r.txt 2>&1
  timeout 30 $B --world 2 --impl detcoll --mode graph --paths fused,pipeline,multi_block,direct --op all_gather --sizes 268435456 --offset 16 > $R/$v-ag-off16-r$r.txt 2>&1
  el "$v round $r"; }
for v in head a32 a256; do one $v 1; done; save
for v in a256 a32 head; do one $v 2; done; save
export TUNE_BIN=/tmp/b-a256/src/tune TUNE_SRCDIR=/tmp/src-a256
for t in gpu_paths gpu_random gpu_graph gpu_sanitize gpu_ipc; do s=$(date +%s)
  timeout 150 /tmp/b-a256/tests/$t > $R/a256-$t.log 2>&1; rc=$?
  el "a256 $t rc $rc: $(grep -c '^ok' $R/a256-$t.log) ok, $(grep -c '^not ok' $R/a256-$t.log) not ok, $(( $(date +%s) - s )) s"; save; done
el done; save
