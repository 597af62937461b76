#!/usr/bin/env bash
# one-H200 call at scratch/rev: (1) the copy engine's rate against src offset, dst offset and size, alone and
# split (scratch/cecopy.cu); (2) the GPU suites at this commit (device_run.sh, no bench); (3) bb43e1f's bench
# (docs/results/2026-12-01-h200/call13/oldbench.c) against bb43e1f's library (built on the CPU machine) and this
# commit's, alternating, two rounds: issue 11's virtual-rank target after ac551e4.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
nvidia-smi > $R/env.txt 2>&1
nvcc -O2 -gencode=arch=compute_90,code=sm_90 -o /tmp/cecopy scratch/cecopy.cu > $R/cecopy-build.txt 2>&1; el "cecopy build rc $?"
timeout 60 /tmp/cecopy > $R/cecopy-1.txt 2>&1; el "cecopy rc $?"
tar xJf .devdeps2/boot.tar.xz; mkdir -p /tmp/dd && tar xJf .devdeps2/sq.tar.xz -C /tmp/dd
bash tests/device_build.sh /tmp/b /tmp/dd/sq > $R/build.txt 2>&1 || { cat $R/build.txt; save; exit 1; }
el "build: $(tail -1 $R/build.txt)"
gcc -std=c11 -D_GNU_SOURCE -c docs/results/2026-12-01-h200/call13/oldbench.c -I kernels -I /tmp/b/kernels -I /usr/local/cuda/include -o /tmp/oldbench.o &&
  nvcc -o /tmp/oldbench-cur /tmp/oldbench.o /tmp/b/kernels/.libs/libdetcoll.a -lcuda; el "oldbench-cur rc $?"
python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" scratch/bin/oldbench-old.xz /tmp/oldbench-old && chmod +x /tmp/oldbench-old
save
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
TUNE_NO_BENCH=1 timeout 300 bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suites rc $?: $(tail -1 $R/suite.txt)"; save
for round in 1 2; do for v in old cur; do [ $round = 2 ] && v=$([ $v = old ] && echo cur || echo old)
  echo "##### $v round $round" >> $R/oldbench.txt
  timeout 60 /tmp/oldbench-$v --world 8 --op all_reduce --mode graph --sizes 1K,4M,16M,64M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  timeout 60 /tmp/oldbench-$v --world 4 --op all_gather --mode graph --sizes 1K,1M,16M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  for op in all_reduce all_gather reduce_scatter; do
    timeout 60 /tmp/oldbench-$v --world 2 --op $op --mode graph --sizes 1K,16K,64K,256K,1M,16M,64M >> $R/oldbench.txt 2>&1 || echo "rc $?" >> $R/oldbench.txt
  done; el "oldbench $v round $round"; save
done; done
timeout 60 /tmp/cecopy > $R/cecopy-2.txt 2>&1; el "cecopy again rc $?"
el done; save
