/* loss.h - per-packet loss models of one link direction.
 *
 * Bernoulli: each packet is lost with probability `rate`.  Gilbert-Elliott:
 * a two-state Markov chain stepped once per packet (good -> bad with
 * probability p, bad -> good with r), then the packet is lost with the
 * state's probability; the long-run loss rate is
 * p/(p+r) * loss_bad + r/(p+r) * loss_good.  Each direction owns its
 * random stream, derived from the seed and the link's identity.
 *
 * Layer 1 (models; docs/design.md). Owns per-packet loss models; does not
 * touch anything but rng.h.
 */
#ifndef COMMSIM_LOSS_H
#define COMMSIM_LOSS_H

#include <stdbool.h>

#include "commsim/rng.h"

typedef enum { CS_LOSS_NONE, CS_LOSS_BERNOULLI, CS_LOSS_GILBERT } CsLossModel;

/* A link direction's loss, as links[].loss gives it. */
typedef struct {
  CsLossModel model;
  double rate;                /* bernoulli */
  double p, r;                /* gilbert-elliott: good->bad, bad->good per packet */
  double loss_good, loss_bad; /* loss probability in each state */
} CsLossSpec;

typedef struct {
  CsLossModel model;
  bool bad;
  double rate, p, r, loss_good, loss_bad;
  CsRng rng;
} CsLossState;

void cs_loss_init(CsLossState *st, const CsLossSpec *spec, uint64_t seed, uint64_t stream);

/* Whether the next packet is lost. */
static inline bool cs_loss_next(CsLossState *st) {
  switch (st->model) {
  case CS_LOSS_NONE: return false;
  case CS_LOSS_BERNOULLI: return cs_rng_uniform(&st->rng) < st->rate;
  default:
    st->bad = st->bad ? !(cs_rng_uniform(&st->rng) < st->r) : cs_rng_uniform(&st->rng) < st->p;
    return cs_rng_uniform(&st->rng) < (st->bad ? st->loss_bad : st->loss_good);
  }
}

/* The long-run loss rate of a spec. */
double cs_loss_mean(const CsLossSpec *spec);

#endif
