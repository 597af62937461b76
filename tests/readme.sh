#!/usr/bin/env bash
# readme.sh: README.md against the built tune, as a new user meets it.
# Every option of a tune command line in the README (its code blocks and
# one-line `tune ...` spans) is one that command's --help lists; every
# environment variable the code reads is named in the README (save the
# standard ones and those ./tune sets for the built tune); and the README's
# `tune skew` example runs, pasted whole, on the sim backend.
set -u
. "$(dirname "$0")/tap.sh"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed"; exit 77; }
src=${TUNE_SRCDIR:?}
cd "$tmp" || exit 1

# "CMD OPTION" for each option of each tune command line of the README.
# shellcheck disable=SC2046
python3 - "$src/README.md" check help $("$tune" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p') >lines <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
commands = set(sys.argv[2:])
lines, block = [], False
for raw in text.splitlines():
    if raw.startswith("```"):
        block = not block
        continue
    if block:
        lines.append(raw)
    lines += re.findall(r"`([^`]*\btune [^`]*)`", raw)
joined, cur = [], ""
for l in lines:  # a code block's backslash continuations make one line
    cur += l.rstrip("\\") + " "
    if not l.endswith("\\"):
        joined.append(cur)
        cur = ""
for l in joined:
    m = re.search(r"(?:^|[ /])tune((?: [^ ]+)*)", " ".join(l.split("#")[0].split()))
    if not m:
        continue
    words = m.group(1).split()
    cmd = words[0] if words and words[0] in commands else "run"
    if cmd in ("check", "help"):
        continue
    for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", m.group(1)))):
        print(cmd, opt)
PY
ok $(( $(wc -l <lines) < 20 )) "the README's tune command lines are found ($(wc -l <lines) options)"
missing=
while read -r cmd opt; do
  # A listed option, or an alias named in another's help ("also --op").
  "$tune" "$cmd" --help 2>&1 | grep -qE -- "^  (-h, )?$opt([ =[]|$)|also $opt\b" || missing="$missing $cmd:$opt"
done <lines
ok $(( ${#missing} != 0 )) "every option the README gives a tune command is in its --help${missing:+ (not:$missing)}"

# The environment the code reads, named in the README. Left out: the
# system's (PATH, TMPDIR, Open MPI's), and what ./tune hands the built tune
# (TUNE_SRCDIR: where it runs from). TUNE_GIT_REV, which ./tune no longer
# sets, is the user's override and is checked.
vars=$({
  grep -rhoE 'getenv\("[A-Z_0-9]+"\)' "$src"/src "$src"/db "$src"/tuner "$src"/plots "$src"/kernels |
    sed -E 's/getenv\("(.*)"\)/\1/'
  grep -rhoE 'TUNE_PARAM\([A-Za-z]+, *"[A-Z_]+"' "$src"/src | sed -E 's/.*"(.*)"/TUNE_\1/'
  grep -hoE 'define DC_[A-Z_]+_ENV "[A-Z_]+"' "$src"/kernels/*.h | sed -E 's/.*"(.*)"/\1/'
  grep -oE '\$\{?(TUNE_|DC_)[A-Z_]+' "$src/tune" | tr -d '${'
} | sort -u | grep -vxE 'PATH|TMPDIR|OMPI_[A-Z_]+|TUNE_SRCDIR|TUNE_ENV')
ok $(( $(echo "$vars" | wc -w) < 20 )) "the variables the code reads are found ($(echo $vars))"
undocumented=
for v in $vars; do
  grep -q -- "\b$v\b" "$src/README.md" || undocumented="$undocumented $v"
done
ok $(( ${#undocumented} != 0 )) "README names every one of them${undocumented:+ (not:$undocumented)}"

# The skew example, as the README writes it, on the sim backend.
example=$(python3 - "$src/README.md" <<'PY'
import re, sys
m = re.search(r"\./tune (skew [^\n]*\\\n[^\n]*)", open(sys.argv[1], encoding="utf-8").read())
print(m.group(1).replace("\\\n", " ") if m else "")
PY
)
ok $(( ${#example} == 0 )) "the README's tune skew example is found: $example"
# shellcheck disable=SC2086
"$tune" $example --backend sim --db skew.db --no-report >out 2>err
ok $? "it runs on the sim backend$(head -n1 err | sed 's/^/: /')"
if command -v sqlite3 >/dev/null; then
  test "$(sqlite3 skew.db "select count(*) from skew_summaries" 2>/dev/null)" = 16
  ok $? "and stores a summary per shape, mode and delay (2 x 2 x 4: 16)"
else
  tap_skip "its summaries are not counted: no sqlite3 command"
fi

tap_end
