-- schema.sql: the detcoll tune database, schema version 5 (PRAGMA user_version).
-- Loaded by db/store.c on a new file; migrations to later versions live in
-- db/store.c beside the version number. Times are nanoseconds (integers),
-- sizes are bytes per rank (each rank's input buffer), dates are UTC ISO 8601.

-- One invocation of a measuring command (a "before" pass, a path sweep, an
-- "after" pass, a skew calibration). Provenance lets paired runs be checked.
CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  kind          TEXT NOT NULL,          -- before | sweep | after | skew | bench
  started_at    TEXT NOT NULL,
  finished_at   TEXT,                   -- NULL while running or if killed
  host          TEXT NOT NULL,
  gpu_model     TEXT NOT NULL,
  gpu_count     INTEGER NOT NULL,
  sm            INTEGER NOT NULL,       -- compute capability x 10, e.g. 90
  topo          TEXT NOT NULL,          -- single_gpu | nvlink | pcie
  driver        TEXT NOT NULL,
  cuda          TEXT NOT NULL,
  nccl          TEXT NOT NULL,
  mpi           TEXT NOT NULL,
  launcher      TEXT NOT NULL,          -- threads | mpi | none
  backend       TEXT NOT NULL,          -- gpu | sim
  git_rev       TEXT NOT NULL,
  command_line  TEXT NOT NULL,
  thresholds    TEXT NOT NULL,          -- provenance of the thresholds compiled in
  seed          INTEGER NOT NULL,
  parent_run    INTEGER REFERENCES runs(id), -- the run a resumed/after run belongs to
  options       TEXT                    -- main job: its parsed options, which --resume matches
);

-- One measured configuration. impl is who ran it (detcoll, nccl); path is the
-- forced kernel path or 'auto'. A config is committed together with all of
-- its samples, so a config row without its samples never exists.
CREATE TABLE configs (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  impl          TEXT NOT NULL,
  op            TEXT NOT NULL,
  path          TEXT NOT NULL,
  chosen_path   TEXT NOT NULL,          -- the path that ran (= path unless auto)
  dtype         TEXT NOT NULL,
  world         INTEGER NOT NULL,
  bytes         INTEGER NOT NULL,
  in_offset     INTEGER NOT NULL,
  out_offset    INTEGER NOT NULL,
  align         TEXT NOT NULL,          -- align16 | unaligned
  mode          TEXT NOT NULL,          -- eager | graph
  skew_ns       INTEGER NOT NULL,       -- requested delay (0: none)
  skew_rank     INTEGER NOT NULL,       -- delayed rank, -1: none, -2: random per trial
  trials        INTEGER NOT NULL,
  warmup        INTEGER NOT NULL,
  wrong_elems   INTEGER NOT NULL,       -- elements that failed the check
  median_ns     REAL NOT NULL,          -- median over trials of the slowest rank
  p10_ns        REAL NOT NULL,
  p90_ns        REAL NOT NULL
);
CREATE UNIQUE INDEX configs_key ON configs(run_id, impl, op, path, dtype, world, bytes,
  in_offset, out_offset, mode, skew_ns, skew_rank);

-- Every rank's every trial. config_id has no REFERENCES clause on purpose:
-- the store writes a config and its samples in one transaction, and the
-- per-row foreign-key check cost a third of the insert rate. A time is an
-- integer from 0 to one hour (TUNE_STORE_MAX_NS): --resume reads samples
-- back, and a NULL, text or absurd time must never reach a crossover.
CREATE TABLE samples (
  config_id     INTEGER NOT NULL,
  trial         INTEGER NOT NULL CHECK (typeof(trial) = 'integer' AND trial >= 0),
  rank          INTEGER NOT NULL CHECK (typeof(rank) = 'integer' AND rank >= 0),
  elapsed_ns    INTEGER NOT NULL        -- event A -> event B on this rank
    CHECK (typeof(elapsed_ns) = 'integer' AND elapsed_ns BETWEEN 0 AND 3600000000000),
  delay_ns      INTEGER NOT NULL        -- delay this rank actually got (0: none)
    CHECK (typeof(delay_ns) = 'integer' AND delay_ns BETWEEN 0 AND 3600000000000),
  PRIMARY KEY (config_id, trial, rank)
) WITHOUT ROWID;

-- A size where the best path changes, found by bisection. bytes is the
-- threshold written to the header: path_below runs for sizes <= bytes.
CREATE TABLE crossovers (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  op            TEXT NOT NULL,
  dtype         TEXT NOT NULL,
  world         INTEGER NOT NULL,
  align         TEXT NOT NULL,
  mode          TEXT NOT NULL,
  skew_ns       INTEGER NOT NULL,
  path_below    TEXT NOT NULL,
  path_above    TEXT NOT NULL,
  bytes         INTEGER NOT NULL,
  lo_bytes      INTEGER NOT NULL,       -- last size where path_below won
  hi_bytes      INTEGER NOT NULL,       -- first size where path_above won
  diff_ns       REAL NOT NULL,          -- median(above) - median(below) at hi_bytes
  ci_lo_ns      REAL NOT NULL,          -- confidence interval of diff_ns
  ci_hi_ns      REAL NOT NULL,
  confidence    REAL NOT NULL,          -- e.g. 0.95
  decided       INTEGER NOT NULL        -- 1: the CI excluded zero; 0: tie at resolution
);

-- Every thresholds header written, with its full text. A before run's
-- header is the table auto dispatch had when its job began (path: the
-- DC_THRESHOLDS_FILE it came from, or "compiled in"; content: its rows),
-- the previous table the after pass measures beside the new one.
CREATE TABLE headers (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  created_at    TEXT NOT NULL,
  path          TEXT NOT NULL,
  sha256        TEXT NOT NULL,
  sim           INTEGER NOT NULL,
  installed     INTEGER NOT NULL,       -- 1 if written as kernels/thresholds.h
  content       TEXT NOT NULL
);

-- The rows of an emitted header, one per table row and segment.
CREATE TABLE header_rows (
  header_id     INTEGER NOT NULL REFERENCES headers(id),
  row_index     INTEGER NOT NULL,
  seg_index     INTEGER NOT NULL,
  sm            INTEGER NOT NULL,
  world         INTEGER NOT NULL,
  topo          TEXT NOT NULL,
  op            TEXT NOT NULL,
  dtype         TEXT NOT NULL,
  align         TEXT NOT NULL,
  mode          TEXT NOT NULL,
  skew_ns       INTEGER NOT NULL,
  max_bytes     INTEGER NOT NULL,       -- -1 stands for DC_BYTES_MAX
  path          TEXT NOT NULL,
  PRIMARY KEY (header_id, row_index, seg_index)
);

-- Auto dispatch over the best forced path, per size ("after" runs).
CREATE TABLE regret (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  op            TEXT NOT NULL,
  dtype         TEXT NOT NULL,
  world         INTEGER NOT NULL,
  align         TEXT NOT NULL,
  mode          TEXT NOT NULL,
  bytes         INTEGER NOT NULL,
  auto_path     TEXT NOT NULL,
  best_path     TEXT NOT NULL,
  auto_ns       REAL NOT NULL,
  best_ns       REAL NOT NULL,
  regret        REAL NOT NULL           -- auto_ns / best_ns
);

-- The after pass's paired before/after figures, one row per auto-dispatch
-- config of the after run (new_config: the new table) and size: auto
-- dispatch with the job's previous table (prev_config, impl detcoll_prev or
-- detcoll_reg_prev) measured in the same trials, in alternating order.
-- Where both tables choose the same path the size ran once: shared = 1,
-- prev_config = new_config, ratio 1. ratio = new_ns / prev_ns (medians of
-- the slowest rank per trial; below 1: the new table is faster); [ci_lo,
-- ci_hi] its bootstrap interval at confidence, trials resampled in pairs.
CREATE TABLE pairs (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  impl          TEXT NOT NULL,          -- detcoll | detcoll_reg (new_config's)
  op            TEXT NOT NULL,
  dtype         TEXT NOT NULL,
  world         INTEGER NOT NULL,
  bytes         INTEGER NOT NULL,
  in_offset     INTEGER NOT NULL,
  out_offset    INTEGER NOT NULL,
  align         TEXT NOT NULL,
  mode          TEXT NOT NULL,
  new_config    INTEGER NOT NULL REFERENCES configs(id),
  prev_config   INTEGER NOT NULL REFERENCES configs(id),
  new_path      TEXT NOT NULL,
  prev_path     TEXT NOT NULL,
  shared        INTEGER NOT NULL,       -- 1: one path, measured once
  trials        INTEGER NOT NULL,
  new_ns        REAL NOT NULL,
  prev_ns       REAL NOT NULL,
  ratio         REAL NOT NULL,
  ci_lo         REAL NOT NULL,
  ci_hi         REAL NOT NULL,
  confidence    REAL NOT NULL
);

-- tune skew: one row per skew config (configs.id), summarizing its trials.
-- Per trial, over the ranks: max (slowest rank's residence), injected (the
-- delayed rank's residence), last (the smallest residence: the rank that
-- arrived last and waited least -- the zero-wait cost), wait (max - last),
-- delay (the injected rank's measured delay); each as median, p10 and p90
-- over the trials. rows x cols is the shape asked for (elements).
CREATE TABLE skew_summaries (
  config_id     INTEGER PRIMARY KEY REFERENCES configs(id),
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  impl          TEXT NOT NULL,
  op            TEXT NOT NULL,
  dtype         TEXT NOT NULL,
  world         INTEGER NOT NULL,
  bytes         INTEGER NOT NULL,
  rows          INTEGER NOT NULL,
  cols          INTEGER NOT NULL,
  mode          TEXT NOT NULL,
  skew_rank     INTEGER NOT NULL,       -- -2: a random rank each trial
  requested_ns  INTEGER NOT NULL,
  trials        INTEGER NOT NULL,
  max_median_ns REAL NOT NULL,
  max_p10_ns    REAL NOT NULL,
  max_p90_ns    REAL NOT NULL,
  injected_median_ns REAL NOT NULL,
  injected_p10_ns    REAL NOT NULL,
  injected_p90_ns    REAL NOT NULL,
  last_median_ns REAL NOT NULL,
  last_p10_ns   REAL NOT NULL,
  last_p90_ns   REAL NOT NULL,
  wait_median_ns REAL NOT NULL,
  wait_p10_ns   REAL NOT NULL,
  wait_p90_ns   REAL NOT NULL,
  delay_median_ns REAL NOT NULL,
  delay_p10_ns  REAL NOT NULL,
  delay_p90_ns  REAL NOT NULL
);

-- Skew sensitivity: residence of one role (max, injected, last, wait)
-- against the measured delay, a least-squares line over every trial of every
-- delay of one (impl, op, dtype, world, shape, mode) of a skew run. slope is
-- ns of residence per ns of delay; the intervals are t-based at confidence.
CREATE TABLE skew_fits (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  impl          TEXT NOT NULL,
  op            TEXT NOT NULL,
  dtype         TEXT NOT NULL,
  world         INTEGER NOT NULL,
  bytes         INTEGER NOT NULL,
  rows          INTEGER NOT NULL,
  cols          INTEGER NOT NULL,
  mode          TEXT NOT NULL,
  role          TEXT NOT NULL,          -- max | injected | last | wait
  slope         REAL NOT NULL,
  intercept     REAL NOT NULL,          -- ns
  slope_lo      REAL NOT NULL,
  slope_hi      REAL NOT NULL,
  intercept_lo  REAL NOT NULL,
  intercept_hi  REAL NOT NULL,
  r2            REAL NOT NULL,
  n             INTEGER NOT NULL,       -- trials fitted
  confidence    REAL NOT NULL
);

-- tune fleet's tables (fleet_nodes, fleet_cells, fleet_samples, fleet_consensus,
-- fleet_regret, fleet_outliers) and a node's fleet_node_slowest are created
-- where missing by db/fleet_db.c, which documents them.
