/* reno.c - NewReno's window (RFC 5681, RFC 6582): slow start from
 * init_cwnd until ssthresh, then one packet per window of ACKs; half the
 * window on a loss (once per recovery episode: the transport calls
 * on_loss when an episode begins), one packet after a timeout.  Not
 * ECN-capable. */
#include "config.h"

#include <math.h>

#include "commsim/cc.h"

static void reno_init(CsCc *cc) {
  cc->cwnd = cc->cfg->init_cwnd;
  cc->ssthresh = INFINITY;
}

void cs_cc_reno_cong_avoid(CsCc *cc, const CsAck *ack) {
  if (cc->cwnd < cc->ssthresh) cc->cwnd += ack->newly; /* slow start */
  else cc->cwnd += (double)ack->newly / cc->cwnd;      /* congestion avoidance */
  if (cc->cwnd > cc->max_cwnd) cc->cwnd = cc->max_cwnd;
}

void cs_cc_reno_on_loss(CsCc *cc, CsTime now) {
  (void)now;
  cc->ssthresh = fmax(cc->cwnd / 2.0, 2.0);
  cc->cwnd = cc->ssthresh;
}

void cs_cc_reno_on_timeout(CsCc *cc, CsTime now) {
  (void)now;
  cc->ssthresh = fmax(cc->cwnd / 2.0, 2.0);
  cc->cwnd = 1.0;
}

const CsCcOps cs_cc_reno = {
    .name = "reno",
    .ect = false,
    .init = reno_init,
    .on_loss = cs_cc_reno_on_loss,
    .on_timeout = cs_cc_reno_on_timeout,
    .cong_avoid = cs_cc_reno_cong_avoid,
};
