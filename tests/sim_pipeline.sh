#!/usr/bin/env bash
# sim_pipeline.sh: the whole main job on the sim backend, end to end: every
# rank's samples stored, crossovers near the model's true ones, a header that
# compiles and whose table read back equals the database, kernels/thresholds.h
# untouched, and the report's files; registered buffers (detcoll_reg) beside
# the plain ones, with reg16 rows and the paths that need registration.
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
cc=${CC:-cc}
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
command -v gnuplot >/dev/null || { echo "1..0 # SKIP gnuplot not installed"; exit 77; }
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }
q() { sqlite3 -batch -noheader "$tmp/t.db" "$1"; }

installed_before=$(cksum <"$src/kernels/thresholds.h")
# The full grid (1 KiB .. 256 MiB), every op, bf16 and fp32, both modes,
# offset 0 and 4 (and offset 0 registered), world sizes 2, 4, 8: the main
# job as a user runs it.
"$tune" --backend sim --gpus 8 --db "$tmp/t.db" --trials 12 --seed 7 >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "sim run exits 0"
[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/err"; echo "1..$tap_n"; exit 1; }

ok $(( $(q "select count(*) from runs where backend <> 'sim'") != 0 )) "every run is marked backend=sim"
ok $(( $(q "select count(*) from runs where finished_at is null") != 0 )) "every run finished"
test "$(q "select group_concat(kind) from (select kind from runs order by id)")" = "before,sweep,after"
ok $? "runs: before, sweep, after"
ok $(( $(q "select count(distinct world) from configs") != 3 )) "world sizes 2, 4, 8"
ok $(( $(q "select count(distinct op)||count(distinct dtype)||count(distinct mode)||count(distinct align) from configs") != 3223 )) "3 ops, 2 dtypes, 2 modes, 3 alignment classes"
test "$(q "select group_concat(impl || ':' || align, ' ') from (select distinct impl, align from configs
  where impl in ('detcoll', 'detcoll_reg') order by 1, 2)")" = "detcoll:align16 detcoll:unaligned detcoll_reg:reg16"
ok $? "detcoll on align16 and unaligned buffers, detcoll_reg on reg16 ones only"
ok $(q "select count(*) from configs c join runs r on r.id = c.run_id where c.impl not in ('detcoll', 'detcoll_reg')
  and not (r.kind = 'after' and c.path = 'auto' and ((c.impl = 'detcoll_prev' and c.align <> 'reg16')
  or (c.impl = 'detcoll_reg_prev' and c.align = 'reg16')))") \
  "the previous table's configs: auto, after run, detcoll_prev on plain buffers, detcoll_reg_prev on reg16"
bad=$(q "select count(*) from configs where impl = 'detcoll' and path in ('direct', 'copy_engine')")
ok $(( bad != 0 )) "unregistered buffers never run a path that needs registration ($bad configs)"
test "$(q "select group_concat(op || '/' || path, ' ') from (select distinct op, path from configs c join runs r on r.id = c.run_id where r.kind = 'sweep' and impl = 'detcoll_reg' and path in ('push', 'direct', 'copy_engine') order by 1, 2)")" = \
  "all_gather/copy_engine all_gather/direct all_gather/push all_reduce/direct all_reduce/push reduce_scatter/direct reduce_scatter/push"
ok $? "the registered sweep measures push, direct and copy_engine where each op has them"
for kind in before after; do
  plain=$(q "select count(*) from configs c join runs r on r.id = c.run_id where r.kind = '$kind' and impl = 'detcoll' and path = 'auto' and in_offset = 0")
  reg=$(q "select count(*) from configs c join runs r on r.id = c.run_id where r.kind = '$kind' and impl = 'detcoll_reg' and path = 'auto'")
  ok $(( plain == 0 || plain != reg )) "$kind pass: detcoll_reg auto at every size detcoll auto ran at offset 0 ($reg of $plain)"
done
ok $(( $(q "select count(*) from regret where align = 'reg16'") == 0 )) "regret stored for reg16"
ok $(( $(q "select min(bytes) from configs") != 1024 || $(q "select max(bytes) from configs") != 268435456 )) "sizes span 1 KiB .. 256 MiB"
missing=$(q "select count(*) from configs c where (select count(*) from samples s where s.config_id = c.id) <> c.trials * c.world")
ok $(( missing != 0 )) "every config has trials x world samples ($missing without)"
ok $(( $(q "select count(distinct rank) from samples s join configs c on c.id = s.config_id where c.world = 8") != 8 )) "every rank's samples are kept"
ok $(( $(q "select count(*) from crossovers") == 0 )) "crossovers stored"
ok $(( $(q "select count(*) from crossovers where not (ci_lo_ns <= diff_ns and diff_ns <= ci_hi_ns)") != 0 )) "each crossover's CI holds its median difference"
ok $(( $(q "select count(*) from regret") == 0 )) "regret stored"

# Found crossovers against the sim model's true ones (printed by the run;
# "none" where the model has none in range).
awk '$1 ~ /^(all_gather|all_reduce|reduce_scatter)$/ && NF == 10 {
       f = $9; t = $10; if (t == "none") { bad++; next }
       r = f / t; if (r < 0.8 || r > 1.25) bad++; total++ }
     END { print total + 0, bad + 0 }' "$tmp/out" >"$tmp/xo"
read -r total bad <"$tmp/xo"
ok $(( total == 0 || bad != 0 )) "all $total crossovers within 20% of the model's true crossover ($bad outside)"

# The header: beside the database, not installed, compiles, equals the database.
ok $(( $(test -f "$tmp/thresholds.h"; echo $?) )) "header written beside the database"
ok $(( $(test "$installed_before" = "$(cksum <"$src/kernels/thresholds.h")"; echo $?) )) "kernels/thresholds.h untouched"
grep -q "SIMULATED" "$tmp/thresholds.h"
ok $? "header banner says SIMULATED"
measured=$(grep -c "^  {90, " "$tmp/thresholds.h")
kept=$(grep -c "DC_TOPO_PCIE" "$tmp/thresholds.h")
ok $(( measured != 90 || kept == 0 )) "header: 90 measured rows (all_gather in bf16 only), and the compiled-in rows of other topologies kept ($kept PCIe rows)"
ok $(( $(grep -c "^  {90, .*DC_ALIGN_REG," "$tmp/thresholds.h") != 30 )) "header: 30 of them DC_ALIGN_REG rows"
grep "^  {90, .*DC_OP_ALL_GATHER, .*DC_ALIGN_REG, DC_MODE_GRAPH," "$tmp/thresholds.h" | grep -q "DC_PATH_DIRECT}.*DC_PATH_COPY_ENGINE}"
ok $? "reg16 all_gather rows go direct, then copy_engine at large sizes"
ok $(( $(grep "^  {90, " "$tmp/thresholds.h" | grep -v DC_ALIGN_REG | grep -c "DC_PATH_DIRECT\|DC_PATH_COPY_ENGINE") != 0 )) "align16 and unaligned rows name no path that needs registration"
cat >"$tmp/dump.c" <<'C'
#include <inttypes.h>
#include <stdio.h>
#include "thresholds.h"
int main(void) {
  for (size_t i = 0; i < sizeof(dc_thresholds) / sizeof(dc_thresholds[0]); i++) {
    const dc_threshold_row *r = &dc_thresholds[i];
    for (int k = 0; k < r->nseg; k++)
      printf("%d|%d|%d|%d|%d|%d|%d|%" PRId64 "|%" PRId64 "|%d\n", r->sm, r->world, r->topo, r->op, r->dtype,
             r->align, r->mode, r->skew_ns, r->seg[k].max_bytes == DC_BYTES_MAX ? (int64_t)-1 : (int64_t)r->seg[k].max_bytes,
             r->seg[k].path);
  }
  return 0;
}
C
$cc -std=c11 -Wall -Wextra -Werror -I"$tmp" -I"$src/kernels" "$tmp/dump.c" -o "$tmp/dump" 2>"$tmp/ccerr"
ok $? "the generated header compiles against kernels/"
"$tmp/dump" >"$tmp/from_header"
# Enum values by name, as dc_table.h orders them.
q "select sm, world,
     case topo when 'single_gpu' then 0 when 'nvlink' then 1 else 2 end,
     case op when 'all_gather' then 0 when 'all_reduce' then 1 else 2 end,
     case dtype when 'bf16' then 0 when 'fp16' then 1 else 2 end,
     case align when 'align16' then 0 when 'unaligned' then 1 when 'reg16' then 2 else -1 end,
     case mode when 'eager' then 0 else 1 end,
     skew_ns, max_bytes,
     case path when 'single_block' then 1 when 'fused' then 2 when 'multi_block' then 3 when 'one_shot' then 4 when 'two_shot' then 5 when 'push' then 6 when 'direct' then 7 when 'copy_engine' then 8 when 'pipeline' then 9 else -1 end
   from header_rows where header_id = (select max(id) from headers) order by row_index, seg_index" | tr -d ' ' >"$tmp/from_db"
cmp -s "$tmp/from_header" "$tmp/from_db"
ok $? "header table read back equals the database ($(wc -l <"$tmp/from_header") segments)"
hdr_sha=$(sha256sum "$tmp/thresholds.h" | cut -d' ' -f1)
ok $(( $(test "$hdr_sha" = "$(q 'select sha256 from headers order by id desc limit 1')"; echo $?) )) "stored sha256 matches the file"

# The report.
ok $(( $(test -s "$tmp/report/report.md"; echo $?) )) "report.md written"
pngs=$(ls "$tmp"/report/*.png 2>/dev/null | wc -l)
svgs=$(ls "$tmp"/report/*.svg 2>/dev/null | wc -l)
ok $(( pngs == 0 || pngs != svgs )) "PNG and SVG for every plot ($pngs PNG, $svgs SVG)"
ok $(( $(ls "$tmp"/report/latency_*_reg16.png "$tmp"/report/crossover_*_reg16.png 2>/dev/null | wc -l) != 20 )) "latency and crossover plots for every reg16 group"
for f in "$tmp"/report/*.png; do
  grep -q "$(basename "$f")" "$tmp/report/report.md" || { ok 1 "report.md embeds $(basename "$f")"; break; }
done

# The job ends with the summary, and report.md starts with the same one.
# (python prints "status<TAB>description" per check; ok numbers them)
python3 - "$tmp" >"$tmp/sum_checks" <<'PY'
import re, sys
tmp = sys.argv[1]
out = open(tmp + "/out").read().splitlines()
md = open(tmp + "/report/report.md").read()
def ok(cond, what):
    print("%d\t%s" % (0 if cond else 1, what))
s = out.index("summary") if "summary" in out else len(out)
tail = out[s + 1:]
items = [l.strip() for l in tail if re.match(r"^  (  )?[a-z]", l) and not l.startswith("    op ")]
items = [l for l in items if not re.match(r"^(all_gather|all_reduce|reduce_scatter) +[0-9]", l)]
def has(prefix):
    return any(l.startswith(prefix) for l in items)
ok(s < len(out), "the job's output ends with a summary block")
ok(has("thresholds header: %s/thresholds.h (simulated, not installed" % tmp), "summary: where the header went")
ok(has("rows changed: ") and "differ from the table compiled in" in "\n".join(items), "summary: rows changed against the compiled-in table")
ok(has("speedup before -> after") and any(re.match(r"^    all_reduce +2 +[0-9.]+ +[0-9.]+( \[[0-9.]+, [0-9.]+\])? \(", l) for l in tail), "summary: before -> after speedup per op and world")
ok(has("detcoll vs NCCL: NCCL was not measured: the sim backend"), "summary: a sim run says NCCL was not measured, and why")
ok(has("regret (") and re.search(r"max [0-9.]+x at ", "\n".join(items)) is not None, "summary: the regret figure")
# The share of sizes at the regret target, per mode, as the database holds it.
import sqlite3
db = sqlite3.connect(tmp + "/t.db")
after = db.execute("SELECT MAX(id) FROM runs WHERE kind = 'after'").fetchone()[0]
modes = db.execute("SELECT mode, SUM(regret <= 1.03), COUNT(*) FROM regret WHERE run_id = ? GROUP BY mode"
                   " ORDER BY mode", (after,)).fetchall()
want = "at most 1.03x at %d of %d sizes (%s); max " % (sum(m[1] for m in modes), sum(m[2] for m in modes),
                                                     ", ".join("%s %d of %d" % m for m in modes))
ok(len(modes) == 2 and any(l.startswith("regret (") and want in l for l in items),
   "summary: the sizes at the regret target, per mode, as in the database (%s)" % want)
ok(out[-1] == "  report: %s/report/report.md" % tmp, "summary: the last line is where the report is")
heads = re.findall(r"^## .*$", md, re.M)
ok(heads[:1] == ["## Summary"], "report.md starts with the summary")
missing = [l for l in items if ("- " + l) not in md and not l.startswith("report: ")]
ok(not missing, "report.md's summary holds every item of the job's (%d; missing: %s)" % (len(items), missing[:2]))
ok("NCCL (us)" not in md and "NCCL was not measured, so there are no NCCL columns: the sim backend" in md,
   "report.md: no empty NCCL column, and it says why")
# busbw = bytes / t * 2(W-1)/W for all_reduce, (W-1)/W for the others; algbw's S per op.
mult = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
checked = bad = 0
op = None
for line in md.splitlines():
    m = re.match(r"^### (all_gather|all_reduce|reduce_scatter) ", line)
    if m: op = m.group(1)
    m = re.match(r"^\| (\d+) \| (\d+)([KMG]?) \| [-0-9.]+ \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|", line)
    if not m or op is None: continue
    w, b, t = int(m.group(1)), int(m.group(2)) * mult[m.group(3)], float(m.group(4)) * 1e3
    alg = b * (w if op == "all_gather" else 1) / t
    bus = alg * (2.0 if op == "all_reduce" else 1.0) * (w - 1) / w
    checked += 1
    # the table rounds t to 10 ns and the bandwidths to 0.01 GB/s
    if abs(float(m.group(5)) - alg) > 0.006 + alg * 6e-3 or abs(float(m.group(6)) - bus) > 0.006 + bus * 6e-3:
        bad += 1
ok(checked > 100 and bad == 0, "report.md: algbw and busbw equal nccl-tests' formula (%d rows, %d off)" % (checked, bad))
PY
ok $? "summary checks ran"
while IFS=$'\t' read -r st what; do ok "$st" "$what"; done <"$tmp/sum_checks"

for t in runs configs samples crossovers headers header_rows regret; do
  "$tune" export --db "$tmp/t.db" --format csv --table $t >"$tmp/e.csv" 2>/dev/null
  rc=$?
  rows=$(python3 -c 'import csv, sys; print(sum(1 for _ in csv.reader(open(sys.argv[1]))) - 1)' "$tmp/e.csv")
  ok $(( rc != 0 || rows != $(q "select count(*) from $t") )) "export csv $t: $rows rows"
done
"$tune" export --db "$tmp/t.db" --format json >"$tmp/e.json" 2>/dev/null
ok $? "export json of every table"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["samples"]) > 0' "$tmp/e.json"
ok $? "the json parses and holds the samples"

# Skew as a tuning dimension: crossovers at zero skew and under a typical
# skew, both in the header, with their skew.
"$tune" --backend sim --gpus 4 --worlds 4 --ops all_reduce --dtypes bf16 --modes graph --offsets 0 \
  --tune-skew-us 200 --trials 10 --db "$tmp/s.db" --no-report >"$tmp/sout" 2>&1
ok $? "sim run with --tune-skew-us 200"
test "$(sqlite3 "$tmp/s.db" "select group_concat(skew_ns) from (select distinct skew_ns from crossovers order by 1)")" = "0,200000"
ok $? "crossovers at zero skew and at 200 us"
grep -q "^  {90, 4, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_ALIGN_16, DC_MODE_GRAPH, 200000," "$tmp/thresholds.h"
ok $? "the header holds the 200 us row beside the zero-skew one"
grep -q "^  {90, 4, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_ALIGN_REG, DC_MODE_GRAPH, 200000," "$tmp/thresholds.h"
ok $? "and the registered group's 200 us row"

# --no-reg: plain buffers only, no reg16 rows.
mkdir -p "$tmp/n"
"$tune" --backend sim --gpus 2 --worlds 2 --ops all_gather --dtypes bf16 --modes graph --offsets 0 \
  --no-reg --trials 10 --db "$tmp/n/n.db" --no-report >"$tmp/nout" 2>&1
ok $? "sim run with --no-reg"
ok $(( $(sqlite3 "$tmp/n/n.db" "select count(*) from configs where impl not in ('detcoll', 'detcoll_prev') or align = 'reg16' or path in ('direct', 'copy_engine')") != 0 )) "--no-reg: no detcoll_reg config, no reg16, no direct or copy_engine"
ok $(( $(grep -c "^  {90, .*DC_ALIGN_REG," "$tmp/n/thresholds.h") != 0 )) "--no-reg: no DC_ALIGN_REG row in the header"

tap_end
