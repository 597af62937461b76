#!/usr/bin/env bash
# one-H200 call: issue 14's regret and agreement at HEAD on 2 virtual ranks, whole jobs (graph and eager):
# job A fresh (compiled-in table = the two-H200 one), job B begun with A's header (DC_THRESHOLDS_FILE);
# then a small job under mpirun (--launcher mpi) whose after pass uses the previous-table comms over IPC.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B /tmp/m
job() { # name, extra env
  local n=$1; shift
  ( time env "$@" timeout 150 $T --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"
}
job A X=1
job B DC_THRESHOLDS_FILE=/tmp/A/thresholds.h
$T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1; tail -6 $R/agree.txt
for f in A B; do
  cp /tmp/$f/thresholds.h $R/thresholds-$f.h
  $T export --db /tmp/$f/tune.db --format csv --table regret > $R/$f-regret.csv 2>&1
  echo "$f regret: $(awk -F, 'NR>1{n++; if ($NF<=1.03) k++; if ($NF>m) m=$NF} END {print k"/"n" <=1.03, max "m}' $R/$f-regret.csv)"
done | tee $R/regret.txt
( time timeout 100 mpirun -np 2 --bind-to none -x NCCL_NVLS_ENABLE -x TUNE_SRCDIR -x TUNE_BUILD_DIR -x TUNE_GIT_REV $T --gpus 2 --launcher mpi --virtual-ranks --modes eager --ops all_gather --dtypes bf16 --max-bytes 16K --db /tmp/m/tune.db --header /tmp/m/thresholds.h --no-report ) > $R/mpi.log 2>&1
el "mpi job rc $?"; tail -4 $R/mpi.log
echo "mpi regret: $($T export --db /tmp/m/tune.db --format csv --table regret | awk -F, 'NR>1{n++; if ($NF<=1.03) k++; if ($NF>m) m=$NF} END {print k"/"n" <=1.03, max "m}')" | tee -a $R/regret.txt
python3 -c "import sqlite3; print(sqlite3.connect('/tmp/m/tune.db').execute('select impl, count(*) from configs group by impl').fetchall())" >> $R/regret.txt 2>&1
el done
