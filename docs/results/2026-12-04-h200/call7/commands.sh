#!/usr/bin/env bash
# one-H200 call at scratch/rev: bench_detcoll with nccl-tests' flags; every GPU and MPI test (device_run.sh,
# no bench); one main job J on 2 virtual ranks from the checked-in header; tune replay of J's database and compare-headers against J's header; a copy
# of J's database damaged outside tune (one sweep config's dtype set to 'int9'): replay must refuse it, write
# no header and leave the file unchanged.
. "$(dirname "$0")/call_lib.sh"
# bench_detcoll with nccl-tests' flags (-n -w -d -c) and KiB sizes, 2 virtual ranks, every path checked.
timeout 60 /tmp/b/kernels/bench_detcoll -g 2 -n 100 -w 2 -d float -c 1 --sizes 1KiB,64K,1M --impl detcoll \
  --mode both > $R/bench-flags.txt 2>&1
el "bench flags rc $?: $(awk '!/^#/ && NF > 10 { n++; if ($NF != 0) w++ } END { print n + 0 " rows, " w + 0 " with wrong elements" }' $R/bench-flags.txt); $(grep '^# dtype' $R/bench-flags.txt)"
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
TUNE_NO_BENCH=1 timeout 330 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"; save
export TUNE_GIT_REV=$(cat scratch/rev) TUNE_BUILD_DIR=/tmp/b
T=/tmp/b/src/tune; mkdir -p /tmp/J
( time timeout 120 $T --gpus 2 --virtual-ranks --db /tmp/J/tune.db --header /tmp/J/thresholds.h --no-report ) > $R/J.log 2>&1
el "job rc $?: $(grep real $R/J.log)"; grep "regret (" $R/J.log | tee -a $R/timeline.txt
cp /tmp/J/thresholds.h $R/thresholds-J.h
$T export --db /tmp/J/tune.db --format csv --table regret --out $R/regret-J.csv
( time $T replay --db /tmp/J/tune.db --gpus 2 --virtual-ranks --header /tmp/J/replay.h ) > $R/replay.txt 2>&1; el "replay rc $?: $(grep real $R/replay.txt)"
$T compare-headers /tmp/J/thresholds.h /tmp/J/replay.h --db /tmp/J/tune.db > $R/replay-agree.txt 2>&1; el "compare-headers rc $?: $(grep -m1 agreement $R/replay-agree.txt)"
cp /tmp/J/tune.db /tmp/J/damaged.db
id=$(python3 - <<'PY'
import sqlite3
c = sqlite3.connect('/tmp/J/damaged.db')
s = c.execute("SELECT id FROM runs WHERE kind = 'sweep' ORDER BY id DESC LIMIT 1").fetchone()[0]
r = c.execute("SELECT rowid FROM configs WHERE run_id = ? ORDER BY rowid LIMIT 1 OFFSET 100", (s,)).fetchone()[0]
c.execute("UPDATE configs SET dtype = 'int9' WHERE rowid = ?", (r,)); c.commit(); print(r)
PY
)
sum0=$(sha256sum < /tmp/J/damaged.db)
$T replay --db /tmp/J/damaged.db --gpus 2 --virtual-ranks --header /tmp/J/damaged.h > $R/damaged.txt 2>&1; rc=$?
sum1=$(sha256sum < /tmp/J/damaged.db)
el "damaged (configs row $id): replay rc $rc, header written: $([ -e /tmp/J/damaged.h ] && echo yes || echo no), db unchanged: $([ "$sum0" = "$sum1" ] && echo yes || echo no)"
cat $R/damaged.txt | tee -a $R/timeline.txt
xz -c /tmp/J/tune.db > $R/J.db.xz
el done; save
