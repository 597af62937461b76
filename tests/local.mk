# tests/local.mk: test programs shared by every stage. Each stage's own
# local.mk adds its tests to TESTS and check_PROGRAMS.
EXTRA_DIST += tests/tap.h
