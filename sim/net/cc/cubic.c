/* cubic.c - CUBIC (RFC 9438), as Linux's tcp_cubic.c computes it.
 *
 * In congestion avoidance the window follows
 *     W_cubic(t) = C (t - K)^3 + W_max,   K = cbrt(W_max (1 - beta) / C),
 * t the time since the epoch began (the first ACK after a cut) plus the
 * least RTT, W_max the window before the last cut: concave up to W_max,
 * flat near it, convex beyond.  Each ACK moves cwnd a step toward the
 * target: cwnd / (target - cwnd) packets acknowledged per packet of
 * growth, and no faster than half a packet per ACK.  The Reno-friendly
 * region: an estimate of what Reno with CUBIC's beta would have
 * (W_est += 3 (1 - beta) / (1 + beta) per window) takes over when larger.
 * A loss sets W_max = cwnd, or (1 + beta) / 2 of it when the window had
 * not regained the last W_max (fast convergence), and cuts to beta cwnd;
 * a timeout to one packet, forgetting W_max (K = 0 after it).  After an
 * idle time the epoch shifts by the idle time, so the curve does not jump.
 *
 * HyStart (Linux's default): in slow start from 16 packets on, a round
 * (the packets sent since the round began) ends slow start when its ACK
 * train - ACKs less than 2 ms apart - has lasted half the least RTT plus
 * half Linux's allowance for ACKs bunched by offloads (4 x 64 KB at the
 * pacing rate Linux sets, 2 cwnd / SRTT in slow start, at most 1 ms), or
 * when the least RTT among its first 8 samples exceeds the least RTT seen
 * by an eighth of it (clamped to 4..16 ms).  Not ECN-capable.
 */
#include "config.h"

#include <math.h>

#include "commsim/cc.h"

typedef struct {
  double last_max_cwnd; /* W_max; 0 = none (after a timeout) */
  double origin;        /* the curve's plateau: W_max, or cwnd when above it */
  double k;             /* seconds from the epoch's start to the plateau */
  CsTime epoch_start;   /* 0 = a new epoch begins at the next ACK in avoidance */
  double ack_cnt;       /* packets acknowledged in the epoch, for the Reno estimate */
  double tcp_cwnd;      /* the Reno-friendly estimate, in packets */
  double cnt;           /* packets acknowledged per packet of growth */
  CsTime delay_min;     /* the least RTT seen; 0 = none */
  /* HyStart */
  bool found;
  CsTime round_start, last_ack, curr_rtt;
  uint64_t end_seq;
  uint32_t sample_cnt;
} CS_CC_PRIV Cubic;
_Static_assert(sizeof(Cubic) <= sizeof(((CsCc *)0)->priv), "Cubic fits in CsCc.priv");

#define ACK_DELTA (2 * CS_MS)      /* hystart_ack_delta_us */
#define DELAY_MIN_THRESH (4 * CS_MS)
#define DELAY_MAX_THRESH (16 * CS_MS)
#define MIN_SAMPLES 8
#define LOW_WINDOW 16.0

static void hystart_reset(Cubic *s, CsTime now, uint64_t nxt) {
  s->round_start = s->last_ack = now;
  s->end_seq = nxt;
  s->curr_rtt = CS_TIME_MAX;
  s->sample_cnt = 0;
}

static void cubic_reset(Cubic *s) {
  s->last_max_cwnd = 0;
  s->epoch_start = 0;
  s->found = false;
  s->round_start = 0;
  s->end_seq = 0;
}

static void cubic_init(CsCc *cc) {
  cc->cwnd = cc->cfg->init_cwnd;
  cc->ssthresh = INFINITY;
  Cubic *s = (Cubic *)cc->priv;
  *s = (Cubic){0};
  cubic_reset(s);
}

/* Linux's hystart_update, on each ACK with an RTT sample in slow start. */
static void hystart_update(CsCc *cc, Cubic *s, const CsAck *ack) {
  if (s->found) return;
  CsTime now = ack->now;
  if (ack->una >= s->end_seq) hystart_reset(s, now, ack->nxt);
  /* the ACK train */
  if (now - s->last_ack <= ACK_DELTA) {
    s->last_ack = now;
    CsTime srtt = ack->srtt > 0 ? ack->srtt : ack->rtt, ack_delay = CS_MS;
    if (srtt > 0) { /* hystart_ack_delay: 4 GSO frames at the pacing rate */
      double rate = 2.0 * cc->cwnd * cc->cfg->mss / ((double)srtt * 1e-12); /* bytes per second */
      double d = 4.0 * 65536.0 / rate * 1e12;
      if (d < (double)ack_delay) ack_delay = (CsTime)d;
    }
    if (now - s->round_start > (s->delay_min + ack_delay) / 2) {
      s->found = true;
      cc->ssthresh = cc->cwnd;
      return;
    }
  }
  /* the delay increase */
  if (ack->rtt >= 0) {
    if (s->curr_rtt > ack->rtt) s->curr_rtt = ack->rtt;
    if (s->sample_cnt < MIN_SAMPLES) {
      s->sample_cnt++;
    } else {
      CsTime thresh = s->delay_min / 8;
      thresh = thresh < DELAY_MIN_THRESH ? DELAY_MIN_THRESH : thresh > DELAY_MAX_THRESH ? DELAY_MAX_THRESH : thresh;
      if (s->curr_rtt > s->delay_min + thresh) {
        s->found = true;
        cc->ssthresh = cc->cwnd;
      }
    }
  }
}

static void cubic_on_ack(CsCc *cc, const CsAck *ack) {
  Cubic *s = (Cubic *)cc->priv;
  if (ack->rtt < 0) return;
  if (s->delay_min == 0 || ack->rtt < s->delay_min) s->delay_min = ack->rtt;
  if (cc->cfg->hystart && !ack->in_recovery && cc->cwnd < cc->ssthresh && cc->cwnd >= LOW_WINDOW && s->delay_min > 0)
    hystart_update(cc, s, ack);
}

/* Linux's bictcp_update: how many ACKs per packet of growth. */
static void cubic_update(CsCc *cc, Cubic *s, const CsAck *ack, double acked) {
  const CsCcConfig *cfg = cc->cfg;
  double cwnd = cc->cwnd, beta = cfg->cubic_beta;
  s->ack_cnt += acked;
  if (s->epoch_start == 0) {
    s->epoch_start = ack->now > 0 ? ack->now : 1;
    s->ack_cnt = acked;
    s->tcp_cwnd = cwnd;
    if (s->last_max_cwnd <= cwnd) {
      s->k = 0;
      s->origin = cwnd;
    } else {
      s->k = cbrt((s->last_max_cwnd - cwnd) / cfg->cubic_c);
      s->origin = s->last_max_cwnd;
    }
  }
  double t = (double)(ack->now - s->epoch_start + s->delay_min) * 1e-12;
  double target = s->origin + cfg->cubic_c * (t - s->k) * (t - s->k) * (t - s->k);
  s->cnt = target > cwnd ? cwnd / (target - cwnd) : 100.0 * cwnd;
  if (s->last_max_cwnd == 0 && s->cnt > 20) s->cnt = 20; /* no W_max yet: 5 % per RTT at least */
  /* the Reno-friendly region: Reno with CUBIC's beta grows
   * 3 (1 - beta) / (1 + beta) packets per window */
  double delta = cwnd * (1 + beta) / (3 * (1 - beta));
  while (s->ack_cnt > delta) {
    s->ack_cnt -= delta;
    s->tcp_cwnd += 1;
  }
  if (cfg->cubic_reno_friendly && s->tcp_cwnd > cwnd) {
    double max_cnt = cwnd / (s->tcp_cwnd - cwnd);
    if (s->cnt > max_cnt) s->cnt = max_cnt;
  }
  if (s->cnt < 2) s->cnt = 2;
}

static void cubic_cong_avoid(CsCc *cc, const CsAck *ack) {
  Cubic *s = (Cubic *)cc->priv;
  double acked = ack->newly;
  if (cc->cwnd < cc->ssthresh) { /* slow start, up to ssthresh */
    double room = cc->ssthresh - cc->cwnd;
    double used = acked < room ? acked : room;
    cc->cwnd += used;
    acked -= used;
    if (acked <= 0) goto clamp;
  }
  cubic_update(cc, s, ack, acked);
  cc->cwnd += acked / s->cnt;
clamp:
  if (cc->cwnd > cc->max_cwnd) cc->cwnd = cc->max_cwnd;
}

static void cubic_on_loss(CsCc *cc, CsTime now) {
  (void)now;
  Cubic *s = (Cubic *)cc->priv;
  const CsCcConfig *cfg = cc->cfg;
  s->epoch_start = 0;
  if (cc->cwnd < s->last_max_cwnd && cfg->cubic_fast_convergence)
    s->last_max_cwnd = cc->cwnd * (1 + cfg->cubic_beta) / 2;
  else
    s->last_max_cwnd = cc->cwnd;
  cc->ssthresh = fmax(cc->cwnd * cfg->cubic_beta, 2.0);
  cc->cwnd = cc->ssthresh;
}

static void cubic_on_timeout(CsCc *cc, CsTime now) {
  (void)now;
  Cubic *s = (Cubic *)cc->priv;
  cc->ssthresh = fmax(cc->cwnd * cc->cfg->cubic_beta, 2.0);
  cc->cwnd = 1.0;
  cubic_reset(s);
}

static void cubic_on_event(CsCc *cc, CsCcEvent ev, CsTime now) {
  Cubic *s = (Cubic *)cc->priv;
  if (ev == CS_CC_TX_START && s->epoch_start > 0 && cc->last_send >= 0 && now > cc->last_send) {
    /* as Linux: the epoch moves by the time nothing was sent, so the
     * window resumes the curve where it left it */
    s->epoch_start += now - cc->last_send;
    if (s->epoch_start > now) s->epoch_start = now;
  }
  if (ev == CS_CC_CWND_RESTART) s->epoch_start = 0;
}

static void cubic_shift(CsCc *cc, CsTime delta) {
  Cubic *s = (Cubic *)cc->priv;
  if (s->epoch_start > 0) s->epoch_start += delta; /* 0: none */
  s->round_start += delta;
  s->last_ack += delta;
}

const CsCcOps cs_cc_cubic = {
    .shift = cubic_shift,
    .name = "cubic",
    .ect = false,
    .init = cubic_init,
    .on_ack = cubic_on_ack,
    .on_loss = cubic_on_loss,
    .on_timeout = cubic_on_timeout,
    .cong_avoid = cubic_cong_avoid,
    .on_event = cubic_on_event,
};
