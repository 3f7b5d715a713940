/* sweep.h - the points of a scenario's `sweep:` grid, run in parallel.
 *
 * The grid is the cartesian product of the axes, in file order, the last
 * axis changing fastest; an axis may zip several keys.  Each point is the
 * scenario with its values applied as --set would apply them and the
 * same seed (common random numbers), simulated alone in a thread of a
 * pool, writing its files in a folder named by its index and a short slug
 * of its values (the full values in the folder's point.yaml, with the
 * fingerprint of the point's scenario).  A point whose folder holds a
 * summary.csv (written last, atomically) and the same fingerprint is
 * complete and is not run again, so an interrupted sweep resumes.  sweep.csv has
 * one row per point, in grid order whatever the number of threads.
 *
 * Layer 7 (run; docs/design.md). Owns sweeps: points, their folders, the
 * results table, merging; does not touch the command line.
 */
#ifndef COMMSIM_SWEEP_H
#define COMMSIM_SWEEP_H

#include <glib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct CsSweep CsSweep;

typedef struct {
  uint32_t index;   /* in grid order */
  char *name;       /* its folder: 007-bandwidth=10Gbps,method=topk (bounded) */
  char **keys;      /* the swept keys (NULL-terminated) */
  char **values;    /* their values at this point */
} CsSweepPoint;

/* Load the scenario (with overrides) and expand its grid; an error if it
 * has no sweep. */
CsSweep *cs_sweep_new(const char *path, const char *const *overrides, GError **error);
void cs_sweep_free(CsSweep *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsSweep, cs_sweep_free)

uint32_t cs_sweep_size(const CsSweep *sw);
const CsSweepPoint *cs_sweep_point(const CsSweep *sw, uint32_t i);
/* The scenario's default output folder. */
const char *cs_sweep_default_dir(const CsSweep *sw);

typedef struct {
  uint32_t jobs;              /* threads; 0 = the number of cores */
  uint32_t shard_k, shard_n;  /* run points with index % n == k; n = 0: all */
  bool progress;              /* points done / total and an ETA on stderr */
  bool checks;                /* cs_sim_set_checks on every point */
  bool reproducible;          /* cs_sim_set_reproducible on every point */
  bool force;                 /* cs_sim_set_force on every point */
  bool quiet;                 /* no warnings from the points */
  volatile sig_atomic_t *interrupt; /* when it becomes non-zero: stop (may be NULL) */
} CsSweepOptions;

/* Run (or resume) the points into DIR/<point>/ and write DIR/sweep.csv.
 * *failed counts points whose run failed (their rows are left out).
 * Interrupted, it starts no more points, stops the running ones (their
 * folders keep no summary.csv, so a rerun runs them again), writes no
 * sweep.csv and fails with CS_SCENARIO_ERROR_INTERRUPTED. */
bool cs_sweep_run(CsSweep *sw, const char *dir, const CsSweepOptions *opt, uint32_t *failed, GError **error);

/* The pieces cs_sweep_run is made of, for other ways of distributing the
 * points (MPI):
 * - whether point `index` belongs to the options' shard;
 * - run one point (thread-safe; several at once are fine): its summary
 *   row's fields, read from its summary.csv when it is complete already,
 *   or NULL with an error (CS_SCENARIO_ERROR_INTERRUPTED when stopped);
 * - report the errors (per point, NULL = none), then write sweep.csv from
 *   the rows (per point, NULL = left out) unless interrupted;
 *   `queued` is how many points were to run;
 * - an ETA as "42s", "3m05s" or "1.5h". */
bool cs_sweep_mine(const CsSweepOptions *opt, uint32_t index);
GPtrArray *cs_sweep_run_point(CsSweep *sw, uint32_t index, const char *dir, const CsSweepOptions *opt,
                              GError **error);
bool cs_sweep_finish(CsSweep *sw, const char *dir, const CsSweepOptions *opt, GPtrArray *const *rows,
                     char *const *errors, uint32_t queued, uint32_t *failed, GError **error);
bool cs_sweep_write_csv(CsSweep *sw, const char *dir, GPtrArray *const *rows, const CsSweepOptions *opt,
                        GError **error);
void cs_sweep_format_eta(double s, char *buf, size_t n);

/* Join the sweep.csv files of shards' folders into OUT/sweep.csv, rows in
 * grid order, and write OUT/sweep-info.yaml.  Refused (false,
 * CS_SCENARIO_ERROR_INVALID) when a folder is not a sweep's, when shards
 * come from different sweeps (their sweep-info.yaml fingerprints differ)
 * or when two shards hold different results for one point (wall_s
 * aside).  Points that no shard holds are left out and counted in
 * *missing, listed in *missing_text (to free; may be NULL). */
bool cs_sweep_merge(const char *const *dirs, const char *out, uint32_t *missing, char **missing_text, GError **error);

/* The fields of one CSV line (RFC 4180 quoting), without its line end. */
GPtrArray *cs_csv_split_line(const char *line);

#endif
