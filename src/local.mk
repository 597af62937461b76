# src/local.mk: host C of the toolkit: conventions, CLI, engine, backends.
libtune_la_SOURCES += src/tune.h src/log.c src/param.c src/util.c
