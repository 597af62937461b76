#!/usr/bin/env bash
# one-H200 call (virtual ranks) at the merged tree (issues 12, 14, 15, 18 and the pipeline): build, GPU suite,
# the main job (paired before/after), the job under mpirun, fleet smoke tests.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/p /tmp/m1
( time timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/p/tune.db --header /tmp/p/thresholds.h --no-report ) > $R/job.log 2>&1; el "job rc $?"; tail -30 $R/job.log | grep -v "^  [a-z_]* world\|^    "
( time timeout 120 mpirun -np 2 --bind-to none $T --gpus 2 --virtual-ranks --launcher mpi --ops all_reduce --dtypes bf16 --max-bytes 16M --db /tmp/m1/tune.db --header /tmp/m1/thresholds.h --no-report ) > $R/mpi.log 2>&1; el "mpi job rc $?"; tail -8 $R/mpi.log
TUNE_NO_BENCH=1 timeout 230 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suite rc $?"; cat $R/suite/summary.txt
true
( TUNE_FLEET_NODE_SIZE=2 timeout 100 mpirun -np 4 --bind-to none $T fleet --gpus 2 --virtual-ranks --worlds 2 --ops all_reduce --dtypes bf16 --max-bytes 4M --db /tmp/f2/tune.db ) > $R/fleet2.log 2>&1; el "fleet 2x2 virtual rc $?"; tail -8 $R/fleet2.log
gzip -c /tmp/p/tune.db > $R/job.db.gz; cp /tmp/p/thresholds.h $R/thresholds.h; gzip -c /tmp/m1/tune.db > $R/mpi.db.gz 2>/dev/null
mkdir -p $R/fleet; cp /tmp/f1/*.db $R/fleet/ 2>/dev/null; gzip $R/fleet/*.db 2>/dev/null
el done
cd $R && tar czf $OUT/rf.tgz . && cd - >/dev/null
