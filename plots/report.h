/* report.h: `tune report` -- turns the tune database into before/after
 * latency plots, crossover plots, skew sensitivity plots and a Markdown
 * report, drawn by gnuplot from
 * the templates in plots/ (compiled into the program). */
#ifndef TUNE_REPORT_H
#define TUNE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tune.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *db_path;
  /* Run ids; 0 picks the latest run of kind before / after. The crossover
   * plots use the sweep run the after run belongs to (its parent_run), else
   * the latest sweep run on the same GPU model. */
  int64_t before_run, after_run;
  const char *out_dir; /* created (with parents) if missing; NULL: <db folder>/report */
} tune_report_opts;

/* Write out_dir/report.md with the PNG and SVG plots it embeds (the skew
 * sensitivity plots are those of the latest skew run, when there is one), their .dat
 * data files and the gnuplot templates that drew them (so a plot can be
 * redrawn by hand), then print the report's path on stdout.
 *
 * Checks come before anything is written: the database must be ours, at
 * the store's current schema version (TUNE_STORE_APPLICATION_ID,
 * TUNE_STORE_VERSION; else tune_err_db); a run id that does not
 * exist or is of the wrong kind, no before, after or skew run at all, or a
 * before/after pair that differs in GPU model, backend, ops, dtypes, world
 * sizes, modes, alignment classes or size grid is tune_err_arg (a skew run
 * alone gives a skew-only report). An unfinished run (finished_at NULL: its
 * job was killed) pairs with a finished one when it measured nothing the
 * other did not: the report compares the configs both measured and lists
 * those the unfinished run lacks; two unfinished runs are tune_err_arg.
 * Database text in report.md is escaped for its tables and headings. A
 * failed report leaves no report.md.tmp, a stale one included. A missing
 * gnuplot is tune_err_system. Either side alone gives a one-sided report. A
 * gnuplot run that fails or leaves a plot missing is tune_err_system naming
 * the plot (its messages are in out_dir/gnuplot.log); report.md appears only
 * when every plot was drawn. Every failure prints one line via tune_error(). */
tune_result tune_report_run(const tune_report_opts *o);

/* The summary of before/after pair o (the same as at the top of report.md)
 * on out, as text: where the thresholds header went, how many measured rows
 * differ from the table the before run had compiled in with the largest
 * threshold moves, the before -> after speedup per op and world (median,
 * worst) with latency, algbw and busbw at the largest size, the sizes where
 * detcoll or NCCL wins (or why NCCL was not measured), the largest regret,
 * and report.md's path (written: 1 if tune_report_run wrote it). Reads the
 * database like tune_report_run, needs no gnuplot; prints nothing for a
 * database without a before or after run. */
tune_result tune_report_summary(const tune_report_opts *o, int written, FILE *out);

/* The folder the report of o goes into: o->out_dir, or the database's
 * folder's report/. */
void tune_report_folder(const tune_report_opts *o, char *buf, size_t len);

/* tune_err_arg, with one tune_error() line, if a file the report would
 * write -- its folder (out_dir, or the default), a fixed file, or a figure
 * whose name the database's own name could be -- is the database or its
 * -wal/-shm/-journal (tune_check_output). The main job and skew call it
 * before measuring; tune_report_run calls it first. */
tune_result tune_report_check_outputs(const tune_report_opts *o);

/* tune_err_arg, with a message naming it as what, if the report would
 * write over keep (a file its command writes beside it: the thresholds
 * header, skew's --json), or keep over the report: keep is the report
 * folder, or lies in it with a name of the kind the report writes there,
 * or a file of that kind there is keep by another name (a link). */
tune_result tune_report_check_keep(const tune_report_opts *o, const char *keep, const char *what);

/* Resolve the gnuplot program: $GNUPLOT, else the configured name
 * (TUNE_GNUPLOT), searched on PATH unless it contains a '/'. Writes the
 * absolute path of an executable file into buf (gnuplot runs in the output
 * folder). tune_err_system if there is none (no
 * message printed: callers decide whether that is an error or a skip). */
tune_result tune_report_find_gnuplot(char *buf, size_t len);

/* tune_report_find_gnuplot where a report must be drawn: else a message
 * from who ("report", "skew"; NULL: the main job) naming what was looked for ($GNUPLOT's
 * file, or the name on PATH) and how to do without (hint: ", or pass
 * --no-report"; "" for none), and tune_err_system. */
tune_result tune_report_need_gnuplot(const char *who, const char *hint, char *buf, size_t len);

/* Database text as it may appear in a report.md table cell or heading: '|'
 * (a cell boundary) and a backslash (which could escape the boundary after
 * it) are backslash-escaped; a newline or other control character, which
 * would end the row or start a heading, becomes a space. Cut to fit len
 * (room for twice the text is always enough). Returns dst, so a call can
 * be an argument of a printf. NULL reads as "-". */
const char *tune_md_text(char *dst, size_t len, const char *src);

#ifdef __cplusplus
}
#endif
#endif /* TUNE_REPORT_H */
