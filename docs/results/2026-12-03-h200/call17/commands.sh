#!/usr/bin/env bash
# one-H200 call at 7322080 (stab_faster's two-look rule) against old1 (8d69013's tuner/crossover.c: a win decided at
# the first look): gpu_tune.sh, then three chained jobs of each on 2 virtual ranks, interleaved O1 N1 O2 N2 O3 N3
# (each job after the first of its chain begun with the previous one's header), and the agreement of each pair.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
left() { [ $(( $(date +%s) - t0 )) -lt $1 ]; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps/boot.tar.xz
bash tests/device_build.sh /tmp/b .devdeps/sq > $R/build.txt 2>&1 &
( v=old1; rm -rf /tmp/src-$v; mkdir -p /tmp/src-$v; tar cf - --exclude=./.git . | tar xf - -C /tmp/src-$v
  cp -r scratch/var/$v/. /tmp/src-$v/
  mkdir -p /tmp/b-$v && cd /tmp/b-$v && /tmp/src-$v/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
    SQLITE_CFLAGS="-I/tmp/src-$v/.devdeps/sq" SQLITE_LIBS="/tmp/src-$v/.devdeps/sq/libsqlite3.a -lm -ldl -lpthread" > configure.out 2>&1 &&
  make -j8 -s all > $R/build-$v.txt 2>&1 ) &
wait
el "builds: $(tail -1 $R/build.txt); $(ls /tmp/b-old1/src/tune)"
nvidia-smi > $R/env.txt 2>&1; nproc >> $R/env.txt
export TUNE_BIN=/tmp/b/src/tune TUNE_SRCDIR=$PWD
run_t() { local t=$1 n=$(basename $1) s=$(date +%s); timeout $2 $t > $R/$n.log 2>&1; local rc=$?
  el "$n rc $rc: $(grep -c '^ok' $R/$n.log) ok, $(grep -c '^not ok' $R/$n.log) not ok, $(( $(date +%s) - s )) s"; save; }
run_t tests/gpu_tune.sh 60
export TUNE_GIT_REV=$(cat scratch/rev)
job() { local n=$1 bin=$2 lim=$3; shift 3; mkdir -p /tmp/$n
  ( time env TUNE_BUILD_DIR=$(dirname $(dirname $bin)) "$@" timeout $lim $bin --gpus 2 --virtual-ranks --db /tmp/$n/tune.db --header /tmp/$n/thresholds.h --no-report ) > $R/$n.log 2>&1
  el "job $n rc $?: $(grep real $R/$n.log)"; cp /tmp/$n/thresholds.h $R/thresholds-$n.h 2>/dev/null; }
pair() { /tmp/b/src/tune compare-headers /tmp/$1/thresholds.h /tmp/$2/thresholds.h --db /tmp/$2/tune.db > $R/agree-$1$2.txt 2>&1
  /tmp/b/src/tune compare-headers /tmp/$1/thresholds.h /tmp/$2/thresholds.h --db /tmp/$1/tune.db > $R/agree-$1$2-on$1.txt 2>&1
  el "$1 -> $2: $(grep -h '^agreement\|^differing' $R/agree-$1$2.txt | tr '\n' ' ')"; }
job O1 /tmp/b-old1/src/tune 120; job N1 /tmp/b/src/tune 120; save
for k in 2 3; do left 430 || break
  p=$((k-1)); job O$k /tmp/b-old1/src/tune 120 DC_THRESHOLDS_FILE=/tmp/O$p/thresholds.h; pair O$p O$k
  job N$k /tmp/b/src/tune 120 DC_THRESHOLDS_FILE=/tmp/N$p/thresholds.h; pair N$p N$k; save; done
for f in O1 O2 O3 N1 N2 N3; do [ -f /tmp/$f/tune.db ] || continue; grep -i "regret" $R/$f.log | tail -2 | sed "s/^/$f: /"
  /tmp/b/src/tune export --db /tmp/$f/tune.db --format csv --table regret --out $R/regret-$f.csv; gzip -c /tmp/$f/tune.db > $OUT/$f.db.gz; done > $R/regret.txt 2>&1
el done; save
