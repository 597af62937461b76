# tap.sh: what the TAP shell tests share, sourced first: $tune (the built
# tune, named by the harness), a scratch folder $tmp removed on exit, `ok
# STATUS TEXT` (status 0 passes) and tap_end (the plan line; fails when a
# check did). tap.h is the same for the C tests.
tune=${TUNE_BIN:?TUNE_BIN is set by the harness}
tmp=$(mktemp -d) && [ -d "$tmp" ] || { echo "Bail out! no scratch folder (mktemp -d failed; TMPDIR=${TMPDIR:-unset})"; exit 99; }
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
n=0 failed=0
ok() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tap_end() {
  echo "1..$n"
  [ "$failed" -eq 0 ]
}
