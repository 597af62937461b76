#!/usr/bin/env bash
# CPU machine, no GPU. The stopping rule at the trial cap, two ways, replayed
# over the samples of call2's two jobs on two H200s (replay2.sh):
#   paired/  af46aca as committed: a claim at the cap's look decides alone;
#   cap/     af46aca with look_cap.diff (a review's proposal): the cap's
#            look decides only if the look before it saw the claim too.
# Run from the repository root of a checkout of af46aca.
set -eu
R=docs/results/2026-12-05-cpu/look-rules
./tune check >/dev/null 2>&1 || true        # builds ./build (the suite's result is not needed here)
bash $R/replay2.sh "$PWD/build/src/tune" "$PWD/$R/paired"
W=$(mktemp -d); git worktree add -q --detach "$W" HEAD
( cd "$W" && git apply "$OLDPWD/$R/look_cap.diff" && autoreconf -fi >/dev/null 2>&1 &&
  mkdir b && cd b && ../configure -q --disable-shared >/dev/null && make -j"$(nproc)" src/tune >/dev/null )
bash $R/replay2.sh "$W/b/src/tune" "$PWD/$R/cap"
git worktree remove --force "$W"
