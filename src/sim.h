/* sim.h: the sim backend's noise-free model, for tests and for printing the
 * model's true crossovers beside the ones a sim sweep found. */
#ifndef TUNE_SIM_H
#define TUNE_SIM_H

#include "backend.h"

/* Noise-free latency of c run on path (c->path is ignored); -1 if the sim has
 * no model for that (op, path). */
double tune_sim_latency_ns(const tune_cfg *c, dc_path path);

/* The largest size in [lo, hi) at which `below` is still faster than `above`
 * for c's key; 0 if they do not cross in that range in that direction. */
uint64_t tune_sim_true_crossover(const tune_cfg *c, dc_path below, dc_path above, uint64_t lo,
                                 uint64_t hi);

/* The fleet node this process measures for (tune fleet; -1: none), which
 * the test-only node knobs below name. For tests only:
 *   TUNE_SIM_SLOW_NODE=K:F:SIZE   node K's every path is F times slower at
 *                                 SIZE bytes per rank and above (a node with
 *                                 a degraded link);
 *   TUNE_SIM_FAIL_NODE=K          node K fails its first forced-path
 *                                 measurement (its sweep), on every rank;
 *                                 K:hang: it hangs there instead;
 *   TUNE_SIM_NODE_DRIVER=K:VER    node K reports driver VER (a node whose
 *                                 software differs from the others');
 *   TUNE_SIM_NODE_NOISE=1         each node's noise is seeded apart (the
 *                                 seed mixed with the node), so the nodes
 *                                 are alike but not identical;
 *   TUNE_SIM_PAUSE_AFTER=N        every process (of any node, or none) stops
 *                                 before its (N+1)th forced-path measurement
 *                                 and waits there until SIGINT or SIGTERM,
 *                                 its first N committed: a job killed in its
 *                                 sweep whatever the machine's load.
 * A malformed knob is refused when the backend opens. */
void tune_sim_set_node(int node);

/* The knobs that make the sim's model (TUNE_SIM_PATH, _DRIFT_PCT,
 * _SPELL_PCT, _SLOW_NODE, _NODE_DRIVER, _NODE_NOISE) as they are set here,
 * " NAME=VALUE" each, for the check that every process of a job was given
 * the same (a job measured on two models). The fault knobs
 * (TUNE_SIM_FAIL_NODE, _PAUSE_AFTER) are left out: they are meant for one
 * process. */
void tune_sim_model_text(char *out, size_t len);

#endif /* TUNE_SIM_H */
