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

/* ---- packet pool ---- */

uint32_t cs_net_packet_alloc(CsNet *net, uint8_t kind) {
  uint32_t p;
  CS_POOL_TAKE(net->pool, net->pool_len, net->pool_cap, net->free_head, next_free, 1024, p);
  net->counts[kind].sent++;
  net->counts[kind].in_flight++;
  Packet *pk = &net->pool[p];
  pk->kind = kind;
  pk->flags = 0;
  pk->hop = 0;
  return p;
}

void cs_net_packet_free(CsNet *net, uint32_t p) {
  net->counts[net->pool[p].kind].in_flight--;
  CS_POOL_PUT(net->pool, net->free_head, next_free, p);
}

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

/* Retire waiting packets whose transmission started by `now`, summing the
 * time-integral of the bytes waiting. */
static inline void catch_up(LinkDir *d, CsTime now) {
  while (d->q.len > 0) {
    Waiting *w = &CS_RING_FRONT(d->q);
    if (w->start > now) break;
    d->st.queue_integral += (double)d->q_bytes * (double)(w->start - d->q_last);
    d->q_last = w->start;
    d->q_bytes -= w->bytes;
    CS_RING_POP(d->q);
  }
  d->st.queue_integral += (double)d->q_bytes * (double)(now - d->q_last);
  d->q_last = now;
}

uint64_t cs_net_host_queue_limit(const CsNet *net, uint32_t port) {
  if (net->host_queue == 0) return 0;
  if (net->host_queue != UINT64_MAX) return net->host_queue;
  /* the default: 100 us of the host's link, at least two packets */
  const CsPort *pt = &net->t->ports[port];
  const LinkDir *d = &net->dirs[2 * pt->link + pt->dir];
  return MAX((uint64_t)d->bandwidth / 80000, 2 * (uint64_t)net->transport.mtu);
}

static void queue_push(LinkDir *d, CsTime start, uint32_t bytes) {
  CS_RING_PUSH(d->q, 64, (Waiting){start, bytes});
  d->q_bytes += bytes;
  if (d->q_bytes > d->st.queue_max) d->st.queue_max = d->q_bytes;
  if (d->q_bytes > d->iv_qmax) d->iv_qmax = d->q_bytes;
}

/* Serialization end of `bytes` starting at `start` on direction d. */
static inline CsTime transmit_end(LinkDir *d, CsTime start, uint32_t bytes) {
  if (start > d->busy_until) { /* idle before it: a new busy period */
    d->period_start = start;
    d->period_bits = 0;
  }
  d->period_bits += (uint64_t)bytes * 8u;
  /* ceil(bits * 1e12 / bandwidth) picoseconds since the period began */
  unsigned __int128 num = (unsigned __int128)d->period_bits * 1000000000000ULL;
  unsigned __int128 t = (num + (unsigned __int128)d->bandwidth - 1) / (unsigned __int128)d->bandwidth;
  if (G_UNLIKELY(t > (unsigned __int128)(CS_TIME_MAX - d->period_start))) return CS_TIME_MAX;
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

/* Append to the pipe of direction `di`; the first in an empty pipe gets
 * the direction's event. */
static void pipe_push(CsNet *net, uint32_t di, uint32_t p, CsTime arrive) {
  LinkDir *d = &net->dirs[di];
  CS_RING_PUSH(d->pipe, 64, (InPipe){arrive, p});
  if (d->pipe.len == 1) cs_engine_schedule_at(net->engine, arrive, on_pipe, net, di);
}

/* Packet p is at a node and leaves by port `port`. */
static CsTime forward(CsNet *net, uint32_t p, uint32_t port) {
  CsTime now = cs_engine_now(net->engine);
  const CsPort *pt = &net->t->ports[port];
  LinkDir *d = &net->dirs[2 * pt->link + pt->dir];
  Packet *pk = &net->pool[p];
  catch_up(d, now);
  CsTime start = now > d->busy_until ? now : d->busy_until;
  if (start > now) { /* it would wait: does it fit, and what do RED and ECN say? */
    bool drop = false;
    if (d->bounded) drop = d->cap_pkt ? d->q.len + 1 > (uint64_t)d->cap : d->q_bytes + pk->bytes > (uint64_t)d->cap;
    /* a host's own queue holds what its transport lets in (host_queue);
     * open-loop background packets find it full at txqueuelen */
    else if (pk->kind == PKT_BG) drop = d->q.len >= CS_NET_HOST_BG_PACKETS;
    if (!drop && d->queue == CS_QUEUE_RED) drop = red_drop(d, now, pk->bytes);
    if (drop) {
      d->st.drops++;
      d->drop_bytes += pk->bytes;
      net->counts[pk->kind].dropped++;
      if (G_UNLIKELY(net->trace_fn)) cs_net_trace(net, CS_PKT_DROP, p, pt->link, pt->dir, now);
      cs_net_packet_free(net, p);
      return now;
    }
    if (d->queue == CS_QUEUE_ECN && (pk->flags & F_ECT) &&
        (d->ecn_k_pkt ? d->q.len + 1 > (uint64_t)d->ecn_k : d->q_bytes + pk->bytes > (uint64_t)d->ecn_k)) {
      pk->flags |= F_CE;
      d->st.marks++;
      net->marks++;
    }
    queue_push(d, start, pk->bytes);
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
    cs_net_trace(net, CS_PKT_ENQUEUE, p, pt->link, pt->dir, now);
    cs_net_trace(net, CS_PKT_TRANSMIT, p, pt->link, pt->dir, start);
  }
  if (cs_loss_next(&d->loss)) {
    d->st.losses++;
    d->loss_bytes += pk->bytes;
    net->counts[pk->kind].lost++;
    if (G_UNLIKELY(net->trace_fn)) cs_net_trace(net, CS_PKT_LOSS, p, pt->link, pt->dir, end);
    cs_net_packet_free(net, p);
    return start;
  }
  pk->hop++;
  pipe_push(net, 2 * pt->link + pt->dir, p, cs_time_add(end, d->latency));
  return start;
}

/* Packet p has arrived at node `node`, the far end of its last link. */
static void arrive(CsNet *net, uint32_t p, uint32_t node) {
  Packet *pk = &net->pool[p];
  if (pk->hop == pk->hops) {
    net->counts[pk->kind].delivered++;
    net->node_delivered[node] += pk->bytes;
    if (G_UNLIKELY(net->trace_fn))
      cs_net_trace(net, pk->kind == PKT_ACK ? CS_PKT_ACK : CS_PKT_DELIVER, p, UINT32_MAX, 0, cs_engine_now(net->engine));
    net->deliver[pk->kind](net, p);
    return;
  }
  forward(net, p, g_array_index(net->arena, uint32_t, pk->path + pk->hop));
}

static void on_pipe(CsEngine *e, void *ctx, uint64_t arg) {
  CsNet *net = ctx;
  uint32_t di = (uint32_t)arg;
  LinkDir *d = &net->dirs[di];
  uint32_t p = CS_RING_FRONT(d->pipe).packet;
  CS_RING_POP(d->pipe);
  if (d->pipe.len > 0) cs_engine_schedule_at(e, CS_RING_FRONT(d->pipe).arrive, on_pipe, net, di);
  d->out_bytes += net->pool[p].bytes;
  arrive(net, p, d->to_node);
}

CsTime cs_net_inject(CsNet *net, uint32_t p) {
  Packet *pk = &net->pool[p];
  uint32_t port = g_array_index(net->arena, uint32_t, pk->path);
  const CsPort *pt = &net->t->ports[port];
  const CsLink *l = &net->t->links[pt->link];
  net->node_injected[pt->dir ? l->b : l->a] += pk->bytes;
  return forward(net, p, port);
}

/* ---- link directions ---- */

void cs_link_init(CsNet *net) {
  const CsTopology *t = net->t;
  net->dirs = g_new0(LinkDir, 2 * (size_t)t->n_links + 1);
  for (uint32_t l = 0; l < t->n_links; l++) {
    const CsLink *link = &t->links[l];
    for (int dir = 0; dir < 2; dir++) {
      LinkDir *d = &net->dirs[2 * l + dir];
      uint32_t from = dir ? link->b : link->a;
      d->bandwidth = link->spec.bandwidth;
      d->latency = link->spec.latency;
      d->to_node = dir ? link->a : link->b;
      /* a switch's port holds `buffer`; a host's is unbounded unless the
       * link sets its own buffer (SPEC 3.1) */
      d->bounded = t->nodes[from].role == CS_ROLE_SWITCH || link->spec.buffer_set;
      d->cap = link->spec.buffer;
      d->cap_pkt = link->spec.buffer_pkt;
      d->queue = link->spec.queue;
      d->red = link->spec.red;
      d->ecn_k = link->spec.ecn_threshold;
      d->ecn_k_pkt = link->spec.ecn_threshold_pkt;
      /* each direction's streams come from the link's identity: its two
       * ends' names would do, their node numbers are stable for a file */
      uint64_t id = cs_rng_stream_id("link-loss", ((uint64_t)from << 32) | d->to_node, l);
      cs_loss_init(&d->loss, &link->spec.loss, net->seed, id);
      cs_rng_init(&d->red_rng, net->seed, cs_rng_stream_id("link-red", ((uint64_t)from << 32) | d->to_node, l));
    }
  }
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
    for (uint32_t i = 0; i < d->pipe.len; i++) wire += net->pool[CS_RING_AT(d->pipe, i).packet].bytes;
    if (d->st.bytes != d->loss_bytes + d->out_bytes + wire)
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
      out += o->st.bytes + o->drop_bytes;
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
  uint64_t finished = 0;
  for (uint32_t m = 0; m < net->n_msgs; m++) {
    const Message *f = &net->msgs[m];
    if (f->stats.delivered && f->stats.failed)
      return internal_error(error, "message %u is both delivered and abandoned", m);
    if (f->stats.delivered && f->rcv_nxt != f->n)
      return internal_error(error, "message %u is delivered with %u of its %u packets", m, f->rcv_nxt, f->n);
    finished += f->stats.delivered || f->stats.failed;
  }
  if (finished != net->notified)
    return internal_error(error, "%" G_GUINT64_FORMAT " messages finished but %" G_GUINT64_FORMAT " deliveries were reported",
                          finished, net->notified);
  return true;
}

static bool check_packets(const CsNet *net, GError **error);

bool cs_net_check_accounting(const CsNet *net, GError **error) {
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
  /* the pool: every slot is alive or on the free list */
  uint64_t free_slots = 0;
  for (uint32_t p = net->free_head; p != NO_PACKET; p = net->pool[p].next_free) free_slots++;
  uint64_t drops = 0, losses = 0, packets = 0;
  for (uint32_t i = 0; i < 2 * net->t->n_links; i++) {
    drops += net->dirs[i].st.drops;
    losses += net->dirs[i].st.losses;
    packets += net->dirs[i].st.packets;
  }
  uint64_t dropped = 0, lost = 0;
  for (int k = 0; k < PKT_CLASSES; k++) dropped += net->counts[k].dropped, lost += net->counts[k].lost;
  if (free_slots + alive != net->pool_len || drops != dropped || losses != lost || packets != net->hops)
    return internal_error(error,
                          "packet pool or link counters disagree (pool %u = free %" G_GUINT64_FORMAT
                          " + alive %" G_GUINT64_FORMAT "; link drops %" G_GUINT64_FORMAT " vs %" G_GUINT64_FORMAT
                          "; link losses %" G_GUINT64_FORMAT " vs %" G_GUINT64_FORMAT ")",
                          net->pool_len, free_slots, alive, drops, dropped, losses, lost);
  return true;
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
      if (x->packet >= net->pool_len || net->pool[x->packet].kind >= PKT_CLASSES ||
          net->pool[x->packet].hop > net->pool[x->packet].hops)
        return internal_error(error, "link %s: pipe entry %u is not a live packet", dir_name(net, di, name, sizeof name), i);
    }
    on_wires += d->pipe.len;
  }
  uint64_t alive = cs_net_packets_in_flight(net);
  if (alive != on_wires)
    return internal_error(error, "%" G_GUINT64_FORMAT " packets are in flight but %" G_GUINT64_FORMAT " are on the wires",
                          alive, on_wires);
  return check_packets(net, error) && check_bytes(net, error);
}

void cs_net_set_packet_trace(CsNet *net, CsPacketTraceFn fn, void *ctx) {
  net->trace_fn = fn;
  net->trace_ctx = ctx;
}

void cs_net_trace(CsNet *net, CsPacketEvent ev, uint32_t p, uint32_t link, int dir, CsTime time) {
  const Packet *pk = &net->pool[p];
  CsPacketTrace t = {time, ev, link, dir, 0, 0, pk->kind == PKT_BG, pk->owner, pk->seq, pk->bytes, 0};
  if (pk->kind == PKT_BG) {
    t.src_host = (uint32_t)net->t->nodes[net->bg[pk->owner].src_node].host;
    t.dst_host = (uint32_t)net->t->nodes[cs_topology_find(net->t, net->bg[pk->owner].spec.dst)].host;
  } else {
    const CsMessageStats *m = &net->msgs[pk->owner].stats;
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
    catch_up(d, now);
    uint64_t started = d->st.bytes - d->q_bytes; /* waiting ones have not started */
    CsLinkSample s = {started - d->iv_started, 0, 0, d->iv_qmax, d->st.drops - d->iv_drops,
                      d->st.losses - d->iv_losses, d->st.marks - d->iv_marks};
    if (span > 0) {
      s.utilization = (double)s.bytes * 8e12 / (double)d->bandwidth / span;
      if (s.utilization > 1.0) s.utilization = 1.0;
      s.queue_mean = (d->st.queue_integral - d->iv_integral) / span;
    }
    d->iv_started = started;
    d->iv_drops = d->st.drops, d->iv_losses = d->st.losses, d->iv_marks = d->st.marks;
    d->iv_integral = d->st.queue_integral;
    d->iv_qmax = d->q_bytes;
    if (s.bytes || s.queue_max || s.drops || s.losses || s.marks) fn(ctx, i / 2, (int)(i % 2), &s);
  }
}

CsLinkStats cs_net_link_stats(CsNet *net, uint32_t link, int dir) {
  LinkDir *d = &net->dirs[2 * link + dir];
  CsTime now = cs_engine_now(net->engine);
  catch_up(d, now);
  CsLinkStats st = d->st;
  /* transmissions are booked when scheduled: take out what has not been
   * sent by now, so utilization never passes 1 when a run stops early */
  st.bytes -= d->q_bytes;
  st.packets -= d->q.len;
  if (d->busy_until > now) st.busy -= d->busy_until - now;
  return st;
}
