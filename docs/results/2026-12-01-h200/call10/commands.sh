#!/usr/bin/env bash
# one-GPU call: the pipeline form decided alike on every rank; ranks at different alignments (gpu_paths).
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
for t in gpu_paths gpu_graph gpu_random gpu_sanitize gpu_errors gpu_auto gpu_ipc; do
  s0=$(date +%s)
  timeout 200 /tmp/b/tests/$t > $R/$t.log 2>&1
  echo "$t rc=$? ok=$(grep -c '^ok' $R/$t.log) notok=$(grep -c '^not ok' $R/$t.log) $(( $(date +%s) - s0 ))s"
done
grep -h "different alignments" $R/gpu_paths.log
timeout 60 /tmp/b/kernels/bench_detcoll --world 2 --op all_reduce --impl detcoll --mode graph --paths pipeline --sizes 1M,16M,64M > $R/bench.txt 2>&1; grep pipeline $R/bench.txt
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
