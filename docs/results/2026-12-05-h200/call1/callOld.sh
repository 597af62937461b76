#!/usr/bin/env bash
# one-H200 call: this tree's library tests gpu_errors, gpu_table and gpu_ipc built against a111d45's host code
# of libdetcoll (scratch/oldlib: this tree with a111d45's kernels/dc_comm.cu and dc_direct.cu), where the checks
# added with 2adc0b6 must fail. Needs scratch/oldlib carried (docs/device/README.md).
. "$(dirname "$0")/call_lib.sh"
( cd scratch/oldlib && tar xJf ../../.devdeps2/boot.tar.xz && bash tests/device_build.sh /tmp/bo /tmp/dd ) > $R/build-old.txt 2>&1
el "old build: $(tail -1 $R/build-old.txt)"
for t in gpu_errors gpu_table gpu_ipc; do
  ( cd scratch/oldlib && timeout 150 /tmp/bo/tests/$t ) > $R/old-$t.log 2>&1; rc=$?
  pkill -9 -f /tmp/bo/tests/ 2>/dev/null; sleep 1 # gpu_ipc's forked ranks outlive a timeout
  el "old $t rc $rc: $(grep -c '^ok' $R/old-$t.log) ok, $(grep -c '^not ok' $R/old-$t.log) not ok"
  grep '^not ok' $R/old-$t.log | head -5 | tee -a $R/timeline.txt
done
save
