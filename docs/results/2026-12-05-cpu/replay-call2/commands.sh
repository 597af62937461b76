#!/usr/bin/env bash
# CPU machine, no GPU: the crossover search of HEAD's tune replayed over the
# samples of the two independent two-H200 jobs of 2026-12-01 (call2, 82065db,
# both begun from the unmeasured default table). Run from the repository root
# after ./tune check (or any build in ./build).
set -eu
D=docs/results/2026-12-01-2xh200/call2
T=$PWD/build/src/tune
R=$PWD/docs/results/2026-12-05-cpu/replay-call2
W=$(mktemp -d)
for x in A B; do xz -dc $D/$x.db.xz > $W/$x.db; done
cd $W
# each job alone, with the previous table its database holds
for x in A B; do $T replay --db $x.db --gpus 2 --graph-calls 10 --header r$x.h > $R/replay-$x.txt 2>&1; done
# each job begun with the other's replayed header (issue 14's back-to-back case)
$T replay --db B.db --gpus 2 --graph-calls 10 --incumbent rA.h --header rB-after-A.h > $R/replay-B-after-A.txt 2>&1
$T replay --db A.db --gpus 2 --graph-calls 10 --incumbent rB.h --header rA-after-B.h > $R/replay-A-after-B.txt 2>&1
{
  echo "## A and B, each alone";  python3 /dev/stdin rA.h rB.h A.db B.db < $OLDPWD/$D/replay_check.py
  $T compare-headers rA.h rB.h --db B.db
  echo "## B begun with A's header"; python3 /dev/stdin rA.h rB-after-A.h A.db B.db < $OLDPWD/$D/replay_check.py
  echo "## A begun with B's header"; python3 /dev/stdin rB.h rA-after-B.h B.db A.db < $OLDPWD/$D/replay_check.py
  $T compare-headers rB.h rA-after-B.h --db A.db
} > $R/agree.txt 2>&1
for h in rA.h rB.h rB-after-A.h rA-after-B.h; do xz -c $h > $R/$h.xz; done
rm -rf $W
