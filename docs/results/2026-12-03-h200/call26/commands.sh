#!/usr/bin/env bash
# one-H200 call at scratch/rev (the bad-input and verify fixes): every GPU and MPI test
# (device_run.sh, no bench), then one main job on 2 virtual ranks, whose summary now says at how many of the sizes
# over 1.03 auto ran the best path itself.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps2/boot.tar.xz; mkdir -p /tmp/dd && tar xJf .devdeps2/sq.tar.xz -C /tmp/dd
bash tests/device_build.sh /tmp/b /tmp/dd/sq > $R/build.txt 2>&1 || { cat $R/build.txt; save; exit 1; }
el "build: $(tail -1 $R/build.txt)"
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
TUNE_NO_BENCH=1 timeout 330 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"; save
export TUNE_GIT_REV=$(cat scratch/rev) TUNE_BUILD_DIR=/tmp/b
mkdir -p /tmp/J; ( time timeout 120 /tmp/b/src/tune --gpus 2 --virtual-ranks --db /tmp/J/tune.db --header /tmp/J/thresholds.h --no-report ) > $R/J.log 2>&1
el "job rc $?: $(grep real $R/J.log)"; grep "regret (" $R/J.log | tee -a $R/timeline.txt
/tmp/b/src/tune export --db /tmp/J/tune.db --format csv --table regret --out $R/regret-J.csv; cp /tmp/J/thresholds.h $R/thresholds-J.h
mkdir -p /tmp/V; ( time timeout 90 /tmp/b/src/tune verify --gpus 2 --virtual-ranks --header /tmp/J/thresholds.h --db /tmp/V/v.db ) > $R/verify.txt 2>&1; el "verify --header rc $?: $(grep real $R/verify.txt)"
( time DC_THRESHOLDS_FILE=/tmp/J/thresholds.h timeout 90 /tmp/b/src/tune verify --gpus 2 --virtual-ranks --db /tmp/V/v2.db ) > $R/verify-env.txt 2>&1; el "verify DC_THRESHOLDS_FILE rc $?: $(grep real $R/verify-env.txt)"
el done; save
