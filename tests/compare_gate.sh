#!/usr/bin/env bash
# compare_gate.sh: tune compare as a gate, on the sim backend, where its
# outputs meet the databases it reads: every file it writes or has gnuplot
# write (the data, PNG and SVG of each figure, compare.gp, the gnuplot log)
# is refused where it is a link to either database, before anything is
# printed, and the database is left byte for byte as it was. --json keeps
# a path's UTF-8 and escapes its quotes, backslashes and newlines. A
# configuration with wrong results in the new database fails the gate
# (exit 1, listed) as it fails verify; in the baseline it is left out,
# said, and in neither case counted as held by the other side only. A
# gnuplot named by a relative path draws the plots.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
cd "$tmp" || exit 1

job=(--backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes bf16 --modes eager --offsets 0
     --max-bytes 64K --trials 6 --max-trials 6 --no-report)
"$tune" "${job[@]}" --seed 1 --db base/t.db >base.out 2>&1 &&
  "$tune" "${job[@]}" --seed 2 --db new/t.db >new.out 2>&1
rc=$?
ok $rc "two small sim jobs make the databases"
[ $rc -eq 0 ] || { sed 's/^/# /' base.out new.out | tail; tap_end; exit 1; }
cp base/t.db base.orig

# A link in the output folder, named as a file compare writes, to the
# baseline database: refused (exit 2, naming it), nothing on stdout, the
# baseline unchanged.
for f in compare_all_reduce_w2.png compare_all_reduce_w2.svg compare_all_reduce_w2.dat \
  compare.gp compare-gnuplot.log; do
  rm -rf out && mkdir out && ln -s ../base/t.db "out/$f"
  cp base.orig base/t.db
  sum=$(cksum <base/t.db)
  "$tune" compare --db new/t.db --baseline base/t.db --out out >cmp.out 2>cmp.err
  rc=$?
  ok $(( rc != 2 )) "out/$f a link to the baseline: exit 2 (got $rc)"
  grep -q "out/$f is the database" cmp.err
  ok $? "... saying so: $(head -n1 cmp.err)"
  test "$sum" = "$(cksum <base/t.db)" && test ! -s cmp.out
  ok $? "... the baseline byte for byte as it was, nothing printed"
done

# Wrong results: the new database's after pass got 7 elements wrong at 64K.
cp new/t.db wrong.db
sqlite3 wrong.db "UPDATE configs SET wrong_elems = 7 WHERE bytes = 65536 AND path = 'auto'
  AND run_id = (SELECT id FROM runs WHERE kind = 'after')"
ok $? "the new database's auto dispatch at 64K gets wrong results (sqlite3)"
"$tune" compare --db new/t.db --baseline base/t.db --no-plot --tolerance 50% >cmp.out 2>cmp.err
ok $? "compare of two seeds of one model, all results right: exit 0"
"$tune" compare --db wrong.db --baseline base/t.db --no-plot --tolerance 50% >cmp.out 2>cmp.err
rc=$?
ok $(( rc != 1 )) "compare of a new database with wrong results: exit 1 (got $rc)"
test "$(grep -c '^  after .* auto .* 64K .* 7 wrong$' cmp.out)" = 2 &&
  grep -q '^wrong results in new: 2 configurations$' cmp.out
ok $? "... listing both configurations: $(grep -m1 '^wrong results in new' cmp.out)"
"$tune" compare --db wrong.db --baseline base/t.db --no-plot --tolerance 50% --json >cmp.json 2>cmp.err
rc=$?
if command -v python3 >/dev/null; then
  python3 -c '
import json, sys
j = json.load(open("cmp.json"))
w = j["wrong"]
sys.exit(0 if j["wrong_results"] == 2 and len(w) == 2 and all(c["bytes"] == 65536 and
  c["wrong_elems"] == 7 and c["kind"] == "after" for c in w) else 1)'
  ok $(( $? || rc != 1 )) "... and in --json (exit $rc)"
fi
"$tune" compare --db new/t.db --baseline wrong.db --no-plot --tolerance 50% >cmp.out 2>cmp.err
ok $? "wrong results in the baseline only: exit 0, those configurations left out"
grep -q '^left out: 2 configurations with wrong results in the baseline$' cmp.out
ok $? "... and said so: $(grep -m1 '^left out' cmp.out)"
# Configurations both databases hold are paired, right or wrong: a wrong
# one on either side is neither side's alone (wrong.db is new/t.db but for
# the 2 wrong configurations). Each case: new, baseline, then the same
# with new/t.db for wrong.db.
for dbs in "wrong.db base/t.db new/t.db base/t.db" "base/t.db wrong.db base/t.db new/t.db"; do
  set -- $dbs
  "$tune" compare --db "$3" --baseline "$4" --no-plot --tolerance 50% >right.out 2>&1
  "$tune" compare --db "$1" --baseline "$2" --no-plot --tolerance 50% >cmp.out 2>&1
  a=$(grep -o 'only in new: [0-9]*, only in baseline: [0-9]*' right.out)
  b=$(grep -o 'only in new: [0-9]*, only in baseline: [0-9]*' cmp.out)
  test -n "$a" && test "$a" = "$b"
  ok $? "compare --db $1 --baseline $2: held by one side only as with right results ($b)"
done

# gnuplot named relative to here (GNUPLOT=bin/gnuplot): compare runs it
# from inside the output folder, and still draws.
if command -v gnuplot >/dev/null; then
  mkdir -p bin && ln -sf "$(command -v gnuplot)" bin/gnuplot && rm -rf rel
  GNUPLOT=bin/gnuplot "$tune" compare --db new/t.db --baseline base/t.db --out rel >cmp.out 2>cmp.err
  rc=$?
  test $rc -eq 0 && test -s rel/compare_all_reduce_w2.png
  ok $? "GNUPLOT=bin/gnuplot: the plots are drawn (exit $rc) $(head -n1 cmp.err)"
  # A gnuplot that exits 0 and draws nothing fails, though rel/ holds the
  # figure of the same name from the compare above.
  printf '#!/bin/sh\nexit 0\n' >noplot && chmod +x noplot
  GNUPLOT=$PWD/noplot "$tune" compare --db new/t.db --baseline base/t.db --out rel >cmp.out 2>cmp.err
  rc=$?
  ok $(( rc != 2 )) "a gnuplot that draws nothing fails (exit $rc): $(head -n1 cmp.err)"
fi

# --json: valid JSON whose paths are the paths given, however spelled.
if command -v python3 >/dev/null; then
  d=$'we"i\\rd\nfolder \xc3\xa9t\xc3\xa9'
  mkdir -p "$d" && cp base.orig "$d/t.db"
  "$tune" compare --db "$d/t.db" --baseline base/t.db --no-plot --json >cmp.json 2>cmp.err
  rc=$?
  ok $rc "compare --json of a database in a folder with a quote, backslash, newline and UTF-8 (exit $rc)"
  D="$d/t.db" python3 -c '
import json, os, sys
j = json.load(open("cmp.json", encoding="utf-8"))
sys.exit(0 if j["new"] == os.environ["D"] and j["baseline"] == "base/t.db" and j["cells"] else 1)'
  ok $? "... parses, and names the databases as given: $(head -c 60 cmp.json)"
fi

tap_end
