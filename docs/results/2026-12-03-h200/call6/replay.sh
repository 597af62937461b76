#!/usr/bin/env bash
# replay.sh NEW_TUNE OLD_TUNE: the crossover search of jobs A and B run again over their sweep
# samples (A-sweep.db.xz, B-sweep.db.xz: the databases without the before and after passes'
# samples), with the rules of NEW_TUNE (bf69ad3: near-tie midpoints) and of OLD_TUNE (80e465b:
# none), and the agreement of A and B under each. No GPU: tune replay reads only.
# Here: NEW_TUNE = build/src/tune at bf69ad3; OLD_TUNE = the same tree with tuner/crossover.c
# from 80e465b (git show 80e465b:tuner/crossover.c > tuner/crossover.c; make src/tune).
set -eu
new=${1:?usage: replay.sh NEW_TUNE OLD_TUNE} old=${2:?usage: replay.sh NEW_TUNE OLD_TUNE}
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
for j in A B; do
  xz -dc "$j-sweep.db.xz" > "$t/$j.db"
  for r in new old; do
    "${!r}" replay --db "$t/$j.db" --gpus 2 --virtual-ranks --header "$t/$j-$r.h" 2>&1 |
      sed "s|$t/||g; s/^/$j $r: /"
  done
done
for r in new old; do
  echo "== A against B, $r rules"
  "$new" compare-headers "$t/A-$r.h" "$t/B-$r.h" --db "$t/B.db" | sed "s|$t/||g"
done
