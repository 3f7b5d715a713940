/* sim.h - one simulation: a scenario's world, its run, its results.
 *
 * A CsSim owns everything of one run (engine, topology, routes, network),
 * with no global state, so a sweep can run several in threads at once.
 * It starts the scenario's flows and background traffic, runs until the
 * work is done (or `duration`), checks that every packet is accounted
 * for, and writes the output files.
 *
 * Layer 7 (run; docs/design.md). Owns one simulation: assembly, run,
 * statistics, files; does not touch the command line.
 */
#ifndef COMMSIM_SIM_H
#define COMMSIM_SIM_H

#include <glib.h>
#include <signal.h>
#include <stdbool.h>

#include "commsim/engine.h"
#include "commsim/fabric.h"
#include "commsim/net.h"
#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"
#include "commsim/workload.h"

typedef struct CsSim CsSim;

/* The run's summary (SPEC 6, summary.csv): means over workers and
 * iterations, and the network's totals. */
typedef struct {
  uint32_t workers, servers;
  double wire_bytes_per_worker; /* per iteration */
  uint64_t iterations_measured;  /* worker-iterations the means are over */
  double iter_mean_s, iter_p50_s, iter_p99_s, compute_s, comm_s, codec_s, exposed_comm_s;
  double codec_outside_s; /* the part of codec_s that does not overlap compute:
                           * compute_s + codec_outside_s + exposed_comm_s = iter_mean_s */
  uint64_t packets_sent, packets_dropped, packets_lost, retransmissions; /* data + ACK */
  double link_util_mean, link_util_max;
  uint64_t pause_frames;  /* PFC: XOFF frames that paused a link direction */
  double paused_s_max;    /* PFC: the longest any direction was paused in all */
  double fast_forward_s;  /* fidelity hybrid: simulated time jumped over at steady rates */
  uint64_t jumps;         /* ... in so many jumps */
  double codec_nmse;     /* NAN without a workload */
  double allreduce_nmse; /* the error left in the collective's result (compounded at reduction hops) */
  uint64_t events;
  double wall_s;
  uint64_t bg_packets_sent, bg_packets_dropped, bg_packets_lost, bg_delivered;
  double bg_delay_mean_s;
  double staleness_mean; /* async ps */
} CsSummary;

/* Build the world of a scenario (which must outlive the CsSim). */
CsSim *cs_sim_new(const CsScenario *s, GError **error);
void cs_sim_free(CsSim *sim);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsSim, cs_sim_free)

/* links.csv's sampling: a run whose output.sample_interval would take
 * more than CS_SIM_PLAN_SHARE of CS_SIM_MAX_SAMPLES samples or of
 * CS_SIM_MAX_LINK_ROWS rows (estimated from the model and the flows
 * before it runs) samples at a raised interval instead, and cs_sim_note
 * says so (NULL otherwise); cs_sim_set_force(sim, true) keeps the
 * scenario's interval. */
#define CS_SIM_MAX_SAMPLES 10000000.0
#define CS_SIM_MAX_LINK_ROWS 2000000.0
#define CS_SIM_PLAN_SHARE 0.9 /* of the limits, the plan's: the rest is for runs that outlast the estimate */
const char *cs_sim_note(const CsSim *sim);
/* What the scenario asks that the run will not do as the user may think
 * (a hybrid: section at another fidelity, cc dcqcn with no link marking
 * ECN, loss at the flow fidelity), one located note per line, or NULL.
 * Known before the run; `run` and `sweep` (each point) print it. */
const char *cs_sim_scenario_note(const CsSim *sim);
/* With messages.csv listed beside links.csv or timeline.json (whose
 * sampling plan estimates the run), a note when the file would pass a GiB
 * (about 62 bytes a row, a row per message of the collective's plan,
 * every bucket's and iteration's, and per raw flow), or NULL; `run`
 * prints it on stderr. */
const char *cs_sim_messages_note(const CsSim *sim);
/* The estimate assumes an idle network; a run with loss or congestion
 * can last far longer.  So the run counts too: when the rows (or samples)
 * pass both the estimate (by 5 %) and nine tenths of the limit, and after
 * that each time those since the last raise pass half of what was left
 * then, the interval is raised tenfold from the next sample on, which
 * keeps a run of any length within the limits (but for one pass's rows
 * at each raise).  After the run, cs_sim_late_note says so (NULL otherwise);
 * --force keeps the interval here too. */
const char *cs_sim_late_note(const CsSim *sim);
void cs_sim_set_force(CsSim *sim, bool force);
/* The plan alone, for a scenario's world (validate shows it): the
 * interval a run will sample at, and the note (to free) when raised;
 * with messages_note (not NULL), cs_sim_messages_note's (to free). */
CsTime cs_sim_plan_sampling(const CsScenario *s, const CsTopology *t, const CsRoutes *r, char **note,
                            char **messages_note);
CsTime cs_sim_sample_interval(const CsSim *sim);

/* Where the output files go.  Set before cs_sim_run to stream the traces
 * that are written during the run (links.csv, packets.csv); without it they
 * are not written. */
void cs_sim_set_output_dir(CsSim *sim, const char *dir);

/* Called about four times a second of wall time during cs_sim_run, with
 * the fraction of the work done (-1 when unknown). */
typedef void (*CsProgressFn)(void *ctx, CsTime now, uint64_t events, double done);
void cs_sim_set_progress(CsSim *sim, CsProgressFn fn, void *ctx);

/* A flag that a signal handler sets (SIGINT, SIGTERM): the run looks at
 * it every CS_SIM_CHECK_EVERY events (between events: results do not
 * depend on it) and stops with CS_SCENARIO_ERROR_INTERRUPTED.  After an
 * interruption, cs_sim_free() removes the traces' temporary files. */
void cs_sim_set_interrupt(CsSim *sim, volatile sig_atomic_t *flag);

/* --check: every CS_SIM_CHECK_EVERY events, check between events that time
 * never went back and the network's expensive invariants
 * (cs_net_check_state: those at most once per as many events as the
 * packets the network holds, which they read); once more at the end.  A failure ends the run with
 * CS_SCENARIO_ERROR_INTERNAL.  Results are the same as without it. */
#define CS_SIM_CHECK_EVERY 1024
void cs_sim_set_checks(CsSim *sim, bool on);
/* How many times the checks ran (for tests). */
uint64_t cs_sim_checks_run(const CsSim *sim);

/* Write wall_s as 0, so that runs of one scenario give byte-identical
 * files (SPEC 7 exempts wall_s). */
void cs_sim_set_reproducible(CsSim *sim, bool on);

/* Run to the end.  False (with an error) only for an internal failure such
 * as broken packet accounting or simulated time overflowing; undelivered
 * messages are reported by cs_sim_failed() and cs_sim_unfinished(). */
bool cs_sim_run(CsSim *sim, GError **error);

CsEngine *cs_sim_engine(CsSim *sim);
/* Events the simulation executed (links.csv's sampling not counted). */
uint64_t cs_sim_events(const CsSim *sim);
/* The message fabric the run uses; the packet network beneath it when
 * the fidelity is packet (else NULL), for what only packets have. */
CsFabric *cs_sim_fabric(CsSim *sim);
CsNet *cs_sim_net(CsSim *sim);
const CsTopology *cs_sim_topology(const CsSim *sim);
/* Simulated time at the end, and wall-clock seconds the run took. */
CsTime cs_sim_end_time(const CsSim *sim);
double cs_sim_wall_seconds(const CsSim *sim);
/* Messages abandoned after max_timeouts, and messages still in progress
 * when the run ended; workers that did not finish every iteration. */
uint32_t cs_sim_failed(const CsSim *sim);
uint32_t cs_sim_unfinished(const CsSim *sim);
uint32_t cs_sim_unfinished_workers(const CsSim *sim);
/* The training workload, or NULL. */
CsWorkload *cs_sim_workload(CsSim *sim);

const CsSummary *cs_sim_summary(CsSim *sim);
/* Time to accuracy (workload.convergence), after cs_sim_run: the
 * iterations trained (NULL and *n = 0 without it), when each ended on the
 * run's clock (seconds), the first that reached the target (0: none), and
 * how many took their time from the run (the later ones take the mean
 * measured iteration, *mean_s). */
const CsConvPoint *cs_sim_convergence(const CsSim *sim, uint32_t *n, const double **time_s, uint32_t *reached,
                                      uint32_t *simulated, double *mean_s);
/* summary.csv's columns (NULL-terminated) and one row's fields. */
const char *const *cs_sim_summary_columns(void);
GPtrArray *cs_sim_summary_fields(CsSim *sim);
/* ||x - decode(encode(x))||^2 / ||x||^2 of the scenario's codec, by the
 * real kernel, on a normal gradient of the run's seed (up to 1M elements). */
double cs_sim_codec_nmse(const CsScenario *s, GError **error);

/* Whether `dir` may take a run's files: not a sweep's folder (sweep.csv),
 * not a file.  False with an error naming it. */
bool cs_sim_check_output_dir(const char *dir, GError **error);

/* Write the output files the scenario asks for (iterations.csv with a
 * workload, messages.csv, timeline.json, and summary.csv last) into `dir`,
 * and put the streamed traces (links.csv, packets.csv) in place.  Then the
 * files of an earlier run that this one did not write (a trace no longer
 * asked for, plots of the earlier results) are removed, so that the folder
 * holds one run's files. */
bool cs_sim_write_outputs(CsSim *sim, const char *dir, GError **error);

#endif
