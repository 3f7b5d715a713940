/* ring.c - ring all-reduce: reduce-scatter then all-gather, P-1 steps
 * each, every message to the next rank (Patarasuk and Yuan, 2009). */
#include "config.h"

#include "commsim/closed_form.h"

static uint32_t n_steps(const CsCollSpec *s, uint32_t p) {
  (void)p;
  return 2 * (s->n_workers - 1) + 1;
}

/* Rank r's step k, computed when asked: P x 2(P-1) steps are not kept. */
static CsCollStep step(const CsCollSpec *s, uint32_t r, uint32_t k) {
  uint32_t P = s->n_workers, next = (r + 1) % P, prev = (r + P - 1) % P;
  const CsCodecCost *c = &s->cost;
  if (k + 1 < P) { /* reduce-scatter */
    uint64_t out = cs_coll_piece(s->elements, P, (r + P - k) % P), in = cs_coll_piece(s->elements, P, (r + 2 * P - k - 1) % P);
    return (CsCollStep){(int32_t)next, (int32_t)prev, cs_coll_payload_bytes(&s->codec, out),
                        cs_coll_cost(c->decode_ps + c->reduce_ps + c->encode_ps, in), false, false};
  }
  if (k + 1 < 2 * P - 1) { /* all-gather: forward as received */
    uint32_t j = k - (P - 1);
    uint64_t out = cs_coll_piece(s->elements, P, (r + 1 + P - j) % P);
    return (CsCollStep){(int32_t)next, (int32_t)prev, cs_coll_payload_bytes(&s->codec, out), 0, false, false};
  }
  return (CsCollStep){-1, -1, 0, cs_coll_cost(c->decode_ps, s->elements), false, false}; /* decode once */
}

/* Whom rank r's step k waits for: the previous rank, but at the last step. */
static int32_t recv_from(const CsCollSpec *s, uint32_t r, uint32_t k) {
  uint32_t P = s->n_workers;
  return k + 1 < 2 * P - 1 ? (int32_t)((r + P - 1) % P) : -1;
}

/* One round: every rank sends its piece to the next at once. */
static void model(CsModelOp *o) {
  uint32_t P = o->spec.n_workers;
  uint64_t n = o->spec.elements;
  for (uint32_t r = 0; r < P; r++)
    o->msgs[r] = (CsModelMsg){cs_model_node(o, r), cs_model_node(o, (r + 1) % P), cs_model_payload(o, cs_coll_piece(n, P, r))};
  CsModelStep st = cs_model_round(o, o->msgs, P);
  cs_model_record(o, st, "reduce-scatter / all-gather step", 2 * (P - 1));
  for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, (r + 1) % P, st.seconds);
}

static const char *formula(const CsCollSpec *s) {
  (void)s;
  return "ring: 2 (P-1) steps of P messages r -> r+1 of n/P, each with reduce(n/P) between; decode(n) at the end";
}

const CsCollectiveDef cs_coll_ring = {
    .name = "ring",
    .help = "ring all-reduce: reduce-scatter then all-gather, 2 (P-1) steps of n/P to the next rank",
    .flags = CS_COLLF_REDUCES,
    .chain = CS_CHAIN_LINE,
    .n_steps = n_steps,
    .step = step,
    .recv_from = recv_from,
    .formula = formula,
    .model = model,
};
