#!/usr/bin/env bash
# one-GPU call: per-block seq + push pipeline vs 7ab0d57 (old), alternating benches on virtual ranks; GPU suite.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/old && tar xf scratch/old.tar -C /tmp/old && cp -r configure Makefile.in aclocal.m4 config.h.in build-aux .devdeps /tmp/old/
( cd /tmp/old && bash tests/device_build.sh /tmp/b0 .devdeps > $R/build0.txt 2>&1 ) &
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
wait; el build; tail -2 $R/build0.txt
for round in 1 2 3; do for v in b0 b; do
  echo "##### $v round $round" >> $R/ab.txt
  timeout 60 /tmp/$v/kernels/bench_detcoll --world 2 --op all --impl detcoll --mode graph --paths push,single_block,multi_block,pipeline --sizes 1K,8K,64K,1M,16M >> $R/ab.txt 2>&1 || echo "rc $?" >> $R/ab.txt
  timeout 60 /tmp/$v/kernels/bench_detcoll --world 8 --op all --impl detcoll --mode graph --sizes 1K,64K,1M,16M >> $R/ab.txt 2>&1 || echo "rc $?" >> $R/ab.txt
done; done
el ab
TUNE_NO_BENCH=1 timeout 330 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suite rc $?"; cat $R/suite/summary.txt
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
