#!/usr/bin/env bash
# one-H200 call at HEAD, after callP: what alignment the copy engine (and two_shot, fused) need. bench_detcoll on 2 virtual
# ranks, graph, detcoll only: all_gather copy_engine, direct, fused at chunks 2^27 + 64/128/256/512/4096 bytes (offset 0),
# and at chunk 2^27 with --offset 64, 256 and 4096; all_reduce two_shot, one_shot, direct at buffers 2^27 + the same.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el "build: $(tail -1 $R/build.txt)"
B=/tmp/b/kernels/bench_detcoll
AG=268435456; for k in 64 128 256 512 4096; do AG=$AG,$((268435456 + 2 * k)); done
AR=134217728; for k in 64 128 256 512 4096; do AR=$AR,$((134217728 + k)); done
timeout 120 $B --world 2 --impl detcoll --mode graph --paths copy_engine,direct,fused --op all_gather --sizes $AG > $R/ag-off0.txt 2>&1; el "all_gather offset 0 rc $?"
timeout 120 $B --world 2 --impl detcoll --mode graph --paths two_shot,one_shot,direct --op all_reduce --sizes $AR > $R/ar-off0.txt 2>&1; el "all_reduce offset 0 rc $?"
for off in 64 256 4096; do
  timeout 60 $B --world 2 --impl detcoll --mode graph --paths copy_engine,direct,fused --op all_gather --sizes 268435456 --offset $off > $R/ag-off$off.txt 2>&1; el "all_gather offset $off rc $?"
  timeout 60 $B --world 2 --impl detcoll --mode graph --paths two_shot,one_shot,direct --op all_reduce --sizes 134217728 --offset $off > $R/ar-off$off.txt 2>&1; el "all_reduce offset $off rc $?"
done
el done; save
