#!/usr/bin/env bash
# install.sh: `make install DESTDIR=...` from this build installs tune, the
# libdetcoll headers (with CUDA the library and detcoll.pc too, whose flags
# build a program of its API) and the man page (issue 13), tune runs from
# there, and `make uninstall` takes it all back.
# Without help2man the build has no man page and that check is skipped.
set -u
. "$(dirname "$0")/tap.sh"
build=$(cd "$(dirname "$tune")/.." && pwd)
dest=$tmp/dest
cd "$tmp" || exit 1
# A fresh make: not the job server of the make check running this test.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$build" install DESTDIR="$dest" >out 2>err
rc=$?
ok $rc "make install DESTDIR=... exits 0"
[ $rc -eq 0 ] || { sed 's/^/# /' err; echo "1..$tap_n"; exit 1; }

bin=$(find "$dest" -path '*/bin/tune' -type f)
ok $(( $(echo "$bin" | grep -c .) != 1 )) "tune is installed (${bin#"$dest"})"
# A shared libdetcoll lies under DESTDIR, not where the loader looks.
libdir=$(find "$dest" -name 'libdetcoll.so*' -printf '%h\n' | head -n1)
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$bin" --version >out 2>&1 &&
  grep -q '^tune (detcoll) ' out
ok $? "the installed tune runs: $(head -n1 out)"
# An installed tune knows no source tree: even a job that would install its
# header from the build tree (--allow-sim) writes it beside its database,
# and rebuilds nothing.
installed_before=$(cksum <"$TUNE_SRCDIR/kernels/thresholds.h")
mkdir -p "$tmp/run" && (cd "$tmp/run" && env -u TUNE_SRCDIR -u TUNE_BUILD_DIR \
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$bin" --backend sim --allow-sim --gpus 2 \
  --worlds 2 --ops all_reduce --dtypes bf16 --modes graph --offsets 0 --max-bytes 64K --trials 4 --no-report \
  --db r/t.db) >out 2>&1
ok $? "the installed tune runs a job from another folder"
test -s "$tmp/run/r/thresholds.h" && ! grep -q "rebuilding" out
ok $? "its header goes beside its database, and nothing is rebuilt"
test "$installed_before" = "$(cksum <"$TUNE_SRCDIR/kernels/thresholds.h")"
ok $? "the build's source tree is untouched"
ok $(( $(find "$dest" -path '*/include/detcoll/dc_table.h' -type f | grep -c .) != 1 )) \
  "the libdetcoll table header is installed under include/detcoll/"
if [ ! -e "$build/kernels/libdetcoll.la" ]; then
  echo "# no CUDA: libdetcoll and detcoll.h are not built"
else
  ok $(( $(find "$dest" -path '*/include/detcoll/detcoll.h' -type f | grep -c .) != 1 )) \
    "detcoll.h is installed under include/detcoll/"
  ok $(( $(find "$dest" -path '*/lib*/libdetcoll.*' | grep -c .) == 0 )) "libdetcoll is installed"
  pc=$(find "$dest" -path '*/pkgconfig/detcoll.pc' -type f)
  ok $(( $(echo "$pc" | grep -c .) != 1 )) "detcoll.pc is installed (${pc#"$dest"})"
  # What a user's build does: pkg-config's flags, with the prefix moved
  # under DESTDIR, compile and link a program of libdetcoll's API (not run:
  # it needs a GPU).
  prefix=$(sed -n 's/^prefix=//p' "$pc" 2>/dev/null)
  printf '#include <detcoll.h>\n#include <stdio.h>\nint main(void) { puts(dc_result_str(dc_ok)); return 0; }\n' >use.c
  flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs detcoll 2>&1)
  ok $? "pkg-config --cflags --libs detcoll: $flags"
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror use.c $flags -o use >cc.out 2>&1
  rc=$?
  ok $rc "a program including detcoll.h compiles and links with those flags"
  [ $rc -eq 0 ] || sed 's/^/# /' cc.out
fi
if [ ! -e "$build/tune.1" ]; then
  echo "# no help2man: no man page"
else
  man=$(find "$dest" -path '*/man/man1/tune.1' -type f)
  ok $(( $(echo "$man" | grep -c .) != 1 )) "the man page is installed (${man#"$dest"})"
  grep -q '^\.TH TUNE "1"' "$man" 2>/dev/null
  ok $? "it is a section 1 page"
  missing=
  for o in $("$tune" run --help | grep -o '^  --[a-z-]*'); do
    grep -q -- "${o//-/\\\\-}" "$man" 2>/dev/null || missing="$missing $o"
  done
  ok $(( ${#missing} != 0 )) "it lists every option of the main job${missing:+ (missing:$missing)}"
  grep -q 'BSD\\-3\\-Clause' "$man" 2>/dev/null
  ok $? "and the licence"
fi

# make uninstall takes back every file make install put there.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$build" uninstall DESTDIR="$dest" >out 2>err
ok $? "make uninstall DESTDIR=... exits 0"
left=$(find "$dest" ! -type d | sed "s|^$dest||" | xargs)
ok $(( ${#left} != 0 )) "and leaves no file behind${left:+ (left: $left)}"
tap_end
