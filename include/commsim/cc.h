/* cc.h - congestion control: the algorithm apart from the transport.
 *
 * As Linux's struct tcp_congestion_ops and ns-3's TcpCongestionOps, an
 * algorithm is a table of hooks over a connection's window; the transport
 * (transport.c) keeps the scoreboard, detects losses, runs the timers and
 * calls the hooks where Linux does:
 *
 *   on_ack      every ACK, once the scoreboard has taken it and before loss
 *               detection: the RTT sample, the ECN echo, the packets newly
 *               acknowledged (Linux's in_ack_event and pkts_acked);
 *   on_loss     a recovery episode begins (fast retransmit): the cut
 *               (Linux's ssthresh, then cwnd = ssthresh);
 *   on_timeout  the retransmission timer fired;
 *   cong_avoid  packets newly acknowledged outside recovery: the window
 *               grows (Linux's cong_avoid).
 *
 * A hook may be NULL (nothing to do).  The window (cwnd, ssthresh) and the
 * pacing rate are fields every algorithm shares; what else an algorithm
 * keeps lives in `priv`, cast to a struct of its own (CS_CC_PRIV).
 *
 * One algorithm is one file under sim/net/cc/ and one row of the protocol
 * table (cs_protocols); the scenario's transport.protocol names the row.
 *
 * Layer 2 (network; docs/design.md). Owns congestion-control algorithms and
 * the protocols' table; does not touch the transport's scoreboard and timers
 * (transport.c).
 */
#ifndef COMMSIM_CC_H
#define COMMSIM_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "commsim/engine.h"

typedef struct {
  double cwnd;         /* packets the connection may have in flight */
  double ssthresh;     /* slow start below it */
  double max_cwnd;     /* transport.window: the receive window, which cwnd never passes */
  uint64_t pacing_bps; /* 0: not paced */
  _Alignas(8) unsigned char priv[64]; /* the algorithm's own state */
} CsCc;

/* An algorithm's state type: `typedef struct {...} CS_CC_PRIV Reno;`, then
 * `Reno *r = (Reno *)cc->priv;` (may_alias: the storage is raw bytes). */
#define CS_CC_PRIV __attribute__((may_alias))

/* What an ACK tells the algorithm. */
typedef struct {
  uint32_t newly;     /* packets newly acknowledged, cumulatively or selectively */
  bool ece;           /* it echoes a congestion-experienced mark */
  CsTime rtt;         /* a round-trip sample, or -1 (none: a retransmission's, Karn's rule) */
  uint32_t una, nxt;  /* after it: the first packet not acknowledged, the next new one to send */
  CsTime now;
} CsAck;

typedef struct {
  const char *name;
  bool ect; /* its data packets are ECN-capable (ECN queues mark instead of dropping them) */
  void (*init)(CsCc *cc, double init_cwnd);
  void (*on_ack)(CsCc *cc, const CsAck *ack);
  void (*on_loss)(CsCc *cc);
  void (*on_timeout)(CsCc *cc);
  void (*cong_avoid)(CsCc *cc, const CsAck *ack);
} CsCcOps;

/* Reno's window growth (slow start, then one packet per window), which
 * other algorithms share as Linux's tcp_reno_cong_avoid is shared. */
void cs_cc_reno_cong_avoid(CsCc *cc, const CsAck *ack);
/* Reno's cut on a loss and on a timeout. */
void cs_cc_reno_on_loss(CsCc *cc);
void cs_cc_reno_on_timeout(CsCc *cc);

/* The protocols: one row per algorithm, in the order the built-in ones
 * are numbered (CsProtocol).  Terminated by a row whose name is NULL. */
typedef struct {
  const char *name;
  const char *help; /* one line: what it is */
  const CsCcOps *ops;
} CsProtocolDef;

extern const CsProtocolDef cs_protocols[];
/* The row of `name`, or NULL. */
const CsProtocolDef *cs_protocol_find(const char *name);
/* The names, NULL-terminated (for messages and the scenario reader). */
const char *const *cs_protocol_names(void);
const char *cs_protocol_name(uint32_t protocol);

#endif
