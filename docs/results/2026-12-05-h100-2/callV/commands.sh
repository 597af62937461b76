#!/usr/bin/env bash
# one-GPU call: issue 11's virtual-rank target ("no size more than 5% slower than today") for scratch/rev's
# kernels with DC_PDL unset, against 716c89e's (scratch/old, the last kernels measured on two GPUs): every
# forced detcoll path, world 2 on one GPU, bf16, graph and eager, four alternating rounds (old new new old),
# so drift falls on both sides; between rounds 2 and 3 every GPU and MPI test (device_run.sh, no bench) and
# mpi_stop.sh with scratch/sqbin's sqlite3.
. "$(dirname "$0")/call_lib.sh"
export PATH=$PWD/scratch/sqbin:$PATH TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
build_old
el "built new $(cat scratch/rev) and old 716c89e"
nvidia-smi topo -m > $R/topo.txt 2>&1
A="--world 2 --op all --impl detcoll --paths all --sizes 1K,16K,64K,256K,1M,4M,16M,64M,256M --mode both"
round() { B=/tmp/b/kernels/bench_detcoll; [ $2 = old ] && B=/tmp/bo/kernels/bench_detcoll
  timeout 100 $B $A > $R/round$1-$2.txt 2>&1; el "round $1 $2 rc $?"; save; }
round 1 old; round 2 new
if left 330; then TUNE_NO_BENCH=1 timeout 300 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1
  el "suites rc $?: $(tail -1 $R/suite.txt)"; grep -E "PASS|FAIL|SKIP" $R/suite.txt | tee -a $R/timeline.txt; save; fi
if left 40; then timeout 35 bash tests/mpi_stop.sh > $R/mpi_stop.log 2>&1
  el "mpi_stop rc $?: $(grep -c '^ok ' $R/mpi_stop.log) ok, $(grep -c '^not ok ' $R/mpi_stop.log) not ok"; fi
if left 150; then round 3 new; round 4 old; fi
cat scratch/rev > $R/commit.txt
el done; save
