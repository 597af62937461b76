#!/usr/bin/env bash
# one-GPU call: bench_detcoll's command line after 3883039 on a GPU: a run with a size under 16 bytes a
# rank (left out, with a # line), nccl-tests' flags with -f, --out into a file, a size whose buffers exceed
# the GPU's memory (refused, exit 2, before anything is allocated), and registered paths beside a plain one at
# an offset of 8 bytes (the plain one measured, the others left out with a # line); NCCL alone on virtual ranks
# (nothing to measure: refused, exit 2, before --out is opened).
. "$(dirname "$0")/call_lib.sh"
B=/tmp/b/kernels/bench_detcoll
timeout 60 $B --world 2 --sizes 8,1K,1M --mode both --impl detcoll --paths auto,push,one_shot --out $R/out.txt \
  > $R/stdout.txt 2> $R/stderr.txt; el "sizes 8,1K,1M --out rc $?: $(grep -c '^all_' $R/out.txt) rows, $(grep -c 'left out' $R/out.txt) left-out lines, stdout $(wc -c < $R/stdout.txt) bytes"
timeout 60 $B -b 8 -e 1M -f 32 -g 8 -d bfloat16 -w 5 -c 1 --op all_reduce --impl detcoll --paths auto > $R/flags.txt 2>&1
el "nccl-tests flags rc $?: $(grep -c '^all_reduce' $R/flags.txt) rows: $(awk '/^all_reduce/ { printf "%s ", $2 }' $R/flags.txt)"
timeout 60 $B --world 8 --op all_gather --sizes 64G --impl detcoll --paths auto > $R/big.txt 2>&1
el "64G at world 8 rc $?: $(head -n1 $R/big.txt)"
timeout 60 $B --world 2 --impl detcoll --paths direct,one_shot --offset 8 --sizes 1K --mode graph > $R/off8.txt 2>&1
el "offset 8 rc $?: $(grep -c '^all_' $R/off8.txt) rows, $(grep -c 'left out' $R/off8.txt) left-out lines"
timeout 60 $B --world 2 --impl nccl --sizes 1K --out $R/nccl-only.txt > $R/nccl-only.err 2>&1
el "nccl only on virtual ranks rc $?: $(head -n1 $R/nccl-only.err); out file there: $([ -e $R/nccl-only.txt ] && echo yes || echo no)"
cat scratch/rev > $R/commit.txt
el done; save
