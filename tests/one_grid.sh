#!/usr/bin/env bash
# one_grid.sh: the sweep and the before and after passes measure one size
# grid (tune_xover_grid), within --max-bytes: every size an auto pass
# measures is a size the sweep measured every forced path at, so the after
# pass stores a regret for every size of every auto it measures. The job is
# issue 12's: reduce_scatter on 6 ranks, whose granule (bf16 slices of 16
# bytes, registered twin) is no power of two. Then an unaligned job's sweep
# probes whole 4-byte words only.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
db=$tmp/t.db
q() { sqlite3 -batch -noheader "$db" "$1"; }

"$tune" --backend sim --gpus 8 --worlds 6 --ops reduce_scatter --dtypes bf16 --modes graph \
  --offsets 0 --max-bytes 1M --db "$db" --no-report --trials 8 --seed 3 >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "the job of issue 12 exits 0"
[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/err"; tap_end; exit 1; }

sizes() { # kind impl path: the sizes measured, one a line, in order
  q "select distinct c.bytes from configs c join runs r on r.id = c.run_id
     where r.kind = '$1' and c.impl = '$2' and c.path $3 order by c.bytes"
}
sizes before detcoll "= 'auto'" >"$tmp/before"
sizes after detcoll "= 'auto'" >"$tmp/after"
sizes before detcoll_reg "= 'auto'" >"$tmp/before_reg"
ok $(( $(wc -l <"$tmp/before") < 5 )) "the before pass measures $(wc -l <"$tmp/before") sizes"
cmp -s "$tmp/before" "$tmp/after"
ok $? "before and after measure the same sizes"
cmp -s "$tmp/before" "$tmp/before_reg"
ok $? "plain and registered auto share the sizes"
for impl in detcoll detcoll_reg; do
  sizes sweep $impl "<> 'auto'" >"$tmp/sweep_$impl"
  missing=$(comm -23 <(sort "$tmp/before") <(sort "$tmp/sweep_$impl") | wc -l)
  ok $(( missing != 0 )) "every auto size is a size the sweep measured ($impl; $missing missing)"
done
over=$(q "select count(*) from configs where bytes > 1048576")
ok $(( over != 0 )) "no size exceeds --max-bytes ($over do)"
autos=$(q "select count(*) from configs c join runs r on r.id = c.run_id
           where r.kind = 'after' and c.path = 'auto' and c.impl in ('detcoll', 'detcoll_reg')")
regrets=$(q "select count(*) from regret")
ok $(( autos == 0 || regrets != autos )) "a regret for every auto size of the after pass ($regrets of $autos)"

# An unaligned group (offset 4) probes whole 4-byte words only, the regime
# of every grid size (tune_engine_granule): the bisection between grid
# sizes must not land on bf16 sizes of 2 mod 4 bytes.
db=$tmp/u.db
"$tune" --backend sim --gpus 2 --worlds 2 --ops all_gather,all_reduce --dtypes bf16 --modes graph \
  --offsets 4 --max-bytes 1M --db "$db" --no-report --trials 8 --seed 3 >"$tmp/out" 2>"$tmp/err"
ok $? "an unaligned bf16 job exits 0"
sweep_sizes() { # where: sweep configurations of the unaligned job that match it
  q "select count(*) from configs c join runs r on r.id = c.run_id where r.kind = 'sweep' and $1"
}
between=$(sweep_sizes "(c.bytes & (c.bytes - 1)) <> 0")
halves=$(sweep_sizes "c.bytes % 4 <> 0")
ok $(( between == 0 )) "its sweep bisected between grid sizes ($between configurations off the grid)"
ok $(( halves != 0 )) "every size it probed is whole 4-byte words ($halves are not)"
tap_end
