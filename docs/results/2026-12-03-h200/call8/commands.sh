#!/usr/bin/env bash
# Run: device run, kind nvidia-h200, carry .devdeps and scratch: bash scratch/callD.sh
# one-H200 call: the GPU test suites at the final kernel code (b340c8b), gpu_paths first.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1
el "build: $(tail -1 $R/build.txt)"
run_t() { local t=$1; local s=$(date +%s); timeout 150 "/tmp/b/tests/$t" > $R/$t.log 2>&1; local rc=$?
  el "$t rc $rc: $(grep -c '^ok' $R/$t.log) ok, $(grep -c '^not ok' $R/$t.log) not ok, $(( $(date +%s) - s )) s"; save; }
for t in gpu_paths gpu_sanitize gpu_random gpu_graph gpu_ipc gpu_errors; do run_t $t; done
el done; save
