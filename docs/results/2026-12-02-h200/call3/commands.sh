#!/usr/bin/env bash
# one-H200 call: the tune GPU tests that reach the comms per table (set_table, the previous-table impls), 2 virtual ranks
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
for t in gpu_table gpu_backend gpu_auto; do /tmp/b/tests/$t > $R/$t.log 2>&1; echo "$t rc $? ok $(grep -c '^ok ' $R/$t.log) not ok $(grep -c '^not ok ' $R/$t.log)"; done | tee $R/summary.txt
for t in mpi_backend.sh gpu_skew.sh gpu_tune.sh gpu_first_call.sh gpu_mpi_tune.sh; do timeout 120 tests/$t > $R/$t.log 2>&1; echo "$t rc $? ok $(grep -c '^ok ' $R/$t.log) not ok $(grep -c '^not ok ' $R/$t.log)"; done | tee -a $R/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/env.txt
cd $R && tar czf $OUT/suite.tgz . 
