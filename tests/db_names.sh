#!/usr/bin/env bash
# db_names.sh: the names a database is reached by, on the sim backend. A
# database with two names (a hard link) is refused by every command that
# writes it -- each name would get its own -wal and job lock, so two jobs
# would run at once -- and read by those that only read. A file at the
# job lock's name (DB.lock) that tune did not write is left alone, and so
# is a link there. Every refusal changes nothing: the database
# byte-identical, no file made beside it.
set -u
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/refused.sh"
q=(--backend sim --gpus 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0 --no-reg
  --min-bytes 1K --max-bytes 64K --trials 5 --max-trials 10 --warmup 1 --no-report)
cd "$tmp" || exit 1


mkdir d
"$tune" "${q[@]}" --db d/a.db >/dev/null 2>&1
ok $? "a job"
rm -f d/a.db.lock
ln d/a.db d/hard.db

# High 1: a hard link gets no lock of its own.
refused "a job through a hard link" "d/hard.db has 2 names (hard links)" d/a.db "${q[@]}" --db d/hard.db
refused "a job through the first name" "d/a.db has 2 names" d/a.db "${q[@]}" --db d/a.db
refused "--resume through a hard link" "has 2 names" d/a.db "${q[@]}" --db d/hard.db --resume
refused "verify through a hard link" "has 2 names" d/a.db verify --backend sim --gpus 2 --db d/hard.db
"$tune" export --db d/hard.db --format csv --table runs --out runs.csv 2>"$tmp/e"
ok $? "export reads through a hard link"
"$tune" report --db d/hard.db --out rep >/dev/null 2>"$tmp/e"
ok $? "report reads through a hard link"
rm d/hard.db
"$tune" "${q[@]}" --db d/a.db >/dev/null 2>&1
ok $? "with one name again, the job runs"

# Medium 2: DB.lock that is not tune's. --db Cargo meets Cargo.lock.
lock_kept() { # WHAT LOCK: LOCK is as it was (lock.keep), what it pointed at too
  cmp -s "$2" lock.keep
  ok $? "$1: $2 is untouched"
}
mkdir cg
printf 'version = 3\n[[package]]\nname = "x"\n' >cg/Cargo.lock
cp cg/Cargo.lock lock.keep
cp d/a.db cg/Cargo
refused "--db Cargo beside a Cargo.lock" "cg/Cargo.lock is not a job lock tune wrote" cg/Cargo \
  "${q[@]}" --db cg/Cargo
lock_kept "--db Cargo" cg/Cargo.lock
refused "--resume --db Cargo" "Cargo.lock is not a job lock tune wrote" cg/Cargo "${q[@]}" --db cg/Cargo --resume
lock_kept "--resume --db Cargo" cg/Cargo.lock
# ... even where the job is refused for its database.
ln cg/Cargo cg/Cargo2
refused "a refused database beside a Cargo.lock" "has 2 names" cg/Cargo "${q[@]}" --db cg/Cargo
lock_kept "a refused database" cg/Cargo.lock
rm cg/Cargo2
# A link at the lock's name: to the database itself, to nothing.
mkdir lk
cp d/a.db lk/s.db
ln -s s.db lk/s.db.lock
refused "a DB.lock linked to the database" "lk/s.db.lock is a symbolic link" lk/s.db "${q[@]}" --db lk/s.db
ln -s nowhere lk/t.db.lock
refused "a DB.lock linked to nothing" "t.db.lock is a symbolic link" lk/s.db "${q[@]}" --db lk/t.db
ok $(test ! -e lk/nowhere && test ! -e lk/t.db; echo $?) "and nothing made where it points or at the database"
mkfifo lk/u.db.lock
refused "a FIFO at DB.lock" "u.db.lock is not a job lock tune wrote (not a regular file)" lk/s.db \
  "${q[@]}" --db lk/u.db
# What tune leaves or a crash leaves behind is a lock: empty, or its holder line.
: >lk/v.db.lock
"$tune" "${q[@]}" --db lk/v.db >/dev/null 2>"$tmp/e"
ok $? "an empty DB.lock is taken"
echo "pid 1 on host gone" >lk/w.db.lock
"$tune" "${q[@]}" --db lk/w.db >/dev/null 2>"$tmp/e"
ok $? "a stale holder line is taken"
grep -q "^pid [0-9]* on host " lk/w.db.lock
ok $? "and holds the new holder"

# A name longer than SQLite takes (its VFS's mxPathname less "-journal";
# 504 bytes as built by default) is refused naming the length, not with
# SQLite's "unable to open database file".
long=$PWD
while [ $((505 - ${#long})) -gt 100 ]; do long=$long/$(printf 'n%.0s' $(seq 90)); done
mkdir -p "$long"
long=$long/$(printf 'b%.0s' $(seq $((505 - ${#long} - 1))))
ok $((${#long} != 505)) "a path of 505 bytes"
fails "a new database at it" "its absolute path is 505 bytes; SQLite takes at most 504" "${q[@]}" --db "$long"
ok $(ls -A "$(dirname "$long")" | grep -q .; echo $((! $?))) "its folder stays empty"
cp d/a.db "$long"
refused "a job on a database moved there" "its absolute path is 505" "$long" "${q[@]}" --db "$long"
fails "a report of it" "its absolute path is 505" report --db "$long" --out rep-long

tap_end
