#!/usr/bin/env bash
# one-GPU call: the whole GPU suite on virtual ranks at the session's final code.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s)
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
TUNE_NO_BENCH=1 timeout 400 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; echo "suite rc $?"; cat $R/suite/summary.txt
echo "done $(( $(date +%s) - t0 )) s"
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
