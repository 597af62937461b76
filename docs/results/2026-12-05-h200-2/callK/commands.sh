#!/usr/bin/env bash
# one-GPU call at scratch/rev: issue 14 on 2 virtual ranks -- job A from the checked-in header, job B begun
# with A's header (DC_THRESHOLDS_FILE), back to back, both databases kept (xz) for replays here;
# compare-headers judged on both sweeps.
. "$(dirname "$0")/call_lib.sh"
export TUNE_GIT_REV=$(cat scratch/rev) TUNE_BUILD_DIR=/tmp/b TUNE_SRCDIR=$PWD TUNE_BIN=/tmp/b/src/tune
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B
( time timeout 150 $T --gpus 2 --virtual-ranks --db /tmp/A/tune.db --header /tmp/A/thresholds.h --no-report ) > $R/A.log 2>&1
el "job A rc $?: $(grep real $R/A.log)"; grep "regret (" $R/A.log | tee -a $R/timeline.txt; save
( time DC_THRESHOLDS_FILE=/tmp/A/thresholds.h timeout 150 $T --gpus 2 --virtual-ranks --db /tmp/B/tune.db \
  --header /tmp/B/thresholds.h --no-report ) > $R/B.log 2>&1
el "job B rc $?: $(grep real $R/B.log)"; grep "regret (" $R/B.log | tee -a $R/timeline.txt
for s in B A; do [ -f /tmp/B/thresholds.h ] && $T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/$s/tune.db \
  > $R/agree-on$s.txt 2>&1; el "agreement judged on $s's sweep: $(grep -E '^(agreement|differing)' $R/agree-on$s.txt | tr '\n' ' ')"; done
for j in A B; do [ -f /tmp/$j/thresholds.h ] && cp /tmp/$j/thresholds.h $R/thresholds-$j.h
  [ -f /tmp/$j/tune.db ] && xz -T8 -6 -c /tmp/$j/tune.db > $R/$j.db.xz; done
echo "$(cat scratch/rev)" > $R/commit.txt
el "databases kept: $(ls -la $R/*.db.xz | awk '{print $5}' | tr '\n' ' ')"; save
el done; save
