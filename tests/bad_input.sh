#!/usr/bin/env bash
# bad_input.sh: the bad-input table of issue 16 (items 3-5 and the low
# ones). Each case must fail with a message naming the problem and a
# non-zero exit (2 for a bad argument) before anything is measured: no
# TUNE_DEBUG=TRACE line of a measurement, and the database byte for byte as
# it was.
set -u
. "$(dirname "$0")/tap.sh"
srcdir=${TUNE_SRCDIR:?TUNE_SRCDIR is set by the harness}
cd "$tmp" || exit 1

job=(--backend sim --gpus 2 --worlds 2 --ops all_reduce --dtypes fp32 --modes eager --offsets 0
     --max-bytes 64K)
small=("${job[@]}" --trials 3 --max-trials 3 --no-report)
"$tune" "${small[@]}" --db base.db >out 2>err
rc=$?
ok $rc "a small sim job makes the database"
[ $rc -eq 0 ] || { sed 's/^/# /' err; echo "1..$tap_n"; exit 1; }
touch afile
mkdir adir

# refused RC PATTERN [VAR=VALUE...] ARGS...: exit status RC, a message
# matching PATTERN, no measurement traced, t.db unchanged.
refused() {
  local want=$1 pattern=$2 env=()
  shift 2
  while [[ ${1:-} == *=* && ${1:-} != -* ]]; do env+=("$1"); shift; done
  cp base.db t.db
  cp base.db t.copy
  env TUNE_DEBUG=TRACE "${env[@]}" timeout 120 "$tune" "$@" >out 2>err
  local rc=$?
  local what="${env[*]} tune $*"
  ok $(( rc != want )) "exit $want for: ${what:0:160}  (got $rc)"
  grep -q -- "$pattern" err
  ok $? "message '$pattern': $(grep -v ' TRACE \| INFO ' err | head -n1)"
  ! grep -q 'TRACE.*\(measur\|trial\)\|run [0-9]* (before) started' err
  ok $? "nothing measured"
  cmp -s t.db t.copy
  ok $? "database unchanged"
}

# Item 3: everything validated before measuring.
refused 2 "--worlds: 2 is given twice" "${small[@]}" --db t.db --worlds 2,2
refused 2 "--offsets: 0 is given twice" "${small[@]}" --db t.db --offsets 0,0
refused 2 "--offsets: 4 and 8 are both not 16-byte aligned" "${small[@]}" --db t.db --offsets 0,4,8
refused 2 "--offsets: 0 and 16 are both 16-byte aligned" "${small[@]}" --db t.db --offsets 0,16
# The gpu backend allocates 255 bytes of slack.
refused 2 "--offsets: '256' is not a number in 0..255" "${small[@]}" --db t.db --offsets 0,256
refused 2 "--worlds: '16' is not a number in 1..8" "${small[@]}" --db t.db --gpus 16 --worlds 16
# A reduction moves whole elements: the sim, as the gpu backend, leaves out
# fp32 reductions at an offset of 2 bytes, and measures the rest there.
"$tune" --backend sim --gpus 2 --worlds 2 --ops all_gather,all_reduce --dtypes bf16,fp32 --modes eager \
  --offsets 0,2 --max-bytes 4K --trials 3 --max-trials 3 --no-report --db off2.db >out 2>err
ok $? "a job at offsets 0 and 2 of bf16 and fp32 runs"
grep -q "left out: detcoll all_reduce fp32 world 2 offset 2 (the backend cannot run it)" err
ok $? "it says it leaves out fp32 all_reduce at offset 2: $(grep -m1 'left out' err)"
test "$(sqlite3 off2.db "select group_concat(op || '/' || dtype, ' ') from (select distinct op, dtype
  from configs where in_offset = 2 and impl = 'detcoll' order by 1, 2)")" = "all_gather/bf16 all_reduce/bf16"
ok $? "it measures all_gather and bf16 all_reduce at offset 2, not fp32 all_reduce"
refused 2 "--header $tmp/nodir/x.h: folder" "${small[@]}" --db t.db --header "$tmp/nodir/x.h"
refused 2 "--header adir is a folder" "${small[@]}" --db t.db --header adir
refused 2 "--report-dir afile is a file" "${job[@]}" --db t.db --report-dir afile
refused 2 "--report-dir afile is a file" merge "${job[@]}" --launcher threads --db t.db --report-dir afile base.db
: >empty.db
refused 2 "merge: empty.db is empty: it holds no node's job" merge "${job[@]}" --launcher threads --db t.db base.db empty.db
refused 2 "--json $tmp/nodir/x.json: folder" skew --backend sim --world 2 --db t.db --no-report \
  --json "$tmp/nodir/x.json"
refused 2 "--json adir is a folder" skew --backend sim --world 2 --db t.db --no-report --json adir
refused 2 "--report-dir afile is a file" skew --backend sim --world 2 --db t.db --report-dir afile
# A folder that exists but takes no files, even for root (who passes access()).
refused 2 "--header /proc/x.h: cannot create files in folder /proc" "${small[@]}" --db t.db --header /proc/x.h
refused 2 "--json /proc/x.json: cannot create files in folder /proc" skew --backend sim --world 2 --db t.db \
  --no-report --json /proc/x.json
refused 2 "--out /proc/cmp: cannot create files in folder /proc" compare --db t.db --baseline base.db \
  --out /proc/cmp
# verify with a table that has no row for this machine (sm 80, world 8):
# refused before the database opens; and without --header it verifies the
# table auto dispatch follows, DC_THRESHOLDS_FILE's where it is set.
printf '{80, 8, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_ALIGN_16, DC_MODE_EAGER, 0, 1, {{DC_BYTES_MAX, DC_PATH_ONE_SHOT}}},\n' >other.h
refused 2 "verify: the table has no row for this machine" verify --backend sim --gpus 2 --header other.h --db t.db
cp other.h o2.h
refused 2 "--db o2.h is the header verify checks (--header)" verify --backend sim --gpus 2 --header o2.h --db o2.h
cmp -s other.h o2.h
ok $? "the header stays as it was"
refused 2 "verify: the table has no row for this machine" DC_THRESHOLDS_FILE=other.h verify --backend sim --gpus 2 \
  --db t.db
"$tune" verify --backend sim --gpus 2 --header other.h --db "$tmp/vnew/v.db" >out 2>&1
ok $(( $(test -e "$tmp/vnew"; echo $?) == 0 )) "and a refused verify makes no database (nor its folder)"
# A row whose one path runs at none of its test sizes (push, over its 1M
# limit at the 2M..8M grid's middle): refused, not passed having measured
# nothing.
printf '{0, 2, DC_TOPO_NVLINK, DC_OP_ALL_REDUCE, DC_DTYPE_BF16, DC_ALIGN_16, DC_MODE_EAGER, 0, 1, {{DC_BYTES_MAX, DC_PATH_PUSH}}},\n' >push.h
refused 2 "verify: at none of the 1 test sizes of the table's 1 rows does a path the table weighs there run" \
  verify --backend sim --gpus 2 --header push.h --db t.db --ops all_reduce --dtypes bf16 --modes eager \
  --offsets 0 --no-reg --min-bytes 2M --max-bytes 8M
# Two outputs of one job at one path: the header would stand where the report goes.
refused 2 "the thresholds header $tmp/rep is where the report folder goes too" "${job[@]}" --db t.db \
  --header "$tmp/rep" --report-dir "$tmp/rep"
refused 2 "the thresholds header $tmp/rep2 is where the report folder goes too" "${job[@]}" --db t.db \
  --header "$tmp/rep2" --report-dir "$tmp/rep2/"
refused 2 "the thresholds header $tmp/report is where the report folder goes too" "${job[@]}" --db t.db \
  --header "$tmp/report"
# A header the report would write over (a review: the job said the header
# was written, and left the report in its place): named like a report file
# in the report folder, or one that a report file there links to.
mkdir -p rep3 rep4/report
refused 2 "the thresholds header $tmp/rep3/report.md is in the report folder" "${job[@]}" --db t.db \
  --header "$tmp/rep3/report.md" --report-dir "$tmp/rep3"
refused 2 "the thresholds header rep3/style.gp is in the report folder" "${job[@]}" --db t.db \
  --header rep3/style.gp --report-dir "$tmp/rep3"
# skew's --json alike: the report folder itself, or report.md in it.
refused 2 "--json $tmp/rep5 is where the report folder goes too" skew --backend sim --trials 3 --db t.db \
  --json "$tmp/rep5" --report-dir "$tmp/rep5"
refused 2 "--json rep3/report.md is in the report folder" skew --backend sim --trials 3 --db t.db \
  --json rep3/report.md --report-dir rep3
ln -s ../thresholds.h rep4/report/report.md
cp base.db rep4/t.db
refused 2 "report file rep4/report/report.md is the thresholds header rep4/thresholds.h" "${job[@]}" --db rep4/t.db

# Item 4: no silent failure.
for range in "1 1" "1 15" "3 5"; do
  set -- $range
  refused 2 "--min-bytes $1 --max-bytes $2: .* none lies in that range" "${small[@]}" --db t.db \
    --min-bytes "$1" --max-bytes "$2"
done
refused 2 "--header: the path is empty" "${small[@]}" --db t.db --header ''
refused 2 "--db: the path is empty" "${small[@]}" --db ''
refused 2 "--json: the path is empty" skew --backend sim --world 2 --db t.db --no-report --json ''
# A report that cannot be drawn: refused before the job measures, as skew's is
# (it measured everything, installed its header and skipped the rebuild).
# It names what it looked for: GNUPLOT's file, or the name on PATH.
refused 1 "gnuplot not found for the report ('/nonexistent/gnuplot' is not an executable).*or pass --no-report" \
  GNUPLOT=/nonexistent/gnuplot "${job[@]}" --trials 3 --max-trials 3 --db t.db
refused 1 "gnuplot not found for the report ('no-such-gnuplot' is not an executable on PATH).*or pass --no-report" \
  GNUPLOT=no-such-gnuplot "${job[@]}" --trials 3 --max-trials 3 --db t.db
refused 1 "skew: gnuplot not found for the report ('/nonexistent/gnuplot' is not an executable)" \
  GNUPLOT=/nonexistent/gnuplot skew --backend sim --world 2 --db t.db
# A test setting's factor outside its range (1e-6 would make times of 0 ns).
refused 2 "TUNE_SIM_PATH: 'all_reduce:push\*1e-6' is not OP:PATH\*FACTOR (0.01..100)" \
  TUNE_SIM_PATH='all_reduce:push*1e-6' "${small[@]}" --db t.db
# ... and one that is there but no working gnuplot.
refused 1 "gnuplot (/bin/false) does not work.*exit status 1.*or pass --no-report" \
  GNUPLOT=/bin/false "${job[@]}" --trials 3 --max-trials 3 --db t.db

# Item 5: one parser and one range for the command line and the environment.
for v in -5 0 2 4294967299 12abc ''; do
  refused 2 "TUNE_TRIALS='$v' is not a number in 3..100000" TUNE_TRIALS="$v" "${job[@]}" --no-report --db t.db
done
refused 2 "TUNE_WARMUP='-1' is not a number" TUNE_WARMUP=-1 "${small[@]}" --db t.db
refused 2 "TUNE_PROGRESS_SECONDS='abc' is not a number in 0..86400" TUNE_PROGRESS_SECONDS=abc "${small[@]}" --db t.db
refused 2 "TUNE_MAX_TRIALS='2' is not a number" TUNE_MAX_TRIALS=2 "${job[@]}" --no-report --db t.db
# The message says where each number came from.
refused 2 "--max-trials is smaller than --trials (TUNE_MAX_TRIALS=3, the default 20)" TUNE_MAX_TRIALS=3 \
  "${job[@]}" --no-report --db t.db
refused 2 "--trials: '4294967299' is not a number" "${small[@]}" --db t.db --trials 4294967299
# Decimal, whatever the leading zeros (base 0 read 010 as 8 and refused 08).
# 10 trials and at most 9: refused; 010 as octal (8) would have run.
refused 2 "--max-trials is smaller than --trials" TUNE_TRIALS=010 "${job[@]}" --max-trials 9 --no-report --db t.db
refused 2 "--max-trials is smaller than --trials" TUNE_TRIALS=09 "${job[@]}" --max-trials 8 --no-report --db t.db

# Low: lists, database paths.
refused 2 "--ops: the list is empty" "${small[@]}" --db t.db --ops ''
refused 2 "--dtypes: ',' has an empty item" "${small[@]}" --db t.db --dtypes ,
refused 2 "--ops: op 'all_reduce' is given twice" "${small[@]}" --db t.db --ops all_reduce,all_reduce
# An empty item is a typo (or a shell variable that was not set), not nothing.
refused 2 "--worlds: '2,' has an empty item" "${small[@]}" --db t.db --worlds 2,
refused 2 "--offsets: '0,,4' has an empty item" "${small[@]}" --db t.db --offsets 0,,4
refused 2 "--ops: ',all_reduce' has an empty item" "${small[@]}" --db t.db --ops ,all_reduce
# A list is read whole, whatever its length: a name past 255 characters.
long="all_reduce,$(printf 'x%.0s' $(seq 300))"
refused 2 "--ops: unknown op 'xxxxxxxxxx" "${small[@]}" --db t.db --ops "$long"
refused 2 "--db: $tmp is a folder, not a database" report --db "$tmp"
refused 2 "--db: $tmp is a folder, not a database" export --db "$tmp" --format csv

# A new database in a folder this user cannot write (as root: as nobody).
mkdir -m 500 ro
as=()
if [ "$(id -u)" -eq 0 ]; then
  chown 65534 ro . && chmod o+rx "$tmp" && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
"${as[@]}" "$tune" "${small[@]}" --db ro/new.db --header "$tmp/hdr.h" >out 2>err
rc=$?
ok $(( rc == 0 )) "a database in a chmod-500 folder fails (rc $rc)"
grep -q "^tune: error: --db ro/new.db: cannot create files in folder .*ro: Permission denied" err
ok $? "it says the folder takes no files: $(head -n1 err)"
ok $(( $(ls ro | wc -l) != 0 )) "nothing created there"
chown 0 . 2>/dev/null

# --db in folders not there yet: made as report --out makes its folder; one
# under a file is refused before anything is measured or made.
"$tune" "${small[@]}" --db new/sub/t.db >out 2>err
ok $? "--db new/sub/t.db exits 0: $(tail -n1 err)"
[ "$(sqlite3 new/sub/t.db "select count(*) from runs" 2>/dev/null)" -gt 0 ]
ok $? "its folders are created and hold the database"
"$tune" "${small[@]}" --db afile/sub/t.db >out 2>err
ok $(( $? != 2 )) "--db under a file exits 2"
grep -q "^tune: error: --db afile/sub.*Not a directory" err
ok $? "it names the path: $(head -n1 err)"
"$tune" "${small[@]}" --db afile/sub/t.db --header "$tmp/hdr.h" >out 2>err
ok $(( $? != 1 )) "--db under a file, header elsewhere: exits 1 when making the folder, before measuring"
grep -q "^tune: error: --db afile/sub/t.db: afile is not a folder" err
ok $? "it names the folder it could not make: $(head -n1 err)"

# The ./tune wrapper: a typo gets its own error, before any GPU check or build.
wrapper() {
  local pattern=$1
  shift
  TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" "$@" >out 2>err
  local rc=$?
  ok $(( rc != 2 )) "./tune $* exits 2 (got $rc)"
  grep -q -- "$pattern" err
  ok $? "./tune $*: '$pattern': $(head -n1 err)"
  ! grep -q "no CUDA device" err
  ok $? "./tune $* does not look for a GPU"
}
wrapper "unknown command 'bogus'" bogus
wrapper "unknown command 'chek'" chek
wrapper "--backend: 'simx' is not gpu or sim" --backend simx
wrapper "--backend: 'simx' is not gpu or sim" --gpus 8 --backend=simx
wrapper "unknown option '--bogus'" --gpus 8 --bogus
wrapper "--gpus needs a value" --gpus
for h in "check --help" "help check"; do
  # shellcheck disable=SC2086
  TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" $h >out 2>err
  rc=$?
  [ $rc -eq 0 ] && grep -q "^usage: ./tune check" out
  ok $? "./tune $h prints the usage of check (rc $rc): $(head -n1 out)"
done
ok $(( $(test -e "$tmp/nobuild"; echo $?) == 0 )) "the wrapper built nothing for them"
# --resume=RUN is the one flag with a value: the wrapper lets it through.
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  TUNE_BUILD_DIR=$tmp/nobuild timeout 20 "$srcdir/tune" --gpus 2 --resume=1 >out 2>err
  grep -q "no CUDA device" err && ! grep -q "unknown option" err
  ok $? "./tune --gpus 2 --resume=1 passes the wrapper (then: no GPU here): $(head -n1 err)"
  grep -q -- "--backend sim (the main job: ./tune --backend sim --gpus 2)" err
  ok $? "and points to the sim rehearsal with the --gpus given: $(sed -n 2p err)"
fi
# The wrapper's option lists hold every option of the built tune.
missing=
for o in $("$tune" run --help | grep -o '^  --[a-z-]*'); do
  grep -q -- "[( ]$o[ )]" "$srcdir/tune" || grep -q -- "[( ]$o\$" "$srcdir/tune" || missing="$missing $o"
done
[ -z "$missing" ]
ok $? "./tune knows every option of 'tune run --help'${missing:+ (missing:$missing)}"
# ... and every command of 'tune --help' (each passes to the built tune).
missing=
for c in $("$tune" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p'); do
  grep -q -- "[|( ]$c[|) ]" "$srcdir/tune" || missing="$missing $c"
done
[ -z "$missing" ]
ok $? "./tune knows every command of 'tune --help'${missing:+ (missing:$missing)}"

# A database refused on opening leaves no job lock beside it.
head -c 5000 /dev/urandom >junk.db
cp base.db ro.db && chmod 444 ro.db
mkdir -p dir.db
for db in junk.db ro.db dir.db; do
  "$tune" "${small[@]}" --db $db >out 2>err
  rc=$?
  ok $(( rc == 0 )) "a job on $db is refused (rc $rc): $(head -n1 err)"
  ok $(( $(test -e $db.lock; echo $?) == 0 )) "and leaves no $db.lock"
done

# A gate's answer is its output: a write error on it is an error (exit 2),
# never a verdict (1) or a pass (0).
if [ -w /dev/full ]; then
  "$tune" compare --db base.db --baseline base.db --no-plot --json >/dev/full 2>err
  rc=$?
  ok $(( rc != 2 )) "compare into a full disk exits 2 (got $rc)"
  grep -q "standard output: No space left on device" err
  ok $? "and says so: $(head -n1 err)"
  "$tune" table >rows.h 2>err
  "$tune" compare-headers rows.h rows.h >/dev/full 2>err
  rc=$?
  ok $(( rc != 2 )) "compare-headers into a full disk exits 2 (got $rc)"
  # Every writer says so when a write fails, not only by its exit status.
  cp base.db t.db
  "$tune" replay "${small[@]}" --db t.db >/dev/full 2>err
  rc=$?
  grep -q "cannot write standard output: No space left on device" err
  ok $(( $? != 0 || rc == 0 )) "replay into a full disk: exit $rc, $(head -n1 err)"
  "$tune" skew --backend sim --world 2 --trials 3 --no-report --db sk.db --json /dev/full >/dev/null 2>err
  rc=$?
  grep -q "cannot write /dev/full: No space left on device" err
  ok $(( $? != 0 || rc == 0 )) "skew --json into a full disk: exit $rc, $(grep -v WARN err | head -n1)"
  "$tune" export --db base.db --format csv --table runs --out /dev/full >/dev/null 2>err
  rc=$?
  grep -q "writing the output failed: No space left on device" err
  ok $(( $? != 0 || rc == 0 )) "export --out into a full disk: exit $rc, $(head -n1 err)"
fi
# export checks --out's folder before it reads anything, as replay does.
"$tune" export --db base.db --format csv --table runs --out no/such/x.csv >out 2>err
rc=$?
ok $(( rc != 2 )) "export --out into a missing folder exits 2 (got $rc): $(head -n1 err)"

# A header number with a leading 0 is refused: C reads 016384 as octal.
"$tune" table >rows.h 2>err
sed '0,/{{16384,/s//{{016384,/' rows.h >octal.h
"$tune" table --file octal.h >out 2>err
rc=$?
ok $(( rc != 2 )) "table --file refuses a header number with a leading 0 (got $rc)"
grep -q "expected a number without a leading 0 (C reads one as octal), found '016384" err
ok $? "and says why: $(head -n1 err)"
cmp -s rows.h octal.h
ok $(( $? == 0 )) "(the test header does differ from the built-in one)"


# A database changed outside tune: replay, report and compare name the
# damaged row before they write anything, and only read.
if command -v sqlite3 >/dev/null; then
  # damaged PATTERN SQL [COMMAND...]: each command (replay, report and
  # compare unless named) refuses the copy SQL damaged, saying PATTERN.
  damaged() {
    local pattern=$1 sql=$2 rc what refused cmds=(replay report compare)
    shift 2
    [ $# -eq 0 ] || cmds=("$@")
    cp base.db d.db
    sqlite3 d.db "$sql" || { ok 1 "sqlite3 could not damage the copy: $sql"; return; }
    cp d.db d.copy
    for what in "${cmds[@]}"; do
      rm -rf dmg.h dmgrep
      case $what in
        replay) "$tune" replay "${small[@]}" --db d.db --header dmg.h >out 2>err ;;
        report) "$tune" report --db d.db --out dmgrep >out 2>err ;;
        compare) "$tune" compare --db d.db --baseline base.db --out dmgrep >out 2>err ;;
      esac
      rc=$?
      refused=$(( rc != 0 ))
      [ "$what" = compare ] && refused=$(( rc == 2 )) # compare's 1 is its verdict
      ok $(( !refused )) "$what on '$sql': exit $rc"
      grep -q -- "$pattern" err
      ok $? "$what names it: $(head -n1 err)"
      [ ! -e dmg.h ] && [ ! -e dmgrep ] && [ ! -s out ]
      ok $? "$what wrote nothing"
      cmp -s d.db d.copy
      ok $? "$what left the database as it was"
    done
  }
  sweep="(select id from runs where kind = 'sweep')"
  damaged "run [0-9]: sm 'abc' is not an integer" "update runs set sm = 'abc'"
  damaged "run 1: its topo and kind disagree" "update runs set topo = 'fleet' where id = 1"
  damaged "configs row [0-9]*: world 0 is not an integer from 1" \
    "update configs set world = 0 where id = (select min(id) from configs where run_id = $sweep)"
  damaged "dtype 'int9' is not a value tune writes" "update configs set dtype = 'int9' where run_id = $sweep"
  damaged "crossovers row 1: path_below 'zz' is not a value tune writes" \
    "update crossovers set path_below = 'zz' where id = 1"
  damaged "configs row [0-9]*: median_ns 'abc' is not a number" \
    "update configs set median_ns = 'abc' where id = (select max(id) from configs where run_id = $sweep)"
  damaged "header_rows of header 1: row 0 segment 0 is not one tune writes" \
    "update header_rows set world = 4294967298 where header_id = 1"
  damaged "header 1 is not a table tune writes (row 0: sm, world or skew_ns out of range (world: 1..8))" \
    "update header_rows set world = 0 where header_id = 1"
  damaged "header 1 is not a table tune writes (row [0-9]*: " \
    "update header_rows set max_bytes = 1 where header_id = 1 and seg_index = 1"
  # compare draws its intervals from the samples: a text time is refused too.
  damaged "trial 0 rank 0: elapsed_ns 'abc'" "pragma ignore_check_constraints = 1; update samples set"\
" elapsed_ns = 'abc' where trial = 0 and rank = 0 and config_id = (select max(id) from configs where run_id = $sweep)" \
    compare
  cp base.db d.db
  sqlite3 d.db "delete from samples where config_id in (select id from configs where run_id = $sweep);
    delete from configs where run_id = $sweep"
  "$tune" replay "${small[@]}" --db d.db --header dmg.h >out 2>err
  rc=$?
  grep -q "the sweep of run [0-9]* holds none of the job's groups" err
  ok $(( $? != 0 || rc == 0 || $(test -e dmg.h; echo $?) == 0 )) \
    "replay of a sweep emptied outside tune: exit $rc, nothing written: $(head -n1 err)"
fi

tap_end
