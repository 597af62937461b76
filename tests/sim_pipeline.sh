#!/usr/bin/env bash
# sim_pipeline.sh: the whole main job on the sim backend, end to end: every
# rank's samples stored, crossovers near the model's true ones, a header that
# compiles and whose table read back equals the database, kernels/thresholds.h
# untouched, and the report's files.
set -u
tune=${TUNE_BIN:?TUNE_BIN is set by the harness}
src=${TUNE_SRCDIR:?}
cc=${CC:-cc}
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
command -v gnuplot >/dev/null || { echo "1..0 # SKIP gnuplot not installed"; exit 77; }
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
q() { sqlite3 -batch -noheader "$tmp/t.db" "$1"; }

installed_before=$(cksum <"$src/kernels/thresholds.h")
# The full grid (1 KiB .. 256 MiB), every op, bf16 and fp32, both modes,
# offset 0 and 4, world sizes 2, 4, 8: the main job as a user runs it.
"$tune" --backend sim --gpus 8 --db "$tmp/t.db" --trials 12 --seed 7 >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "sim run exits 0"
[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/err"; echo "1..$n"; exit 1; }

ok $(( $(q "select count(*) from runs where backend <> 'sim'") != 0 )) "every run is marked backend=sim"
ok $(( $(q "select count(*) from runs where finished_at is null") != 0 )) "every run finished"
test "$(q "select group_concat(kind) from (select kind from runs order by id)")" = "before,sweep,after"
ok $? "runs: before, sweep, after"
ok $(( $(q "select count(distinct world) from configs") != 3 )) "world sizes 2, 4, 8"
ok $(( $(q "select count(distinct op)||count(distinct dtype)||count(distinct mode)||count(distinct align) from configs") != 3222 )) "3 ops, 2 dtypes, 2 modes, 2 alignment classes"
ok $(( $(q "select min(bytes) from configs") != 1024 || $(q "select max(bytes) from configs") != 268435456 )) "sizes span 1 KiB .. 256 MiB"
missing=$(q "select count(*) from configs c where (select count(*) from samples s where s.config_id = c.id) <> c.trials * c.world")
ok $(( missing != 0 )) "every config has trials x world samples ($missing without)"
ok $(( $(q "select count(distinct rank) from samples s join configs c on c.id = s.config_id where c.world = 8") != 8 )) "every rank's samples are kept"
ok $(( $(q "select count(*) from crossovers") == 0 )) "crossovers stored"
ok $(( $(q "select count(*) from crossovers where not (ci_lo_ns <= diff_ns and diff_ns <= ci_hi_ns)") != 0 )) "each crossover's CI holds its median difference"
ok $(( $(q "select count(*) from regret") == 0 )) "regret stored"

# Found crossovers against the sim model's true ones (printed by the run).
awk '$1 ~ /^(all_gather|all_reduce|reduce_scatter)$/ && NF == 10 {
       f = $9; t = $10; if (t == 0) { bad++; next }
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
ok $(( measured != 72 || kept == 0 )) "header: 72 measured rows, and the compiled-in rows of other topologies kept ($kept PCIe rows)"
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
     case align when 'align16' then 0 else 1 end,
     case mode when 'eager' then 0 else 1 end,
     skew_ns, max_bytes,
     case path when 'single_block' then 1 when 'fused' then 2 when 'multi_block' then 3 when 'one_shot' then 4 when 'two_shot' then 5 when 'push' then 6 else -1 end
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
for f in "$tmp"/report/*.png; do
  grep -q "$(basename "$f")" "$tmp/report/report.md" || { ok 1 "report.md embeds $(basename "$f")"; break; }
done

# Export works for every table.
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

echo "1..$n"
[ "$failed" -eq 0 ]
