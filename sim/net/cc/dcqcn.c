/* dcqcn.c - roce's two rate controls: `none` (line rate) and DCQCN (Zhu
 * et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
 * 2015), the reaction point as NVIDIA ConnectX NICs run it.
 *
 * A queue pair has no window: it sends at its current rate Rc, paced (at
 * the line rate it is not paced; its link serializes).  Switches mark ECN
 * (link `ecn: {kmin, kmax, pmax}`), the receiving NIC answers a marked
 * packet with a CNP (at most one per `cnp_interval` per queue pair), and
 * on a CNP the sender
 *   - cuts: Rt = Rc, Rc = max(Rc (1 - alpha / 2), min_rate), at most once
 *     per `decrease_period`, and resets its increase counters;
 *   - updates alpha: alpha = (1 - g) alpha + g at each CNP, which restarts
 *     alpha's period; every `alpha_period` without one, alpha = (1 - g) alpha.
 * It raises its rate on increase events: one per `time_reset` of time and
 * one per `byte_reset` bytes sent since the cut.  With T timer and BC
 * byte events so far (F = `threshold`):
 *   - fast recovery while max(T, BC) < F: Rc = (Rt + Rc) / 2;
 *   - hyper increase when min(T, BC) > F: Rt += (min(T, BC) - F) hai_rate;
 *   - additive increase otherwise: Rt += ai_rate;
 * and Rc = (Rt + Rc) / 2 after either increase; neither passes the line
 * rate.  Timers are not engine events: the state is brought up to date
 * when a CNP arrives and before each packet leaves (the rate only matters
 * then), by the same steps in the same order. */
#include "config.h"

#include <glib.h>
#include <math.h>

#include "commsim/cc.h"

typedef struct {
  double rc, rt, alpha, line;
  CsTime alpha_t;     /* the current alpha period began here */
  CsTime last_cut;    /* -1: never */
  CsTime next_timer;  /* the next increase timer event (while increasing) */
  uint64_t bytes;     /* sent since the last byte event */
  uint32_t t, bc;     /* increase events by timer and by bytes since the cut */
  uint32_t run;       /* timer events in a row with T >= max(BC, F): each adds the same step */
  bool increasing;    /* below the line rate: the increase events run */
} CS_CC_PRIV Dcqcn;
_Static_assert(sizeof(Dcqcn) <= sizeof(((CsCc *)0)->priv), "Dcqcn fits in CsCc.priv");

/* ---- none: the line rate, whatever happens ---- */

static void none_init(CsCc *cc) {
  cc->cwnd = cc->max_cwnd; /* no window: transport.window caps what a queue pair has unacknowledged */
  cc->ssthresh = INFINITY;
  cc->pacing_bps = 0;
}

static const char *none_mode(const CsCc *cc) {
  (void)cc;
  return "line_rate";
}

static double none_bandwidth(const CsCc *cc) { return (double)cc->line_bps; }

const CsCcOps cs_cc_roce_none = {
    .name = "none",
    .ect = false,
    .rate = false,
    .init = none_init,
    .mode = none_mode,
    .bandwidth = none_bandwidth,
};

/* ---- DCQCN ---- */

static void set_pacing(CsCc *cc, const Dcqcn *d) {
  cc->pacing_bps = d->rc >= d->line ? 0 : (uint64_t)d->rc;
  cc->wake_at = d->increasing ? d->next_timer : 0;
}

static void dcqcn_init(CsCc *cc) {
  none_init(cc);
  Dcqcn *d = (Dcqcn *)cc->priv;
  double line = cc->line_bps > 0 ? (double)cc->line_bps : 1e11;
  *d = (Dcqcn){.rc = line, .rt = line, .line = line, .alpha = cc->cfg->dcqcn.initial_alpha, .last_cut = -1};
}

/* One increase event; false once the rate is back at the line rate. */
static bool increase(Dcqcn *d, const CsDcqcnSpec *p) {
  uint32_t f = (uint32_t)p->threshold;
  uint32_t hi = MAX(d->t, d->bc), lo = MIN(d->t, d->bc);
  if (hi >= f) { /* past fast recovery: the target moves up */
    d->rt += lo > f ? (double)(lo - f) * (double)p->hai_rate : (double)p->ai_rate;
    if (d->rt > d->line) d->rt = d->line;
  }
  d->rc = (d->rt + d->rc) / 2.0;
  if (d->rt - d->rc < 1.0) d->rc = d->rt; /* within a bit per second: there */
  if (d->rc >= d->line) {
    d->rc = d->rt = d->line;
    d->increasing = false;
  }
  return d->increasing;
}

/* The timer events due by `now`.  While they run alone (no bytes sent),
 * once T has passed BC and F every event adds the same step to Rt and Rc
 * settles a step behind it; past 64 such events the rest is added in one
 * go, so a long idle time costs no more than a short one. */
static void run_timer(Dcqcn *d, const CsDcqcnSpec *p, CsTime now) {
  while (d->increasing && d->next_timer <= now) {
    uint64_t due = (uint64_t)((now - d->next_timer) / p->time_reset) + 1;
    uint32_t f = (uint32_t)p->threshold;
    if (due > 64 && d->run >= 64) {
      double step = d->bc > f ? (double)(d->bc - f) * (double)p->hai_rate : (double)p->ai_rate;
      d->rt = fmin(d->line, d->rt + (double)due * step);
      d->rc = d->rt >= d->line ? d->line : fmax(d->rc, d->rt - step);
      d->t += (uint32_t)MIN(due, (uint64_t)UINT32_MAX - d->t);
      d->next_timer += (CsTime)due * p->time_reset;
      if (d->rc >= d->line) d->rc = d->rt = d->line, d->increasing = false;
      return;
    }
    d->t++;
    d->next_timer += p->time_reset;
    d->run = d->t >= MAX(d->bc, f) ? d->run + 1 : 0;
    increase(d, p);
  }
}

/* alpha's decay over the periods without a CNP since the last one (only
 * a cut reads alpha, so only a CNP brings it up to date). */
static void decay_alpha(Dcqcn *d, const CsCcConfig *cfg, CsTime now) {
  const CsDcqcnSpec *p = &cfg->dcqcn;
  if (d->last_cut >= 0 && now - d->alpha_t >= p->alpha_period) { /* initial_alpha holds until the first CNP */
    CsTime k = (now - d->alpha_t) / p->alpha_period;
    d->alpha *= k < CS_DCQCN_DECAY_N && cfg->decay_ready && cfg->decay_g == p->g ? cfg->decay[k] : pow(1.0 - p->g, (double)k);
    d->alpha_t += k * p->alpha_period;
  }
}

static void dcqcn_on_ack(CsCc *cc, const CsAck *ack) {
  if (!ack->cnp) return;
  Dcqcn *d = (Dcqcn *)cc->priv;
  const CsDcqcnSpec *p = &cc->cfg->dcqcn;
  CsTime now = ack->now;
  decay_alpha(d, cc->cfg, now);
  run_timer(d, p, now);
  if (d->last_cut < 0 || now - d->last_cut >= p->decrease_period) {
    d->rt = d->rc;
    d->rc = fmax(d->rc * (1.0 - d->alpha / 2.0), (double)p->min_rate);
    d->last_cut = now;
    d->t = d->bc = d->run = 0;
    d->bytes = 0;
    d->next_timer = now + p->time_reset;
    d->increasing = true;
  }
  /* this period brought a CNP */
  d->alpha = (1.0 - p->g) * d->alpha + p->g;
  d->alpha_t = now;
  set_pacing(cc, d);
}

/* At every packet a queue pair sends.  pacing_bps and wake_at are what
 * set_pacing made of rc, increasing and next_timer when they last moved
 * (the transport moves wake_at with next_timer in a jump): a packet that
 * brings no increase event leaves them as they are (most packets:
 * set_pacing's compare and conversion were a sixth of the call). */
static void dcqcn_on_send(CsCc *cc, uint32_t bytes, CsTime now) {
  Dcqcn *d = (Dcqcn *)cc->priv;
  if (!d->increasing) return; /* (then pacing_bps and wake_at are 0 already) */
  const CsDcqcnSpec *p = &cc->cfg->dcqcn;
  bool moved = false;
  if (d->next_timer <= now) run_timer(d, p, now), moved = true;
  d->bytes += bytes;
  while (d->increasing && d->bytes >= (uint64_t)p->byte_reset) {
    d->bytes -= (uint64_t)p->byte_reset;
    d->bc++;
    d->run = 0;
    increase(d, p);
    moved = true;
  }
  if (moved) set_pacing(cc, d);
}

static const char *dcqcn_mode(const CsCc *cc) {
  const Dcqcn *d = (const Dcqcn *)cc->priv;
  return !d->increasing ? "line_rate" : d->last_cut >= 0 && d->t == 0 && d->bc == 0 ? "cut" : "increase";
}

static double dcqcn_bandwidth(const CsCc *cc) { return ((const Dcqcn *)cc->priv)->rc; }

CsDcqcnState cs_dcqcn_state(const CsCc *cc) {
  const Dcqcn *d = (const Dcqcn *)cc->priv;
  return (CsDcqcnState){d->rc, d->rt, d->alpha};
}

static void dcqcn_shift(CsCc *cc, CsTime delta) {
  Dcqcn *d = (Dcqcn *)cc->priv;
  d->alpha_t += delta;
  if (d->last_cut >= 0) d->last_cut += delta; /* -1: never */
  d->next_timer += delta;
}

void cs_cc_config_prepare(CsCcConfig *cfg) {
  cfg->decay_ready = true;
  cfg->decay_g = cfg->dcqcn.g;
  for (int k = 0; k < CS_DCQCN_DECAY_N; k++) cfg->decay[k] = pow(1.0 - cfg->dcqcn.g, (double)k);
}

const CsCcOps cs_cc_dcqcn = {
    .shift = dcqcn_shift,
    .name = "dcqcn",
    .ect = true,
    .rate = false,
    .init = dcqcn_init,
    .on_ack = dcqcn_on_ack,
    .on_send = dcqcn_on_send,
    .mode = dcqcn_mode,
    .bandwidth = dcqcn_bandwidth,
};
