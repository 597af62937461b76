#!/usr/bin/env bash
# replay2.sh TUNE OUTDIR: call2's two two-H200 jobs (2026-12-01, 82065db)
# replayed with the tune binary TUNE: each alone, and each begun with the
# other's replayed header; agreement and regret by call2's replay_check.py.
set -eu
T=$1; O=$2; D=$(cd "$(dirname "$0")/../../2026-12-01-2xh200/call2" && pwd)
mkdir -p "$O"; W=$(mktemp -d); cd "$W"
for x in A B; do xz -dc $D/$x.db.xz > $x.db; done
for x in A B; do $T replay --db $x.db --gpus 2 --graph-calls 10 --header $x.h > "$O/replay-$x.txt" 2>&1; done
$T replay --db B.db --gpus 2 --graph-calls 10 --incumbent A.h --header B-after-A.h > "$O/replay-B-after-A.txt" 2>&1
$T replay --db A.db --gpus 2 --graph-calls 10 --incumbent B.h --header A-after-B.h > "$O/replay-A-after-B.txt" 2>&1
{ echo "## A and B, each alone"; python3 $D/replay_check.py A.h B.h A.db B.db
  echo "## B begun with A's header"; python3 $D/replay_check.py A.h B-after-A.h A.db B.db
  echo "## A begun with B's header"; python3 $D/replay_check.py B.h A-after-B.h B.db A.db; } > "$O/agree.txt"
for h in A.h B.h B-after-A.h A-after-B.h; do xz -c $h > "$O/$h.xz"; done
cd /; rm -rf "$W"
