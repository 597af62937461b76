# db/local.mk: the store -- schema.sql compiled into the program, SQLite
# access and export, their tests, and the sample-insert benchmark.
libtune_la_SOURCES += db/store.h db/store_db.h db/store.c db/sql.c db/export.c db/compare_read.h db/compare_read.c \
  db/report_read.h db/report_read.c
EXTRA_DIST += db/schema.sql
BUILT_SOURCES += db/schema_sql.h
CLEANFILES += db/schema_sql.h

# Written through a temporary so an interrupted make leaves no half header.
db/schema_sql.h: $(top_srcdir)/db/schema.sql $(top_srcdir)/build-aux/file2c
	$(AM_V_GEN)$(MKDIR_P) db && \
	  $(SHELL) $(top_srcdir)/build-aux/file2c tune_schema_sql $(top_srcdir)/db/schema.sql > $@-t && \
	  mv $@-t $@

check_PROGRAMS += tests/test_store tests/test_store_kill
TESTS += tests/test_store tests/test_store_kill
tests_test_store_SOURCES = tests/test_store.c
tests_test_store_kill_SOURCES = tests/test_store_kill.c

# A benchmark, not a test: run db/bench_store by hand (target: 1,000,000
# sample rows in under 1 s).
noinst_PROGRAMS += db/bench_store
db_bench_store_SOURCES = db/bench_store.c
