#!/usr/bin/env bash
# Prepared here before the call (scratch/ is carried with .devdeps):
#   scratch/var/old/kernels/{dc_device.cuh,dc_all_reduce.cu,dc_reduce_scatter.cu} = `git show cf22ba0:kernels/<file>`,
#   scratch/var/head/kernels/... the same from 73c4a57;
#   cp docs/results/2026-12-03-h200/call1/sizes.txt scratch/sizes.txt (25 sizes, 64 KiB .. 256 MiB); git rev-parse --short HEAD > scratch/rev
# Run: device run, kind nvidia-h200, carry .devdeps and scratch: bash scratch/<this file>
# Comparison here: python3 ../call3/cmpv.py BASE VARIANT... beside the unpacked bench-*.txt
# one-H200 call: GPU tests of the working tree (reducing kernels split by recv alignment: DC_OUT_4 /
# DC_OUT_A16 / DC_OUT_2); all_reduce one_shot,two_shot,pipeline and reduce_scatter multi_block, 2
# virtual ranks, graph, bf16, --offset 2 and 4: new, head (73c4a57's dc_device.cuh, dc_all_reduce.cu,
# dc_reduce_scatter.cu) and old (cf22ba0's, before the shifted store), alternating, twice; then, time
# allowing, jobs A (fresh) and B (begun with A's header) on virtual ranks, and their agreement.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
for v in head old; do
  ( rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
    cp -r scratch/var/$v/. /tmp/src-$v/
    mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
      SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
    make -j5 -s kernels/bench_detcoll > $R/build-$v.txt 2>&1 ) &
done
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-*/kernels/bench_detcoll | tr '\n' ' ')"
nvidia-smi > $R/env.txt 2>&1
run_t() { local t=$1; local s=$(date +%s); timeout 240 "/tmp/b/tests/$t" > $R/$t.log 2>&1; local rc=$?
  el "$t rc $rc: $(grep -c '^ok' $R/$t.log) ok, $(grep -c '^not ok' $R/$t.log) not ok, $(( $(date +%s) - s )) s"; save; }
for t in gpu_sanitize gpu_random gpu_graph gpu_ipc gpu_errors gpu_paths; do run_t $t; done
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for v in head old new; do d=/tmp/b-$v; [ $v = new ] && d=/tmp/b
  for o in dc_all_reduce dc_reduce_scatter; do
    $CUOBJ -sass $d/kernels/$o.o 2>&1 | awk -v o=$o '/Function :/{f=$3; next} f!="" {n[f]++; if ($0 ~ /STL/) st[f]++; if ($0 ~ /LDL/) ld[f]++; if ($0 ~ /CALL/) c[f]++} END{for (f in n) printf "%s %s instr %d STL %d LDL %d CALL %d\n", o, f, n[f], st[f], ld[f], c[f]}'
  done | sort > $R/sass-$v.txt
done
save
S=$(cat scratch/sizes.txt)
for rep in 1 2; do
  order="old head new"; [ $rep = 2 ] && order="new head old"
  for off in 2 4; do for v in $order; do
    bin=/tmp/b-$v/kernels/bench_detcoll; [ $v = new ] && bin=/tmp/b/kernels/bench_detcoll
    for op in all_reduce:one_shot,two_shot,pipeline reduce_scatter:multi_block; do
      $bin --world 2 --op ${op%%:*} --dtype bf16 --sizes $S --impl detcoll --paths ${op#*:} --mode graph --iters 100 --offset $off > $R/bench-${op%%:*}-o$off-$v-$rep.txt 2>&1
      rc=$?; [ $rc = 0 ] || el "bench ${op%%:*} o$off $v $rep rc $rc"
    done
  done; el "bench offset $off rep $rep"; done
  save
done
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B
job() { local n=$1; shift
  ( time env "$@" timeout 100 $T --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
[ $(( $(date +%s) - t0 )) -lt 400 ] || { el "no time for the jobs"; save; exit 0; }
job A X=1
[ $(( $(date +%s) - t0 )) -lt 490 ] || { el "no time for job B"; save; exit 0; }
job B DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
$T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1
for f in A B; do cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done > $R/regret.txt
save
for f in A B; do [ -f /tmp/$f/tune.db ] && gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done
el done; save
