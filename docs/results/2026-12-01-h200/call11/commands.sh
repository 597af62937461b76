#!/usr/bin/env bash
# one-GPU call: the new gpu_paths case (ranks at different alignments) against the kernels before the fix
# (the pipeline's form chosen from each rank's own alignment): it must fail there.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/pre && tar xf scratch/prefix.tar -C /tmp/pre && cp -r configure Makefile.in aclocal.m4 config.h.in build-aux .devdeps /tmp/pre/
cp scratch/newtests/gpu_common.h scratch/newtests/gpu_paths.c /tmp/pre/tests/
( cd /tmp/pre && bash tests/device_build.sh /tmp/bp .devdeps > $R/build.txt 2>&1 ) || { cat $R/build.txt; exit 1; }
el "build of $(cat scratch/prefix.rev) with the new gpu_paths"
timeout 200 /tmp/bp/tests/gpu_paths > $R/gpu_paths-prefix.log 2>&1; echo "gpu_paths rc=$? ok=$(grep -c '^ok' $R/gpu_paths-prefix.log) notok=$(grep -c '^not ok' $R/gpu_paths-prefix.log)"
grep -h "different alignments" $R/gpu_paths-prefix.log; grep -h "FAILED" $R/gpu_paths-prefix.log | head -5
el done
cd $R && tar czf $OUT/r.tgz . && cd - >/dev/null
