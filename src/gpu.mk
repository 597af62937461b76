# src/gpu.mk: the gpu backend -- launchers (threads, mpi), CPU affinity
# (hwloc), the reference folds (fold.h: on the CPU for the tests, on the GPU
# for the backend's checks) and the NCCL baseline -- and its tests (skip
# with 77 where there is no GPU).
libtune_la_SOURCES += src/gpu.c src/launch.h src/launch_threads.c src/launch_table.c src/topo.h src/topo.c \
  src/fold.h src/fold.c

check_PROGRAMS += tests/test_fold tests/test_launch tests/test_topo
tests_test_fold_SOURCES = tests/test_fold.c tests/tap.h
tests_test_launch_SOURCES = tests/test_launch.c tests/tap.h
tests_test_topo_SOURCES = tests/test_topo.c tests/tap.h
TESTS += tests/test_fold tests/test_launch tests/test_topo

if HAVE_MPI
libtune_la_SOURCES += src/launch_mpi.c src/fleet.c
libtune_la_LIBADD += $(MPI_LIBS)
endif

if HAVE_CUDA
libtune_la_SOURCES += src/gpu_fold.h src/gpu_fold.cu src/gpu_impl.h src/gpu_detcoll.c src/gpu_nccl.c
src/gpu_fold.lo: $(top_srcdir)/src/fold.h $(top_srcdir)/src/gpu_fold.h $(top_srcdir)/kernels/dc_table.h
libtune_la_LIBADD += kernels/libdetcoll.la
if HAVE_NCCL
libtune_la_LIBADD += $(NCCL_LDFLAGS) $(NCCL_LIBS)
endif

check_PROGRAMS += tests/gpu_backend tests/gpu_fold
TESTS += tests/gpu_backend tests/gpu_fold
tests_gpu_fold_SOURCES = tests/gpu_fold.c tests/gpu_common.h tests/tap.h
tests_gpu_backend_SOURCES = tests/gpu_backend.c tests/tap.h

if HAVE_MPI
check_PROGRAMS += tests/mpi_backend_main
tests_mpi_backend_main_SOURCES = tests/mpi_backend_main.c tests/tap.h
dist_check_SCRIPTS += tests/mpi_backend.sh tests/gpu_mpi_tune.sh
TESTS += tests/mpi_backend.sh tests/gpu_mpi_tune.sh
endif
endif
