/* sim_private.h - one simulation's state, shared by the files of the run
 * layer that assemble it (sim.c), run it (control.c), trace it while it
 * runs (traces.c), sum it up (summary.c) and write its files
 * (writers.c).  Nothing outside sim/run/ sees it. */
#ifndef COMMSIM_RUN_SIM_PRIVATE_H
#define COMMSIM_RUN_SIM_PRIVATE_H

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commsim/codec.h"
#include "commsim/collective.h"
#include "commsim/convergence.h"
#include "commsim/csv.h"
#include "commsim/model.h"
#include "commsim/units.h"
#include "commsim/plot.h"
#include "commsim/rng.h"
#include "commsim/sim.h"
#include "commsim/workload.h"

/* "links.csv", or timeline.json's counters when only they are sampled */
const char *cs_sim_sampled_what(const CsScenario *s);

struct CsSim {
  const CsScenario *s;
  CsTopology *t;
  bool pfc; /* some link has PFC */
  /* the watchdog: data packets delivered, and since when that count stands */
  uint64_t wd_progress;
  CsTime wd_since;
  bool wd_fired, wd_armed, running;
  CsEventId wd_event;
  CsRoutes *r;
  CsEngine *e;
  CsFabric *fabric;
  CsNetConfig net_config;
  CsCollEnv *env;
  CsWorkload *wl;
  uint32_t flows_started;
  uint32_t failed;
  /* messages the fabric has forgotten (no trace lists them): what the
   * summary needs of them */
  GArray *retired_wire; /* double per iteration: wire bytes of workers' messages of finished iterations */
  uint8_t *worker_host; /* per host: 1 for a worker (retired messages are counted by their sender) */
  /* With a duration, which may end the run inside an iteration: per host,
   * its worker's index + 1 (0 for none), and the latest iteration of its
   * retired messages (they retire in the order sent) with their wire
   * bytes, taken off the sum when the worker has not finished it.  A ring
   * of 16,384 workers retires 537 M messages: looking up the worker's
   * iteration records at each took 1.65 times as long, and even this
   * record (16 bytes a host beside the byte above) 1.2 times. */
  struct RetireHost {
    uint32_t worker;
    uint32_t iter;
    double wire;
  } *retire_host;
  uint32_t retired_failed;
  CsTime end;
  double wall;
  CsSummary summary;
  bool summarized;
  char *outdir;
  CsCsv *links_csv, *packets_csv;
  /* messages.csv, written as the fabric forgets finished messages (in
   * their order: it forgets from the lowest held) when nothing else needs
   * every message at the end (timeline.json, raw flows): memory then
   * follows the messages in flight with that file too (a ring of 4,096
   * workers held 33.5 M, 2.2 GB) */
  CsCsv *messages_csv;
  CsTime last_sample;
  CsTime sample_interval; /* output.sample_interval, or raised (plan_sampling) */
  char *note;             /* what plan_sampling changed, for the user */
  char *scenario_note;    /* cs_sim_scenario_note's */
  char *messages_note;    /* cs_sim_messages_note's */
  /* the run's own check of the same limits (traces.c, keep_in_budget):
   * the plan's estimate assumes an idle network */
  bool force;                  /* --force: neither the plan nor the run raises the interval */
  double budget_rows, budget_passes; /* CS_SIM_MAX_LINK_ROWS, CS_SIM_MAX_SAMPLES (tests lower them) */
  double est_end_s;            /* the plan's estimate of the run's length (s) ... */
  uint32_t est_dirs;           /* ... and of the link directions it uses */
  uint64_t rows;               /* link rows so far (sampling passes: sample_pass) */
  uint64_t stage_rows, stage_passes; /* rows and passes at the last raise (0 before) */
  uint32_t raises;             /* tenfold raises made while running */
  CsTime raised_at;            /* simulated time of the first */
  CsTime raised_from;          /* the interval before it */
  uint64_t raised_rows, raised_passes; /* rows and passes then */
  char *late_note;             /* what the run changed, for the user, or NULL */
  GArray *queue_samples;  /* QueueSample, for timeline.json's counters */
  uint64_t *queue_shown;  /* per link direction: the counter's last value */
  uint32_t *queue_seen;   /* per link direction: the last sampling pass that reported it */
  uint32_t sample_pass;
  GError *trace_error; /* the first failure to open a trace */
  CsProgressFn progress;
  void *progress_ctx;
  volatile sig_atomic_t *interrupt; /* set by a signal handler */
  bool checks;                      /* --check */
  uint64_t checks_run;
  CsTime last_check;
  uint64_t last_full_check; /* events executed at the last check of the network's invariants */
  GError *check_error;
  bool reproducible; /* wall_s written as 0 */
  bool interrupted;  /* the hook saw the interrupt flag */
  /* time to accuracy (train.c) */
  GArray *conv;           /* CsConvPoint per iteration trained, or NULL */
  GArray *conv_time;      /* double: when each ended on the run's clock (s) */
  uint32_t conv_reached;  /* the first iteration that reached the target, or 0 */
  uint32_t conv_simulated; /* iterations whose time the run measured; later ones take conv_mean_s */
  double conv_mean_s;     /* the mean measured iteration (after warm-up) */
};

/* A link queue's counter value from `time` on (timeline.json). */
typedef struct {
  CsTime time;
  uint32_t dir; /* 2 * link + direction */
  uint64_t bytes;
} QueueSample;

/* train.c: train workload.convergence's model on the finished run's clock. */
bool cs_sim_train(CsSim *sim, GError **error);

/* control.c: every message finished; stop unless more work is to come. */
void cs_sim_on_idle(void *ctx);
/* traces.c: open the files written while the run goes (links.csv,
 * packets.csv, messages.csv where it can be, timeline's queue counters);
 * sample the links now. */
void cs_sim_open_traces(CsSim *sim);
void cs_sim_sample_links(CsSim *sim);
/* sim.c: let the fabric forget finished messages, handing each to
 * on_retire first (the summary's sums; messages.csv's row when open). */
void cs_sim_retire_messages(CsSim *sim);

/* writers.c: messages.csv opened in `dir`, and message st's row. */
CsCsv *cs_sim_messages_open(const char *dir, GError **error);
void cs_sim_message_row(const CsSim *sim, CsCsv *c, const CsMessageStats *st);

/* The engine's hook for interrupts, --check and the watchdog (control.c). */
void cs_sim_install_hook(CsSim *sim);

#endif
