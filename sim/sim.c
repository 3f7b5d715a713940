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
#include "commsim/rng.h"
#include "commsim/sim.h"
#include "commsim/workload.h"

struct CsSim {
  const CsScenario *s;
  CsTopology *t;
  CsRoutes *r;
  CsEngine *e;
  CsNet *net;
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
  uint64_t sampler_events; /* not counted in `events`: tracing changes no result */
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

static void on_idle(CsNet *net, void *ctx);

/* Messages of more than CS_NET_MAX_PACKETS packets, or more buckets than
 * it is sane to schedule, are scenario errors found before anything runs. */
static bool check_sizes(const CsScenario *s, GError **error) {
  uint64_t mss = (uint64_t)(s->transport.mtu - s->transport.header);
  for (guint i = 0; i < s->flows->len; i++) {
    const CsFlowSpec *f = &g_array_index(s->flows, CsFlowSpec, i);
    if (((uint64_t)f->size + mss - 1) / mss > CS_NET_MAX_PACKETS) {
      CsYamlNode at = {.origin = s->file, .line = f->line, .col = f->col};
      cs_yaml_error(error, &at, "flows[%u].size: more than 2^30 packets of %" G_GUINT64_FORMAT " B in one message", i, mss);
      return false;
    }
  }
  if (!s->workload.present) return true;
  CsYamlNode at = {.origin = s->file, .line = s->workload.line, .col = s->workload.col};
  const CsWorkloadSpec *w = &s->workload;
  uint64_t dbytes = !strcmp(w->dtype, "fp32") ? 4 : 2;
  uint64_t per_bucket = w->buckets > 0 ? MAX((uint64_t)w->buckets / dbytes, 1) : (uint64_t)w->params;
  if (per_bucket > (uint64_t)w->params) per_bucket = (uint64_t)w->params;
  if (((uint64_t)w->params + per_bucket - 1) / per_bucket > 1000000) {
    cs_yaml_error(error, &at, "workload.buckets: more than 1,000,000 buckets per iteration; use larger buckets");
    return false;
  }
  /* the largest message: a whole bucket, uncompressed, plus headers */
  if (per_bucket * 8 / mss > CS_NET_MAX_PACKETS) {
    cs_yaml_error(error, &at, "workload: a bucket of %" G_GUINT64_FORMAT " elements would need more than 2^30 packets in one message; use buckets: (bytes) to split it", per_bucket);
    return false;
  }
  return true;
}

CsSim *cs_sim_new(const CsScenario *s, GError **error) {
  CsSim *sim = g_new0(CsSim, 1);
  sim->s = s;
  sim->t = cs_topology_build(s, error);
  if (!sim->t) goto fail;
  sim->r = cs_routes_build(sim->t, s->routing, error);
  if (!sim->r) {
    g_prefix_error(error, "%s: ", s->file);
    goto fail;
  }
  if (!check_sizes(s, error)) goto fail;
  sim->e = cs_engine_new();
  sim->net = cs_net_new(sim->e, s, sim->t, sim->r);
  cs_net_set_idle_fn(sim->net, on_idle, sim);
  sim->env = cs_coll_env_new(sim->e, sim->net, sim->t);
  if (s->workload.present) {
    sim->wl = cs_workload_new(sim->env, sim->e, s, sim->t, error);
    if (!sim->wl) goto fail;
  }
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
  g_clear_error(&sim->trace_error);
  g_clear_error(&sim->check_error);
  cs_workload_free(sim->wl);
  cs_coll_env_free(sim->env);
  cs_net_free(sim->net);
  cs_engine_free(sim->e);
  cs_routes_free(sim->r);
  cs_topology_free(sim->t);
  g_free(sim);
}

static bool work_done(CsSim *sim) {
  return sim->flows_started == sim->s->flows->len && cs_net_active(sim->net) == 0 &&
         (!sim->wl || cs_workload_done(sim->wl));
}

static void stop_if_done(CsSim *sim) {
  /* a message abandoned leaves its collective waiting for ever: once
   * nothing else is in flight, the run is over (and reports it) */
  bool stuck = cs_net_failed(sim->net) > 0 && cs_net_active(sim->net) == 0 &&
               sim->flows_started == sim->s->flows->len;
  if (work_done(sim) || stuck) {
    cs_net_stop_background(sim->net);
    cs_engine_stop(sim->e);
  }
}

static void on_delivered(CsNet *net, void *ctx, uint32_t msg, bool failed) {
  (void)net, (void)msg;
  CsSim *sim = ctx;
  if (failed) sim->failed++;
}

/* Every message finished: stop, unless more work is to come. */
static void on_idle(CsNet *net, void *ctx) {
  (void)net;
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
  uint32_t msg = cs_net_send(sim->net, src, dst, (uint64_t)f->size, on_delivered, sim);
  cs_net_tag_message(sim->net, msg, 0, (uint32_t)arg); /* raw transfers: iteration 0, step = index */
}

/* Messages of collectives that fail are counted here too. */
static void count_failures(CsSim *sim) {
  uint32_t failed = 0;
  for (uint32_t m = 0; m < cs_net_messages(sim->net); m++) failed += cs_net_message(sim->net, m)->failed;
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
  return cs_net_check_state(sim->net, &sim->check_error);
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
    for (uint32_t m = 0; m < cs_net_messages(sim->net); m++) k += cs_net_message(sim->net, m)->delivered;
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

static void link_row(void *ctx, uint32_t link, int dir, const CsLinkSample *x) {
  CsSim *sim = ctx;
  CsCsv *c = sim->links_csv;
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
  cs_net_sample_links(sim->net, sim->last_sample, link_row, sim);
  sim->last_sample = cs_engine_now(sim->e);
}

static void on_sample(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  CsSim *sim = ctx;
  sim->sampler_events++;
  sample_links(sim);
  /* keep sampling while anything else is pending: the sampler alone never
   * keeps a run going */
  if (cs_engine_pending(e) == 0) return;
  /* No packet anywhere and nothing happens before the next event: skip
   * the empty intervals up to the boundary at or before it, so that a
   * long idle stretch (a late flow start, a long compute phase) costs one
   * sample, not one per interval.  (With packets queued or on a wire the
   * links are busy between events: no skipping then.) */
  CsTime iv = sim->s->output.sample_interval, now = cs_engine_now(e);
  if (iv > CS_TIME_MAX - now) return; /* the end of simulated time */
  CsTime at = now + iv;
  if (cs_net_packets_in_flight(sim->net) == 0) {
    CsTime next = cs_engine_next_time(e);
    if (next > at && next - next % iv > at) at = next - next % iv;
  }
  cs_engine_schedule_at(e, at, on_sample, sim, 0);
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
    snprintf(b, sizeof b, "bg%u", ev->flow);
    cs_csv_str(c, b);
  } else {
    cs_csv_uint(c, ev->flow);
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
    if (sim->links_csv) cs_engine_schedule_at(sim->e, sim->s->output.sample_interval, on_sample, sim, 0);
  }
  if (tr & CS_TRACE_PACKETS) {
    static const char *cols[] = {"time_s", "event", "src", "dst", "flow", "seq", "bytes", "queue_bytes", NULL};
    sim->packets_csv = cs_csv_open(sim->outdir, "packets.csv", cols, sim->trace_error ? NULL : &sim->trace_error);
    if (sim->packets_csv) cs_net_set_packet_trace(sim->net, packet_row, sim);
  }
  if (tr & CS_TRACE_TIMELINE) cs_coll_record_spans(sim->env, true);
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
  cs_net_start_background(sim->net);
  CsTime until = s->duration > 0 ? s->duration : CS_TIME_MAX;
  CsRunResult r = work_done(sim) && s->background->len == 0 ? CS_RUN_EMPTY
                 : sim->progress                           ? run_with_progress(sim, until)
                                                           : cs_engine_run(sim->e, until);
  sim->end = cs_engine_now(sim->e);
  if (sim->links_csv && sim->end > sim->last_sample) sample_links(sim); /* the last, partial interval */
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
  if (!cs_net_check_accounting(sim->net, error)) return false;
  if (sim->checks && !cs_net_check_state(sim->net, error)) return false;
  return true;
}

CsEngine *cs_sim_engine(CsSim *sim) { return sim->e; }
uint64_t cs_sim_events(const CsSim *sim) { return cs_engine_events_executed(sim->e) - sim->sampler_events; }
CsNet *cs_sim_net(CsSim *sim) { return sim->net; }
const CsTopology *cs_sim_topology(const CsSim *sim) { return sim->t; }
CsWorkload *cs_sim_workload(CsSim *sim) { return sim->wl; }
CsTime cs_sim_end_time(const CsSim *sim) { return sim->end; }
double cs_sim_wall_seconds(const CsSim *sim) { return sim->wall; }
uint32_t cs_sim_failed(const CsSim *sim) { return sim->failed; }

uint32_t cs_sim_unfinished(const CsSim *sim) {
  uint32_t n = sim->s->flows->len - sim->flows_started;
  for (uint32_t m = 0; m < cs_net_messages(sim->net); m++) {
    const CsMessageStats *st = cs_net_message(sim->net, m);
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
  if (!cs_workload_codec(s, &params, &cost, error)) return NAN;
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
  CsNetTotals tot = cs_net_totals(sim->net);
  m->packets_sent = tot.data.sent + tot.ack.sent;
  m->packets_dropped = tot.data.dropped + tot.ack.dropped;
  m->packets_lost = tot.data.lost + tot.ack.lost;
  m->retransmissions = tot.retransmissions;
  m->bg_packets_sent = tot.bg.sent;
  m->bg_packets_dropped = tot.bg.dropped;
  m->bg_packets_lost = tot.bg.lost;
  m->bg_delay_mean_s = tot.bg.delivered ? tot.bg_delay_sum_s / (double)tot.bg.delivered : 0.0;
  m->events = cs_engine_events_executed(sim->e) - sim->sampler_events;
  m->wall_s = sim->wall;
  double util_sum = 0;
  uint32_t dirs = 0;
  for (uint32_t l = 0; l < sim->t->n_links; l++)
    for (int d = 0; d < 2; d++) {
      CsLinkStats st = cs_net_link_stats(sim->net, l, d);
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
    if (cs_workload_codec(s, &params, &cost, &e)) {
      uint32_t P = sim->t->n_workers;
      uint64_t n = (uint64_t)MIN(s->workload.params, (int64_t)65536);
      m->allreduce_nmse = cs_coll_result_nmse(s->workload.collective, &params, P, n, s->seed, s->workload.pull, &e);
    }
    g_clear_error(&e);
    uint32_t P = cs_workload_workers(sim->wl), I = cs_workload_iterations(sim->wl);
    CsTime *iters = g_new(CsTime, (size_t)P * I + 1);
    size_t k = 0;
    double sum_iter = 0, sum_compute = 0, sum_comm = 0, sum_codec = 0, sum_wire = 0, sum_stale = 0;
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
        sum_stale += r->staleness;
      }
    /* the bytes workers put on their links: every collective message they
     * sent in a measured iteration, headers and retransmissions included
     * (counted from the messages, some of which land after their sender's
     * iteration has ended) */
    for (uint32_t msg = 0; msg < cs_net_messages(sim->net); msg++) {
      const CsMessageStats *st = cs_net_message(sim->net, msg);
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
      m->exposed_comm_s = m->iter_mean_s - m->compute_s - m->codec_s;
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
    "staleness_mean", "allreduce_nmse", NULL};

const char *const *cs_sim_summary_columns(void) { return summary_cols; }

/* One summary row's fields, as strings (for summary.csv and sweep.csv). */
GPtrArray *cs_sim_summary_fields(CsSim *sim) {
  const CsSummary *m = cs_sim_summary(sim);
  const CsScenario *s = sim->s;
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  bool w = s->workload.present;
  const char *method = s->workload.compression.method;
  g_ptr_array_add(f, g_strdup(s->name));
  g_ptr_array_add(f, g_strdup(cs_topo_type_name(s->topology.type)));
  g_ptr_array_add(f, g_strdup_printf("%u", m->workers));
  g_ptr_array_add(f, g_strdup_printf("%u", m->servers));
  g_ptr_array_add(f, g_strdup(w ? cs_collective_name(s->workload.collective) : ""));
  g_ptr_array_add(f, g_strdup(w ? method : ""));
  bool has_bits = w && (!strcmp(method, "uniform") || !strcmp(method, "stochastic"));
  g_ptr_array_add(f, has_bits ? g_strdup_printf("%" G_GINT64_FORMAT, (gint64)s->workload.compression.bits) : g_strdup(""));
  g_ptr_array_add(f, g_strdup_printf("%.0f", m->wire_bytes_per_worker));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, (guint64)m->iterations_measured));
#define REAL(x) g_ptr_array_add(f, g_strdup_printf("%.12f", (x)))
  REAL(m->iter_mean_s);
  REAL(m->iter_p50_s);
  REAL(m->iter_p99_s);
  REAL(m->compute_s);
  REAL(m->comm_s);
  REAL(m->codec_s);
  REAL(m->exposed_comm_s);
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->packets_sent));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->packets_dropped));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->packets_lost));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->retransmissions));
  g_ptr_array_add(f, g_strdup_printf("%.6f", m->link_util_mean));
  g_ptr_array_add(f, g_strdup_printf("%.6f", m->link_util_max));
  g_ptr_array_add(f, isnan(m->codec_nmse) ? g_strdup("") : g_strdup_printf("%.6e", m->codec_nmse));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->events));
  g_ptr_array_add(f, g_strdup_printf("%.3f", sim->reproducible ? 0.0 : m->wall_s));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->bg_packets_sent));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->bg_packets_dropped));
  g_ptr_array_add(f, g_strdup_printf("%" G_GUINT64_FORMAT, m->bg_packets_lost));
  REAL(m->bg_delay_mean_s);
  g_ptr_array_add(f, g_strdup_printf("%.3f", m->staleness_mean));
  g_ptr_array_add(f, isnan(m->allreduce_nmse) ? g_strdup("") : g_strdup_printf("%.6e", m->allreduce_nmse));
#undef REAL
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
  static const char *cols[] = {"worker", "iteration", "start_s", "compute_end_s", "comm_end_s", "end_s", "codec_s", NULL};
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
      cs_csv_end_row(c);
    }
  return cs_csv_close(c, error);
}

static bool write_messages(CsSim *sim, const char *dir, GError **error) {
  static const char *cols[] = {"iteration", "step", "src", "dst", "payload_bytes", "wire_bytes",
                               "start_s",   "end_s", "retransmissions", NULL};
  CsCsv *c = cs_csv_open(dir, "messages.csv", cols, error);
  if (!c) return false;
  for (uint32_t m = 0; m < cs_net_messages(sim->net); m++) {
    const CsMessageStats *st = cs_net_message(sim->net, m);
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

/* Chrome trace-event JSON (Perfetto, chrome://tracing): one track per
 * node; compute, codec and message spans; times in microseconds. */
static bool write_timeline(CsSim *sim, const char *dir, GError **error) {
  g_autofree char *final = g_build_filename(dir, "timeline.json", NULL);
  g_autofree char *tmp = cs_csv_temp_name(dir, "timeline.json");
  FILE *f = g_mkdir_with_parents(dir, 0755) == 0 ? fopen(tmp, "w") : NULL;
  if (!f) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write: %s", final, g_strerror(errno));
    return false;
  }
  setvbuf(f, NULL, _IOFBF, 1 << 16);
  fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"commsim %s\"}}", sim->s->name);
  for (uint32_t n = 0; n < sim->t->n_nodes; n++)
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"%s\"}}", n,
            sim->t->nodes[n].name);
#define US(ps) ((double)(ps) * 1e-6)
  for (uint32_t w = 0; sim->wl && w < cs_workload_workers(sim->wl); w++)
    for (uint32_t i = 1; i <= cs_workload_iterations(sim->wl); i++) {
      const CsIterRecord *r = cs_workload_record(sim->wl, w, i);
      if (!r) break;
      fprintf(f, ",\n{\"name\":\"compute\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.6f,\"dur\":%.6f,\"args\":{\"iteration\":%u}}",
              sim->t->workers[w], US(r->start), US(r->compute_end - r->start), i);
    }
  const GArray *spans = cs_coll_spans(sim->env);
  for (guint i = 0; spans && i < spans->len; i++) {
    const CsCodecSpan *sp = &g_array_index(spans, CsCodecSpan, i);
    fprintf(f, ",\n{\"name\":\"codec\",\"cat\":\"codec\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.6f,\"dur\":%.6f}", sp->node,
            US(sp->start), US(sp->end - sp->start));
  }
  for (uint32_t m = 0; m < cs_net_messages(sim->net); m++) {
    const CsMessageStats *st = cs_net_message(sim->net, m);
    if (!st->delivered) continue;
    uint32_t a = sim->t->hosts[st->src], b = sim->t->hosts[st->dst];
    fprintf(f, ",\n{\"name\":\"%s->%s\",\"cat\":\"message\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":%.6f,\"dur\":%.6f,"
               "\"args\":{\"payload_bytes\":%" G_GUINT64_FORMAT ",\"iteration\":%u,\"step\":%u,\"retransmissions\":%u}}",
            sim->t->nodes[a].name, sim->t->nodes[b].name, a, US(st->start), US(st->end - st->start), st->payload,
            st->iteration, st->step, st->retransmissions);
  }
#undef US
  fprintf(f, "\n]}\n");
  bool ok = fflush(f) == 0 && !ferror(f);
  ok = fclose(f) == 0 && ok && g_rename(tmp, final) == 0;
  if (!ok) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write", final);
    g_unlink(tmp);
  }
  return ok;
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
    cs_net_set_packet_trace(sim->net, NULL, NULL);
    if (!cs_csv_close(c, error)) return false;
  }
  if ((tr & CS_TRACE_TIMELINE) && !write_timeline(sim, dir, error)) return false;
  if ((tr & CS_TRACE_ITERATIONS) && sim->wl && !write_iterations(sim, dir, error)) return false;
  if ((tr & CS_TRACE_MESSAGES) && !write_messages(sim, dir, error)) return false;
  /* last: a sweep takes a folder with a summary.csv as a complete point */
  if ((tr & CS_TRACE_SUMMARY) && !write_summary(sim, dir, error)) return false;
  return true;
}
