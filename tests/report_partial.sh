#!/usr/bin/env bash
# report_partial.sh: `tune report` on a job killed (SIGKILL) during its after
# pass compares the before run with the configs the after run reached and
# says which it lacks, with and without explicit runs, while an unfinished
# run that measured something the before run did not is still refused; a
# stale report.md.tmp, or a dead writer's report.md.tmp.HOST.PID, does not
# survive a later report; a report whose plots fail leaves no report.md
# (the old one described other figures), also where gnuplot exits 0 having
# drawn nothing; an earlier report's figures go; database text with
# '|' and a newline leaves report.md's tables whole and adds no heading.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
command -v gnuplot >/dev/null || { echo "1..0 # SKIP gnuplot not installed"; exit 77; }
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }
args=(--backend sim --gpus 4 --max-bytes 16M --trials 6 --no-report)
after_configs="select count(*) from configs c join runs r on r.id = c.run_id where r.kind = 'after'"

# Kill the job once its after pass has committed a few configs; a job that
# finished first (a slow poll) is run again, up to 5 times.
db=$tmp/k.db
for try in 1 2 3 4 5; do
  rm -f "$db" "$db"-*
  "$tune" "${args[@]}" --db "$db" >"$tmp/out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    [ "$(sqlite3 "$db" "$after_configs" 2>/dev/null || echo 0)" -gt 20 ] && { kill -9 "$pid"; break; }
    sleep 0.02
  done
  wait "$pid" 2>/dev/null
  [ "$(sqlite3 "$db" "select count(*) from runs where kind = 'after' and finished_at is null")" = 1 ] && break
done
ok $(( $(sqlite3 "$db" "select count(*) from runs where kind = 'after' and finished_at is null") != 1 )) \
  "the job was killed during its after pass (try $try)"

for sel in "" "--before 1 --after 3"; do
  rm -rf "$tmp/rep"
  # shellcheck disable=SC2086
  "$tune" report --db "$db" $sel --out "$tmp/rep" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  ok $rc "report ${sel:-(latest runs)} of the killed job succeeds (rc $rc: $(head -c 200 "$tmp/e"))"
  grep -q "UNFINISHED RUN.*after run 3 has not finished" "$tmp/rep/report.md" 2>/dev/null
  ok $? "report ${sel:-(latest runs)}: report.md says after run 3 is unfinished"
done
missing=$(sqlite3 "$db" "select count(*) from (select op, dtype, mode, align, world from configs where run_id = 1 and path = 'auto' and skew_ns = 0 except select op, dtype, mode, align, world from configs where run_id = 3 and path = 'auto' and skew_ns = 0)")
listed=$(sed -n '/UNFINISHED RUN/,/^$/d; /^| op | dtype | mode | align | world | sizes missing/,/^$/p' "$tmp/rep/report.md" | grep -c '^| [a-z]')
ok $(( listed < missing || listed == 0 )) "report.md lists the groups the after run lacks ($listed; $missing lack every size)"
# Sizes the after run did not reach have no before/after row: the first
# latency table (an op the after pass measured) has no '-' in its after column.
sed -n '/^### /,$p' "$tmp/rep/report.md" | awk -F'|' '/^\| [0-9]/ { if ($5 ~ /-/) bad++ } /^### /{ if (++h == 2) exit } END { exit bad > 0 }'
ok $? "the latency tables compare only the sizes both runs measured"

# An unfinished run that measured what the before run did not is a difference.
cp "$db" "$tmp/d.db"
sqlite3 "$tmp/d.db" "update configs set bytes = bytes + 8 where id = (select min(id) from configs where run_id = 3 and path = 'auto')"
"$tune" report --db "$tmp/d.db" --out "$tmp/rep_d" >/dev/null 2>"$tmp/e"
rc=$?
ok $(( rc == 0 )) "an unfinished after run with a config the before run lacks is refused (rc $rc)"
grep -q "runs 1 and 3 differ" "$tmp/e"
ok $? "and the refusal says how they differ"

# A report killed while writing leaves report.md.tmp; the next report, even
# one that fails, leaves none.
mkdir -p "$tmp/rep" && echo "stale" >"$tmp/rep/report.md.tmp"
"$tune" report --db "$db" --out "$tmp/rep" >/dev/null 2>&1
ok $(( $? != 0 )) "report into a folder with a stale report.md.tmp succeeds"
ok $(( $(test -e "$tmp/rep/report.md.tmp"; echo $?) == 0 )) "no report.md.tmp after a successful report"
mkdir -p "$tmp/rep" && echo "stale" >"$tmp/rep/report.md.tmp"
"$tune" report --db "$db" --before 2 --after 3 --out "$tmp/rep" >/dev/null 2>&1
ok $(( $? == 0 )) "a report naming a sweep run as --before fails"
ok $(( $(test -e "$tmp/rep/report.md.tmp"; echo $?) == 0 )) "no report.md.tmp after a failed report"

# A report.md.tmp.HOST.PID of a writer on this host that was killed (PID
# no longer alive) goes at the next write of report.md; a live PID's
# stays, and so does another host's (a folder two hosts share).
dead=$(sh -c 'echo $$') host=$(hostname)
echo stale >"$tmp/rep/report.md.tmp.$host.$dead"
echo live >"$tmp/rep/report.md.tmp.$host.$$"
echo other >"$tmp/rep/report.md.tmp.elsewhere.$dead"
"$tune" report --db "$db" --out "$tmp/rep" >/dev/null 2>&1
ok $(( $(test -e "$tmp/rep/report.md.tmp.$host.$dead"; echo $?) == 0 )) "a dead writer's report.md.tmp.$host.$dead is removed"
ok $(( $(test -e "$tmp/rep/report.md.tmp.$host.$$"; echo $?) != 0 )) "a live writer's report.md.tmp.$host.$$ stays"
ok $(( $(test -e "$tmp/rep/report.md.tmp.elsewhere.$dead"; echo $?) != 0 )) "another host's report.md.tmp.elsewhere.$dead stays"
rm -f "$tmp/rep/report.md.tmp."*

# A report whose plots fail leaves no report.md: not the new one, and not
# the old one beside figures it does not describe.
test -s "$tmp/rep/report.md"
ok $? "a report.md is there before"
# (A gnuplot that starts, as tune's probe asks it to, and fails every plot.)
printf '#!/bin/sh\n[ "$1" = -e ] && exit 0\nexit 1\n' >"$tmp/badplot"
chmod +x "$tmp/badplot"
GNUPLOT=$tmp/badplot "$tune" report --db "$db" --out "$tmp/rep" >/dev/null 2>"$tmp/e"
ok $(( $? == 0 )) "a report whose gnuplot fails fails: $(grep -m1 error "$tmp/e")"
ok $(( $(test -e "$tmp/rep/report.md"; echo $?) == 0 )) "and leaves no report.md"
# A gnuplot that exits 0 and draws nothing fails too, though the figures
# of an earlier report by the same names are there.
"$tune" report --db "$db" --out "$tmp/rep" >/dev/null 2>&1
n=$(ls "$tmp/rep" | grep -c '\.png$')
printf '#!/bin/sh\nexit 0\n' >"$tmp/noplot"
chmod +x "$tmp/noplot"
GNUPLOT=$tmp/noplot "$tune" report --db "$db" --out "$tmp/rep" >/dev/null 2>"$tmp/e"
rc=$?
ok $(( rc == 0 || n == 0 )) "a gnuplot that draws nothing fails where $n older figures are (exit $rc): $(grep -m1 error "$tmp/e")"
# A report over an older one removes the figures the old report.md named
# (one this report does not draw, latency_gone.png, among them), and
# leaves files it did not name.
"$tune" report --db "$db" --out "$tmp/rep" >/dev/null 2>&1
: >"$tmp/rep/latency_gone.png"
printf '\n![gone](latency_gone.png)\n' >>"$tmp/rep/report.md"
: >"$tmp/rep/latency_mine.png"
mkdir -p "$tmp/rep/skew_folder.png"
"$tune" report --db "$db" --out "$tmp/rep" >/dev/null 2>&1
ok $? "a report over an older one runs"
unlisted=$(cd "$tmp/rep" && for f in *.png *.svg; do grep -q "($f)" report.md || echo "$f"; done)
test "$unlisted" = "$(printf 'latency_mine.png\nskew_folder.png')"
ok $? "the old report's figures are gone, the files it did not name stay (unlisted: $(echo $unlisted))"

# --resume of a finished job points to tune report.
"$tune" "${args[@]}" --db "$db" --resume >/dev/null 2>&1
"$tune" "${args[@]}" --db "$db" --resume >/dev/null 2>"$tmp/e"
grep -q "nothing to resume.*tune report --db .* --before 1 --after 3" "$tmp/e"
ok $? "--resume of a finished job names the tune report command"

# Database text: '|' and a newline in the host and the driver, free text
# (a name tune checks, such as an op's, is refused as damage instead).
cp "$db" "$tmp/h.db"
sqlite3 "$tmp/h.db" "update runs set host = 'node|a' || char(10) || '# injected heading',
  driver = 'drv|x' || char(10) || '## x'"
"$tune" report --db "$tmp/h.db" --out "$tmp/rep_h" >/dev/null 2>"$tmp/e"
ok $? "report of a database with '|' and a newline in its host field"
python3 - "$tmp/rep_h/report.md" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
bad = [l for l in lines if l.startswith("#") and "injected" in l or l.startswith("## x")]
cols, table = None, []
for l in lines + [""]:
    if l.startswith("|"):
        cells = len(re.sub(r"\\.", "x", l).split("|")) - 2
        if cols is None:
            cols = cells
        elif cells != cols:
            bad.append(l)
    else:
        cols = None
for l in bad:
    print("# bad line:", l[:120])
sys.exit(1 if bad else 0)
PY
ok $? "every table row of report.md has its header's column count, and no database text made a heading"
grep -q 'node\\|a # injected heading' "$tmp/rep_h/report.md"
ok $? "the host is shown escaped on one line"

# A child of the job's report left running (a gnuplot's helper) held the
# job lock's flock after tune had ended: the next job on the database was
# refused, naming the dead job (a review). The lock is close-on-exec.
mkdir -p "$tmp/gpw" && printf '#!/bin/sh\n(sleep 8 </dev/null >/dev/null 2>&1 &)\nexec gnuplot "$@"\n' >"$tmp/gpw/gnuplot" &&
  chmod +x "$tmp/gpw/gnuplot"
small=(--backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes graph --offsets 0 --trials 3
  --max-trials 3 --max-bytes 64K)
GNUPLOT=$tmp/gpw/gnuplot "$tune" "${small[@]}" --db "$tmp/cl/t.db" >/dev/null 2>&1
ok $? "a job whose gnuplot leaves a child running"
"$tune" "${small[@]}" --no-report --db "$tmp/cl/t.db" >/dev/null 2>"$tmp/e"
rc=$?
ok $rc "the next job on its database runs at once (rc $rc): $(head -n1 "$tmp/e")"

# Two reports into one folder at once mixed their files (a review): a
# report waits while another holds the folder (here flock(1)), saying so,
# then draws its own.
if command -v flock >/dev/null; then
  mkdir -p "$tmp/rep_w"
  flock "$tmp/rep_w" sleep 3 &
  fpid=$!
  sleep 0.5
  start=$(date +%s)
  "$tune" report --db "$db" --out "$tmp/rep_w" >/dev/null 2>"$tmp/e"
  rc=$?
  wait $fpid
  [ $rc -eq 0 ] && grep -q "rep_w is being written by another tune; waiting for it" "$tmp/e" &&
    [ $(( $(date +%s) - start )) -ge 2 ] && [ -s "$tmp/rep_w/report.md" ]
  ok $? "a report into a folder held by another waits, then writes (rc $rc, $(( $(date +%s) - start )) s)"
else
  tap_skip "a report into a held folder: skipped (no flock command)"
fi

tap_end
