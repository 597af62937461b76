/* progress.h: the main job's progress on stderr, one phase at a time (see
 * progress.c). One job per process: the state is the process's. */
#ifndef TUNE_PROGRESS_H
#define TUNE_PROGRESS_H

#include "tune.h"

/* TUNE_PROGRESS_SECONDS: seconds between progress lines (0: none); loaded
 * with the job's options, so that a bad value is refused before anything. */
TUNE_PARAM_DECL(ProgressSeconds);

/* Whether this process shows progress at all (the launcher's rank 0 does;
 * other ranks would repeat it). Off until called. */
void tune_progress_enable(int on);
/* A phase of `total` steps named by `unit` ("sizes", "groups"; NULL: a
 * phase of one step, shown without counts) begins; ends any phase begun. */
void tune_progress_begin(const char *phase, const char *unit, long total);
/* Steps done in the phase so far, and configurations measured in the job. */
void tune_progress_step(long done, long configs);
/* What is being measured now, for the terminal's bar (copied). */
void tune_progress_note(const char *what, long configs);
/* The phase ends: the bar is left at its final state, or one line logged. */
void tune_progress_end(void);
/* Ends any phase and stops the ticking thread. */
void tune_progress_stop(void);

#endif
