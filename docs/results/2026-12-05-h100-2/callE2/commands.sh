#!/usr/bin/env bash
# one-GPU call: is eager all_reduce on 2 virtual ranks slower at scratch/rev than at 716c89e (callV: +5 to
# +10% at 1 KiB and 256 KiB in both pairs, while the same kernels in graph mode were not)? Eager only,
# all_reduce, auto, auto_reg and four forced paths, and NCCL where each rank has a GPU (a control: its rows
# share the bench, not libdetcoll; virtual ranks leave it out), 300 trials, eight rounds old new new old
# old new new old, nothing else on the GPU between them.
. "$(dirname "$0")/call_lib.sh"
build_old
el "built new $(cat scratch/rev) and old 716c89e"
A="--world 2 --op all_reduce --impl detcoll,nccl --paths auto,auto_reg,one_shot,direct,push,single_block --sizes 1K,16K,256K,1M --mode eager --iters 300"
r=0; for who in old new new old old new new old; do r=$((r+1))
  B=/tmp/b/kernels/bench_detcoll; [ $who = old ] && B=/tmp/bo/kernels/bench_detcoll
  timeout 60 $B $A > $R/round$r-$who.txt 2>&1; el "round $r $who rc $?"; save
done
cat scratch/rev > $R/commit.txt
el done; save
