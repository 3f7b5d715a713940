/* kernels.c - the per-element loops of the gradient codecs.
 *
 * Written for the auto-vectorizer (this file is built with
 * -ftree-vectorize -fvect-cost-model=dynamic -fno-trapping-math, see
 * local.mk): branch-free bodies of selects, fixed-width lane arrays for
 * reductions (min, max, sums) instead of one scalar accumulator, and
 * memcpy for bit casts.  -fno-trapping-math lets GCC evaluate both arms of
 * a select (it may then compute a float add whose result is thrown away);
 * nothing here reads the FPU's exception flags.
 *
 * On x86-64 the hot entry points are compiled twice (target_clones): for
 * the baseline (SSE2) and for AVX2, picked once by the loader (ifunc) from
 * the CPU.  Their helpers are always_inline so that each clone gets its own
 * copy, vectorized for its instruction set.  fp16 is the one loop the
 * compiler does not vectorize well (GCC 12 does not vectorize _Float16
 * conversion, and the bit-exact software rounding costs ~5 instructions an
 * element): on CPUs with F16C it uses the conversion instruction through
 * intrinsics, and the portable loop otherwise; tests check that both give
 * the same bits.
 */
#include "config.h"

#include "kernels.h"

#include <float.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "commsim/rng.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && \
    defined(__linux__)
#define CS_X86_DISPATCH 1
#define CS_KERNEL __attribute__((target_clones("default", "avx2")))
#include <immintrin.h>
#else
#define CS_X86_DISPATCH 0
#define CS_KERNEL
#endif

#define CS_INLINE static inline __attribute__((always_inline))
#define CHUNK CS_KERN_CHUNK
#define LANES 8

CS_INLINE uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

CS_INLINE float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* ---- fp16 and bf16, one element ---- */

/* fp32 -> fp16, round to nearest even, as F16C's VCVTPS2PH does it
 * (after F. Giesen's float_to_half_fast3_rtne): NaN stays NaN (quiet,
 * sign and top payload bits kept), magnitudes from 65520 up become inf,
 * below 2^-14 the result is subnormal. */
CS_INLINE uint16_t f16_from_f32(float f) {
  int32_t x = (int32_t)f2u(f);
  int32_t a = x & 0x7fffffff;
  int32_t sign = (int32_t)(((uint32_t)x >> 16) & 0x8000u);
  int32_t nan = 0x7e00 | ((a >> 13) & 0x3ff);
  int32_t big = a > 0x7f800000 ? nan : 0x7c00;
  /* Subnormal: a + 0.5 puts the 2^-24 unit at the float's last mantissa
   * bit, and the FPU's own rounding is round-to-nearest-even. */
  int32_t sub = (int32_t)f2u(u2f((uint32_t)a) + 0.5f) - 0x3f000000;
  /* Normal: rebias the exponent, add half an fp16 ulp minus one plus the
   * kept lowest bit (ties to even), then drop 13 bits.  A carry out of
   * the mantissa bumps the exponent, up to inf, as it should. */
  int32_t norm = (a - 0x38000000 + 0xfff + ((a >> 13) & 1)) >> 13;
  int32_t o = a >= 0x47800000 ? big : (a < 0x38800000 ? sub : norm);
  return (uint16_t)(o | sign);
}

CS_INLINE float f32_from_f16(uint16_t h) {
  uint32_t o = ((uint32_t)h & 0x7fffu) << 13;
  uint32_t exp = o & 0x0f800000u;
  o += 0x38000000u; /* rebias 15 -> 127 */
  /* exponent 31: inf or NaN (made quiet, as the hardware does) */
  uint32_t infnan = (o + 0x38000000u) | ((o & 0x007fffffu) ? 0x00400000u : 0u);
  /* exponent 0: zero or subnormal, renormalized by the FPU */
  uint32_t sub = f2u(u2f(o + 0x00800000u) - u2f(0x38800000u));
  uint32_t r = exp == 0x0f800000u ? infnan : (exp == 0 ? sub : o);
  return u2f(r | (((uint32_t)h & 0x8000u) << 16));
}

/* fp32 -> bf16: the top 16 bits, rounded to nearest even; NaN made quiet. */
CS_INLINE uint16_t bf16_from_f32(float f) {
  uint32_t u = f2u(f);
  uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  uint32_t q = (u >> 16) | 0x40u;
  return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? q : r);
}

CS_INLINE float f32_from_bf16(uint16_t h) { return u2f((uint32_t)h << 16); }

uint16_t cs_kern_f16_from_f32(float f) { return f16_from_f32(f); }
float cs_kern_f32_from_f16(uint16_t h) { return f32_from_f16(h); }
uint16_t cs_kern_bf16_from_f32(float f) { return bf16_from_f32(f); }
float cs_kern_f32_from_bf16(uint16_t h) { return f32_from_bf16(h); }

/* ---- element conversions ---- */

CS_KERNEL void cs_kern_f32_to_f16_portable(const float *restrict x, size_t n,
                                           uint16_t *restrict out) {
  for (size_t i = 0; i < n; i++) out[i] = f16_from_f32(x[i]);
}

CS_KERNEL void cs_kern_f16_to_f32_portable(const uint16_t *restrict in, size_t n,
                                           float *restrict out, bool add) {
  if (add)
    for (size_t i = 0; i < n; i++) out[i] += f32_from_f16(in[i]);
  else
    for (size_t i = 0; i < n; i++) out[i] = f32_from_f16(in[i]);
}

#if CS_X86_DISPATCH
bool cs_kern_have_f16c(void) { return __builtin_cpu_supports("f16c"); }

const char *cs_kern_isa(void) {
  bool f16c = cs_kern_have_f16c();
  if (__builtin_cpu_supports("avx2")) return f16c ? "avx2+f16c" : "avx2";
  return f16c ? "sse2+f16c" : "baseline";
}

__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(const float *restrict x,
                                                                 size_t n,
                                                                 uint16_t *restrict out) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i a = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    __m128i b = _mm256_cvtps_ph(_mm256_loadu_ps(x + i + 8), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128((__m128i *)(void *)(out + i), a);
    _mm_storeu_si128((__m128i *)(void *)(out + i + 8), b);
  }
  for (; i < n; i++) out[i] = f16_from_f32(x[i]);
}

__attribute__((target("avx,f16c"))) static void f16_to_f32_f16c(const uint16_t *restrict in,
                                                                 size_t n, float *restrict out,
                                                                 bool add) {
  size_t i = 0;
  if (add) {
    for (; i + 8 <= n; i += 8) {
      __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(in + i)));
      _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i), v));
    }
    for (; i < n; i++) out[i] += f32_from_f16(in[i]);
  } else {
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(out + i,
                       _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(in + i))));
    for (; i < n; i++) out[i] = f32_from_f16(in[i]);
  }
}

void cs_kern_f32_to_f16(const float *x, size_t n, uint16_t *out) {
  if (cs_kern_have_f16c())
    f32_to_f16_f16c(x, n, out);
  else
    cs_kern_f32_to_f16_portable(x, n, out);
}

void cs_kern_f16_to_f32(const uint16_t *in, size_t n, float *out, bool add) {
  if (cs_kern_have_f16c())
    f16_to_f32_f16c(in, n, out, add);
  else
    cs_kern_f16_to_f32_portable(in, n, out, add);
}
#else
bool cs_kern_have_f16c(void) { return false; }
const char *cs_kern_isa(void) { return "baseline"; }
void cs_kern_f32_to_f16(const float *x, size_t n, uint16_t *out) {
  cs_kern_f32_to_f16_portable(x, n, out);
}
void cs_kern_f16_to_f32(const uint16_t *in, size_t n, float *out, bool add) {
  cs_kern_f16_to_f32_portable(in, n, out, add);
}
#endif

CS_KERNEL void cs_kern_f32_to_bf16(const float *restrict x, size_t n, uint16_t *restrict out) {
  for (size_t i = 0; i < n; i++) out[i] = bf16_from_f32(x[i]);
}

CS_KERNEL void cs_kern_bf16_to_f32(const uint16_t *restrict in, size_t n, float *restrict out,
                                   bool add) {
  if (add)
    for (size_t i = 0; i < n; i++) out[i] += f32_from_bf16(in[i]);
  else
    for (size_t i = 0; i < n; i++) out[i] = f32_from_bf16(in[i]);
}

CS_KERNEL void cs_kern_f32_to_f64(const float *restrict x, size_t n, double *restrict out) {
  for (size_t i = 0; i < n; i++) out[i] = (double)x[i];
}

CS_KERNEL void cs_kern_f64_to_f32(const double *restrict in, size_t n, float *restrict out,
                                  bool add) {
  if (add)
    for (size_t i = 0; i < n; i++) out[i] += (float)in[i];
  else
    for (size_t i = 0; i < n; i++) out[i] = (float)in[i];
}

CS_KERNEL void cs_kern_f32_copy(const float *restrict in, size_t n, float *restrict out,
                                bool add) {
  if (add)
    for (size_t i = 0; i < n; i++) out[i] += in[i];
  else
    memcpy(out, in, n * sizeof *out);
}

CS_KERNEL void cs_kern_add(float *restrict acc, const float *restrict y, size_t n) {
  for (size_t i = 0; i < n; i++) acc[i] += y[i];
}

/* x * 0 is 0 for a finite x and NaN for inf and NaN: summed over lanes it
 * says whether a block holds a non-finite value, without a branch. */
CS_INLINE bool block_finite(const float *restrict x, size_t n) {
  float acc[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; l++) acc[l] += x[i + l] * 0.0f;
  float s = 0.0f;
  for (; i < n; i++) s += x[i] * 0.0f;
  for (int l = 0; l < LANES; l++) s += acc[l];
  return s == 0.0f;
}

CS_KERNEL size_t cs_kern_find_nonfinite(const float *restrict x, size_t n) {
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t len = MIN(CHUNK, n - i);
    if (!block_finite(x + i, len))
      for (size_t j = i; j < i + len; j++)
        if (!isfinite(x[j])) return j;
  }
  return n;
}

CS_KERNEL size_t cs_kern_find_nan(const float *restrict x, size_t n) {
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t len = MIN(CHUNK, n - i);
    int any = 0;
    for (size_t j = i; j < i + len; j++) any |= (f2u(x[j]) & 0x7fffffffu) > 0x7f800000u;
    if (any)
      for (size_t j = i; j < i + len; j++)
        if (isnan(x[j])) return j;
  }
  return n;
}

CS_KERNEL bool cs_kern_add_finite(const float *restrict a, const float *restrict b, size_t n,
                                  float *restrict out, size_t *bad) {
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t len = MIN(CHUNK, n - i);
    for (size_t j = i; j < i + len; j++) out[j] = a[j] + b[j];
    if (!block_finite(out + i, len)) {
      for (size_t j = i; j < i + len; j++)
        if (!isfinite(out[j])) {
          *bad = j;
          return false;
        }
    }
  }
  return true;
}

CS_KERNEL void cs_kern_sub_from(const float *restrict s, size_t n, float *restrict e) {
  for (size_t i = 0; i < n; i++) e[i] = s[i] - e[i];
}

/* ---- bucket statistics (false: a non-finite element) ---- */

CS_INLINE bool stats_minmax(const float *restrict x, size_t n, float *lo, float *hi) {
  float mn[LANES], mx[LANES], bad[LANES];
  for (int l = 0; l < LANES; l++) mn[l] = mx[l] = x[0], bad[l] = 0.0f;
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; l++) {
      float v = x[i + l];
      mn[l] = v < mn[l] ? v : mn[l];
      mx[l] = v > mx[l] ? v : mx[l];
      bad[l] += v * 0.0f;
    }
  float a = mn[0], b = mx[0], z = 0.0f;
  for (; i < n; i++) {
    float v = x[i];
    a = v < a ? v : a;
    b = v > b ? v : b;
    z += v * 0.0f;
  }
  for (int l = 0; l < LANES; l++) {
    a = mn[l] < a ? mn[l] : a;
    b = mx[l] > b ? mx[l] : b;
    z += bad[l];
  }
  *lo = a;
  *hi = b;
  return z == 0.0f;
}

CS_INLINE bool stats_maxabs(const float *restrict x, size_t n, float *s) {
  float mx[LANES] = {0}, bad[LANES] = {0};
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int l = 0; l < LANES; l++) {
      float v = x[i + l];
      float a = fabsf(v);
      mx[l] = a > mx[l] ? a : mx[l];
      bad[l] += v * 0.0f;
    }
  float m = 0.0f, z = 0.0f;
  for (; i < n; i++) {
    float a = fabsf(x[i]);
    m = a > m ? a : m;
    z += x[i] * 0.0f;
  }
  for (int l = 0; l < LANES; l++) {
    m = mx[l] > m ? mx[l] : m;
    z += bad[l];
  }
  *s = m;
  return z == 0.0f;
}

/* Mean |x|: float lanes within a chunk (at most CHUNK / LANES terms each),
 * double across chunks, so a bucket of millions keeps its precision. */
CS_INLINE bool stats_meanabs(const float *restrict x, size_t n, float *mean) {
  double total = 0.0;
  float z = 0.0f;
  for (size_t c = 0; c < n; c += CHUNK) {
    size_t len = MIN(CHUNK, n - c);
    const float *p = x + c;
    float sum[LANES] = {0}, bad[LANES] = {0};
    size_t i = 0;
    for (; i + LANES <= len; i += LANES)
      for (int l = 0; l < LANES; l++) {
        sum[l] += fabsf(p[i + l]);
        bad[l] += p[i + l] * 0.0f;
      }
    float s = 0.0f;
    for (; i < len; i++) {
      s += fabsf(p[i]);
      z += p[i] * 0.0f;
    }
    for (int l = 0; l < LANES; l++) s += sum[l], z += bad[l];
    total += (double)s;
  }
  if (z == 0.0f && !isfinite(total)) { /* finite values whose float sums overflowed (|x| near 1e36 and up): in double */
    total = 0.0;
    for (size_t i = 0; i < n; i++) total += fabs((double)x[i]);
  }
  *mean = (float)(total / (double)n);
  return z == 0.0f;
}

/* ---- bit streams ---- */

CS_INLINE void pack_group_generic(const uint16_t *q, int bits, uint8_t *out) {
  /* 8 codes of `bits` bits are exactly `bits` bytes */
  unsigned __int128 acc = 0;
  for (int t = 0; t < 8; t++) acc |= (unsigned __int128)q[t] << (t * bits);
  for (int b = 0; b < bits; b++) out[b] = (uint8_t)(acc >> (8 * b));
}

CS_INLINE void unpack_group_generic(const uint8_t *in, int bits, uint16_t *q) {
  unsigned __int128 acc = 0;
  for (int b = 0; b < bits; b++) acc |= (unsigned __int128)in[b] << (8 * b);
  uint32_t mask = (1u << bits) - 1u;
  for (int t = 0; t < 8; t++) q[t] = (uint16_t)((acc >> (t * bits)) & mask);
}

CS_INLINE void pack_full(const uint16_t *restrict q, size_t groups, int bits,
                         uint8_t *restrict out) {
  switch (bits) {
    case 8:
      for (size_t i = 0; i < groups * 8; i++) out[i] = (uint8_t)q[i];
      break;
    case 16:
      for (size_t i = 0; i < groups * 8; i++) {
        out[2 * i] = (uint8_t)q[i];
        out[2 * i + 1] = (uint8_t)(q[i] >> 8);
      }
      break;
    case 1:
      for (size_t j = 0; j < groups; j++) {
        unsigned b = 0;
        for (int t = 0; t < 8; t++) b |= (q[8 * j + t] & 1u) ? 1u << t : 0u;
        out[j] = (uint8_t)b;
      }
      break;
    case 2:
      /* a group is one 16-bit word; the shifts are multiplies, as above */
      for (size_t j = 0; j < groups; j++) {
        uint16_t w = 0;
        for (int t = 0; t < 8; t++) w |= (uint16_t)((q[8 * j + t] & 3u) * (1u << (2 * t)));
        out[2 * j] = (uint8_t)w;
        out[2 * j + 1] = (uint8_t)(w >> 8);
      }
      break;
    case 4:
      for (size_t j = 0; j < groups * 4; j++)
        out[j] = (uint8_t)((q[2 * j] & 15u) | ((q[2 * j + 1] & 15u) << 4));
      break;
    default:
      for (size_t j = 0; j < groups; j++) pack_group_generic(q + 8 * j, bits, out + j * bits);
  }
}

CS_INLINE void unpack_full(const uint8_t *restrict in, size_t groups, int bits,
                           uint16_t *restrict q) {
  switch (bits) {
    case 8:
      for (size_t i = 0; i < groups * 8; i++) q[i] = in[i];
      break;
    case 16:
      for (size_t i = 0; i < groups * 8; i++)
        q[i] = (uint16_t)(in[2 * i] | ((unsigned)in[2 * i + 1] << 8));
      break;
    /* A byte at a time, each code lifted to the top of a 16-bit lane by a
     * multiply and brought down by one common shift: SSE2 and AVX2 have
     * no per-lane shift of 16-bit lanes, but they have the multiply. */
    case 1:
      for (size_t j = 0; j < groups / 2; j++) {
        uint16_t w = (uint16_t)(in[2 * j] | (unsigned)in[2 * j + 1] << 8);
        for (int t = 0; t < 16; t++)
          q[16 * j + t] = (uint16_t)((uint16_t)(w * (1u << (15 - t))) >> 15);
      }
      if (groups % 2)
        for (int t = 0; t < 8; t++)
          q[8 * (groups - 1) + t] = (uint16_t)((in[groups - 1] >> t) & 1u);
      break;
    case 2:
      for (size_t j = 0; j < groups; j++) {
        uint16_t w = (uint16_t)(in[2 * j] | (unsigned)in[2 * j + 1] << 8);
        for (int t = 0; t < 8; t++)
          q[8 * j + t] = (uint16_t)((uint16_t)(w * (1u << (14 - 2 * t))) >> 14);
      }
      break;
    case 4:
      for (size_t j = 0; j < groups * 4; j++)
        for (int t = 0; t < 2; t++)
          q[2 * j + t] = (uint16_t)((uint16_t)(in[j] * (1u << (12 - 4 * t))) >> 12);
      break;
    default:
      for (size_t j = 0; j < groups; j++) unpack_group_generic(in + j * bits, bits, q + 8 * j);
  }
}

/* len codes: whole groups of 8 straight, the tail through a padded group
 * so that no byte past ceil(len*bits/8) is touched. */
CS_INLINE void pack_codes(const uint16_t *q, size_t len, int bits, uint8_t *out) {
  size_t groups = len / 8, rest = len % 8;
  pack_full(q, groups, bits, out);
  if (rest) {
    uint16_t tq[8] = {0};
    uint8_t tb[16];
    memcpy(tq, q + groups * 8, rest * sizeof *tq);
    pack_group_generic(tq, bits, tb);
    memcpy(out + groups * bits, tb, (rest * (size_t)bits + 7) / 8);
  }
}

CS_INLINE void unpack_codes(const uint8_t *in, size_t len, int bits, uint16_t *q) {
  size_t groups = len / 8, rest = len % 8;
  unpack_full(in, groups, bits, q);
  if (rest) {
    uint8_t tb[16] = {0};
    uint16_t tq[8];
    memcpy(tb, in + groups * bits, (rest * (size_t)bits + 7) / 8);
    unpack_group_generic(tb, bits, tq);
    memcpy(q + groups * 8, tq, rest * sizeof *tq);
  }
}

CS_KERNEL void cs_kern_pack(const uint16_t *q, size_t len, int bits, uint8_t *out) {
  pack_codes(q, len, bits, out);
}

CS_KERNEL void cs_kern_unpack(const uint8_t *in, size_t len, int bits, uint16_t *q) {
  unpack_codes(in, len, bits, q);
}

/* ---- the grid: code = round((x - lo) / step), value = lo + code * step ---- */

/* A bucket's grid in float when its span and inverse step fit in float
 * (the fast path, always taken for gradients), else in double: a bucket
 * spanning -3e38..3e38 must not overflow to inf. */
typedef struct {
  float lo, step, inv;
  double lo_d, step_d, inv_d;
  bool flat;   /* span 0: every code 0 */
  bool in_f32; /* the float fields are usable */
} Grid;

CS_INLINE Grid grid_make(float lo, double span, uint32_t levels) {
  Grid g;
  g.lo = lo;
  g.lo_d = lo;
  g.flat = !(span > 0.0);
  g.step_d = g.flat ? 0.0 : span / levels;
  g.inv_d = g.flat ? 0.0 : levels / span;
  g.in_f32 = span <= FLT_MAX && g.inv_d <= FLT_MAX;
  g.step = g.in_f32 ? (float)g.step_d : 0.0f;
  g.inv = g.in_f32 ? (float)g.inv_d : 0.0f;
  return g;
}

/* Round to nearest (half up): floor, then +1 when the fraction is at least
 * one half.  t - floor(t) is exact, so this is exact round-half-up of t,
 * which (int)(t + 0.5f) is not (0.49999997f + 0.5f rounds to 1). */
CS_INLINE void grid_round(const float *restrict x, size_t len, Grid g, uint32_t levels,
                          uint16_t *restrict q) {
  if (g.flat) {
    memset(q, 0, len * sizeof *q);
  } else if (g.in_f32) {
    const float top = (float)levels;
    for (size_t i = 0; i < len; i++) {
      float t = (x[i] - g.lo) * g.inv;
      t = t < 0.0f ? 0.0f : t;
      t = t > top ? top : t;
      int32_t f = (int32_t)t;
      q[i] = (uint16_t)(f + (t - (float)f >= 0.5f));
    }
  } else {
    for (size_t i = 0; i < len; i++) {
      double t = ((double)x[i] - g.lo_d) * g.inv_d;
      t = t < 0.0 ? 0.0 : (t > levels ? levels : t);
      int32_t f = (int32_t)t;
      q[i] = (uint16_t)(f + (t - f >= 0.5));
    }
  }
}

/* Stochastic rounding: floor, then +1 with probability equal to the
 * fraction, decided by u < frac with u uniform on [0, 1) in steps of 2^-16
 * (so the rounding is unbiased to 2^-16 of a step, the resolution of t's
 * fraction itself at 8 bits).  The mask on f is a no-op (f <= 65535) that
 * keeps GCC from turning (float)(int)t into a truncation call, which its
 * if-conversion then refused in the AVX2 clone ("control flow in loop"). */
CS_INLINE void grid_round_stochastic(const float *restrict x, size_t len, Grid g, uint32_t levels,
                                     const uint16_t *restrict r, uint16_t *restrict q) {
  if (g.flat) {
    memset(q, 0, len * sizeof *q);
  } else if (g.in_f32) {
    const float top = (float)levels;
    for (size_t i = 0; i < len; i++) {
      float t = (x[i] - g.lo) * g.inv;
      t = t < 0.0f ? 0.0f : t;
      t = t > top ? top : t;
      int32_t f = (int32_t)t;
      float u = (float)r[i] * 0x1.0p-16f;
      q[i] = (uint16_t)(f + (u < t - (float)(f & 0xffff)));
    }
  } else {
    for (size_t i = 0; i < len; i++) {
      double t = ((double)x[i] - g.lo_d) * g.inv_d;
      t = t < 0.0 ? 0.0 : (t > levels ? levels : t);
      int32_t f = (int32_t)t;
      double u = (double)r[i] * 0x1.0p-16;
      q[i] = (uint16_t)(f + (u < t - f));
    }
  }
}

CS_INLINE void grid_values(const uint16_t *restrict q, size_t len, Grid g, float *restrict out,
                           bool add) {
  if (g.in_f32 || g.flat) {
    const float lo = g.lo, step = g.step;
    if (add)
      for (size_t i = 0; i < len; i++) out[i] += lo + (float)q[i] * step;
    else
      for (size_t i = 0; i < len; i++) out[i] = lo + (float)q[i] * step;
  } else {
    /* lo + q step stays within [lo, hi] in double, so it fits in float */
    for (size_t i = 0; i < len; i++) {
      float v = (float)(g.lo_d + q[i] * g.step_d);
      out[i] = add ? out[i] + v : v;
    }
  }
}

/* ---- eight xoshiro256** streams side by side, for the vectorizer ---- */

typedef struct {
  uint64_t s0[LANES], s1[LANES], s2[LANES], s3[LANES];
} Lanes;

static void lanes_init(Lanes *z, uint64_t seed, uint64_t stream) {
  for (int l = 0; l < LANES; l++) {
    CsRng r;
    cs_rng_init(&r, seed, stream + (uint64_t)l);
    z->s0[l] = r.s[0], z->s1[l] = r.s[1], z->s2[l] = r.s[2], z->s3[l] = r.s[3];
  }
}

/* n (a multiple of 4 * LANES) random 16-bit words: cs_rng_next() on each
 * lane in turn, all four quarters of each output used.  16 bits are as
 * fine as the fraction they are compared with: for b >= 8 bits, t in
 * [0, 2^b - 1] carries at most 16 bits below its binary point. */
CS_INLINE void lanes_fill(Lanes *restrict z, uint16_t *restrict out, size_t n) {
  uint64_t a[LANES], b[LANES], c[LANES], d[LANES];
  memcpy(a, z->s0, sizeof a), memcpy(b, z->s1, sizeof b);
  memcpy(c, z->s2, sizeof c), memcpy(d, z->s3, sizeof d);
  for (size_t i = 0; i + 4 * LANES <= n; i += 4 * LANES)
    for (int l = 0; l < LANES; l++) {
      uint64_t m = b[l] * 5;
      uint64_t r = ((m << 7) | (m >> 57)) * 9;
      uint64_t t = b[l] << 17;
      c[l] ^= a[l];
      d[l] ^= b[l];
      b[l] ^= c[l];
      a[l] ^= d[l];
      c[l] ^= t;
      d[l] = (d[l] << 45) | (d[l] >> 19);
      out[i + l] = (uint16_t)r;
      out[i + LANES + l] = (uint16_t)(r >> 16);
      out[i + 2 * LANES + l] = (uint16_t)(r >> 32);
      out[i + 3 * LANES + l] = (uint16_t)(r >> 48);
    }
  memcpy(z->s0, a, sizeof a), memcpy(z->s1, b, sizeof b);
  memcpy(z->s2, c, sizeof c), memcpy(z->s3, d, sizeof d);
}

/* ---- bucketed encoders ----
 * Chunk by chunk: first the statistics of every bucket that starts before
 * the chunk's end (a bucket may run past it), then the chunk's codes,
 * bucket segment by segment, then the codes packed at byte c0*bits/8. */

static inline bool first_bad(const float *x, size_t b0, size_t b1, size_t *bad) {
  *bad = b0 + cs_kern_find_nonfinite(x + b0, b1 - b0);
  return false;
}

CS_KERNEL bool cs_kern_uniform_encode(const float *restrict x, size_t n, int bits, size_t m,
                                      float *restrict meta, uint8_t *restrict codes,
                                      size_t *bad) {
  uint16_t q[CHUNK];
  const uint32_t levels = (1u << bits) - 1u;
  size_t next = 0; /* buckets whose statistics are in meta */
  for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
    size_t c1 = MIN(c0 + CHUNK, n);
    for (; next * m < c1; next++) {
      size_t b0 = next * m, b1 = MIN(b0 + m, n);
      if (!stats_minmax(x + b0, b1 - b0, &meta[2 * next], &meta[2 * next + 1]))
        return first_bad(x, b0, b1, bad);
    }
    for (size_t i = c0; i < c1;) {
      size_t b = i / m, e = MIN(c1, (b + 1) * m);
      float lo = meta[2 * b], hi = meta[2 * b + 1];
      grid_round(x + i, e - i, grid_make(lo, (double)hi - (double)lo, levels), levels,
                 q + (i - c0));
      i = e;
    }
    pack_codes(q, c1 - c0, bits, codes + c0 / 8 * (size_t)bits);
  }
  return true;
}

CS_KERNEL bool cs_kern_stochastic_encode(const float *restrict x, size_t n, int bits,
                                         uint32_t levels, size_t m, uint64_t seed,
                                         uint64_t stream, float *restrict meta,
                                         uint8_t *restrict codes, size_t *bad) {
  uint16_t q[CHUNK], r[CHUNK];
  Lanes lanes;
  lanes_init(&lanes, seed, stream);
  size_t next = 0;
  for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
    size_t c1 = MIN(c0 + CHUNK, n);
    for (; next * m < c1; next++) {
      size_t b0 = next * m, b1 = MIN(b0 + m, n);
      if (!stats_maxabs(x + b0, b1 - b0, &meta[next])) return first_bad(x, b0, b1, bad);
    }
    lanes_fill(&lanes, r, CHUNK);
    for (size_t i = c0; i < c1;) {
      size_t b = i / m, e = MIN(c1, (b + 1) * m);
      float s = meta[b];
      grid_round_stochastic(x + i, e - i, grid_make(-s, 2.0 * (double)s, levels), levels,
                            r + (i - c0), q + (i - c0));
      i = e;
    }
    pack_codes(q, c1 - c0, bits, codes + c0 / 8 * (size_t)bits);
  }
  return true;
}

/* One bit per element, 1 for x >= 0 (both zeros count as positive). */
CS_INLINE void sign_bits(const float *restrict x, size_t len, uint8_t *restrict out) {
  size_t groups = len / 8;
  for (size_t j = 0; j < groups; j++) {
    unsigned b = 0;
    for (int t = 0; t < 8; t++) b |= x[8 * j + t] >= 0.0f ? 1u << t : 0u;
    out[j] = (uint8_t)b;
  }
  if (len % 8) {
    unsigned b = 0;
    for (size_t t = 0; t < len % 8; t++) b |= (unsigned)(x[8 * groups + t] >= 0.0f) << t;
    out[groups] = (uint8_t)b;
  }
}

CS_KERNEL bool cs_kern_sign_encode(const float *restrict x, size_t n, size_t m,
                                   float *restrict meta, uint8_t *restrict codes, size_t *bad) {
  size_t next = 0;
  for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
    size_t c1 = MIN(c0 + CHUNK, n);
    for (; next * m < c1; next++) {
      size_t b0 = next * m, b1 = MIN(b0 + m, n);
      if (!stats_meanabs(x + b0, b1 - b0, &meta[next])) return first_bad(x, b0, b1, bad);
    }
    sign_bits(x + c0, c1 - c0, codes + c0 / 8);
  }
  return true;
}

CS_KERNEL void cs_kern_grid_decode(CsGridKind kind, const uint8_t *restrict codes,
                                   const float *restrict meta, size_t n, int bits,
                                   uint32_t levels, size_t m, float *restrict out, bool add) {
  uint16_t q[CHUNK];
  for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
    size_t c1 = MIN(c0 + CHUNK, n);
    unpack_codes(codes + c0 / 8 * (size_t)bits, c1 - c0, bits, q);
    for (size_t i = c0; i < c1;) {
      size_t b = i / m, e = MIN(c1, (b + 1) * m);
      Grid g;
      if (kind == CS_GRID_UNIFORM) {
        float lo = meta[2 * b], hi = meta[2 * b + 1];
        g = grid_make(lo, (double)hi - (double)lo, levels);
      } else {
        float s = meta[b];
        g = grid_make(-s, 2.0 * (double)s, levels);
      }
      grid_values(q + (i - c0), e - i, g, out + i, add);
      i = e;
    }
  }
}

CS_KERNEL void cs_kern_sign_vote(const uint8_t *const *codes, size_t count, size_t n,
                                 uint8_t *restrict out) {
  uint32_t votes[CHUNK];
  uint16_t q[CHUNK];
  for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
    size_t len = MIN(CHUNK, n - c0);
    memset(votes, 0, len * sizeof *votes);
    for (size_t p = 0; p < count; p++) {
      unpack_codes(codes[p] + c0 / 8, len, 1, q);
      for (size_t i = 0; i < len; i++) votes[i] += q[i];
    }
    /* 1 when at least half voted 1: 2 votes >= count */
    for (size_t i = 0; i < len; i++) q[i] = (uint16_t)(2 * (uint64_t)votes[i] >= count);
    pack_codes(q, len, 1, out + c0 / 8);
  }
}

/* ---- top-k ---- */

CS_INLINE uint32_t mag_key(float f) { return f2u(f) & 0x7fffffffu; }

/* The k-th largest magnitude key among v[0..count) (1 <= k <= count), and
 * how many keys are larger.  Radix select on the 31 key bits, 11 + 11 + 9:
 * a histogram per level, the next level only over the chosen bin.  Four
 * interleaved histograms keep runs of equal bins (gradients cluster in a
 * few exponents) from serializing on one counter. */
static uint32_t radix_kth(const float *restrict v, size_t count, size_t k, size_t *above) {
  static const int shift[3] = {20, 9, 0};
  static const uint32_t mask[3] = {0x7ff, 0x7ff, 0x1ff};
  uint32_t hist[4][2048];
  uint32_t prefix = 0;
  size_t need = k, over = 0;
  for (int level = 0; level < 3; level++) {
    const int sh = shift[level], up = level == 0 ? 31 : shift[level - 1];
    const uint32_t mk = mask[level], want = prefix;
    memset(hist, 0, sizeof hist);
    size_t i = 0;
    if (level == 0) {
      for (; i + 4 <= count; i += 4) {
        hist[0][mag_key(v[i]) >> sh]++;
        hist[1][mag_key(v[i + 1]) >> sh]++;
        hist[2][mag_key(v[i + 2]) >> sh]++;
        hist[3][mag_key(v[i + 3]) >> sh]++;
      }
      for (; i < count; i++) hist[0][mag_key(v[i]) >> sh]++;
    } else {
      for (; i < count; i++) {
        uint32_t key = mag_key(v[i]);
        if ((key >> up) == want) hist[i & 3][(key >> sh) & mk]++;
      }
    }
    uint32_t bin = mk;
    for (;; bin--) {
      size_t c = (size_t)hist[0][bin] + hist[1][bin] + hist[2][bin] + hist[3][bin];
      if (c >= need) break;
      need -= c;
      over += c;
    }
    prefix = (prefix << (up - sh)) | bin;
  }
  *above = over;
  return prefix;
}

static void scratch_reserve(CsTopkScratch *s, size_t cap) {
  if (s->cap >= cap) return;
  size_t c = MAX(cap, s->cap + s->cap / 2);
  g_free(s->val);
  g_free(s->idx);
  s->val = g_new(float, c);
  s->idx = g_new(uint32_t, c);
  s->cap = c;
}

void cs_topk_scratch_clear(CsTopkScratch *s) {
  g_free(s->val);
  g_free(s->idx);
  s->val = NULL;
  s->idx = NULL;
  s->cap = 0;
}

#define TOPK_SAMPLE 8192
#define TOPK_SAMPLE_MIN_N 65536
#define TOPK_BLOCK 16

typedef enum { SAMPLE_DONE, SAMPLE_NAN, SAMPLE_FALLBACK } SampleResult;

/* One pass: a threshold L from a strided sample, chosen so that at least k
 * elements lie at or above it with overwhelming probability (4 sigma plus
 * 8 on the sample's count), and not many more; the elements at or above L
 * are collected in index order, the exact threshold found among them. */
CS_KERNEL static SampleResult topk_sampled(const float *restrict x, size_t n, size_t k,
                                           CsTopkScratch *s, uint32_t *restrict idx,
                                           float *restrict val, size_t *bad) {
  size_t ns = MIN((size_t)TOPK_SAMPLE, n);
  double e = (double)ns * (double)k / (double)n;
  size_t r = (size_t)ceil(e + 4.0 * sqrt(e) + 8.0);
  if (r >= ns) return SAMPLE_FALLBACK;
  size_t cap = MIN(n, 2 * r * (n / ns + 1) + 4096);
  scratch_reserve(s, MAX(cap, ns));
  for (size_t j = 0; j < ns; j++) s->val[j] = x[(uint64_t)j * n / ns];
  size_t dummy;
  uint32_t lim = radix_kth(s->val, ns, r, &dummy);
  if (lim > 0x7f800000u) return SAMPLE_NAN; /* the sample saw a NaN */

  float *restrict cv = s->val;
  uint32_t *restrict ci = s->idx;
  size_t c = 0, i = 0;
  const int32_t L = (int32_t)lim;
  for (; i + TOPK_BLOCK <= n; i += TOPK_BLOCK) {
    int any = 0;
    for (int t = 0; t < TOPK_BLOCK; t++) any |= (int32_t)mag_key(x[i + t]) >= L;
    if (!any) continue;
    for (int t = 0; t < TOPK_BLOCK; t++)
      if ((int32_t)mag_key(x[i + t]) >= L) {
        if (c == cap) return SAMPLE_FALLBACK;
        cv[c] = x[i + t];
        ci[c++] = (uint32_t)(i + t);
      }
  }
  for (; i < n; i++)
    if ((int32_t)mag_key(x[i]) >= L) {
      if (c == cap) return SAMPLE_FALLBACK;
      cv[c] = x[i];
      ci[c++] = (uint32_t)i;
    }
  if (c < k) return SAMPLE_FALLBACK;
  /* every NaN key is above L, so the first NaN of x is among these */
  for (size_t j = 0; j < c; j++)
    if (mag_key(cv[j]) > 0x7f800000u) {
      *bad = ci[j];
      return SAMPLE_NAN;
    }
  size_t above;
  uint32_t thr = radix_kth(cv, c, k, &above);
  size_t ties = k - above, o = 0;
  for (size_t j = 0; j < c; j++) {
    uint32_t key = mag_key(cv[j]);
    if (key > thr || (key == thr && ties > 0)) {
      ties -= key == thr;
      idx[o] = ci[j];
      val[o++] = cv[j];
    }
  }
  g_assert(o == k);
  return SAMPLE_DONE;
}

CS_KERNEL static void topk_exact(const float *restrict x, size_t n, size_t k,
                                 uint32_t *restrict idx, float *restrict val) {
  size_t above;
  uint32_t thr = radix_kth(x, n, k, &above);
  size_t ties = k - above, o = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t key = mag_key(x[i]);
    if (key > thr || (key == thr && ties > 0)) {
      ties -= key == thr;
      idx[o] = (uint32_t)i;
      val[o++] = x[i];
    }
  }
  g_assert(o == k);
}

bool cs_kern_topk(const float *x, size_t n, size_t k, CsTopkScratch *scratch, uint32_t *idx,
                  float *val, size_t *bad, CsTopkPath path) {
  g_assert(k >= 1 && k <= n);
  bool sample = path == CS_TOPK_FORCE_SAMPLE || (path == CS_TOPK_AUTO && n >= TOPK_SAMPLE_MIN_N);
  if (sample && k < n) {
    switch (topk_sampled(x, n, k, scratch, idx, val, bad)) {
      case SAMPLE_DONE:
        return true;
      case SAMPLE_NAN:
        *bad = cs_kern_find_nan(x, n);
        return false;
      case SAMPLE_FALLBACK:
        break;
    }
  }
  size_t nan = cs_kern_find_nan(x, n);
  if (nan < n) {
    *bad = nan;
    return false;
  }
  topk_exact(x, n, k, idx, val);
  return true;
}

/* ---- rand-k ---- */

void cs_randk_iter_init(CsRandkIter *it, size_t n, size_t k, uint64_t seed, uint64_t stream) {
  cs_rng_init(&it->rng, seed, stream);
  it->n = n;
  it->k = k;
  it->j = 0;
}

size_t cs_randk_iter_next(CsRandkIter *it, uint32_t *idx, size_t max) {
  size_t o = 0;
  for (; o < max && it->j < it->k; o++, it->j++) {
    uint64_t lo = (uint64_t)it->j * it->n / it->k;
    uint64_t hi = (uint64_t)(it->j + 1) * it->n / it->k;
    idx[o] = (uint32_t)(lo + cs_rng_below(&it->rng, hi - lo));
  }
  return o;
}
