/* model.c - the closed-form estimate of a training iteration: the
 * workload's buckets through its collective's closed form
 * (closed_form.h), iteration after iteration. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "commsim/closed_form.h"
#include "commsim/model.h"
#include "commsim/rng.h"
#include "commsim/units.h"
#include "commsim/workload.h"

void cs_model_clear(CsModel *m) {
  g_free(m->formula);
  g_free(m->terms);
  if (m->steps) {
    for (guint i = 0; i < m->steps->len; i++) g_free(g_array_index(m->steps, CsModelStep, i).label);
    g_array_free(m->steps, TRUE);
  }
  g_free(m->dirs_used);
  memset(m, 0, sizeof *m);
}

/* The estimate's state: the collective's operation on each distinct
 * bucket size (equal buckets have two: every bucket but the last, and the
 * last). */
typedef struct Bucket Bucket;
typedef struct {
  CsModelCtx *ctx;
  CsCollSpec spec;      /* elements: set per bucket */
  const CsBucketPlan *plan;
  Bucket *evals;        /* per distinct size */
  uint32_t *idx;        /* per bucket: its size's evaluation */
  double micro;         /* one micro-batch's compute, s */
  double server_acc;    /* servers: the summing after the last push lands, added up over buckets */
} Est;

/* One bucket size: its operation (rounds evaluated once), then each
 * worker's result time with codec work (op) and the network alone (net),
 * from a common start. */
struct Bucket {
  CsModelOp *mop;
  double *op, *net; /* per worker */
  double codec;     /* a worker's codec work in the operation, encode not included */
};

static void bucket_eval(Est *e, uint64_t n, GArray *record, Bucket *b) {
  uint32_t P = e->spec.n_workers;
  CsCollSpec spec = e->spec;
  spec.elements = n;
  b->op = g_new0(double, P + 1);
  b->net = g_new0(double, P + 1);
  b->mop = cs_model_op_new(e->ctx, &spec, record);
  if (b->mop->def->schedule) {
    b->codec = cs_model_op_codec(b->mop);
    return;
  }
  /* one worker alone exchanges nothing, but its plan's codec work (the
   * decode at the end, allgather's sum) is still run, as `run` runs it */
  const CsCodecCost *c = &spec.cost;
  if (c->encode_ps == 0 && c->decode_ps == 0 && c->reduce_ps == 0) { /* no codec work: the same replay */
    cs_model_op_times(b->mop, true, b->op);
    memcpy(b->net, b->op, (P + 1) * sizeof *b->net);
  } else {
    cs_model_op_times_both(b->mop, b->op, b->net);
  }
  b->codec = cs_model_op_codec(b->mop);
}

static void bucket_clear(Bucket *b) {
  cs_model_op_free(b->mop);
  g_free(b->op);
  g_free(b->net);
}

/* Every worker's buckets, one after another, iteration after iteration:
 * bucket b of an iteration is ready at ready(b) after the worker's own
 * iteration start, encoded, then handed to its operation; a worker takes
 * the next bucket when it has the previous one's result, and starts its
 * next iteration when it has the last.  Iterations are repeated because
 * ps does not repeat its first: its workers get their results one after
 * another and push the next gradient while the server still pulls to the
 * others, so a steady state sets in.  *mean: the mean iteration over
 * workers and measured iterations (as summary.csv's iter_mean_s); *last:
 * the longest measured one.  codec == false: the network alone, the first
 * iteration from 0, every bucket ready at once. */
static void iterate(Est *e, double compute, bool overlap, bool codec, uint32_t iterations, uint32_t warmup,
                    double *mean, double *last) {
  uint32_t P = e->spec.n_workers, nb = e->plan->n;
  double *start = g_new0(double, P + 1), *carry = g_new0(double, e->spec.n_servers + 1);
  double *t0 = g_new0(double, P + 1), *end = g_new0(double, P + 1);
  double encode_ps = codec ? e->spec.cost.encode_ps : 0;
  if (!codec) iterations = 1, warmup = 0, compute = 0;
  double sum = 0;
  uint64_t count = 0;
  *last = 0;
  for (uint32_t it = 0; it < iterations; it++) {
    for (uint32_t q = 0; q < P; q++) t0[q] = end[q];
    for (uint32_t b = 0; b < nb; b++) {
      const Bucket *bk = &e->evals[e->idx[b]];
      uint64_t size = e->plan->elements[b];
      double ready = overlap ? compute - e->micro + e->micro * e->plan->ready[b] : compute;
      double enc = cs_model_cost(encode_ps, size);
      for (uint32_t q = 0; q < P; q++) start[q] = fmax(t0[q] + ready, b ? end[q] : 0) + enc;
      if (bk->mop->def->schedule) {
        double add = 0;
        cs_model_op_schedule(bk->mop, start, end, carry, codec, &add);
        e->server_acc += add;
      } else {
        double all = 0;
        for (uint32_t q = 0; q < P; q++) all = fmax(all, start[q]);
        for (uint32_t q = 0; q < P; q++) end[q] = all + (codec ? bk->op[q] : bk->net[q]);
      }
    }
    if (it < warmup) continue;
    for (uint32_t q = 0; q < P; q++) {
      sum += end[q] - t0[q];
      count++;
      *last = fmax(*last, end[q] - t0[q]);
    }
  }
  *mean = count ? sum / (double)count : 0;
  g_free(start);
  g_free(carry);
  g_free(t0);
  g_free(end);
}

/* The messages one operation sends: every server's sends, and the
 * workers', counted over the first workers' steps up to SENDS_STEPS and
 * scaled to all of them past that (a ring of 16,384 workers has 32,766
 * steps each: 537 M in all; the workers of the collectives whose plans
 * are large are alike). */
#define SENDS_STEPS 4000000u
static double plan_sends(const CsCollPlan *plan, const CsCollSpec *spec) {
  uint32_t P = spec->n_workers, parts = cs_coll_participants(spec), seen = 0;
  double servers = 0, workers = 0;
  uint64_t steps = 0;
  for (uint32_t q = P; q < parts; q++)
    for (uint32_t i = 0, len = cs_coll_plan_len(plan, q); i < len; i++) servers += cs_coll_plan_step(plan, q, i).send_to >= 0;
  for (; seen < P && steps < SENDS_STEPS; seen++) {
    uint32_t len = cs_coll_plan_len(plan, seen);
    steps += len;
    for (uint32_t i = 0; i < len; i++) workers += cs_coll_plan_step(plan, seen, i).send_to >= 0;
  }
  return servers + (seen ? workers * P / seen : 0);
}

bool cs_model_estimate_spec(const CsWorkloadSpec *w, const CsTransportSpec *tr, CsRouting routing,
                            const CsTopology *t, const CsRoutes *r, CsModel *m, GError **error) {
  memset(m, 0, sizeof *m);
  Est e = {0};
  CsCollSpec *spec = &e.spec;
  if (!cs_codec_from_spec(&w->compression, w->dtype, 0, &spec->codec, &spec->cost, error)) return false;
  e.ctx = cs_model_ctx_new(tr, routing, t, r);
  const CsCollectiveDef *def = cs_collective_def(w->collective);
  bool servers = (def->flags & CS_COLLF_SERVERS) != 0, async = servers && !w->sync;
  spec->kind = w->collective;
  spec->n_workers = t->n_workers;
  spec->workers = t->workers;
  spec->chunks = (uint32_t)w->chunks;
  spec->pull = w->pull;
  spec->group = t->gpus_per_host;
  /* servers: those listed, or all */
  uint32_t *sv = g_new(uint32_t, t->n_servers + 1);
  if (servers && w->servers->len) {
    for (guint i = 0; i < w->servers->len; i++)
      sv[spec->n_servers++] = (uint32_t)cs_topology_find(t, g_array_index(w->servers, CsNameRef, i).name);
  } else if (servers) {
    memcpy(sv, t->servers, sizeof(uint32_t) * t->n_servers);
    spec->n_servers = t->n_servers;
  }
  spec->servers = sv;
  uint32_t P = spec->n_workers;
  m->steps = g_array_new(FALSE, TRUE, sizeof(CsModelStep));

  /* buckets: as the workload cuts them (async ps: the whole gradient) */
  uint64_t n = (uint64_t)w->params;
  CsBucketPlan plan;
  if (!cs_bucket_plan(w, &plan, error)) {
    cs_model_ctx_free(e.ctx);
    g_free(sv);
    return false;
  }
  uint32_t nb = plan.n;
  e.plan = &plan;
  m->buckets = nb;
  /* one evaluation per distinct size; the largest bucket's rounds are the ones shown */
  GHashTable *by_size = g_hash_table_new(cs_int64_hash, g_int64_equal);
  e.idx = g_new(uint32_t, nb);
  e.evals = g_new0(Bucket, nb);
  uint32_t n_evals = 0;
  for (uint32_t b = 0; b < nb; b++) {
    gpointer hit = g_hash_table_lookup(by_size, &plan.elements[b]);
    if (!hit) {
      bucket_eval(&e, plan.elements[b], plan.elements[b] == plan.largest && !m->steps->len ? m->steps : NULL,
                  &e.evals[n_evals]);
      g_hash_table_insert(by_size, &plan.elements[b], GUINT_TO_POINTER(++n_evals));
      hit = GUINT_TO_POINTER(n_evals);
    }
    e.idx[b] = GPOINTER_TO_UINT(hit) - 1;
  }
  g_hash_table_destroy(by_size);

  double compute = (double)w->compute * 1e-12 * (double)w->accumulation;
  e.micro = (double)w->compute * 1e-12;
  /* as many iterations as the run has, up to 50 (enough for ps's steady state) */
  uint32_t iters = (uint32_t)MIN(w->iterations, (int64_t)50), warm = (uint32_t)MIN(w->warmup, (int64_t)iters - 1);
  double ignore;
  /* the network alone, buckets back to back from 0 */
  iterate(&e, 0, false, false, 1, 0, &m->comm_mean_s, &m->comm_s);
  /* no overlap: every bucket after compute */
  iterate(&e, compute, false, true, iters, warm, &m->iter_serial_s, &ignore);
  /* buckets during the backward pass */
  iterate(&e, compute, w->buckets > 0 && !async, true, iters, warm, &m->iter_overlap_s, &m->iter_last_s);
  m->compute_s = compute;
  m->codec_s = cs_model_cost(spec->cost.encode_ps, n);
  for (uint32_t b = 0; b < nb; b++) m->codec_s += e.evals[e.idx[b]].codec;
  if (servers) { /* the servers' summing past the last push, one synchronous iteration */
    double ignore2;
    e.server_acc = 0;
    iterate(&e, 0, false, true, 1, 0, &ignore, &ignore2);
    m->server_s = e.server_acc;
  }

  /* what a worker sends: its messages in the plan, per distinct size */
  for (uint32_t k = 0; k < n_evals; k++) {
    CsCollSpec s = *spec;
    s.elements = 0;
    double times = 0;
    for (uint32_t b = 0; b < nb; b++)
      if (e.idx[b] == k) s.elements = plan.elements[b], times++;
    memset(&s.cost, 0, sizeof s.cost);
    CsCollPlan *cplan = cs_coll_plan_new(&s);
    for (uint32_t i = 0, len = P > 0 ? cs_coll_plan_len(cplan, 0) : 0; i < len; i++) {
      CsCollStep st = cs_coll_plan_step(cplan, 0, i);
      if (st.send_to >= 0) m->wire_bytes += times * (double)st.send_bytes;
    }
    m->messages += times * plan_sends(cplan, &s);
    cs_coll_plan_free(cplan);
  }

  m->hops_mean = cs_model_ctx_hops_mean(e.ctx);
  m->dirs_used = g_memdup2(cs_model_ctx_dirs_used(e.ctx), 2 * (size_t)t->n_links + 1);
  for (uint32_t d = 0; d < 2 * t->n_links; d++) m->n_dirs_used += m->dirs_used[d];
  m->formula = g_strdup(def->formula(spec));
  GString *terms = g_string_new(NULL);
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN];
  g_string_append_printf(terms, "P = %u", P);
  if (servers) g_string_append_printf(terms, ", S = %u", spec->n_servers);
  if (def->flags & CS_COLLF_CHUNKS) g_string_append_printf(terms, ", C = %u", spec->chunks);
  if (w->layers && nb > 1) {
    g_string_append_printf(terms, "; %u buckets of up to %s elements, in reverse layer order (DDP)", nb,
                           cs_format_count((int64_t)plan.largest, b1));
  } else {
    g_string_append_printf(terms, "; %u bucket%s of %s elements", nb, nb == 1 ? "" : "s", cs_format_count((int64_t)plan.elements[0], b1));
    if (plan.elements[nb - 1] != plan.elements[0])
      g_string_append_printf(terms, " (the last %s)", cs_format_count((int64_t)plan.elements[nb - 1], b2));
  }
  g_string_append_printf(terms, "; messages cross %.2f hops on average (%s)", m->hops_mean,
                         routing == CS_ROUTING_SHORTEST ? "shortest paths"
                         : routing == CS_ROUTING_ECMP   ? "ECMP: a path per message, a step the mean over up to 16 draws"
                                                        : "ecmp-packet: bytes spread evenly over the equal-cost paths");
  m->terms = g_string_free(terms, FALSE);

  for (uint32_t k = 0; k < n_evals; k++) bucket_clear(&e.evals[k]);
  g_free(e.evals);
  g_free(e.idx);
  cs_bucket_plan_clear(&plan);
  cs_model_ctx_free(e.ctx);
  g_free(sv);
  return true;
}
