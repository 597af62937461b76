#!/usr/bin/env bash
# Prepared here before the call (scratch/ is carried with .devdeps; var/<v> holds files copied over the tree):
#   for f in dc_device.cuh dc_all_gather.cu; do git show 5fe6c1d:kernels/$f > scratch/var/old/kernels/$f; git show 80e465b:kernels/$f > scratch/var/head/kernels/$f; done
#   cp docs/results/2026-12-03-h200/call1/sizes.txt scratch/sizes.txt
# Run: device run, kind nvidia-h200, carry .devdeps and scratch: bash scratch/callA.sh
# one-H200 call: GPU tests of the working tree (all_gather kernels specialized for aligned calls),
# then all_gather fused/multi_block/pipeline, 2 virtual ranks, graph, bf16, --offset 0 and 4:
# new (working tree), head (80e465b's dc_device.cuh + dc_all_gather.cu), old (5fe6c1d's),
# alternating, twice; SASS counts of dc_all_gather for each.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
for v in old head; do
  ( rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
    cp -r scratch/var/$v/. /tmp/src-$v/
    mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
      SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
    make -j6 -s kernels/bench_detcoll > $R/build-$v.txt 2>&1 ) &
done
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-*/kernels/bench_detcoll | tr '\n' ' ')"
nvidia-smi > $R/env.txt 2>&1
run_t() { local t=$1; local s=$(date +%s); "/tmp/b/tests/$t" > $R/$t.log 2>&1; local rc=$?
  el "$t rc $rc: $(grep -c '^ok' $R/$t.log) ok, $(grep -c '^not ok' $R/$t.log) not ok, $(( $(date +%s) - s )) s"; save; }
for t in gpu_sanitize gpu_random gpu_graph gpu_ipc gpu_errors gpu_paths; do run_t $t; done
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for v in old head new; do d=/tmp/b-$v; [ $v = new ] && d=/tmp/b
  $CUOBJ -sass $d/kernels/dc_all_gather.o 2>&1 | awk '/Function :/{f=$3; next} f!="" {n[f]++; if ($0 ~ /STL/) st[f]++; if ($0 ~ /LDL/) ld[f]++; if ($0 ~ /CALL/) c[f]++} END{for (f in n) printf "%s instr %d STL %d LDL %d CALL %d\n", f, n[f], st[f], ld[f], c[f]}' | sort > $R/sass-$v.txt
done
save
S=$(cat scratch/sizes.txt)
for rep in 1 2; do
  order="old head new"; [ $rep = 2 ] && order="new head old"
  for off in 0 4; do for v in $order; do
    bin=/tmp/b-$v/kernels/bench_detcoll; [ $v = new ] && bin=/tmp/b/kernels/bench_detcoll
    $bin --world 2 --op all_gather --dtype bf16 --sizes $S --impl detcoll --paths fused,multi_block,pipeline --mode graph --iters 100 --offset $off > $R/bench-all_gather-o$off-$v-$rep.txt 2>&1
    rc=$?; [ $rc = 0 ] || el "bench o$off $v $rep rc $rc"
  done; el "bench offset $off rep $rep"; done
  save
done
el done; save
