#!/usr/bin/env bash
# fleet_sim.sh: tune fleet under `mpirun --oversubscribe -np 16` on the sim
# backend, the processes grouped into 4 "nodes" of 4 ranks by
# TUNE_FLEET_NODE_SIZE=4 (the MAD score needs 3 nodes or more: with two,
# each is as far from their median as the other). Checks: with every node
# alike (one seed) the consensus header is each node's own header; with
# node 2 made 20% slower from 1 MiB up (and every node's noise its own) node
# 2 and only node 2 is flagged, only from 1 MiB up, tune fleet exits 3 and
# the report has its heatmaps; a fleet killed once while its nodes sweep
# resumes with --resume, reads its committed samples back, and ends with the
# same consensus; outliers of registered buffers carry their impl and
# alignment; a new fleet beside an old fleet's node databases is refused.
# Skips (77) without mpirun or an MPI build.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/mpi.sh"
export TUNE_FLEET_NODE_SIZE=4
mpi_timeout=600 mpi_np=16
args=(fleet --backend sim --gpus 4 --worlds 2,4 --ops all_reduce,all_gather --dtypes bf16 --modes graph
  --offsets 0 --no-reg --max-bytes 4M --trials 6 --seed 5)
q() { sqlite3 -batch -noheader "$1" "$2"; }

# 1. Every node alike.
mpi "$tune" "${args[@]}" --db "$tmp/a/f.db" >"$tmp/a.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "built without MPI" "$tmp/a.out"; then echo "1..0 # SKIP tune built without MPI"; exit 77; fi
ok $rc "16 ranks as 4 alike nodes: tune fleet exits 0"
[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/a.out" | tail -20; tap_end; exit 1; }
ok $(( $(q "$tmp/a/f.db" "select count(*) from fleet_nodes where status = 'ok' and gpu_model = 'sim H200'") != 4 )) \
  "4 nodes recorded, each with its hardware"
cons=$("$tune" table --file "$tmp/a/f-fleet-1-thresholds.h" --hash)
same=0
for h in "$tmp"/a/f-nodes/fleet-1/*-thresholds.h; do
  [ "$("$tune" table --file "$h" --hash)" = "$cons" ] && same=$((same + 1))
done
ok $(( same != 4 )) "the consensus header is each node's own header ($cons, $same of 4)"
ok $(( $(q "$tmp/a/f.db" "select count(*) from fleet_consensus where agree != nodes or nodes != 4") != 0 ||
  $(q "$tmp/a/f.db" "select count(*) from fleet_consensus") == 0 )) "every node agrees at every size"
ok $(( $(q "$tmp/a/f.db" "select count(*) from fleet_outliers") != 0 )) "no outlier among alike nodes"
ok $(( $(q "$tmp/a/f.db" "select count(*) from headers h join runs r on r.id = h.run_id where r.kind = 'fleet'
  and r.finished_at is not null") != 1 )) "the fleet run finished and stored its header"

# 2. Node 2 slower from 1 MiB up; every node with noise of its own.
TUNE_SIM_NODE_NOISE=1 TUNE_SIM_SLOW_NODE=2:1.2:1M mpi "$tune" "${args[@]}" --db "$tmp/s/f.db" >"$tmp/s.out" 2>&1
rc=$?
ok $(( rc != 3 )) "a slow node makes tune fleet exit 3 (rc $rc)"
test "$(q "$tmp/s/f.db" "select count(distinct node) || ':' || min(node) from fleet_outliers")" = "1:2"
ok $? "node 2, and only node 2, is flagged"
ok $(( $(q "$tmp/s/f.db" "select count(*) from fleet_outliers where bytes < 1048576 or ratio < 1.1 or score <= 5") != 0 )) \
  "only where it is slower: from 1 MiB up, over 10% and 5 MADs"
ok $(( $(q "$tmp/s/f.db" "select count(*) from fleet_samples") == 0 )) "its outlier cells' samples are kept"
grep -q "outlier node 2 " "$tmp/s.out" && grep -q "^| 2 | detcoll |" "$tmp/s/f-fleet-1-report/report.md"
ok $? "printed, and listed in the report"
for op in all_reduce all_gather; do
  test -s "$tmp/s/f-fleet-1-report/heatmap_$op.png" || command -v gnuplot >/dev/null || continue
  test -s "$tmp/s/f-fleet-1-report/heatmap_$op.png"
  ok $? "a heatmap for $op"
done
test "$(awk '$2 == 2 && $3 > 1.15' "$tmp/s/f-fleet-1-report/heatmap_all_reduce.dat" | wc -l)" -gt 0 &&
  test "$(awk '$2 != 2 && $3 > 1.1' "$tmp/s/f-fleet-1-report/heatmap_all_reduce.dat" | wc -l)" = 0
ok $? "the heatmap's data shows node 2 hot, the others not"

# 3. Killed once while the nodes sweep, then --resume. Every process stops
# before its 9th forced-path measurement and waits for the signal there
# (TUNE_SIM_PAUSE_AFTER), so the kill lands mid-sweep however loaded the
# machine is; it is sent once every node has committed sweep configs.
TUNE_SIM_PAUSE_AFTER=8 mpirun --oversubscribe --bind-to none -np 16 "$tune" "${args[@]}" --db "$tmp/k/f.db" \
  >"$tmp/k.out" 2>&1 &
pid=$!
nodes_swept=0
for _ in $(seq 1200); do
  nodes_swept=0
  for db in "$tmp"/k/f-nodes/fleet-1/*.db; do
    swept=$(q "$db" "select count(*) from configs c join runs r on r.id = c.run_id where r.kind = 'sweep'" 2>/dev/null)
    [ "${swept:-0}" -ge 8 ] && nodes_swept=$((nodes_swept + 1))
  done
  [ $nodes_swept -eq 4 ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.25
done
ok $(( nodes_swept != 4 )) "every node committed sweep configs and waits ($nodes_swept of 4 nodes)"
kill -TERM $pid
wait $pid
rc=$?
ok $(( rc == 0 )) "killed in its sweep, the fleet does not finish (rc $rc)"
ok $(( $(q "$tmp/k/f.db" "select count(*) from runs where kind = 'fleet' and finished_at is null") != 1 )) \
  "the fleet run is left unfinished"
mpi "$tune" "${args[@]}" --db "$tmp/k/f.db" --resume >"$tmp/r.out" 2>&1
rc=$?
ok $rc "--resume finishes it"
grep -q "resuming fleet run 1" "$tmp/r.out"
ok $? "the same fleet run"
read_back=$(cat "$tmp"/k/f-nodes/fleet-1/*.log | sed -n 's/.*(\([0-9]*\) read back).*/\1/p' | awk '{s += $1} END {print s + 0}')
ok $(( read_back == 0 )) "the nodes read back what they had committed ($read_back configs)"
test "$("$tune" table --file "$tmp/k/f-fleet-1-thresholds.h" --hash)" = "$cons"
ok $? "the resumed fleet's consensus is the uninterrupted one's"

# 4. Registered buffers (impl detcoll_reg_prev, 16 characters) in the
# outlier records: 3 nodes of 2 ranks, node 2 30% slower from 8 KiB.
small=(fleet --backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes bf16 --modes graph --offsets 0
  --max-bytes 64K --trials 5 --no-report)
TUNE_FLEET_NODE_SIZE=2 TUNE_SIM_SLOW_NODE=2:1.3:8K timeout 300 mpirun --oversubscribe --bind-to none -np 6 \
  "$tune" "${small[@]}" --db "$tmp/r/f.db" >"$tmp/r.out" 2>&1
ok $(( $? != 3 )) "a slow node of three: exit 3"
ok $(( $(q "$tmp/r/f.db" "select count(*) from fleet_outliers where impl = 'detcoll_reg_prev' and align = 'reg16'") == 0 ||
  $(q "$tmp/r/f.db" "select count(*) from fleet_outliers o join fleet_cells c on c.fleet_id = o.fleet_id
    and c.node = o.node and c.config_id = o.config_id where c.impl != o.impl or c.align != o.align") != 0 )) \
  "outliers name their impl and alignment as the cells do (detcoll_reg_prev, reg16)"

# 5. A new fleet whose database was removed, beside the node databases of
# the old one: refused before anything, not passed off as measured.
mkdir -p "$tmp/n" && cp -r "$tmp/r/f-nodes" "$tmp/n/" && sum=$(cat "$tmp"/n/f-nodes/fleet-1/*.db | cksum)
TUNE_FLEET_NODE_SIZE=2 timeout 300 mpirun --oversubscribe --bind-to none -np 6 \
  "$tune" "${small[@]}" --db "$tmp/n/f.db" >"$tmp/n.out" 2>&1
rc=$?
grep -q "f-nodes/fleet-1 already holds node databases" "$tmp/n.out"
ok $(( rc != 2 || $? != 0 )) "a stale fleet-1 folder is refused, exit 2 (rc $rc): $(grep -m1 error "$tmp/n.out")"
test "$(cat "$tmp"/n/f-nodes/fleet-1/*.db | cksum)" = "$sum"
ok $? "and its node databases are left as they were"
tap_end
