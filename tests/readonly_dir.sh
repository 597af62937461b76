#!/usr/bin/env bash
# readonly_dir.sh: report and export read a database in a folder that
# cannot hold a -shm (chmod 555, or a read-only mount for root); merge takes
# one in rollback-journal mode (as tune leaves a database) and refuses one
# in WAL mode up front; all leave them unchanged.
set -u
. "$(dirname "$0")/tap.sh"
ro=$tmp/ro
cleanup() { [ "$(id -u)" -eq 0 ] && umount "$ro" 2>/dev/null; chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
"$tune" --backend sim --gpus 2 --max-bytes 64K --trials 3 --no-report --db "$tmp/x.db" >/dev/null 2>&1 || exit 99
# The same database in WAL mode, as an older tune (or a job's crash) leaves it.
cp "$tmp/x.db" "$tmp/w.db"
[ "$(sqlite3 "$tmp/w.db" "pragma journal_mode = wal")" = wal ] || exit 99
mkdir -p "$ro"
if [ "$(id -u)" -eq 0 ]; then
  mount -t tmpfs tmpfs "$ro" 2>/dev/null || { echo "1..0 # SKIP root without mount"; exit 77; }
  cp "$tmp/x.db" "$tmp/w.db" "$ro/"
  mount -o remount,ro "$ro" || { echo "1..0 # SKIP cannot remount read-only"; exit 77; }
else
  cp "$tmp/x.db" "$tmp/w.db" "$ro/"
  chmod 555 "$ro"
fi
"$tune" report --db "$ro/x.db" --out "$tmp/rep" >"$tmp/o" 2>"$tmp/e"
ok $? "report reads a database in a read-only folder"
[ -s "$tmp/rep/report.md" ]
ok $? "and writes report.md"
"$tune" export --db "$ro/x.db" --format csv --table runs --out "$tmp/runs.csv" >"$tmp/o" 2>>"$tmp/e"
ok $? "export reads it"
[ "$(wc -l <"$tmp/runs.csv")" -eq 4 ]
ok $? "and writes its 3 runs"
"$tune" export --db "$ro/w.db" --format csv --table runs --out "$tmp/wruns.csv" >"$tmp/o" 2>>"$tmp/e"
ok $? "export reads the WAL one too"
# merge attaches its node databases: SQLite attaches one in rollback mode
# anywhere, but one in WAL mode only where it can keep a -shm, so that one
# is refused up front, naming the file, with no fleet database made.
"$tune" merge --backend sim --gpus 2 --launcher threads --max-bytes 64K --trials 3 \
  --db "$tmp/fleet.db" "$ro/w.db" >"$tmp/o" 2>"$tmp/me"
rc=$?
ok $(( rc != 2 )) "merge of a WAL node database in a read-only folder exits 2 (rc $rc)"
grep -q "$ro/w.db: its folder is read-only" "$tmp/me"
ok $? "and names it: $(head -n1 "$tmp/me")"
ok $(( $(test -e "$tmp/fleet.db"; echo $?) == 0 )) "and makes no fleet database"
"$tune" merge --backend sim --gpus 2 --launcher threads --max-bytes 64K --trials 3 \
  --db "$tmp/fleet.db" "$ro/x.db" >"$tmp/o" 2>"$tmp/me"
ok $? "merge takes the node database in rollback mode there: $(grep -m1 error "$tmp/me")"
for f in x w; do
  cmp -s "$tmp/$f.db" "$ro/$f.db" && [ ! -e "$ro/$f.db-shm" ] && [ ! -e "$ro/$f.db-wal" ]
  ok $? "$f.db is unchanged, with no -wal or -shm"
done
sed 's/^/# /' "$tmp/e"
tap_end
