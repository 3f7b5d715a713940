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
 *               grows (Linux's cong_avoid);
 *   on_event    the connection starts sending after an idle time, its
 *               window is restarted, or its recovery ends (cwnd_event).
 *
 * A hook may be NULL (nothing to do).  The window (cwnd, ssthresh) and the
 * pacing rate are fields every algorithm shares; what else an algorithm
 * keeps lives in `priv`, cast to a struct of its own (CS_CC_PRIV).  An
 * algorithm that sets pacing_bps has its packets released no faster
 * (the transport keeps one timer per connection for it).
 *
 * The connection persists across the messages between two hosts (unless
 * transport.connections is per-message), so the window, the RTT estimate
 * and the algorithm's state carry over from one message to the next.
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

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/engine.h"

/* DCQCN's parameters (transport.dcqcn; Zhu et al., SIGCOMM 2015, with
 * NVIDIA ConnectX's names in brackets). */
typedef struct {
  double g;                 /* alpha's gain (dce_tcp_g) */
  CsTime alpha_period;      /* alpha is updated once per period (dce_tcp_rtt) */
  CsTime decrease_period;   /* at most one cut per period (rate_reduce_monitor_period) */
  int64_t min_rate;         /* bit/s (rpg_min_rate) */
  CsTime time_reset;        /* the rate-increase timer (rpg_time_reset) */
  int64_t byte_reset;       /* bytes sent per rate-increase event (rpg_byte_reset) */
  int64_t threshold;        /* F: increase events before additive increase (rpg_threshold) */
  int64_t ai_rate, hai_rate; /* bit/s per additive / hyper increase step (rpg_ai_rate, rpg_hai_rate) */
  double initial_alpha;     /* initial_alpha_value */
  CsTime cnp_interval;      /* the receiver sends at most one CNP per queue pair per interval (min_time_between_cnps) */
} CsDcqcnSpec;

#define CS_DCQCN_DECAY_N 128

/* The most a TCP connection's retransmission timeout grows to, backed off
 * (RFC 6298 asks at least 60 s). */
#define CS_TCP_MAX_RTO (60 * CS_SEC)

/* What every algorithm may read of its configuration (transport.*). */
typedef struct {
  double init_cwnd;       /* packets */
  double max_cwnd;        /* transport.window in packets: the receive window */
  uint32_t mss;           /* payload bytes per packet */
  uint32_t mtu;           /* bytes per full packet on the wire */
  double cubic_c;         /* transport.cubic.c: segments per s^3 */
  double cubic_beta;      /* transport.cubic.beta: the window kept on a loss */
  bool cubic_fast_convergence;
  bool cubic_reno_friendly; /* transport.cubic.reno_friendly */
  bool hystart;           /* transport.cubic.hystart */
  double bbr_high_gain;   /* transport.bbr.startup_gain (2/ln 2) */
  CsTime bbr_probe_rtt_interval; /* transport.bbr.probe_rtt_interval (10 s) */
  CsTime bbr_probe_rtt_time;     /* 200 ms */
  CsDcqcnSpec dcqcn;
  /* pow(1 - dcqcn.g, k) for k < CS_DCQCN_DECAY_N, valid when decay_ready
   * and decay_g == dcqcn.g (cs_cc_config_prepare): alpha's decay at each
   * CNP without a call to pow (a CNP comes some 50 periods after the last) */
  bool decay_ready;
  double decay_g;
  double decay[CS_DCQCN_DECAY_N];
} CsCcConfig;

/* Fill what the configuration derives from its keys (the decay table). */
void cs_cc_config_prepare(CsCcConfig *cfg);

typedef struct {
  double cwnd;         /* packets the connection may have in flight */
  double ssthresh;     /* slow start below it */
  double max_cwnd;     /* transport.window: the receive window, which cwnd never passes */
  uint64_t pacing_bps; /* 0: not paced; otherwise the rate the sender releases packets at */
  CsTime last_send;    /* when the connection last sent a data packet; -1: never (the transport's) */
  uint64_t seed;       /* for an algorithm's random choices (deterministic per connection) */
  uint64_t line_bps;   /* the bandwidth of the sender's own link (its NIC), set before init */
  CsTime wake_at;      /* set by a rate-based algorithm: its rate may rise then (a timer of its own); 0: no */
  bool mark_app_limited; /* set by the algorithm: the delivery-rate samples of what is in flight now are
                          * app-limited (BBR's probe-rtt); the transport takes it and clears it */
  const CsCcConfig *cfg;
  _Alignas(8) unsigned char priv[256]; /* the algorithm's own state */
} CsCc;

/* An algorithm's state type: `typedef struct {...} CS_CC_PRIV Reno;`, then
 * `Reno *r = (Reno *)cc->priv;` (may_alias: the storage is raw bytes). */
#define CS_CC_PRIV __attribute__((may_alias))

/* What an ACK tells the algorithm.  Positions count packets in the
 * connection's stream (its messages one after the other), as TCP's
 * sequence numbers count bytes. */
typedef struct {
  uint32_t newly;     /* packets newly acknowledged, cumulatively or selectively */
  bool ece;           /* it echoes a congestion-experienced mark */
  CsTime rtt;         /* a round-trip sample, or -1 (none: a retransmission's, Karn's rule) */
  uint64_t una, nxt;  /* after it: the first packet not acknowledged, the next new one to send */
  uint32_t in_flight; /* packets in flight after it */
  CsTime min_rtt;     /* the least round trip seen on the connection, or -1 */
  CsTime srtt;        /* the smoothed round trip, or -1 */
  CsTime now;
  /* the delivery-rate sample (Linux's tcp_rate.c), or rate_bps = 0 (none) */
  double rate_bps;     /* delivered packets over the sample's interval, in bit/s of full (mtu) packets */
  CsTime rate_interval;
  uint64_t delivered;  /* packets delivered on the connection so far */
  uint64_t prior_delivered; /* delivered when the sampled packet was sent */
  bool app_limited;    /* the sample was taken while the sender had too little to send */
  uint32_t lost;       /* packets newly marked lost by this ACK */
  bool in_recovery;   /* in a recovery episode, or after a timeout until what it marked lost is acknowledged */
  bool cnp;           /* roce: a congestion notification packet, not an acknowledgement (ece is set too) */
} CsAck;

/* What else happens to a connection (Linux's tcp_ca_event). */
typedef enum {
  CS_CC_TX_START,     /* it sends after a time with nothing in flight */
  CS_CC_CWND_RESTART, /* ... longer than its RTO: the window was restarted (idle_restart) */
  CS_CC_RECOVERY_END, /* the recovery episode, or the loss after a timeout, ended (the cumulative ACK passed its end) */
} CsCcEvent;

typedef struct {
  const char *name;
  bool ect;       /* its data packets are ECN-capable (ECN queues mark instead of dropping them) */
  bool rate;      /* it needs delivery-rate samples (and may pace) */
  void (*init)(CsCc *cc);
  void (*on_ack)(CsCc *cc, const CsAck *ack);
  void (*on_loss)(CsCc *cc, CsTime now);
  void (*on_timeout)(CsCc *cc, CsTime now);
  void (*cong_avoid)(CsCc *cc, const CsAck *ack);
  void (*on_event)(CsCc *cc, CsCcEvent ev, CsTime now);
  /* A data packet of `bytes` leaves now (rate-based algorithms count the
   * bytes and bring their timers up to date before its pacing gap); with
   * 0 bytes, only the timers are brought up to date. */
  void (*on_send)(CsCc *cc, uint32_t bytes, CsTime now);
  /* For traces (may be NULL): the algorithm's mode ("startup", "probe_bw"
   * ...; NULL: slow start or avoidance by cwnd and ssthresh), and its
   * estimate of the path's bandwidth in bit/s (0: none). */
  const char *(*mode)(const CsCc *cc);
  double (*bandwidth)(const CsCc *cc);
  /* Hybrid fidelity fast-forwarded the connection: every instant the
   * algorithm keeps (an epoch's start, a filter's stamp, a timer) moves
   * `delta` later, so that it resumes where it was.  NULL: it keeps no
   * instants.  (The transport moves cc->last_send and cc->wake_at.) */
  void (*shift)(CsCc *cc, CsTime delta);
} CsCcOps;

/* The mode of a connection's algorithm, for traces: ops->mode's, or
 * "slow_start" / "avoidance". */
const char *cs_cc_mode(const CsCcOps *ops, const CsCc *cc);

/* Reno's window growth (slow start, then one packet per window), which
 * other algorithms share as Linux's tcp_reno_cong_avoid is shared. */
void cs_cc_reno_cong_avoid(CsCc *cc, const CsAck *ack);
/* Reno's cut on a loss and on a timeout. */
void cs_cc_reno_on_loss(CsCc *cc, CsTime now);
void cs_cc_reno_on_timeout(CsCc *cc, CsTime now);

/* roce's algorithms (transport.cc), in CsRoceCc order: `none` sends at
 * line rate, `dcqcn` at the rate DCQCN sets. */
extern const CsCcOps cs_cc_roce_none, cs_cc_dcqcn;
/* DCQCN's state, for tests and traces: the current and target rates in
 * bit/s, and alpha. */
typedef struct {
  double rc, rt, alpha;
} CsDcqcnState;
CsDcqcnState cs_dcqcn_state(const CsCc *cc);

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

/* Linux's tcp_cwnd_restart: a window `cwnd` after `idle` with nothing in
 * flight (more than one `rto`), halved per RTO idle down to the initial
 * window `init` (or kept, when smaller).  The packet transport's and the
 * flow fidelity's. */
static inline double cs_cwnd_after_idle(double cwnd, double init, CsTime idle, CsTime rto) {
  double restart = fmin(init, cwnd);
  for (CsTime d = idle - rto; d > 0 && cwnd > restart; d -= rto) cwnd /= 2;
  return fmax(cwnd, restart);
}

#endif
