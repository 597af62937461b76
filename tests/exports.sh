#!/usr/bin/env bash
# exports.sh: libdetcoll exports its API and nothing else -- every symbol
# the shared library defines is a function or object declared DC_API in
# detcoll.h or dc_table.h, and every one of those is there. Skips (77)
# without a shared libdetcoll (no CUDA, or --disable-shared).
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
lib=$(dirname "$tune")/../kernels/.libs/libdetcoll.so
[ -e "$lib" ] || { echo "1..0 # SKIP no shared libdetcoll"; exit 77; }
command -v nm >/dev/null || { echo "1..0 # SKIP no nm"; exit 77; }
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u >"$tmp/exported"
grep -hE '^(extern )?DC_API ' "$src/kernels/detcoll.h" "$src/kernels/dc_table.h" |
  sed -E 's/[(;].*//; s/.*[ *]([a-z_][a-z_0-9]*)$/\1/' | sort -u >"$tmp/api"
extra=$(comm -23 "$tmp/exported" "$tmp/api" | tr '\n' ' ')
missing=$(comm -13 "$tmp/exported" "$tmp/api" | tr '\n' ' ')
ok $(( $(wc -l <"$tmp/api") < 40 )) "the headers declare $(wc -l <"$tmp/api") DC_API names"
ok $(( ${#extra} != 0 )) "nothing but the API is exported${extra:+ (also: $extra)}"
ok $(( ${#missing} != 0 )) "every DC_API name is exported${missing:+ (missing: $missing)}"
tap_end
