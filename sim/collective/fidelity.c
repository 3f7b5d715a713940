/* fidelity.c - how much error a codec leaves in a collective's result.
 *
 * A summable codec is decoded, added and re-encoded at every reduction
 * hop, so its error compounds with the depth of the reduction: P - 1 hops
 * along a ring, log2 P in a tree or halving-doubling.  Gathered payloads
 * (allgather, ps) are decoded and summed exactly, then (ps with pull)
 * encoded once more.  This runs the real kernels through those chains on
 * independent normal gradients and compares with the exact sum.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "commsim/arena.h"
#include "commsim/collective.h"
#include "commsim/rng.h"

typedef struct {
  void *buf;
  size_t len;
} Payload;

/* Encode into p->buf (cap bytes), taken from the arena if it has none yet. */
static bool encode(CsCodec *c, uint64_t round, const float *x, size_t n, size_t cap, Payload *p, CsArena *ar,
                   GError **error) {
  if (!p->buf) p->buf = cs_arena_take(ar, cap);
  return cs_codec_encode(c, round, x, n, p->buf, cap, &p->len, error);
}

/* out = encode(decode(a) + decode(b)), replacing a; out is *spare when it
 * has one, and a's old buffer becomes the spare (no allocation per hop). */
static bool reduce_into(CsCodec *c, uint64_t round, Payload *a, const Payload *b, size_t cap, void **spare,
                        CsArena *ar, GError **error) {
  void *out = *spare ? *spare : cs_arena_take(ar, cap);
  size_t len = 0;
  bool ok = cs_codec_reduce(c, round, a->buf, a->len, b->buf, b->len, out, cap, &len, error);
  *spare = a->buf;
  a->buf = out;
  a->len = len;
  return ok;
}

bool cs_coll_reduce_real_from(CsCollective kind, CsCodec *const *codecs, CsCodec *server, uint32_t P, uint32_t group,
                              CsCollGradFn grad, void *ctx, size_t n, uint64_t round, bool pull, bool once, float *result,
                              GError **error) {
  const CsCodecParams *params = cs_codec_get_params(codecs[0]);
  size_t cap = cs_codec_payload_size(params, n) * 2 + 64;
  Payload *pl = g_new0(Payload, P);
  bool summable = cs_codec_method_summable(params->method);
  const CsCollectiveDef *def = cs_collective_def(kind);
  bool servers = (def->flags & CS_COLLF_SERVERS) != 0;
  /* a chain, or payloads summed one by one: each worker's payload is
   * encoded when it is used and let go after (each codec has its own
   * state, so the order across workers changes nothing), so that memory
   * and the pages touched are one payload's, not P's */
  bool reduced = summable && def->chain != CS_CHAIN_GATHER, voting = params->method == CS_CODEC_SIGN && servers;
  bool one_by_one = reduced ? def->chain == CS_CHAIN_LINE : !voting;
  bool ok = true;
  /* the payloads' buffers: one_by_one, a chain's first, the worker's and
   * reduce_into's spare, or the gathered sum's and the pull's; else the P
   * workers' and reduce_into's spare (or the vote) */
  CsArena *ar = cs_arena_new(cs_arena_size(one_by_one ? 3 : (size_t)P + 1, cap), once);
  void *spare = NULL; /* reduce_into's next output */
  /* every path below asks for the workers' gradients in increasing order, each once */
  for (uint32_t w = 0; ok && w < (one_by_one ? 1 : P); w++) ok = encode(codecs[w], round, grad(ctx, w), n, cap, &pl[w], ar, error);
  memset(result, 0, n * sizeof *result);
  if (ok && reduced) {
    if (def->chain == CS_CHAIN_LINE) { /* a chain: each hop adds one worker's payload */
      Payload mine = {NULL, 0}; /* worker w's, one buffer for all */
      for (uint32_t w = 1; ok && w < P; w++) {
        ok = encode(codecs[w], round, grad(ctx, w), n, cap, &mine, ar, error) &&
             reduce_into(codecs[w], round, &pl[0], &mine, cap, &spare, ar, error);
        if (once) cs_codec_release_scratch(codecs[w]);
      }
    } else if (def->chain == CS_CHAIN_HIER) { /* a chain in each machine, then one over the machines' sums */
      uint32_t G = group > 1 && P % group == 0 ? group : 1;
      for (uint32_t h = 0; ok && h < P; h += G)
        for (uint32_t g = 1; ok && g < G; g++) ok = reduce_into(codecs[h + g], round, &pl[h], &pl[h + g], cap, &spare, ar, error);
      for (uint32_t h = G; ok && h < P; h += G) ok = reduce_into(codecs[h], round, &pl[0], &pl[h], cap, &spare, ar, error);
    } else { /* binomial: pairs, then pairs of pairs */
      for (uint32_t step = 1; ok && step < P; step *= 2)
        for (uint32_t w = 0; ok && w + step < P; w += 2 * step)
          ok = reduce_into(codecs[w], round, &pl[w], &pl[w + step], cap, &spare, ar, error);
    }
    ok = ok && cs_codec_decode(pl[0].buf, pl[0].len, result, n, error);
  } else if (ok && voting) { /* majority vote, scaled */
    const void **bufs = g_new(const void *, P);
    size_t *lens = g_new(size_t, P);
    for (uint32_t w = 0; w < P; w++) bufs[w] = pl[w].buf, lens[w] = pl[w].len;
    void *vote = cs_arena_take(ar, cap);
    size_t len = 0;
    ok = cs_codec_sign_vote(bufs, lens, P, vote, cap, &len, error) && cs_codec_decode(vote, len, result, n, error);
    /* the vote's scale is a mean: P workers' sum is P times it */
    for (size_t i = 0; ok && i < n; i++) result[i] *= (float)P;
    g_free(bufs);
    g_free(lens);
  } else if (ok) { /* gathered: decode each and add exactly */
    for (uint32_t w = 0; ok && w < P; w++) { /* pl[0] holds each in turn */
      ok = (w == 0 || encode(codecs[w], round, grad(ctx, w), n, cap, &pl[0], ar, error)) &&
           cs_codec_decode_add(pl[0].buf, pl[0].len, result, n, error);
      if (once && w > 0) cs_codec_release_scratch(codecs[w]);
    }
    if (ok && servers && pull) { /* the server encodes the sum once more */
      Payload back = {NULL, 0};
      /* its own randomness (the next round's), but randk's indices are
       * the round's, those the pushes carried: the sum is zero elsewhere
       * (drawn anew, a pull at ratio 0.1 kept a tenth of the sum: nmse
       * 0.990 instead of 0.9, 1,422 iterations to a target instead of 110) */
      uint64_t r = cs_codec_get_params(server)->method == CS_CODEC_RANDK ? round : round + 1;
      ok = encode(server, r, result, n, cap, &back, ar, error) && cs_codec_decode(back.buf, back.len, result, n, error);
    }
  }
  g_free(pl);
  cs_arena_free(ar);
  return ok;
}

typedef struct {
  const float *x;
  size_t n;
} Given;

static const float *given(void *ctx, uint32_t w) {
  const Given *g = ctx;
  return g->x + (size_t)w * g->n;
}

bool cs_coll_reduce_real(CsCollective kind, CsCodec *const *codecs, CsCodec *server, uint32_t P, uint32_t group,
                         const float *x, size_t n, uint64_t round, bool pull, bool once, float *result, GError **error) {
  Given g = {x, n};
  return cs_coll_reduce_real_from(kind, codecs, server, P, group, given, &g, n, round, pull, once, result, error);
}

/* The nmse estimate's gradients, drawn worker by worker into one buffer
 * (the same stream as drawing all P * n at once) and added to the exact
 * sum as they are (the same order of additions). */
typedef struct {
  CsRng rng;
  float *x;
  double *exact;
  size_t n;
  uint32_t next;
} Drawn;

static const float *drawn(void *ctx, uint32_t w) {
  Drawn *d = ctx;
  g_assert(w == d->next);
  d->next++;
  cs_rng_normal_fill(&d->rng, d->x, d->n);
  for (size_t i = 0; i < d->n; i++) d->exact[i] += d->x[i];
  return d->x;
}

double cs_coll_result_nmse(CsCollective kind, const CsCodecParams *params_in, uint32_t P, uint32_t group, uint64_t n,
                           uint64_t seed, bool pull, GError **error) {
  CsCodecParams params = *params_in;
  params.error_feedback = false;
  if (P == 0 || n == 0) return 0.0;
  CsArena *ar = cs_arena_new(cs_arena_size(1, n * sizeof(double)) + cs_arena_size(2, n * sizeof(float)), TRUE);
  Drawn dr = {.exact = cs_arena_take(ar, n * sizeof(double)), .x = cs_arena_take(ar, n * sizeof(float)), .n = n};
  memset(dr.exact, 0, n * sizeof(double));
  cs_rng_init(&dr.rng, seed, cs_rng_stream_id("collective-gradient", P, n));
  double *exact = dr.exact;
  float *result = cs_arena_take(ar, n * sizeof(float)); /* reduce_real sets it whole */
  CsCodec **codecs = g_new0(CsCodec *, P);
  bool ok = true;
  for (uint32_t w = 0; ok && w < P; w++) ok = (codecs[w] = cs_codec_new(&params, w, error)) != NULL;
  /* no error feedback here: worker 0's codec serves for the server's pull encoding */
  ok = ok && cs_coll_reduce_real_from(kind, codecs, codecs[0], P, group, drawn, &dr, n, 1, pull, true, result, error);
  g_assert(!ok || dr.next == P); /* every worker's gradient is in the exact sum */
  double num = 0, den = 0;
  for (size_t i = 0; ok && i < n; i++) {
    double d = (double)result[i] - exact[i];
    num += d * d;
    den += exact[i] * exact[i];
  }
  for (uint32_t w = 0; w < P; w++) cs_codec_free(codecs[w]);
  g_free(codecs);
  cs_arena_free(ar);
  if (!ok) return NAN;
  return den > 0 ? num / den : 0.0;
}
