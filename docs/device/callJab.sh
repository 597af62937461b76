#!/usr/bin/env bash
# one-GPU call: issue 14 on 2 virtual ranks, the rules of scratch/rev (paired intervals, af46aca) against
# 6cbb9fe's (scratch/o6), interleaved O1 N1 O2 N2; each chain's second job begun with its first's header.
. "$(dirname "$0")/call_lib.sh"
build_old scratch/o6 all
el "built old 6cbb9fe"
job() { # job NAME BIN SRCDIR BUILDDIR [incumbent header]
  local n=$1 b=$2; rm -rf /tmp/j$n; mkdir -p /tmp/j$n
  ( time env TUNE_SRCDIR=$3 TUNE_BUILD_DIR=$4 TUNE_GIT_REV=$n ${5:+DC_THRESHOLDS_FILE=$5} timeout 120 $b --gpus 2 \
    --virtual-ranks --db /tmp/j$n/tune.db --header /tmp/j$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log) $(grep -o 'at most 1.03x at [0-9]* of [0-9]* sizes' $R/$n.log); $(grep -o 'max [0-9.]*x' $R/$n.log | head -1)"
}
O=/tmp/bo/src/tune; N=/tmp/b/src/tune
job O1 $O $PWD/scratch/o6 /tmp/bo; job N1 $N $PWD /tmp/b; save
left 100 && job O2 $O $PWD/scratch/o6 /tmp/bo /tmp/jO1/thresholds.h
left 50 && job N2 $N $PWD /tmp/b /tmp/jN1/thresholds.h
for p in O N; do for s in 1 2; do [ -f /tmp/j${p}2/thresholds.h ] && $N compare-headers /tmp/j${p}1/thresholds.h \
  /tmp/j${p}2/thresholds.h --db /tmp/j$p$s/tune.db > $R/agree-$p-on$s.txt 2>&1
  el "$p pair judged on job $s's sweep: $(grep -E '^(agreement|differing)' $R/agree-$p-on$s.txt | tr '\n' ' ')"; done; done
for j in O1 N1 O2 N2; do [ -f /tmp/j$j/thresholds.h ] && xz -c /tmp/j$j/thresholds.h > $R/thresholds-$j.h.xz; done
echo "$(cat scratch/rev) against 6cbb9fe" > $R/commit.txt
el done; save
