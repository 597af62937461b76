#!/bin/sh
# From the repository root, at the commit in commit.txt (any tune reads these headers): call2's two
# two-H200 jobs (2026-12-01, 82065db), their own headers and HEAD's replayed ones (replay-call2), each
# differing point with both jobs' sweep medians of the two paths.
d=docs/results/2026-12-05-cpu-2/between-jobs; t=$(mktemp -d)
for j in A B; do xz -dc docs/results/2026-12-01-2xh200/call2/$j.db.xz > $t/$j.db
  xz -dc docs/results/2026-12-01-2xh200/call2/thresholds-$j.h.xz > $t/h$j.h
  xz -dc docs/results/2026-12-05-cpu/replay-call2/r$j.h.xz > $t/r$j.h; done
TUNE=build/src/tune python3 $d/points.py $t/hA.h $t/hB.h $t/A.db $t/B.db > $d/jobs-82065db.txt
TUNE=build/src/tune python3 $d/points.py $t/rA.h $t/rB.h $t/A.db $t/B.db > $d/replay-head.txt
for f in jobs-82065db replay-head; do echo "$f:"; python3 $d/summarize.py $d/$f.txt; done > $d/summary.txt
rm -rf $t
