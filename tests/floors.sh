#!/usr/bin/env bash
# floors.sh: the include rule of docs/architecture.md. Every source file of
# libdetcoll and the toolkit has a floor (the table below); a file may
# include headers of its own room or of a lower floor, never of a higher
# floor or of another room of its own floor. A source file missing from the
# table fails too, so a new file gets a floor when it is added. Only db/
# includes sqlite3.h or store_db.h (the store's raw connection): everything
# else asks db/'s typed readers and writers.
set -u
. "$(dirname "$0")/tap.sh"
src=${TUNE_SRCDIR:?}

# floor room pattern...: patterns are shell globs relative to the source root.
floors() {
  cat <<'TABLE'
0 generated config.h git_rev.h schema_sql.h style_gp.h latency_gp.h crossover_gp.h regret_gp.h skew_gp.h compare_gp.h fleet_gp.h
1 libdetcoll kernels/dc_*.c kernels/dc_*.cu kernels/dc_*.cuh kernels/dc_*.h kernels/detcoll.h kernels/thresholds.h
2 common src/tune.h src/log.c src/param.c src/util.c src/db_file.[ch] src/size.c src/stats.[ch] src/progress.[ch] src/fold.[ch] src/cli.[ch] src/opts.[ch] src/cfg.[ch]
3 db db/*.[ch]
3 tuner tuner/*.[ch]
4 measure src/backend.h src/backends.c src/sim.[ch] src/gpu.c src/gpu_impl.h src/gpu_detcoll.c src/gpu_nccl.c src/gpu_fold.h src/gpu_fold.cu src/launch*.[ch] src/topo.[ch] src/engine.[ch] src/job_opts.[ch] src/skew.[ch] src/verify.[ch] src/compare.[ch] src/replay.[ch] src/fleet.[ch] src/fleet_analyze.c plots/*.[ch]
5 cli src/main.c kernels/bench_*.[ch] kernels/bench_*.cu
TABLE
}

# check_tree ROOT: prints each violation under ROOT; sets bad, checked, unplaced.
check_tree() {
  local f r pats p file inc h target
  declare -A floor=() room=() where=()
  while read -r f r pats; do
    for p in $pats; do
      if [ "$f" = 0 ]; then
        floor[$p]=0 room[$p]=$r where[$p]=$p
        continue
      fi
      for file in $p; do
        [ -e "$file" ] || continue
        floor[$file]=$f room[$file]=$r
        where[$(basename "$file")]=$file
      done
    done
  done < <(floors)
  bad=0 checked=0 unplaced=""
  for file in kernels/*.[ch] kernels/*.cu kernels/*.cuh src/*.[ch] src/*.cu db/*.[ch] tuner/*.[ch] plots/*.[ch]; do
    [ -e "$file" ] || continue
    if [ -z "${floor[$file]:-}" ]; then
      unplaced="$unplaced $file"
      continue
    fi
    while IFS= read -r inc; do
      h=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$inc")
      [ -n "$h" ] || continue
      checked=$((checked + 1))
      target=${where[$(basename "$h")]:-}
      if [ -z "$target" ]; then
        echo "# $file includes \"$h\", which has no floor"
        bad=$((bad + 1))
      elif [ "${floor[$target]}" -gt "${floor[$file]}" ] ||
        { [ "${floor[$target]}" = "${floor[$file]}" ] && [ "${room[$target]}" != "${room[$file]}" ]; }; then
        echo "# $file (floor ${floor[$file]} ${room[$file]}) includes $target (floor ${floor[$target]} ${room[$target]})"
        bad=$((bad + 1))
      fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file")
  done
}

# The files outside db/ under ROOT that include sqlite3.h or store_db.h.
sql_outside_db() {
  (cd "$1" && grep -lE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](sqlite3|store_db)\.h[">]' \
    kernels/* src/* tuner/* plots/* 2>/dev/null)
}

# The check itself fails on a tree where the store includes the engine and
# the tuner includes the store.
mkdir -p "$tmp/fake/src" "$tmp/fake/db" "$tmp/fake/tuner" "$tmp/fake/plots"
printf '#include "tune.h"\n' >"$tmp/fake/src/engine.h"
: >"$tmp/fake/src/tune.h"
printf '#include "engine.h"\n#include "tune.h"\n' >"$tmp/fake/db/store.c"
printf '#include "store.h"\n' >"$tmp/fake/tuner/emit.c"
: >"$tmp/fake/db/store.h"
(cd "$tmp/fake" && check_tree) >"$tmp/fake.out"
grep -q "db/store.c (floor 3 db) includes src/engine.h (floor 4 measure)" "$tmp/fake.out" &&
  grep -q "tuner/emit.c (floor 3 tuner) includes db/store.h (floor 3 db)" "$tmp/fake.out" &&
  [ "$(grep -c '^#' "$tmp/fake.out")" = 2 ]
ok $? "the check finds a lower floor including a higher one, and a room including its neighbour"
printf '#include <sqlite3.h>\n' >"$tmp/fake/db/query.c"
printf '#include "store_db.h"\n' >"$tmp/fake/plots/report.c"
printf '  #  include <sqlite3.h>\n' >"$tmp/fake/src/engine.c"
test "$(sql_outside_db "$tmp/fake" | sort | xargs)" = "plots/report.c src/engine.c"
ok $? "the check finds SQLite and the raw connection outside db/, not in db/"

cd "$src" || exit 1
check_tree
ok $(( bad != 0 )) "no file includes a higher floor or another room of its own ($checked includes checked)"
ok $(( ${#unplaced} != 0 )) "every source file has a floor${unplaced:+ (missing:$unplaced)}"
sqlite=$(sql_outside_db . | xargs)
ok $(( ${#sqlite} != 0 )) "only db/ includes sqlite3.h and store_db.h${sqlite:+ (also: $sqlite)}"
tap_end
