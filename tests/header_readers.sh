#!/usr/bin/env bash
# header_readers.sh: one reader of thresholds headers, reading what the
# compiler reads. tune table --file, compare-headers, verify (--header and
# DC_THRESHOLDS_FILE), replay --incumbent and the main job all load a
# header through libdetcoll's dc_table_read_file, so they see the same
# rows: a row written '{ 90,' counts everywhere, and a header the compiler
# would read otherwise (rows under #if 0, a leading-zero number, a row after
# the array, a NUL byte, a max_bytes above INT64_MAX, world 16, a guard
# named as a name the rows use, a comment mark beside a character
# constant) is refused
# by every one of them with exit 2, naming the file and the line, before
# any database or file is written. A database path holding the
# declaration's text makes a header that loads. A header through a pipe
# reads as the file does.
set -u
. "$(dirname "$0")/tap.sh"
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
cd "$tmp" || exit 1
job=(--backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes bf16 --modes eager,graph --offsets 0
  --no-reg --max-bytes 4M --trials 4)
vjob=(--backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes bf16 --offsets 0 --no-reg --max-bytes 4M)

# The database path goes into the header's banner comment: a comment
# holding 'dc_thresholds[] = {' is not the declaration.
d='dc_thresholds[] = {x'
"$tune" "${job[@]}" --no-report --db "$d/t.db" >/dev/null 2>err
ok $? "a job whose database path holds '$d' runs: $(tail -n1 err)"
H=$d/thresholds.h
grep -qF "$d/t.db -- do not edit" "$H"
ok $? "its header's banner holds the path: $(head -n1 "$H")"
"$tune" table --file "$H" >rows.txt 2>err
ok $? "and tune table --file loads the header: $(head -n1 err)"
test "$(grep -c '^  {90, 2,' rows.txt)" -eq 2
ok $? "with the job's two rows"

# The headers below are the same job's, from a database of a plain path.
"$tune" "${job[@]}" --no-report --db j/t.db >/dev/null 2>err
ok $? "the same job into j/t.db: $(tail -n1 err)"
test "$("$tune" table --file j/thresholds.h --hash)" = "$("$tune" table --file "$H" --hash)"
ok $? "makes the same table"
cp j/thresholds.h h.h
cp j/t.db base.db

# A row written '{ 90,' is the same row to every reader.
sed 's/^  {90, 2, \(.*DC_MODE_GRAPH\)/  { 90, 2, \1/' h.h >sp.h
grep -q '^  { 90, 2, .*DC_MODE_GRAPH' sp.h
ok $? "sp.h writes the graph row '{ 90,'"
test "$("$tune" table --file sp.h --hash)" = "$("$tune" table --file h.h --hash)"
ok $? "tune table reads sp.h as h.h (same hash)"
"$tune" compare-headers sp.h h.h --all-rows --require 100 >cmp.out 2>&1
ok $? "compare-headers: sp.h and h.h agree at every point"
grep -q "only in A: 0, only in B: 0" cmp.out
ok $? "... on every row: $(grep '^rows compared' cmp.out)"
for how in --header DC_THRESHOLDS_FILE; do
  for f in h sp; do
    if [ $how = --header ]; then
      "$tune" verify "${vjob[@]}" --header $f.h --db v-$f.db >v-$f.out 2>&1
    else
      DC_THRESHOLDS_FILE=$f.h "$tune" verify "${vjob[@]}" --db v-$f.db >v-$f.out 2>&1
    fi
    echo $? >v-$f.rc
    sqlite3 -batch -noheader v-$f.db "select count(*) from regret" >v-$f.n
    rm -f v-$f.db*
  done
  cmp -s v-h.rc v-sp.rc && cmp -s v-h.n v-sp.n && test "$(cat v-h.n)" -gt 0
  ok $? "verify ($how) judges sp.h as h.h: exit $(cat v-sp.rc), $(cat v-sp.n) sizes judged, as h.h's $(cat v-h.n)"
done

# Headers the compiler reads otherwise, each refused by every reader.
sed 's/^\(  {90, 2, .*DC_MODE_GRAPH.*\)$/#if 0\n\1\n#endif/' h.h >if0.h
sed 's/{{\([0-9]*\), DC_PATH_PUSH}/{{010000, DC_PATH_PUSH}/' h.h >oct.h
{ cat h.h; grep '^  {90, 2, .*EAGER' h.h | sed 's/{90, 2,/{90, 4,/'; } >tail.h
{ grep '^  {90' h.h | head -n1; printf '\0'; grep '^  {90' h.h | tail -n1; } >nul.h
sed 's/^\(  {90, 2, .*\){[0-9]*, \(DC_PATH_[A-Z_]*}, {DC_BYTES_MAX\)/\1{18446744073709551614, \2/' h.h >big.h
sed 's/^  {90, 2, \(.*DC_MODE_GRAPH\)/  {90, 16, \1/' h.h >w16.h
sed 's|^\(  {90, 2, .*DC_MODE_EAGER.*\)$|// a comment \\\n\1|' h.h >splice.h
# An include guard named as a name the rows use (the compiler reads the
# guard's value there), and character constants around comment marks: '"'
# then /* opens a comment to the compiler (hiding the first table), '/*'
# opens none.
sed 's/DC_THRESHOLDS_H$/DC_MODE_GRAPH/' h.h >guard.h
row=$(grep -m1 '^  {90, 2, .*DC_MODE_EAGER' h.h)
cat >quote.h <<HDR
#ifndef DC_THRESHOLDS_H
#define DC_THRESHOLDS_H '"' /*
#ifndef DC_THRESHOLDS_H2
#define DC_THRESHOLDS_H2 // */
#ifndef DC_THRESHOLDS_H3
#define DC_THRESHOLDS_H3 '/*'
#include "dc_table.h"
static const dc_threshold_row dc_thresholds[] = {
$row
};
#if 0 // */
#include "dc_table.h"
static const dc_threshold_row dc_thresholds[] = {
$(echo "$row" | sed 's/DC_PATH_[A-Z_]*}}}/DC_PATH_PIPELINE}}}/')
};
#endif
#endif
#endif
HDR
expect() { # the message for each bad header
  case $1 in
  if0.h) echo "if0.h: line [0-9]*: '#if 0': a preprocessor line among the rows" ;;
  oct.h) echo "oct.h: line [0-9]*: expected a number without a leading 0" ;;
  tail.h) echo "tail.h: line [0-9]*: expected nothing but comments after the table's '};'" ;;
  nul.h) echo "nul.h: a NUL byte at offset [0-9]* (line 2)" ;;
  big.h) echo "big.h: line [0-9]*: expected max_bytes (up to INT64_MAX, or DC_BYTES_MAX), found '18446744073709551614" ;;
  w16.h) echo "w16.h: line [0-9]*: expected a world size (1..8), found '16" ;;
  splice.h) echo "splice.h: line [0-9]*: a backslash at the end of the line" ;;
  guard.h) echo "guard.h: line [0-9]*: 'DC_MODE_GRAPH' is the include guard's name" ;;
  quote.h) echo "quote.h: line 11: '#if 0 // \*/': only the include guard's #endif may follow the table" ;;
  esac
}
# refused HEADER WHAT COMMAND...: exit 2, the message, no new file in the
# folder and t.db's rows as they were. (replay opens the database, read
# only, before it reads --incumbent: SQLite's -wal and -shm may appear.)
sqlite3 base.db .dump >base.dump
refused() {
  local f=$1 what=$2 files
  shift 2
  rm -f t.db*
  cp base.db t.db
  : >out
  : >err
  ls >before.ls
  "$@" >out 2>err
  local rc=$?
  ok $(( rc != 2 )) "$f: $what exits 2 (got $rc)"
  grep -q "$(expect "$f")" err
  ok $? "$f: $what says why: $(head -n1 err)"
  files=$(ls | grep -v "^t\.db-\(wal\|shm\)$" | diff before.ls - | sed -n 's/^> //p' | tr '\n' ' ')
  sqlite3 t.db .dump | cmp -s - base.dump && [ -z "$files" ]
  ok $? "$f: $what writes nothing${files:+ (made $files)}"
}
for f in if0.h oct.h tail.h nul.h big.h w16.h splice.h guard.h quote.h; do
  cmp -s h.h $f
  ok $(( $? == 0 )) "$f differs from h.h"
  refused $f "table --file" "$tune" table --file $f
  refused $f "compare-headers" "$tune" compare-headers $f h.h
  refused $f "verify --header" "$tune" verify "${vjob[@]}" --header $f --db new.db
  refused $f "verify with DC_THRESHOLDS_FILE" env DC_THRESHOLDS_FILE=$f "$tune" verify "${vjob[@]}" --db new.db
  refused $f "a job with DC_THRESHOLDS_FILE" env DC_THRESHOLDS_FILE=$f "$tune" "${job[@]}" --no-report --db t.db \
    --header out.h
  refused $f "replay --incumbent" "$tune" replay "${job[@]}" --db t.db --incumbent $f --header out.h
done
# A header read through a pipe (compare-headers A.h <(...)) reads as the
# file does; one past 64 MiB is refused, named.
[ "$("$tune" table --file <(cat h.h) --hash 2>err)" = "$("$tune" table --file h.h --hash)" ]
ok $? "a header through a pipe reads as the file: $(head -n1 err)"
"$tune" compare-headers h.h <(cat h.h) >out 2>err
ok $? "compare-headers of a file and a pipe: $(head -n1 out)$(head -n1 err)"
truncate -s 65M huge.h
"$tune" table --file huge.h --hash >out 2>err
rc=$?
grep -q "cannot read huge.h: larger than 64 MiB" err
ok $(( $? != 0 || rc != 2 )) "a header past 64 MiB: refused, exit 2 (rc $rc): $(head -n1 err)"
tap_end
