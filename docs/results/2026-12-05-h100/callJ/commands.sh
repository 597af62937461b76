#!/usr/bin/env bash
# one-GPU call at scratch/rev: issue 14 on 2 virtual ranks -- job A from the checked-in header, job B begun
# with A's header (DC_THRESHOLDS_FILE), back to back; compare-headers judged on both sweeps; verify of A's header.
. "$(dirname "$0")/call_lib.sh"
export TUNE_GIT_REV=$(cat scratch/rev) TUNE_BUILD_DIR=/tmp/b TUNE_SRCDIR=$PWD
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B /tmp/V
( time timeout 150 $T --gpus 2 --virtual-ranks --db /tmp/A/tune.db --header /tmp/A/thresholds.h --no-report ) > $R/A.log 2>&1
el "job A rc $?: $(grep real $R/A.log)"; grep "regret (" $R/A.log | tee -a $R/timeline.txt; save
if left 160; then ( time DC_THRESHOLDS_FILE=/tmp/A/thresholds.h timeout 150 $T --gpus 2 --virtual-ranks --db /tmp/B/tune.db \
  --header /tmp/B/thresholds.h --no-report ) > $R/B.log 2>&1
el "job B rc $?: $(grep real $R/B.log)"; grep "regret (" $R/B.log | tee -a $R/timeline.txt; fi
for s in B A; do [ -f /tmp/B/thresholds.h ] && $T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/$s/tune.db \
  > $R/agree-on$s.txt 2>&1; el "agreement judged on $s's sweep: $(grep -E '^(agreement|differing)' $R/agree-on$s.txt | tr '\n' ' ')"; done
if left 40; then ( time timeout 35 $T verify --gpus 2 --virtual-ranks --header /tmp/A/thresholds.h --db /tmp/V/verify.db ) \
  > $R/verify.txt 2>&1; el "verify rc $?: $(tail -6 $R/verify.txt | tr '\n' ' ')"; fi
for j in A B; do [ -f /tmp/$j/thresholds.h ] && xz -c /tmp/$j/thresholds.h > $R/thresholds-$j.h.xz
  [ -f /tmp/$j/tune.db ] && $T export --db /tmp/$j/tune.db --format csv --table regret --out $R/regret-$j.csv; done
echo "$(cat scratch/rev)" > $R/commit.txt
el done; save
