#!/usr/bin/env bash
# one-GPU call: which commit since 716c89e made three small forced all_gather rows slower in graph mode on 2
# virtual ranks (callV: direct 1 KiB +5.6%, pipeline 1 KiB +5.1%, pipeline 16 KiB +8.1%)? bench_detcoll of
# 716c89e (scratch/old), of five commits between (scratch/bis/<commit>, bootstrapped as scratch/old is,
# carried as scratch/bis.tar.xz) and of scratch/rev, all_gather's forced paths at 1, 16 and 64 KiB, graph
# mode, in four rounds, each round taking the trees in another rotation, so drift falls on every tree alike.
. "$(dirname "$0")/call_lib.sh"
build_old
mkdir -p scratch && tar xJf scratch/bis.tar.xz -C scratch
trees="old 92dfaba d987c99 b42dec4 cf22ba0 ac551e4 new"
for c in 92dfaba d987c99 b42dec4 cf22ba0 ac551e4; do
  ( mkdir -p /tmp/bb/$c && cd /tmp/bb/$c && $OLDPWD/scratch/bis/$c/configure -q --disable-shared \
    --disable-maintainer-mode NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" SQLITE_CFLAGS=-I/tmp/dd \
    SQLITE_LIBS="/tmp/dd/libsqlite3.a -lm -ldl -lpthread" > conf.out 2>&1 && make -j6 -s kernels/bench_detcoll \
    > make.out 2>&1 || tail -n 20 conf.out make.out > $R/build-$c.txt ) &
done
wait
el "built: $(ls /tmp/bb/*/kernels/bench_detcoll | wc -l) of 5 between, old and new"
bin() { case $1 in old) echo /tmp/bo/kernels/bench_detcoll ;; new) echo /tmp/b/kernels/bench_detcoll ;;
  *) echo /tmp/bb/$1/kernels/bench_detcoll ;; esac; }
A="--world 2 --op all_gather --impl detcoll --paths single_block,fused,multi_block,pipeline,direct --sizes 1K,16K,64K --mode graph"
set -- $trees
for r in 1 2 3 4; do
  for t in "$@"; do timeout 40 $(bin $t) $A > $R/round$r-$t.txt 2>&1; el "round $r $t rc $?"; done
  save; set -- "${@:2}" "$1"; set -- "${@:2}" "$1"
done
cat scratch/rev > $R/commit.txt
el done; save
