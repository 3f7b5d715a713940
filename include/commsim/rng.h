/* rng.h - reproducible random streams.
 *
 * xoshiro256** (Blackman and Vigna, 2018): 256 bits of state, period
 * 2^256 - 1, passes BigCrush, a few ns a draw.  A stream is derived from
 * (seed, stream id) by SplitMix64, so each link direction, worker or
 * traffic source owns a stream of its own: adding a source does not
 * reshuffle the draws of the others (common random numbers across the
 * points of a sweep).  Stream ids are computed once, at set-up, from the
 * identity of the owner (cs_rng_stream_id); never per draw.
 *
 * Layer 0 (base; docs/design.md). Owns reproducible random streams; does not
 * touch anything else.
 */
#ifndef COMMSIM_RNG_H
#define COMMSIM_RNG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef struct {
  uint64_t s[4];
} CsRng;

/* Seed a stream from the scenario seed and the stream's id. */
void cs_rng_init(CsRng *rng, uint64_t seed, uint64_t stream);
/* A stream id from a tag and up to two integers (e.g. "link", a, b).  The
 * tag distinguishes owners of different kinds with equal numbers. */
uint64_t cs_rng_stream_id(const char *tag, uint64_t a, uint64_t b);

/* A hash of the gint64 at `key` for GHashTables, every bit mixed in.
 * (GLib 2.74's g_int64_hash keeps the low 32 bits alone: the keys
 * (src << 32 | dst) of one destination, thousands in an incast or a
 * parameter server's pushes, would all collide.) */
unsigned int cs_int64_hash(const void *key);

static inline uint64_t cs_rng_rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

/* The next 64 random bits. */
static inline uint64_t cs_rng_next(CsRng *rng) {
  uint64_t *s = rng->s;
  uint64_t result = cs_rng_rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = cs_rng_rotl(s[3], 45);
  return result;
}

/* Uniform on [0, 1), 53 random bits. */
static inline double cs_rng_uniform(CsRng *rng) {
  return (double)(cs_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, bound), bound > 0, without modulo bias (Lemire). */
uint64_t cs_rng_below(CsRng *rng, uint64_t bound);
/* Exponential with the given mean (> 0). */
double cs_rng_exponential(CsRng *rng, double mean);
/* Normal with mean mu and standard deviation sigma (Marsaglia polar). */
double cs_rng_normal(CsRng *rng, double mu, double sigma);
/* n standard normals into x, by the ziggurat: a draw and a comparison for
 * most (another sequence than n cs_rng_normal calls, at a fraction of
 * their cost: the synthetic gradients of the nmse estimates). */
void cs_rng_normal_fill(CsRng *rng, float *x, size_t n);
/* Lognormal whose underlying normal has parameters mu, sigma. */
double cs_rng_lognormal(CsRng *rng, double mu, double sigma);
/* Lognormal with the given mean and coefficient of variation (std/mean):
 * what `compute_jitter` asks for.  cv = 0 returns mean exactly. */
double cs_rng_lognormal_mean_cv(CsRng *rng, double mean, double cv);
/* true with probability p. */
static inline bool cs_rng_bernoulli(CsRng *rng, double p) {
  return cs_rng_uniform(rng) < p;
}

#endif
