#!/usr/bin/env bash
# two-H200 A/B: every forced detcoll path of scratch/rev against 716c89e's (the last commit measured on two
# GPUs), graph mode, bf16, world 2, four alternating rounds (old new new old), so drift falls on both sides.
. "$(dirname "$0")/call_lib.sh"
build_old
el "built new $(cat scratch/rev) and old 716c89e"
nvidia-smi topo -m > $R/topo.txt 2>&1
A="--world 2 --op all --impl detcoll --paths all --sizes 1K,16K,64K,256K,1M,4M,16M,64M,256M --mode graph"
r=0; for who in old new new old; do r=$((r+1))
  B=/tmp/b/kernels/bench_detcoll; [ $who = old ] && B=/tmp/bo/kernels/bench_detcoll
  timeout 120 $B $A > $R/round$r-$who.txt 2>&1; el "round $r $who rc $?"; save
done
el done; save
