/* net_private.h - the structures shared by link.c, transport.c and
 * background.c.  Not a public interface. */
#ifndef COMMSIM_NET_PRIVATE_H
#define COMMSIM_NET_PRIVATE_H

#include "commsim/cc.h"
#include "commsim/loss.h"
#include "commsim/net.h"
#include "commsim/ring.h"
#include "commsim/rng.h"
#include "msgstats.h"

enum { PKT_DATA, PKT_ACK, PKT_BG, PKT_CLASSES };
typedef struct CsHybrid CsHybrid; /* hybrid.c */
enum { F_ECT = 1, F_CE = 2, F_ECE = 4, F_RETX = 8, F_DSACK = 16,
       F_NACK = 32, /* roce: the receiver saw a gap (seq: what it expects; sack: what it got) */
       F_CNP = 64,   /* roce: a congestion notification, not an acknowledgement */
       F_NICQ = 128 }; /* data from a GPU: its machine's NIC has queued it (its small-queue entry knows its start) */

/* 40 bytes, carried by value: in its link's pipe while on a link (a hop
 * copies it into the next link's pipe), in a local while a node handles
 * it.  `path` and `hops` name the packet's route in the path arena: it
 * crosses port arena[path + hop] next. */
typedef struct {
  CsTime stamp;   /* data: when sent; ack: the data packet's stamp, echoed; bg: created */
  uint32_t owner; /* its message, or its background source */
  uint32_t seq;   /* data: packet number; ack: cumulative (next expected) */
  uint32_t sack;  /* ack: the packet number that triggered it */
  uint32_t bytes; /* on the wire */
  uint32_t path;
  uint16_t hop, hops;
  uint8_t kind, flags;
  uint16_t sack_back; /* ack (TCP): packets just below `sack` the receiver holds too (its SACK block's start:
                       * sack - sack_back), up to 65535; in the struct's padding */
  uint32_t xmit;      /* data: the sender's transmission number; ack: echoed */
} Packet;

/* A packet waiting in an egress queue: when it will start transmitting
 * (CS_HELD while its direction is paused), and at a switch the direction
 * it came in by, + 1, when that direction's link has PFC (0 otherwise). */
typedef struct {
  CsTime start;
  uint32_t bytes;
  uint32_t ing;
} Waiting;
#define CS_HELD CS_TIME_MAX

/* A packet on its way to the far end of a link, and when it gets there
 * (the packet itself: the next hop reads it where the pipe's front was
 * read, not from a pool line written long before). */
typedef struct {
  CsTime arrive;
  Packet pk;
} InPipe;

enum {
  ODD_CUT = 1, /* its sender is a cut-through switch (topology's cut_through) */
  ODD_NIC = 2  /* a machine's NIC: its GPUs' connections learn their packets' starts (own_hop 2) */
};

/* One direction of a link, with the egress queue of the node sending on
 * it.  Transmissions are scheduled when a packet is enqueued (the queue is
 * FIFO and the link never preempts, so the start and end of each
 * transmission are known then); the queue's contents at any instant are
 * recovered by retiring the waiting packets whose start has passed.
 * Arrivals at the far end come in the same FIFO order, so the direction
 * keeps its queued and travelling packets in a pipe and holds one engine
 * event, for the pipe's head: the event queue stays as small as the
 * number of links, however many packets are in flight. */
typedef struct {
  /* what every hop reads and writes first, in the first lines (a network
   * of a thousand hosts has more directions than the second-level cache
   * holds, and a hop that touched nine lines of its direction waited on
   * most of them) */
  _Alignas(64) int64_t bandwidth; /* a cache-line multiple: dirs[] is indexed on every hop */
  CsTime latency;
  /* serialization: ends are computed from the bits sent since the busy
   * period began, so rounding never accumulates: those bits x 1e12 =
   * period_ps x bandwidth + period_rem (period_rem < bandwidth) */
  CsTime period_start, busy_until;
  uint64_t period_ps, period_rem;
  uint64_t q_bytes;
  CsTime q_last; /* the time up to which queue_integral is summed */
  uint32_t to_node;
  uint32_t from_node;
  /* waiting packets */
  CS_RING(Waiting) q;
  CS_RING(InPipe) pipe; /* packets on the wire, in arrival order */
  uint32_t gen;         /* the pipe's event is valid while it holds this (a pause invalidates it) */
  CsQueueKind queue;
  bool bounded;
  uint8_t odd; /* what a forwarded packet's start asks for: ODD_CUT, ODD_NIC */
  /* the hop count (Packet.hop, in its pipe) of the packets the sending
   * node's own transports put in this queue: 1 for a host's link, 2 for a
   * machine's NIC (the link from its internal switch to the network,
   * which its GPUs' connections fill: topology.gpus_per_host); 0 for a
   * switch's port */
  uint8_t own_hop;
  /* PFC: the far node counts the bytes that came by this direction and
   * wait in its egress queues (ing_bytes); at xoff it pauses this
   * direction (pause_sent; `paused` once the frame has arrived), at xon
   * resumes it.  While paused, what this direction would send is held:
   * in q and the pipe with CS_HELD times, its loss decided on arrival. */
  bool pfc, paused, pause_sent;
  bool pfc_loss; /* pfc and a loss model: a packet's loss is drawn on arrival (one test per hop) */
  bool lossy;    /* a loss model: `loss` is drawn (its state lies lines away) */
  /* the third line: what a hop counts (st's first five) */
  uint64_t out_bytes;
  uint64_t iv_qmax; /* links.csv: the most bytes waiting in the sampling interval */
  CsLinkStats st;
  /* byte conservation: st.bytes = loss_bytes + out_bytes + bytes in the pipe */
  uint64_t drop_bytes, loss_bytes;
  int64_t cap;      /* a queue's bound, when `bounded` */
  bool cap_pkt;     /* ... in packets (read with cap, on its line) */
  CsLossState loss;
  CsRedSpec red;
  int64_t ecn_k;
  bool ecn_k_pkt;
  int64_t ecn_kmin, ecn_kmax; /* ecn {kmin, kmax, pmax}; kmax 0: none */
  double ecn_pmax;
  /* RED */
  double red_avg;
  uint32_t red_count;
  CsRng red_rng;
  CsTime iv_paused;     /* links.csv: paused_total at the start of the interval */
  int64_t xoff, xon, ing_cap;
  uint64_t ing_bytes;
  uint32_t held_n;
  uint64_t held_bytes;
  CsTime resume_base;   /* while paused: when the packet that was on the wire ends */
  CsTime paused_at, paused_total;
  uint64_t pause_frames; /* XOFF frames that reached this direction's sender */
  /* links.csv: the counters at the start of the sampling interval */
  uint64_t iv_started, iv_drops, iv_losses, iv_marks;
  double iv_integral;
} LinkDir;

/* What the sender has learnt of the round-trip time to a host; the
 * connections between the same hosts share it (with per-message
 * connections, each new one starts from what the last one learnt). */
typedef struct {
  CsTime srtt, rttvar;
  CsTime min_rtt; /* the least sample, or -1 */
  bool have_rtt;
} RttState;

/* A retransmission in flight: its packet, the number of that transmission
 * and when it was sent. */
typedef struct {
  uint32_t seq, xmit;
  CsTime sent;
} Rtx;

/* Per packet of a message, for the delivery-rate samples of the
 * algorithms that ask for them (Linux's tcp_rate.c). */
typedef struct {
  uint64_t delivered;    /* the connection's delivered count when it was sent */
  CsTime delivered_time; /* ... and the time of that count */
  CsTime first_tx;       /* the start of the send interval it ends */
  bool app_limited;
} RateStamp;

/* A connection: one per (src, dst) pair that carries its messages one
 * after the other (or one per message, transport.connections).  What the
 * sender knows of the path and decides: the congestion-control algorithm
 * and its window, the RTT estimate and the retransmission timeout, the
 * recovery episode, RACK's record of the latest delivery, pacing; and at
 * the receiving end its delayed-ACK state.  One engine event serves all
 * of its timers. */
typedef struct {
  const CsCcOps *ops;
  uint32_t tsq_nic; /* from a GPU to another machine: its machine's NIC's direction + 1 (its host queue); else 0 */
  CsCc cc;
  uint32_t pair; /* its RttState: net->rtts[pair] */
  uint32_t src, dst;
  uint32_t nic_dir;     /* roce: the link direction its packets leave the host by */
  CsTime rto;
  uint32_t consecutive_timeouts;
  uint32_t in_flight;   /* packets of all its messages */
  uint64_t outstanding; /* packets sent and not yet cumulatively acknowledged */
  uint32_t head, tail;  /* its unfinished senders, oldest first (Message.next) */
  uint64_t stream;      /* stream positions given to its messages so far */
  uint64_t sent_hi;     /* 1 + the highest position sent */
  uint64_t recover;     /* the recovery episode ends when una reaches it */
  uint64_t no_cut_until; /* losses below it belong to a timeout already paid for */
  bool in_recovery;
  bool in_loss;         /* after a timeout, until una passes no_cut_until */
  bool rack;            /* RACK-TLP, else the duplicate-threshold rule */
  bool reordering_seen;
  uint32_t reo_wnd_mult;   /* RACK: the reordering window in quarters of the least RTT */
  uint32_t reo_wnd_persist; /* recoveries before it returns to 1 */
  uint64_t dsack_round;    /* no second increase before una passes it; 0 = none */
  bool tlp_out;         /* a probe is out: no other before an ACK */
  bool tlp_retx;        /* the last probe resent a packet (RFC 8985 7.4: TLP.is_retrans) */
  bool idle;            /* nothing in flight since it last sent */
  uint64_t tlp_end;     /* sent_hi when it went (TLP.end_seq); 0 = none pending */
  bool cwnd_limited;    /* the window stopped the last send while packets were ready */
  uint32_t max_out;     /* the most packets in flight this round (slow start's half-window test) */
  uint64_t max_out_end; /* the round ends when una passes it */
  CsTime rack_xmit;     /* RACK.xmit_ts: the send time of the latest delivered packet, -1 none */
  uint64_t rack_pos;    /* ... its stream position (ties) */
  CsTime rack_rtt;
  /* delivery-rate sampling */
  uint64_t delivered;
  CsTime delivered_time, first_tx;
  uint64_t app_limited; /* a sample is app-limited until `delivered` passes it; 0 = not */
  CsTime pace_next;     /* pacing: the next packet leaves no earlier */
  CsTime pace_last;     /* roce: the slot of the last packet sent ... */
  uint32_t pace_bytes;  /* ... and its bytes (0: none yet) */
  uint32_t gap_bytes;   /* roce: slot_gap is the packet time of these bytes ... */
  CsTime pace_slot;     /* roce: the next slot, as computed at ... */
  uint64_t slot_bps;    /* ... this rate (set at each send; 0: no pacing then) */
  uint64_t gap_bps;     /* ... at this rate (0: none yet) */
  CsTime slot_gap;
  CS_RING(Waiting) tsq; /* its packets waiting in the host's egress queue */
  uint64_t tsq_bytes, tsq_limit; /* ... their bytes, and the most it may have there (0: no limit) */
  /* from a GPU to another machine: its host queue is its machine's NIC
   * (tsq_nic).  Its entries learn their starts when the NIC queues them
   * (the last tsq_unseen have not yet), each tsq_lead before (the way
   * from the GPU to the NIC: the refill reaches the NIC as its last
   * packet there starts) */
  uint32_t tsq_unseen;
  CsTime tsq_lead;
  /* timers, 0 = disarmed: retransmission, tail-loss probe, RACK's
   * reordering window, a delayed ACK, a paused sender (host queue, pacing) */
  CsTime t_rto, t_tlp, t_reo, t_ack, t_send;
  CsTime timer_at;
  CsEventId timer_id;
  bool timer_event;
  /* receiver */
  uint32_t quick;       /* packets still acknowledged at once (quick-ACK mode) */
  uint32_t ack_msg;     /* the message whose ACK is held back, or UINT32_MAX */
  uint32_t ack_count;   /* data packets that ACK covers */
  bool ack_ce;          /* the CE state of the last data packet (DCTCP ACKs on a change) */
  CsTime last_rcv;      /* -1: none */
  CsTime last_cnp;      /* roce: when the receiver last sent a CNP for this queue pair, -1: never */
  uint64_t qp_nack;     /* roce: the queue pair's position last NACKed for a hole in an earlier message, UINT64_MAX: none */
  uint32_t held_head;   /* roce selective: its messages received whole while an earlier one is not, in order (NONE: none) */
  Packet ack_pkt;       /* what the held-back ACK will echo */
} Conn;

/* A message: its packets' scoreboard at both ends, its part of the
 * connection's stream, its route and its statistics. */
typedef struct {
  uint32_t src, dst;           /* hosts */
  uint32_t n;                  /* data packets */
  uint32_t conn;               /* its connection, in CsNet.conns */
  uint32_t next;               /* the next unfinished sender of its connection, or UINT32_MAX */
  uint64_t base;               /* the stream position of its packet 0 */
  uint32_t last_payload;       /* payload of the last packet */
  uint32_t path_fwd, path_rev; /* arena offsets (ecmp-packet: n_paths paths, one after the other) */
  uint32_t path_room;          /* arena entries from path_fwd that its slot owns */
  uint16_t hops_fwd, hops_rev;
  uint8_t n_paths;
  CsDeliverFn fn;
  void *ctx;
  /* The scoreboards cover [una, una + ring) and [rcv_nxt, rcv_nxt + ring)
   * only: `window` is also the receive window, so no packet lies beyond,
   * and memory follows the window, not the message's size. */
  uint32_t ring_mask; /* ring size - 1; the size is a power of two >= min(n, window) */
  /* sender */
  uint8_t *state; /* per packet, by seq & ring_mask: S_UNSENT, S_FLIGHT, S_DONE, S_LOST */
  uint32_t *xmit_of; /* per packet, by seq & ring_mask: the number of its last transmission */
  CsTime *sent_at;   /* per packet (RACK): the time of its last transmission */
  RateStamp *rate;   /* per packet (algorithms that sample the delivery rate) */
  uint32_t xmits;    /* transmissions so far */
  /* retransmissions in flight, in transmission order: one is lost when
   * DUP_THRESH packets sent after it have arrived (sack) or when a packet
   * sent after it arrived a reordering window ago (rack) */
  CS_RING(Rtx) rtx;
  uint32_t una, nxt;
  uint32_t high_sacked; /* 1 + the highest packet known received */
  uint32_t sacked_out;  /* packets known received above una */
  uint32_t loss_scan;   /* packets below it were judged by the loss detection */
  uint32_t handoff;     /* its nxt when a later message of its connection first sent (0: none yet):
                         * its packets below it went before any of the later messages' */
  uint32_t lost_scan;   /* no S_LOST packet below it */
  uint32_t n_lost, in_flight;
  bool sender_done;
  /* receiver */
  uint64_t *rcv_bits;
  uint32_t rcv_nxt;
  uint32_t rcv_high; /* 1 + the highest packet received */
  uint32_t run_lo, run_hi; /* the run of packets above a hole that the last ACK's SACK block reported */
  bool nack_sent;    /* roce go-back-n: the gap at rcv_nxt has been NACKed */
  uint32_t rewind_xmit; /* roce go-back-n: the sender's transmissions when it last went back (older NACKs are stale) */
  /* Its number is `id` (the callbacks, messages.csv; its statistics are in
   * CsNet.stats).  Its slot here is reused once it is done (delivered or
   * abandoned, its sender finished) and nothing names it: no packet
   * (`refs`), no connection's held-back ACK. */
  uint32_t id;
  uint32_t refs;
  uint32_t next_free;
  bool in_use, delivered, failed;
  bool held;          /* roce selective: received whole, its completion waiting for an earlier message's */
  uint32_t next_held; /* the next in its connection's held list */
  bool done;   /* its statistics are final */
  bool zombie; /* in CsNet.zombies, its slot to be reused */
} Message;

/* A done message nothing names: its slot is reused by a send in a later
 * engine event than `born` (no frame of the event that let it go can hold it). */
typedef struct {
  uint64_t born;
  uint32_t slot;
} Zombie;

/* What receives a packet at its destination host, by kind (set by net.c:
 * the transport for data and ACKs, background.c for its packets), so that
 * links know nothing of what they carry. */
typedef void (*DeliverFn)(CsNet *net, const Packet *pk);

typedef struct {
  CsBackgroundSpec spec;
  uint32_t src_node;
  uint32_t path;
  uint16_t hops;
  CsRng rng;
  CsTime on_end;      /* onoff: end of the current burst */
  CsTime cbr_origin;  /* cbr: emission k is at origin + k * gap, exactly */
  uint64_t cbr_k;
  bool stopped;
} BgSource;

struct CsNet {
  CsEngine *engine;
  CsTransportSpec transport;
  const CsNetConfig *cfg;
  const CsTopology *t;
  const CsRoutes *routes;
  LinkDir *dirs; /* 2 per link */
  GArray *arena; /* uint32_t ports of every path */
  uint64_t alive_max; /* the most packets in flight at once */
  /* a network whose link directions pass an eighth of the second-level
   * cache (cs_link_init): its pipes' packets are asked for ahead of
   * their reads and writes (on_pipe, pipe_push) */
  bool prefetch;
  Message *msgs;
  uint32_t n_msgs, cap_msgs, active, failed; /* n_msgs: slots */
  uint32_t free_msg;                          /* free slots, through next_free */
  CS_RING(Zombie) zombies;
  uint64_t released;                          /* slots let go, each of a message done */
  CsStatsRing stats;                          /* per message, by number */
  Conn *conns;
  uint32_t n_conns, cap_conns;
  GHashTable *pairs; /* (src << 32 | dst) -> 1 + pair index */
  RttState *rtts;    /* per pair */
  uint32_t *pair_conn; /* per pair: its persistent connection */
  uint32_t n_pairs, cap_pairs;
  CsPacketTraceFn trace_fn;
  void *trace_ctx;
  CsConnTraceFn conn_trace_fn;
  void *conn_trace_ctx;
  CsIdleFn idle_fn;
  void *idle_ctx;
  DeliverFn deliver[PKT_CLASSES];
  BgSource *bg;
  uint32_t n_bg;
  /* transport settings */
  uint32_t mss, header, ack_bytes;
  uint32_t window; /* packets */
  uint32_t init_cwnd; /* packets */
  uint64_t seed;
  const CsCcOps *cc; /* transport.protocol's algorithm */
  CsCcConfig cc_cfg;
  bool persistent, rack, idle_restart;
  uint32_t delayed_ack;
  CsTime ack_delay;
  uint8_t n_paths; /* paths per message and direction: 1, or more with ecmp-packet */
  uint32_t max_timeouts;
  uint64_t host_queue; /* bytes; 0 = no limit */
  bool roce, gbn;      /* transport.protocol roce, with go-back-n (else selective repeat) */
  uint64_t cnps, nacks; /* roce: CNPs and NACKs sent by receivers */
  /* accounting */
  CsPacketCounts counts[PKT_CLASSES];
  uint64_t retransmissions, timeouts, hops, marks;
  bool pfc;                 /* some link has PFC */
  bool nic_tsq;             /* some connection's host queue is its machine's NIC (Conn.tsq_nic) */
  uint32_t *node_pausing;   /* per node: its ingress directions with an XOFF out */
  uint64_t pfc_overflows;   /* bytes past a PFC port's buffer: impossible with enough headroom (checked) */
  uint32_t n_paused;        /* directions paused now */
  bool deadlock_pending;    /* a deadlock check is scheduled */
  char *stuck;              /* the report of a PFC deadlock found (the run was stopped) */
  GArray *woken;            /* connections a resume has released (cs_transport_wake) */
  uint64_t *node_injected, *node_delivered; /* bytes, per node: node conservation */
  uint64_t notified;                         /* delivery callbacks (delivered or failed) */
  double bg_delay_sum_s;
  CsHybrid *hybrid; /* fidelity hybrid: the steady-state watch; NULL otherwise */
};

/* link.c */
/* Set up the link directions of a new network (its topology and seed set). */
void cs_link_init(CsNet *net);
/* PFC resumed host port di: its k held packets (the last k of its queue
 * and pipe) have their starts; the small-queue entries of this host's
 * data packets among them learn them, and the connections held for the
 * resume are woken by cs_transport_wake. */
void cs_transport_tsq_resumed(CsNet *net, uint32_t di, uint32_t k);
/* PFC paused a host's link at tp: message msg's connection's packets that
 * had not started by then are held. */
void cs_transport_tsq_paused(CsNet *net, uint32_t msg, CsTime tp, uint32_t port_dir);
void cs_transport_wake(CsNet *net);
/* A machine's NIC, direction di (UINT32_MAX: lost on the way, at `start`),
 * queued data packet *pk of one of its GPUs: it starts at `start` (CS_HELD
 * while the NIC is paused), and its connection's next small-queue entry
 * learns it (the caller marks the packet F_NICQ). */
void cs_transport_nic_queued(CsNet *net, const Packet *pk, uint32_t di, CsTime start);
/* Message slot fi: let go once done and named by nothing (transport.c). */
void cs_transport_zombie_check(CsNet *net, uint32_t fi);
/* A new packet of `kind` into *pk (counted; its other fields are the caller's). */
static inline void cs_net_packet_new(CsNet *net, Packet *pk, uint8_t kind) {
  net->counts[kind].sent++;
  net->counts[kind].in_flight++;
  uint64_t alive = net->counts[PKT_DATA].in_flight + net->counts[PKT_ACK].in_flight + net->counts[PKT_BG].in_flight;
  if (alive > net->alive_max) net->alive_max = alive;
  pk->kind = kind;
  pk->flags = 0;
  pk->hop = 0;
}
/* Packet pk is no more (delivered, dropped or lost: the caller counts which). */
static inline void cs_net_packet_gone(CsNet *net, const Packet *pk) {
  net->counts[pk->kind].in_flight--;
  if (pk->kind != PKT_BG) { /* the last packet naming a done message lets its slot go */
    Message *f = &net->msgs[pk->owner];
    if (--f->refs == 0 && G_UNLIKELY(f->done)) cs_transport_zombie_check(net, pk->owner);
  }
}
/* Packet pk was dropped or lost: gone, and if it had not reached its
 * machine's NIC, that its small-queue entry there never waits for it. */
static inline void cs_net_packet_lost(CsNet *net, const Packet *pk) {
  if (G_UNLIKELY(net->nic_tsq) && pk->kind == PKT_DATA && !(pk->flags & F_NICQ))
    cs_transport_nic_queued(net, pk, UINT32_MAX, cs_engine_now(net->engine));
  cs_net_packet_gone(net, pk);
}
/* Put packet *pk (at hop 0, at its source; copied) onto the network; returns when
 * it starts to be transmitted there (now when dropped; CS_HELD while its
 * host's link is paused by PFC: cs_transport_tsq_resumed says when, on
 * resume). */
CsTime cs_net_inject(CsNet *net, Packet *pk);

/* The bytes one connection may have waiting in the host egress behind
 * `port` (transport.host_queue: TCP small queues), or 0 (no limit). */
uint64_t cs_net_host_queue_limit(const CsNet *net, uint32_t port);
uint32_t cs_net_add_path(CsNet *net, uint32_t src_node, uint32_t dst_host, uint64_t hash, uint16_t *hops);

/* Report a packet event if a hook is set (link UINT32_MAX: at a host). */
void cs_net_trace(CsNet *net, CsPacketEvent ev, const Packet *pk, uint32_t link, int dir, CsTime time);

/* hybrid fidelity (hybrid.c): fast-forwarding.  cs_link_settle brings
 * every queue's time integral up to `now` (before a jump); cs_link_shift
 * and cs_transport_shift move every instant the links, the packets in
 * flight and the connections keep `delta` later (the engine's events move
 * with them: cs_engine_jump); cs_link_carry counts `k` packets of `bytes`
 * as carried along the `hops` ports from arena[path] (transmitted and
 * arrived, delivered at the end); cs_transport_cut takes `k` unsent packets
 * off the end of message slot fi, as if sent and delivered in the jump. */
void cs_link_settle(CsNet *net, CsTime now);
void cs_link_shift(CsNet *net, CsTime delta, CsTime now);
void cs_link_carry(CsNet *net, uint32_t path, uint16_t hops, uint64_t k, uint32_t bytes);
void cs_transport_shift(CsNet *net, CsTime delta);
void cs_transport_cut(CsNet *net, uint32_t fi, uint32_t k);
/* hybrid.c: the steady-state watch; a send wakes it. */
void cs_hybrid_kick(CsNet *net);
void cs_hybrid_free(CsHybrid *h);

/* transport.c: a data or ACK packet has reached its destination. */
void cs_transport_receive(CsNet *net, const Packet *pk);
void cs_transport_free(CsNet *net);
/* background.c */
void cs_background_receive(CsNet *net, const Packet *pk);
void cs_background_init(CsNet *net);

#endif
