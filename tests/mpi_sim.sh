#!/usr/bin/env bash
# mpi_sim.sh: the whole main job -- before, sweep, header, after, report --
# inside one `mpirun -np 2`, on the sim backend, one rank per process. Only
# rank 0 holds the database; the after pass's table reaches rank 1 through
# the launcher, and the sim checks that every rank's auto dispatch chose the
# path rank 0 chose; the job's previous table reaches rank 1 the same way
# and is paired with the new one (issue 18); the after pass's regret is
# measured as in one process: auto dispatch against the sweep's best forced
# path, in the same trials on both ranks. A rank 1 given another table
# (DC_THRESHOLDS_FILE) is refused before anything is written. Skips (77)
# without mpirun or an MPI build.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/mpi.sh"
# Open MPI refuses root unless told; its own allocations are not ours to
# leak-check under ASan.
args=(--backend sim --gpus 2 --launcher mpi --worlds 2 --ops all_reduce,reduce_scatter --dtypes bf16
  --modes graph,eager --offsets 0,4 --max-bytes 256K --trials 6 --seed 5)
q() { sqlite3 -batch -noheader "$tmp/m/t.db" "$1"; }

mpi -np 2 "$tune" "${args[@]}" --db "$tmp/m/t.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "built without MPI" "$tmp/err"; then echo "1..0 # SKIP tune built without MPI"; exit 77; fi
ok $rc "mpirun -np 2 tune --backend sim --launcher mpi exits 0"
[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/err" | tail -20; tap_end; exit 1; }
test "$(q "select group_concat(kind || ':' || launcher) from (select kind, launcher from runs order by id)")" \
  = "before:mpi,sweep:mpi,after:mpi"
ok $? "one database, written by rank 0: before, sweep and after runs, launcher mpi"
ok $(( $(q "select count(*) from runs where finished_at is null") != 0 )) "every run finished"
ok $(( $(q "select count(distinct rank) from samples") != 2 )) "samples of both ranks"
test -s "$tmp/m/report/report.md"
ok $? "the report is drawn in the same job"
test -s "$tmp/m/thresholds.h"
ok $? "the header is written beside the database"
hash=$("$tune" table --file "$tmp/m/thresholds.h" --hash)
q "select thresholds from runs where kind = 'after'" | grep -q "table $hash"
ok $? "the after pass measured the header's table ($hash)"
autos=$(q "select count(*) from configs c join runs r on r.id = c.run_id
           where r.kind = 'after' and c.path = 'auto' and c.impl in ('detcoll', 'detcoll_reg')")
ok $(( autos == 0 || autos != $(q "select count(*) from regret") )) "a regret for each of the $autos auto sizes"
# The after pass's regret is taken against the best forced path measured
# in its own trials, on every rank, as under the threads launcher: each
# regret's best_ns is the median of a forced config of the after run.
own=$(q "select count(*) from regret g where exists (select 1 from configs c where c.run_id = g.run_id
  and c.path = g.best_path and c.op = g.op and c.dtype = g.dtype and c.world = g.world and c.align = g.align
  and c.mode = g.mode and c.bytes = g.bytes and c.median_ns = g.best_ns
  and (select count(distinct rank) from samples s where s.config_id = c.id) = 2)")
ok $(( own == 0 || own != autos )) "every regret against the after pass's own measurement of the best path, on both ranks ($own of $autos)"
# Issue 18: the previous table reaches rank 1 too, and the after pass pairs
# it with the new one in the same trials on both ranks.
ok $(( $(q "select count(*) from pairs where shared = 0") == 0 )) \
  "paired sizes where the tables differ ($(q "select count(*) from pairs where shared = 0"))"
ok $(( $(q "select count(*) from pairs") != autos )) "every auto size of the after pass is paired"
ok $(q "select count(*) from pairs p join configs v on v.id = p.prev_config
  where p.shared = 0 and (v.chosen_path <> p.prev_path or
    (select count(distinct rank) from samples s where s.config_id = v.id) <> 2)") \
  "the previous table's configs ran on both ranks, on its paths"
grep -q "run-to-run drift: the previous table" "$tmp/out"
ok $? "the summary states the drift"
grep -q -- "--after-of" "$tmp/out" "$tmp/err"
ok $(( $? == 0 )) "no after pass left to run by hand"

# Rank 1 with another table: refused before anything is written (its auto
# dispatch disagreed with rank 0's in the before pass, after the database
# was made; a review).
"$tune" table | sed 's/{16384, DC_PATH_SINGLE_BLOCK}/{1024, DC_PATH_SINGLE_BLOCK}/' >"$tmp/other.h"
cmp -s "$tmp/other.h" <("$tune" table)
ok $(( $? == 0 )) "a second table that differs"
mpi -np 1 "$tune" "${args[@]}" --db "$tmp/d/t.db" : \
  -np 1 env DC_THRESHOLDS_FILE="$tmp/other.h" "$tune" "${args[@]}" --db "$tmp/d/t.db" >"$tmp/out2" 2>"$tmp/err2"
rc=$?
ok $(( rc != 2 )) "ranks with different tables: refused (rc $rc)"
grep -q "rank 1 was given other options than rank 0 (rank 1: table=[0-9a-f]*; rank 0: table=" "$tmp/err2" &&
  [ ! -e "$tmp/d" ]
ok $? "naming the tables' hashes, nothing written"
tap_end
