/* fleet_report.h: tune fleet's report -- report.md with the node list
 * (status, error, hardware, mismatch), the outlier cells, and one heatmap
 * per op of node x size, each cell the node's median over the fleet's
 * (the largest over dtype, world, alignment, mode and impl at that size). */
#ifndef TUNE_FLEET_REPORT_H
#define TUNE_FLEET_REPORT_H

#include <stddef.h>

#include "cfg.h"
#include "fleet_db.h"
#include "tune.h"

/* A cell where a node stands out. */
typedef struct {
  int node;
  tune_cfg c; /* c.impl unused: the cell's impl is copied into impl */
  char impl[16];
  double node_ns, fleet_ns, ratio, score;
} tune_fleet_flag;

/* One node's ratio to the fleet median at one cell. */
typedef struct {
  dc_op op;
  int node;
  uint64_t bytes;
  double ratio;
} tune_fleet_heat;

/* What the report draws, gathered while the outliers are found. */
typedef struct {
  tune_fleet_heat *heat;
  size_t nheat, capheat;
  tune_fleet_flag *flags;
  size_t nflags, capflags;
} tune_fleet_map;

tune_result tune_fleet_map_add(tune_fleet_map *m, dc_op op, int node, uint64_t bytes, double ratio);
tune_result tune_fleet_map_flag(tune_fleet_map *m, const tune_fleet_flag *f);
void tune_fleet_map_free(tune_fleet_map *m);

/* Write dir/report.md and dir/heatmap_OP.{dat,png} (gnuplot; without
 * gnuplot the report says so and keeps the data files), none of them the
 * database db_path (tune_fleet_report_check). Prints the outlier nodes and
 * where the report is. */
tune_result tune_fleet_report(int64_t fleet_id, const tune_fleet_hw *hw, int nhw, const tune_fleet_map *m,
                              const char *header_path, const char *dir, const char *db_path);

/* tune_err_arg, with a message, if a file the fleet report would write in
 * dir is the database at db_path (or its -wal, -shm, journal or lock) by
 * any name; tune_fleet_report checks before it writes anything. */
tune_result tune_fleet_report_check(const char *dir, const char *db_path);

/* What of the report's files dir holds now (NULL: out of memory), and
 * tune_fleet_report_undo: remove every one of them written since (new, or
 * replaced or changed), and dir where it was not there and is left empty;
 * frees prior. A user's other files stay. For a tune merge that does not
 * finish. */
typedef struct tune_fleet_report_prior tune_fleet_report_prior;
tune_fleet_report_prior *tune_fleet_report_note(const char *dir);
void tune_fleet_report_undo(const char *dir, tune_fleet_report_prior *prior);

#endif /* TUNE_FLEET_REPORT_H */
