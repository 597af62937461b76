#!/usr/bin/env bash
# one-H200 call at scratch/rev: the GPU and MPI suites (dc_topology shared by both comm creations and the
# backend; gpu_errors checks it); then a job asking for more device memory than the GPU has (--max-bytes 64G,
# 2 virtual ranks): the message it gets, its exit status, and whether any file was written.
. "$(dirname "$0")/call_lib.sh"
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
TUNE_NO_BENCH=1 timeout 330 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"; save
T=/tmp/b/src/tune; mkdir -p /tmp/O
( time timeout 120 $T --gpus 2 --virtual-ranks --max-bytes 64G --ops all_gather --dtypes bf16 --modes graph --offsets 0 \
  --db /tmp/O/t.db --header /tmp/O/t.h --no-report ) > $R/oom.log 2>&1
el "oversized job rc $?; files: $(ls -A /tmp/O | xargs)"; tail -5 $R/oom.log | tee -a $R/timeline.txt
el done; save
