#!/usr/bin/env bash
# gpu_mpi_tune.sh: the whole main job on two GPUs inside one `mpirun -np 2`
# (--launcher mpi): before, sweep, header, after (rank 0's new table handed
# to rank 1, dc_comm_set_table on both) and report, with every result
# correct. The header goes to a temporary folder: nothing is installed or
# rebuilt. Skips (77) without mpirun or two GPUs. Without gnuplot (the
# device machines have none) the job runs with --no-report and the report
# check is skipped; `tune report` on the database draws it elsewhere.
set -u
. "$(dirname "$0")/tap.sh"
command -v mpirun >/dev/null 2>&1 || { echo "1..0 # SKIP no mpirun"; exit 77; }
[ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ] || { echo "1..0 # SKIP fewer than two GPUs"; exit 77; }
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }
q() {
  python3 -c 'import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(str(v) for v in row))' "$tmp/t.db" "$1"
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
report=
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || report=--no-report
timeout 600 mpirun -np 2 --bind-to none "$tune" --gpus 2 --launcher mpi --worlds 2 --ops all_reduce,all_gather \
  --dtypes bf16 --max-bytes 256K --trials 8 --max-trials 32 --db "$tmp/t.db" --header "$tmp/thresholds.h" \
  $report >"$tmp/out" 2>&1
rc=$?
ok $rc "mpirun -np 2 tune --gpus 2 --launcher mpi exits 0"
[ $rc -eq 0 ] || tail -30 "$tmp/out" | sed 's/^/# /'
test "$(q "select group_concat(kind || ':' || launcher) from (select kind, launcher from runs order by id)")" \
  = "before:mpi,sweep:mpi,after:mpi"
ok $? "before, sweep and after runs in one mpirun"
ok $(( $(q "select count(*) from runs where finished_at is null") != 0 )) "every run finished"
ok $(( $(q "select count(distinct rank) from samples") != 2 )) "samples of both ranks"
ok $(( $(q "select coalesce(sum(wrong_elems), 1) from configs") != 0 )) "no wrong element in any config"
hash=$("$tune" table --file "$tmp/thresholds.h" --hash)
q "select thresholds from runs where kind = 'after'" | grep -q "table $hash"
ok $? "the after pass measured the header's table ($hash)"
if [ -z "$report" ]; then
  test -s "$(dirname "$tmp/t.db")/report/report.md"
  ok $? "the report is drawn in the same job"
else
  tap_skip "the report is drawn in the same job # SKIP gnuplot not installed"
fi
tap_end
