#!/usr/bin/env bash
# signals.sh: a main job (sim backend) sent SIGINT, and separately SIGTERM,
# at a seeded moment stops between configurations: exit status 130 / 143,
# a database that passes integrity_check with every committed config whole,
# and on stderr the phase it cut short and the exact --resume command, which
# finishes the job.
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
  cmd=$(sed -n '/to continue the job, run:/{n;s/^  //;p;}' "$tmp/err")
  [ -n "$cmd" ] && eval "set -- $cmd" && [ "$1" = "$tune" ] && [ "${!#}" = --resume ] &&
    [ "$(printf '%s\n' "$@" | grep -cx -- "$db")" = 1 ]
  ok $? "SIG$sig: the printed command is this job's command line plus --resume ($cmd)"
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

tap_end
