#!/bin/sh
# Run here (the CPU machine) from the repository root on what callK brought back: the databases with
# their samples dropped (configs kept: compare-headers and points.py read the sweeps' medians), and
# each differing point with both jobs' medians (points.py and summarize.py of
# docs/results/2026-12-05-cpu-2/between-jobs).
d=docs/results/2026-12-05-h200-2/callK; b=docs/results/2026-12-05-cpu-2/between-jobs; t=$(mktemp -d)
for j in A B; do xz -dc $d/$j-configs.db.xz > $t/$j.db; xz -dc $d/thresholds-$j.h.xz > $t/$j.h; done
build/src/tune compare-headers $t/A.h $t/B.h --db $t/B.db | sed -n 4,5p
TUNE=build/src/tune python3 $b/points.py $t/A.h $t/B.h $t/A.db $t/B.db > $d/points.txt
python3 $b/summarize.py $d/points.txt > $d/points-summary.txt
rm -rf $t
