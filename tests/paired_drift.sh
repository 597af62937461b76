#!/usr/bin/env bash
# paired_drift.sh: issue 18 on the sim backend. The same job twice, with
# one seed: once on a steady machine, once on one that drifts 30% slower
# between the passes (TUNE_SIM_DRIFT_PCT=130, the sim's test-only knob).
# The after pass measures auto dispatch with the new table and with the
# previous one (the before pass's) in the same trials, once where both
# choose one path. Drifted, the unpaired after/before (two passes) is off
# by the drift while the paired one (same trials) stays where the truth is:
# the ratio of the two paths' medians in the sweep, which ran before the
# drift; the report states the drift it measured, and tune compare between
# the two databases states it too (and no figure between jobs that began
# with different tables). Bad knob values are refused before anything is
# written.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }
args=(--backend sim --gpus 2 --worlds 2 --ops all_reduce,all_gather --dtypes bf16 --modes eager,graph
  --offsets 0 --max-bytes 4M --trials 12 --seed 7)
q() { sqlite3 -batch -noheader -separator ' ' "$1/t.db" "$2"; }

run() { # folder drift_pct
  TUNE_SIM_DRIFT_PCT=$2 "$tune" "${args[@]}" --db "$tmp/$1/t.db" >"$tmp/$1.out" 2>"$tmp/$1.err"
}
run steady 100
ok $? "the steady job exits 0"
run drift 130
rc=$?
ok $rc "the drifting job (TUNE_SIM_DRIFT_PCT=130) exits 0"
[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/drift.err" | tail; tap_end; exit 1; }

# Pairings where the tables differ, with the before pass's config, the
# sweep's medians of both paths at that size (the truth, measured before
# any drift), the paired ratio and the unpaired one:
#   bytes paired unpaired truth
pairs() {
  q "$1" "select p.bytes, p.ratio, a.median_ns / b.median_ns, sn.median_ns / sp.median_ns
    from pairs p join configs a on a.id = p.new_config
    join configs b on b.run_id = (select id from runs where kind = 'before') and b.impl = p.impl
      and b.path = 'auto' and b.op = p.op and b.dtype = p.dtype and b.world = p.world
      and b.bytes = p.bytes and b.in_offset = p.in_offset and b.mode = p.mode and b.skew_ns = 0
    join configs sn on sn.run_id = (select id from runs where kind = 'sweep') and sn.impl = p.impl
      and sn.path = p.new_path and sn.op = p.op and sn.dtype = p.dtype and sn.world = p.world
      and sn.bytes = p.bytes and sn.in_offset = p.in_offset and sn.mode = p.mode and sn.skew_ns = 0
    join configs sp on sp.run_id = sn.run_id and sp.impl = p.impl and sp.path = p.prev_path
      and sp.op = p.op and sp.dtype = p.dtype and sp.world = p.world and sp.bytes = p.bytes
      and sp.in_offset = p.in_offset and sp.mode = p.mode and sp.skew_ns = 0
    where p.shared = 0 order by p.impl, p.op, p.mode, p.bytes"
}
# geo FIELD_A FIELD_B < pairs: the geometric mean of $A / $B over the lines.
geo() { awk -v a="$1" -v b="$2" '{ s += log($a / $b); n++ } END { if (n) printf "%.4f\n", exp(s / n); else print "nan" }'; }
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

for f in steady drift; do
  pairs "$tmp/$f" >"$tmp/$f.pairs"
done
nd=$(wc -l <"$tmp/drift.pairs")
ok $(( nd < 4 )) "the tables differ at $nd sizes the sweep measured both paths at"

u=$(geo 3 2 <"$tmp/drift.pairs")
within "$u" 1.25 1.35
ok $? "drifted: unpaired / paired is the drift (geometric mean $u over $nd sizes): the unpaired speedup is wrong"
p=$(geo 2 4 <"$tmp/drift.pairs")
within "$p" 0.95 1.05
ok $? "drifted: paired / truth (the sweep's two paths) is $p: the paired speedup is right"
t=$(geo 3 4 <"$tmp/drift.pairs")
within "$t" 1.24 1.36
ok $? "drifted: unpaired / truth is $t"
s=$(geo 3 2 <"$tmp/steady.pairs")
within "$s" 0.95 1.05
ok $? "steady: unpaired and paired agree ($s)"
paste "$tmp/steady.pairs" "$tmp/drift.pairs" | awk '$1 != $5 { bad++ } { d = $2 / $6; if (d < 0.98 || d > 1.02) bad++ }
  END { exit bad > 0 }'
ok $? "the paired ratio of every size is the same with and without the drift"

# What the pairings hold.
d=$tmp/drift
ok $(q "$d" "select count(*) from pairs where shared = 1 and (prev_config <> new_config or ratio <> 1
  or new_path <> prev_path or ci_lo <> 1 or ci_hi <> 1)") "a size both tables send down one path ran once: ratio 1"
ok $(( $(q "$d" "select count(*) from pairs where shared = 1") == 0 )) "there are such sizes ($(q "$d" "select count(*) from pairs where shared = 1"))"
ok $(q "$d" "select count(*) from pairs p join configs n on n.id = p.new_config join configs v on v.id = p.prev_config
  where p.shared = 0 and (v.impl <> n.impl || '_prev' or v.run_id <> n.run_id or v.trials <> n.trials
  or v.chosen_path <> p.prev_path or n.chosen_path <> p.new_path or p.new_path = p.prev_path
  or not (p.ci_lo <= p.ratio and p.ratio <= p.ci_hi))") \
  "elsewhere both ran in the after run's same trials, on their own paths, the ratio inside its CI"
ok $(q "$d" "select count(*) from pairs p join configs b on b.run_id = (select id from runs where kind = 'before')
  and b.impl = p.impl and b.path = 'auto' and b.op = p.op and b.dtype = p.dtype and b.world = p.world
  and b.bytes = p.bytes and b.in_offset = p.in_offset and b.mode = p.mode and b.skew_ns = 0
  where b.chosen_path <> p.prev_path") "the previous table chooses what the before pass ran"
ok $(( $(q "$d" "select count(*) from pairs") != $(q "$d" "select count(*) from configs c join runs r on r.id = c.run_id
  where r.kind = 'after' and c.impl in ('detcoll', 'detcoll_reg') and c.path = 'auto'") )) \
  "every auto size of the after pass is paired"
test "$(q "$d" "select h.path from headers h join runs r on r.id = h.run_id where r.kind = 'before'")" = "compiled in"
ok $? "the previous table is stored with the before run"

# The summary (and report.md) say it.
for f in drift steady; do
  grep -A4 "run-to-run drift" "$tmp/$f.out" | sed -n 's/.*: median \([-+0-9.]*\)%.*/\1/p' >"$tmp/$f.drift"
done
ok $(( $(wc -l <"$tmp/drift.drift") != 4 )) "the summary states the drift per op and mode"
awk '$1 < 27 || $1 > 33 { bad++ } END { exit bad > 0 || NR == 0 }' "$tmp/drift.drift"
ok $? "drifted: it is +30% ($(tr '\n' ' ' <"$tmp/drift.drift"))"
awk '$1 < -3 || $1 > 3 { bad++ } END { exit bad > 0 || NR == 0 }' "$tmp/steady.drift"
ok $? "steady: it is within 3% ($(tr '\n' ' ' <"$tmp/steady.drift"))"
grep -q "paired median (x)" "$tmp/drift.out" && grep -q "unpaired median (x)" "$tmp/drift.out"
ok $? "the summary's speedups are paired, the unpaired ones beside them"
md=$d/report/report.md
grep -q "before/after paired (x) | paired CI (x) | before/after unpaired (x)" "$md" &&
  grep -q "same path, measured once" "$md" && grep -q "run-to-run drift" "$md"
ok $? "report.md: paired speedups with CIs, sizes measured once, the drift"
grep -q "^# bytes before after NCCL NCCL_symm before_paired after/before_paired after/before_unpaired" \
  "$d/report/latency_all_reduce_bf16_eager_align16.dat"
ok $? "the latency figures carry the paired ratio and its CI"

# tune compare states the drift between two databases whose jobs began with
# the same table: the before passes (neither drifted) agree, the after
# passes' previous-table trials are 30% apart. A job that began with
# another table (DC_THRESHOLDS_FILE) gets no drift figure, and the reason.
"$tune" compare --db "$tmp/drift/t.db" --baseline "$tmp/steady/t.db" --no-plot >"$tmp/cmp.out" 2>&1
"$tune" compare --db "$tmp/drift/t.db" --baseline "$tmp/steady/t.db" --no-plot --json >"$tmp/cmp.json" 2>/dev/null
drift_of() { # drift_of KIND < table output: each op and mode's median drift, in %
  sed -n "/^run-to-run drift ($1 runs): both jobs began with table/,/^[^ ]/p" |
    sed -n 's/^  [a-z_]* *[a-z]* *median \([-+0-9.]*\)%.*/\1/p'
}
b=$(drift_of before <"$tmp/cmp.out" | tr '\n' ' ')
a=$(drift_of after <"$tmp/cmp.out" | tr '\n' ' ')
awk -v b="$b" -v a="$a" 'BEGIN { nb = split(b, x, " "); na = split(a, y, " "); bad = nb != 4 || na != 4
  for (i = 1; i <= nb; i++) bad += x[i] < -3 || x[i] > 3
  for (i = 1; i <= na; i++) bad += y[i] < 27 || y[i] > 33
  exit bad > 0 }'
ok $? "compare, one table: the before passes drift by about 0% ($b), the after passes by +30% ($a), per op and mode"
python3 - "$tmp/cmp.json" <<'PY'
import json, sys
d = {k["kind"]: k for k in json.load(open(sys.argv[1]))["drift"]}
ok = set(d) == {"before", "after"} and all(k["reason"] is None and k["table"] for k in d.values())
ok = ok and d["before"]["table"] == d["after"]["table"] and len(d["after"]["groups"]) == 4
ok = ok and all(abs(g["median_ratio"] - 1.30) < 0.03 for g in d["after"]["groups"])
ok = ok and all(abs(g["median_ratio"] - 1.0) < 0.03 for g in d["before"]["groups"])
sys.exit(0 if ok else 1)
PY
ok $? "compare --json: the same drift, per kind, op and mode, with the table's hash"
"$tune" table | sed 's/{16384, DC_PATH_SINGLE_BLOCK}/{1024, DC_PATH_SINGLE_BLOCK}/' >"$tmp/other.h"
DC_THRESHOLDS_FILE=$tmp/other.h TUNE_SIM_DRIFT_PCT=130 "$tune" "${args[@]}" --seed 8 --db "$tmp/other/t.db" \
  >/dev/null 2>&1
ok $? "a drifting job that began with another table (DC_THRESHOLDS_FILE) runs"
"$tune" compare --db "$tmp/other/t.db" --baseline "$tmp/steady/t.db" --no-plot >"$tmp/cmp2.out" 2>&1
"$tune" compare --db "$tmp/other/t.db" --baseline "$tmp/steady/t.db" --no-plot --json >"$tmp/cmp2.json" 2>/dev/null
test "$(grep -c '^run-to-run drift (\(before\|after\) runs): no figure: the jobs began with different tables' "$tmp/cmp2.out")" = 2 &&
  ! grep -q "median [-+0-9.]*%" "$tmp/cmp2.out"
ok $? "compare, two tables: no drift figure, and why: $(grep -m1 '^run-to-run drift' "$tmp/cmp2.out")"
python3 - "$tmp/cmp2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["drift"]
sys.exit(0 if len(d) == 2 and all(k["table"] is None and k["groups"] == [] and "different tables" in k["reason"] for k in d) else 1)
PY
ok $? "compare --json, two tables: no groups, the reason"

# The knob is checked before anything is written.
for v in 5 abc 2000; do
  TUNE_SIM_DRIFT_PCT=$v "$tune" "${args[@]}" --db "$tmp/bad$v/t.db" >/dev/null 2>"$tmp/bad.err"
  rc=$?
  ok $(( rc == 0 )) "TUNE_SIM_DRIFT_PCT=$v refused (rc $rc)"
  grep -q "TUNE_SIM_DRIFT_PCT" "$tmp/bad.err" && [ ! -e "$tmp/bad$v" ]
  ok $? "  naming the variable, nothing written"
done
tap_end
