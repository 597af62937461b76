# call_lib.sh: what every call script here begins with (each sources it from scratch/, where both are
# copied): the environment of every call, the results folder $R packed into $OUT/r.tgz (save), a timeline
# (el), whether N of the call's 575 s are left (left N), the build of the carried tree into /tmp/b with
# sqlite3.h and libsqlite3.a from .devdeps2 (/tmp/dd), and build_old: an old tree bootstrapped here
# (scratch/old, bench_detcoll only, unless told otherwise) built into /tmp/bo, for the A/B calls.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=/tmp/r; mkdir -p $R
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/timeline.txt; }
left() { [ $(( 575 - ($(date +%s) - t0) )) -ge "$1" ]; }
save() { ( cd $R && tar czf $OUT/r.tgz . ); }
tar xJf .devdeps2/boot.tar.xz; mkdir -p /tmp/dd && tar xJf .devdeps2/sq.tar.xz -C /tmp/dd
bash tests/device_build.sh /tmp/b /tmp/dd > $R/build.txt 2>&1 || { cat $R/build.txt; save; exit 1; }
el "build: $(tail -1 $R/build.txt)"
build_old() { # build_old [TREE [MAKE TARGET]]: default scratch/old's kernels/bench_detcoll
  local tree=${1:-scratch/old} target=${2:-kernels/bench_detcoll}
  mkdir -p /tmp/bo && ( cd /tmp/bo && $OLDPWD/$tree/configure -q --disable-shared --disable-maintainer-mode \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" SQLITE_CFLAGS=-I/tmp/dd \
    SQLITE_LIBS="/tmp/dd/libsqlite3.a -lm -ldl -lpthread" > conf.out 2>&1 && make -j32 -s $target > make.out 2>&1 ) \
    || { tail -n 20 /tmp/bo/conf.out /tmp/bo/make.out; save; exit 1; }
}
