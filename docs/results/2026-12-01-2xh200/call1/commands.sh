#!/usr/bin/env bash
# two-H200 call: build, pipeline plan experiments, bench beside NCCL, two main jobs (issue 14 agreement), verify, GPU suite.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
nvidia-smi topo -m > $R/topo.txt 2>&1
B=/tmp/b/kernels/bench_detcoll
for op in all_gather all_reduce; do
  for pct in 0 25 40; do for pc in 4 8 16; do
    echo "=== $op pct=$pct pieces=$pc" >> $R/pipe.txt
    DC_PIPE_STAGE_PCT=$pct DC_PIPE_PIECES=$pc timeout 60 $B --world 2 --op $op --sizes $([ $op = all_gather ] && echo 32M,512M || echo 16M,256M) --mode graph \
      --impl detcoll --paths pipeline --iters 100 >> $R/pipe.txt 2>&1 || echo "rc $?" >> $R/pipe.txt
  done; done
done
el pipe; grep -E "===|pipeline" $R/pipe.txt | grep -v "^#" | awk '/===/{h=$0; next} {print h, $1, $2, $9}' | head -60
timeout 150 $B --world 2 --op all --sizes 1K,4K,8K,16K,64K,256K,1M,16M,64M,256M,512M --mode both --p2p > $R/bench.txt 2>&1 || echo "bench rc $?"
el bench; grep "^#   " $R/bench.txt
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/tr
timeout 150 $T --gpus 2 --db /tmp/tr/A.db --no-report > $R/A.log 2>&1; el "tune A rc $?"; tail -12 $R/A.log; cp kernels/thresholds.h $R/thresholds-A.h
TUNE_NO_BENCH=1 timeout 200 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suite rc $?"; cat $R/suite/summary.txt
timeout 100 $T --gpus 2 --db /tmp/tr/B.db --no-report > $R/B.log 2>&1; el "tune B rc $?"; tail -4 $R/B.log; cp kernels/thresholds.h $R/thresholds-B.h
$T compare-headers $R/thresholds-A.h $R/thresholds-B.h --db /tmp/tr/B.db > $R/agree.txt 2>&1; tail -5 $R/agree.txt
( time timeout 60 $T verify --gpus 2 --db /tmp/tr/verify.db ) > $R/verify.txt 2>&1; el "verify"; tail -8 $R/verify.txt
$T compare --db /tmp/tr/B.db --baseline /tmp/tr/A.db --out $R/cmp > $R/compare.txt 2>&1; tail -5 $R/compare.txt
gzip -c /tmp/tr/A.db > $R/A.db.gz; gzip -c /tmp/tr/B.db > $R/B.db.gz
el done
cd $R && tar czf $OUT/rx.tgz . && cd - >/dev/null
