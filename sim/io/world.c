/* world.c - a scenario's world: what each layer needs of the scenario,
 * and the one validation pass that validate, model and run all make, so
 * that they refuse the same scenarios with the same messages.
 *
 * The reader (scenario.c) checks each value where it stands; what needs
 * the network built or several sections at once is checked here.
 */
#include "config.h"

#include <string.h>

#include "commsim/scenario.h"
#include "commsim/units.h"

CsNetConfig cs_scenario_net_config(const CsScenario *s) {
  return (CsNetConfig){s->seed, s->transport, (const CsBackgroundSpec *)(void *)s->background->data,
                       s->background->len, (uint32_t)s->hybrid_rounds, s->hybrid_tolerance};
}

/* The names the scenario uses, against the network. */
static bool check_names(const CsTopology *t, const CsScenario *s, GError **error) {
  for (guint i = 0; i < s->flows->len; i++) {
    const CsFlowSpec *f = &g_array_index(s->flows, CsFlowSpec, i);
    g_autofree char *ws = g_strdup_printf("flows[%u].src", i), *wd = g_strdup_printf("flows[%u].dst", i);
    if (!cs_topology_check_host(t, f->src, ws, f->at, error) || !cs_topology_check_host(t, f->dst, wd, f->at, error))
      return false;
  }
  for (guint i = 0; i < s->background->len; i++) {
    const CsBackgroundSpec *b = &g_array_index(s->background, CsBackgroundSpec, i);
    g_autofree char *ws = g_strdup_printf("background[%u].src", i), *wd = g_strdup_printf("background[%u].dst", i);
    if (!cs_topology_check_host(t, b->src, ws, b->at, error) || !cs_topology_check_host(t, b->dst, wd, b->at, error))
      return false;
  }
  const CsWorkloadSpec *w = &s->workload;
  if (!w->present) return true;
  if (t->n_workers == 0) {
    cs_error_at(error, w->at, "workload: the topology has no workers");
    return false;
  }
  if (cs_collective_has(w->collective, CS_COLLF_SERVERS) && t->n_servers == 0) {
    cs_error_at(error, w->at,
                "workload: collective %s needs servers and the topology has none (set topology.servers, or role: server)",
                cs_collective_name(w->collective));
    return false;
  }
  if (cs_collective_has(w->collective, CS_COLLF_POW2) && (t->n_workers & (t->n_workers - 1)) != 0) {
    cs_error_at(error, w->at,
                "workload: collective %s needs a power-of-two number of workers, not %u (use ring or tree)",
                cs_collective_name(w->collective), t->n_workers);
    return false;
  }
  for (guint i = 0; i < w->servers->len; i++) {
    const CsNameRef *r = &g_array_index(w->servers, CsNameRef, i);
    int64_t id = cs_topology_find(t, r->name);
    if (id < 0 || t->nodes[id].role != CS_ROLE_SERVER) {
      GPtrArray *cands = g_ptr_array_new();
      for (uint32_t j = 0; j < t->n_servers; j++) g_ptr_array_add(cands, t->nodes[t->servers[j]].name);
      g_ptr_array_add(cands, NULL);
      const char *close = cs_closest(r->name, (const char *const *)cands->pdata);
      if (id >= 0)
        cs_error_at(error, r->at, "workload.servers: '%s' is a %s, not a server", r->name,
                    cs_role_name(t->nodes[id].role));
      else if (close)
        cs_error_at(error, r->at, "workload.servers: unknown server '%s' (did you mean '%s'?)", r->name, close);
      else
        cs_error_at(error, r->at, "workload.servers: unknown server '%s'", r->name);
      g_ptr_array_free(cands, TRUE);
      return false;
    }
  }
  return true;
}

/* Where a link's settings were last given (defaults:, its links[] entry,
 * a links_override), else the file. */
static CsLoc link_loc(const CsScenario *s, const CsLink *k) { return k->spec.at.file ? k->spec.at : s->topology.at; }

/* ... and of its buffer, PFC, bandwidth and latency, for the errors about them. */
static CsLoc headroom_loc(const CsScenario *s, const CsLink *k) {
  return k->spec.headroom_at.file ? k->spec.headroom_at : link_loc(s, k);
}

/* PFC's headroom: what arrives after a switch sends XOFF, until the
 * sender has stopped (the frame's flight, the bytes already on the wire
 * coming back, a packet being sent at each end), must fit in the port's
 * buffer above xoff. */
/* The largest packet a link may have to hold: transport.mtu, or a
 * background source's `size` when larger (then *bg names it; else -1). */
static uint64_t largest_packet(const CsScenario *s, int *bg) {
  uint64_t most = (uint64_t)s->transport.mtu;
  *bg = -1;
  for (guint i = 0; i < s->background->len; i++) {
    uint64_t size = (uint64_t)g_array_index(s->background, CsBackgroundSpec, i).size;
    if (size > most) most = size, *bg = (int)i;
  }
  return most;
}

static bool check_pfc(const CsTopology *t, const CsScenario *s, GError **error) {
  /* (a queue too small for a background packet drops it, counted: open
   * loop; with PFC nothing may be dropped, so its headroom holds two) */
  int bg;
  uint64_t largest = largest_packet(s, &bg);
  g_autofree char *twice = bg < 0 ? g_strdup("2 MTU") : g_strdup_printf("2 x background[%d]'s size", bg);
  for (uint32_t l = 0; l < t->n_links; l++) {
    const CsLink *k = &t->links[l];
    const CsLinkSpec *x = &k->spec;
    const char *a = t->nodes[k->a].name, *b = t->nodes[k->b].name;
    CsLoc where = link_loc(s, k), room = headroom_loc(s, k);
    if (x->ecn_kmax > 0 && x->queue == CS_QUEUE_RED) {
      cs_error_at(error, where,
                  "link %s-%s: ecn marking and queue red do not go together (RED drops early what ECN would mark): "
                  "use queue droptail or ecn with it", a, b);
      return false;
    }
    /* a bounded queue smaller than one packet drops every packet that
     * would wait (as 0pkt, refused when read) */
    bool bounded = x->buffer_set || t->nodes[k->a].role == CS_ROLE_SWITCH || t->nodes[k->b].role == CS_ROLE_SWITCH;
    if (bounded && !x->buffer_pkt && (uint64_t)x->buffer < (uint64_t)s->transport.mtu) {
      cs_error_at(error, room,
                  "link %s-%s: a buffer of %" G_GINT64_FORMAT " B holds no packet of transport.mtu (%" G_GINT64_FORMAT
                  " B): give at least one packet",
                  a, b, (gint64)x->buffer, (gint64)s->transport.mtu);
      return false;
    }
    if (x->pfc_xoff <= 0) continue;
    if (x->buffer_pkt) {
      cs_error_at(error, room, "link %s-%s: PFC counts bytes: give its buffer in bytes, not packets", a, b);
      return false;
    }
    double need = 2.0 * (double)x->latency * 1e-12 * (double)x->bandwidth / 8.0 + 2.0 * (double)largest;
    if ((double)(x->buffer - x->pfc_xoff) < need) {
      cs_error_at(error, room,
                  "link %s-%s: PFC headroom: buffer %" G_GINT64_FORMAT " B - xoff %" G_GINT64_FORMAT
                  " B leaves %" G_GINT64_FORMAT " B, less than what arrives during a pause's round trip "
                  "(2 x latency x bandwidth + %s = %.0f B): raise the buffer or lower xoff",
                  a, b, (gint64)x->buffer, (gint64)x->pfc_xoff, (gint64)(x->buffer - x->pfc_xoff),
                  twice, need);
      return false;
    }
  }
  return true;
}

/* DCQCN never cuts a rate below min_rate: at or above a host's line rate
 * it could never cut at all. */
static bool check_dcqcn_min_rate(const CsTopology *t, const CsScenario *s, GError **error) {
  if (s->transport.protocol != CS_PROTO_ROCE || s->transport.roce_cc != CS_ROCE_CC_DCQCN) return true;
  for (uint32_t l = 0; l < t->n_links; l++) {
    const CsLink *k = &t->links[l];
    uint32_t h = t->nodes[k->a].role != CS_ROLE_SWITCH ? k->a : t->nodes[k->b].role != CS_ROLE_SWITCH ? k->b : UINT32_MAX;
    if (h == UINT32_MAX || s->transport.dcqcn.min_rate < k->spec.bandwidth) continue;
    char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN];
    cs_error_at(error, link_loc(s, k),
                "transport.dcqcn.min_rate (%s) is not below host %s's line rate (%s on link %s-%s): DCQCN could never "
                "cut its rate; lower min_rate, or use cc: none for line-rate queue pairs",
                cs_format_bandwidth(s->transport.dcqcn.min_rate, b1), t->nodes[h].name,
                cs_format_bandwidth(k->spec.bandwidth, b2), t->nodes[k->a].name, t->nodes[k->b].name);
    return false;
  }
  return true;
}

/* roce's RTO is fixed: one shorter than a round trip over some link would
 * time every packet crossing it out before its ACK came back (and abandon
 * its messages after max_timeouts), so it is refused here, naming the
 * link.  (Queues lengthen round trips further; run notes such timeouts.) */
static bool check_roce_rto(const CsTopology *t, const CsScenario *s, GError **error) {
  if (s->transport.protocol != CS_PROTO_ROCE) return true;
  for (uint32_t l = 0; l < t->n_links; l++) {
    const CsLink *k = &t->links[l];
    if (s->transport.rto > 2 * k->spec.latency) continue;
    char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN];
    cs_error_at(error, link_loc(s, k),
                "transport.rto (%s) is not longer than a round trip over link %s-%s (2 x %s): with roce every packet "
                "crossing it would time out before its ACK comes back; raise transport.rto",
                cs_format_time(s->transport.rto, b1), t->nodes[k->a].name, t->nodes[k->b].name,
                cs_format_time(k->spec.latency, b2));
    return false;
  }
  return true;
}

CsTopology *cs_topology_build(const CsScenario *s, GError **error) {
  CsTopology *t = cs_topology_new(&s->topology, &s->defaults, error);
  if (t) t->cut_through = s->switching == CS_SWITCHING_CUT_THROUGH ? CS_CUT_THROUGH_BYTES : 0;
  for (guint i = 0; t && i < s->topology.overrides->len; i++) {
    const CsLinkOverride *o = &g_array_index(s->topology.overrides, CsLinkOverride, i);
    if (cs_topology_override(t, o) == 0) {
      cs_error_at(error, o->at,
                  "links_override[%u].match: '%s' matches no link (a link is named by its ends, as %s-%s, in either "
                  "order; * and ? match any characters)",
                  i, o->match, t->nodes[t->links[0].a].name, t->nodes[t->links[0].b].name);
      cs_topology_free(t);
      return NULL;
    }
  }
  if (t && (!check_names(t, s, error) || !check_pfc(t, s, error) || !check_dcqcn_min_rate(t, s, error) || !check_roce_rto(t, s, error))) {
    cs_topology_free(t);
    return NULL;
  }
  return t;
}

CsRoutes *cs_scenario_routes(const CsScenario *s, const CsTopology *t, GError **error) {
  CsRoutes *r = cs_routes_build(t, s->routing, error);
  if (!r) g_prefix_error(error, "%s: ", s->file);
  return r;
}

/* Messages of more than CS_NET_MAX_PACKETS packets, more buckets than it
 * is sane to schedule, records beyond the memory limit: found before
 * anything runs. */
static bool check_sizes(const CsScenario *s, const CsTopology *t, GError **error) {
  uint64_t mss = (uint64_t)(s->transport.mtu - s->transport.header);
  for (guint i = 0; i < s->flows->len; i++) {
    const CsFlowSpec *f = &g_array_index(s->flows, CsFlowSpec, i);
    if (((uint64_t)f->size + mss - 1) / mss > CS_NET_MAX_PACKETS) {
      cs_error_at(error, f->at, "flows[%u].size: more than 2^30 packets of %" G_GUINT64_FORMAT " B in one message", i,
                  mss);
      return false;
    }
  }
  const CsWorkloadSpec *w = &s->workload;
  if (!w->present) return true;
  CsBucketPlan plan;
  GError *e = NULL;
  if (!cs_bucket_plan(w, &plan, &e)) {
    cs_error_at(error, w->at, "%s", e->message);
    g_error_free(e);
    return false;
  }
  uint64_t per_bucket = plan.largest;
  cs_bucket_plan_clear(&plan);
  /* the tree's pieces: at least an element each, and a plan that fits
   * (each of C pieces is about four steps per worker: received from the
   * children or the parent, sent on; 48 bytes a step with its lanes'
   * bookkeeping, per bucket in flight) */
  if (w->chunks > 1 && cs_collective_has(w->collective, CS_COLLF_CHUNKS)) {
    if ((uint64_t)w->chunks > per_bucket) {
      cs_error_at(error, w->at,
                  "workload.chunks: %" G_GINT64_FORMAT " pieces of a bucket of %" G_GUINT64_FORMAT
                  " elements (the largest): a piece would hold less than one element; use at most %" G_GUINT64_FORMAT,
                  (gint64)w->chunks, per_bucket, per_bucket);
      return false;
    }
    double steps = 4.0 * (double)w->chunks * (double)t->n_workers;
    if (steps * 48 > (double)CS_ROUTES_MAX_BYTES) {
      cs_error_at(error, w->at,
                  "workload.chunks: %" G_GINT64_FORMAT " pieces for %u workers is about %.3g steps (%.1f GiB) for one "
                  "bucket's tree; commsim refuses more than %llu GiB",
                  (gint64)w->chunks, t->n_workers, steps, steps * 48 / (1 << 30), CS_ROUTES_MAX_BYTES >> 30);
      return false;
    }
  }
  /* the largest message: a whole bucket, uncompressed, plus headers */
  if (per_bucket * 8 / mss > CS_NET_MAX_PACKETS) {
    cs_error_at(error, w->at,
                "workload: a bucket of %" G_GUINT64_FORMAT
                " elements would need more than 2^30 packets in one message; use buckets: (bytes) to split it",
                per_bucket);
    return false;
  }
  /* one record per worker and iteration (iterations.csv), refused with
   * its size beyond the limit the route tables have */
  uint64_t bytes = (uint64_t)t->n_workers * (uint64_t)w->iterations * sizeof(CsIterRecord);
  if (bytes > CS_ROUTES_MAX_BYTES) {
    cs_error_at(error, w->at,
                "workload.iterations: the records of %u workers x %" G_GINT64_FORMAT
                " iterations would take %.1f GiB (%zu bytes each); commsim refuses more than %llu GiB",
                t->n_workers, (gint64)w->iterations, (double)bytes / (1 << 30), sizeof(CsIterRecord),
                CS_ROUTES_MAX_BYTES >> 30);
    return false;
  }
  /* workload.convergence's task: every shard and the held-out set in memory */
  const CsConvergenceSpec *c = &w->convergence;
  uint64_t values = ((uint64_t)c->samples_per_worker * t->n_workers + (uint64_t)c->test_samples) * (uint64_t)c->features;
  if (c->present && values > CS_CONV_MAX_VALUES) {
    cs_error_at(error, c->at,
                "workload.convergence: %u workers x %" G_GINT64_FORMAT " samples x %" G_GINT64_FORMAT
                " features is %.3g values; commsim holds at most %.3g (lower samples_per_worker or features)",
                t->n_workers, (gint64)c->samples_per_worker, (gint64)c->features, (double)values,
                (double)CS_CONV_MAX_VALUES);
    return false;
  }
  return true;
}

bool cs_scenario_check(const CsScenario *s, const CsTopology *t, const CsRoutes *r, GError **error) {
  (void)r;
  if (!check_sizes(s, t, error)) return false;
  if (s->workload.present) {
    CsCodecParams params;
    CsCodecCost cost;
    GError *e = NULL;
    if (!cs_codec_from_spec(&s->workload.compression, s->workload.dtype, s->seed, &params, &cost, &e)) {
      g_propagate_prefixed_error(error, e, "%s: error: ", s->file);
      return false;
    }
  }
  return true;
}

bool cs_model_estimate(const CsScenario *s, const CsTopology *t, const CsRoutes *r, CsModel *m, GError **error) {
  if (!s->workload.present) {
    memset(m, 0, sizeof *m);
    /* the section is missing: the file's start, as a missing network is */
    cs_error_at(error, (CsLoc){s->file, 1, 1},
                "commsim model estimates training iterations and the scenario has no workload: add workload: "
                "(params or model, collective; docs/scenario.md), or run its flows with commsim run");
    return false;
  }
  return cs_model_estimate_spec(&s->workload, &s->transport, s->routing, t, r, m, error);
}
