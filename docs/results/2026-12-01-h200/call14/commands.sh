#!/usr/bin/env bash
# one-GPU call at HEAD (sweep measures compared paths in the same trials; incumbent = job's previous table):
# three main jobs on 2 virtual ranks: A; B begun with A's header (DC_THRESHOLDS_FILE); C from the default
# table like A. compare-headers A-B (chained) and A-C (independent); the tune GPU tests.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/j1 /tmp/j2 /tmp/j3
( time timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/j1/tune.db --header /tmp/j1/thresholds.h --no-report ) > $R/A.log 2>&1; el "tune A rc $?"; tail -3 $R/A.log
( time DC_THRESHOLDS_FILE=/tmp/j1/thresholds.h timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/j2/tune.db --header /tmp/j2/thresholds.h --no-report ) > $R/B.log 2>&1; el "tune B (begun with A's header) rc $?"; tail -3 $R/B.log
( time timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/j3/tune.db --header /tmp/j3/thresholds.h --no-report ) > $R/C.log 2>&1; el "tune C rc $?"; tail -3 $R/C.log
for x in B C; do
  n=$([ $x = B ] && echo 2 || echo 3)
  $T compare-headers /tmp/j1/thresholds.h /tmp/j$n/thresholds.h --db /tmp/j$n/tune.db > $R/agree-A$x.txt 2>&1; sed -n 3,40p $R/agree-A$x.txt
  $T compare-headers /tmp/j1/thresholds.h /tmp/j$n/thresholds.h --db /tmp/j1/tune.db > $R/agree-A$x-onA.txt 2>&1; sed -n 4,5p $R/agree-A$x-onA.txt
done
$T compare --db /tmp/j3/tune.db --baseline /tmp/j1/tune.db --no-plot > $R/compare-AC.txt 2>&1; el "compare rc $?"
for x in 1 2 3; do cp /tmp/j$x/thresholds.h $R/thresholds-$x.h; gzip -c /tmp/j$x/tune.db > $R/j$x.db.gz; done
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
for t in gpu_backend mpi_backend.sh gpu_skew.sh gpu_tune.sh gpu_first_call.sh; do
  [ $(( $(date +%s) - t0 )) -gt 420 ] && { echo "skip $t (time)"; continue; }
  s0=$(date +%s)
  case $t in *.sh) timeout 150 tests/$t > $R/$t.log 2>&1 ;; *) timeout 150 /tmp/b/tests/$t > $R/$t.log 2>&1 ;; esac
  echo "$t rc=$? ok=$(grep -c '^ok' $R/$t.log) notok=$(grep -c '^not ok' $R/$t.log) $(( $(date +%s) - s0 ))s"
done
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
