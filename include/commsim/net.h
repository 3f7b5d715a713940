/* net.h - the packet-level network: links, queues, loss, the reliable
 * transport, and open-loop background traffic.
 *
 * What a user of this module sees is one call: send N payload bytes from
 * host A to host B and be called back when the last byte has arrived.
 * Beneath it, each message is a flow cut into packets of at most `mtu`
 * bytes, paced by its congestion window (fixed, reno or dctcp), queued at
 * every egress port it crosses, serialized at the link's bandwidth,
 * delayed by its latency, dropped by full or RED queues, marked by ECN
 * queues, lost by the link's loss model, acknowledged by real ACK packets
 * on the reverse path, and recovered by fast retransmit or timeout.
 *
 * Every packet ends delivered, dropped (queue), lost (link) or still in
 * flight when the run ends; cs_net_check_accounting() proves the counts
 * add up.  Packets travel by value in their links' pipes, which grow to
 * the most in flight at once and are then reused: memory does not grow
 * with packets sent.
 *
 * Layer 2 (network; docs/design.md). Owns the packet network: packets,
 * queues, links, transport, background; does not touch collectives,
 * workloads, scenarios: it is configured by CsNetConfig.
 */
#ifndef COMMSIM_NET_H
#define COMMSIM_NET_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/cc.h"
#include "commsim/engine.h"
#include "commsim/error.h"
#include "commsim/netstats.h"
#include "commsim/routing.h"
#include "commsim/topology.h"

/* transport: (the protocol is a row of cc.h's cs_protocols). */
typedef uint32_t CsProtocol;
enum { CS_PROTO_FIXED, CS_PROTO_RENO, CS_PROTO_DCTCP, CS_PROTO_CUBIC, CS_PROTO_BBR, CS_PROTO_ROCE }; /* the built-in rows */

/* roce (SPEC 7.3): its rate control (transport.cc) and how it repairs a
 * loss (transport.retransmit). */
typedef enum { CS_ROCE_CC_DCQCN, CS_ROCE_CC_NONE } CsRoceCc;
const char *const *cs_roce_cc_names(void); /* in CsRoceCc order, NULL-terminated */
typedef enum {
  CS_RETX_GO_BACK_N, /* the receiver keeps only in-order packets; the sender resends from the gap */
  CS_RETX_SELECTIVE, /* IRN-like: the receiver keeps what arrives, the sender resends only what is missing */
} CsRetransmit;
const char *const *cs_retransmit_names(void); /* in CsRetransmit order, NULL-terminated */

/* transport.connections: one connection per (src, dst) pair that carries
 * its messages one after the other, as a socket does, or a new one per
 * message (slow start every time). */
typedef enum { CS_CONN_PERSISTENT, CS_CONN_PER_MESSAGE } CsConnections;
const char *const *cs_connections_names(void); /* in CsConnections order, NULL-terminated */

/* transport.recovery: how losses are detected short of a timeout. */
typedef enum {
  CS_RECOVERY_AUTO, /* rack for cubic and bbr, sack for the others */
  CS_RECOVERY_RACK, /* RACK-TLP (RFC 8985): time-based, with tail-loss probes */
  CS_RECOVERY_SACK, /* three packets received after one (duplicate-ACK threshold) */
} CsRecovery;
const char *const *cs_recovery_names(void); /* in CsRecovery order, NULL-terminated */
/* The detection a protocol gets with recovery `auto`. */
CsRecovery cs_recovery_resolve(CsRecovery r, CsProtocol protocol);

typedef struct {
  CsProtocol protocol;
  int64_t mtu, header, ack; /* bytes */
  int64_t window;           /* packets, or bytes when window_bytes */
  bool window_bytes;
  int64_t init_cwnd; /* packets */
  CsTime min_rto;
  int64_t max_timeouts; /* consecutive timeouts before a message is abandoned */
  CsTime initial_rto;   /* before a connection has an RTT sample */
  int64_t host_queue;   /* bytes a host's egress may hold waiting before its messages pause;
                         * 0 = unlimited, -1 = 100 us of the host's link (the default) */
  uint32_t connections; /* CsConnections */
  bool idle_restart;    /* restart the window after an idle time longer than the RTO */
  uint32_t recovery;    /* CsRecovery */
  int64_t delayed_ack;  /* data packets per ACK (1: every packet at once) */
  CsTime ack_delay;     /* the most an ACK is held back */
  double cubic_c, cubic_beta;
  bool cubic_fast_convergence, cubic_reno_friendly, hystart;
  double bbr_startup_gain;
  CsTime bbr_probe_rtt_interval, bbr_probe_rtt_time;
  uint32_t roce_cc;      /* CsRoceCc */
  uint32_t retransmit;   /* CsRetransmit */
  CsTime rto;            /* roce's retransmission timeout (fixed: RoCE NICs have no RTT estimate) */
  CsDcqcnSpec dcqcn;
} CsTransportSpec;

/* A message the transport puts into its host's queue whole, at once (a
 * burst, which leaves behind those put in before it): at most this many
 * packets, the window its connection starts with (init_cwnd where the
 * window grows, `window` when fixed; no limit for roce's queue pairs;
 * none for a paced protocol, bbr) ... */
double cs_transport_burst_packets(const CsTransportSpec *tr);
/* ... and at most this many wire bytes, what one connection may have
 * waiting in its host's queue: host_queue, by default 100 us of the
 * host's link (`link_bps`) and at least two packets; 0: no limit. */
double cs_transport_host_queue_bytes(const CsTransportSpec *tr, double link_bps);

typedef enum { CS_PATTERN_CBR, CS_PATTERN_POISSON, CS_PATTERN_ONOFF } CsPattern;
const char *const *cs_pattern_names(void); /* in CsPattern order, NULL-terminated */

/* An open-loop background source (background[]). */
typedef struct {
  char *src, *dst;
  CsPattern pattern;
  int64_t rate; /* bit/s */
  int64_t size; /* bytes per packet, on the wire */
  CsTime on, off;
  CsLoc at;
} CsBackgroundSpec;

/* All the network needs to know beyond its topology and routes. */
typedef struct {
  uint64_t seed; /* every random stream of the network derives from it */
  CsTransportSpec transport;
  const CsBackgroundSpec *background;
  uint32_t n_background;
  /* fidelity hybrid (hybrid.rounds, hybrid.tolerance): round trips of
   * steady rates before a jump, and how steady (cs_net_enable_hybrid) */
  uint32_t hybrid_rounds;
  double hybrid_tolerance;
} CsNetConfig;

typedef struct CsNet CsNet;

/* Messages call back with netstats.h's CsDeliverFn when delivered (the
 * last byte arrived) or, `failed`, abandoned after max_timeouts timeouts. */

/* The config (and what its background points to) must outlive the net. */
CsNet *cs_net_new(CsEngine *engine, const CsNetConfig *config, const CsTopology *t, const CsRoutes *r);
void cs_net_free(CsNet *net);

/* Fidelity hybrid: fast-forward the network while its messages' rates are
 * steady, as measured over `rounds` round trips (2..64) each within
 * `tolerance` (a fraction) between the two halves; docs/network.md.
 * Call before the first send. */
void cs_net_enable_hybrid(CsNet *net, uint32_t rounds, double tolerance);
/* Simulated time fast-forwarded so far, the number of jumps and the
 * watch's own events (0 without hybrid). */
CsTime cs_net_fast_forwarded(const CsNet *net, uint64_t *jumps, uint64_t *watches);

/* Start a message of `payload` bytes (>= 1) from host `src` to host `dst`
 * (indices among hosts) now.  Returns its number, 0, 1, 2... in order. */
uint32_t cs_net_send(CsNet *net, uint32_t src, uint32_t dst, uint64_t payload, CsDeliverFn fn,
                     void *ctx);
/* Start the scenario's background sources (they run until cs_net_stop_background
 * or the end of the run). */
void cs_net_start_background(CsNet *net);
void cs_net_stop_background(CsNet *net);

/* Messages not yet finished: a message is finished when it has been
 * delivered and its sender has every acknowledgement, or abandoned. */
uint32_t cs_net_active(const CsNet *net);
/* Messages abandoned so far. */
uint32_t cs_net_failed(const CsNet *net);
/* The most packets one message may have; a larger message is refused at
 * set-up (a scenario error), never at run time. */
#define CS_NET_MAX_PACKETS ((uint64_t)1 << 30)
/* A host egress queue with no `buffer` of its own is unbounded for the
 * transport, whose flows pause at transport.host_queue; open-loop
 * background packets are dropped there beyond this many waiting (Linux's
 * default txqueuelen), so a source faster than its link cannot grow it
 * without bound. */
#define CS_NET_HOST_BG_PACKETS 1000

/* fn(ctx) each time the number of unfinished messages falls to zero. */
void cs_net_set_idle_fn(CsNet *net, CsIdleFn fn, void *ctx);


uint32_t cs_net_messages(const CsNet *net);
/* Label a message with the iteration and algorithm step that sent it. */
void cs_net_tag_message(CsNet *net, uint32_t msg, uint32_t iteration, uint32_t step);
/* msg from cs_net_first_message on: with a retire function (as
 * cs_fabric_set_retire), a done message's statistics are handed over and
 * forgotten once every earlier message is done too. */
const CsMessageStats *cs_net_message(const CsNet *net, uint32_t msg);
uint32_t cs_net_first_message(const CsNet *net);
/* Message slots made so far: a done message's slot is reused, so this
 * follows the messages in flight at once, not the messages sent. */
uint32_t cs_net_message_slots(const CsNet *net);
void cs_net_set_retire(CsNet *net, CsRetireFn fn, void *ctx);


CsNetTotals cs_net_totals(const CsNet *net);
/* sent = delivered + dropped + lost + in_flight for each class, and the
 * per-link counters agree; a failure is a bug report. */
bool cs_net_check_accounting(const CsNet *net, GError **error);
/* The expensive invariants, for `--check` (between events, changing
 * nothing): every queue's byte count recomputed from its contents,
 * queues and pipes in time order, every live packet on a wire, and the
 * packet and byte accounting above (the walk over every message is left
 * to cs_net_check_accounting at the end: it grows with the run). */
bool cs_net_check_state(const CsNet *net, GError **error);
/* Packets on a wire or waiting in a queue now, of every class. */
uint64_t cs_net_packets_in_flight(const CsNet *net);

/* PFC deadlock: every CS_NET_DEADLOCK_CHECK of simulated time while some
 * link direction is paused, the network looks for paused directions that
 * wait on each other only (each can resume only when a switch drains
 * packets that wait behind another of them).  If it finds them it stops
 * the engine; this returns the report naming the cycle (to free), or NULL. */
#define CS_NET_DEADLOCK_CHECK CS_MS
char *cs_net_stuck_report(const CsNet *net);

/* Statistics up to now (queues brought up to date first). */
CsLinkStats cs_net_link_stats(CsNet *net, uint32_t link, int dir);

/* Close the interval (t0, now] of every link direction and report those
 * that carried, held, dropped, lost or marked anything in it; the next
 * interval starts now. */
void cs_net_sample_links(CsNet *net, CsTime t0, CsLinkSampleFn fn, void *ctx);

/* A connection's sender after it took an ACK (or a timeout). */
typedef struct {
  uint32_t conn, src, dst; /* the connection and its hosts (indices among hosts) */
  CsTime now;
  double cwnd, ssthresh;   /* packets; ssthresh INFINITY before the first cut */
  uint64_t pacing_bps;     /* 0: not paced */
  const char *mode;        /* the algorithm's (cs_cc_mode) */
  double bandwidth_bps;    /* its estimate of the path's bandwidth, or 0 */
  uint32_t in_flight;      /* packets */
  CsTime srtt;             /* -1: no sample yet */
} CsConnSample;
typedef void (*CsConnTraceFn)(void *ctx, const CsConnSample *s);
/* Every connection's state after each ACK and timeout to fn, or none (NULL). */
void cs_net_set_conn_trace(CsNet *net, CsConnTraceFn fn, void *ctx);

/* Packet events (netstats.h) to fn, or none (NULL). */
void cs_net_set_packet_trace(CsNet *net, CsPacketTraceFn fn, void *ctx);

#endif
