#!/usr/bin/env bash
# progress_logs.sh: a main job (sim) whose stderr is a file logs timestamped
# progress lines -- phase, done/total, ETA -- no closer together than
# TUNE_PROGRESS_SECONDS, and a line as each phase ends; TUNE_DEBUG lines
# carry a timestamp; ./tune --version with a build does not run make.
set -u
. "$(dirname "$0")/tap.sh"
cd "$tmp" || exit 1
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z '
args=(--backend sim --gpus 8 --max-bytes 64M --trials 10 --no-report --db "$tmp/p.db")

t0=$(date +%s)
TUNE_PROGRESS_SECONDS=1 "$tune" "${args[@]}" >out 2>err
rc=$?
took=$(($(date +%s) - t0))
ok $rc "the job finishes (rc $rc)"
for phase in before sweep after; do
  grep -Eq "${stamp}tune: $phase done: ([0-9]+)/\\1 (sizes|groups) \\(100%\\), [0-9]+ configs measured, elapsed" err
  ok $? "a timestamped line says $phase is done, with done/total"
done
grep -Eq "${stamp}tune: header done:" err
ok $? "a timestamped line says the header is written"
grep 'tune: ' err | grep -Ev "$stamp" >unstamped
ok $([ -s unstamped ] && echo 1 || echo 0) "every progress line is timestamped: $(head -n1 unstamped)"
periodic="${stamp}tune: [a-z]+: [0-9]+/[0-9]+ (sizes|groups) \\([0-9]+%\\), [0-9]+ configs measured, elapsed [0-9hms]+, ETA [0-9hms?]+$"
if [ "$took" -ge 3 ]; then
  grep -Eq "$periodic" err
  ok $? "a job of ${took}s logs lines between phase ends (phase, done/total, ETA)"
else
  echo "ok $((n += 1)) - # SKIP the job took ${took}s, too short for a line at 1s"
fi
# Each line at the interval comes at least that long after the line before.
awk -v re="$periodic" '{ split(substr($1, 12, 12), t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]
  if ($0 ~ re && NR > 1 && s - prev < 0.95) bad++; prev = s } END { exit bad > 0 }' err
ok $? "no two progress lines closer than TUNE_PROGRESS_SECONDS=1"
TUNE_PROGRESS_SECONDS=0 "$tune" "${args[@]}" --db "$tmp/q.db" >out 2>err0
! grep -Eq "$periodic" err0
ok $? "TUNE_PROGRESS_SECONDS=0: no lines between phase ends"

TUNE_DEBUG=INFO "$tune" --backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes eager \
  --offsets 0 --max-bytes 64K --trials 3 --no-report --db "$tmp/d.db" >out 2>dbg
grep ' INFO ' dbg >info
[ -s info ] && ! grep -Evq "$stamp" info
ok $? "TUNE_DEBUG=INFO lines carry a timestamp: $(head -n1 info)"

# On a terminal (a pseudo-terminal from script(1)): a redrawn bar per
# phase with percent, done/total, elapsed time and ETA.
if command -v script >/dev/null; then
  script -qfec "$(printf '%q ' "$tune" "${args[@]}")" /dev/null >tty.out 2>&1
  tr '\r' '\n' <tty.out | sed 's/\x1b\[K//g' >tty.lines
  for phase in before sweep after; do
    grep -Eq "^$phase +\[[#.]{20}\] +[0-9]+% [0-9]+/[0-9]+ [a-z]+ +[0-9]+s +ETA " tty.lines
    ok $? "on a terminal: a $phase bar with percent, done/total, elapsed and ETA"
  done
  grep -q $'\r' tty.out
  ok $? "on a terminal: the bar is redrawn in place (carriage returns)"
else
  echo "# script(1) missing: the terminal bar is not checked"
fi

# A build whose make would leave a mark: the wrapper must not run it for
# --version or help when the built tune is there.
mkdir -p fake/src
ln -s "$tune" fake/src/tune
printf 'all check:\n\ttouch %s/made\n' "$tmp" >fake/Makefile
for a in --version --help help; do
  TUNE_BUILD_DIR=$tmp/fake "$TUNE_SRCDIR/tune" $a >out 2>&1
  rc=$?
  [ $rc -eq 0 ] && [ ! -e made ] && [ -s out ]
  ok $? "./tune $a with a build runs no make (rc $rc)"
done
make -s -C fake >/dev/null 2>&1
[ -e made ]
ok $? "(the same make would have left its mark)"
tap_end
