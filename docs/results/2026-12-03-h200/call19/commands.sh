#!/usr/bin/env bash
# one-H200 call at HEAD: is a chunk of an odd number of 16-byte vectors slower (half-sector misalignment of the second
# rank's output slot)? bench_detcoll on 2 virtual ranks, graph, detcoll only, every path, chunks 2^27 + 0/16/32/48 bytes
# (all_gather, reduce_scatter: whole sizes 2x that; all_reduce: the buffer), at --offset 0 and 16.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el "build: $(tail -1 $R/build.txt)"
B=/tmp/b/kernels/bench_detcoll
for off in 0 16; do
  timeout 150 $B --world 2 --impl detcoll --mode graph --paths auto,fused,multi_block,pipeline,direct,copy_engine --op all_gather --sizes 268435456,268435488,268435520,268435552 --offset $off > $R/ag-off$off.txt 2>&1; el "all_gather offset $off rc $?"
  timeout 150 $B --world 2 --impl detcoll --mode graph --paths auto,one_shot,two_shot,pipeline,direct --op all_reduce --sizes 134217728,134217744,134217760,134217776 --offset $off > $R/ar-off$off.txt 2>&1; el "all_reduce offset $off rc $?"
  timeout 150 $B --world 2 --impl detcoll --mode graph --paths auto,multi_block,pipeline,direct --op reduce_scatter --sizes 268435456,268435488,268435520,268435552 --offset $off > $R/rs-off$off.txt 2>&1; el "reduce_scatter offset $off rc $?"
  save
done
el done; save
