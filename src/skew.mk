# src/skew.mk: tune skew (rank-skew calibration) -- owned by its stage. The
# command lives in libtune so its test can drive it without the binary; its
# gnuplot template (plots/skew.gp) is built and shipped by plots/local.mk.
libtune_la_SOURCES += src/skew.h src/skew.c

check_PROGRAMS += tests/test_skew
tests_test_skew_SOURCES = tests/test_skew.c
TESTS += tests/test_skew

# GPU: 2 virtual ranks, delay accuracy and residences (skips 77 without a GPU).
dist_check_SCRIPTS += tests/gpu_skew.sh
TESTS += tests/gpu_skew.sh
