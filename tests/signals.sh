#!/usr/bin/env bash
# signals.sh: a main job (sim backend) sent SIGINT, and separately SIGTERM,
# at a seeded moment stops between configurations: exit status 130 / 143,
# a database that passes integrity_check with every committed config whole,
# and on stderr the phase it cut short and the exact --resume command, which
# finishes the job. A verify stopped so says what it left.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
# About 3 s uninterrupted; the signal comes within the first second.
args=(--backend sim --gpus 8 --max-bytes 64M --trials 10 --no-report)

RANDOM=20261130
# A database name with a space and a quote: the printed command quotes it.
for case in "INT 130 $tmp/int job's.db" "TERM 143 $tmp/term.db"; do
  read -r sig want db <<<"$case"
  "$tune" "${args[@]}" --db "$db" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  sleep "0.$((RANDOM % 6 + 3))"
  kill -s "$sig" "$pid"
  ok $? "SIG$sig sent while the job runs"
  wait "$pid"
  rc=$?
  ok $(( rc != want )) "SIG$sig: exit status $want (got $rc)"
  grep -q "interrupted by SIG$sig" "$tmp/err"
  ok $? "SIG$sig: stderr says the job was interrupted and by what"
  grep -Eq "tune: (before|sweep|after) stopped: " "$tmp/err" && ! grep -q "header done" "$tmp/err"
  ok $? "SIG$sig: the phase it cut short is logged as stopped, and no header as done"
  if [ "$sig" = INT ]; then
    "$tune" compare --db "$db" --baseline "$db" --no-plot >"$tmp/cmp" 2>&1
    rc=$?
    grep -q "holds no configurations of a finished run" "$tmp/cmp"
    ok $(( rc != 2 || $? != 0 )) "compare refuses a database whose only job is unfinished (rc $rc): $(head -n1 "$tmp/cmp")"
  fi
  cmd=$(sed -n '/to continue the job, run:/{n;s/^  //;p;}' "$tmp/err")
  # (after the environment it ran in: NAME=VALUE words)
  [ -n "$cmd" ] && eval "set -- $cmd" && while [[ $1 =~ ^[A-Z_][A-Z0-9_]*= ]]; do shift; done &&
    [ "$1" = "$tune" ] && [ "${!#}" = --resume ] &&
    [ "$(printf '%s\n' "$@" | grep -cx -- "$db")" = 1 ]
  ok $? "SIG$sig: the printed command is its environment, this job's command line plus --resume ($cmd)"
  [ "$(sqlite3 "$db" 'pragma integrity_check')" = ok ]
  ok $? "SIG$sig: integrity_check ok"
  unfinished=$(sqlite3 "$db" "select count(*) from runs where finished_at is null")
  ok $(( unfinished == 0 )) "SIG$sig: the job stopped unfinished ($unfinished unfinished runs)"
  partial=$(sqlite3 "$db" "select count(*) from configs c where (select count(*) from samples s where s.config_id = c.id) <> c.trials * c.world")
  ok $(( partial != 0 )) "SIG$sig: every committed config has all its samples ($partial without)"
  eval "$cmd" >"$tmp/out2" 2>&1
  rc=$?
  ok $rc "SIG$sig: the printed command finishes the job (rc $rc)"
  ok $(( $(sqlite3 "$db" "select count(*) from runs where finished_at is null") != 0 )) "SIG$sig: every run finished"
  ok $(( $(sqlite3 "$db" "select count(*) from runs") != 3 )) "SIG$sig: one chain of three runs"
done

# A finished job, then a second one stopped in its sweep: compare takes the
# finished job's three runs, not the newest run of each kind.
cp "$tmp/term.db" "$tmp/mix.db"
TUNE_SIM_PAUSE_AFTER=30 "$tune" "${args[@]}" --db "$tmp/mix.db" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1
kill -s INT "$pid"
wait "$pid"
"$tune" compare --db "$tmp/mix.db" --baseline "$tmp/term.db" --no-plot >"$tmp/cmp" 2>&1
grep -q "mix.db (runs: after 3,before 1,sweep 2) against" "$tmp/cmp"
ok $? "compare pairs the finished job's runs, not the stopped one's: $(head -n1 "$tmp/cmp")"
"$tune" report --db "$tmp/mix.db" --out "$tmp/mixrep" >/dev/null 2>&1
grep -q "^## Crossovers (sweep run 2)" "$tmp/mixrep/report.md" &&
  grep -q "by before run 1 and by the paired trials of after run 3" "$tmp/mixrep/report.md"
ok $? "report draws the job of the newest after run: its before run and its sweep"

# A verify stopped by SIGINT says so: what it measured is committed, its run
# left unfinished, and it is run again, not resumed.
TUNE_SIM_PAUSE_AFTER=3 "$tune" verify --backend sim --gpus 2 --ops all_reduce --dtypes bf16 --modes eager \
  --offsets 0 --no-reg --db "$tmp/v.db" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1200); do grep -qs "^pid $pid " "$tmp/v.db.lock" && break; sleep 0.05; done
sleep 0.5
kill -s INT "$pid"
wait "$pid"
rc=$?
grep -q "tune verify: interrupted by SIGINT: what it measured is committed to $tmp/v.db as verify run 1, left unfinished" "$tmp/err"
ok $(( $? != 0 || rc != 130 )) "a verify stopped by SIGINT exits 130 and says so (rc $rc): $(head -n1 "$tmp/err")"

# A reader of standard output that goes away does not kill the job (SIGPIPE):
# it runs to its end, every run finished, and exits 1 saying its output is lost.
small=(--backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0
  --max-bytes 64K --trials 3 --max-trials 3 --no-report)
"$tune" "${small[@]}" --db "$tmp/pipe.db" 2>"$tmp/err" | true
rc=${PIPESTATUS[0]}
ok $(( rc != 1 )) "a job whose standard output is closed exits 1 (rc $rc)"
grep -q "writing standard output failed" "$tmp/err"
ok $? "and says so: $(grep -m1 'standard output' "$tmp/err")"
n=$(sqlite3 "$tmp/pipe.db" "select count(*) from runs where finished_at is not null and kind in ('before', 'sweep', 'after')")
ok $(( n != 3 )) "its before, sweep and after runs all finished ($n of 3)"

tap_end
