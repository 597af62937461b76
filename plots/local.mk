# plots/local.mk: `tune report` -- the gnuplot templates (compiled into the
# program as C strings by build-aux/file2c, so it needs no install path) and
# the report generator.
libtune_la_SOURCES += plots/report.h plots/report.c

plots_gp = plots/style.gp plots/latency.gp plots/crossover.gp plots/regret.gp plots/skew.gp \
  plots/compare.gp plots/fleet.gp
plots_gp_h = plots/style_gp.h plots/latency_gp.h plots/crossover_gp.h plots/regret_gp.h \
  plots/skew_gp.h plots/compare_gp.h plots/fleet_gp.h
EXTRA_DIST += $(plots_gp)
BUILT_SOURCES += $(plots_gp_h) plots/test_schema_sql.h
CLEANFILES += $(plots_gp_h) plots/test_schema_sql.h

# One rule per template: '%' pattern rules are GNU make only, and the
# header name is not a suffix rule's shape.
plots_file2c = $(AM_V_GEN)$(MKDIR_P) plots && \
  $(SHELL) $(top_srcdir)/build-aux/file2c
plots/style_gp.h: $(top_srcdir)/plots/style.gp $(top_srcdir)/build-aux/file2c
	$(plots_file2c) tune_gp_style $(top_srcdir)/plots/style.gp > $@-t && mv $@-t $@
plots/latency_gp.h: $(top_srcdir)/plots/latency.gp $(top_srcdir)/build-aux/file2c
	$(plots_file2c) tune_gp_latency $(top_srcdir)/plots/latency.gp > $@-t && mv $@-t $@
plots/crossover_gp.h: $(top_srcdir)/plots/crossover.gp $(top_srcdir)/build-aux/file2c
	$(plots_file2c) tune_gp_crossover $(top_srcdir)/plots/crossover.gp > $@-t && mv $@-t $@
plots/regret_gp.h: $(top_srcdir)/plots/regret.gp $(top_srcdir)/build-aux/file2c
	$(plots_file2c) tune_gp_regret $(top_srcdir)/plots/regret.gp > $@-t && mv $@-t $@
plots/skew_gp.h: $(top_srcdir)/plots/skew.gp $(top_srcdir)/build-aux/file2c
	$(plots_file2c) tune_gp_skew $(top_srcdir)/plots/skew.gp > $@-t && mv $@-t $@
plots/compare_gp.h: $(top_srcdir)/plots/compare.gp $(top_srcdir)/build-aux/file2c
	$(plots_file2c) tune_gp_compare $(top_srcdir)/plots/compare.gp > $@-t && mv $@-t $@
plots/fleet_gp.h: $(top_srcdir)/plots/fleet.gp $(top_srcdir)/build-aux/file2c
	$(plots_file2c) tune_gp_fleet $(top_srcdir)/plots/fleet.gp > $@-t && mv $@-t $@

# The report test builds its fixture database from the real schema.
plots/test_schema_sql.h: $(top_srcdir)/db/schema.sql $(top_srcdir)/build-aux/file2c
	$(plots_file2c) tune_test_schema_sql $(top_srcdir)/db/schema.sql > $@-t && mv $@-t $@

check_PROGRAMS += tests/test_report
tests_test_report_SOURCES = tests/test_report.c
TESTS += tests/test_report
