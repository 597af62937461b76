#!/usr/bin/env bash
# one-H200 call: as call1 (jobs A fresh, B begun with A's header, 2 virtual ranks, both modes), keeping both
# databases whole (samples too) to see why eager decisions flip between a job's sweep and its after pass.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B
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
cd $R && tar cf $OUT/small.tar *.txt *.log *.csv *.h && cd /tmp
for f in A B; do gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done; ls -la $OUT
el done
