#!/usr/bin/env bash
# export_out.sh: where export --out writes (issue 16). A regular file is
# replaced whole (and keeps its permissions, as a job's header does); a symbolic link is followed and
# its target replaced, the link kept; '-' is standard output; a FIFO is
# written in place, not replaced by a regular file (a device node is the
# same case: /dev/null is not used here, a test run before the fix must not
# be able to replace it); a folder is refused.
set -u
. "$(dirname "$0")/tap.sh"
cd "$tmp" || exit 1
export_runs() { "$tune" export --db base.db --format csv --table runs "$@"; }

"$tune" --backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0 \
  --max-bytes 64K --trials 3 --max-trials 3 --db base.db --no-report >out 2>err
rc=$?
ok $rc "a small sim job makes the database"
[ $rc -eq 0 ] || { sed 's/^/# /' err; echo "1..$tap_n"; exit 1; }
export_runs >want.csv 2>err
ok $? "export to standard output"
grep -q '^id,' want.csv
ok $? "the CSV starts with its header line"

mkdir dash && (cd dash && "$tune" export --db ../base.db --format csv --table runs --out - >../dash.csv 2>../err)
ok $? "--out - exits 0"
cmp -s want.csv dash.csv
ok $? "--out - writes standard output"
ok $(( $(ls -A dash | wc -l) != 0 )) "--out - creates no file (found: $(ls -A dash | tr '\n' ' '))"

echo old >plain.csv
chmod 640 plain.csv
export_runs --out plain.csv 2>err
ok $? "--out a regular file exits 0"
cmp -s want.csv plain.csv
ok $? "the regular file is replaced by the CSV"
ok $(( $(stat -c %a plain.csv) != 640 )) "it keeps its permissions (640, got $(stat -c %a plain.csv))"

# The thresholds header of a main job, written by the same writer: a new
# one is 0644; a replaced one keeps its permissions too (it was made 0644
# whatever it had been).
job() {
  "$tune" --backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0 \
    --max-bytes 64K --trials 3 --max-trials 3 --no-report "$@" >out 2>err
}
job --db h1.db --header new.h
ok $(( $? != 0 || $(stat -c %a new.h) != 644 )) "a new header is 0644 (got $(stat -c %a new.h 2>&1))"
chmod 600 new.h
job --db h2.db --header new.h
ok $(( $? != 0 || $(stat -c %a new.h) != 600 )) "a replaced header keeps its permissions (600, got $(stat -c %a new.h))"

mkdir data
echo old >data/real.csv
ln -s data/real.csv link.csv
export_runs --out link.csv 2>err
ok $? "--out a symbolic link exits 0"
ok $(( $(test -L link.csv; echo $?) )) "the link is still a link"
cmp -s want.csv data/real.csv
ok $? "its target holds the CSV"
ln -s data/new.csv dangling.csv
export_runs --out dangling.csv 2>err
ok $? "--out a link to a file not there yet exits 0"
ok $(( $(test -L dangling.csv; echo $?) )) "that link is still a link"
cmp -s want.csv data/new.csv
ok $? "the file it names is created with the CSV"
ok $(( $(ls data | grep -c tmp) )) "no temporary file left beside the targets"

mkfifo pipe
timeout 20 cat pipe >fifo.csv &
reader=$!
timeout 20 "$tune" export --db base.db --format csv --table runs --out pipe 2>err
rc=$?
ok $rc "--out a FIFO exits 0 (rc $rc)"
# Before the fix the FIFO was renamed over and the reader waited for the timeout.
wait $reader
ok $(( $(test -p pipe; echo $?) )) "the FIFO is still a FIFO"
cmp -s want.csv fifo.csv
ok $? "the FIFO's reader got the CSV"

mkdir folder
export_runs --out folder >out 2>err
rc=$?
ok $(( rc != 2 )) "--out a folder exits 2 (rc $rc)"
grep -q "folder" err
ok $? "the message says it is a folder"
ok $(( $(ls -A folder | wc -l) != 0 )) "nothing written into the folder"

# A UNIX socket cannot be opened as a file: an error at once, not a wait
# meant for a FIFO's reader.
if python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('sock')" 2>/dev/null; then
  timeout 10 "$tune" export --db base.db --format csv --table runs --out sock >out 2>err
  rc=$?
  ok $(( rc == 0 || rc == 124 )) "--out a socket fails at once (rc $rc): $(head -n1 err)"
else
  tap_skip "--out a socket (python3 could not make one)"
fi

tap_end
