/* ring.c - ring all-reduce: reduce-scatter then all-gather, P-1 steps
 * each, every message to the next rank (Patarasuk and Yuan, 2009). */
#include "config.h"

#include "commsim/closed_form.h"

static uint32_t n_steps(const CsCollSpec *s, uint32_t p) {
  (void)p;
  return 2 * (s->n_workers - 1) + 1;
}

/* The pieces' payloads and costs, once per plan (a ring of P workers asks
 * for P x 2(P-1) steps, and each asked the codec again). */
static void prepare(CsCollSpec *s) {
  uint32_t P = s->n_workers;
  if (P == 0) return;
  const CsCodecCost *c = &s->cost;
  uint64_t q = s->elements / P;
  s->pieces.rem = (uint32_t)(s->elements % P);
  for (int i = 0; i < 2; i++) {
    s->pieces.bytes[i] = cs_coll_payload_bytes(&s->codec, q + (uint64_t)i);
    s->pieces.cost[i] = cs_coll_cost(c->decode_ps + c->reduce_ps + c->encode_ps, q + (uint64_t)i);
  }
  s->pieces.known = true;
}

/* Rank r's step k from the codec (a plan not prepared, and the last step). */
static G_GNUC_NO_INLINE CsCollStep step_from_codec(const CsCollSpec *s, uint32_t r, uint32_t k) {
  uint32_t P = s->n_workers, next = r + 1 == P ? 0 : r + 1, prev = r == 0 ? P - 1 : r - 1;
  const CsCodecCost *c = &s->cost;
  if (k + 1 < P) { /* reduce-scatter: send piece r - k, receive piece r - k - 1 (mod P) */
    uint32_t out = r + P - k; /* in [r + 2, r + P] */
    if (out >= P) out -= P;
    uint32_t in = out == 0 ? P - 1 : out - 1;
    return (CsCollStep){(int32_t)next, (int32_t)prev, cs_coll_payload_bytes(&s->codec, cs_coll_piece(s->elements, P, out)),
                        cs_coll_cost(c->decode_ps + c->reduce_ps + c->encode_ps, cs_coll_piece(s->elements, P, in)), false,
                        false, 0, 0};
  }
  if (k + 1 < 2 * P - 1) { /* all-gather: forward as received, piece r + 1 - j (mod P) */
    uint32_t out = r + 1 + P - (k - (P - 1)); /* in [r + 3, r + 1 + P], at most 2P */
    if (out >= P) out -= P;
    if (out >= P) out -= P;
    return (CsCollStep){(int32_t)next, (int32_t)prev,
                        cs_coll_payload_bytes(&s->codec, cs_coll_piece(s->elements, P, out)), 0, false, false, 0, 0};
  }
  return (CsCollStep){-1, -1, 0, cs_coll_cost(c->decode_ps, s->elements), false, false, 0, 0}; /* decode once */
}

/* Rank r's step k, computed when asked: P x 2(P-1) steps are not kept.
 * Indices modulo P by a subtraction, not a division (k < 2P - 2 here):
 * piece i has n / P + 1 elements when i < n % P (cs_coll_piece).  With
 * the pieces prepared, every step but the last is a lookup, and a call
 * without a frame (the codec's out of line). */
static CsCollStep step(const CsCollSpec *s, uint32_t r, uint32_t k) {
  uint32_t P = s->n_workers;
  if (G_UNLIKELY(!s->pieces.known || k + 1 >= 2 * P - 1)) return step_from_codec(s, r, k);
  uint32_t next = r + 1 == P ? 0 : r + 1, prev = r == 0 ? P - 1 : r - 1;
  if (k + 1 < P) { /* reduce-scatter: send piece r - k, receive piece r - k - 1 (mod P) */
    uint32_t out = r + P - k; /* in [r + 2, r + P] */
    if (out >= P) out -= P;
    uint32_t in = out == 0 ? P - 1 : out - 1;
    return (CsCollStep){(int32_t)next, (int32_t)prev, s->pieces.bytes[out < s->pieces.rem],
                        s->pieces.cost[in < s->pieces.rem], false, false, 0, 0};
  }
  /* all-gather: forward as received, piece r + 1 - j (mod P) */
  uint32_t out = r + 1 + P - (k - (P - 1)); /* in [r + 3, r + 1 + P], at most 2P */
  if (out >= P) out -= P;
  if (out >= P) out -= P;
  return (CsCollStep){(int32_t)next, (int32_t)prev, s->pieces.bytes[out < s->pieces.rem], 0, false, false, 0, 0};
}

/* Whom rank r's step k waits for: the previous rank, but at the last step. */
static int32_t recv_from(const CsCollSpec *s, uint32_t r, uint32_t k) {
  uint32_t P = s->n_workers;
  return k + 1 < 2 * P - 1 ? (int32_t)(r == 0 ? P - 1 : r - 1) : -1;
}

/* Steps from k on that wait for the same rank as step k: the previous
 * rank's, to the last but one; the last waits for none. */
static uint32_t recv_same(const CsCollSpec *s, uint32_t r, uint32_t k) {
  (void)r;
  uint32_t last = 2 * (s->n_workers - 1);
  return k < last ? last - k : 1;
}

/* One round: every rank sends its piece to the next at once. */
static void model(CsModelOp *o) {
  uint32_t P = o->spec.n_workers;
  uint64_t n = o->spec.elements;
  for (uint32_t r = 0; r < P; r++)
    o->msgs[r] = (CsModelMsg){cs_model_node(o, r), cs_model_node(o, (r + 1) % P), cs_model_payload(o, cs_coll_piece(n, P, r))};
  CsModelStep st = cs_model_round_each(o, o->msgs, P, o->each);
  cs_model_record(o, st, "reduce-scatter / all-gather step", 2 * (P - 1));
  for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, (r + 1) % P, o->each[r], o->msgs[r].payload);
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
    .recv_same = recv_same,
    .prepare = prepare,
    .formula = formula,
    .model = model,
};
