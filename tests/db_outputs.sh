#!/usr/bin/env bash
# db_outputs.sh: no output of any command may be the database (issue 16):
# export --out, the thresholds header, the report folder and its files and
# skew --json are refused -- exit 2, a message, the database byte for byte
# as it was -- when they reach the database or its -wal by any name: the
# same name, a symbolic link, a hard link, standard output; a link to the
# database already in the report folder under a name the report writes
# (a figure's) is refused before anything there is written.
set -u
. "$(dirname "$0")/tap.sh"
cd "$tmp" || exit 1

# The smallest main job the sim backend runs: one group, a few sizes.
small=(--backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0
       --max-bytes 64K --trials 3 --max-trials 3)
"$tune" "${small[@]}" --db base.db --no-report >out 2>err
rc=$?
ok $rc "a small sim job makes the database"
[ $rc -eq 0 ] || { sed 's/^/# /' err; echo "1..$tap_n"; exit 1; }
cp base.db base.copy
mkdir sub
ln -s ../base.db sub/link.db
ln base.db hard.db

# refused DB ARGS...: exit 2, a message saying it is the database, and DB
# unchanged (so nothing was measured into it either). DB starts as the first
# job's database each time (written in place: hard.db stays a hard link), so
# a case that fails does not hide the next.
refused() {
  local db=$1
  shift
  cp base.copy "$db"
  cp "$db" before.copy
  "$tune" "$@" >out 2>err
  local rc=$?
  ok $(( rc != 2 )) "exit 2 for: tune $*  (got $rc)"
  grep -q "is the database" err
  ok $? "the message says the output is the database: $(head -n1 err)"
  cmp -s "$db" before.copy
  ok $? "$db unchanged"
}

refused base.db export --db base.db --format csv --table runs --out base.db
refused base.db export --db base.db --format csv --table runs --out sub/link.db
refused base.db export --db base.db --format csv --table runs --out hard.db
refused base.db export --db base.db --format csv --table runs --out ./base.db-wal
ok $(( $(test -e base.db-wal; echo $?) == 0 )) "no base.db-wal written"
cp base.copy base.db
"$tune" export --db base.db --format csv --table runs >>base.db 2>err
ok $(( $? != 2 )) "export refuses a standard output appending to the database"
cmp -s base.db base.copy
ok $? "base.db unchanged by the append"

refused base.db "${small[@]}" --db base.db --header base.db
refused base.db "${small[@]}" --db base.db --header sub/link.db
refused base.db "${small[@]}" --db base.db --header hard.db
refused base.db "${small[@]}" --db base.db --report-dir base.db
refused base.db "${small[@]}" --db sub/link.db --report-dir base.db
# The default header of a sim run lies beside the database, as thresholds.h.
refused thresholds.h "${small[@]}" --db thresholds.h --no-report
rm thresholds.h # a database now: every later job would be refused for writing its header there
# A database in the report folder under a name the report writes.
mkdir rep
refused rep/report.md "${small[@]}" --db rep/report.md --report-dir rep
rm rep/report.md
refused rep/latency_x.png "${small[@]}" --db rep/latency_x.png --report-dir rep

refused base.db skew --backend sim --world 2 --db base.db --json base.db --no-report
refused base.db skew --backend sim --world 2 --db base.db --json sub/link.db --no-report
refused base.db skew --backend sim --world 2 --db base.db --json hard.db --no-report
refused base.db skew --backend sim --world 2 --db base.db --report-dir base.db

refused base.db report --db base.db --out base.db
refused rep/report.md report --db rep/report.md --out rep
rm rep/report.md

# A link to the database already in the report folder, named as a figure
# the report draws late: refused before anything is written there (the old
# report.md and figures stay), and by the main job before it measures.
rm -f hard.db # a second name of the database: the main job would refuse it first
cp base.copy base.db
"$tune" report --db base.db --out rep2 >out 2>err
ok $? "a report into rep2"
fig=$(ls rep2 | grep '^latency_.*\.svg$' | tail -n1)
ln -sf ../base.db "rep2/$fig"
ls -l --time-style=+%s.%N rep2 >rep2.before
refused base.db report --db base.db --out rep2
ls -l --time-style=+%s.%N rep2 | cmp -s - rep2.before
ok $? "rep2 is as it was (report.md and every figure, $fig a link still)"
refused base.db "${small[@]}" --db base.db --report-dir rep2

# Nor may an output be another database or its -wal or -journal, a name
# ending in '/' (a folder's),
# a name whose temporary its folder cannot hold, or a report folder that
# is a link to nothing: each is
# refused before anything is measured or written, and the folder (every
# file in it, the databases included) stays exactly as it was.
mkdir odd && cd odd || exit 1
cp ../base.copy base.db
"$tune" "${small[@]}" --seed 2 --db other.db --no-report >/dev/null 2>&1
ok $? "a second database, other.db"
ln -s nowhere dangling
mkdir rep3
ln -s ../other.db rep3/report.md
long=$(printf 'h%.0s' {1..250}).h
# (The folder's own time is left out: the check that a folder takes files
# makes one and removes it.)
state() { find . -mindepth 1 -printf '%p %y %s %T@\n' | sort; find . -type f -exec sha256sum {} + | sort; }
refused_clean() {
  local pattern=$1
  shift
  state >../state.before
  timeout 60 "$tune" "$@" >../out 2>../err
  local rc=$?
  local args="$*"
  ok $(( rc != 2 )) "exit 2 for: tune ${args:0:140}  (got $rc)"
  grep -q -- "$pattern" ../err
  ok $? "the message says '$pattern': $(head -n1 ../err | cut -c1-160)"
  state | cmp -s - ../state.before
  ok $? "nothing in the folder made, changed or removed"
}
refused_clean "SQLite database" "${small[@]}" --db base.db --header other.db --no-report
refused_clean "SQLite database" export --db base.db --format csv --table runs --out other.db
refused_clean "SQLite database" skew --backend sim --world 2 --db s.db --json other.db --no-report
refused_clean "SQLite database" report --db base.db --out rep3
# Another database's -wal or -journal holds its data (a killed job's may
# hold all of it): no output replaces one.
printf 'frames' >other.db-wal
printf 'pages' >other.db-journal
refused_clean "the -wal, -shm or -journal file SQLite keeps beside a database" \
  export --db base.db --format csv --table runs --out other.db-wal
refused_clean "the -wal, -shm or -journal file SQLite keeps beside a database" \
  "${small[@]}" --db base.db --header other.db-journal --no-report
rm -f other.db-wal other.db-journal
refused_clean "ends in '/'" "${small[@]}" --db new/ --no-report
refused_clean "ends in '/'" "${small[@]}" --db base.db --header new.h/ --no-report
refused_clean "ends in '/'" export --db base.db --format csv --table runs --out new/
refused_clean "its name is 252 bytes" "${small[@]}" --db base.db --header "$long" --no-report
refused_clean "link to something that does not exist" "${small[@]}" --db base.db --report-dir dangling
# The default report folder (the database's folder's report/) a file: the
# main job and skew alike refuse it before they measure.
# Clashes inside a folder that is not there yet (it would be made with the
# database's): refused before measuring, as where the folder exists.
refused_clean "report file nd/report.md is the database" "${small[@]}" --db nd/report.md --report-dir nd \
  --header nd.h
refused_clean "report folder q6/q.db is the database" "${small[@]}" --db q6/q.db --report-dir q6/q.db \
  --header h.h
refused_clean "--header x is the database's folder" "${small[@]}" --no-report --db x/x.db --header x
# (The kernel cannot leave a folder that is not there: sub/.. names none.)
refused_clean "folder nd2/sub/..: No such file" "${small[@]}" --no-report --db nd2/n.db --header nd2/sub/../h.h
printf 'x' >report
refused_clean "the report folder ./report is a file, not a folder" "${small[@]}" --db sk.db
refused_clean "the report folder ./report is a file, not a folder" skew --backend sim --world 2 --db sk.db
rm report
cd .. || exit 1

# --header in the database's folder, which the job makes: taken, as the
# default header beside the database is.
"$tune" "${small[@]}" --no-report --db newdir/n.db --header newdir/mine.h >out 2>err
rc=$?
test $rc -eq 0 && test -s newdir/mine.h
ok $? "--header newdir/mine.h with --db newdir/n.db, newdir not there yet: written (exit $rc) $(head -n1 err)"

# A FIFO that a process reads (shell process substitution) takes the header
# (in place, as a device); a database name as long as SQLite's -journal
# beside it allows is taken (the temporary an output is written through is
# not a database's).
"$tune" "${small[@]}" --db fifo.db --no-report --header >(cat >fifo-header.txt) >out 2>err
ok $? "a job writes its header into a FIFO that a process reads: $(grep -m1 error err)"
for _ in $(seq 50); do grep -q "dc_threshold_row" fifo-header.txt 2>/dev/null && break; sleep 0.1; done
grep -q "dc_threshold_row" fifo-header.txt
ok $? "and the reader got the header"
db247=$(printf 'd%.0s' $(seq 244)).db
"$tune" "${small[@]}" --db "$db247" --no-report --header h247.h >out 2>err
ok $? "a 247-byte database name is taken: $(grep -m1 error err)"
db248=$(printf 'd%.0s' $(seq 245)).db
"$tune" "${small[@]}" --db "$db248" --no-report --header h248.h >out 2>err
ok $(( $? != 2 )) "a 248-byte one is refused (its -journal would be 256 bytes)"
grep -q "its name is 248 bytes; with the suffix of SQLite's -journal beside it, its folder takes at most 247" err
ok $? "... saying so: $(head -n1 err | cut -c1-60)...$(head -n1 err | rev | cut -c1-90 | rev)"

tap_end
