/* quantize.c - the bucketed quantizers: uniform (each element to the
 * nearest of 2^b points between its bucket's min and max), stochastic
 * (QSGD-style: unbiased random rounding onto 2^b points of [-s, s], s the
 * bucket's max |x|) and terngrad (the same rounding onto -s, 0 and s, in
 * 2 bits).  Their payload is the scales, then the codes (codec_private.h).
 *
 * The rounding noise of stochastic and terngrad comes from a stream of
 * (seed, worker, round): workers round independently, and an encoding can
 * be repeated.  Sums of uniform and stochastic payloads decode, add and
 * encode again; terngrad's cannot (each worker's codes are on its own
 * scale, and 2 bits have no room for a sum). */
#include "config.h"

#include "codec_private.h"
#include "commsim/rng.h"

static void bits_describe(const CsCodecParams *p, GString *out) {
  g_string_append_printf(out, "b=%d m=%" G_GINT64_FORMAT, p->bits, (gint64)p->bucket);
}

static uint32_t levels_of(int bits) { return (1u << bits) - 1u; }

static float *scales(uint8_t *payload, const CsCodecLayout *l) {
  return (float *)(void *)(payload + l->meta_off);
}

/* ---- uniform: (min, max) per bucket ---- */

static uint64_t uniform_wire_bits(const CsCodecParams *p, uint64_t n, uint64_t k) {
  return cs_codec_scaled_wire_bits((uint64_t)p->bits, 64, p, n);
}

static void uniform_layout(const CsCodecHeader *h, CsCodecLayout *l) {
  cs_codec_scaled_layout(h, 8, l);
}

static bool uniform_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l,
                           const float *x, uint8_t *out, GError **error) {
  size_t bad = 0;
  if (!cs_kern_uniform_encode(x, (size_t)h->n, h->bits, cs_codec_bucket_len(h), scales(out, l),
                              out + l->codes_off, &bad))
    return cs_codec_nonfinite_error(error, h->method, x, bad, CS_CODEC_SCALE_WHY);
  return true;
}

static bool uniform_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                           float *out, bool add, GError **error) {
  cs_codec_scaled_decode(CS_GRID_UNIFORM, levels_of(h->bits), in, h, l, out, add);
  return true;
}

static const CsCodecKernelOps uniform_kernel = {
    .layout = uniform_layout,
    .encode = uniform_encode,
    .decode = uniform_decode,
};

const CsCodecMethodDef cs_codec_uniform = {
    .name = "uniform",
    .help = "per bucket min and max; each element to the nearest of 2^b points between them",
    .uses = CS_CODEC_USES_BITS | CS_CODEC_USES_BUCKET,
    .summable = true,
    .cost = {461, 195, 258},
    .describe = bits_describe,
    .wire_bits = uniform_wire_bits,
    .kernel = &uniform_kernel,
};

/* ---- stochastic rounding: one scale s per bucket, codes on [-s, s] ---- */

static void scale_layout(const CsCodecHeader *h, CsCodecLayout *l) {
  cs_codec_scaled_layout(h, 4, l);
}

/* levels + 1 points: 2^b for stochastic, 3 for terngrad */
static bool round_stochastic(const CsCodecHeader *h, const CsCodecLayout *l, uint32_t levels,
                             uint64_t worker, const float *x, uint8_t *out, GError **error) {
  size_t bad = 0;
  uint64_t stream = cs_rng_stream_id("codec-stochastic", worker, h->round);
  if (!cs_kern_stochastic_encode(x, (size_t)h->n, h->bits, levels, cs_codec_bucket_len(h), h->seed,
                                 stream, scales(out, l), out + l->codes_off, &bad))
    return cs_codec_nonfinite_error(error, h->method, x, bad, CS_CODEC_SCALE_WHY);
  return true;
}

static uint64_t stochastic_wire_bits(const CsCodecParams *p, uint64_t n, uint64_t k) {
  return cs_codec_scaled_wire_bits((uint64_t)p->bits, 32, p, n);
}

static bool stochastic_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l,
                              const float *x, uint8_t *out, GError **error) {
  return round_stochastic(h, l, levels_of(h->bits), c->worker, x, out, error);
}

static bool stochastic_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                              float *out, bool add, GError **error) {
  cs_codec_scaled_decode(CS_GRID_SYMMETRIC, levels_of(h->bits), in, h, l, out, add);
  return true;
}

static const CsCodecKernelOps stochastic_kernel = {
    .layout = scale_layout,
    .encode = stochastic_encode,
    .decode = stochastic_decode,
};

const CsCodecMethodDef cs_codec_stochastic = {
    .name = "stochastic",
    .help = "per bucket s = max |x|; unbiased random rounding of each element to 2^b points",
    .uses = CS_CODEC_USES_BITS | CS_CODEC_USES_BUCKET,
    .summable = true,
    .cost = {835, 197, 258},
    .describe = bits_describe,
    .wire_bits = stochastic_wire_bits,
    .kernel = &stochastic_kernel,
};

/* ---- terngrad: stochastic rounding onto -s, 0, s (codes 0, 1, 2) ---- */

#define TERNGRAD_LEVELS 2

static void bucket_describe(const CsCodecParams *p, GString *out) {
  g_string_append_printf(out, "m=%" G_GINT64_FORMAT, (gint64)p->bucket);
}

static uint64_t terngrad_wire_bits(const CsCodecParams *p, uint64_t n, uint64_t k) {
  return cs_codec_scaled_wire_bits(2, 32, p, n);
}

static bool terngrad_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l,
                            const float *x, uint8_t *out, GError **error) {
  return round_stochastic(h, l, TERNGRAD_LEVELS, c->worker, x, out, error);
}

static bool terngrad_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                            float *out, bool add, GError **error) {
  cs_codec_scaled_decode(CS_GRID_SYMMETRIC, TERNGRAD_LEVELS, in, h, l, out, add);
  return true;
}

static const CsCodecKernelOps terngrad_kernel = {
    .code_bits = 2,
    .layout = scale_layout,
    .encode = terngrad_encode,
    .decode = terngrad_decode,
};

const CsCodecMethodDef cs_codec_terngrad = {
    .name = "terngrad",
    .help = "per bucket s = max |x|; unbiased random rounding of each element to -s, 0 or s",
    .uses = CS_CODEC_USES_BUCKET,
    .why_not_summable =
        "ternary codes with each worker's own scale cannot be added at a reduction hop",
    .cost = {1007, 201, 258},
    .describe = bucket_describe,
    .wire_bits = terngrad_wire_bits,
    .kernel = &terngrad_kernel,
};
