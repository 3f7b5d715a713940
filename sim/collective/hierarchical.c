/* hierarchical.c - all-reduce on machines of G workers (NCCL's
 * hierarchical algorithm): a ring reduce-scatter among each machine's G
 * workers over its internal links, then one ring all-reduce per rail
 * (the workers with the same local index, one per machine) across the
 * H machines on the piece each holds, then a ring all-gather inside
 * each machine.  Workers are ranked machine by machine (rank = h G + g),
 * as topology.gpus_per_host numbers them; G = 1 is the flat ring. */
#include "config.h"

#include "commsim/closed_form.h"

static uint32_t group_of(const CsCollSpec *s) {
  uint32_t G = s->group > 1 ? s->group : 1;
  return s->n_workers % G == 0 ? G : 1;
}

static void build(CsCollPlan *plan, const CsCollSpec *s) {
  uint32_t P = s->n_workers, G = group_of(s), H = P / G;
  const CsCodecCost *c = &s->cost;
  double hop = c->decode_ps + c->reduce_ps + c->encode_ps;
  uint64_t n = s->elements;
  for (uint32_t r = 0; r < P; r++) {
    uint32_t h = r / G, g = r % G;
    int32_t lnext = (int32_t)(h * G + (g + 1) % G), lprev = (int32_t)(h * G + (g + G - 1) % G);
    for (uint32_t k = 0; k + 1 < G; k++) { /* intra-machine reduce-scatter */
      uint64_t out = cs_coll_piece(n, G, (g + G - k) % G), in = cs_coll_piece(n, G, (g + 2 * G - k - 1) % G);
      cs_coll_add_step(plan, r, lnext, cs_coll_payload_bytes(&s->codec, out), lprev, cs_coll_cost(hop, in));
    }
    /* this worker's piece, summed over its machine: a ring across machines on it */
    uint64_t m = cs_coll_piece(n, G, (g + 1) % G);
    int32_t hnext = (int32_t)(((h + 1) % H) * G + g), hprev = (int32_t)(((h + H - 1) % H) * G + g);
    for (uint32_t k = 0; k + 1 < H; k++) {
      uint64_t out = cs_coll_piece(m, H, (h + H - k) % H), in = cs_coll_piece(m, H, (h + 2 * H - k - 1) % H);
      cs_coll_add_step(plan, r, hnext, cs_coll_payload_bytes(&s->codec, out), hprev, cs_coll_cost(hop, in));
    }
    for (uint32_t k = 0; k + 1 < H; k++) {
      uint64_t out = cs_coll_piece(m, H, (h + 1 + H - k) % H);
      cs_coll_add_step(plan, r, hnext, cs_coll_payload_bytes(&s->codec, out), hprev, 0);
    }
    for (uint32_t k = 0; k + 1 < G; k++) { /* intra-machine all-gather */
      uint64_t out = cs_coll_piece(n, G, (g + 1 + G - k) % G);
      cs_coll_add_step(plan, r, lnext, cs_coll_payload_bytes(&s->codec, out), lprev, 0);
    }
    cs_coll_add_step(plan, r, -1, 0, -1, cs_coll_cost(c->decode_ps, n)); /* decode once */
  }
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
    CsModelStep st = cs_model_round(o, o->msgs, P);
    cs_model_record(o, st, "intra-machine reduce-scatter / all-gather step", 2 * (G - 1));
    for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, (r / G) * G + (r % G + 1) % G, st.seconds);
  }
  if (H > 1) {
    for (uint32_t r = 0; r < P; r++) {
      uint32_t h = r / G, g = r % G;
      uint64_t m = cs_coll_piece(n, G, (g + 1) % G);
      o->msgs[r] = (CsModelMsg){cs_model_node(o, r), cs_model_node(o, ((h + 1) % H) * G + g), cs_model_payload(o, cs_coll_piece(m, H, h))};
    }
    CsModelStep st = cs_model_round(o, o->msgs, P);
    cs_model_record(o, st, "rail ring step across machines", 2 * (H - 1));
    for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, ((r / G + 1) % H) * G + r % G, st.seconds);
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
    .build = build,
    .formula = formula,
    .model = model,
};
