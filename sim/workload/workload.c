/* workload.c - iterations, buckets and their collectives on every worker. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "commsim/rng.h"
#include "commsim/routing.h"
#include "commsim/workload.h"

typedef struct {
  uint32_t iter;        /* current iteration, from 1 */
  uint32_t ready;       /* buckets of this iteration whose gradient is ready */
  uint32_t next;        /* the next bucket to start */
  uint32_t done;        /* buckets whose result is back */
  bool busy;            /* a bucket is being encoded or reduced */
  bool finished;
  CsTime codec_at_start, outside_at_start;
  CsRng rng;
} Worker;

typedef struct {
  CsWorkload *wl;
  CsCollOp *op;
  uint32_t iter, bucket;
  int32_t async_worker; /* async ps: the op's only worker; -1 otherwise */
  uint32_t left;        /* workers still to get their result */
} OpCtx;

struct CsWorkload {
  CsCollEnv *env;
  CsEngine *engine;
  const CsWorkloadSpec *spec;
  uint64_t seed;
  const CsTopology *t;
  CsCodecParams codec;
  CsCodecCost cost;
  uint32_t P, S;
  uint32_t *servers; /* nodes */
  uint64_t elements;
  CsBucketPlan plan;
  uint32_t nb;
  bool async;
  Worker *w;
  CsIterRecord *rec; /* [worker * iterations + iteration - 1] */
  uint32_t iterations;
  GHashTable *ops; /* (iter << 32 | bucket) -> OpCtx */
  GPtrArray *finished_ops;
  uint32_t workers_finished;
  uint64_t applied; /* async: updates applied */
  uint64_t *applied_at_pull;
  CsWorkloadDoneFn done_fn;
  void *done_ctx;
};

static CsIterRecord *rec_of(CsWorkload *wl, uint32_t w, uint32_t iter) {
  return &wl->rec[(size_t)w * wl->iterations + iter - 1];
}

static uint64_t bucket_size(const CsWorkload *wl, uint32_t j) { return wl->plan.elements[j]; }

uint64_t cs_workload_bucket_elements(const CsWorkloadSpec *w) {
  uint64_t n = (uint64_t)w->params;
  uint64_t per = w->buckets > 0 ? (uint64_t)w->buckets / (uint64_t)(cs_dtype_bits(w->dtype) / 8) : n;
  if (per == 0) per = 1;
  bool async = cs_collective_has(w->collective, CS_COLLF_SERVERS) && !w->sync;
  return async || per > n ? n : per;
}

void cs_bucket_plan_clear(CsBucketPlan *p) {
  g_free(p->elements);
  g_free(p->first_layer);
  g_free(p->last_layer);
  g_free(p->ready);
  memset(p, 0, sizeof *p);
}

static void plan_add(CsBucketPlan *p, uint64_t elements, double ready, uint32_t lo, uint32_t hi) {
  p->elements[p->n] = elements;
  p->ready[p->n] = ready;
  if (p->first_layer) p->first_layer[p->n] = lo, p->last_layer[p->n] = hi;
  if (elements > p->largest) p->largest = elements;
  p->n++;
}

bool cs_bucket_plan(const CsWorkloadSpec *w, CsBucketPlan *p, GError **error) {
  memset(p, 0, sizeof *p);
  bool async = cs_collective_has(w->collective, CS_COLLF_SERVERS) && !w->sync;
  uint64_t n = (uint64_t)w->params;
  const GArray *L = w->layers;
  if (!L || w->buckets == 0 || async) { /* equal buckets (or one) */
    uint64_t per = L ? n : cs_workload_bucket_elements(w);
    uint64_t nb = (n + per - 1) / per;
    if (nb > 1000000) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                  "workload.buckets: more than 1,000,000 buckets per iteration; use larger buckets");
      return false;
    }
    p->elements = g_new(uint64_t, nb);
    p->ready = g_new(double, nb);
    if (L) p->first_layer = g_new(uint32_t, nb), p->last_layer = g_new(uint32_t, nb);
    bool spread = w->buckets > 0 && !async;
    for (uint64_t j = 0; j < nb; j++)
      plan_add(p, j + 1 < nb ? per : n - (nb - 1) * per,
               spread ? 1.0 - w->backward_fraction + w->backward_fraction * (double)(j + 1) / (double)nb : 1.0, 0,
               L ? L->len - 1 : 0);
    return true;
  }
  /* DDP: tensors in reverse order into buckets of at least their limit */
  uint64_t bytes = (uint64_t)cs_dtype_bits(w->dtype) / 8;
  CsTime forward = 0, compute = 0;
  for (guint i = 0; i < L->len; i++) {
    const CsLayer *l = &g_array_index(L, CsLayer, i);
    forward += l->forward;
    compute += l->forward + l->backward;
  }
  p->elements = g_new(uint64_t, L->len + 1);
  p->ready = g_new(double, L->len + 1);
  p->first_layer = g_new(uint32_t, L->len + 1);
  p->last_layer = g_new(uint32_t, L->len + 1);
  uint64_t limit = (uint64_t)w->first_bucket, cur = 0, cur_bytes = 0;
  CsTime at = forward, cur_at = forward; /* the backward pass so far; when the bucket's latest tensor was produced */
  uint32_t hi = 0, lo = 0;
  for (guint k = L->len; k-- > 0;) {
    const CsLayer *l = &g_array_index(L, CsLayer, k);
    at += l->backward;
    if (l->params == 0) continue;
    if (cur == 0) hi = k;
    lo = k;
    cur_at = at;
    cur += (uint64_t)l->params;
    cur_bytes += (uint64_t)l->params * bytes;
    if (cur_bytes >= limit) {
      plan_add(p, cur, compute > 0 ? (double)at / (double)compute : 1.0, k, hi);
      cur = cur_bytes = 0;
      limit = (uint64_t)w->buckets;
    }
  }
  /* the last bucket holds the first layers with parameters: ready when the
   * backward pass has produced its first layer's gradient, not at the end
   * of a pass that still runs layers without parameters below it */
  if (cur > 0) plan_add(p, cur, compute > 0 ? (double)cur_at / (double)compute : 1.0, lo, hi);
  return true;
}

static void start_iteration(CsWorkload *wl, uint32_t w);

/* Ops by (iteration, bucket); an async worker's own rounds by (iteration,
 * worker) with the top bit set: every live op is in the table, so none
 * leaks, finished or not. */
static guint64 op_key(const OpCtx *oc) {
  return ((guint64)oc->iter << 32) | (oc->async_worker >= 0 ? 0x80000000u | (guint32)oc->async_worker : oc->bucket);
}

static void remember_op(CsWorkload *wl, OpCtx *oc) {
  guint64 *k = g_new(guint64, 1);
  *k = op_key(oc);
  g_hash_table_insert(wl->ops, k, oc);
}
static void try_next_bucket(CsWorkload *wl, uint32_t w);

static void free_finished(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e, (void)arg;
  CsWorkload *wl = ctx;
  for (guint i = 0; i < wl->finished_ops->len; i++) {
    OpCtx *oc = wl->finished_ops->pdata[i];
    cs_coll_free(oc->op);
    g_free(oc);
  }
  g_ptr_array_set_size(wl->finished_ops, 0);
}

/* An op is freed once every participant is done, in an event of its own:
 * never from inside its own callbacks. */
static void retire_if_finished(CsWorkload *wl, OpCtx *oc) {
  if (!cs_coll_finished(oc->op) || oc->left > 0) return;
  guint64 key = op_key(oc);
  g_hash_table_remove(wl->ops, &key);
  if (wl->finished_ops->len == 0) cs_engine_schedule(wl->engine, 0, free_finished, wl, 0);
  g_ptr_array_add(wl->finished_ops, oc);
}

static void finish_iteration(CsWorkload *wl, uint32_t w) {
  Worker *wk = &wl->w[w];
  CsIterRecord *r = rec_of(wl, w, wk->iter);
  r->end = cs_engine_now(wl->engine);
  r->codec = cs_coll_codec_time(wl->env, wl->t->workers[w]) - wk->codec_at_start;
  r->codec_outside = cs_coll_codec_time_after_mark(wl->env, wl->t->workers[w]) - wk->outside_at_start;
  if (wk->iter == wl->iterations) {
    wk->finished = true;
    if (++wl->workers_finished == wl->P && wl->done_fn) wl->done_fn(wl->done_ctx);
    return;
  }
  wk->iter++;
  start_iteration(wl, w);
}

static void on_result(void *ctx, uint32_t rank) {
  OpCtx *oc = ctx;
  CsWorkload *wl = oc->wl;
  uint32_t w = oc->async_worker >= 0 ? (uint32_t)oc->async_worker : rank;
  Worker *wk = &wl->w[w];
  CsIterRecord *r = rec_of(wl, w, oc->iter);
  CsTime fs = cs_coll_first_send(oc->op, rank);
  if (fs >= 0 && (r->first_send < 0 || fs < r->first_send)) r->first_send = fs;
  CsTime lr = cs_coll_last_receive(oc->op, rank);
  /* push only: nothing comes back; the round ends when the servers have summed */
  if (cs_collective_has(wl->spec->collective, CS_COLLF_SERVERS) && !wl->spec->pull) lr = cs_engine_now(wl->engine);
  r->comm_end = lr > r->comm_end ? lr : r->comm_end;
  if (oc->async_worker >= 0) { /* other workers' updates applied since this worker's last pull */
    r->staleness = (double)(wl->applied - wl->applied_at_pull[w]);
    wl->applied++;
    wl->applied_at_pull[w] = wl->applied;
  }
  oc->left--;
  wk->busy = false;
  wk->done++;
  retire_if_finished(wl, oc);
  if (wk->done == wl->nb) finish_iteration(wl, w);
  else try_next_bucket(wl, w);
}

static OpCtx *op_for(CsWorkload *wl, uint32_t w, uint32_t iter, uint32_t j) {
  CsCollSpec spec = {
      .kind = wl->spec->collective,
      .n_workers = wl->P,
      .workers = wl->t->workers,
      .n_servers = wl->S,
      .servers = wl->servers,
      .elements = bucket_size(wl, j),
      .codec = wl->codec,
      .cost = wl->cost,
      .chunks = (uint32_t)wl->spec->chunks,
      .pull = wl->spec->pull,
      .group = wl->t->gpus_per_host,
  };
  if (wl->async) { /* a ps round of its own for this worker */
    OpCtx *oc = g_new0(OpCtx, 1);
    *oc = (OpCtx){wl, NULL, iter, j, (int32_t)w, 1};
    spec.n_workers = 1;
    spec.workers = &wl->t->workers[w];
    cs_coll_set_iteration(wl->env, iter);
    oc->op = cs_coll_start(wl->env, &spec, on_result, oc);
    remember_op(wl, oc);
    return oc;
  }
  guint64 key = ((guint64)iter << 32) | j;
  OpCtx *oc = g_hash_table_lookup(wl->ops, &key);
  if (!oc) {
    oc = g_new0(OpCtx, 1);
    *oc = (OpCtx){wl, NULL, iter, j, -1, wl->P};
    cs_coll_set_iteration(wl->env, iter);
    oc->op = cs_coll_start(wl->env, &spec, on_result, oc);
    remember_op(wl, oc);
  }
  return oc;
}

static void on_encoded(void *ctx, uint64_t arg) {
  OpCtx *oc = ctx;
  cs_coll_contribute(oc->op, oc->async_worker >= 0 ? 0 : (uint32_t)arg);
}

static void try_next_bucket(CsWorkload *wl, uint32_t w) {
  Worker *wk = &wl->w[w];
  if (wk->busy || wk->next >= wk->ready) return;
  uint32_t j = wk->next++;
  wk->busy = true;
  OpCtx *oc = op_for(wl, w, wk->iter, j);
  cs_coll_compute(wl->env, wl->t->workers[w], bucket_size(wl, j) ? cs_codec_cost_time(wl->cost.encode_ps, bucket_size(wl, j)) : 0,
                  on_encoded, oc, w);
}

static void on_bucket_ready(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  CsWorkload *wl = ctx;
  uint32_t w = (uint32_t)arg;
  wl->w[w].ready++;
  try_next_bucket(wl, w);
}

static CsTime draw_compute(Worker *wk, CsTime compute, double cv) {
  if (cv <= 0) return compute;
  return cs_time_add_real(0, (double)compute * cs_rng_lognormal_mean_cv(&wk->rng, 1.0, cv));
}

static void start_iteration(CsWorkload *wl, uint32_t w) {
  Worker *wk = &wl->w[w];
  const CsWorkloadSpec *ws = wl->spec;
  CsTime now = cs_engine_now(wl->engine);
  CsIterRecord *r = rec_of(wl, w, wk->iter);
  r->start = now;
  r->first_send = -1;
  r->comm_end = now;
  wk->ready = wk->next = wk->done = 0;
  wk->busy = false;
  wk->codec_at_start = cs_coll_codec_time(wl->env, wl->t->workers[w]);
  CsTime t = now, last = 0;
  for (int64_t m = 0; m < ws->accumulation; m++) {
    last = draw_compute(wk, ws->compute, ws->compute_jitter);
    t = cs_time_add(t, last);
  }
  r->compute_end = t;
  uint32_t node = wl->t->workers[w];
  cs_coll_set_mark(wl->env, node, t);
  wk->outside_at_start = cs_coll_codec_time_after_mark(wl->env, node);
  if (ws->buckets == 0 || wl->async) { /* one bucket, after compute */
    cs_engine_schedule_at(wl->engine, t, on_bucket_ready, wl, w);
    return;
  }
  if (ws->layers) { /* each bucket when the backward pass has produced its last tensor */
    for (uint32_t j = 0; j < wl->nb; j++)
      cs_engine_schedule_at(wl->engine, t - last + (CsTime)llround((double)last * wl->plan.ready[j]), on_bucket_ready, wl, w);
    return;
  }
  /* buckets ready evenly over the last micro-batch's backward pass */
  CsTime backward = (CsTime)llround((double)last * ws->backward_fraction);
  CsTime bstart = t - backward;
  for (uint32_t j = 0; j < wl->nb; j++)
    cs_engine_schedule_at(wl->engine, bstart + (CsTime)((double)backward * (j + 1) / wl->nb), on_bucket_ready, wl, w);
}

CsWorkload *cs_workload_new(CsCollEnv *env, CsEngine *engine, const CsWorkloadSpec *ws, uint64_t seed,
                            const CsTopology *t, GError **error) {
  CsWorkload *wl = g_new0(CsWorkload, 1);
  wl->env = env;
  wl->engine = engine;
  wl->spec = ws;
  wl->seed = seed;
  wl->t = t;
  /* the scenario's check (cs_scenario_check) has refused what would fail here */
  if (!cs_codec_from_spec(&ws->compression, ws->dtype, seed, &wl->codec, &wl->cost, error)) {
    g_free(wl);
    return NULL;
  }
  wl->P = t->n_workers;
  wl->iterations = (uint32_t)ws->iterations;
  wl->async = cs_collective_has(ws->collective, CS_COLLF_SERVERS) && !ws->sync;
  /* servers: those listed, or all */
  wl->servers = g_new(uint32_t, t->n_servers + 1);
  if (ws->servers->len) {
    for (guint i = 0; i < ws->servers->len; i++)
      wl->servers[wl->S++] = (uint32_t)cs_topology_find(t, g_array_index(ws->servers, CsNameRef, i).name);
  } else {
    memcpy(wl->servers, t->servers, sizeof(uint32_t) * t->n_servers);
    wl->S = t->n_servers;
  }
  wl->elements = (uint64_t)ws->params;
  if (!cs_bucket_plan(ws, &wl->plan, error)) {
    g_free(wl->servers);
    g_free(wl);
    return NULL;
  }
  wl->nb = wl->plan.n;
  wl->w = g_new0(Worker, wl->P);
  for (uint32_t w = 0; w < wl->P; w++) cs_rng_init(&wl->w[w].rng, seed, cs_rng_stream_id("compute", w, 0));
  wl->rec = g_new0(CsIterRecord, (size_t)wl->P * wl->iterations);
  wl->ops = g_hash_table_new_full(cs_int64_hash, g_int64_equal, g_free, NULL);
  wl->finished_ops = g_ptr_array_new();
  wl->applied_at_pull = g_new0(uint64_t, wl->P);
  return wl;
}

void cs_workload_free(CsWorkload *wl) {
  if (!wl) return;
  free_finished(NULL, wl, 0);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, wl->ops);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    OpCtx *oc = v;
    cs_coll_free(oc->op);
    g_free(oc);
  }
  g_hash_table_destroy(wl->ops);
  g_ptr_array_free(wl->finished_ops, TRUE);
  g_free(wl->servers);
  g_free(wl->w);
  g_free(wl->rec);
  g_free(wl->applied_at_pull);
  cs_bucket_plan_clear(&wl->plan);
  g_free(wl);
}

void cs_workload_start(CsWorkload *wl, CsWorkloadDoneFn fn, void *ctx) {
  wl->done_fn = fn;
  wl->done_ctx = ctx;
  for (uint32_t w = 0; w < wl->P; w++) {
    wl->w[w].iter = 1;
    start_iteration(wl, w);
  }
}

bool cs_workload_done(const CsWorkload *wl) { return wl->workers_finished == wl->P; }
uint32_t cs_workload_workers(const CsWorkload *wl) { return wl->P; }
uint32_t cs_workload_iterations(const CsWorkload *wl) { return wl->iterations; }
uint32_t cs_workload_buckets(const CsWorkload *wl) { return wl->nb; }

const CsIterRecord *cs_workload_record(const CsWorkload *wl, uint32_t worker, uint32_t iteration) {
  const Worker *wk = &wl->w[worker];
  bool complete = iteration >= 1 && (iteration < wk->iter || (iteration == wk->iter && wk->finished));
  if (!complete) return NULL;
  return &wl->rec[(size_t)worker * wl->iterations + iteration - 1];
}
