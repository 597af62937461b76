# kernels/local.mk: libdetcoll (CUDA C, compiled by nvcc under libtool), its
# GPU tests (skip with 77 where no GPU) and the bench program.
# Installed under include/detcoll/ (detcoll.pc points there).
pkginclude_HEADERS = kernels/dc_table.h
# Outside the HAVE_CUDA block: a tarball made by a build without CUDA must
# still hold what a CUDA build compiles.
EXTRA_DIST += kernels/detcoll.pc.in kernels/bench_pull.cu kernels/dc_table_ref.h

if HAVE_CUDA
lib_LTLIBRARIES += kernels/libdetcoll.la
kernels_libdetcoll_la_SOURCES = kernels/detcoll.h kernels/dc_device.cuh kernels/dc_comm.cu \
  kernels/dc_all_gather.cu kernels/dc_all_reduce.cu kernels/dc_reduce_scatter.cu kernels/dc_push.cu \
  kernels/dc_direct.cu kernels/dc_pipe.cu kernels/dc_delay.cu \
  kernels/dc_table.c kernels/dc_table.h kernels/dc_table_ref.h kernels/thresholds.h
# Only the API (DC_API in detcoll.h, dc_table.h) is exported; -version-info
# is current:revision:age of that interface (2: dc_comm_info grew a field).
kernels_libdetcoll_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
kernels_libdetcoll_la_LDFLAGS = -version-info 2:0:0
kernels_libdetcoll_la_LIBADD = $(CUDA_LDFLAGS) $(CUDA_LIBS) -lstdc++
pkginclude_HEADERS += kernels/detcoll.h
pkgconfig_DATA = kernels/detcoll.pc

# -fmad=false: the determinism contract forbids FMA contraction.
SUFFIXES += .cu
.cu.lo:
	$(AM_V_GEN)$(LIBTOOL) $(AM_V_lt) --tag=CXX --mode=compile $(top_srcdir)/build-aux/nvcc-wrap \
	  $(NVCC) -std=c++17 -O3 -fmad=false -Xcompiler=-fvisibility=hidden $(NVCC_GENCODE) $(DEFS) $(DC_DISPATCH_FLAGS) $(DEFAULT_INCLUDES) \
	  -I$(top_srcdir)/kernels -I$(top_srcdir)/src -I$(top_builddir) $(CUDA_CPPFLAGS) --compiler-options=-Wall,-Wextra -c -o $@ $<

# Every .cu includes the shared device header and the public one.
$(kernels_libdetcoll_la_OBJECTS): $(top_srcdir)/kernels/dc_device.cuh $(top_srcdir)/kernels/detcoll.h \
  $(top_srcdir)/kernels/dc_table.h $(top_srcdir)/kernels/dc_table_ref.h

DC_GPU_LDADD = kernels/libdetcoll.la $(CUDA_LDFLAGS) $(CUDA_LIBS) -lstdc++ -lm
DC_GPU_TESTS = tests/gpu_paths tests/gpu_auto tests/gpu_graph tests/gpu_errors tests/gpu_delay \
  tests/gpu_random tests/gpu_ipc tests/gpu_sanitize tests/gpu_table
check_PROGRAMS += $(DC_GPU_TESTS)
TESTS += $(DC_GPU_TESTS)
tests_gpu_paths_SOURCES = tests/gpu_paths.c tests/gpu_common.h
tests_gpu_paths_LDADD = $(DC_GPU_LDADD)
tests_gpu_auto_SOURCES = tests/gpu_auto.c tests/gpu_common.h
tests_gpu_auto_LDADD = $(DC_GPU_LDADD)
tests_gpu_graph_SOURCES = tests/gpu_graph.c tests/gpu_common.h
tests_gpu_graph_LDADD = $(DC_GPU_LDADD)
tests_gpu_errors_SOURCES = tests/gpu_errors.c tests/gpu_common.h
tests_gpu_errors_LDADD = $(DC_GPU_LDADD)
tests_gpu_delay_SOURCES = tests/gpu_delay.c tests/gpu_common.h
tests_gpu_delay_LDADD = $(DC_GPU_LDADD)
tests_gpu_random_SOURCES = tests/gpu_random.c tests/gpu_common.h
tests_gpu_random_LDADD = $(DC_GPU_LDADD)
tests_gpu_ipc_SOURCES = tests/gpu_ipc.c tests/gpu_common.h
tests_gpu_ipc_LDADD = $(DC_GPU_LDADD) -lpthread
tests_gpu_sanitize_SOURCES = tests/gpu_sanitize.c tests/gpu_common.h
tests_gpu_sanitize_LDADD = $(DC_GPU_LDADD)
tests_gpu_table_SOURCES = tests/gpu_table.c tests/gpu_common.h
tests_gpu_table_LDADD = $(DC_GPU_LDADD)
dist_check_SCRIPTS += tests/exports.sh
TESTS += tests/exports.sh

# The bench: src/size.c for its sizes, src/fold.c for the seeded inputs and
# reference folds (their own objects: per-target CFLAGS rename them apart
# from libtune's); its SM copy kernel (bench_pull.cu) goes through the .cu.lo
# rule above and is linked as an object (automake makes no program objects
# from .cu sources).
noinst_PROGRAMS += kernels/bench_detcoll
kernels_bench_detcoll_SOURCES = kernels/bench_detcoll.c kernels/bench_opts.h kernels/bench_opts.c \
  src/size.c src/db_file.h src/db_file.c \
  src/fold.h src/fold.c
kernels_bench_detcoll_CFLAGS = $(AM_CFLAGS)
kernels_bench_detcoll_LDADD = kernels/bench_pull.lo $(DC_GPU_LDADD)
if HAVE_NCCL
kernels_bench_detcoll_LDADD += $(NCCL_LDFLAGS) $(NCCL_LIBS)
endif
endif

# The bench's command line, parsed without CUDA: tests/bench_args prints
# what bench_parse made of its arguments, tests/bench_args.sh checks it.
check_PROGRAMS += tests/bench_args
tests_bench_args_SOURCES = tests/bench_args.c kernels/bench_opts.h kernels/bench_opts.c \
  src/size.c src/db_file.h src/db_file.c
tests_bench_args_CFLAGS = $(AM_CFLAGS)
dist_check_SCRIPTS += tests/bench_args.sh
TESTS += tests/bench_args.sh
