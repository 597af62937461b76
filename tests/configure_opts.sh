#!/usr/bin/env bash
# configure_opts.sh: `configure --help` lists every configure option the
# README names, and a dependency asked for and missing stops configure
# with an error naming it: --with-cuda=DIR, --with-mpi=DIR and
# --with-hwloc=DIR of a folder without them (a DIR is never ignored for the
# system's copy), and no SQLite (pkg-config finds no sqlite3). A
# --with-mpi=DIR that holds Open MPI's wrappers and a --with-hwloc=DIR that
# holds hwloc.pc are the ones used.
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
[ -x "$src/configure" ] || { echo "1..0 # SKIP no configure script in $src"; exit 77; }
# configure refuses an out-of-tree build of a tree configured in place.
[ -e "$src/config.status" ] && { echo "1..0 # SKIP $src is configured in place"; exit 77; }
unset MAKEFLAGS MFLAGS MAKELEVEL

"$src/configure" --help >"$tmp/help" 2>&1
ok $? "configure --help exits 0"
missing=
for o in $(grep -o -- '--\(with\|without\|enable\|disable\)-[a-z0-9-]*[a-z0-9]' "$src/README.md" | sort -u); do
  base=$(echo "$o" | sed -e 's/^--without-/--with-/' -e 's/^--disable-/--enable-/')
  grep -qE -- "^  ($o|$base)([= []|\$)" "$tmp/help" || missing="$missing $o"
done
ok $(( ${#missing} != 0 )) "it lists every option the README names${missing:+ (missing:$missing)}"

# conf NAME ARGS...: configure in $tmp/NAME; the status, output in $tmp/NAME/out.
conf() {
  local d=$tmp/$1
  shift
  mkdir -p "$d" && (cd "$d" && "$src/configure" -q --disable-shared CC="${CC:-cc}" "$@" >out 2>&1)
}
# refused NAME WORD TEXT ARGS...: configure stops with an error naming WORD.
refused() {
  local name=$1 word=$2 text=$3
  shift 3
  conf "$name" "$@"
  local rc=$?
  grep -q "error:.*$word" "$tmp/$name/out"
  ok $(( rc == 0 || $? != 0 )) "$text: configure stops, naming $word (rc $rc)"
  [ $rc -ne 0 ] || sed -n 's/^/# /p' "$tmp/$name/out" | tail -n 5
}
none=$tmp/nonexistent
refused cuda "$none" "--with-cuda=DIR without CUDA" --with-cuda="$none"
refused mpi "$none" "--with-mpi=DIR without Open MPI" --without-cuda --with-mpi="$none"
refused hwloc "$none" "--with-hwloc=DIR without hwloc" --without-cuda --without-mpi --with-hwloc="$none"
mkdir -p "$tmp/nopc"
refused sqlite SQLite "no sqlite3 for pkg-config" --without-cuda --without-mpi --without-hwloc \
  PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$tmp/nopc"

# An Open MPI prefix of its own: its mpicc and mpirun are the ones used.
mpicc=$(command -v mpicc) && "$mpicc" --showme:link >/dev/null 2>&1 || {
  echo "# no Open MPI mpicc: --with-mpi=DIR of a real prefix not checked"
  tap_end
  exit
}
mkdir -p "$tmp/ompi/bin"
ln -s "$mpicc" "$tmp/ompi/bin/mpicc"
printf '#!/bin/sh\nexit 0\n' >"$tmp/ompi/bin/mpirun" && chmod +x "$tmp/ompi/bin/mpirun"
hwloc= hwloc_opt=--without-hwloc
pc=$(pkg-config --variable=pcfiledir hwloc 2>/dev/null) && [ -f "$pc/hwloc.pc" ] &&
  mkdir -p "$tmp/hwloc/lib/pkgconfig" && cp "$pc/hwloc.pc" "$tmp/hwloc/lib/pkgconfig/" &&
  hwloc=$tmp/hwloc hwloc_opt=--with-hwloc=$tmp/hwloc
conf ompi --without-cuda --with-mpi="$tmp/ompi" "$hwloc_opt"
ok $? "--with-mpi=DIR of an Open MPI prefix${hwloc:+ and --with-hwloc=DIR of a hwloc one} configure"
grep -q "^#define TUNE_MPIRUN \"$tmp/ompi/bin/mpirun\"" "$tmp/ompi/config.h" 2>/dev/null &&
  grep -q '^#define HAVE_MPI 1' "$tmp/ompi/config.h"
ok $? "the MPI launcher is built, and DIR's mpirun is the one tune launches"
if [ -n "$hwloc" ]; then
  grep -q '^#define HAVE_HWLOC 1' "$tmp/ompi/config.h"
  ok $? "hwloc pinning is built"
fi
tap_end
