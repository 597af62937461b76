#!/usr/bin/env bash
# one-H200 call at scratch/rev: (1) the copy engine with k = 1, 2, 4 copies at once, eager and in a graph, aligned and
# not (scratch/cecopy.cu conc), and bench_detcoll's copy_engine and direct all_gather at chunks 2^27 and 2^27 + 16;
# (2) bb43e1f's bench against bb43e1f's library and this commit's, all_reduce of 8 virtual ranks at 1 KiB, four
# rounds alternating; (3) four chained jobs H1..H4 on 2 virtual ranks (each after the first begun with the previous
# one's header; H1 with the checked-in one) and the agreement of each pair: issue 14 after ac551e4.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
left() { [ $(( $(date +%s) - t0 )) -lt $1 ]; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
nvidia-smi > $R/env.txt 2>&1
nvcc -O2 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o /tmp/cecopy scratch/cecopy.cu > $R/cecopy-build.txt 2>&1
timeout 60 /tmp/cecopy conc > $R/cecopy-conc.txt 2>&1; el "cecopy conc rc $?"
tar xJf .devdeps2/boot.tar.xz; mkdir -p /tmp/dd && tar xJf .devdeps2/sq.tar.xz -C /tmp/dd
bash tests/device_build.sh /tmp/b /tmp/dd/sq > $R/build.txt 2>&1 || { cat $R/build.txt; save; exit 1; }
el "build: $(tail -1 $R/build.txt)"
B=/tmp/b/kernels/bench_detcoll
timeout 60 $B --world 2 --impl detcoll --mode both --paths copy_engine,direct --op all_gather --sizes 268435456,268435488 > $R/ce-bench.txt 2>&1; el "ce bench rc $?"
gcc -std=c11 -D_GNU_SOURCE -c docs/results/2026-12-01-h200/call13/oldbench.c -I kernels -I /tmp/b/kernels -I /usr/local/cuda/include -o /tmp/oldbench.o &&
  nvcc -o /tmp/oldbench-cur /tmp/oldbench.o /tmp/b/kernels/.libs/libdetcoll.a -lcuda; el "oldbench-cur rc $?"
python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" scratch/bin/oldbench-old.xz /tmp/oldbench-old && chmod +x /tmp/oldbench-old
for round in 1 2 3 4; do for v in old cur; do [ $((round % 2)) = 0 ] && v=$([ $v = old ] && echo cur || echo old)
  echo "##### $v round $round" >> $R/oldbench-w8.txt
  timeout 30 /tmp/oldbench-$v --world 8 --op all_reduce --mode graph --sizes 1K >> $R/oldbench-w8.txt 2>&1 || echo "rc $?" >> $R/oldbench-w8.txt
done; done; el "oldbench w8"; save
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD TUNE_GIT_REV=$(cat scratch/rev) TUNE_BUILD_DIR=/tmp/b
T=/tmp/b/src/tune
job() { local n=$1; shift; mkdir -p /tmp/$n
  ( time env "$@" timeout 120 $T --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; cp /tmp/$n/thresholds.h $R/thresholds-$n.h 2>/dev/null; }
pair() { $T compare-headers /tmp/$1/thresholds.h /tmp/$2/thresholds.h --db /tmp/$2/tune.db > $R/agree-$1$2.txt 2>&1
  $T compare-headers /tmp/$1/thresholds.h /tmp/$2/thresholds.h --db /tmp/$1/tune.db > $R/agree-$1$2-on$1.txt 2>&1
  el "$1 -> $2: $(grep -h '^agreement\|^differing' $R/agree-$1$2.txt | tr '\n' ' ')"; }
job H1; save
for k in 2 3 4; do left 440 || break; p=$((k-1)); job H$k DC_THRESHOLDS_FILE=/tmp/H$p/thresholds.h; pair H$p H$k; save; done
for f in H1 H2 H3 H4; do [ -f /tmp/$f/tune.db ] || continue; grep -i "regret" $R/$f.log | tail -2 | sed "s/^/$f: /"
  $T export --db /tmp/$f/tune.db --format csv --table regret --out $R/regret-$f.csv; gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done > $R/regret.txt 2>&1
el done; save
