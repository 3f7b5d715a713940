/* transport.c - reliable messages over connections: windows,
 * acknowledgements, loss detection and recovery, timers, pacing.
 *
 * A connection joins two hosts in one direction and persists, as a socket
 * does: its messages are one stream, sent one after the other (a later
 * message's packets go when the earlier one has nothing left to send),
 * and the congestion window, the RTT estimate and the algorithm's state
 * carry over from one message to the next.  After an idle time longer
 * than the RTO the window restarts (Linux's tcp_slow_start_after_idle;
 * transport.idle_restart).  With transport.connections: per-message every
 * message opens a connection of its own instead (slow start every time).
 *
 * The receiver acknowledges data with the cumulative next-expected packet
 * of the message and the number of the packet that triggered the ACK - a
 * one-block SACK - and echoes its send time, as TCP timestamps do.  It
 * acknowledges every packet at once, or with transport.delayed_ack N
 * every N-th in-order packet, within ack_delay, as Linux does: at once in
 * quick-ACK mode (the first 16 packets of a connection, and after a gap
 * longer than the RTO), for a packet out of order or one that fills a
 * hole, for the last packet of a message (the application reads it) and
 * when the CE mark changes (DCTCP).
 *
 * The sender keeps a scoreboard per packet and retransmits exactly the
 * packets it believes lost.  Two detections (transport.recovery):
 *  - sack: a packet is lost when three packets sent after it are known
 *    received (fast retransmit's duplicate-ACK threshold; a later
 *    message's packets count for an earlier one's); a retransmission
 *    when three later transmissions arrived;
 *  - rack (RFC 8985): a packet is lost when a packet sent after it was
 *    delivered and a reordering window has passed since that delivery's
 *    round trip would have brought it: sent + RACK.rtt + reo_wnd <= now,
 *    reo_wnd = min RTT / 4 once reordering has been seen, 0 before (in
 *    recovery, or with three packets SACKed above the hole); a timer
 *    fires at the earliest such deadline.  A tail-loss probe (PTO =
 *    2 SRTT, plus ack_delay with one packet in flight and delayed ACKs,
 *    at most the time left to the RTO, which it then replaces) sends a
 *    new packet or again the last one, so that a lost tail is detected
 *    by RACK instead of waiting for the RTO; a resent probe that repaired
 *    a loss (no D-SACK for it) cuts the window as a loss does.
 * Either way, or on a timeout (then every packet in flight is lost), the
 * algorithm (cc.h) hears of it: a recovery episode begins with the first
 * loss and ends when the cumulative ACK passes what was sent when it began
 * (NewReno's rule), and the window is cut once per episode.
 * Retransmission timeout: RFC 6298 (SRTT, RTTVAR, min_rto as Linux uses
 * it, exponential backoff, Karn's rule), restarted when the connection's
 * cumulative ACK advances.  All the timers of a connection share one engine event
 * that re-arms itself rather than one event per ACK.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "net_private.h"

enum { S_UNSENT = 0, S_FLIGHT = 1, S_DONE = 2, S_LOST = 3 };

#define MAX_RTO CS_TCP_MAX_RTO
#define DUP_THRESH 3
#define QUICKACKS 16 /* Linux's TCP_MAX_QUICKACKS */
#define NONE UINT32_MAX

static void on_conn_timer(CsEngine *e, void *ctx, uint64_t arg);
static void conn_send(CsNet *net, uint32_t ci);
static void conn_trace(CsNet *net, uint32_t ci);

const char *const *cs_connections_names(void) {
  static const char *const names[] = {"persistent", "per-message", NULL};
  return names;
}

const char *const *cs_roce_cc_names(void) {
  static const char *const names[] = {"dcqcn", "none", NULL};
  return names;
}

const char *const *cs_retransmit_names(void) {
  static const char *const names[] = {"go-back-n", "selective", NULL};
  return names;
}

const char *const *cs_recovery_names(void) {
  static const char *const names[] = {"auto", "rack", "sack", NULL};
  return names;
}

CsRecovery cs_recovery_resolve(CsRecovery r, CsProtocol protocol) {
  if (r != CS_RECOVERY_AUTO) return r;
  return protocol == CS_PROTO_CUBIC || protocol == CS_PROTO_BBR ? CS_RECOVERY_RACK : CS_RECOVERY_SACK;
}

static inline Message *msg_of(CsNet *net, uint32_t m) { return &net->msgs[m]; }
static inline CsMessageStats *stats_of(CsNet *net, const Message *f) { return cs_stats_at(&net->stats, f->id); }
static inline Conn *conn_of(CsNet *net, const Message *m) { return &net->conns[m->conn]; }
static inline RttState *rtt_of(CsNet *net, const Conn *c) { return &net->rtts[c->pair]; }
static inline uint8_t st_get(const Message *f, uint32_t seq) { return f->state[seq & f->ring_mask]; }
static inline void st_set(Message *f, uint32_t seq, uint8_t v) { f->state[seq & f->ring_mask] = v; }
static inline CsTime now_of(const CsNet *net) { return cs_engine_now(net->engine); }

/* The connection's cumulative acknowledgement: the oldest unfinished
 * message's, or everything given to it. */
static uint64_t conn_una(const CsNet *net, const Conn *c) {
  if (c->head == NONE) return c->stream;
  const Message *f = &net->msgs[c->head];
  return f->base + f->una;
}

/* roce: a packet time of pace_bytes at slot_bps (roce_set_slot). */
static G_GNUC_NO_INLINE void roce_set_gap(Conn *c) {
  c->gap_bps = c->slot_bps;
  c->gap_bytes = c->pace_bytes;
  c->slot_gap = (CsTime)((double)c->pace_bytes * 8.0 * 1e12 / (double)c->slot_bps);
}

/* roce: the next packet's slot, a packet time at the current rate after
 * the last one's (pacing_bps > 0, pace_bytes > 0).  Set when a packet
 * leaves and again only when the rate has moved since: a queue pair asks
 * at every ACK, and a division is most of the cost. */
static inline void roce_set_slot(Conn *c) {
  c->slot_bps = c->cc.pacing_bps;
  /* the packet time itself is kept while the rate and the size repeat (a
   * queue pair's rate moves every seven packets or so, and the division's
   * latency was a fifth of send_data's time) */
  if (G_UNLIKELY(c->slot_bps != c->gap_bps || c->pace_bytes != c->gap_bytes)) roce_set_gap(c);
  c->pace_slot = c->pace_last + c->slot_gap;
}

static inline CsTime roce_next_slot(Conn *c) {
  if (c->slot_bps != c->cc.pacing_bps) roce_set_slot(c);
  return c->pace_slot;
}

/* ---- timers: one engine event per connection ---- */

/* The earliest of two deadlines, 0 (disarmed) being later than any. */
static inline uint64_t earlier(uint64_t a, uint64_t b) { return a - 1 < b - 1 ? a : b; }

/* The connection's event for deadline d, which comes before the pending
 * one if there is one (timer_update). */
static inline __attribute__((always_inline)) void timer_arm_as(CsNet *net, Conn *c, uint32_t ci, CsTime d) {
  if (c->timer_event) { /* an earlier deadline replaces the event */
    cs_engine_cancel(net->engine, c->timer_id);
    c->timer_event = false;
  }
  c->timer_event = true;
  c->timer_at = d;
  c->timer_id = cs_engine_schedule_timer_at(net->engine, d, on_conn_timer, net, ci);
}

static G_GNUC_NO_INLINE void timer_arm(CsNet *net, Conn *c, uint32_t ci, CsTime d) { timer_arm_as(net, c, ci, d); }

/* Inline: most calls (an ACK of a paced queue pair, of a connection whose
 * RTO lies ahead) find the pending event early enough and return.  The
 * event's own (`own`: on_conn_timer, which sets itself again at each
 * packet of a paced queue pair) arms inline. */
static inline __attribute__((always_inline)) void timer_update_as(CsNet *net, uint32_t ci, const bool own) {
  Conn *c = &net->conns[ci];
  uint64_t send = c->t_send == CS_HELD ? 0 : (uint64_t)c->t_send; /* held by PFC: a resume wakes it */
  CsTime d = (CsTime)earlier(earlier(earlier((uint64_t)c->t_rto, (uint64_t)c->t_tlp), earlier((uint64_t)c->t_reo,
                                                                                                (uint64_t)c->t_ack)),
                             send);
  if (d == 0) return; /* a pending event finds nothing due and stops */
  /* a later deadline is honoured when the event fires (it sleeps again) */
  if (c->timer_event && d >= c->timer_at) return;
  if (own) timer_arm_as(net, c, ci, d);
  else timer_arm(net, c, ci, d);
}

static inline void timer_update(CsNet *net, uint32_t ci) { timer_update_as(net, ci, false); }

static CsTime rto_of(const CsNet *net, const RttState *st) {
  if (net->roce) return net->transport.rto; /* a NIC's fixed timeout */
  if (!st->have_rtt) return MIN(MAX(net->transport.initial_rto, net->transport.min_rto), MAX_RTO);
  /* as Linux does: min_rto bounds the variance term, not the whole, so a
   * round trip near min_rto does not time out while its ACKs queue */
  CsTime rto = st->srtt + MAX(4 * st->rttvar, net->transport.min_rto);
  return MIN(rto, MAX_RTO);
}

static CsTime deadline_after(CsTime now, CsTime d) { return d > CS_TIME_MAX - now ? CS_TIME_MAX - 1 : now + d; }

static void arm_rto(Conn *c, CsTime now) { c->t_rto = deadline_after(now, c->rto); }

/* The tail-loss probe's timeout (RFC 8985 7.2), or 0 when none is due. */
static void arm_tlp(CsNet *net, Conn *c, CsTime now) {
  c->t_tlp = 0;
  if (!c->rack || c->in_recovery || c->in_loss || c->tlp_out || c->outstanding == 0) return; /* the open state only (RFC 8985 7.2; Linux: TCP_CA_Open) */
  const RttState *st = rtt_of(net, c);
  CsTime pto = st->have_rtt ? 2 * st->srtt : net->transport.initial_rto;
  if (c->in_flight == 1 && net->delayed_ack > 1) pto += net->ack_delay;
  CsTime t = deadline_after(now, pto);
  /* RFC 8985 7.2, as Linux: when the RTO would come first, the probe
   * takes its place (on_conn_timer) */
  if (c->t_rto > 0 && t > c->t_rto) t = c->t_rto;
  c->t_tlp = t;
}

/* ---- sending ---- */

static void send_data(CsNet *net, uint32_t fi, uint32_t seq, bool retx, CsTime now) {
  Message *f = msg_of(net, fi);
  Conn *c = conn_of(net, f);
  Packet pkt, *pk = &pkt;
  cs_net_packet_new(net, pk, PKT_DATA);
  uint32_t payload = seq + 1 == f->n ? f->last_payload : net->mss;
  pk->stamp = now;
  pk->owner = fi;
  f->refs++;
  pk->seq = seq;
  pk->sack = 0;
  pk->bytes = payload + net->header;
  pk->xmit = ++f->xmits;
  pk->hops = f->hops_fwd;
  /* ecmp-packet: each transmission takes one of the message's paths */
  pk->path = f->path_fwd + (f->n_paths > 1 ? ((pk->xmit * 2654435761u) >> 16) % f->n_paths * f->hops_fwd : 0);
  pk->flags = (c->ops->ect ? F_ECT : 0) | (retx ? F_RETX : 0);
  uint32_t slot = seq & f->ring_mask;
  f->xmit_of[slot] = pk->xmit;
  if (f->sent_at) f->sent_at[slot] = now;
  if (f->rate) {
    if (c->outstanding == 0) c->first_tx = c->delivered_time = now; /* a new send interval */
    f->rate[slot] = (RateStamp){c->delivered, c->delivered_time, c->first_tx, c->app_limited != 0};
  }
  if (retx) { /* remember it, in transmission order */
    CS_RING_PUSH(f->rtx, 16, ((Rtx){seq, pk->xmit, now}));
  }
  stats_of(net, f)->wire_bytes += pk->bytes;
  if (retx) {
    stats_of(net, f)->retransmissions++;
    net->retransmissions++;
  }
  c->cc.last_send = now;
  uint32_t bytes = pk->bytes;
  bool nic = c->tsq_nic != 0; /* (read here, beside ops) */
  if (c->ops->on_send) c->ops->on_send(&c->cc, bytes, now);
  if (net->roce) { /* a paced packet may be released ahead of its slot onto a busy link (roce_shaper_holds) */
    CsTime at = now;
    if (c->cc.pacing_bps > 0 && c->pace_bytes) at = MAX(now, roce_next_slot(c));
    c->pace_last = at;
    c->pace_bytes = bytes;
    /* the next slot at the rate of now, once per packet (left for the
     * next ACK to find, whether it was known was a branch the processor
     * often lost) */
    if (c->cc.pacing_bps > 0) roce_set_slot(c);
    else c->slot_bps = 0;
  } else if (c->cc.pacing_bps > 0) {
    CsTime gap = (CsTime)((double)bytes * 8.0 * 1e12 / (double)c->cc.pacing_bps);
    c->pace_next = MAX(c->pace_next, now) + gap;
  }
  const CsPort *first = &net->t->ports[g_array_index(net->arena, uint32_t, pk->path)];
  uint32_t port_dir = 2 * first->link + first->dir;
  if (G_UNLIKELY(nic)) {
    /* from a GPU: its start at the NIC is learned there
     * (cs_transport_nic_queued), or now if it is lost on its way, even on
     * its own link as it is sent: its entry is in before it goes */
    CS_RING_PUSH(c->tsq, 16, ((Waiting){CS_HELD, bytes, c->tsq_nic}));
    c->tsq_bytes += bytes;
    c->tsq_unseen++;
  }
  CsTime start = cs_net_inject(net, pk); /* a roce packet released before its slot goes behind a busy link */
  if (net->roce) conn_of(net, msg_of(net, fi))->nic_dir = port_dir;
  if (!nic && start > now && net->host_queue) {
    c = conn_of(net, msg_of(net, fi));
    /* the entry names its host port: a host of a ring sends by two, and PFC pauses them apart */
    CS_RING_PUSH(c->tsq, 16, ((Waiting){start, bytes, port_dir + 1}));
    c->tsq_bytes += bytes;
  }
}

/* PFC resumed host port di: its k held packets, the last k of its queue
 * and its pipe, have their starts.  Each data packet of this host's
 * names its connection's first small-queue entry still held on that
 * port (they leave in order, so the next one of the same connection lies
 * after the last: a cursor, kept while the owner repeats), which learns
 * when it starts; a connection that waited for the resume is woken
 * (cs_transport_wake). */
void cs_transport_tsq_resumed(CsNet *net, uint32_t di, uint32_t k) {
  const LinkDir *d = &net->dirs[di];
  const Waiting *qb = d->q.buf;
  const InPipe *pb = d->pipe.buf;
  const uint32_t qh = d->q.head + (d->q.len - k), qm = d->q.cap - 1, ph = d->pipe.head + (d->pipe.len - k),
                 pm = d->pipe.cap - 1;
  uint32_t last_msg = UINT32_MAX, ci = UINT32_MAX, at = 0;
  /* the connection's ring, in locals (stores to its entries would have them loaded again) */
  Waiting *tb = NULL;
  uint32_t th = 0, tm = 0, tn = 0;
  for (uint32_t j = 0; j < k; j++) {
    const Packet *pk = &pb[(ph + j) & pm].pk;
    if (pk->kind != PKT_DATA || pk->hop != d->own_hop) continue; /* not sent from this host (or machine) */
    if (pk->owner != last_msg) {
      last_msg = pk->owner;
      uint32_t cj = net->msgs[pk->owner].conn;
      if (cj != ci) { /* another connection: from its ring's front */
        ci = cj;
        Conn *c = &net->conns[ci];
        tb = c->tsq.buf, th = c->tsq.head, tm = c->tsq.cap - 1, tn = c->tsq.len;
        at = UINT32_MAX;
        if (c->t_send == CS_HELD) {
          c->t_send = 0;
          if (!net->woken) net->woken = g_array_new(FALSE, FALSE, sizeof(uint32_t));
          g_array_append_val(net->woken, ci);
        }
      }
    }
    uint32_t i = at + 1;
    for (; i < tn; i++) {
      Waiting *w = &tb[(th + i) & tm];
      if (w->ing == di + 1 && w->start == CS_HELD) {
        w->start = qb[(qh + j) & qm].start - (d->own_hop == 2 ? net->conns[ci].tsq_lead : 0);
        break;
      }
    }
    at = i;
  }
}

/* The entries of one port start in the order they were queued (its
 * queue is FIFO, and held ones, CS_HELD, come last): those that had not
 * started by tp are the port's last, and the scan goes from the back
 * down to the first that had (the ring holds some 80 entries, a pause
 * holds some 50). */
void cs_transport_tsq_paused(CsNet *net, uint32_t msg, CsTime tp, uint32_t port_dir) {
  Conn *c = &net->conns[net->msgs[msg].conn];
  CsTime lead = c->tsq_nic == port_dir + 1 ? c->tsq_lead : 0; /* a machine's NIC: its entries' starts are lead early */
  for (uint32_t i = c->tsq.len; i-- > 0;) {
    Waiting *w = &CS_RING_AT(c->tsq, i);
    if (w->ing != port_dir + 1) continue; /* (a host of a ring: its other port's) */
    if (w->start <= tp - lead) break;
    w->start = CS_HELD;
  }
}

/* The entries of a GPU's connection learn their starts in order: its
 * packets cross its link and its machine's NIC first in, first out (one
 * lost or dropped on the way learns `now`, as if it had left then).  A
 * connection that waits for its last entry's start wakes then. */
void cs_transport_nic_queued(CsNet *net, const Packet *pk, uint32_t di, CsTime start) {
  uint32_t ci = net->msgs[pk->owner].conn;
  Conn *c = &net->conns[ci];
  if (!c->tsq_nic || c->tsq_unseen == 0) return; /* inside its machine (or no limit) */
  Waiting *w = &CS_RING_AT(c->tsq, c->tsq.len - c->tsq_unseen);
  c->tsq_unseen--;
  if (di != UINT32_MAX) w->ing = di + 1; /* (a machine of several NICs: the one it took, which PFC pauses) */
  if (start == CS_HELD) return; /* its NIC is paused: the resume says when (cs_transport_tsq_resumed) */
  w->start = start - c->tsq_lead;
  if (c->t_send == CS_HELD && c->tsq_unseen == 0) {
    CsTime now = now_of(net);
    c->t_send = w->start > now ? w->start : now;
    timer_update(net, ci);
  }
}

void cs_transport_wake(CsNet *net) {
  for (guint i = 0; net->woken && i < net->woken->len; i++) {
    uint32_t ci = g_array_index(net->woken, uint32_t, i);
    conn_send(net, ci);
    timer_update(net, ci);
  }
  if (net->woken) g_array_set_size(net->woken, 0);
}

/* TCP small queues: 0 when the connection may put another packet in its
 * host's egress queue, else when it may again: when its last waiting
 * packet starts (the link is still busy with it, and the connection
 * refills its share in one go: an event per `host_queue` bytes, not per
 * packet). */
static CsTime tsq_wait(Conn *c, CsTime now) {
  while (c->tsq.len > 0 && CS_RING_FRONT(c->tsq).start <= now) {
    c->tsq_bytes -= CS_RING_FRONT(c->tsq).bytes;
    CS_RING_POP(c->tsq);
  }
  if (c->tsq_limit == 0 || c->tsq_bytes < c->tsq_limit) return 0;
  CsTime last = CS_RING_BACK(c->tsq).start;
  return last > now ? last : 0; /* (never a wake in the past: that would spin) */
}

/* Linux's tcp_cwnd_restart: after an idle time the window halves per RTO
 * idle, down to the initial window; ssthresh keeps what it knew. */
static void cwnd_restart(Conn *c, CsTime idle) {
  c->cc.ssthresh = fmax(c->cc.ssthresh, 0.75 * c->cc.cwnd);
  c->cc.cwnd = cs_cwnd_after_idle(c->cc.cwnd, c->cc.cfg->init_cwnd, idle, c->rto);
}

/* roce: a queue pair's shaper.  Its next packet's slot is a packet time
 * at the current rate after the last one's (the rate is brought up to
 * date first: DCQCN's increases come from its timers).  The packet goes to
 * the NIC at its slot, or before it when the host's link is busy past the
 * slot anyway: it then starts when the link frees, as it would have.
 * Returns whether the shaper holds the packet, and then in *wake when to
 * look again: its slot, or earlier if DCQCN's timer raises the rate. */
static bool roce_shaper_holds(CsNet *net, Conn *c, CsTime now, CsTime *wake) {
  if (c->cc.pacing_bps == 0 || c->pace_bytes == 0) return false;
  if (c->cc.wake_at && c->cc.wake_at <= now) c->ops->on_send(&c->cc, 0, now); /* its rate rose since: catch up */
  if (c->cc.pacing_bps == 0) return false;
  CsTime next = roce_next_slot(c), busy = net->dirs[c->nic_dir].busy_until;
  if (next <= now || (busy != CS_HELD && next <= busy)) return false;
  *wake = c->cc.wake_at > now && c->cc.wake_at < next ? c->cc.wake_at : next;
  return true;
}

/* Message fi's first packet leaves: the messages before it on its
 * connection have sent, up to their nxt, before any of its packets. */
static void note_handoff(CsNet *net, Conn *c, uint32_t fi) {
  for (uint32_t x = c->head; x != NONE && x != fi; x = net->msgs[x].next)
    if (net->msgs[x].handoff == 0) net->msgs[x].handoff = net->msgs[x].nxt;
}

/* The message's next packet to send: a lost one first, then a new one. */
static bool next_packet(CsNet *net, Message *f, uint32_t *seq, bool *retx) {
  if (f->sender_done) return false;
  if (f->n_lost > 0) {
    while (st_get(f, f->lost_scan) != S_LOST) f->lost_scan++;
    *seq = f->lost_scan++;
    *retx = true;
    f->n_lost--;
    return true;
  }
  if (f->nxt < f->n && f->nxt - f->una <= f->ring_mask && f->nxt - f->una < net->window) {
    *seq = f->nxt++;
    *retx = false;
    return true;
  }
  return false;
}

/* Send what the window allows, the oldest message first. */
/* What the window lets a connection have in flight: fmin's, inline (libm's is a call; the window is never NaN). */
static inline double conn_window(const CsNet *net, const Conn *c) {
  double cw = c->cc.cwnd, win = (double)net->window;
  return cw < win ? cw : win;
}

static void conn_send(CsNet *net, uint32_t ci) {
  Conn *c = &net->conns[ci];
  if (c->t_send > 0 || c->head == NONE) return; /* paused, or nothing to send */
  CsTime now = now_of(net);
  double w = conn_window(net, c);
  uint32_t limit = w < 1.0 ? 1 : (uint32_t)w;
  if (c->in_flight >= limit) return;
  bool sent = false, wanted = false; /* wanted: a packet was ready when the window closed */
  for (uint32_t fi = c->head; fi != NONE && c->in_flight < limit;) {
    Message *f = msg_of(net, fi);
    if (f->n_lost == 0 && (f->nxt >= f->n || f->nxt - f->una > f->ring_mask || f->nxt - f->una >= net->window)) {
      fi = f->next; /* nothing of its own to send */
      continue;
    }
    /* TCP small queues: leave packets in the socket, not in a long host
     * queue where the ACKs and the other connections' packets would wait
     * behind them */
    CsTime wake = tsq_wait(c, now);
    if (wake == 0 && net->roce) {
      roce_shaper_holds(net, c, now, &wake);
    } else if (wake == 0 && c->cc.pacing_bps > 0 && c->pace_next > now) {
      wake = c->pace_next;
    }
    if (wake) {
      c->t_send = wake;
      break;
    }
    if (c->idle) { /* the first packet after a time with nothing in flight */
      c->idle = false;
      /* algorithms that set their own window (fixed, bbr) are not restarted, as in Linux */
      if (net->idle_restart && c->ops->cong_avoid && !c->ops->rate && c->cc.last_send >= 0 &&
          now - c->cc.last_send > c->rto) {
        cwnd_restart(c, now - c->cc.last_send);
        if (c->ops->on_event) c->ops->on_event(&c->cc, CS_CC_CWND_RESTART, now);
        w = conn_window(net, c);
        limit = w < 1.0 ? 1 : (uint32_t)w;
      }
      if (c->ops->on_event) c->ops->on_event(&c->cc, CS_CC_TX_START, now);
    }
    uint32_t seq;
    bool retx;
    if (!next_packet(net, f, &seq, &retx)) {
      fi = f->next;
      continue;
    }
    st_set(f, seq, S_FLIGHT);
    f->in_flight++;
    send_data(net, fi, seq, retx, now);
    c = &net->conns[ci];
    c->in_flight++;
    /* as Linux: the retransmission of the oldest packet restarts the RTO */
    if (retx && fi == c->head && seq == msg_of(net, fi)->una) arm_rto(c, now);
    if (!retx) {
      c->outstanding++;
      c->sent_hi = MAX(c->sent_hi, f->base + seq + 1);
      if (seq == 0 && fi != c->head) note_handoff(net, c, fi);
    }
    sent = true;
  }
  if (c->in_flight >= limit && c->t_send == 0)
    for (uint32_t fi = c->head; fi != NONE && !wanted; fi = net->msgs[fi].next) {
      const Message *f = msg_of(net, fi);
      wanted = f->n_lost > 0 || (f->nxt < f->n && f->nxt - f->una <= f->ring_mask && f->nxt - f->una < net->window);
    }
  c->cwnd_limited = wanted;
  if (c->in_flight > c->max_out) c->max_out = c->in_flight;
  if (sent) {
    if (c->t_rto == 0) arm_rto(c, now);
    if (c->t_tlp == 0) arm_tlp(net, c, now);
  }
  /* the caller brings the connection's timer up to date */
}

/* ---- loss detection ---- */

/* A loss was detected: start a recovery episode unless one is running. */
static void enter_recovery(CsNet *net, Conn *c, uint64_t pos) {
  if (c->in_recovery || pos < c->no_cut_until) return;
  c->in_recovery = true;
  c->recover = c->sent_hi;
  c->t_tlp = 0;
  c->tlp_end = 0; /* the episode's cut covers what the probe was about */
  if (c->ops->on_loss) c->ops->on_loss(&c->cc, now_of(net));
}

static void mark_lost(Message *f, Conn *c, uint32_t seq) {
  st_set(f, seq, S_LOST);
  f->in_flight--;
  c->in_flight--;
  f->n_lost++;
  if (seq < f->lost_scan) f->lost_scan = seq;
}

/* sack, by stream position: message m's packets below `end` with
 * DUP_THRESH packets of the stream received above them (up to stream
 * position `high`, exclusive) are lost. */
static uint32_t dupthresh_scan(CsNet *net, Message *m, Conn *c, uint64_t high, uint32_t end) {
  uint32_t lost = 0;
  if (m->loss_scan < m->una) m->loss_scan = m->una;
  while (m->loss_scan < end && m->base + m->loss_scan + DUP_THRESH < high) {
    if (st_get(m, m->loss_scan) == S_FLIGHT) {
      mark_lost(m, c, m->loss_scan);
      enter_recovery(net, c, m->base + m->loss_scan);
      lost++;
    }
    m->loss_scan++;
  }
  return lost;
}

/* sack: a packet with DUP_THRESH packets received after it is lost; a
 * retransmission when DUP_THRESH later transmissions arrived.  Packets
 * received of message f also reveal the losses of the connection's
 * earlier messages, as SACKs above a hole of a TCP stream do: those of
 * their packets that were sent before f's. */
static uint32_t detect_dupthresh(CsNet *net, uint32_t fi, Message *f, Conn *c, uint32_t ack_xmit) {
  uint32_t lost = 0;
  if (G_UNLIKELY(c->head != fi)) { /* earlier messages in flight (mostly there are none) */
    uint64_t high = f->base + f->high_sacked;
    for (uint32_t x = c->head; x != NONE && x != fi; x = net->msgs[x].next) {
      Message *m = msg_of(net, x);
      if (m->handoff > 0) lost += dupthresh_scan(net, m, c, high, MIN(m->handoff, m->nxt));
    }
  }
  lost += dupthresh_scan(net, f, c, f->base + f->high_sacked, f->nxt); /* its own (high_sacked <= nxt) */
  while (f->rtx.len > 0 && CS_RING_FRONT(f->rtx).xmit + DUP_THRESH < ack_xmit) {
    uint32_t seq = CS_RING_FRONT(f->rtx).seq, xm = CS_RING_FRONT(f->rtx).xmit;
    CS_RING_POP(f->rtx);
    if (seq >= f->una && seq < f->nxt && st_get(f, seq) == S_FLIGHT && f->xmit_of[seq & f->ring_mask] == xm) {
      mark_lost(f, c, seq);
      enter_recovery(net, c, f->base + seq);
      lost++;
    }
  }
  return lost;
}

/* RACK's reordering window (RFC 8985 6.2 step 4). */
static CsTime rack_reo_wnd(const CsNet *net, const Conn *c, const Message *f) {
  const RttState *st = &net->rtts[c->pair];
  if (!c->reordering_seen && (c->in_recovery || f->sacked_out >= DUP_THRESH)) return 0;
  CsTime w = st->min_rtt > 0 ? (CsTime)c->reo_wnd_mult * st->min_rtt / 4 : 0;
  return st->have_rtt ? MIN(w, st->srtt) : w;
}

/* Sent before RACK's latest delivery (by time, then stream position). */
static inline bool rack_before(const Conn *c, CsTime sent, uint64_t pos) {
  return sent < c->rack_xmit || (sent == c->rack_xmit && pos < c->rack_pos);
}

/* rack: judge the message's packets sent before the latest delivery, in
 * the order they were sent (originals by sequence, then retransmissions),
 * stopping at the first one whose deadline has not come; returns the
 * packets marked lost and sets *next to that deadline (or leaves it). */
static uint32_t detect_rack(CsNet *net, Message *f, Conn *c, CsTime *next) {
  if (c->rack_xmit < 0) return 0;
  CsTime now = now_of(net), wnd = c->rack_rtt + rack_reo_wnd(net, c, f);
  uint32_t lost = 0;
  if (f->loss_scan < f->una) f->loss_scan = f->una;
  while (f->loss_scan < f->nxt) {
    uint32_t s = f->loss_scan;
    if (st_get(f, s) == S_FLIGHT) {
      CsTime sent = f->sent_at[s & f->ring_mask];
      if (!rack_before(c, sent, f->base + s)) break;
      if (sent + wnd > now) {
        *next = MIN(*next, sent + wnd);
        break;
      }
      mark_lost(f, c, s);
      enter_recovery(net, c, f->base + s);
      lost++;
    }
    f->loss_scan++;
  }
  while (f->rtx.len > 0) {
    Rtx r = CS_RING_FRONT(f->rtx);
    if (r.seq < f->una || r.seq >= f->nxt || st_get(f, r.seq) != S_FLIGHT || f->xmit_of[r.seq & f->ring_mask] != r.xmit) {
      CS_RING_POP(f->rtx); /* delivered, or sent again since */
      continue;
    }
    if (!rack_before(c, r.sent, f->base + r.seq)) break;
    if (r.sent + wnd > now) {
      *next = MIN(*next, r.sent + wnd);
      break;
    }
    CS_RING_POP(f->rtx);
    mark_lost(f, c, r.seq);
    enter_recovery(net, c, f->base + r.seq);
    lost++;
  }
  return lost;
}

static uint32_t detect_rack_conn(CsNet *net, Conn *c) {
  CsTime next = CS_TIME_MAX;
  uint32_t lost = 0;
  for (uint32_t fi = c->head; fi != NONE; fi = net->msgs[fi].next) lost += detect_rack(net, msg_of(net, fi), c, &next);
  c->t_reo = next == CS_TIME_MAX ? 0 : next;
  return lost;
}

/* ---- the sender's end ---- */

/* Message slot fi may be let go: done, and named by no packet and no
 * held-back ACK (cs_net_send reuses it in a later event). */
void cs_transport_zombie_check(CsNet *net, uint32_t fi) {
  Message *f = msg_of(net, fi);
  if (!f->done || f->zombie || f->refs > 0 || net->conns[f->conn].ack_msg == fi) return;
  f->zombie = true;
  CS_RING_PUSH(net->zombies, 64, ((Zombie){cs_engine_events_executed(net->engine), fi}));
}

/* Message fi is delivered or abandoned and its sender has finished: its
 * statistics are final. */
static void message_done(CsNet *net, uint32_t fi) {
  Message *f = msg_of(net, fi);
  f->done = true;
  cs_stats_done(&net->stats, f->id);
  cs_transport_zombie_check(net, fi);
  if (--net->active == 0 && net->idle_fn) net->idle_fn(net->idle_ctx);
}

/* The slots of done messages let go in earlier events: free for reuse
 * (one named again meanwhile comes back through cs_transport_zombie_check). */
static void reuse_zombies(CsNet *net) {
  uint64_t now = cs_engine_events_executed(net->engine);
  while (net->zombies.len > 0 && CS_RING_FRONT(net->zombies).born < now) {
    uint32_t fi = CS_RING_FRONT(net->zombies).slot;
    CS_RING_POP(net->zombies);
    Message *f = msg_of(net, fi);
    f->zombie = false;
    if (f->refs > 0 || net->conns[f->conn].ack_msg == fi) continue;
    f->in_use = false;
    f->next_free = net->free_msg;
    net->free_msg = fi;
    net->released++;
  }
}

static void unlink_sender(CsNet *net, Conn *c, uint32_t fi) {
  uint32_t prev = NONE;
  for (uint32_t x = c->head; x != NONE; prev = x, x = net->msgs[x].next) {
    if (x != fi) continue;
    uint32_t next = net->msgs[x].next;
    if (prev == NONE) c->head = next;
    else net->msgs[prev].next = next;
    if (c->tail == fi) c->tail = prev;
    break;
  }
  net->msgs[fi].next = NONE;
}

static void finish_sender(CsNet *net, uint32_t fi) {
  Message *f = msg_of(net, fi);
  Conn *c = conn_of(net, f);
  f->sender_done = true;
  c->in_flight -= f->in_flight;
  c->outstanding -= f->nxt - f->una;
  f->in_flight = 0;
  unlink_sender(net, c, fi);
  g_free(f->state);
  f->state = NULL;
  g_free(f->xmit_of);
  f->xmit_of = NULL;
  g_free(f->sent_at);
  f->sent_at = NULL;
  g_free(f->rate);
  f->rate = NULL;
  CS_RING_FREE(f->rtx);
  if (c->outstanding == 0) {
    c->t_rto = c->t_tlp = c->t_reo = 0;
    c->idle = c->in_flight == 0;
  }
  if (f->delivered || f->failed) message_done(net, fi);
}

static inline __attribute__((always_inline)) void rtt_sample(CsNet *net, Conn *c, CsTime r) {
  RttState *st = rtt_of(net, c);
  if (!st->have_rtt) {
    st->srtt = r;
    st->rttvar = r / 2;
    st->have_rtt = true;
  } else {
    CsTime err = st->srtt > r ? st->srtt - r : r - st->srtt;
    st->rttvar = (3 * st->rttvar + err) / 4;
    st->srtt = (7 * st->srtt + r) / 8;
  }
  if (st->min_rtt < 0 || r < st->min_rtt) st->min_rtt = r;
  c->rto = rto_of(net, st); /* a new sample also ends any backoff */
}

/* The delivery-rate sample of an ACK (Linux's tcp_rate_gen), from the
 * packet it acknowledges: what it recorded when sent, and when it was. */
static void rate_sample(CsNet *net, Conn *c, const RateStamp *rs, CsTime sent, CsAck *info) {
  info->delivered = c->delivered;
  info->prior_delivered = rs->delivered;
  info->app_limited = rs->app_limited;
  CsTime interval = MAX(sent - rs->first_tx, info->now - rs->delivered_time);
  c->first_tx = sent;
  CsTime min_rtt = rtt_of(net, c)->min_rtt;
  if (interval <= 0 || (min_rtt > 0 && interval < min_rtt)) return; /* too short to be a rate */
  info->rate_interval = interval;
  info->rate_bps = (double)(c->delivered - rs->delivered) * 8.0 * (net->mss + net->header) * 1e12 / (double)interval;
}

/* The cumulative ACK `seq`: una moves up to it, and on past what was
 * SACKed above; returns the packets it newly acknowledges. */
static inline __attribute__((always_inline)) uint32_t advance_una(Message *f, Conn *c, uint32_t seq) {
  uint32_t newly = 0, old_una = f->una;
  /* slots behind una are cleared for the packets a ring later */
  while (f->una < seq) {
    uint8_t st = st_get(f, f->una);
    if (st != S_DONE) {
      if (st == S_FLIGHT) f->in_flight--, c->in_flight--;
      else if (st == S_LOST) f->n_lost--;
      newly++;
    } else if (f->sacked_out > 0) {
      f->sacked_out--;
    }
    st_set(f, f->una, S_UNSENT);
    f->una++;
  }
  while (f->una < f->nxt && st_get(f, f->una) == S_DONE) {
    if (f->sacked_out > 0) f->sacked_out--;
    st_set(f, f->una++, S_UNSENT);
  }
  if (f->lost_scan < f->una) f->lost_scan = f->una;
  c->outstanding -= f->una - old_una;
  return newly;
}

/* A selective acknowledgement of packet s. */
static inline __attribute__((always_inline)) uint32_t sack_one(Message *f, Conn *c, uint32_t s) {
  if (s < f->una || s >= f->nxt || st_get(f, s) == S_DONE) return 0;
  uint8_t st = st_get(f, s);
  if (st == S_FLIGHT) f->in_flight--, c->in_flight--;
  else if (st == S_LOST) f->n_lost--;
  st_set(f, s, S_DONE);
  f->sacked_out++; /* the una walks take it back when they pass it */
  return 1;
}

static void sender_ack(CsNet *net, const Packet *ack) {
  uint32_t fi = ack->owner;
  Message *f = msg_of(net, fi);
  if (f->sender_done) return;
  uint32_t ci = f->conn;
  Conn *c = &net->conns[ci];
  CsTime now = now_of(net);
  uint32_t newly = 0;
  bool sample_ok = false, rate_ok = false;
  uint32_t s = ack->sack;
  if (sack_one(f, c, s)) {
    newly++;
    sample_ok = !(ack->flags & F_RETX);
    rate_ok = f->rate && f->xmit_of[s & f->ring_mask] == ack->xmit;
    /* an original arriving below one delivered earlier: reordering */
    if (!(ack->flags & F_RETX) && s + 1 < f->high_sacked) c->reordering_seen = true;
  }
  /* the rest of its SACK block, down to what an earlier ACK reported (that
   * one's block went on below it) */
  for (uint32_t k = 1; k <= ack->sack_back && s - k >= f->una && s - k < s; k++) {
    if (st_get(f, s - k) == S_DONE) break;
    newly += sack_one(f, c, s - k);
  }
  if (s + 1 > f->high_sacked) f->high_sacked = s + 1;
  RateStamp rs = rate_ok ? f->rate[s & f->ring_mask] : (RateStamp){0};
  uint32_t old_una = f->una;
  bool oldest = c->head == fi; /* its cumulative ACK is the connection's */
  newly += advance_una(f, c, ack->seq);
  c->delivered += newly;
  if (newly) c->delivered_time = now;
  if (c->app_limited && c->delivered > c->app_limited) c->app_limited = 0;

  CsAck info = {.newly = newly, .ece = (ack->flags & F_ECE) != 0, .rtt = sample_ok ? now - ack->stamp : -1,
                .now = now};
  if (sample_ok) rtt_sample(net, c, info.rtt);
  /* RACK: the latest delivered transmission (its time is echoed) */
  if (c->rack && newly > 0) {
    CsTime rtt = now - ack->stamp;
    const RttState *st = rtt_of(net, c);
    bool spurious = (ack->flags & F_RETX) && st->min_rtt > 0 && rtt < st->min_rtt;
    uint64_t pos = f->base + s;
    if (!spurious && (ack->stamp > c->rack_xmit || (ack->stamp == c->rack_xmit && pos > c->rack_pos))) {
      c->rack_xmit = ack->stamp;
      c->rack_pos = pos;
      c->rack_rtt = rtt;
    }
  }
  if (rate_ok) rate_sample(net, c, &rs, f->sent_at[s & f->ring_mask], &info);
  if (newly > 0) c->tlp_out = false;

  uint64_t una = conn_una(net, c);
  /* the episodes this ACK ends (before it detects new losses, which may begin another) */
  bool end_recovery = c->in_recovery && una >= c->recover, end_loss = c->in_loss && una >= c->no_cut_until;
  if (end_recovery) c->in_recovery = false;
  if (end_loss) c->in_loss = false;
  if (end_recovery || end_loss) {
    if (c->rack && c->reo_wnd_persist > 0 && --c->reo_wnd_persist == 0) c->reo_wnd_mult = 1;
    if (c->ops->on_event) c->ops->on_event(&c->cc, CS_CC_RECOVERY_END, now);
  }
  if (c->rack) { /* a duplicate arrived: a retransmission was spurious, widen the window (once reordering is seen) */
    if (c->dsack_round && una >= c->dsack_round) c->dsack_round = 0;
    if (!c->dsack_round && (ack->flags & F_DSACK) && c->reordering_seen) {
      c->dsack_round = MAX(c->sent_hi, 1);
      c->reo_wnd_mult++;
      c->reo_wnd_persist = 16;
    }
  }
  /* RFC 8985 7.4.2: did the probe repair a loss?  A resent probe that
   * the cumulative ACK passes with no D-SACK for it (its original had not
   * arrived) repaired the tail: the algorithm cuts its window for it, as
   * for a loss (Linux's tcp_process_tlp_ack) */
  if (c->tlp_end && una >= c->tlp_end) {
    if (!c->tlp_retx || (ack->flags & F_DSACK)) {
      c->tlp_end = 0; /* new data delivered, or the original had arrived */
    } else if (una > c->tlp_end) {
      c->tlp_end = 0;
      if (!c->in_recovery && !c->in_loss && c->ops->on_loss) c->ops->on_loss(&c->cc, now);
    }
  }
  info.lost = c->rack ? detect_rack_conn(net, c) : detect_dupthresh(net, fi, f, c, ack->xmit);
  info.una = una;
  info.nxt = c->sent_hi;
  info.in_flight = c->in_flight;
  info.min_rtt = rtt_of(net, c)->min_rtt;
  info.srtt = rtt_of(net, c)->have_rtt ? rtt_of(net, c)->srtt : -1;
  info.in_recovery = c->in_recovery || c->in_loss;
  info.delivered = c->delivered;
  if (c->ops->on_ack) c->ops->on_ack(&c->cc, &info);
  /* as Linux's tcp_is_cwnd_limited: the window grows only when it was the
   * limit (in slow start: when at least half of it was used in the last
   * round), not while the sender has too little to send */
  bool limited = c->cwnd_limited || (c->cc.cwnd < c->cc.ssthresh && c->cc.cwnd < 2.0 * c->max_out);
  if (newly > 0 && !c->in_recovery && limited && c->ops->cong_avoid) c->ops->cong_avoid(&c->cc, &info);
  if (una >= c->max_out_end) { /* a round: the most in flight starts over */
    c->max_out = c->in_flight;
    c->max_out_end = c->sent_hi + 1;
  }
  if (c->cc.mark_app_limited) {
    c->app_limited = MAX(c->delivered + c->in_flight, 1);
    c->cc.mark_app_limited = false;
  }
  if (G_UNLIKELY(net->conn_trace_fn)) conn_trace(net, ci);

  if (f->una > old_una) {
    c->consecutive_timeouts = 0;
    /* RFC 6298 (5.3): restart on new data acknowledged - the stream's
     * cumulative ACK, not a later message's: those are SACKs of the
     * stream, and restarting on them would hold back the timeout of an
     * earlier message's lost tail for as long as later messages flow */
    if (oldest) arm_rto(c, now);
    if (f->una == f->n) finish_sender(net, fi);
  }
  c = &net->conns[ci];
  if (c->outstanding == 0) {
    c->t_rto = c->t_tlp = c->t_reo = 0;
  } else {
    if (c->t_rto == 0) arm_rto(c, now);
    arm_tlp(net, c, now);
  }
  if (c->in_flight == 0 && c->outstanding == 0) c->idle = true;
  conn_send(net, ci);
  c = &net->conns[ci];
  /* the sender has nothing more to send while the window has room */
  if (c->ops->rate && c->in_flight < (uint32_t)c->cc.cwnd && c->t_send == 0) {
    bool more = false;
    for (uint32_t x = c->head; x != NONE && !more; x = net->msgs[x].next)
      more = net->msgs[x].n_lost > 0 || net->msgs[x].nxt < net->msgs[x].n;
    if (!more) c->app_limited = MAX(c->delivered + c->in_flight, 1);
  }
  timer_update(net, ci);
}

static void release_held(CsNet *net, uint32_t ci, CsTime now);

/* Give up on a message after max_timeouts: one its receiver already has
 * is delivered all the same (only its acknowledgements never came back). */
static void fail_message(CsNet *net, uint32_t fi) {
  Message *f = msg_of(net, fi);
  if (f->delivered) {
    finish_sender(net, fi);
    return;
  }
  f->failed = true;
  stats_of(net, f)->failed = true;
  stats_of(net, f)->end = now_of(net);
  net->failed++;
  g_free(f->rcv_bits);
  f->rcv_bits = NULL;
  CsDeliverFn fn = f->fn;
  void *ctx = f->ctx;
  uint32_t id = f->id, ci = f->conn;
  finish_sender(net, fi);
  net->notified++;
  if (fn) fn(ctx, id, true);
  if (net->roce && !net->gbn) release_held(net, ci, now_of(net)); /* an abandoned message holds nothing up */
}

static void on_rto(CsNet *net, uint32_t ci) {
  Conn *c = &net->conns[ci];
  CsTime now = now_of(net);
  net->timeouts++;
  if (++c->consecutive_timeouts >= net->max_timeouts) {
    /* every message of the connection waits behind the one that cannot get through */
    uint32_t last = c->tail; /* messages a failure callback sends on this pair are not failed with these */
    for (bool more = c->head != NONE; more;) {
      uint32_t fi = c->head;
      more = fi != last;
      stats_of(net, msg_of(net, fi))->timeouts++;
      fail_message(net, fi);
      c = &net->conns[ci];
    }
    /* the next message finds a fresh connection, as a new socket would be */
    c->consecutive_timeouts = 0;
    c->rto = rto_of(net, rtt_of(net, c));
    c->in_loss = c->in_recovery = false;
    c->t_rto = c->t_tlp = c->t_reo = 0;
    return;
  }
  for (uint32_t fi = c->head; fi != NONE; fi = net->msgs[fi].next) {
    Message *f = msg_of(net, fi);
    if (f->una == f->nxt) continue;
    stats_of(net, f)->timeouts++;
    for (uint32_t seq = f->una; seq < f->nxt; seq++)
      if (st_get(f, seq) == S_FLIGHT) mark_lost(f, c, seq);
    f->rtx.len = 0; /* every retransmission in flight is presumed lost now */
    if (net->roce) { /* NACKs about what was sent before are stale; what is resent may be NACKed again */
      f->loss_scan = f->una;
      f->rewind_xmit = f->xmits;
    }
  }
  if (c->ops->on_timeout) {
    /* as Linux's tcp_enter_loss: ssthresh is cut on the first timeout of
     * an episode, not again on a repeated one or one during recovery */
    bool keep = c->in_recovery || (c->in_loss && c->consecutive_timeouts > 1);
    double ssthresh = c->cc.ssthresh;
    c->ops->on_timeout(&c->cc, now);
    if (keep) c->cc.ssthresh = ssthresh;
  }
  /* slow start again (RFC 5681); losses of what was sent before the
   * timeout are part of it and cause no further cut */
  c->in_recovery = false;
  c->in_loss = true;
  c->no_cut_until = c->sent_hi;
  c->tlp_out = false;
  c->tlp_end = 0;
  c->t_tlp = c->t_reo = 0;
  if (!net->roce) c->rto = MIN(2 * c->rto, MAX_RTO); /* back off until an ACK brings a new sample */
  arm_rto(c, now);
  if (G_UNLIKELY(net->conn_trace_fn)) conn_trace(net, ci);
}

/* RFC 8985 7.3: send one new packet if there is one, else the last one
 * sent again, to elicit the ACK that lets RACK see a lost tail. */
static bool on_tlp(CsNet *net, uint32_t ci) {
  Conn *c = &net->conns[ci];
  CsTime now = now_of(net);
  if (c->in_recovery || c->outstanding == 0) return false;
  uint32_t last = NONE;
  for (uint32_t fi = c->head; fi != NONE; fi = net->msgs[fi].next) {
    Message *f = msg_of(net, fi);
    if (f->nxt < f->n && f->nxt - f->una <= f->ring_mask && f->nxt - f->una < net->window) {
      uint32_t seq = f->nxt++;
      st_set(f, seq, S_FLIGHT);
      f->in_flight++;
      send_data(net, fi, seq, false, now);
      c = &net->conns[ci];
      c->in_flight++;
      c->outstanding++;
      c->sent_hi = MAX(c->sent_hi, f->base + seq + 1);
      if (seq == 0 && fi != c->head) note_handoff(net, c, fi);
      c->tlp_out = true;
      c->tlp_retx = false;
      c->tlp_end = c->sent_hi;
      arm_rto(c, now);
      return true;
    }
    if (f->nxt > f->una) last = fi;
  }
  if (last == NONE) return false;
  Message *f = msg_of(net, last);
  uint32_t seq = f->nxt - 1;
  if (st_get(f, seq) != S_FLIGHT) return false; /* lost already: recovery sends it */
  send_data(net, last, seq, true, now);
  c = &net->conns[ci];
  c->tlp_out = true;
  c->tlp_retx = true;
  c->tlp_end = c->sent_hi;
  arm_rto(c, now);
  return true;
}

/* ---- the receiver's end ---- */

/* An ACK (or NACK, or CNP) for data packet pk back to its sender. */
static inline __attribute__((always_inline)) void send_reply_as(CsNet *net, uint32_t fi, const Packet *pk, uint8_t flags,
                                                                 uint16_t back) {
  Message *f = msg_of(net, fi);
  Packet ack, *a = &ack;
  cs_net_packet_new(net, a, PKT_ACK);
  a->stamp = pk->stamp;
  a->owner = fi;
  f->refs++;
  a->seq = f->rcv_nxt;
  a->sack = pk->seq;
  a->bytes = net->ack_bytes;
  a->hops = f->hops_rev;
  a->path = f->path_rev + (f->n_paths > 1 ? ((pk->xmit * 2246822519u) >> 16) % f->n_paths * f->hops_rev : 0);
  a->flags = flags;
  a->sack_back = back;
  a->xmit = pk->xmit;
  cs_net_inject(net, a);
}

static inline __attribute__((always_inline)) void send_reply(CsNet *net, uint32_t fi, const Packet *pk, uint8_t flags) {
  send_reply_as(net, fi, pk, flags, 0);
}

/* A TCP ACK's SACK block, as a receiver's first block reports the run of
 * packets around the one just received (RFC 2018): how many packets
 * just below s it holds as well, above its hole (s at or above rcv_nxt:
 * else the cumulative ACK covers s and the block is empty).  With one
 * packet a block, a lost ACK hid that its packet had arrived: the
 * sender's loss detection called it lost and sent it again (a BBR ring
 * at 1 % loss both ways resent 2,181 packets for 1,398 lost).  The run
 * an in-order stream above a hole extends is kept (run_lo, run_hi): the
 * count costs a word's scan only when a packet lands elsewhere. */
static G_GNUC_NO_INLINE uint16_t sack_run_below(Message *f, uint32_t s) {
  if (!f->rcv_bits) return 0;
  if (s != f->run_hi || f->run_lo <= f->rcv_nxt) { /* a new run: from s down to a hole (rcv_nxt's at the latest) */
    uint32_t p = s;
    while (p > f->rcv_nxt) {
      uint32_t r = (p - 1) & f->ring_mask, b = r % 64;
      uint64_t m = ~f->rcv_bits[r / 64] << (63 - b); /* bit r at the top: its leading zeros are the set bits from r down */
      uint32_t run = m ? (uint32_t)__builtin_clzll(m) : b + 1;
      if (run > p - f->rcv_nxt) run = p - f->rcv_nxt;
      p -= run;
      if (m) break;
    }
    f->run_lo = p;
  }
  f->run_hi = s + 1;
  uint32_t back = s - f->run_lo;
  return back > UINT16_MAX ? UINT16_MAX : (uint16_t)back;
}

static void send_ack(CsNet *net, Conn *c, uint32_t fi, const Packet *pk, bool ece, bool dup) {
  uint8_t flags = (ece ? F_ECE : 0) | (pk->flags & F_RETX) | (dup ? F_DSACK : 0);
  if (net->delayed_ack > 1) {
    uint32_t covers = MAX(c->ack_count, 1);
    c->quick = c->quick > covers ? c->quick - covers : 0;
    uint32_t held = c->ack_msg;
    c->ack_msg = NONE;
    c->ack_count = 0;
    c->t_ack = 0;
    if (held != NONE && held != fi) cs_transport_zombie_check(net, held);
  }
  Message *f = msg_of(net, fi);
  /* (in order, the cumulative ACK covers the packet: no block) */
  send_reply_as(net, fi, pk, flags, pk->seq < f->rcv_nxt ? 0 : sack_run_below(f, pk->seq));
  if (net->delayed_ack > 1) cs_transport_zombie_check(net, fi);
}

/* The held-back ACK, now. */
static void flush_ack(CsNet *net, uint32_t ci) {
  Conn *c = &net->conns[ci];
  if (c->ack_msg == NONE) return;
  Packet pk = c->ack_pkt;
  send_ack(net, c, c->ack_msg, &pk, c->ack_ce, false);
}

static void deliver(CsNet *net, uint32_t fi, CsTime now) {
  Message *f = msg_of(net, fi);
  f->delivered = true;
  stats_of(net, f)->delivered = true;
  stats_of(net, f)->end = now;
  g_free(f->rcv_bits);
  f->rcv_bits = NULL;
  bool finished = f->sender_done;
  net->notified++;
  if (f->fn) f->fn(f->ctx, f->id, false); /* may send: f moves */
  if (finished) message_done(net, fi);
}

/* roce: the oldest message of queue pair c still its sender's (the
 * connection's list, in posting order) and posted before stream position
 * `base` that is neither delivered nor abandoned (an abandoned one holds
 * nothing up), or NONE. */
static uint32_t qp_undelivered_before(const CsNet *net, const Conn *c, uint64_t base) {
  for (uint32_t m = c->head; m != NONE && net->msgs[m].base < base; m = net->msgs[m].next)
    if (!net->msgs[m].delivered && !net->msgs[m].failed) return m;
  return NONE;
}

/* roce selective: whether a message of queue pair c posted before stream
 * position `base` is neither delivered nor abandoned: one not received
 * whole is still its sender's; one received whole and held is in the held
 * list, in posting order too. */
static bool qp_waits_before(const CsNet *net, const Conn *c, uint64_t base) {
  return qp_undelivered_before(net, c, base) != NONE || (c->held_head != NONE && net->msgs[c->held_head].base < base);
}

/* roce selective: the held messages of connection ci whose earlier
 * messages are all delivered or abandoned now complete, in order. */
static void release_held(CsNet *net, uint32_t ci, CsTime now) {
  for (;;) {
    Conn *c = &net->conns[ci];
    uint32_t h = c->held_head;
    if (h == NONE) return;
    Message *f = msg_of(net, h);
    /* no held message lies before the first held one: only the sender's
     * unfinished ones can hold it up */
    if (qp_undelivered_before(net, c, f->base) != NONE) return;
    c->held_head = f->next_held;
    f->held = false;
    deliver(net, h, now); /* may send on ci */
  }
}

/* A message received whole: delivered, or with roce's selective repeat
 * held while an earlier message of its queue pair is not (a NIC places
 * the data of a reliable connection's work requests as it comes and
 * completes them in order). */
static G_GNUC_NO_INLINE void receiver_whole(CsNet *net, uint32_t fi, CsTime now) {
  Message *f = msg_of(net, fi);
  if (!net->roce || net->gbn) { /* (go-back-n keeps nothing past a hole: its messages end in order) */
    deliver(net, fi, now);
    return;
  }
  uint32_t ci = f->conn;
  Conn *c = &net->conns[ci];
  if (qp_waits_before(net, c, f->base)) {
    f->held = true;
    g_free(f->rcv_bits);
    f->rcv_bits = NULL;
    uint32_t *at = &c->held_head; /* in posting order */
    while (*at != NONE && net->msgs[*at].base < f->base) at = &net->msgs[*at].next_held;
    f->next_held = *at;
    *at = fi;
    return;
  }
  deliver(net, fi, now);
  release_held(net, ci, now);
}

/* The message is delivered once its receiver has every packet. */
static inline __attribute__((always_inline)) void receiver_check_done(CsNet *net, uint32_t fi, CsTime now) {
  const Message *f = msg_of(net, fi);
  if (f->rcv_nxt == f->n && !f->delivered && !f->held) receiver_whole(net, fi, now);
}

/* Packet seq arrives at a receiver that keeps what comes out of order:
 * returns whether it had it already. */
static inline __attribute__((always_inline)) bool rcv_mark(Message *f, uint32_t seq) {
  uint32_t s = seq & f->ring_mask;
  bool dup = f->rcv_bits[s / 64] >> (s % 64) & 1;
  f->rcv_bits[s / 64] |= 1ULL << (s % 64);
  for (;;) {
    uint32_t r = f->rcv_nxt & f->ring_mask;
    if (f->rcv_nxt >= f->n || !(f->rcv_bits[r / 64] >> (r % 64) & 1)) break;
    f->rcv_bits[r / 64] &= ~(1ULL << (r % 64));
    f->rcv_nxt++;
  }
  if (seq + 1 > f->rcv_high) f->rcv_high = seq + 1;
  return dup;
}

static void receiver_data(CsNet *net, const Packet *pk) {
  uint32_t fi = pk->owner;
  Message *f = msg_of(net, fi);
  uint32_t ci = f->conn;
  Conn *c = &net->conns[ci];
  CsTime now = now_of(net);
  uint32_t old_nxt = f->rcv_nxt;
  bool dup = pk->seq < f->rcv_nxt; /* a duplicate: D-SACK it (RFC 2883) */
  if (f->rcv_bits && pk->seq >= f->rcv_nxt) dup = rcv_mark(f, pk->seq);
  if (f->failed) return; /* abandoned: the sender listens no more */
  bool ce = (pk->flags & F_CE) != 0;
  if (net->delayed_ack <= 1) {
    send_ack(net, c, fi, pk, ce, dup);
  } else {
    /* Linux's rules for an ACK at once; else every delayed_ack-th packet */
    if (c->last_rcv >= 0 && now - c->last_rcv > c->rto) c->quick = QUICKACKS; /* a long gap */
    c->last_rcv = now;
    if (c->ack_msg != NONE && (c->ack_msg != fi || c->ack_ce != ce)) flush_ack(net, ci);
    bool in_order = pk->seq == old_nxt && f->rcv_nxt == old_nxt + 1;
    bool now_ack = c->quick > 0 || !in_order || f->rcv_high > f->rcv_nxt || f->rcv_nxt == f->n || c->ack_count + 1 >= net->delayed_ack;
    c->ack_msg = fi;
    c->ack_ce = ce;
    c->ack_pkt = *pk;
    c->ack_count++;
    if (now_ack || dup) {
      send_ack(net, c, fi, pk, ce, dup);
    } else if (c->t_ack == 0) {
      c->t_ack = deadline_after(now, net->ack_delay);
      timer_update(net, ci);
    }
  }
  receiver_check_done(net, fi, now);
}

/* ---- roce: queue pairs ---- */

/* A roce receiver: a CNP for a marked packet (at most one per queue pair
 * per cnp_interval), a NACK on a gap (go-back-n: once per gap, and what
 * comes out of order is dropped; selective: every packet out of order is
 * kept and NACKed with its number), ACKs coalesced every delayed_ack
 * in-order packets and at a message's end, a duplicate ACKed at once. */
/* roce: a queue pair's messages are one sequence of packets, as a
 * reliable connection's packet numbers run across its work requests.  The
 * oldest message of queue pair c that its receiver has not got whole, when
 * it comes before message fi (the receiver's next expected packet is
 * then in it, not in fi); else NONE.  (fi is its sender's still.) */
static inline uint32_t qp_hole_before(const CsNet *net, const Conn *c, uint32_t fi) {
  return qp_undelivered_before(net, c, net->msgs[fi].base);
}

/* A packet of a later message came while message `hole` of its queue
 * pair misses packets: the receiver NACKs the queue pair's next expected
 * packet (hole's first missing), once for each such position.  What the
 * sender sent of hole before that packet and is not known received is
 * lost (`sack`: everything hole has sent, as its first transmissions all
 * went before the later message's). */
static void roce_nack_hole(CsNet *net, Conn *c, uint32_t hole, const Packet *pk) {
  Message *h = msg_of(net, hole);
  uint64_t at = h->base + h->rcv_nxt;
  if (c->qp_nack == at) return;
  c->qp_nack = at;
  net->nacks++;
  c->ack_count = 0;
  Packet q = *pk;
  q.seq = h->nxt;
  q.xmit = h->xmits; /* about what the sender has sent of it so far: not stale */
  send_reply(net, hole, &q, F_NACK | (pk->flags & F_RETX));
}

static void roce_receiver_data(CsNet *net, const Packet *pk) {
  uint32_t fi = pk->owner;
  Message *f = msg_of(net, fi);
  Conn *c = &net->conns[f->conn];
  CsTime now = now_of(net);
  if ((pk->flags & F_CE) && !f->failed &&
      (c->last_cnp < 0 || now - c->last_cnp >= net->cc_cfg.dcqcn.cnp_interval)) {
    c->last_cnp = now;
    net->cnps++;
    send_reply(net, fi, pk, F_CNP | F_ECE);
    f = msg_of(net, fi);
    c = &net->conns[f->conn];
  }
  uint32_t old = f->rcv_nxt;
  bool dup = pk->seq < old, gap = false;
  /* an earlier message of the queue pair misses packets: go-back-n drops
   * this one (nothing out of order is kept), selective keeps it; both
   * NACK the hole */
  uint32_t hole = !dup && f->rcv_bits && !f->sender_done ? qp_hole_before(net, c, fi) : NONE;
  if (G_UNLIKELY(hole != NONE)) {
    roce_nack_hole(net, c, hole, pk);
    f = msg_of(net, fi);
    c = &net->conns[f->conn];
    if (net->gbn) return;
  }
  if (!dup && f->rcv_bits) {
    if (!net->gbn) {
      dup = rcv_mark(f, pk->seq);
      gap = !dup && pk->seq > old;
    } else if (pk->seq == old) {
      f->rcv_nxt++;
      f->nack_sent = false;
    } else {
      gap = true; /* dropped: go-back-n keeps nothing out of order */
    }
  }
  if (f->failed) return; /* abandoned: the sender listens no more */
  uint8_t retx = pk->flags & F_RETX;
  if (gap) {
    if (!net->gbn || !f->nack_sent) {
      f->nack_sent = true;
      net->nacks++;
      c->ack_count = 0;
      send_reply(net, fi, pk, F_NACK | retx);
    }
  } else if (dup) {
    send_reply(net, fi, pk, F_DSACK | retx);
  } else if (++c->ack_count >= net->delayed_ack || f->rcv_nxt == f->n || f->rcv_nxt > old + 1) {
    c->ack_count = 0; /* coalesced; at once at the end, and when a hole is filled */
    send_reply(net, fi, pk, retx);
  }
  receiver_check_done(net, fi, now);
}

/* conn_send's first test, inline: a paced queue pair hears most of its
 * ACKs while its shaper holds it (t_send set), and the call returned at
 * once (its frame was most of what it cost). */
static inline void roce_conn_send(CsNet *net, uint32_t ci) {
  const Conn *c = &net->conns[ci];
  if (c->t_send > 0 || c->head == NONE) return;
  conn_send(net, ci);
}

/* A roce sender hears a CNP, an ACK or a NACK. */
static void roce_sender_ack(CsNet *net, const Packet *ack) {
  uint32_t fi = ack->owner;
  Message *f = msg_of(net, fi);
  uint32_t ci = f->conn;
  Conn *c = &net->conns[ci];
  CsTime now = now_of(net);
  if (ack->flags & F_CNP) { /* the queue pair's rate, whichever message the marked packet belonged to */
    CsAck info = {.ece = true, .cnp = true, .rtt = -1, .now = now, .in_flight = c->in_flight};
    if (c->ops->on_ack) c->ops->on_ack(&c->cc, &info);
    if (G_UNLIKELY(net->conn_trace_fn)) conn_trace(net, ci);
    roce_conn_send(net, ci);
    timer_update(net, ci);
    return;
  }
  if (f->sender_done) return;
  uint32_t old_una = f->una;
  uint64_t qp_una = conn_una(net, c);
  if ((ack->flags & F_NACK) && !net->gbn) sack_one(f, c, ack->sack);
  uint32_t newly = advance_una(f, c, ack->seq);
  c->delivered += newly;
  if (newly) c->delivered_time = now; /* as TCP's: hybrid fidelity's rates read it */
  if (!(ack->flags & (F_RETX | F_NACK | F_DSACK))) rtt_sample(net, c, now - ack->stamp);
  if (ack->flags & F_NACK) {
    if (net->gbn) {
      if (ack->xmit > f->rewind_xmit) { /* not about a packet sent before the last go-back */
        /* back to the NACKed packet, over the queue pair's later messages
         * too: their packets in flight came after the hole, and the
         * receiver keeps none of them */
        for (uint32_t m = fi; m != NONE; m = net->msgs[m].next) {
          Message *g = msg_of(net, m);
          for (uint32_t seq = g->una; seq < g->nxt; seq++)
            if (st_get(g, seq) == S_FLIGHT) mark_lost(g, c, seq);
          g->rewind_xmit = g->xmits;
        }
      }
    } else if (ack->xmit > f->rewind_xmit) { /* what was sent before the packet NACKed and is still missing is lost, once
                                              * (a NACK about a packet sent before the last timeout is stale) */
      if (f->loss_scan < f->una) f->loss_scan = f->una;
      for (; f->loss_scan < ack->sack && f->loss_scan < f->nxt; f->loss_scan++)
        if (st_get(f, f->loss_scan) == S_FLIGHT) mark_lost(f, c, f->loss_scan);
    }
  }
  if (G_UNLIKELY(net->conn_trace_fn)) conn_trace(net, ci);
  if (f->una > old_una) {
    c->consecutive_timeouts = 0;
    if (f->una == f->n) finish_sender(net, fi);
  }
  c = &net->conns[ci];
  /* the timer restarts when the queue pair's oldest packet is acknowledged,
   * not a later message's: a lost tail is found by the timeout even while
   * later messages flow */
  if (conn_una(net, c) > qp_una) arm_rto(c, now);
  if (c->outstanding == 0) c->t_rto = 0;
  else if (c->t_rto == 0) arm_rto(c, now);
  roce_conn_send(net, ci);
  timer_update(net, ci);
}

/* pk: the arrival's own copy (on_pipe's), which what the handlers send does not touch. */
void cs_transport_receive(CsNet *net, const Packet *pk) {
  cs_net_packet_gone(net, pk);
  if (net->roce) {
    if (pk->kind == PKT_DATA) roce_receiver_data(net, pk);
    else roce_sender_ack(net, pk);
  } else if (pk->kind == PKT_DATA) {
    receiver_data(net, pk);
  } else {
    sender_ack(net, pk);
  }
}

static void on_conn_timer(CsEngine *e, void *ctx, uint64_t arg) {
  CsNet *net = ctx;
  uint32_t ci = (uint32_t)arg;
  Conn *c = &net->conns[ci];
  c->timer_event = false;
  CsTime now = cs_engine_now(e);
  if (c->t_ack > 0 && c->t_ack <= now) flush_ack(net, ci);
  c = &net->conns[ci];
  if (c->t_send > 0 && c->t_send <= now) c->t_send = 0;
  if (c->t_reo > 0 && c->t_reo <= now) detect_rack_conn(net, c);
  bool rto_due = c->t_rto > 0 && c->t_rto <= now;
  if (c->t_tlp > 0 && c->t_tlp <= now && (!rto_due || c->t_tlp <= c->t_rto)) {
    /* the probe, due before the RTO or in its place (it re-arms the RTO) */
    c->t_tlp = 0;
    if (on_tlp(net, ci)) rto_due = false;
    c = &net->conns[ci];
  }
  if (rto_due) {
    c->t_rto = 0;
    on_rto(net, ci);
  }
  conn_send(net, ci);
  timer_update_as(net, ci, true);
}

/* ---- connections and messages ---- */

static uint32_t pair_of(CsNet *net, uint32_t src, uint32_t dst) {
  guint64 key = ((guint64)src << 32) | dst;
  uint32_t pi = GPOINTER_TO_UINT(g_hash_table_lookup(net->pairs, &key));
  if (pi) return pi - 1;
  pi = net->n_pairs;
  if (net->n_pairs == net->cap_pairs) {
    net->cap_pairs = net->cap_pairs ? 2 * net->cap_pairs : 64;
    net->rtts = g_renew(RttState, net->rtts, net->cap_pairs);
    net->pair_conn = g_renew(uint32_t, net->pair_conn, net->cap_pairs);
  }
  net->n_pairs++;
  net->rtts[pi] = (RttState){.min_rtt = -1};
  net->pair_conn[pi] = NONE;
  guint64 *k = g_new(guint64, 1);
  *k = key;
  g_hash_table_insert(net->pairs, k, GUINT_TO_POINTER(pi + 1));
  return pi;
}

static uint32_t open_conn(CsNet *net, uint32_t src, uint32_t dst, uint32_t pair, uint64_t line) {
  CS_GROW(net->conns, net->n_conns, net->cap_conns, 64);
  uint32_t ci = net->n_conns++;
  Conn *c = &net->conns[ci];
  memset(c, 0, sizeof *c);
  c->ops = net->cc;
  c->cc.cfg = &net->cc_cfg;
  c->cc.max_cwnd = (double)net->window;
  c->cc.seed = cs_rng_stream_id("connection", net->seed, ci);
  c->cc.line_bps = line;
  c->ops->init(&c->cc);
  c->pair = pair;
  c->src = src;
  c->dst = dst;
  c->head = c->tail = NONE;
  c->ack_msg = NONE;
  c->rack = net->rack;
  c->reo_wnd_mult = 1;
  c->idle = true;
  c->cc.last_send = c->last_rcv = c->rack_xmit = c->last_cnp = -1;
  c->qp_nack = UINT64_MAX;
  c->held_head = NONE;
  c->quick = net->delayed_ack > 1 ? QUICKACKS : 0;
  c->rto = rto_of(net, &net->rtts[pair]);
  return ci;
}

/* The connection a new message goes on (`line`: the bandwidth of its first link). */
static uint32_t conn_for(CsNet *net, uint32_t src, uint32_t dst, uint64_t line) {
  uint32_t pair = pair_of(net, src, dst);
  if (!net->persistent) return open_conn(net, src, dst, pair, line);
  if (net->pair_conn[pair] == NONE) net->pair_conn[pair] = open_conn(net, src, dst, pair, line);
  return net->pair_conn[pair];
}

uint32_t cs_net_send(CsNet *net, uint32_t src, uint32_t dst, uint64_t payload, CsDeliverFn fn, void *ctx) {
  g_assert(src != dst && src < net->t->n_hosts && dst < net->t->n_hosts && payload > 0);
  uint64_t n = (payload + net->mss - 1) / net->mss;
  g_assert(n <= CS_NET_MAX_PACKETS); /* checked at set-up */
  /* a slot: a done message's (its path's room in the arena with it), or a new one */
  reuse_zombies(net);
  uint32_t fi, room = 0, room_at = 0;
  if (net->free_msg != NONE) {
    fi = net->free_msg;
    net->free_msg = net->msgs[fi].next_free;
    room = net->msgs[fi].path_room;
    room_at = net->msgs[fi].path_fwd;
  } else {
    CS_GROW(net->msgs, net->n_msgs, net->cap_msgs, 64);
    fi = net->n_msgs++;
  }
  Message *f = &net->msgs[fi];
  memset(f, 0, sizeof *f);
  f->in_use = true;
  f->id = cs_stats_add(&net->stats);
  uint32_t arena_mark = net->arena->len;
  f->src = src;
  f->dst = dst;
  f->n = (uint32_t)n;
  f->last_payload = (uint32_t)(payload - (n - 1) * net->mss);
  f->fn = fn;
  f->ctx = ctx;
  f->next = NONE;
  /* one hash per message: ECMP keeps a message on one path (the stream's
   * name, "flow", is what the results' paths were drawn with); with
   * ecmp-packet, n_paths paths drawn with the hashes that follow */
  f->n_paths = net->n_paths;
  for (uint32_t k = 0; k < net->n_paths; k++) {
    uint64_t hash = cs_rng_stream_id("flow", net->seed, (uint64_t)f->id * net->n_paths + k);
    uint32_t fwd = cs_net_add_path(net, net->t->hosts[src], dst, hash, &f->hops_fwd);
    uint32_t rev = cs_net_add_path(net, net->t->hosts[dst], src, hash, &f->hops_rev);
    if (k == 0) f->path_fwd = fwd, f->path_rev = rev;
  }
  if (net->n_paths > 1) { /* the arena holds fwd0 rev0 fwd1 rev1 ...: lay them out as fwd... rev... */
    uint32_t hf = f->hops_fwd, hr = f->hops_rev, np = net->n_paths;
    uint32_t *tmp = g_new(uint32_t, np * (hf + hr));
    uint32_t *a = &g_array_index(net->arena, uint32_t, f->path_fwd);
    for (uint32_t k = 0; k < np; k++) {
      memcpy(tmp + k * hf, a + k * (hf + hr), hf * sizeof *tmp);
      memcpy(tmp + np * hf + k * hr, a + k * (hf + hr) + hf, hr * sizeof *tmp);
    }
    memcpy(a, tmp, np * (hf + hr) * sizeof *tmp);
    g_free(tmp);
    f->path_rev = f->path_fwd + np * hf;
  }
  /* the paths into the slot's room when they fit (memory follows the
   * messages in flight, not the messages sent) */
  uint32_t used = net->arena->len - arena_mark;
  if (used <= room) {
    uint32_t *a = &g_array_index(net->arena, uint32_t, 0);
    memmove(a + room_at, a + arena_mark, used * sizeof *a);
    f->path_fwd = f->path_fwd - arena_mark + room_at;
    f->path_rev = f->path_rev - arena_mark + room_at;
    g_array_set_size(net->arena, arena_mark);
    f->path_room = room;
  } else {
    f->path_room = used;
  }
  uint64_t ring = 64;
  while (ring < MIN(n, (uint64_t)net->window)) ring *= 2;
  f->ring_mask = (uint32_t)(ring - 1);
  f->state = g_new0(uint8_t, ring);
  f->xmit_of = g_new0(uint32_t, ring);
  if (net->rack || net->cc->rate) f->sent_at = g_new0(CsTime, ring);
  if (net->cc->rate) f->rate = g_new0(RateStamp, ring);
  f->rcv_bits = g_new0(uint64_t, ring / 64);
  const CsPort *first = &net->t->ports[g_array_index(net->arena, uint32_t, f->path_fwd)];
  const CsLinkSpec *nic = &net->t->links[first->link].spec;
  int64_t line = nic->bandwidth;
  if (net->t->gpus_per_host > 1 && f->hops_fwd > 1) { /* a GPU's queue pair runs on its machine's NIC, the next link */
    const CsPort *second = &net->t->ports[g_array_index(net->arena, uint32_t, f->path_fwd + 1)];
    line = MIN(line, net->t->links[second->link].spec.bandwidth);
  }
  uint32_t ci = conn_for(net, src, dst, (uint64_t)line);
  f->conn = ci;
  Conn *c = &net->conns[ci];
  f->base = c->stream;
  c->stream += n;
  if (c->tail == NONE) c->head = fi;
  else net->msgs[c->tail].next = fi;
  c->tail = fi;
  if (c->tsq_limit == 0) {
    uint32_t port = g_array_index(net->arena, uint32_t, f->path_fwd);
    if (f->hops_fwd > 2 && net->host_queue) {
      /* from a GPU to another machine: its host queue is its machine's
       * NIC, which it reaches a packet's time on its link and that link's
       * latency after it sends */
      uint32_t nic_port = g_array_index(net->arena, uint32_t, f->path_fwd + 1);
      uint32_t nd = 2 * net->t->ports[nic_port].link + net->t->ports[nic_port].dir;
      if (net->dirs[nd].own_hop == 2) {
        const LinkDir *up = &net->dirs[2 * first->link + first->dir];
        c->tsq_nic = nd + 1;
        c->tsq_lead = up->latency + (CsTime)((8e12 * (double)(net->mss + net->header)) / (double)up->bandwidth);
        net->nic_tsq = true;
        port = nic_port;
      }
    }
    c->tsq_limit = cs_net_host_queue_limit(net, port);
  }
  *stats_of(net, f) = (CsMessageStats){.src = src, .dst = dst, .payload = payload, .packets = (uint32_t)n,
                                       .start = now_of(net)};
  net->active++;
  conn_send(net, ci);
  timer_update(net, ci);
  if (net->hybrid) cs_hybrid_kick(net);
  return net->msgs[fi].id;
}

/* ---- hybrid fidelity: fast-forwarding (hybrid.c) ---- */

static inline void shift_stamp(CsTime *t, CsTime delta) { /* -1: none */
  if (*t >= 0) *t += delta;
}
static inline void shift_timer(CsTime *t, CsTime delta) { /* 0: disarmed; CS_HELD: held by PFC */
  if (*t > 0 && *t != CS_HELD) *t += delta;
}

void cs_transport_shift(CsNet *net, CsTime delta) {
  for (uint32_t ci = 0; ci < net->n_conns; ci++) {
    Conn *c = &net->conns[ci];
    /* an idle connection (nothing to send, no timer, nothing held back)
     * sat through the jump: its instants stay, its idle time grows */
    if (c->head == NONE && !c->timer_event && c->tsq.len == 0 && c->ack_msg == NONE) continue;
    shift_timer(&c->t_rto, delta);
    shift_timer(&c->t_tlp, delta);
    shift_timer(&c->t_reo, delta);
    shift_timer(&c->t_ack, delta);
    shift_timer(&c->t_send, delta);
    if (c->timer_event) c->timer_at += delta; /* its engine event moved with it */
    shift_stamp(&c->rack_xmit, delta);
    c->delivered_time += delta;
    c->first_tx += delta;
    c->pace_next += delta;
    c->pace_last += delta;
    c->pace_slot += delta;
    shift_stamp(&c->last_rcv, delta);
    shift_stamp(&c->last_cnp, delta);
    c->ack_pkt.stamp += delta;
    shift_stamp(&c->cc.last_send, delta);
    shift_timer(&c->cc.wake_at, delta);
    for (uint32_t i = 0; i < c->tsq.len; i++) shift_timer(&CS_RING_AT(c->tsq, i).start, delta);
    if (c->ops->shift) c->ops->shift(&c->cc, delta);
  }
  for (uint32_t fi = 0; fi < net->n_msgs; fi++) {
    Message *f = &net->msgs[fi];
    if (!f->in_use || f->sender_done) continue;
    for (uint32_t i = 0; f->sent_at && i <= f->ring_mask; i++) f->sent_at[i] += delta;
    for (uint32_t i = 0; f->rate && i <= f->ring_mask; i++) {
      f->rate[i].delivered_time += delta;
      f->rate[i].first_tx += delta;
    }
    for (uint32_t i = 0; i < f->rtx.len; i++) CS_RING_AT(f->rtx, i).sent += delta;
  }
}

void cs_transport_cut(CsNet *net, uint32_t fi, uint32_t k) {
  Message *f = msg_of(net, fi);
  g_assert(f->nxt + k < f->n && !f->sender_done);
  f->n -= k;
  /* the messages queued behind it on its connection have sent nothing
   * yet (it has packets unsent): their stream positions close up */
  Conn *c = conn_of(net, f);
  for (uint32_t x = f->next; x != NONE; x = net->msgs[x].next) net->msgs[x].base -= k;
  c->stream -= k;
  stats_of(net, f)->wire_bytes += (uint64_t)k * (net->mss + net->header);
}

void cs_net_set_conn_trace(CsNet *net, CsConnTraceFn fn, void *ctx) {
  net->conn_trace_fn = fn;
  net->conn_trace_ctx = ctx;
}

static void conn_trace(CsNet *net, uint32_t ci) {
  const Conn *c = &net->conns[ci];
  const RttState *st = rtt_of(net, c);
  CsConnSample s = {ci, c->src, c->dst, now_of(net), c->cc.cwnd, c->cc.ssthresh, c->cc.pacing_bps,
                    cs_cc_mode(c->ops, &c->cc), c->ops->bandwidth ? c->ops->bandwidth(&c->cc) : 0, c->in_flight,
                    st->have_rtt ? st->srtt : -1};
  net->conn_trace_fn(net->conn_trace_ctx, &s);
}

uint32_t cs_net_active(const CsNet *net) { return net->active; }
uint32_t cs_net_failed(const CsNet *net) { return net->failed; }

void cs_net_set_idle_fn(CsNet *net, CsIdleFn fn, void *ctx) {
  net->idle_fn = fn;
  net->idle_ctx = ctx;
}
uint32_t cs_net_messages(const CsNet *net) { return net->stats.n; }

void cs_net_tag_message(CsNet *net, uint32_t msg, uint32_t iteration, uint32_t step) {
  cs_stats_at(&net->stats, msg)->iteration = iteration;
  cs_stats_at(&net->stats, msg)->step = step;
}
const CsMessageStats *cs_net_message(const CsNet *net, uint32_t msg) { return cs_stats_at(&net->stats, msg); }
uint32_t cs_net_first_message(const CsNet *net) { return net->stats.base; }
uint32_t cs_net_message_slots(const CsNet *net) { return net->n_msgs; }
void cs_net_set_retire(CsNet *net, CsRetireFn fn, void *ctx) {
  net->stats.retire = fn;
  net->stats.ctx = ctx;
}

void cs_transport_free(CsNet *net) {
  if (net->pairs) g_hash_table_destroy(net->pairs);
  g_free(net->rtts);
  g_free(net->pair_conn);
  for (uint32_t i = 0; i < net->n_msgs; i++) {
    g_free(net->msgs[i].state);
    g_free(net->msgs[i].rcv_bits);
    g_free(net->msgs[i].xmit_of);
    g_free(net->msgs[i].sent_at);
    g_free(net->msgs[i].rate);
    CS_RING_FREE(net->msgs[i].rtx);
  }
  g_free(net->msgs);
  CS_RING_FREE(net->zombies);
  cs_stats_free(&net->stats);
  for (uint32_t i = 0; i < net->n_conns; i++) CS_RING_FREE(net->conns[i].tsq);
  g_free(net->conns);
}
