#!/usr/bin/env bash
# one-H200 call at scratch/rev: build; gpu_delay ten times (its events check now takes the closest of five
# tries); every GPU and MPI test (device_run.sh, no bench).
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps2/boot.tar.xz; mkdir -p /tmp/dd && tar xJf .devdeps2/sq.tar.xz -C /tmp/dd
bash tests/device_build.sh /tmp/b /tmp/dd > $R/build.txt 2>&1 || { cat $R/build.txt; save; exit 1; }
el "build: $(tail -1 $R/build.txt)"
for i in 1 2 3 4 5 6 7 8 9 10; do /tmp/b/tests/gpu_delay >> $R/gpu_delay-x10.log 2>&1; echo "rc $?" >> $R/gpu_delay-x10.log; done
el "gpu_delay x10: $(grep -c '^rc 0' $R/gpu_delay-x10.log) of 10 pass, $(grep -c '^not ok' $R/gpu_delay-x10.log) checks failed"
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
TUNE_NO_BENCH=1 timeout 300 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"
el done; save
