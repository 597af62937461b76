#!/usr/bin/env bash
# one-H200 call at scratch/rev: every GPU and MPI test (device_run.sh, no bench) -- among them callQ.sh's
# (gpu_errors: dc_topology, DC_TIMEOUT_NS; gpu_tune.sh: --max-bytes past the GPU's memory, DC_TIMEOUT_NS=-1;
# mpi_backend.sh: the gpu backend under the mpi launcher of c4124ba) -- and mpi_stop.sh.
. "$(dirname "$0")/call_lib.sh"
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
TUNE_NO_BENCH=1 timeout 400 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"
grep -E "PASS|FAIL|SKIP" $R/suite.txt | tee -a $R/timeline.txt
save
timeout 120 bash tests/mpi_stop.sh > $R/mpi_stop.log 2>&1; el "mpi_stop rc $?: $(grep -c '^ok ' $R/mpi_stop.log) ok, $(grep -c '^not ok ' $R/mpi_stop.log) not ok"
grep -h "dc_topology\|max-bytes\|DC_TIMEOUT_NS" $R/suite/*.log | head -20 | tee -a $R/timeline.txt
echo "$(cat scratch/rev)" > $R/commit.txt
el done; save
