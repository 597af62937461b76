#!/usr/bin/env bash
# one-GPU call: build; pipeline correctness on virtual ranks, both plans (roles: default; interleaved: DC_PIPE_STAGE_PCT=0).
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/r; mkdir -p $R
t0=$(date +%s)
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
echo "build done $(( $(date +%s) - t0 )) s"
for pct in 0 25; do
  for t in gpu_paths gpu_graph gpu_random gpu_sanitize; do
    s0=$(date +%s)
    DC_PIPE_STAGE_PCT=$pct timeout 200 /tmp/b/tests/$t > $R/$t-$pct.log 2>&1
    echo "pct=$pct $t rc=$? ok=$(grep -c '^ok' $R/$t-$pct.log) notok=$(grep -c '^not ok' $R/$t-$pct.log) $(( $(date +%s) - s0 ))s"
  done
done
for pct in 0 25; do for w in 2 8; do
  DC_PIPE_STAGE_PCT=$pct timeout 60 /tmp/b/kernels/bench_detcoll --world $w --op all --impl detcoll --mode graph --paths pipeline,multi_block,two_shot --sizes 1K,1M,64M >> $R/vbench-$pct.txt 2>&1 || echo "vbench rc $?"
done; done
grep -h "pipeline" $R/vbench-*.txt
echo "all done $(( $(date +%s) - t0 )) s"
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
