/* allgather.c - every worker's whole payload to every other, in ring
 * order; each then decodes and sums the P payloads.  Nothing is reduced
 * on the way, so any codec can be carried (top-k, sign). */
#include "config.h"

#include "commsim/closed_form.h"

static void build(CsCollPlan *plan, const CsCollSpec *s) {
  uint32_t P = s->n_workers;
  uint64_t bytes = cs_coll_payload_bytes(&s->codec, s->elements);
  for (uint32_t r = 0; r < P; r++) {
    for (uint32_t k = 0; k + 1 < P; k++) cs_coll_add_step(plan, r, (int32_t)((r + 1) % P), bytes, (int32_t)((r + P - 1) % P), 0);
    cs_coll_add_step(plan, r, -1, 0, -1, cs_coll_cost((s->cost.decode_ps + s->cost.reduce_ps) * P, s->elements));
  }
}

static void model(CsModelOp *o) {
  uint32_t P = o->spec.n_workers;
  for (uint32_t r = 0; r < P; r++)
    o->msgs[r] = (CsModelMsg){cs_model_node(o, r), cs_model_node(o, (r + 1) % P), cs_model_payload(o, o->spec.elements)};
  CsModelStep st = cs_model_round(o, o->msgs, P);
  cs_model_record(o, st, "ring step (every payload forwarded)", P - 1);
  for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, (r + 1) % P, st.seconds);
}

static const char *formula(const CsCollSpec *s) {
  (void)s;
  return "allgather: P-1 steps of P messages r -> r+1 of the whole payload; P (decode + add)(n)";
}

const CsCollectiveDef cs_coll_allgather = {
    .name = "allgather",
    .help = "every payload forwarded around the ring, decoded and summed by each worker (any codec)",
    .flags = 0,
    .chain = CS_CHAIN_GATHER,
    .build = build,
    .formula = formula,
    .model = model,
};
