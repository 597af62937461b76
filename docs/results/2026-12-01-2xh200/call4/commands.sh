#!/usr/bin/env bash
# two-H200 call, part 2: build, the job under mpirun (--launcher mpi), a fleet of 2 nodes x 1 GPU, the GPU suite.
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { [ $(( 560 - ($(date +%s) - t0) )) -ge "$1" ]; }
bash tests/device_build.sh /tmp/b .devdeps > $R/build.txt 2>&1 || { cat $R/build.txt; exit 1; }
el build
export TUNE_SRCDIR=$PWD TUNE_BUILD_DIR=/tmp/b TUNE_GIT_REV=$(cat scratch/rev)
T=/tmp/b/src/tune; mkdir -p /tmp/m1 /tmp/f1
( time timeout 110 mpirun -np 2 --bind-to none $T --gpus 2 --launcher mpi --db /tmp/m1/tune.db --header /tmp/m1/thresholds.h --no-report ) > $R/mpi.log 2>&1; el "mpi job rc $?"; tail -6 $R/mpi.log
cat > /tmp/f1/one.sh <<'EOS'
#!/usr/bin/env bash
export CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_RANK
exec "$@"
EOS
chmod +x /tmp/f1/one.sh
( time TUNE_FLEET_NODE_SIZE=1 timeout 120 mpirun -np 2 --bind-to none -x TUNE_FLEET_NODE_SIZE -x TUNE_SRCDIR -x TUNE_BUILD_DIR -x TUNE_GIT_REV -x NCCL_NVLS_ENABLE /tmp/f1/one.sh $T fleet --gpus 1 --db /tmp/f1/fleet.db ) > $R/fleet.log 2>&1; el "fleet rc $?"; tail -12 $R/fleet.log
ls -R /tmp/f1 > $R/fleet-files.txt 2>&1
if left 200; then TUNE_NO_BENCH=1 timeout $(( 560 - ($(date +%s) - t0) - 15 )) bash tests/device_run.sh /tmp/b $R/suite > $R/suite.txt 2>&1; el "suite rc $?"; cat $R/suite/summary.txt; fi
cp /tmp/m1/thresholds.h $R/thresholds-mpi.h 2>/dev/null; gzip -c /tmp/m1/tune.db > $R/mpi.db.gz 2>/dev/null
( cd /tmp/f1 && tar czf $R/fleet.tgz --exclude='*.db' . ); gzip -c /tmp/f1/fleet.db > $R/fleet.db.gz 2>/dev/null
el done
cd $R && tar czf $OUT/ry.tgz . && cd - >/dev/null
