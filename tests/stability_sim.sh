#!/usr/bin/env bash
# stability_sim.sh: issue 14 on the sim backend. Two paths tied within noise
# (TUNE_SIM_PATH gives fused single_block's model) give one segment, the
# same for every seed, while the decided crossovers around the tie stay; a
# band won by less than the tolerance goes to the simpler path; tune verify passes the tuned header and fails a deliberately wrong one;
# tune compare flags an injected 10% slowdown of one path and stays quiet
# between two seeds of one model, refuses sim against GPU, and only reads;
# compare-headers --db-b tells swings between two jobs from ties and from a
# wrong header, refuses sim against GPU sweeps, and sorts callK's real jobs
# as points.py did; its --require fails what --db's sweeps cannot judge, and
# a database without sweeps or with damaged pages is refused once.
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }

job() { # job DIR SEED [more options]: an all_gather job of world 4, rules on, no incumbent
  local dir=$1 seed=$2
  shift 2
  "$tune" --backend sim --gpus 4 --worlds 4 --ops all_gather --no-incumbent --trials 12 \
    --seed "$seed" --db "$tmp/$dir/t.db" --no-report "$@" >"$tmp/$dir.out" 2>"$tmp/$dir.err"
}
rows() { grep '^  {90, 4, DC_TOPO_NVLINK, DC_OP_ALL_GATHER' "$tmp/$1/thresholds.h" | grep -v DC_ALIGN_REG; }

for s in 1 2 3; do
  TUNE_SIM_PATH=all_gather:fused=single_block job tie$s $s
  ok $? "tie model, seed $s: the job runs"
done
for s in 1 2 3; do
  nrows=$(rows tie$s | wc -l)
  four=$(rows tie$s | grep -c ', 0, 4, {{[0-9]*, DC_PATH_PUSH}, {[0-9]*, DC_PATH_SINGLE_BLOCK}, {[0-9]*, DC_PATH_MULTI_BLOCK}, {DC_BYTES_MAX, DC_PATH_PIPELINE}}')
  ok $(( nrows != 4 || four != nrows )) "seed $s: every plain row is push | single_block | multi_block | pipeline, the tie one segment of the simpler path ($four of $nrows)"
  tied=$(sqlite3 "$tmp/tie$s/t.db" "select count(*) from crossovers where path_below in ('fused','single_block') and path_above in ('fused','single_block')")
  ok $(( tied != 0 )) "seed $s: no crossover between the tied paths ($tied)"
  # The crossovers around the tie against the model's true ones (printed
  # by the run: found, true or "none").
  read -r total bad < <(awk '$1 == "all_gather" && $4 != "reg16" && NF == 10 {
      r = $10 != "none" ? $9 / $10 : 0; if (r < 0.8 || r > 1.25) bad++; total++ } END { print total + 0, bad + 0 }' "$tmp/tie$s.out")
  ok $(( total != 12 || bad != 0 )) "seed $s: the 12 crossovers around the tie are kept, within 20% of the model's ($bad of $total outside)"
done
for s in 2 3; do
  "$tune" compare-headers "$tmp/tie1/thresholds.h" "$tmp/tie$s/thresholds.h" --db "$tmp/tie1/t.db" --require 99 >"$tmp/agree$s" 2>&1
  ok $? "seeds 1 and $s agree at 99% of points or more, differing points within 1.03: $(sed -n 's/^agreement: //p' "$tmp/agree$s")"
done

# Slow spells (TUNE_SIM_SPELL_PCT=120: half the measurement windows run 20%
# slower, as eager rows on GPUs do from window to window): the paths
# compared at a size are measured in the same trials, so a spell falls on
# them alike, and each of the 4 rows keeps its four segments, 12
# crossovers in all, near the model's. Measured one path at a time, as the
# search did before, 8 rows (all_gather was then measured in bf16 and fp32)
# broke into 6 to 8 segments, 25 to 32 of their 36 to 45 crossovers more
# than 20% off.
for s in 1 2 3; do
  TUNE_SIM_SPELL_PCT=120 TUNE_SIM_PATH=all_gather:fused=single_block job spell$s $s
  ok $? "slow spells, seed $s: the job runs"
  nrows=$(rows spell$s | wc -l)
  four=$(rows spell$s | grep -c ', 0, 4, {{[0-9]*, DC_PATH_PUSH}, {[0-9]*, DC_PATH_\(SINGLE_BLOCK\|FUSED\)}, {[0-9]*, DC_PATH_MULTI_BLOCK}, {DC_BYTES_MAX, DC_PATH_PIPELINE}}')
  ok $(( nrows != 4 || four != nrows )) "slow spells, seed $s: every plain row is push | the tied path | multi_block | pipeline ($four of $nrows)"
  read -r total bad < <(awk '$1 == "all_gather" && $4 != "reg16" && NF == 10 {
      r = $10 != "none" ? $9 / $10 : 0; if (r < 0.74 || r > 1.35) bad++; total++ } END { print total + 0, bad + 0 }' "$tmp/spell$s.out")
  ok $(( total != 12 || bad != 0 )) "slow spells, seed $s: 12 crossovers, within 35% of the model's ($bad of $total outside)"
done

# Hysteresis against the table auto dispatch holds as the job begins (here
# DC_THRESHOLDS_FILE's; an earlier job's installed header is the same once
# compiled in): a table that hands the tie to fused keeps it there, since
# single_block does not beat fused by the tolerance; the decided crossovers
# stay. replay reads that table back from the database and gives the job's
# header; --incumbent puts another in its place.
sed '/DC_OP_ALL_GATHER/s/DC_PATH_SINGLE_BLOCK}/DC_PATH_FUSED}/' "$tmp/tie1/thresholds.h" >"$tmp/fused.h"
inc=(--backend sim --gpus 4 --worlds 4 --ops all_gather --trials 12 --seed 1 --db "$tmp/inc/t.db")
TUNE_SIM_PATH=all_gather:fused=single_block DC_THRESHOLDS_FILE="$tmp/fused.h" "$tune" "${inc[@]}" \
  --no-report >"$tmp/inc.out" 2>"$tmp/inc.err"
ok $? "a job begun with the tie handed to fused (DC_THRESHOLDS_FILE) runs"
kept=$(rows inc | grep -c ', 0, 4, {{[0-9]*, DC_PATH_PUSH}, {[0-9]*, DC_PATH_FUSED}, {[0-9]*, DC_PATH_MULTI_BLOCK}, {DC_BYTES_MAX, DC_PATH_PIPELINE}}')
ok $(( kept != 4 )) "it keeps fused over the tie in every plain row, the crossovers around it too ($kept of 4)"
"$tune" replay "${inc[@]}" --header "$tmp/inc-r.h" 2>"$tmp/inc-r.err"
ok $? "replay of that job exits 0"
"$tune" compare-headers "$tmp/inc/thresholds.h" "$tmp/inc-r.h" --all-rows --require 100 >/dev/null 2>&1
ok $? "... and gives its header back, the job's previous table read from its database"
"$tune" replay "${inc[@]}" --incumbent "$tmp/tie1/thresholds.h" --header "$tmp/inc-t.h" 2>/dev/null
simple=$(grep '^  {90, 4, DC_TOPO_NVLINK, DC_OP_ALL_GATHER' "$tmp/inc-t.h" | grep -v DC_ALIGN_REG |
  grep -c ', 0, 4, {{[0-9]*, DC_PATH_PUSH}, {[0-9]*, DC_PATH_SINGLE_BLOCK}, {[0-9]*, DC_PATH_MULTI_BLOCK}, {DC_BYTES_MAX, DC_PATH_PIPELINE}}')
ok $(( simple != 4 )) "replay --incumbent with seed 1's header hands the tie to single_block ($simple of 4)"

# An edge under the tolerance: fused runs single_block's model and
# single_block 2% slower, so fused wins the tie's two grid steps by 2%,
# decided. Two jobs on two H200s kept such bands on 1.5-5% wins the other
# job did not see (docs/results/2026-12-01-2xh200/call2/agreement-replay.md):
# the band goes to the simpler single_block, whatever its width, and the
# regret that costs stays within the tolerance.
for s in 1 2 3; do
  TUNE_SIM_PATH=all_gather:fused=single_block,all_gather:single_block*1.02 job edge$s $s
  ok $? "2% edge, seed $s: the job runs"
  nrows=$(rows edge$s | wc -l)
  simple=$(rows edge$s | grep -c ', 0, 4, {{[0-9]*, DC_PATH_PUSH}, {[0-9]*, DC_PATH_SINGLE_BLOCK}, {[0-9]*, DC_PATH_MULTI_BLOCK}, {DC_BYTES_MAX, DC_PATH_PIPELINE}}')
  ok $(( nrows != 4 || simple != nrows )) "2% edge, seed $s: every plain row is push | single_block | multi_block | pipeline ($simple of $nrows)"
  read -r sizes over worst < <(sqlite3 -separator ' ' "$tmp/edge$s/t.db" \
    "select count(*), sum(regret > 1.03), max(regret) from regret")
  awk -v n="$sizes" -v o="$over" -v w="$worst" 'BEGIN { exit !(n > 0 && o <= 0.01 * n && w <= 1.10) }'
  ok $? "2% edge, seed $s: regret at most 1.03 at 99% of $sizes sizes ($over over) and at most 1.10 (max $worst)"
done

# verify: the tuned table passes; a table whose small sizes go to
# multi_block (several times slower there) fails, naming those sizes.
"$tune" verify --backend sim --gpus 4 --worlds 4 --ops all_gather --no-reg --header "$tmp/tie1/thresholds.h" \
  --db "$tmp/v.db" >"$tmp/v.out" 2>&1
ok $? "verify passes the tuned header"
test "$(sqlite3 "$tmp/v.db" "select kind from runs")" = verify
ok $? "verify stores a run of its own (kind verify)"
ok $(( $(sqlite3 "$tmp/v.db" "select count(*) from regret") == 0 )) "verify stores its regret rows"
# Its summary says no size lies above the tolerance only where none does
# in what it stored (a review: an undecided 1.445 was "within 1.03"); 3
# trials leave sizes undecided.
v3=(--backend sim --gpus 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0 --no-reg --min-bytes 1K
  --max-bytes 64K --warmup 1)
mkdir -p "$tmp/v3" && "$tune" "${v3[@]}" --trials 5 --max-trials 10 --no-report --db "$tmp/v3/j.db" >/dev/null 2>&1
"$tune" verify "${v3[@]}" --trials 3 --max-trials 3 --warmup 0 --seed 1 --header "$tmp/v3/thresholds.h" \
  --db "$tmp/v3.db" >"$tmp/v3.out" 2>&1
above=$(sqlite3 "$tmp/v3.db" "select count(*) from regret where regret > 1.03")
if [ "$above" -gt 0 ]; then ! grep -q "every size within" "$tmp/v3.out" && grep -q "$above sizes above it undecided" "$tmp/v3.out"; else grep -q "every size within" "$tmp/v3.out"; fi
ok $? "verify's summary agrees with its $above stored sizes above 1.03: $(grep -E 'every size|undecided|decided above' "$tmp/v3.out" | head -n1)"
sed 's/{{\([0-9]*\), DC_PATH_PUSH}/{{\1, DC_PATH_MULTI_BLOCK}/' "$tmp/tie1/thresholds.h" >"$tmp/wrong.h"
"$tune" verify --backend sim --gpus 4 --worlds 4 --ops all_gather --no-reg --header "$tmp/wrong.h" \
  --db "$tmp/v.db" >"$tmp/w.out" 2>&1
rc=$?
ok $(( rc != 1 )) "verify fails a wrong header (exit $rc)"
grep -q '^all_gather .* multi_block ' "$tmp/w.out"
ok $? "... and prints the sizes where auto ran multi_block"
before=$(cksum <"$tmp/v.db")
"$tune" verify --backend sim --gpus 4 --header "$tmp/nothing.h" --db "$tmp/v.db" >/dev/null 2>&1
rc=$?
# The gpu backend takes --header too (libdetcoll loads it at run time); a
# missing one is refused there as well, before the backend opens.
"$tune" verify --header "$tmp/nothing.h" --db "$tmp/v.db" >/dev/null 2>&1
rc2=$?
ok $(( rc != 2 || rc2 != 2 || $(sqlite3 "$tmp/v.db" "select count(*) from runs") != 2 )) \
  "verify refuses a missing header on either backend, measuring nothing (exit $rc, $rc2)"
"$tune" verify --help | grep -q -- '--header FILE *verify this thresholds header (loaded at run time'
ok $? "verify --help offers --header on every backend"
test "$before" = "$(cksum <"$tmp/v.db")"
ok $? "... and leaves the database as it was"

# compare: two seeds of one model are quiet; a 10% slower single_block is
# flagged, and nothing else is.
job base 1
job same 2
TUNE_SIM_PATH='all_gather:single_block*1.10' job slow 2
ok $? "the jobs for compare run"
sums=$(cksum "$tmp/base/t.db" "$tmp/same/t.db" "$tmp/slow/t.db")
"$tune" compare --db "$tmp/same/t.db" --baseline "$tmp/base/t.db" --out "$tmp/cmp1" >"$tmp/c1.out" 2>&1
rc=$?
ok $(( rc != 0 )) "compare of two seeds of one model: exit 0 ($(grep '^regressions' "$tmp/c1.out"))"
"$tune" compare --db "$tmp/slow/t.db" --baseline "$tmp/base/t.db" --json --no-plot >"$tmp/c2.json" 2>"$tmp/c2.err"
rc=$?
ok $(( rc != 1 )) "compare flags the slowdown: exit 1"
python3 - "$tmp/c2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
reg = [c for c in d["cells"] if c["verdict"] == "regression"]
forced = {c["path"] for c in reg if c["path"] != "auto"}
sb = [c for c in d["cells"] if c["path"] == "single_block" and c["kind"] == "sweep"]
flagged = [c for c in sb if c["verdict"] == "regression"]
print("# %d regressions, forced paths %s; single_block sweep cells flagged %d of %d" % (len(reg), sorted(forced), len(flagged), len(sb)))
ok = d["regressions"] == len(reg) > 0 and forced == {"single_block"} and len(flagged) >= 0.9 * len(sb)
ok = ok and all(abs(c["new_ns"] / c["baseline_ns"] - 1.10) < 0.04 for c in flagged)
sys.exit(0 if ok else 1)
PY
ok $? "only single_block (and auto where it ran single_block) is flagged, about 1.10x, at 90% of its sweep sizes or more"
if command -v gnuplot >/dev/null; then
  test -s "$tmp/cmp1/compare_all_gather_w4.png" && test -s "$tmp/cmp1/compare_all_gather_w4.dat"
  ok $? "compare draws the ratio plot of all_gather world 4"
  # Relative paths: the plots go where they name, and a regression is still
  # exit 1 (gnuplot's log was opened relative to the wrong folder: exit 2).
  (cd "$tmp" && "$tune" compare --db slow/t.db --baseline base/t.db --out cmp-rel >c3rel.out 2>&1)
  rc=$?
  ok $(( rc != 1 )) "compare with relative paths: exit 1 for the slowdown (rc $rc)"
  test -s "$tmp/cmp-rel/compare_all_gather_w4.png"
  ok $? "and draws its plots in the relative --out folder"
fi

# Refusals: sim against GPU (a real database of docs/results), a missing
# file, a file that is not a database; nothing is written.
gpu=$src/docs/results/2026-11-30-2xh200/tune/tune-b684007.db.gz
if [ -r "$gpu" ]; then
  gunzip -c "$gpu" >"$tmp/gpu.db"
  "$tune" compare --db "$tmp/base/t.db" --baseline "$tmp/gpu.db" --out "$tmp/cmp3" >"$tmp/c3.out" 2>&1
  rc=$?
  ok $(( rc != 2 )) "compare refuses sim against GPU (exit $rc)"
  grep -q 'backend differ.*--force' "$tmp/c3.out"
  ok $? "... saying why and how to force it"
  test ! -e "$tmp/cmp3"
  ok $? "... writing nothing"
fi
"$tune" compare --db "$tmp/none.db" --baseline "$tmp/base/t.db" >/dev/null 2>&1
rc=$?
head -c 4096 /dev/urandom >"$tmp/junk.db"
"$tune" compare --db "$tmp/junk.db" --baseline "$tmp/base/t.db" --no-plot >/dev/null 2>&1
rc2=$?
"$tune" compare --db "$tmp/base/t.db" >/dev/null 2>&1
rc3=$?
ok $(( rc != 2 || rc2 == 0 || rc3 != 2 )) "compare refuses a missing or corrupt database and a missing --baseline (exit $rc, $rc2, $rc3)"
"$tune" compare-headers "$tmp/tie1/thresholds.h" "$tmp/tie1/thresholds.h" --require 100 >/dev/null 2>&1
ok $? "a header agrees with itself at every point"
# --db-b: each differing point by both jobs' sweeps. single_block 10%
# slower in one job moves its crossovers: there each job's sweeps favour
# its own header's path (swings); two seeds of one model have none.
two() { # two A B: compare-headers of A's and B's headers on both databases; the swings
  "$tune" compare-headers "$tmp/$1/thresholds.h" "$tmp/$2/thresholds.h" --db "$tmp/$1/t.db" --db-b "$tmp/$2/t.db" \
    >"$tmp/two-$2" 2>&1 || return 1
  sed -n "s/^on both jobs' sweeps: .* swings (each job's sweeps favour its own header's path) at \([0-9]*\).*/\1/p" "$tmp/two-$2"
}
n=$(two base slow)
ok $(( $? != 0 || ${n:-0} == 0 )) "--db-b: single_block slower in one job: swings at its moved crossovers: $(grep -m1 '^on both' "$tmp/two-slow")"
n=$(two base same)
ok $(( $? != 0 || ${n:-1} != 0 )) "--db-b: two seeds of one model: no swing: $(grep -m1 '^on both' "$tmp/two-same")"
"$tune" compare-headers "$tmp/base/thresholds.h" "$tmp/slow/thresholds.h" --db-b "$tmp/slow/t.db" >"$tmp/two-bad" 2>&1
rc=$?
ok $(( rc != 2 )) "--db-b without --db is refused (exit $rc): $(head -n1 "$tmp/two-bad")"
# A header that chose paths its own job's sweeps have slower: "other", no swing.
"$tune" compare-headers "$tmp/wrong.h" "$tmp/tie1/thresholds.h" --db "$tmp/tie1/t.db" --db-b "$tmp/tie1/t.db" >"$tmp/two-wrong" 2>&1
ok $(( $? != 0 )) "--db-b: a wrong header against the tuned one runs"
grep -q "swings (each job's sweeps favour its own header's path) at 0, other at [1-9]" "$tmp/two-wrong"
ok $? "--db-b: where a header chose a path its sweeps have slower, other, not a swing: $(grep -m1 '^on both' "$tmp/two-wrong")"
if [ -r "$gpu" ]; then
  "$tune" compare-headers "$tmp/base/thresholds.h" "$tmp/slow/thresholds.h" --db "$tmp/gpu.db" --db-b "$tmp/slow/t.db" \
    >"$tmp/two-gpu" 2>&1
  rc=$?
  ok $(( rc != 2 )) "--db-b: GPU sweeps against sim ones are refused (exit $rc)"
  grep -q 'compare-headers: backend differ.*--force' "$tmp/two-gpu"
  ok $? "... saying why and how to force it"
  "$tune" compare-headers "$tmp/base/thresholds.h" "$tmp/slow/thresholds.h" --db "$tmp/gpu.db" --db-b "$tmp/slow/t.db" \
    --force >"$tmp/two-gpu" 2>&1
  ok $? "... and sorted anyway with --force"
fi
test "$sums" = "$(cksum "$tmp/base/t.db" "$tmp/same/t.db" "$tmp/slow/t.db")"
ok $? "compare and compare-headers leave the databases byte for byte as they were"
# The sorting on real data: the chained jobs of callK (2 virtual ranks on an
# H200), whose 24 differing points points.py sorted by hand.
k=$src/docs/results/2026-12-05-h200-2/callK
if command -v xz >/dev/null && [ -r "$k/A-configs.db.xz" ]; then
  for f in A-configs.db B-configs.db thresholds-A.h thresholds-B.h; do xz -dc "$k/$f.xz" >"$tmp/k-$f"; done
  "$tune" compare-headers "$tmp/k-thresholds-A.h" "$tmp/k-thresholds-B.h" --db "$tmp/k-A-configs.db" \
    --db-b "$tmp/k-B-configs.db" >"$tmp/two-k" 2>&1
  grep -q "^on both jobs' sweeps: ties (within 1.030 in both) at 6, swings (each job's sweeps favour its own header's path) at 9 (the two jobs' ratios up to 1.15[67] apart), other at 9, no data at 0$" "$tmp/two-k"
  ok $? "--db-b on callK's jobs: ties 6, swings 9 (up to 1.156), other 9, as points.py: $(grep -m1 '^on both' "$tmp/two-k")"
fi
"$tune" compare-headers "$tmp/tie1/thresholds.h" "$tmp/wrong.h" --require 99 >/dev/null 2>&1
rc=$?
ok $(( rc != 1 )) "compare-headers --require fails below the agreement asked for (exit $rc)"
# With --db, a differing point whose paths are not within the tolerance in
# the sweeps fails however low the agreement asked for.
"$tune" compare-headers "$tmp/tie1/thresholds.h" "$tmp/wrong.h" --db "$tmp/tie1/t.db" --require 0 >"$tmp/apart" 2>&1
rc=$?
ok $(( rc != 1 )) "compare-headers --db --require 0 fails on a point not within 1.03 (exit $rc): $(grep -m1 '^differing' "$tmp/apart")"
grep -q 'points differ (.*), some not within the tolerance$' "$tmp/apart"
ok $? "... and marks the rows that hold such a point: $(grep -m1 'some not within' "$tmp/apart")"
# --require passes only what --db's sweeps judged: points of world-8 rows,
# which tie1's job never measured, fail it as having no data, and a
# database without sweeps (verify's) is refused by name.
sed 's/^  {90, 4,/  {90, 8,/' "$tmp/wrong.h" >"$tmp/wrong8.h"
sed 's/^  {90, 4,/  {90, 8,/' "$tmp/tie1/thresholds.h" >"$tmp/norows.h"
"$tune" compare-headers "$tmp/norows.h" "$tmp/wrong8.h" --db "$tmp/tie1/t.db" --require 0 >"$tmp/nodata" 2>&1
rc=$?
ok $(( rc != 1 )) "compare-headers --db --require 0 fails where the sweeps hold no data (exit $rc): $(tail -n1 "$tmp/nodata")"
grep -q '^tune compare-headers: [0-9]* differing points have no data in .*tie1/t.db to judge them on' "$tmp/nodata"
ok $? "... saying so"
for opt in --db --db-b; do
  if [ $opt = --db ]; then dbs=(--db "$tmp/v.db"); else dbs=(--db "$tmp/tie1/t.db" --db-b "$tmp/v.db"); fi
  "$tune" compare-headers "$tmp/tie1/thresholds.h" "$tmp/wrong.h" "${dbs[@]}" >"$tmp/nosweep" 2>&1
  rc=$?
  ok $(( rc != 2 )) "compare-headers $opt of a database without sweeps: exit 2 (got $rc)"
  grep -q "^tune: error: compare-headers: $opt .*v.db holds no sweep measurements" "$tmp/nosweep"
  ok $? "... naming it: $(head -n1 "$tmp/nosweep")"
done
# A database whose configs pages are damaged: one message, exit 2.
cp "$tmp/tie1/t.db" "$tmp/bad.db"
if pages=$(sqlite3 "$tmp/bad.db" "select pageno from dbstat where name = 'configs' and pagetype = 'leaf'" 2>/dev/null) &&
  [ -n "$pages" ]; then
  size=$(sqlite3 "$tmp/bad.db" "pragma page_size")
  for p in $pages; do printf '\377\377\377\377\377\377\377\377' |
    dd of="$tmp/bad.db" bs=1 seek=$(( (p - 1) * size )) conv=notrunc status=none; done
  "$tune" compare-headers "$tmp/tie1/thresholds.h" "$tmp/wrong.h" --db "$tmp/bad.db" >/dev/null 2>"$tmp/bad.err"
  rc=$?
  ok $(( rc != 2 || $(grep -c 'malformed' "$tmp/bad.err") != 1 )) \
    "compare-headers of a damaged database: exit 2, said once (exit $rc, $(grep -c 'malformed' "$tmp/bad.err") lines)"
fi
"$tune" compare-headers "$tmp/tie1/thresholds.h" "$tmp/norows.h" --require 100 >"$tmp/norows" 2>&1
rc=$?
ok $(( rc != 1 )) "compare-headers --require fails when the headers share no row (exit $rc): $(tail -n1 "$tmp/norows")"
grep -q '^agreement: none to judge' "$tmp/norows" && ! grep -q '100.00%' "$tmp/norows"
ok $? "and says there was nothing to judge, not 100%: $(grep -m1 '^agreement' "$tmp/norows")"
tap_end
