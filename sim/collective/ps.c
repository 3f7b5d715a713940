/* ps.c - parameter server: each worker pushes shard j of its gradient to
 * server j; a server decodes and sums the pushes as they come, then
 * (pull) encodes the sum and sends it to every worker, who decodes it.
 * Push only (pull: false): the operation ends when the servers have
 * summed. */
#include "config.h"

#include <math.h>

#include "commsim/closed_form.h"

static void build(CsCollPlan *plan, const CsCollSpec *s) {
  uint32_t P = s->n_workers, S = s->n_servers;
  const CsCodecCost *c = &s->cost;
  for (uint32_t r = 0; r < P; r++) {
    for (uint32_t j = 0; j < S; j++)
      cs_coll_add_step(plan, r, (int32_t)(P + j), cs_coll_payload_bytes(&s->codec, cs_coll_piece(s->elements, S, j)), -1, 0);
    if (s->pull)
      for (uint32_t j = 0; j < S; j++) cs_coll_add_step(plan, r, -1, 0, (int32_t)(P + j), cs_coll_cost(c->decode_ps, cs_coll_piece(s->elements, S, j)));
  }
  for (uint32_t j = 0; j < S; j++) {
    uint64_t n = cs_coll_piece(s->elements, S, j);
    for (uint32_t r = 0; r < P; r++) cs_coll_add_step(plan, P + j, -1, 0, (int32_t)r, cs_coll_cost(c->decode_ps + c->reduce_ps, n));
    if (s->pull) {
      cs_coll_add_step(plan, P + j, -1, 0, -1, cs_coll_cost(c->encode_ps, n));
      for (uint32_t r = 0; r < P; r++) cs_coll_add_step(plan, P + j, (int32_t)r, cs_coll_payload_bytes(&s->codec, n), -1, 0);
    }
  }
}

/* ---- closed form ----
 * Its workers do not move in lock step: they get their results one after
 * another and push the next gradient while a server still pulls to the
 * others.  So ps gives a schedule: per server, the rounds of its pushes
 * and pulls (evaluated once per bucket size), then each worker's result
 * from each one's start. */
/* (schedule) several servers' pulls in one round of staggered starts,
 * whose ends are kept for up to this many sets of starts apart (to the
 * picosecond; fewer past STAGGER_KEPT doubles in all): a schedule call
 * per bucket and iteration repeats them.  Past this many messages
 * evaluated in them (P S a set not kept), an operation's next pulls are
 * each server's with all at once (so are those of more than this many
 * messages).  The round stopped at 1,024 messages until 2026-12-16: 256
 * workers and 4 servers on a ring, 1K, were 0.97 of the packet run, 257
 * with their pulls all at once 1.32. */
#define STAGGER_CACHE 64u
#define STAGGER_KEPT (1u << 21)
#define STAGGER_BUDGET (1u << 18)

typedef struct {
  CsModelStep push, pull;        /* the P pushes to the server, its P pulls */
  double *push_each;             /* each push's own time in its round (cs_model_round_each) */
  double *after, *queue_s;       /* per pull: how many later ones share its queue at the server (host_queue_dir;
                                  * none when ECMP draws it), and the time its queue's link takes for all of them */
  double *queue_end;             /* ... and when the last of them ends in the round (cs_model_round_each; where
                                  * ECMP draws it, the last of all) */
  double up_s;                   /* one shard on a worker's first link */
  double *out;                   /* its pulls taking turns in its queue (cs_model_queue_turns): when each leaves it; else NULL */
  double *tail;                  /* ... and each one's latency terms after it has left (cs_model_tail_s) */
  double out_last;               /* ... and when the last leaves it (the mean of ECMP's draws' lasts) */
  double push_all_s, pull_all_s; /* every server's pushes (pulls) at once: the busiest link's time */
  double lead_s, last_s;         /* bursts: when a worker's shard to it starts to leave the worker's queue, the
                                  * first worker's and the last's (behind its shards to the servers before it); -1 if not */
  double plast_s;                /* bursts: the last packet's time of a shard to it */
  double pull_gap_s;             /* pulls past the host queue that share its link: half a block (cs_model_blocks_gap_s) */
  double pull_link_s;            /* ... and the time its link takes to carry all P */
  double *stagger;               /* (sv[0]'s: schedule's staggered pulls, stagger_slots entries and the messages
                                  * evaluated; NULL when they cannot be) */
  uint32_t stagger_slots;        /* (sv[0]'s) */
} Server;

/* (model) Past this many servers, `commsim model`'s table shows the
 * slowest server's push and pull, not a pair of rows per server (1,000
 * servers printed 2,000). */
#define STEP_ROWS 8u

/* (model) a pull and its queue at the server (cs_model_host_queue) */
typedef struct {
  uint32_t q, r;
} QPull;

static int qpull_before(const void *a, const void *b) {
  const QPull *x = a, *y = b;
  return x->q != y->q ? (x->q < y->q ? -1 : 1) : (x->r > y->r) - (x->r < y->r);
}

/* The Server block (model): S + 1 Servers, then ROWS arrays of P
 * doubles per server, then the staggered pulls' cache (Server.stagger). */
enum { ROW_OUT, ROW_TAIL, ROW_PUSH_EACH, ROW_AFTER, ROW_QUEUE_S, ROW_QUEUE_END, ROWS };

/* Row `row` of server j in block sv (S servers of P workers). */
static double *row_of(Server *sv, uint32_t S, uint32_t P, uint32_t row, uint32_t j) {
  return (double *)(sv + S + 1) + ((size_t)row * S + j) * P;
}

static void model(CsModelOp *o) {
  uint32_t P = o->spec.n_workers, S = o->spec.n_servers;
  uint64_t n = o->spec.elements;
  /* (the pulls' turns in the same block: o->state is freed as one) */
  bool staggers = S > 1 && (uint64_t)P * S <= STAGGER_BUDGET;
  size_t entry = 1 + S + (size_t)P * S, slots = CLAMP(STAGGER_KEPT / entry, 1, STAGGER_CACHE);
  Server *sv = g_malloc0(sizeof(Server) * (S + 1) + ROWS * sizeof(double) * (size_t)P * S +
                         (staggers ? (slots * entry + 1) * sizeof(double) : 0));
  sv[0].stagger = staggers ? row_of(sv, S, P, ROWS, 0) : NULL;
  sv[0].stagger_slots = (uint32_t)slots;
  QPull *qp = g_new(QPull, P + 1);
  o->state = sv;
  uint32_t *workers = g_new(uint32_t, P + 1);
  const CsTopology *t = cs_model_topology(o);
  bool star = cs_model_on_star(o); /* (the pulls' turns) */
  for (uint32_t r = 0; r < P; r++) workers[r] = cs_model_node(o, r);
  o->codec_s = o->spec.pull ? cs_model_cost(o->spec.cost.decode_ps, n) : 0;
  for (uint32_t j = 0; j < S; j++) {
    uint64_t bytes = cs_model_payload(o, cs_coll_piece(n, S, j));
    uint32_t server = cs_model_node(o, P + j);
    for (uint32_t r = 0; r < P; r++) o->msgs[r] = (CsModelMsg){cs_model_node(o, r), server, bytes};
    sv[j].push = cs_model_round_each(o, o->msgs, P, o->each);
    sv[j].push_each = row_of(sv, S, P, ROW_PUSH_EACH, j);
    for (uint32_t r = 0; r < P; r++) sv[j].push_each[r] = o->each[r];
    for (uint32_t r = 0; r < P; r++) o->msgs[r] = (CsModelMsg){server, cs_model_node(o, r), bytes};
    sv[j].pull = cs_model_round_each(o, o->msgs, P, o->each);
    sv[j].after = row_of(sv, S, P, ROW_AFTER, j);
    sv[j].queue_s = row_of(sv, S, P, ROW_QUEUE_S, j);
    sv[j].queue_end = row_of(sv, S, P, ROW_QUEUE_END, j);
    double last_end = 0;
    for (uint32_t r = 0; r < P; r++) qp[r] = (QPull){cs_model_host_queue(o, server, workers[r]), r}, last_end = fmax(last_end, o->each[r]);
    qsort(qp, P, sizeof *qp, qpull_before); /* (by queue, each queue's in the workers' order) */
    for (uint32_t a = 0, b; a < P; a = b) {
      double qend = 0;
      for (b = a; b < P && qp[b].q == qp[a].q && (b == a || qp[a].q != UINT32_MAX); b++) qend = fmax(qend, o->each[qp[b].r]);
      for (uint32_t k = a; k < b; k++) {
        uint32_t r = qp[k].r;
        sv[j].after[r] = b - 1 - k;
        sv[j].queue_s[r] = (b - a) * cs_model_first_hop_s(o, server, workers[r], bytes);
        sv[j].queue_end[r] = qp[a].q == UINT32_MAX ? last_end : qend;
      }
    }
    /* the stagger: one shard's serialization at the worker's first hop */
    sv[j].up_s = cs_model_first_hop_s(o, cs_model_node(o, 0), server, bytes);
    sv[j].pull_gap_s = cs_model_blocks_gap_s(o, server, cs_model_node(o, 0), bytes);
    sv[j].pull_link_s = P * cs_model_first_hop_s(o, server, cs_model_node(o, 0), bytes);
    double *out = row_of(sv, S, P, ROW_OUT, j);
    sv[j].tail = row_of(sv, S, P, ROW_TAIL, j);
    for (uint32_t r = 0; r < P; r++) sv[j].tail[r] = cs_model_tail_s(o, server, workers[r], bytes);
    /* (one server, or several on a star, whose servers' pushes end
     * apart, their shards' turns apart at the workers: elsewhere, the
     * workers' shards and the servers' pulls meet at the workers' links,
     * which the turns leave out) */
    sv[j].out = (S == 1 || star) && cs_model_queue_turns(o, server, workers, P, bytes, out, &sv[j].out_last) ? out : NULL;
    if (o->steps && S <= STEP_ROWS) {
      g_autofree char *a = g_strdup_printf("push to %s (every worker)", cs_model_node_name(o, P + j));
      g_autofree char *b = g_strdup_printf("pull from %s (to every worker)", cs_model_node_name(o, P + j));
      cs_model_record(o, sv[j].push, a, 1);
      cs_model_record(o, sv[j].pull, b, 1);
    }
  }
  if (o->steps && S > STEP_ROWS) { /* the slowest server's push and pull stand for them all */
    uint32_t up = 0, down = 0;
    for (uint32_t j = 1; j < S; j++) {
      if (sv[j].push.seconds > sv[up].push.seconds) up = j;
      if (sv[j].pull.seconds > sv[down].pull.seconds) down = j;
    }
    g_autofree char *a = g_strdup_printf("push to %s (slowest of %u servers)", cs_model_node_name(o, P + up), S);
    g_autofree char *b = g_strdup_printf("pull from %s (slowest of %u servers)", cs_model_node_name(o, P + down), S);
    cs_model_record(o, sv[up].push, a, 1);
    cs_model_record(o, sv[down].pull, b, 1);
  }
  /* A worker's shards that are bursts leave its queue (a queue per link
   * on a ring or a torus) one after another, in the servers' order
   * (cs_model_queue_turns) */
  uint32_t *servers = g_new(uint32_t, S + 1);
  double *wout = g_new(double, S + 1);
  for (uint32_t j = 0; j < S; j++) servers[j] = cs_model_node(o, P + j), sv[j].lead_s = INFINITY, sv[j].last_s = 0;
  uint64_t shard = cs_model_payload(o, cs_coll_piece(n, S, 0));
  double *own = g_new(double, S + 1); /* (each shard's burst time, or -1 when one is not a burst) */
  for (uint32_t r = 0; r < P; r++) {
    bool all = cs_model_queue_turns(o, workers[r], servers, S, shard, wout, NULL);
    for (uint32_t j = 0; j < S && all; j++) all = (own[j] = cs_model_burst_s(o, workers[r], servers[j], shard)) > 0;
    for (uint32_t j = 0; j < S; j++) {
      if (!all) own[j] = -1;
      sv[j].lead_s = own[j] < 0 || sv[j].lead_s < 0 ? -1 : fmin(sv[j].lead_s, wout[j] - own[j]);
      sv[j].last_s = own[j] < 0 ? -1 : fmax(sv[j].last_s, wout[j]);
      /* (a server of one link takes them all there) */
      bool one_link = t->nodes[servers[j]].n_ports == 1;
      sv[j].plast_s = own[j] < 0 || !one_link ? 0 : fmax(sv[j].plast_s, cs_model_burst_last_s(o, workers[r], servers[j], shard));
    }
  }
  g_free(own);
  g_free(qp);
  g_free(servers);
  g_free(wout);
  g_free(workers);
  /* a worker's pushes to the servers overlap (and the servers' pulls):
   * what they share, all at once */
  CsModelStep all[2];
  for (int k = 0; k < 2; k++) {
    uint32_t m = 0;
    for (uint32_t j = 0; j < S; j++)
      for (uint32_t r = 0; r < P; r++) {
        uint64_t bytes = cs_model_payload(o, cs_coll_piece(n, S, j));
        uint32_t w = cs_model_node(o, r), s = cs_model_node(o, P + j);
        o->msgs[m++] = k == 0 ? (CsModelMsg){w, s, bytes} : (CsModelMsg){s, w, bytes};
      }
    all[k] = cs_model_round(o, o->msgs, m);
  }
  for (uint32_t j = 0; j < S; j++) sv[j].push_all_s = all[0].bound_s, sv[j].pull_all_s = all[1].bound_s;
  if (S > 1) {
    cs_model_record(o, all[0], "pushes to every server at once", 1);
    cs_model_record(o, all[1], "pulls from every server at once", 1);
  }
}

/* Worker w has its encoded gradient at start[w] and its result at end[w];
 * pull_free[j] is when server j's last pull left.  A worker's S pushes go
 * on S connections that share its link in turn (each holds at most
 * host_queue bytes in the host's queue: TCP small queues), so they end
 * together when the link has carried all S; server j's pushes end when
 * the last arrives and its busiest link has carried them all, it sums
 * each as it comes, encodes the sum and sends it to the workers, its P
 * connections sharing its link in turn: every pull ends when the link has
 * carried them all.  With one server, or several on a star, pulls the
 * transport puts whole into its queue (bursts: within the window a
 * connection starts with), or window by window, take turns there
 * instead, in the workers' order (cs_model_queue_turns).  A worker's
 * shards that are bursts leave its queue in the servers' order, so server
 * j's pushes start to come in after those to the servers before it
 * (Server.lead_s). */
/* Every server's pulls in one round, server j's from from_of[j]: each
 * one's end after first_from (server j's pulls to workers 0 .. P - 1 in
 * turn), from the cache (Server.stagger) or evaluated into it; NULL past
 * STAGGER_BUDGET. */
/* A server's start apart from the first one's, in whole picoseconds. */
static inline double stagger_key(double from, double first_from) { return (double)llround((from - first_from) * 1e12); }

static const double *stagger_ends(CsModelOp *o, const double *from_of, double first_from) {
  uint32_t P = o->spec.n_workers, S = o->spec.n_servers;
  uint64_t n = o->spec.elements;
  const Server *sv = o->state;
  size_t entry = 1 + S + (size_t)P * S;
  uint32_t slots = sv[0].stagger_slots;
  double *spent = sv[0].stagger + slots * entry;
  /* (an entry: its use, the S starts apart in ps, and the P S ends) */
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint32_t j = 0; j < S; j++) h = (h ^ (uint64_t)stagger_key(from_of[j], first_from)) * 0x100000001b3ULL;
  double *e = sv[0].stagger + (h % slots) * entry, *done = e + 1 + S;
  bool hit = e[0] != 0;
  for (uint32_t j = 0; j < S && hit; j++) hit = e[1 + j] == stagger_key(from_of[j], first_from);
  if (hit) return done;
  if (*spent + (double)P * S > STAGGER_BUDGET) return NULL;
  *spent += (double)P * S;
  double *at = g_new(double, (size_t)P * S);
  for (uint32_t j = 0, m = 0; j < S; j++) {
    e[1 + j] = stagger_key(from_of[j], first_from);
    for (uint32_t r = 0; r < P; r++, m++) {
      o->msgs[m] = (CsModelMsg){cs_model_node(o, P + j), cs_model_node(o, r), cs_model_payload(o, cs_coll_piece(n, S, j))};
      at[m] = e[1 + j] * 1e-12;
    }
  }
  cs_model_round_from(o, o->msgs, P * S, at, done);
  e[0] = 1;
  g_free(at);
  return done;
}

static int double_before(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void schedule(CsModelOp *o, const double *start, double *end, double *pull_free, bool codec, double *server_add) {
  uint32_t P = o->spec.n_workers, S = o->spec.n_servers;
  uint64_t n = o->spec.elements;
  const Server *sv = o->state;
  bool pull = o->spec.pull;
  CsCodecCost cost = codec ? o->spec.cost : (CsCodecCost){0};
  double first = INFINITY, last = 0;
  for (uint32_t r = 0; r < P; r++) first = fmin(first, start[r]), last = fmax(last, start[r]);
  double push_all = 0;
  *server_add = 0;
  for (uint32_t r = 0; r < P; r++) end[r] = 0;
  double *land = g_new(double, P); /* (pushes summed as they come) */
  double *from_of = g_new(double, S); /* when each server's pulls start */
  double up = 0; /* a worker's S shards through its first hop */
  for (uint32_t i = 0; i < S; i++) up += sv[i].up_s;
  for (uint32_t j = 0; j < S; j++) {
    uint64_t shard = cs_coll_piece(n, S, j);
    /* the last worker's pushes end with its last shard; the busiest link
     * carries all of them from the first */
    double arrived = fmax(fmax(last + up, first + sv[j].push.bound_s), first + sv[j].push_all_s) + sv[j].push.latency_s;
    if (sv[j].lead_s >= 0) /* (bursts: its shards leave the workers' queues after those to the servers before it,
                            * and a link every push crosses has carried those to servers 0 .. j by then) */
      arrived = fmax(fmax(last + sv[j].last_s, first + sv[j].lead_s + sv[j].push.bound_s), first + sv[j].push_all_s * (j + 1) / S) +
                sv[j].push.latency_s;
    /* summed as they come: pushes that start together share the link and
     * end together, so all P sums follow the last; pushes spread out (the
     * workers' starts apart) are summed one by one as they land */
    double proc = cs_model_cost(cost.decode_ps + cost.reduce_ps, shard);
    double first_done = fmax(first + up + sv[j].push.latency_s, arrived - (last - first));
    /* (bursts that come in together share the server's link packet by
     * packet: they end a last packet apart there, and it sums each as it
     * lands; of one packet each, they take turns) */
    if (sv[j].lead_s >= 0 && sv[j].plast_s > 0)
      first_done = fmax(first + sv[j].lead_s, arrived - fmax(last - first, (P - 1) * sv[j].plast_s));
    double summed = first_done + P * proc;
    /* (or as each push comes in on its own, its own time in the round:
     * pushes from 1 to P / 2 hops away on a ring or a torus come in one
     * after another) */
    double latest = 0;
    for (uint32_t r = 0; r < P; r++) land[r] = start[r] + sv[j].push_each[r], latest = fmax(latest, land[r]);
    /* (in the order they land, each summed after the one before: never
     * before the last to land and its sum, so the order is sought only
     * when that bound is under `summed`; a sort per server, bucket and
     * pass was most of a model of many servers) */
    double one_by_one = latest + proc;
    if (proc > 0 && one_by_one < summed) {
      qsort(land, P, sizeof *land, double_before);
      one_by_one = land[0];
      for (uint32_t r = 0; r < P; r++) one_by_one = fmax(one_by_one, land[r]) + proc;
    }
    summed = fmax(arrived + proc, fmin(summed, one_by_one));
    if (summed > push_all) *server_add = summed - arrived;
    push_all = fmax(push_all, summed);
    from_of[j] = fmax(summed + cs_model_cost(cost.encode_ps, shard), pull_free[j]);
  }
  /* several servers whose pulls are within host_queue, where they do not
   * take turns (off a star of hosts) and start apart: every server's
   * pulls in one round, each from its server's start, not all at once */
  bool staggered = pull && sv[0].stagger != NULL;
  for (uint32_t j = 0; j < S && staggered; j++) staggered = sv[j].out == NULL && sv[j].pull_gap_s == 0;
  double first_from = INFINITY;
  for (uint32_t j = 0; j < S; j++) first_from = fmin(first_from, from_of[j]);
  const double *done = staggered ? stagger_ends(o, from_of, first_from) : NULL;
  staggered = done != NULL;
  for (uint32_t j = 0, m = 0; j < S && staggered; j++) {
    double done_j = from_of[j];
    for (uint32_t r = 0; r < P; r++, m++) end[r] = fmax(end[r], first_from + done[m]), done_j = fmax(done_j, first_from + done[m]);
    pull_free[j] = fmax(from_of[j] + sv[j].pull.bound_s, done_j - sv[j].pull.latency_s);
  }
  for (uint32_t j = 0; j < S && pull && !staggered; j++) {
    double from = from_of[j];
    const double *out = sv[j].out;
    double busy = out ? sv[j].pull.bound_s : fmax(sv[j].pull.bound_s, sv[j].pull_all_s);
    if (!out) {
      /* the pulls share the server's busiest link and end together; past
       * its host queue's limit, where its own link binds them, one after
       * another in the workers' order, half a block apart (a host's queue
       * in blocks: cs_model_blocks_gap_s) */
      double gap = busy <= sv[j].pull_link_s * (1 + 1e-9) ? sv[j].pull_gap_s : 0;
      if (busy > sv[j].pull.bound_s * (1 + 1e-9)) { /* (other servers' pulls meet them) */
        for (uint32_t r = 0; r < P; r++) end[r] = fmax(end[r], from + busy - (P - 1 - r) * gap + sv[j].pull.latency_s);
        pull_free[j] = from + busy;
        continue;
      }
      /* (else those that share a queue of the server's end together,
       * when the last of them does in the round (a ring's server has a
       * queue per link: a pull alone in one ends before those of
       * another), apart where its link binds them) */
      for (uint32_t r = 0; r < P; r++) {
        bool queued = sv[j].queue_end[r] - sv[j].tail[r] <= sv[j].queue_s[r] * (1 + 1e-6);
        end[r] = fmax(end[r], from + sv[j].queue_end[r] - (queued ? sv[j].after[r] * sv[j].pull_gap_s : 0));
      }
      pull_free[j] = from + busy;
      continue;
    }
    /* pulls the transport puts into the server's queue whole, or window
     * by window, take turns there (cs_model_queue_turns), each ending its
     * own path's latency terms after it has left; the last ends when the
     * busiest link has carried them all */
    double out_last = sv[j].out_last;
    for (uint32_t r = 0; r < P; r++)
      end[r] = fmax(end[r], from + fmax(out[r], busy - (out_last - out[r])) + sv[j].tail[r]);
    pull_free[j] = from + fmax(busy, out_last);
  }
  for (uint32_t r = 0; r < P; r++)
    end[r] = pull ? end[r] + cs_model_cost(cost.decode_ps, n) : push_all; /* push only: the round ends when summed */
  g_free(land);
  g_free(from_of);
}

static const char *formula(const CsCollSpec *s) {
  return s->pull ? "ps: each worker pushes shard j to server j (its shards sharing its link); a server's pushes end "
                   "when its busiest link has carried all P, it sums each as it comes, then pulls to the workers, "
                   "which share its link and end together (past host_queue, half a block apart; with one server, or several on a star, pulls within "
                   "host_queue take turns in its queue, window by window; several servers' pulls within host_queue off a star, one "
                   "step from each server's start; a worker's small shards leave in the "
                   "servers' order); the next bucket's pushes overlap the last pulls"
                 : "ps (push only): each worker pushes shard j to server j; the round ends when every server has "
                   "summed its P pushes";
}

const CsCollectiveDef cs_coll_ps = {
    .name = "ps",
    .help = "parameter server: shards pushed to the servers, summed there, pulled back (sync or async)",
    .flags = CS_COLLF_SERVERS,
    .chain = CS_CHAIN_GATHER,
    .build = build,
    .formula = formula,
    .model = model,
    .schedule = schedule,
};
