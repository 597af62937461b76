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

#endif /* TUNE_SIM_H */
