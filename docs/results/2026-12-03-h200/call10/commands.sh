#!/usr/bin/env bash
# Prepared here before the call (scratch/ is carried with .devdeps):
#   scratch/var/old/kernels/{dc_device.cuh,dc_all_reduce.cu,dc_reduce_scatter.cu} = `git show cf22ba0:kernels/<file>`,
#   scratch/var/head/kernels/... the same from 73c4a57;
#   scratch/var/{brk,u2,u1}/kernels/dc_device.cuh = 9cd0fb3's with the changes in variants.diff;
#   cp docs/results/2026-12-03-h200/call1/sizes.txt scratch/sizes.txt (25 sizes, 64 KiB .. 256 MiB); git rev-parse --short HEAD > scratch/rev
# Run: device run, kind nvidia-h200, carry .devdeps and scratch: bash scratch/<this file>
# Comparison here: python3 ../call3/cmpv.py BASE VARIANT... beside the unpacked bench-*.txt
# one-H200 call: dc_reduce_shifted variants at --offset 2 (bf16 recv 2 bytes past a 4-byte boundary), 2
# virtual ranks, graph: new (9cd0fb3), brk (new + a warp-uniform break once the warp is past the end),
# u2 (brk with half the vectors in flight), u1 (brk with one vector a lane), head (73c4a57), old (cf22ba0);
# all_reduce one_shot,two_shot,pipeline and reduce_scatter multi_block, twice, alternating order.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
V="head old brk u2 u1"
for v in new $V; do
  ( rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
    [ $v = new ] || cp -r scratch/var/$v/. /tmp/src-$v/
    mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
      SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
    make -j3 -s kernels/bench_detcoll > $R/build-$v.txt 2>&1 ) &
done
wait
el "builds: $(ls /tmp/b-*/kernels/bench_detcoll | tr '\n' ' ')"
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for v in new $V; do
  for o in dc_all_reduce dc_reduce_scatter dc_pipe; do
    $CUOBJ -sass /tmp/b-$v/kernels/$o.o 2>&1 | awk -v o=$o '/Function :/{f=$3; next} f!="" {n[f]++; if ($0 ~ /STL/) st[f]++; if ($0 ~ /LDL/) ld[f]++; if ($0 ~ /CALL/) c[f]++} END{for (f in n) printf "%s %s instr %d STL %d LDL %d CALL %d\n", o, f, n[f], st[f], ld[f], c[f]}'
  done | sort > $R/sass-$v.txt
done
save
S=$(cat scratch/sizes.txt)
for rep in 1 2; do
  order="old head new brk u2 u1"; [ $rep = 2 ] && order="u1 u2 brk new head old"
  for v in $order; do
    for op in all_reduce:one_shot,two_shot,pipeline reduce_scatter:multi_block; do
      /tmp/b-$v/kernels/bench_detcoll --world 2 --op ${op%%:*} --dtype bf16 --sizes $S --impl detcoll --paths ${op#*:} --mode graph --iters 100 --offset 2 > $R/bench-${op%%:*}-o2-$v-$rep.txt 2>&1
      rc=$?; [ $rc = 0 ] || el "bench ${op%%:*} $v $rep rc $rc"
    done
  done; el "bench rep $rep"; save
done
el done; save
