/* closed_form.h - a collective operation's cost on the real routes, with
 * no simulation: the machinery `commsim model` uses, and the hooks a
 * collective's file fills in (CsCollectiveDef.model and .schedule).
 *
 * A collective is a sequence of rounds; in each some messages travel at
 * once.  A round takes the time its busiest link direction needs for what
 * crosses it - data, and the ACKs of the messages going the other way -
 * plus the latency terms of its slowest path, when the messages reach
 * the links they share at once:
 *
 *   round = max over link directions d of 8 load(d) / B(d)
 *         + max over messages of (the path's latencies
 *                                 + one last packet's store-and-forward at each other hop)
 *
 * In general a direction takes in each message's data when it can be
 * there (the latency terms before it) and shares its rate evenly among
 * those that have come and are not done (processor sharing; its ACKs
 * take their part): a message ends when it is done at each direction on
 * its way plus the latency terms after it, and a round with its last
 * message.  So an incast's far messages' latencies pass while the near
 * ones are sent.  All this on the routes the simulation uses (ECMP: a
 * path per message, a round the mean over up to 16 draws of them, or
 * past 2^20 directions crossed spread evenly over the equal-cost next
 * hops; a round at least as long as a message's wire bytes on its path's
 * slowest link, since one message takes one path).  A collective's `model` hook evaluates its rounds
 * (cs_model_round), records them for the report (cs_model_record), and
 * gives each pair of participants the time of its messages
 * (cs_model_pair); the simulation's own steps (cs_coll_plan_new) are then
 * replayed with those times - same order, same codec work between steps,
 * the same rendezvous rounds.  A collective whose workers do not move in
 * lock step (ps) gives a `schedule` instead: each worker's result time
 * from each worker's start.
 *
 * Layer 4 (collectives; docs/design.md). Owns the closed-form rounds and
 * their replay; does not touch the simulation.
 */
#ifndef COMMSIM_CLOSED_FORM_H
#define COMMSIM_CLOSED_FORM_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/collective.h"
#include "commsim/net.h"
#include "commsim/routing.h"
#include "commsim/topology.h"

/* One kind of round of a collective, as the report shows it. */
typedef struct {
  char *label;         /* "reduce-scatter / all-gather step", "push to ps0", ... */
  uint32_t count;      /* how many such rounds one operation has */
  uint32_t messages;   /* messages in flight at once in it */
  double seconds;      /* one round */
  double bound_s;      /* its busiest link direction's bytes over its bandwidth */
  double latency_s;    /* seconds - bound_s: its slowest path's latency and store-and-forward terms, less what
                        * passes while the busiest direction sends (an incast's far messages') */
  uint32_t link;       /* the busiest link direction */
  int dir;
  double bound_bytes;  /* bytes crossing it in the round (data and ACKs) */
} CsModelStep;

/* A message of a round: between two nodes, `payload` bytes. */
typedef struct {
  uint32_t src, dst;
  uint64_t payload;
} CsModelMsg;

/* The network as the closed form sees it: routes, packet sizes, and what
 * the rounds so far have crossed. */
typedef struct CsModelCtx CsModelCtx;
CsModelCtx *cs_model_ctx_new(const CsTransportSpec *tr, CsRouting routing, const CsTopology *t, const CsRoutes *r);
void cs_model_ctx_free(CsModelCtx *c);
/* The mean hops of the messages evaluated, and per link direction (2 *
 * link + dir) whether any crossed it (owned by the context). */
double cs_model_ctx_hops_mean(const CsModelCtx *c);
const uint8_t *cs_model_ctx_dirs_used(const CsModelCtx *c);

/* One operation of a collective on `spec`'s elements, for its file's hooks. */
struct CsModelOp {
  CsModelCtx *ctx;
  const CsCollectiveDef *def;
  CsCollSpec spec;
  GArray *steps;      /* CsModelStep: when not NULL, rounds are recorded here */
  CsModelMsg *msgs;   /* room for every participant's message to every other's */
  double *each;       /* as many: each message's own time in a round (cs_model_round_each) */
  GHashTable *pair_s; /* (src << 32 | dst) participant -> the time of each message between them */
  void *state;        /* the collective's own (freed with g_free) */
  double codec_s;     /* a worker's codec work in the operation; the model hook may set it, else (-1) from the plan */
  uint32_t rounds;    /* rounds evaluated so far (cs_model_pair: which one a pair's messages were in) */
  struct CsModelSend *sends; /* per participant: its last cs_model_pair as a sender, then per participant its last
                              * as a receiver (closed_form.c) */
};

/* A round: its messages evaluated together on the routes. */
CsModelStep cs_model_round(CsModelOp *op, const CsModelMsg *msgs, uint32_t n);
/* The same, and each message's own time in it into each[i]: the busiest
 * link direction on its own way (with the round's load) and its own
 * latency terms, at most the round's time (a message of a short path, or
 * away from the busiest link, is not charged the round's slowest). */
CsModelStep cs_model_round_each(CsModelOp *op, const CsModelMsg *msgs, uint32_t n, double *each);
/* The same, and into turns[i] each message's time in a round repeated
 * step after step whose messages that the transport puts whole into
 * their hosts' queues (bursts, cs_model_burst_s) take turns where they
 * share one (a machine's GPUs at its NIC): once the steps have drifted
 * apart, a burst's step takes the longer of its way's busiest direction
 * with the round's load and its own time alone (the others' turns pass
 * during its latency); the other messages' as in each[]. */
CsModelStep cs_model_round_turns(CsModelOp *op, const CsModelMsg *msgs, uint32_t n, double *each, double *turns);
/* A round whose message i starts at start[i] (seconds, >= 0), not all
 * at once: each one's end into end[i], from the round's 0, its data
 * coming into each direction on its way as it reaches it. */
CsModelStep cs_model_round_from(CsModelOp *op, const CsModelMsg *msgs, uint32_t n, const double *start, double *end);
/* Record a round for the report (its label copied), `count` times per operation. */
void cs_model_record(CsModelOp *op, CsModelStep st, const char *label, uint32_t count);
/* Participants a -> b: each of their messages of `payload` bytes takes
 * `seconds` in the replay, and what slow start adds to it on their
 * connection (TCP's window growth: the first messages of a connection
 * past init_cwnd packets wait for ACKs). */
void cs_model_pair(CsModelOp *op, uint32_t a, uint32_t b, double seconds, uint64_t payload);
/* Participant p's node (workers by rank, then servers). */
static inline uint32_t cs_model_node(const CsModelOp *op, uint32_t p) {
  return p < op->spec.n_workers ? op->spec.workers[p] : op->spec.servers[p - op->spec.n_workers];
}
/* Participant p's node's name. */
const char *cs_model_node_name(const CsModelOp *op, uint32_t p);
/* The topology the model runs on. */
const CsTopology *cs_model_topology(const CsModelOp *op);
/* Whether it is a star: one switch and a link a host. */
bool cs_model_on_star(const CsModelOp *op);
/* The wire payload of n elements; codec work on n elements, in seconds. */
static inline uint64_t cs_model_payload(const CsModelOp *op, uint64_t n) { return cs_coll_payload_bytes(&op->spec.codec, n); }
static inline double cs_model_cost(double ps_per_element, uint64_t n) { return ps_per_element * (double)n * 1e-12; }
/* A message's serialization on the first link of src's path to dst. */
double cs_model_first_hop_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload);
/* A message's latency terms alone on its path: what passes after its
 * last bit has left src (latencies, and its last packet's store and
 * forward at each hop after the first). */
double cs_model_tail_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload);
/* The link direction (2 link + dir) whose queue is src's host queue
 * toward dst; UINT32_MAX where ECMP draws it among several. */
uint32_t cs_model_host_queue(const CsModelOp *op, uint32_t src, uint32_t dst);
/* The same when its transport puts it into src's queue whole (a burst,
 * cs_transport_burst_packets: it leaves after those put in before it,
 * at the line rate), else 0. */
double cs_model_burst_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload);
/* The time of such a burst's last packet at src's queue's rate, else 0. */
double cs_model_burst_last_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload);
/* Half a block of src's host queue (host_queue bytes at its line rate)
 * when a message of `payload` bytes to dst is past it and its connection
 * counts its window (reno, cubic, dctcp), else 0: such messages take the
 * queue in blocks, and those that end together there end one after
 * another, a last block apart, half a block on average (the flow
 * fidelity's rule, docs/network.md). */
double cs_model_blocks_gap_s(const CsModelOp *op, uint32_t src, uint32_t dst, uint64_t payload);
/* n messages of `payload` bytes from src, one to each of dst[0 .. n),
 * sent at once in that order, each on a connection that starts at its
 * initial window: when each one's last bit leaves src's queue, in
 * seconds after they were sent, into out[].  Bursts (within that window)
 * leave one after another; larger messages go in window by window (the
 * first ones at once, each next one twice as large a round trip after the
 * one before began to leave), the queue taking the windows in the order
 * they go in, at its line rate.  False (out untouched) when a message is
 * past what a connection may hold in the queue (host_queue): such
 * messages share the link.  src has a queue per link (a ring's or a
 * torus's host): where ECMP draws a message's among several, out[] is
 * the mean over draws (TURN_DRAWS), and *last (when not NULL) the mean
 * of each draw's last, else the last. */
bool cs_model_queue_turns(const CsModelOp *op, uint32_t src, const uint32_t *dst, uint32_t n, uint64_t payload,
                          double *out, double *last);

/* The driver (the workload's model): an operation's hooks run once at
 * creation; then each worker's result time from common or separate starts. */
CsModelOp *cs_model_op_new(CsModelCtx *ctx, const CsCollSpec *spec, GArray *record_steps);
void cs_model_op_free(CsModelOp *op);
/* Every worker contributes at 0: each one's result time, with its codec
 * work or (codec false) the network alone. */
void cs_model_op_times(CsModelOp *op, bool codec, double *end);
/* Both at once (one replay of the steps): with codec work into end[],
 * the network alone into net[]. */
void cs_model_op_times_both(CsModelOp *op, double *end, double *net);
/* A worker's codec work in the operation (its first encode aside). */
double cs_model_op_codec(CsModelOp *op);
/* Each worker contributes at start[w]: its result at end[w].  `carry`
 * (one per server, zero at first) is what one operation leaves the next
 * (a server's pulls still going); server_add: the servers' summing past
 * the last push, for the report. */
void cs_model_op_schedule(CsModelOp *op, const double *start, double *end, double *carry, bool codec,
                          double *server_add);

#endif
