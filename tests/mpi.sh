# mpi.sh: sourced after tap.sh by the tests that run tune under mpirun on
# the sim backend (mpi_sim, mpi_agree, fleet_sim, fleet_small,
# fleet_outputs, mpi_stop): they skip (77) without mpirun or sqlite3; Open MPI runs as
# root; ASan's leak check is off (MPI's own allocations). `mpi ARGS` runs
# mpirun oversubscribed and unbound (2 cores run up to 16 ranks), with
# -np $mpi_np when set, under a timeout of $mpi_timeout (default 300) s.
command -v mpirun >/dev/null 2>&1 || { echo "1..0 # SKIP no mpirun"; exit 77; }
command -v sqlite3 >/dev/null || { echo "1..0 # SKIP sqlite3 command not installed"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0
mpi() { timeout "${mpi_timeout:-300}" mpirun --oversubscribe --bind-to none ${mpi_np:+-np "$mpi_np"} "$@"; }
