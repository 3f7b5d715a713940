/* sim.c - assembling and running one simulation, and its outputs. */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commsim/codec.h"
#include "commsim/collective.h"
#include "commsim/csv.h"
#include "commsim/model.h"
#include "commsim/units.h"
#include "commsim/plot.h"
#include "commsim/rng.h"
#include "commsim/sim.h"
#include "commsim/workload.h"

struct CsSim {
  const CsScenario *s;
  CsTopology *t;
  CsRoutes *r;
  CsEngine *e;
  CsFabric *fabric;
  CsNetConfig net_config;
  CsCollEnv *env;
  CsWorkload *wl;
  uint32_t flows_started;
  uint32_t failed;
  CsTime end;
  double wall;
  CsSummary summary;
  bool summarized;
  char *outdir;
  CsCsv *links_csv, *packets_csv;
  CsTime last_sample;
  CsTime sample_interval; /* output.sample_interval, or raised (plan_sampling) */
  char *note;             /* what plan_sampling changed, for the user */
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
  GError *check_error;
  bool reproducible; /* wall_s written as 0 */
  bool interrupted;  /* the hook saw the interrupt flag */
};

/* A link queue's counter value from `time` on (timeline.json). */
typedef struct {
  CsTime time;
  uint32_t dir; /* 2 * link + direction */
  uint64_t bytes;
} QueueSample;

static void on_idle(void *ctx);

/* How long the run will last and which link directions it will use,
 * roughly and before running: the model's iterations for the workload
 * (on an idle network, so on the short side), each flow alone at its
 * path's slowest link, and the background sources' paths. */
static double estimate_run(CsSim *sim, uint8_t *used) {
  const CsScenario *s = sim->s;
  const CsTopology *t = sim->t;
  double end = 0;
  if (s->workload.present) {
    CsModel m;
    if (cs_model_estimate(s, t, sim->r, &m, NULL)) {
      end = m.iter_overlap_s * (double)s->workload.iterations;
      for (uint32_t d = 0; d < 2 * t->n_links; d++) used[d] |= m.dirs_used[d];
      cs_model_clear(&m);
    }
  }
  uint32_t *ports = g_new(uint32_t, t->n_nodes + 1);
  for (int k = 0; k < 2; k++) {
    guint n = k == 0 ? s->flows->len : s->background->len;
    for (guint i = 0; i < n; i++) {
      const char *src = k == 0 ? g_array_index(s->flows, CsFlowSpec, i).src : g_array_index(s->background, CsBackgroundSpec, i).src;
      const char *dst = k == 0 ? g_array_index(s->flows, CsFlowSpec, i).dst : g_array_index(s->background, CsBackgroundSpec, i).dst;
      uint32_t a = (uint32_t)cs_topology_find(t, src), b = (uint32_t)cs_topology_find(t, dst);
      double lat = 0, bmin = INFINITY;
      for (int dir = 0; dir < 2; dir++) { /* data one way, ACKs the other */
        int h = cs_routes_path(sim->r, dir ? b : a, (uint32_t)t->nodes[dir ? a : b].host, 0, ports, (int)t->n_nodes);
        for (int j = 0; j < h; j++) {
          const CsPort *pt = &t->ports[ports[j]];
          used[2 * pt->link + pt->dir] = 1;
          if (dir == 0) {
            lat += (double)t->links[pt->link].spec.latency * 1e-12;
            bmin = fmin(bmin, (double)t->links[pt->link].spec.bandwidth);
          }
        }
      }
      if (k == 0) {
        const CsFlowSpec *f = &g_array_index(s->flows, CsFlowSpec, i);
        end = fmax(end, (double)f->start * 1e-12 + lat + (double)f->size * 8.0 * s->transport.mtu /
                                                          (double)(s->transport.mtu - s->transport.header) / bmin);
      }
    }
  }
  g_free(ports);
  if (s->duration > 0 && (end == 0 || end > (double)s->duration * 1e-12)) end = (double)s->duration * 1e-12;
  return end;
}

/* links.csv (and timeline.json's queue counters) sample every link
 * direction every sample_interval.  An interval that would take more than
 * CS_SIM_MAX_SAMPLES samples or write more than CS_SIM_MAX_LINK_ROWS rows
 * (by estimate_run) is raised, with a note, to the smallest of 1, 2, 5 x
 * 10^k ps that does not; cs_sim_set_force keeps it. */
static void plan_sampling(CsSim *sim) {
  const CsScenario *s = sim->s;
  sim->sample_interval = s->output.sample_interval;
  if (!(s->output.traces & (CS_TRACE_LINKS | CS_TRACE_TIMELINE))) return;
  uint8_t *used = g_new0(uint8_t, 2 * (size_t)sim->t->n_links + 1);
  double end = estimate_run(sim, used);
  uint32_t dirs = 0;
  for (uint32_t d = 0; d < 2 * sim->t->n_links; d++) dirs += used[d];
  g_free(used);
  double iv = (double)s->output.sample_interval * 1e-12;
  double samples = end / iv, rows = samples * dirs;
  if (samples <= CS_SIM_MAX_SAMPLES && rows <= CS_SIM_MAX_LINK_ROWS) return;
  double want = fmax(end / CS_SIM_MAX_SAMPLES, end * dirs / CS_SIM_MAX_LINK_ROWS);
  CsTime raised = 0;
  for (CsTime decade = 1; !raised && decade <= CS_TIME_MAX / 10; decade *= 10)
    for (int m = 1; m <= 5 && !raised; m += m == 1 ? 1 : 3) /* 1, 2, 5 */
      if ((double)(m * decade) * 1e-12 >= want) raised = m * decade;
  if (!raised) raised = CS_TIME_MAX / 10;
  sim->sample_interval = raised;
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN], b3[CS_FORMAT_LEN];
  sim->note = g_strdup_printf("%s: warning: output.sample_interval %s would take about %.3g samples and %.3g rows of "
                              "links.csv (about %s of simulated time over %u link directions): raised to %s; "
                              "--force keeps %s",
                              s->file, cs_format_time(s->output.sample_interval, b1), samples, rows,
                              cs_format_human_seconds(end, b3), dirs, cs_format_time(raised, b2),
                              cs_format_time(s->output.sample_interval, b1));
}

void cs_sim_set_force(CsSim *sim, bool force) {
  if (!force) return;
  sim->sample_interval = sim->s->output.sample_interval;
  g_clear_pointer(&sim->note, g_free);
}

const char *cs_sim_note(const CsSim *sim) { return sim->note; }
CsTime cs_sim_sample_interval(const CsSim *sim) { return sim->sample_interval; }

CsSim *cs_sim_new(const CsScenario *s, GError **error) {
  CsSim *sim = g_new0(CsSim, 1);
  sim->s = s;
  sim->t = cs_topology_build(s, error);
  if (!sim->t) goto fail;
  sim->r = cs_scenario_routes(s, sim->t, error);
  if (!sim->r || !cs_scenario_check(s, sim->t, sim->r, error)) goto fail;
  sim->e = cs_engine_new();
  sim->net_config = cs_scenario_net_config(s);
  sim->fabric = cs_fabric_new(&cs_fidelities[s->fidelity], sim->e, &sim->net_config, sim->t, sim->r);
  cs_fabric_set_idle(sim->fabric, on_idle, sim);
  sim->env = cs_coll_env_new(sim->e, sim->fabric, sim->t);
  if (s->workload.present) {
    sim->wl = cs_workload_new(sim->env, sim->e, &s->workload, s->seed, sim->t, error);
    if (!sim->wl) goto fail;
  }
  plan_sampling(sim);
  return sim;
fail:
  cs_sim_free(sim);
  return NULL;
}

void cs_sim_free(CsSim *sim) {
  if (!sim) return;
  if (sim->links_csv) cs_csv_abort(sim->links_csv);
  if (sim->packets_csv) cs_csv_abort(sim->packets_csv);
  g_free(sim->outdir);
  g_free(sim->note);
  g_clear_error(&sim->trace_error);
  g_clear_error(&sim->check_error);
  if (sim->queue_samples) g_array_free(sim->queue_samples, TRUE);
  g_free(sim->queue_shown);
  g_free(sim->queue_seen);
  cs_workload_free(sim->wl);
  cs_coll_env_free(sim->env);
  cs_fabric_free(sim->fabric);
  cs_engine_free(sim->e);
  cs_routes_free(sim->r);
  cs_topology_free(sim->t);
  g_free(sim);
}

static bool work_done(CsSim *sim) {
  return sim->flows_started == sim->s->flows->len && cs_fabric_active(sim->fabric) == 0 &&
         (!sim->wl || cs_workload_done(sim->wl));
}

static void stop_if_done(CsSim *sim) {
  /* a message abandoned leaves its collective waiting for ever: once
   * nothing else is in flight, the run is over (and reports it) */
  bool stuck = cs_fabric_failed(sim->fabric) > 0 && cs_fabric_active(sim->fabric) == 0 &&
               sim->flows_started == sim->s->flows->len;
  if (work_done(sim) || stuck) {
    cs_fabric_stop_background(sim->fabric);
    cs_engine_stop(sim->e);
  }
}

static void on_delivered(void *ctx, uint32_t msg, bool failed) {
  (void)msg;
  CsSim *sim = ctx;
  if (failed) sim->failed++;
}

/* Every message finished: stop, unless more work is to come. */
static void on_idle(void *ctx) {
  stop_if_done(ctx);
}

static void on_workload_done(void *ctx) { stop_if_done(ctx); }

static void on_flow_start(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  CsSim *sim = ctx;
  const CsFlowSpec *f = &g_array_index(sim->s->flows, CsFlowSpec, arg);
  uint32_t src = (uint32_t)sim->t->nodes[cs_topology_find(sim->t, f->src)].host;
  uint32_t dst = (uint32_t)sim->t->nodes[cs_topology_find(sim->t, f->dst)].host;
  sim->flows_started++;
  uint32_t msg = cs_fabric_send(sim->fabric, src, dst, (uint64_t)f->size, on_delivered, sim);
  cs_fabric_tag(sim->fabric, msg, 0, (uint32_t)arg); /* raw transfers: iteration 0, step = index */
}

/* Messages of collectives that fail are counted here too. */
static void count_failures(CsSim *sim) {
  uint32_t failed = 0;
  for (uint32_t m = 0; m < cs_fabric_messages(sim->fabric); m++) failed += cs_fabric_message(sim->fabric, m)->failed;
  sim->failed = failed;
}

void cs_sim_set_progress(CsSim *sim, CsProgressFn fn, void *ctx) {
  sim->progress = fn;
  sim->progress_ctx = ctx;
}

static void install_hook(CsSim *sim);

void cs_sim_set_interrupt(CsSim *sim, volatile sig_atomic_t *flag) {
  sim->interrupt = flag;
  install_hook(sim);
}
void cs_sim_set_reproducible(CsSim *sim, bool on) { sim->reproducible = on; }

/* Every CS_SIM_CHECK_EVERY events: stop if interrupted (so a signal is
 * seen within that many events, however long a progress slice); with
 * --check, time never went back and the network's expensive invariants
 * hold. */
static bool check_hook(CsEngine *e, void *ctx) {
  CsSim *sim = ctx;
  if (sim->interrupt && *sim->interrupt) {
    sim->interrupted = true;
    return false;
  }
  if (!sim->checks) return true;
  CsTime now = cs_engine_now(e);
  sim->checks_run++;
  if (now < sim->last_check) {
    g_set_error(&sim->check_error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                "internal error: simulated time went back from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                " ps (please report this as a bug)",
                (gint64)sim->last_check, (gint64)now);
    return false;
  }
  sim->last_check = now;
  return cs_fabric_check_state(sim->fabric, &sim->check_error);
}

static void install_hook(CsSim *sim) {
  bool want = sim->checks || sim->interrupt;
  cs_engine_set_hook(sim->e, want ? CS_SIM_CHECK_EVERY : 0, check_hook, sim);
}

void cs_sim_set_checks(CsSim *sim, bool on) {
  sim->checks = on;
  install_hook(sim);
}

uint64_t cs_sim_checks_run(const CsSim *sim) { return sim->checks_run; }

static double fraction_done(CsSim *sim) {
  const CsScenario *s = sim->s;
  if (sim->wl) {
    uint32_t P = cs_workload_workers(sim->wl), I = cs_workload_iterations(sim->wl), k = 0;
    for (uint32_t w = 0; w < P; w++)
      for (uint32_t i = 1; i <= I && cs_workload_record(sim->wl, w, i); i++) k++;
    return (double)k / ((double)P * I);
  }
  if (s->flows->len) {
    uint32_t k = 0;
    for (uint32_t m = 0; m < cs_fabric_messages(sim->fabric); m++) k += cs_fabric_message(sim->fabric, m)->delivered;
    return (double)k / s->flows->len;
  }
  if (s->duration > 0) return (double)cs_engine_now(sim->e) / (double)s->duration;
  return -1;
}

/* The engine in slices of simulated time sized to about a quarter second
 * of wall time each, reporting between them: the same events in the same
 * order as one run. */
static CsRunResult run_with_progress(CsSim *sim, CsTime until) {
  CsTime slice = 10 * CS_US;
  for (;;) {
    gint64 t0 = g_get_monotonic_time();
    CsTime now = cs_engine_now(sim->e);
    CsTime limit = until - now > slice ? now + slice : until;
    CsRunResult r = cs_engine_run(sim->e, limit);
    if (r != CS_RUN_LIMIT || limit == until) return r;
    gint64 dt = g_get_monotonic_time() - t0;
    if (dt < 100000 && slice < CS_TIME_MAX / 4) slice *= 2;
    else if (dt > 400000 && slice > 1) slice /= 2;
    sim->progress(sim->progress_ctx, cs_engine_now(sim->e), cs_sim_events(sim), fraction_done(sim));
  }
}

void cs_sim_set_output_dir(CsSim *sim, const char *dir) {
  g_free(sim->outdir);
  sim->outdir = g_strdup(dir);
}

/* ---- traces written while the run goes ---- */

static const char *node_name(const CsSim *sim, uint32_t n) { return sim->t->nodes[n].name; }

static void queue_counter(CsSim *sim, uint32_t di, uint64_t bytes) {
  if (sim->queue_shown[di] == bytes) return;
  sim->queue_shown[di] = bytes;
  QueueSample q = {sim->last_sample, di, bytes};
  g_array_append_val(sim->queue_samples, q);
}

static void link_row(void *ctx, uint32_t link, int dir, const CsLinkSample *x) {
  CsSim *sim = ctx;
  if (sim->queue_samples) {
    sim->queue_seen[2 * link + (uint32_t)dir] = sim->sample_pass;
    queue_counter(sim, 2 * link + (uint32_t)dir, x->queue_max);
  }
  CsCsv *c = sim->links_csv;
  if (!c) return;
  const CsLink *l = &sim->t->links[link];
  cs_csv_str(c, node_name(sim, dir ? l->b : l->a));
  cs_csv_str(c, node_name(sim, dir ? l->a : l->b));
  cs_csv_time(c, sim->last_sample);
  cs_csv_time(c, cs_engine_now(sim->e));
  cs_csv_uint(c, x->bytes);
  cs_csv_real(c, x->utilization);
  cs_csv_real(c, x->queue_mean);
  cs_csv_uint(c, x->queue_max);
  cs_csv_uint(c, x->drops);
  cs_csv_uint(c, x->losses);
  cs_csv_uint(c, x->marks);
  cs_csv_end_row(c);
}

static void sample_links(CsSim *sim) {
  sim->sample_pass++;
  cs_fabric_sample_links(sim->fabric, sim->last_sample, link_row, sim);
  if (sim->queue_samples) /* directions idle over the whole interval: back to 0 */
    for (uint32_t di = 0; di < 2 * sim->t->n_links; di++)
      if (sim->queue_seen[di] != sim->sample_pass) queue_counter(sim, di, 0);
  sim->last_sample = cs_engine_now(sim->e);
}

/* The sampler is the engine's daemon: it never keeps a run going, so a
 * run ends at its last event, traced or not. */
static void on_sample(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  CsSim *sim = ctx;
  sample_links(sim);
  /* No packet anywhere and nothing happens before the next event: skip
   * the empty intervals up to the boundary at or before it, so that a
   * long idle stretch (a late flow start, a long compute phase) costs one
   * sample, not one per interval.  (With packets queued or on a wire the
   * links are busy between events: no skipping then.) */
  CsTime iv = sim->sample_interval, now = cs_engine_now(e);
  if (iv > CS_TIME_MAX - now) return; /* the end of simulated time */
  CsTime at = now + iv;
  if (!cs_fabric_busy(sim->fabric)) {
    CsTime next = cs_engine_next_time(e);
    if (next == CS_TIME_MAX) return;
    if (next > at && next - next % iv > at) at = next - next % iv;
  }
  cs_engine_set_daemon(e, at, on_sample, sim);
}

static const char *const event_names[] = {"enqueue", "transmit", "drop", "loss", "deliver", "ack"};

static void packet_row(void *ctx, const CsPacketTrace *ev) {
  CsSim *sim = ctx;
  CsCsv *c = sim->packets_csv;
  cs_csv_time(c, ev->time);
  cs_csv_str(c, event_names[ev->event]);
  if (ev->link != UINT32_MAX) {
    const CsLink *l = &sim->t->links[ev->link];
    cs_csv_str(c, node_name(sim, ev->dir ? l->b : l->a));
    cs_csv_str(c, node_name(sim, ev->dir ? l->a : l->b));
  } else {
    cs_csv_str(c, node_name(sim, sim->t->hosts[ev->src_host]));
    cs_csv_str(c, node_name(sim, sim->t->hosts[ev->dst_host]));
  }
  if (ev->background) {
    char b[24];
    snprintf(b, sizeof b, "bg%u", ev->owner);
    cs_csv_str(c, b);
  } else {
    cs_csv_uint(c, ev->owner);
  }
  cs_csv_uint(c, ev->seq);
  cs_csv_uint(c, ev->bytes);
  cs_csv_uint(c, ev->queue_bytes);
  cs_csv_end_row(c);
}

static void open_traces(CsSim *sim) {
  unsigned tr = sim->s->output.traces;
  if (!sim->outdir) return;
  cs_csv_remove_stale(sim->outdir); /* what killed runs left */
  if (tr & CS_TRACE_LINKS) {
    static const char *cols[] = {"src", "dst", "t_start_s", "t_end_s", "bytes", "utilization", "queue_mean_bytes",
                                 "queue_max_bytes", "drops", "losses", "marks", NULL};
    sim->links_csv = cs_csv_open(sim->outdir, "links.csv", cols, sim->trace_error ? NULL : &sim->trace_error);
  }
  if (tr & CS_TRACE_PACKETS) {
    static const char *cols[] = {"time_s", "event", "src", "dst", "flow", "seq", "bytes", "queue_bytes", NULL};
    sim->packets_csv = cs_csv_open(sim->outdir, "packets.csv", cols, sim->trace_error ? NULL : &sim->trace_error);
    if (sim->packets_csv) cs_fabric_set_packet_trace(sim->fabric, packet_row, sim);
  }
  if (tr & CS_TRACE_TIMELINE) {
    cs_coll_record_spans(sim->env, true);
    sim->queue_samples = g_array_new(FALSE, FALSE, sizeof(QueueSample));
    sim->queue_shown = g_new0(uint64_t, 2 * (size_t)sim->t->n_links + 1);
    sim->queue_seen = g_new0(uint32_t, 2 * (size_t)sim->t->n_links + 1);
  }
  if (sim->links_csv || sim->queue_samples)
    cs_engine_set_daemon(sim->e, sim->sample_interval, on_sample, sim);
}

bool cs_sim_run(CsSim *sim, GError **error) {
  const CsScenario *s = sim->s;
  gint64 t0 = g_get_monotonic_time();
  open_traces(sim);
  if (sim->trace_error) {
    g_propagate_error(error, sim->trace_error);
    sim->trace_error = NULL;
    return false;
  }
  for (guint i = 0; i < s->flows->len; i++)
    cs_engine_schedule_at(sim->e, g_array_index(s->flows, CsFlowSpec, i).start, on_flow_start, sim, i);
  if (sim->wl) cs_workload_start(sim->wl, on_workload_done, sim);
  cs_fabric_start_background(sim->fabric);
  CsTime until = s->duration > 0 ? s->duration : CS_TIME_MAX;
  CsRunResult r = work_done(sim) && s->background->len == 0 ? CS_RUN_EMPTY
                 : sim->progress                           ? run_with_progress(sim, until)
                                                           : cs_engine_run(sim->e, until);
  sim->end = cs_engine_now(sim->e);
  if ((sim->links_csv || sim->queue_samples) && sim->end > sim->last_sample)
    sample_links(sim); /* the last, partial interval */
  sim->wall = (double)(g_get_monotonic_time() - t0) * 1e-6;
  count_failures(sim);
  if (sim->interrupted) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED,
                "%s: interrupted at %.6f s of simulated time (%.1f s of wall time)", s->file,
                (double)sim->end * 1e-12, sim->wall);
    return false;
  }
  if (sim->check_error) {
    g_propagate_prefixed_error(error, sim->check_error, "%s: --check after %" G_GUINT64_FORMAT " events, at %.9f s: ",
                               s->file, cs_engine_events_executed(sim->e), (double)sim->end * 1e-12);
    sim->check_error = NULL;
    return false;
  }
  if (r == CS_RUN_OVERFLOW || (r == CS_RUN_EMPTY && until == CS_TIME_MAX && cs_engine_overflowed(sim->e))) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: simulated time would pass 9223372s (2^63 ps); the run stopped at %.6f s", s->file,
                (double)sim->end * 1e-12);
    return false;
  }
  if (!cs_fabric_check_accounting(sim->fabric, error)) return false;
  if (sim->checks && !cs_fabric_check_state(sim->fabric, error)) return false;
  return true;
}

CsEngine *cs_sim_engine(CsSim *sim) { return sim->e; }
uint64_t cs_sim_events(const CsSim *sim) { return cs_engine_events_executed(sim->e); }
CsFabric *cs_sim_fabric(CsSim *sim) { return sim->fabric; }
CsNet *cs_sim_net(CsSim *sim) { return sim->fabric->ops == cs_fidelities[0].ops ? sim->fabric->impl : NULL; }
const CsTopology *cs_sim_topology(const CsSim *sim) { return sim->t; }
CsWorkload *cs_sim_workload(CsSim *sim) { return sim->wl; }
CsTime cs_sim_end_time(const CsSim *sim) { return sim->end; }
double cs_sim_wall_seconds(const CsSim *sim) { return sim->wall; }
uint32_t cs_sim_failed(const CsSim *sim) { return sim->failed; }

uint32_t cs_sim_unfinished(const CsSim *sim) {
  uint32_t n = sim->s->flows->len - sim->flows_started;
  for (uint32_t m = 0; m < cs_fabric_messages(sim->fabric); m++) {
    const CsMessageStats *st = cs_fabric_message(sim->fabric, m);
    n += !st->delivered && !st->failed;
  }
  return n;
}

uint32_t cs_sim_unfinished_workers(const CsSim *sim) {
  if (!sim->wl) return 0;
  uint32_t n = 0, it = cs_workload_iterations(sim->wl);
  for (uint32_t w = 0; w < cs_workload_workers(sim->wl); w++) n += cs_workload_record(sim->wl, w, it) == NULL;
  return n;
}

/* ---- the summary ---- */

static int cmp_time(const void *a, const void *b) {
  CsTime x = *(const CsTime *)a, y = *(const CsTime *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static CsTime percentile(const CsTime *v, size_t n, double q) {
  size_t rank = (size_t)ceil(q * (double)n);
  if (rank < 1) rank = 1;
  return v[rank - 1];
}

double cs_sim_codec_nmse(const CsScenario *s, GError **error) {
  CsCodecParams params;
  CsCodecCost cost;
  if (!cs_codec_from_spec(&s->workload.compression, s->workload.dtype, s->seed, &params, &cost, error)) return NAN;
  params.error_feedback = false;
  /* a synthetic gradient of the run's seed: N(0, 1), up to 1M elements */
  size_t n = (size_t)MIN((int64_t)1 << 20, s->workload.params);
  float *x = g_new(float, n), *y = g_new(float, n);
  CsRng rng;
  cs_rng_init(&rng, s->seed, cs_rng_stream_id("codec-gradient", 0, 0));
  for (size_t i = 0; i < n; i++) x[i] = (float)cs_rng_normal(&rng, 0.0, 1.0);
  double nmse = NAN;
  CsCodec *codec = cs_codec_new(&params, 0, error);
  if (codec) {
    size_t cap = cs_codec_payload_size(&params, n), len = 0;
    void *buf = g_malloc(cap);
    if (cs_codec_encode(codec, 1, x, n, buf, cap, &len, error) && cs_codec_decode(buf, len, y, n, error)) {
      double num = 0, den = 0;
      for (size_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)y[i];
        num += d * d;
        den += (double)x[i] * (double)x[i];
      }
      nmse = den > 0 ? num / den : 0.0;
    }
    g_free(buf);
    cs_codec_free(codec);
  }
  g_free(x);
  g_free(y);
  return nmse;
}

const CsSummary *cs_sim_summary(CsSim *sim) {
  if (sim->summarized) return &sim->summary;
  CsSummary *m = &sim->summary;
  memset(m, 0, sizeof *m);
  const CsScenario *s = sim->s;
  m->workers = sim->t->n_workers;
  m->servers = sim->t->n_servers;
  CsNetTotals tot = cs_fabric_totals(sim->fabric);
  m->packets_sent = tot.data.sent + tot.ack.sent;
  m->packets_dropped = tot.data.dropped + tot.ack.dropped;
  m->packets_lost = tot.data.lost + tot.ack.lost;
  m->retransmissions = tot.retransmissions;
  m->bg_packets_sent = tot.bg.sent;
  m->bg_packets_dropped = tot.bg.dropped;
  m->bg_packets_lost = tot.bg.lost;
  m->bg_delivered = tot.bg.delivered;
  m->bg_delay_mean_s = tot.bg.delivered ? tot.bg_delay_sum_s / (double)tot.bg.delivered : 0.0;
  m->events = cs_engine_events_executed(sim->e); /* the sampler is not counted: tracing changes no result */
  m->wall_s = sim->wall;
  double util_sum = 0;
  uint32_t dirs = 0;
  for (uint32_t l = 0; l < sim->t->n_links; l++)
    for (int d = 0; d < 2; d++) {
      CsLinkStats st = cs_fabric_link_stats(sim->fabric, l, d);
      double u = sim->end > 0 ? (double)st.busy / (double)sim->end : 0.0;
      util_sum += u;
      dirs++;
      if (u > m->link_util_max) m->link_util_max = u;
    }
  m->link_util_mean = dirs ? util_sum / dirs : 0.0;
  m->codec_nmse = NAN;
  m->allreduce_nmse = NAN;
  if (sim->wl) {
    GError *e = NULL;
    m->codec_nmse = cs_sim_codec_nmse(s, &e);
    g_clear_error(&e);
    CsCodecParams params;
    CsCodecCost cost;
    m->allreduce_nmse = NAN;
    if (cs_codec_from_spec(&s->workload.compression, s->workload.dtype, s->seed, &params, &cost, &e)) {
      uint32_t P = sim->t->n_workers;
      uint64_t n = (uint64_t)MIN(s->workload.params, (int64_t)65536);
      m->allreduce_nmse = cs_coll_result_nmse(s->workload.collective, &params, P, n, s->seed, s->workload.pull, &e);
    }
    g_clear_error(&e);
    uint32_t P = cs_workload_workers(sim->wl), I = cs_workload_iterations(sim->wl);
    CsTime *iters = g_new(CsTime, (size_t)P * I + 1);
    size_t k = 0;
    double sum_iter = 0, sum_compute = 0, sum_comm = 0, sum_codec = 0, sum_outside = 0, sum_exposed = 0, sum_wire = 0,
           sum_stale = 0;
    uint32_t first = (uint32_t)s->workload.warmup + 1; /* warm-up iterations are not measured */
    for (uint32_t w = 0; w < P; w++)
      for (uint32_t i = first; i <= I; i++) {
        const CsIterRecord *r = cs_workload_record(sim->wl, w, i);
        if (!r) continue;
        CsTime d = r->end - r->start;
        iters[k++] = d;
        sum_iter += (double)d;
        sum_compute += (double)(r->compute_end - r->start);
        sum_comm += r->first_send >= 0 ? (double)(r->comm_end - r->first_send) : 0.0;
        sum_codec += (double)r->codec;
        sum_outside += (double)r->codec_outside;
        sum_exposed += (double)cs_iter_exposed(r);
        sum_stale += r->staleness;
      }
    /* the bytes workers put on their links: every collective message they
     * sent in a measured iteration, headers and retransmissions included
     * (counted from the messages, some of which land after their sender's
     * iteration has ended) */
    for (uint32_t msg = 0; msg < cs_fabric_messages(sim->fabric); msg++) {
      const CsMessageStats *st = cs_fabric_message(sim->fabric, msg);
      if (st->iteration >= first && sim->t->nodes[sim->t->hosts[st->src]].role == CS_ROLE_WORKER)
        sum_wire += (double)st->wire_bytes;
    }
    m->iterations_measured = k;
    if (k) {
      qsort(iters, k, sizeof *iters, cmp_time);
      m->iter_mean_s = sum_iter / (double)k * 1e-12;
      m->iter_p50_s = (double)percentile(iters, k, 0.50) * 1e-12;
      m->iter_p99_s = (double)percentile(iters, k, 0.99) * 1e-12;
      m->compute_s = sum_compute / (double)k * 1e-12;
      m->comm_s = sum_comm / (double)k * 1e-12;
      m->codec_s = sum_codec / (double)k * 1e-12;
      m->codec_outside_s = sum_outside / (double)k * 1e-12;
      m->exposed_comm_s = sum_exposed / (double)k * 1e-12;
      m->wire_bytes_per_worker = sum_wire / (double)k;
      m->staleness_mean = sum_stale / (double)k;
    }
    g_free(iters);
  }
  sim->summarized = true;
  return m;
}

/* ---- files ---- */

static const char *const summary_cols[] = {
    "scenario", "topology", "workers", "servers", "collective", "method", "bits", "wire_bytes_per_worker",
    "iterations", "iter_mean_s", "iter_p50_s", "iter_p99_s", "compute_s", "comm_s", "codec_s",
    "exposed_comm_s", "packets_sent", "packets_dropped", "packets_lost", "retransmissions",
    "link_util_mean", "link_util_max", "codec_nmse", "events", "wall_s", "bg_packets_sent",
    "bg_packets_dropped", "bg_packets_lost", "bg_delay_mean_s",
    /* commsim's additions, after the SPEC's columns */
    "staleness_mean", "allreduce_nmse", "codec_outside_compute_s", NULL};

const char *const *cs_sim_summary_columns(void) { return summary_cols; }

/* One summary row's fields, as strings (for summary.csv and sweep.csv).
 * A value that does not apply to the run (iteration times without a
 * workload or without a measured iteration, staleness of synchronous
 * training, background delay without background traffic) is empty,
 * never 0. */
GPtrArray *cs_sim_summary_fields(CsSim *sim) {
  const CsSummary *m = cs_sim_summary(sim);
  const CsScenario *s = sim->s;
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  bool w = s->workload.present, measured = w && m->iterations_measured > 0;
  bool bg = s->background->len > 0;
  bool async = w && cs_collective_has(s->workload.collective, CS_COLLF_SERVERS) && !s->workload.sync;
  CsCodecMethod method = s->workload.compression.method;
#define ADD(...) g_ptr_array_add(f, g_strdup_printf(__VA_ARGS__))
#define EMPTY() g_ptr_array_add(f, g_strdup(""))
#define REAL_IF(ok, x) ((ok) ? ADD("%.12f", (x)) : EMPTY())
#define UINT(x) ADD("%" G_GUINT64_FORMAT, (guint64)(x))
#define UINT_IF(ok, x) ((ok) ? UINT(x) : EMPTY())
  ADD("%s", s->name);
  ADD("%s", cs_topo_type_name(s->topology.type));
  ADD("%u", m->workers);
  ADD("%u", m->servers);
  ADD("%s", w ? cs_collective_name(s->workload.collective) : "");
  ADD("%s", w ? cs_codec_method_name(method) : "");
  bool has_bits = w && (method == CS_CODEC_UNIFORM || method == CS_CODEC_STOCHASTIC);
  if (has_bits) ADD("%" G_GINT64_FORMAT, (gint64)s->workload.compression.bits);
  else EMPTY();
  if (measured) ADD("%.0f", m->wire_bytes_per_worker);
  else EMPTY();
  UINT_IF(w, m->iterations_measured);
  REAL_IF(measured, m->iter_mean_s);
  REAL_IF(measured, m->iter_p50_s);
  REAL_IF(measured, m->iter_p99_s);
  REAL_IF(measured, m->compute_s);
  REAL_IF(measured, m->comm_s);
  REAL_IF(measured, m->codec_s);
  REAL_IF(measured, m->exposed_comm_s);
  UINT(m->packets_sent);
  UINT(m->packets_dropped);
  UINT(m->packets_lost);
  UINT(m->retransmissions);
  ADD("%.6f", m->link_util_mean);
  ADD("%.6f", m->link_util_max);
  if (isnan(m->codec_nmse)) EMPTY();
  else ADD("%.6e", m->codec_nmse);
  UINT(m->events);
  ADD("%.3f", sim->reproducible ? 0.0 : m->wall_s);
  UINT_IF(bg, m->bg_packets_sent);
  UINT_IF(bg, m->bg_packets_dropped);
  UINT_IF(bg, m->bg_packets_lost);
  REAL_IF(bg && m->bg_delivered > 0, m->bg_delay_mean_s);
  if (async && measured) ADD("%.3f", m->staleness_mean);
  else EMPTY();
  if (isnan(m->allreduce_nmse)) EMPTY();
  else ADD("%.6e", m->allreduce_nmse);
  REAL_IF(measured, m->codec_outside_s);
#undef ADD
#undef EMPTY
#undef REAL_IF
#undef UINT
#undef UINT_IF
  return f;
}

static bool write_summary(CsSim *sim, const char *dir, GError **error) {
  CsCsv *c = cs_csv_open(dir, "summary.csv", summary_cols, error);
  if (!c) return false;
  GPtrArray *f = cs_sim_summary_fields(sim);
  for (guint i = 0; i < f->len; i++) cs_csv_str(c, f->pdata[i]);
  cs_csv_end_row(c);
  g_ptr_array_free(f, TRUE);
  return cs_csv_close(c, error);
}

static bool write_iterations(CsSim *sim, const char *dir, GError **error) {
  static const char *cols[] = {"worker", "iteration", "start_s", "compute_end_s", "comm_end_s", "end_s", "codec_s",
                               "codec_outside_compute_s", "exposed_comm_s", NULL};
  CsCsv *c = cs_csv_open(dir, "iterations.csv", cols, error);
  if (!c) return false;
  for (uint32_t w = 0; sim->wl && w < cs_workload_workers(sim->wl); w++)
    for (uint32_t i = 1; i <= cs_workload_iterations(sim->wl); i++) {
      const CsIterRecord *r = cs_workload_record(sim->wl, w, i);
      if (!r) break;
      cs_csv_str(c, sim->t->nodes[sim->t->workers[w]].name);
      cs_csv_uint(c, i);
      cs_csv_time(c, r->start);
      cs_csv_time(c, r->compute_end);
      cs_csv_time(c, r->comm_end);
      cs_csv_time(c, r->end);
      cs_csv_time(c, r->codec);
      cs_csv_time(c, r->codec_outside);
      cs_csv_time(c, cs_iter_exposed(r));
      cs_csv_end_row(c);
    }
  return cs_csv_close(c, error);
}

static bool write_messages(CsSim *sim, const char *dir, GError **error) {
  static const char *cols[] = {"iteration", "step", "src", "dst", "payload_bytes", "wire_bytes",
                               "start_s",   "end_s", "retransmissions", NULL};
  CsCsv *c = cs_csv_open(dir, "messages.csv", cols, error);
  if (!c) return false;
  for (uint32_t m = 0; m < cs_fabric_messages(sim->fabric); m++) {
    const CsMessageStats *st = cs_fabric_message(sim->fabric, m);
    cs_csv_uint(c, st->iteration);
    cs_csv_uint(c, st->step);
    cs_csv_str(c, sim->t->nodes[sim->t->hosts[st->src]].name);
    cs_csv_str(c, sim->t->nodes[sim->t->hosts[st->dst]].name);
    cs_csv_uint(c, st->payload);
    cs_csv_uint(c, st->wire_bytes);
    cs_csv_time(c, st->start);
    if (st->delivered) cs_csv_time(c, st->end);
    else cs_csv_empty(c); /* not delivered: no end */
    cs_csv_uint(c, st->retransmissions);
    cs_csv_end_row(c);
  }
  return cs_csv_close(c, error);
}

/* Chrome trace-event JSON (Perfetto, chrome://tracing).  The format asks
 * spans on one track to nest, so each node is a process with a track per
 * kind of activity: "compute" (forward and backward passes), "codec"
 * (serialized on the node: never overlapping) and as many "messages N"
 * tracks as the node has messages in flight at once (a message goes to
 * the first track free at its start).  Link queues are counter tracks of
 * a "links" process.  Times are microseconds with three decimals: whole
 * nanoseconds, each end rounded down before the duration is taken, so that
 * a viewer adding ts and dur in nanoseconds gets the same integer and a
 * span that ends when the next starts never overlaps it by a rounding. */
#define US_FMT "%" G_GINT64_FORMAT ".%03" G_GINT64_FORMAT
#define US_ARG(ns) (gint64)((ns) / 1000), (gint64)((ns) % 1000)
enum { TID_COMPUTE = 1, TID_CODEC = 2, TID_MESSAGES = 3 };

static void timeline_span(FILE *f, const char *name, const char *cat, uint32_t pid, uint32_t tid, CsTime start,
                          CsTime end) {
  CsTime a = start / 1000, b = end / 1000; /* ns */
  fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":" US_FMT ",\"dur\":" US_FMT,
          name, cat, pid, tid, US_ARG(a), US_ARG(b - a));
}

static void timeline_thread(FILE *f, uint32_t pid, uint32_t tid, const char *name) {
  fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}", pid, tid, name);
  fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"sort_index\":%u}}", pid,
          tid, tid);
}

static bool write_timeline(CsSim *sim, const char *dir, GError **error) {
  g_autofree char *final = g_build_filename(dir, "timeline.json", NULL);
  g_autofree char *tmp = cs_csv_temp_name(dir, "timeline.json");
  FILE *f = g_mkdir_with_parents(dir, 0755) == 0 ? fopen(tmp, "w") : NULL;
  if (!f) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write: %s", final, g_strerror(errno));
    return false;
  }
  const CsTopology *t = sim->t;
  setvbuf(f, NULL, _IOFBF, 1 << 16);
  fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"scenario\":\"%s\"},\"traceEvents\":[\n", sim->s->name);
  /* node n is process n + 1 (pid 0 is special to some viewers); the links are the last */
  uint32_t links_pid = t->n_nodes + 1;
  fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"links (queue bytes)\"}}", links_pid);
  fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"sort_index\":%u}}", links_pid,
          links_pid);
  for (uint32_t n = 0; n < t->n_nodes; n++) {
    fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"%s\"}}", n + 1, t->nodes[n].name);
    fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"sort_index\":%u}}", n + 1, n + 1);
  }
  uint32_t W = sim->wl ? cs_workload_workers(sim->wl) : 0;
  for (uint32_t w = 0; w < W; w++) {
    uint32_t pid = t->workers[w] + 1;
    timeline_thread(f, pid, TID_COMPUTE, "compute");
    for (uint32_t i = 1; i <= cs_workload_iterations(sim->wl); i++) {
      const CsIterRecord *r = cs_workload_record(sim->wl, w, i);
      if (!r) break;
      timeline_span(f, "compute", "compute", pid, TID_COMPUTE, r->start, r->compute_end);
      fprintf(f, ",\"args\":{\"iteration\":%u}}", i);
    }
  }
  const GArray *spans = cs_coll_spans(sim->env);
  bool *has_codec = g_new0(bool, t->n_nodes);
  for (guint i = 0; spans && i < spans->len; i++) {
    const CsCodecSpan *sp = &g_array_index(spans, CsCodecSpan, i);
    if (!has_codec[sp->node]) timeline_thread(f, sp->node + 1, TID_CODEC, "codec");
    has_codec[sp->node] = true;
    timeline_span(f, "codec", "codec", sp->node + 1, TID_CODEC, sp->start, sp->end);
    fputc('}', f);
  }
  g_free(has_codec);
  /* messages start in the order they are numbered: first fit on tracks */
  GArray **lanes = g_new0(GArray *, t->n_nodes); /* per node: CsTime end of each track's last span */
  for (uint32_t m = 0; m < cs_fabric_messages(sim->fabric); m++) {
    const CsMessageStats *st = cs_fabric_message(sim->fabric, m);
    uint32_t a = t->hosts[st->src], b = t->hosts[st->dst];
    CsTime end = st->delivered || st->failed ? st->end : sim->end;
    if (!lanes[a]) lanes[a] = g_array_new(FALSE, FALSE, sizeof(CsTime));
    guint lane = 0;
    while (lane < lanes[a]->len && g_array_index(lanes[a], CsTime, lane) > st->start) lane++;
    if (lane == lanes[a]->len) {
      g_array_append_val(lanes[a], end);
      g_autofree char *name = g_strdup_printf("messages %u", lane + 1);
      timeline_thread(f, a + 1, TID_MESSAGES + lane, name);
    }
    g_array_index(lanes[a], CsTime, lane) = end;
    g_autofree char *name = g_strdup_printf("%s->%s", t->nodes[a].name, t->nodes[b].name);
    timeline_span(f, name, "message", a + 1, TID_MESSAGES + lane, st->start, end);
    fprintf(f,
            ",\"args\":{\"message\":%u,\"payload_bytes\":%" G_GUINT64_FORMAT ",\"iteration\":%u,\"step\":%u,"
            "\"retransmissions\":%u,\"delivered\":%s}}",
            m, st->payload, st->iteration, st->step, st->retransmissions, st->delivered ? "true" : "false");
  }
  for (uint32_t n = 0; n < t->n_nodes; n++)
    if (lanes[n]) g_array_free(lanes[n], TRUE);
  g_free(lanes);
  /* queue counters: the most bytes waiting in each sampling interval, from
   * its start; a direction's counter returns to 0 when its queue empties */
  for (guint i = 0; sim->queue_samples && i < sim->queue_samples->len; i++) {
    const QueueSample *q = &g_array_index(sim->queue_samples, QueueSample, i);
    const CsLink *l = &t->links[q->dir / 2];
    uint32_t from = q->dir % 2 ? l->b : l->a, to = q->dir % 2 ? l->a : l->b;
    fprintf(f, ",\n{\"name\":\"%s->%s\",\"ph\":\"C\",\"pid\":%u,\"ts\":" US_FMT ",\"args\":{\"queue_bytes\":%" G_GUINT64_FORMAT "}}",
            t->nodes[from].name, t->nodes[to].name, links_pid, US_ARG(q->time / 1000), q->bytes);
  }
  fprintf(f, "\n]}\n");
  bool ok = fflush(f) == 0 && !ferror(f);
  ok = fclose(f) == 0 && ok && g_rename(tmp, final) == 0;
  if (!ok) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write", final);
    g_unlink(tmp);
  }
  return ok;
}
#undef US_FMT
#undef US_ARG

/* The files a run writes, by trace. */
static const struct {
  unsigned trace;
  const char *name;
} run_files[] = {
    {CS_TRACE_SUMMARY, "summary.csv"},   {CS_TRACE_ITERATIONS, "iterations.csv"}, {CS_TRACE_MESSAGES, "messages.csv"},
    {CS_TRACE_LINKS, "links.csv"},       {CS_TRACE_PACKETS, "packets.csv"},       {CS_TRACE_TIMELINE, "timeline.json"},
};

bool cs_sim_check_output_dir(const char *dir, GError **error) {
  if (g_file_test(dir, G_FILE_TEST_EXISTS) && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s: error: the output folder is a file", dir);
    return false;
  }
  g_autofree char *sweep = g_build_filename(dir, "sweep.csv", NULL);
  if (g_file_test(sweep, G_FILE_TEST_EXISTS)) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: this folder holds a sweep's results (sweep.csv); write the run elsewhere with -o DIR", dir);
    return false;
  }
  return true;
}

/* What an earlier run left that this one did not rewrite. */
static void remove_stale_outputs(CsSim *sim, const char *dir, bool wrote_iterations) {
  unsigned tr = sim->s->output.traces;
  for (size_t i = 0; i < G_N_ELEMENTS(run_files); i++) {
    bool wrote = (tr & run_files[i].trace) && (run_files[i].trace != CS_TRACE_ITERATIONS || wrote_iterations);
    if (wrote) continue;
    g_autofree char *path = g_build_filename(dir, run_files[i].name, NULL);
    g_unlink(path);
  }
  for (const char *const *stem = cs_plot_run_stems; *stem; stem++)
    for (const char *const *ext = cs_plot_formats; *ext; ext++) {
      g_autofree char *name = g_strdup_printf("%s.%s", *stem, *ext);
      g_autofree char *path = g_build_filename(dir, name, NULL);
      g_unlink(path);
    }
}

bool cs_sim_write_outputs(CsSim *sim, const char *dir, GError **error) {
  unsigned tr = sim->s->output.traces;
  if (sim->links_csv) {
    CsCsv *c = sim->links_csv;
    sim->links_csv = NULL;
    if (!cs_csv_close(c, error)) return false;
  }
  if (sim->packets_csv) {
    CsCsv *c = sim->packets_csv;
    sim->packets_csv = NULL;
    cs_fabric_set_packet_trace(sim->fabric, NULL, NULL);
    if (!cs_csv_close(c, error)) return false;
  }
  if ((tr & CS_TRACE_TIMELINE) && !write_timeline(sim, dir, error)) return false;
  if ((tr & CS_TRACE_ITERATIONS) && sim->wl && !write_iterations(sim, dir, error)) return false;
  if ((tr & CS_TRACE_MESSAGES) && !write_messages(sim, dir, error)) return false;
  /* last: a sweep takes a folder with a summary.csv as a complete point */
  if ((tr & CS_TRACE_SUMMARY) && !write_summary(sim, dir, error)) return false;
  remove_stale_outputs(sim, dir, sim->wl != NULL);
  return true;
}
