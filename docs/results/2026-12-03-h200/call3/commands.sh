#!/usr/bin/env bash
# one-H200 call (call3; call2 was the same without the SASS counts, and v2/v3 failed to link there): four dc_device.cuh variants (scratch/var/*) side by side, 2 virtual ranks, graph,
# bf16, --offset 0, 2, 4: old (5fe6c1d), v1 (304782c: four noinline shifts with a byte argument),
# v2 (one noinline copy for every unaligned case), v3 (noinline word shifts as before + one for bytes).
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
V="old v1 v2 v3"
for v in $V; do
  ( rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
    cp scratch/var/$v/dc_device.cuh /tmp/src-$v/kernels/
    mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
      SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
    make -j4 -s kernels/bench_detcoll > $R/build-$v.txt 2>&1 ) &
done
wait
el "builds: $(ls /tmp/b-*/kernels/bench_detcoll | tr '\n' ' ')"
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for v in $V; do
  for o in dc_all_gather dc_all_reduce dc_pipe dc_reduce_scatter; do
    $CUOBJ -sass /tmp/b-$v/kernels/$o.o 2>&1 | awk -v o=$o '/Function :/{f=$3; next} f!="" {n[f]++; if ($0 ~ /STL/) st[f]++; if ($0 ~ /LDL/) ld[f]++; if ($0 ~ /CALL/) c[f]++} END{for (f in n) printf "%s %s instr %d STL %d LDL %d CALL %d\n", o, f, n[f], st[f], ld[f], c[f]}'
  done | sort > $R/sass-$v.txt
done
el "sass: $(wc -l $R/sass-*.txt | tail -1)"
S=$(cat scratch/sizes2.txt)
for rep in 1 2; do
  order=$V; [ $rep = 2 ] && order="v3 v2 v1 old"
  for off in 0 2 4; do
    for v in $order; do
      for op in all_gather:fused,multi_block,pipeline all_reduce:two_shot,pipeline,one_shot reduce_scatter:multi_block; do
        /tmp/b-$v/kernels/bench_detcoll --world 2 --op ${op%%:*} --dtype bf16 --sizes $S --impl detcoll --paths ${op#*:} --mode graph --iters 100 --offset $off > $R/bench-${op%%:*}-o$off-$v-$rep.txt 2>&1
        rc=$?; [ $rc = 0 ] || el "bench ${op%%:*} o$off $v $rep rc $rc"
      done
    done
    el "bench offset $off rep $rep"
  done
  save
done
el done; save
