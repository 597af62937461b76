#!/usr/bin/env bash
# device_build.sh BUILD DEPS: on a GPU machine without libtool or sqlite3.h
# (the device tool's machines), configure and build the carried tree into
# BUILD, with sqlite3.h and libsqlite3.a from DEPS. Run from the repository
# root; the tree must carry what `autoreconf -fi` made (configure,
# Makefile.in, aclocal.m4, config.h.in, build-aux/). Kernels for sm_90.
set -u
root=$PWD
build=${1:?usage: device_build.sh BUILD DEPS}
deps=$(cd "${2:?usage: device_build.sh BUILD DEPS}" && pwd)
mkdir -p "$build" && cd "$build" || exit 1
if [ ! -f Makefile ]; then
  "$root/configure" -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I$deps" SQLITE_LIBS="$deps/libsqlite3.a -lm -ldl -lpthread" >configure.out 2>&1 ||
    { tail -20 configure.out; exit 1; }
fi
make -j"$(nproc)" -s all >make.out 2>&1 && make -j"$(nproc)" -s check TESTS= >>make.out 2>&1 ||
  { grep -iE "error" make.out | head -20; exit 1; }
echo "device_build: built in $build"
