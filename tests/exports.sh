#!/usr/bin/env bash
# exports.sh: libdetcoll exports its API and nothing else -- every symbol
# the shared library defines is a function or object declared DC_API in
# detcoll.h or dc_table.h, and every one of those is there. A build without
# a shared library (--disable-shared, as ./tune and CI build) is checked on
# the static one: what its objects define global with default visibility is
# what a shared build exports. Skips (77) without libdetcoll (no CUDA).
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
libs=$(dirname "$tune")/../kernels/.libs
if [ -e "$libs/libdetcoll.so" ]; then
  command -v nm >/dev/null || { echo "1..0 # SKIP no nm"; exit 77; }
  nm -D --defined-only "$libs/libdetcoll.so" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u >"$tmp/exported"
elif [ -e "$libs/libdetcoll.a" ]; then
  command -v readelf >/dev/null || { echo "1..0 # SKIP no readelf"; exit 77; }
  readelf -sW "$libs/libdetcoll.a" |
    awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" { print $8 }' | sort -u >"$tmp/exported"
else
  echo "1..0 # SKIP no libdetcoll (a build without CUDA)"
  exit 77
fi
grep -hE '^(extern )?DC_API ' "$src/kernels/detcoll.h" "$src/kernels/dc_table.h" |
  sed -E 's/[(;].*//; s/.*[ *]([a-z_][a-z_0-9]*)$/\1/' | sort -u >"$tmp/api"
extra=$(comm -23 "$tmp/exported" "$tmp/api" | tr '\n' ' ')
missing=$(comm -13 "$tmp/exported" "$tmp/api" | tr '\n' ' ')
ok $(( $(wc -l <"$tmp/api") < 40 )) "the headers declare $(wc -l <"$tmp/api") DC_API names"
ok $(( ${#extra} != 0 )) "nothing but the API is exported${extra:+ (also: $extra)}"
ok $(( ${#missing} != 0 )) "every DC_API name is exported${missing:+ (missing: $missing)}"
tap_end
