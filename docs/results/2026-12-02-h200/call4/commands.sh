#!/usr/bin/env bash
# one-H200 call: pipeline plan evened (working tree) against 370b57c's plan: build both, gpu tests,
# bench at 1/8-octave sizes 2..64 MiB, whole tune jobs A/B, then a mutant of dc_pipe.cu under the new gpu_paths.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
tar xJf .devdeps/boot.tar.xz
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader > $R/env.txt
rm -rf /tmp/osrc /tmp/msrc; mkdir -p /tmp/osrc /tmp/msrc
tar cf - --exclude=./.git . | tar xf - -C /tmp/osrc; tar cf - --exclude=./.git . | tar xf - -C /tmp/msrc
cp scratch/old/dc_comm.cu /tmp/osrc/kernels/dc_comm.cu
sed -i 's/^      dc_ag_read<PUSH>(a, mine, p, s, b + (i - 1) \* g);/      if (i == 1) dc_ag_read<PUSH>(a, mine, p, s, b + (i - 1) * g);/' /tmp/msrc/kernels/dc_pipe.cu
diff kernels/dc_pipe.cu /tmp/msrc/kernels/dc_pipe.cu > $R/mutant.diff
cfg() { # src build
  mkdir -p $2 && cd $2 && $1/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I/tmp/osrc/.devdeps/sq" SQLITE_LIBS="/tmp/osrc/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1; cd - >/dev/null; }
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
( cfg /tmp/osrc /tmp/bo && make -C /tmp/bo -j6 -s kernels/bench_detcoll > $R/build-old.txt 2>&1 ) &
( cfg /tmp/msrc /tmp/bm && make -C /tmp/bm -j6 -s tests/gpu_paths > $R/build-mut.txt 2>&1 ) &
wait
el "builds: $(tail -1 $R/build.txt); old $(ls /tmp/bo/kernels/bench_detcoll 2>&1); mutant $(ls /tmp/bm/tests/gpu_paths 2>&1)"
run_t() { local t=$1; local s=$(date +%s); "$2/tests/$t" > $R/$t$3.log 2>&1; local rc=$?
  el "$t$3 rc $rc: $(grep -c '^ok' $R/$t$3.log) ok, $(grep -c '^not ok' $R/$t$3.log) not ok, $(( $(date +%s) - s )) s"; }
for t in gpu_paths gpu_graph gpu_random gpu_ipc; do run_t $t /tmp/b ""; done
S=$(cat scratch/sizes.txt)
B="--world 2 --op all_gather --dtype bf16 --sizes $S --impl detcoll --paths pipeline,direct,auto --mode both --iters 100"
B2="--world 2 --op all_reduce --dtype bf16 --sizes $S --impl detcoll --paths pipeline,direct,auto --mode both --iters 100"
for rep in 1 2; do
  for v in old new; do
    bin=/tmp/b/kernels/bench_detcoll; [ $v = old ] && bin=/tmp/bo/kernels/bench_detcoll
    $bin $B > $R/bench-ag-$v-$rep.txt 2>&1; el "bench ag $v $rep rc $?"
    $bin $B2 > $R/bench-ar-$v-$rep.txt 2>&1; el "bench ar $v $rep rc $?"
  done
done
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B
job() { local n=$1; shift
  ( time env "$@" timeout 150 $T --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; }
job A X=1
job B DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
$T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1; tail -12 $R/agree.txt
for f in A B; do cp /tmp/$f/thresholds.h $R/thresholds-$f.h; grep -i "regret" $R/$f.log | tail -2; done | tee $R/regret.txt
run_t gpu_paths /tmp/bm "-mutant"
cd $R && tar czf $OUT/r.tgz . && cd /tmp
for f in A B; do sqlite3 /tmp/$f/tune.db "select 1" >/dev/null 2>&1; gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done
el done
