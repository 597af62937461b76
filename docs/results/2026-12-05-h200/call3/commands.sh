#!/usr/bin/env bash
# one-H200 A/B of the push path: scratch/rev (the input line loaded before dc_begin) against c15a98d
# (scratch/pold), virtual ranks, graph mode, worlds 2 and 8, bf16 and fp32, four alternating rounds
# (old new new old); then the GPU and MPI suites on the new build.
. "$(dirname "$0")/call_lib.sh"
mkdir -p /tmp/bo && ( cd /tmp/bo && $OLDPWD/scratch/pold/configure -q --disable-shared --disable-maintainer-mode \
  NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" SQLITE_CFLAGS=-I/tmp/dd \
  SQLITE_LIBS="/tmp/dd/libsqlite3.a -lm -ldl -lpthread" > conf.out 2>&1 && make -j32 -s kernels/bench_detcoll > make.out 2>&1 ) \
  || { tail -20 /tmp/bo/conf.out /tmp/bo/make.out; save; exit 1; }
el "built new $(cat scratch/rev) and old c15a98d"
for w in 2 8; do for d in bf16 fp32; do
  A="--world $w --op all -d $d --impl detcoll --paths push,auto --sizes 1K,4K,16K,64K,256K --mode graph"
  r=0; for who in old new new old; do r=$((r+1))
    B=/tmp/b/kernels/bench_detcoll; [ $who = old ] && B=/tmp/bo/kernels/bench_detcoll
    timeout 60 $B $A > $R/w$w-$d-round$r-$who.txt 2>&1; el "w$w $d round $r $who rc $?"
  done; save
done; done
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
left 240 && { TUNE_NO_BENCH=1 timeout $(( 575 - ($(date +%s) - t0) - 10 )) bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"; }
el done; save
