/* collective.h - ps, ring, tree, halving-doubling and allgather, built on
 * two services only: "send N bytes from host A to host B, call me when
 * they are delivered" (the network) and "spend T of compute on node A"
 * (each node's codec stream, below).
 *
 * A collective is compiled into a list of steps per participant; a step
 * sends one message (or none), waits for one message (or none), then
 * computes (decode, add, re-encode at a reduction hop; decode at the end).
 * A participant starts its first step when its own contribution is ready
 * and each later step when the previous one is done, so workers that
 * reach a bucket at different times are handled as they are.  Messages
 * between the same two nodes are delivered in order, one after another
 * (one connection per pair, as NCCL and MPI keep).  A participant's steps
 * may run in more than one lane at once (a pipelined tree's reduce and
 * broadcast).
 *
 * Sizes come from the codec's wire formula; compute times from its cost
 * per element.  Nothing here runs a kernel.
 *
 * Layer 4 (collectives; docs/design.md). Owns step plans, the step machine,
 * codec streams, the collectives' table; does not touch the packet network
 * (only fabric.h), workloads, scenarios.
 */
#ifndef COMMSIM_COLLECTIVE_H
#define COMMSIM_COLLECTIVE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/codec.h"
#include "commsim/engine.h"
#include "commsim/fabric.h"
#include "commsim/topology.h"

/* A row of the collectives' table (cs_collectives, below); the built-in rows: */
typedef uint32_t CsCollective;
enum { CS_COLL_PS, CS_COLL_RING, CS_COLL_TREE, CS_COLL_HALVING_DOUBLING, CS_COLL_ALLGATHER, CS_COLL_HIERARCHICAL };

static inline const char *cs_collective_name(CsCollective c);

/* The services collectives run on, shared by all the collectives of a run:
 * the network and one compute stream per node for codec work (encode,
 * decode, reduce), serialized in the order it is asked for. */
typedef struct CsCollEnv CsCollEnv;

CsCollEnv *cs_coll_env_new(CsEngine *engine, CsFabric *fabric, const CsTopology *t);
void cs_coll_env_free(CsCollEnv *env);

typedef void (*CsComputeFn)(void *ctx, uint64_t arg);
/* Run `duration` of codec work on `node` after what is already queued
 * there; then fn(ctx, arg). */
void cs_coll_compute(CsCollEnv *env, uint32_t node, CsTime duration, CsComputeFn fn, void *ctx,
                     uint64_t arg);
/* Codec time spent on `node` so far. */
CsTime cs_coll_codec_time(const CsCollEnv *env, uint32_t node);
/* Codec work on `node` that lies after its mark (set by the workload to
 * the end of the worker's compute, so that what this counts is the codec
 * work that does not overlap compute): the sum, over every piece of work
 * queued so far, of its part after the mark in force when it was queued. */
void cs_coll_set_mark(CsCollEnv *env, uint32_t node, CsTime mark);
CsTime cs_coll_codec_time_after_mark(const CsCollEnv *env, uint32_t node);
/* Keep every codec span (for timeline.json). */
typedef struct {
  uint32_t node;
  CsTime start, end;
} CsCodecSpan;
void cs_coll_record_spans(CsCollEnv *env, bool on);
const GArray *cs_coll_spans(const CsCollEnv *env); /* CsCodecSpan */

/* Tags put on the messages a collective sends (messages.csv). */
void cs_coll_set_iteration(CsCollEnv *env, uint32_t iteration);

typedef struct {
  CsCollective kind;
  uint32_t n_workers;
  const uint32_t *workers; /* node numbers, by rank */
  uint32_t n_servers;      /* ps: the servers that shard the parameters */
  const uint32_t *servers;
  uint64_t elements;       /* of the gradient this operation reduces */
  CsCodecParams codec;
  CsCodecCost cost;
  uint32_t chunks; /* tree: pieces, pipelined (each rank reduces one while it broadcasts an earlier one) */
  bool pull;       /* ps: send the sum back */
  uint32_t group;  /* workers per machine (topology.gpus_per_host); 0 or 1: one each */
  /* Filled by the collective's prepare() in its plan's copy (zero
   * elsewhere): what its step() would otherwise work out for every
   * message.  The ring's pieces of n over P workers have two sizes,
   * n / P + 1 (the first n % P) and n / P: their payloads and codec costs. */
  struct {
    bool known;
    uint32_t rem;         /* n % P */
    uint64_t bytes[2];    /* payload of a piece of n / P, n / P + 1 elements */
    CsTime cost[2];       /* decode + reduce + encode of such a piece */
  } pieces;
} CsCollSpec;

/* What an operation does, without running it: each participant's steps
 * (workers 0..P-1 by rank, then the ps servers).  A step sends one
 * message (or none), waits for one (or none), then computes. */
typedef struct {
  int32_t send_to;     /* participant, or -1 */
  int32_t recv_from;   /* participant, or -1; the k-th message from a sender fills the k-th step that waits for it */
  uint64_t send_bytes;
  CsTime compute;      /* after the message arrived */
  bool wait_delivered; /* the step ends when its own message has arrived (tree rounds) */
  bool rendezvous;     /* its message may leave only once this step is reached (tree) */
  uint8_t lane;        /* the sequence it runs in (cs_coll_set_lane; 0 by default) */
  uint32_t after;      /* 1 + a step of the same participant, in another lane, that must be done before
                        * this one starts (0: none) */
} CsCollStep;

typedef struct CsCollectiveDef CsCollectiveDef;

typedef struct {
  uint32_t n_parts;
  GArray **steps; /* per participant: CsCollStep; NULL when the collective computes its steps (step()) */
  uint32_t lanes; /* 1 + the highest lane of any step (1: every participant's steps in one sequence) */
  uint8_t build_lane; /* while building: the lane the next steps added go to */
  const CsCollectiveDef *def;
  CsCollSpec spec;
  /* (cs_coll_plan_next_recv, with steps) per participant, NULL until a
   * search runs long: its count of steps that wait for a message, then
   * their indices by sender and in order (so a plan's steps do not
   * change once it is built and searched) */
  uint32_t **recv_index;
} CsCollPlan;

CsCollPlan *cs_coll_plan_new(const CsCollSpec *spec);
/* Participants of an operation: the workers, then its servers if it has any. */
uint32_t cs_coll_participants(const CsCollSpec *spec);
void cs_coll_plan_free(CsCollPlan *plan);
/* Participant p's steps: how many, and the k-th (k < that). */
uint32_t cs_coll_plan_len(const CsCollPlan *plan, uint32_t p);
CsCollStep cs_coll_plan_step(const CsCollPlan *plan, uint32_t p, uint32_t k);
/* The k-th message from src to dst fills the k-th of dst's steps that wait
 * for src: the first such step from `from` on (one must remain). */
uint32_t cs_coll_plan_next_recv(const CsCollPlan *plan, uint32_t dst, uint32_t src, uint32_t from);
/* What builders share: the step kinds (add_step: send and/or wait for a
 * message, then compute; a rendezvous receive; a send that waits for its
 * delivery), the i-th of `parts` pieces of n, a codec cost for n elements. */
void cs_coll_add_step(CsCollPlan *plan, uint32_t p, int32_t send_to, uint64_t bytes, int32_t recv_from, CsTime compute);
void cs_coll_add_round_recv(CsCollPlan *plan, uint32_t p, int32_t recv_from, CsTime compute);
void cs_coll_add_round_send(CsCollPlan *plan, uint32_t p, int32_t send_to, uint64_t bytes);
static inline uint64_t cs_coll_piece(uint64_t n, uint32_t parts, uint32_t i) { return n / parts + (i < n % parts); }
/* Lanes: a participant's steps run one after another, unless its builder
 * puts some in another lane: each lane then runs its own steps in order,
 * alongside the others (a pipelined tree reduces one piece while it
 * broadcasts an earlier one).  The steps added from now on go to `lane`
 * (at most CS_COLL_LANES - 1); a participant is done when all its lanes
 * are.  cs_coll_add_after: participant p's last step added starts only
 * once its step `step` (in another lane) is done. */
#define CS_COLL_LANES 2
void cs_coll_set_lane(CsCollPlan *plan, uint8_t lane);
void cs_coll_add_after(CsCollPlan *plan, uint32_t p, uint32_t step);
/* Participant p's steps so far (while building: the index of the next). */
static inline uint32_t cs_coll_plan_count(const CsCollPlan *plan, uint32_t p) { return plan->steps[p]->len; }
/* The plan indices of participant p's steps in `lane`, in order, into a
 * new array (its length into *n); NULL when the plan has one lane (the
 * indices are then 0 .. cs_coll_plan_len - 1). */
uint32_t *cs_coll_plan_lane_steps(const CsCollPlan *plan, uint32_t p, uint32_t lane, uint32_t *n);
/* The other way: each of participant p's steps' place in its lane, by
 * plan index, into a new array; NULL when the plan has one lane. */
uint32_t *cs_coll_plan_places(const CsCollPlan *plan, uint32_t p);
CsTime cs_coll_cost(double ps_per_element, uint64_t n);

/* ---- the collectives: one row each ----
 * A collective is one file (ring.c, tree.c, ...) holding its steps (a
 * builder), its closed form (for `commsim model`: its rounds of
 * concurrent messages, closed_form.h) and its row; adding one is its file
 * and its row in collectives.c.  What applies to it is in its flags: */
enum {
  CS_COLLF_REDUCES = 1u << 0, /* adds payloads at reduction hops: the codec must be summable */
  CS_COLLF_SERVERS = 1u << 1, /* runs through parameter servers (needs them; sync, pull, servers apply) */
  CS_COLLF_POW2 = 1u << 2,    /* needs a power-of-two number of workers */
  CS_COLLF_CHUNKS = 1u << 3,  /* pipelines its message in workload.chunks pieces */
};
/* How a codec's error compounds through it (cs_coll_result_nmse). */
typedef enum {
  CS_CHAIN_LINE,     /* a chain of reduction hops (ring) */
  CS_CHAIN_BINOMIAL, /* pairs, then pairs of pairs (tree, halving-doubling) */
  CS_CHAIN_GATHER,   /* every payload decoded and added exactly (allgather, ps) */
  CS_CHAIN_HIER,     /* a chain inside each machine, then a chain of the machines' sums (hierarchical) */
} CsReduceChain;

typedef struct CsModelOp CsModelOp; /* closed_form.h */

struct CsCollectiveDef {
  const char *name;
  const char *help; /* one line: what it does */
  unsigned flags;   /* CS_COLLF_* */
  CsReduceChain chain;
  void (*build)(CsCollPlan *plan, const CsCollSpec *spec);
  /* or, instead of build, its steps computed when asked (a ring of P
   * workers has P x 2(P-1)): how many participant p has, and the k-th */
  uint32_t (*n_steps)(const CsCollSpec *spec, uint32_t p);
  CsCollStep (*step)(const CsCollSpec *spec, uint32_t p, uint32_t k);
  /* optional, with step: whom step k waits for, alone (step()'s recv_from,
   * without its sizes and costs: a message's receiving step is looked up
   * once per message) */
  int32_t (*recv_from)(const CsCollSpec *spec, uint32_t p, uint32_t k);
  /* optional, with recv_from: how many steps from k on (at least 1) wait
   * for the same participant as step k does (a ring's all but the last:
   * the step machine then asks recv_from once per run of them, not once
   * per message) */
  uint32_t (*recv_same)(const CsCollSpec *spec, uint32_t p, uint32_t k);
  /* optional, with step: fill spec->pieces once, in the plan's copy */
  void (*prepare)(CsCollSpec *spec);
  /* its closed form, in words (commsim model) */
  const char *(*formula)(const CsCollSpec *spec);
  /* the closed form: evaluate the rounds of one operation (closed_form.h) */
  void (*model)(CsModelOp *op);
  /* its schedule when workers do not move in lock step (ps): each
   * worker's result time from its start; NULL: the operation's replay */
  void (*schedule)(CsModelOp *op, const double *start, double *end, double *carry, bool codec, double *server_add);
};

/* cs_coll_plan_next_recv for the messages of one pair in turn: *same_end (0 at first)
 * keeps where the run of dst's steps that all wait for src ends
 * (recv_same), so that the pair's next messages within it need no search
 * (a ring's 2 (P - 1) messages on a pair: one search). */
static inline uint32_t cs_coll_plan_next_recv_run(const CsCollPlan *plan, uint32_t dst, uint32_t src, uint32_t from,
                                                  uint32_t *same_end) {
  if (from < *same_end) return from;
  uint32_t k = cs_coll_plan_next_recv(plan, dst, src, from);
  if (!plan->steps && plan->def->recv_from && plan->def->recv_same) *same_end = k + plan->def->recv_same(&plan->spec, dst, k);
  return k;
}

/* The table (collectives.c): a row per collective, each defined in its
 * own file; indexed by CsCollective, terminated by NULL. */
extern const CsCollectiveDef *const cs_collectives[];
/* The row of `name`, or NULL; its number into *c when c is not NULL. */
const CsCollectiveDef *cs_collective_find(const char *name, CsCollective *c);
/* The names, NULL-terminated. */
const char *const *cs_collective_names(void);
static inline const CsCollectiveDef *cs_collective_def(CsCollective c) { return cs_collectives[c]; }
static inline const char *cs_collective_name(CsCollective c) { return cs_collectives[c]->name; }
static inline bool cs_collective_has(CsCollective c, unsigned flag) { return (cs_collectives[c]->flags & flag) != 0; }
/* NULL when collective c can carry method m; otherwise why not and what
 * can (to free). */
char *cs_collective_codec_refusal(CsCollective c, CsCodecMethod m);

typedef struct CsCollOp CsCollOp;
/* Worker `rank` has its result (decoded and ready to apply). */
typedef void (*CsCollDoneFn)(void *ctx, uint32_t rank);

CsCollOp *cs_coll_start(CsCollEnv *env, const CsCollSpec *spec, CsCollDoneFn done, void *ctx);
/* Worker `rank`'s contribution is encoded and ready to send. */
void cs_coll_contribute(CsCollOp *op, uint32_t rank);
/* When a worker's communication began and ended (for comm_s): its first
 * byte sent and its last received; for a tree's parent, from its
 * children's first byte (a receive it posts) to the delivery of its last
 * send down, which its steps wait for. */
CsTime cs_coll_first_send(const CsCollOp *op, uint32_t rank);
CsTime cs_coll_last_receive(const CsCollOp *op, uint32_t rank);
bool cs_coll_finished(const CsCollOp *op);
void cs_coll_free(CsCollOp *op);

/* ||result - exact||^2 / ||exact||^2 of the collective's sum of P
 * independent N(0, 1) gradients of n elements, with the real kernels
 * applied as the collective applies them (decode-add-encode at each
 * reduction hop for summable codecs; decode and add for gathered ones;
 * ps re-encodes the sum for the pull; sign takes a majority vote).
 * NAN with an error if a kernel refuses. */
double cs_coll_result_nmse(CsCollective kind, const CsCodecParams *params, uint32_t P, uint32_t group, uint64_t n,
                           uint64_t seed, bool pull, GError **error);

/* The sum of P workers' real gradients x[w * n .. (w + 1) * n) as the
 * collective carries it, into result[0..n): each worker encodes with its
 * own codec (its error feedback), a summable codec is decoded, added and
 * encoded again at each reduction hop of the collective's chain, gathered
 * payloads are decoded and added exactly, sign on servers takes the
 * majority vote (P times its scale: a sum), and ps with pull encodes the
 * sum once more with `server` (no error feedback).  `round` names this
 * encoding (a new one each call; round + 1 is used for the pull).
 * `group`: workers per machine, for the hierarchical chain.  `once`: the
 * codecs serve this call only, and let go of their scratch as each is
 * done (a thousand workers' would otherwise all be held at once). */
bool cs_coll_reduce_real(CsCollective kind, CsCodec *const *codecs, CsCodec *server, uint32_t P, uint32_t group,
                         const float *x, size_t n, uint64_t round, bool pull, bool once, float *result, GError **error);
/* The same, with each worker's gradient from grad(ctx, w) instead of x:
 * asked for once per worker, in increasing w, and read before the next is
 * asked for, so that one buffer of n can serve every worker (the nmse
 * estimate's gradients are drawn as asked: one worker's pages, not P's). */
typedef const float *(*CsCollGradFn)(void *ctx, uint32_t w);
bool cs_coll_reduce_real_from(CsCollective kind, CsCodec *const *codecs, CsCodec *server, uint32_t P, uint32_t group,
                              CsCollGradFn grad, void *ctx, size_t n, uint64_t round, bool pull, bool once, float *result,
                              GError **error);

/* Bytes on the wire for n elements under the codec (ceil of the bits). */
uint64_t cs_coll_payload_bytes(const CsCodecParams *codec, uint64_t n);

#endif
