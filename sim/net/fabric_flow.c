/* fabric_flow.c - the flow fidelity: every message a fluid flow.
 *
 * A message's bytes (headers included: payload + one header per packet)
 * flow over its route at a rate that is its max-min fair share of the link
 * directions it crosses, computed by progressive filling (Bertsekas and
 * Gallager, 1992): every unfrozen flow's rate grows at the same pace until
 * a link direction is full or a flow reaches its own cap; the flows of a
 * full direction freeze; repeat.  Its own cap is what its window allows in
 * a round trip (window x mtu / RTT) and, with loss on its route, what
 * TCP's response to loss allows (Mathis et al., 1997: MSS / RTT x
 * sqrt(3/2) / sqrt(p)) for reno and dctcp; background sources are flows
 * capped at their rate (the reader admits constant-rate sources only).
 *
 * ACKs.  A flow's ACKs (`ack` bytes per packet) load its reverse route in
 * proportion to its rate, as the packet network's do.  They are not part
 * of the sharing itself, which would join every flow of a ring into one
 * component through its neighbours' ACKs: a direction's ACK load is taken
 * off its capacity before its data flows share the rest, and when a refill
 * changes the ACK load of a direction by more than ACK_SLACK of its
 * capacity, that direction's data flows are refilled in turn (ACKs being a
 * few per cent of the data, this ends within a hop or two).
 *
 * Packet spraying (`routing: ecmp-packet`).  A message's packets take one
 * of its CS_ECMP_PACKET_PATHS paths each, drawn as the packet network
 * draws them, in about equal numbers: its bits are as many flows, one per
 * path (two on one path when the draw repeats it), each an equal part of
 * its bytes and of its window's cap, and it is delivered when the last of
 * them is.
 *
 * When a flow's last bit has left its first link, its delivery follows
 * after what a lone message's packets add to its wire bytes at the
 * slowest link's rate: the route's latencies and the store-and-forward
 * the packet network gives it (cs_path_message_time: a last packet smaller
 * than the others waits behind them where no hop before was slower), the
 * closed form's message time too.
 *
 * A host's queue in turn.  A message its transport puts into its host's
 * queue whole (a burst: within the window its connection starts with and
 * the host queue's limit) leaves after the bursts put in before it: its
 * flow starts at its turn on a line-rate clock of the host's link
 * direction (fifo_turn), and of its machine's NIC for a GPU.  A message
 * past the window (within that limit) goes in window by window, as slow
 * start lets it (chunk_send, on_rest, chunk_next).  Bursts from several
 * hosts that meet at a receiver's link share it, as their packets do.
 *
 * Off a star, a burst is a flow on its host's link alone, and passes the
 * hops after it as a train of its packets, in turn with the other trains
 * there (train_hop): a burst of a few packets holds a hop only while it
 * passes, where a fluid flow holds every hop of its way from its start.
 *
 * Rates change only where a flow starts or ends: the flows that share a
 * link direction with one that changed, and so on (a connected component),
 * are refilled together, once per instant however many flows start or end
 * at it.  One engine event stands for the next fluid end, one for the
 * next delivery; when the next of them would run right after the event
 * under way, that event runs it itself (flush_plans).  Queues, drops,
 * losses and retransmissions are not modelled: the run reports them as
 * such (empty, not 0).
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "commsim/fabric.h"
#include "commsim/net.h"
#include "commsim/ring.h"
#include "commsim/rng.h"
#include "msgstats.h"

#define NONE UINT32_MAX
#define GHOST (UINT32_MAX - 1) /* Flow.msg of a flow that carries, for a message delivered early, what its bits had left (blocks_ghost) */
/* ACK load a direction may gain or lose before its data flows are refilled, of its capacity */
#define ACK_SLACK 1e-3
/* A message's ACK load, at most this much of its data rate (the reader
 * admits ACKs of at most a tenth of mtu: only messages of one small packet
 * reach it) */
#define ACK_W_MAX 0.1
/* The ACK weight of a message's last window whose ACKs wait as a burst's
 * (last_window): no load in the fluid (a rate's worth of it is below
 * 1e-290 bit/s), but not 0, which would make finish take the whole
 * message's ACKs for a burst's; slow_start_done takes that window's. */
#define ACK_W_HELD DBL_MIN

/* A link direction: what every start and end reads and writes, in one
 * cache line (a ring of 4,096 workers has 16,384 of them) ... */
typedef struct {
  _Alignas(64) double capacity; /* bit/s */
  double data_rate;             /* bit/s of its data flows now */
  double ack_load;              /* bit/s of ACKs now */
  double ack_seen;              /* the ACK load its data flows were last filled with */
  double bits_off;              /* bits carried up to now: (data_rate + ack_load) x now - bits_off (dir_bits) */
  double ack_coming;            /* during a refill: the ACK load its round's flows alone will add (gather); else 0 */
  union {                       /* live flows whose data cross it (USES): */
    uint32_t in[2];             /* up to two, in the line itself (most directions) */
    uint32_t *out;              /* more: an array of cap_uses */
  } uses;
  uint32_t n_uses, cap_uses;    /* cap_uses 0: in */
} Dir;
_Static_assert(sizeof(Dir) == 64, "a direction in one cache line");
#define USES(d) ((d)->cap_uses ? (d)->uses.out : (d)->uses.in)

/* ... and what only a refill of a shared component or the sampling needs. */
typedef struct {
  uint32_t mark;      /* the refill pass that last visited it */
  uint32_t followed;  /* the refill pass that gathered its flows that bind there */
  uint32_t part;      /* ... that left some of its flows out, below them (it bounds the others: fill) */
  uint32_t every;     /* ... that gathers every flow on it (a forced direction) */
  uint32_t at;        /* during a refill: 1 + its place in the heap, 0 when out of it, FILLED once filled */
  double left, wsum;  /* during a refill: capacity not yet taken, number of unfrozen flows */
  double sample_bits; /* `bits` at the start of the sampling interval */
} DirFill;

/* A link direction's queue, as bursts take turns in it (take_turn): when
 * the bursts put into it so far have left at its line rate, and the ACKs
 * put in after them (burst_acks). */
typedef struct {
  CsTime at, acks;
  /* on a star, the ACK packets made for the bursts delivered so far
   * (acks_turn): put into this direction, a host's to its switch; and
   * coming back to this direction's host on its other (held_bits) */
  double acks_out, acks_back;
} Turns;

/* A machine's NIC's bursts whose packets may still be coming in from its
 * GPUs (nic_interleave): their flows, and when each one's last packet has
 * come in. */
typedef struct {
  uint32_t flow, msg, packets;
  CsTime in, last_in;     /* its first packet began to come in, its last had */
  CsTime p_in, last_out;  /* a full packet's time coming in, its last's going out */
} NicBurst;
#define NIC_GROUP 8
typedef struct {
  uint32_t n;
  NicBurst b[NIC_GROUP];
} NicGroup;

/* A link direction's trains (train_hop): when each passes, in order, of
 * those not yet gone (the ones sent before, whose first packets come in
 * later, hold the times they took). */
#define PASS_MAX 64
/* ... and the ACKs of the bursts whose way back crosses it (acks_pass):
 * from when each burst's first ACK comes in to when its last does, and
 * their time on the line in all */
#define ACKS_MAX 8
typedef struct {
  CsTime s, e, all;
  uint32_t msg;
} AckStretch;
typedef struct {
  uint32_t n, cap, n_acks;
  CsTime *s, *e; /* cap of each, grown up to PASS_MAX as trains come (passes_room) */
  AckStretch acks[ACKS_MAX];
} Passes;

/* A train whose burst has left its first link at this instant, its tail
 * before its hops, when its first packet comes in to its second hop
 * (trains_now) */
typedef struct {
  uint32_t flow, k, packets; /* k: its hop to pass next (train_hop) */
  CsTime tail, in;           /* its tail, its waits added; when it comes in to hop k (before: left hop k - 1) */
  CsTime gaps;               /* the time between its packets that ACKs took at the hops before (train_hop) */
  double wire, first;        /* its bytes, and its first packet's */
  const struct Route *route; /* its full route */
} TrainNow;

/* trains_now's heap: when train i (of FlowNet.trains_now) comes in to its next hop */
typedef struct {
  CsTime in;
  uint32_t i;
} TrainNext;

/* What a message of one size needs on a route (shape_of). */
typedef struct {
  uint64_t payload; /* 0: none yet */
  double ack_w, remaining, cap;
  double ack_fluid; /* ack_w before a burst's were held (train_send) */
  CsTime tail;
  uint64_t wire_bytes;
  uint32_t packets;
  /* a burst, which goes into its host's queue whole, behind the bursts
   * before it (fifo_turn): its wire bytes' time at its queues' line
   * rates, its host's and a GPU's machine's NIC; 0: none (q_time[0]: not a burst) */
  CsTime q_time[2];
  bool chunky;        /* past the window its connection starts with, within the host queue's limit: chunk_send */
  bool ss_ask;        /* its connection's window is asked (slow_start): Route.ss, ECMP, or past init_cwnd */
} Shape;

/* A route, held by the table and shared by the messages between the same
 * two hosts (shortest routing), or drawn for each message (ECMP) and
 * background source, and kept while its flows hold it (FlowNet.kept). */
typedef struct Route {
  uint32_t n_fwd, n_rev;
  double ack_ps;    /* an ACK's time on the first link back, in picoseconds (burst_acks) */
  double rtt0;      /* latencies both ways, without serialization */
  double keep;      /* the chance a packet crosses the forward route (loss) */
  double rtt;       /* a packet out and its ACK back, alone (shape_of) */
  double out;       /* ... the packet's way out alone, when its ACK is made (shape_of; on_first_ack) */
  double pt;        /* a full packet's time at the route's slowest rate or at its window's cap (shape_of) */
  Shape shape;      /* of the last size sent on it */
  uint32_t refs;    /* kept routes: the flows on it, and a host whose last_route it is */
  uint32_t key;     /* kept routes: a hash of its directions */
  bool ss;          /* slow start can cost its messages a round trip (slow_start; set by shape_of) */
  bool nic;         /* from a GPU: its machine's NIC (dirs[1]) is a queue of its own (fifo_turn; set by route_measure) */
  struct Route *train, *full; /* a burst's flow on it: its first direction alone (train_of); a train route's own */
  uint32_t dirs[];  /* forward, then reverse (ACKs): in the same block */
} Route;

/* The direction whose queue is route r's host queue: its first, or from a GPU its machine's NIC's. */
static inline uint32_t hq_of(const Route *r) { return r->dirs[r->nic ? 1 : 0]; }

typedef struct {
  Route *route;     /* the table's, or a kept one it holds (own_route) */
  double ack_w;     /* ACK bits per data bit, on the reverse route */
  double remaining; /* bits still to leave the first link */
  double rate, cap; /* bit/s */
  CsTime updated;   /* when `remaining` was brought up to date */
  CsTime end_at;    /* when the last bit leaves at the present rate */
  CsTime tail;      /* from the fluid end to delivery */
  CsDeliverFn fn;
  void *ctx;
  uint32_t msg;     /* its message, or NONE (background) */
  uint32_t next_free;
  uint32_t mark;
  uint32_t slot;    /* during a refill: its place in the component */
  uint32_t end_ver; /* its entries in the fluid ends: the one of this version is in force */
  bool live, frozen, dirty;
  bool own_route;
  bool waiting;     /* its burst waits for its turn in its host's queue (fifo_turn; on_turn) */
  bool chunked;     /* the rest of its message, past its connection's window, is still to go into the queue (chunk_send) */
  bool ss_q;        /* its round trips wait behind other flows' standing queues: FlowNet.ss_q[its index] (standing_q) */
  uint8_t big;      /* 0, or how it holds its connection (SsConn.busy): past its host queue's limit, its window
                     * counted, it may keep a queue standing (FlowNet.n_big), BIG_SENDING until its last bit has
                     * left, then BIG_SENT; CHUNK_HOLD or BIG_HOLD (FlowNet.n_hold) */
  float ss_w;       /* its connection's window when it began, in packets (slow_start); 0: not asked, < 0: counted
                     * only (minus that window: -1 for a message chunk_send counts) */
} Flow;

/* A direction in the refill's heap: the level at which it fills. */
typedef struct {
  double level;
  uint32_t dir;
} Fill;

/* A flow with a cap of its own in the refill's heap of caps. */
typedef struct {
  double cap;
  uint32_t flow;
} Capped;

/* A flow in the heap of fluid ends: by end, then by message (flows that
 * end at one instant leave in the order their messages were sent, so
 * that what their deliveries send next is numbered the same way
 * whatever the heap's shape). */
typedef struct {
  CsTime at;
  uint32_t msg; /* NONE: background, which never ends */
  uint32_t flow;
  uint32_t ver; /* its flow's end_ver when it was set */
} EndAt;

/* A sprayed message (ecmp-packet): its flows still to be delivered, and
 * what its delivery calls. */
typedef struct {
  CsDeliverFn fn;
  void *ctx;
  uint32_t left;
  uint32_t next_free;
  bool failed;
} Spray;

/* A flow waiting for its delivery, its last bit gone (one engine event
 * for the next of them, not one each). */
typedef struct {
  CsTime at;
  uint64_t seq;
  uint32_t flow;
} Delivery;

/* A persistent TCP connection's window, as far as slow start needs it
 * (slow_start). */
typedef struct {
  double cwnd;      /* packets */
  CsTime last_send; /* when the last bit of its latest message left (a fluid end); -1 before its first */
  uint32_t active;  /* its messages in flight */
  uint32_t busy;    /* its messages still going into its host's queue (Flow.big): the next ones wait */
  CsTime free_at;   /* ... and until then, the last bit of the last of them gone (big_sent) */
  CsTime dlv_at;    /* when the last of those past the host queue's limit is delivered, on dlv_route (late_end) */
  const struct Route *dlv_route;
  uint32_t head, tail; /* those that wait, oldest first (FlowNet.later), or NONE */
} SsConn;

enum { HQ_BIG = 1, HQ_BLOCKS = 2 }; /* FlowNet.hq_dir's bits */
enum { BIG_SENDING = 1, BIG_SENT = 2,
       CHUNK_HOLD = 3, /* (Flow.big) a message past init_cwnd within the host queue's limit, its later windows
                        * not in its host's queue yet: its connection's next messages wait (chunk_send) */
       BIG_HOLD = 4 }; /* a message past that limit whose window is not counted (roce, fixed, a lossy route), until
                        * its fluid end: they wait too (send_now) */

/* A message that waits for its connection's message before it to have
 * left its host (conn_waits): what flow_send had of it. */
typedef struct {
  Route *route;
  uint64_t payload;
  CsDeliverFn fn;
  void *ctx;
  uint32_t m, src, dst;
  uint32_t next; /* the next waiting on its connection, or the pool's next free */
} Later;

/* A message past its connection's window (chunk_send): the windows of it
 * in its host's queue that its flow has not begun, with their turns, and
 * what is not in the queue yet. */
#define CHUNK_MAX 8
typedef struct {
  double rest;          /* bits not in the queue yet */
  double next;          /* packets its next window lets in */
  CsTime at[CHUNK_MAX]; /* the windows in the queue not begun, in order: their turns */
  double bits[CHUNK_MAX];
  uint32_t n;
  double acks;          /* the ACKs of its last window, which wait as a burst's do (last_window; not whole: what the fluid has not carried) */
  bool paused;          /* its flow has sent what was in the queue: it waits for the next window (on_rest) */
} Chunk;

/* A flow alone on its directions, and its rate (fill_alone). */
typedef struct {
  double rate;
  uint32_t flow;
  bool counted; /* its ACK load's change was counted among those coming (acks_coming) */
} Alone;

typedef struct {
  CsEngine *engine;
  const CsTime *clock; /* the engine's current time */
  const CsNetConfig *cfg;
  const CsTopology *t;
  const CsRoutes *r;
  bool ecmp;
  uint32_t spray; /* flows per message: CS_ECMP_PACKET_PATHS with ecmp-packet, else 1 */
  Spray *sprays;  /* the sprayed messages not yet delivered (a pool) */
  uint32_t n_sprays, cap_sprays, free_spray;
  uint64_t mss, header, ack, mtu;
  double ack_bits; /* 8 x ack */
  Dir *dirs;      /* per link direction, 64-byte aligned */
  DirFill *fills; /* per link direction */
  Flow *flows; /* slots, reused once a flow is delivered */
  uint32_t n_flows, cap_flows, free_flow;
  CsStatsRing stats; /* per message */
  uint32_t active, failed;
  /* the flows past their fluid phase, by delivery: those that came in
   * order (a route's tail is the same for every message of one size, so
   * most do) in a ring, the others in a min-heap */
  CS_RING(Delivery) dlv_run;
  Delivery *dlv;
  uint32_t n_dlv, cap_dlv;
  uint64_t dlv_seq, dlv_gen;
  CsTime dlv_at;                    /* of the delivery event in force */
  bool dlv_sched;                   /* an engine event stands for it (else flush_plans will see to it) */
  uint64_t dlv_stamp;               /* plan_stamp when it was planned */
  /* the ends of the flows in their fluid phase: an entry per end set
   * (new_rate), in order on a ring when it comes after the ring's last
   * (a message's end is mostly the latest yet), else in a min-heap; an
   * entry whose flow has ended or moved its end since is skipped */
  CS_RING(EndAt) ends_run;
  EndAt *ends;
  uint32_t n_ends, cap_ends;
  const EndAt *ends_front; /* ends_first's answer, while ends_known (no entry set or dropped since) */
  bool ends_known;
  uint32_t *bg_flow;                /* per background source: its flow */
  GHashTable *routes;               /* (src << 32 | dst) -> Route (shortest routing) */
  GHashTable *kept;                 /* the drawn routes (ECMP, background), by their directions */
  uint32_t kept_idle;               /* kept routes no flow holds */
  Route *probe;                     /* a route being drawn, looked up in `kept` */
  uint32_t *last_dst;               /* per host: the destination of its last route looked up */
  Route **last_route;
  uint32_t *dirty, n_dirty, cap_dirty;
  uint32_t *round, cap_round;              /* the dirty flows of the refill under way */
  uint32_t *stack, cap_stack;
  uint32_t *comp, n_comp, cap_comp;        /* flows of the component being refilled */
  double *comp_rates;                      /* their new rates */
  uint32_t cap_rates;
  uint32_t *comp_dirs, n_cdirs, cap_cdirs; /* its directions */
  Alone *alone;                            /* the dirty flows alone on their directions */
  uint32_t n_alone, cap_alone;
  uint32_t pass;
  Fill *heap;
  uint32_t n_heap, cap_heap;
  Capped *capped; /* the component's flows with a cap of their own, unfrozen or not: a heap by cap */
  uint32_t n_capped, cap_capped;
  bool refill_pending;   /* dirty flows wait for a refill at this instant */
  bool refill_queued;    /* an engine event for it is pending */
  uint32_t in_handler;   /* in one of the fabric's own events: its refill waits for the event's end */
  uint32_t rounds; /* refills at this instant */
  uint64_t n_fills, n_fill_flows; /* fills of a shared component (fill, past its shortcut for one flow alone), their flows */
  uint32_t *forced, n_forced, cap_forced; /* directions whose every flow a round takes (fill's bound_dir) */
  uint32_t bound_dir; /* fill's false: the direction that bound a flow left out */
  uint32_t state_calls; /* flow_state's since it last read the flows */
  uint32_t ack_depth; /* direct updates of flows alone, one within another (ack_changed) */
  bool filling;       /* fill() gives the gathered flows their rates: those yet to get one wait */
  bool acks_kept;     /* a flow alone whose ACK load's change was counted kept its rate (acks_not_coming) */
  bool acks_counted;  /* a flow alone of the round counted its ACK load's change (acks_coming) */
  CsTime rounds_at;
  uint64_t next_gen; /* the completion event in force */
  CsTime next_at;
  bool next_sched;     /* an engine event stands for it (else flush_plans will see to it) */
  uint64_t next_stamp; /* plan_stamp when it was planned */
  bool next_placed;    /* it holds a place in the engine's order (flush_plans) */
  uint64_t plan_stamp; /* plans made so far: which of two came first */
  CsIdleFn idle;
  void *idle_ctx;
  uint32_t *ports;
  bool bg_running;
  /* slow start (slow_start): reno, cubic, dctcp and bbr from init_cwnd */
  bool ss;                    /* modelled */
  bool ss_any;                /* slow_start has run: flows may hold a window (Flow.ss_w) */
  bool late;                  /* complete_now asks a flow more at its fluid end: ss_any, or trains */
  bool ss_fresh;              /* per-message connections: every message from init_cwnd */
  bool ss_restart;            /* idle_restart, for the protocols the packet transport restarts */
  bool ss_ecmp;               /* ss with ECMP and persistent connections: every message's connection counts */
  struct SsQ { double q, full; } *ss_q; /* per flow with Flow.ss_q: what the standing queues on its way hold when it
                                         * begins, and hold full, as seconds of their lines (ss_wait) */
  uint32_t cap_ss_q;
  struct SsPend { uint32_t flow, msg; } *ss_pend; /* flows whose standing queues are read a picosecond after they began */
  uint32_t n_big;             /* live flows with Flow.big: while none, no message looks for standing queues */
  uint32_t n_hold;            /* live flows holding their connections at CHUNK_HOLD or BIG_HOLD */
  GHashTable *floors;         /* message + 1 -> its delivery's floor (a CsTime): behind its connection's last (on_conn_free) */
  uint8_t *hq_dir;            /* per direction: HQ_BIG once a Flow.big has had its host queue there (standing_q),
                               * HQ_BLOCKS while it waits in `blocks` */
  bool blocks;                /* big flows take their host's queue in blocks (transport.host_queue): blocks_end */
  uint32_t *blocks_dirs, n_blocks, cap_blocks; /* host queues whose big flows' ends are to be set again (blocks_end) */
  uint32_t n_ghosts;          /* live flows of no message (GHOST): the network is not idle before they end */
  uint64_t ends_put, ends_compacted; /* entries put on the ends' ring or heap, and the compactions (flow_state) */
  uint32_t kept_thin;         /* drops of the idle routes that took less than half the table (flow_state) */
  uint32_t ghost_ver;         /* above every end_ver a ghost let go of has had: the next ghost's first (blocks_ghost) */
  struct BlockEnd { CsTime raw; uint32_t msg, flow; } *bends; /* blocks_end's flows of one host queue */
  uint32_t cap_bends;
  Later *later;               /* messages waiting on their connections (conn_waits), a pool */
  uint32_t n_later, cap_later, free_later;
  uint32_t n_ss_pend, cap_ss_pend;
  double ss_init, ss_window;  /* packets */
  CsTime ss_min_rto;          /* transport.min_rto: a window restarts after a round trip and this idle */
  SsConn *conns;
  uint32_t n_conns, cap_conns;
  GHashTable *conn_ids;       /* (src << 32 | dst) -> index + 1 into conns */
  uint32_t *conn_dst, *conn_at; /* per host: its last connection looked up */
  /* a host's queue in turn (fifo_turn): a message that its transport puts
   * whole into its host's queue waits there for those put in before it */
  bool fifo;                  /* modelled (not with ecmp-packet's sprays) */
  bool trains;                /* bursts pass hops past their first as trains (train_hop): not on a star, nor GPUs */
  Passes *passes;             /* trains: per link direction, the trains through it not yet gone (train_hop) */
  CsTime pass_gone;           /* trains that have left a direction by then can hold up no train to come */
  CsTime pass_back;           /* the longest a burst has taken on its first link (train_ends) */
  TrainNow *trains_now;       /* the trains whose bursts have left their first links now (trains_now) */
  uint32_t n_now, cap_now;
  TrainNext *next_hops;       /* trains_now: a heap */
  uint32_t n_next, cap_next;
  bool chunking;              /* a message past the window goes in window by window (chunk_send): reno, cubic, dctcp */
  Chunk *chunks;              /* per flow slot, for the flows chunked */
  uint32_t cap_chunks;
  bool gpus;                  /* topology.gpus_per_host > 1: a route that leaves its machine queues at its NIC too */
  bool acks_wait;             /* a burst's ACKs wait behind the receiver's own (one switch: burst_acks) */
  bool ended;                 /* the run is over (flow_run_ends): links.csv's last row takes what is left */
  double burst_pkts;          /* the most packets a message may have to go in whole: the window it starts with */
  Turns *turns;               /* per link direction: its queue's line-rate clocks (one line for both) */
  NicGroup *nic_groups;       /* per machine's NIC direction (topology.gpus_per_host) */
  CsTime nic_in;              /* take_turn's last GPU burst: when its packets began to come in to the NIC */
} FlowNet;

/* max(x, 0) and min(a, b) inline (libm's fmax and fmin are calls); a NaN gives 0 and a.
 * pos is x86-64's maxsd: x > 0 ? x : 0 to the bit (the
 * second operand when neither is greater, -0 and NaN included), without
 * the compare and branch GCC makes of the expression (a dozen per
 * message at flow fidelity). */
#if defined(__x86_64__) && defined(__GNUC__)
static inline double pos(double x) {
  __asm__("maxsd %1, %0" : "+x"(x) : "x"(0.0)); /* (the intrinsics cleared the upper half first) */
  return x;
}
#else
static inline double pos(double x) { return x > 0 ? x : 0; }
#endif
static inline double min2(double a, double b) { return b < a ? b : a; }

/* ceil(x) for x >= 0 (or +inf), as libm's, by truncation: x below 2^63
 * converts exactly to an integer that is x or x's floor, and one more is
 * exact below 2^53, past which every double is an integer.  (GCC expands
 * ceil() without SSE4.1 into a longer sequence; a flow's end is set about
 * twice per message.) */
static inline double ceil_pos(double x) {
  if (!(x < 9.2e18)) return x;
  double t = (double)(int64_t)x;
  return t < x ? t + 1 : t;
}

/* ---- bits carried ---- */

/* A direction's bits carried since the start: its load now times the time
 * now, less what each change of its load would have carried before it
 * (a change of x at time t adds x t to bits_off).  A rate change then
 * costs a multiply-add per direction, not a settlement of what was
 * carried since the last one. */
static inline double dir_bits(const Dir *d, CsTime now) {
  return (d->data_rate + d->ack_load) * ((double)now * 1e-12) - d->bits_off;
}

static void settle_flow(FlowNet *n, Flow *f) {
  CsTime now = *n->clock;
  if (f->live && now > f->updated) {
    f->remaining -= f->rate * (double)(now - f->updated) * 1e-12;
    if (f->remaining < 0) f->remaining = 0;
  }
  f->updated = now;
}

/* ---- routes ---- */

/* A link's mean loss per packet, whatever its model. */
static double mean_loss(const CsLossSpec *l) {
  switch (l->model) {
  case CS_LOSS_BERNOULLI: return l->rate;
  case CS_LOSS_GILBERT: {
    double bad = l->p + l->r > 0 ? l->p / (l->p + l->r) : 0;
    return bad * l->loss_bad + (1 - bad) * l->loss_good;
  }
  default: return 0;
  }
}

static uint32_t path_dirs(FlowNet *n, uint32_t a, uint32_t b, uint64_t hash, bool *drawn) {
  int h = cs_routes_path_drawn(n->r, n->t->hosts[a], b, hash, n->ports, (int)n->t->n_nodes, drawn);
  g_assert(h > 0);
  for (int i = 0; i < h; i++) n->ports[i] = 2 * n->t->ports[n->ports[i]].link + n->t->ports[n->ports[i]].dir;
  return (uint32_t)h;
}

/* A route's loss and empty round trip, from its directions. */
/* Route r leaves from a GPU (a worker of a machine of several), whose
 * machine's NIC is the next link. */
static bool gpu_route(const FlowNet *n, const Route *r) {
  const CsLink *l = &n->t->links[r->dirs[0] / 2];
  int32_t host = n->t->nodes[r->dirs[0] % 2 ? l->b : l->a].host;
  return host >= 0 && (uint32_t)host < n->t->n_workers;
}

static void route_measure(FlowNet *n, Route *r) {
  double keep = 1, rtt0 = 0;
  for (uint32_t k = 0; k < r->n_fwd + r->n_rev; k++) {
    const CsLinkSpec *l = &n->t->links[r->dirs[k] / 2].spec;
    rtt0 += (double)l->latency * 1e-12;
    if (k >= r->n_fwd) continue;
    keep *= 1 - mean_loss(&l->loss);
  }
  r->rtt0 = rtt0;
  r->keep = keep;
  r->ack_ps = r->n_rev ? 8e12 * (double)n->ack / (double)n->t->links[r->dirs[r->n_fwd] / 2].spec.bandwidth : 0;
  r->nic = n->gpus && r->n_fwd > 2 && gpu_route(n, r);
}

/* n->probe: the directions from host a to host b that `hash` draws, then
 * (with `acks`) back; *drawn (when not NULL) says whether another hash
 * could have drawn others. */
static Route *probe_walk(FlowNet *n, uint32_t a, uint32_t b, uint64_t hash, bool acks, bool *drawn) {
  Route *p = n->probe;
  bool fwd_drawn, rev_drawn = false;
  p->n_fwd = path_dirs(n, a, b, hash, &fwd_drawn);
  memcpy(p->dirs, n->ports, sizeof(uint32_t) * p->n_fwd);
  p->n_rev = acks ? path_dirs(n, b, a, hash, &rev_drawn) : 0;
  memcpy(p->dirs + p->n_fwd, n->ports, sizeof(uint32_t) * p->n_rev);
  if (drawn) *drawn = fwd_drawn || rev_drawn;
  return p;
}

/* A route of its own, the probe's directions copied, measured. */
static Route *route_copy(FlowNet *n, const Route *p) {
  size_t bytes = sizeof(Route) + sizeof(uint32_t) * (p->n_fwd + p->n_rev);
  Route *r = g_malloc0(bytes);
  r->n_fwd = p->n_fwd, r->n_rev = p->n_rev;
  memcpy(r->dirs, p->dirs, bytes - sizeof(Route));
  route_measure(n, r);
  return r;
}

static Route *route_new(FlowNet *n, uint32_t a, uint32_t b) { return route_copy(n, probe_walk(n, a, b, 0, true, NULL)); }

/* Drawn routes.  ECMP draws each message's path, but a collective sends
 * between the same hosts again and again over few of them (hosts on one
 * fat-tree switch have one, hosts in one pod k/2 each way): a route is
 * kept, with its shape, while flows hold it and after, until more than
 * KEPT_IDLE routes (about 1.3 MB), and more than flows hold, wait idle;
 * then the idle ones are dropped, so memory follows the flows in flight.
 * The same directions give the same route.  (A limit of 4 routes per host made a ring on a
 * k = 8 fat-tree draw its routes between edge switches again and again:
 * 6 % more instructions.) */
#define KEPT_IDLE 8192

static guint route_hash(gconstpointer p) { return ((const Route *)p)->key; }

static gboolean route_equal(gconstpointer a, gconstpointer b) {
  const Route *x = a, *y = b;
  return x->n_fwd == y->n_fwd && x->n_rev == y->n_rev &&
         memcmp(x->dirs, y->dirs, sizeof(uint32_t) * (x->n_fwd + x->n_rev)) == 0;
}

static gboolean route_idle(gpointer key, gpointer value, gpointer data) {
  (void)value, (void)data;
  return ((const Route *)key)->refs == 0;
}

/* The route from host a to host b that `hash` draws (with its reverse
 * route for the ACKs when `acks`), held once more; *drawn (when not NULL)
 * says whether another hash could have drawn another. */
static Route *route_draw(FlowNet *n, uint32_t a, uint32_t b, uint64_t hash, bool acks, bool *drawn) {
  Route *p = probe_walk(n, a, b, hash, acks, drawn);
  uint64_t k = 0x9e3779b97f4a7c15ULL * (p->n_fwd + 1) + p->n_rev;
  for (uint32_t i = 0; i < p->n_fwd + p->n_rev; i++) k = (k ^ p->dirs[i]) * 0x100000001b3ULL;
  p->key = (uint32_t)(k ^ (k >> 32));
  Route *r = g_hash_table_lookup(n->kept, p);
  if (r) {
    if (r->refs++ == 0) n->kept_idle--;
    return r;
  }
  r = route_copy(n, p);
  r->key = p->key;
  r->refs = 1;
  g_hash_table_add(n->kept, r);
  return r;
}

/* A flow lets go of its drawn route. */
static void route_drop(FlowNet *n, Route *r) {
  if (r->full) r = r->full; /* (a burst's train route: its own's hold) */
  g_assert(r->refs > 0);
  if (--r->refs > 0) return;
  /* (once they outnumber the held ones too: each pass over the table
   * drops at least half of it, not KEPT_IDLE of the P x S routes of a ps
   * with many servers) */
  uint32_t idle = ++n->kept_idle, held = g_hash_table_size(n->kept) - idle;
  if (idle > MAX(KEPT_IDLE, held)) {
    n->kept_thin += 2 * g_hash_table_foreach_remove(n->kept, route_idle, NULL) <= idle + held;
    n->kept_idle = 0;
  }
}

/* Message m's route from host a to host b: with ECMP drawn and held once
 * more (FlowNet.kept), else the table's. */
static Route *route_of(FlowNet *n, uint32_t a, uint32_t b, uint32_t m) {
  /* a host sends to few others in turn (a collective's neighbours): its
   * last route first (with ECMP, when no other could have been drawn) */
  if (n->last_dst[a] == b) {
    if (n->ecmp) n->last_route[a]->refs++;
    return n->last_route[a];
  }
  if (n->ecmp) { /* the packet network's draw */
    bool drawn;
    Route *r = route_draw(n, a, b, cs_rng_stream_id("flow", n->cfg->seed, m), true, &drawn);
    if (!drawn) { /* the only route: a's last, held by last_route too */
      if (n->last_route[a]) route_drop(n, n->last_route[a]);
      r->refs++;
      n->last_dst[a] = b;
      n->last_route[a] = r;
    }
    return r;
  }
  guint64 key = ((guint64)a << 32) | b;
  Route *r = g_hash_table_lookup(n->routes, &key);
  if (!r) {
    r = route_new(n, a, b);
    g_hash_table_insert(n->routes, g_memdup2(&key, sizeof key), r);
  }
  n->last_dst[a] = b;
  n->last_route[a] = r; /* the table holds it */
  return r;
}

static void route_free(gpointer p) {
  Route *r = p;
  g_free(r->train);
  g_free(r);
}

/* ---- the fluid ends: a ring in order, and a heap ---- */

/* An entry holds its flow's end, so that sifting reads the heap alone. */
static inline bool ends_before(const EndAt *a, const EndAt *b) { return cs_time_key_less(a->at, a->msg, b->at, b->msg); }

/* Its flow is live, the same message, and this is the end it set last
 * (a flow whose end moves back to an earlier value has one entry in
 * force, not two: compaction can always drop all but one per flow). */
static inline bool end_valid(const FlowNet *n, const EndAt *e) {
  const Flow *f = &n->flows[e->flow];
  return f->live && f->msg == e->msg && f->end_ver == e->ver;
}

/* The entries of ended flows and moved ends, once they outnumber the
 * messages in flight: dropped (the ring keeps its order, the heap is
 * rebuilt), so that memory follows the flows in flight however often
 * their rates change. */
static void ends_compact(FlowNet *n) {
  n->ends_known = false;
  n->ends_compacted++;
  uint32_t k = 0;
  for (uint32_t i = 0; i < n->ends_run.len; i++)
    if (end_valid(n, &CS_RING_AT(n->ends_run, i))) CS_RING_AT(n->ends_run, k++) = CS_RING_AT(n->ends_run, i);
  n->ends_run.len = k;
  k = 0;
  for (uint32_t i = 0; i < n->n_ends; i++)
    if (end_valid(n, &n->ends[i])) n->ends[k++] = n->ends[i];
  n->n_ends = 0;
  for (uint32_t i = 0; i < k; i++) {
    EndAt x = n->ends[i]; /* its place may be taken by the sift */
    CS_HEAP_PUSH(n->ends, n->n_ends, n->cap_ends, 64, x, ends_before);
  }
}

/* At most `active` x `spray` + `n_ghosts` entries are in force (one per
 * flow of a message not yet over, and one per ghost): past twice that,
 * the others are dropped.  (Without the ghosts, a ps whose servers' large
 * pulls left thousands of them compacted at every end it placed: 100
 * workers and 100 servers of 10M fp32 on a star spent half their time
 * there.) */
static inline void ends_check(FlowNet *n) {
  n->ends_put++;
  if (G_UNLIKELY(n->ends_run.len + n->n_ends > 2 * ((uint64_t)n->active * n->spray + n->n_ghosts) + 1024))
    ends_compact(n);
}

/* How far from the ring's last an end may go into its place (entries moved). */
#define END_INSERT 32

/* Entry x, which comes before the ring's last: into its place. */
static G_GNUC_NO_INLINE void ends_place(FlowNet *n, EndAt x) {
  uint32_t len = n->ends_run.len;
  /* A little before the ring's last: into its place on the ring.  Flows
   * that start within a few nanoseconds of each other at rates a
   * neighbour's ACKs set apart end out of order by about as much (at
   * 4,096 workers a fifth of the ends went into the heap, where they
   * waited a whole message at depths the cache does not hold).  Further
   * back than END_INSERT entries (the ring is in order, so x comes before
   * every entry from there on): into the heap. */
  if (len > END_INSERT && ends_before(&x, &CS_RING_AT(n->ends_run, len - END_INSERT - 1))) {
    CS_HEAP_PUSH(n->ends, n->n_ends, n->cap_ends, 64, x, ends_before);
    ends_check(n);
    return;
  }
  /* Else its place is at most END_INSERT back: the last entry copied one
   * place on opens a hole at len - 1, which moves back past every later
   * entry (they move on one) to x's place, in one pass over them (an
   * insertion sort's). */
  EndAt last = CS_RING_BACK(n->ends_run);
  CS_RING_PUSH(n->ends_run, 64, last);
  uint32_t i = len - 1; /* the hole; the entries after it come after x */
  while (i > 0 && ends_before(&x, &CS_RING_AT(n->ends_run, i - 1))) {
    CS_RING_AT(n->ends_run, i) = CS_RING_AT(n->ends_run, i - 1);
    i--;
  }
  CS_RING_AT(n->ends_run, i) = x;
  ends_check(n);
}

/* Flow f's (slot fi) end is now its end_at (CS_TIME_MAX: none); the
 * entries it set before are not in force.  An end after the ring's last
 * (most: a message's end is mostly the latest yet) goes on the ring
 * inline, without the frame ends_place needs. */
static inline __attribute__((always_inline)) void ends_set(FlowNet *n, Flow *f, uint32_t fi) {
  n->ends_known = false;
  f->end_ver++; /* the entries it set before are no longer in force */
  if (f->end_at == CS_TIME_MAX) return;
  EndAt x = {f->end_at, f->msg, fi, f->end_ver};
  if (n->ends_run.len == 0 || !ends_before(&x, &CS_RING_BACK(n->ends_run))) {
    CS_RING_PUSH(n->ends_run, 64, x);
    ends_check(n);
    return;
  }
  ends_place(n, x);
}

/* The next entry is the ring's front (else the heap's top; one at least). */
static inline bool ends_next_on_run(const FlowNet *n) {
  return n->ends_run.len && (n->n_ends == 0 || ends_before(&CS_RING_FRONT(n->ends_run), &n->ends[0]));
}

/* Drop the next entry (there is one). */
static void ends_pop(FlowNet *n) {
  n->ends_known = false;
  if (ends_next_on_run(n)) {
    CS_RING_POP(n->ends_run);
  } else {
    EndAt top;
    CS_HEAP_POP(n->ends, n->n_ends, top, ends_before);
    (void)top;
  }
}

/* ends_first when the next entry is not in force (or there is none):
 * such entries dropped. */
static G_GNUC_NO_INLINE const EndAt *ends_first_drop(FlowNet *n) {
  const EndAt *e = NULL;
  while (n->ends_run.len + n->n_ends > 0) {
    e = ends_next_on_run(n) ? &CS_RING_FRONT(n->ends_run) : &n->ends[0];
    if (end_valid(n, e)) break;
    ends_pop(n);
    e = NULL;
  }
  n->ends_front = e;
  n->ends_known = true;
  return e;
}

/* The next fluid end (entries no longer in force dropped), or NULL.  The
 * next entry is mostly in force: that answer needs no frame, the drops
 * are out of line. */
static inline __attribute__((always_inline)) const EndAt *ends_first(FlowNet *n) {
  if (n->ends_known) return n->ends_front; /* an entry is valid until its flow sets another or it is dropped */
  if (n->ends_run.len + n->n_ends > 0) {
    const EndAt *e = ends_next_on_run(n) ? &CS_RING_FRONT(n->ends_run) : &n->ends[0];
    if (end_valid(n, e)) {
      n->ends_front = e;
      n->ends_known = true;
      return e;
    }
  }
  return ends_first_drop(n);
}

/* ---- live flows ---- */

static inline __attribute__((always_inline)) void go_live_as(FlowNet *n, uint32_t fi, uint32_t nf) {
  Flow *f = &n->flows[fi];
  f->live = true;
  const Route *r = f->route;
  for (uint32_t k = 0; k < nf; k++) {
    Dir *d = &n->dirs[r->dirs[k]];
    if (d->n_uses == (d->cap_uses ? d->cap_uses : 2)) { /* full: out of line, or a larger array */
      uint32_t cap = d->cap_uses ? 2 * d->cap_uses : 8, *out = g_new(uint32_t, cap);
      memcpy(out, USES(d), sizeof(uint32_t) * d->n_uses);
      if (d->cap_uses) g_free(d->uses.out);
      d->uses.out = out;
      d->cap_uses = cap;
    }
    USES(d)[d->n_uses++] = fi;
  }
}

/* (a star's two hops with a constant bound: once per message) */
static inline __attribute__((always_inline)) void go_live(FlowNet *n, uint32_t fi) {
  if (n->flows[fi].route->n_fwd == 2) go_live_as(n, fi, 2);
  else go_live_as(n, fi, n->flows[fi].route->n_fwd);
}

static void ack_changed(FlowNet *n, uint32_t di);

/* Direction di's ACK load has moved: past the slack, its data flows hear
 * of it.  A direction without data flows has no one to tell, and its
 * ack_seen is set again when a flow there gets its rate (alone_rate,
 * fill): before then it decides nothing (a flow that goes live is
 * marked). */
static inline void ack_check(FlowNet *n, uint32_t di) {
  const Dir *d = &n->dirs[di];
  if (d->n_uses && fabs(d->ack_load - d->ack_seen) > ACK_SLACK * d->capacity) ack_changed(n, di);
}

/* Flow fi's rate becomes `rate`: its directions' data rates and its ACK
 * load follow (n_fwd and n_rev: the route's, constants where inlined). */
static inline __attribute__((always_inline)) void set_rate_as(FlowNet *n, Flow *f, double rate, uint32_t n_fwd,
                                                              uint32_t n_rev) {
  const Route *r = f->route;
  double old = f->rate;
  /* the loads and the flow's rate agree before what the ACK loads set off,
   * which may come back to this flow (two hosts that send to each other) */
  f->rate = rate;
  double t = (double)*n->clock * 1e-12;
  for (uint32_t k = 0; k < n_fwd; k++) {
    Dir *d = &n->dirs[r->dirs[k]];
    double was = d->data_rate;
    d->data_rate = pos(was + rate - old);
    d->bits_off += (d->data_rate - was) * t;
  }
  /* (a burst's ACKs load no link, burst_acks: its rate moves no ACK load
   * and needs no check, which an unmoved load would not set off) */
  if (f->ack_w == 0) return;
  for (uint32_t k = n_fwd; k < n_fwd + n_rev; k++) {
    Dir *d = &n->dirs[r->dirs[k]];
    double was = d->ack_load;
    d->ack_load = pos(was + (rate - old) * f->ack_w);
    d->bits_off += (d->ack_load - was) * t;
  }
  for (uint32_t k = n_fwd; k < n_fwd + n_rev; k++) ack_check(n, r->dirs[k]);
}

/* (any route out of line) */
static void set_rate_any(FlowNet *n, Flow *f, double rate) { set_rate_as(n, f, rate, f->route->n_fwd, f->route->n_rev); }

/* A host to a host through one switch (a star's every route) unrolled, and
 * inline at both callers: new_rate and leave_live, once each per message. */
static inline __attribute__((always_inline)) void set_rate(FlowNet *n, Flow *f, double rate) {
  const Route *r = f->route;
  if (r->n_fwd == 2 && r->n_rev == 2) set_rate_as(n, f, rate, 2, 2);
  else set_rate_any(n, f, rate);
}

static inline __attribute__((always_inline)) void leave_live(FlowNet *n, uint32_t fi) {
  Flow *f = &n->flows[fi];
  set_rate(n, f, 0);
  f->live = false;
  const Route *r = f->route;
  for (uint32_t k = 0, nf = r->n_fwd; k < nf; k++) {
    Dir *d = &n->dirs[r->dirs[k]];
    if (d->n_uses == 1) { /* its own (most directions) */
      d->n_uses = 0;
      continue;
    }
    uint32_t *uses = USES(d);
    for (uint32_t u = 0; u < d->n_uses; u++)
      if (uses[u] == fi) {
        uses[u] = uses[--d->n_uses];
        break;
      }
  }
}

/* ---- refilling ---- */

static void on_refill(CsEngine *e, void *ctx, uint64_t arg);
static void on_complete(CsEngine *e, void *ctx, uint64_t arg);

static void queue_refill(FlowNet *n) {
  if (n->refill_queued) return;
  n->refill_queued = true;
  cs_engine_schedule_at(n->engine, *n->clock, on_refill, n, 0);
}

/* After the other events of this instant, so that every start and end at
 * it is refilled once: an event, unless one of the fabric's own events is
 * running (refill_after, at its end). */
static void want_refill(FlowNet *n) {
  if (n->refill_pending) return;
  n->refill_pending = true;
  if (!n->in_handler) queue_refill(n);
}

static inline __attribute__((always_inline)) void mark_dirty_as(FlowNet *n, uint32_t fi) {
  Flow *f = &n->flows[fi];
  if (f->dirty) return;
  f->dirty = true;
  CS_GROW(n->dirty, n->n_dirty, n->cap_dirty, 64);
  n->dirty[n->n_dirty++] = fi;
  want_refill(n);
}

/* (inline only where every message calls it: a flow's start) */
static void mark_dirty(FlowNet *n, uint32_t fi) { mark_dirty_as(n, fi); }

static void new_rate(FlowNet *n, Flow *f, double rate);
static inline __attribute__((always_inline)) void new_rate_as(FlowNet *n, Flow *f, double rate);
static void blocks_mark(FlowNet *n, const Route *r);
static void blocks_end(FlowNet *n);

/* A flow alone on every direction it crosses is a component of its own:
 * its max-min share is the least that its directions leave after their
 * ACK loads, or its own cap (what fill() would find, without the heap);
 * -1 when it shares a direction.  Its directions' ACK loads are then
 * those its rate was filled with. */
static inline __attribute__((always_inline)) double alone_rate_as(FlowNet *n, const Flow *f, uint32_t n_fwd) {
  const Route *r = f->route;
  double rate = f->cap > 0 ? f->cap : 0;
  for (uint32_t k = 0; k < n_fwd; k++) {
    Dir *d = &n->dirs[r->dirs[k]];
    if (d->n_uses != 1) return -1;
    rate = min2(rate, pos(d->capacity - d->ack_load));
  }
  for (uint32_t k = 0; k < n_fwd; k++) n->dirs[r->dirs[k]].ack_seen = n->dirs[r->dirs[k]].ack_load;
  return rate;
}

/* (any route out of line; a star's two hops inline at both callers) */
static double alone_rate_any(FlowNet *n, const Flow *f) { return alone_rate_as(n, f, f->route->n_fwd); }

static inline __attribute__((always_inline)) double alone_rate(FlowNet *n, const Flow *f) {
  return f->route->n_fwd == 2 ? alone_rate_as(n, f, 2) : alone_rate_any(n, f);
}

/* A direction's ACK load moved past the slack (ack_check tests it): its
 * data flows are refilled (ACKs of at most a tenth of the data, as the
 * reader requires, make each round's change a tenth of the last; a bound
 * on the rounds of one instant keeps any case from spinning).  A flow
 * alone on its directions (a ring's neighbour, whose ACKs share its first
 * link) takes its new rate at once, within one of the fabric's events
 * (whose end plans the next fluid end), unless the refill under way has
 * yet to give it one: the rate a round of its own would give it, without
 * the round. */
#define ACK_ROUNDS 64
#define ACK_DEPTH 8 /* direct updates nested in one another before they wait for a round */
/* ack_changed's rarer ends, out of line (every call below is its last
 * act), so that its common one, a flow alone whose rate holds, runs
 * without a frame: a new rate at once ... */
static G_GNUC_NO_INLINE void ack_new_rate(FlowNet *n, Flow *f, double rate) {
  n->ack_depth++;
  new_rate(n, f, rate);
  n->ack_depth--;
}

/* ... and a direction's flows marked, when it has more than one. */
static G_GNUC_NO_INLINE void ack_mark_uses(FlowNet *n, const Dir *d) {
  for (uint32_t u = 0; u < d->n_uses; u++) mark_dirty(n, USES(d)[u]);
}

static void ack_changed(FlowNet *n, uint32_t di) {
  Dir *d = &n->dirs[di];
  if (n->rounds >= ACK_ROUNDS) return;
  d->ack_seen = d->ack_load;
  if (d->n_uses != 1) {
    ack_mark_uses(n, d);
    return;
  }
  uint32_t fi = USES(d)[0];
  Flow *f = &n->flows[fi];
  /* marked already, or one whose end is now: its end takes it off its
   * directions at this instant (its bits are all gone: no rate moves it)
   * and marks whoever shares them (at scale, most of them: a ring's
   * neighbours end together) */
  if (f->dirty || f->end_at <= *n->clock) return;
  if (n->in_handler && n->ack_depth < ACK_DEPTH && (!n->filling || f->mark != n->pass)) {
    double rate = alone_rate(n, f);
    if (rate == f->rate) return; /* (most such updates at scale: its other direction holds it) */
    if (rate >= 0) {
      ack_new_rate(n, f, rate);
      return;
    }
  }
  mark_dirty(n, fi);
}

/* A direction full, or within what the ACK loads may have moved since its
 * flows were filled (ACK_SLACK either way): the one place where a flow's
 * rate may be bound to the others'. */
static inline bool dir_tight(const Dir *d) { return d->data_rate + d->ack_load >= d->capacity * (1 - 2 * ACK_SLACK); }

/* The least rate of a flow that binds on direction d: its flows that run
 * fastest there, within the same slack (the others are bound elsewhere). */
static double binding_floor(const FlowNet *n, const Dir *d) {
  double most = 0;
  for (uint32_t u = 0; u < d->n_uses; u++) most = fmax(most, n->flows[USES(d)[u]].rate);
  return most - 2 * ACK_SLACK * d->capacity;
}

/* Direction di joins the component: as a bound on its gathered flows, and
 * with `follow`, its flows that bind there gathered in turn (gather). */
static void visit_dir(FlowNet *n, uint32_t di, uint32_t *top, bool follow) {
  DirFill *d = &n->fills[di];
  if (d->mark != n->pass) {
    d->mark = n->pass;
    CS_GROW(n->comp_dirs, n->n_cdirs, n->cap_cdirs, 64);
    n->comp_dirs[n->n_cdirs++] = di;
  }
  if (!follow || d->followed == n->pass) return;
  d->followed = n->pass;
  CS_GROW(n->stack, *top, n->cap_stack, 64);
  n->stack[(*top)++] = di;
}

static bool acks_coming(FlowNet *n, const Flow *f, double rate);

/* A flow alone takes its rate with the component's flows, after the fill;
 * the change of its ACK load is counted at once (acks_coming). */
static bool fill_alone(FlowNet *n, uint32_t fi) {
  Flow *f = &n->flows[fi];
  double rate = alone_rate(n, f);
  if (rate < 0) return false;
  f->mark = n->pass;
  CS_GROW(n->alone, n->n_alone, n->cap_alone, 64);
  bool counted = n->rounds < ACK_ROUNDS && acks_coming(n, f, rate); /* (ack_changed asks for no more rounds) */
  n->acks_counted |= counted;
  n->alone[n->n_alone++] = (Alone){rate, fi, counted};
  return true;
}

/* The component to refill: the flows that the dirty ones (list) may move,
 * into comp, and the directions they cross, into comp_dirs (a flow alone
 * on its directions is filled at once).  A max-min share moves only
 * through directions that bind (Bertsekas and Gallager, 1992: a flow's
 * rate is set by a full direction where it has the largest share, or by
 * its own cap), so the gathering goes on from a gathered flow only through
 * its full directions (dir_tight), and takes there only the flows that
 * bind there (binding_floor); its other directions, and the flows left
 * out, bound it in the fill with what they take, unchanged.  Should the
 * fill fill one of those below the rate of a flow left out there, that
 * flow was bound by it after all: fill says so, and the round is gathered
 * again with that direction taking every flow on it (`forced`), until none
 * is left out (each time one more: it ends; past FORCED_MAX, every
 * direction and flow is taken, as every round was before).  The directions
 * the dirty flows changed are taken through them: their flows are all
 * dirty (neighbours_dirty, ack_changed), or the new flow's fill meets them
 * as bounds.  What is kept is what the flows left out were given by an
 * earlier fill, within the ACK loads' slack of what a fill of the whole
 * component would give them now. */
#define FORCED_MAX 64
static void gather(FlowNet *n, const uint32_t *list, uint32_t count) {
  bool all = n->n_forced > FORCED_MAX;
  n->pass++;
  n->n_comp = n->n_cdirs = n->n_alone = 0;
  n->acks_counted = false;
  uint32_t top = 0;
  for (uint32_t i = 0; i < n->n_forced; i++) {
    n->fills[n->forced[i]].every = n->pass;
    visit_dir(n, n->forced[i], &top, true);
  }
  for (uint32_t i = 0; i < count; i++) {
    Flow *f = &n->flows[list[i]];
    f->dirty = false;
    /* a flow that ended since it was marked: the flows left on its
     * directions were marked with it (neighbours_dirty, ack_changed) */
    if (!f->route || !f->live) continue;
    if (f->mark != n->pass && fill_alone(n, list[i])) continue;
    if (f->mark == n->pass) continue; /* (gathered already, its directions followed) */
    f->mark = n->pass;
    CS_GROW(n->comp, n->n_comp, n->cap_comp, 64);
    f->slot = n->n_comp;
    n->comp[n->n_comp++] = list[i];
    for (uint32_t k = 0; k < f->route->n_fwd; k++) {
      uint32_t di = f->route->dirs[k];
      visit_dir(n, di, &top, all || dir_tight(&n->dirs[di]));
    }
  }
  while (top > 0) {
    uint32_t di = n->stack[--top];
    Dir *d = &n->dirs[di];
    /* the flows that bind here run fastest on it: the others are bound
     * elsewhere, below (within the slack), and stay out unless the fill
     * fills it below them */
    double floor = all || n->fills[di].every == n->pass ? -INFINITY : binding_floor(n, d);
    for (uint32_t u = 0; u < d->n_uses; u++) {
      uint32_t fi = USES(d)[u];
      Flow *f = &n->flows[fi];
      if (f->mark == n->pass) continue;
      if (f->rate < floor) {
        n->fills[di].part = n->pass;
        continue;
      }
      f->mark = n->pass;
      CS_GROW(n->comp, n->n_comp, n->cap_comp, 64);
      f->slot = n->n_comp;
      n->comp[n->n_comp++] = fi;
      for (uint32_t k = 0; k < f->route->n_fwd; k++) {
        uint32_t dk = f->route->dirs[k];
        visit_dir(n, dk, &top, all || dir_tight(&n->dirs[dk]));
      }
    }
  }
}

/* Whether direction di bounds the fill with flows left out (gather). */
static inline bool dir_bounds(const FlowNet *n, uint32_t di) {
  return n->fills[di].followed != n->pass || n->fills[di].part == n->pass;
}

/* The refill's heap of directions by the level at which they fill, then
 * by number, one entry per direction, moved as its level changes: a
 * freeze raises its directions' levels.  (An entry pushed anew at each
 * freeze left the heap twice the component's flows long, all but one per
 * direction stale: half of a refill's time in a ps of 100 workers and 100
 * servers.) */
static inline bool fill_before(const Fill *a, const Fill *b) {
  return a->level < b->level || (a->level == b->level && a->dir < b->dir);
}

#define FILLED UINT32_MAX /* DirFill.at of a direction the fill has filled */

/* Entry x into place i, its direction told. */
static inline void heap_set(FlowNet *n, uint32_t i, Fill x) {
  n->heap[i] = x;
  n->fills[x.dir].at = i + 1;
}

static void heap_up(FlowNet *n, uint32_t i, Fill x) {
  while (i > 0 && fill_before(&x, &n->heap[(i - 1) / 2])) {
    heap_set(n, i, n->heap[(i - 1) / 2]);
    i = (i - 1) / 2;
  }
  heap_set(n, i, x);
}

static void heap_down(FlowNet *n, uint32_t i, Fill x) {
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= n->n_heap) break;
    if (c + 1 < n->n_heap && fill_before(&n->heap[c + 1], &n->heap[c])) c++;
    if (!fill_before(&n->heap[c], &x)) break;
    heap_set(n, i, n->heap[c]);
    i = c;
  }
  heap_set(n, i, x);
}

/* Entry i out of the heap. */
static void heap_remove(FlowNet *n, uint32_t i) {
  n->fills[n->heap[i].dir].at = 0;
  Fill last = n->heap[--n->n_heap];
  if (i == n->n_heap) return;
  if (i > 0 && fill_before(&last, &n->heap[(i - 1) / 2])) heap_up(n, i, last);
  else heap_down(n, i, last);
}

/* Where direction d fills, now: its entry in the heap moved there (out,
 * once it has no unfrozen flow left). */
static void push_dir(FlowNet *n, uint32_t di) {
  DirFill *d = &n->fills[di];
  if (d->at == FILLED) return;
  if (d->wsum <= 0.5) {
    if (d->at) heap_remove(n, d->at - 1);
    return;
  }
  Fill x = {pos(d->left) / d->wsum, di};
  if (!d->at) {
    CS_GROW(n->heap, n->n_heap, n->cap_heap, 64);
    heap_up(n, n->n_heap++, x);
  } else if (fill_before(&n->heap[d->at - 1], &x)) {
    heap_down(n, d->at - 1, x);
  } else {
    heap_up(n, d->at - 1, x);
  }
}

/* The heap of caps, least first (then by flow: a tie's order moves no
 * rate, each freezes at the same level); made once per fill in linear
 * time, and only the caps the level reaches taken from it (sorting them
 * all was an eighth of a refill's time in a ps of 100 x 100). */
static inline bool cap_before(const Capped *a, const Capped *b) {
  return a->cap < b->cap || (a->cap == b->cap && a->flow < b->flow);
}

static void caps_pop(FlowNet *n) {
  Capped top;
  CS_HEAP_POP(n->capped, n->n_capped, top, cap_before);
  (void)top;
}

/* Flow fi freezes at `level`: its directions lose one unfrozen flow and keep its rate. */
static void freeze(FlowNet *n, uint32_t fi, double level) {
  Flow *f = &n->flows[fi];
  f->frozen = true;
  n->comp_rates[f->slot] = level;
  for (uint32_t k = 0; k < f->route->n_fwd; k++) {
    DirFill *d = &n->fills[f->route->dirs[k]];
    d->wsum -= 1;
    d->left -= level;
    push_dir(n, f->route->dirs[k]);
  }
}

/* What a flow's new rate adds to the ACK loads of its reverse route, summed
 * per direction over the round (n_fwd and n_rev: the route's, constants
 * where inlined).  In the direction's own line, which the round reads
 * and sets anyway (in DirFill, with a mark of the round, it cost a line
 * more per direction, at scale a miss: a sixth of refill_round's at
 * 4,096 workers), and 0 outside a round: acks_came clears it. */
static inline __attribute__((always_inline)) void acks_coming_as(FlowNet *n, const Route *r, double dw, uint32_t n_fwd,
                                                                uint32_t n_rev) {
  for (uint32_t k = n_fwd; k < n_fwd + n_rev; k++) n->dirs[r->dirs[k]].ack_coming += dw;
}

/* Flow f, alone, is to run at `rate`: the change of its ACK load counted
 * among those coming (alone_acks_ahead), as gather finds it (the flows
 * alone in the order they were found, as a pass over them after the
 * fill added them up); false when it changes none. */
static bool acks_coming(FlowNet *n, const Flow *f, double rate) {
  const Route *r = f->route;
  double dw = (rate - f->rate) * f->ack_w;
  if (dw == 0 || r->n_rev == 0) return false;
  if (r->n_fwd == 2 && r->n_rev == 2) acks_coming_as(n, r, dw, 2, 2);
  else acks_coming_as(n, r, dw, r->n_fwd, r->n_rev);
  return true;
}

/* The round's count of flow f's ACK load (counted) is spent: its reverse
 * directions' ack_coming back to 0. */
static inline __attribute__((always_inline)) void acks_came_as(FlowNet *n, const Route *r, uint32_t n_fwd,
                                                              uint32_t n_rev) {
  Dir *dirs = n->dirs;
  for (uint32_t k = n_fwd; k < n_fwd + n_rev; k++) dirs[r->dirs[k]].ack_coming = 0;
}

/* (a star's two hops each way with constant bounds: once per flow of a
 * round that starts many at once) */
static inline void acks_came(FlowNet *n, const Flow *f) {
  const Route *r = f->route;
  if (r->n_fwd == 2 && r->n_rev == 2) acks_came_as(n, r, 2, 2);
  else acks_came_as(n, r, r->n_fwd, r->n_rev);
}

/* The rate of a flow alone with the ACK loads coming, or -1 (its rate and
 * its directions' ack_seen unchanged) unless one of them moves by more
 * than the slack, as ack_changed would see. */
static inline __attribute__((always_inline)) double rate_with_acks_as(FlowNet *n, const Flow *f, uint32_t n_fwd) {
  const Route *r = f->route;
  bool moved = false;
  for (uint32_t k = 0; k < n_fwd; k++) {
    const Dir *d = &n->dirs[r->dirs[k]];
    moved |= fabs(d->ack_coming) > ACK_SLACK * d->capacity;
  }
  if (!moved) return -1;
  double rate = f->cap > 0 ? f->cap : 0;
  for (uint32_t k = 0; k < n_fwd; k++) {
    Dir *d = &n->dirs[r->dirs[k]];
    /* (none coming: the load itself, never below +0) */
    double load = pos(d->ack_load + d->ack_coming);
    rate = min2(rate, pos(d->capacity - load));
    d->ack_seen = load; /* what its ACK load will be once the round's rates are set */
  }
  return rate;
}

/* The round's flows alone on their directions, with the ACK loads they are
 * about to set on one another.  Their rates were taken from the ACK loads
 * before the round; flows that start together load each other's first
 * links with their ACKs (a ring's neighbours), and each of them was then
 * refilled in a second round (at 16,384 workers, a second rate, ACK check
 * and mark per message).  That round's rates are found here instead: the
 * ACK loads coming are taken off each flow's forward directions and its
 * rate found again (one step of the fixpoint, as the second round took;
 * whatever the new rates then move by more than ACK_SLACK is refilled as
 * before, by ack_changed). */
static void alone_acks_ahead(FlowNet *n) {
  if (!n->acks_counted) return; /* (counted by gather: acks_coming) */
  for (uint32_t i = 0; i < n->n_alone; i++) {
    const Flow *f = &n->flows[n->alone[i].flow];
    double rate = f->route->n_fwd == 2 ? rate_with_acks_as(n, f, 2) : rate_with_acks_as(n, f, f->route->n_fwd);
    if (rate >= 0) n->alone[i].rate = rate;
  }
}

/* After the round's rates are set: a flow whose ACK load's change was
 * counted but which kept its rate after all (found again, it came back to
 * the rate it had: new_rate sets nothing) did not set the loads that its
 * neighbours took their rates with.  Its reverse directions are checked
 * as set_rate_as would have (found by review: no run had reached it). */
static void acks_not_coming(FlowNet *n) {
  n->acks_kept = false;
  for (uint32_t i = 0; i < n->n_alone; i++) {
    if (!n->alone[i].counted) continue; /* (fill clears it for the flows whose rate moved) */
    const Route *r = n->flows[n->alone[i].flow].route;
    for (uint32_t k = r->n_fwd; k < r->n_fwd + r->n_rev; k++) ack_check(n, r->dirs[k]);
  }
}

/* Progressive filling of the gathered component, as a sweep of one water
 * level: every unfrozen flow runs at the level; a direction fills when the
 * level reaches (capacity - its ACK load - what its frozen flows take) /
 * (its unfrozen flows); a flow freezes at the level where its first
 * direction fills, or at its own cap.  The directions wait in a heap by
 * the level at which they fill, an entry each, moved as a freeze raises
 * it (push_dir); the capped flows in a heap by cap (those whose cap no
 * link of theirs could reach left out): each freeze touches only its
 * flow's directions, so a component of F flows of D directions costs
 * O(F log D), and its caps O(F) and a log F for each one reached.
 * A direction with flows left out (gather) keeps what they take; should it
 * fill below one of their rates, false, with no rate set and that
 * direction in bound_dir: it is to take every flow on it. */
static bool fill(FlowNet *n) {
  if (n->n_alone == 1 && n->alone[0].counted) { /* alone with none: no ACK loads ahead (alone_acks_ahead) */
    acks_came(n, &n->flows[n->alone[0].flow]);
    n->alone[0].counted = false;
  }
  if (n->n_cdirs == 0 && n->n_alone == 1) { /* one flow alone: most refills once a ring's steps drift apart */
    n->filling = true;
    new_rate(n, &n->flows[n->alone[0].flow], n->alone[0].rate);
    n->filling = false;
    return true;
  }
  n->n_fills++, n->n_fill_flows += n->n_comp;
  for (uint32_t i = 0; i < n->n_cdirs; i++) {
    Dir *d = &n->dirs[n->comp_dirs[i]];
    DirFill *df = &n->fills[n->comp_dirs[i]];
    df->left = d->capacity - d->ack_load;
    if (dir_bounds(n, n->comp_dirs[i])) { /* what its flows left out take */
      for (uint32_t u = 0; u < d->n_uses; u++)
        if (n->flows[USES(d)[u]].mark != n->pass) df->left -= n->flows[USES(d)[u]].rate;
    } else {
      d->ack_seen = d->ack_load; /* (a bound's stays what its flows left out were filled with: ack_check) */
    }
    df->wsum = 0;
    df->at = 0; /* (out of the heap, whatever a refill before left there) */
  }
  if (n->cap_rates < n->n_comp) {
    n->cap_rates = n->cap_comp;
    n->comp_rates = g_renew(double, n->comp_rates, n->cap_rates);
  }
  uint32_t unfrozen = 0;
  n->n_capped = 0;
  for (uint32_t i = 0; i < n->n_comp; i++) {
    Flow *f = &n->flows[n->comp[i]];
    n->comp_rates[i] = 0;
    f->frozen = f->cap <= 0;
    if (f->frozen) continue;
    unfrozen++;
    /* (a cap above a link of its route never binds: the fill gives a flow
     * no more than any of its directions' capacity; a window's cap is most
     * often far above) */
    double line = INFINITY;
    for (uint32_t k = 0; k < f->route->n_fwd; k++) {
      n->fills[f->route->dirs[k]].wsum += 1;
      line = min2(line, n->dirs[f->route->dirs[k]].capacity);
    }
    if (isfinite(f->cap) && f->cap <= line) {
      CS_GROW(n->capped, n->n_capped, n->cap_capped, 64);
      n->capped[n->n_capped++] = (Capped){f->cap, n->comp[i]};
    }
  }
  for (uint32_t i = n->n_capped / 2; i-- > 0;) CS_HEAP_DOWN(n->capped, n->n_capped, i, n->capped[i], cap_before);
  n->n_heap = 0;
  for (uint32_t i = 0; i < n->n_cdirs; i++) push_dir(n, n->comp_dirs[i]);
  double level = 0;
  while (unfrozen > 0) {
    while (n->n_capped > 0 && n->flows[n->capped[0].flow].frozen) caps_pop(n);
    double at_dir = n->n_heap > 0 ? n->heap[0].level : INFINITY;
    double at_cap = n->n_capped > 0 ? n->capped[0].cap : INFINITY;
    g_assert(isfinite(at_dir) || isfinite(at_cap)); /* every flow crosses a link of finite capacity */
    if (at_cap <= at_dir) { /* a flow reaches its own cap first */
      level = fmax(level, at_cap);
      uint32_t fi = n->capped[0].flow;
      caps_pop(n);
      freeze(n, fi, level);
      unfrozen--;
      continue;
    }
    Fill top = n->heap[0];
    heap_remove(n, 0);
    n->fills[top.dir].at = FILLED; /* (its flows, frozen below, move it no more) */
    level = fmax(level, top.level);
    const Dir *d = &n->dirs[top.dir];
    bool bound = dir_bounds(n, top.dir);
    for (uint32_t u = 0; u < d->n_uses; u++) { /* freeze edits other directions' heap entries, not this list */
      Flow *f = &n->flows[USES(d)[u]];
      if (f->mark != n->pass) {
        /* a flow left out, above the level where this direction fills: it was bound here (gather) */
        if (bound && f->rate > level * (1 + 1e-9)) {
          n->bound_dir = top.dir;
          return false;
        }
        continue;
      }
      if (f->frozen) continue;
      freeze(n, USES(d)[u], level);
      unfrozen--;
    }
  }
  if (n->n_alone > 1) alone_acks_ahead(n);
  /* the new rates, and when each flow's last bit leaves at its rate */
  n->filling = true;
  for (uint32_t i = 0; i < n->n_comp; i++) {
    Flow *f = &n->flows[n->comp[i]];
    new_rate(n, f, n->comp_rates[i]);
    /* (its host queue's ends set again: a flow alone, filled below or at
     * once elsewhere, has none to end beside) */
    if (G_UNLIKELY(f->big == BIG_SENDING)) blocks_mark(n, f->route);
  }
  for (uint32_t i = 0; i < n->n_alone; i++) {
    Alone *a = &n->alone[i];
    Flow *f = &n->flows[a->flow];
    if (a->counted) acks_came(n, f); /* (alone_acks_ahead has read them) */
    if (a->counted && a->rate == f->rate) n->acks_kept = true; /* (acks_not_coming) */
    else a->counted = false;
    new_rate_as(n, f, a->rate);
  }
  n->filling = false;
  if (G_UNLIKELY(n->acks_kept)) acks_not_coming(n);
  if (G_UNLIKELY(n->n_blocks)) blocks_end(n);
  return true;
}

/* When flow f's last bit leaves at its rate, from now (its remaining settled). */
static inline __attribute__((always_inline)) CsTime end_of(const Flow *f, CsTime now) {
  double ps = f->msg == NONE || f->rate <= 0 ? INFINITY : ceil_pos(f->remaining / f->rate * 1e12);
  return ps >= (double)(CS_TIME_MAX - now) ? CS_TIME_MAX : now + (CsTime)ps;
}

/* ---- a host's queue in blocks ---- */

/* Messages past the host queue's limit (Flow.big, BIG_SENDING) that share
 * their host's queue take it in blocks at packet level: a connection puts
 * `transport.host_queue` bytes in and refills when its last packet there
 * starts, behind the others' blocks (the transport's small queues).  Over
 * most of their time that is the even share the fluid gives them; at the
 * end it is not.  Those the fluid ends together end one after another, in
 * the order their blocks take turns (the order their messages were sent),
 * each a last block after the one before: two GPUs' 6.25 MB through their
 * machine's NIC, sent together, ended 86 us apart at packet level, 0 here
 * before; a server's four pulls of 25 MB on a ring, 39-47 us apart.  A
 * last block is part of one, any part: half a block on average.  So a
 * host queue's big flows whose fluid ends fall within that of one another
 * end that far apart, in message order, the last of them at the latest of
 * their fluid ends, while the link is the one that binds them (dir_tight:
 * else no queue stands there).  A host queue's ends are set again when a
 * fill has given its big flows their rates (a big flow alone on its links
 * has none to end beside).
 *
 * A message that ends so before its fluid end is delivered then, and what
 * its flow had left goes on in its place, on its route and at its rate,
 * as a flow of no message (GHOST) until that fluid end (the network is
 * not idle before, so the run does not stop short of it: n_ghosts): each
 * link carries each message's bytes, and no rate moves (the others' ends stand, and no
 * refill is made: k flows ending one by one with a refill each cost k
 * refills of up to k flows, a server's 4,096 pulls of 25 MB on a star 15
 * s where their common end took 0.35 s; moved to the flows left, what an
 * early one had left crossed their links, not its own).
 *
 * What a message delivered early sends next starts apart from the
 * others', and each start is a refill of those it shares a link with: a
 * ps of 4,096 workers, whose pulls then end apart, has its next pushes
 * start apart, 4,096 refills of up to 4,096 flows where one did (6.7 s in
 * all against 0.33 s).  So past BLOCK_ENDS flows, they end in BLOCK_ENDS
 * batches of b = ceil(k / BLOCK_ENDS) in message order, a batch at once,
 * at the end of its last-sent flow (each of its others up to b - 1 gaps
 * after its own). */
#define BLOCK_ENDS 32

static G_GNUC_NO_INLINE void blocks_mark(FlowNet *n, const Route *r) {
  uint32_t di = hq_of(r);
  if (!n->blocks || n->hq_dir[di] & HQ_BLOCKS) return;
  n->hq_dir[di] |= HQ_BLOCKS;
  CS_GROW(n->blocks_dirs, n->n_blocks, n->cap_blocks, 16);
  n->blocks_dirs[n->n_blocks++] = di;
}

/* Whether flow g is one of host queue di's big flows in their fluid phase,
 * past the queue's limit of `limit` bytes (a flow within it, bbr's say,
 * goes into the queue whole). */
static inline bool blocks_of(const FlowNet *n, const Flow *g, uint32_t di, double limit) {
  return g->big == BIG_SENDING && g->live && g->msg != NONE && hq_of(g->route) == di &&
         (double)cs_stats_at(&n->stats, g->msg)->wire_bytes > limit;
}

static int bend_by_raw(const void *a, const void *b) {
  const struct BlockEnd *x = a, *y = b;
  return x->raw != y->raw ? (x->raw < y->raw ? -1 : 1) : (x->msg > y->msg) - (x->msg < y->msg);
}

static int bend_by_msg(const void *a, const void *b) {
  const struct BlockEnd *x = a, *y = b;
  return (x->msg > y->msg) - (x->msg < y->msg);
}

static G_GNUC_NO_INLINE void blocks_end(FlowNet *n) {
  CsTime now = *n->clock;
  const CsTransportSpec *tr = &n->cfg->transport;
  for (uint32_t i = 0; i < n->n_blocks; i++) {
    uint32_t di = n->blocks_dirs[i];
    n->hq_dir[di] &= (uint8_t)~HQ_BLOCKS;
    const Dir *d = &n->dirs[di];
    uint32_t k = 0;
    double limit = cs_transport_host_queue_bytes(tr, d->capacity);
    if (d->n_uses > n->cap_bends) {
      n->cap_bends = MAX(d->n_uses, 2 * n->cap_bends);
      n->bends = g_renew(struct BlockEnd, n->bends, n->cap_bends);
    }
    for (uint32_t u = 0; u < d->n_uses; u++) {
      Flow *g = &n->flows[USES(d)[u]];
      if (!blocks_of(n, g, di, limit) || g->rate <= 0) continue;
      double left = pos(g->remaining - g->rate * (double)(now - g->updated) * 1e-12);
      double ps = ceil_pos(left / g->rate * 1e12);
      if (ps >= (double)(CS_TIME_MAX - now)) continue;
      n->bends[k++] = (struct BlockEnd){now + (CsTime)ps, g->msg, USES(d)[u]};
    }
    /* half a block at the line's rate: the gap, and how near fluid ends are to be "together" */
    CsTime gap = dir_tight(d) ? (CsTime)(4e12 * limit / d->capacity) : 0;
    if (k > 1) qsort(n->bends, k, sizeof *n->bends, bend_by_raw);
    for (uint32_t s = 0, e; s < k; s = e) {
      /* those within a gap of the first */
      for (e = s + 1; e < k && n->bends[e].raw - n->bends[s].raw <= gap; e++) {}
      CsTime last = n->bends[e - 1].raw;
      if (e - s > 1) qsort(n->bends + s, e - s, sizeof *n->bends, bend_by_msg);
      uint32_t batch = (e - s + BLOCK_ENDS - 1) / BLOCK_ENDS; /* (1 up to BLOCK_ENDS flows) */
      for (uint32_t j = s; j < e; j++) {
        struct BlockEnd *b = &n->bends[j];
        CsTime before = (CsTime)((e - 1 - j) / batch * batch) * gap, at = b->raw;
        if (e - s > 1) at = MIN(at, last - before);
        if (at < now) at = now;
        Flow *g = &n->flows[b->flow];
        /* (within a nanosecond: the end the fluid set, its remaining's rounding aside) */
        if (at + 1000 > g->end_at && g->end_at + 1000 > at) continue;
        g->end_at = at;
        ends_set(n, g, b->flow);
      }
    }
  }
  n->n_blocks = 0;
}

static uint32_t new_flow(FlowNet *n);

/* Big flow fi ends now (complete_now): when before its fluid end
 * (blocks_end), what it has left goes on as a ghost in a slot of its own,
 * in fi's place on fi's directions, and fi leaves them without a refill;
 * false when it has nothing left (a bit's rounding), to leave as any. */
static G_GNUC_NO_INLINE bool blocks_ghost(FlowNet *n, uint32_t fi) {
  settle_flow(n, &n->flows[fi]);
  if (n->flows[fi].remaining < 1 || n->flows[fi].rate <= 0) return false; /* (its fluid end: a bit's rounding) */
  uint32_t gi = new_flow(n); /* (may move the slots) */
  Flow *f = &n->flows[fi], *g = &n->flows[gi];
  const Route *r = f->route;
  g->route = f->route;
  g->own_route = f->own_route;
  if (g->own_route) (r->full ? r->full : f->route)->refs++; /* (a kept route: held by both until each lets go) */
  g->ack_w = f->ack_w;
  g->remaining = f->remaining;
  g->rate = f->rate;
  g->cap = f->cap;
  g->updated = f->updated;
  g->msg = GHOST;
  g->live = true;
  /* (its ends' versions above those of every ghost before it: their
   * entries still in the ends' heap, of the same slot and GHOST too, are
   * not its own; a message's are, by its number) */
  g->end_ver = n->ghost_ver;
  n->n_ghosts++;
  g->end_at = end_of(g, g->updated); /* (settled now) */
  ends_set(n, g, gi);
  /* it takes f's place on f's directions, with f's loads (set_rate_as) */
  for (uint32_t k = 0; k < r->n_fwd; k++) {
    Dir *d = &n->dirs[r->dirs[k]];
    uint32_t *uses = USES(d);
    for (uint32_t u = 0; u < d->n_uses; u++)
      if (uses[u] == fi) {
        uses[u] = gi;
        break;
      }
  }
  f->rate = f->remaining = 0;
  f->live = false;
  return true;
}

/* Flow f runs at `rate` from now: its directions follow, and its end. */

static inline __attribute__((always_inline)) void new_rate_as(FlowNet *n, Flow *f, double rate) {
  /* half of the refills at scale leave the rate as it was: then its end
   * holds (set when the rate was, and `remaining` drains at that rate) */
  if (rate == f->rate) return;
  CsTime now = *n->clock;
  settle_flow(n, f);
  set_rate(n, f, rate);
  /* (end_of's sum, written out: through it GCC placed refill_round's loop
   * so that it took 2 more instructions a message) */
  double ps = f->msg == NONE || f->rate <= 0 ? INFINITY : ceil_pos(f->remaining / f->rate * 1e12);
  CsTime end = ps >= (double)(CS_TIME_MAX - now) ? CS_TIME_MAX : now + (CsTime)ps;
  if (end == f->end_at) return; /* its entry holds */
  f->end_at = end;
  ends_set(n, f, (uint32_t)(f - n->flows));
}

/* (inline in refill_one, where most messages get their rate) */
static void new_rate(FlowNet *n, Flow *f, double rate) { new_rate_as(n, f, rate); }

/* Whether a plan made at this instant for `at` may wait for flush_plans
 * at the end of the event: not when it is due now (scheduled at once, a
 * refill in the same event sees it and queues itself behind it), nor when
 * the engine's own path is off (the reference order: every plan
 * scheduled as it is made). */
static inline bool plan_may_wait(const FlowNet *n, CsTime at) {
  return at != *n->clock && cs_engine_own_allowed(n->engine);
}

/* The fluid end's plan to the engine: at the place it took before an
 * inline delivery ran (flush_plans), if it did. */
static void schedule_next(FlowNet *n) {
  n->next_sched = true;
  if (n->next_placed) {
    n->next_placed = false;
    cs_engine_schedule_at_place(n->engine, n->next_at, on_complete, n, n->next_gen);
  } else {
    cs_engine_schedule_at(n->engine, n->next_at, on_complete, n, n->next_gen);
  }
}

/* The fluid end's plan is replaced or done: the place it took goes. */
static inline void drop_next_place(FlowNet *n) {
  if (G_UNLIKELY(n->next_placed)) {
    n->next_placed = false;
    cs_engine_drop_place(n->engine);
  }
}

static void on_deliveries(CsEngine *e, void *ctx, uint64_t gen);

static void schedule_deliveries(FlowNet *n) {
  n->dlv_sched = true;
  cs_engine_schedule_at(n->engine, n->dlv_at, on_deliveries, n, n->dlv_gen);
}

/* The plan of the fluid end (`end`) or of the delivery, to the engine. */
static void schedule_plan(FlowNet *n, bool end) {
  if (end) schedule_next(n);
  else schedule_deliveries(n);
}

/* The one event for the next fluid end among the live flows. */
static void plan_next(FlowNet *n) {
  const EndAt *first = ends_first(n);
  CsTime next = first ? first->at : CS_TIME_MAX;
  if (next == n->next_at) return;
  drop_next_place(n);
  n->next_at = next;
  n->next_gen++;
  n->next_sched = false; /* for flush_plans, at the end of the event, or: */
  n->next_stamp = ++n->plan_stamp;
  if (next != CS_TIME_MAX && !plan_may_wait(n, next)) schedule_next(n);
}

/* A refill of one dirty flow, live and alone on its directions (most
 * refills once a ring's steps drift apart: 1.49 M of 1.50 M at 1,024
 * workers): what gather and fill do for it, without their lists.  False,
 * with nothing changed, when it is not such a flow. */
static inline __attribute__((always_inline)) bool refill_one(FlowNet *n) {
  uint32_t fi = n->dirty[0];
  Flow *f = &n->flows[fi];
  if (!f->route || !f->live) return false;
  double rate = alone_rate(n, f); /* (sets nothing when it shares a direction) */
  if (rate < 0) return false;
  f->dirty = false;
  n->n_dirty = 0;
  f->mark = ++n->pass;
  n->filling = true;
  new_rate_as(n, f, rate);
  n->filling = false;
  return true;
}

/* One refill of the dirty flows: their component's rates. */
static void refill_round(FlowNet *n) {
  CsTime now = *n->clock;
  n->refill_pending = false;
  n->rounds = now == n->rounds_at ? n->rounds + 1 : 0;
  n->rounds_at = now;
  if (n->n_dirty == 1 && refill_one(n)) return; /* (its ACK loads may mark more dirty, as in fill) */
  /* the round's dirty flows, kept for a second gathering; those the fill
   * marks (ACK loads) go to the next round, refilled at this instant */
  uint32_t *list = n->dirty, count = n->n_dirty, cap = n->cap_dirty;
  n->dirty = n->round, n->cap_dirty = n->cap_round, n->n_dirty = 0;
  n->round = list, n->cap_round = cap;
  n->n_forced = 0;
  for (;;) {
    gather(n, list, count);
    if (fill(n)) return;
    for (uint32_t i = 0; i < n->n_alone; i++) /* (counted again by the gathering) */
      if (n->alone[i].counted) acks_came(n, &n->flows[n->alone[i].flow]);
    /* the direction that bound a flow left out: every flow on it, the next time */
    CS_GROW(n->forced, n->n_forced, n->cap_forced, 16);
    n->forced[n->n_forced++] = n->bound_dir;
  }
}

/* The end of one of the fabric's events: the refill it asked for (and the
 * rounds its ACK loads ask for) at once while no other event is due at this
 * instant (one could start or end flows, and would have come first); else
 * an event after them.  An engine event per instant and per round cost as
 * much as the refill of a flow alone on its links. */
static void refill_after(FlowNet *n) {
  g_assert(n->in_handler > 0);
  while (n->refill_pending) { /* still in the handler: a round's marks queue no event */
    if (n->refill_queued || cs_engine_next_time(n->engine) <= *n->clock) {
      queue_refill(n);
      break;
    }
    refill_round(n);
  }
  n->in_handler--;
  plan_next(n);
}

static void flush_plans(FlowNet *n);

static void on_refill(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e, (void)arg;
  FlowNet *n = ctx;
  n->refill_queued = false;
  n->in_handler++;
  if (n->refill_pending) refill_round(n);
  refill_after(n);
  flush_plans(n);
}

static void big_sent(FlowNet *n, Flow *f, CsTime now, CsTime later);

static void hold_ends(FlowNet *n, Flow *f, CsTime at);

/* Flow fi, past its host queue's limit or holding its connection, is
 * released (Flow.big). */
static G_GNUC_NO_INLINE void big_done(FlowNet *n, uint32_t fi) {
  Flow *f = &n->flows[fi];
  if (f->big == CHUNK_HOLD || f->big == BIG_HOLD) { /* (given up on before its last window went in, or its end) */
    hold_ends(n, f, *n->clock);
    return;
  }
  if (f->big == BIG_SENDING) big_sent(n, f, *n->clock, 0); /* (given up on before its fluid end) */
  f->big = 0;
  n->n_big--;
}

static inline __attribute__((always_inline)) void flow_release(FlowNet *n, uint32_t fi) {
  Flow *f = &n->flows[fi];
  if (G_UNLIKELY(f->big)) big_done(n, fi);
  if (f->own_route) route_drop(n, f->route);
  f->route = NULL;
  CS_POOL_PUT(n->flows, n->free_flow, next_free, fi);
}

/* The `fn` of a sprayed message's flows (never called: finish() knows
 * it); their `ctx` is the Spray's slot. */
static void spray_part(void *ctx, uint32_t msg, bool failed) {
  (void)ctx, (void)msg, (void)failed;
  g_assert_not_reached();
}

/* ---- slow start ----
 *
 * A TCP connection's window starts at transport.init_cwnd and grows by a
 * packet per packet acknowledged (slow start: it doubles each round
 * trip) while the sender uses at least half of it (Linux's
 * tcp_is_cwnd_limited: a message of fewer packets grows it to twice them
 * at most); a persistent connection keeps it from one message to the
 * next, and when a message starts with none in flight more than an RTO
 * after the last bit of the one before left (the RTO: the round trip plus
 * min_rto, as the packet transport's SRTT + max(4 RTTVAR, min_rto) with a
 * steady RTT), halves it per RTO idle, down to init_cwnd (Linux's
 * tcp_cwnd_restart, as the packet fidelity's transport does).  Under ECMP
 * a pair's messages may take routes that ask and routes that do not: every
 * message of theirs counts then.  While a message's window is under what
 * its rate carries in a round trip, each round trip sends a window and
 * waits for its ACKs: the time lost against that rate, rtt - w x pt per
 * such round, is added to its tail at its fluid end, where its rate is
 * known (pt: the time a packet took in its fluid phase, at least the
 * slowest link's or the window cap's packet time).  A flow that shares
 * its links, with a packet time several times the line rate's, loses
 * little or nothing: the others fill the link while it waits.  A message
 * that fits in its window goes at once and loses nothing, and a route
 * whose round trip carries init_cwnd packets at its line rate never asks
 * (a star of 10 Gbps and 1 us links: 5.4 packets).  On a lossy route the
 * Mathis cap, a bound, stands alone. */

/* The connection a -> b, not a's last (conn_of). */
static G_GNUC_NO_INLINE SsConn *conn_find(FlowNet *n, uint32_t a, uint32_t b) {
  guint64 key = ((guint64)a << 32) | b;
  uint32_t i = GPOINTER_TO_UINT(g_hash_table_lookup(n->conn_ids, &key));
  if (i) {
    i--;
  } else {
    CS_GROW(n->conns, n->n_conns, n->cap_conns, 64);
    i = n->n_conns++;
    n->conns[i] = (SsConn){n->ss_init, -1, 0, 0, 0, 0, NULL, NONE, NONE};
    g_hash_table_insert(n->conn_ids, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(i + 1));
  }
  n->conn_dst[a] = b;
  n->conn_at[a] = i;
  return &n->conns[i];
}

/* The connection a -> b: mostly a's last (a collective's neighbour). */
static inline SsConn *conn_of(FlowNet *n, uint32_t a, uint32_t b) {
  return n->conn_dst[a] == b ? &n->conns[n->conn_at[a]] : conn_find(n, a, b);
}

/* A message from a to b of `packets` on route r begins (r->ss: a window
 * of its could cost it a round trip, its round trip at the line rate
 * carrying more than init_cwnd packets; or ECMP: its pair's other routes
 * may ask): its connection's window, which then grows, or -1 when it
 * cannot cost this message anything (its connection still counts it). */
/* A message from a to b of `packets` on route r begins on its connection,
 * which counts it in flight (not per-message connections): the window it
 * starts with, which then grows. */
static double conn_begins(FlowNet *n, uint32_t a, uint32_t b, const Route *r, uint64_t packets) {
  n->ss_any = n->late = true;
  if (n->ss_fresh) return n->ss_init;
  SsConn *c = conn_of(n, a, b);
  CsTime now = *n->clock, rto = (CsTime)(r->rtt * 1e12 + 0.5) + n->ss_min_rto;
  if (c->active == 0 && n->ss_restart && c->last_send >= 0 && now - c->last_send > rto)
    c->cwnd = cs_cwnd_after_idle(c->cwnd, n->ss_init, now - c->last_send, rto);
  double w = c->cwnd, k = (double)packets;
  /* slow start's growth while the window is the limit: a packet per packet
   * acknowledged, and no further than twice what a round sends */
  double grown = k > w ? w + k : 2 * k > w ? min2(w + k, 2 * k) : w;
  c->cwnd = min2(grown, n->ss_window);
  c->active++;
  return w;
}

static double standing_on(FlowNet *n, const Route *r, uint32_t a, uint32_t b, double *full);

static void on_standing(CsEngine *e, void *ctx, uint64_t arg);

/* Flow fi of a message from a to b past the host queue's limit, whose
 * window is not counted here (roce's queue pairs, `fixed`, a lossy
 * route): its connection's next messages wait for its fluid end
 * (BIG_HOLD, conn_waits); complete_now asks it then (late_end). */
static G_GNUC_NO_INLINE void conn_hold(FlowNet *n, uint32_t fi, uint32_t a, uint32_t b) {
  n->flows[fi].big = BIG_HOLD;
  n->n_hold++;
  n->late = true;
  conn_of(n, a, b)->busy++;
}

static G_GNUC_NO_INLINE float slow_start(FlowNet *n, uint32_t fi, uint32_t a, uint32_t b, const Route *r,
                                         uint64_t packets) {
  double w = conn_begins(n, a, b, r, packets);
  if (n->ss_fresh) return (float)w; /* (r->ss: per-message connections count nothing) */
  if (!r->shape.chunky && !r->shape.q_time[0] && r->keep >= 1) { /* (past its host queue's limit) */
    n->flows[fi].big = BIG_SENDING;
    n->n_big++;
    n->hq_dir[hq_of(r)] |= HQ_BIG;
    conn_of(n, a, b)->busy++;
  }
  /* a message past its window whose round trips other connections' queues
   * may lengthen (standing_q): those are read once every flow of this
   * instant has begun (on_standing; a warm connection that begins after
   * it, at the same instant, fills its host's queue before its first ACK
   * comes by) */
  if (r->keep >= 1 && (double)packets > w) {
    if (n->n_ss_pend == 0) cs_engine_schedule_at(n->engine, *n->clock + 1, on_standing, n, 0);
    CS_GROW(n->ss_pend, n->n_ss_pend, n->cap_ss_pend, 64);
    n->ss_pend[n->n_ss_pend++] = (struct SsPend){fi, n->flows[fi].msg};
  }
  /* (a window that fills the round trip at the line rate loses nothing at
   * any rate: its end need not ask) */
  return !r->ss || w * r->pt >= r->rtt ? (float)-w : (float)w;
}

/* The flows that began a picosecond ago, past their windows: what the
 * standing queues on their ways add to their round trips, which may make
 * slow start cost them time (their ends ask: slow_start_adds). */
static void on_standing(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e, (void)arg;
  FlowNet *n = ctx;
  for (uint32_t i = 0; i < n->n_ss_pend; i++) {
    uint32_t fi = n->ss_pend[i].flow;
    Flow *f = &n->flows[fi];
    if (f->msg != n->ss_pend[i].msg || !f->route || f->ss_w == 0) continue; /* (gone) */
    const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
    const Route *r = f->route;
    double full = 0, q = standing_on(n, r, st->src, st->dst, &full), w = fabs(f->ss_w);
    if (q <= 0 || w * r->pt >= r->rtt + fmax(q, full)) continue;
    if (fi >= n->cap_ss_q) {
      n->cap_ss_q = MAX(n->cap_flows, 64);
      n->ss_q = g_renew(struct SsQ, n->ss_q, n->cap_ss_q);
    }
    n->ss_q[fi] = (struct SsQ){q, full};
    f->ss_q = true;
    f->ss_w = (float)w;
  }
  n->n_ss_pend = 0;
}

/* What the standing queues a flow's ACKs cross make its ACKs wait, t
 * seconds after it began, in seconds: they held q then, and hold `full`
 * when full (ss_q).  A queue still filling grows at its line's rate; once
 * full, its connection refills it when its last packet there starts
 * (the packet transport's small queues), so it runs down and fills again
 * every `full`.  An ACK that comes in leaves as the queue runs empty,
 * and the window it lets go comes back a round trip later, just after
 * the refill: each round trip of slow start then waits nearly a full
 * queue, not half (w1 sending 12.5 MB to w0 over a machine's 100 Gbps
 * link, w0 sending as much back 71 us later: its round trips took 70,
 * 65, then 100 us each at packet level).  A queue of no limit stays as
 * it was. */
static double ss_wait(double q, double full, double t) {
  if (!isfinite(full) || q >= full) return q;
  double fill = full - q;
  return t < fill ? q + t : full - fmod(t - fill, full);
}

/* What slow start adds to flow f's tail (ps) at its fluid end, `now`. */
static G_GNUC_NO_INLINE CsTime slow_start_adds(FlowNet *n, const Flow *f, CsTime now) {
  const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
  const Route *r = f->route;
  double packets = (double)st->packets, w = f->ss_w, extra = 0, t = 0;
  double pt = fmax(r->pt, (double)(now - st->start) * 1e-12 / packets);
  const struct SsQ *sq = f->ss_q ? &n->ss_q[f - n->flows] : &(struct SsQ){0, 0};
  double rtt = r->rtt + ss_wait(sq->q, sq->full, t);
  while (w * pt < rtt && packets > w) { /* a round trip for a window, and more to send after it */
    extra += rtt - w * pt;
    packets -= w;
    w *= 2;
    t += rtt;
    rtt = r->rtt + ss_wait(sq->q, sq->full, t);
  }
  return (CsTime)llround(extra * 1e12);
}

/* Standing queues.  A TCP connection whose window has outgrown its round
 * trip keeps what its host's queue lets it (transport.host_queue: 100 us
 * of the link by default) waiting there, as the packet transport's small
 * queues do: what crosses that host's link behind it, a packet the host
 * forwards (a ring's or a torus's) or an ACK it sends, waits that long
 * (two messages of 6.25 MB on a ring of 4 hosts, w3 -> w2 on a warm
 * connection and w2 -> w0, whose ACKs come back through w3: the second
 * took 5.433 ms at packet level, its slow start's rounds 105 us each,
 * and 5.204 ms here while its round trip was the empty path's 8.8 us).
 * Direction di's: the bytes that the flows whose host's queue it is keep
 * waiting there (other than a's to b), as seconds of its line; on
 * average over their refills (`mean`: what a message that comes in
 * waits), or all of them (what slow start's round trips wait, at most
 * one full queue). */
static double standing_q(FlowNet *n, uint32_t di, uint32_t a, uint32_t b, bool mean, double *full) {
  const Dir *d = &n->dirs[di];
  /* (a link its flows do not fill keeps no queue: their windows wait
   * where they are bound, which the fluid does not hold) */
  if (!n->hq_dir[di] || !dir_tight(d)) return 0;
  const CsTransportSpec *tr = &n->cfg->transport;
  double bytes = 0, now = (double)*n->clock * 1e-12, limit = -1;
  for (uint32_t u = 0; u < d->n_uses; u++) {
    const Flow *g = &n->flows[USES(d)[u]];
    const Route *o = g->route;
    /* (its host's queue: a GPU's is its machine's NIC) */
    if ((g->big != BIG_SENDING && g->big != BIG_SENT) || hq_of(o) != di || g->waiting) continue;
    const CsMessageStats *st = cs_stats_at(&n->stats, g->msg);
    if (st->src == a && st->dst == b) continue; /* (its own connection's: in turn) */
    if (limit < 0)
      limit = tr->host_queue ? cs_transport_host_queue_bytes(tr, d->capacity)
                             : (isfinite(n->ss_window) ? n->ss_window * (double)(n->mss + n->header) : INFINITY);
    if ((double)st->wire_bytes <= limit) continue; /* (within it: it goes in window by window) */
    /* its window doubles each round trip of the empty path until that is
     * full (bdp packets), and past it grows by a packet per packet sent
     * (its ACKs come at its rate, and each lets two in): its queue fills
     * at its rate */
    double pkt = (double)(n->mss + n->header), bdp = o->rtt / o->pt, w0 = fabs(g->ss_w);
    double t = fmax(0, now - (double)st->start * 1e-12), q = w0 > bdp ? (w0 - bdp) * pkt : 0;
    if (w0 < bdp) t -= o->rtt * log2(bdp / w0);
    q += fmax(0, t) * g->rate / 8;
    if (isfinite(n->ss_window)) q = fmin(q, fmax(0, n->ss_window - bdp) * pkt);
    /* (once full, it refills when its last packet there starts: what
     * comes in finds anything from none to all of it, half on average) */
    bytes += q < limit ? q : mean ? limit / 2 : limit;
  }
  /* (a round trip waits for the connections' queues together at most a
   * full one: their refills take turns) */
  if (!mean && limit > 0) bytes = fmin(bytes, limit);
  if (full && limit > 0 && bytes > 0) *full += 8 * limit / d->capacity; /* (a queue that stands) */
  return 8 * bytes / d->capacity;
}

/* What the standing queues on route r from a to b add to its round trip
 * as slow start sees it: those its ACKs cross.  (Those its data cross
 * belong to flows that keep that link busy while it waits: what it loses
 * there they gain, and where it ends after them it loses nothing. Counted
 * too, a star's w0 -> w2 of 6.25 MB beside w0's warm connection to w1 took
 * 1.021 of the packet run, against 1.000 without them.) */
/* standing_q over directions r->dirs[from .. to) */
static double standing_sum(FlowNet *n, const Route *r, uint32_t from, uint32_t to, uint32_t a, uint32_t b, bool mean,
                           double *full) {
  double q = 0;
  for (uint32_t k = from; k < to; k++)
    if (n->dirs[r->dirs[k]].n_uses > 0) q += standing_q(n, r->dirs[k], a, b, mean, full);
  return q;
}

/* (*full: what those queues hold full, the same way) */
static double standing_on(FlowNet *n, const Route *r, uint32_t a, uint32_t b, double *full) {
  return standing_sum(n, r, r->n_fwd, r->n_fwd + r->n_rev, a, b, false, full);
}

/* What a burst or a window of a message from a to b on route r waits, on
 * average, behind the standing queues on its way (standing_q): at its
 * host's link other connections', at the links of the hosts that forward
 * it theirs; in picoseconds.  With a 6.25 MB message from w0 to w1 in
 * flight on a star, 40 messages of 4,000 B from w0 to w2, 137 us apart,
 * took 9.5 to 108.1 us at packet level, 60.4 us on average, as the
 * queue they came to was full or nearly empty; 9.9 us each here before,
 * 59.9 us now. */
static G_GNUC_NO_INLINE CsTime standing_wait(FlowNet *n, const Route *r, uint32_t a, uint32_t b) {
  return (CsTime)llround(standing_sum(n, r, 0, r->n_fwd, a, b, true, NULL) * 1e12);
}

/* What chunked flow f's ACKs wait, on average, behind the standing queues
 * on their way back (a receiver's own connection's, those of hosts that
 * forward them), which delays its next window.  On a 3 x 3 torus, 40,000
 * B from w4 to w1 while w1 sends 3 MB to w4: 126.15 us at packet level,
 * 35.72 us here before, 76.50 us now (half a full queue, the average
 * wait, for the first window's first ACK). */
static CsTime acks_standing(FlowNet *n, const Flow *f) {
  if (G_LIKELY(n->n_big == 0)) return 0;
  const Route *r = f->route;
  const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
  return (CsTime)llround(standing_sum(n, r, r->n_fwd, r->n_fwd + r->n_rev, st->src, st->dst, true, NULL) * 1e12);
}

/* Message m's flow f, which asked its connection's window, is delivered
 * (its last bit left its tail ago: at its fluid end and after what slow
 * start added, the round trips it waited) or given up on (`failed`): the
 * connection has one message fewer in flight. */
static inline void acks_turn(FlowNet *n, const Route *r, double packets);

static G_GNUC_NO_INLINE void slow_start_done(FlowNet *n, uint32_t m, const Flow *f, bool failed) {
  /* (a chunked message's last window, its ACKs held: last_window) */
  if (f->ack_w == ACK_W_HELD && !failed) acks_turn(n, f->route, n->chunks[f - n->flows].acks);
  if (n->ss_fresh) return;
  const CsMessageStats *st = cs_stats_at(&n->stats, m);
  SsConn *c = conn_of(n, st->src, st->dst);
  g_assert(c->active > 0);
  c->active--;
  if (!failed) c->last_send = MAX(c->last_send, *n->clock - f->tail);
}

/* Message m is over: delivered, or given up on (`failed`). */
static inline __attribute__((always_inline)) void message_over(FlowNet *n, uint32_t m, CsDeliverFn fn, void *fctx,
                                                               bool failed) {
  CsMessageStats *st = cs_stats_at(&n->stats, m);
  if (failed) {
    st->failed = true;
    n->failed++;
  } else {
    st->end = *n->clock;
    st->delivered = true;
  }
  n->active--;
  if (fn) fn(fctx, m, failed); /* may send: st moves */
  cs_stats_done(&n->stats, m);
  if (n->active == 0 && n->n_ghosts == 0 && n->idle) n->idle(n->idle_ctx);
}

/* A flow of sprayed message m (its Spray in slot si) is over: the
 * message is, with the last of them. */
static G_GNUC_NO_INLINE void spray_over(FlowNet *n, uint32_t m, uint32_t si, bool failed) {
  Spray *sp = &n->sprays[si];
  sp->failed |= failed;
  if (--sp->left > 0) return;
  Spray x = *sp;
  CS_POOL_PUT(n->sprays, n->free_spray, next_free, si);
  message_over(n, m, x.fn, x.ctx, x.failed);
}

/* A burst's flow f on a star (Shape: its ACKs load no link) of message m
 * is delivered now: its ACKs, put into the receiver's queue as its
 * packets came, have left it by the end of the queue's bursts before them
 * and their own time, and the last of them, made now, no sooner than its
 * own time from now; from a GPU to another machine, its NIC's likewise.
 * The receiver's next burst goes behind them. */
/* (burst_acks from a GPU to another machine: at its machine's NIC too,
 * behind its bursts there, at the NIC's rate; out of line) */
static G_GNUC_NO_INLINE void burst_acks_nic(FlowNet *n, const Route *r, CsTime all, CsTime one, CsTime after) {
  Turns *q1 = &n->turns[r->dirs[r->n_fwd + 1]];
  double k = (double)n->t->links[r->dirs[r->n_fwd] / 2].spec.bandwidth /
             (double)n->t->links[r->dirs[r->n_fwd + 1] / 2].spec.bandwidth;
  q1->acks = MAX(MAX(q1->acks, q1->at) + (CsTime)((double)all * k), after + (CsTime)((double)one * k));
}

/* (acks_turn off a star: the ACKs' bits in each direction back, dir_bits; out of line) */
static G_GNUC_NO_INLINE void acks_bits(FlowNet *n, const Route *r, double packets) {
  double bits = n->ack_bits * packets;
  for (uint32_t k = r->n_fwd; k < r->n_fwd + r->n_rev; k++) n->dirs[r->dirs[k]].bits_off -= bits;
}

/* (the ACKs of `packets` on route r, delivered now: a burst's, or a
 * chunked message's last window's, last_window) */
static inline __attribute__((always_inline)) void acks_turn(FlowNet *n, const Route *r, double packets) {
  CsTime one = (CsTime)(r->ack_ps + 0.5);
  CsTime all = (CsTime)(r->ack_ps * packets + 0.5);
  Turns *q = &n->turns[r->dirs[r->n_fwd]];
  CsTime now = *n->clock;
  q->acks = MAX(MAX(q->acks, q->at) + all, now + one);
  /* their bits in the count of each direction back, as they are made
   * (the calls last: tail calls) */
  if (G_LIKELY(n->acks_wait && r->n_fwd == 2 && r->n_rev == 2)) { /* (a star's: counted, held_bits) */
    q->acks_out += packets;
    n->turns[r->dirs[0]].acks_back += packets;
  } else {
    acks_bits(n, r, packets);
  }
  if (G_UNLIKELY(n->gpus) && r->n_rev > 2) burst_acks_nic(n, r, all, one, q->acks);
}

/* (the route passed, not its flow: the call is once per small message on
 * a star, and this way it reads no more of the flow than finish has) */
static G_GNUC_NO_INLINE void burst_acks(FlowNet *n, const Route *r, uint32_t m) {
  acks_turn(n, r, cs_stats_at(&n->stats, m)->packets);
}

/* Message flow fi is over: delivered, or given up on (`failed`); a
 * sprayed message's flow ends its message only when it is the last. */
static inline __attribute__((always_inline)) void finish(FlowNet *n, uint32_t fi, bool failed) {
  Flow *f = &n->flows[fi];
  uint32_t m = f->msg;
  CsDeliverFn fn = f->fn;
  void *fctx = f->ctx;
  if (f->ack_w == 0 && !failed && n->fifo && n->ack > 0 && f->route->n_rev > 0) burst_acks(n, f->route, m);
  if (G_UNLIKELY(n->ss_any) && f->ss_w != 0) slow_start_done(n, m, f, failed);
  flow_release(n, fi); /* before the callback, which may send again */
  if (G_UNLIKELY(fn == spray_part)) spray_over(n, m, (uint32_t)(uintptr_t)fctx, failed);
  else message_over(n, m, fn, fctx, failed);
}

/* ---- deliveries: a ring in order, and a heap; by time, then by when the last bit left ---- */

/* (at, seq): by delivery time, then by when the last bit left */
static inline bool dlv_before(const Delivery *a, const Delivery *b) { return cs_time_key_less(a->at, a->seq, b->at, b->seq); }

/* In order after the run's last: on the run (O(1)); else into the heap. */
static inline __attribute__((always_inline)) void dlv_push(FlowNet *n, Delivery x) {
  if (n->dlv_run.len == 0 || !dlv_before(&x, &CS_RING_BACK(n->dlv_run))) CS_RING_PUSH(n->dlv_run, 64, x);
  else CS_HEAP_PUSH(n->dlv, n->n_dlv, n->cap_dlv, 64, x, dlv_before);
}

/* The next delivery is the ring's front (else the heap's top; one at least). */
static inline bool dlv_next_on_run(const FlowNet *n) {
  return n->dlv_run.len && (n->n_dlv == 0 || dlv_before(&CS_RING_FRONT(n->dlv_run), &n->dlv[0]));
}

/* The next delivery, or NULL. */
static inline const Delivery *dlv_first(const FlowNet *n) {
  return n->dlv_run.len + n->n_dlv == 0 ? NULL : dlv_next_on_run(n) ? &CS_RING_FRONT(n->dlv_run) : &n->dlv[0];
}

static Delivery dlv_pop(FlowNet *n) {
  Delivery top;
  if (dlv_next_on_run(n)) {
    top = CS_RING_FRONT(n->dlv_run);
    CS_RING_POP(n->dlv_run);
  } else {
    CS_HEAP_POP(n->dlv, n->n_dlv, top, dlv_before);
  }
  return top;
}

static void on_deliveries(CsEngine *e, void *ctx, uint64_t gen);

/* The one event for the next delivery. */
static inline __attribute__((always_inline)) void plan_deliveries(FlowNet *n) {
  const Delivery *first = dlv_first(n);
  CsTime next = first ? first->at : CS_TIME_MAX;
  if (next == n->dlv_at) return;
  n->dlv_at = next;
  n->dlv_gen++;
  n->dlv_sched = false; /* for flush_plans, at the end of the event, or: */
  n->dlv_stamp = ++n->plan_stamp;
  if (next != CS_TIME_MAX && !plan_may_wait(n, next)) schedule_deliveries(n);
}

/* The flows delivered now, in the order their last bits left (the callbacks may send). */
static void deliver_now(FlowNet *n) {
  n->dlv_at = CS_TIME_MAX;
  CsTime now = *n->clock;
  n->in_handler++;
  for (const Delivery *d; (d = dlv_first(n)) && d->at <= now;) finish(n, dlv_pop(n).flow, false);
  plan_deliveries(n);
  refill_after(n);
}

static void on_deliveries(CsEngine *e, void *ctx, uint64_t gen) {
  (void)e;
  FlowNet *n = ctx;
  if (gen != n->dlv_gen) return; /* replaced by an earlier delivery */
  deliver_now(n);
  flush_plans(n);
}

static void on_fail(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  FlowNet *n = ctx;
  n->in_handler++;
  finish(n, (uint32_t)arg, true);
  refill_after(n);
  flush_plans(n);
}

/* Waiting flow fi's turn has come: it goes live. */
static void go_on(FlowNet *n, uint32_t fi) {
  n->flows[fi].waiting = false;
  go_live(n, fi);
  mark_dirty(n, fi);
}

/* A burst's turn in its host's queue has come (fifo_turn): its flow goes live. */
static void on_turn(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  FlowNet *n = ctx;
  const Flow *f = &n->flows[(uint32_t)arg];
  g_assert(f->waiting && f->updated == *n->clock);
  n->in_handler++;
  go_on(n, (uint32_t)arg);
  refill_after(n);
  flush_plans(n);
}

static CsTime fifo_turn_wire(FlowNet *n, const Route *r, CsTime now, double wire);

/* Chunked flow fi's rest goes live at its turn `at`: now, or later (on_turn). */
static void chunk_go(FlowNet *n, uint32_t fi, CsTime at) {
  Flow *f = &n->flows[fi];
  f->updated = at;
  if (at > *n->clock) {
    cs_engine_schedule_at(n->engine, at, on_turn, n, fi);
    return;
  }
  go_on(n, fi);
}

/* Route r joins two hosts of a star (FlowNet.acks_wait; not a GPU's to
 * another machine): the ACKs of a message's windows wait in the
 * receiver's queue behind what it holds (on_first_ack, last_window). */
static inline bool star_acks_wait(const FlowNet *n, const Route *r) {
  return n->acks_wait && r->n_fwd == 2 && !r->nic && n->ack > 0;
}

/* The ACKs of chunked route r's windows wait in the receiver's queue
 * behind what it holds: the first's hold up the next window
 * (on_first_ack), the last's the receiver's next turn (last_window).  On
 * a star (star_acks_wait), and off it (FlowNet.trains): two hosts of one
 * switch of a k = 4 fat-tree, each sending the other 20,000 B (14 packets,
 * past the 10 a connection starts with), took 20.57 us for it with the
 * first ACK back a round trip after the window left, 23.10 us as at
 * packet level with it behind the receiver's own window. */
static inline bool first_ack_waits(const FlowNet *n, const Route *r) {
  return star_acks_wait(n, r) || (n->trains && r->n_rev > 0 && n->ack > 0);
}

/* Chunked flow fi, not live, is about to send its message's last window
 * of `bits`: that window's ACKs go into the receiver's queue behind what
 * it holds (first_ack_waits), as a burst's do (burst_acks),
 * not beside the receiver's data (an exchange: each host's last window
 * and the ACKs for the other's). */
static void last_window(FlowNet *n, uint32_t fi, double bits) {
  Flow *f = &n->flows[fi];
  const Route *r = f->route;
  if (!first_ack_waits(n, r) || f->live) return;
  /* (the message's ACKs less what the fluid has carried for its earlier
   * windows, at its weight: each window's whole ACKs would count its
   * smaller last packet's twice) */
  const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
  double fluid = f->ack_w * (8.0 * (double)st->wire_bytes - bits) / n->ack_bits;
  n->chunks[fi].acks = fmax(0, (double)st->packets - fluid);
  f->ack_w = ACK_W_HELD;
}

/* Chunked flow fi has sent the windows it had begun (it has left its
 * directions): the next in the queue goes on at its turn, or it waits for
 * the next to go in (on_rest). */
static void chunk_next(FlowNet *n, uint32_t fi) {
  Flow *f = &n->flows[fi];
  Chunk *ch = &n->chunks[fi];
  f->waiting = true;
  if (ch->n == 0) {
    ch->paused = true;
    return;
  }
  f->remaining = ch->bits[0];
  CsTime at = ch->at[0];
  ch->n--;
  memmove(ch->at, ch->at + 1, ch->n * sizeof ch->at[0]);
  memmove(ch->bits, ch->bits + 1, ch->n * sizeof ch->bits[0]);
  f->chunked = ch->n > 0 || ch->rest > 0;
  if (!f->chunked) last_window(n, fi, f->remaining);
  chunk_go(n, fi, MAX(at, *n->clock));
}

/* A round trip after chunked flow fi's latest window began to leave, its
 * ACKs let the next into its host's queue (twice as many packets: slow
 * start), behind what the queue holds then. */
static void on_rest(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  FlowNet *n = ctx;
  uint32_t fi = (uint32_t)arg;
  Flow *f = &n->flows[fi];
  Chunk *ch = &n->chunks[fi];
  double bits = fmin(ch->rest, 8 * ch->next * (double)(n->mss + n->header));
  /* (the last window it can keep takes all the rest, as does one that
   * leaves less than a bit: a rounding) */
  if (ch->n == CHUNK_MAX - 1 || ch->rest - bits <= 1) bits = ch->rest;
  ch->rest -= bits;
  ch->next = fmax(1, fmin(2 * ch->next, n->ss_window));
  CsTime at = fifo_turn_wire(n, f->route, *n->clock, bits / 8);
  if (ch->rest <= 0 && f->big == CHUNK_HOLD) hold_ends(n, f, *n->clock); /* (what its connection sends next goes in behind) */
  if (G_UNLIKELY(n->n_big)) { /* (behind the standing queues on its way too) */
    const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
    at += standing_wait(n, f->route, st->src, st->dst);
  }
  if (ch->rest > 0)
    cs_engine_schedule_at(n->engine, at + (CsTime)(f->route->rtt * 1e12 + 0.5) + acks_standing(n, f), on_rest, n, fi);
  CsTime now = *n->clock;
  if (!ch->paused && ch->n == 0 && f->live && at <= f->end_at) {
    /* its turn comes before its flow has sent what it has: the window
     * joins it (leaving its links and coming back would refill them) */
    settle_flow(n, f);
    f->remaining += bits;
    f->chunked = ch->rest > 0;
    if (f->rate > 0) { /* (else a refill of this instant gives it its rate, and its end) */
      f->end_at = end_of(f, now);
      ends_set(n, f, fi);
      n->in_handler++;
      refill_after(n);
      flush_plans(n);
    }
    return;
  }
  if (!ch->paused) { /* its flow still sends (or waits for) an earlier window */
    ch->at[ch->n] = at;
    ch->bits[ch->n++] = bits;
    return;
  }
  ch->paused = false;
  f->remaining = bits;
  f->chunked = ch->rest > 0;
  if (!f->chunked) last_window(n, fi, bits);
  n->in_handler++;
  chunk_go(n, fi, at);
  refill_after(n);
  flush_plans(n);
}

/* The other live flows that share a data direction with flow fi: refilled. */
static inline __attribute__((always_inline)) void neighbours_dirty(FlowNet *n, uint32_t fi) {
  const Route *r = n->flows[fi].route;
  for (uint32_t k = 0, nf = r->n_fwd; k < nf; k++) {
    const Dir *d = &n->dirs[r->dirs[k]];
    if (d->n_uses == 1 || !dir_tight(d)) continue; /* its own alone (fi is live on each of its directions), or binds no one */
    for (uint32_t u = 0; u < d->n_uses; u++)
      if (USES(d)[u] != fi) mark_dirty(n, USES(d)[u]);
  }
}

/* Live flow fi leaves its directions: the flows that shared them are
 * refilled.  A star's route alone on both its data directions (a ring's
 * every flow) marks no one and leaves both empty, without the loops of
 * neighbours_dirty and leave_live (its ACK loads' checks start or end no
 * flow, so the counts hold). */
static inline __attribute__((always_inline)) void flow_leaves(FlowNet *n, uint32_t fi) {
  Flow *f = &n->flows[fi];
  const Route *r = f->route;
  if (r->n_fwd == 2 && r->n_rev == 2) {
    Dir *d0 = &n->dirs[r->dirs[0]], *d1 = &n->dirs[r->dirs[1]];
    if (d0->n_uses == 1 && d1->n_uses == 1) {
      set_rate_as(n, f, 0, 2, 2);
      f->live = false;
      d0->n_uses = d1->n_uses = 0;
      return;
    }
  }
  neighbours_dirty(n, fi);
  leave_live(n, fi);
}

/* `wire` bytes' time at `bps`, in picoseconds, at least 1 (rounded without
 * libm's llround: a call, once per window) */
static inline CsTime line_ps(double wire, int64_t bps) { return MAX((CsTime)(8e12 * wire / (double)bps + 0.5), 1); }

static TrainNow train_ends(FlowNet *n, uint32_t fi, CsTime tail, CsTime now);
static void train_hop(FlowNet *n, TrainNow *t);

/* Off a star (FlowNet.trains), the ACKs of burst m on route r (`packets`
 * on `wire` bytes), whose last packet comes in at `at`: made at the
 * receiver as its packets come in at its first link's rate, they go into
 * the receiver's queue (burst_acks, at delivery) and over the hops back,
 * where they take their time in the trains that pass meanwhile (acks_in).
 * Given when the burst is sent, with `at` as if nothing held it up, and
 * again when it has left its first link (its entries moved); a list that
 * is full forgets its first. */
static G_GNUC_NO_INLINE void acks_pass(FlowNet *n, const Route *r, uint32_t m, uint32_t packets, double wire,
                                       CsTime at) {
  double first = packets > 1 ? (double)(n->mss + n->header) : wire;
  CsTime e = at, s = at - line_ps(wire - first, n->t->links[r->dirs[0] / 2].spec.bandwidth);
  /* (those made while the receiver's queue holds its own bursts leave
   * behind them, at once: a host sending 40,000 B as it receives as much
   * from another, on a k = 4 fat-tree, sends the ACKs for the first 13
   * packets together when its own burst has left) */
  CsTime q = n->turns[r->dirs[r->n_fwd]].at;
  if (q > s) {
    e = MAX(e, q + (CsTime)(r->ack_ps + 0.5) * packets);
    s = q;
  }
  for (uint32_t k = r->n_fwd; k < r->n_fwd + r->n_rev; k++) {
    const CsLinkSpec *l = &n->t->links[r->dirs[k] / 2].spec;
    Passes *p = &n->passes[r->dirs[k]];
    uint32_t i = 0;
    while (i < p->n_acks && p->acks[i].msg != m) i++;
    if (i == ACKS_MAX) {
      i = --p->n_acks;
      memmove(p->acks, p->acks + 1, i * sizeof p->acks[0]);
    }
    if (i == p->n_acks) p->n_acks++;
    CsTime one = line_ps((double)n->ack, l->bandwidth);
    p->acks[i] = (AckStretch){s, e, one * packets, m};
    s += one + l->latency, e += one + l->latency;
  }
}

/* Flow i, whose last bit left its first link at `now`, is delivered
 * `tail` later. */
static G_GNUC_NO_INLINE void delivered_after(FlowNet *n, uint32_t i, CsTime tail, CsTime now) {
  const Flow *f = &n->flows[i];
  CsTime at = tail > CS_TIME_MAX - now ? CS_TIME_MAX : now + tail;
  if (G_UNLIKELY(n->floors) && f->msg != NONE && g_hash_table_size(n->floors)) {
    /* a message of a connection behind a large one: not before it */
    const CsTime *floor = g_hash_table_lookup(n->floors, GUINT_TO_POINTER(f->msg + 1));
    if (floor) {
      at = MAX(at, *floor);
      g_hash_table_remove(n->floors, GUINT_TO_POINTER(f->msg + 1));
    }
  }
  if (G_UNLIKELY(n->trains) && f->ack_w == 0 && n->ack > 0 && f->route->n_rev > 0 && f->msg != NONE) {
    const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
    acks_pass(n, f->route, f->msg, st->packets, (double)st->wire_bytes, at);
  }
  dlv_push(n, (Delivery){at, n->dlv_seq++, i});
}

/* (by when it comes in; at once, the first gathered) */
static inline bool train_next_before(const TrainNext *a, const TrainNext *b) {
  return a->in < b->in || (a->in == b->in && a->i < b->i);
}

/* trains_now's train k into the heap of the hops to pass, unless it has passed them all */
static void train_next(FlowNet *n, uint32_t k) {
  const TrainNow *x = &n->trains_now[k];
  if (x->k == x->route->n_fwd) return;
  const CsLinkSpec *prev = &n->t->links[x->route->dirs[x->k - 1] / 2].spec;
  TrainNext y = {x->in + line_ps(x->first, prev->bandwidth) + prev->latency, k};
  CS_HEAP_PUSH(n->next_hops, n->n_next, n->cap_next, 64, y, train_next_before);
}

/* The trains whose bursts left their first links at `now` (train_ends)
 * pass their hops (train_hop) in the order they come in to them: of
 * those still to pass one, the one that comes in first to its next
 * passes it first; then they are delivered. */
static G_GNUC_NO_INLINE void trains_now(FlowNet *n, CsTime now) {
  n->n_next = 0;
  for (uint32_t k = 0; k < n->n_now; k++) train_next(n, k);
  while (n->n_next > 0) {
    TrainNext x;
    CS_HEAP_POP(n->next_hops, n->n_next, x, train_next_before);
    train_hop(n, &n->trains_now[x.i]);
    train_next(n, x.i);
  }
  for (uint32_t k = 0; k < n->n_now; k++) delivered_after(n, n->trains_now[k].flow, n->trains_now[k].tail, now);
  n->n_now = 0;
}

/* complete_now's flow i once slow start has run, or off a star (FlowNet.late) */
static G_GNUC_NO_INLINE void late_end(FlowNet *n, uint32_t i, CsTime now) {
  Flow *f = &n->flows[i];
  if (f->chunked) {
    chunk_next(n, i);
    return;
  }
  CsTime tail = f->tail, ss = 0;
  if (f->ss_w > 0) tail += ss = slow_start_adds(n, f, now);
  /* (its connection's next message may go once its last bit has left,
   * after the round trips slow start waited) */
  if (G_UNLIKELY(f->big == BIG_SENDING || f->big == BIG_HOLD)) {
    /* (what its connection sends next comes in behind it: on_conn_free) */
    const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
    SsConn *c = conn_of(n, st->src, st->dst);
    c->dlv_at = now + tail;
    c->dlv_route = f->route;
    if (f->big == BIG_SENDING) big_sent(n, f, now, ss);
    else hold_ends(n, f, now + ss);
  }
  if (f->route->full) { /* (placed after complete_now's loop: trains_now) */
    /* (all of the instant's at once: placed in two lots, those of the
     * second found the hops taken by the first, whatever their order) */
    CS_GROW(n->trains_now, n->n_now, n->cap_now, 64);
    n->trains_now[n->n_now++] = train_ends(n, i, tail, now);
    return;
  }
  delivered_after(n, i, tail, now);
}

/* The flows whose last bit has left: their links are free; delivery after their tails. */
static void complete_now(FlowNet *n) {
  drop_next_place(n);
  n->next_at = CS_TIME_MAX;
  CsTime now = *n->clock;
  n->in_handler++;
  for (const EndAt *x; (x = ends_first(n)) && x->at <= now;) {
    uint32_t i = x->flow;
    ends_pop(n);
    Flow *f = &n->flows[i];
    if (G_UNLIKELY(f->big == BIG_SENDING) && n->blocks && blocks_ghost(n, i)) {
      f = &n->flows[i]; /* (before its fluid end: what it had left goes on as a ghost) */
    } else {
      f->remaining = 0; /* (all of it gone: no need to settle what its rate carried) */
      flow_leaves(n, i);
      if (G_UNLIKELY(f->msg == GHOST)) { /* (what an early message had left: gone) */
        n->ghost_ver = MAX(n->ghost_ver, f->end_ver + 1);
        flow_release(n, i);
        if (--n->n_ghosts == 0 && n->active == 0 && n->idle) n->idle(n->idle_ctx); /* (message_over's, held) */
        continue;
      }
    }
    if (G_UNLIKELY(n->late)) { /* (connections counted: chunk_send's among them; trains) */
      late_end(n, i, now);
      continue;
    }
    CsTime tail = f->tail, at = tail > CS_TIME_MAX - now ? CS_TIME_MAX : now + tail;
    dlv_push(n, (Delivery){at, n->dlv_seq++, i});
  }
  if (G_UNLIKELY(n->late) && n->n_now) trains_now(n, now);
  plan_next(n); /* the others' ends come on, refill or not */
  plan_deliveries(n);
  refill_after(n);
}

static void on_complete(CsEngine *e, void *ctx, uint64_t gen) {
  (void)e;
  FlowNet *n = ctx;
  if (gen != n->next_gen) return; /* replaced by a later plan */
  complete_now(n);
  flush_plans(n);
}

/* The end of each of the fabric's events: its plans (the next fluid end,
 * the next delivery) become engine events, in the order they were made,
 * unless the earlier of them would run next and at once (nothing else
 * pending until then): the fabric then runs it itself, as part of this
 * event (cs_engine_advance_own).  The order is that of scheduling each
 * plan when made: a plan due at once is scheduled at once, two plans of
 * one instant both, and a fluid end that waits while a delivery runs
 * inline takes its place in the engine's order first (the delivery's
 * callbacks schedule events of their own).  A ring of
 * 1,024 workers has about as many such instants as messages, the
 * engine's schedule and dispatch of each a tenth of the run. */
static void flush_plans(FlowNet *n) {
  for (;;) {
    bool c = !n->next_sched && n->next_at != CS_TIME_MAX, d = !n->dlv_sched && n->dlv_at != CS_TIME_MAX;
    if (!c && !d) return;
    bool c_first = c && (!d || cs_time_key_less(n->next_at, n->next_stamp, n->dlv_at, n->dlv_stamp));
    if (c && d && n->next_at == n->dlv_at) {
      /* two at one instant: both to the engine, in the order they were
       * planned (run here, the first's refill would not see the second) */
      schedule_plan(n, c_first);
      schedule_plan(n, !c_first);
      return;
    }
    if (!cs_engine_advance_own(n->engine, c_first ? n->next_at : n->dlv_at)) {
      schedule_plan(n, c_first);
      if (c && d) schedule_plan(n, !c_first); /* (events before the next of the fabric's could come at its instant) */
      return;
    }
    if (c_first) {
      complete_now(n); /* (no callback: nothing of another's is scheduled in it) */
    } else {
      /* the deliveries' callbacks may schedule events for the waiting
       * end's instant: the end, planned before them, keeps its place
       * ahead of them (found by review: a compute end at the very
       * picosecond of a fluid end ran first, and two sends swapped their
       * message numbers) */
      if (c && !n->next_placed) {
        cs_engine_take_place(n->engine);
        n->next_placed = true;
      }
      deliver_now(n);
    }
  }
}

/* A TCP flow's rate under random loss p on a path of round trip `rtt`
 * (bit/s): Reno's and DCTCP's from Mathis et al. (1997), MSS / RTT x
 * sqrt(3 / (2 p)); CUBIC's the larger of its own response function
 * (RFC 9438 5.1: (C (3 + beta) / (4 (1 - beta)))^(1/4) (RTT / p)^(3/4)
 * packets per RTT) and its Reno-friendly estimate (Reno's, as AIMD with
 * alpha 3 (1 - beta) / (1 + beta) and CUBIC's beta has); no cap for fixed
 * windows or BBR, which do not answer loss (its retransmissions are the
 * 1 / keep of every flow's bytes). */
static double loss_cap(const CsTransportSpec *tr, uint32_t mss, double rtt, double p) {
  double reno = sqrt(1.5 / p);
  double w;
  switch (tr->protocol) {
  case CS_PROTO_RENO:
  case CS_PROTO_DCTCP: w = reno; break;
  case CS_PROTO_CUBIC: {
    double c = tr->cubic_c, b = tr->cubic_beta;
    w = pow(c * (3 + b) / (4 * (1 - b)), 0.25) * pow(rtt / p, 0.75);
    if (tr->cubic_reno_friendly) w = fmax(w, reno);
    break;
  }
  default: return INFINITY;
  }
  return 8.0 * (double)mss * w / rtt;
}

/* roce with go-back-n: transmissions per packet delivered under loss p.
 * A loss costs the lost packet and what the sender put on the wire before
 * the NACK came back: a round trip of its link (bandwidth bw) and what
 * waits in its host's queue (transport.host_queue; the window when that is
 * unlimited): W packets in all, and (1 - p + p W) / (1 - p) transmissions
 * per packet (the classic go-back-n efficiency).  Losses of the NACK or
 * of a retransmission, which wait for the RTO, are left out: they matter
 * above a loss of a few percent. */
static double gbn_sends(const CsTransportSpec *tr, double bw, double rtt, double p) {
  double mtu = (double)tr->mtu;
  double hq = tr->host_queue ? cs_transport_host_queue_bytes(tr, bw)
                             : (tr->window_bytes ? (double)tr->window : (double)tr->window * mtu);
  double w = rtt * bw / (8.0 * mtu) + hq / mtu;
  return (1 - p + p * w) / (1 - p);
}

/* ---- the fabric ---- */

static inline __attribute__((always_inline)) uint32_t new_flow(FlowNet *n) {
  uint32_t fi;
  CS_POOL_TAKE(n->flows, n->n_flows, n->cap_flows, n->free_flow, next_free, 64, fi);
  memset(&n->flows[fi], 0, sizeof(Flow));
  n->flows[fi].msg = NONE;
  n->flows[fi].end_at = CS_TIME_MAX;
  n->flows[fi].next_free = NONE;
  return fi;
}

/* Route r's way back crosses switches only, between the receiver's
 * machine and the sender's (a fat-tree's, or none: two machines joined by
 * a link), no host or third machine that forwards (a torus of machines):
 * where a burst's ACKs, behind the receiver's data in its queues, meet
 * only what left those queues before them.  At packet level they
 * interleave with the data a forwarding host sends: there they load the
 * fluid (a hierarchical all-reduce of 10K fp32 by 8 machines of 2 GPUs
 * on a 4 x 4 torus: 1.073 of the packet run so, 1.189 with them held). */
static bool fabric_back(const FlowNet *n, const Route *r) {
  const CsTopology *t = n->t;
  uint32_t machines = t->gpus_per_host > 1 ? t->n_workers / t->gpus_per_host : 0;
  const uint32_t *back = r->dirs + r->n_fwd;
  /* (the ends' own machines: a GPU's, not a server's neighbour) */
  const CsLink *l0 = &t->links[back[0] / 2], *ln = &t->links[back[r->n_rev - 1] / 2];
  bool gpu_to = t->nodes[back[0] % 2 ? l0->b : l0->a].role == CS_ROLE_WORKER;
  bool gpu_from = t->nodes[back[r->n_rev - 1] % 2 ? ln->a : ln->b].role == CS_ROLE_WORKER;
  for (uint32_t k = 1; k < r->n_rev; k++) {
    const CsLink *l = &t->links[back[k] / 2];
    uint32_t from = back[k] % 2 ? l->b : l->a;
    bool own = (k == 1 && gpu_to) || (k == r->n_rev - 1 && gpu_from);
    if (t->nodes[from].role != CS_ROLE_SWITCH || (from >= t->n_nodes - machines && !own)) return false;
  }
  return true;
}

/* What a message of `payload` bytes on route r needs (Route.shape): its
 * bits to send, tail, ACK weight and caps. */
static void shape_of(FlowNet *n, Route *r, uint64_t payload) {
  Shape *sh = &r->shape;
  sh->payload = payload;
  uint64_t packets = (payload + n->mss - 1) / n->mss;
  uint64_t wire = payload + packets * n->header;
  double last = (double)(payload - (packets - 1) * n->mss + n->header);
  double rtt = r->rtt0;
  uint32_t nd = r->n_fwd + r->n_rev;
  double *bps = g_newa(double, nd ? nd : 1), *lat_s = g_newa(double, nd ? nd : 1), *cut = g_newa(double, nd ? nd : 1);
  for (uint32_t k = 0; k < nd; k++) {
    const CsLinkSpec *l = &n->t->links[r->dirs[k] / 2].spec;
    bps[k] = (double)l->bandwidth, lat_s[k] = (double)l->latency * 1e-12;
    cut[k] = (double)cs_dir_cut_bytes(n->t, r->dirs[k]);
  }
  /* a packet out and an ACK back, each hop's serialization (or, cut
   * through, what the hop adds) */
  double out = 0;
  for (uint32_t k = 0; k < r->n_fwd; k++) {
    double adds = cs_path_hop_adds((double)n->mtu, bps, cut, (int)k);
    rtt += adds;
    out += lat_s[k] + adds;
  }
  r->out = out;
  for (uint32_t k = 0; k < r->n_rev; k++)
    rtt += cs_path_hop_adds((double)n->ack, bps + r->n_fwd, cut + r->n_fwd, (int)k);
  double bmin = INFINITY;
  for (uint32_t k = 0; k < r->n_fwd; k++) bmin = fmin(bmin, bps[k]);
  r->rtt = rtt;
  /* a full packet's time at the rate the flow keeps once its window has
   * grown: the slowest link's, or a window per round trip */
  r->pt = fmax(8.0 * (double)n->mtu / bmin, n->ss_window > 0 ? rtt / n->ss_window : 0);
  /* (with loss the Mathis cap, a bound, stands alone) */
  r->ss = n->ss && r->rtt > n->ss_init * r->pt && r->keep >= 1;
  /* after the fluid phase (its wire bytes at the slowest link's rate when
   * alone), what a lone message's packets add: the latencies and the
   * store-and-forward (or cut-through) the packet network gives it */
  double tail = r->n_fwd ? cs_path_message_tail(packets ? packets : 1, (double)(n->mss + n->header), last, bps, lat_s,
                                                cut, (int)r->n_fwd)
                         : 0;
  /* ACK bits per data bit, at most a tenth (ACK_W_MAX): a message of a
   * few bytes, whose one ACK outweighs its packet, would load its reverse
   * route past its capacity while that packet is sent (its ACK comes
   * after it, not beside it) */
  sh->ack_w = sh->ack_fluid = fmin((double)(packets * n->ack) / (double)wire, ACK_W_MAX);
  /* (a burst's are set below: none in the fluid) */
  /* lost packets are sent again: 1 / keep transmissions each, on average
   * (go-back-n: every loss also costs what was sent after it) */
  bool gbn = r->keep > 0 && r->keep < 1 && n->cfg->transport.protocol == CS_PROTO_ROCE &&
             n->cfg->transport.retransmit == CS_RETX_GO_BACK_N;
  double sends = gbn ? gbn_sends(&n->cfg->transport, (double)n->t->links[r->dirs[0] / 2].spec.bandwidth, rtt, 1 - r->keep) : 0;
  sh->remaining = gbn ? 8.0 * (double)wire * sends : r->keep > 0 ? 8.0 * (double)wire / r->keep : 0;
  sh->tail = (CsTime)llround(tail * 1e12);
  /* its own cap: a window per round trip; with loss, TCP's response to it */
  const CsTransportSpec *tr = &n->cfg->transport;
  double window_bits = tr->window_bytes ? 8.0 * (double)tr->window : 8.0 * (double)(tr->window * tr->mtu);
  sh->cap = rtt > 0 ? window_bits / rtt : INFINITY;
  double p = 1 - r->keep;
  if (p > 0) sh->cap = fmin(sh->cap, loss_cap(tr, n->mss, rtt, p));
  sh->wire_bytes = gbn ? (uint64_t)llround((double)wire * sends) : r->keep > 0 ? (uint64_t)llround((double)wire / r->keep) : 0;
  sh->packets = (uint32_t)packets;
  /* (past init_cwnd, a window may cost it time behind other connections'
   * standing queues: standing_q) */
  sh->ss_ask = r->ss || n->ss_ecmp || (n->ss && (double)packets > n->ss_init);
  /* a burst: the transport puts the whole message into its host's queue
   * at once (within the window it starts with and the host queue's
   * limit, the packet transport's: 100 us of the host's link by default),
   * where it leaves after what went in before it, at the line rate; a
   * GPU's host queue is its machine's NIC (as its queue pair's line rate
   * is) */
  double hq = cs_transport_host_queue_bytes(tr, r->nic ? bps[1] : bps[0]); /* (a GPU's: its NIC's) */
  bool burst = n->fifo && r->n_fwd > 0 && r->keep > 0 && (double)packets <= n->burst_pkts && (hq <= 0 || (double)wire <= hq);
  sh->q_time[0] = sh->q_time[1] = 0;
  /* past the window a connection starts with, and within the host
   * queue's limit: in the queue window by window (chunk_send), its
   * rounds of slow start timed by the windows' turns */
  sh->chunky = n->chunking && !burst && r->n_fwd > 0 && r->keep >= 1 && (hq <= 0 || (double)wire <= hq);
  if (burst) {
    sh->q_time[0] = MAX((CsTime)llround(8e12 * (double)wire / bps[0]), 1);
    if (r->nic) sh->q_time[1] = (CsTime)llround(8e12 * (double)wire / bps[1]);
    /* on a star (of hosts, or of machines), its ACKs go into the
     * receiver's queue as its packets arrive, behind what the receiver's
     * transport put there (its own burst, mostly; from a GPU, its
     * machine's NIC's too): they load no link while the burst is sent,
     * and take their turn in those queues when it is delivered
     * (burst_acks).  Where ways differ in length (a fat-tree's pods) they
     * may meet data that comes in later by a longer way, even between
     * two hosts of one switch: the fluid loads their way with them as for
     * any message. */
    if (n->acks_wait && r->n_rev > 0 && n->ack > 0) sh->ack_w = 0;
    /* likewise off a star (FlowNet.trains), where they also take their
     * time in the trains that pass the hops back while they cross them
     * (acks_pass, acks_in), as the trains' own packets do (with the ACKs
     * as fluid, a burst whose queue they reach after it went in shared
     * its line with them, and a ring of 2 hosts took 1.037 of the packet
     * run) */
    if (n->trains && r->n_rev > 0 && n->ack > 0) sh->ack_w = 0;
    /* and between GPUs of machines off a star (no trains: their bursts
     * are fluid flows over their whole routes), where the way back
     * crosses only switches (fabric_back): a hierarchical all-reduce of
     * 1K fp32 on a ring of 2 machines of 2 GPUs took 1.0195 of the packet
     * run with them in the fluid, 0.9997 now */
    if (n->gpus && !n->acks_wait && r->n_rev > 0 && n->ack > 0 && fabric_back(n, r)) sh->ack_w = 0;
  }
}

/* A burst on route r, sent now, which crosses its host's link in q0 and
 * (from a GPU, else 0) its machine's NIC in q1: when it starts to leave, its turn in its
 * host's queue (and, from a GPU, its machine's NIC's), whose line is then
 * busy with it for its wire bytes' time.  The queues are taken at their
 * line rates: what other messages' flows (not bursts) send through them
 * meanwhile shares them with the burst as a fluid does. */
static inline __attribute__((always_inline)) CsTime take_turn(FlowNet *n, const Route *r, CsTime now, CsTime q0,
                                                              CsTime q1, CsTime *lag) {
  CsTime *q = &n->turns[r->dirs[0]].at;
  CsTime at = MAX(now, *q), acks = n->turns[r->dirs[0]].acks;
  *lag = acks > at ? acks - at : 0; /* the ACKs waiting ahead of it (burst_acks) */
  *q = at + *lag + q0;
  if (G_UNLIKELY(q1 > 0)) {
    n->nic_in = at + *lag;
    q = &n->turns[r->dirs[1]].at;
    CsTime in = MAX(at + *lag, *q), nic_acks = n->turns[r->dirs[1]].acks;
    at = in - *lag;
    if (nic_acks > in) *lag += nic_acks - in; /* (the ACKs waiting ahead of it at the NIC: burst_acks_nic) */
    *q = at + *lag + q1;
  }
  return at;
}

/* (a whole message: its shape's times; *lag: the part of its wait that
 * the ACKs ahead of it in its host's queue take, which its flow adds to
 * its tail, live at the rest's end: a ring of small messages, each
 * behind the ACKs of the one its host received, takes no event for them) */
static inline __attribute__((always_inline)) CsTime fifo_turn(FlowNet *n, const Route *r, CsTime now, CsTime *lag) {
  return take_turn(n, r, now, r->shape.q_time[0], r->shape.q_time[1], lag);
}

/* fifo_turn for `wire` bytes on route r, a part of a message (chunk_send) */
static CsTime fifo_turn_wire(FlowNet *n, const Route *r, CsTime now, double wire) {
  const CsLink *l = n->t->links;
  CsTime lag;
  CsTime at = take_turn(n, r, now, line_ps(wire, l[r->dirs[0] / 2].spec.bandwidth),
                        r->nic ? line_ps(wire, l[r->dirs[1] / 2].spec.bandwidth) : 0, &lag);
  return at + lag; /* (a window waits for the ACKs ahead of it as well) */
}

/* Message m begins: its statistics, and one more active. */
static inline __attribute__((always_inline)) void message_begins(FlowNet *n, uint32_t m, uint32_t src, uint32_t dst,
                                                                 uint64_t payload, uint64_t wire_bytes, uint32_t packets) {
  CsMessageStats *st = cs_stats_at(&n->stats, m);
  st->src = src, st->dst = dst, st->payload = payload;
  st->wire_bytes = wire_bytes;
  st->packets = packets;
  st->start = *n->clock;
  n->active++;
}

/* A flow of message m on route r (its shape made), carrying 1 / `parts`
 * of the message's bits and window cap: live, or given up on at once
 * when a link of r loses every packet, as the packet network would. */
static void on_turn(CsEngine *e, void *ctx, uint64_t arg);

/* (`at`: 0, or when it starts to leave, later than now: it waits for its
 * turn in its host's queue, fifo_turn) */
static inline __attribute__((always_inline)) uint32_t flow_start(FlowNet *n, uint32_t m, Route *r, bool own_route,
                                                                 uint32_t parts, CsDeliverFn fn, void *ctx, CsTime at) {
  uint32_t fi;
  CS_POOL_TAKE(n->flows, n->n_flows, n->cap_flows, n->free_flow, next_free, 64, fi);
  Flow *f = &n->flows[fi];
  const Shape *sh = &r->shape;
  /* every field as new_flow leaves it, each written once (a memset of the
   * slot, then stores over it, cost about as much as the rest of the send) */
  f->route = r;
  f->ack_w = sh->ack_w;
  f->remaining = sh->remaining / parts;
  f->rate = 0;
  f->cap = sh->cap / parts;
  f->updated = *n->clock;
  f->end_at = CS_TIME_MAX;
  f->tail = sh->tail;
  f->fn = fn, f->ctx = ctx;
  f->msg = m;
  f->next_free = NONE;
  f->mark = f->slot = f->end_ver = 0;
  f->live = f->frozen = f->dirty = false;
  f->own_route = own_route;
  f->waiting = at != 0;
  f->chunked = f->ss_q = false;
  f->big = 0;
  f->ss_w = 0;
  /* a field added to Flow must be written above too */
  _Static_assert(sizeof(Flow) == 112, "flow_start writes every field of Flow");
  if (r->keep <= 0) {
    cs_engine_schedule_at(n->engine, *n->clock, on_fail, n, fi);
    return fi;
  }
  if (at) {
    f->updated = at;
    cs_engine_schedule_at(n->engine, at, on_turn, n, fi);
    return fi;
  }
  go_live(n, fi);
  mark_dirty_as(n, fi);
  return fi;
}

static uint32_t spray_send(FlowNet *n, uint32_t src, uint32_t dst, uint64_t payload, CsDeliverFn fn, void *ctx);

/* Message m's flow, whose turn in its host's queue comes at `at` (out of line) */
static G_GNUC_NO_INLINE uint32_t flow_waits(FlowNet *n, uint32_t m, Route *r, CsDeliverFn fn, void *ctx, CsTime at) {
  return flow_start(n, m, r, n->ecmp, 1, fn, ctx, at);
}

/* Chunked flow fi's first packet has reached its receiver, on a star
 * (FlowNet.acks_wait): its ACK goes into the receiver's queue behind what
 * that queue holds now (the receiver's own window or burst, begun at the
 * same time, mostly), and the next window goes in when it is back
 * (on_rest); alone, a round trip after the first began to leave.  The
 * queue is read when the ACK comes, not when the window left: what goes
 * in after it does not hold it up. */
static void on_first_ack(CsEngine *e, void *ctx, uint64_t arg) {
  FlowNet *n = ctx;
  const Route *r = n->flows[(uint32_t)arg].route;
  const Turns *q = &n->turns[r->dirs[r->n_fwd]];
  CsTime now = *n->clock, wait = MAX(q->at, q->acks);
  CsTime back = (CsTime)((r->rtt - r->out) * 1e12 + 0.5) + acks_standing(n, &n->flows[(uint32_t)arg]);
  uint32_t last = r->dirs[r->n_fwd + r->n_rev - 1]; /* (a star's: its switch's to the sender) */
  if (wait > now && r->n_rev > 1 && n->dirs[last].n_uses > 0) {
    /* data comes to this sender as well (the receiver's own, in an
     * exchange, or a third host's, in a ring), its last packet sent as the
     * receiver's: the ACK waits at the switch behind a packet of it */
    double bps = (double)n->t->links[last / 2].spec.bandwidth;
    back += (CsTime)(8e12 * (double)(n->mtu - n->ack) / bps + 0.5);
  }
  cs_engine_schedule_at(e, (wait > now ? wait : now) + back, on_rest, n, arg);
}

/* The ACKs of a message on route r, which go into the receiver's queue
 * behind what it holds, meet on their way back only what left that queue
 * before them, or trains (acks_pass): no fluid flow from another host
 * crosses a direction back (trains_only).  Else they load their way as a
 * fluid: an all-gather of 10K fp32 (40,000 B messages) by 8 workers of a
 * k = 4 fat-tree, whose ACKs share a host's link from its switch with a
 * neighbour's data, took 0.931 of the packet run with them held, 0.954
 * with them in the fluid. */
static bool trains_only(const FlowNet *n, const uint32_t *dirs, uint32_t count, uint32_t own);
static inline bool acks_behind_own(const FlowNet *n, const Route *r) {
  return trains_only(n, r->dirs + r->n_fwd, r->n_rev, r->dirs[r->n_fwd]);
}

/* Message m from a to b on route r, past the window its connection
 * starts with (init_cwnd) and within the host queue's limit (Shape.chunky):
 * the transport puts it into its host's queue window by window.  Within
 * its connection's window now, it goes in whole (a burst); past it, its
 * first window goes in as a burst, and each next one (twice as many
 * packets: slow start) a round trip after the one before began to leave,
 * when its first ACKs come back, behind what the queue holds then (the
 * windows of the other connections that began at once): on_rest.  Its
 * flow sends each window from its turn at its share of the links, and
 * waits for the next one's turn when it has sent them all.  Alone, it
 * takes what slow start's rounds take (slow_start_adds, which it does not
 * ask). */
static G_GNUC_NO_INLINE uint32_t chunk_send(FlowNet *n, uint32_t m, uint32_t a, uint32_t b, Route *r, CsDeliverFn fn,
                                            void *ctx) {
  const Shape *sh = &r->shape;
  CsTime now = *n->clock;
  double w = fmax(1, floor(conn_begins(n, a, b, r, sh->packets))); /* (a window under an mtu sends a packet at a time) */
  double first = w < (double)sh->packets ? w * (double)(n->mss + n->header) : (double)sh->wire_bytes;
  CsTime at = fifo_turn_wire(n, r, now, first);
  if (G_UNLIKELY(n->n_big)) at += standing_wait(n, r, a, b); /* (behind the standing queues on its way too) */
  uint32_t fi = flow_start(n, m, r, n->ecmp, 1, fn, ctx, at > now ? at : 0);
  Flow *f = &n->flows[fi];
  f->ss_w = -1; /* (counted by its connection: slow_start_done) */
  /* the whole of it within its connection's window: it goes into the
   * queue whole, as a burst does, and its ACKs wait as a burst's
   * (burst_acks; its flow has no rate yet); off a star, unless a fluid
   * flow from another host crosses their way back (acks_behind_own) */
  bool whole = first >= (double)sh->wire_bytes;
  if (whole && (star_acks_wait(n, r) || (first_ack_waits(n, r) && acks_behind_own(n, r)))) f->ack_w = 0;
  if (first < (double)sh->wire_bytes) {
    if (fi >= n->cap_chunks) {
      n->cap_chunks = MAX(n->cap_flows, 64);
      n->chunks = g_renew(Chunk, n->chunks, n->cap_chunks);
    }
    n->chunks[fi] = (Chunk){.rest = f->remaining - 8 * first, .next = fmax(1, fmin(2 * w, n->ss_window))};
    f->remaining = 8 * first;
    f->chunked = true;
    if (!n->ss_fresh) { /* its connection's next messages wait for its last window to go in (conn_waits) */
      f->big = CHUNK_HOLD;
      n->n_hold++;
      conn_of(n, a, b)->busy++;
    }
    if (first_ack_waits(n, r))
      cs_engine_schedule_at(n->engine, at + (CsTime)(r->out * 1e12 + 0.5), on_first_ack, n, fi);
    else
      cs_engine_schedule_at(n->engine, at + (CsTime)(r->rtt * 1e12 + 0.5) + acks_standing(n, f), on_rest, n, fi);
  }
  return fi;
}

/* A GPU's burst, flow fi of message m on route r, took its turn at its
 * machine's NIC (n->nic_in: when its packets began to come in there, one
 * a packet's time on its GPU's link after another).  The NIC takes
 * packets in the order they come in: those of it that come in before the
 * last packet of a burst from another GPU still coming in go before that
 * one, which ends their time later than its turn said (ties go to the
 * burst sent first).  Two equal bursts from two GPUs at once: the first
 * ends the second's last packet before it, as at packet level, not a
 * whole burst sooner.  The NIC is busy as long either way, so the turns
 * stay, and the flows' tails take the wait (the rails of a hierarchical
 * all-reduce, which set out together, come a packet apart out of their
 * first step and then take turns, as at packet level). */
static G_GNUC_NO_INLINE void nic_interleave(FlowNet *n, const Route *r, uint32_t fi, uint32_t m) {
  NicGroup *g = &n->nic_groups[r->dirs[1]];
  const Shape *sh = &r->shape;
  CsTime in = n->nic_in, last_in = in + sh->q_time[0];
  double full = 8e12 * (double)(n->mss + n->header), nic_bps = (double)n->t->links[r->dirs[1] / 2].spec.bandwidth;
  double last = (double)sh->wire_bytes - (double)(sh->packets - 1) * (double)(n->mss + n->header);
  CsTime p_in = (CsTime)(full / (double)n->t->links[r->dirs[0] / 2].spec.bandwidth + 0.5);
  CsTime p_nic = (CsTime)(full / nic_bps + 0.5), last_out = (CsTime)(8e12 * last / nic_bps + 0.5);
  CsTime early = 0; /* what of the others comes in after its last packet: it goes after it */
  uint32_t kept = 0;
  for (uint32_t i = 0; i < g->n; i++) {
    const NicBurst *b = &g->b[i];
    if (b->last_in <= in) continue; /* all in before it began: gone from the group */
    Flow *a = &n->flows[b->flow];
    if (a->msg == b->msg && a->route && (a->live || a->waiting)) {
      if (last_in < b->last_in) {
        /* it comes in whole before that one's last packet, which waits
         * for it; that one's packets that come in after its last go
         * after it */
        a->tail += sh->q_time[1];
        CsTime k = b->p_in > 0 ? (last_in - b->in) / b->p_in : 0; /* (that one's full ones in by then) */
        CsTime after = (CsTime)b->packets - 1 - MIN(k, (CsTime)b->packets - 1);
        early += b->last_out + after * p_nic;
      } else {
        /* its full packets that come in before that one's last */
        CsTime k = p_in > 0 ? (b->last_in - in - 1) / p_in : 0;
        a->tail += MIN(k, (CsTime)sh->packets - 1) * p_nic;
      }
    }
    g->b[kept++] = *b;
  }
  g->n = kept;
  if (early > 0) {
    /* (its tail is its floor: a small burst that comes in whole within a
     * large one ends no sooner than that one's turn here, where the NIC
     * would send it first) */
    Flow *f = &n->flows[fi];
    f->tail = f->tail > early ? f->tail - early : 0;
  }
  if (g->n < NIC_GROUP)
    g->b[g->n++] = (NicBurst){.flow = fi, .msg = m, .packets = sh->packets, .in = in, .last_in = last_in,
                              .p_in = p_in, .last_out = last_out};
}

/* Route r's train route: its first direction, then its reverse, with its
 * round trip and shape (made once, kept with it). */
static Route *train_of(Route *r) {
  if (!r->train) {
    Route *t = g_malloc0(sizeof(Route) + sizeof(uint32_t) * (1 + r->n_rev));
    *t = *r;
    t->n_fwd = 1;
    t->dirs[0] = r->dirs[0];
    memcpy(t->dirs + 1, r->dirs + r->n_fwd, sizeof(uint32_t) * r->n_rev);
    t->train = NULL;
    t->full = r;
    r->train = t;
  }
  Route *t = r->train;
  t->shape = r->shape; /* (its size's: the tail of every hop) */
  t->rtt = r->rtt, t->out = r->out, t->pt = r->pt, t->ss = r->ss;
  return t;
}

/* The time that the ACKs made on a direction (Passes.acks) take in
 * [at, at + len): each burst's in proportion to the part of its stretch
 * there (a stretch is at least 1 ps: acks_pass); those made by `gone`
 * are dropped. */
static CsTime acks_in(Passes *p, CsTime gone, CsTime at, CsTime len) {
  uint32_t k = 0;
  double t = 0;
  for (uint32_t i = 0; i < p->n_acks; i++) {
    const AckStretch a = p->acks[i];
    if (a.e <= gone) continue;
    p->acks[k++] = a;
    CsTime lo = MAX(at, a.s), hi = MIN(at + len, a.e);
    if (hi > lo) t += (double)a.all * (double)(hi - lo) / (double)(a.e - a.s);
  }
  p->n_acks = k;
  return (CsTime)(t + 0.5);
}

/* Room for `need` (at most PASS_MAX) trains in p's list. */
static void passes_room(Passes *p, uint32_t need) {
  if (need <= p->cap) return;
  uint32_t cap = p->cap ? p->cap : 8;
  while (cap < need) cap *= 2;
  p->cap = MIN(cap, PASS_MAX);
  p->s = g_renew(CsTime, p->s, p->cap);
  p->e = g_renew(CsTime, p->e, p->cap);
}

/* A burst's own turn in its host's queue, from `at` for `len`, among
 * the trains on its first direction: in the first gap from `at` that
 * fits it, or after them; the ones gone by `gone` are dropped (a full
 * list forgets its first). */
static CsTime pass_at(Passes *p, CsTime gone, CsTime at, CsTime len) {
  uint32_t k = 0, i;
  for (i = 0; i < p->n; i++)
    if (p->e[i] > gone) p->s[k] = p->s[i], p->e[k++] = p->e[i];
  p->n = k;
  if (p->n == PASS_MAX) { /* (full: the first is forgotten) */
    p->n--;
    memmove(p->s, p->s + 1, p->n * sizeof p->s[0]);
    memmove(p->e, p->e + 1, p->n * sizeof p->e[0]);
  }
  passes_room(p, p->n + 1);
  for (i = 0; i < p->n; i++) {
    if (p->e[i] <= at) continue;
    if (p->s[i] >= at + len) break; /* a gap before it */
    at = p->e[i];
  }
  memmove(p->s + i + 1, p->s + i, (p->n - i) * sizeof p->s[0]);
  memmove(p->e + i + 1, p->e + i, (p->n - i) * sizeof p->e[0]);
  p->s[i] = at, p->e[i] = at + len;
  p->n++;
  return at;
}

/* A train that comes in to a direction at `at` and takes `len` there,
 * its packets passing as they come in: it takes each gap from `at`
 * between the trains there (a burst's own turn in its host's queue among
 * them) until it has had `len`, and the rest after them.  When its last
 * packet has passed.  (Where more than PASS_MAX would be kept, the first
 * are forgotten.  Taken whole after a full list's last, with the gaps
 * before it left empty, 200 B from each of a ring of 16 hosts to the
 * host 7 further, 8 times 0.3 us apart, ended at 43.6 us, against 13.1
 * us at packet level.) */
static CsTime pass_split(Passes *p, CsTime gone, CsTime at, CsTime len) {
  CsTime s[2 * PASS_MAX + 1], e[2 * PASS_MAX + 1], cur = at, left = len, end = at + len;
  uint32_t m = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    if (p->e[i] <= gone) continue;
    if (left > 0 && p->s[i] > cur) {
      CsTime take = MIN(p->s[i] - cur, left);
      s[m] = cur, e[m++] = cur + take;
      left -= take;
      if (left == 0) end = cur + take;
    }
    s[m] = p->s[i], e[m++] = p->e[i];
    if (p->e[i] > cur) cur = p->e[i];
  }
  if (left > 0) {
    s[m] = cur, e[m++] = cur + left;
    end = cur + left;
  }
  /* (in order: merged where they touch) */
  uint32_t k = 0;
  for (uint32_t i = 0; i < m; i++) {
    if (k > 0 && s[i] <= e[k - 1]) {
      e[k - 1] = MAX(e[k - 1], e[i]);
      continue;
    }
    s[k] = s[i], e[k++] = e[i];
  }
  uint32_t from = k > PASS_MAX ? k - PASS_MAX : 0;
  passes_room(p, k - from);
  p->n = k - from;
  memcpy(p->s, s + from, p->n * sizeof s[0]);
  memcpy(p->e, e + from, p->n * sizeof e[0]);
  return end;
}

/* A burst past a star (FlowNet.trains) leaves its host's link as a fluid
 * flow there, and passes each hop after it as a train of its packets
 * (train t passes hop t->k, the next): its first packet comes in a hop's
 * time and latency after it left the one before, and the train takes its
 * place among the trains there (pass_at) at the line less its ACK loads
 * and the time of the ACKs made there before its last packet comes in
 * (acks_in), its bits counted there; what it waits goes into its tail.
 * At packet level a burst of a few packets holds a hop only while it
 * passes: a fluid flow would hold every hop of its way from its start,
 * and share each with the flows that cross it later or earlier (a ring
 * of hosts, a fat-tree). */
static void train_hop(FlowNet *n, TrainNow *t) {
  const Route *r = t->route;
  uint32_t k = t->k++;
  const CsLinkSpec *prev = &n->t->links[r->dirs[k - 1] / 2].spec;
  t->in += line_ps(t->first, prev->bandwidth) + prev->latency; /* (its first packet in) */
  uint32_t di = r->dirs[k];
  Dir *d = &n->dirs[di];
  /* (the line less its ACK loads: the data there are bursts, whose own
   * turns are in the list, train_send) */
  double free_bps = fmax(d->capacity - d->ack_load, 0.5 * d->capacity);
  CsTime len = MAX((CsTime)(8e12 * t->wire / free_bps + 0.5), 1);
  /* (the ACKs made before its last packet comes in: those after it wait behind it) */
  double last = t->wire - (double)(t->packets - 1) * t->first;
  CsTime acks = acks_in(&n->passes[di], n->pass_gone, t->in, len - line_ps(last, d->capacity));
  len += acks;
  CsTime from = pass_split(&n->passes[di], n->pass_gone, t->in, len) - len;
  /* (ACKs that fit in the gaps the ACKs of the hops before left between
   * its packets hold it up no further; a train that waited here leaves
   * without gaps) */
  t->tail += (acks > t->gaps ? acks - t->gaps : 0) + from - t->in;
  t->gaps = from > t->in ? 0 : MAX(t->gaps, acks);
  t->in = from;
  d->bits_off -= 8.0 * t->wire; /* (dir_bits: its bits there) */
}

/* Burst flow fi on a train route (Route.full), `tail` from its fluid end
 * to delivery, has left its first link now: its train, to pass the hops
 * after it (trains_now, train_hop) from when it began to leave at its
 * line rate there; placed now, when the bursts that the hosts it passes
 * have put into their queues by now are known. */
static G_GNUC_NO_INLINE TrainNow train_ends(FlowNet *n, uint32_t fi, CsTime tail, CsTime now) {
  const Flow *f = &n->flows[fi];
  const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
  TrainNow t = {.flow = fi, .tail = tail, .route = f->route->full, .k = 1, .packets = st->packets};
  t.wire = (double)st->wire_bytes;
  t.first = st->packets > 1 ? (double)(n->mss + n->header) : t.wire;
  CsTime len = line_ps(t.wire, n->t->links[f->route->dirs[0] / 2].spec.bandwidth);
  /* (a train placed from now on comes in to its second hop after its
   * burst began, at most the longest burst's time ago: the trains gone
   * before that are forgotten) */
  n->pass_back = MAX(n->pass_back, len);
  n->pass_gone = now > n->pass_back ? now - n->pass_back : 0;
  t.in = now > len ? now - len : 0;
  return t;
}

/* No flow but bursts' on their first links (train routes) on the `count`
 * directions dirs[], or flows whose first direction is `own` (NONE: none
 * such). */
static bool trains_only(const FlowNet *n, const uint32_t *dirs, uint32_t count, uint32_t own) {
  for (uint32_t k = 0; k < count; k++) {
    const Dir *d = &n->dirs[dirs[k]];
    for (uint32_t u = 0; u < d->n_uses; u++) {
      const Route *o = n->flows[USES(d)[u]].route;
      if (!o->full && o->dirs[0] != own) return false;
    }
  }
  return true;
}

/* flow_send's burst m from src to dst on route r past a star, its turn
 * in its host's queue at `at` behind ACKs for `lag` (out of line): its
 * flow on its first direction, the hops after it as a train. */
static G_GNUC_NO_INLINE uint32_t train_send(FlowNet *n, uint32_t m, uint32_t src, uint32_t dst, Route *r, CsTime at,
                                            CsTime lag, CsDeliverFn fn, void *ctx) {
  /* its turn in its host's queue, among the trains that pass the host */
  pass_at(&n->passes[r->dirs[0]], n->pass_gone, at + lag, r->shape.q_time[0]);
  const Shape *sh = &r->shape;
  /* its ACKs wait in the receiver's queue and pass the trains on their
   * way back, unless a fluid flow crosses that way: they load it as a
   * fluid (a 2 MB message from w1 to w0 beside bursts from w0 to w1
   * every 11.7 us, on a ring of 4: 1.6654 ms with them held, 1.7321 ms
   * at packet level) */
  bool held = sh->ack_w == 0 && r->n_rev > 0 && trains_only(n, r->dirs + r->n_fwd, r->n_rev, NONE);
  if (held) acks_pass(n, r, m, sh->packets, (double)sh->wire_bytes, at + lag + sh->q_time[0] + sh->tail);
  /* a fluid flow (not a burst's on its first link) on a hop after its
   * first, which would not see a train: a flow over all its hops, as
   * before trains, that shares them with it */
  bool alone = trains_only(n, r->dirs + 1, r->n_fwd - 1, NONE);
  uint32_t fi = flow_start(n, m, alone ? train_of(r) : r, n->ecmp, 1, fn, ctx, at > *n->clock ? at : 0);
  n->flows[fi].tail += lag;
  if (!held && sh->ack_w == 0) n->flows[fi].ack_w = sh->ack_fluid;
  if (r->shape.ss_ask) n->flows[fi].ss_w = slow_start(n, fi, src, dst, r, r->shape.packets);
  return m;
}

/* Message m from src to dst on route r (its shape made) goes into its
 * host's queue now: a burst at its turn, a message past init_cwnd window
 * by window, a larger one as a flow. */
static inline __attribute__((always_inline)) void send_now(FlowNet *n, uint32_t m, uint32_t src, uint32_t dst, Route *r,
                                                           CsDeliverFn fn, void *ctx, bool bigs) {
  CsTime now = *n->clock, at = now, lag = 0;
  if (r->shape.q_time[0]) {
    at = fifo_turn(n, r, now, &lag);
    if (bigs) lag += standing_wait(n, r, src, dst); /* (out of line, as the ACKs ahead of it) */
    if (G_UNLIKELY(n->trains)) {
      train_send(n, m, src, dst, r, at, lag, fn, ctx);
      return;
    }
  } else if (G_UNLIKELY(r->shape.chunky)) {
    chunk_send(n, m, src, dst, r, fn, ctx);
    return;
  }
  uint32_t fi;
  if (G_LIKELY(at == now)) {
    fi = flow_start(n, m, r, n->ecmp, 1, fn, ctx, 0);
    if (G_UNLIKELY(lag > 0)) n->flows[fi].tail += lag; /* (behind ACKs alone: at once, its tail that longer) */
  } else {
    fi = flow_waits(n, m, r, fn, ctx, at);
    if (G_UNLIKELY(lag > 0)) n->flows[fi].tail += lag;
  }
  if (G_UNLIKELY(r->shape.q_time[1] > 0)) nic_interleave(n, r, fi, m);
  if (r->shape.ss_ask) n->flows[fi].ss_w = slow_start(n, fi, src, dst, r, r->shape.packets);
  /* (past the host queue's limit, its window not counted: it holds its
   * connection all the same) */
  if (!r->shape.q_time[0] && !n->flows[fi].big && !n->ss_fresh && n->flows[fi].route) conn_hold(n, fi, src, dst);
}

/* A connection's messages in turn.  A persistent TCP connection sends
 * its messages one after the other: a message posted while one before it
 * on the same connection is still leaving its host goes out behind it.
 * Messages within the host queue's limit take their turns in the host's
 * queue already (fifo_turn, chunk_send); one posted behind a message past
 * that limit (Flow.big) waits here until that message's fluid end, when
 * its last bit has left (big_sent), and then goes as if posted then (its
 * messages.csv start stays when it was posted).  At flow fidelity before,
 * it shared the link with the large one: 1,500 B posted on w1's
 * connection to w4 while 6.25 MB went that way, on a ring of 8 hosts, took
 * 11 us against the packet run's 9.4 ms. */
static void on_conn_free(CsEngine *e, void *ctx, uint64_t ci);

static G_GNUC_NO_INLINE bool conn_waits(FlowNet *n, uint32_t m, uint32_t src, uint32_t dst, Route *r, uint64_t payload,
                                        CsDeliverFn fn, void *ctx) {
  SsConn *c = conn_of(n, src, dst);
  /* (none ahead of it: at free_at those that waited go first, at their
   * event of this instant, which may come after this send's) */
  if (c->busy == 0 && c->head == NONE && *n->clock >= c->free_at) return false;
  if (c->busy == 0 && c->head == NONE) cs_engine_schedule_at(n->engine, c->free_at, on_conn_free, n, (uint64_t)(c - n->conns));
  uint32_t k;
  CS_POOL_TAKE(n->later, n->n_later, n->cap_later, n->free_later, next, 16, k);
  n->later[k] = (Later){r, payload, fn, ctx, m, src, dst, NONE};
  if (c->tail != NONE) n->later[c->tail].next = k;
  else c->head = k;
  c->tail = k;
  return true;
}

/* Waiting message l goes by the way of its connection's message before
 * it, delivered at `dlv`: it comes in behind that one's last packet, not
 * before it with a lone message's shorter tail (200 B behind 1 MB ended
 * 0.6 us before it; now 835.608 us, the packet run's). */
static G_GNUC_NO_INLINE void floor_behind(FlowNet *n, const Later *l, CsTime dlv) {
  uint64_t pk = (l->payload + n->mss - 1) / n->mss;
  double last = (double)(l->payload - (pk ? pk - 1 : 0) * n->mss + n->header);
  CsTime *floor = g_new(CsTime, 1);
  *floor = dlv + line_ps(last, n->t->links[l->route->dirs[0] / 2].spec.bandwidth);
  if (!n->floors) n->floors = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  g_hash_table_insert(n->floors, GUINT_TO_POINTER(l->m + 1), floor);
}

/* Connection ci's messages that waited (conn_waits) go, in turn, until
 * one of them is past the host queue's limit in its turn. */
static void on_conn_free(CsEngine *e, void *ctx, uint64_t ci) {
  (void)e;
  FlowNet *n = ctx;
  n->in_handler++;
  while (n->conns[ci].busy == 0 && n->conns[ci].head != NONE && *n->clock >= n->conns[ci].free_at) {
    SsConn *c = &n->conns[ci];
    uint32_t k = c->head;
    Later l = n->later[k];
    c->head = l.next;
    if (c->head == NONE) c->tail = NONE;
    n->later[k].route = NULL; /* (free: flow_run_ends, kept_audit) */
    CS_POOL_PUT(n->later, n->free_later, next, k);
    if (l.route->shape.payload != l.payload) shape_of(n, l.route, l.payload);
    if (c->dlv_at > *n->clock && c->dlv_route == l.route) floor_behind(n, &l, c->dlv_at);
    send_now(n, l.m, l.src, l.dst, l.route, l.fn, l.ctx, n->n_big > 0);
  }
  refill_after(n);
  flush_plans(n);
}

/* flow_send's message m while flows past the host queue's limit are live:
 * in turn behind its connection's (conn_waits), behind the queues they
 * keep standing (standing_wait). */
static G_GNUC_NO_INLINE void send_beside_big(FlowNet *n, uint32_t m, uint32_t src, uint32_t dst, Route *r,
                                             uint64_t payload, CsDeliverFn fn, void *ctx) {
  if (!n->ss_fresh && conn_waits(n, m, src, dst, r, payload, fn, ctx)) return;
  send_now(n, m, src, dst, r, fn, ctx, n->n_big > 0);
}

/* Flow f lets go of its connection at `at`: what is posted before then
 * waits its turn too (conn_waits), and what waits goes then (on_conn_free). */
static void conn_frees(FlowNet *n, const Flow *f, CsTime at) {
  const CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
  SsConn *c = conn_of(n, st->src, st->dst);
  g_assert(c->busy > 0);
  c->free_at = MAX(c->free_at, at);
  if (--c->busy == 0 && c->head != NONE) cs_engine_schedule_at(n->engine, c->free_at, on_conn_free, n, (uint64_t)(c - n->conns));
}

/* Flow f's hold on its connection (CHUNK_HOLD: its last window has gone
 * into its host's queue; BIG_HOLD: its last bit has left) ends at `at`,
 * or it is given up on. */
static void hold_ends(FlowNet *n, Flow *f, CsTime at) {
  f->big = 0;
  n->n_hold--;
  conn_frees(n, f, at);
}

/* Flow f, past its host queue's limit, has left its host `later` after
 * `now` (its fluid end, and slow start's waits; or given up on). */
static void big_sent(FlowNet *n, Flow *f, CsTime now, CsTime later) {
  f->big = BIG_SENT;
  conn_frees(n, f, now + later);
}

static uint32_t flow_send(void *impl, uint32_t src, uint32_t dst, uint64_t payload, CsDeliverFn fn, void *ctx) {
  FlowNet *n = impl;
  g_assert(src != dst && src < n->t->n_hosts && dst < n->t->n_hosts && payload > 0);
  if (G_UNLIKELY(n->spray > 1)) return spray_send(n, src, dst, payload, fn, ctx);
  uint32_t m = cs_stats_add(&n->stats);
  /* the packet network's ECMP hash, when a route depends on it */
  Route *r = route_of(n, src, dst, m);
  if (r->shape.payload != payload) shape_of(n, r, payload); /* a collective sends one size again and again */
  message_begins(n, m, src, dst, payload, r->shape.wire_bytes, r->shape.packets);
  if (G_UNLIKELY(n->n_big | n->n_hold)) send_beside_big(n, m, src, dst, r, payload, fn, ctx);
  else send_now(n, m, src, dst, r, fn, ctx, false);
  return m;
}

/* ecmp-packet: message m's bits as flows over its n->spray paths, drawn
 * with the packet network's hashes (its k-th path: stream "flow", m x
 * paths + k), each an equal part of its bits and of its window's cap; its
 * tail, that of the whole message on the path (the store-and-forward of
 * its last packet, and the latencies).  A path that loses every packet
 * carries none of it: the packet network sends what it lost there again
 * on the others (each transmission draws its path), so its part goes to
 * the paths that deliver; a message none of whose paths delivers is given
 * up on, as the packet network would. */
static uint32_t spray_send(FlowNet *n, uint32_t src, uint32_t dst, uint64_t payload, CsDeliverFn fn, void *ctx) {
  uint32_t m = cs_stats_add(&n->stats), si, k = n->spray;
  Route **routes = g_newa(Route *, k);
  uint32_t live = 0, packets = 0;
  double wire = 0;
  for (uint32_t j = 0; j < k; j++) {
    routes[j] = route_draw(n, src, dst, cs_rng_stream_id("flow", n->cfg->seed, (uint64_t)m * k + j), true, NULL);
    shape_of(n, routes[j], payload);
    packets = routes[j]->shape.packets; /* the same on every path */
    if (routes[j]->keep > 0) live++, wire += (double)routes[j]->shape.wire_bytes;
  }
  /* wire bytes: the mean over the paths that deliver */
  message_begins(n, m, src, dst, payload, live ? (uint64_t)llround(wire / live) : 0, packets);
  CS_POOL_TAKE(n->sprays, n->n_sprays, n->cap_sprays, n->free_spray, next_free, 16, si);
  n->sprays[si] = (Spray){fn, ctx, live ? live : 1, CS_POOL_NONE, false};
  for (uint32_t j = 0; j < k; j++) {
    if (live && routes[j]->keep <= 0) {
      route_drop(n, routes[j]);
      continue;
    }
    flow_start(n, m, routes[j], true, live ? live : 1, spray_part, (void *)(uintptr_t)si, 0);
    if (!live) { /* no path delivers: the message is given up on with its first flow */
      for (uint32_t i = j + 1; i < k; i++) route_drop(n, routes[i]);
      break;
    }
  }
  return m;
}

static void flow_tag(void *impl, uint32_t msg, uint32_t iteration, uint32_t step) {
  FlowNet *n = impl;
  CsMessageStats *st = cs_stats_at(&n->stats, msg);
  st->iteration = iteration;
  st->step = step;
}
static uint32_t flow_messages(const void *impl) { return ((const FlowNet *)impl)->stats.n; }
static const CsMessageStats *flow_message(const void *impl, uint32_t msg) {
  return cs_stats_at(&((const FlowNet *)impl)->stats, msg);
}
static uint32_t flow_first_message(const void *impl) { return ((const FlowNet *)impl)->stats.base; }
static void flow_set_retire(void *impl, CsRetireFn fn, void *ctx) {
  FlowNet *n = impl;
  n->stats.retire = fn, n->stats.ctx = ctx;
}
/* (what an early message had left, still crossing its links, keeps the run going: blocks_ghost) */
static uint32_t flow_active(const void *impl) { return ((const FlowNet *)impl)->active + ((const FlowNet *)impl)->n_ghosts; }
static uint32_t flow_failed(const void *impl) { return ((const FlowNet *)impl)->failed; }
static void flow_set_idle(void *impl, CsIdleFn fn, void *ctx) {
  FlowNet *n = impl;
  n->idle = fn, n->idle_ctx = ctx;
}

/* What a message of `whole` wire bytes has put on its first link when
 * `bits_left` of its bits are still to leave it (its flows carry whole x
 * 8 bits in all, retransmissions included: shape_of). */
static uint64_t wire_sent(uint64_t whole, double bits_left) {
  double b = (double)whole - bits_left / 8;
  return b <= 0 ? 0 : b >= (double)whole ? whole : (uint64_t)llround(b);
}

/* The run is over: a message still in progress reports the wire bytes
 * its flows have put on their first links (what links.csv counts), not
 * the whole message's set when it began.  A flow past its first link
 * (in its tail) has sent everything; a sprayed message's flows add up. */
static void flow_run_ends(void *impl) {
  FlowNet *n = impl;
  n->ended = true;
  if (n->active == 0) return;
  CsTime now = *n->clock;
  double *spray_left = n->n_sprays ? g_new0(double, n->n_sprays) : NULL;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < n->n_flows; i++) {
      const Flow *f = &n->flows[i];
      if ((!f->live && !f->waiting) || f->msg >= GHOST) continue; /* (background, and what early messages had left) */
      /* settle_flow's sum, without changing the flow (one waiting for its
       * turn has sent nothing: its rate is 0) */
      double left = fmax(0, f->remaining - f->rate * (double)(now - f->updated) * 1e-12);
      if (f->chunked) { /* (the rest of its message, not begun) */
        const Chunk *ch = &n->chunks[i];
        left += ch->rest;
        for (uint32_t k = 0; k < ch->n; k++) left += ch->bits[k];
      }
      CsMessageStats *st = cs_stats_at(&n->stats, f->msg);
      if (f->fn != spray_part) {
        if (pass == 0) st->wire_bytes = wire_sent(st->wire_bytes, left);
      } else if (pass == 0) {
        spray_left[(uintptr_t)f->ctx] += left;
      } else if (spray_left[(uintptr_t)f->ctx] >= 0) { /* its message's first flow: once */
        st->wire_bytes = wire_sent(st->wire_bytes, spray_left[(uintptr_t)f->ctx]);
        spray_left[(uintptr_t)f->ctx] = -1;
      }
    }
  g_free(spray_left);
  for (uint32_t k = 0; k < n->n_later; k++) /* (waiting on their connections: nothing sent) */
    if (n->later[k].route) cs_stats_at(&n->stats, n->later[k].m)->wire_bytes = 0;
}

/* Background sources: flows at their rate (the reader admits cbr only in
 * this fidelity), from start until stopped; no ACKs. */
static void flow_start_bg(void *impl) {
  FlowNet *n = impl;
  if (n->cfg->n_background == 0) return;
  n->bg_running = true;
  n->bg_flow = g_new(uint32_t, n->cfg->n_background);
  for (uint32_t i = 0; i < n->cfg->n_background; i++) {
    const CsBackgroundSpec *b = &n->cfg->background[i];
    uint32_t fi = new_flow(n);
    n->bg_flow[i] = fi;
    Flow *f = &n->flows[fi];
    uint32_t a = (uint32_t)n->t->nodes[cs_topology_find(n->t, b->src)].host;
    uint32_t c = (uint32_t)n->t->nodes[cs_topology_find(n->t, b->dst)].host;
    f->route = route_draw(n, a, c, cs_rng_stream_id("background-flow", n->cfg->seed, i), false, NULL);
    f->own_route = true;
    f->cap = (double)b->rate;
    f->updated = *n->clock;
    go_live(n, fi);
    mark_dirty(n, fi);
  }
}

static void flow_stop_bg(void *impl) {
  FlowNet *n = impl;
  if (!n->bg_running) return;
  n->bg_running = false;
  for (uint32_t i = 0; i < n->cfg->n_background; i++) {
    uint32_t fi = n->bg_flow[i];
    if (!n->flows[fi].live) continue;
    flow_leaves(n, fi);
    flow_release(n, fi);
  }
}

/* The bits direction di has carried: its loads' (dir_bits), and on a star
 * the held ACKs' it has carried (Turns' acks_out, and acks_back of its
 * other direction: the ACKs back to the host its other leaves from). */
static double held_bits(const FlowNet *n, uint32_t di, CsTime now) {
  return dir_bits(&n->dirs[di], now) + n->ack_bits * (n->turns[di].acks_out + n->turns[di ^ 1].acks_back);
}

static CsLinkStats flow_link_stats(void *impl, uint32_t link, int dir) {
  FlowNet *n = impl;
  const Dir *d = &n->dirs[2 * link + (uint32_t)dir];
  double bits = pos(held_bits(n, 2 * link + (uint32_t)dir, *n->clock));
  CsLinkStats st = {0};
  st.bytes = (uint64_t)llround(bits / 8);
  st.busy = (CsTime)llround(bits / d->capacity * 1e12);
  return st;
}

static void flow_sample(void *impl, CsTime t0, CsLinkSampleFn fn, void *ctx) {
  FlowNet *n = impl;
  CsTime now = *n->clock;
  for (uint32_t l = 0; l < n->t->n_links; l++)
    for (int dir = 0; dir < 2; dir++) {
      const Dir *d = &n->dirs[2 * l + (uint32_t)dir];
      DirFill *x = &n->fills[2 * l + (uint32_t)dir];
      /* a row per interval in which the direction carried a byte, as the
       * packet network's rows; what is short of a byte (a light ACK load
       * in a short interval, or a rounding) waits for the next interval,
       * so that the rows add up to what the direction carried */
      double bits = held_bits(n, 2 * l + (uint32_t)dir, now) - x->sample_bits;
      /* and what is past the line's capacity over the interval: held ACKs
       * are counted when their burst is delivered, all at once, and a
       * fluid at the line rate left them no room in its row (at packet
       * level they took the line's time then; an 8-host ring's
       * halving-doubling put 1.07 times the line into a row); the last
       * row takes what is left */
      if (!n->ended) bits = fmin(bits, d->capacity * (double)(now - t0) * 1e-12);
      uint64_t bytes = bits >= 4 ? (uint64_t)llround(bits / 8) : 0;
      if (bytes == 0) continue;
      x->sample_bits += 8.0 * (double)bytes;
      CsLinkSample s = {0};
      s.bytes = bytes;
      s.utilization = now > t0 ? fmin(1.0, 8.0 * (double)bytes / d->capacity / ((double)(now - t0) * 1e-12)) : 0;
      fn(ctx, l, dir, &s);
    }
}

/* links carry something between events: messages, or background sources */
static bool flow_busy(const void *impl) {
  const FlowNet *n = impl;
  return n->active > 0 || n->n_ghosts > 0 || n->bg_running;
}

static CsNetTotals flow_totals(const void *impl) {
  const FlowNet *n = impl;
  CsNetTotals t = {0}; /* no packets: the run reports them as not modelled */
  t.refills = n->n_fills, t.refill_flows = n->n_fill_flows;
  return t;
}

/* Every message is delivered or counted active; no direction carries more
 * than its capacity (its ACK load may lag by the slack). */
static bool flow_accounting(const void *impl, GError **error) {
  const FlowNet *n = impl;
  uint32_t active = 0;
  for (uint32_t m = n->stats.base; m < n->stats.n; m++) {
    const CsMessageStats *st = cs_stats_at(&n->stats, m);
    active += !st->delivered && !st->failed;
  }
  if (active != n->active) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                "internal error: %u messages unfinished, %u counted active (please report this as a bug)", active,
                n->active);
    return false;
  }
  for (uint32_t d = 0; d < 2 * n->t->n_links; d++) {
    const Dir *x = &n->dirs[d];
    if (x->data_rate + x->ack_load > x->capacity * (1 + 2 * ACK_SLACK) + 1) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                  "internal error: link direction %u carries %.6g bit/s over its %.6g (please report this as a bug)", d,
                  x->data_rate + x->ack_load, x->capacity);
      return false;
    }
  }
  return true;
}

/* The drawn routes' counts are their holders: the flows on them and,
 * with ECMP, the hosts' last routes; every route a flow holds is kept
 * (found by its address, not read, should it have been freed), and the
 * idle ones are those counted. */
static bool kept_audit(FlowNet *n, GError **error) {
  GHashTable *held = g_hash_table_new(g_direct_hash, g_direct_equal); /* route -> 1 + its holders */
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, n->kept);
  while (g_hash_table_iter_next(&it, &key, NULL)) g_hash_table_insert(held, key, GUINT_TO_POINTER(1));
  const char *lost = NULL;
  uint32_t lost_msg = NONE;
  for (uint32_t i = 0; i < n->n_flows + (n->ecmp ? n->t->n_hosts : 0) && !lost; i++) {
    bool flow = i < n->n_flows;
    Route *r = flow ? (n->flows[i].own_route ? n->flows[i].route : NULL) : n->last_route[i - n->n_flows];
    if (!r) continue;
    if (r->full) r = r->full; /* (a burst's train route: its own's hold) */
    value = g_hash_table_lookup(held, r);
    if (value) g_hash_table_insert(held, r, GUINT_TO_POINTER(GPOINTER_TO_UINT(value) + 1));
    else lost = flow ? "a flow's" : "a host's last", lost_msg = flow ? n->flows[i].msg : NONE;
  }
  for (uint32_t i = 0; i < n->n_later && !lost && n->ecmp; i++) { /* (messages waiting on their connections) */
    Route *r = n->later[i].route;
    if (!r) continue;
    value = g_hash_table_lookup(held, r);
    if (value) g_hash_table_insert(held, r, GUINT_TO_POINTER(GPOINTER_TO_UINT(value) + 1));
    else lost = "a waiting message's", lost_msg = n->later[i].m;
  }
  uint32_t idle = 0, refs = 0, holders = 0;
  bool off = false;
  g_hash_table_iter_init(&it, held);
  while (!lost && !off && g_hash_table_iter_next(&it, &key, &value)) {
    const Route *r = key;
    refs = r->refs, holders = GPOINTER_TO_UINT(value) - 1;
    off = refs != holders;
    idle += refs == 0;
  }
  g_hash_table_destroy(held);
  if (lost) {
    char who[64] = "";
    if (lost_msg != NONE) g_snprintf(who, sizeof who, " (message %u)", lost_msg);
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                "internal error: at %.12f s %s drawn route%s is no longer kept (please report this as a bug)",
                (double)*n->clock * 1e-12, lost, who);
    return false;
  }
  if (off) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                "internal error: at %.12f s a drawn route counts %u holders where %u hold it (please report this as "
                "a bug)",
                (double)*n->clock * 1e-12, refs, holders);
    return false;
  }
  if (idle != n->kept_idle) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                "internal error: at %.12f s %u drawn routes are idle where %u are counted (please report this as a bug)",
                (double)*n->clock * 1e-12, idle, n->kept_idle);
    return false;
  }
  return true;
}

/* Between refills the rates are max-min fair, within the ACK loads' slack
 * (`--check`): every live flow runs at its own cap, or crosses a full
 * direction where no flow runs faster (Bertsekas and Gallager's
 * bottleneck); the directions within their capacities is
 * flow_accounting's.  It reads every live flow: at every call (the hook
 * calls it every 1024 events) while 256 messages or fewer are in flight,
 * else once per a quarter as many calls as there are; so does
 * kept_audit. */
static bool flow_state(const void *impl, GError **error) {
  FlowNet *n = (FlowNet *)impl; /* (its count of calls only) */
  if (n->refill_pending || n->n_dirty) return true; /* rates in the making at this instant */
  if (n->active > 256 && ++n->state_calls < n->active / 4) return true;
  n->state_calls = 0;
  if (!kept_audit(n, error)) return false;
  /* each drop of the idle routes takes half the table at least
   * (route_drop) */
  if (n->kept_thin > 0) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                "internal error: at %.12f s the idle routes were dropped %u times while fewer than the held ones "
                "(please report this as a bug)",
                (double)*n->clock * 1e-12, n->kept_thin);
    return false;
  }
  /* each compaction of the ends drops more than 1,024 entries (past
   * twice those in force and 1,024 more, it keeps at most those in
   * force): fewer than one per 1,024 put, or ends_check's bound misses
   * some in force, and each end placed pays a pass over them all */
  if (n->ends_compacted * 1024 > n->ends_put) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                "internal error: at %.12f s the fluid ends were compacted %" G_GUINT64_FORMAT " times for %" G_GUINT64_FORMAT
                " put: some in force are not counted (please report this as a bug)",
                (double)*n->clock * 1e-12, n->ends_compacted, n->ends_put);
    return false;
  }
  for (uint32_t fi = 0; fi < n->n_flows; fi++) {
    const Flow *f = &n->flows[fi];
    if (!f->route || !f->live || f->cap <= 0 || f->rate >= f->cap * (1 - 1e-9)) continue;
    bool bound = false;
    for (uint32_t k = 0; k < f->route->n_fwd && !bound; k++) {
      const Dir *d = &n->dirs[f->route->dirs[k]];
      bound = dir_tight(d) && f->rate >= binding_floor(n, d);
    }
    if (!bound) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                  "internal error: at %.12f s the flow of %s %u runs at %.9g bit/s, below its cap and with no full "
                  "link direction where it runs fastest: not a max-min share (please report this as a bug)",
                  (double)*n->clock * 1e-12, f->msg == NONE ? "a background source, flow" : "message",
                  f->msg == NONE ? fi : f->msg, f->rate);
      return false;
    }
  }
  return true;
}

static void flow_free(void *impl) {
  FlowNet *n = impl;
  if (!n) return;
  for (uint32_t d = 0; d < 2 * n->t->n_links; d++)
    if (n->dirs[d].cap_uses) g_free(n->dirs[d].uses.out);
  g_hash_table_destroy(n->routes);
  g_hash_table_destroy(n->kept); /* with the drawn routes flows still hold */
  g_free(n->probe);
  g_free(n->last_dst);
  g_free(n->last_route);
  g_aligned_free(n->dirs);
  g_free(n->fills);
  g_free(n->flows);
  cs_stats_free(&n->stats);
  g_free(n->ends);
  CS_RING_FREE(n->ends_run);
  g_free(n->dlv);
  CS_RING_FREE(n->dlv_run);
  g_free(n->bg_flow);
  g_free(n->dirty);
  g_free(n->stack);
  g_free(n->round);
  g_free(n->forced);
  g_free(n->comp);
  g_free(n->comp_rates);
  g_free(n->comp_dirs);
  g_free(n->alone);
  g_free(n->heap);
  g_free(n->capped);
  g_free(n->ports);
  g_free(n->sprays);
  g_free(n->conns);
  g_hash_table_destroy(n->conn_ids);
  g_free(n->conn_dst);
  g_free(n->conn_at);
  g_free(n->turns);
  g_free(n->blocks_dirs);
  g_free(n->bends);
  if (n->passes)
    for (uint32_t d = 0; d < 2 * n->t->n_links + 1; d++) g_free(n->passes[d].s), g_free(n->passes[d].e);
  g_free(n->passes);
  g_free(n->trains_now);
  g_free(n->next_hops);
  g_free(n->nic_groups);
  g_free(n->chunks);
  g_free(n->ss_q);
  g_free(n->ss_pend);
  g_free(n->later);
  if (n->floors) g_hash_table_destroy(n->floors);
  g_free(n->hq_dir);
  g_free(n);
}

void *cs_flow_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r);
void *cs_flow_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r) {
  FlowNet *n = g_new0(FlowNet, 1);
  n->engine = engine;
  n->clock = cs_engine_clock(engine);
  n->cfg = config;
  n->t = t;
  n->r = r;
  n->ecmp = cs_routes_mode(r) != CS_ROUTING_SHORTEST;
  n->spray = cs_routes_mode(r) == CS_ROUTING_ECMP_PACKET ? CS_ECMP_PACKET_PATHS : 1;
  n->free_spray = CS_POOL_NONE;
  const CsTransportSpec *tr = &n->cfg->transport;
  n->mtu = (uint64_t)tr->mtu;
  n->header = (uint64_t)tr->header;
  n->mss = n->mtu - n->header;
  n->ack = (uint64_t)tr->ack;
  n->ack_bits = 8.0 * (double)n->ack;
  n->dirs = g_aligned_alloc0(2 * (size_t)t->n_links + 1, sizeof(Dir), _Alignof(Dir));
  n->fills = g_new0(DirFill, 2 * (size_t)t->n_links + 1);
  for (uint32_t l = 0; l < t->n_links; l++)
    n->dirs[2 * l].capacity = n->dirs[2 * l + 1].capacity = (double)t->links[l].spec.bandwidth;
  n->routes = g_hash_table_new_full(cs_int64_hash, g_int64_equal, g_free, route_free);
  n->kept = g_hash_table_new_full(route_hash, route_equal, route_free, NULL);
  n->probe = g_malloc0(sizeof(Route) + sizeof(uint32_t) * 2 * ((size_t)t->n_nodes + 1));
  n->last_dst = g_new(uint32_t, t->n_hosts + 1);
  for (uint32_t h = 0; h <= t->n_hosts; h++) n->last_dst[h] = NONE;
  n->last_route = g_new0(Route *, t->n_hosts + 1);
  n->ports = g_new(uint32_t, t->n_nodes + 1);
  n->free_flow = CS_POOL_NONE;
  n->free_later = CS_POOL_NONE;
  n->next_at = CS_TIME_MAX;
  n->dlv_at = CS_TIME_MAX;
  /* slow start: the protocols whose window grows from init_cwnd by the
   * ACKs (reno, cubic, dctcp), and bbr's start-up (a rate-based
   * algorithm's window: not roce's, nor fixed windows, nor ecmp-packet's
   * sprays); a window is restarted after an idle time where the packet
   * transport restarts it (not bbr's, as in Linux) */
  const CsCcOps *cc = cs_protocols[tr->protocol].ops;
  bool window_cc = cc->cong_avoid != NULL, rate_cc = cc->rate;
  n->ss_window = tr->window_bytes ? (double)tr->window / (double)tr->mtu : (double)tr->window;
  n->ss_init = (double)tr->init_cwnd;
  n->ss = (window_cc || rate_cc) && n->spray == 1 && n->ss_init < n->ss_window;
  n->ss_fresh = tr->connections == CS_CONN_PER_MESSAGE;
  n->ss_restart = tr->idle_restart && window_cc && !cc->rate;
  n->ss_ecmp = n->ss && n->ecmp && !n->ss_fresh;
  n->ss_min_rto = tr->min_rto;
  n->conn_ids = g_hash_table_new_full(cs_int64_hash, g_int64_equal, g_free, NULL);
  n->conn_dst = g_new(uint32_t, t->n_hosts + 1);
  for (uint32_t h = 0; h <= t->n_hosts; h++) n->conn_dst[h] = NONE;
  n->conn_at = g_new0(uint32_t, t->n_hosts + 1);
  /* a host's queue in turn: a message within the window its connection
   * starts with (init_cwnd; a fixed window; roce's queue pairs have none;
   * bbr paces, no message), or window by window past it where the window
   * grows by the ACKs (reno, cubic, dctcp) */
  n->fifo = n->spray == 1;
  n->gpus = t->gpus_per_host > 1;
  uint32_t machines = t->gpus_per_host > 1 ? t->n_workers / t->gpus_per_host : 0;
  n->acks_wait = t->n_nodes == t->n_hosts + 1 + machines; /* one switch (and machines' own): a star (burst_acks) */
  n->burst_pkts = cs_transport_burst_packets(tr);
  n->turns = g_new0(Turns, 2 * (size_t)t->n_links + 1);
  n->hq_dir = g_new0(uint8_t, 2 * (size_t)t->n_links + 1);
  n->blocks = tr->host_queue != 0 && window_cc && !rate_cc; /* (host_queue < 0: 100 us of the link; bbr paces) */
  n->trains = n->late = n->fifo && !n->acks_wait && !n->gpus;
  if (n->trains) n->passes = g_new0(Passes, 2 * (size_t)t->n_links + 1);
  if (n->gpus) n->nic_groups = g_new0(NicGroup, 2 * (size_t)t->n_links + 1);
  n->chunking = n->fifo && window_cc && !rate_cc && isfinite(n->burst_pkts);
  return n;
}

const CsFabricOps cs_flow_fabric_ops = {
    .send = flow_send,
    .tag = flow_tag,
    .messages = flow_messages,
    .message = flow_message,
    .active = flow_active,
    .failed = flow_failed,
    .set_idle = flow_set_idle,
    .start_background = flow_start_bg,
    .stop_background = flow_stop_bg,
    .link_stats = flow_link_stats,
    .sample_links = flow_sample,
    .busy = flow_busy,
    .totals = flow_totals,
    .check_accounting = flow_accounting,
    .check_state = flow_state,
    .set_packet_trace = NULL,
    .set_retire = flow_set_retire,
    .first_message = flow_first_message,
    .run_ends = flow_run_ends,
    .free = flow_free,
};
