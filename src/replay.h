/* replay.h: `tune replay`, the main job's crossover search run again over
 * the sweep samples a database holds: the table the rules of this tune
 * choose from measurements taken before, with no GPU. Measure floor. */
#ifndef TUNE_REPLAY_H
#define TUNE_REPLAY_H

#include <stdint.h>

#include "engine.h"

/* Replay the sweep of the job in job->db_path (read only) whose options are
 * job's: the job run (any of its runs), or with run 0 the newest finished
 * sweep of these options. The rows go to out ("-": standard output) as a
 * table file (tune table's text, which compare-headers and
 * DC_THRESHOLDS_FILE read). With the incumbent rules on, each search keeps
 * the paths of the job's previous table as its before run stored it, or of
 * the table file incumbent names instead (not NULL: what the job would have
 * chosen had it begun with that table); a job begun by an older tune stored
 * none, and then the table compiled into its tune (its sweep's provenance)
 * must be this tune's. A trial
 * the search asks for that the database does not hold -- rules other than
 * the job's ask for other sizes and more trials -- is stood in for
 * (replay.c says how); how many is printed. tune_err_arg (with a message,
 * nothing written): no such job, other options, another compiled-in table,
 * a malformed incumbent file. */
tune_result tune_replay(const tune_job *job, int64_t run, const char *incumbent, const char *out);

#endif /* TUNE_REPLAY_H */
