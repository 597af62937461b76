#!/usr/bin/env bash
# one-H200 call: tune fleet as 2 nodes (one process each, TUNE_FLEET_NODE_SIZE=1) of 2 virtual ranks on GPU 0
# (--virtual-ranks), and the same without --virtual-ranks, where every node fails: the fleet must end at once.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev) TUNE_FLEET_NODE_SIZE=1
T=/tmp/b/src/tune; mkdir -p /tmp/f3 /tmp/f4
fl() { mpirun -np 2 --bind-to none -x TUNE_FLEET_NODE_SIZE -x TUNE_SRCDIR -x TUNE_BUILD_DIR -x TUNE_GIT_REV -x NCCL_NVLS_ENABLE "$@"; }
( time timeout 60 bash -c "$(declare -f fl); fl $T fleet --gpus 2 --db /tmp/f4/fleet.db" ) > $R/fleet-allfail.log 2>&1; el "fleet without --virtual-ranks rc $?"; tail -12 $R/fleet-allfail.log
( time timeout 400 bash -c "$(declare -f fl); fl $T fleet --gpus 2 --virtual-ranks --db /tmp/f3/fleet.db" ) > $R/fleet-vranks.log 2>&1; el "fleet vranks rc $?"; tail -8 $R/fleet-vranks.log
( cd /tmp/f3 && tar czf $R/fleet-vranks.tgz --exclude='*.db' . ); gzip -c /tmp/f3/fleet.db > $R/fleet-vranks.db.gz 2>/dev/null
el done
cd $R && tar czf $OUT/rv.tgz . && cd - >/dev/null
