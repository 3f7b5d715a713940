/* closed_form.c - a collective operation's cost on the real routes: the
 * rounds of concurrent messages, each bounded by its busiest link
 * direction (closed_form.h), and the replay of the simulation's own steps
 * with those times. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "commsim/cc.h"
#include "commsim/closed_form.h"
#include "commsim/ring.h"
#include "commsim/rng.h"

/* A message's data coming into a direction in a round: when the
 * direction can begin to send it (its first packet there, or with
 * cut-through its first bytes: message_terms' pre), at which hop of its
 * way, and how many bytes (a share of them, spread over ECMP's paths). */
typedef struct {
  uint32_t d, msg, hop;
  double pre;
  union {
    double bytes; /* (until arrivals_end has read it) */
    double done;  /* (arrivals_end) when its last bit has left d */
  };
} Arrival;

/* (arrivals_end) an Arrival's place among its direction's: what the
 * processor sharing reads, and where its end goes (Arrival.done) */
typedef struct {
  double pre, bytes;
  uint32_t d, at;
} ByDir;

struct CsModelCtx {
  CsRouting routing;
  const CsTopology *t;
  const CsRoutes *r;
  uint64_t mss, header, ack;
  double burst_pkts;        /* cs_transport_burst_packets */
  CsTransportSpec tr;       /* (its host queue's limit) */
  bool ss;                  /* slow start: windows grow from init_cwnd by the ACKs (flow fidelity's FlowNet.ss) */
  bool ss_fresh;            /* per-message connections: every message from init_cwnd */
  bool blocks;              /* messages past host_queue take their host's queue in blocks (cs_model_blocks_gap_s) */
  const double *start;      /* (cs_model_round_from) each message's start in the round, or NULL: all at 0 */
  uint64_t draw;            /* ECMP: 0 spreads a message's bytes evenly over its equal-cost paths; else the draw
                             * (round_of) that puts each on one path, as the run's hash does */
  double ss_init, ss_window; /* packets */
  double *load;       /* per link direction: bytes in the round */
  uint32_t *touched;  /* directions with load, this round */
  uint32_t n_touched;
  double *share;      /* per node: the part of a message passing it (ECMP spreading) */
  uint32_t *frontier, *next;
  uint32_t *near;     /* a node's ports one hop nearer (spread), as many as a node's ports */
  uint32_t *ports;    /* a path */
  /* a round's data as it comes into each direction (arrivals_end) */
  Arrival *arr;       /* in the order put: by message, then hop */
  uint32_t n_arr, cap_arr;
  uint32_t msg;       /* the message whose data spread puts */
  bool arr_over;      /* the round's arrivals were past ARRIVALS_MAX: not kept */
  struct PsJob { double vend; uint32_t k; } *heap; /* (arrivals_end) */
  uint32_t cap_heap;
  uint32_t *from;     /* per node: the first message it sends in the round being evaluated (acks_behind), or UINT32_MAX */
  /* per hop of a message's path (message_terms): when its data can be
   * there, the link's latency, and what its last packet adds there */
  double *pre, *lat_h, *last_h, *hop_done;
  int hops;                      /* (message_terms) its path's hops */
  double *p_bps, *p_lat, *p_cut; /* (path_terms) */
  /* (round_of) each message's terms, found once for all of a round's
   * evaluations (the even spread and up to 16 draws, each of which took
   * them twice a message): scalars, and per hop from `off` its pre, lat_h
   * and last_h; terms_on while they stand for the round's messages */
  struct Terms {
    double lat, wire, slowest;
    uint64_t packets;
    uint32_t sdir;
    int hops;
    size_t off;
    /* its data's path and its ACKs' (way 0 and 1) from way_off[], where
     * ECMP has no choice on it (way_hops, else -1: each draw walks it) */
    size_t way_off[2];
    int way_hops[2];
  } *terms;
  double *t_pre, *t_lat, *t_last;
  uint32_t *t_ports;
  uint32_t cap_terms;
  size_t cap_t_hops, cap_t_ports;
  bool terms_on;
  uint32_t *cnt;      /* per direction: counts for arrivals_end's sort */
  /* (looks_by_dst) per node, the busiest direction's time from it to the
   * destination of lk_epoch, and the ports being looked at */
  double *lk_val;
  uint32_t *lk_stamp, lk_epoch, *lk_ports;
  size_t cap_lk_ports;
  ByDir *by_dir;      /* (arrivals_end's scratch, cap_arr of them) */
  ByDir *by_tmp;      /* (sort_by_pre's, cap_tmp) */
  uint32_t cap_tmp;
  uint8_t *used;      /* per link direction: crossed by any round */
  bool star;          /* one switch and a link a host */
  bool star_machines; /* one switch and a link a machine (GPUs on their machines' switches), or `star` */
  double hop_sum;
  uint64_t hop_n;
};

CsModelCtx *cs_model_ctx_new(const CsTransportSpec *tr, CsRouting routing, const CsTopology *t, const CsRoutes *r) {
  CsModelCtx *c = g_new0(CsModelCtx, 1);
  c->routing = routing, c->t = t, c->r = r;
  uint32_t G = t->gpus_per_host > 1 ? t->gpus_per_host : 1;
  c->star = t->n_nodes == t->n_hosts + 1;
  c->star_machines = t->n_nodes == t->n_hosts + (G > 1 ? t->n_hosts / G : 0) + 1;
  c->mss = (uint64_t)(tr->mtu - tr->header);
  c->header = (uint64_t)tr->header;
  c->ack = (uint64_t)tr->ack;
  c->burst_pkts = cs_transport_burst_packets(tr);
  c->tr = *tr;
  const CsCcOps *cc = cs_protocols[tr->protocol].ops;
  c->ss_window = tr->window_bytes ? (double)tr->window / (double)tr->mtu : (double)tr->window;
  c->ss_init = (double)tr->init_cwnd;
  c->ss = (cc->cong_avoid != NULL || cc->rate) && routing != CS_ROUTING_ECMP_PACKET && c->ss_init < c->ss_window;
  c->ss_fresh = tr->connections == CS_CONN_PER_MESSAGE;
  /* (the flow fidelity's FlowNet.blocks, for the connections that count their windows there) */
  c->blocks = c->ss && !c->ss_fresh && tr->host_queue != 0 && cc->cong_avoid != NULL && !cc->rate;
  size_t dirs = 2 * (size_t)t->n_links + 1;
  c->load = g_new0(double, dirs);
  c->touched = g_new(uint32_t, dirs);
  c->used = g_new0(uint8_t, dirs);
  c->share = g_new0(double, t->n_nodes + 1);
  c->frontier = g_new(uint32_t, t->n_nodes + 1);
  c->next = g_new(uint32_t, t->n_nodes + 1);
  c->ports = g_new(uint32_t, t->n_nodes + 1);
  uint32_t degree = 1;
  for (uint32_t n = 0; n < t->n_nodes; n++) degree = MAX(degree, t->nodes[n].n_ports);
  c->near = g_new(uint32_t, degree);
  c->from = g_new(uint32_t, t->n_nodes + 1);
  for (uint32_t i = 0; i <= t->n_nodes; i++) c->from[i] = UINT32_MAX;
  c->pre = g_new0(double, t->n_nodes + 1);
  c->lat_h = g_new0(double, t->n_nodes + 1);
  c->last_h = g_new0(double, t->n_nodes + 1);
  c->hop_done = g_new0(double, t->n_nodes + 1);
  c->p_bps = g_new0(double, 3 * ((size_t)t->n_nodes + 1));
  c->p_lat = c->p_bps + t->n_nodes + 1;
  c->p_cut = c->p_lat + t->n_nodes + 1;
  c->cnt = g_new0(uint32_t, dirs);
  c->lk_val = g_new(double, t->n_nodes + 1);
  c->lk_stamp = g_new0(uint32_t, t->n_nodes + 1);
  return c;
}

void cs_model_ctx_free(CsModelCtx *c) {
  if (!c) return;
  g_free(c->load);
  g_free(c->touched);
  g_free(c->used);
  g_free(c->share);
  g_free(c->frontier);
  g_free(c->next);
  g_free(c->ports);
  g_free(c->near);
  g_free(c->arr);
  g_free(c->heap);
  g_free(c->from);
  g_free(c->pre);
  g_free(c->lat_h);
  g_free(c->last_h);
  g_free(c->terms);
  g_free(c->t_pre);
  g_free(c->t_lat);
  g_free(c->t_last);
  g_free(c->t_ports);
  g_free(c->hop_done);
  g_free(c->p_bps);
  g_free(c->cnt);
  g_free(c->by_dir);
  g_free(c->by_tmp);
  g_free(c->lk_val);
  g_free(c->lk_stamp);
  g_free(c->lk_ports);
  g_free(c);
}

double cs_model_ctx_hops_mean(const CsModelCtx *c) { return c->hop_n ? c->hop_sum / (double)c->hop_n : 0; }
const uint8_t *cs_model_ctx_dirs_used(const CsModelCtx *c) { return c->used; }

/* fmax, inline, for times and loads (never NaN); fmax itself is a call here */
static inline double max2(double a, double b) { return a < b ? b : a; }

static uint32_t dir_of(const CsTopology *t, uint32_t port) { return 2 * t->ports[port].link + t->ports[port].dir; }

static void add_load(CsModelCtx *c, uint32_t d, double bytes) {
  if (c->load[d] == 0) c->touched[c->n_touched++] = d;
  c->load[d] += bytes;
  c->used[d] = 1;
}

/* What spread does at each direction on a message's way. */
typedef enum {
  PUT_DATA, /* carries `bytes` of message c->msg's data (a share of them), which come c->pre[hop] after it began */
  PUT_ACKS, /* carries `bytes` of ACKs */
  LOOK,     /* puts nothing: the busiest direction's time for its load (round_of without arrivals) */
} Visit;

/* A round whose messages cross more directions than this, all together,
 * is timed without their arrivals (its busiest direction's time and its
 * slowest path's latency terms), keeping the model's memory to tens of
 * MB: halving-doubling's first step on a ring of 4,096 hosts crosses
 * 16 M. */
#define ARRIVALS_MAX (1u << 20)

static inline void visit(CsModelCtx *c, uint32_t d, double bytes, Visit v, int hop, double *most) {
  if (v == LOOK) {
    *most = max2(*most, 8.0 * c->load[d] / (double)c->t->links[d / 2].spec.bandwidth);
    return;
  }
  add_load(c, d, bytes);
  if (v == PUT_DATA && !c->arr_over) {
    if (c->n_arr == ARRIVALS_MAX) {
      c->arr_over = true;
      c->n_arr = 0;
      return;
    }
    if (G_UNLIKELY(c->n_arr == c->cap_arr)) {
      c->cap_arr = MAX(1024u, 2 * c->cap_arr);
      c->arr = g_renew(Arrival, c->arr, c->cap_arr);
      g_free(c->by_dir);
      c->by_dir = g_new(ByDir, c->cap_arr);
    }
    double at = c->pre[hop] + (c->start ? c->start[c->msg] : 0);
    c->arr[c->n_arr++] = (Arrival){d, c->msg, (uint32_t)hop, at, {bytes}};
  }
}

/* Put `bytes` on the links from node `src` to host `dst`: along the one
 * path of shortest routing, or spread evenly over the equal-cost next
 * hops at every node (ideal ECMP), layer by layer toward dst (equal-cost
 * paths have as many hops: c->pre, of the first path, holds for each).
 * LOOK returns the busiest direction's time for its load. */
static double spread(CsModelCtx *c, uint32_t src, uint32_t dst_host, double bytes, Visit v) {
  const CsTopology *t = c->t;
  double most = 0;
  if (c->routing == CS_ROUTING_SHORTEST || c->draw) {
    const uint32_t *ports = c->ports;
    int h = -1;
    if (c->terms_on) { /* (a path without a choice, kept: every draw's) */
      const struct Terms *x = &c->terms[c->msg];
      int way = v == PUT_ACKS;
      if ((h = x->way_hops[way]) > 0) ports = c->t_ports + x->way_off[way];
    }
    if (h < 0) {
      uint64_t flow = c->draw ? cs_rng_stream_id("model-ecmp", c->draw, c->msg) : 0;
      h = cs_routes_path(c->r, src, dst_host, flow, c->ports, (int)t->n_nodes);
    }
    for (int i = 0; i < h; i++) visit(c, dir_of(t, ports[i]), bytes, v, i, &most);
    return most;
  }
  uint32_t nf = 1, target = t->hosts[dst_host];
  int hop = 0;
  c->frontier[0] = src;
  c->share[src] = 1.0;
  while (nf > 0 && c->frontier[0] != target) {
    uint32_t nn = 0;
    for (uint32_t i = 0; i < nf; i++) {
      uint32_t n = c->frontier[i];
      const CsNode *node = &t->nodes[n];
      uint32_t count = cs_routes_next_ports(c->r, n, dst_host, c->near, node->n_ports);
      double part = c->share[n] / count;
      for (uint32_t k = 0; k < count; k++) {
        uint32_t p = c->near[k], m = t->ports[p].peer;
        visit(c, dir_of(t, p), bytes * part, v, hop, &most);
        if (c->share[m] == 0) c->next[nn++] = m;
        c->share[m] += part;
      }
      c->share[n] = 0;
    }
    uint32_t *tmp = c->frontier;
    c->frontier = c->next;
    c->next = tmp;
    nf = nn;
    hop++;
  }
  for (uint32_t i = 0; i < nf; i++) c->share[c->frontier[i]] = 0;
  return most;
}

/* Sort n arrivals by pre, stably (ties keep their order, as glibc's
 * qsort, a merge sort, kept them): runs of 16 by insertion, then merges
 * through tmp (n of them). */
static void sort_by_pre(ByDir *a, uint32_t n, ByDir *tmp) {
  enum { RUN = 16 };
  for (uint32_t lo = 0; lo < n; lo += RUN) {
    uint32_t hi = MIN(n, lo + RUN);
    for (uint32_t i = lo + 1; i < hi; i++) {
      ByDir x = a[i];
      uint32_t j = i;
      for (; j > lo && a[j - 1].pre > x.pre; j--) a[j] = a[j - 1];
      a[j] = x;
    }
  }
  ByDir *from = a, *to = tmp;
  for (uint32_t w = RUN; w < n; w *= 2) {
    for (uint32_t lo = 0; lo < n; lo += 2 * w) {
      uint32_t mid = MIN(n, lo + w), hi = MIN(n, lo + 2 * w), i = lo, j = mid, k = lo;
      while (i < mid && j < hi) to[k++] = from[j].pre < from[i].pre ? from[j++] : from[i++];
      while (i < mid) to[k++] = from[i++];
      while (j < hi) to[k++] = from[j++];
    }
    ByDir *x = from;
    from = to;
    to = x;
  }
  if (from != a) memcpy(a, from, (size_t)n * sizeof *a);
}

static inline bool job_before(const struct PsJob *a, const struct PsJob *b) { return a->vend < b->vend; }

/* When each message's data has left each direction of the round
 * (Arrival.done): its data come in as they reach it (Arrival.pre), and
 * the direction shares its rate evenly among the messages that have come
 * and are not done (processor sharing, as TCP's flows share a link; its
 * ACKs, which come all along, take their part of it: each message's
 * bytes are counted with the direction's ACKs over its data).  Messages
 * that come in at once end together, as the busiest direction's load
 * says; the messages of an incast 1 to 4 hops away, short enough to be
 * sent before the next comes in, one after the other: each far one's
 * latency passes while the near ones are sent.  The arrivals stay in
 * message order; their copies (ByDir) are sorted by direction. */
static void arrivals_end(CsModelCtx *c) {
  const CsTopology *t = c->t;
  /* by direction (a counting sort over the round's directions, stable:
   * each direction's in the order put), then by arrival within each */
  uint32_t len = c->n_arr;
  Arrival *in = c->arr;
  ByDir *a = c->by_dir;
  for (uint32_t k = 0; k < len; k++) c->cnt[in[k].d]++;
  uint32_t at = 0;
  for (uint32_t i = 0; i < c->n_touched; i++) {
    uint32_t d = c->touched[i], k = c->cnt[d];
    c->cnt[d] = at;
    at += k;
  }
  for (uint32_t k = 0; k < len; k++) a[c->cnt[in[k].d]++] = (ByDir){in[k].pre, in[k].bytes, in[k].d, k};
  for (uint32_t i = 0; i < c->n_touched; i++) c->cnt[c->touched[i]] = 0;
  for (uint32_t lo = 0, hi; lo < len; lo = hi) {
    uint32_t d = a[lo].d;
    double data = 0;
    bool sorted = true;
    for (hi = lo; hi < len && a[hi].d == d; hi++) {
      data += a[hi].bytes;
      sorted = sorted && (hi == lo || a[hi - 1].pre <= a[hi].pre);
    }
    if (!sorted) {
      if (hi - lo > c->cap_tmp) {
        c->cap_tmp = MAX(hi - lo, 2 * c->cap_tmp);
        g_free(c->by_tmp);
        c->by_tmp = g_new(ByDir, c->cap_tmp);
      }
      sort_by_pre(a + lo, hi - lo, c->by_tmp);
    }
    double bps = (double)t->links[d / 2].spec.bandwidth / 8.0 * (data / c->load[d]); /* bytes a second, less the ACKs' part */
    /* virtual time v: the bytes each message present has been given */
    uint32_t n = 0;
    double now = a[lo].pre, v = 0;
    for (uint32_t k = lo; k < hi || n > 0;) {
      double next = k < hi ? a[k].pre : INFINITY;
      double fin = n > 0 ? now + (c->heap[0].vend - v) * n / bps : INFINITY;
      if (fin <= next) { /* the least left ends */
        struct PsJob j;
        CS_HEAP_POP(c->heap, n, j, job_before);
        v = j.vend;
        now = fin;
        in[a[j.k].at].done = fin;
        continue;
      }
      if (n > 0) v += (next - now) * bps / n;
      now = next;
      struct PsJob j = {v + a[k].bytes, k};
      CS_HEAP_PUSH(c->heap, n, c->cap_heap, 16, j, job_before);
      k++;
    }
  }
}

/* The first path from node src to host dst_host, into c->ports, and its
 * hops' rates (c->p_bps), latencies in seconds (c->p_lat) and cut bytes
 * (c->p_cut): its hop count. */
static int path_terms(const CsModelCtx *c, uint32_t src, uint32_t dst_host) {
  const CsTopology *t = c->t;
  int h = cs_routes_path(c->r, src, dst_host, 0, c->ports, (int)t->n_nodes);
  for (int i = 0; i < h; i++) {
    const CsPort *pt = &t->ports[c->ports[i]];
    const CsLink *l = &t->links[pt->link];
    c->p_bps[i] = (double)l->spec.bandwidth;
    c->p_lat[i] = (double)l->spec.latency * 1e-12;
    c->p_cut[i] = (double)cs_dir_cut_bytes(t, 2 * pt->link + pt->dir);
  }
  return h;
}

/* Packets, wire bytes and the latency terms of one message: its lone
 * time on the path, packet by packet (cs_path_message_time), less the
 * slowest link's serialization of its wire bytes, which the busiest-link
 * term counts. */
static double message_terms(CsModelCtx *c, const CsModelMsg *m, uint64_t *packets, double *wire, double *slowest_bps,
                            uint32_t *slowest_dir) {
  const CsTopology *t = c->t;
  uint64_t n = (m->payload + c->mss - 1) / c->mss;
  if (n == 0) n = 1;
  *packets = n;
  *wire = (double)m->payload + (double)(n * c->header);
  double last = (double)(m->payload - (n - 1) * c->mss + c->header);
  int h = path_terms(c, m->src, (uint32_t)t->nodes[m->dst].host);
  const double *bps = c->p_bps, *lat_s = c->p_lat, *cut = c->p_cut;
  *slowest_bps = INFINITY;
  *slowest_dir = 0;
  for (int i = 0; i < h; i++)
    if (bps[i] < *slowest_bps) *slowest_bps = bps[i], *slowest_dir = dir_of(t, c->ports[i]);
  /* the busiest link's serialization of the wire bytes is its own term */
  double lat = h > 0 ? cs_path_message_tail(n, (double)(c->mss + c->header), last, bps, lat_s, cut, h) : 0;
  /* per hop: when it can begin to send the message (its first packet
   * there, or with cut-through its first bytes), its latency, and what
   * the last packet adds there (round_of's chain) */
  double first = n > 1 ? (double)(c->mss + c->header) : last;
  c->hops = h;
  c->pre[0] = 0;
  for (int i = 0; i < h; i++) {
    double in = i + 1 < h && cut[i + 1] > 0 ? fmin(cut[i + 1], first) : first;
    c->pre[i + 1] = c->pre[i] + 8.0 * in / bps[i] + lat_s[i];
    c->lat_h[i] = lat_s[i];
    c->last_h[i] = cs_path_hop_adds(last, bps, cut, i);
  }
  return lat;
}

/* Keep message_terms of each of a round's n messages for its draws
 * (round_of), up to TERMS_HOPS hops in all (past them, each evaluation
 * finds them again; a round with draws crosses at most DRAWS_HOPS / 2
 * hops each way). */
#define TERMS_HOPS (1u << 20)

static void terms_keep(CsModelCtx *c, const CsModelMsg *msgs, uint32_t n) {
  c->terms_on = false;
  g_assert(n <= c->cap_terms); /* (round_draws made room, and kept the ways there) */
  size_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    struct Terms *x = &c->terms[i];
    x->lat = message_terms(c, &msgs[i], &x->packets, &x->wire, &x->slowest, &x->sdir);
    x->hops = c->hops;
    x->off = off;
    size_t need = off + (size_t)c->hops + 1;
    if (need > TERMS_HOPS) return;
    if (need > c->cap_t_hops) {
      c->cap_t_hops = MAX(need, 2 * c->cap_t_hops);
      c->t_pre = g_renew(double, c->t_pre, c->cap_t_hops);
      c->t_lat = g_renew(double, c->t_lat, c->cap_t_hops);
      c->t_last = g_renew(double, c->t_last, c->cap_t_hops);
    }
    memcpy(c->t_pre + off, c->pre, ((size_t)c->hops + 1) * sizeof(double));
    memcpy(c->t_lat + off, c->lat_h, (size_t)c->hops * sizeof(double));
    memcpy(c->t_last + off, c->last_h, (size_t)c->hops * sizeof(double));
    off = need;
  }
  c->terms_on = true;
}

/* message_terms of message i of the round: kept (terms_keep), or found. */
static double terms_of(CsModelCtx *c, const CsModelMsg *msgs, uint32_t i, uint64_t *packets, double *wire,
                       double *slowest_bps, uint32_t *slowest_dir) {
  if (!c->terms_on) return message_terms(c, &msgs[i], packets, wire, slowest_bps, slowest_dir);
  const struct Terms *x = &c->terms[i];
  *packets = x->packets, *wire = x->wire, *slowest_bps = x->slowest, *slowest_dir = x->sdir;
  c->hops = x->hops;
  memcpy(c->pre, c->t_pre + x->off, ((size_t)x->hops + 1) * sizeof(double));
  memcpy(c->lat_h, c->t_lat + x->off, (size_t)x->hops * sizeof(double));
  memcpy(c->last_h, c->t_last + x->off, (size_t)x->hops * sizeof(double));
  return x->lat;
}

/* The port whose queue is src's host queue toward dst: its own link's,
 * or from a GPU to another machine its machine's NIC's (the packet
 * transport's small queues are there); *at the node it belongs to. */
static uint32_t host_queue_port(const CsModelCtx *c, uint32_t src, uint32_t dst, uint32_t *at) {
  const CsTopology *t = c->t;
  uint32_t host = (uint32_t)t->nodes[dst].host;
  *at = src;
  if (t->gpus_per_host > 1 && t->nodes[src].role == CS_ROLE_WORKER) {
    int h = cs_routes_path(c->r, src, host, 0, c->ports, (int)t->n_nodes);
    if (h > 2) {
      *at = t->ports[c->ports[0]].peer;
      return c->ports[1];
    }
  }
  return cs_routes_next_port(c->r, src, host, 0);
}

/* The bandwidth of the link whose queue is src's host queue toward dst. */
static double host_queue_bps(const CsModelCtx *c, uint32_t src, uint32_t dst) {
  uint32_t at;
  return (double)c->t->links[c->t->ports[host_queue_port(c, src, dst, &at)].link].spec.bandwidth;
}

/* The directions out of node `at` one hop nearer host, at most max of
 * them into dirs: how many. */
static uint32_t nearer_dirs(const CsModelCtx *c, uint32_t at, uint32_t host, uint32_t *dirs, uint32_t max) {
  uint32_t n = MIN(cs_routes_next_ports(c->r, at, host, c->near, max), max);
  for (uint32_t k = 0; k < n; k++) dirs[k] = dir_of(c->t, c->near[k]);
  return n;
}

/* The link direction whose queue is src's host queue toward dst;
 * UINT32_MAX when ECMP draws it among several (a host of a torus toward
 * one a hop away on each axis). */
static uint32_t host_queue_dir(const CsModelCtx *c, uint32_t src, uint32_t dst) {
  const CsTopology *t = c->t;
  uint32_t at, two[2], d = dir_of(t, host_queue_port(c, src, dst, &at));
  if (c->routing == CS_ROUTING_SHORTEST) return d;
  return nearer_dirs(c, at, (uint32_t)t->nodes[dst].host, two, 2) > 1 ? UINT32_MAX : d;
}

/* The link directions ECMP may draw src's host queue toward dst from
 * (host_queue_dir's UINT32_MAX), at most max of them into dirs: how many. */
static uint32_t host_queue_dirs(const CsModelCtx *c, uint32_t src, uint32_t dst, uint32_t *dirs, uint32_t max) {
  uint32_t at;
  host_queue_port(c, src, dst, &at);
  return nearer_dirs(c, at, (uint32_t)c->t->nodes[dst].host, dirs, max);
}

/* Whether message m's host queue (toward its destination) takes it
 * whole: within host_queue. */
static bool queued_whole(const CsModelCtx *c, const CsModelMsg *m) {
  uint64_t pk = (m->payload + c->mss - 1) / c->mss;
  double hq = cs_transport_host_queue_bytes(&c->tr, host_queue_bps(c, m->src, m->dst));
  return hq <= 0 || (double)(m->payload + (pk ? pk : 1) * c->header) <= hq;
}

/* Whether message i's receiver sends in the round a message its host's
 * queue takes whole, ahead of i's ACKs in the queue they go into: back to
 * i's sender (the ACKs wait behind it, then follow it on its way,
 * delaying nothing), or on a star (of hosts, or of machines: behind its
 * machine's NIC's bursts) to any host (the ACKs wait behind it,
 * and the switch passes them on to the sender's link between its
 * packets, as in the packet run; off a star, elsewhere, they meet data
 * on their way that the run shows they delay).  (A message gone by when
 * the first ACK is made leaves it an empty queue, but ACKs made after the
 * round's data has passed delay none of it either.)  (from[node]: the
 * first message the node sends in the round, next[] the others.) */
static bool acks_behind(const CsModelOp *op, const CsModelMsg *msgs, const uint32_t *from, const uint32_t *next,
                        uint32_t i) {
  const CsModelCtx *c = op->ctx;
  for (uint32_t j = from[msgs[i].dst]; j != UINT32_MAX; j = next[j])
    if ((msgs[j].dst == msgs[i].src || c->star_machines) && queued_whole(c, &msgs[j])) return true;
  return false;
}

/* The busiest direction's time on the even spread's ways from `node` to
 * host dst_host (node `target`): spread's LOOK, remembered per node for
 * the destination of c->lk_epoch (a maximum, exact in any order); `at`
 * is where this node's ports go in c->lk_ports. */
static double look_to(CsModelCtx *c, uint32_t node, uint32_t dst_host, uint32_t target, size_t at) {
  if (node == target) return 0;
  if (c->lk_stamp[node] == c->lk_epoch) return c->lk_val[node];
  const CsTopology *t = c->t;
  uint32_t deg = t->nodes[node].n_ports;
  if (at + deg > c->cap_lk_ports) {
    c->cap_lk_ports = MAX(at + deg, 2 * c->cap_lk_ports);
    c->lk_ports = g_renew(uint32_t, c->lk_ports, c->cap_lk_ports);
  }
  uint32_t count = cs_routes_next_ports(c->r, node, dst_host, c->lk_ports + at, deg);
  double most = 0;
  for (uint32_t k = 0; k < count; k++) {
    uint32_t p = c->lk_ports[at + k], d = dir_of(t, p); /* (read again: the calls below may move lk_ports) */
    most = max2(most, 8.0 * c->load[d] / (double)t->links[d / 2].spec.bandwidth);
    most = max2(most, look_to(c, t->ports[p].peer, dst_host, target, at + count));
  }
  c->lk_stamp[node] = c->lk_epoch;
  c->lk_val[node] = most;
  return most;
}

/* (look_to's depth: farther messages walk their spread) */
#define LOOK_HOPS 256

/* spread's LOOK for each of a round's n messages with the even spread
 * (round_once past ARRIVALS_MAX): the messages to one host share what
 * their ways share (all pushes to a server cross its last hops and, on
 * a fat-tree, every core), so their ways are looked at once per
 * destination, each direction once. */
static double *looks_by_dst(CsModelCtx *c, const CsModelMsg *msgs, uint32_t n) {
  const CsTopology *t = c->t;
  double *look = g_new(double, n ? n : 1);
  uint32_t *first = g_new0(uint32_t, (size_t)t->n_hosts + 1), *order = g_new(uint32_t, n ? n : 1);
  for (uint32_t i = 0; i < n; i++) first[t->nodes[msgs[i].dst].host + 1]++;
  for (uint32_t h = 0; h < t->n_hosts; h++) first[h + 1] += first[h];
  for (uint32_t i = 0; i < n; i++) order[first[t->nodes[msgs[i].dst].host]++] = i;
  for (uint32_t lo = 0, hi; lo < n; lo = hi) {
    uint32_t host = (uint32_t)t->nodes[msgs[order[lo]].dst].host, target = t->hosts[host];
    for (hi = lo; hi < n && (uint32_t)t->nodes[msgs[order[hi]].dst].host == host; hi++) {}
    if (++c->lk_epoch == 0) { /* (wrapped: every stamp is stale) */
      memset(c->lk_stamp, 0, ((size_t)t->n_nodes + 1) * sizeof *c->lk_stamp);
      c->lk_epoch = 1;
    }
    for (uint32_t k = lo; k < hi; k++) {
      uint32_t i = order[k];
      c->msg = i;
      look[i] = hi - lo > 1 && cs_routes_distance(c->r, msgs[i].src, host) <= LOOK_HOPS
                    ? look_to(c, msgs[i].src, host, target, 0)
                    : spread(c, msgs[i].src, host, 0, LOOK);
    }
  }
  g_free(first);
  g_free(order);
  return look;
}

/* (turns: cs_model_round_turns, with each)
 *
 * Spread over ECMP's equal-cost paths, a message's bytes load each of
 * them with a part; but one message takes one path (its hash's), so its
 * own time is at least its wire bytes over its path's slowest link, and
 * so is the round's.  (With ecmp-packet its packets do take several.) */
static CsModelStep round_once(CsModelOp *op, const CsModelMsg *msgs, uint32_t n, double *each, double *turns) {
  CsModelCtx *c = op->ctx;
  const CsTopology *t = c->t;
  CsModelStep st = {0};
  st.messages = n;
  double *alone = turns ? g_new(double, n ? n : 1) : NULL; /* a burst's time alone, else -1 */
  double *own = g_new(double, n ? n : 1);                  /* its wire bytes over its slowest link */
  double own_most = 0, own_bytes = 0;
  uint32_t own_dir = 0;
  bool one_path = c->routing != CS_ROUTING_ECMP_PACKET;
  /* the messages each node sends in the round (acks_behind) */
  uint32_t *next = g_new(uint32_t, n ? n : 1);
  for (uint32_t i = n; i-- > 0;) next[i] = c->from[msgs[i].src], c->from[msgs[i].src] = i;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t packets;
    double wire, slowest;
    uint32_t sdir;
    double lat = terms_of(c, msgs, i, &packets, &wire, &slowest, &sdir);
    own[i] = one_path && isfinite(slowest) ? 8.0 * wire / slowest : 0;
    if (own[i] > own_most) own_most = own[i], own_dir = sdir, own_bytes = wire;
    bool burst = c->burst_pkts >= 1 && cs_model_burst_s(op, msgs[i].src, msgs[i].dst, msgs[i].payload) > 0;
    if (alone) alone[i] = burst ? lat + 8.0 * wire / slowest : -1;
    c->msg = i;
    spread(c, msgs[i].src, (uint32_t)t->nodes[msgs[i].dst].host, wire, PUT_DATA);
    /* the ACKs come back the other way; on a star a burst's wait in the
     * receiver's queue behind its own burst and load no link while it is
     * sent (the flow fidelity's burst_acks); and anywhere when the
     * receiver sends in the round a message that its queue takes whole,
     * by the link they take: they follow it (acks_behind) */
    if ((!burst || !c->star) && !acks_behind(op, msgs, c->from, next, i))
      spread(c, msgs[i].dst, (uint32_t)t->nodes[msgs[i].src].host, (double)(packets * c->ack), PUT_ACKS);
  }
  for (uint32_t i = 0; i < n; i++) c->from[msgs[i].src] = UINT32_MAX;
  g_free(next);
  if (!c->arr_over) arrivals_end(c);
  /* each message: its last bit leaves a hop's link when the link has sent
   * its part of it, and not before it has left the hop before and come
   * (that hop's latency and what its last packet adds); it ends a
   * latency after the last hop; at least its own time alone (its latency
   * terms and its bytes on its slowest link) */
  const Arrival *arr = c->arr;
  /* (the even spread's LOOK, per destination) */
  double *look = c->arr_over && c->routing != CS_ROUTING_SHORTEST && !c->draw ? looks_by_dst(c, msgs, n) : NULL;
  for (uint32_t i = 0, k = 0; i < n; i++) {
    uint64_t packets;
    double wire, slowest, busy = 0, end = 0;
    uint32_t sdir, h = 0;
    double lat = terms_of(c, msgs, i, &packets, &wire, &slowest, &sdir);
    c->msg = i;
    if (c->arr_over) { /* (the busiest direction on its way, and its latency terms) */
      busy = look ? look[i] : spread(c, msgs[i].src, (uint32_t)t->nodes[msgs[i].dst].host, 0, LOOK);
      end = (c->start ? c->start[i] : 0) + lat + fmax(busy, own[i]);
      if (end > st.seconds) st.seconds = end;
      if (turns) turns[i] = alone[i] >= 0 ? fmax(fmax(busy, own[i]), alone[i]) : end;
      if (each) each[i] = end;
      continue;
    }
    for (; k < c->n_arr && arr[k].msg == i; k++) {
      uint32_t hop = arr[k].hop;
      for (; h <= hop; h++) c->hop_done[h] = 0;
      c->hop_done[hop] = max2(c->hop_done[hop], arr[k].done);
      busy = max2(busy, 8.0 * c->load[arr[k].d] / (double)t->links[arr[k].d / 2].spec.bandwidth);
    }
    for (uint32_t j = 0; j < h; j++)
      end = j == 0 ? c->hop_done[0] : max2(c->hop_done[j], end + c->lat_h[j - 1] + c->last_h[j]);
    if (h > 0) end += c->lat_h[h - 1];
    end = fmax(end, (c->start ? c->start[i] : 0) + lat + own[i]);
    if (end > st.seconds) st.seconds = end;
    if (turns) turns[i] = alone[i] >= 0 ? fmax(fmax(busy, own[i]), alone[i]) : end;
    if (each) each[i] = end;
  }
  c->n_arr = 0;
  c->arr_over = false;
  g_free(look);
  g_free(alone);
  g_free(own);
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
  if (own_most > st.bound_s) { /* a message alone on its path's slowest link */
    st.bound_s = own_most;
    st.link = own_dir / 2;
    st.dir = (int)(own_dir % 2);
    st.bound_bytes = own_bytes;
  }
  /* (a direction of ACKs alone may be the busiest) */
  st.seconds = fmax(st.seconds, st.bound_s);
  st.latency_s = st.seconds - st.bound_s;
  return st;
}

/* How many draws of ECMP's paths round_of averages over: up to
 * ROUND_DRAWS, fewer as the round's messages cross more directions
 * (DRAWS_HOPS in all), none (the even spread) when no message of the
 * round, nor its ACKs, has more than one path, or when they cross more. */
#define ROUND_DRAWS 16
#define DRAWS_HOPS (1u << 21)

static uint32_t round_draws(CsModelCtx *c, const CsModelMsg *msgs, uint32_t n) {
  const CsTopology *t = c->t;
  if (c->routing != CS_ROUTING_ECMP) return 0;
  if (n > c->cap_terms) {
    c->cap_terms = MAX(n, 2 * c->cap_terms);
    c->terms = g_renew(struct Terms, c->terms, c->cap_terms);
  }
  uint64_t hops = 0;
  size_t kept = 0;
  bool any = false;
  for (uint32_t i = 0; i < n; i++)
    for (int way = 0; way < 2; way++) {
      bool drawn;
      uint32_t a = way ? msgs[i].dst : msgs[i].src, b = way ? msgs[i].src : msgs[i].dst;
      int h = cs_routes_path_drawn(c->r, a, (uint32_t)t->nodes[b].host, 0, c->ports, (int)t->n_nodes, &drawn);
      hops += (uint64_t)(h > 0 ? h : 0);
      any = any || drawn;
      /* (a path ECMP has no choice on is every draw's: kept for spread
       * while terms_on, up to as many hops as a round with draws has) */
      struct Terms *x = &c->terms[i];
      x->way_hops[way] = -1;
      if (drawn || h < 0 || kept + (size_t)h > DRAWS_HOPS / 2) continue;
      if (kept + (size_t)h > c->cap_t_ports) {
        c->cap_t_ports = MAX(kept + (size_t)h, 2 * c->cap_t_ports);
        c->t_ports = g_renew(uint32_t, c->t_ports, c->cap_t_ports);
      }
      memcpy(c->t_ports + kept, c->ports, (size_t)h * sizeof(uint32_t));
      x->way_off[way] = kept;
      x->way_hops[way] = h;
      kept += (size_t)h;
    }
  if (!any || hops == 0) return 0;
  uint64_t k = DRAWS_HOPS / hops;
  return k < 2 ? 0 : k > ROUND_DRAWS ? ROUND_DRAWS : (uint32_t)k;
}

/* A round (round_once): with ECMP, where its messages have several paths,
 * the mean over draws of one path each (a message takes one, its hash's:
 * two that draw the same link share it, which the busiest link of an
 * even spread misses): its time, its busiest direction's time and bytes,
 * and as that direction the one busiest in the most draws.  But never
 * under the even spread's busiest direction (and time): each direction's
 * mean load is the spread's, so the mean of the busiest is at least its
 * busiest, which a few draws can miss. */
static CsModelStep round_of(CsModelOp *op, const CsModelMsg *msgs, uint32_t n, double *each, double *turns) {
  CsModelCtx *c = op->ctx;
  op->rounds++;
  for (uint32_t i = 0; i < n; i++) {
    c->hop_sum += cs_routes_distance(c->r, msgs[i].src, (uint32_t)c->t->nodes[msgs[i].dst].host);
    c->hop_n++;
  }
  uint32_t draws = round_draws(c, msgs, n);
  if (draws == 0) return round_once(op, msgs, n, each, turns);
  terms_keep(c, msgs, n);
  CsModelStep spread_st = round_once(op, msgs, n, NULL, NULL);
  double *e1 = each ? g_new(double, n) : NULL, *t1 = turns ? g_new(double, n) : NULL;
  double sec = 0, bound = 0, bytes = 0;
  CsModelStep st = {0};
  uint32_t busiest[ROUND_DRAWS], times[ROUND_DRAWS], nb = 0, most = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (each) each[i] = 0;
    if (turns) turns[i] = 0;
  }
  for (uint32_t m = 1; m <= draws; m++) {
    c->draw = m;
    CsModelStep x = round_once(op, msgs, n, e1, t1);
    sec += x.seconds / draws, bound += x.bound_s / draws, bytes += x.bound_bytes / draws;
    uint32_t d = 2 * x.link + (uint32_t)x.dir, k = 0;
    while (k < nb && busiest[k] != d) k++;
    if (k == nb) busiest[nb] = d, times[nb++] = 0;
    if (++times[k] > times[most] || (times[k] == times[most] && d < busiest[most])) most = k;
    if (m == 1) st = x;
    for (uint32_t i = 0; i < n; i++) {
      if (each) each[i] += e1[i] / draws;
      if (turns) turns[i] += t1[i] / draws;
    }
  }
  c->draw = 0;
  c->terms_on = false;
  g_free(e1), g_free(t1);
  st.seconds = sec, st.bound_s = bound, st.bound_bytes = bytes;
  st.link = busiest[most] / 2, st.dir = (int)(busiest[most] % 2);
  if (st.bound_s < spread_st.bound_s)
    st.bound_s = spread_st.bound_s, st.bound_bytes = spread_st.bound_bytes, st.link = spread_st.link, st.dir = spread_st.dir;
  st.seconds = fmax(st.seconds, spread_st.seconds);
  st.latency_s = st.seconds - st.bound_s;
  return st;
}

CsModelStep cs_model_round(CsModelOp *op, const CsModelMsg *msgs, uint32_t n) { return round_of(op, msgs, n, NULL, NULL); }

CsModelStep cs_model_round_each(CsModelOp *op, const CsModelMsg *msgs, uint32_t n, double *each) {
  return round_of(op, msgs, n, each, NULL);
}

CsModelStep cs_model_round_from(CsModelOp *op, const CsModelMsg *msgs, uint32_t n, const double *start, double *end) {
  /* (not a round of the operation's own: its count and hops stay) */
  CsModelCtx *c = op->ctx;
  uint32_t rounds = op->rounds;
  double hop_sum = c->hop_sum;
  uint64_t hop_n = c->hop_n;
  c->start = start;
  CsModelStep st = round_of(op, msgs, n, end, NULL);
  c->start = NULL;
  op->rounds = rounds, c->hop_sum = hop_sum, c->hop_n = hop_n;
  return st;
}

CsModelStep cs_model_round_turns(CsModelOp *op, const CsModelMsg *msgs, uint32_t n, double *each, double *turns) {
  return round_of(op, msgs, n, each, turns);
}

void cs_model_record(CsModelOp *op, CsModelStep st, const char *label, uint32_t count) {
  if (!op->steps) return;
  st.label = g_strdup(label);
  st.count = count;
  g_array_append_val(op->steps, st);
}

/* (cs_model_pair's record) */
typedef struct {
  double sec;
  uint64_t payload;
  uint32_t round;
} PairTime;

/* (CsModelOp.sends: per participant its last send, then per participant
 * its last receive, `to` the sender) */
struct CsModelSend {
  uint32_t round, to;
  uint64_t payload;
};

void cs_model_pair(CsModelOp *op, uint32_t a, uint32_t b, double seconds, uint64_t payload) {
  uint32_t N = op->spec.n_workers + op->spec.n_servers;
  if (!op->sends) op->sends = g_new0(struct CsModelSend, 2 * (size_t)N); /* (round 0: none) */
  op->sends[a] = (struct CsModelSend){op->rounds, b, payload};
  op->sends[N + b] = (struct CsModelSend){op->rounds, a, payload};
  gint64 *k = g_new(gint64, 1);
  *k = ((gint64)a << 32) | b;
  PairTime *v = g_new(PairTime, 1);
  *v = (PairTime){seconds, payload, op->rounds};
  g_hash_table_replace(op->pair_s, k, v);
}

double cs_model_first_hop_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload) {
  const CsModelCtx *c = op->ctx;
  const CsTopology *t = c->t;
  uint64_t pk = (payload + c->mss - 1) / c->mss;
  uint32_t port = cs_routes_next_port(c->r, src, (uint32_t)t->nodes[dst].host, 0);
  return 8.0 * (double)(payload + (pk ? pk : 1) * c->header) / (double)t->links[t->ports[port].link].spec.bandwidth;
}

double cs_model_tail_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload) {
  CsModelMsg m = {src, dst, payload};
  uint64_t packets;
  double wire, slowest;
  uint32_t sdir;
  double lat = message_terms(op->ctx, &m, &packets, &wire, &slowest, &sdir);
  /* (message_terms leaves out the slowest link's serialization; past the
   * first link, it is the tail's) */
  return lat + 8.0 * wire / slowest - cs_model_first_hop_s(op, src, dst, payload);
}

uint32_t cs_model_host_queue(const CsModelOp *op, uint32_t src, uint32_t dst) { return host_queue_dir(op->ctx, src, dst); }

double cs_model_burst_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload) {
  const CsModelCtx *c = op->ctx;
  uint64_t pk = (payload + c->mss - 1) / c->mss;
  double bps = host_queue_bps(c, src, dst), wire = (double)(payload + (pk ? pk : 1) * c->header);
  double hq = cs_transport_host_queue_bytes(&c->tr, bps);
  return (double)(pk ? pk : 1) <= c->burst_pkts && (hq <= 0 || wire <= hq) ? 8.0 * wire / bps : 0;
}

double cs_model_burst_last_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload) {
  const CsModelCtx *c = op->ctx;
  uint64_t pk = (payload + c->mss - 1) / c->mss;
  if (pk == 0 || cs_model_burst_s(op, src, dst, payload) <= 0) return 0;
  return 8.0 * (double)(payload - (pk - 1) * c->mss + c->header) / host_queue_bps(c, src, dst);
}

double cs_model_blocks_gap_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload) {
  const CsModelCtx *c = op->ctx;
  CsModelMsg m = {src, dst, payload};
  if (!c->blocks || queued_whole(c, &m)) return 0;
  double bps = host_queue_bps(c, src, dst);
  return 4.0 * cs_transport_host_queue_bytes(&c->tr, bps) / bps;
}

/* The first window of a message of `payload` bytes, in packets: its
 * connection's initial window, or the whole message when smaller. */
static double first_window(const CsModelCtx *c, uint64_t payload) {
  return fmin(c->ss_init, (double)((payload + c->mss - 1) / c->mss));
}

/* A packet's round trip from src to dst and its ACK's back (on the
 * forward path's links both ways), as the flow fidelity's routes have it. */
static double round_trip_s(const CsModelCtx *c, uint32_t src, uint32_t dst) {
  int h = path_terms(c, src, (uint32_t)c->t->nodes[dst].host);
  double rtt = 0;
  for (int i = 0; i < h; i++)
    rtt += 2 * c->p_lat[i] + cs_path_hop_adds((double)(c->mss + c->header), c->p_bps, c->p_cut, i) +
           cs_path_hop_adds((double)c->ack, c->p_bps, c->p_cut, i);
  return rtt;
}

/* An ACK's way from src to dst alone: latencies, and its serialization at
 * each hop. */
static double ack_way_s(const CsModelCtx *c, uint32_t src, uint32_t dst) {
  int h = path_terms(c, src, (uint32_t)c->t->nodes[dst].host);
  double s = 0;
  for (int i = 0; i < h; i++) s += c->p_lat[i] + 8.0 * (double)c->ack / c->p_bps[i];
  return s;
}

/* When src's last packet of a window of w full packets sent at once has
 * reached dst, and an ACK right behind it too (slow start's first round
 * trip behind the receiver's own burst: rpair_new); also the path's
 * slowest packet time into *pt. */
static double burst_in_s(const CsModelCtx *c, uint32_t src, uint32_t dst, double w, double *pt) {
  int h = path_terms(c, src, (uint32_t)c->t->nodes[dst].host);
  double s = 0, slowest = INFINITY;
  for (int i = 0; i < h; i++) {
    s += c->p_lat[i] + cs_path_hop_adds((double)(c->mss + c->header), c->p_bps, c->p_cut, i);
    slowest = fmin(slowest, c->p_bps[i]);
  }
  *pt = 8.0 * (double)(c->mss + c->header) / slowest;
  return h > 0 ? s + (w - 1) * *pt + 8.0 * (double)c->ack / c->p_bps[h - 1] : 0;
}

/* A window in a host's queue (cs_model_queue_turns): when it goes in, and whose. */
typedef struct {
  double at;
  uint32_t seq, msg;
} QWin;

static bool qwin_before(const QWin *a, const QWin *b) { return a->at < b->at || (a->at == b->at && a->seq < b->seq); }


/* A host's queue (cs_model_queue_turns): its link direction and rate,
 * a burst's time there, when it is free, and the bytes bound for it. */
typedef struct {
  uint32_t dir;
  double bps, burst, free, load;
} HostQ;

/* The index in qs of the queue of direction d, added if new (its burst
 * that of a message of `payload` bytes from src to dst); *fits false
 * when `wire` bytes are past its limit (host_queue). */
static uint32_t hostq_of(const CsModelOp *op, GArray *qs, uint32_t d, uint32_t src, uint32_t dst, uint64_t payload,
                         double wire, bool *fits) {
  const CsModelCtx *c = op->ctx;
  for (uint32_t k = 0; k < qs->len; k++)
    if (g_array_index(qs, HostQ, k).dir == d) return k;
  HostQ x = {d, (double)c->t->links[d / 2].spec.bandwidth, cs_model_burst_s(op, src, dst, payload), 0, 0};
  double hq = cs_transport_host_queue_bytes(&c->tr, x.bps);
  if (hq > 0 && wire > hq) *fits = false;
  g_array_append_val(qs, x);
  return qs->len - 1;
}

/* The turns in their queues (cs_model_queue_turns) with message i in
 * queue qi[i]: when each leaves, into out[]. */
static void turns_in(const CsModelCtx *c, uint32_t src, const uint32_t *dst, uint32_t n, double wire, HostQ *q,
                     uint32_t nq, const uint32_t *qi, double *out) {
  double full = (double)(c->mss + c->header);
  /* bursts: one after another in their queue */
  bool bursts = true;
  for (uint32_t k = 0; k < nq; k++) bursts = bursts && q[k].burst > 0, q[k].free = 0;
  if (bursts) {
    for (uint32_t i = 0; i < n; i++) out[i] = q[qi[i]].free += q[qi[i]].burst;
    return;
  }
  /* window by window: the first ones at once, in order; each next one,
   * twice as large, a round trip after the one before began to leave;
   * each queue takes them in the order they go in, at its line rate */
  double window = c->tr.window_bytes ? (double)c->tr.window / (double)c->tr.mtu : (double)c->tr.window;
  double *rtt = g_new(double, n), *left = g_new(double, n), *w = g_new(double, n);
  uint32_t len = 0, seq = 0, cap = n + 1;
  QWin *heap = g_new(QWin, cap);
  for (uint32_t i = 0; i < n; i++) {
    rtt[i] = round_trip_s(c, src, dst[i]);
    left[i] = wire, w[i] = floor(c->burst_pkts);
    QWin x = {0, seq++, i};
    CS_HEAP_PUSH(heap, len, cap, 8, x, qwin_before);
  }
  while (len > 0) {
    QWin x;
    CS_HEAP_POP(heap, len, x, qwin_before);
    uint32_t i = x.msg;
    HostQ *k = &q[qi[i]];
    double bytes = fmin(left[i], w[i] * full), turn = fmax(x.at, k->free);
    left[i] -= bytes;
    k->free = turn + 8.0 * bytes / k->bps;
    out[i] = k->free;
    w[i] = fmin(2 * w[i], window);
    if (left[i] > 0.5) {
      QWin y = {turn + rtt[i], seq++, i};
      CS_HEAP_PUSH(heap, len, cap, 8, y, qwin_before);
    }
  }
  g_free(rtt), g_free(left), g_free(w), g_free(heap);
}

/* How many draws of ECMP's choices cs_model_queue_turns averages over,
 * and how many of a queue's equal-cost directions it draws among. */
#define TURN_DRAWS 32
#define TURN_WAYS 16

bool cs_model_queue_turns(const CsModelOp *op, uint32_t src, const uint32_t *dst, uint32_t n, uint64_t payload,
                          double *out, double *last) {
  const CsModelCtx *c = op->ctx;
  if (last) *last = 0;
  if (n == 0) return true;
  uint64_t pk = (payload + c->mss - 1) / c->mss;
  pk = pk ? pk : 1;
  double wire = (double)(payload + pk * c->header);
  if (c->burst_pkts < 1) return false; /* (paced, or a window under an mtu: no bursts) */
  /* each message's queue: its host's toward it (a host of a ring or a
   * torus has one per link), each queue its own turns; where ECMP draws
   * it among several (a host of a torus toward one off both its axes,
   * of a ring toward the one opposite), the mean over TURN_DRAWS draws,
   * each an even one among them */
  uint32_t *qi = g_new(uint32_t, n), *cand = g_new(uint32_t, TURN_WAYS * (size_t)n), *nc = g_new0(uint32_t, n);
  GArray *qs = g_array_new(FALSE, FALSE, sizeof(HostQ));
  bool fits = true, drawn = false;
  for (uint32_t i = 0; i < n && fits; i++) {
    uint32_t d = host_queue_dir(c, src, dst[i]), *ci = cand + TURN_WAYS * (size_t)i;
    if (d == UINT32_MAX) nc[i] = host_queue_dirs(c, src, dst[i], ci, TURN_WAYS), drawn = true;
    else ci[0] = d, nc[i] = 1;
    for (uint32_t e = 0; e < nc[i]; e++) ci[e] = hostq_of(op, qs, ci[e], src, dst[i], payload, wire, &fits);
    qi[i] = ci[0];
  }
  if (fits && !drawn) {
    turns_in(c, src, dst, n, wire, (HostQ *)qs->data, qs->len, qi, out);
    for (uint32_t i = 0; i < n && last; i++) *last = fmax(*last, out[i]);
  }
  if (fits && drawn) {
    double *one = g_new(double, n);
    for (uint32_t i = 0; i < n; i++) out[i] = 0;
    for (uint32_t m = 0; m < TURN_DRAWS; m++) {
      for (uint32_t i = 0; i < n; i++)
        if (nc[i] > 1) qi[i] = cand[TURN_WAYS * (size_t)i + cs_rng_stream_id("model-ecmp", m, i) % nc[i]];
      turns_in(c, src, dst, n, wire, (HostQ *)qs->data, qs->len, qi, one);
      double most = 0;
      for (uint32_t i = 0; i < n; i++) out[i] += one[i] / TURN_DRAWS, most = fmax(most, one[i]);
      if (last) *last += most / TURN_DRAWS;
    }
    g_free(one);
  }
  g_free(qi), g_free(cand), g_free(nc), g_array_free(qs, TRUE);
  return fits;
}

/* ---- the replay ----
 *
 * The steps of the simulation itself (cs_coll_plan_new) are replayed with
 * every message taking the time of the round it belongs to, with the same
 * rules: a participant's steps in order, the codec work between them,
 * messages between two participants one at a time, a rendezvous receive
 * letting its message leave only when reached, a round send ending when
 * delivered. */

/* The replay runs one or two variants of a plan at once (with its codec
 * work and without: the same steps, other compute times), each its own
 * times. */
#define VARIANTS 2

typedef struct {
  double post[VARIANTS], start[VARIANTS], end[VARIANTS];
  bool resolved; /* start and end known */
} RMsg;

/* The messages from one participant to another.  Only those from the
 * last one taken on are kept (a step reads the one before the next it
 * takes, and a sender its own last): a ring of P workers posts 2 (P - 1)
 * on each pair, and keeping them all took 64 P^2 bytes (1.1 GB at 4,096
 * workers, 17 GB at 16,384). */
typedef struct {
  RMsg *msgs;        /* msgs[0 .. len): from the last taken, or the first */
  uint32_t len, cap;
  uint32_t consumed; /* msgs[consumed] is the next the receiver's steps take */
  uint32_t scan;     /* the receiver's steps before it take none of the next messages */
  uint32_t same_end; /* the receiver's steps from scan up to it all wait for this sender (recv_same) */
  double sec;        /* each message's time (cs_model_pair; 0 if none was given) */
  /* slow start (ss_adds): its messages' packets, its round trip, a
   * packet's time in a message, and its connection's window (packets);
   * packets 0 when slow start cannot cost it anything */
  double packets, rtt, pt, cwnd;
  double rtt1; /* the first round trip: behind the receiver's own first window when it sends one back in the round */
  /* the queue its messages go into at the sender (host_queue_dir), and
   * the one the receiver's ACK for its last packet goes into, with that
   * ACK's time there (replay: a send waits for it) */
  uint32_t qdir, ack_qdir;
  double ack_s;
} RPair;

#define REPLAY_RUN 64

static void rpair_free(gpointer p) {
  RPair *x = p;
  g_free(x->msgs);
  g_free(x);
}

static RPair *rpair_new(GHashTable *pairs, const CsModelOp *o, gint64 key) {
  RPair *x = g_new0(RPair, 1);
  const PairTime *rec = g_hash_table_lookup(o->pair_s, &key);
  x->sec = rec ? rec->sec : 0;
  const CsModelCtx *c = o->ctx;
  uint32_t a = cs_model_node(o, (uint32_t)(key >> 32)), b = cs_model_node(o, (uint32_t)key);
  x->qdir = host_queue_dir(c, a, b);
  x->ack_qdir = host_queue_dir(c, b, a);
  x->ack_s = c->ack > 0 && x->ack_qdir != UINT32_MAX ? 8.0 * (double)c->ack / (double)c->t->links[x->ack_qdir / 2].spec.bandwidth : 0;
  if (rec && c->ss && rec->payload > 0) {
    x->packets = (double)((rec->payload + c->mss - 1) / c->mss);
    x->rtt = round_trip_s(c, a, b);
    /* a full packet at the path's slowest rate, or the message's own pace
     * when slower (its time less one packet's way: sharing a link) */
    double pt, one = burst_in_s(c, a, b, 1, &pt);
    x->pt = fmax(pt, (x->sec - one) / x->packets);
    x->cwnd = c->ss_init;
    x->rtt1 = x->rtt;
    /* the receiver sends back in the same round: its first window's
     * packets are in its queue ahead of the ACKs (burst_acks) */
    gint64 back = ((key & 0xffffffff) << 32) | (key >> 32);
    const PairTime *bk = g_hash_table_lookup(o->pair_s, &back);
    if (bk && bk->round == rec->round && bk->payload > 0) {
      double wb = first_window(c, bk->payload), ptb;
      x->rtt1 = fmax(x->rtt, burst_in_s(c, b, a, wb, &ptb));
    } else if (o->sends && o->sends[key & 0xffffffff].round == rec->round) {
      /* it sends elsewhere by the link the ACKs take: they come back
       * once its first window has left its queue */
      const struct CsModelSend *sb = &o->sends[key & 0xffffffff];
      uint32_t to = cs_model_node(o, sb->to), q = host_queue_dir(c, b, a);
      if (q != UINT32_MAX && q == host_queue_dir(c, b, to) && sb->payload > 0) {
        double wb = first_window(c, sb->payload), ptb;
        burst_in_s(c, b, to, 1, &ptb);
        double way = wb * ptb + ack_way_s(c, b, a);
        /* and the sender takes a first window as long from another host
         * in the round, sent at once too: the ACK comes to the sender's
         * last link as that window's last packet starts on it, and waits
         * for it (an all-gather of 10K fp32 on a star of 3: 3.2 us lost
         * to the first round trip at packet level, 2.05 us without this) */
        uint32_t N = o->spec.n_workers + o->spec.n_servers, ai = (uint32_t)(key >> 32);
        const struct CsModelSend *ra = &o->sends[N + ai];
        if (ra->round == rec->round && ra->to != (uint32_t)(key & 0xffffffff) && ra->payload > 0 &&
            first_window(c, ra->payload) >= wb) {
          int h = path_terms(c, b, (uint32_t)c->t->nodes[a].host);
          if (h > 0) way += 8.0 * (double)(c->mss + c->header - c->ack) / c->p_bps[h - 1];
        }
        x->rtt1 = fmax(x->rtt, way);
      }
    }
  }
  g_hash_table_insert(pairs, g_memdup2(&key, sizeof key), x);
  return x;
}

/* What slow start adds to the next message on pair x, whose connection's
 * window then grows, as the flow fidelity has it (slow_start_adds,
 * conn_begins): each round trip its window is under what the message's
 * pace carries in one, and more is left to send, loses rtt - w pt; the
 * window grows by a packet per packet acknowledged, to twice the
 * message's packets at most (Linux's tcp_is_cwnd_limited).  Per-message
 * connections start each message from init_cwnd.  (Idle restarts are
 * left out: the replay's steps follow one another.) */
static double ss_adds(const CsModelCtx *c, RPair *x) {
  if (x->packets == 0) return 0;
  double k = x->packets, w = c->ss_fresh ? c->ss_init : x->cwnd, left = k, extra = 0, rtt = x->rtt1;
  bool plain = x->rtt1 == x->rtt; /* (not a first round trip behind the receiver's window) */
  for (double r = w; r * x->pt < rtt && left > r; r *= 2, rtt = x->rtt) {
    extra += rtt - r * x->pt;
    left -= r;
  }
  x->rtt1 = x->rtt; /* (the connection's first message only) */
  if (c->ss_fresh) {
    if (!plain) return extra;
    x->sec += extra; /* (each next message, this one too, loses as much: counted once for all) */
    x->packets = 0;
    return 0;
  }
  double grown = k > w ? w + k : 2 * k > w ? fmin(w + k, 2 * k) : w;
  x->cwnd = fmin(grown, c->ss_window);
  if (x->cwnd >= k || x->cwnd * x->pt >= x->rtt) x->packets = 0; /* (its window only grows: nothing more to lose) */
  return extra;
}

/* Post a message: the ones taken before the last taken go first, when
 * they are at least half (each kept message moves at most once per
 * message taken). */
static void rpair_post(RPair *x, const double *post, uint32_t V) {
  if (x->consumed >= 64 && 2 * x->consumed >= x->len) {
    uint32_t drop = x->consumed - 1;
    memmove(x->msgs, x->msgs + drop, (x->len - drop) * sizeof *x->msgs);
    x->len -= drop;
    x->consumed -= drop;
  }
  if (x->len == x->cap) {
    x->cap = x->cap ? 2 * x->cap : 8;
    x->msgs = g_renew(RMsg, x->msgs, x->cap);
  }
  RMsg *m = &x->msgs[x->len++];
  for (uint32_t v = 0; v < V; v++) m->post[v] = post[v];
  m->resolved = false;
}

/* The pair a -> b, from lane lp's last (*key_at: its key, or -1) or the table. */
static RPair *rpair_of(GHashTable *pairs, gint64 key, gint64 *key_at, RPair **at) {
  if (*key_at == key) return *at;
  RPair *x = g_hash_table_lookup(pairs, &key);
  if (x) *key_at = key, *at = x;
  return x;
}

/* Replay the plans from time 0 (every worker has contributed); each
 * worker's result time into end[v][] for each of the V plans (variants
 * of one plan that differ only in their compute times: the same steps,
 * messages and waits).  A participant's lanes run side by side (a step
 * that waits for a step of another lane starts once that one is done);
 * its result is ready when its last lane is done. */
static void replay(CsModelOp *o, CsCollPlan *const *plans, uint32_t V, double *const *end) {
  const CsCollPlan *plan = plans[0];
  uint32_t N = plan->n_parts, L = plan->lanes;
  GHashTable *pairs = g_hash_table_new_full(cs_int64_hash, g_int64_equal, g_free, rpair_free);
  uint32_t *cur = g_new0(uint32_t, (size_t)N * L), *len = g_new0(uint32_t, (size_t)N * L);
  uint32_t **at = g_new0(uint32_t *, (size_t)N * L);
  /* per variant, participant and plan step: when it was done */
  double **done_t = L > 1 ? g_new0(double *, (size_t)N * V) : NULL;
  uint32_t **place = L > 1 ? g_new0(uint32_t *, N) : NULL;
  for (uint32_t lp = 0; lp < N * L; lp++) {
    uint32_t p = lp % N;
    at[lp] = cs_coll_plan_lane_steps(plan, p, lp / N, &len[lp]);
    if (L > 1 && lp < N) {
      for (uint32_t v = 0; v < V; v++) done_t[v * N + p] = g_new0(double, cs_coll_plan_len(plan, p) + 1);
      place[p] = cs_coll_plan_places(plan, p);
    }
  }
  bool *sent = g_new0(bool, (size_t)N * L);
  double *t = g_new0(double, (size_t)N * L * V); /* t[lp * V + v] */
  /* per participant: when the ACK for the last message it took has left
   * its queue, and which queue (RPair.ack_qdir) */
  double *ack_end = g_new0(double, (size_t)N * V);
  uint32_t *ack_dir = g_new(uint32_t, N);
  double *ack_s = g_new0(double, N);
  for (uint32_t p = 0; p < N; p++) ack_dir[p] = UINT32_MAX;
  /* per lane: the pairs it last sent on and received from (a ring's are always the same) */
  gint64 *out_key = g_new(gint64, (size_t)N * L), *in_key = g_new(gint64, (size_t)N * L);
  RPair **out_at = g_new0(RPair *, (size_t)N * L), **in_at = g_new0(RPair *, (size_t)N * L);
  for (uint32_t lp = 0; lp < N * L; lp++) out_key[lp] = in_key[lp] = -1;
  /* per lane: the step it is at (a step waiting for its message is
   * looked at again in each pass until it comes), and its compute time
   * in each variant */
  CsCollStep *st_at = g_new(CsCollStep, (size_t)N * L);
  CsTime *st_compute = g_new(CsTime, (size_t)N * L * V);
  uint32_t *st_k = g_new(uint32_t, (size_t)N * L);
  for (uint32_t lp = 0; lp < N * L; lp++) st_k[lp] = UINT32_MAX;
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t lp = 0; lp < N * L; lp++) {
      uint32_t p = lp % N;
      double *tl = &t[(size_t)lp * V];
      /* at most REPLAY_RUN steps a pass: a lane far ahead of its
       * receivers would post messages they take passes later (a ring's
       * last worker, all of its pairs' in the first pass).  The times are
       * the same in any order: each step's wait on what it depends on. */
      for (uint32_t run = 0; run < REPLAY_RUN && cur[lp] < len[lp]; run++) {
        uint32_t k = at[lp] ? at[lp][cur[lp]] : cur[lp];
        if (st_k[lp] != k) {
          st_at[lp] = cs_coll_plan_step(plan, p, k), st_k[lp] = k;
          st_compute[(size_t)lp * V] = st_at[lp].compute;
          for (uint32_t v = 1; v < V; v++) st_compute[(size_t)lp * V + v] = cs_coll_plan_step(plans[v], p, k).compute;
        }
        const CsCollStep *st = &st_at[lp];
        if (st->after && !sent[lp]) {
          uint32_t dep = st->after - 1, dl = cs_coll_plan_step(plan, p, dep).lane;
          if (cur[dl * N + p] <= place[p][dep]) break; /* not done yet */
          for (uint32_t v = 0; v < V; v++) tl[v] = max2(tl[v], done_t[v * N + p][dep]);
        }
        RPair *out = NULL;
        if (st->send_to >= 0) {
          gint64 key = ((gint64)p << 32) | (uint32_t)st->send_to;
          out = rpair_of(pairs, key, &out_key[lp], &out_at[lp]);
          if (!out) out = rpair_new(pairs, o, key);
          if (!sent[lp]) {
            out->scan = cs_coll_plan_next_recv_run(plan, (uint32_t)st->send_to, p, out->scan, &out->same_end) + 1;
            /* behind the ACK its host sent for the last message it took,
             * in the queue this one goes into, when it is still there
             * (the lanes are replayed out of time order: an ACK made after
             * the send delays nothing) */
            double post[VARIANTS];
            for (uint32_t v = 0; v < V; v++) {
              double a = ack_end[p * V + v];
              post[v] = ack_dir[p] == out->qdir && out->qdir != UINT32_MAX && tl[v] < a && tl[v] >= a - ack_s[p] ? a : tl[v];
            }
            rpair_post(out, post, V);
          }
        }
        sent[lp] = true;
        if (st->recv_from >= 0) {
          gint64 key = ((gint64)(uint32_t)st->recv_from << 32) | p;
          RPair *in = rpair_of(pairs, key, &in_key[lp], &in_at[lp]);
          if (!in || in->consumed >= in->len) break; /* not sent yet */
          RMsg *m = &in->msgs[in->consumed];
          if (!m->resolved) {
            double ss = ss_adds(o->ctx, in);
            for (uint32_t v = 0; v < V; v++) {
              double prev = in->consumed ? in->msgs[in->consumed - 1].end[v] : 0;
              m->start[v] = max2(max2(m->post[v], prev), st->rendezvous ? tl[v] : 0);
              m->end[v] = m->start[v] + in->sec + ss;
            }
            m->resolved = true;
          }
          in->consumed++;
          for (uint32_t v = 0; v < V; v++) {
            tl[v] = max2(tl[v], m->end[v]);
            ack_end[p * V + v] = m->end[v] + in->ack_s;
          }
          ack_dir[p] = in->ack_qdir;
          ack_s[p] = in->ack_s;
        }
        if (st->wait_delivered) {
          const RMsg *m = &out->msgs[out->len - 1];
          if (!m->resolved) break; /* its receiver has not reached it */
          for (uint32_t v = 0; v < V; v++) tl[v] = max2(tl[v], m->end[v]);
        }
        for (uint32_t v = 0; v < V; v++) {
          tl[v] += (double)st_compute[(size_t)lp * V + v] * 1e-12;
          if (done_t) done_t[v * N + p][k] = tl[v];
        }
        cur[lp]++;
        sent[lp] = false;
        changed = true;
      }
    }
  }
  for (uint32_t v = 0; v < V; v++)
    for (uint32_t r = 0; r < o->spec.n_workers; r++) {
      end[v][r] = 0;
      for (uint32_t l = 0; l < L; l++) {
        g_assert(cur[l * N + r] == len[l * N + r]); /* a collective's steps always complete */
        end[v][r] = max2(end[v][r], t[(size_t)(l * N + r) * V + v]);
      }
    }
  for (uint32_t lp = 0; lp < N * L; lp++) g_free(at[lp]);
  for (uint32_t p = 0; L > 1 && p < N; p++) {
    for (uint32_t v = 0; v < V; v++) g_free(done_t[v * N + p]);
    g_free(place[p]);
  }
  g_free(done_t);
  g_free(place);
  g_free(at);
  g_free(len);
  g_free(cur);
  g_free(sent);
  g_free(t);
  g_free(ack_end);
  g_free(ack_dir);
  g_free(ack_s);
  g_free(out_key), g_free(in_key), g_free(out_at), g_free(in_at);
  g_free(st_at), g_free(st_compute), g_free(st_k);
  g_hash_table_destroy(pairs);
}

/* ---- the driver ---- */

CsModelOp *cs_model_op_new(CsModelCtx *ctx, const CsCollSpec *spec, GArray *record_steps) {
  CsModelOp *op = g_new0(CsModelOp, 1);
  op->ctx = ctx;
  op->def = cs_collective_def(spec->kind);
  op->spec = *spec;
  op->steps = record_steps;
  op->msgs = g_new(CsModelMsg, (size_t)spec->n_workers * (spec->n_servers + 1) + 1);
  op->each = g_new(double, (size_t)spec->n_workers * (spec->n_servers + 1) + 1);
  op->pair_s = g_hash_table_new_full(cs_int64_hash, g_int64_equal, g_free, g_free);
  op->codec_s = -1;
  /* one worker alone has nothing to exchange, except through servers */
  if (op->def->schedule || spec->n_workers >= 2) op->def->model(op);
  return op;
}

void cs_model_op_free(CsModelOp *op) {
  if (!op) return;
  g_hash_table_destroy(op->pair_s);
  g_free(op->sends);
  g_free(op->msgs);
  g_free(op->each);
  g_free(op->state);
  g_free(op);
}

void cs_model_op_times(CsModelOp *op, bool codec, double *end) {
  CsCollSpec spec = op->spec;
  if (!codec) memset(&spec.cost, 0, sizeof spec.cost);
  CsCollPlan *plan = cs_coll_plan_new(&spec);
  replay(op, &plan, 1, &end);
  cs_coll_plan_free(plan);
}

void cs_model_op_times_both(CsModelOp *op, double *end, double *net) {
  CsCollSpec spec = op->spec;
  memset(&spec.cost, 0, sizeof spec.cost);
  CsCollPlan *plans[2] = {cs_coll_plan_new(&op->spec), cs_coll_plan_new(&spec)};
  double *ends[2] = {end, net};
  replay(op, plans, 2, ends);
  cs_coll_plan_free(plans[0]);
  cs_coll_plan_free(plans[1]);
}

double cs_model_op_codec(CsModelOp *op) {
  if (op->codec_s >= 0) return op->codec_s;
  CsCollPlan *plan = cs_coll_plan_new(&op->spec);
  double sum = 0;
  for (uint32_t r = 0; r < op->spec.n_workers; r++)
    for (uint32_t i = 0, n = cs_coll_plan_len(plan, r); i < n; i++) sum += (double)cs_coll_plan_step(plan, r, i).compute;
  cs_coll_plan_free(plan);
  return op->codec_s = sum * 1e-12 / op->spec.n_workers;
}

void cs_model_op_schedule(CsModelOp *op, const double *start, double *end, double *carry, bool codec,
                          double *server_add) {
  g_assert(op->def->schedule);
  op->def->schedule(op, start, end, carry, codec, server_add);
}

const CsTopology *cs_model_topology(const CsModelOp *op) { return op->ctx->t; }
bool cs_model_on_star(const CsModelOp *op) { return op->ctx->star; }
const char *cs_model_node_name(const CsModelOp *op, uint32_t p) { return op->ctx->t->nodes[cs_model_node(op, p)].name; }
