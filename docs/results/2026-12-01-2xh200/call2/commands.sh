#!/usr/bin/env bash
# two-H200 call at the merged tree: build, GPU suite, two main jobs (agreement), verify, compare, the job under mpirun, bench.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/j1 /tmp/j2 /tmp/m1 /tmp/v
( time timeout 120 $T --gpus 2 --db /tmp/j1/tune.db --header /tmp/j1/thresholds.h --no-report ) > $R/A.log 2>&1; el "tune A rc $?"; tail -22 $R/A.log
TUNE_NO_BENCH=1 timeout 230 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suite rc $?"; cat $R/suite/summary.txt
( time timeout 100 $T --gpus 2 --db /tmp/j2/tune.db --header /tmp/j2/thresholds.h --no-report ) > $R/B.log 2>&1; el "tune B rc $?"; tail -3 $R/B.log
$T compare-headers /tmp/j1/thresholds.h /tmp/j2/thresholds.h --db /tmp/j2/tune.db > $R/agree.txt 2>&1; tail -6 $R/agree.txt
( time timeout 60 $T verify --gpus 2 --header /tmp/j1/thresholds.h --db /tmp/v/verify.db ) > $R/verify.txt 2>&1; el "verify rc $?"; tail -6 $R/verify.txt
$T compare --db /tmp/j2/tune.db --baseline /tmp/j1/tune.db > $R/compare.txt 2>&1; el "compare rc $?"; tail -4 $R/compare.txt
( time timeout 120 mpirun -np 2 --bind-to none $T --gpus 2 --launcher mpi --db /tmp/m1/tune.db --header /tmp/m1/thresholds.h --no-report ) > $R/mpi.log 2>&1; el "mpi job rc $?"; tail -6 $R/mpi.log
cp /tmp/j1/thresholds.h $R/thresholds-A.h; cp /tmp/j2/thresholds.h $R/thresholds-B.h; cp /tmp/m1/thresholds.h $R/thresholds-mpi.h
gzip -c /tmp/j1/tune.db > $R/A.db.gz; gzip -c /tmp/j2/tune.db > $R/B.db.gz; gzip -c /tmp/m1/tune.db > $R/mpi.db.gz
el done
cd $R && tar czf $OUT/rm.tgz . && cd - >/dev/null
