#!/usr/bin/env bash
# one-GPU call: two main jobs on 2 virtual ranks, the second begun with the first's header
# (DC_THRESHOLDS_FILE, as an installed header would be compiled in): issue 14's hysteresis;
# then bb43e1f's bench against bb43e1f's library and HEAD's, alternating (issue 11's virtual-rank target).
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/j1 /tmp/j2
( time timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/j1/tune.db --header /tmp/j1/thresholds.h --no-report ) > $R/A.log 2>&1; el "tune A rc $?"; tail -3 $R/A.log
( time DC_THRESHOLDS_FILE=/tmp/j1/thresholds.h timeout 110 $T --gpus 2 --virtual-ranks --db /tmp/j2/tune.db --header /tmp/j2/thresholds.h --no-report ) > $R/B.log 2>&1; el "tune B (begun with A's header) rc $?"; tail -3 $R/B.log
$T compare-headers /tmp/j1/thresholds.h /tmp/j2/thresholds.h --db /tmp/j2/tune.db > $R/agree.txt 2>&1; tail -20 $R/agree.txt
$T compare-headers /tmp/j1/thresholds.h /tmp/j2/thresholds.h --db /tmp/j1/tune.db > $R/agree-onA.txt 2>&1; sed -n 3,5p $R/agree-onA.txt
$T compare --db /tmp/j2/tune.db --baseline /tmp/j1/tune.db --no-plot > $R/compare.txt 2>&1; el "compare rc $?"
cp /tmp/j1/thresholds.h $R/thresholds-A.h; cp /tmp/j2/thresholds.h $R/thresholds-B.h
gzip -c /tmp/j1/tune.db > $R/A.db.gz; gzip -c /tmp/j2/tune.db > $R/B.db.gz
for v in old cur; do python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" scratch/oldbench-$v.xz scratch/oldbench-$v && chmod +x scratch/oldbench-$v; done
for round in 1 2; do for v in old cur; do
  echo "##### $v round $round" >> $R/oldbench.txt
  timeout 60 scratch/oldbench-$v --world 8 --op all_reduce --mode graph --sizes 1K,4M,16M,64M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  timeout 60 scratch/oldbench-$v --world 4 --op all_gather --mode graph --sizes 1K,1M,16M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  for op in all_reduce all_gather reduce_scatter; do
    timeout 60 scratch/oldbench-$v --world 2 --op $op --mode graph --sizes 1K,64K,1M,16M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  done
done; el "oldbench round $round"; done
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
