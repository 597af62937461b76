#!/usr/bin/env bash
# resume.sh: a main job (sim backend) killed with SIGKILL at seeded random
# moments, 5 times, each time continued with --resume, finishes; the
# database passes integrity_check, no committed sample is lost, and the
# result equals an uninterrupted job's.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
args=(--backend sim --gpus 8 --max-bytes 64M --trials 10 --no-report)

RANDOM=20261129
kills=0
"$tune" "${args[@]}" --db "$tmp/k.db" >"$tmp/out0" 2>&1 &
pid=$!
for round in 1 2 3 4 5; do
  sleep "0.$((RANDOM % 6 + 2))"
  kill -9 "$pid" 2>/dev/null || break # the job finished before this kill
  wait "$pid" 2>/dev/null
  kills=$((kills + 1))
  sqlite3 "$tmp/k.db" "select config_id, trial, rank, elapsed_ns from samples" >"$tmp/snap$round" 2>/dev/null
  [ "$(sqlite3 "$tmp/k.db" 'pragma integrity_check')" = ok ]
  ok $? "round $round: integrity_check ok after SIGKILL"
  "$tune" "${args[@]}" --db "$tmp/k.db" --resume >"$tmp/out$round" 2>&1 &
  pid=$!
done
wait "$pid"
rc=$?
ok $rc "the last run (resumed after $kills kills) finishes (rc $rc)"
ok $(( kills < 3 )) "at least 3 of the 5 kills interrupted a running job ($kills)"
[ "$(sqlite3 "$tmp/k.db" 'pragma integrity_check')" = ok ]
ok $? "final integrity_check ok"
sqlite3 "$tmp/k.db" "select config_id, trial, rank, elapsed_ns from samples" | sort >"$tmp/final"
for f in "$tmp"/snap*; do
  lost=$(sort "$f" | comm -23 - "$tmp/final" | wc -l)
  ok $(( lost != 0 )) "no committed sample of $(basename "$f") lost ($lost missing)"
done
ok $(( $(sqlite3 "$tmp/k.db" "select count(*) from runs where finished_at is null") != 0 )) "every run finished"
ok $(( $(sqlite3 "$tmp/k.db" "select count(*) from runs") != 3 )) "one chain: before, sweep, after (no extra runs)"
missing=$(sqlite3 "$tmp/k.db" "select count(*) from configs c where (select count(*) from samples s where s.config_id = c.id) <> c.trials * c.world")
ok $(( missing != 0 )) "every config has all its samples ($missing without)"

# The same job uninterrupted gives the same header table and crossovers
# (sim samples depend only on the configuration and trial).
"$tune" "${args[@]}" --db "$tmp/clean.db" >/dev/null 2>&1
ok $? "uninterrupted job runs"
q='select op, dtype, world, align, mode, path_below, path_above, bytes from crossovers order by 1,2,3,4,5,8'
[ "$(sqlite3 "$tmp/k.db" "$q")" = "$(sqlite3 "$tmp/clean.db" "$q")" ]
ok $? "resumed crossovers equal the uninterrupted job's"
q='select row_index, seg_index, max_bytes, path from header_rows order by 1, 2'
[ "$(sqlite3 "$tmp/k.db" "$q")" = "$(sqlite3 "$tmp/clean.db" "$q")" ]
ok $? "resumed header table equals the uninterrupted job's"

# A job resumed past its sweep puts its header back before the after pass,
# whatever replaced the installed file meanwhile (here in a scratch source
# tree: TUNE_SRCDIR decides where kernels/thresholds.h is).
mkdir -p "$tmp/src/kernels"
cp "${TUNE_SRCDIR:?}/kernels/thresholds.h" "$tmp/src/kernels/"
hargs=(--backend sim --gpus 2 --max-bytes 1M --trials 4 --allow-sim --no-report --db "$tmp/h.db")
TUNE_SRCDIR=$tmp/src "$tune" "${hargs[@]}" >"$tmp/o" 2>&1
ok $? "a sim job installs its header (--allow-sim)"
sqlite3 "$tmp/h.db" "select content from headers where run_id = (select id from runs where kind = 'sweep')" >"$tmp/stored"
cmp -s "$tmp/stored" <(cat "$tmp/src/kernels/thresholds.h"; echo)
ok $? "the installed header is the stored one"
echo "/* replaced */" >"$tmp/src/kernels/thresholds.h"
sqlite3 "$tmp/h.db" "update runs set finished_at = null where kind = 'after'"
TUNE_SRCDIR=$tmp/src "$tune" "${hargs[@]}" --resume >"$tmp/o" 2>&1
ok $? "the job resumes at its after pass"
cmp -s "$tmp/stored" <(cat "$tmp/src/kernels/thresholds.h"; echo)
ok $? "the resumed job reinstalled its header"

# Finished, with no build to rebuild: a hand edit of the installed header
# (the same rows) was taken for a job stopped in its rebuild, the file
# rewritten (a review). --resume says the job has finished, the file stays.
echo "/* kept by hand */" >>"$tmp/src/kernels/thresholds.h"
TUNE_SRCDIR=$tmp/src "$tune" "${hargs[@]}" --resume >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc -ne 0 ] && grep -q "nothing to resume" "$tmp/e" && grep -q "kept by hand" "$tmp/src/kernels/thresholds.h"
ok $? "a finished job with its header hand-edited: nothing to resume, the edit kept (rc $rc)"
# Stopped in its report (a gnuplot that signals tune) where the tree's
# header is not the table the job began with (DC_THRESHOLDS_FILE), or is
# missing: the printed --resume was refused, the table never installed (a
# review). It finishes the job.
printf '#!/bin/sh\ncase "$1" in -e) ;; *) kill -INT "$PPID" ;; esac\nexit 0\n' >"$tmp/gp"
chmod +x "$tmp/gp"
"$tune" table | sed 's/{16384, DC_PATH_SINGLE_BLOCK}/{1024, DC_PATH_SINGLE_BLOCK}/' >"$tmp/rows.h"
mkdir -p "$tmp/s1/kernels" "$tmp/s2/kernels"
cp "$TUNE_SRCDIR/kernels/thresholds.h" "$tmp/s1/kernels/"
for case in "s1 DC_THRESHOLDS_FILE=$tmp/rows.h" "s2 TUNE_NO_SUCH_VARIABLE=1"; do
  set -- $case
  iargs=("${hargs[@]/--no-report/--report-dir=$tmp/$1/rep}")
  iargs=("${iargs[@]/$tmp\/h.db/$tmp/$1/t.db}")
  env "$2" TUNE_SRCDIR="$tmp/$1" GNUPLOT="$tmp/gp" "$tune" "${iargs[@]}" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  [ $rc -eq 130 ] && grep -q "to continue the job, run:" "$tmp/e"
  ok $? "$1: stopped in its report, exit 130, --resume printed (rc $rc)"
  env "$2" TUNE_SRCDIR="$tmp/$1" "$tune" "${hargs[@]/$tmp\/h.db/$tmp/$1/t.db}" --resume >"$tmp/o" 2>"$tmp/e"
  rc=$?
  sqlite3 "$tmp/$1/t.db" "select content from headers where run_id = (select id from runs where kind = 'sweep')" |
    cmp -s - <(cat "$tmp/$1/kernels/thresholds.h"; echo)
  ok $(( $? != 0 || rc != 0 )) "$1: --resume installs the job's header (rc $rc)"
done

# Nothing to resume, and a different job, are clear errors.
"$tune" "${args[@]}" --db "$tmp/k.db" --resume >"$tmp/o" 2>"$tmp/e"
rc=$?
ok $(( rc == 0 )) "resuming a finished job fails (rc $rc)"
grep -q "nothing to resume" "$tmp/e"
ok $? "and says there is nothing to resume"
"$tune" --backend sim --gpus 4 --db "$tmp/new.db" --resume >"$tmp/o" 2>"$tmp/e"
ok $(( $? == 0 )) "resuming an empty database fails"

tap_end
