/* hierarchical.c - all-reduce on machines of G workers (NCCL's
 * hierarchical algorithm): a ring reduce-scatter among each machine's G
 * workers over its internal links, then one ring all-reduce per rail
 * (the workers with the same local index, one per machine) across the
 * H machines on the piece each holds, then a ring all-gather inside
 * each machine.  Workers are ranked machine by machine (rank = h G + g),
 * as topology.gpus_per_host numbers them; G = 1 is the flat ring. */
#include "config.h"

#include <math.h>

#include "commsim/closed_form.h"

static uint32_t group_of(const CsCollSpec *s) {
  uint32_t G = s->group > 1 ? s->group : 1;
  return s->n_workers % G == 0 ? G : 1;
}

/* Rank r's steps, computed when asked (stored, they took 2.4 GB at
 * 16,384 workers on machines of 8): 2 (G-1) + 2 (H-1) + 1 of them, in
 * four runs and the decode. */
static uint32_t n_steps(const CsCollSpec *s, uint32_t p) {
  (void)p;
  uint32_t G = group_of(s), H = s->n_workers / G;
  return 2 * (G - 1) + 2 * (H - 1) + 1;
}

static CsCollStep step(const CsCollSpec *s, uint32_t r, uint32_t k) {
  uint32_t P = s->n_workers, G = group_of(s), H = P / G;
  const CsCodecCost *c = &s->cost;
  double hop = c->decode_ps + c->reduce_ps + c->encode_ps;
  uint64_t n = s->elements;
  uint32_t h = r / G, g = r % G;
  int32_t lnext = (int32_t)(h * G + (g + 1) % G), lprev = (int32_t)(h * G + (g + G - 1) % G);
  int32_t hnext = (int32_t)(((h + 1) % H) * G + g), hprev = (int32_t)(((h + H - 1) % H) * G + g);
  /* this worker's piece, summed over its machine: a ring across machines on it */
  uint64_t m = cs_coll_piece(n, G, (g + 1) % G);
  if (k + 1 < G) { /* intra-machine reduce-scatter */
    uint64_t out = cs_coll_piece(n, G, (g + G - k) % G), in = cs_coll_piece(n, G, (g + 2 * G - k - 1) % G);
    return (CsCollStep){lnext, lprev, cs_coll_payload_bytes(&s->codec, out), cs_coll_cost(hop, in), false, false, 0, 0};
  }
  k -= G - 1;
  if (k + 1 < H) { /* rail reduce-scatter */
    uint64_t out = cs_coll_piece(m, H, (h + H - k) % H), in = cs_coll_piece(m, H, (h + 2 * H - k - 1) % H);
    return (CsCollStep){hnext, hprev, cs_coll_payload_bytes(&s->codec, out), cs_coll_cost(hop, in), false, false, 0, 0};
  }
  k -= H - 1;
  if (k + 1 < H) { /* rail all-gather */
    uint64_t out = cs_coll_piece(m, H, (h + 1 + H - k) % H);
    return (CsCollStep){hnext, hprev, cs_coll_payload_bytes(&s->codec, out), 0, false, false, 0, 0};
  }
  k -= H - 1;
  if (k + 1 < G) { /* intra-machine all-gather */
    uint64_t out = cs_coll_piece(n, G, (g + 1 + G - k) % G);
    return (CsCollStep){lnext, lprev, cs_coll_payload_bytes(&s->codec, out), 0, false, false, 0, 0};
  }
  return (CsCollStep){-1, -1, 0, cs_coll_cost(c->decode_ps, n), false, false, 0, 0}; /* decode once */
}

/* Whom rank r's step k waits for, and for how many steps from k on. */
static int32_t recv_from(const CsCollSpec *s, uint32_t r, uint32_t k) {
  uint32_t G = group_of(s), H = s->n_workers / G, h = r / G, g = r % G;
  if (k < G - 1 || (k >= G - 1 + 2 * (H - 1) && k < 2 * (G - 1) + 2 * (H - 1))) return (int32_t)(h * G + (g + G - 1) % G);
  if (k < G - 1 + 2 * (H - 1)) return (int32_t)(((h + H - 1) % H) * G + g);
  return -1;
}

static uint32_t recv_same(const CsCollSpec *s, uint32_t r, uint32_t k) {
  int32_t who = recv_from(s, r, k);
  uint32_t n = n_steps(s, r), j = k + 1;
  if (who >= 0) /* (once per run: the runs meet where H or G is 1) */
    while (j < n && recv_from(s, r, j) == who) j++;
  return j - k;
}

/* Two kinds of round: every worker to its machine's next (a piece n/G),
 * and every worker to the next machine's worker of its rail (n/(G H)). */
static void model(CsModelOp *o) {
  uint32_t P = o->spec.n_workers, G = group_of(&o->spec), H = P / G;
  uint64_t n = o->spec.elements;
  if (G > 1) {
    for (uint32_t r = 0; r < P; r++) {
      uint32_t h = r / G, g = r % G;
      o->msgs[r] = (CsModelMsg){cs_model_node(o, r), cs_model_node(o, h * G + (g + 1) % G), cs_model_payload(o, cs_coll_piece(n, G, g))};
    }
    CsModelStep st = cs_model_round_each(o, o->msgs, P, o->each);
    cs_model_record(o, st, "intra-machine reduce-scatter / all-gather step", 2 * (G - 1));
    for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, (r / G) * G + (r % G + 1) % G, o->each[r], o->msgs[r].payload);
  }
  if (H > 1) {
    for (uint32_t r = 0; r < P; r++) {
      uint32_t h = r / G, g = r % G;
      uint64_t m = cs_coll_piece(n, G, (g + 1) % G);
      o->msgs[r] = (CsModelMsg){cs_model_node(o, r), cs_model_node(o, ((h + 1) % H) * G + g), cs_model_payload(o, cs_coll_piece(m, H, h))};
    }
    /* A machine's G rails share its NIC.  Their small messages (bursts,
     * b each there, its last packet p) leave it together in the first step,
     * packet by packet: the round's end E is the last rail's, and the
     * k-th rail's comes G - 1 - k packets before.  In the second, the
     * rails' bursts go in whole in that order, each k packets after the
     * first: rail k's ends (k + 1) b after the first began, E - (G - 1 -
     * k) b - k p after its own start.  In the others the rails' steps
     * have drifted apart and take turns there (cs_model_round_turns).
     * Each pair's time is the mean of its steps; rail g takes place k = g
     * (which goes first is the packets' order; the results' mean and the
     * last are the same either way).  A hierarchical all-reduce of 10K
     * fp32 on two machines of two GPUs: the rail steps take 19.96 and
     * 12.81 us for the first rail and 21.08 and 20.01 us for the last at
     * packet level; 19.99 and 12.76, 21.08 and 19.99 us here. */
    double *turns = g_new(double, P);
    CsModelStep st = cs_model_round_turns(o, o->msgs, P, o->each, turns);
    if (G > 1)
      for (uint32_t r = 0; r < P; r++) {
        const CsModelMsg *m = &o->msgs[r];
        double b = cs_model_burst_s(o, m->src, m->dst, m->payload), steps = 2 * (H - 1), k = r % G, first, second;
        if (b > 0) {
          double p = cs_model_burst_last_s(o, m->src, m->dst, m->payload);
          first = o->each[r] - (G - 1 - k) * p;
          second = o->each[r] - (G - 1 - k) * b - k * p;
        } else {
          first = o->each[r], second = turns[r];
        }
        o->each[r] = steps > 1 ? (first + second + (steps - 2) * turns[r]) / steps : first;
      }
    g_free(turns);
    cs_model_record(o, st, "rail ring step across machines", 2 * (H - 1));
    for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, ((r / G + 1) % H) * G + r % G, o->each[r], o->msgs[r].payload);
  }
}

static const char *formula(const CsCollSpec *s) {
  (void)s;
  return "hierarchical: 2 (G-1) intra-machine steps of n/G, then 2 (H-1) rail steps of n/(G H) with every rail's "
         "messages at once, P = G H; about 2 (G-1)/G n/B_intra + 2 (H-1)/H n/B_NIC; reduce at each hop, decode(n) at the end";
}

const CsCollectiveDef cs_coll_hierarchical = {
    .name = "hierarchical",
    .help = "machines of topology.gpus_per_host workers: ring reduce-scatter inside each machine, a ring all-reduce per rail across machines, ring all-gather inside",
    .flags = CS_COLLF_REDUCES,
    .chain = CS_CHAIN_HIER,
    .n_steps = n_steps,
    .step = step,
    .recv_from = recv_from,
    .recv_same = recv_same,
    .formula = formula,
    .model = model,
};
