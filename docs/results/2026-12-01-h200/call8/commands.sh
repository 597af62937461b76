#!/usr/bin/env bash
# one-GPU call: two main jobs back to back on 2 virtual ranks (issue 14 agreement with the new segment rule),
# compare-headers and compare (drift, issue 18); a fleet of two nodes of one process with 2 virtual ranks each.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/j1 /tmp/j2 /tmp/f2
( time timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/j1/tune.db --header /tmp/j1/thresholds.h --no-report ) > $R/A.log 2>&1; el "tune A rc $?"; tail -14 $R/A.log
( time timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/j2/tune.db --header /tmp/j2/thresholds.h --no-report ) > $R/B.log 2>&1; el "tune B rc $?"; tail -3 $R/B.log
$T compare-headers /tmp/j1/thresholds.h /tmp/j2/thresholds.h --db /tmp/j2/tune.db > $R/agree.txt 2>&1; tail -6 $R/agree.txt
$T compare-headers /tmp/j1/thresholds.h /tmp/j2/thresholds.h --db /tmp/j1/tune.db > $R/agree-onA.txt 2>&1; tail -3 $R/agree-onA.txt
$T compare --db /tmp/j2/tune.db --baseline /tmp/j1/tune.db > $R/compare.txt 2>&1; el "compare rc $?"; grep -i -A12 "drift" $R/compare.txt | head -30
export TUNE_FLEET_NODE_SIZE=1
( time timeout 150 mpirun -np 2 --bind-to none $T fleet --gpus 2 --virtual-ranks --ops all_reduce,all_gather --dtypes bf16 --max-bytes 4M --db /tmp/f2/tune.db ) > $R/fleet2.log 2>&1; el "fleet 2 nodes x 2 virtual ranks rc $?"; tail -8 $R/fleet2.log
cp /tmp/j1/thresholds.h $R/thresholds-A.h; cp /tmp/j2/thresholds.h $R/thresholds-B.h
gzip -c /tmp/j1/tune.db > $R/A.db.gz; gzip -c /tmp/j2/tune.db > $R/B.db.gz; gzip -c /tmp/f2/tune.db > $R/fleet2.db.gz 2>/dev/null
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
