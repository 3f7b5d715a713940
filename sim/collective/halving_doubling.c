/* halving_doubling.c - Rabenseifner's all-reduce: reduce-scatter by
 * recursive halving, all-gather by recursive doubling (P a power of two;
 * Thakur, Rabenseifner and Gropp, 2005). */
#include "config.h"

#include "commsim/closed_form.h"

static void build(CsCollPlan *plan, const CsCollSpec *s) {
  uint32_t P = s->n_workers;
  const CsCodecCost *c = &s->cost;
  uint32_t L = 0;
  while ((1u << L) < P) L++;
  for (uint32_t r = 0; r < P; r++) {
    uint64_t lo = 0, hi = s->elements;
    uint64_t los[32], his[32];
    for (uint32_t k = 0; k < L; k++) { /* halving: keep one half, send the other */
      uint32_t b = P >> (k + 1);
      uint64_t mid = lo + (hi - lo) / 2;
      bool upper = (r & b) != 0;
      uint64_t send_n = upper ? mid - lo : hi - mid, keep_n = upper ? hi - mid : mid - lo;
      los[k] = lo, his[k] = hi;
      cs_coll_add_step(plan, r, (int32_t)(r ^ b), cs_coll_payload_bytes(&s->codec, send_n), (int32_t)(r ^ b),
                       cs_coll_cost(c->decode_ps + c->reduce_ps + c->encode_ps, keep_n));
      if (upper) lo = mid;
      else hi = mid;
    }
    for (uint32_t k = L; k-- > 0;) { /* doubling: send what I hold, get the partner's half */
      uint32_t b = P >> (k + 1);
      cs_coll_add_step(plan, r, (int32_t)(r ^ b), cs_coll_payload_bytes(&s->codec, hi - lo), (int32_t)(r ^ b), 0);
      lo = los[k], hi = his[k];
    }
    cs_coll_add_step(plan, r, -1, 0, -1, cs_coll_cost(c->decode_ps, s->elements));
  }
}

/* One round per halving step (and its doubling mirror): P messages to the partner. */
static void model(CsModelOp *o) {
  uint32_t P = o->spec.n_workers, L = 0;
  while ((1u << L) < P) L++;
  uint64_t size = o->spec.elements;
  for (uint32_t k = 0; k < L; k++) {
    uint32_t b = P >> (k + 1);
    uint64_t half = size - size / 2; /* the lower ranks send the upper half */
    for (uint32_t r = 0; r < P; r++)
      o->msgs[r] = (CsModelMsg){cs_model_node(o, r), cs_model_node(o, r ^ b), cs_model_payload(o, (r & b) ? size / 2 : half)};
    CsModelStep st = cs_model_round_each(o, o->msgs, P, o->each);
    g_autofree char *label = g_strdup_printf("halving / doubling step %u (partner r xor %u)", k + 1, b);
    cs_model_record(o, st, label, 2);
    for (uint32_t r = 0; r < P; r++) cs_model_pair(o, r, r ^ b, o->each[r], o->msgs[r].payload);
    size /= 2;
  }
}

static const char *formula(const CsCollSpec *s) {
  (void)s;
  return "halving-doubling: for k = 1..log2 P, twice (halving, doubling) a step of P messages r <-> r xor P/2^k "
         "of n/2^k, with reduce(n/2^k) after each halving; decode(n)";
}

const CsCollectiveDef cs_coll_halving_doubling = {
    .name = "halving-doubling",
    .help = "Rabenseifner: recursive halving then doubling, 2 log2 P steps (P a power of two)",
    .flags = CS_COLLF_REDUCES | CS_COLLF_POW2,
    .chain = CS_CHAIN_BINOMIAL,
    .build = build,
    .formula = formula,
    .model = model,
};
