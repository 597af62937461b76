#!/usr/bin/env bash
# one-GPU call: HEAD (push pipeline for 2 ranks, per-block seq words up to the comm's grid, push to 1 MiB)
# vs 7ab0d57 (old), alternating benches on virtual ranks, worlds 2, 4, 8; GPU tests touched by the change.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/old && tar xf scratch/old.tar -C /tmp/old && cp -r configure Makefile.in aclocal.m4 config.h.in build-aux .devdeps /tmp/old/
( cd /tmp/old && bash tests/device_build.sh /tmp/b0 .devdeps > $R/build0.txt 2>&1 ) &
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
wait; el build; tail -1 $R/build0.txt
for round in 1 2 3; do for v in b0 b; do
  echo "##### $v round $round" >> $R/ab.txt
  for w in 2 4 8; do
    timeout 60 /tmp/$v/kernels/bench_detcoll --world $w --op all --impl detcoll --mode graph --sizes 1K,8K,64K,512K,1M,16M >> $R/ab.txt 2>&1 || echo "rc $?" >> $R/ab.txt
  done
done; done
el ab
for t in gpu_paths gpu_errors gpu_graph gpu_random gpu_sanitize gpu_delay gpu_first_call.sh; do
  s0=$(date +%s)
  if [ -x /tmp/b/tests/$t ]; then TUNE_BIN=/tmp/b/src/tune timeout 200 /tmp/b/tests/$t > $R/$t.log 2>&1; else TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD timeout 200 bash tests/$t > $R/$t.log 2>&1; fi
  echo "$t rc=$? ok=$(grep -c '^ok' $R/$t.log) notok=$(grep -c '^not ok' $R/$t.log) $(( $(date +%s) - s0 ))s"
done
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
