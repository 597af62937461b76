#!/usr/bin/env bash
# one-GPU call at the session's final code: the tune GPU tests, and a main job on 2 virtual ranks begun with
# a one-row DC_THRESHOLDS_FILE (the previous table stored, the compiled-in rows kept in its header).
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_GIT_REV=$(cat scratch/rev) TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
for t in gpu_backend mpi_backend.sh gpu_skew.sh gpu_tune.sh gpu_first_call.sh; do
  s0=$(date +%s)
  case $t in *.sh) timeout 150 tests/$t > $R/$t.log 2>&1 ;; *) timeout 150 /tmp/b/tests/$t > $R/$t.log 2>&1 ;; esac
  echo "$t rc=$? ok=$(grep -c '^ok' $R/$t.log) notok=$(grep -c '^not ok' $R/$t.log) $(( $(date +%s) - s0 ))s"
done
T=/tmp/b/src/tune; mkdir -p /tmp/j1
$T table | grep -m1 '^  {' > /tmp/one.h
( time DC_THRESHOLDS_FILE=/tmp/one.h timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/j1/tune.db --header /tmp/j1/thresholds.h --no-report ) > $R/A.log 2>&1; el "tune A rc $?"; tail -4 $R/A.log
echo "header rows: $(grep -c '^  {' /tmp/j1/thresholds.h), compiled-in rows: $($T table | grep -c '^  {')"
sqlite3 -version >/dev/null 2>&1 || echo "(no sqlite3 command here)"
cp /tmp/j1/thresholds.h $R/thresholds-A.h
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
