#!/usr/bin/env bash
# gpu_tune.sh: a small real sweep on the GPU with 2 virtual ranks: every
# rank's samples stored, every result correct (registered buffers too),
# crossovers with CIs, a header that compiles and equals the database, and
# an after pass that measures the header's table in the same process
# (dc_comm_set_table), paired with the job's previous table in the same
# trials (issue 18). A --max-bytes too large for the GPU is refused by
# name, with nothing written. The header goes to a temporary folder, so
# kernels/thresholds.h is untouched and nothing is rebuilt. Skips (77)
# without a GPU.
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
cc=${CC:-cc}
ls /dev/nvidia[0-9]* >/dev/null 2>&1 || { echo "1..0 # SKIP no GPU"; exit 77; }
# Queries go through python3's sqlite3 module: GPU machines may lack the sqlite3 command.
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }
q() {
  python3 -c 'import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(str(v) for v in row))' "$tmp/t.db" "$1"
}

installed=$(cksum <"$src/kernels/thresholds.h")
"$tune" --virtual-ranks --gpus 2 --worlds 2 --ops all_reduce,all_gather --dtypes bf16 --max-bytes 256K \
  --trials 8 --max-trials 32 --db "$tmp/t.db" --header "$tmp/thresholds.h" --no-report >"$tmp/out" 2>&1
rc=$?
ok $rc "small GPU sweep exits 0"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/out"
ok $(( $(q "select count(*) from runs where backend <> 'gpu' or gpu_model = 'sim H200'") != 0 )) "runs are gpu runs"
test "$(q "select group_concat(kind) from (select kind from runs order by id)")" = "before,sweep,after"
ok $? "runs: before, sweep and after, in one process"
hash=$("$tune" table --file "$tmp/thresholds.h" --hash)
q "select thresholds from runs where kind = 'after'" | grep -q "table $hash"
ok $? "the after pass measured the header's table ($hash) without a rebuild"
autos=$(q "select count(*) from configs c join runs r on r.id = c.run_id where r.kind = 'after' and c.path = 'auto' and c.impl in ('detcoll', 'detcoll_reg')")
ok $(( autos == 0 || autos != $(q "select count(*) from regret") )) "a regret for each of the $autos auto sizes"
ok $(( $(q "select count(*) from pairs") != autos )) "issue 18: every auto size paired with the previous table"
ok $(q "select count(*) from pairs p join configs v on v.id = p.prev_config join configs n on n.id = p.new_config
  where v.chosen_path <> p.prev_path or n.chosen_path <> p.new_path or v.trials <> n.trials
  or (p.shared = 0 and v.impl <> n.impl || '_prev')") "the previous table's configs ran its paths in the same trials"
missing=$(q "select count(*) from configs c where (select count(*) from samples s where s.config_id = c.id) <> c.trials * c.world")
ok $(( missing != 0 )) "every config has trials x world samples"
ok $(( $(q "select count(*) from samples where elapsed_ns <= 0") != 0 )) "every sample is a positive time"
ok $(( $(q "select coalesce(sum(wrong_elems), 1) from configs") != 0 )) "no wrong element in any config"
ok $(( $(q "select count(distinct path) from configs where run_id = 2") < 5 )) "the sweep measured the forced paths"
ok $(( $(q "select count(*) from crossovers where not (ci_lo_ns <= diff_ns and diff_ns <= ci_hi_ns)") != 0 )) "crossover CIs hold their differences"
ok $(( $(test "$installed" = "$(cksum <"$src/kernels/thresholds.h")"; echo $?) )) "kernels/thresholds.h untouched"
printf '#include "thresholds.h"\nint main(void) { return (int)(sizeof(dc_thresholds) == 0); }\n' >"$tmp/c.c"
$cc -std=c11 -Wall -Wextra -Werror -I"$tmp" -I"$src/kernels" "$tmp/c.c" -o "$tmp/c"
ok $? "the header compiles against kernels/"
rows=$(grep -c "^  {90, 2, DC_TOPO_SINGLE_GPU" "$tmp/thresholds.h")
ok $(( rows != 12 )) "12 measured rows: 2 ops x 3 classes (align16, unaligned, reg16) x 2 modes (found $rows)"
ok $(( $(grep "^  {90, 2, DC_TOPO_SINGLE_GPU" "$tmp/thresholds.h" | grep -c DC_ALIGN_REG) != 4 )) "4 of them DC_ALIGN_REG rows"
ok $(( $(q "select count(distinct path) from configs where run_id = 2 and impl = 'detcoll_reg' and path in ('direct', 'copy_engine')") != 2 )) \
  "the registered sweep measured direct and copy_engine"
ok $(( $(q "select count(*) from header_rows where sm = 90 and world = 2 and topo = 'single_gpu'") == 0 )) "the header's rows are in the database"

# A --max-bytes whose buffers cannot fit on the GPU (2 virtual ranks at 64G
# need 512 GiB): refused by name before anything is measured or written.
mkdir -p "$tmp/big"
"$tune" --virtual-ranks --gpus 2 --worlds 2 --ops all_gather --dtypes bf16 --max-bytes 64G \
  --db "$tmp/big/t.db" --header "$tmp/big/t.h" --no-report >"$tmp/big.out" 2>&1
rc=$?
ok $(( rc == 0 )) "--max-bytes 64G on 2 virtual ranks: refused (exit $rc)"
grep -q "free; the buffers of its 2 ranks at --max-bytes 64G need 512.0 GiB" "$tmp/big.out"
ok $? "... naming the GPU's free memory, the need and --max-bytes: $(grep -m1 'error' "$tmp/big.out")"
test -z "$(ls -A "$tmp/big")"
ok $? "... and nothing written ($(ls -A "$tmp/big" | xargs))"

# A DC_TIMEOUT_NS libdetcoll would refuse at its first communicator: refused
# before anything is measured or written, naming it.
DC_TIMEOUT_NS=-1 "$tune" --virtual-ranks --gpus 2 --worlds 2 --ops all_gather --dtypes bf16 --max-bytes 64K \
  --db "$tmp/big/t.db" --header "$tmp/big/t.h" --no-report >"$tmp/env.out" 2>&1
rc=$?
ok $(( rc != 2 )) "DC_TIMEOUT_NS=-1: refused (exit $rc)"
grep -q "libdetcoll: DC_TIMEOUT_NS '-1': not a whole number of nanoseconds" "$tmp/env.out"
ok $? "... naming it: $(grep -m1 'error' "$tmp/env.out")"
test -z "$(ls -A "$tmp/big")"
ok $? "... and nothing written ($(ls -A "$tmp/big" | xargs))"
tap_end
