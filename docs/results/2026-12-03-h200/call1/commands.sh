#!/usr/bin/env bash
# one-H200 call: dc_copy with a funnel shift for every relative alignment (new) against
# 5fe6c1d's dc_device.cuh (old: 2-byte accesses when src and dst differ by 2 mod 4), 2 virtual ranks:
# gpu tests, bench graph at --offset 0, 2, 4 (old and new alternating, twice), jobs A/B.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader > $R/env.txt
rm -rf /tmp/src-old; mkdir -p /tmp/src-old; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-old
cp scratch/old/dc_device.cuh /tmp/src-old/kernels/
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
( mkdir -p /tmp/b-old && cd /tmp/b-old && /tmp/src-old/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I/tmp/src-old/.devdeps/sq" SQLITE_LIBS="/tmp/src-old/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
  make -j8 -s kernels/bench_detcoll > $R/build-old.txt 2>&1 ) &
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-old/kernels/bench_detcoll 2>&1)"
run_t() { local t=$1; local s=$(date +%s); "/tmp/b/tests/$t" > $R/$t.log 2>&1; local rc=$?
  el "$t rc $rc: $(grep -c '^ok' $R/$t.log) ok, $(grep -c '^not ok' $R/$t.log) not ok, $(( $(date +%s) - s )) s"; }
for t in gpu_sanitize gpu_random gpu_graph gpu_ipc gpu_errors gpu_paths; do run_t $t; done
save
S=$(cat scratch/sizes2.txt)
for rep in 1 2; do
  for off in 0 2 4; do
    for v in old new; do
      bin=/tmp/b/kernels/bench_detcoll; [ $v != new ] && bin=/tmp/b-old/kernels/bench_detcoll
      for op in all_gather:auto,multi_block,fused,pipeline,direct all_reduce:auto,two_shot,pipeline,one_shot,direct reduce_scatter:auto,multi_block,direct; do
        $bin --world 2 --op ${op%%:*} --dtype bf16 --sizes $S --impl detcoll --paths ${op#*:} --mode graph --iters 100 --offset $off > $R/bench-${op%%:*}-o$off-$v-$rep.txt 2>&1
        rc=$?; [ $rc = 0 ] || el "bench ${op%%:*} o$off $v $rep rc $rc"
      done
    done
    el "bench offset $off rep $rep"
  done
  save
done
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B
job() { local n=$1; shift
  ( time env "$@" timeout 150 $T --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
[ $(( $(date +%s) - t0 )) -lt 420 ] || { el "no time for the jobs"; save; exit 0; }
job A X=1
[ $(( $(date +%s) - t0 )) -lt 500 ] && job B DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
$T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1
for f in A B; do cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done > $R/regret.txt
save
for f in A B; do [ -f /tmp/$f/tune.db ] && gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done
el done; save
