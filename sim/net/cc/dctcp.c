/* dctcp.c - DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257): Reno's
 * window, plus a cut by alpha/2 once per window of data when ACKs echo
 * ECN marks, alpha being the EWMA (g = 1/16) of the fraction of packets
 * marked per window.  Its packets are ECN-capable. */
#include "config.h"

#include <math.h>

#include "commsim/cc.h"

typedef struct {
  double alpha;
  uint64_t win_end;   /* the window of data being counted ends here */
  uint32_t acks, marks;
  uint64_t cwr_end;   /* no second cut before una passes it */
} CS_CC_PRIV Dctcp;
_Static_assert(sizeof(Dctcp) <= sizeof(((CsCc *)0)->priv), "Dctcp fits in CsCc.priv");

#define G (1.0 / 16.0)

static void dctcp_init(CsCc *cc) {
  cc->cwnd = cc->cfg->init_cwnd;
  cc->ssthresh = INFINITY;
  *(Dctcp *)cc->priv = (Dctcp){.alpha = 1.0};
}

static void dctcp_on_ack(CsCc *cc, const CsAck *ack) {
  Dctcp *d = (Dctcp *)cc->priv;
  d->acks++;
  d->marks += ack->ece;
  if (ack->una >= d->win_end) { /* a window of data has been acknowledged */
    double frac = d->acks ? (double)d->marks / d->acks : 0.0;
    d->alpha = (1.0 - G) * d->alpha + frac * G;
    d->acks = d->marks = 0;
    d->win_end = ack->nxt;
  }
  if (ack->ece && ack->una >= d->cwr_end) {
    cc->cwnd = fmax(cc->cwnd * (1.0 - d->alpha / 2.0), 1.0);
    cc->ssthresh = cc->cwnd;
    d->cwr_end = ack->nxt;
  }
}

const CsCcOps cs_cc_dctcp = {
    .name = "dctcp",
    .ect = true,
    .init = dctcp_init,
    .on_ack = dctcp_on_ack,
    .on_loss = cs_cc_reno_on_loss,
    .on_timeout = cs_cc_reno_on_timeout,
    .cong_avoid = cs_cc_reno_cong_avoid,
};
