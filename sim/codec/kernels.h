/* kernels.h - the per-element loops of the gradient codecs (internal).
 *
 * Everything here works on plain arrays that the caller has checked and
 * sized: no GError, no allocation (top-k's candidate buffers are grown by
 * the caller through CsTopkScratch).  codec.c frames payloads around these
 * loops; tests call the pieces directly to check each one alone.
 *
 * Codes of b bits are a little-endian bit stream: element i's code starts
 * at bit i*b.  Loops work on chunks of CS_KERN_CHUNK elements, a multiple
 * of 8, so each chunk's codes start on a byte and fit stack buffers.
 */
#ifndef COMMSIM_CODEC_KERNELS_H
#define COMMSIM_CODEC_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsim/rng.h"

#define CS_KERN_CHUNK 2048

/* ---- element conversions (dst = or += src) ---- */
void cs_kern_f32_to_f16(const float *x, size_t n, uint16_t *out);
void cs_kern_f16_to_f32(const uint16_t *in, size_t n, float *out, bool add);
/* The portable loops behind the two above, used when the CPU lacks F16C;
 * tests compare them bit for bit with the hardware. */
void cs_kern_f32_to_f16_portable(const float *x, size_t n, uint16_t *out);
void cs_kern_f16_to_f32_portable(const uint16_t *in, size_t n, float *out, bool add);
bool cs_kern_have_f16c(void);
/* "avx2+f16c", "sse2+f16c" or "baseline": which clones and paths run. */
const char *cs_kern_isa(void);
void cs_kern_f32_to_bf16(const float *x, size_t n, uint16_t *out);
void cs_kern_bf16_to_f32(const uint16_t *in, size_t n, float *out, bool add);
void cs_kern_f32_to_f64(const float *x, size_t n, double *out);
void cs_kern_f64_to_f32(const double *in, size_t n, float *out, bool add);
void cs_kern_f32_copy(const float *in, size_t n, float *out, bool add);
/* One element, for sparse values. */
uint16_t cs_kern_f16_from_f32(float f);
float cs_kern_f32_from_f16(uint16_t h);
uint16_t cs_kern_bf16_from_f32(float f);
float cs_kern_f32_from_bf16(uint16_t h);

/* acc += y */
void cs_kern_add(float *acc, const float *y, size_t n);
/* out = a + b; false (and *bad = the first index) when a sum is not finite. */
bool cs_kern_add_finite(const float *a, const float *b, size_t n, float *out, size_t *bad);
/* e = s - e: the error-feedback update once e holds decode(encode(s)). */
void cs_kern_sub_from(const float *s, size_t n, float *e);
/* Index of the first NaN or infinity in x, or n. */
size_t cs_kern_find_nonfinite(const float *x, size_t n);
/* Index of the first NaN in x, or n. */
size_t cs_kern_find_nan(const float *x, size_t n);

/* ---- bucketed quantizers ----
 * meta holds per bucket: uniform (min, max); stochastic, terngrad and sign
 * one scale.  The encoders return false on a non-finite element and set
 * *bad to its index. */
bool cs_kern_uniform_encode(const float *x, size_t n, int bits, size_t bucket, float *meta,
                            uint8_t *codes, size_t *bad);
/* Stochastic rounding onto `levels` + 1 evenly spaced points of
 * [-s, s], s = max |x| of the bucket: stochastic has levels = 2^bits - 1,
 * terngrad levels = 2 (codes 0, 1, 2 = -s, 0, s) in 2 bits.  The random
 * numbers come from eight xoshiro256** streams seeded from (seed, stream
 * + lane). */
bool cs_kern_stochastic_encode(const float *x, size_t n, int bits, uint32_t levels,
                               size_t bucket, uint64_t seed, uint64_t stream, float *meta,
                               uint8_t *codes, size_t *bad);
bool cs_kern_sign_encode(const float *x, size_t n, size_t bucket, float *meta, uint8_t *codes,
                         size_t *bad);

typedef enum { CS_GRID_UNIFORM, CS_GRID_SYMMETRIC } CsGridKind;
/* out (=, +=) lo + code * step per bucket.  UNIFORM: meta (min, max),
 * step = (max - min) / levels; SYMMETRIC: meta s, lo = -s,
 * step = 2 s / levels (sign: levels 1; terngrad 2). */
void cs_kern_grid_decode(CsGridKind kind, const uint8_t *codes, const float *meta, size_t n,
                         int bits, uint32_t levels, size_t bucket, float *out, bool add);

/* Bit streams, exposed for tests: codes q[0..len) of `bits` bits written at
 * byte 0 of out (ceil(len*bits/8) bytes), and back. */
void cs_kern_pack(const uint16_t *q, size_t len, int bits, uint8_t *out);
void cs_kern_unpack(const uint8_t *in, size_t len, int bits, uint16_t *q);

/* Majority vote of `count` 1-bit streams of n elements into out (ties 1). */
void cs_kern_sign_vote(const uint8_t *const *codes, size_t count, size_t n, uint8_t *out);

/* ---- sparsifiers ---- */
typedef struct {
  float *val;
  uint32_t *idx;
  size_t cap;
} CsTopkScratch;

typedef enum { CS_TOPK_AUTO, CS_TOPK_FORCE_SAMPLE, CS_TOPK_FORCE_EXACT } CsTopkPath;
/* The k (1 <= k <= n) largest |x[i]|, ties to the lower index, as indices
 * in increasing order with their values.  false when x holds a NaN (*bad =
 * its index).  The scratch is grown (never per element) as needed.
 * Linear time: a sampled threshold picks candidates in one pass, then a
 * radix select among them; when the sample misleads, an exact radix
 * select over x (three histogram passes).  `path` forces one (tests). */
bool cs_kern_topk(const float *x, size_t n, size_t k, CsTopkScratch *scratch, uint32_t *idx,
                  float *val, size_t *bad, CsTopkPath path);
void cs_topk_scratch_clear(CsTopkScratch *scratch);

/* randk's indices: one uniform index in each of k strata
 * [floor(j n / k), floor((j+1) n / k)), drawn in order from (seed,
 * stream), so they come out increasing and every worker with the same seed
 * gets the same ones.  An iterator, so that they never need an array. */
typedef struct {
  CsRng rng;
  uint64_t n, k, j;
} CsRandkIter;
void cs_randk_iter_init(CsRandkIter *it, size_t n, size_t k, uint64_t seed, uint64_t stream);
/* Up to max more indices into idx; 0 when all k have been given. */
size_t cs_randk_iter_next(CsRandkIter *it, uint32_t *idx, size_t max);

#endif
