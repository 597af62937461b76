# tap.sh: what the TAP shell tests share, sourced first: $tune (the built
# tune, named by the harness), a scratch folder $tmp removed on exit, `ok
# STATUS TEXT` (status 0 passes) and tap_end (the plan line; fails when a
# check did). tap.h is the same for the C tests.
tune=${TUNE_BIN:?TUNE_BIN is set by the harness}
tmp=$(mktemp -d) && [ -d "$tmp" ] || { echo "Bail out! no scratch folder (mktemp -d failed; TMPDIR=${TMPDIR:-unset})"; exit 99; }
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# The counts have names of their own: a test's own n= or failed= (a
# count it reads from a database) must not reset them.
tap_n=0 tap_failed=0
ok() {
  tap_n=$((tap_n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_failed=$((tap_failed + 1)); fi
}
# A check skipped: WHY.
tap_skip() {
  tap_n=$((tap_n + 1))
  echo "ok $tap_n - $1"
}
tap_end() {
  echo "1..$tap_n"
  [ "$tap_failed" -eq 0 ]
}
