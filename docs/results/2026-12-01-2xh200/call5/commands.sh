#!/usr/bin/env bash
# two-H200 call: the push kernel with its first line loaded before the prologue (working tree) against HEAD's push
# kernel (scratch/dc_push.old.cu), alternating, forced push path; the GPU suite; main job C with the change;
# a fleet of 2 nodes x 2 virtual ranks.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { [ $(( 570 - ($(date +%s) - t0) )) -ge "$1" ]; }
mkdir -p /tmp/o && cp -r . /tmp/o/ 2>/dev/null && cp scratch/dc_push.old.cu /tmp/o/kernels/dc_push.cu
( cd /tmp/o && bash tests/device_build.sh /tmp/bo .devdeps > $R/build-o.txt 2>&1 ) &
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
wait; el build; tail -1 $R/build-o.txt
for round in 1 2 3; do for v in b bo; do
  echo "##### $v round $round" >> $R/push-ab.txt
  timeout 40 /tmp/$v/kernels/bench_detcoll --world 2 --op all --impl detcoll --mode both --paths push --sizes 1K,4K,16K,64K,256K \
    >> $R/push-ab.txt 2>&1 || echo "rc $?" >> $R/push-ab.txt
done; done; el "push A/B"
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/j3 /tmp/f2
( time timeout 110 $T --gpus 2 --db /tmp/j3/tune.db --header /tmp/j3/thresholds.h --no-report ) > $R/C.log 2>&1; el "tune C rc $?"; grep -A12 "^summary" $R/C.log
cat > /tmp/f2/one.sh <<'EOS'
#!/usr/bin/env bash
export CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_RANK
exec "$@"
EOS
chmod +x /tmp/f2/one.sh
( time TUNE_FLEET_NODE_SIZE=1 timeout 120 mpirun -np 2 --bind-to none -x TUNE_FLEET_NODE_SIZE -x TUNE_SRCDIR -x TUNE_BUILD_DIR -x TUNE_GIT_REV -x NCCL_NVLS_ENABLE /tmp/f2/one.sh $T fleet --gpus 2 --db /tmp/f2/fleet.db ) > $R/fleet-vranks.log 2>&1; el "fleet vranks rc $?"; tail -8 $R/fleet-vranks.log
if left 230; then TUNE_NO_BENCH=1 timeout $(( 570 - ($(date +%s) - t0) - 12 )) bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suite rc $?"; cat $R/suite/summary.txt; fi
cp /tmp/j3/thresholds.h $R/thresholds-C.h 2>/dev/null; gzip -c /tmp/j3/tune.db > $R/C.db.gz 2>/dev/null
( cd /tmp/f2 && tar czf $R/fleet-vranks.tgz --exclude='*.db' . ); gzip -c /tmp/f2/fleet.db > $R/fleet-vranks.db.gz 2>/dev/null
el done
cd $R && tar czf $OUT/rz.tgz . && cd - >/dev/null
