#!/bin/sh
# mpi_backend.sh: the gpu backend under the mpi launcher: `mpirun -np 2` of
# tests/mpi_backend_main (two processes; on a one-GPU machine they share
# GPU 0). Skips (77) without mpirun or without an NVIDIA GPU device node.
set -u
command -v mpirun >/dev/null 2>&1 || { echo "1..0 # SKIP no mpirun"; exit 77; }
ls /dev/nvidia[0-9]* >/dev/null 2>&1 || { echo "1..0 # SKIP no GPU"; exit 77; }
bindir=$(dirname "${TUNE_BIN:?run through make check}")/..
prog=$bindir/tests/mpi_backend_main
[ -x "$prog" ] || { echo "Bail out! $prog not built"; exit 1; }
# Open MPI refuses root unless told; containers often run as root.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  exec mpirun -np 2 --oversubscribe --bind-to none "$prog"
