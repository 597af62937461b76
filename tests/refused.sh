# refused.sh: sourced after tap.sh by the tests of refusals that must
# change nothing (db_names.sh, resume_env.sh, resume_trust.sh).
# fails WHAT PATTERN ARGS...: tune ARGS fails and says PATTERN.
fails() {
  local what=$1 pat=$2
  shift 2
  "$tune" "$@" >"$tmp/o" 2>"$tmp/e"
  local rc=$?
  ok $((rc == 0)) "$what: refused (rc $rc)"
  grep -q -- "$pat" "$tmp/e"
  local found=$?
  ok $found "$what: says '$pat'"
  [ $found -eq 0 ] || sed 's/^/# /' "$tmp/e"
}
# refused WHAT PATTERN DB ARGS...: fails, DB stays byte-identical and its
# folder gains no file (no lock, no -wal) and loses none.
refused() {
  local what=$1 pat=$2 db=$3
  shift 3
  cp "$db" "$tmp/keep.db"
  ls -a "$(dirname "$db")" >"$tmp/ls.before"
  fails "$what" "$pat" "$@"
  cmp -s "$db" "$tmp/keep.db"
  ok $? "$what: the database is unchanged"
  ls -a "$(dirname "$db")" | diff "$tmp/ls.before" - >"$tmp/ls.diff"
  ok $? "$what: no file made or removed$(tr '\n' ' ' <"$tmp/ls.diff" | sed 's/^./: &/')"
}
