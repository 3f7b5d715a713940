/* bbr.c - BBR v1 as Linux's tcp_bbr.c describes it.
 *
 * A model of the path, not a reaction to loss: the bottleneck bandwidth
 * is the windowed maximum of the delivery-rate samples over the last 10
 * round trips, the propagation RTT the least RTT of the last 10 s.  The
 * sender paces at pacing_gain x bandwidth and keeps at most
 * cwnd_gain x BDP (+ a little for quantization) in flight.  Four modes:
 *   startup    gains 2/ln 2 (pacing and window) until the bandwidth has
 *              not grown by 25 % for 3 rounds;
 *   drain      pacing gain ln 2 / 2 until what is in flight is down to one BDP;
 *   probe-bw   pacing gains cycling 5/4, 3/4, 1, 1, 1, 1, 1, 1, a phase
 *              per least RTT (the 5/4 phase until it has a BDP x 5/4 in
 *              flight or sees a loss, the 3/4 phase until in flight is
 *              down to a BDP), window gain 2, starting at a random phase;
 *   probe-rtt  when the least RTT has not been refreshed for
 *              probe_rtt_interval: 4 packets in flight for probe_rtt_time
 *              and a round, then back.
 * A loss does not cut the rate: in recovery the window is held to what
 * is in flight plus what is acknowledged (packet conservation) for a
 * round, then restored; after a timeout it restarts from 1 packet and is
 * restored when the loss ends.  Left out: Linux's long-term bandwidth
 * sampling (for token-bucket policers) and ACK-aggregation estimate.
 * Pacing needs the transport's per-connection release timer and its
 * delivery-rate samples (ops.rate).  Not ECN-capable.
 */
#include "config.h"

#include <math.h>

#include "commsim/cc.h"

enum { STARTUP, DRAIN, PROBE_BW, PROBE_RTT };
#define CYCLE_LEN 8
#define BW_RTTS 10
#define FULL_BW_THRESH 1.25
#define FULL_BW_CNT 3
#define CWND_MIN 4.0
#define PACING_MARGIN 0.99 /* Linux paces at 1 % below the estimate */
#define QUANTA 6.0         /* 3 x a TSO goal of 2 packets: no segmentation offload */
static const double cycle_gain[CYCLE_LEN] = {1.25, 0.75, 1, 1, 1, 1, 1, 1};

typedef struct {
  uint64_t round;           /* round trips counted so far */
  uint64_t next_rtt_delivered;
  bool round_start;
  /* the bandwidth filter: the best sample of each of the last rounds, as
   * Linux's minmax keeps three (value, round) pairs */
  double bw[3];
  uint64_t bw_round[3];
  CsTime min_rtt;           /* -1 none */
  CsTime min_rtt_stamp;
  int mode;
  double pacing_gain, cwnd_gain;
  double full_bw;
  uint32_t full_bw_cnt;
  bool full_bw_reached;
  uint32_t cycle_idx;
  CsTime cycle_stamp;
  CsTime probe_rtt_done;    /* 0 = not yet at 4 packets */
  bool probe_rtt_round_done;
  double prior_cwnd;
  bool packet_conservation;
  bool prev_recovery;       /* in recovery (or after a timeout) at the last ACK */
  bool idle_restart;
  bool have_pacing;
  uint64_t rng;
} CS_CC_PRIV Bbr;
_Static_assert(sizeof(Bbr) <= sizeof(((CsCc *)0)->priv), "Bbr fits in CsCc.priv");

static double max_bw(const Bbr *b) { return b->bw[0]; }

/* Linux's minmax_running_max over a window of BW_RTTS rounds. */
static void bw_update(Bbr *b, double v, uint64_t t) {
  if (v >= b->bw[0] || t - b->bw_round[2] > BW_RTTS) {
    b->bw[0] = b->bw[1] = b->bw[2] = v;
    b->bw_round[0] = b->bw_round[1] = b->bw_round[2] = t;
    return;
  }
  if (v >= b->bw[1]) b->bw[2] = b->bw[1] = v, b->bw_round[2] = b->bw_round[1] = t;
  else if (v >= b->bw[2]) b->bw[2] = v, b->bw_round[2] = t;
  /* subwindows of a quarter and a half of the window */
  uint64_t dt = t - b->bw_round[0];
  if (dt > BW_RTTS) {
    b->bw[0] = b->bw[1], b->bw_round[0] = b->bw_round[1];
    b->bw[1] = b->bw[2], b->bw_round[1] = b->bw_round[2];
    b->bw[2] = v, b->bw_round[2] = t;
    if (t - b->bw_round[0] > BW_RTTS) {
      b->bw[0] = b->bw[1], b->bw_round[0] = b->bw_round[1];
      b->bw[1] = b->bw[2], b->bw_round[1] = b->bw_round[2];
    }
  } else if (b->bw_round[1] == b->bw_round[0] && dt > BW_RTTS / 4) {
    b->bw[2] = b->bw[1] = v, b->bw_round[2] = b->bw_round[1] = t;
  } else if (b->bw_round[2] == b->bw_round[1] && dt > BW_RTTS / 2) {
    b->bw[2] = v, b->bw_round[2] = t;
  }
}

/* Packets in flight for gain x the estimated BDP (bw in wire bit/s). */
static double bdp(const CsCc *cc, const Bbr *b, double bw, double gain) {
  if (b->min_rtt < 0) return cc->cfg->init_cwnd;
  double pkts = bw / (8.0 * cc->cfg->mtu) * ((double)b->min_rtt * 1e-12);
  return ceil(pkts * gain);
}

static double inflight_target(const CsCc *cc, const Bbr *b, double bw, double gain) {
  double w = bdp(cc, b, bw, gain) + QUANTA;
  return w;
}

static uint32_t rnd(Bbr *b, uint32_t n) {
  b->rng = b->rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)((b->rng >> 33) % n);
}

static void advance_cycle(Bbr *b, CsTime now) {
  b->cycle_idx = (b->cycle_idx + 1) % CYCLE_LEN;
  b->cycle_stamp = now;
}

static void reset_probe_bw(Bbr *b, CsTime now) {
  b->mode = PROBE_BW;
  b->cycle_idx = CYCLE_LEN - 1 - rnd(b, CYCLE_LEN - 1);
  advance_cycle(b, now); /* never the 3/4 phase first */
}

static void reset_mode(Bbr *b, CsTime now) {
  if (!b->full_bw_reached) b->mode = STARTUP;
  else reset_probe_bw(b, now);
}

static void bbr_init(CsCc *cc) {
  Bbr *b = (Bbr *)cc->priv;
  uint64_t seed = cc->seed;
  *b = (Bbr){0};
  b->rng = seed | 1;
  b->min_rtt = -1;
  b->mode = STARTUP;
  b->pacing_gain = b->cwnd_gain = cc->cfg->bbr_high_gain;
  cc->cwnd = cc->cfg->init_cwnd;
  cc->ssthresh = INFINITY;
  cc->pacing_bps = 0; /* set from the first RTT sample */
}

static void set_pacing(CsCc *cc, Bbr *b, double bw, double gain) {
  double rate = bw * gain * PACING_MARGIN;
  if (rate <= 0) return;
  if (b->full_bw_reached || rate > (double)cc->pacing_bps) cc->pacing_bps = (uint64_t)rate;
  b->have_pacing = true;
}

static void bbr_on_ack(CsCc *cc, const CsAck *ack) {
  Bbr *b = (Bbr *)cc->priv;
  const CsCcConfig *cfg = cc->cfg;
  CsTime now = ack->now;
  /* the first pacing rate, from the first RTT: high_gain x init_cwnd / RTT */
  if (!b->have_pacing && ack->rtt > 0) {
    double bw = cc->cwnd * 8.0 * cfg->mtu / ((double)ack->rtt * 1e-12);
    cc->pacing_bps = (uint64_t)(bw * cfg->bbr_high_gain);
    b->have_pacing = true;
  }
  /* rounds, and the bandwidth filter */
  b->round_start = false;
  if (ack->rate_bps > 0 || ack->delivered > 0) {
    if (ack->prior_delivered >= b->next_rtt_delivered && ack->rate_bps > 0) {
      b->next_rtt_delivered = ack->delivered;
      b->round++;
      b->round_start = true;
      b->packet_conservation = false;
    }
    if (ack->rate_bps > 0 && (!ack->app_limited || ack->rate_bps >= max_bw(b))) bw_update(b, ack->rate_bps, b->round);
  }
  double bw = max_bw(b);
  /* probe-bw: the next phase */
  if (b->mode == PROBE_BW && b->min_rtt > 0) {
    bool full = now - b->cycle_stamp > b->min_rtt, next;
    if (b->pacing_gain == 1.0) next = full;
    else if (b->pacing_gain > 1.0) next = full && (ack->lost > 0 || ack->in_flight >= inflight_target(cc, b, bw, b->pacing_gain));
    else next = full || ack->in_flight <= inflight_target(cc, b, bw, 1.0);
    if (next) advance_cycle(b, now);
  }
  /* startup: has the bandwidth stopped growing? */
  if (!b->full_bw_reached && b->round_start && !ack->app_limited && ack->rate_bps > 0) {
    if (bw >= b->full_bw * FULL_BW_THRESH) {
      b->full_bw = bw;
      b->full_bw_cnt = 0;
    } else if (++b->full_bw_cnt >= FULL_BW_CNT) {
      b->full_bw_reached = true;
    }
  }
  if (b->mode == STARTUP && b->full_bw_reached) {
    b->mode = DRAIN;
    cc->ssthresh = inflight_target(cc, b, bw, 1.0);
  }
  if (b->mode == DRAIN && ack->in_flight <= inflight_target(cc, b, bw, 1.0)) reset_probe_bw(b, now);
  /* the least RTT, and probe-rtt */
  bool expired = b->min_rtt >= 0 && now > b->min_rtt_stamp + cfg->bbr_probe_rtt_interval;
  if (ack->rtt >= 0 && (b->min_rtt < 0 || ack->rtt < b->min_rtt || expired)) {
    b->min_rtt = ack->rtt;
    b->min_rtt_stamp = now;
  }
  if (expired && !b->idle_restart && b->mode != PROBE_RTT) {
    b->mode = PROBE_RTT;
    b->prior_cwnd = fmax(b->prior_cwnd, cc->cwnd); /* Linux's bbr_save_cwnd, in probe-rtt */
    b->probe_rtt_done = 0;
  }
  if (b->mode == PROBE_RTT) {
    cc->mark_app_limited = true; /* its low rates must not enter the bandwidth filter */
    if (!b->probe_rtt_done && ack->in_flight <= CWND_MIN) {
      b->probe_rtt_done = now + cfg->bbr_probe_rtt_time;
      b->probe_rtt_round_done = false;
      b->next_rtt_delivered = ack->delivered;
    } else if (b->probe_rtt_done) {
      if (b->round_start) b->probe_rtt_round_done = true;
      if (b->probe_rtt_round_done && now > b->probe_rtt_done) {
        b->min_rtt_stamp = now;
        cc->cwnd = fmax(cc->cwnd, b->prior_cwnd);
        reset_mode(b, now);
      }
    }
  }
  if (ack->newly > 0) b->idle_restart = false;
  /* the gains of the mode */
  switch (b->mode) {
  case STARTUP: b->pacing_gain = b->cwnd_gain = cfg->bbr_high_gain; break;
  case DRAIN: b->pacing_gain = 1.0 / cfg->bbr_high_gain, b->cwnd_gain = cfg->bbr_high_gain; break;
  case PROBE_BW: b->pacing_gain = cycle_gain[b->cycle_idx], b->cwnd_gain = 2.0; break;
  default: b->pacing_gain = b->cwnd_gain = 1.0; break;
  }
  if (bw > 0) set_pacing(cc, b, bw, b->pacing_gain);

  /* the window */
  double acked = ack->newly, cwnd = cc->cwnd;
  if (acked > 0) {
    bool conserve = false;
    if (ack->lost > 0) cwnd = fmax(cwnd - ack->lost, 1.0);
    if (ack->in_recovery && !b->prev_recovery) { /* recovery begins: a round of packet conservation */
      b->packet_conservation = true;
      b->next_rtt_delivered = ack->delivered;
      cwnd = ack->in_flight + acked;
    } else if (!ack->in_recovery && b->prev_recovery) { /* it ends: the window before it */
      cwnd = fmax(cwnd, b->prior_cwnd);
      b->packet_conservation = false;
    }
    b->prev_recovery = ack->in_recovery;
    if (b->packet_conservation) {
      conserve = true;
      cwnd = fmax(cwnd, ack->in_flight + acked);
    }
    if (!conserve) {
      double target = inflight_target(cc, b, bw, b->cwnd_gain);
      if (b->mode == PROBE_BW && b->cycle_idx == 0) target += 2;
      if (b->full_bw_reached) cwnd = fmin(cwnd + acked, target);
      else if (cwnd < target || ack->delivered < 10) cwnd += acked;
      cwnd = fmax(cwnd, CWND_MIN);
    }
  }
  if (cwnd > cc->max_cwnd) cwnd = cc->max_cwnd;
  if (b->mode == PROBE_RTT) cwnd = fmin(cwnd, CWND_MIN);
  cc->cwnd = cwnd;
}

/* A recovery episode begins: remember the window (Linux's bbr_save_cwnd);
 * the rate is not cut. */
static void bbr_on_loss(CsCc *cc, CsTime now) {
  (void)now;
  Bbr *b = (Bbr *)cc->priv;
  b->prior_cwnd = !b->prev_recovery && b->mode != PROBE_RTT ? cc->cwnd : fmax(b->prior_cwnd, cc->cwnd);
}

/* A timeout: as Linux's tcp_enter_loss with BBR, the window restarts at
 * one packet (everything in flight is lost) and the bandwidth check of
 * startup starts over; the window before is restored when the loss ends. */
static void bbr_on_timeout(CsCc *cc, CsTime now) {
  (void)now;
  Bbr *b = (Bbr *)cc->priv;
  bbr_on_loss(cc, now);
  cc->cwnd = 1.0;
  b->full_bw = 0;
  b->round_start = true;
  b->prev_recovery = true;
}

static void bbr_on_event(CsCc *cc, CsCcEvent ev, CsTime now) {
  Bbr *b = (Bbr *)cc->priv;
  if (ev == CS_CC_TX_START) {
    /* idle: restart at the estimated rate, not above it (Linux) */
    b->idle_restart = true;
    if (b->mode == PROBE_BW && max_bw(b) > 0) set_pacing(cc, b, max_bw(b), 1.0);
    /* probe-rtt whose time ran out while idle ends now (Linux's
     * bbr_check_probe_rtt_done): the first ACK after the restart would
     * otherwise find it, and its 4 packets, still in force */
    else if (b->mode == PROBE_RTT && b->probe_rtt_done && now > b->probe_rtt_done) {
      b->min_rtt_stamp = now;
      cc->cwnd = fmax(cc->cwnd, b->prior_cwnd);
      reset_mode(b, now);
    }
  }
}

static const char *bbr_mode(const CsCc *cc) {
  static const char *const names[] = {"startup", "drain", "probe_bw", "probe_rtt"};
  return names[((const Bbr *)cc->priv)->mode];
}

static double bbr_bandwidth(const CsCc *cc) { return max_bw((const Bbr *)cc->priv); }

static void bbr_shift(CsCc *cc, CsTime delta) {
  Bbr *b = (Bbr *)cc->priv;
  b->min_rtt_stamp += delta;
  b->cycle_stamp += delta;
  if (b->probe_rtt_done > 0) b->probe_rtt_done += delta; /* 0: not yet */
}

const CsCcOps cs_cc_bbr = {
    .shift = bbr_shift,
    .mode = bbr_mode,
    .bandwidth = bbr_bandwidth,
    .name = "bbr",
    .ect = false,
    .rate = true,
    .init = bbr_init,
    .on_ack = bbr_on_ack,
    .on_loss = bbr_on_loss,
    .on_timeout = bbr_on_timeout,
    .on_event = bbr_on_event,
};
