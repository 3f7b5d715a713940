/* loss.c - set-up of the loss models; the per-packet step is inline. */
#include "config.h"

#include "commsim/loss.h"

void cs_loss_init(CsLossState *st, const CsLossSpec *spec, uint64_t seed, uint64_t stream) {
  st->model = spec->model;
  st->bad = false;
  st->rate = spec->rate;
  st->p = spec->p;
  st->r = spec->r;
  st->loss_good = spec->loss_good;
  st->loss_bad = spec->loss_bad;
  cs_rng_init(&st->rng, seed, stream);
}

double cs_loss_mean(const CsLossSpec *spec) {
  switch (spec->model) {
  case CS_LOSS_NONE: return 0.0;
  case CS_LOSS_BERNOULLI: return spec->rate;
  default:
    if (spec->p + spec->r == 0) return spec->loss_good;
    return spec->p / (spec->p + spec->r) * spec->loss_bad + spec->r / (spec->p + spec->r) * spec->loss_good;
  }
}
