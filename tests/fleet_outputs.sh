#!/usr/bin/env bash
# fleet_outputs.sh: no file tune fleet writes beside its database may be
# that database: a link named like a fleet report file (report.md, a
# heatmap's PNG) or like the consensus header, leading to --db, is refused
# before any node measures (in the default report folder, or at the
# header's name, anything already there is refused: merge_inputs.sh), and
# the database stays a whole database, byte for byte as it was where the
# refusal came first. 3 "nodes"
# of 2 ranks (mpirun -np 6, TUNE_FLEET_NODE_SIZE=2) on the sim backend.
# Skips (77) without mpirun, sqlite3 or an MPI build.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/mpi.sh"
export TUNE_FLEET_NODE_SIZE=2
mpi_np=6
args=(fleet --backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes bf16 --modes graph --offsets 0
  --no-reg --max-bytes 1M --trials 4 --seed 5)
db=$tmp/f/f.db

mpi "$tune" "${args[@]}" --db "$db" >"$tmp/first.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "built without MPI" "$tmp/first.out"; then echo "1..0 # SKIP tune built without MPI"; exit 77; fi
ok $rc "a first fleet run (fleet run 1) makes the database"
# Every page in the file itself, so its bytes say whether anything wrote it.
sqlite3 "$db" "pragma wal_checkpoint(truncate)" >/dev/null
sum=$(cksum <"$db")

# whole: the database is still one, with its first fleet run finished.
whole() {
  [ "$(sqlite3 "$db" 'pragma integrity_check')" = ok ] &&
    [ "$(sqlite3 "$db" "select count(*) from runs where id = 1 and kind = 'fleet' and finished_at is not null")" = 1 ]
}

mkdir -p "$tmp/rd"
ln -s ../f/f.db "$tmp/rd/report.md"
mpi "$tune" "${args[@]}" --db "$db" --report-dir "$tmp/rd" >"$tmp/rd.out" 2>&1
rc=$?
ok $(( rc != 2 )) "--report-dir holding report.md -> the database: exit 2 (rc $rc)"
grep -q "fleet report file $tmp/rd/report.md is the database" "$tmp/rd.out"
ok $? "and the message names it: $(grep -m1 error "$tmp/rd.out")"
test "$sum" = "$(cksum <"$db")"
ok $? "the database is byte for byte as it was (nothing measured into it)"

# Fleet run 2's default report folder, made beforehand with a heatmap link.
mkdir -p "$tmp/f/f-fleet-2-report"
ln -s ../f.db "$tmp/f/f-fleet-2-report/heatmap_all_reduce.png"
mpi "$tune" "${args[@]}" --db "$db" >"$tmp/png.out" 2>&1
rc=$?
ok $(( rc == 0 )) "a heatmap link to the database in the default report folder fails the fleet (rc $rc)"
grep -q "f-fleet-2-report is already there, of a fleet run .* does not record" "$tmp/png.out"
ok $? "refused before anything is measured, naming the folder: $(grep -m1 error "$tmp/png.out")"
whole
ok $? "the database is still a whole database"
test -L "$tmp/f/f-fleet-2-report/heatmap_all_reduce.png"
ok $? "and the link was not replaced"
ok $(( $(ls "$tmp/f/f-fleet-2-report" | wc -l) != 1 )) "nothing else was written in the report folder"

# Fleet run 2's consensus header.
rm -r "$tmp/f/f-fleet-2-report"
ln -s f.db "$tmp/f/f-fleet-2-thresholds.h"
mpi "$tune" "${args[@]}" --db "$db" >"$tmp/h.out" 2>&1
rc=$?
ok $(( rc == 0 )) "a consensus header linked to the database fails the fleet (rc $rc)"
grep -q "f-fleet-2-thresholds.h is already there" "$tmp/h.out"
ok $? "refused before anything is measured, naming it: $(grep -m1 error "$tmp/h.out")"
whole
ok $? "the database is still a whole database"
test -L "$tmp/f/f-fleet-2-thresholds.h"
ok $? "and the link was not replaced"

# A fleet refused for its node folder (a file where the next run's folder
# goes) or for --resume with nothing to resume writes no database: the
# existing one stays byte for byte as it was, and none is made.
rm "$tmp/f/f-fleet-2-thresholds.h"
next=$(sqlite3 "$db" "select coalesce(max(id), 0) + 1 from runs")
touch "$tmp/f/f-nodes/fleet-$next"
sum=$(cksum <"$db")
mpi "$tune" "${args[@]}" --db "$db" >"$tmp/n.out" 2>&1
rc=$?
ok $(( rc != 2 )) "a node folder that is a file: exit 2 (rc $rc)"
grep -q "f-nodes/fleet-$next is a file, not a folder" "$tmp/n.out"
ok $? "refused before anything is measured, naming it: $(grep -m1 error "$tmp/n.out")"
[ "$(cksum <"$db")" = "$sum" ]
ok $? "the database is byte for byte as it was"
mpi "$tune" "${args[@]}" --db "$tmp/g/g.db" --resume >"$tmp/r.out" 2>&1
rc=$?
ok $(( rc != 2 )) "--resume of a fleet database that does not exist: exit 2 (rc $rc)"
grep -q "nothing to resume" "$tmp/r.out"
ok $? "and the message says so: $(grep -m1 error "$tmp/r.out")"
[ ! -e "$tmp/g" ]
ok $? "no database made (nor its folder)"

# A merge's fleet run is not one tune fleet --resume takes up (it records
# no ranks, and the nodes it names are copies): a merge killed part way
# leaves it unfinished, as the update below does.
mkdir -p "$tmp/k"
"$tune" merge "${args[@]:1}" --no-report --db "$tmp/k/k.db" "$tmp"/f/f-nodes/fleet-1/*.db >"$tmp/k.out" 2>&1
ok $? "a merge of fleet run 1's node databases"
sqlite3 "$tmp/k/k.db" "update runs set finished_at = null where kind = 'fleet'"
sum=$(cksum <"$tmp/k/k.db")
mpi "$tune" "${args[@]}" --db "$tmp/k/k.db" --resume >"$tmp/k.out" 2>&1
rc=$?
grep -q "nothing to resume" "$tmp/k.out" && [ "$(cksum <"$tmp/k/k.db")" = "$sum" ]
ok $(( $? != 0 || rc != 2 )) "tune fleet --resume leaves the merge's run alone: exit 2 (rc $rc), --db as it was"

# Names the fleet derives from --db that cannot be written: the consensus
# header's (a --db name of 243 bytes fits, <name>-fleet-1-thresholds.h does
# not) and a node database's path past SQLite's limit. Both measured every
# node, then failed (a review); now refused before anything is written.
long=$(printf 'n%.0s' $(seq 240))
mkdir -p "$tmp/l1"
mpi "$tune" "${args[@]}" --db "$tmp/l1/$long.db" >"$tmp/l1.out" 2>&1
rc=$?
grep -q "the fleet's consensus header .*its name is 261 bytes" "$tmp/l1.out" && [ -z "$(ls -A "$tmp/l1")" ]
ok $(( $? != 0 || rc != 2 )) "a consensus header name too long: refused up front, nothing written (rc $rc)"
p=$tmp/l2
while [ ${#p} -lt 485 ]; do p=$p/dddddddddd; done
mkdir -p "$p"
mpi "$tune" "${args[@]}" --db "$p/f.db" >"$tmp/l2.out" 2>&1
rc=$?
grep -q "fleet-1/.*\.db: its absolute path is .* bytes; SQLite takes at most" "$tmp/l2.out" && [ -z "$(ls -A "$p")" ]
ok $(( $? != 0 || rc != 2 )) "a node database path too long for SQLite: refused up front, nothing written (rc $rc)"
tap_end
