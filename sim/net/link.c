/* link.c - packets, egress queues, links and forwarding.
 *
 * One event per packet-hop: when a packet is enqueued on an egress port,
 * its transmission start (FIFO behind the packets already there) and end
 * are computed at once, the loss model decides its fate, and its arrival
 * at the far node is scheduled.  Queue occupancy for drop decisions and
 * statistics is recovered exactly by retiring waiting packets whose
 * transmission has started (no event is spent on a departure).
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "net_private.h"

#define NO_DIR UINT32_MAX /* a packet that no link brought: its host sends it */

/* ---- paths ---- */

uint32_t cs_net_add_path(CsNet *net, uint32_t src_node, uint32_t dst_host, uint64_t hash, uint16_t *hops) {
  uint32_t off = net->arena->len;
  int max = (int)net->t->n_nodes;
  g_array_set_size(net->arena, off + (uint32_t)max);
  int h = cs_routes_path(net->routes, src_node, dst_host, hash, &g_array_index(net->arena, uint32_t, off), max);
  g_assert(h > 0 && h <= UINT16_MAX);
  g_array_set_size(net->arena, off + (uint32_t)h);
  *hops = (uint16_t)h;
  return off;
}

/* ---- queues ---- */

static inline void pfc_left(CsNet *net, const Waiting *w);
static void catch_up_node(CsNet *net, uint32_t x, CsTime now);
static const char *dir_name(const CsNet *net, uint32_t di, char *buf, size_t n);

/* Retire waiting packets whose transmission started by `now`, summing the
 * time-integral of the bytes waiting.  `pfc` is a constant where it is
 * inlined: a network without PFC pays nothing for it. */
static inline __attribute__((always_inline)) void catch_up_as(CsNet *net, LinkDir *d, CsTime now, const bool pfc) {
  while (d->q.len > 0) {
    Waiting *w = &CS_RING_FRONT(d->q);
    if (w->start > now) break;
    d->st.queue_integral += (double)d->q_bytes * (double)(w->start - d->q_last);
    d->q_last = w->start;
    d->q_bytes -= w->bytes;
    if (pfc && w->ing) pfc_left(net, w);
    CS_RING_POP(d->q);
  }
  d->st.queue_integral += (double)d->q_bytes * (double)(now - d->q_last);
  d->q_last = now;
}

static void catch_up(CsNet *net, LinkDir *d, CsTime now) {
  if (net->pfc) catch_up_as(net, d, now, true);
  else catch_up_as(net, d, now, false);
}

uint64_t cs_net_host_queue_limit(const CsNet *net, uint32_t port) {
  if (net->host_queue == 0) return 0;
  if (net->host_queue != UINT64_MAX) return net->host_queue;
  /* the default: 100 us of the host's link, at least two packets */
  const CsPort *pt = &net->t->ports[port];
  const LinkDir *d = &net->dirs[2 * pt->link + pt->dir];
  return MAX((uint64_t)d->bandwidth / 80000, 2 * (uint64_t)net->transport.mtu);
}

static inline __attribute__((always_inline)) void queue_push(LinkDir *d, CsTime start, uint32_t bytes, uint32_t ing) {
  CS_RING_PUSH(d->q, 64, (Waiting){start, bytes, ing});
  d->q_bytes += bytes;
  if (d->q_bytes > d->st.queue_max) d->st.queue_max = d->q_bytes;
  if (d->q_bytes > d->iv_qmax) d->iv_qmax = d->q_bytes;
}

/* Serialization end of `bytes` starting at `start` on direction d:
 * ceil(bits of the busy period x 1e12 / bandwidth) picoseconds after the
 * period began, kept as quotient and remainder so that each packet adds
 * its own share with one 64-bit division (a 128-bit one per hop was a
 * call, 1-2 % of a packet run). */
#define SER_FAST_BYTES 2000000u /* x 8e12 < 2^64 */
/* bytes x 8e12 = *q x bw + *r (*q at most CS_TIME_MAX past the fast case) */
static inline void ser_split(uint32_t bytes, uint64_t bw, uint64_t *q, uint64_t *r) {
  if (G_LIKELY(bytes <= SER_FAST_BYTES)) {
    uint64_t num = (uint64_t)bytes * 8000000000000ULL;
    *q = num / bw;
    *r = num % bw;
  } else {
    unsigned __int128 num = (unsigned __int128)bytes * 8000000000000ULL, q128 = num / bw;
    *q = q128 > (unsigned __int128)CS_TIME_MAX ? (uint64_t)CS_TIME_MAX : (uint64_t)q128;
    *r = (uint64_t)(num % bw);
  }
}
static inline CsTime transmit_end(LinkDir *d, CsTime start, uint32_t bytes) {
  if (start > d->busy_until) { /* idle before it: a new busy period */
    d->period_start = start;
    d->period_ps = d->period_rem = 0;
  }
  uint64_t bw = (uint64_t)d->bandwidth, q, r;
  ser_split(bytes, bw, &q, &r);
  d->period_rem += r; /* < 2 x bandwidth, which is below 2^63 */
  if (d->period_rem >= bw) d->period_rem -= bw, q++;
  /* saturates at the end of time (period_ps never passes CS_TIME_MAX, so
   * the difference does not wrap; q alone may pass it on a slow link) */
  d->period_ps = q > (uint64_t)CS_TIME_MAX - d->period_ps ? (uint64_t)CS_TIME_MAX : d->period_ps + q;
  uint64_t t = d->period_ps + (d->period_rem > 0);
  if (G_UNLIKELY(t > (uint64_t)(CS_TIME_MAX - d->period_start))) return CS_TIME_MAX;
  return d->period_start + (CsTime)t;
}

/* RED's early drop, on the EWMA of the bytes waiting (Floyd and Jacobson,
 * 1993, with the idle-time decay). */
static bool red_drop(LinkDir *d, CsTime now, uint32_t bytes) {
  double w = d->red.weight;
  if (d->q.len == 0 && now >= d->busy_until) {
    /* idle: decay as if m small packets had left meanwhile */
    double tx = (double)bytes * 8e12 / (double)d->bandwidth;
    double m = tx > 0 ? (double)(now - d->busy_until) / tx : 0;
    d->red_avg *= pow(1.0 - w, m);
  } else {
    d->red_avg = (1.0 - w) * d->red_avg + w * (double)d->q_bytes;
  }
  double avg = d->red_avg, min = (double)d->red.min, max = (double)d->red.max;
  if (avg < min) {
    d->red_count = 0;
    return false;
  }
  if (avg >= max) {
    d->red_count = 0;
    return true;
  }
  double pb = d->red.max_p * (avg - min) / (max - min);
  double pa = pb / fmax(1e-12, 1.0 - (double)d->red_count * pb);
  d->red_count++;
  if (d->red_count * pb >= 1.0 || cs_rng_uniform(&d->red_rng) < pa) {
    d->red_count = 0;
    return true;
  }
  return false;
}

static void on_pipe(CsEngine *e, void *ctx, uint64_t arg);
static void on_pipe_pfc(CsEngine *e, void *ctx, uint64_t arg);

/* Append to the pipe of direction `di`; the first in an empty pipe gets
 * the direction's event (a held packet gets it when its direction resumes). */
static inline __attribute__((always_inline)) void pipe_push(CsNet *net, uint32_t di, const Packet *pk, CsTime arrive) {
  LinkDir *d = &net->dirs[di];
  CS_RING_PUSH(d->pipe, 64, (InPipe){arrive, *pk});
  /* the line the next push but one writes: a host's pipe holds its whole
   * queue, and at a thousand hosts that line has left the caches since
   * the ring last went round (a prefetch for writing, so the store does
   * not wait for it; a small network's rings stay in the cache) */
  if (net->prefetch) __builtin_prefetch((const char *)&CS_RING_AT(d->pipe, d->pipe.len + 1) + sizeof(InPipe) - 1, 1);
  /* with PFC the event names the pipe's generation as well */
  if (d->pipe.len == 1) {
    if (net->pfc) cs_engine_schedule_at(net->engine, arrive, on_pipe_pfc, net, di | (uint64_t)d->gen << 32);
    else cs_engine_schedule_at(net->engine, arrive, on_pipe, net, di);
  }
}

/* A packet held at a paused direction: it gets its event on resume.  It
 * is at its next hop in the pipe: the hop is counted there, not in *pk
 * before the copy (a packet a host has just built, its fields stored one
 * by one: a wide load of a field stored a moment before waits for the
 * store, and the copy's did, at every packet a pause held). */
static void pipe_push_held(CsNet *net, uint32_t di, const Packet *pk) {
  LinkDir *d = &net->dirs[di];
  CS_RING_PUSH(d->pipe, 64, (InPipe){CS_HELD, *pk});
  CS_RING_BACK(d->pipe).pk.hop++;
}

/* ---- PFC ----
 * A node that forwards (a switch, or a host of a ring) counts, per ingress
 * direction with PFC, the bytes that came in by it and wait in its egress
 * queues (they leave the count when their
 * transmission starts).  At xoff it sends XOFF back over the link; when
 * the frame arrives (the link's latency later) the direction pauses: the
 * packet on the wire finishes, the ones queued behind it are held with
 * their bookings undone.  At xon it sends XON; the direction resumes and
 * its held packets are scheduled from then.  While a node has an XOFF
 * out, each arrival at the far end of one of its links retires what has
 * left that queue by then (no event of its own): XON leaves at most a
 * latency and a packet's serialization after the count fell to xon. */
static void on_pfc_frame(CsEngine *e, void *ctx, uint64_t arg);

static void send_pfc(CsNet *net, uint32_t di, bool xon, CsTime at) {
  LinkDir *d = &net->dirs[di];
  CsTime now = cs_engine_now(net->engine);
  cs_engine_schedule_at(net->engine, cs_time_add(at > now ? at : now, d->latency), on_pfc_frame, net,
                        di | (uint64_t)xon << 32);
}

static G_GNUC_NO_INLINE void pfc_xon(CsNet *net, LinkDir *in, const Waiting *w) {
  in->pause_sent = false;
  net->node_pausing[in->to_node]--;
  send_pfc(net, w->ing - 1, true, w->start);
}

/* Inline (each packet a switch forwards leaves its ingress count once):
 * the XON, once per pause, is the call. */
static inline void pfc_left(CsNet *net, const Waiting *w) {
  LinkDir *in = &net->dirs[w->ing - 1];
  in->ing_bytes -= w->bytes;
  if (G_UNLIKELY(in->pause_sent) && in->ing_bytes <= (uint64_t)in->xon) pfc_xon(net, in, w);
}


/* Every egress queue of node x up to now: its counts exact (a queue is
 * otherwise caught up only when it takes a packet or one of its packets
 * arrives). */
static void catch_up_node(CsNet *net, uint32_t x, CsTime now) {
  const CsNode *n = &net->t->nodes[x];
  for (uint32_t p = n->first_port; p < n->first_port + n->n_ports; p++) {
    const CsPort *pt = &net->t->ports[p];
    catch_up_as(net, &net->dirs[2 * pt->link + pt->dir], now, true);
  }
}

/* ---- PFC deadlock ----
 * A paused direction d (into switch B) is blocked when B has its XOFF out
 * and every egress queue of B holding packets that came by d is paused and
 * blocked in turn: then no departure will ever bring B's count down.  The
 * blocked set is the greatest such set: start from every paused direction
 * and drop those that some running queue will free, until none drops. */
static bool holds_from(const LinkDir *e, uint32_t di) {
  for (uint32_t i = 0; i < e->q.len; i++)
    if (CS_RING_AT(e->q, i).ing == di + 1) return true;
  return false;
}

static void on_deadlock_check(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  CsNet *net = ctx;
  net->deadlock_pending = false;
  if (net->n_paused == 0) return;
  const CsTopology *t = net->t;
  /* counts exact first: a node's idle queue may hold entries long gone
   * (this also bounds how late an XON can be, to this period) */
  for (uint32_t x = 0; x < t->n_nodes; x++)
    if (net->node_pausing[x]) catch_up_node(net, x, cs_engine_now(e));
  if (net->n_paused == 0) {
    net->deadlock_pending = false;
    return;
  }
  uint32_t nd = 2 * t->n_links;
  uint8_t *blocked = g_new0(uint8_t, nd + 1);
  for (uint32_t di = 0; di < nd; di++) blocked[di] = net->dirs[di].paused && net->dirs[di].pause_sent;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t di = 0; di < nd; di++) {
      if (!blocked[di]) continue;
      const CsNode *b = &t->nodes[net->dirs[di].to_node];
      bool freed = false;
      for (uint32_t p = b->first_port; p < b->first_port + b->n_ports && !freed; p++) {
        uint32_t ei = 2 * t->ports[p].link + t->ports[p].dir;
        freed = !blocked[ei] && holds_from(&net->dirs[ei], di);
      }
      if (freed) blocked[di] = 0, changed = true;
    }
  }
  int64_t first = -1;
  for (uint32_t di = 0; di < nd && first < 0; di++)
    if (blocked[di]) first = di;
  if (first < 0) {
    g_free(blocked);
    if (!net->deadlock_pending) {
      net->deadlock_pending = true;
      cs_engine_schedule(e, CS_NET_DEADLOCK_CHECK, on_deadlock_check, net, 0);
    }
    return;
  }
  /* follow the waits from a blocked direction until one repeats: the cycle */
  uint32_t *order = g_new0(uint32_t, nd + 1), *pos = g_new0(uint32_t, nd + 1), len = 0, cur = (uint32_t)first;
  while (!pos[cur]) {
    order[len++] = cur;
    pos[cur] = len;
    const CsNode *b = &t->nodes[net->dirs[cur].to_node];
    uint32_t next = cur;
    for (uint32_t p = b->first_port; p < b->first_port + b->n_ports; p++) {
      uint32_t ei = 2 * t->ports[p].link + t->ports[p].dir;
      if (blocked[ei] && holds_from(&net->dirs[ei], cur)) {
        next = ei;
        break;
      }
    }
    cur = next;
  }
  GString *r = g_string_new(NULL);
  char name[160];
  for (uint32_t i = pos[cur] - 1; i < len; i++)
    g_string_append_printf(r, "%s%s", i + 1 > pos[cur] ? ", " : "", dir_name(net, order[i], name, sizeof name));
  uint32_t total = 0;
  for (uint32_t di = 0; di < nd; di++) total += blocked[di];
  net->stuck = g_strdup_printf("PFC deadlock at %.6f s: link directions paused in a cycle that no departure can break: "
                               "%s (each waits for the next to drain; %u direction%s blocked in all)",
                               (double)cs_engine_now(e) * 1e-12, r->str, total, total == 1 ? "" : "s");
  g_string_free(r, TRUE);
  g_free(order);
  g_free(pos);
  g_free(blocked);
  cs_engine_stop(e);
}

char *cs_net_stuck_report(const CsNet *net) { return g_strdup(net->stuck); }

/* The queued packets of direction d are held from tp on.  A pause holds
 * some 50 packets and a resume releases some 80 (an incast of 200 MB a
 * sender: 33,000 of each): the loops keep the rings and the sums in
 * locals (the stores through a packet's entry would otherwise make the
 * compiler load the direction's counters again at every packet) and book
 * the counters once. */
static void pause_dir(CsNet *net, uint32_t di, CsTime tp) {
  LinkDir *d = &net->dirs[di];
  catch_up(net, d, tp);
  uint32_t k = d->q.len, base = d->pipe.len - k; /* with PFC every queued packet is in the pipe: the last k */
  Waiting *qb = d->q.buf;
  InPipe *pb = d->pipe.buf;
  const uint32_t qh = d->q.head, qm = d->q.cap - 1, ph = d->pipe.head + base, pm = d->pipe.cap - 1;
  const CsTime lat = d->latency;
  const uint32_t own = d->own_hop ? d->own_hop : UINT32_MAX; /* a switch's port: none of its own */
  CsTime busy = 0;
  uint64_t bytes = 0;
  uint32_t last_msg = UINT32_MAX;
  for (uint32_t i = 0; i < k; i++) {
    Waiting *w = &qb[(qh + i) & qm];
    InPipe *x = &pb[(ph + i) & pm];
    const Packet *pk = &x->pk;
    if (pk->kind == PKT_DATA && pk->hop == own && pk->owner != last_msg) { /* sent from this host (or machine) */
      cs_transport_tsq_paused(net, pk->owner, tp, di);
      last_msg = pk->owner;
    }
    busy += x->arrive - lat - w->start; /* its transmission, booked when it was queued, is undone */
    bytes += w->bytes;
    w->start = CS_HELD;
    x->arrive = CS_HELD;
  }
  d->st.busy -= busy;
  d->st.bytes -= bytes;
  d->st.packets -= k;
  net->hops -= k;
  d->held_bytes += bytes;
  d->held_n = k;
  d->resume_base = base > 0 ? CS_RING_AT(d->pipe, base - 1).arrive - d->latency : tp;
  if (d->resume_base < tp) d->resume_base = tp;
  if (k > 0 && base == 0) d->gen++; /* the pending event was for a packet now held */
  d->busy_until = CS_HELD;
  d->paused = true;
  d->paused_at = tp;
  net->n_paused++;
  if (!net->deadlock_pending) {
    net->deadlock_pending = true;
    cs_engine_schedule(net->engine, CS_NET_DEADLOCK_CHECK, on_deadlock_check, net, 0);
  }
}

/* The held packets go back to back from max(tr, resume_base): each
 * starts a busy period of its own (the direction's busy_until stays at
 * the first start until the end, as transmit_end would see it), so its
 * end is its start plus its own rounded serialization - the quotient and
 * remainder of one division, kept while the packets' sizes repeat. */
static void resume_dir(CsNet *net, uint32_t di, CsTime tr) {
  LinkDir *d = &net->dirs[di];
  d->paused = false;
  net->n_paused--;
  d->paused_total += tr - d->paused_at;
  CsTime t = tr > d->resume_base ? tr : d->resume_base;
  uint32_t k = d->held_n, base = d->pipe.len - k;
  Waiting *qb = d->q.buf;
  InPipe *pb = d->pipe.buf;
  const uint32_t qh = d->q.head + (d->q.len - k), qm = d->q.cap - 1, ph = d->pipe.head + base, pm = d->pipe.cap - 1;
  const CsTime lat = d->latency;
  const uint64_t bw = (uint64_t)d->bandwidth;
  const bool trace = net->trace_fn != NULL;
  CsTime start = t, busy = 0;
  uint64_t bytes = 0, q = 0, r = 0, tt = 0; /* tt: the packet's picoseconds (transmit_end's t) */
  uint32_t last_bytes = UINT32_MAX;
  for (uint32_t i = 0; i < k; i++) {
    Waiting *w = &qb[(qh + i) & qm];
    InPipe *x = &pb[(ph + i) & pm];
    uint32_t b = w->bytes;
    if (b != last_bytes) {
      ser_split(b, bw, &q, &r);
      if (q > (uint64_t)CS_TIME_MAX) q = (uint64_t)CS_TIME_MAX;
      tt = q + (r > 0);
      last_bytes = b;
    }
    start = t;
    CsTime end = tt > (uint64_t)(CS_TIME_MAX - t) ? CS_TIME_MAX : t + (CsTime)tt;
    w->start = t;
    busy += end - t;
    bytes += b;
    x->arrive = cs_time_add(end, lat);
    if (G_UNLIKELY(trace)) cs_net_trace(net, CS_PKT_TRANSMIT, &x->pk, di / 2, (int)(di % 2), t);
    t = end;
  }
  /* as transmit_end leaves them: the last packet's period (none held: a new one from t) */
  d->period_start = start;
  d->period_ps = k > 0 ? q : 0;
  d->period_rem = k > 0 ? r : 0;
  d->st.busy += busy;
  d->st.bytes += bytes;
  d->st.packets += k;
  net->hops += k;
  d->busy_until = t;
  d->held_n = 0;
  d->held_bytes = 0;
  /* from a host (or a machine's NIC): its own data packets' small-queue entries learn their starts */
  if (k > 0 && d->own_hop) cs_transport_tsq_resumed(net, di, k);
  if (k > 0 && base == 0)
    cs_engine_schedule_at(net->engine, CS_RING_FRONT(d->pipe).arrive, on_pipe_pfc, net, di | (uint64_t)d->gen << 32);
  cs_transport_wake(net);
}

static void on_pfc_frame(CsEngine *e, void *ctx, uint64_t arg) {
  CsNet *net = ctx;
  uint32_t di = (uint32_t)arg;
  LinkDir *d = &net->dirs[di];
  bool xon = (arg >> 32) != 0;
  if (xon == !d->paused) return; /* frames alternate; a late XOFF after its XON cannot happen, but stay safe */
  if (xon) {
    resume_dir(net, di, cs_engine_now(e));
  } else {
    d->pause_frames++;
    pause_dir(net, di, cs_engine_now(e));
  }
}

/* The direction `in` a packet came in by (NO_DIR: sent by its host), + 1,
 * when it has PFC (the packet is forwarded: by a switch, or by a host of
 * a ring); 0 otherwise.  The arrival names it: the packet's path and the
 * topology's ports are not read again. */
static inline uint32_t pfc_ingress(const CsNet *net, uint32_t in) {
  return in != NO_DIR && net->dirs[in].pfc ? in + 1 : 0;
}

/* ecn {kmin, kmax, pmax}: mark with RED's probability on the bytes the
 * packet finds queued ahead of it.  The draw between kmin and kmax is the
 * call; below and above (an incast's switch port sits past kmax) the
 * test is inline. */
static __attribute__((noinline)) bool ecn_curve_draw(LinkDir *d, uint64_t q) {
  double p = d->ecn_pmax * (double)(q - (uint64_t)d->ecn_kmin) / (double)(d->ecn_kmax - d->ecn_kmin);
  return cs_rng_uniform(&d->red_rng) < p;
}

static inline bool ecn_curve_mark(LinkDir *d) {
  uint64_t q = d->q_bytes;
  if (q <= (uint64_t)d->ecn_kmin) return false;
  if (q > (uint64_t)d->ecn_kmax) return true;
  return ecn_curve_draw(d, q);
}

/* Picoseconds that `bytes` take at `bps`, rounded up. */
static inline CsTime ser_ps(uint32_t bytes, int64_t bps) {
  uint64_t q, r;
  ser_split(bytes, (uint64_t)bps, &q, &r);
  return (CsTime)(q + (r > 0));
}

/* Cut-through: when the switch starts to send on d the packet of `bytes`
 * whose last bit has just come in (now) by direction `in`: once its first
 * cut_through bytes had arrived, and not so early that it would end
 * before its last bit is in (an egress faster than the ingress waits),
 * and not before d is free.  Out of line: store-and-forward networks only
 * test d->odd. */
static G_GNUC_NO_INLINE CsTime cut_start(const CsNet *net, const LinkDir *d, uint32_t in, uint32_t bytes, CsTime now) {
  int64_t bw_in = net->dirs[in].bandwidth;
  uint32_t cut = MIN(net->t->cut_through, bytes);
  CsTime early = MIN(ser_ps(bytes, bw_in) - ser_ps(cut, bw_in), ser_ps(bytes, d->bandwidth));
  CsTime ready = early < now ? now - early : 0;
  return ready > d->busy_until ? ready : d->busy_until;
}

/* The start of packet *pk on d, forwarded (in by direction `in`), where
 * d->odd: cut through, and at a machine's NIC the small-queue entry of a
 * GPU's data packet learns it (CS_HELD while d is paused; a packet that
 * d then drops leaves its entry that start: d's queue lasts that long).
 * Out of line, as cut_start. */
static G_GNUC_NO_INLINE CsTime odd_start(CsNet *net, const LinkDir *d, uint32_t in, Packet *pk, CsTime now,
                                         CsTime start) {
  if (d->odd & ODD_CUT) start = cut_start(net, d, in, pk->bytes, now);
  if ((d->odd & ODD_NIC) && pk->kind == PKT_DATA && pk->hop == 1) { /* (one of its GPUs': not passing through) */
    pk->flags |= F_NICQ;
    cs_transport_nic_queued(net, pk, (uint32_t)(d - net->dirs), start);
  }
  return start;
}

/* Packet *pk is at a node, in by direction `in` (NO_DIR: from its host), and leaves by port `port`. */
static inline __attribute__((always_inline)) CsTime forward_as(CsNet *net, Packet *pk, uint32_t port, uint32_t in_dir,
                                                               const bool pfc) {
  CsTime now = cs_engine_now(net->engine);
  const CsPort *pt = &net->t->ports[port];
  LinkDir *d = &net->dirs[2 * pt->link + pt->dir];
  catch_up_as(net, d, now, pfc);
  CsTime start = now > d->busy_until ? now : d->busy_until;
  /* a cut-through switch may have begun while the packet came in: a
   * start before now, where its egress was free (a host's own packets
   * never: in_dir is a constant NO_DIR where cs_net_inject inlines this) */
  if (in_dir != NO_DIR && G_UNLIKELY(d->odd)) start = odd_start(net, d, in_dir, pk, now, start);
  if (start > now) { /* it would wait: does it fit, and what do RED and ECN say? */
    bool drop = false;
    uint32_t ing = pfc ? pfc_ingress(net, in_dir) : 0;
    LinkDir *in = ing ? &net->dirs[ing - 1] : NULL;
    /* roce: a NIC never drops what its own queue pairs give it (they wait
     * in host memory until the port takes them; the transport's host
     * queue limit keeps that short), whatever the host port's buffer or
     * queue discipline */
    bool nic = (in_dir == NO_DIR || (d->own_hop == 2 && pk->hop == 1)) && net->roce && pk->kind != PKT_BG;
    if (in) { /* lossless: the ingress port's buffer, which PFC keeps from filling */
      if (in->ing_bytes + pk->bytes > (uint64_t)in->ing_cap) drop = true, net->pfc_overflows += pk->bytes;
    } else if (d->bounded && !nic)
      drop = d->cap_pkt ? d->q.len + 1 > (uint64_t)d->cap : d->q_bytes + pk->bytes > (uint64_t)d->cap;
    /* a host's own queue holds what its transport lets in (host_queue);
     * open-loop background packets find it full at txqueuelen */
    else if (pk->kind == PKT_BG) drop = d->q.len >= CS_NET_HOST_BG_PACKETS;
    if (!drop && !in && !nic && d->queue == CS_QUEUE_RED) drop = red_drop(d, now, pk->bytes);
    if (drop) {
      d->st.drops++;
      d->drop_bytes += pk->bytes;
      net->counts[pk->kind].dropped++;
      if (G_UNLIKELY(net->trace_fn)) cs_net_trace(net, CS_PKT_DROP, pk, pt->link, pt->dir, now);
      cs_net_packet_lost(net, pk);
      return now;
    }
    if (!nic && d->queue == CS_QUEUE_ECN && (pk->flags & F_ECT) &&
        (d->ecn_kmax > 0 ? ecn_curve_mark(d)
                         : d->ecn_k_pkt ? d->q.len + 1 > (uint64_t)d->ecn_k : d->q_bytes + pk->bytes > (uint64_t)d->ecn_k)) {
      pk->flags |= F_CE;
      d->st.marks++;
      net->marks++;
    }
    queue_push(d, start, pk->bytes, ing);
    if (in) {
      in->ing_bytes += pk->bytes;
      if (!in->pause_sent && in->ing_bytes >= (uint64_t)in->xoff) catch_up_node(net, d->from_node, now);
      if (!in->pause_sent && in->ing_bytes >= (uint64_t)in->xoff) {
        in->pause_sent = true;
        net->node_pausing[d->from_node]++;
        send_pfc(net, ing - 1, false, now);
      }
    }
    if (pfc && d->paused) { /* held until the direction resumes; its loss is decided on arrival */
      d->held_n++;
      d->held_bytes += pk->bytes;
      if (G_UNLIKELY(net->trace_fn)) cs_net_trace(net, CS_PKT_ENQUEUE, pk, pt->link, pt->dir, now);
      pipe_push_held(net, 2 * pt->link + pt->dir, pk); /* (at its next hop there) */
      return CS_HELD;
    }
  } else if (d->queue == CS_QUEUE_RED) {
    red_drop(d, now, pk->bytes); /* keeps the average decaying; an idle link never drops */
  }
  CsTime end = transmit_end(d, start, pk->bytes);
  d->busy_until = end;
  d->st.busy += end - start;
  d->st.bytes += pk->bytes;
  d->st.packets++;
  net->hops++;
  if (G_UNLIKELY(net->trace_fn)) {
    /* cut through, it reached the queue when it began to leave */
    cs_net_trace(net, CS_PKT_ENQUEUE, pk, pt->link, pt->dir, start < now ? start : now);
    cs_net_trace(net, CS_PKT_TRANSMIT, pk, pt->link, pt->dir, start);
  }
  if (!(pfc && d->pfc) && d->lossy && cs_loss_next(&d->loss)) {
    d->st.losses++;
    d->loss_bytes += pk->bytes;
    net->counts[pk->kind].lost++;
    if (G_UNLIKELY(net->trace_fn)) cs_net_trace(net, CS_PKT_LOSS, pk, pt->link, pt->dir, end);
    cs_net_packet_lost(net, pk);
    return start;
  }
  pk->hop++;
  pipe_push(net, 2 * pt->link + pt->dir, pk, cs_time_add(end, d->latency));
  return start;
}

static CsTime forward(CsNet *net, Packet *pk, uint32_t port, uint32_t in_dir) {
  return net->pfc ? forward_as(net, pk, port, in_dir, true) : forward_as(net, pk, port, in_dir, false);
}

/* Packet *pk has arrived at node `node` by direction `in`, the far end of
 * its last link (`pfc`: the network's, a constant where inlined). */
static inline __attribute__((always_inline)) void arrive_as(CsNet *net, Packet *pk, uint32_t node, uint32_t in,
                                                            const bool pfc) {
  if (pk->hop == pk->hops) {
    net->counts[pk->kind].delivered++;
    net->node_delivered[node] += pk->bytes;
    if (G_UNLIKELY(net->trace_fn))
      cs_net_trace(net, pk->kind == PKT_ACK ? CS_PKT_ACK : CS_PKT_DELIVER, pk, UINT32_MAX, 0, cs_engine_now(net->engine));
    net->deliver[pk->kind](net, pk);
    return;
  }
  forward_as(net, pk, g_array_index(net->arena, uint32_t, pk->path + pk->hop), in, pfc);
}


/* PFC links decide loss on arrival (a pause moves a transmission). */
static G_GNUC_NO_INLINE bool pfc_lost(CsNet *net, uint32_t di, const Packet *pk) {
  LinkDir *d = &net->dirs[di];
  if (!cs_loss_next(&d->loss)) return false;
  d->st.losses++;
  d->loss_bytes += pk->bytes;
  net->counts[pk->kind].lost++;
  if (G_UNLIKELY(net->trace_fn)) cs_net_trace(net, CS_PKT_LOSS, pk, di / 2, (int)(di % 2), cs_engine_now(net->engine));
  cs_net_packet_lost(net, pk);
  return true;
}

/* A pipe in a network with PFC (its own event function, the arrival and
 * the next hop inlined for PFC: the generic one's call and frame were a
 * tenth of a roce run's hop): its event may be stale (a pause held the
 * packet it was for; the argument is the pipe's generation), the next
 * packet may be held, a node with an XOFF out retires what has left its
 * queue (its counts fall), and loss on a PFC link is drawn on arrival. */
static void on_pipe_pfc(CsEngine *e, void *ctx, uint64_t arg) {
  CsNet *net = ctx;
  uint32_t di = (uint32_t)arg;
  LinkDir *d = &net->dirs[di];
  if ((uint32_t)(arg >> 32) != d->gen) return;
  Packet pk = CS_RING_FRONT(d->pipe).pk; /* a copy: its slot goes back to the ring, and the hop changes it */
  CS_RING_POP(d->pipe);
  if (d->pipe.len > 0 && CS_RING_FRONT(d->pipe).arrive != CS_HELD)
    cs_engine_schedule_at(e, CS_RING_FRONT(d->pipe).arrive, on_pipe_pfc, net, di | (uint64_t)d->gen << 32);
  if (net->node_pausing[d->from_node]) {
    /* an empty queue (an ACK's, mostly) has nothing to retire and adds
     * 0 x its time to the integral, which leaves it as it is */
    if (d->q.len > 0) catch_up_as(net, d, cs_engine_now(e), true);
    else d->q_last = cs_engine_now(e);
  }
  if (d->pfc_loss && pfc_lost(net, di, &pk)) return;
  d->out_bytes += pk.bytes;
  arrive_as(net, &pk, d->to_node, di, true);
}

/* Ask for a pipe entry (48 bytes: it may straddle two lines). */
static inline void prefetch_entry(const InPipe *p) {
  __builtin_prefetch(p);
  __builtin_prefetch((const char *)p + sizeof *p - 1);
}

/* A pipe in a network without PFC: the argument names its direction. */
static void on_pipe(CsEngine *e, void *ctx, uint64_t arg) {
  CsNet *net = ctx;
  uint32_t di = (uint32_t)arg;
  LinkDir *d = &net->dirs[di];
  Packet pk = CS_RING_FRONT(d->pipe).pk; /* a copy: its slot goes back to the ring, and the hop changes it */
  CS_RING_POP(d->pipe);
  /* a network larger than the cache: the packet the next event takes
   * from its pipe, asked for while this one runs (its direction's line
   * is read for the address; prefetching that line alone gained nothing) */
  if (net->prefetch) {
    uint64_t next = cs_engine_peek_arg(e, on_pipe);
    if (next != UINT64_MAX) prefetch_entry(&CS_RING_FRONT(net->dirs[(uint32_t)next].pipe));
    /* this pipe's packet after next, two of its arrivals ahead: at a
     * thousand hosts the pipes' queued packets are megabytes, read where
     * they were written long before */
    if (d->pipe.len > 2) prefetch_entry(&CS_RING_AT(d->pipe, 2));
  }
  if (d->pipe.len > 0) cs_engine_schedule_at(e, CS_RING_FRONT(d->pipe).arrive, on_pipe, net, di);
  d->out_bytes += pk.bytes;
  arrive_as(net, &pk, d->to_node, di, false);
}

CsTime cs_net_inject(CsNet *net, Packet *pk) {
  uint32_t port = g_array_index(net->arena, uint32_t, pk->path);
  const CsPort *pt = &net->t->ports[port];
  const CsLink *l = &net->t->links[pt->link];
  net->node_injected[pt->dir ? l->b : l->a] += pk->bytes;
  return forward(net, pk, port, NO_DIR);
}


/* ---- link directions ---- */

/* A hop reads and writes its direction's first three lines only: the
 * counters it updates share the third with the flags (net_private.h). */
_Static_assert(offsetof(LinkDir, out_bytes) >= 128 &&
                   offsetof(LinkDir, st) + offsetof(CsLinkStats, queue_integral) + sizeof(double) <= 192,
               "a hop's counters in its direction's third line");

void cs_link_init(CsNet *net) {
  const CsTopology *t = net->t;
  net->dirs = g_aligned_alloc0(2 * (size_t)t->n_links + 1, sizeof(LinkDir), _Alignof(LinkDir));
  net->node_pausing = g_new0(uint32_t, t->n_nodes + 1);
  size_t dir_bytes = 2 * (size_t)t->n_links * sizeof(LinkDir), l2 = (size_t)1 << 20;
  /* from 128 hosts on a star (164 KB of directions): there the pipes
   * hold some 32,000 packets, past the cache, and the prefetches gained
   * 11 % (farm-bench -n 16); at 64 hosts and on star16 they cost 7-9 % */
  net->prefetch = dir_bytes >= l2 / 8;
  /* topology.gpus_per_host: the machines, the switches their GPUs hang
   * on, and how many links each has to the network (1 + its NICs) */
  uint32_t *machine = g_new0(uint32_t, t->n_nodes + 1);
  for (uint32_t l = 0; t->gpus_per_host > 1 && l < t->n_links; l++) {
    const CsLink *k = &t->links[l];
    if (t->nodes[k->a].role == CS_ROLE_WORKER && t->nodes[k->b].role == CS_ROLE_SWITCH) machine[k->b] = 1;
    if (t->nodes[k->b].role == CS_ROLE_WORKER && t->nodes[k->a].role == CS_ROLE_SWITCH) machine[k->a] = 1;
  }
  for (uint32_t l = 0; t->gpus_per_host > 1 && l < t->n_links; l++) {
    const CsLink *k = &t->links[l];
    if (machine[k->a] && t->nodes[k->b].role != CS_ROLE_WORKER) machine[k->a]++;
    if (machine[k->b] && t->nodes[k->a].role != CS_ROLE_WORKER) machine[k->b]++;
  }
  for (uint32_t l = 0; l < t->n_links; l++) {
    const CsLink *link = &t->links[l];
    for (int dir = 0; dir < 2; dir++) {
      LinkDir *d = &net->dirs[2 * l + dir];
      uint32_t from = dir ? link->b : link->a;
      d->bandwidth = link->spec.bandwidth;
      d->latency = link->spec.latency;
      d->to_node = dir ? link->a : link->b;
      d->from_node = from;
      if (link->spec.pfc_xoff > 0) {
        d->pfc = net->pfc = true;
        d->xoff = link->spec.pfc_xoff;
        d->xon = link->spec.pfc_xon;
        d->ing_cap = link->spec.buffer; /* the receiving port's buffer (bytes: checked at load) */
      }
      /* a switch's port holds `buffer`; a host's (and a machine's NIC,
       * its GPUs' host queue) is unbounded unless the link sets its own
       * buffer (SPEC 3.1) */
      d->own_hop = t->nodes[from].role != CS_ROLE_SWITCH                           ? 1
                   : machine[from] && t->nodes[d->to_node].role != CS_ROLE_WORKER ? 2
                                                                                   : 0;
      /* (a machine of several NICs, as on a ring, passes other machines'
       * packets on: its NICs are switch ports for them, bounded) */
      d->bounded = d->own_hop == 0 || (d->own_hop == 2 && machine[from] > 2) || link->spec.buffer_set;
      d->cap = link->spec.buffer;
      d->cap_pkt = link->spec.buffer_pkt;
      d->odd = (cs_dir_cut_bytes(t, 2 * l + (uint32_t)dir) > 0 ? ODD_CUT : 0) | (d->own_hop == 2 ? ODD_NIC : 0);
      d->queue = link->spec.queue;
      if (link->spec.ecn_kmax > 0) d->queue = CS_QUEUE_ECN; /* ecn {kmin, kmax, pmax}: marks on its curve */
      d->red = link->spec.red;
      d->ecn_k = link->spec.ecn_threshold;
      d->ecn_k_pkt = link->spec.ecn_threshold_pkt;
      d->ecn_kmin = link->spec.ecn_kmin;
      d->ecn_kmax = link->spec.ecn_kmax;
      d->ecn_pmax = link->spec.ecn_pmax;
      /* each direction's streams come from the link's identity: its two
       * ends' names would do, their node numbers are stable for a file */
      uint64_t id = cs_rng_stream_id("link-loss", ((uint64_t)from << 32) | d->to_node, l);
      cs_loss_init(&d->loss, &link->spec.loss, net->seed, id);
      d->lossy = d->loss.model != CS_LOSS_NONE;
      d->pfc_loss = d->pfc && d->lossy;
      cs_rng_init(&d->red_rng, net->seed, cs_rng_stream_id("link-red", ((uint64_t)from << 32) | d->to_node, l));
    }
  }
  g_free(machine);
}

static bool internal_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool internal_error(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL, "internal error: %s (please report this as a bug)",
              msg);
  return false;
}

static const char *dir_name(const CsNet *net, uint32_t di, char *buf, size_t n) {
  const CsLink *l = &net->t->links[di / 2];
  uint32_t a = di % 2 ? l->b : l->a, b = di % 2 ? l->a : l->b;
  snprintf(buf, n, "%s->%s", net->t->nodes[a].name, net->t->nodes[b].name);
  return buf;
}

/* Bytes: on every link direction, those transmitted were lost, arrived or
 * are still on the wire; at every node, those that came in or were sent
 * from it left it, were dropped at its ports or were delivered to it. */
static bool check_bytes(const CsNet *net, GError **error) {
  const CsTopology *t = net->t;
  char name[160];
  for (uint32_t di = 0; di < 2 * t->n_links; di++) {
    const LinkDir *d = &net->dirs[di];
    uint64_t wire = 0;
    for (uint32_t i = 0; i < d->pipe.len; i++) wire += CS_RING_AT(d->pipe, i).pk.bytes;
    if (d->st.bytes + d->held_bytes != d->loss_bytes + d->out_bytes + wire)
      return internal_error(error,
                            "link %s: bytes do not add up: transmitted %" G_GUINT64_FORMAT " != lost %" G_GUINT64_FORMAT
                            " + arrived %" G_GUINT64_FORMAT " + on the wire %" G_GUINT64_FORMAT,
                            dir_name(net, di, name, sizeof name), d->st.bytes, d->loss_bytes, d->out_bytes, wire);
  }
  for (uint32_t n = 0; n < t->n_nodes; n++) {
    const CsNode *node = &t->nodes[n];
    uint64_t in = net->node_injected[n], out = net->node_delivered[n];
    for (uint32_t p = node->first_port; p < node->first_port + node->n_ports; p++) {
      const CsPort *pt = &t->ports[p];
      const LinkDir *o = &net->dirs[2 * pt->link + pt->dir], *i = &net->dirs[2 * pt->link + (1 - pt->dir)];
      in += i->out_bytes;
      out += o->st.bytes + o->drop_bytes + o->held_bytes;
    }
    if (in != out)
      return internal_error(error,
                            "node %s: bytes do not add up: in %" G_GUINT64_FORMAT " (sent from it or arrived) != out %" G_GUINT64_FORMAT
                            " (forwarded, dropped or delivered)",
                            node->name, in, out);
  }
  return true;
}

/* Messages: none both delivered and abandoned, a delivered one received
 * whole, and one callback for each that finished. */
static bool check_messages(const CsNet *net, GError **error) {
  uint64_t finished = net->released; /* slots let go: each of a message done */
  for (uint32_t m = 0; m < net->n_msgs; m++) {
    const Message *f = &net->msgs[m];
    if (!f->in_use) continue;
    if (f->delivered && f->failed)
      return internal_error(error, "message %u is both delivered and abandoned", f->id);
    if (f->delivered && f->rcv_nxt != f->n)
      return internal_error(error, "message %u is delivered with %u of its %u packets", f->id, f->rcv_nxt, f->n);
    finished += f->delivered || f->failed;
  }
  if (finished != net->notified)
    return internal_error(error, "%" G_GUINT64_FORMAT " messages finished but %" G_GUINT64_FORMAT " deliveries were reported",
                          finished, net->notified);
  return true;
}

static bool check_packets(const CsNet *net, GError **error);

bool cs_net_check_accounting(const CsNet *net, GError **error) {
  if (net->pfc_overflows)
    return internal_error(error, "%" G_GUINT64_FORMAT " bytes came in by PFC ports past their buffer and were dropped: "
                          "the headroom check should have made that impossible", net->pfc_overflows);
  return check_packets(net, error) && check_bytes(net, error) && check_messages(net, error);
}

uint64_t cs_net_packets_in_flight(const CsNet *net) {
  uint64_t n = 0;
  for (int k = 0; k < PKT_CLASSES; k++) n += net->counts[k].in_flight;
  return n;
}

static bool check_packets(const CsNet *net, GError **error) {
  static const char *names[] = {"data", "ack", "background"};
  uint64_t alive = 0;
  for (int k = 0; k < PKT_CLASSES; k++) {
    const CsPacketCounts *c = &net->counts[k];
    alive += c->in_flight;
    if (c->sent != c->delivered + c->dropped + c->lost + c->in_flight)
      return internal_error(error,
                            "%s packets do not add up: sent %" G_GUINT64_FORMAT " != delivered %" G_GUINT64_FORMAT
                            " + dropped %" G_GUINT64_FORMAT " + lost %" G_GUINT64_FORMAT " + in flight %" G_GUINT64_FORMAT,
                            names[k], c->sent, c->delivered, c->dropped, c->lost, c->in_flight);
  }
  uint64_t drops = 0, losses = 0, packets = 0;
  for (uint32_t i = 0; i < 2 * net->t->n_links; i++) {
    drops += net->dirs[i].st.drops;
    losses += net->dirs[i].st.losses;
    packets += net->dirs[i].st.packets;
  }
  uint64_t dropped = 0, lost = 0;
  for (int k = 0; k < PKT_CLASSES; k++) dropped += net->counts[k].dropped, lost += net->counts[k].lost;
  if (alive > net->alive_max || drops != dropped || losses != lost || packets != net->hops)
    return internal_error(error,
                          "packet or link counters disagree (%" G_GUINT64_FORMAT " packets alive, at most %" G_GUINT64_FORMAT
                          " ever; link drops %" G_GUINT64_FORMAT " vs %" G_GUINT64_FORMAT
                          "; link losses %" G_GUINT64_FORMAT " vs %" G_GUINT64_FORMAT ")",
                          alive, net->alive_max, drops, dropped, losses, lost);
  return true;
}

/* Every live data packet and ACK names a message slot in use, and each
 * slot counts exactly the packets that name it (its `refs`: a slot is
 * reused when they reach 0). */
static bool check_owners(const CsNet *net, GError **error) {
  uint32_t *named = g_new0(uint32_t, net->n_msgs + 1);
  bool ok = true;
  for (uint32_t di = 0; ok && di < 2 * net->t->n_links; di++) /* every live packet is on a wire (cs_net_check_state) */
    for (uint32_t i = 0; ok && i < net->dirs[di].pipe.len; i++) {
      const Packet *pk = &CS_RING_AT(net->dirs[di].pipe, i).pk;
      if (pk->kind == PKT_BG) continue;
      if (pk->owner >= net->n_msgs || !net->msgs[pk->owner].in_use)
        ok = internal_error(error, "a live packet names message slot %u, which is free", pk->owner);
      else
        named[pk->owner]++;
    }
  for (uint32_t m = 0; ok && m < net->n_msgs; m++)
    if (named[m] != net->msgs[m].refs)
      ok = internal_error(error, "message %u is named by %u live packets but counts %u", net->msgs[m].id, named[m],
                          net->msgs[m].refs);
  g_free(named);
  return ok;
}

bool cs_net_check_state(const CsNet *net, GError **error) {
  const CsTopology *t = net->t;
  char name[160];
  CsTime now = cs_engine_now(net->engine);
  uint64_t on_wires = 0;
  for (uint32_t di = 0; di < 2 * t->n_links; di++) {
    const LinkDir *d = &net->dirs[di];
    uint64_t bytes = 0;
    CsTime prev = d->q_last;
    for (uint32_t i = 0; i < d->q.len; i++) {
      const Waiting *w = &CS_RING_AT(d->q, i);
      if (w->start < prev)
        return internal_error(error, "link %s: queue entry %u starts at %" G_GINT64_FORMAT " ps, before %" G_GINT64_FORMAT,
                              dir_name(net, di, name, sizeof name), i, (gint64)w->start, (gint64)prev);
      prev = w->start;
      bytes += w->bytes;
    }
    if (bytes != d->q_bytes)
      return internal_error(error, "link %s: the queue holds %" G_GUINT64_FORMAT " bytes but counts %" G_GUINT64_FORMAT,
                            dir_name(net, di, name, sizeof name), bytes, d->q_bytes);
    if (d->q.len > 0 && CS_RING_BACK(d->q).start > d->busy_until)
      return internal_error(error, "link %s: a waiting packet starts after the link's busy period ends",
                            dir_name(net, di, name, sizeof name));
    prev = now;
    for (uint32_t i = 0; i < d->pipe.len; i++) {
      const InPipe *x = &CS_RING_AT(d->pipe, i);
      if (x->arrive < prev)
        return internal_error(error, "link %s: pipe entry %u arrives at %" G_GINT64_FORMAT " ps, before %" G_GINT64_FORMAT,
                              dir_name(net, di, name, sizeof name), i, (gint64)x->arrive, (gint64)prev);
      prev = x->arrive;
      if (x->pk.kind >= PKT_CLASSES || x->pk.hop > x->pk.hops)
        return internal_error(error, "link %s: pipe entry %u is not a live packet", dir_name(net, di, name, sizeof name), i);
    }
    on_wires += d->pipe.len;
  }
  uint64_t alive = cs_net_packets_in_flight(net);
  if (alive != on_wires)
    return internal_error(error, "%" G_GUINT64_FORMAT " packets are in flight but %" G_GUINT64_FORMAT " are on the wires",
                          alive, on_wires);
  return check_packets(net, error) && check_bytes(net, error) && check_owners(net, error);
}

void cs_net_set_packet_trace(CsNet *net, CsPacketTraceFn fn, void *ctx) {
  net->trace_fn = fn;
  net->trace_ctx = ctx;
}

void cs_net_trace(CsNet *net, CsPacketEvent ev, const Packet *pk, uint32_t link, int dir, CsTime time) {
  CsPacketTrace t = {time, ev, link, dir, 0, 0, pk->kind == PKT_BG, pk->owner, pk->seq, pk->bytes, 0};
  if (pk->kind == PKT_BG) {
    t.src_host = (uint32_t)net->t->nodes[net->bg[pk->owner].src_node].host;
    t.dst_host = (uint32_t)net->t->nodes[cs_topology_find(net->t, net->bg[pk->owner].spec.dst)].host;
  } else {
    const Message *m = &net->msgs[pk->owner];
    t.owner = m->id;
    t.src_host = pk->kind == PKT_ACK ? m->dst : m->src;
    t.dst_host = pk->kind == PKT_ACK ? m->src : m->dst;
  }
  if (link != UINT32_MAX) t.queue_bytes = net->dirs[2 * link + (uint32_t)dir].q_bytes;
  net->trace_fn(net->trace_ctx, &t);
}

void cs_net_sample_links(CsNet *net, CsTime t0, CsLinkSampleFn fn, void *ctx) {
  CsTime now = cs_engine_now(net->engine);
  double span = (double)(now - t0);
  for (uint32_t i = 0; i < 2 * net->t->n_links; i++) {
    LinkDir *d = &net->dirs[i];
    /* with PFC, retiring waiting packets moves counts and may send XON: the
     * sampler only looks, so that tracing changes no result */
    uint64_t q_bytes = d->q_bytes;
    double integral = d->st.queue_integral;
    if (net->pfc) {
      CsTime last = d->q_last;
      for (uint32_t k = 0; k < d->q.len && CS_RING_AT(d->q, k).start <= now; k++) {
        const Waiting *w = &CS_RING_AT(d->q, k);
        integral += (double)q_bytes * (double)(w->start - last);
        last = w->start;
        q_bytes -= w->bytes;
      }
      integral += (double)q_bytes * (double)(now - last);
    } else {
      catch_up(net, d, now);
      q_bytes = d->q_bytes;
      integral = d->st.queue_integral;
    }
    uint64_t started = d->st.bytes - (q_bytes - d->held_bytes); /* waiting ones have not started */
    CsTime paused = d->paused_total + (d->paused ? now - d->paused_at : 0);
    CsLinkSample s = {started - d->iv_started, 0, 0, d->iv_qmax, d->st.drops - d->iv_drops,
                      d->st.losses - d->iv_losses, d->st.marks - d->iv_marks, (double)(paused - d->iv_paused) * 1e-12};
    d->iv_paused = paused;
    if (span > 0) {
      s.utilization = (double)s.bytes * 8e12 / (double)d->bandwidth / span;
      if (s.utilization > 1.0) s.utilization = 1.0;
      s.queue_mean = (integral - d->iv_integral) / span;
    }
    d->iv_started = started;
    d->iv_drops = d->st.drops, d->iv_losses = d->st.losses, d->iv_marks = d->st.marks;
    d->iv_integral = integral;
    d->iv_qmax = q_bytes;
    if (s.bytes || s.queue_max || s.drops || s.losses || s.marks || s.paused_s > 0) fn(ctx, i / 2, (int)(i % 2), &s);
  }
}

CsLinkStats cs_net_link_stats(CsNet *net, uint32_t link, int dir) {
  LinkDir *d = &net->dirs[2 * link + dir];
  CsTime now = cs_engine_now(net->engine);
  catch_up(net, d, now);
  CsLinkStats st = d->st;
  /* transmissions are booked when scheduled: take out what has not been
   * sent by now, so utilization never passes 1 when a run stops early
   * (held packets are not booked) */
  st.bytes -= d->q_bytes - d->held_bytes;
  st.packets -= d->q.len - d->held_n;
  CsTime busy_until = d->paused ? d->resume_base : d->busy_until;
  if (busy_until > now) st.busy -= busy_until - now;
  st.paused = d->paused_total + (d->paused ? now - d->paused_at : 0);
  st.pause_frames = d->pause_frames;
  return st;
}

/* ---- hybrid fidelity: fast-forwarding (hybrid.c) ---- */

void cs_link_settle(CsNet *net, CsTime now) {
  for (uint32_t di = 0; di < 2 * net->t->n_links; di++) catch_up(net, &net->dirs[di], now);
}

/* Every instant of a busy direction moves (`now`: before the jump), but
 * for two that stay so that the skipped time counts: q_last (the queue's
 * integral covers the jump with what waits, as the state stood) and
 * paused_at (a paused direction stays paused). */
void cs_link_shift(CsNet *net, CsTime delta, CsTime now) {
  for (uint32_t di = 0; di < 2 * net->t->n_links; di++) {
    LinkDir *d = &net->dirs[di];
    /* an idle direction sat through the jump: RED's decay sees it idle */
    if (d->q.len == 0 && d->pipe.len == 0 && d->busy_until <= now) continue;
    d->period_start += delta;
    d->busy_until += delta;
    for (uint32_t i = 0; i < d->q.len; i++) {
      Waiting *w = &CS_RING_AT(d->q, i);
      if (w->start != CS_HELD) w->start += delta;
    }
    for (uint32_t i = 0; i < d->pipe.len; i++) {
      InPipe *x = &CS_RING_AT(d->pipe, i);
      if (x->arrive != CS_HELD) x->arrive += delta;
      x->pk.stamp += delta;
    }
    if (d->paused) d->resume_base += delta;
  }
}

void cs_link_carry(CsNet *net, uint32_t path, uint16_t hops, uint64_t k, uint32_t bytes) {
  if (k == 0 || hops == 0) return;
  const uint32_t *ports = &g_array_index(net->arena, uint32_t, path);
  uint64_t b = k * bytes;
  for (uint16_t h = 0; h < hops; h++) {
    const CsPort *pt = &net->t->ports[ports[h]];
    LinkDir *d = &net->dirs[2 * pt->link + pt->dir];
    const CsLink *l = &net->t->links[pt->link];
    if (h == 0) net->node_injected[pt->dir ? l->b : l->a] += b;
    d->st.bytes += b;
    d->st.packets += k;
    d->st.busy += (CsTime)((double)b * 8e12 / (double)d->bandwidth + 0.5);
    d->out_bytes += b;
    if (h + 1 == hops) net->node_delivered[pt->dir ? l->a : l->b] += b;
  }
  net->hops += k * hops;
}
