#!/usr/bin/env bash
# one-H200 call: two libraries side by side on 2 virtual ranks: old (370b57c) and
# new (HEAD: copy, even pipeline pieces, parts at 512-byte multiples). gpu tests, bench graph 64K..256M, jobs A/B.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
tar xJf .devdeps/boot.tar.xz
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader > $R/env.txt
for v in old; do rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v; done
cp scratch/old/dc_comm.cu scratch/old/dc_device.cuh /tmp/src-old/kernels/
cfg() { mkdir -p $2 && cd $2 && $1/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I/tmp/src-old/.devdeps/sq" SQLITE_LIBS="/tmp/src-old/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1; cd - >/dev/null; }
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
for v in old; do ( cfg /tmp/src-$v /tmp/b-$v && make -C /tmp/b-$v -j5 -s kernels/bench_detcoll > $R/build-$v.txt 2>&1 ) & done
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-old/kernels/bench_detcoll 2>&1 | tr '\n' ' ')"
S=$(cat scratch/sizes4.txt)
for rep in 1 2; do
  for v in old new; do
    bin=/tmp/b/kernels/bench_detcoll; [ $v != new ] && bin=/tmp/b-$v/kernels/bench_detcoll
    for op in all_gather:multi_block,fused,pipeline,direct all_reduce:two_shot,pipeline,direct,one_shot reduce_scatter:multi_block,direct; do
      $bin --world 2 --op ${op%%:*} --dtype bf16 --sizes $S --impl detcoll --paths ${op#*:} --mode graph --iters 100 > $R/bench-${op%%:*}-$v-$rep.txt 2>&1
      el "bench ${op%%:*} $v $rep rc $?"
    done
  done
done
( cd $R && tar czf $OUT/r.tgz . )
run_t() { local t=$1; local s=$(date +%s); "/tmp/b/tests/$t" > $R/$t.log 2>&1; local rc=$?
  el "$t rc $rc: $(grep -c '^ok' $R/$t.log) ok, $(grep -c '^not ok' $R/$t.log) not ok, $(( $(date +%s) - s )) s"; }
for t in gpu_paths gpu_graph gpu_random gpu_ipc; do run_t $t; done
( cd $R && tar czf $OUT/r.tgz . )
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B
job() { local n=$1; shift
  ( time env "$@" timeout 150 $T --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
[ $(( $(date +%s) - t0 )) -lt 235 ] || { el "no time for the jobs"; exit 0; }
job A X=1
job B DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
$T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1; tail -12 $R/agree.txt
for f in A B; do cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done | tee $R/regret.txt
cd $R && tar czf $OUT/r.tgz . && cd /tmp
for f in A B; do gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done
el done
