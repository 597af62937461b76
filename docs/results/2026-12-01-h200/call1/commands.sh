#!/usr/bin/env bash
# one-GPU call: build, GPU suite (virtual ranks), old-vs-current bench on virtual ranks.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/r; mkdir -p $R
t0=$(date +%s)
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
echo "build done $(( $(date +%s) - t0 )) s"
for round in 1 2; do
  for v in old cur; do
    echo "##### $v round $round" >> $R/oldbench.txt
    timeout 60 scratch/oldbench-$v --world 8 --op all_reduce --mode graph --sizes 1K,4M,16M,64M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
    timeout 60 scratch/oldbench-$v --world 4 --op all_gather --mode graph --sizes 1K,1M,16M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  done
done
echo "oldbench done $(( $(date +%s) - t0 )) s"
TUNE_NO_BENCH=1 timeout 300 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; echo "suite rc $?"; cat $R/suite/summary.txt
echo "suite done $(( $(date +%s) - t0 )) s"
for w in 2 4 8; do timeout 60 /tmp/b/kernels/bench_detcoll --world $w --op all --impl detcoll --mode graph --sizes 1K,64K,1M,16M,64M >> $R/vbench.txt 2>&1 || echo "vbench $w rc $?"; done
echo "all done $(( $(date +%s) - t0 )) s"
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
