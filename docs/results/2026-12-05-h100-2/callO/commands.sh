#!/usr/bin/env bash
# one-GPU call: issue 11's virtual-rank target against its own baseline, bb43e1f. bb43e1f's bench
# (docs/results/2026-12-01-h200/call13/oldbench.c, built here) linked against bb43e1f's library (with
# call23's oldbench-shim.c) and against this commit's (build/, ./tune check's configure), carried as
# scratch/bin/oldbench-{old,cur}.xz; graph mode, bf16, call23's sizes, four rounds old cur cur old.
# Nothing is built on the device.
set -u
export NCCL_NVLS_ENABLE=0
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/env.txt 2>&1
for v in old cur; do xz -dc scratch/bin/oldbench-$v.xz > /tmp/oldbench-$v && chmod +x /tmp/oldbench-$v; done
r=0; for v in old cur cur old; do r=$((r+1))
  echo "##### $v round $r" >> $R/oldbench.txt
  timeout 60 /tmp/oldbench-$v --world 8 --op all_reduce --mode graph --sizes 1K,4M,16M,64M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  timeout 60 /tmp/oldbench-$v --world 4 --op all_gather --mode graph --sizes 1K,1M,16M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  for op in all_reduce all_gather reduce_scatter; do
    timeout 60 /tmp/oldbench-$v --world 2 --op $op --mode graph --sizes 1K,16K,64K,256K,1M,16M,64M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  done; el "oldbench $v round $r"; save
done
cat scratch/rev > $R/commit.txt
el done; save
