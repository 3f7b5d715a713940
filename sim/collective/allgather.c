/* allgather.c - every worker's whole payload to every other, in ring
 * order; each then decodes and sums the P payloads.  Nothing is reduced
 * on the way, so any codec can be carried (top-k, sign). */
#include "config.h"

#include "commsim/closed_form.h"

/* Rank r's steps, computed when asked (P x P of them: stored, they took
 * 553 MB at 4,096 workers and would take 9 GB at 16,384): P - 1 sends of
 * the whole payload to the next rank, each waiting for the previous
 * rank's, then the decode and sum of the P payloads. */
static uint32_t n_steps(const CsCollSpec *s, uint32_t p) {
  (void)p;
  return s->n_workers;
}

/* The payload's bytes and the last step's codec work, once per plan. */
static void prepare(CsCollSpec *s) {
  s->pieces.bytes[0] = cs_coll_payload_bytes(&s->codec, s->elements);
  s->pieces.cost[0] = cs_coll_cost((s->cost.decode_ps + s->cost.reduce_ps) * s->n_workers, s->elements);
  s->pieces.known = true;
}

static CsCollStep step(const CsCollSpec *s, uint32_t r, uint32_t k) {
  if (G_UNLIKELY(!s->pieces.known)) { /* a spec not prepared (not a plan's) */
    CsCollSpec own = *s;
    prepare(&own);
    return step(&own, r, k);
  }
  uint32_t P = s->n_workers;
  if (k + 1 < P)
    return (CsCollStep){(int32_t)(r + 1 == P ? 0 : r + 1), (int32_t)(r == 0 ? P - 1 : r - 1), s->pieces.bytes[0], 0,
                        false, false, 0, 0};
  return (CsCollStep){-1, -1, 0, s->pieces.cost[0], false, false, 0, 0};
}

/* Whom rank r's step k waits for: the previous rank, but at the last step. */
static int32_t recv_from(const CsCollSpec *s, uint32_t r, uint32_t k) {
  uint32_t P = s->n_workers;
  return k + 1 < P ? (int32_t)(r == 0 ? P - 1 : r - 1) : -1;
}

/* Steps from k on that wait for the same rank as step k. */
static uint32_t recv_same(const CsCollSpec *s, uint32_t r, uint32_t k) {
  (void)r;
  uint32_t last = s->n_workers - 1;
  return k < last ? last - k : 1;
}

static void model(CsModelOp *o) {
  uint32_t P = o->spec.n_workers;
  for (uint32_t r = 0; r < P; r++)
    o->msgs[r] = (CsModelMsg){cs_model_node(o, r), cs_model_node(o, (r + 1) % P), cs_model_payload(o, o->spec.elements)};
  CsModelStep st = cs_model_round_each(o, o->msgs, P, o->each);
  cs_model_record(o, st, "ring step (every payload forwarded)", P - 1);
  for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, (r + 1) % P, o->each[r], o->msgs[r].payload);
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
    .n_steps = n_steps,
    .step = step,
    .recv_from = recv_from,
    .recv_same = recv_same,
    .prepare = prepare,
    .formula = formula,
    .model = model,
};
