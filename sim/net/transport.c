/* transport.c - reliable messages: windows, acknowledgements, recovery.
 *
 * The receiver acknowledges every data packet at once (no delayed ACKs,
 * as datacentre stacks are configured) with the cumulative next-expected
 * packet and the number of the packet that triggered the ACK - a one-block
 * SACK.  The sender keeps a scoreboard per packet, so it retransmits
 * exactly the packets it believes lost:
 *  - a packet is lost when three packets sent after it are known received
 *    (the duplicate-ACK threshold of fast retransmit), or when the
 *    retransmission timer expires (then every packet in flight is);
 *  - a recovery episode begins with the first loss it detects and ends
 *    when the cumulative ACK passes the highest packet sent when it began
 *    (NewReno's rule for partial ACKs); the congestion-control algorithm
 *    (cc.h, one per file under cc/) is told when one begins, when the
 *    timer fires, of every ACK, and of the packets acknowledged outside
 *    recovery, and sets the window (fixed, reno, dctcp).
 * Retransmission timeout: RFC 6298 (SRTT, RTTVAR, min_rto, exponential
 * backoff, Karn's rule: no sample from a retransmitted packet), with one
 * engine event per message that re-arms itself rather than one per ACK.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "net_private.h"

enum { S_UNSENT = 0, S_FLIGHT = 1, S_DONE = 2, S_LOST = 3 };

#define MAX_RTO (60 * CS_SEC)
#define DUP_THRESH 3

static void on_timer(CsEngine *e, void *ctx, uint64_t arg);
static void send_more(CsNet *net, uint32_t fi);

static inline Message *msg_of(CsNet *net, uint32_t m) { return &net->msgs[m]; }
static inline Conn *conn_of(CsNet *net, const Message *m) { return &net->conns[m->conn]; }
static inline uint8_t st_get(const Message *f, uint32_t seq) { return f->state[seq & f->ring_mask]; }
static inline void st_set(Message *f, uint32_t seq, uint8_t v) { f->state[seq & f->ring_mask] = v; }

static void arm_timer(CsNet *net, uint32_t fi) {
  Message *f = msg_of(net, fi);
  CsTime now = cs_engine_now(net->engine);
  CsTime rto = conn_of(net, f)->rto;
  f->deadline = rto > CS_TIME_MAX - now ? CS_TIME_MAX : now + rto;
  /* one event per message: a later deadline is honoured when the event fires
   * (it sleeps again); an earlier one replaces the event */
  if (f->timer_event && f->deadline < f->timer_at) {
    cs_engine_cancel(net->engine, f->timer_id);
    f->timer_event = false;
  }
  if (!f->timer_event) {
    f->timer_event = true;
    f->timer_at = f->deadline;
    f->timer_id = cs_engine_schedule_at(net->engine, f->deadline, on_timer, net, fi);
  }
}

static void send_data(CsNet *net, uint32_t fi, uint32_t seq, bool retx) {
  Message *f = msg_of(net, fi);
  uint32_t p = cs_net_packet_alloc(net, PKT_DATA);
  Packet *pk = &net->pool[p];
  uint32_t payload = seq + 1 == f->n ? f->last_payload : net->mss;
  pk->stamp = cs_engine_now(net->engine);
  pk->owner = fi;
  pk->seq = seq;
  pk->sack = 0;
  pk->bytes = payload + net->header;
  pk->path = f->path_fwd;
  pk->hops = f->hops_fwd;
  pk->flags = (net->cc->ect ? F_ECT : 0) | (retx ? F_RETX : 0);
  pk->xmit = ++f->xmits;
  f->xmit_of[seq & f->ring_mask] = pk->xmit;
  if (retx) { /* remember it, in transmission order */
    CS_RING_PUSH(f->rtx, 16, (Rtx){seq, pk->xmit});
  }
  f->stats.wire_bytes += pk->bytes;
  if (retx) {
    f->stats.retransmissions++;
    net->retransmissions++;
  }
  cs_net_inject(net, p);
}

static void on_host_queue(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  CsNet *net = ctx;
  msg_of(net, (uint32_t)arg)->host_wait = false;
  send_more(net, (uint32_t)arg);
}

static void send_more(CsNet *net, uint32_t fi) {
  Message *f = msg_of(net, fi);
  if (f->sender_done || f->host_wait) return;
  double w = fmin(conn_of(net, f)->cc.cwnd, (double)net->window);
  uint32_t limit = w < 1.0 ? 1 : (uint32_t)w;
  bool sent = false;
  uint32_t first_port = g_array_index(net->arena, uint32_t, f->path_fwd);
  while (f->in_flight < limit) {
    /* TCP small queues: leave packets in the socket, not in a long host
     * queue where the ACKs of other messages would wait behind them */
    CsTime wake = cs_net_host_queue_full(net, first_port);
    if (wake) {
      f->host_wait = true;
      cs_engine_schedule_at(net->engine, wake, on_host_queue, net, fi);
      break;
    }
    if (f->n_lost > 0) {
      while (st_get(f, f->lost_scan) != S_LOST) f->lost_scan++;
      uint32_t seq = f->lost_scan++;
      st_set(f, seq, S_FLIGHT);
      f->n_lost--;
      f->in_flight++;
      send_data(net, fi, seq, true);
      f = msg_of(net, fi);
    } else if (f->nxt < f->n && f->nxt - f->una <= f->ring_mask && f->nxt - f->una < net->window) {
      uint32_t seq = f->nxt++;
      st_set(f, seq, S_FLIGHT);
      f->in_flight++;
      send_data(net, fi, seq, false);
      f = msg_of(net, fi);
    } else {
      break;
    }
    sent = true;
  }
  if (sent && f->deadline == 0) arm_timer(net, fi);
}

/* A loss was detected: start a recovery episode unless one is running. */
static void enter_recovery(Message *f, Conn *c, uint32_t seq) {
  if (f->in_recovery || seq < f->no_cut_until) return;
  f->in_recovery = true;
  f->recover = f->nxt - 1;
  if (c->ops->on_loss) c->ops->on_loss(&c->cc);
}

static void mark_lost(Message *f, uint32_t seq) {
  st_set(f, seq, S_LOST);
  f->in_flight--;
  f->n_lost++;
  if (seq < f->lost_scan) f->lost_scan = seq;
}

static void message_finished(CsNet *net) {
  if (--net->active == 0 && net->idle_fn) net->idle_fn(net->idle_ctx);
}

static void finish_sender(CsNet *net, uint32_t fi) {
  Message *f = msg_of(net, fi);
  f->sender_done = true;
  f->deadline = 0;
  g_free(f->state);
  f->state = NULL;
  g_free(f->xmit_of);
  f->xmit_of = NULL;
  CS_RING_FREE(f->rtx);
  if (f->stats.delivered || f->stats.failed) message_finished(net);
}

static CsTime rto_of(const CsNet *net, const RttState *st) {
  if (!st->have_rtt) return MIN(MAX(net->transport.initial_rto, net->transport.min_rto), MAX_RTO);
  /* as Linux does: min_rto bounds the variance term, not the whole, so a
   * round trip near min_rto does not time out while its ACKs queue */
  CsTime rto = st->srtt + MAX(4 * st->rttvar, net->transport.min_rto);
  return MIN(rto, MAX_RTO);
}

static void rtt_sample(CsNet *net, Conn *c, CsTime r) {
  RttState *st = c->rtt;
  if (!st->have_rtt) {
    st->srtt = r;
    st->rttvar = r / 2;
    st->have_rtt = true;
  } else {
    CsTime err = st->srtt > r ? st->srtt - r : r - st->srtt;
    st->rttvar = (3 * st->rttvar + err) / 4;
    st->srtt = (7 * st->srtt + r) / 8;
  }
  c->rto = rto_of(net, st); /* a new sample also ends any backoff */
}

static void sender_ack(CsNet *net, const Packet *ack) {
  uint32_t fi = ack->owner;
  Message *f = msg_of(net, fi);
  if (f->sender_done) return;
  Conn *c = conn_of(net, f);
  CsTime now = cs_engine_now(net->engine);
  uint32_t newly = 0;
  bool sample_ok = false;
  uint32_t s = ack->sack;
  if (s >= f->una && s < f->nxt && st_get(f, s) != S_DONE) {
    uint8_t st = st_get(f, s);
    if (st == S_FLIGHT) f->in_flight--;
    else if (st == S_LOST) f->n_lost--;
    st_set(f, s, S_DONE);
    newly++;
    sample_ok = !(ack->flags & F_RETX);
  }
  if (s + 1 > f->high_sacked) f->high_sacked = s + 1;
  uint32_t old_una = f->una;
  /* slots behind una are cleared for the packets a ring later */
  while (f->una < ack->seq) {
    uint8_t st = st_get(f, f->una);
    if (st != S_DONE) {
      if (st == S_FLIGHT) f->in_flight--;
      else if (st == S_LOST) f->n_lost--;
      newly++;
    }
    st_set(f, f->una, S_UNSENT);
    f->una++;
  }
  while (f->una < f->nxt && st_get(f, f->una) == S_DONE) st_set(f, f->una++, S_UNSENT);
  if (f->lost_scan < f->una) f->lost_scan = f->una;
  CsAck info = {newly, (ack->flags & F_ECE) != 0, sample_ok ? now - ack->stamp : -1, f->una, f->nxt, now};
  if (sample_ok) rtt_sample(net, c, info.rtt);
  if (c->ops->on_ack) c->ops->on_ack(&c->cc, &info);

  /* the duplicate-threshold rule: a packet with DUP_THRESH packets
   * received after it is lost */
  if (f->loss_scan < f->una) f->loss_scan = f->una;
  while (f->loss_scan + DUP_THRESH < f->high_sacked) {
    if (st_get(f, f->loss_scan) == S_FLIGHT) {
      mark_lost(f, f->loss_scan);
      enter_recovery(f, c, f->loss_scan);
    }
    f->loss_scan++;
  }
  /* a retransmission is lost when DUP_THRESH later transmissions arrived */
  while (f->rtx.len > 0 && CS_RING_FRONT(f->rtx).xmit + DUP_THRESH < ack->xmit) {
    uint32_t seq = CS_RING_FRONT(f->rtx).seq, xm = CS_RING_FRONT(f->rtx).xmit;
    CS_RING_POP(f->rtx);
    if (seq >= f->una && seq < f->nxt && st_get(f, seq) == S_FLIGHT && f->xmit_of[seq & f->ring_mask] == xm) {
      mark_lost(f, seq);
      enter_recovery(f, c, seq);
    }
  }
  if (f->in_recovery && f->una > f->recover) f->in_recovery = false;

  if (newly > 0 && !f->in_recovery && c->ops->cong_avoid) c->ops->cong_avoid(&c->cc, &info);
  if (f->una > old_una) {
    c->consecutive_timeouts = 0;
    if (f->una == f->n) {
      finish_sender(net, fi);
      return;
    }
    arm_timer(net, fi); /* RFC 6298 (5.3): restart on new data acknowledged */
  }
  send_more(net, fi);
}

/* Give up after max_timeouts: a message its receiver already has is
 * delivered all the same (only its acknowledgements never came back). */
static void fail_message(CsNet *net, uint32_t fi) {
  Message *f = msg_of(net, fi);
  if (f->stats.delivered) {
    finish_sender(net, fi);
    return;
  }
  f->stats.failed = true;
  f->stats.end = cs_engine_now(net->engine);
  net->failed++;
  g_free(f->rcv_bits);
  f->rcv_bits = NULL;
  CsDeliverFn fn = f->fn;
  void *ctx = f->ctx;
  finish_sender(net, fi);
  net->notified++;
  if (fn) fn(ctx, fi, true);
}

static void on_timer(CsEngine *e, void *ctx, uint64_t arg) {
  CsNet *net = ctx;
  uint32_t fi = (uint32_t)arg;
  Message *f = msg_of(net, fi);
  f->timer_event = false;
  if (f->sender_done || f->deadline == 0) return;
  CsTime now = cs_engine_now(e);
  if (now < f->deadline) { /* re-armed since: sleep until the new deadline */
    f->timer_event = true;
    f->timer_at = f->deadline;
    f->timer_id = cs_engine_schedule_at(e, f->deadline, on_timer, net, fi);
    return;
  }
  f->deadline = 0;
  f->stats.timeouts++;
  net->timeouts++;
  Conn *c = conn_of(net, f);
  if (++c->consecutive_timeouts >= net->max_timeouts) {
    fail_message(net, fi);
    return;
  }
  for (uint32_t seq = f->una; seq < f->nxt; seq++)
    if (st_get(f, seq) == S_FLIGHT) mark_lost(f, seq);
  if (c->ops->on_timeout) c->ops->on_timeout(&c->cc);
  /* slow start again (RFC 5681); losses of what was sent before the
   * timeout are part of it and cause no further cut */
  f->in_recovery = false;
  f->no_cut_until = f->nxt;
  f->rtx.len = 0; /* every retransmission in flight is presumed lost now */
  c->rto = MIN(2 * c->rto, MAX_RTO); /* back off until an ACK brings a new sample */
  send_more(net, fi);
  f = msg_of(net, fi);
  if (f->deadline == 0 && !f->sender_done) arm_timer(net, fi);
}

static void receiver_data(CsNet *net, const Packet *pk) {
  uint32_t fi = pk->owner;
  Message *f = msg_of(net, fi);
  if (f->rcv_bits && pk->seq >= f->rcv_nxt) {
    uint32_t s = pk->seq & f->ring_mask;
    f->rcv_bits[s / 64] |= 1ULL << (s % 64);
    for (;;) {
      uint32_t r = f->rcv_nxt & f->ring_mask;
      if (f->rcv_nxt >= f->n || !(f->rcv_bits[r / 64] >> (r % 64) & 1)) break;
      f->rcv_bits[r / 64] &= ~(1ULL << (r % 64));
      f->rcv_nxt++;
    }
  }
  if (f->stats.failed) return; /* abandoned: the sender listens no more */
  /* the acknowledgement, at once */
  uint32_t p = cs_net_packet_alloc(net, PKT_ACK);
  Packet *a = &net->pool[p];
  a->stamp = pk->stamp;
  a->owner = fi;
  a->seq = f->rcv_nxt;
  a->sack = pk->seq;
  a->bytes = net->ack_bytes;
  a->path = f->path_rev;
  a->hops = f->hops_rev;
  a->flags = ((pk->flags & F_CE) ? F_ECE : 0) | (pk->flags & F_RETX);
  a->xmit = pk->xmit;
  cs_net_inject(net, p);
  f = msg_of(net, fi);
  if (f->rcv_nxt == f->n && !f->stats.delivered) {
    f->stats.delivered = true;
    f->stats.end = cs_engine_now(net->engine);
    g_free(f->rcv_bits);
    f->rcv_bits = NULL;
    bool finished = f->sender_done;
    net->notified++;
    if (f->fn) f->fn(f->ctx, fi, false);
    if (finished) message_finished(net);
  }
}

void cs_transport_receive(CsNet *net, uint32_t p) {
  Packet pk = net->pool[p]; /* a copy: the handlers below allocate packets */
  cs_net_packet_free(net, p);
  if (pk.kind == PKT_DATA) receiver_data(net, &pk);
  else sender_ack(net, &pk);
}

/* A connection for a new message (today one each; the RTT estimate is the
 * host pair's). */
static uint32_t open_conn(CsNet *net, uint32_t src, uint32_t dst) {
  CS_GROW(net->conns, net->n_conns, net->cap_conns, 64);
  uint32_t ci = net->n_conns++;
  Conn *c = &net->conns[ci];
  memset(c, 0, sizeof *c);
  c->ops = net->cc;
  c->cc.max_cwnd = (double)net->window;
  c->ops->init(&c->cc, (double)net->init_cwnd);
  guint64 key = ((guint64)src << 32) | dst;
  c->rtt = g_hash_table_lookup(net->rtt_by_pair, &key);
  if (!c->rtt) {
    guint64 *k = g_new(guint64, 1);
    *k = key;
    c->rtt = g_new0(RttState, 1);
    g_hash_table_insert(net->rtt_by_pair, k, c->rtt);
  }
  c->rto = rto_of(net, c->rtt);
  return ci;
}

uint32_t cs_net_send(CsNet *net, uint32_t src, uint32_t dst, uint64_t payload, CsDeliverFn fn, void *ctx) {
  g_assert(src != dst && src < net->t->n_hosts && dst < net->t->n_hosts && payload > 0);
  uint64_t n = (payload + net->mss - 1) / net->mss;
  g_assert(n <= CS_NET_MAX_PACKETS); /* checked at set-up */
  CS_GROW(net->msgs, net->n_msgs, net->cap_msgs, 64);
  uint32_t fi = net->n_msgs++;
  Message *f = &net->msgs[fi];
  memset(f, 0, sizeof *f);
  f->src = src;
  f->dst = dst;
  f->n = (uint32_t)n;
  f->last_payload = (uint32_t)(payload - (n - 1) * net->mss);
  f->fn = fn;
  f->ctx = ctx;
  /* one hash per message: ECMP keeps a message on one path (the stream's
   * name, "flow", is what the results' paths were drawn with) */
  uint64_t hash = cs_rng_stream_id("flow", net->seed, fi);
  f->path_fwd = cs_net_add_path(net, net->t->hosts[src], dst, hash, &f->hops_fwd);
  f->path_rev = cs_net_add_path(net, net->t->hosts[dst], src, hash, &f->hops_rev);
  uint64_t ring = 64;
  while (ring < MIN(n, (uint64_t)net->window)) ring *= 2;
  f->ring_mask = (uint32_t)(ring - 1);
  f->state = g_new0(uint8_t, ring);
  f->xmit_of = g_new0(uint32_t, ring);
  f->rcv_bits = g_new0(uint64_t, ring / 64);
  f->conn = open_conn(net, src, dst);
  f->stats = (CsMessageStats){.src = src, .dst = dst, .payload = payload, .packets = (uint32_t)n,
                              .start = cs_engine_now(net->engine)};
  net->active++;
  send_more(net, fi);
  return fi;
}

uint32_t cs_net_active(const CsNet *net) { return net->active; }
uint32_t cs_net_failed(const CsNet *net) { return net->failed; }

void cs_net_set_idle_fn(CsNet *net, CsIdleFn fn, void *ctx) {
  net->idle_fn = fn;
  net->idle_ctx = ctx;
}
uint32_t cs_net_messages(const CsNet *net) { return net->n_msgs; }

void cs_net_tag_message(CsNet *net, uint32_t msg, uint32_t iteration, uint32_t step) {
  net->msgs[msg].stats.iteration = iteration;
  net->msgs[msg].stats.step = step;
}
const CsMessageStats *cs_net_message(const CsNet *net, uint32_t msg) { return &net->msgs[msg].stats; }

void cs_transport_free(CsNet *net) {
  if (net->rtt_by_pair) g_hash_table_destroy(net->rtt_by_pair);
  for (uint32_t i = 0; i < net->n_msgs; i++) {
    g_free(net->msgs[i].state);
    g_free(net->msgs[i].rcv_bits);
    g_free(net->msgs[i].xmit_of);
    CS_RING_FREE(net->msgs[i].rtx);
  }
  g_free(net->msgs);
  g_free(net->conns);
}
