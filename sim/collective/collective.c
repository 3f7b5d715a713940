/* collective.c - collectives as per-participant step lists.
 *
 * Each collective's builder (in its own file: ring.c, tree.c, ...) writes,
 * for every participant, the steps of one algorithm (Thakur, Rabenseifner
 * and Gropp, 2005); the step machine here runs them: send (if any), wait
 * for the step's message (if any), compute (if any), next.  Participants
 * 0..P-1 are the workers by rank, P.. the servers of a collective that
 * has them.
 */
#include "config.h"

#include <string.h>

#include "commsim/collective.h"
#include "commsim/ring.h"
#include "commsim/rng.h"

/* ---- environment: the network and per-node codec streams ---- */

/* A compute step's continuation, in a pool owned by the environment: a
 * run that stops with steps pending (interrupted) loses none. */
typedef struct {
  CsComputeFn fn;
  void *ctx;
  uint64_t arg;
  uint32_t next_free;
} ComputeDone;


struct CsCollEnv {
  ComputeDone *done; /* pool of pending compute steps */
  uint32_t done_len, done_cap, done_free;
  CsEngine *engine;
  CsFabric *fabric;
  const CsTopology *t;
  CsTime *busy_until; /* per node */
  CsTime *codec_time; /* per node */
  CsTime *mark, *after_mark; /* per node: cs_coll_set_mark */
  uint32_t iteration;
  GArray *spans; /* CsCodecSpan, when recording */
};

CsCollEnv *cs_coll_env_new(CsEngine *engine, CsFabric *fabric, const CsTopology *t) {
  CsCollEnv *env = g_new0(CsCollEnv, 1);
  env->engine = engine;
  env->done_free = CS_POOL_NONE;
  env->fabric = fabric;
  env->t = t;
  env->busy_until = g_new0(CsTime, t->n_nodes);
  env->codec_time = g_new0(CsTime, t->n_nodes);
  env->mark = g_new0(CsTime, t->n_nodes);
  env->after_mark = g_new0(CsTime, t->n_nodes);
  return env;
}

void cs_coll_env_free(CsCollEnv *env) {
  if (!env) return;
  if (env->spans) g_array_free(env->spans, TRUE);
  g_free(env->done);
  g_free(env->busy_until);
  g_free(env->codec_time);
  g_free(env->mark);
  g_free(env->after_mark);
  g_free(env);
}

static void on_compute(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  CsCollEnv *env = ctx;
  uint32_t slot = (uint32_t)arg;
  ComputeDone copy = env->done[slot];
  CS_POOL_PUT(env->done, env->done_free, next_free, slot);
  copy.fn(copy.ctx, copy.arg);
}

void cs_coll_compute(CsCollEnv *env, uint32_t node, CsTime duration, CsComputeFn fn, void *ctx, uint64_t arg) {
  CsTime now = cs_engine_now(env->engine);
  CsTime start = env->busy_until[node] > now ? env->busy_until[node] : now;
  CsTime end = duration > CS_TIME_MAX - start ? CS_TIME_MAX : start + duration;
  env->busy_until[node] = end;
  env->codec_time[node] += duration;
  if (end > env->mark[node]) env->after_mark[node] += end - MAX(start, env->mark[node]);
  if (env->spans && duration > 0) {
    CsCodecSpan sp = {node, start, end};
    g_array_append_val(env->spans, sp);
  }
  uint32_t slot;
  CS_POOL_TAKE(env->done, env->done_len, env->done_cap, env->done_free, next_free, 64, slot);
  env->done[slot] = (ComputeDone){fn, ctx, arg, CS_POOL_NONE};
  cs_engine_schedule_at(env->engine, end, on_compute, env, slot);
}

CsTime cs_coll_codec_time(const CsCollEnv *env, uint32_t node) { return env->codec_time[node]; }
void cs_coll_set_mark(CsCollEnv *env, uint32_t node, CsTime mark) { env->mark[node] = mark; }
CsTime cs_coll_codec_time_after_mark(const CsCollEnv *env, uint32_t node) { return env->after_mark[node]; }

void cs_coll_record_spans(CsCollEnv *env, bool on) {
  if (on && !env->spans) env->spans = g_array_new(FALSE, FALSE, sizeof(CsCodecSpan));
}

const GArray *cs_coll_spans(const CsCollEnv *env) { return env->spans; }
void cs_coll_set_iteration(CsCollEnv *env, uint32_t iteration) { env->iteration = iteration; }

uint64_t cs_coll_payload_bytes(const CsCodecParams *codec, uint64_t n) {
  uint64_t bits = cs_codec_wire_bits(codec, n);
  uint64_t bytes = bits / 8 + (bits % 8 != 0);
  return bytes ? bytes : 1; /* an empty chunk still sends its (empty) message */
}

/* ---- steps ---- */

typedef CsCollStep Step;

/* A participant's lane (one per participant unless its plan has more:
 * CsCollPlan.lanes); its steps are numbered by their place in the lane.
 * Two cache lines, aligned (op->parts): what the step machine reads and
 * sets at every step in the first, what a send and a delivery add in the
 * second, what only some collectives use after them.  (In 136 bytes in
 * the order they were added, a part spanned three lines; a ring's step
 * touches two parts a message, at scale each line a miss.) */
typedef struct {
  _Alignas(64) Step st; /* steps[cur], while cur < n_steps */
  uint32_t n_steps;
  uint32_t cur;
  /* the messages that came for its steps: steps cur..cur+63 in a word
   * (bit j: step cur + j), later ones in an array made when first needed
   * (a ring of 16,384 workers would otherwise hold 1 GB of flags) */
  uint64_t arrived_win;
  uint32_t n_far;      /* flags set in arrived_far for steps not yet in the word */
  uint32_t last_dst;
  bool contributed, sent_cur, computing, computed_cur, done;
  bool delivered_cur;  /* the message of its current step got there (a step that waits for it stays current) */
  struct Pair *last_pair; /* the pair it last sent on */
  CsTime first_send, last_recv; /* for comm_s: its first byte sent, or received at a rendezvous step (a tree's
                                 * parent takes its children's first); its last received, or its last send delivered
                                 * that a step of it waited for (a tree's parent sends on down) */
  struct Msg **held;  /* per step of the lane: a rendezvous message waiting for it (NULL without rendezvous steps) */
  uint8_t *arrived_far;
  const uint32_t *at; /* place in the lane -> index in the participant's plan (NULL: the same) */
  uint32_t who;       /* its participant */
  uint32_t landed;     /* a ps server: its receives taken by pushes that landed, in the order they did */
} Part;
_Static_assert(sizeof(Part) == 128, "a part in two cache lines");

typedef struct Msg Msg;
struct Msg {
  CsCollOp *op;
  uint32_t src, dst;  /* lanes (CsCollOp.parts) */
  uint32_t from, to;  /* their participants */
  uint32_t step;      /* the receiver's step that waits for it, by its place in the lane */
  uint32_t send_step; /* the sender's, by its index in the plan, for messages.csv */
  uint32_t send_at;   /* ... and by its place in the lane */
  uint64_t bytes;
  bool wait_delivered; /* the sender's step ends with its delivery */
  bool rendezvous;     /* the receiver's step posts its receive when reached */
  struct Pair *pair;
  Msg *next_in_pair; /* queued behind the pair's message in flight; once delivered, the op's free list */
};

typedef struct Pair {
  Msg *head, *tail; /* waiting */
  bool busy;
  uint32_t scan; /* the receiver's steps before it hold none of this pair's next messages */
  uint32_t same_end; /* ... and those from scan to here wait for this pair's sender (CsCollectiveDef.recv_same) */
} Pair;

struct CsCollOp {
  CsCollEnv *env;
  CsCollSpec spec;
  CsCollPlan *plan;
  uint32_t *nodes; /* per participant */
  uint32_t *hosts; /* per participant: its node's host (post_now: a lookup in one array, not two) */
  Part *parts;     /* per lane: lane l of participant p at l x n_parts + p */
  uint32_t n_parts; /* participants */
  uint32_t lanes;
  uint32_t **place; /* with lanes: per participant, its steps' places in their lanes (by plan index) */
  uint8_t *lanes_left; /* per participant: lanes not done */
  GHashTable *pairs; /* (src << 32 | dst) -> Pair */
  Msg *free_msgs;    /* delivered ones, to reuse (the others are freed with the op's slabs) */
  GPtrArray *slabs;  /* where messages live: MSG_SLAB each */
  uint32_t slab_used;
  CsCollDoneFn done;
  void *ctx;
  uint32_t workers_left, servers_left;
  bool via_servers; /* push only: the operation ends when the servers have summed */
  uint32_t iteration;
};

void cs_coll_add_step(CsCollPlan *plan, uint32_t p, int32_t send_to, uint64_t bytes, int32_t recv_from, CsTime compute) {
  Step s = {send_to, recv_from, bytes, compute, false, false, plan->build_lane, 0};
  g_array_append_val(plan->steps[p], s);
}

void cs_coll_set_lane(CsCollPlan *plan, uint8_t lane) {
  g_assert(lane < CS_COLL_LANES);
  plan->build_lane = lane;
  if (plan->lanes < lane + 1u) plan->lanes = lane + 1u;
}

void cs_coll_add_after(CsCollPlan *plan, uint32_t p, uint32_t step) {
  GArray *a = plan->steps[p];
  g_assert(a->len > 0 && step < a->len - 1);
  Step *last = &g_array_index(a, Step, a->len - 1);
  g_assert(g_array_index(a, Step, step).lane != last->lane); /* a lane runs its own steps in order anyway */
  last->after = step + 1;
}

uint32_t *cs_coll_plan_lane_steps(const CsCollPlan *plan, uint32_t p, uint32_t lane, uint32_t *n) {
  if (plan->lanes <= 1) {
    *n = cs_coll_plan_len(plan, p);
    return NULL;
  }
  GArray *a = plan->steps[p];
  uint32_t *at = g_new(uint32_t, a->len + 1), k = 0;
  for (uint32_t i = 0; i < a->len; i++)
    if (g_array_index(a, Step, i).lane == lane) at[k++] = i;
  *n = k;
  return at;
}

uint32_t *cs_coll_plan_places(const CsCollPlan *plan, uint32_t p) {
  if (plan->lanes <= 1) return NULL;
  GArray *a = plan->steps[p];
  uint32_t *place = g_new(uint32_t, a->len + 1), count[CS_COLL_LANES] = {0};
  for (uint32_t i = 0; i < a->len; i++) place[i] = count[g_array_index(a, Step, i).lane]++;
  return place;
}

/* A receive posted only when reached, as MPI's rendezvous for large
 * messages: the binomial tree's rounds stay rounds even when a leaf is
 * ready early. */
void cs_coll_add_round_recv(CsCollPlan *plan, uint32_t p, int32_t recv_from, CsTime compute) {
  Step s = {-1, recv_from, 0, compute, false, true, plan->build_lane, 0};
  g_array_append_val(plan->steps[p], s);
}

/* A send that ends its step only once delivered: the binomial tree sends
 * to one child per round, not to all at once. */
void cs_coll_add_round_send(CsCollPlan *plan, uint32_t p, int32_t send_to, uint64_t bytes) {
  Step s = {send_to, -1, bytes, 0, true, false, plan->build_lane, 0};
  g_array_append_val(plan->steps[p], s);
}

CsTime cs_coll_cost(double ps_per_element, uint64_t n) { return n ? cs_codec_cost_time(ps_per_element, n) : 0; }

uint32_t cs_coll_participants(const CsCollSpec *spec) {
  return spec->n_workers + (cs_collective_has(spec->kind, CS_COLLF_SERVERS) ? spec->n_servers : 0);
}

/* The collective's builder (its file) writes every participant's steps. */
CsCollPlan *cs_coll_plan_new(const CsCollSpec *spec) {
  CsCollPlan *plan = g_new0(CsCollPlan, 1);
  plan->n_parts = cs_coll_participants(spec);
  plan->def = cs_collective_def(spec->kind);
  plan->spec = *spec;
  plan->lanes = 1;
  memset(&plan->spec.pieces, 0, sizeof plan->spec.pieces); /* this plan's own, if its collective fills them */
  if (plan->def->step) { /* computed when asked */
    if (plan->def->prepare) plan->def->prepare(&plan->spec);
    return plan;
  }
  plan->steps = g_new(GArray *, plan->n_parts);
  for (uint32_t p = 0; p < plan->n_parts; p++) plan->steps[p] = g_array_new(FALSE, FALSE, sizeof(Step));
  plan->def->build(plan, spec);
  plan->build_lane = 0;
  return plan;
}

void cs_coll_plan_free(CsCollPlan *plan) {
  if (!plan) return;
  if (plan->steps)
    for (uint32_t p = 0; p < plan->n_parts; p++) g_array_free(plan->steps[p], TRUE);
  g_free(plan->steps);
  for (uint32_t p = 0; plan->recv_index && p < plan->n_parts; p++) g_free(plan->recv_index[p]);
  g_free(plan->recv_index);
  g_free(plan);
}

uint32_t cs_coll_plan_len(const CsCollPlan *plan, uint32_t p) {
  return plan->steps ? plan->steps[p]->len : plan->def->n_steps(&plan->spec, p);
}

CsCollStep cs_coll_plan_step(const CsCollPlan *plan, uint32_t p, uint32_t k) {
  return plan->steps ? g_array_index(plan->steps[p], Step, k) : plan->def->step(&plan->spec, p, k);
}

/* A built plan's steps searched this far for a sender before its index
 * (CsCollPlan.recv_index) is used: a ps server's P pushes, each worker's
 * S pulls would take a scan from the first step for every pair. */
#define RECV_SCAN 16

static int by_sender(const void *a, const void *b, void *steps) {
  const Step *s = (const Step *)(void *)((GArray *)steps)->data;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  int32_t fx = s[x].recv_from, fy = s[y].recv_from;
  return fx != fy ? (fx < fy ? -1 : 1) : (x > y) - (x < y);
}

static const uint32_t *recv_index_of(const CsCollPlan *plan, uint32_t p) {
  CsCollPlan *w = (CsCollPlan *)plan; /* (filled once, when first needed) */
  if (!w->recv_index) w->recv_index = g_new0(uint32_t *, w->n_parts);
  uint32_t **slot = &w->recv_index[p];
  if (*slot) return *slot;
  GArray *a = plan->steps[p];
  uint32_t n = 0, *idx = g_new(uint32_t, a->len + 1);
  for (uint32_t k = 0; k < a->len; k++)
    if (g_array_index(a, Step, k).recv_from >= 0) idx[1 + n++] = k;
  idx[0] = n;
  g_qsort_with_data(idx + 1, (gint)n, sizeof *idx, by_sender, a);
  return *slot = idx;
}

uint32_t cs_coll_plan_next_recv(const CsCollPlan *plan, uint32_t dst, uint32_t src, uint32_t from) {
  uint32_t n = cs_coll_plan_len(plan, dst);
  if (!plan->steps && plan->def->recv_from) {
    while (from < n && plan->def->recv_from(&plan->spec, dst, from) != (int32_t)src) from++;
  } else {
    uint32_t stop = from < n ? MIN(n, from + RECV_SCAN) : from;
    while (from < stop && cs_coll_plan_step(plan, dst, from).recv_from != (int32_t)src) from++;
    if (from == stop && from < n && plan->steps) { /* the first of src's steps from `from` on, by bisection */
      const uint32_t *idx = recv_index_of(plan, dst);
      const Step *s = (const Step *)(void *)plan->steps[dst]->data;
      uint32_t lo = 0, hi = idx[0];
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, k = idx[1 + mid];
        if (s[k].recv_from < (int32_t)src || (s[k].recv_from == (int32_t)src && k < from)) lo = mid + 1;
        else hi = mid;
      }
      from = lo < idx[0] && s[idx[1 + lo]].recv_from == (int32_t)src ? idx[1 + lo] : n;
    }
  }
  g_assert(from < n); /* every message has a step waiting for it */
  return from;
}

/* ---- the step machine ---- */

static void advance(CsCollOp *op, uint32_t lp);
static inline __attribute__((always_inline)) void advance_dst(CsCollOp *op, uint32_t lp);

static void post_now(CsCollOp *op, Msg *m);

/* Msg.step of a push to a ps server until it lands. */
#define AT_DELIVERY UINT32_MAX

/* The message for step s (its place in the lane) of lane d has come (s >=
 * its current step: a step waits for its message). */
static void set_arrived(Part *d, uint32_t s) {
  g_assert(s >= d->cur && s < d->n_steps);
  if (s - d->cur < 64) {
    d->arrived_win |= (uint64_t)1 << (s - d->cur);
    return;
  }
  if (!d->arrived_far) d->arrived_far = g_new0(uint8_t, d->n_steps);
  d->arrived_far[s] = 1;
  d->n_far++;
}

static void on_delivered(void *ctx, uint32_t msg, bool failed) {
  Msg *m = ctx;
  CsCollOp *op = m->op;
  if (failed) return; /* the run reports the undeliverable message */
  (void)msg;
  if (m->wait_delivered) { /* its sender waits at that step for this */
    g_assert(op->parts[m->src].cur == m->send_at);
    op->parts[m->src].delivered_cur = true;
    op->parts[m->src].last_recv = cs_engine_now(op->env->engine); /* its communication lasts until then */
  }
  Part *d = &op->parts[m->dst];
  if (m->step == AT_DELIVERY) { /* the server's next receive not yet taken: its pushes are alike */
    while (cs_coll_plan_step(op->plan, m->to, d->landed).recv_from < 0) d->landed++;
    m->step = d->landed++;
  }
  set_arrived(d, m->step);
  d->last_recv = cs_engine_now(op->env->engine);
  Pair *pair = m->pair;
  pair->busy = false;
  if (pair->head) {
    Msg *next = pair->head;
    pair->head = next->next_in_pair;
    if (!pair->head) pair->tail = NULL;
    post_now(op, next);
  }
  advance_dst(op, m->dst);
  if (m->wait_delivered) advance(op, m->src);
  /* delivered: nothing refers to it any more (a ring of P workers sends P x 2(P-1)) */
  m->next_in_pair = op->free_msgs;
  op->free_msgs = m;
}

/* A message from the op's slabs (a ring of P workers sends P x 2(P-1), at
 * most a few per worker at once): no allocation per message. */
#define MSG_SLAB 1024
static inline __attribute__((always_inline)) Msg *msg_new(CsCollOp *op) {
  Msg *m = op->free_msgs;
  if (m) {
    op->free_msgs = m->next_in_pair;
    return m;
  }
  if (op->slab_used == MSG_SLAB || op->slabs->len == 0) {
    g_ptr_array_add(op->slabs, g_new(Msg, MSG_SLAB));
    op->slab_used = 0;
  }
  return &((Msg *)g_ptr_array_index(op->slabs, op->slabs->len - 1))[op->slab_used++];
}

static void post_now(CsCollOp *op, Msg *m) {
  CsCollEnv *env = op->env;
  m->pair->busy = true;
  Part *src = &op->parts[m->src];
  if (src->first_send < 0) src->first_send = cs_engine_now(env->engine);
  Part *dst = &op->parts[m->dst];
  if (m->rendezvous && dst->first_send < 0) dst->first_send = cs_engine_now(env->engine); /* posted by the receiver */
  uint32_t id = cs_fabric_send(env->fabric, op->hosts[m->from], op->hosts[m->to], m->bytes, on_delivered, m);
  cs_fabric_tag(env->fabric, id, op->iteration, m->send_step);
}

/* cs_coll_plan_step, inline in the step machine (one call less per step). */
static inline Step plan_step(const CsCollPlan *plan, uint32_t p, uint32_t k) {
  return plan->steps ? g_array_index(plan->steps[p], Step, k) : plan->def->step(&plan->spec, p, k);
}

/* pt->st = s, field by field.  A computed plan's step (a ring's) comes
 * back through memory that its function wrote field by field; copied in
 * 16-byte pieces, as an assignment is, each load waits for those stores
 * to reach the cache (a store-to-load forwarding that fails: a quarter of
 * advance's samples at 8,192 workers), where loads of the fields' own
 * sizes take them from the stores at once.  (The two 32-bit fields are
 * read as volatile: GCC would merge them into one 64-bit load, which
 * fails the same way.) */
static inline void set_st(Part *pt, const Step *s) {
  pt->st.send_to = *(const volatile int32_t *)&s->send_to;
  pt->st.recv_from = *(const volatile int32_t *)&s->recv_from;
  pt->st.send_bytes = s->send_bytes;
  pt->st.compute = s->compute;
  pt->st.wait_delivered = s->wait_delivered;
  pt->st.rendezvous = s->rendezvous;
  pt->st.lane = s->lane;
  pt->st.after = s->after;
}

/* A lane's step by its place: its index in the participant's plan. */
static inline uint32_t plan_index(const Part *pt, uint32_t at) { return pt->at ? pt->at[at] : at; }

/* One message at a time per pair, in order: m goes now, or behind the
 * pair's message in flight. */
static inline __attribute__((always_inline)) void queue_or_post(CsCollOp *op, Pair *pair, Msg *m) {
  if (pair->busy) {
    if (pair->tail) pair->tail->next_in_pair = m;
    else pair->head = m;
    pair->tail = m;
    return;
  }
  post_now(op, m);
}

/* Lane lp sends `bytes` to participant dst, at its step `step` (plan
 * index); `lanes` as advance_as's. */
static inline __attribute__((always_inline)) void post(CsCollOp *op, uint32_t lp, uint32_t dst, uint64_t bytes,
                                                       uint32_t step, bool wait_delivered, const bool lanes) {
  Part *sp = &op->parts[lp];
  uint32_t src = lanes ? sp->who : lp;
  guint64 key = ((guint64)src << 32) | dst;
  Pair *pair = sp->last_dst == dst ? sp->last_pair : g_hash_table_lookup(op->pairs, &key);
  if (!pair) { /* the pair's first message */
    pair = g_new0(Pair, 1);
    guint64 *k = g_new(guint64, 1);
    *k = key;
    g_hash_table_insert(op->pairs, k, pair);
  }
  sp->last_pair = pair;
  sp->last_dst = dst;
  if (op->via_servers && dst >= op->spec.n_workers) { /* a server takes pushes as they land: its step at delivery */
    Msg *m = msg_new(op);
    *m = (Msg){op, lp, dst, src, dst, AT_DELIVERY, step, sp->cur, bytes, wait_delivered, false, pair, NULL};
    queue_or_post(op, pair, m);
    return;
  }
  pair->scan = cs_coll_plan_next_recv_run(op->plan, dst, src, pair->scan, &pair->same_end);
  uint32_t k = pair->scan++, dl = dst, at = k; /* the receiver's step: its lane and place there */
  if (lanes) {
    dl = plan_step(op->plan, dst, k).lane * op->n_parts + dst;
    at = op->place[dst][k];
  }
  Part *d = &op->parts[dl];
  bool rendezvous = d->held && cs_coll_plan_step(op->plan, dst, k).rendezvous;
  Msg *m = msg_new(op);
  *m = (Msg){op, lp, dl, src, dst, at, step, sp->cur, bytes, wait_delivered, rendezvous, pair, NULL};
  /* held until the receiver reaches the step: a later step, or its first
   * while it has not contributed yet (still computing) */
  if (rendezvous && (d->cur < at || !d->contributed)) {
    pair->busy = true; /* it counts as the pair's message in flight */
    d->held[at] = m;
    return;
  }
  queue_or_post(op, pair, m);
}

static void on_step_computed(void *ctx, uint64_t arg) {
  CsCollOp *op = ctx;
  Part *pt = &op->parts[arg];
  pt->computing = false;
  pt->computed_cur = true;
  advance(op, (uint32_t)arg);
}

static void participant_done(CsCollOp *op, uint32_t p) {
  uint32_t P = op->spec.n_workers;
  if (p < P) {
    op->workers_left--;
    if (!op->via_servers || op->spec.pull) op->done(op->ctx, p);
  } else if (--op->servers_left == 0 && !op->spec.pull) {
    /* push only: the round ends for everyone when the servers have summed */
    for (uint32_t r = 0; r < P; r++) op->done(op->ctx, r);
  }
}

/* Participant p's step k (plan index) is done. */
static bool step_done(const CsCollOp *op, uint32_t p, uint32_t k) {
  const Part *o = &op->parts[plan_step(op->plan, p, k).lane * op->n_parts + p];
  return o->cur > op->place[p][k];
}

/* Run lane lp's steps as far as they go (`lanes`: the op has more than
 * one lane; a constant where inlined, so that an op of one lane pays
 * nothing for them). */
static inline __attribute__((always_inline)) void advance_as(CsCollOp *op, uint32_t lp, const bool lanes) {
  Part *pt = &op->parts[lp];
  uint32_t p = lanes ? pt->who : lp;
  while (!pt->done) {
    if (pt->cur == pt->n_steps) {
      pt->done = true;
      if (--op->lanes_left[p] == 0) participant_done(op, p);
      return;
    }
    const Step *st = &pt->st; /* (a send delivers nothing at once: no handler runs within post, so it holds) */
    if (!pt->sent_cur) {
      if (!pt->contributed) return;
      if (lanes && st->after && !step_done(op, p, st->after - 1)) return; /* the lane that step is in wakes this one */
      if (st->send_to >= 0)
        post(op, lp, (uint32_t)st->send_to, st->send_bytes, lanes ? plan_index(pt, pt->cur) : pt->cur, st->wait_delivered,
             lanes);
      pt->sent_cur = true;
      pt = &op->parts[lp];
    }
    if (st->rendezvous && pt->held[pt->cur]) { /* the receive is posted: let the sender's message go */
      Msg *m = pt->held[pt->cur];
      pt->held[pt->cur] = NULL;
      post_now(op, m);
      pt = &op->parts[lp];
    }
    if (st->recv_from >= 0 && !(pt->arrived_win & 1)) return;
    if (st->wait_delivered && !pt->delivered_cur) return;
    if (st->compute > 0 && !pt->computed_cur) {
      if (!pt->computing) {
        pt->computing = true;
        cs_coll_compute(op->env, op->nodes[p], st->compute, on_step_computed, op, lp);
      }
      return;
    }
    pt->cur++;
    pt->sent_cur = pt->computed_cur = pt->delivered_cur = false;
    pt->arrived_win >>= 1;
    if (G_UNLIKELY(pt->n_far) && pt->cur + 63 < pt->n_steps && pt->arrived_far[pt->cur + 63]) { /* into the word */
      pt->arrived_win |= (uint64_t)1 << 63;
      pt->n_far--;
    }
    if (pt->cur < pt->n_steps) {
      const Step next = plan_step(op->plan, p, lanes ? plan_index(pt, pt->cur) : pt->cur);
      set_st(pt, &next);
    }
    if (lanes) /* a step done may be what another lane of p waits for */
      for (uint32_t l = 0; l < op->lanes; l++) {
        Part *o = &op->parts[l * op->n_parts + p];
        if (o != pt && !o->done && !o->sent_cur && o->cur < o->n_steps && o->st.after) advance(op, l * op->n_parts + p);
      }
  }
}

static G_GNUC_NO_INLINE void advance_lanes(CsCollOp *op, uint32_t lp) { advance_as(op, lp, true); }

static void advance(CsCollOp *op, uint32_t lp) {
  if (G_UNLIKELY(op->lanes > 1)) advance_lanes(op, lp);
  else advance_as(op, lp, false);
}

/* advance, inline in on_delivered: a delivery's receiver, once per message */
static inline __attribute__((always_inline)) void advance_dst(CsCollOp *op, uint32_t lp) {
  if (G_UNLIKELY(op->lanes > 1)) advance_lanes(op, lp);
  else advance_as(op, lp, false);
}

CsCollOp *cs_coll_start(CsCollEnv *env, const CsCollSpec *spec, CsCollDoneFn done, void *ctx) {
  CsCollOp *op = g_new0(CsCollOp, 1);
  op->env = env;
  op->spec = *spec;
  op->done = done;
  op->ctx = ctx;
  op->iteration = env->iteration;
  uint32_t P = spec->n_workers, S = cs_coll_participants(spec) - P;
  op->n_parts = P + S;
  op->via_servers = cs_collective_has(spec->kind, CS_COLLF_SERVERS);
  op->nodes = g_new(uint32_t, op->n_parts);
  memcpy(op->nodes, spec->workers, sizeof(uint32_t) * P);
  if (S) memcpy(op->nodes + P, spec->servers, sizeof(uint32_t) * S);
  op->hosts = g_new(uint32_t, op->n_parts);
  for (uint32_t p = 0; p < op->n_parts; p++) op->hosts[p] = (uint32_t)env->t->nodes[op->nodes[p]].host;
  op->plan = cs_coll_plan_new(spec);
  op->lanes = op->plan->lanes;
  uint32_t N = op->n_parts, L = op->lanes;
  op->parts = g_aligned_alloc0((size_t)N * L, sizeof(Part), _Alignof(Part));
  op->lanes_left = g_new(uint8_t, N);
  memset(op->lanes_left, (int)L, N);
  if (L > 1) op->place = g_new0(uint32_t *, N);
  for (uint32_t p = 0; p < N; p++) {
    if (L > 1) op->place[p] = cs_coll_plan_places(op->plan, p);
    for (uint32_t l = 0; l < L; l++) {
      Part *pt = &op->parts[l * N + p];
      pt->who = p;
      pt->at = cs_coll_plan_lane_steps(op->plan, p, l, &pt->n_steps);
      if (pt->n_steps) pt->st = cs_coll_plan_step(op->plan, p, plan_index(pt, 0));
      pt->contributed = p >= P; /* servers hold nothing of their own */
      pt->first_send = -1;
      pt->last_recv = -1;
      pt->last_dst = UINT32_MAX;
      bool rendezvous = false; /* only a lane with rendezvous steps holds messages back (no computed plan has them) */
      for (uint32_t k = 0; op->plan->steps && k < pt->n_steps && !rendezvous; k++)
        rendezvous = cs_coll_plan_step(op->plan, p, plan_index(pt, k)).rendezvous;
      pt->held = rendezvous ? g_new0(Msg *, pt->n_steps + 1) : NULL;
    }
  }
  op->slabs = g_ptr_array_new_with_free_func(g_free);
  op->pairs = g_hash_table_new_full(cs_int64_hash, g_int64_equal, g_free, g_free);
  op->workers_left = P;
  op->servers_left = S;
  for (uint32_t p = P; p < N; p++)
    for (uint32_t l = 0; l < L; l++) advance(op, l * N + p);
  return op;
}

void cs_coll_contribute(CsCollOp *op, uint32_t rank) {
  for (uint32_t l = 0; l < op->lanes; l++) op->parts[l * op->n_parts + rank].contributed = true;
  for (uint32_t l = 0; l < op->lanes; l++) advance(op, l * op->n_parts + rank);
}

CsTime cs_coll_first_send(const CsCollOp *op, uint32_t rank) {
  CsTime t = -1;
  for (uint32_t l = 0; l < op->lanes; l++) {
    CsTime x = op->parts[l * op->n_parts + rank].first_send;
    if (x >= 0 && (t < 0 || x < t)) t = x;
  }
  return t;
}

CsTime cs_coll_last_receive(const CsCollOp *op, uint32_t rank) {
  CsTime t = -1;
  for (uint32_t l = 0; l < op->lanes; l++) t = MAX(t, op->parts[l * op->n_parts + rank].last_recv);
  return t;
}

bool cs_coll_finished(const CsCollOp *op) { return op->workers_left == 0 && op->servers_left == 0; }

void cs_coll_free(CsCollOp *op) {
  if (!op) return;
  cs_coll_plan_free(op->plan);
  for (uint32_t i = 0; i < op->n_parts * op->lanes; i++) {
    g_free(op->parts[i].arrived_far);
    g_free(op->parts[i].held);
    g_free((uint32_t *)op->parts[i].at);
  }
  for (uint32_t p = 0; op->place && p < op->n_parts; p++) g_free(op->place[p]);
  g_free(op->place);
  g_free(op->lanes_left);
  g_aligned_free(op->parts);
  g_free(op->nodes);
  g_free(op->hosts);
  g_hash_table_destroy(op->pairs);
  g_ptr_array_free(op->slabs, TRUE); /* the messages still live with them */
  g_free(op);
}
