#!/usr/bin/env bash
# cli.sh: the tune command line: --version, --help on every subcommand, and
# bad arguments (exit 2, a message naming the argument, nothing written).
set -u
. "$(dirname "$0")/tap.sh"
cd "$tmp" || exit 1

"$tune" --version >out 2>&1
ok $(( $? != 0 )) "--version exits 0"
grep -q '^tune (detcoll) [0-9]' out
ok $? "--version prints the version"
grep -q '^License BSD-3-Clause: <https://opensource.org/licenses/BSD-3-Clause>\.$' out
ok $? "--version has the licence line (GNU: name and version, copyright, licence)"
grep -q '^Copyright (C) [0-9]* the detcoll authors\.$' out
ok $? "--version has the copyright line"

# 'tune help COMMAND' is COMMAND's help, not the top level; --help lists
# the main job's options (README says so).
for sub in run report export skew; do
  "$tune" help $sub >help.out 2>&1
  ok $? "'tune help $sub' exits 0"
  "$tune" $sub --help >want.out 2>&1
  cmp -s help.out want.out
  ok $? "'tune help $sub' prints 'tune $sub --help'"
  rm -f help.out want.out
done
"$tune" help export | grep -q -- '^  --table NAME'
ok $? "'tune help export' lists export's options"
"$tune" help bogus >out 2>err
ok $(( $? != 2 )) "'tune help bogus' exits 2"
grep -q "unknown command 'bogus'" err
ok $? "and names it"
"$tune" --help >out 2>&1
missing=
for o in $("$tune" run --help | grep -o '^  --[a-z-]*'); do
  grep -q -- "^  $o" out || missing="$missing $o"
done
ok $(( ${#missing} != 0 )) "'tune --help' lists every option of the main job${missing:+ (missing:$missing)}"
grep -q -- "tune help COMMAND" out
ok $? "'tune --help' says where the other commands' options are"

for sub in "" run report export skew verify compare compare-headers merge; do
  # shellcheck disable=SC2086
  "$tune" $sub --help >out 2>&1
  rc=$?
  ok $(( rc != 0 )) "'tune $sub --help' exits 0"
  grep -q '^usage: tune' out
  ok $? "'tune $sub --help' prints usage"
done

# Each bad invocation: exit status 2, and the message names the argument.
bad() {
  local want=$1
  shift
  "$tune" "$@" >out 2>err
  local rc=$?
  ok $(( rc != 2 )) "exit 2 for: tune $*  (got $rc)"
  grep -q -- "$want" err
  ok $? "message names '$want' for: tune $*"
}
bad "--gpus" --gpus abc --backend sim
bad "--gpus" --gpus 0 --backend sim
bad "--gpus" --backend sim
bad "--backend" --backend tpu --gpus 2
bad "unknown op 'all_to_all'" --backend sim --gpus 2 --ops all_reduce,all_to_all
bad "unknown dtype 'int8'" --backend sim --gpus 2 --dtypes int8
bad "unknown mode 'lazy'" --backend sim --gpus 2 --modes lazy
bad "--worlds" --backend sim --gpus 2 --worlds 2,x
bad "--worlds: 4 is more than --gpus 2" --backend sim --gpus 2 --worlds 4
bad "--min-bytes" --backend sim --gpus 2 --min-bytes 12Q
bad "--max-bytes" --backend sim --gpus 2 --max-bytes -1
bad "--min-bytes is larger" --backend sim --gpus 2 --min-bytes 1M --max-bytes 4K
bad "--trials" --backend sim --gpus 2 --trials 1
bad "--offsets" --backend sim --gpus 2 --offsets 0,1,2,3,4
bad "--grid-factor" --backend sim --gpus 2 --grid-factor 1
bad "unknown option '--bogus'" --backend sim --gpus 2 --bogus
# Options by their whole names, as the ./tune script takes them (getopt_long
# would take any unambiguous prefix).
bad "unknown option '--gp' (did you mean --gpus?)" --backend sim --gp 2
bad "unknown option '--max-trial' (did you mean --max-trials?)" --backend sim --gpus 2 --max-trial=9
bad "unknown option '--skew-delays' (did you mean --skew-delays-us?)" skew --backend sim --skew-delays 5
# Numbers written in decimal: no hex, no blanks.
bad "--grid-factor: '0x2'" --backend sim --gpus 2 --grid-factor 0x2
bad "--tolerance: ' 5%'" compare-headers a.h b.h --tolerance ' 5%'
bad "--require: '0x10' is not a percentage" compare-headers a.h b.h --require 0x10
bad "--force is for --db-b only" compare-headers a.h b.h --force
bad "--skew-delays-us: '0x10'" skew --backend sim --skew-delays-us 0x10
bad "--seed: '0x10' is not a number" --backend sim --gpus 2 --seed 0x10
bad "--no-report and --report-dir contradict each other" --backend sim --gpus 2 --no-report --report-dir r
bad "--no-report and --report-dir contradict each other" skew --backend sim --no-report --out r
bad "--warmup: '0x3' is not a number" --backend sim --gpus 2 --warmup 0x3
# TUNE_DEBUG_SUBSYS picks INFO and TRACE lines; a warning of another
# subsystem (SWEEP's, on the sim) still shows, as it does with a bad name.
for sub in DB bogus; do
  TUNE_DEBUG_SUBSYS=$sub "$tune" skew --backend sim --world 2 --trials 3 --no-report --db "$tmp/subsys/s.db" >out 2>err
  grep -q "WARN .*skipping nccl" err
  ok $? "TUNE_DEBUG_SUBSYS=$sub leaves the warnings: $(grep -m1 WARN err | cut -c1-120)"
  rm -rf "$tmp/subsys" # (the check at the end wants no file from a bad invocation)
done
TUNE_SEED=0x10 "$tune" --backend sim --gpus 2 >out 2>err
ok $(( $? != 2 )) "exit 2 for TUNE_SEED=0x10"
grep -q "TUNE_SEED='0x10' is not a number" err
ok $? "message names TUNE_SEED='0x10'"
bad "--op: 'all_reduce,' has an empty item" skew --backend sim --op all_reduce,
bad "--skew-delays-us: '0,,5' has an empty item" skew --backend sim --skew-delays-us 0,,5
bad "--db needs a value" --backend sim --gpus 2 --db
bad "unexpected argument 'extra'" --backend sim --gpus 2 extra
bad "--launcher: 'ssh'" --backend sim --gpus 2 --launcher ssh
bad "--graph-calls" --backend sim --gpus 2 --graph-calls 0
bad "unknown option '--after-of'" --backend sim --gpus 2 --after-of 3
bad "table: --file" table --file /nonexistent/rows.h
bad "table: --file . is a folder, not a header" table --file .
bad "--out: the path is empty" export --db x.db --format json --out ''
bad "--hash takes no value ('--hash=1')" table --hash=1
# One option spec: the same option has the same range and message everywhere.
bad "--trials: '200000' is not a number in 3..100000" --backend sim --gpus 2 --trials 200000
bad "--trials: '200000' is not a number in 3..100000" skew --backend sim --trials 200000
bad "--backend: 'tpu' is not gpu or sim" skew --backend tpu
bad "--trials: '200000' is not a number in 3..100000" verify --backend sim --gpus 2 --trials 200000
bad "--backend: 'tpu' is not gpu or sim" verify --backend tpu
bad "unknown dtype 'int8'" verify --backend sim --gpus 2 --dtypes int8
bad "--confidence: '2' is not a number in 0.5..0.9999" --backend sim --gpus 2 --confidence 2
bad "--confidence: '2' is not a number in 0.5..0.9999" verify --backend sim --gpus 2 --confidence 2
bad "--confidence: '2' is not a number in 0.5..0.9999" compare --db a.db --baseline b.db --confidence 2
bad "--min-bytes: '12Q' is not a size in 1..64G" verify --backend sim --gpus 2 --min-bytes 12Q
bad "--min-bytes: '12Q' is not a size in 1..64G" compare-headers a.h b.h --min-bytes 12Q
bad "--tolerance: '200%' is not 3%, 0.03 or 1.03" verify --backend sim --gpus 2 --tolerance 200%
bad "--tolerance: '200%' is not 3%, 0.03 or 1.03" compare --db a.db --baseline b.db --tolerance 200%
bad "--tolerance: '200%' is not 3%, 0.03 or 1.03" compare-headers a.h b.h --tolerance 200%
bad "unknown option '--launcher'" verify --backend sim --gpus 2 --launcher mpi
bad "--format: 'xml' is not csv or json" export --db x.db --format xml
bad "--before: 'zero' is not a run id" report --db x.db --before zero --after 2
bad "table: unexpected argument" table extra
bad "--tune-skew-us" --backend sim --gpus 2 --tune-skew-us -5
bad "--no-reg" --backend sim --gpus 2 --no-reg=1
bad "--skew-rank" skew --backend sim --world 2 --skew-rank 2
# -2 is how a random rank is stored, not a rank to name (--random-skew is).
bad "--skew-rank: -2 is outside the world" skew --backend sim --world 2 --skew-rank -2
# A forced path refused before anything is measured: over its size limit at
# a later shape (the first one fits), or one that needs registered buffers.
bad "--shapes: 8192x8192 (134217728 bytes per rank) is over the push path's limit" \
  skew --backend sim --no-report --path push --shapes 8x8192 8192x8192
bad "--path: direct of all_reduce needs registered buffers" skew --backend sim --no-report --path direct
bad "unknown command 'frobnicate'" frobnicate
bad "--db FILE is required" report
bad "--before and --after go together" report --db x.db --before 1
bad "--before" report --db x.db --before zero --after 2
bad "--format" export --db x.db --format xml
bad "--format csv|json is required" export --db x.db
# fleet and merge list no option they refuse or have no use for, and their
# refusals name the command given.
for sub in fleet merge; do
  "$tune" $sub --help >out 2>&1
  for o in --header --allow-sim $([ $sub = merge ] && echo --resume); do
    grep -q -- "^  $o" out
    ok $(( $? == 0 )) "'tune $sub --help' does not list $o, which $sub refuses or ignores"
  done
done
bad "tune merge: --header: a fleet writes" merge --db f.db --gpus 2 --backend sim --header x.h n.db
bad "tune merge: --gpus is required" merge --db f.db --backend sim n.db
bad "tune fleet: --header: a fleet writes" fleet --gpus 2 --backend sim --header x.h
"$tune" run --help | grep -q -- "--no-reg"
ok $? "'tune run --help' lists --no-reg"
ls -A >listing
grep -v -e '^out$' -e '^err$' -e '^listing$' listing >extra
ok $(( $(wc -l <extra) != 0 )) "bad invocations wrote nothing (found: $(tr '\n' ' ' <extra))"

# Unreadable inputs are errors, not crashes, and create nothing.
"$tune" export --db missing.db --format csv >out 2>err
rc=$?
ok $(( rc == 0 || rc > 2 )) "export of a missing database fails cleanly (rc $rc)"
ok $(( $(test -e missing.db; echo $?) == 0 )) "export of a missing database does not create it"

# A sim run never installs kernels/thresholds.h without --allow-sim.
if [ -n "${TUNE_SRCDIR:-}" ] && [ -f "$TUNE_SRCDIR/kernels/thresholds.h" ]; then
  before=$(cksum <"$TUNE_SRCDIR/kernels/thresholds.h")
  "$tune" --backend sim --gpus 2 --db "$tmp/h.db" --header "$TUNE_SRCDIR/kernels/thresholds.h" >out 2>err
  rc=$?
  ok $(( rc != 2 )) "sim run refuses --header kernels/thresholds.h without --allow-sim (rc $rc)"
  grep -q -- "--allow-sim" err
  ok $? "the refusal names --allow-sim"
  ok $(( $(test -e "$tmp/h.db"; echo $?) == 0 )) "the refused run wrote no database"
  ok $(( $(test "$before" = "$(cksum <"$TUNE_SRCDIR/kernels/thresholds.h")"; echo $?) )) "kernels/thresholds.h unchanged"
fi

# Without a GPU the main job fails at once and points to the sim rehearsal.
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  start=$(date +%s)
  "$tune" --gpus 8 >out 2>err
  rc=$?
  ok $(( rc == 0 )) "'tune --gpus 8' without a GPU fails (rc $rc)"
  grep -q "no CUDA device" err
  ok $? "it says no CUDA device was found"
  grep -q -- "--backend sim --gpus 8" err
  ok $? "it points to the sim rehearsal"
  ok $(( $(date +%s) - start > 10 )) "it fails within seconds"
  ok $(( $(test -e tune-results; echo $?) == 0 )) "it wrote nothing"
  # verify is a gate: 1 is its verdict, so no GPU is an error, 2.
  "$tune" verify --gpus 2 --db v/v.db >out 2>err
  rc=$?
  ok $(( rc != 2 )) "'tune verify --gpus 2' without a GPU exits 2, not its verdict 1 (rc $rc)"
  grep -q -- "same command --backend sim" err
  ok $? "it points to the sim rehearsal of the same command: $(head -n1 err)"
  ok $(( $(test -e v; echo $?) == 0 )) "it wrote nothing"
fi

tap_end
