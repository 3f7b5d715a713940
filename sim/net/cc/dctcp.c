/* dctcp.c - DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257): Reno's
 * window, plus a cut by alpha/2 once per window of data when ACKs echo
 * ECN marks, alpha being the EWMA (g = 1/16) of the fraction of packets
 * marked per window: the packets each ACK newly acknowledges, counted as
 * marked when it echoes a mark (RFC 8257 3.3's bytes, Linux's delivered
 * and delivered_ce), not the ACKs (with delayed ACKs an echo covers one
 * packet, the receiver sending at once when the marks change, where an
 * ACK without covers two).  ECN and loss together cut at most once per window
 * (RFC 3168 6.1.2, as Linux's CWR and Recovery states): no ECN cut during
 * a loss recovery, and no loss cut in the window of an ECN cut.  Its
 * packets are ECN-capable. */
#include "config.h"

#include <math.h>

#include "commsim/cc.h"

typedef struct {
  double alpha;
  uint64_t win_end;   /* the window of data being counted ends here */
  uint64_t acked, marked; /* packets this window, and those of them marked */
  uint64_t cwr_end;   /* no second cut before una passes it */
  bool in_cwr;        /* an ECN cut's window has not been acknowledged yet */
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
  d->acked += ack->newly;
  if (ack->ece) d->marked += ack->newly;
  if (ack->una >= d->win_end) { /* a window of data has been acknowledged */
    double frac = d->acked ? (double)d->marked / (double)d->acked : 0.0;
    d->alpha = (1.0 - G) * d->alpha + frac * G;
    d->acked = d->marked = 0;
    d->win_end = ack->nxt;
  }
  if (d->in_cwr && ack->una >= d->cwr_end) d->in_cwr = false;
  if (ack->ece && !d->in_cwr && !ack->in_recovery) {
    cc->cwnd = fmax(cc->cwnd * (1.0 - d->alpha / 2.0), 1.0);
    cc->ssthresh = cc->cwnd;
    d->cwr_end = ack->nxt;
    d->in_cwr = true;
  }
}

/* A loss: Reno's cut, unless the window was cut for ECN already. */
static void dctcp_on_loss(CsCc *cc, CsTime now) {
  if (!((Dctcp *)cc->priv)->in_cwr) cs_cc_reno_on_loss(cc, now);
}

const CsCcOps cs_cc_dctcp = {
    .name = "dctcp",
    .ect = true,
    .init = dctcp_init,
    .on_ack = dctcp_on_ack,
    .on_loss = dctcp_on_loss,
    .on_timeout = cs_cc_reno_on_timeout,
    .cong_avoid = cs_cc_reno_cong_avoid,
};
