# tests/local.mk: tests of the shared conventions, the CLI and the whole
# pipeline on the sim backend. Each stage's own local.mk adds its tests to
# TESTS and check_PROGRAMS.
EXTRA_DIST += tests/tap.h tests/tap.sh tests/refused.sh tests/mpi.sh tests/device_run.sh tests/device_build.sh tests/mutate.py

AM_TESTS_ENVIRONMENT = TUNE_BIN='$(abs_top_builddir)/src/tune'; TUNE_SRCDIR='$(abs_top_srcdir)'; \
  CC='$(CC)'; export TUNE_BIN TUNE_SRCDIR CC;

check_PROGRAMS += tests/test_util
tests_test_util_SOURCES = tests/test_util.c tests/tap.h
TESTS += tests/test_util

check_PROGRAMS += tests/test_job_opts
tests_test_job_opts_SOURCES = tests/test_job_opts.c tests/tap.h
TESTS += tests/test_job_opts

check_PROGRAMS += tests/test_fleet
tests_test_fleet_SOURCES = tests/test_fleet.c tests/tap.h
TESTS += tests/test_fleet

# The shell tests, each listed once: shipped and run.
shell_tests = tests/cli.sh tests/sim_pipeline.sh tests/resume.sh tests/gpu_tune.sh \
  tests/gpu_first_call.sh tests/db_outputs.sh tests/export_out.sh tests/bad_input.sh \
  tests/resume_trust.sh tests/readonly_dir.sh tests/signals.sh tests/report_partial.sh \
  tests/progress_logs.sh tests/export_files.sh tests/install.sh tests/one_grid.sh tests/mpi_sim.sh \
  tests/table_env.sh tests/rebuilt_table.sh tests/floors.sh tests/stability_sim.sh \
  tests/paired_drift.sh tests/fleet_sim.sh tests/fleet_small.sh tests/replay.sh tests/fn_length.sh \
  tests/db_names.sh tests/resume_env.sh tests/header_readers.sh tests/compare_gate.sh \
  tests/wrapper.sh tests/mpi_agree.sh tests/mpi_stop.sh tests/merge_inputs.sh tests/fleet_outputs.sh tests/skew_sim.sh \
  tests/configure_opts.sh tests/dist_docs.sh tests/git_rev.sh tests/world_sizes.sh tests/readme.sh tests/wrong_results.sh
dist_check_SCRIPTS += $(shell_tests)
TESTS += $(shell_tests)
