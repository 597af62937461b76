#!/usr/bin/env bash
# export_files.sh: what export writes is read back by Python's json and csv
# modules (issue 13). Each table's CSV parses with its header's column
# count on every row and as many rows as the table holds; CSV without
# --table is refused (one CSV holds one table); JSON loads even where a host
# name or command line holds bytes that are not UTF-8, and keeps text that
# is. Skips (77) without python3 or sqlite3.
set -u
. "$(dirname "$0")/tap.sh"
command -v python3 >/dev/null && command -v sqlite3 >/dev/null || {
  echo "# python3 or sqlite3 missing"
  exit 77
}
cd "$tmp" || exit 1

"$tune" --backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0 \
  --max-bytes 64K --trials 3 --max-trials 3 --db base.db --no-report >out 2>err
rc=$?
ok $rc "a small sim job makes the database"
[ $rc -eq 0 ] || { sed 's/^/# /' err; echo "1..$tap_n"; exit 1; }

"$tune" export --db base.db --format csv --out all.csv >out 2>err
rc=$?
ok $(( rc != 2 )) "csv of every table is refused with exit 2 (got $rc)"
grep -q -- "--format csv writes one table: give --table NAME" err
ok $? "it says to name a table: $(head -n1 err)"
ok $(( $(test -e all.csv; echo $?) == 0 )) "and writes no file"

tables=$(sqlite3 base.db "select name from sqlite_master where type = 'table'
  and name not like 'sqlite\_%' escape '\' order by rowid")
ok $(( $(echo "$tables" | wc -l) != 10 )) "the database has 10 tables ($(echo $tables))"
for t in $tables; do
  "$tune" export --db base.db --format csv --table "$t" --out "$t.csv" 2>err
  ok $? "export --table $t --format csv"
  rows=$(sqlite3 base.db "select count(*) from \"$t\"")
  cols=$(sqlite3 base.db "select count(*) from pragma_table_info('$t')")
  [ "$t" = configs ] && cols=$((cols + 2)) # algbw_gbs and busbw_gbs
  python3 - "$t.csv" "$rows" "$cols" <<'EOF'
import csv, sys
with open(sys.argv[1], newline="") as f:
    table = list(csv.reader(f))
rows, cols = int(sys.argv[2]), int(sys.argv[3])
assert len(table) == rows + 1, f"{len(table) - 1} rows, want {rows}"
assert all(len(r) == cols for r in table), f"a row without {cols} columns"
EOF
  ok $? "$t.csv parses as CSV: $rows rows of $cols columns and a header"
done

# Bandwidths as nccl-tests defines them: algbw = S / t with S the whole
# buffer (all_gather: world x each rank's input), busbw = algbw x 2(W-1)/W
# for all_reduce, x (W-1)/W otherwise.
python3 - configs.csv <<'EOF'
import csv, math, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.DictReader(f))
assert rows, "no configs"
for r in rows:
    w, b, t = int(r["world"]), int(r["bytes"]), float(r["median_ns"])
    alg = b * (w if r["op"] == "all_gather" else 1) / t
    bus = alg * (2 * (w - 1) / w if r["op"] == "all_reduce" else (w - 1) / w)
    assert math.isclose(float(r["algbw_gbs"]), alg, rel_tol=1e-9), (r, alg)
    assert math.isclose(float(r["busbw_gbs"]), bus, rel_tol=1e-9), (r, bus)
EOF
ok $? "configs.csv carries algbw_gbs and busbw_gbs, equal to nccl-tests' formulas on every row"

# A host name with 0x80 and 0xff alone, a command line with an overlong
# form, a UTF-16 surrogate and a cut-off sequence, and valid UTF-8 beside them.
sqlite3 base.db "update runs set host = cast(x'6e6f646580ff31' as text),
  command_line = cast(x'74756e6520c0af20eda08020c3a920e282ac20e282' as text)" || exit 1
"$tune" export --db base.db --format json --out all.json 2>err
ok $? "export --format json of every table"
python3 - all.json <<'EOF'
import json, sys
with open(sys.argv[1], "rb") as f:
    doc = json.loads(f.read().decode("utf-8"))
runs = doc["runs"]
assert runs, "no runs"
for r in runs:
    assert r["host"] == "node\ufffd\ufffd1", repr(r["host"])
    assert r["command_line"] == "tune \ufffd\ufffd \ufffd\ufffd\ufffd \u00e9 \u20ac \ufffd\ufffd", repr(
        r["command_line"])
assert len(doc) == 10, sorted(doc)
EOF
ok $? "the JSON loads with Python's json; each bad byte is U+FFFD, valid UTF-8 is kept"
"$tune" export --db base.db --format json --table runs 2>err | python3 -c 'import json, sys; json.load(sys.stdin)'
ok $? "export --table runs --format json to standard output loads too"

tap_end
