/* cmd_validate.c - `commsim validate FILE.yaml`: load, build the network
 * and its routes, print what was understood; simulate nothing. */
#include "config.h"

#include <math.h>

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "commsim/sim.h"
#include "commsim/cc.h"
#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"
#include "commsim/units.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void print_link_spec(const char *label, const CsLinkSpec *l) {
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN], b3[CS_FORMAT_LEN];
  if (l->buffer_pkt) snprintf(b3, sizeof b3, "%" G_GINT64_FORMAT "pkt", (gint64)l->buffer);
  else cs_format_size(l->buffer, b3);
  printf("%-12s %s, latency %s, buffer %s, queue %s", label, cs_format_bandwidth(l->bandwidth, b1),
         cs_format_time(l->latency, b2), b3, cs_queue_name(l->queue));
  if (l->queue == CS_QUEUE_ECN) {
    if (l->ecn_threshold_pkt) printf(" (mark above %" G_GINT64_FORMAT "pkt)", (gint64)l->ecn_threshold);
    else printf(" (mark above %s)", cs_format_size(l->ecn_threshold, b1));
  }
  if (l->queue == CS_QUEUE_RED)
    printf(" (min %s, max %s, max_p %g, weight %g)", cs_format_size(l->red.min, b1),
           cs_format_size(l->red.max, b2), l->red.max_p, l->red.weight);
  if (l->ecn_kmax > 0)
    printf(", ecn marks above %s (probability up to %g at %s, every packet beyond)", cs_format_size(l->ecn_kmin, b1),
           l->ecn_pmax, cs_format_size(l->ecn_kmax, b2));
  if (l->pfc_xoff > 0)
    printf(", pfc xoff %s xon %s", cs_format_size(l->pfc_xoff, b1), cs_format_size(l->pfc_xon, b2));
  switch (l->loss.model) {
  case CS_LOSS_NONE: printf(", no loss\n"); break;
  case CS_LOSS_BERNOULLI: printf(", loss %g (bernoulli)\n", l->loss.rate); break;
  case CS_LOSS_GILBERT: {
    double p = l->loss.p, r = l->loss.r;
    printf(", loss gilbert-elliott p %g r %g good %g bad %g (long-run %g)\n", p, r, l->loss.loss_good,
           l->loss.loss_bad, p / (p + r) * l->loss.loss_bad + r / (p + r) * l->loss.loss_good);
    break;
  }
  }
}

/* Whether two links have the settings print_link_spec shows alike. */
static bool same_settings(const CsLinkSpec *a, const CsLinkSpec *b) {
  return a->bandwidth == b->bandwidth && a->latency == b->latency && a->buffer == b->buffer &&
         a->buffer_pkt == b->buffer_pkt && a->queue == b->queue && a->red.min == b->red.min && a->red.max == b->red.max &&
         a->red.max_p == b->red.max_p && a->red.weight == b->red.weight && a->ecn_threshold == b->ecn_threshold &&
         a->ecn_threshold_pkt == b->ecn_threshold_pkt && a->ecn_kmin == b->ecn_kmin && a->ecn_kmax == b->ecn_kmax &&
         a->ecn_pmax == b->ecn_pmax && a->pfc_xoff == b->pfc_xoff && a->pfc_xon == b->pfc_xon &&
         a->loss.model == b->loss.model && a->loss.rate == b->loss.rate && a->loss.p == b->loss.p && a->loss.r == b->loss.r &&
         a->loss.loss_good == b->loss.loss_good && a->loss.loss_bad == b->loss.loss_bad;
}

/* The links whose settings differ from those already printed (defaults,
 * a dumbbell's bottleneck, the machines' intra links): links_override and
 * explicit links, one line per distinct setting, named by its first link
 * and how many more share it. */
static void print_other_links(const CsTopology *t, const CsLinkSpec *const *shown, size_t n_shown) {
  enum { MAX_LINES = 10 };
  bool *done = g_new0(bool, t->n_links + 1);
  uint32_t lines = 0, left = 0;
  for (uint32_t l = 0; l < t->n_links; l++) {
    if (done[l]) continue;
    const CsLinkSpec *x = &t->links[l].spec;
    bool known = false;
    for (size_t i = 0; i < n_shown && !known; i++) known = shown[i] && same_settings(x, shown[i]);
    uint32_t more = 0;
    for (uint32_t m = l + 1; m < t->n_links; m++)
      if (!done[m] && same_settings(x, &t->links[m].spec)) done[m] = true, more++;
    if (known) continue;
    if (lines == MAX_LINES) {
      left++;
      continue;
    }
    lines++;
    g_autofree char *label = more ? g_strdup_printf("%s-%s +%u", t->nodes[t->links[l].a].name, t->nodes[t->links[l].b].name, more)
                                  : g_strdup_printf("%s-%s", t->nodes[t->links[l].a].name, t->nodes[t->links[l].b].name);
    print_link_spec(label, x);
  }
  if (left) printf("%-12s ... and %u more distinct link settings\n", "", left);
  g_free(done);
}

/* Per-layer gradients: where they come from, the compute they give, and
 * the buckets DDP's rule makes of them. */
static void print_layers(const CsWorkloadSpec *w) {
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN];
  guint tensors = 0;
  CsTime fwd = 0, bwd = 0;
  for (guint i = 0; i < w->layers->len; i++) {
    const CsLayer *l = &g_array_index(w->layers, CsLayer, i);
    tensors += l->params > 0;
    fwd += l->forward, bwd += l->backward;
  }
  printf("%-12s %s: %u gradient tensors; forward %.3f ms, backward %.3f ms per micro-batch", "layers",
         w->model >= 0 ? cs_zoo[w->model]->name : "as given", tensors, (double)fwd * 1e-9, (double)bwd * 1e-9);
  if (w->tflops > 0)
    printf(" (%" G_GINT64_FORMAT " samples at %g TFLOP/s x %g)", (gint64)w->batch, w->tflops, w->efficiency);
  printf("\n");
  CsBucketPlan p;
  if (!cs_bucket_plan(w, &p, NULL)) return;
  printf("%-12s %u DDP bucket%s (first up to %s, then %s), ready at", "", p.n, p.n == 1 ? "" : "s",
         cs_format_size(w->first_bucket, b1), cs_format_size(w->buckets, b2));
  for (uint32_t b = 0; b < p.n && b < 8; b++)
    printf("%s %.3f ms (%s)", b ? "," : "", p.ready[b] * (double)w->compute * 1e-9, cs_format_count((int64_t)p.elements[b], b1));
  printf("%s\n", p.n > 8 ? ", ..." : "");
  cs_bucket_plan_clear(&p);
}

static const char *trace_list(unsigned traces, GString *s) {
  static const char *names[] = {"summary", "iterations", "messages", "links", "packets", "timeline"};
  g_string_truncate(s, 0);
  for (unsigned i = 0; i < G_N_ELEMENTS(names); i++)
    if (traces & (1u << i)) g_string_append_printf(s, "%s%s", s->len ? ", " : "", names[i]);
  if (!s->len) g_string_append(s, "none");
  return s->str;
}

static void print_summary(const CsScenario *s, const CsTopology *t, const CsRoutes *r) {
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN], b3[CS_FORMAT_LEN];
  uint32_t idle = t->n_hosts - t->n_workers - t->n_servers;
  printf("%-12s %s (%s), seed %" G_GUINT64_FORMAT "\n", "scenario", s->name, s->file, s->seed);
#define N(x, one) (x), (x) == 1 ? one : one "s"
  printf("%-12s %s: %u nodes: %u %s, %u %s, %u idle %s, %u %s\n", "topology", cs_topo_type_name(s->topology.type),
         t->n_nodes, N(t->n_workers, "worker"), N(t->n_servers, "server"), N(idle, "host"),
         t->n_switches, t->n_switches == 1 ? "switch" : "switches");
#undef N
  if (t->gpus_per_host > 1) {
    uint32_t H = t->n_workers / t->gpus_per_host;
    printf("%-12s %u of %u workers each, on internal switches host0 .. host%u; intra links %s, latency %s\n", "machines", H,
           t->gpus_per_host, H - 1, cs_format_bandwidth(s->topology.intra.bandwidth, b1),
           cs_format_time(s->topology.intra.latency, b2));
  }
  if (s->topology.servers_at->len) {
    GString *at = g_string_new(NULL);
    for (uint32_t i = 0; i < t->n_servers; i++) {
      const CsNode *n = &t->nodes[t->servers[i]];
      g_string_append_printf(at, "%s%s under %s", i ? ", " : "", n->name, t->nodes[t->ports[n->first_port].peer].name);
    }
    printf("%-12s %s\n", "servers_at", at->str);
    g_string_free(at, TRUE);
  }
  /* distinct link speeds */
  int64_t *bw = g_new(int64_t, t->n_links + 1);
  for (uint32_t i = 0; i < t->n_links; i++) bw[i] = t->links[i].spec.bandwidth;
  qsort(bw, t->n_links, sizeof *bw, cmp_i64);
  GString *speeds = g_string_new(NULL);
  for (uint32_t i = 0; i < t->n_links; i++) {
    if (i && bw[i] == bw[i - 1]) continue;
    uint32_t c = 0;
    for (uint32_t j = i; j < t->n_links && bw[j] == bw[i]; j++) c++;
    g_string_append_printf(speeds, "%s%u x %s", speeds->len ? ", " : "", c, cs_format_bandwidth(bw[i], b1));
  }
  printf("%-12s %u (full duplex): %s\n", "links", t->n_links, speeds->str);
  g_string_free(speeds, TRUE);
  g_free(bw);
  CsRouteStats st = cs_routes_stats(r);
  printf("%-12s diameter %d hops, mean host-to-host path %.3f hops\n", "paths", st.diameter, st.mean_hops);
  if (t->bisection_bps >= 0)
    printf("%-12s %s\n", "bisection", cs_format_bandwidth(t->bisection_bps, b1));
  else
    printf("%-12s not known for explicit topologies\n", "bisection");
  printf("%-12s %s (tables: %zu bytes)\n", "routing", cs_routing_names()[s->routing],
         st.table_bytes);
  if (s->switching == CS_SWITCHING_CUT_THROUGH) /* the default, store-and-forward, goes unsaid */
    printf("%-12s cut-through (a switch forwards a packet once its first %u bytes are in)\n", "switching",
           CS_CUT_THROUGH_BYTES);
  if (s->fidelity != 0) /* the default, packet, goes unsaid */
    printf("%-12s %s (%s)\n", "fidelity", cs_fidelities[s->fidelity].name, cs_fidelities[s->fidelity].help);
  print_link_spec("defaults", &s->defaults);
  bool bottleneck = g_strv_contains(cs_topo_generators[s->topology.type]->takes, "bottleneck");
  if (bottleneck) print_link_spec("bottleneck", &s->topology.bottleneck);
  const CsLinkSpec *shown[] = {&s->defaults, bottleneck ? &s->topology.bottleneck : NULL,
                               s->topology.gpus_per_host > 1 ? &s->topology.intra : NULL};
  print_other_links(t, shown, G_N_ELEMENTS(shown));

  const CsTransportSpec *tr = &s->transport;
  char win[CS_FORMAT_LEN], rto[CS_FORMAT_LEN];
  if (tr->window_bytes) cs_format_size(tr->window, win);
  else snprintf(win, sizeof win, "%" G_GINT64_FORMAT "pkt", (gint64)tr->window);
  if (tr->protocol == CS_PROTO_ROCE) {
    char ci[CS_FORMAT_LEN];
    printf("%-12s roce queue pairs, mtu %s, header %s, ack %s, at most %s unacknowledged\n", "transport",
           cs_format_size(tr->mtu, b1), cs_format_size(tr->header, b2), cs_format_size(tr->ack, b3), win);
    g_autofree char *acks = tr->delayed_ack > 1 ? g_strdup_printf("an ACK per %" G_GINT64_FORMAT " packets", (gint64)tr->delayed_ack)
                                                : g_strdup("an ACK per packet");
    printf("%-12s rate %s, %s, rto %s (fixed, %" G_GINT64_FORMAT " in a row abandon), %s, at most a CNP per %s\n", "",
           tr->roce_cc == CS_ROCE_CC_DCQCN ? "dcqcn" : "line (cc none)", cs_retransmit_names()[tr->retransmit],
           cs_format_time(tr->rto, rto), (gint64)tr->max_timeouts, acks, cs_format_time(tr->dcqcn.cnp_interval, ci));
    if (tr->roce_cc == CS_ROCE_CC_DCQCN) {
      const CsDcqcnSpec *d = &tr->dcqcn;
      char t1[CS_FORMAT_LEN], t2[CS_FORMAT_LEN], t3[CS_FORMAT_LEN], r1[CS_FORMAT_LEN], r2[CS_FORMAT_LEN],
          r3[CS_FORMAT_LEN], sz[CS_FORMAT_LEN];
      printf("%-12s dcqcn g %g, alpha every %s (initial %g), a cut at most every %s down to %s, increase every %s or %s, "
             "F %" G_GINT64_FORMAT ", AI %s, HAI %s\n",
             "", d->g, cs_format_time(d->alpha_period, t1), d->initial_alpha, cs_format_time(d->decrease_period, t2),
             cs_format_bandwidth(d->min_rate, r1), cs_format_time(d->time_reset, t3), cs_format_size(d->byte_reset, sz),
             (gint64)d->threshold, cs_format_bandwidth(d->ai_rate, r2), cs_format_bandwidth(d->hai_rate, r3));
    }
  } else {
    printf("%-12s %s, mtu %s, header %s, ack %s, window %s, init_cwnd %" G_GINT64_FORMAT "pkt, min_rto %s\n",
           "transport", cs_protocol_name(tr->protocol), cs_format_size(tr->mtu, b1),
           cs_format_size(tr->header, b2), cs_format_size(tr->ack, b3), win, (gint64)tr->init_cwnd,
           cs_format_time(tr->min_rto, rto));
    char ad[CS_FORMAT_LEN];
    g_autofree char *acks = tr->delayed_ack > 1 ? g_strdup_printf("an ACK per %" G_GINT64_FORMAT " packets within %s",
                                                                  (gint64)tr->delayed_ack, cs_format_time(tr->ack_delay, ad))
                                                : g_strdup("an ACK per packet");
    CsRecovery rec = cs_recovery_resolve(tr->recovery, tr->protocol);
    printf("%-12s %s connections%s, %s recovery, %s\n", "", cs_connections_names()[tr->connections],
           tr->connections == CS_CONN_PERSISTENT ? (tr->idle_restart ? " (idle restart)" : " (no idle restart)") : "",
           cs_recovery_names()[rec], acks);
  }

  const CsWorkloadSpec *w = &s->workload;
  if (w->present) {
    printf("%-12s %s of %s %s parameters, %" G_GINT64_FORMAT " iteration%s, compute %s (jitter %g", "workload",
           cs_collective_name(w->collective), cs_format_count(w->params, b1), cs_dtype_name(w->dtype),
           (gint64)w->iterations, w->iterations == 1 ? "" : "s", cs_format_time(w->compute, b2), w->compute_jitter);
    if (w->layers) printf(")\n");
    else printf(", backward %g)\n", w->backward_fraction);
    if (w->layers) print_layers(w);
    printf("%-12s buckets %s, accumulation %" G_GINT64_FORMAT ", chunks %" G_GINT64_FORMAT,
           "", w->buckets ? cs_format_size(w->buckets, b1) : "0 (one after compute)",
           (gint64)w->accumulation, (gint64)w->chunks);
    if (cs_collective_has(w->collective, CS_COLLF_SERVERS))
      printf(", sync %s, pull %s, servers %s", w->sync ? "true" : "false", w->pull ? "true" : "false",
             w->servers->len ? "as listed" : "all");
    printf("\n");
    const CsCompressionSpec *c = &w->compression;
    CsCodecMethod m = c->method;
    printf("%-12s %s", "compression", cs_codec_method_name(m));
    if (m == CS_CODEC_UNIFORM || m == CS_CODEC_STOCHASTIC)
      printf(", %" G_GINT64_FORMAT " bits, bucket %" G_GINT64_FORMAT, (gint64)c->bits, (gint64)c->bucket);
    if (m == CS_CODEC_TOPK || m == CS_CODEC_RANDK) printf(", ratio %g", c->ratio);
    if (m == CS_CODEC_TOPK) printf(", index_bits %" G_GINT64_FORMAT, (gint64)c->index_bits);
    if (m == CS_CODEC_SIGN || m == CS_CODEC_TERNGRAD) printf(", bucket %" G_GINT64_FORMAT, (gint64)c->bucket);
    printf(", error_feedback %s", c->error_feedback ? "true" : "false");
    if (c->cost_set)
      printf(", cost encode %s decode %s reduce %s per element", cs_format_time(c->cost_encode, b1),
             cs_format_time(c->cost_decode, b2), cs_format_time(c->cost_reduce, b3));
    else
      printf(", cost: measured defaults / speedup %g", c->speedup);
    printf("\n");
  } else {
    printf("%-12s none\n", "workload");
  }
  for (guint i = 0; i < s->flows->len; i++) {
    const CsFlowSpec *f = &g_array_index(s->flows, CsFlowSpec, i);
    printf("%-12s %s -> %s, %s at %s\n", i ? "" : "flows", f->src, f->dst, cs_format_size(f->size, b1),
           cs_format_time(f->start, b2));
  }
  for (guint i = 0; i < s->background->len; i++) {
    const CsBackgroundSpec *bg = &g_array_index(s->background, CsBackgroundSpec, i);
    printf("%-12s %s -> %s, %s at %s, %s packets", i ? "" : "background", bg->src, bg->dst,
           cs_pattern_names()[bg->pattern], cs_format_bandwidth(bg->rate, b1), cs_format_size(bg->size, b2));
    if (bg->pattern == CS_PATTERN_ONOFF)
      printf(", on %s off %s", cs_format_time(bg->on, b1), cs_format_time(bg->off, b3));
    printf("\n");
  }
  if (s->duration) printf("%-12s %s\n", "duration", cs_format_time(s->duration, b1));
  GString *tl = g_string_new(NULL);
  g_autofree char *note = NULL;
  g_autofree char *messages_note = NULL;
  CsTime every = cs_sim_plan_sampling(s, t, r, &note, &messages_note); /* what run will do */
  printf("%-12s %s: %s; links sampled every %s", "output", s->output.dir, trace_list(s->output.traces, tl),
         cs_format_time(every, b1));
  if (every != s->output.sample_interval)
    printf(" (raised from %s; run --force keeps it)", cs_format_time(s->output.sample_interval, b2));
  printf("\n");
  if (note) fprintf(stderr, "%s\n", note);
  if (messages_note) fprintf(stderr, "%s\n", messages_note);
  g_string_free(tl, TRUE);
  if (s->sweep->len) {
    uint64_t points = 1;
    for (guint i = 0; i < s->sweep->len; i++) points *= g_array_index(s->sweep, CsSweepAxis, i).values->len;
    printf("%-12s %" G_GUINT64_FORMAT " points:", "sweep", points);
    for (guint i = 0; i < s->sweep->len; i++) {
      const CsSweepAxis *a = &g_array_index(s->sweep, CsSweepAxis, i);
      printf("%s %s [", i ? ";" : "", a->key);
      for (guint j = 0; j < a->values->len; j++) {
        g_autofree char *v = g_strjoinv(" ", a->values->pdata[j]);
        printf("%s%s%s%s", j ? ", " : "", a->keys[1] ? "(" : "", v, a->keys[1] ? ")" : "");
      }
      printf("]");
    }
    printf("\n");
  }
}

int cs_cmd_validate(int argc, char **argv) {
  CsCliWorld w;
  int status = cs_cli_load_world("validate", "Load and check a scenario, print its topology summary; simulate nothing.",
                                 argc, argv, &w);
  if (status >= 0) return status;
  print_summary(w.s, w.t, w.r);
  printf("valid\n");
  cs_cli_world_clear(&w);
  return CS_EXIT_OK;
}
