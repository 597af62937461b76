#!/usr/bin/env bash
# one-GPU call at scratch/rev: programmatic dependent launch (DC_PDL) off against on, every detcoll path,
# world 2 (virtual ranks on one GPU; one GPU per rank where there are two), bf16, graph and eager, two
# alternating rounds (off on), then every GPU and MPI test (device_run.sh, no bench: among them
# gpu_graph, gpu_random and gpu_sanitize again with DC_PDL=1) and mpi_stop.sh, with this machine's sqlite3
# command carried in scratch/sqbin; two more rounds (on off) if there is time.
. "$(dirname "$0")/call_lib.sh"
export PATH=$PWD/scratch/sqbin:$PATH TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
el "sqlite3: $(sqlite3 :memory: 'select sqlite_version()' 2>&1)"
nvidia-smi topo -m > $R/topo.txt 2>&1
A="--world 2 --op all --impl detcoll --paths all --sizes 1K,4K,16K,64K,1M,16M,256M --mode both"
round() { DC_PDL=$2 timeout 80 /tmp/b/kernels/bench_detcoll $A > $R/round$1-pdl$2.txt 2>&1; el "round $1 DC_PDL=$2 rc $?"; save; }
round 1 0; round 2 1
if left 260; then TUNE_NO_BENCH=1 timeout 300 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1
  el "suites rc $?: $(tail -1 $R/suite.txt)"; grep -E "PASS|FAIL|SKIP" $R/suite.txt | tee -a $R/timeline.txt; save; fi
if left 170; then round 3 1; round 4 0; fi
if left 40; then timeout 35 bash tests/mpi_stop.sh > $R/mpi_stop.log 2>&1
  el "mpi_stop rc $?: $(grep -c '^ok ' $R/mpi_stop.log) ok, $(grep -c '^not ok ' $R/mpi_stop.log) not ok"; fi
echo "$(cat scratch/rev)" > $R/commit.txt
el done; save
