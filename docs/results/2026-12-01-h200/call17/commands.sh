#!/usr/bin/env bash
# one-GPU call (a lead for the two-GPU machine, not a kernel decision): HEAD against a variant whose kernels are
# bounded to 512 threads (__launch_bounds__(512): up to 128 registers, where 1024 caps them at 64 and the pipeline,
# two-shot and reduce-scatter kernels spill), alternately, virtual ranks, graph mode.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/v && cp -r . /tmp/v/ 2>/dev/null; sed -i 's/#define DC_KERNEL_BOUNDS __launch_bounds__(1024)/#define DC_KERNEL_BOUNDS __launch_bounds__(512)/' /tmp/v/kernels/dc_device.cuh
grep -n "define DC_KERNEL_BOUNDS" /tmp/v/kernels/dc_device.cuh
( cd /tmp/v && bash tests/device_build.sh /tmp/bv .devdeps > $R/build-v.txt 2>&1 ) &
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
wait; el build; tail -1 $R/build-v.txt
for round in 1 2; do for v in b bv; do
  echo "##### $v round $round" >> $R/ab.txt
  timeout 40 /tmp/$v/kernels/bench_detcoll --world 2 --op all --impl detcoll --mode graph --paths pipeline,two_shot,one_shot,multi_block,fused --sizes 1M,16M,64M >> $R/ab.txt 2>&1 || echo "rc $?" >> $R/ab.txt
  timeout 40 /tmp/$v/kernels/bench_detcoll --world 8 --op all_reduce --impl detcoll --mode graph --paths one_shot,two_shot,pipeline --sizes 1M,16M >> $R/ab.txt 2>&1 || echo "rc $?" >> $R/ab.txt
done; el "round $round"; done
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
