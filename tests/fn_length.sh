#!/usr/bin/env bash
# fn_length.sh: no function of libdetcoll or the toolkit is longer than 80
# lines (STYLE.md, issue 12), from the first line of its signature at
# column 0 to its closing brace at column 0.
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}
limit=80

# long_functions FILE...: "LINES FILE:LINE NAME" for each function over $limit lines.
long_functions() {
  awk -v limit="$limit" '
    FNR == 1 { state = 0 }
    {
      if (state == 0 && $0 ~ /^[A-Za-z_]/ && $0 !~ /^(typedef|static const |const )/ &&
          match($0, /^[^=;(]*\(/)) {
        state = 1
        first = FNR
        name = substr($0, 1, RLENGTH - 1)
        sub(/[[:space:]]+$/, "", name)
        sub(/.*[^A-Za-z0-9_]/, "", name)
      }
      if (state == 1) {
        if ($0 ~ /[;=]/) state = 0
        else if ($0 ~ /\{[[:space:]]*$/) state = 2
        next
      }
      if (state == 2 && $0 ~ /^\}/) {
        if (FNR - first + 1 > limit) print FNR - first + 1, FILENAME ":" first, name
        state = 0
      }
    }' "$@"
}

# The check itself: an 81-line function is found, an 80-line one, a
# declaration and a table are not.
body() { for ((i = 0; i < $1; i++)); do echo "  x++;"; done; }
{
  echo "static int (*const table[])(int) = {"
  echo "    f, g};"
  echo "int declared(int x);"
  echo "static int fits(int x) {"
  body 78
  echo "}"
  echo 'extern "C" int too_long(int x,'
  echo "                        int y) {"
  body 78
  echo "}"
} >"$tmp/fake.c"
test "$(long_functions "$tmp/fake.c")" = "81 $tmp/fake.c:84 too_long"
ok $? "the check finds an 81-line function, not an 80-line one, a declaration or a table"

cd "$src" || exit 1
found=$(long_functions kernels/*.c kernels/*.cu kernels/*.cuh src/*.c src/*.cu db/*.c tuner/*.c plots/*.c |
  while read -r lines at name; do echo "$name ($at, $lines lines)"; done | xargs)
ok $(( ${#found} != 0 )) "no function over $limit lines${found:+: $found}"
tap_end
