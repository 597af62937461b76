#!/usr/bin/env bash
# two-H200 call at scratch/rev: build; bench_detcoll beside NCCL and NCCL symmetric with --p2p (issue 11's
# sizes, eager and graph); the registered all_gather's copy_engine path at an aligned and a 16-byte offset
# (graph and eager); job A fresh, job B begun with A's header (issue 14: compare-headers), verify of A's header,
# compare B against A; every GPU and MPI test (gpu_mpi_tune.sh needs two GPUs).
. "$(dirname "$0")/call_lib.sh"
nvidia-smi topo -m > $R/topo.txt 2>&1
B=/tmp/b/kernels/bench_detcoll
timeout 170 $B --world 2 --op all --sizes 1K,4K,16K,64K,256K,1M,16M,64M,256M --mode both --p2p > $R/bench.txt 2>&1
el "bench rc $?"; grep "^#   " $R/bench.txt | head -12 | tee -a $R/timeline.txt; save
for off in 0 16; do timeout 25 $B --world 2 --op all_gather --impl detcoll --paths copy_engine,direct,auto_reg --sizes 128M --mode both --offset $off > $R/ce-off$off.txt 2>&1; el "ce offset $off rc $?"; done
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD TUNE_GIT_REV=$(cat scratch/rev) TUNE_BUILD_DIR=/tmp/b
T=/tmp/b/src/tune; mkdir -p /tmp/A /tmp/B /tmp/V
if left 100; then ( time timeout 95 $T --gpus 2 --db /tmp/A/tune.db --header /tmp/A/thresholds.h --no-report ) > $R/A.log 2>&1; el "job A rc $?: $(grep real $R/A.log)"; grep "regret (" $R/A.log | tee -a $R/timeline.txt; save; fi
if left 90 && [ -f /tmp/A/thresholds.h ]; then ( time DC_THRESHOLDS_FILE=/tmp/A/thresholds.h timeout 85 $T --gpus 2 --db /tmp/B/tune.db --header /tmp/B/thresholds.h --no-report ) > $R/B.log 2>&1; el "job B rc $?: $(grep real $R/B.log)"; grep "regret (" $R/B.log | tee -a $R/timeline.txt
  $T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/B/tune.db > $R/agree.txt 2>&1; grep -E "^(agreement|differing)" $R/agree.txt | tee -a $R/timeline.txt
  $T compare-headers /tmp/A/thresholds.h /tmp/B/thresholds.h --db /tmp/A/tune.db --db-b /tmp/B/tune.db > $R/agree-two.txt 2>&1
  grep -E "^on both" $R/agree-two.txt | tee -a $R/timeline.txt; save; fi
if left 40 && [ -f /tmp/A/thresholds.h ]; then ( time timeout 35 $T verify --gpus 2 --header /tmp/A/thresholds.h --db /tmp/V/verify.db ) > $R/verify.txt 2>&1; el "verify rc $?: $(grep real $R/verify.txt)"; fi
[ -f /tmp/B/tune.db ] && { $T compare --db /tmp/B/tune.db --baseline /tmp/A/tune.db > $R/compare.txt 2>&1; el "compare rc $?"; }
for f in A B; do [ -f /tmp/$f/thresholds.h ] && cp /tmp/$f/thresholds.h $R/thresholds-$f.h; [ -f /tmp/$f/tune.db ] && $T export --db /tmp/$f/tune.db --format csv --table regret --out $R/regret-$f.csv; done
[ -f /tmp/A/tune.db ] && xz -c /tmp/A/tune.db > $R/A.db.xz; save
if left 150; then TUNE_NO_BENCH=1 timeout $(( 575 - ($(date +%s) - t0) - 10 )) bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"; fi
el done; save
