#!/usr/bin/env bash
# one-H200 call: eager regret lead (issue 14) on 2 virtual ranks: job A fresh (compiled-in table = the two-H200 one,
# so the previous table differs often: three-configuration trials), job B begun with A's header; after-pass trace kept.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/j1 /tmp/j2
job() { # name, extra env
  local n=$1; shift
  { time env "$@" TUNE_DEBUG=TRACE timeout 200 $T --gpus 2 --virtual-ranks --modes eager --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report 2>&1 |
    awk '/\(after\) started/{on=1} on && /run trial|started/' | gzip > $R/$n-after-trace.gz; } 2> $R/$n.time
  el "job $n: $(tail -3 $R/$n.time | head -1)"
}
job j1 X=1
job j2 DC_THRESHOLDS_FILE=/tmp/j1/thresholds.h
$T compare-headers /tmp/j1/thresholds.h /tmp/j2/thresholds.h --db /tmp/j2/tune.db > $R/agree.txt 2>&1; tail -4 $R/agree.txt
for f in j1 j2; do cp /tmp/$f/thresholds.h $R/thresholds-$f.h; sqlite3 /tmp/$f/tune.db "delete from samples; vacuum" 2>/dev/null; gzip -c /tmp/$f/tune.db > $R/$f.db.gz; done
ls -la $R
el done
cd $R && tar czf $OUT/v1.tgz . && cd - >/dev/null
