#!/usr/bin/env bash
# resume_env.sh: --resume continues a job only where what it measured
# still holds, on the sim backend. A job begun on another machine (GPU
# model, count, compute capability, topology) is refused, naming both. A
# before pass resumed where DC_THRESHOLDS_FILE says otherwise measures on
# with the table it began with (stored with its run), and the command an
# interrupted job prints names the environment it ran in (DC_PDL among it). A refused
# --resume writes nothing: no database made, none migrated. A job resumed
# after its sweep writes its header where this job's goes.
# Every refusal changes nothing: the database byte-identical, no file made.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/refused.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
q=(--backend sim --gpus 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0 --no-reg
  --min-bytes 1K --max-bytes 64K --trials 5 --max-trials 10 --warmup 1 --no-report)
cd "$tmp" || exit 1

# unfinish DB: the job of DB as a job killed early in its before pass: the
# sweep and after runs gone, the before run unfinished with its first 3
# sizes. Its lock goes too, as a folder copied elsewhere would hold none.
unfinish() {
  sqlite3 "$1" "pragma foreign_keys = on;
    create temp table gone as select id from configs where run_id <> 1 or id > (select min(id) + 2 from configs where run_id = 1);
    delete from pairs; delete from regret; delete from crossovers;
    delete from header_rows where header_id in (select id from headers where run_id <> 1);
    delete from headers where run_id <> 1;
    delete from samples where config_id in (select id from gone); delete from configs where id in (select id from gone);
    delete from runs where id <> 1; update runs set finished_at = null"
  rm -f "$1.lock" "$(dirname "$1")/thresholds.h"
}

mkdir m
"$tune" "${q[@]}" --db m/t.db >/dev/null 2>"$tmp/e"
ok $? "a job"
unfinish m/t.db
cp m/t.db m/orig.db

# High 3: the machine the job was begun on.
sqlite3 m/t.db "update runs set gpu_model = 'NVIDIA H100 80GB HBM3', gpu_count = 8"
refused "another GPU model and count" \
  "run 1 was begun on another machine (8 x NVIDIA H100 80GB HBM3, sm 90, nvlink) than this one (2 x sim H200, sm 90, nvlink)" \
  m/t.db "${q[@]}" --db m/t.db --resume
cp m/orig.db m/t.db
sqlite3 m/t.db "update runs set sm = 100"
refused "another compute capability" "(2 x sim H200, sm 100, nvlink) than this one" m/t.db \
  "${q[@]}" --db m/t.db --resume=1
cp m/orig.db m/t.db
sqlite3 m/t.db "update runs set topo = 'pcie'"
refused "another topology" "(2 x sim H200, sm 90, pcie) than this one" m/t.db "${q[@]}" --db m/t.db --resume
cp m/orig.db m/t.db
"$tune" "${q[@]}" --db m/t.db --resume >"$tmp/o" 2>"$tmp/e"
ok $? "on its own machine the job resumes"
ok $(($(sqlite3 m/t.db "select count(*) from runs where finished_at is null") != 0)) "and finishes"

# Medium 5: a refused --resume makes and migrates nothing.
"$tune" "${q[@]}" --db new/dir/t.db --resume >"$tmp/o" 2>"$tmp/e"
ok $(($? == 0)) "--resume of a database that does not exist is refused"
grep -q -- "--resume: new/dir/t.db: no such database; nothing to resume" "$tmp/e"
ok $? "and says so: $(head -n1 "$tmp/e")"
ok $(test ! -e new; echo $?) "and makes no folder"
refused "--resume of a database that does not exist, in a folder that does" "no such database" m/t.db \
  "${q[@]}" --db m/none.db --resume
: >m/empty.db
refused "--resume of an empty file" "m/empty.db is empty" m/empty.db "${q[@]}" --db m/empty.db --resume
ok $(test ! -s m/empty.db; echo $?) "it stays empty"
refused "--resume of a finished job" "every main job in m/t.db has finished" m/t.db "${q[@]}" --db m/t.db --resume
echo "pid 1 on host gone" >m/t.db.lock
refused "--resume of a finished job, a stale lock beside it" "has finished" m/t.db "${q[@]}" --db m/t.db --resume
ok $([ "$(cat m/t.db.lock)" = "pid 1 on host gone" ]; echo $?) "the stale lock keeps its line ($(cat m/t.db.lock))"
# A version 4 database (no pairs table): looked at, not migrated, when refused.
cp m/t.db m/v4.db
sqlite3 m/v4.db "drop table pairs; pragma user_version = 4"
refused "--resume of a finished job in a version 4 file" "has finished" m/v4.db "${q[@]}" --db m/v4.db --resume
sqlite3 m/v4.db "update runs set finished_at = null where kind = 'after'"
refused "--resume=2 of a version 4 file, other options" "was started with other options" m/v4.db \
  "${q[@]}" --max-bytes 32K --db m/v4.db --resume=2
ok $([ "$(sqlite3 m/v4.db "pragma user_version")" = 4 ]; echo $?) "it stays version 4"
"$tune" "${q[@]}" --db m/v4.db --resume >"$tmp/o" 2>"$tmp/e"
ok $? "its unfinished job resumes"
ok $([ "$(sqlite3 m/v4.db "pragma user_version")" = 5 ]; echo $?) "and migrates it then"

# Medium 6: the header of a sweep an earlier job finished, where the
# resumed job says it is: beside the moved database, or at --header.
mkdir h1 h2
"$tune" "${q[@]}" --db h1/t.db >/dev/null 2>"$tmp/e"
ok $? "a job"
sqlite3 h1/t.db "update runs set finished_at = null where kind = 'after'"
rm h1/t.db.lock
mv h1/t.db h2/t.db
header_text() { sqlite3 h2/t.db "select content from headers where run_id = 2"; }
"$tune" "${q[@]}" --db h2/t.db --resume >"$tmp/o" 2>"$tmp/e"
ok $? "its database moved, the job resumes in its after pass"
grep -q "thresholds header written: h2/thresholds.h (header of run 2)" "$tmp/o"
ok $? "it says where it wrote the header"
[ -f h2/thresholds.h ] && [ "$(header_text)" = "$(cat h2/thresholds.h)" ]
ok $? "and the sweep's header is there"
sqlite3 h2/t.db "update runs set finished_at = null where kind = 'after'"
"$tune" "${q[@]}" --db h2/t.db --header "$tmp/other.h" --resume >"$tmp/o" 2>"$tmp/e"
ok $? "resumed again with --header"
grep -q "thresholds header written: $tmp/other.h (header of run 2)" "$tmp/o" && [ "$(header_text)" = "$(cat "$tmp/other.h")" ]
ok $? "the header is at --header"
[ "$(sqlite3 h2/t.db "select path, installed from headers where run_id = 2")" = "$tmp/other.h|0" ] &&
  grep -q "thresholds header: $tmp/other.h (simulated" "$tmp/o"
ok $? "the database and the summary name it there, not where the sweep wrote it"

# Stopped in its report (SIGTERM to tune alone, from a gnuplot): a job
# that writes no source tree ended 0, saying "report stopped", having
# drawn it all (a review). It stops, and prints the command that draws
# its report, not a --resume that would be refused. Stopped while tune
# tries gnuplot, before anything: "interrupted", not gnuplot's fault.
mkdir -p gp
printf '#!/bin/sh\ncase "$1" in -e) ;; *) kill -TERM "$PPID" ;; esac\nexit 0\n' >gp/late
printf '#!/bin/sh\ncase "$1" in -e) kill -INT "$PPID" ;; esac\nexit 0\n' >gp/early
chmod +x gp/late gp/early
GNUPLOT=$tmp/gp/late "$tune" "${q[@]/--no-report/--report-dir=gp/rep}" --db gp/t.db >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc -eq 143 ] && grep -q "its report is drawn by:" "$tmp/e" && grep -q "^  .*tune report --db gp/t.db --before 1 --after 3 --out gp/rep$" "$tmp/e" &&
  ! grep -q -- "--resume" "$tmp/e"
ok $? "SIGTERM in the report: exit 143, the tune report command printed, no --resume (rc $rc)"
# Its report failed (a gnuplot that draws nothing): the job fails, and
# says what finishes it (a review: it said nothing, the header unwritten
# where it installs).
printf '#!/bin/sh\nexit 0\n' >gp/none && chmod +x gp/none
GNUPLOT=$tmp/gp/none "$tune" "${q[@]/--no-report/--report-dir=gp/rep3}" --db gp/n.db >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc -ne 0 ] && grep -q "^  .*tune report --db gp/n.db --before 1 --after 3 --out gp/rep3$" "$tmp/e"
ok $? "a report that fails: exit $rc, the tune report command printed"
GNUPLOT=$tmp/gp/early "$tune" "${q[@]/--no-report/--report-dir=gp/rep2}" --db gp/u.db >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc -eq 130 ] && grep -q "interrupted by SIGINT: nothing written" "$tmp/e" && ! grep -q "gnuplot" "$tmp/e" &&
  [ ! -e gp/u.db ]
ok $? "SIGINT while gnuplot is tried: exit 130, said so, nothing written (rc $rc): $(head -n1 "$tmp/e")"

# High 4: one table for the whole before pass. rows.h ends single_block at
# 1 KiB where the compiled-in table ends it at 16 KiB: auto dispatch takes
# one_shot at 2..16 KiB under it and single_block without it.
chosen() { # DB: size|path auto dispatch took, per size, in the before pass
  sqlite3 -batch -noheader "$1" "select c.bytes || '|' || c.chosen_path from configs c join runs r
    on r.id = c.run_id where r.kind = 'before' and c.path = 'auto' order by c.bytes"
}
"$tune" table | sed 's/{16384, DC_PATH_SINGLE_BLOCK}/{1024, DC_PATH_SINGLE_BLOCK}/' >rows.h
mkdir ref tb
DC_THRESHOLDS_FILE=$tmp/rows.h "$tune" "${q[@]}" --db ref/t.db >/dev/null 2>"$tmp/e"
ok $? "a job under DC_THRESHOLDS_FILE"
grep -q '^8192|one_shot$' <(chosen ref/t.db)
ok $? "its before pass takes one_shot at 8 KiB"
cp ref/t.db tb/t.db
unfinish tb/t.db
ok $([ "$(chosen tb/t.db | wc -l)" = 3 ]; echo $?) "killed after 3 of its 7 sizes"
"$tune" "${q[@]}" --db tb/t.db --resume >"$tmp/o" 2>"$tmp/e"
ok $? "resumed without DC_THRESHOLDS_FILE"
grep -q "before run 1 measures on with the table it began with ($("$tune" table --file rows.h --hash)), not the compiled-in table ($("$tune" table --hash))" "$tmp/o"
ok $? "it says which table it measures"
chosen ref/t.db >"$tmp/ref.txt"
chosen tb/t.db | diff "$tmp/ref.txt" - >"$tmp/diff"
ok $? "the resumed sizes took the paths of the table the job began with$(tr '\n' ' ' <"$tmp/diff" | sed 's/^./: &/')"
sqlite3 tb/t.db "select thresholds from runs where kind = 'sweep'" | grep -q "^previous table $("$tune" table --file rows.h --hash)$"
ok $? "the sweep names that table by its hash, not by a file that does not hold it"

# The resume hint: DC_THRESHOLDS_FILE and TUNE_ variables, quoted, before
# the command line; never the knob that stopped the job.
mkdir hint
long=$(printf 'x%.0s' $(seq 5000))
DC_THRESHOLDS_FILE=$tmp/rows.h DC_PDL=1 TUNE_SIM_PAUSE_AFTER=5 TUNE_SIM_SPELL_PCT=100 TUNE_LONG_NOTE=$long \
  "$tune" "${q[@]}" --db "hint/a b.db" >"$tmp/o" 2>"$tmp/e" &
pid=$!
for _ in $(seq 1200); do grep -qs "pid $pid " "hint/a b.db.lock" && break; sleep 0.05; done
kill -INT "$pid"
wait "$pid"
ok $(($? != 130)) "a job stopped by SIGINT"
cmd=$(sed -n '/to continue the job, run:/{n;s/^  //;p;}' "$tmp/e")
env_words=${cmd%% "$tune" *}
case " $env_words " in *" DC_THRESHOLDS_FILE=$tmp/rows.h "*) r=0 ;; *) r=1 ;; esac
case " $env_words " in *" TUNE_SIM_SPELL_PCT=100 "*) ;; *) r=1 ;; esac
case " $env_words " in *" DC_PDL=1 "*) ;; *) r=1 ;; esac
ok $r "the command names its environment before the program ($cmd)"
case "$cmd" in *TUNE_SIM_PAUSE_AFTER*) r=1 ;; *) r=0 ;; esac
ok $r "but not TUNE_SIM_PAUSE_AFTER"
# A word too long to print is left out whole and named, never cut.
case "$cmd" in *TUNE_LONG_NOTE*) r=1 ;; *) r=0 ;; esac
grep -q "the command below leaves out TUNE_LONG_NOTE (too long to print): set it as the job had it" "$tmp/e" || r=1
ok $r "nor a variable too long to print, which it names"
(eval "$cmd") >"$tmp/o" 2>"$tmp/e"
ok $? "the command finishes the job"
grep -q "before run 1 measures on" "$tmp/o"
ok $((! $?)) "under the table it began with"

# A command line too long to print whole is not printed cut.
deep=$(printf 'd%.0s' $(seq 200))
p=.
for _ in $(seq 20); do p=$p/$deep; done
mkdir -p "$p"
mkdir long
TUNE_SIM_PAUSE_AFTER=5 "$tune" "${q[@]/--no-report/--report-dir=$p/r}" --header "$p/h.h" --db long/t.db \
  >"$tmp/o" 2>"$tmp/e" &
pid=$!
for _ in $(seq 1200); do grep -qs "pid $pid " long/t.db.lock && break; sleep 0.05; done
kill -INT "$pid"
wait "$pid"
ok $(($? != 130)) "a job with a long command line stopped by SIGINT"
grep -q "to continue the job, run its command line again with --resume (too long to print)" "$tmp/e" &&
  ! grep -q "to continue the job, run:" "$tmp/e"
ok $? "it says to run its command line again with --resume, and prints no cut command"

tap_end
