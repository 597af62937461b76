# tests/fuzz/local.mk: libFuzzer targets for the option parsers, the size
# parser and the threshold rows' checker, built with clang (configure's
# CLANG) from libtune's own sources; tests/fuzz.sh runs each for a few
# seconds (README: longer runs by hand).
EXTRA_DIST += tests/fuzz/fuzz_options.c tests/fuzz/fuzz_size.c tests/fuzz/fuzz_emit.c
dist_check_SCRIPTS += tests/fuzz.sh
TESTS += tests/fuzz.sh

if HAVE_FUZZER
FUZZ_TARGETS = tests/fuzz/fuzz_options tests/fuzz/fuzz_size tests/fuzz/fuzz_emit
FUZZ_CFLAGS = -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=address,undefined -fno-sanitize-recover=undefined \
  $(DEFS) $(AM_CPPFLAGS) $(CPPFLAGS)
FUZZ_LIBS = $(SQLITE_LIBS) $(HWLOC_LIBS) $(MPI_LIBS) $(LIBS) -lm
check_DATA = $(FUZZ_TARGETS)
CLEANFILES += $(FUZZ_TARGETS) tests/fuzz/libfuzztune.a
clean-local: clean-fuzz
clean-fuzz:
	rm -rf tests/fuzz/obj

# libtune and main.c (its main and its job renamed: the options target calls
# the parser and checks the job instead of running it), compiled once.
tests/fuzz/libfuzztune.a: $(libtune_la_SOURCES) src/main.c $(BUILT_SOURCES)
	$(AM_V_GEN)rm -rf tests/fuzz/obj && $(MKDIR_P) tests/fuzz/obj && \
	for f in $(libtune_la_SOURCES); do \
	  case $$f in *.c) ;; *) continue ;; esac; \
	  $(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $(srcdir)/$$f \
	    -o tests/fuzz/obj/`echo $$f | tr / _`.o || exit 1; \
	done && \
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Dmain=tune_main -Dtune_job_run=fuzz_job_run \
	  -DTUNE_ABS_SRCDIR=\"$(abs_top_srcdir)\" -DTUNE_ABS_BUILDDIR=\"$(abs_top_builddir)\" \
	  -c $(srcdir)/src/main.c -o tests/fuzz/obj/main.o && \
	rm -f $@ && $(AR) rcs $@ tests/fuzz/obj/*.o

$(FUZZ_TARGETS): tests/fuzz/libfuzztune.a
	$(AM_V_CCLD)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(srcdir)/$@.c tests/fuzz/libfuzztune.a \
	  $(FUZZ_LIBS) -o $@
tests/fuzz/fuzz_options: $(srcdir)/tests/fuzz/fuzz_options.c
tests/fuzz/fuzz_size: $(srcdir)/tests/fuzz/fuzz_size.c
tests/fuzz/fuzz_emit: $(srcdir)/tests/fuzz/fuzz_emit.c
endif
