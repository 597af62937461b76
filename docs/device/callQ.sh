#!/usr/bin/env bash
# one-H200 call at scratch/rev: the GPU tests the 2026-12-05 sessions' changes touch: gpu_errors (dc_topology, DC_TIMEOUT_NS),
# gpu_backend, gpu_ipc, gpu_tune.sh (a --max-bytes too large for the GPU, DC_TIMEOUT_NS=-1), mpi_backend.sh and
# gpu_mpi_tune.sh (the mpi launcher's non-blocking collectives and stop notices of c4124ba; the latter needs 2 GPUs).
. "$(dirname "$0")/call_lib.sh"
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD tune=/tmp/b/src/tune
for t in gpu_errors gpu_backend gpu_ipc gpu_tune.sh mpi_backend.sh gpu_mpi_tune.sh; do
  case $t in *.sh) timeout 120 bash tests/$t > $R/$t.log 2>&1 ;; *) timeout 120 /tmp/b/tests/$t > $R/$t.log 2>&1 ;; esac
  el "$t rc $?: $(grep -c '^ok ' $R/$t.log) ok, $(grep -c '^not ok ' $R/$t.log) not ok"; done
grep -h "dc_topology\|max-bytes\|topology\|DC_TIMEOUT_NS" $R/*.log | tee -a $R/timeline.txt
el done; save
