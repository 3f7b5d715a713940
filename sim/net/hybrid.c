/* hybrid.c - fidelity `hybrid`: the packet network, fast-forwarded while
 * its flows are steady.
 *
 * A watch wakes every round trip (the largest smoothed RTT among the
 * connections with messages to send) while messages are in flight, and
 * notes how far each unfinished message has been acknowledged.  When the
 * same messages have been in flight for `rounds` round trips, each has
 * made progress in every one of them, and each one's rate over the second
 * half of them is within `tolerance` of its rate over the first half, the
 * state is taken as steady: everything then repeats itself, shifted in
 * time, at those rates.  The network is then translated: every pending
 * network event and every instant the links, packets in flight and
 * connections hold moves Δ later, the clock with them, and each message
 * loses from the end of its unsent packets what it would have sent and
 * had acknowledged in Δ at its rate.  What those packets and their ACKs
 * would have put on each link is counted as carried, so the links' bytes,
 * packets and busy time, the messages' wire bytes and the nodes' byte
 * conservation stay whole.  Queues keep what waited, for Δ, in their
 * time-means; a paused direction stays paused.
 *
 * Δ stops short of any change: a message's last unsent packets are left
 * to be sent as packets (with what is in flight, its end is simulated),
 * and no event of anything else (a worker's compute, a flow's start, the
 * links' sampler, the run's time limit) is passed.  While background
 * sources run, nothing is fast-forwarded: their traffic is open-loop;
 * nor while a PFC pause holds a direction or is on its way.
 *
 * What the jump does not count: drops, losses, retransmissions and ECN
 * marks that the skipped packets would have met; the loss a flow
 * suffers is in its measured rate only. */
#include "config.h"

#include <math.h>

#include "net_private.h"

#define MAX_ROUNDS 64

typedef struct {
  uint32_t slot, id; /* the message (a reused slot holds another id) */
  double frac;       /* the part of a packet its jumps so far owe it */
  double ack_frac;   /* ... and of an ACK */
  /* the jump under way: its rate (packets per ps), the packets and ACKs
   * carried so far, and frac and ack_frac when it began */
  double rate, frac0, ack0;
  uint32_t done, acks_done;
  uint32_t una[MAX_ROUNDS + 1];    /* delivered (una + sacked), at each sample */
  uint32_t flight[MAX_ROUNDS + 1]; /* sent and not known delivered, at each sample */
  CsTime when[MAX_ROUNDS + 1];     /* when its connection last learnt of a delivery, at each sample */
  CsTime srtt[MAX_ROUNDS + 1];     /* its connection's smoothed RTT, at each sample */
} Watch;

struct CsHybrid {
  uint32_t rounds;
  double tolerance;
  bool scheduled;
  Watch *w;
  uint32_t n_w, cap_w;
  CsTime at[MAX_ROUNDS + 1];
  uint32_t filled; /* samples of the same messages held (at most rounds + 1: the oldest go) */
  CsTime skipped;
  uint64_t jumps;
  double *load; /* per link direction: the bits per ps the jump's rates put on it */
  /* a jump is planned whole, from `start` to `end`, and carried out in
   * pieces when other events (the links' sampler, a worker's compute)
   * lie in between: the same jump, piece by piece or at once, ends in
   * the same state (a trace changes no result) */
  bool planned;
  CsTime start, end;
  uint64_t watches; /* its events (not counted as the run's, as the sampler's are not) */
};

#define FALLBACK_ROUND (10 * CS_US) /* before any RTT sample */

static void on_watch(CsEngine *e, void *ctx, uint64_t arg);

static CsHybrid *hy(CsNet *net) { return net->hybrid; }

void cs_net_enable_hybrid(CsNet *net, uint32_t rounds, double tolerance) {
  g_assert(rounds >= 2 && rounds <= MAX_ROUNDS && tolerance >= 0);
  CsHybrid *h = g_new0(CsHybrid, 1);
  h->rounds = rounds;
  h->tolerance = tolerance;
  net->hybrid = h;
}

void cs_hybrid_free(CsHybrid *h) {
  if (!h) return;
  g_free(h->w);
  g_free(h->load);
  g_free(h);
}

CsTime cs_net_fast_forwarded(const CsNet *net, uint64_t *jumps, uint64_t *watches) {
  if (jumps) *jumps = net->hybrid ? net->hybrid->jumps : 0;
  if (watches) *watches = net->hybrid ? net->hybrid->watches : 0;
  return net->hybrid ? net->hybrid->skipped : 0;
}

/* The round: the largest smoothed RTT of the connections sending now. */
static CsTime round_of(const CsNet *net) {
  CsTime r = 0;
  for (uint32_t fi = 0; fi < net->n_msgs; fi++) {
    const Message *f = &net->msgs[fi];
    if (!f->in_use || f->sender_done) continue;
    const RttState *st = &net->rtts[net->conns[f->conn].pair];
    if (st->have_rtt && st->srtt > r) r = st->srtt;
  }
  return r > 0 ? r : FALLBACK_ROUND;
}

void cs_hybrid_kick(CsNet *net) {
  CsHybrid *h = hy(net);
  if (h->scheduled) return;
  h->scheduled = true;
  h->filled = 0;
  cs_engine_schedule(net->engine, round_of(net), on_watch, net, 0);
}

/* Whether the messages in flight are those watched; with `record`, also
 * take a sample (the history starts again from it when they are not). */
static bool sample(CsNet *net, CsHybrid *h, CsTime now, bool record) {
  uint32_t n = 0;
  bool same = true;
  for (uint32_t fi = 0; fi < net->n_msgs; fi++) {
    const Message *f = &net->msgs[fi];
    if (!f->in_use || f->sender_done) continue;
    if (n >= h->n_w || h->w[n].slot != fi || h->w[n].id != f->id) same = false;
    if (!same && record) {
      CS_GROW(h->w, n, h->cap_w, 16);
      h->w[n].slot = fi;
      h->w[n].id = f->id;
      h->w[n].frac = h->w[n].ack_frac = 0;
    }
    n++;
  }
  if (n != h->n_w) same = false;
  if (!record) return same;
  h->n_w = n;
  if (!same) h->filled = 0;
  if (h->filled == h->rounds + 1) { /* drop the oldest */
    for (uint32_t i = 0; i < n; i++) {
      memmove(h->w[i].una, h->w[i].una + 1, h->rounds * sizeof(uint32_t));
      memmove(h->w[i].flight, h->w[i].flight + 1, h->rounds * sizeof(uint32_t));
      memmove(h->w[i].when, h->w[i].when + 1, h->rounds * sizeof(CsTime));
      memmove(h->w[i].srtt, h->w[i].srtt + 1, h->rounds * sizeof(CsTime));
    }
    memmove(h->at, h->at + 1, h->rounds * sizeof(CsTime));
    h->filled--;
  }
  for (uint32_t i = 0; i < n; i++) { /* delivered, as the sender knows: a loss's recovery holds una, not this */
    const Message *f = &net->msgs[h->w[i].slot];
    h->w[i].una[h->filled] = f->una + f->sacked_out;
    h->w[i].flight[h->filled] = f->nxt - f->una - f->sacked_out;
    h->w[i].when[h->filled] = net->conns[f->conn].delivered_time;
    h->w[i].srtt[h->filled] = net->rtts[net->conns[f->conn].pair].srtt;
  }
  h->at[h->filled++] = now;
  return same;
}

/* The history a decision reads: the last `rounds` rounds, samples S..R,
 * halved at M. */
static void halves(const CsHybrid *h, uint32_t *s, uint32_t *m, uint32_t *r) {
  *r = h->filled - 1;
  *s = 0;
  *m = *r / 2;
}

/* A message's rate between two samples, in packets per ps: its
 * deliveries over the time between the last of them each sample saw, so
 * that ACKs arriving in bursts (a batch per round, beating against the
 * watch's period) do not alias. */
static double span_rate(const Watch *w, uint32_t from, uint32_t to) {
  return (double)(w->una[to] - w->una[from]) / (double)(w->when[to] - w->when[from]);
}

/* Whether every message in flight is steady: delivering in every round
 * of the second half, at the same rate in both halves; a message that has
 * delivered nothing must be waiting behind another of its connection's. */
static bool steady(const CsNet *net, const CsHybrid *h) {
  uint32_t S, M, R;
  halves(h, &S, &M, &R);
  for (uint32_t i = 0; i < h->n_w; i++) {
    const Watch *w = &h->w[i];
    const Conn *c = &net->conns[net->msgs[w->slot].conn];
    /* a rate that rises on a timer of its own (DCQCN recovering), or
     * that cycles by design (BBR's gains): not a state that repeats
     * round after round */
    if (c->cc.wake_at > 0 || c->ops->rate) return false;
    /* a window that binds and can still move (below transport.window)
     * keeps the flows on a cycle (grow, fill the queue, lose, cut), not
     * at a point: two flows sharing a bottleneck would be frozen at
     * whatever split the cycle had reached */
    if (c->cwnd_limited && c->cc.cwnd < c->cc.max_cwnd) return false;
    if (w->una[R] == w->una[S]) {
      if (c->head == w->slot) return false; /* stalled: a timer, a pause */
      continue;
    }
    for (uint32_t r = M + 1; r <= R; r++)
      if (w->una[r] == w->una[r - 1]) {
        return false; /* stalled for a round: a timeout */
      }
    if (w->when[M] <= w->when[S] || w->when[R] <= w->when[M]) return false;
    double a = span_rate(w, S, M), b = span_rate(w, M, R);

    if (fabs(a - b) > h->tolerance * MAX(a, b)) return false;
    /* and what it has in flight (so the queues it fills) stays within
     * half the tolerance (and a packet) over all the rounds: a window
     * still opening, or closing after a loss, is a transient that a jump
     * would freeze (two flows not yet at their fair shares) */
    uint32_t lo = w->flight[S], hi = w->flight[S];
    for (uint32_t r = S + 1; r <= R; r++) lo = MIN(lo, w->flight[r]), hi = MAX(hi, w->flight[r]);
    if ((double)(hi - lo) > h->tolerance / 2 * (double)hi + 1.0) return false;
    /* nor its round trip: a queue on its path still filling (with the
     * ACKs of another flow that its own window does not count) slows it
     * by less than the tolerance over a few rounds, and a jump would
     * freeze it at a rate it is leaving (a flow 10 % early, found by a
     * random campaign) */
    bool up = true, down = true;
    for (uint32_t r = S + 1; r <= R; r++) up &= w->srtt[r] >= w->srtt[r - 1], down &= w->srtt[r] <= w->srtt[r - 1];
    CsTime rlo = MIN(w->srtt[S], w->srtt[R]), rhi = MAX(w->srtt[S], w->srtt[R]);
    if ((up || down) && (double)(rhi - rlo) > h->tolerance / 2 * (double)rhi) return false;
  }
  return true;
}

/* A message's rate for a jump, in packets per ps: over the second half. */
static double rate_of(const CsHybrid *h, const Watch *w) {
  uint32_t S, M, R;
  halves(h, &S, &M, &R);
  return span_rate(w, M, R);
}

/* What keeps the run at packet level: open-loop background traffic, a
 * trace of every packet (its rows are written ahead, with the times then
 * known), and PFC while a direction is paused or a pause is on its way
 * (a held packet has no time to move). */
static bool held_back(const CsNet *net) {
  for (uint32_t i = 0; i < net->n_bg; i++)
    if (!net->bg[i].stopped) return true;
  if (net->counts[PKT_BG].in_flight > 0) return true;
  if (net->trace_fn) return true; /* packets.csv: every packet, at its time */
  if (!net->pfc) return false;
  for (uint32_t di = 0; di < 2 * net->t->n_links; di++) {
    const LinkDir *d = &net->dirs[di];
    if (d->paused || d->pause_sent || d->held_n > 0) return true;
  }
  return false;
}

/* Whether the rates a jump would carry fit every link direction they
 * cross (data one way, ACKs back): a rate measured over a few rounds can
 * hold a transient (one flow's burst while another recovers) that no
 * link could carry for long. */
static bool within_capacity(CsNet *net, CsHybrid *h) {
  uint32_t nd = 2 * net->t->n_links;
  if (!h->load) h->load = g_new(double, nd);
  memset(h->load, 0, nd * sizeof *h->load);
  for (uint32_t i = 0; i < h->n_w; i++) {
    const Message *f = &net->msgs[h->w[i].slot];
    double rate = rate_of(h, &h->w[i]) / f->n_paths; /* packets per ps, on each path */
    if (rate <= 0) continue;
    for (int rev = 0; rev < 2; rev++) {
      uint32_t path = rev ? f->path_rev : f->path_fwd, hops = rev ? f->hops_rev : f->hops_fwd;
      double bits = rev ? 8.0 * net->ack_bytes / net->delayed_ack : 8.0 * (net->mss + net->header);
      for (uint32_t p = 0; p < f->n_paths; p++) {
        const uint32_t *ports = &g_array_index(net->arena, uint32_t, path + p * hops);
        for (uint32_t x = 0; x < hops; x++) {
          const CsPort *pt = &net->t->ports[ports[x]];
          h->load[2 * pt->link + pt->dir] += rate * bits;
        }
      }
    }
  }
  for (uint32_t di = 0; di < nd; di++)
    if (h->load[di] > (double)net->dirs[di].bandwidth * 1e-12 * (1.0 + h->tolerance / 10)) return false;
  return true;
}

/* Plan a jump: to where the first message is down to its last packets,
 * at each message's second-half rate; false if that is less than a round
 * or the rates do not fit the links. */
static bool plan(CsNet *net, CsHybrid *h, CsTime now, CsTime round) {
  double delta = INFINITY;
  for (uint32_t i = 0; i < h->n_w; i++) {
    Watch *w = &h->w[i];
    const Message *f = &net->msgs[w->slot];
    w->rate = rate_of(h, w);
    w->frac0 = w->frac;
    w->ack0 = w->ack_frac;
    w->done = w->acks_done = 0;
    if (w->rate <= 0) continue;
    double keep = 2.0; /* its last packets, and their end, are simulated */
    double unsent = (double)(f->n - f->nxt);
    delta = MIN(delta, unsent > keep ? (unsent - keep) / w->rate : 0.0);
  }
  if (delta < (double)round || delta >= (double)CS_TIME_MAX / 4) return false; /* not worth it */
  if (!within_capacity(net, h)) return false;
  h->planned = true;
  h->start = now;
  h->end = now + (CsTime)delta;
  h->jumps++;
  return true;
}

/* Carry the planned jump out as far as the next event of another's;
 * true when that event stops it short of its end (the watch resumes
 * right after it).  At the horizon (the run's duration) the jump ends:
 * nothing comes after this instant to let the watch go on (it used to
 * look again at the same instant forever). */
static bool advance(CsNet *net, CsHybrid *h, CsTime now) {
  if (now >= cs_engine_horizon(net->engine)) {
    h->planned = false;
    return false;
  }
  CsTime to = MIN(h->end, cs_engine_next_time_other(net->engine, net));
  if (to <= now) return true; /* another's event at this instant first */
  CsTime d = to - now;
  uint32_t R = h->filled - 1;
  cs_link_settle(net, now);
  if (!cs_engine_jump(net->engine, net, d)) {
    h->planned = false;
    return false;
  }
  double span = (double)(to - h->start);
  for (uint32_t i = 0; i < h->n_w; i++) {
    Watch *w = &h->w[i];
    const Message *f = &net->msgs[w->slot];
    if (w->rate <= 0) continue;
    /* what the jump owes the message from its start: whole packets, the
     * rest carried to its next jump */
    double owed = w->rate * span + w->frac0;
    uint32_t total = (uint32_t)floor(owed);
    uint32_t k = total - w->done;
    w->done = total;
    w->frac = owed - total;
    double acks_owed = (double)total / net->delayed_ack + w->ack0;
    uint32_t acks_total = (uint32_t)floor(acks_owed);
    uint32_t acks = acks_total - w->acks_done;
    w->acks_done = acks_total;
    w->ack_frac = acks_owed - acks_total;
    /* what the skipped packets and their ACKs carried, on each path of
     * the message (ecmp-packet spreads them) */
    for (uint32_t p = 0; p < f->n_paths; p++) {
      uint64_t kp = k / f->n_paths + (p < k % f->n_paths), ap = acks / f->n_paths + (p < acks % f->n_paths);
      cs_link_carry(net, f->path_fwd + p * f->hops_fwd, f->hops_fwd, kp, net->mss + net->header);
      cs_link_carry(net, f->path_rev + p * f->hops_rev, f->hops_rev, ap, net->ack_bytes);
    }
    net->counts[PKT_DATA].sent += k;
    net->counts[PKT_DATA].delivered += k;
    net->counts[PKT_ACK].sent += acks;
    net->counts[PKT_ACK].delivered += acks;
    if (k) cs_transport_cut(net, w->slot, k);
  }
  cs_link_shift(net, d, now);
  cs_transport_shift(net, d);
  for (uint32_t r = 0; r <= R; r++) { /* the history, translated with the rest */
    h->at[r] += d;
    for (uint32_t i = 0; i < h->n_w; i++) h->w[i].when[r] += d;
  }
  h->skipped += d;
  if (to < h->end) return true;
  h->planned = false;
  return false;
}

/* arg 1: the watch goes on with a planned jump that another event cut
 * short, right after that event, unless that event changed what is in
 * flight. */
static void on_watch(CsEngine *e, void *ctx, uint64_t arg) {
  CsNet *net = ctx;
  CsHybrid *h = hy(net);
  CsTime now = cs_engine_now(e);
  h->watches++;
  if (net->active == 0 || net->stuck) {
    h->scheduled = false;
    h->planned = false;
    return;
  }
  CsTime next = cs_engine_next_time_of(e, net);
  if (next == CS_TIME_MAX) { /* nothing of the network's left to happen: a stuck run ends as one */
    h->scheduled = false;
    h->planned = false;
    return;
  }
  CsTime round = round_of(net);
  bool again = arg == 1;
  bool same = sample(net, h, now, !again);
  if (again) {
    if (h->planned && same && !held_back(net) && advance(net, h, now)) {
      cs_engine_schedule(e, 0, on_watch, net, 1);
      return;
    }
    h->planned = false;
    cs_engine_schedule(e, round, on_watch, net, 0);
    return;
  }
  if (same && h->filled > h->rounds && !held_back(net) && steady(net, h) && plan(net, h, now, round)) {
    if (advance(net, h, now)) {
      cs_engine_schedule(e, 0, on_watch, net, 1);
      return;
    }
    h->planned = false;
  }
  /* nothing delivered since the last look (a timeout's backoff): sleep
   * until the network's next event, not a round at a time */
  if (cs_engine_now(e) != now) { /* it jumped */
    cs_engine_schedule(e, round, on_watch, net, 0);
    return;
  }
  bool moved = !same || h->filled < 2;
  for (uint32_t i = 0; !moved && i < h->n_w; i++) moved = h->w[i].una[h->filled - 1] != h->w[i].una[h->filled - 2];
  cs_engine_schedule_at(e, moved || next - now < round ? now + round : next, on_watch, net, 0);
}
