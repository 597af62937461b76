#!/usr/bin/env bash
# resume_trust.sh: --resume on the sim backend finds the job it continues by
# its parsed options (not the newest job, not the command line's text),
# refuses stored samples tune could not have written, and a second job on
# one database is refused by the job lock. Every refusal leaves the
# database byte-identical.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/refused.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
args=(--backend sim --gpus 2 --max-bytes 64K --trials 3 --no-report)
cd "$tmp" || exit 1

# A job killed in its after pass: the after run unfinished, half its configs,
# and with them (one transaction per size) their pairs and regret rows.
# interrupted DB [OPTION...]: the job of args, then OPTIONs, on DB.
interrupted() {
  "$tune" "${args[@]}" "${@:2}" --db "$1" >/dev/null 2>&1 || return 1
  sqlite3 "$1" "update runs set finished_at = null where kind = 'after';
    create temp table gone as select id from configs where run_id = (select max(id) from runs where kind = 'after')
      and id > (select min(id) + 5 from configs where run_id = (select max(id) from runs where kind = 'after'));
    delete from pairs where new_config in (select id from gone) or prev_config in (select id from gone);
    delete from regret where rowid in (select r.rowid from regret r join configs c on c.run_id = r.run_id
      and c.op = r.op and c.dtype = r.dtype and c.world = r.world and c.align = r.align and c.mode = r.mode
      and c.bytes = r.bytes where c.id in (select id from gone));
    delete from samples where config_id in (select id from gone); delete from configs where id in (select id from gone)"
}
# refused_db DB WHAT PATTERN ARGS...: fails, and DB is byte-identical.
refused_db() {
  local db=$1
  shift
  cp "$db" "$tmp/before.db"
  fails "$@"
  cmp -s "$db" "$tmp/before.db"
  ok $? "$1: the database is unchanged"
}

# Medium 6: bad stored samples are named, not used.
interrupted "$tmp/s.db"
ok $? "an interrupted job"
cfg=$(sqlite3 "$tmp/s.db" "select min(id) from configs where run_id = 2")
for v in "'abc'" -5 9223372036854775807 1.5e300; do
  cp "$tmp/s.db" "$tmp/t.db"
  sqlite3 "$tmp/t.db" "pragma ignore_check_constraints = 1;
    update samples set elapsed_ns = $v where config_id = $cfg and trial = 1 and rank = 1"
  refused_db "$tmp/t.db" "a sample of $v" "config $cfg trial 1 rank 1" "${args[@]}" --db "$tmp/t.db" --resume
done
cp "$tmp/s.db" "$tmp/t.db"
# The sweep may have taken more than --trials of it (a second look).
n=$(sqlite3 "$tmp/t.db" "select trials from configs where id = $cfg")
sqlite3 "$tmp/t.db" "delete from samples where config_id = $cfg and trial = 2"
refused_db "$tmp/t.db" "a config short of samples" "config $cfg (trials $n, world 2) has $((2 * n - 2)) samples" \
  "${args[@]}" --db "$tmp/t.db" --resume
sqlite3 "$tmp/t.db" "insert into samples values ($cfg, 2, 0, -1, 0)" 2>/dev/null
ok $((! $?)) "the schema refuses a negative time"

# The job's previous table, stored with its before run, is read back as a
# table before anything is measured: damaged, the job is refused as it is.
cp "$tmp/s.db" "$tmp/t.db"
sqlite3 "$tmp/t.db" "update header_rows set max_bytes = -1 where header_id = 1 and seg_index = 0"
refused_db "$tmp/t.db" "a previous table damaged outside tune" "header 1 is not a table tune writes" \
  "${args[@]}" --db "$tmp/t.db" --resume

# A NULL time: every tune schema had NOT NULL, so only an old (version 3) file
# changed outside tune holds one; built here with a samples table without
# constraints. Opening it migrates, and the migration refuses, naming the row,
# in WAL mode (as tune wrote it) and with a rollback journal.
cp "$tmp/s.db" "$tmp/v3.db"
sqlite3 "$tmp/v3.db" "create table loose (config_id integer, trial integer, rank integer,
    elapsed_ns integer, delay_ns integer, primary key (config_id, trial, rank)) without rowid;
  insert into loose select * from samples; drop table samples; alter table loose rename to samples;
  alter table runs drop column options; pragma user_version = 3;
  update samples set elapsed_ns = null where config_id = $cfg and trial = 1 and rank = 1"
refused_db "$tmp/v3.db" "an old database with a NULL time" "config $cfg trial 1 rank 1: elapsed_ns NULL" \
  "${args[@]}" --db "$tmp/v3.db" --resume
sqlite3 "$tmp/v3.db" "pragma journal_mode = delete" >/dev/null
refused_db "$tmp/v3.db" "the same with a rollback journal" "config $cfg trial 1 rank 1: elapsed_ns NULL" \
  "${args[@]}" --db "$tmp/v3.db" --resume
ok $([ "$(sqlite3 "$tmp/v3.db" "pragma user_version")" = 3 ]; echo $?) "it stays version 3"

# Medium 7: another job used the database after the interrupted one.
cp "$tmp/s.db" "$tmp/m.db"
"$tune" --backend sim --gpus 2 --max-bytes 128K --trials 3 --no-report --db "$tmp/m.db" >/dev/null 2>&1
ok $? "another job on the same database"
"$tune" "${args[@]}" --db "$tmp/m.db" --resume >"$tmp/o" 2>"$tmp/e"
ok $? "the interrupted job resumes though it is not the newest"
grep -q "resuming the main job of run 1" "$tmp/o"
ok $? "and it is run 1's"
ok $(($(sqlite3 "$tmp/m.db" "select count(*) from runs where finished_at is null") != 0)) "every run finished"

# Medium 7: --resume=RUN picks the job. Three interrupted jobs on one database:
# A (runs 1-3), B with other options (4-6), C with A's options (7-9), and a
# run of another command (10). Plain --resume would take C, the newest match.
interrupted "$tmp/n.db" && interrupted "$tmp/n.db" --max-bytes 32K && interrupted "$tmp/n.db"
ok $? "three interrupted jobs on one database"
sqlite3 "$tmp/n.db" "create temp table r as select * from runs where id = 1;
  update r set id = 10, kind = 'skew', parent_run = null, options = null; insert into runs select * from r"
unfinished() { sqlite3 "$tmp/n.db" "select group_concat(id) from runs where finished_at is null order by id"; }
after_configs() { sqlite3 "$tmp/n.db" "select count(*) from configs where run_id = $1"; }
ok $([ "$(unfinished)" = "3,6,9" ]; echo $?) "runs 3, 6 and 9 are unfinished ($(unfinished))"
c6=$(after_configs 6) c9=$(after_configs 9)
refused_db "$tmp/n.db" "--resume=99" "--resume=99: .*n.db has no run 99" "${args[@]}" --db "$tmp/n.db" --resume=99
refused_db "$tmp/n.db" "--resume=10" "run 10 is a run of kind skew, not of a main job" \
  "${args[@]}" --db "$tmp/n.db" --resume=10
refused_db "$tmp/n.db" "--resume=5 with A's options" \
  "--resume=5: the main job of run 4 was started with other options ('.*--max-bytes 32K" \
  "${args[@]}" --db "$tmp/n.db" --resume=5
refused_db "$tmp/n.db" "--resume 1 (not attached)" "given as --resume=1" "${args[@]}" --db "$tmp/n.db" --resume 1
refused_db "$tmp/n.db" "--resume=x" "--resume: 'x' is not a run id" "${args[@]}" --db "$tmp/n.db" --resume=x
"$tune" "${args[@]}" --db "$tmp/n.db" --resume=1 >"$tmp/o" 2>"$tmp/e"
ok $? "--resume=1 continues the oldest job"
[ $? -eq 0 ] || sed 's/^/# /' "$tmp/e"
grep -q "resuming the main job of run 1" "$tmp/o"
ok $? "and says it is run 1's"
ok $([ "$(unfinished)" = "6,9" ]; echo $?) "only run 3 finished; 6 and 9 still unfinished ($(unfinished))"
ok $([ "$(after_configs 6)" = "$c6" ] && [ "$(after_configs 9)" = "$c9" ] &&
  [ "$(sqlite3 "$tmp/n.db" "select max(id) from runs")" = 10 ]; echo $?) "jobs B and C untouched, no new run"
refused_db "$tmp/n.db" "--resume=2 of the finished job" \
  "--resume=2: the main job of run 1 has finished (runs 1 and 3); nothing to resume (to draw its report again: tune report" \
  "${args[@]}" --db "$tmp/n.db" --resume=2
"$tune" "${args[@]}" --db "$tmp/n.db" --resume=8 >"$tmp/o" 2>"$tmp/e"
ok $? "--resume=8 (a sweep run) continues job C"
grep -q "resuming the main job of run 7" "$tmp/o"
ok $? "and says it is run 7's"
ok $([ "$(unfinished)" = 6 ]; echo $?) "job B alone is unfinished ($(unfinished))"

# Medium 8: options reordered, ./x.db for x.db, the database moved.
mkdir -p "$tmp/moved"
interrupted "$tmp/moved/r.db"
(cd "$tmp/moved" && "$tune" --no-report --trials 3 --db ./r.db --max-bytes 64K --gpus 2 --backend sim --resume) \
  >"$tmp/o" 2>"$tmp/e"
ok $? "reordered options and ./r.db resume"
interrupted "$tmp/r2.db"
mv "$tmp/r2.db" "$tmp/moved/r2.db"
refused_db "$tmp/moved/r2.db" "different options" "must repeat the options" \
  "${args[@]}" --max-bytes 32K --db "$tmp/moved/r2.db" --resume
"$tune" "${args[@]}" --db "$tmp/moved/r2.db" --resume >"$tmp/o" 2>"$tmp/e"
ok $? "a moved database resumes"

# Medium 9: a finished job points at tune report.
refused_db "$tmp/moved/r2.db" "nothing to resume" "tune report --db .* --before 1 --after 3" \
  "${args[@]}" --db "$tmp/moved/r2.db" --resume

# Medium 11: a second job on one database is refused, naming the first.
"$tune" --backend sim --gpus 8 --max-bytes 64M --trials 10 --no-report --db "$tmp/l.db" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "pid $pid" "$tmp/l.db.lock" 2>/dev/null && [ -s "$tmp/l.db" ] && break; sleep 0.05; done
sleep 0.2
# (the first job writes on meanwhile, so no byte comparison here)
fails "a second job" "in use by another tune job (pid $pid on host" "${args[@]}" --db "$tmp/l.db"
fails "a concurrent --resume" "in use by another tune job (pid $pid" "${args[@]}" --db "$tmp/l.db" --resume
# The lock is the file's: a link to the database, or a path through a
# linked folder, meets it too.
ln -sf "$tmp/l.db" "$tmp/l-link.db"
ln -sfn "$tmp" "$tmp/dirlink"
fails "a second job through a link to the database" "in use by another tune job (pid $pid" "${args[@]}" \
  --db "$tmp/l-link.db"
fails "a second job through a linked folder" "in use by another tune job (pid $pid" "${args[@]}" \
  --db "$tmp/dirlink/l.db"
# ... and no output may replace the lock file.
fails "export over the job lock" "is the database's job lock" export --db "$tmp/l-link.db" --format csv \
  --table runs --out "$tmp/l.db.lock"
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
# A job lock this user cannot open (another user's, mode 0644): the job
# ran with no lock at all, beside a running job of that user (a review).
# While that job runs it is refused, naming it, the database as it was;
# once it has ended, the lock (left behind) is held for reading and the
# job runs. As root, through setpriv; skipped elsewhere.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  mkdir -p "$tmp/mu" && chmod 1777 "$tmp/mu" && chmod o+x "$tmp"
  as() { local u=$1; shift; (umask 022 && setpriv --reuid="$u" --regid="$u" --clear-groups "$@"); }
  as 1001 "$tune" "${args[@]}" --db "$tmp/mu/a.db" >/dev/null 2>&1 && chmod 666 "$tmp/mu/a.db"
  ok $? "a job of user 1001 (its lock: $(stat -c '%a %u' "$tmp/mu/a.db.lock" 2>&1))"
  TUNE_SIM_PAUSE_AFTER=4 setpriv --reuid=1001 --regid=1001 --clear-groups "$tune" "${args[@]}" \
    --db "$tmp/mu/b.db" >/dev/null 2>&1 &
  upid=$!
  for _ in $(seq 200); do grep -q "pid $upid" "$tmp/mu/b.db.lock" 2>/dev/null && break; sleep 0.05; done
  chmod 666 "$tmp/mu/b.db" 2>/dev/null
  sum=$(cksum <"$tmp/mu/b.db")
  as 1002 "$tune" "${args[@]}" --db "$tmp/mu/b.db" --header "$tmp/mu/h1002.h" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  [ $rc -eq 2 ] && grep -q "in use by another tune job (pid $upid" "$tmp/e" && [ "$(cksum <"$tmp/mu/b.db")" = "$sum" ]
  ok $? "user 1002's job beside user 1001's running one: refused, exit 2, the database as it was (rc $rc)"
  kill -TERM $upid 2>/dev/null
  wait $upid 2>/dev/null
  # The header beside the database is user 1001's, in a sticky folder:
  # replacing it failed after the measurements; refused up front.
  sum=$(cksum <"$tmp/mu/a.db")
  as 1002 "$tune" "${args[@]}" --db "$tmp/mu/a.db" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  [ $rc -eq 2 ] && grep -q "mu/thresholds.h is another user's, in a folder (.*, sticky)" "$tmp/e" &&
    [ "$(cksum <"$tmp/mu/a.db")" = "$sum" ]
  ok $? "user 1002's job where user 1001's header lies in a sticky folder: refused up front (rc $rc)"
  as 1002 "$tune" "${args[@]}" --db "$tmp/mu/a.db" --header "$tmp/mu/h1002.h" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  ok $rc "user 1002's job once user 1001's have ended: it runs, its lock held for reading (rc $rc)"
  [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/e" | head -3
  # Two other users at once: a read lock each let both write (a review).
  # The flock beside it keeps the second out, naming the first.
  TUNE_SIM_PAUSE_AFTER=4 setpriv --reuid=1002 --regid=1002 --clear-groups "$tune" "${args[@]}" \
    --db "$tmp/mu/a.db" --header "$tmp/mu/h1002.h" >/dev/null 2>&1 &
  upid=$!
  for _ in $(seq 200); do grep -q "FLOCK.*$upid" /proc/locks 2>/dev/null && break; sleep 0.05; done
  sum=$(cksum <"$tmp/mu/a.db")
  as 1003 "$tune" "${args[@]}" --db "$tmp/mu/a.db" --header "$tmp/mu/h1003.h" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  [ $rc -eq 2 ] && grep -q "in use by another tune job (pid $upid, another user's)" "$tmp/e"
  ok $? "user 1003's job while user 1002's runs on user 1001's lock: refused, naming 1002's (rc $rc): $(head -n1 "$tmp/e")"
  kill -TERM $upid 2>/dev/null
  wait $upid 2>/dev/null
  # A lock its owner left unreadable (umask 077): the job ran with no lock.
  mkdir -p "$tmp/mu7" && chmod 1777 "$tmp/mu7"
  (umask 077 && setpriv --reuid=1001 --regid=1001 --clear-groups "$tune" "${args[@]}" --db "$tmp/mu7/b.db") \
    >/dev/null 2>&1 && chmod 666 "$tmp/mu7/b.db"
  sum=$(cksum <"$tmp/mu7/b.db")
  as 1002 "$tune" "${args[@]}" --db "$tmp/mu7/b.db" --header "$tmp/mu7/h.h" >"$tmp/o" 2>"$tmp/e"
  rc=$?
  [ $rc -eq 2 ] && grep -q "another user's, unreadable to you" "$tmp/e" && [ "$(cksum <"$tmp/mu7/b.db")" = "$sum" ]
  ok $? "user 1001's lock unreadable to user 1002: refused, the database as it was (rc $rc)"
else
  tap_skip "a job lock of another user: skipped (needs root and setpriv)"
fi
# An SQLite write lock held for longer than 5 s is waited for.
"$tune" "${args[@]}" --db "$tmp/w.db" >/dev/null 2>&1
(echo "begin immediate; create table hold(x);"; sleep 7; echo "rollback;") | sqlite3 "$tmp/w.db" &
spid=$!
sleep 0.5
"$tune" "${args[@]}" --db "$tmp/w.db" >"$tmp/o" 2>"$tmp/e"
rc=$?
wait "$spid"
ok $rc "a job waits for a 7 s SQLite lock (rc $rc)"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/e"
grep -q "w.db: waiting for another program's lock on it" "$tmp/e"
ok $? "and says that it waits"

tap_end
