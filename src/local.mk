# src/local.mk: host C of the toolkit: conventions, CLI, engine, backends.
libtune_la_SOURCES += src/tune.h src/log.c src/param.c src/progress.h src/progress.c src/util.c src/db_file.h src/db_file.c src/size.c \
  src/cli.h src/cli.c src/opts.h src/opts.c src/cfg.h src/cfg.c src/backend.h src/backends.c src/sim.h src/sim.c \
  src/engine.h src/engine.c db/query.h db/query.c \
  src/job_opts.h src/job_opts.c src/compare.h src/compare.c src/verify.h src/verify.c src/replay.h src/replay.c \
  src/fleet.h src/fleet_analyze.c db/fleet_db.h db/fleet_db.c plots/fleet_report.h plots/fleet_report.c

bin_PROGRAMS += src/tune
src_tune_SOURCES = src/main.c
src_tune_CPPFLAGS = $(AM_CPPFLAGS) -DTUNE_ABS_SRCDIR=\"$(abs_top_srcdir)\" \
  -DTUNE_ABS_BUILDDIR=\"$(abs_top_builddir)\"
src_tune_LDADD = libtune.la $(SQLITE_LIBS) $(HWLOC_LIBS) -lm
# The revision tune is built from (tune --version, every run, every header):
# git-rev runs at every make and rewrites the header, and so rebuilds
# util.c, only when the revision changes.
BUILT_SOURCES += src/git_rev.h
CLEANFILES += src/git_rev.h
EXTRA_DIST += build-aux/git-rev
src/util.lo: src/git_rev.h
src/git_rev.h: FORCE
	$(AM_V_GEN)$(MKDIR_P) src && $(SHELL) $(top_srcdir)/build-aux/git-rev $(top_srcdir) $@
FORCE:
.PHONY: FORCE

if HAVE_CUDA
libtune_la_LIBADD += $(CUDA_LDFLAGS) $(CUDA_LIBS)
endif
