#!/usr/bin/env bash
# rebuilt_table.sh: a job that installs its header (here a sim job with
# --allow-sim, in a scratch copy of the source tree and its own build)
# measures the new table in its after pass, in process, then writes
# kernels/thresholds.h and rebuilds; the table the rebuilt tune compiles in
# must be the one the after pass measured, and differ from the one it was
# built with. A job stopped before its install is finished by --resume,
# measuring nothing; one whose header was replaced since is not. The real
# source tree is never written.
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
[ -x "$src/configure" ] || { echo "1..0 # SKIP no configure script in $src"; exit 77; }
# A fresh make: not the job server of the make check running this test.
unset MAKEFLAGS MFLAGS MAKELEVEL TUNE_SRCDIR TUNE_BUILD_DIR
installed_before=$(cksum <"$src/kernels/thresholds.h")

mkdir -p "$tmp/src" "$tmp/b"
# Build folders (those holding a config.status) stay behind.
tar -C "$src" --exclude-tag-all=config.status --exclude=./.git --exclude=./docs/results \
  --exclude=./autom4te.cache -cf - . | tar -C "$tmp/src" -xf -
chmod -R u+w "$tmp/src"
(cd "$tmp/b" && "$tmp/src/configure" -q --without-cuda --without-mpi --disable-shared CC="${CC:-cc}" &&
  make -s -j"$(nproc)") >"$tmp/build.log" 2>&1
rc=$?
ok $rc "a scratch copy of the tree configures and builds"
[ $rc -eq 0 ] || { tail -20 "$tmp/build.log" | sed 's/^/# /'; tap_end; exit 1; }
tune2=$tmp/b/src/tune
built_with=$("$tune2" table --hash)
cp "$tmp/src/kernels/thresholds.h" "$tmp/began.h"

job=(--backend sim --allow-sim --gpus 2 --worlds 2 --ops all_reduce,reduce_scatter --dtypes bf16
  --modes graph --offsets 0 --max-bytes 256K --trials 6 --no-report --db "$tmp/r/t.db")
"$tune2" "${job[@]}" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "the job installs its header and rebuilds"
[ $rc -eq 0 ] || { tail -20 "$tmp/err" | sed 's/^/# /'; tap_end; exit 1; }
q() { sqlite3 -batch -noheader "$tmp/r/t.db" "$1"; }
measured=$(q "select thresholds from runs where kind = 'after'" | sed -n 's/.*(table \([0-9a-f]*\)).*/\1/p')
rebuilt=$("$tune2" table --hash)
ok $(( ${#measured} != 16 )) "the after run records the table it measured ($measured)"
test "$rebuilt" = "$measured"
ok $? "the rebuilt tune compiles in the table the after pass measured ($rebuilt)"
test "$rebuilt" != "$built_with"
ok $? "a table other than the one it was built with ($built_with)"
q "select content from headers where run_id = (select id from runs where kind = 'sweep')" | cmp -s - <(cat "$tmp/src/kernels/thresholds.h"; echo)
ok $? "kernels/thresholds.h of the scratch tree is the stored header"
grep -q "compiles in the table the after pass measured" "$tmp/out"
ok $? "the job says it checked the rebuilt table"

# A job stopped after its after pass and before its install (the tree and
# its build as the job began): --resume finishes it, measuring nothing.
cp "$tmp/began.h" "$tmp/src/kernels/thresholds.h"
make -s -C "$tmp/b" >"$tmp/build.log" 2>&1
ok $? "the scratch tree as before the install, rebuilt ($("$tune2" table --hash))"
configs=$(q "select count(*) from configs")
"$tune2" "${job[@]}" --resume >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "--resume of the job stopped before its install succeeds"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
grep -q "measured all it had to, but stopped before its table was installed" "$tmp/out"
ok $? "and says it finishes the job"
test "$(q "select count(*) from configs")" = "$configs"
ok $? "it measures nothing ($configs configurations)"
test "$("$tune2" table --hash)" = "$measured"
ok $? "the rebuilt tune compiles in the table the after pass measured"
# Installed: finished. A table changed since (not the one the job began
# with): finished too, and left alone.
"$tune2" "${job[@]}" --resume >"$tmp/out" 2>"$tmp/err"
ok $(( $? == 0 )) "--resume again: the job has finished"
sed 's/^\(  {[0-9]*, [0-9]*, [A-Z_]*, [A-Z_]*, [A-Z_0-9]*, [A-Z_0-9]*, [A-Z_]*, 0, [0-9]*, {{\)\([0-9][0-9]*\)/\1\21/' \
  "$tmp/began.h" >"$tmp/src/kernels/thresholds.h"
cp "$tmp/src/kernels/thresholds.h" "$tmp/third.h"
"$tune2" table --file "$tmp/third.h" >/dev/null && ! cmp -s "$tmp/third.h" "$tmp/began.h"
ok $? "a third table in the tree"
"$tune2" "${job[@]}" --resume >"$tmp/out" 2>"$tmp/err"
ok $(( $? == 0 )) "--resume with a third table installed: the job has finished"
cmp -s "$tmp/third.h" "$tmp/src/kernels/thresholds.h"
ok $? "and the third table stays"
# Stopped while it draws its report (SIGINT from a gnuplot): the tree is
# as the job began, and --resume finishes it. The header was installed
# before the report: the printed --resume was refused, the table never
# compiled in (a review).
cp "$tmp/began.h" "$tmp/src/kernels/thresholds.h"
make -s -C "$tmp/b" >"$tmp/build.log" 2>&1
ok $? "the scratch tree as the job began, rebuilt ($("$tune2" table --hash))"
printf '#!/bin/sh\ncase "$1" in -e) ;; *) kill -INT "$PPID" ;; esac\nexit 0\n' >"$tmp/gnuplot"
chmod +x "$tmp/gnuplot"
job2=("${job[@]/$tmp\/r\/t.db/$tmp/s/t.db}") # the resumes draw no report
GNUPLOT=$tmp/gnuplot "$tune2" "${job2[@]/--no-report/--report-dir=$tmp/s/rep}" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $(( rc != 130 )) "a job stopped in its report: exit 130 (rc $rc)"
cmp -s "$tmp/began.h" "$tmp/src/kernels/thresholds.h" && grep -q "to continue the job, run:" "$tmp/err"
ok $? "the tree as it began, and the command that continues it printed"
"$tune2" "${job2[@]}" --resume >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "--resume finishes it (rc $rc)"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
measured2=$(sqlite3 -batch -noheader "$tmp/s/t.db" "select thresholds from runs where kind = 'after'" |
  sed -n 's/.*(table \([0-9a-f]*\)).*/\1/p')
test "$("$tune2" table --hash)" = "$measured2" && ! cmp -s "$tmp/began.h" "$tmp/src/kernels/thresholds.h"
ok $? "installed and compiled in ($measured2)"
# Stopped in the rebuild: the tree holds the job's header, the build the
# table it began with. --resume finishes it: the rebuild.
cp "$tmp/src/kernels/thresholds.h" "$tmp/own.h"
cp "$tmp/began.h" "$tmp/src/kernels/thresholds.h"
make -s -C "$tmp/b" >"$tmp/build.log" 2>&1 && cp "$tmp/own.h" "$tmp/src/kernels/thresholds.h"
ok $? "the tree with the job's header, the build with the table it began with ($("$tune2" table --hash))"
"$tune2" "${job2[@]}" --resume >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && test "$("$tune2" table --hash)" = "$measured2" && grep -q "finishing it" "$tmp/out"
ok $? "--resume rebuilds, and the build compiles in the job's table (rc $rc)"
"$tune2" "${job2[@]}" --resume >"$tmp/out" 2>"$tmp/err"
ok $(( $? == 0 )) "--resume again: the job has finished"
test "$installed_before" = "$(cksum <"$src/kernels/thresholds.h")"
ok $? "the real source tree's kernels/thresholds.h is untouched"
tap_end
