/* summary.c - a run's statistics: the means, percentiles and totals of
 * summary.csv, and the codec's error. */
#include "config.h"

#include "sim_private.h"

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
  /* fp32 sent as it is: the copy is exact (what the sample below gives,
   * without a million normal draws and two copies) */
  if (params.method == CS_CODEC_NONE && params.dtype == CS_DTYPE_FP32) return 0.0;
  /* a synthetic gradient of the run's seed: N(0, 1), up to 1M elements */
  size_t n = (size_t)MIN((int64_t)1 << 20, s->workload.params);
  float *x = g_new(float, n), *y = g_new(float, n);
  CsRng rng;
  cs_rng_init(&rng, s->seed, cs_rng_stream_id("codec-gradient", 0, 0));
  cs_rng_normal_fill(&rng, x, n);
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
  /* what ran: a ps sharded over the servers named in workload.servers */
  if (s->workload.present && s->workload.servers && s->workload.servers->len > 0) m->servers = s->workload.servers->len;
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
  m->fast_forward_s = (double)tot.fast_forwarded * 1e-12;
  m->jumps = tot.jumps;
  m->events = cs_sim_events(sim); /* the sampler and hybrid's watch are not counted: tracing changes no result */
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
      m->pause_frames += st.pause_frames;
      if ((double)st.paused * 1e-12 > m->paused_s_max) m->paused_s_max = (double)st.paused * 1e-12;
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
      /* up to 65,536 elements per worker, and 2^22 in all (thousands of workers) */
      uint64_t n = (uint64_t)MIN(s->workload.params, (int64_t)MIN(65536, MAX(256, (1 << 22) / (int64_t)MAX(P, 1))));
      m->allreduce_nmse = cs_coll_result_nmse(s->workload.collective, &params, P, sim->t->gpus_per_host, n, s->seed,
                                              s->workload.pull, &e);
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
     * iteration has ended), of the iterations the means are over: not
     * those of an iteration the run ended in (duration) */
    for (guint i = first; i < sim->retired_wire->len; i++) sum_wire += g_array_index(sim->retired_wire, double, i);
    for (uint32_t hi = 0; sim->retire_host && hi < sim->t->n_hosts; hi++) { /* an iteration the run ended in */
      const struct RetireHost *h = &sim->retire_host[hi];
      if (h->worker && h->iter >= first && h->iter < sim->retired_wire->len &&
          !cs_workload_record(sim->wl, h->worker - 1, h->iter))
        sum_wire -= h->wire;
    }
    g_autofree uint32_t *worker_of = g_new0(uint32_t, sim->t->n_hosts + 1); /* per host: worker + 1, 0 for none */
    for (uint32_t w = 0; w < P; w++) worker_of[sim->t->nodes[sim->t->workers[w]].host] = w + 1;
    for (uint32_t msg = cs_fabric_first_message(sim->fabric); msg < cs_fabric_messages(sim->fabric); msg++) {
      const CsMessageStats *st = cs_fabric_message(sim->fabric, msg);
      uint32_t w = worker_of[st->src];
      if (st->iteration >= first && w && cs_workload_record(sim->wl, w - 1, st->iteration)) sum_wire += (double)st->wire_bytes;
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

