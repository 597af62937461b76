#!/usr/bin/env bash
# one-GPU call (session 12-01b): build with the push form of the pipeline; correctness on virtual ranks;
# dc_begin probe; push small-size shape; pipeline on virtual ranks vs call1's vbench.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi -L > $R/smi.txt 2>&1
/usr/local/cuda/bin/nvcc -arch=sm_90 -O3 -o /tmp/begin_probe scratch/begin_probe.cu && /tmp/begin_probe > $R/begin_probe.txt 2>&1; el "probe rc $?"; cat $R/begin_probe.txt
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
for t in gpu_paths gpu_graph gpu_random gpu_sanitize gpu_ipc; do
  s0=$(date +%s)
  timeout 200 /tmp/b/tests/$t > $R/$t.log 2>&1
  echo "$t rc=$? ok=$(grep -c '^ok' $R/$t.log) notok=$(grep -c '^not ok' $R/$t.log) $(( $(date +%s) - s0 ))s"
done
B=/tmp/b/kernels/bench_detcoll
timeout 60 $B --world 2 --op all --impl detcoll --mode graph --paths push --sizes 1K,2K,4K,8K,16K,32K > $R/push.txt 2>&1; el "push rc $?"
grep -h " push " $R/push.txt
for w in 2 4 8; do timeout 60 $B --world $w --op all --impl detcoll --mode graph --paths pipeline,multi_block,two_shot --sizes 1K,64K,1M,16M,64M >> $R/vbench.txt 2>&1 || echo "vbench $w rc $?"; done
grep -h "pipeline" $R/vbench.txt
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
