# tuner/local.mk: the tuner stage -- crossover search and thresholds.h
# emission -- and the statistics every stage reports with (src/stats.c is
# host code of src/, built into libtune from here).
libtune_la_SOURCES += src/stats.h src/stats.c \
  tuner/crossover.h tuner/crossover.c \
  tuner/emit.h tuner/emit.c \
  tuner/stability.h tuner/stability.c \
  tuner/headers.h tuner/headers.c

check_PROGRAMS += tests/test_stats tests/test_crossover tests/test_emit tests/test_table tests/test_stability
TESTS += tests/test_stats tests/test_crossover tests/test_emit tests/test_table tests/test_stability
tests_test_stability_SOURCES = tests/test_stability.c
tests_test_stats_SOURCES = tests/test_stats.c
tests_test_crossover_SOURCES = tests/test_crossover.c
tests_test_emit_SOURCES = tests/test_emit.c
tests_test_table_SOURCES = tests/test_table.c tests/tap.h
# The emit test compiles a program against the header it writes: it needs
# the source tree's kernels/ (for dc_table.h) and the configured compiler.
tests_test_emit_CPPFLAGS = $(AM_CPPFLAGS) \
  -DTUNE_TEST_KERNELS_DIR=\"$(abs_top_srcdir)/kernels\" -DTUNE_TEST_CC=\"$(CC)\"
