#!/usr/bin/env bash
# mpi_agree.sh: mpirun gives each process its own command line and
# environment (an MPMD line `A : B`, `-x VAR` on some ranks, --wdir), and a
# job must be one job on every process. A main job (--launcher mpi) or a
# fleet whose processes were given other options or TUNE_ variables is
# refused before anything is measured or written, naming the first rank
# that differs and the options that differ (they went on measuring: a
# truncated MPI_Allgather, or a fleet that merged unlike nodes, or one that
# waited forever grouped two ways); and a --resume under mpirun needs the
# database only where rank 0 runs (rank 1 in another folder refused it).
# Under mpirun without --launcher mpi (each process would drive every GPU)
# the job is refused, saying to give it. An interrupted mpi job prints one
# command to continue it (every process printed one), under mpirun.
# A fleet node given another table is refused the same way, and a main job
# whose rank 0 alone was given another --gpus ends instead of hanging.
# Skips (77) without mpirun or an MPI build.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/mpi.sh"
mpi_timeout=120
args=(--backend sim --gpus 2 --launcher mpi --worlds 2 --ops all_reduce --dtypes bf16 --modes graph
  --offsets 0 --no-reg --max-bytes 64K --seed 5)
q() { sqlite3 -readonly -batch -noheader "$1" "$2"; }

# One refused job: exit status 2, the message on rank 0, nothing written.
refused() {
  local rc=$1 dir=$2 what=$3 words=$4
  ok $(( rc != 2 )) "$what: refused (rc $rc)"
  grep -q "rank $5 was given other options than rank 0 ($words" "$tmp/err"
  ok $? "naming rank $5 and what differs ($words)"
  [ ! -e "$dir" ]
  ok $? "nothing written"
}

mpi -np 1 "$tune" "${args[@]}" --trials 6 --db "$tmp/a/t.db" : -np 1 "$tune" "${args[@]}" --trials 7 \
  --db "$tmp/a/t.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "built without MPI" "$tmp/err"; then echo "1..0 # SKIP tune built without MPI"; exit 77; fi
refused $rc "$tmp/a" "--trials 7 on rank 1 only" "rank 1: trials=7..160; rank 0: trials=6..160" 1

mpi -np 1 "$tune" "${args[@]}" --db "$tmp/b/t.db" : -np 1 -x TUNE_TRIALS=9 "$tune" "${args[@]}" \
  --db "$tmp/b/t.db" >"$tmp/out" 2>"$tmp/err"
refused $? "$tmp/b" "TUNE_TRIALS on rank 1 only" "rank 1: trials=9..160; rank 0: trials=20..160" 1

# The sim's model knobs too: rank 1 alone on another model measured a job
# of two models and exited 0 (a review); its fault knobs stay per process.
mpi -np 1 "$tune" "${args[@]}" --db "$tmp/s/t.db" : -np 1 -x TUNE_SIM_DRIFT_PCT=300 "$tune" "${args[@]}" \
  --db "$tmp/s/t.db" >"$tmp/out" 2>"$tmp/err"
refused $? "$tmp/s" "TUNE_SIM_DRIFT_PCT on rank 1 only" "rank 1: TUNE_SIM_DRIFT_PCT=300; rank 0: -" 1

# A fleet of two nodes of two ranks, the second node given --trials 7.
export TUNE_FLEET_NODE_SIZE=2
fleet=(fleet "${args[@]}" --trials 6)
mpi -np 2 "$tune" "${fleet[@]}" --db "$tmp/f/f.db" : -np 2 "$tune" "${fleet[@]}" --trials 7 \
  --db "$tmp/f/f.db" >"$tmp/out" 2>"$tmp/err"
refused $? "$tmp/f" "a fleet node given --trials 7" "rank 2: trials=7..160; rank 0: trials=6..160" 2
mpi -np 3 "$tune" "${fleet[@]}" --db "$tmp/k/f.db" : -np 1 -x TUNE_SIM_SLOW_NODE=1:2:64K "$tune" "${fleet[@]}" \
  --db "$tmp/k/f.db" >"$tmp/out" 2>"$tmp/err"
refused $? "$tmp/k" "TUNE_SIM_SLOW_NODE on one fleet process" "rank 3: TUNE_SIM_SLOW_NODE=1:2:64K; rank 0: -" 3
# A relative --db from another working folder is another file: node 1
# measured into it, and rank 0 then failed to merge a database it never
# found (a review).
mkdir -p "$tmp/w0" "$tmp/w1"
mpi -np 2 --wdir "$tmp/w0" "$tune" "${fleet[@]}" --db rel/f.db : -np 2 --wdir "$tmp/w1" "$tune" "${fleet[@]}" \
  --db rel/f.db >"$tmp/out" 2>"$tmp/err"
refused $? "$tmp/w1/rel" "a relative --db from two working folders" "rank 2: db=$tmp/w1/rel/f.db; rank 0: db=$tmp/w0/rel/f.db" 2

# A fleet node given another table (DC_THRESHOLDS_FILE) measured with it,
# and the fleet exited 0 (a review).
"$tune" table | sed 's/{16384, DC_PATH_SINGLE_BLOCK}/{1024, DC_PATH_SINGLE_BLOCK}/' >"$tmp/other.h"
mpi -np 2 "$tune" "${fleet[@]}" --db "$tmp/t/f.db" : -np 2 -x DC_THRESHOLDS_FILE="$tmp/other.h" "$tune" \
  "${fleet[@]}" --db "$tmp/t/f.db" >"$tmp/out" 2>"$tmp/err"
refused $? "$tmp/t" "a fleet node given DC_THRESHOLDS_FILE" "rank 2: table=[0-9a-f]*; rank 0: table=" 2
# A main job whose rank 1 alone was given another --gpus: rank 0 refused
# it and rank 1 waited for rank 0 forever (a review). Both stop now.
mpi_timeout=60 mpi -np 1 "$tune" "${args[@]}" --gpus 4 --db "$tmp/n/t.db" : -np 1 "$tune" "${args[@]}" \
  --db "$tmp/n/t.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc == 0 || rc == 124 )) "--gpus 4 on rank 0 alone under -np 2: the job ends, failed (rc $rc, 124: a hang)"
grep -q -- "--gpus 4 but mpirun started 2 processes" "$tmp/err" && [ ! -e "$tmp/n" ]
ok $? "saying why, nothing written"

# The grouping on two ranks only: they split by rank, the others by host.
start=$(date +%s)
unset TUNE_FLEET_NODE_SIZE
mpi -np 2 -x TUNE_FLEET_NODE_SIZE=2 "$tune" "${fleet[@]}" --db "$tmp/g/f.db" : -np 2 "$tune" "${fleet[@]}" \
  --db "$tmp/g/f.db" >"$tmp/out" 2>"$tmp/err"
refused $? "$tmp/g" "TUNE_FLEET_NODE_SIZE on 2 of 4 ranks ($(( $(date +%s) - start )) s)" \
  "rank 2: TUNE_FLEET_NODE_SIZE=0; rank 0: TUNE_FLEET_NODE_SIZE=2" 2

# --resume with rank 1 in a folder where the database is not: stopped in
# its sweep (every process waits there for the signal), then resumed.
mkdir -p "$tmp/r" "$tmp/elsewhere" && cd "$tmp/r" || exit 1
TUNE_SIM_PAUSE_AFTER=4 mpirun --oversubscribe --bind-to none -x TUNE_SIM_PAUSE_AFTER -np 2 "$tune" "${args[@]}" \
  --trials 6 --db m/t.db >"$tmp/out" 2>"$tmp/err" &
pid=$!
swept=0
for _ in $(seq 400); do
  swept=$(q m/t.db "select count(*) from configs c join runs r on r.id = c.run_id where r.kind = 'sweep'" 2>/dev/null)
  [ "${swept:-0}" -ge 4 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.25
done
kill -TERM $pid
wait $pid
ok $(( $(q m/t.db "select count(*) from runs where finished_at is null") == 0 )) \
  "a job stopped in its sweep ($swept configs swept)"
mpi -np 1 "$tune" "${args[@]}" --trials 6 --db m/t.db --resume : -np 1 --wdir "$tmp/elsewhere" "$tune" \
  "${args[@]}" --trials 6 --db m/t.db --resume >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "--resume with rank 1 in another folder continues it (rc $rc)"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | head -5
ok $(( $(q m/t.db "select count(*) from runs where finished_at is null") != 0 )) "every run finished"
ok $(( $(q m/t.db "select count(*) from runs") != 3 )) "in the one chain: before, sweep, after"
[ -z "$(ls -A "$tmp/elsewhere")" ]
ok $? "nothing written where rank 1 ran"
# Under mpirun without --launcher mpi, each process would run the whole job
# on every GPU (the threads launcher): refused, naming the way out.
threads=()
for a in "${args[@]}"; do case $a in --launcher | mpi) ;; *) threads+=("$a") ;; esac; done
mpi -np 2 "$tune" "${threads[@]}" --db "$tmp/t/t.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 2 )) "mpirun -np 2 without --launcher mpi: refused (rc $rc)"
grep -q "this is one of 2 processes mpirun started, and --launcher is threads.*give --launcher mpi" "$tmp/err" &&
  [ ! -e "$tmp/t" ]
ok $? "saying to give --launcher mpi, nothing written: $(head -n1 "$tmp/err")"

# An mpi job interrupted: rank 0 alone prints the command that continues
# it, under mpirun, and that command finishes the job.
mkdir -p "$tmp/i"
TUNE_SIM_PAUSE_AFTER=20 mpirun --oversubscribe --bind-to none -np 2 "$tune" "${args[@]}" --db "$tmp/i/t.db" \
  >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1200); do grep -qs "^pid " "$tmp/i/t.db.lock" && break; sleep 0.05; done
sleep 1
kill -INT $pid
wait $pid
ok $(( $(grep -c "to continue the job, run:" "$tmp/err") != 1 )) "an interrupted mpi job prints one resume command"
cmd=$(sed -n '/to continue the job, run:/{n;s/^  //;p;}' "$tmp/err")
case $cmd in *" mpirun -np 2 $tune "* | "mpirun -np 2 $tune "*) r=0 ;; *) r=1 ;; esac
ok $r "under mpirun -np 2 ($cmd)"
(eval "${cmd/mpirun/timeout 120 mpirun --oversubscribe --bind-to none}") >"$tmp/out" 2>"$tmp/err"
ok $? "which finishes the job: $(tail -n1 "$tmp/err")"

tap_end
