/* model.c - the closed-form estimate: collectives as steps of messages on
 * the real routes, each step bounded by its busiest link direction. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "commsim/collective.h"
#include "commsim/model.h"
#include "commsim/units.h"
#include "commsim/workload.h"

/* A message of a step: between two nodes, `payload` bytes. */
typedef struct {
  uint32_t src, dst;
  uint64_t payload;
} MMsg;

typedef struct {
  CsRouting routing;
  const CsTopology *t;
  const CsRoutes *r;
  uint64_t mss, header, ack;
  double *load;       /* per link direction: bytes in the step */
  uint32_t *touched;  /* directions with load, this step */
  uint32_t n_touched;
  double *share;      /* per node: the part of a message passing it (ECMP spreading) */
  uint32_t *frontier, *next;
  uint32_t *ports;    /* a path */
  uint8_t *used;      /* per link direction: crossed by any step */
  double hop_sum;
  uint64_t hop_n;
} Ctx;

static uint32_t dir_of(const CsTopology *t, uint32_t port) { return 2 * t->ports[port].link + t->ports[port].dir; }

static void add_load(Ctx *c, uint32_t d, double bytes) {
  if (c->load[d] == 0) c->touched[c->n_touched++] = d;
  c->load[d] += bytes;
  c->used[d] = 1;
}

/* Put `bytes` on the links from node `src` to host `dst`: along the one
 * path of shortest routing, or spread evenly over the equal-cost next
 * hops at every node (ideal ECMP), layer by layer toward dst. */
static void spread(Ctx *c, uint32_t src, uint32_t dst_host, double bytes) {
  const CsTopology *t = c->t;
  if (c->routing != CS_ROUTING_ECMP) {
    int h = cs_routes_path(c->r, src, dst_host, 0, c->ports, (int)t->n_nodes);
    for (int i = 0; i < h; i++) add_load(c, dir_of(t, c->ports[i]), bytes);
    return;
  }
  uint32_t nf = 1, target = t->hosts[dst_host];
  c->frontier[0] = src;
  c->share[src] = 1.0;
  while (nf > 0 && c->frontier[0] != target) {
    uint32_t nn = 0;
    for (uint32_t i = 0; i < nf; i++) {
      uint32_t n = c->frontier[i];
      const CsNode *node = &t->nodes[n];
      int want = cs_routes_distance(c->r, n, dst_host) - 1;
      uint32_t count = 0;
      for (uint32_t p = node->first_port; p < node->first_port + node->n_ports; p++)
        count += cs_routes_distance(c->r, t->ports[p].peer, dst_host) == want;
      double part = c->share[n] / count;
      for (uint32_t p = node->first_port; p < node->first_port + node->n_ports; p++) {
        uint32_t m = t->ports[p].peer;
        if (cs_routes_distance(c->r, m, dst_host) != want) continue;
        add_load(c, dir_of(t, p), bytes * part);
        if (c->share[m] == 0) c->next[nn++] = m;
        c->share[m] += part;
      }
      c->share[n] = 0;
    }
    uint32_t *tmp = c->frontier;
    c->frontier = c->next;
    c->next = tmp;
    nf = nn;
  }
  for (uint32_t i = 0; i < nf; i++) c->share[c->frontier[i]] = 0;
}

/* Packets, wire bytes and the latency terms of one message: the path's
 * latencies and one last packet's store-and-forward at every hop but the
 * first slowest (whose serialization the busiest-link term counts). */
static double message_terms(Ctx *c, const MMsg *m, uint64_t *packets, double *wire) {
  const CsTopology *t = c->t;
  uint64_t n = (m->payload + c->mss - 1) / c->mss;
  if (n == 0) n = 1;
  *packets = n;
  *wire = (double)m->payload + (double)(n * c->header);
  double last = (double)(m->payload - (n - 1) * c->mss + c->header);
  uint32_t dst_host = (uint32_t)t->nodes[m->dst].host;
  int h = cs_routes_path(c->r, m->src, dst_host, 0, c->ports, (int)t->n_nodes);
  double lat = 0, bmin = INFINITY;
  int slow = 0;
  for (int i = 0; i < h; i++) {
    const CsLink *l = &t->links[t->ports[c->ports[i]].link];
    lat += (double)l->spec.latency * 1e-12;
    if ((double)l->spec.bandwidth < bmin) bmin = (double)l->spec.bandwidth, slow = i;
  }
  for (int i = 0; i < h; i++)
    if (i != slow) lat += 8.0 * last / (double)t->links[t->ports[c->ports[i]].link].spec.bandwidth;
  c->hop_sum += h;
  c->hop_n++;
  return lat;
}

/* One step: its messages travel at once. */
static CsModelStep step_eval(Ctx *c, const MMsg *msgs, uint32_t n) {
  const CsTopology *t = c->t;
  CsModelStep st = {0};
  st.messages = n;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t packets;
    double wire;
    double lat = message_terms(c, &msgs[i], &packets, &wire);
    if (lat > st.latency_s) st.latency_s = lat;
    spread(c, msgs[i].src, (uint32_t)t->nodes[msgs[i].dst].host, wire);
    /* the ACKs come back the other way */
    spread(c, msgs[i].dst, (uint32_t)t->nodes[msgs[i].src].host, (double)(packets * c->ack));
  }
  for (uint32_t i = 0; i < c->n_touched; i++) {
    uint32_t d = c->touched[i];
    double s = 8.0 * c->load[d] / (double)t->links[d / 2].spec.bandwidth;
    if (s > st.bound_s || (s == st.bound_s && d < 2 * st.link + (uint32_t)st.dir)) {
      st.bound_s = s;
      st.link = d / 2;
      st.dir = (int)(d % 2);
      st.bound_bytes = c->load[d];
    }
    c->load[d] = 0;
  }
  c->n_touched = 0;
  st.seconds = st.bound_s + st.latency_s;
  return st;
}

static uint64_t piece(uint64_t n, uint32_t parts, uint32_t i) { return n / parts + (i < n % parts); }

/* ---- one collective operation on a bucket of n elements ----
 *
 * For ring, halving-doubling, allgather and tree, the steps of the
 * simulation itself (cs_coll_plan_new) are replayed with every message
 * taking the time of the step it belongs to (its round of concurrent
 * messages, evaluated above), with the same rules: a participant's steps
 * in order, the codec work between them, messages between two
 * participants one at a time, a rendezvous receive letting its message
 * leave only when reached, a round send ending when delivered.  ps has a
 * recurrence of its own (below): its messages' times depend on their
 * order at a worker's and a server's link. */

typedef struct {
  Ctx *c;
  uint32_t P, S;
  const uint32_t *w, *sv; /* worker and server nodes */
  CsCodecParams codec;
  CsCodecCost cost;
  uint32_t chunks;
  bool pull;
  CsCollective kind;
  GArray *steps;        /* when not NULL, the steps are recorded here */
  MMsg *msgs;           /* room for a step's messages */
  GHashTable *pair_s;   /* (src part << 32 | dst part) -> seconds of each of its messages */
  uint64_t per, last_n; /* elements of a full bucket and of the last */
  double server_acc;    /* ps: the summing after the last push lands, added up over buckets */
  double server_add;
} Op;

#define PAY(o, e) cs_coll_payload_bytes(&(o)->codec, (e))
#define COST(ps, e) ((ps) * (double)(e) * 1e-12)

static void record(Op *o, CsModelStep st, const char *label, uint32_t count) {
  if (!o->steps) return;
  st.label = g_strdup(label);
  st.count = count;
  g_array_append_val(o->steps, st);
}

static void set_pair(Op *o, uint32_t a, uint32_t b, double seconds) {
  gint64 *k = g_new(gint64, 1);
  *k = ((gint64)a << 32) | b;
  double *v = g_new(double, 1);
  *v = seconds;
  g_hash_table_replace(o->pair_s, k, v);
}

/* The rounds of each collective: their messages evaluated together, and
 * each pair's messages given its round's time. */
static void rounds_ring(Op *o, uint64_t n) {
  uint32_t P = o->P;
  for (uint32_t r = 0; r < P; r++) o->msgs[r] = (MMsg){o->w[r], o->w[(r + 1) % P], PAY(o, piece(n, P, r))};
  CsModelStep st = step_eval(o->c, o->msgs, P);
  record(o, st, "reduce-scatter / all-gather step", 2 * (P - 1));
  for (uint32_t r = 0; r < P; r++) set_pair(o, r, (r + 1) % P, st.seconds);
}

static void rounds_halving_doubling(Op *o, uint64_t n) {
  uint32_t P = o->P, L = 0;
  while ((1u << L) < P) L++;
  uint64_t size = n;
  for (uint32_t k = 0; k < L; k++) {
    uint32_t b = P >> (k + 1);
    uint64_t half = size - size / 2; /* the lower ranks send the upper half */
    for (uint32_t r = 0; r < P; r++) o->msgs[r] = (MMsg){o->w[r], o->w[r ^ b], PAY(o, (r & b) ? size / 2 : half)};
    CsModelStep st = step_eval(o->c, o->msgs, P);
    g_autofree char *label = g_strdup_printf("halving / doubling step %u (partner r xor %u)", k + 1, b);
    record(o, st, label, 2);
    for (uint32_t r = 0; r < P; r++) set_pair(o, r, r ^ b, st.seconds);
    size /= 2;
  }
}

static void rounds_allgather(Op *o, uint64_t n) {
  uint32_t P = o->P;
  for (uint32_t r = 0; r < P; r++) o->msgs[r] = (MMsg){o->w[r], o->w[(r + 1) % P], PAY(o, n)};
  CsModelStep st = step_eval(o->c, o->msgs, P);
  record(o, st, "ring step (every payload forwarded)", P - 1);
  for (uint32_t r = 0; r < P; r++) set_pair(o, r, (r + 1) % P, st.seconds);
}

/* Binomial tree: level k joins r to its parent r - 2^k (r's lowest set
 * bit k); a level's messages (one chunk each) travel at once. */
static void rounds_tree(Op *o, uint64_t n) {
  uint32_t P = o->P, L = 0, C = o->chunks ? o->chunks : 1;
  while ((1u << L) < P) L++;
  uint64_t chunk = piece(n, C, 0);
  for (int down = 0; down < 2; down++)
    for (uint32_t k = 0; k < L; k++) {
      uint32_t m = 0;
      for (uint32_t r = 1; r < P; r++)
        if ((uint32_t)__builtin_ctz(r) == k) {
          uint32_t parent = r - (1u << k);
          o->msgs[m++] = down ? (MMsg){o->w[parent], o->w[r], PAY(o, chunk)} : (MMsg){o->w[r], o->w[parent], PAY(o, chunk)};
        }
      CsModelStep st = step_eval(o->c, o->msgs, m);
      g_autofree char *label = g_strdup_printf("%s level %u (ranks r with lowest bit %u)", down ? "broadcast" : "reduce", k, k);
      record(o, st, label, C);
      for (uint32_t r = 1; r < P; r++)
        if ((uint32_t)__builtin_ctz(r) == k) {
          uint32_t parent = r - (1u << k);
          if (down) set_pair(o, parent, r, st.seconds);
          else set_pair(o, r, parent, st.seconds);
        }
    }
}

/* A message of the replay. */
typedef struct {
  double post, start, end;
  bool resolved; /* start and end known */
  uint32_t step; /* the receiver's step that takes it */
} RMsg;

typedef struct {
  GArray *msgs;   /* RMsg, in the order posted */
  guint consumed; /* messages taken by the receiver's steps so far */
  GArray *recv_steps;
} RPair;

static void rpair_free(gpointer p) {
  RPair *x = p;
  g_array_free(x->msgs, TRUE);
  g_array_free(x->recv_steps, TRUE);
  g_free(x);
}

/* Replay the plan from time 0 (every worker has contributed); each
 * worker's result time into end[]. */
static void replay(Op *o, const CsCollPlan *plan, double *end) {
  uint32_t N = plan->n_parts;
  GHashTable *pairs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, rpair_free);
  uint32_t *cur = g_new0(uint32_t, N);
  bool *sent = g_new0(bool, N);
  double *t = g_new0(double, N);
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t p = 0; p < N; p++) {
      GArray *steps = plan->steps[p];
      while (cur[p] < steps->len) {
        const CsCollStep *st = &g_array_index(steps, CsCollStep, cur[p]);
        RPair *out = NULL;
        if (st->send_to >= 0) {
          gint64 key = ((gint64)p << 32) | (uint32_t)st->send_to;
          out = g_hash_table_lookup(pairs, &key);
          if (!out) {
            out = g_new0(RPair, 1);
            out->msgs = g_array_new(FALSE, TRUE, sizeof(RMsg));
            out->recv_steps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
            GArray *rs = plan->steps[st->send_to];
            for (guint i = 0; i < rs->len; i++)
              if (g_array_index(rs, CsCollStep, i).recv_from == (int32_t)p) g_array_append_val(out->recv_steps, i);
            g_hash_table_insert(pairs, g_memdup2(&key, sizeof key), out);
          }
          if (!sent[p]) {
            RMsg m = {t[p], 0, 0, false, g_array_index(out->recv_steps, uint32_t, out->msgs->len)};
            g_array_append_val(out->msgs, m);
            sent[p] = true;
          }
        }
        if (st->recv_from >= 0) {
          gint64 key = ((gint64)(uint32_t)st->recv_from << 32) | p;
          RPair *in = g_hash_table_lookup(pairs, &key);
          if (!in || in->consumed >= in->msgs->len) break; /* not sent yet */
          RMsg *m = &g_array_index(in->msgs, RMsg, in->consumed);
          if (!m->resolved) {
            double prev = in->consumed ? g_array_index(in->msgs, RMsg, in->consumed - 1).end : 0;
            m->start = fmax(fmax(m->post, prev), st->rendezvous ? t[p] : 0);
            double *sec = g_hash_table_lookup(o->pair_s, &key);
            m->end = m->start + (sec ? *sec : 0);
            m->resolved = true;
          }
          in->consumed++;
          t[p] = fmax(t[p], m->end);
        }
        if (st->wait_delivered) {
          const RMsg *m = &g_array_index(out->msgs, RMsg, out->msgs->len - 1);
          if (!m->resolved) break; /* its receiver has not reached it */
          t[p] = fmax(t[p], m->end);
        }
        t[p] += (double)st->compute * 1e-12;
        cur[p]++;
        sent[p] = false;
        changed = true;
      }
    }
  }
  for (uint32_t r = 0; r < o->P; r++) {
    g_assert(cur[r] == plan->steps[r]->len); /* a collective's steps always complete */
    end[r] = t[r];
  }
  g_free(cur);
  g_free(sent);
  g_free(t);
  g_hash_table_destroy(pairs);
}

/* Each worker's result time for a bucket of n elements when every worker
 * contributes at 0: with its codec work (codec != 0) or the network alone. */
static void op_times(Op *o, uint64_t n, bool codec, double *end) {
  CsCollSpec spec = {.kind = o->kind, .n_workers = o->P, .workers = o->w, .n_servers = o->S, .servers = o->sv,
                     .elements = n, .codec = o->codec, .chunks = o->chunks, .pull = o->pull};
  if (codec) spec.cost = o->cost;
  CsCollPlan *plan = cs_coll_plan_new(&spec);
  replay(o, plan, end);
  cs_coll_plan_free(plan);
}

/* ps, for one bucket: worker w has its encoded gradient at start[w] and
 * its result at end[w]; pull_free[j] is when server j's last pull left.
 * A worker's S pushes leave one after another (its host queue is FIFO);
 * server j's pushes end when the last arrives and its busiest link has
 * carried them all, it sums each as it comes, encodes the sum and sends
 * it to the workers in rank order.  Returns the operation's network time
 * for the last worker when all start together. */
typedef struct {
  CsModelStep push, pull; /* per server: computed once per bucket size */
  double up_s;            /* one shard on a worker's first link */
  double push_all_s, pull_all_s; /* every server's pushes (pulls) at once: the busiest link's time */
} PsServer;

static void ps_steps(Op *o, uint64_t n, PsServer *sv) {
  uint32_t P = o->P, S = o->S;
  const CsTopology *t = o->c->t;
  for (uint32_t j = 0; j < S; j++) {
    uint64_t bytes = PAY(o, piece(n, S, j));
    for (uint32_t r = 0; r < P; r++) o->msgs[r] = (MMsg){o->w[r], o->sv[j], bytes};
    sv[j].push = step_eval(o->c, o->msgs, P);
    for (uint32_t r = 0; r < P; r++) o->msgs[r] = (MMsg){o->sv[j], o->w[r], bytes};
    sv[j].pull = step_eval(o->c, o->msgs, P);
    /* the stagger: one shard's serialization at the worker's first hop */
    uint64_t pk = (bytes + o->c->mss - 1) / o->c->mss;
    uint32_t port = cs_routes_next_port(o->c->r, o->w[0], (uint32_t)t->nodes[o->sv[j]].host, 0);
    sv[j].up_s = 8.0 * (double)(bytes + (pk ? pk : 1) * o->c->header) / (double)t->links[t->ports[port].link].spec.bandwidth;
    if (o->steps) {
      g_autofree char *a = g_strdup_printf("push to %s (every worker)", t->nodes[o->sv[j]].name);
      g_autofree char *b = g_strdup_printf("pull from %s (to every worker)", t->nodes[o->sv[j]].name);
      record(o, sv[j].push, a, 1);
      record(o, sv[j].pull, b, 1);
    }
  }
  /* a worker's pushes to the servers overlap (and the servers' pulls):
   * what they share, all at once */
  CsModelStep all[2];
  for (int k = 0; k < 2; k++) {
    uint32_t m = 0;
    for (uint32_t j = 0; j < S; j++)
      for (uint32_t r = 0; r < P; r++) {
        uint64_t bytes = PAY(o, piece(n, S, j));
        o->msgs[m++] = k == 0 ? (MMsg){o->w[r], o->sv[j], bytes} : (MMsg){o->sv[j], o->w[r], bytes};
      }
    all[k] = step_eval(o->c, o->msgs, m);
  }
  for (uint32_t j = 0; j < S; j++) sv[j].push_all_s = all[0].bound_s, sv[j].pull_all_s = all[1].bound_s;
  if (S > 1) {
    record(o, all[0], "pushes to every server at once", 1);
    record(o, all[1], "pulls from every server at once", 1);
  }
}

static void ps_round(Op *o, uint64_t n, const PsServer *sv, bool pull, const double *start, double *end,
                     double *pull_free) {
  uint32_t P = o->P, S = o->S;
  double first = INFINITY, last = 0;
  for (uint32_t r = 0; r < P; r++) first = fmin(first, start[r]), last = fmax(last, start[r]);
  double push_all = 0;
  o->server_add = 0;
  for (uint32_t r = 0; r < P; r++) end[r] = 0;
  for (uint32_t j = 0; j < S; j++) {
    uint64_t shard = piece(n, S, j);
    double stag = 0;
    for (uint32_t i = 0; i < j; i++) stag += sv[i].up_s;
    /* the last push leaves its worker after its earlier shards; the
     * busiest link carries all of them from the first */
    double arrived = fmax(fmax(last + stag + sv[j].up_s, first + stag + sv[j].push.bound_s), first + sv[j].push_all_s) +
                     sv[j].push.latency_s;
    /* summed as they come: pushes that start together share the link and
     * end together, so all P sums follow the last; pushes spread out (the
     * workers' starts apart) are summed one by one as they land */
    double proc = COST(o->cost.decode_ps + o->cost.reduce_ps, shard);
    double first_done = fmax(first + stag + sv[j].up_s + sv[j].push.latency_s, arrived - (last - first));
    double summed = fmax(arrived + proc, first_done + P * proc);
    if (summed > push_all) o->server_add = summed - arrived;
    push_all = fmax(push_all, summed);
    if (!pull) continue;
    double from = fmax(summed + COST(o->cost.encode_ps, shard), pull_free[j]);
    double busy = fmax(sv[j].pull.bound_s, sv[j].pull_all_s);
    for (uint32_t r = 0; r < P; r++) /* rank order through the server's busiest link */
      end[r] = fmax(end[r], from + (double)(r + 1) / P * busy + sv[j].pull.latency_s);
    pull_free[j] = from + busy;
  }
  for (uint32_t r = 0; r < P; r++)
    end[r] = pull ? end[r] + COST(o->cost.decode_ps, n) : push_all; /* push only: the round ends when summed */
  o->server_acc += o->server_add;
}

/* ---- the iteration ---- */

static void ctx_init(Ctx *c, const CsTransportSpec *tr, CsRouting routing, const CsTopology *t, const CsRoutes *r) {
  memset(c, 0, sizeof *c);
  c->routing = routing, c->t = t, c->r = r;
  c->mss = (uint64_t)(tr->mtu - tr->header);
  c->header = (uint64_t)tr->header;
  c->ack = (uint64_t)tr->ack;
  size_t dirs = 2 * (size_t)t->n_links + 1;
  c->load = g_new0(double, dirs);
  c->touched = g_new(uint32_t, dirs);
  c->used = g_new0(uint8_t, dirs);
  c->share = g_new0(double, t->n_nodes + 1);
  c->frontier = g_new(uint32_t, t->n_nodes + 1);
  c->next = g_new(uint32_t, t->n_nodes + 1);
  c->ports = g_new(uint32_t, t->n_nodes + 1);
}

static void ctx_clear(Ctx *c) {
  g_free(c->load);
  g_free(c->touched);
  g_free(c->share);
  g_free(c->frontier);
  g_free(c->next);
  g_free(c->ports);
}

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

static const char *formula_of(CsCollective k, bool pull) {
  switch (k) {
  case CS_COLL_RING:
    return "ring: 2 (P-1) steps of P messages r -> r+1 of n/P, each with reduce(n/P) between; decode(n) at the end";
  case CS_COLL_HALVING_DOUBLING:
    return "halving-doubling: for k = 1..log2 P, twice (halving, doubling) a step of P messages r <-> r xor P/2^k "
           "of n/2^k, with reduce(n/2^k) after each halving; decode(n)";
  case CS_COLL_TREE:
    return "tree: (ceil(log2 P) + C - 1) rounds up and as many down, each the slowest binomial level's chunk n/C; "
           "ceil(log2 P) reduce(n) at the root; decode(n)";
  case CS_COLL_ALLGATHER: return "allgather: P-1 steps of P messages r -> r+1 of the whole payload; P (decode + add)(n)";
  case CS_COLL_PS:
    return pull ? "ps: each worker pushes shard j to server j (its shards one after another); a server's pushes end "
                  "when its busiest link has carried all P, it sums each as it comes, then pulls to the workers in "
                  "rank order; the next bucket's pushes overlap the last pulls"
                : "ps (push only): each worker pushes shard j to server j; the round ends when every server has "
                  "summed its P pushes";
  }
  return "";
}

/* A worker's codec work in one operation on n elements, from the plan. */
static double worker_codec(Op *o, uint64_t n) {
  CsCollSpec spec = {.kind = o->kind, .n_workers = o->P, .workers = o->w, .n_servers = o->S, .servers = o->sv,
                     .elements = n, .codec = o->codec, .cost = o->cost, .chunks = o->chunks, .pull = o->pull};
  CsCollPlan *plan = cs_coll_plan_new(&spec);
  double sum = 0;
  for (uint32_t r = 0; r < o->P; r++)
    for (guint i = 0; i < plan->steps[r]->len; i++) sum += (double)g_array_index(plan->steps[r], CsCollStep, i).compute;
  cs_coll_plan_free(plan);
  return sum * 1e-12 / o->P;
}

/* One bucket size: its steps evaluated, then each worker's result time
 * with codec work (op) and the network alone (net), from a common start. */
typedef struct {
  double *op, *net; /* per worker */
  double codec;     /* a worker's codec work in the operation, encode not included */
  PsServer *ps;     /* per server */
} Bucket;

static void bucket_eval(Op *o, uint64_t n, Bucket *b) {
  b->op = g_new0(double, o->P + 1);
  b->net = g_new0(double, o->P + 1);
  b->ps = g_new0(PsServer, o->S + 1);
  if (o->kind == CS_COLL_PS) {
    ps_steps(o, n, b->ps);
    b->codec = o->pull ? COST(o->cost.decode_ps, n) : 0;
    return;
  }
  if (o->P < 2) return;
  g_hash_table_remove_all(o->pair_s);
  switch (o->kind) {
  case CS_COLL_RING: rounds_ring(o, n); break;
  case CS_COLL_HALVING_DOUBLING: rounds_halving_doubling(o, n); break;
  case CS_COLL_ALLGATHER: rounds_allgather(o, n); break;
  case CS_COLL_TREE: rounds_tree(o, n); break;
  default: break;
  }
  op_times(o, n, true, b->op);
  op_times(o, n, false, b->net);
  b->codec = worker_codec(o, n);
}

static void bucket_clear(Bucket *b) {
  g_free(b->op);
  g_free(b->net);
  g_free(b->ps);
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
static void iterate(Op *o, uint32_t nb, const Bucket *full, const Bucket *last_b, double compute, double backward,
                    bool overlap, bool codec, uint32_t iterations, uint32_t warmup, double *mean, double *last) {
  uint32_t P = o->P;
  double *start = g_new0(double, P + 1), *pull_free = g_new0(double, o->S + 1);
  double *t0 = g_new0(double, P + 1), *end = g_new0(double, P + 1);
  CsCodecCost saved = o->cost;
  if (!codec) memset(&o->cost, 0, sizeof o->cost), iterations = 1, warmup = 0, compute = backward = 0;
  double sum = 0;
  uint64_t count = 0;
  *last = 0;
  for (uint32_t it = 0; it < iterations; it++) {
    for (uint32_t q = 0; q < P; q++) t0[q] = end[q];
    for (uint32_t b = 0; b < nb; b++) {
      const Bucket *bk = b + 1 < nb ? full : last_b;
      uint64_t size = b + 1 < nb ? o->per : o->last_n;
      double ready = overlap ? compute - backward + backward * (b + 1) / nb : compute;
      double enc = COST(o->cost.encode_ps, size);
      for (uint32_t q = 0; q < P; q++) start[q] = fmax(t0[q] + ready, b ? end[q] : 0) + enc;
      if (o->kind == CS_COLL_PS) {
        ps_round(o, size, bk->ps, o->pull, start, end, pull_free);
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
  o->cost = saved;
  g_free(start);
  g_free(pull_free);
  g_free(t0);
  g_free(end);
}

bool cs_model_estimate_spec(const CsWorkloadSpec *w, const CsTransportSpec *tr, CsRouting routing,
                            const CsTopology *t, const CsRoutes *r, CsModel *m, GError **error) {
  memset(m, 0, sizeof *m);
  Op o = {0};
  if (!cs_codec_from_spec(&w->compression, w->dtype, 0, &o.codec, &o.cost, error)) return false;
  Ctx c;
  ctx_init(&c, tr, routing, t, r);
  o.c = &c;
  o.P = t->n_workers;
  o.w = t->workers;
  o.chunks = (uint32_t)w->chunks;
  o.kind = w->collective;
  o.pull = w->pull;
  bool ps = w->collective == CS_COLL_PS, async = ps && !w->sync;
  /* servers: those listed, or all */
  uint32_t *servers = g_new(uint32_t, t->n_servers + 1);
  if (ps && w->servers->len) {
    for (guint i = 0; i < w->servers->len; i++)
      servers[o.S++] = (uint32_t)cs_topology_find(t, g_array_index(w->servers, CsNameRef, i).name);
  } else if (ps) {
    memcpy(servers, t->servers, sizeof(uint32_t) * t->n_servers);
    o.S = t->n_servers;
  }
  o.sv = servers;
  o.msgs = g_new(MMsg, (size_t)o.P * (o.S + 1) + 1);
  o.pair_s = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  uint32_t P = o.P;
  m->steps = g_array_new(FALSE, TRUE, sizeof(CsModelStep));

  /* buckets: as the workload cuts them (async ps: the whole gradient) */
  uint64_t n = (uint64_t)w->params;
  uint64_t per = cs_workload_bucket_elements(w);
  uint32_t nb = (uint32_t)cs_workload_bucket_count(w);
  o.per = per;
  o.last_n = n - (uint64_t)(nb - 1) * per;
  m->buckets = nb;
  Bucket full = {0}, last = {0};
  o.steps = m->steps; /* the largest bucket's steps are the ones shown */
  bucket_eval(&o, per, &full);
  o.steps = NULL;
  bucket_eval(&o, o.last_n, &last);

  double compute = (double)w->compute * 1e-12 * (double)w->accumulation;
  double backward = (double)w->compute * 1e-12 * w->backward_fraction;
  /* as many iterations as the run has, up to 50 (enough for ps's steady state) */
  uint32_t iters = (uint32_t)MIN(w->iterations, (int64_t)50), warm = (uint32_t)MIN(w->warmup, (int64_t)iters - 1);
  double ignore;
  /* the network alone, buckets back to back from 0 */
  iterate(&o, nb, &full, &last, 0, 0, false, false, 1, 0, &m->comm_mean_s, &m->comm_s);
  /* no overlap: every bucket after compute */
  iterate(&o, nb, &full, &last, compute, backward, false, true, iters, warm, &m->iter_serial_s, &ignore);
  /* buckets during the backward pass */
  iterate(&o, nb, &full, &last, compute, backward, w->buckets > 0 && !async, true, iters, warm, &m->iter_overlap_s,
          &m->iter_last_s);
  m->compute_s = compute;
  m->codec_s = COST(o.cost.encode_ps, n) + (nb - 1) * full.codec + last.codec;
  if (ps) { /* the servers' summing past the last push, one synchronous iteration */
    double ignore2;
    o.server_acc = 0;
    iterate(&o, nb, &full, &last, 0, 0, false, true, 1, 0, &ignore, &ignore2);
    m->server_s = o.server_acc;
  }

  /* what a worker sends: its messages in the plan */
  for (int k = 0; k < 2; k++) {
    uint64_t size = k == 0 ? per : o.last_n;
    double times = k == 0 ? nb - 1 : 1;
    CsCollSpec spec = {.kind = o.kind, .n_workers = P, .workers = o.w, .n_servers = o.S, .servers = o.sv,
                       .elements = size, .codec = o.codec, .chunks = o.chunks, .pull = o.pull};
    CsCollPlan *plan = cs_coll_plan_new(&spec);
    for (guint i = 0; P > 0 && i < plan->steps[0]->len; i++) {
      const CsCollStep *st = &g_array_index(plan->steps[0], CsCollStep, i);
      if (st->send_to >= 0) m->wire_bytes += times * (double)st->send_bytes;
    }
    cs_coll_plan_free(plan);
  }

  m->hops_mean = c.hop_n ? c.hop_sum / (double)c.hop_n : 0;
  m->dirs_used = c.used;
  for (uint32_t d = 0; d < 2 * t->n_links; d++) m->n_dirs_used += c.used[d];
  m->formula = g_strdup(formula_of(w->collective, w->pull));
  GString *terms = g_string_new(NULL);
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN];
  g_string_append_printf(terms, "P = %u", P);
  if (ps) g_string_append_printf(terms, ", S = %u", o.S);
  if (w->collective == CS_COLL_TREE) g_string_append_printf(terms, ", C = %u", o.chunks);
  g_string_append_printf(terms, "; %u bucket%s of %s elements", nb, nb == 1 ? "" : "s", cs_format_count((int64_t)per, b1));
  if (o.last_n != per) g_string_append_printf(terms, " (the last %s)", cs_format_count((int64_t)o.last_n, b2));
  g_string_append_printf(terms, "; messages cross %.2f hops on average (%s)", m->hops_mean,
                         routing == CS_ROUTING_ECMP ? "ECMP: bytes spread evenly over the equal-cost paths" : "shortest paths");
  m->terms = g_string_free(terms, FALSE);

  ctx_clear(&c);
  bucket_clear(&full);
  bucket_clear(&last);
  g_hash_table_destroy(o.pair_s);
  g_free(servers);
  g_free(o.msgs);
  return true;
}
