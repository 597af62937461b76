#!/usr/bin/env bash
# mpi_stop.sh: one process of a job under mpirun stops -- SIGTERM to it
# alone -- and every other process stops too instead of waiting for it in
# the next collective (a review found both hung for good): the main job
# under --launcher mpi (rank 1 stopped) and tune fleet (a node's second
# process stopped). The stopped process is held in its sweep
# (TUNE_SIM_PAUSE_AFTER, given to it alone) until the signal, so the job
# cannot end before it; a hang would run into the timeout (rc 124). Each
# job then resumes to the end. So does a fleet whose rank 0 alone is
# stopped while it waits for the nodes. And a fleet node's process that fails before
# its ranks start tells its partner, which waited at the open for good.
# Skips (77) without mpirun or an MPI build.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/mpi.sh"
mpi_timeout=120
q() { sqlite3 -batch -noheader "$1" "$2"; }
# held PIDFILE ARGS...: a process that writes its pid and runs tune ARGS,
# held after 4 forced-path measurements.
held=(sh -c 'echo $$ >"$0"; TUNE_SIM_PAUSE_AFTER=4 exec "$@"')
# stop_when_held PIDFILE MPIRUN_PID [TARGET]: SIGTERM to the held process
# (or to the one whose pid file TARGET is) once the held one has started
# (it waits for the signal), then the job's exit status.
stop_when_held() {
  for _ in $(seq 600); do [ -s "$1" ] && break; kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  sleep 2
  kill -TERM "$(cat "${3:-$1}")" 2>/dev/null
  wait "$2"
}
# fleet_resume NODE_SIZE NP DB: tune fleet --resume of DB finishes it.
fleet_resume() {
  TUNE_FLEET_NODE_SIZE=$1 mpi -x TUNE_FLEET_NODE_SIZE -np "$2" "$tune" "${fargs[@]}" --db "$3" --resume \
    >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  ok $rc "fleet --resume finishes it (rc $rc)"
  [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | grep -v "^# 20..-" | head -8
}

args=(--backend sim --gpus 2 --launcher mpi --worlds 2 --ops all_reduce --dtypes bf16 --modes graph
  --offsets 0 --max-bytes 1M --trials 6 --seed 5 --no-report)
mkdir -p "$tmp/m"
start=$(date +%s)
mpi -np 1 "$tune" "${args[@]}" --db "$tmp/m/t.db" : -np 1 "${held[@]}" "$tmp/pid1" "$tune" "${args[@]}" \
  --db "$tmp/m/t.db" >"$tmp/out" 2>"$tmp/err" &
stop_when_held "$tmp/pid1" $!
rc=$?
if [ $rc -ne 0 ] && grep -q "built without MPI" "$tmp/err"; then echo "1..0 # SKIP tune built without MPI"; exit 77; fi
ok $(( rc != 143 )) "SIGTERM to rank 1 alone ends the whole job, 128 + SIGTERM (rc $rc, $(( $(date +%s) - start )) s)"
[ $rc -eq 143 ] || sed 's/^/# /' "$tmp/err" | grep -v "^# 20..-" | head -8
grep -q "process 1 of the job stopped (interrupted): every process stops" "$tmp/err"
ok $? "rank 0 says which process stopped and why"
ok $(( $(grep -c "to continue the job, run:" "$tmp/err") != 1 )) "and prints the command that continues the job"
test "$(q "$tmp/m/t.db" "pragma integrity_check")" = ok
ok $? "the database is whole"
mpi -np 2 "$tune" "${args[@]}" --db "$tmp/m/t.db" --resume >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "--resume finishes the job (rc $rc)"
ok $(( $(q "$tmp/m/t.db" "select count(*) from runs where finished_at is null") != 0 )) "every run finished"

# tune fleet: 2 nodes of 2 processes; world rank 3 (node 1's second) stopped.
fargs=(fleet --backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes bf16 --modes graph --offsets 0
  --max-bytes 1M --trials 6 --seed 5 --no-report)
mkdir -p "$tmp/f"
start=$(date +%s)
TUNE_FLEET_NODE_SIZE=2 mpi -x TUNE_FLEET_NODE_SIZE -np 3 "$tune" "${fargs[@]}" --db "$tmp/f/f.db" : -np 1 \
  "${held[@]}" "$tmp/pid3" "$tune" "${fargs[@]}" --db "$tmp/f/f.db" >"$tmp/out" 2>"$tmp/err" &
stop_when_held "$tmp/pid3" $!
rc=$?
ok $(( rc != 143 )) "SIGTERM to one process of node 1 ends the fleet, 128 + SIGTERM (rc $rc, $(( $(date +%s) - start )) s)"
[ $rc -eq 143 ] || sed 's/^/# /' "$tmp/err" | grep -v "^# 20..-" | head -8
grep -q "fleet interrupted: every configuration measured so far is committed" "$tmp/err"
ok $? "rank 0 says the fleet was interrupted and can be resumed"
# A node's log printed a command with the node's -np, which continued one
# node and lost the other (a review): a node's job prints none of its own.
! grep -q "to continue the job, run:" "$tmp"/f/f-nodes/fleet-1/*.log && ls "$tmp"/f/f-nodes/fleet-1/*.log >/dev/null
ok $? "no node's log holds a resume command of its own"
test "$(q "$tmp/f/f.db" "pragma integrity_check")" = ok
ok $? "the fleet database is whole"
fleet_resume 2 4 "$tmp/f/f.db"
ok $(( $(q "$tmp/f/f.db" "select count(*) from fleet_nodes where status = 'ok'") != 2 )) "both nodes ok"

# SIGTERM to world rank 0 alone, the fleet's collector, while node 1 (rank
# 1, one process a node) is held: rank 0 ignored it and waited for the
# node for good (a review). It now gives the nodes a grace period to
# answer, then ends the fleet, and --resume finishes it.
mkdir -p "$tmp/z"
start=$(date +%s)
TUNE_FLEET_NODE_SIZE=1 mpi -x TUNE_FLEET_NODE_SIZE -np 1 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/pid0" "$tune" \
  "${fargs[@]}" --db "$tmp/z/f.db" : -np 1 "${held[@]}" "$tmp/pidz1" "$tune" "${fargs[@]}" --db "$tmp/z/f.db" \
  >"$tmp/out" 2>"$tmp/err" &
stop_when_held "$tmp/pidz1" $! "$tmp/pid0"
rc=$?
ok $(( rc != 143 )) "SIGTERM to rank 0 alone ends the fleet, 128 + SIGTERM (rc $rc, $(( $(date +%s) - start )) s)"
[ $rc -eq 143 ] || sed 's/^/# /' "$tmp/err" | grep -v "^# 20..-" | head -8
grep -q "fleet interrupted: every configuration measured so far is committed" "$tmp/err"
ok $? "and says it can be resumed"
fleet_resume 1 2 "$tmp/z/f.db"

# Fleets of --db D/f.db and --db D/f at once wrote the same node databases
# and consensus header (a review): while one runs (its node 1 held), the
# other is refused before it writes anything.
mkdir -p "$tmp/d"
TUNE_FLEET_NODE_SIZE=1 mpi -x TUNE_FLEET_NODE_SIZE -np 1 "$tune" "${fargs[@]}" --db "$tmp/d/f.db" : -np 1 \
  "${held[@]}" "$tmp/pidd1" "$tune" "${fargs[@]}" --db "$tmp/d/f.db" >"$tmp/out" 2>"$tmp/err" &
mpid=$!
for _ in $(seq 600); do
  [ -s "$tmp/pidd1" ] && [ "$(q "$tmp/d/f.db" "select count(*) from runs where kind = 'fleet'" 2>/dev/null)" = 1 ] && break
  sleep 0.1
done
TUNE_FLEET_NODE_SIZE=1 mpi -x TUNE_FLEET_NODE_SIZE -np 2 "$tune" "${fargs[@]}" --db "$tmp/d/f" >"$tmp/out2" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "which fleets of --db f and of --db f.db share, is in use by another tune job (pid" \
  "$tmp/out2" && [ ! -e "$tmp/d/f" ]
ok $? "a fleet of --db D/f while one of --db D/f.db runs: refused, exit 2, nothing written (rc $rc)"
[ $rc -eq 2 ] || sed 's/^/# /' "$tmp/out2" | grep -v "^# 20..-" | head -5
kill -TERM "$(cat "$tmp/pidd1")" 2>/dev/null
wait $mpid

# SIGINT to rank 0 while it draws the fleet's report (a gnuplot that
# signals it): the fleet run was finished, exit 0 (a review). It is now
# interrupted, unfinished, and --resume concludes it again.
mkdir -p "$tmp/gp" "$tmp/y"
printf '#!/bin/sh\ncase "$3" in fleet.gp) kill -INT "$PPID" ;; esac\nexit 0\n' >"$tmp/gp/gnuplot"
chmod +x "$tmp/gp/gnuplot"
rargs=("${fargs[@]/--no-report/--report-dir=$tmp/y/rep}")
TUNE_FLEET_NODE_SIZE=1 GNUPLOT=$tmp/gp/gnuplot mpi -x TUNE_FLEET_NODE_SIZE -x GNUPLOT -np 2 "$tune" "${rargs[@]}" \
  --db "$tmp/y/f.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 130 ] && [ "$(q "$tmp/y/f.db" "select count(*) from runs where kind = 'fleet' and finished_at is null")" = 1 ]
ok $? "SIGINT while the fleet's report is drawn: exit 130, the run unfinished (rc $rc)"
TUNE_FLEET_NODE_SIZE=1 GNUPLOT=/bin/true mpi -x TUNE_FLEET_NODE_SIZE -x GNUPLOT -np 2 "$tune" "${rargs[@]}" \
  --db "$tmp/y/f.db" --resume >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ "$(q "$tmp/y/f.db" "select count(*) from runs where kind = 'fleet' and finished_at is null")" = 0 ]
ok $? "--resume concludes it (rc $rc)"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | grep -v "^# 20..-" | head -8

# A fleet node's process given a table file that does not load: its
# partner waited at the launcher's open for good (a review), then the node
# failed (another). The fleet now compares every process's table before
# anything is written: refused, naming the process.
mkdir -p "$tmp/e"
start=$(date +%s)
TUNE_FLEET_NODE_SIZE=2 mpi -x TUNE_FLEET_NODE_SIZE -np 3 "$tune" "${fargs[@]}" --db "$tmp/e/f.db" : -np 1 \
  -x DC_THRESHOLDS_FILE="$tmp/nosuch.h" "$tune" "${fargs[@]}" --db "$tmp/e/f.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 2 )) "one process given a table that does not load: refused, exit 2 (rc $rc, $(( $(date +%s) - start )) s)"
grep -q "rank 3 was given other options than rank 0 (rank 3: table=unreadable" "$tmp/err" && [ ! -e "$tmp/e/f.db" ]
ok $? "naming rank 3's table, nothing written"
mkdir -p "$tmp/e2"
TUNE_FLEET_NODE_SIZE=2 mpi -x TUNE_FLEET_NODE_SIZE -x DC_THRESHOLDS_FILE="$tmp/nosuch.h" -np 4 "$tune" "${fargs[@]}" \
  --db "$tmp/e2/f.db" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 2 )) "every process given a table that does not load: refused, exit 2 (rc $rc)"
[ -z "$(ls -A "$tmp/e2")" ]
ok $? "nothing written"
# One process of node 1 that cannot open the node's log (its folder
# read-only to it alone, a bind mount of its own): its partner waited where
# their launcher opens (a review). It is told, the node fails, the fleet
# ends. Needs unshare and mount, as root.
if ! unshare -m sh -c 'mount --bind / /mnt' 2>/dev/null; then
  tap_skip "a node process that cannot open the node's log: skipped (needs unshare and mount, as root)"
else
  printf '%s\n' '#!/bin/sh' '# Rank 3 runs with $RODIR read-only.' \
    '[ "${OMPI_COMM_WORLD_RANK:-0}" = 3 ] || exec "$@"' \
    'exec unshare -m sh -c '"'"'mount --bind -o ro "$0" "$0" && exec "$@"'"'"' "$RODIR" "$@"' >"$tmp/ro.sh"
  chmod +x "$tmp/ro.sh"
  mkdir -p "$tmp/l/f-nodes/fleet-1"
  start=$(date +%s)
  TUNE_FLEET_NODE_SIZE=2 RODIR=$tmp/l/f-nodes/fleet-1 mpi -x TUNE_FLEET_NODE_SIZE -x RODIR -np 4 "$tmp/ro.sh" \
    "$tune" "${fargs[@]}" --db "$tmp/l/f.db" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ok $(( rc != 3 )) "one process of node 1 unable to open the node's log: the fleet ends, exit 3 (rc $rc, $(( $(date +%s) - start )) s)"
  test "$(q "$tmp/l/f.db" "select group_concat(node || ':' || status, ' ') from fleet_nodes")" = "0:ok 1:failed"
  ok $? "node 1 is recorded as failed, node 0 ok"
fi

tap_end
