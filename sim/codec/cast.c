/* cast.c - the methods that send every element, only in another type:
 * none (the gradient's dtype as it is), fp16 and bf16 (round to nearest
 * even).  Their payload is the values alone, n of them; sums of two
 * decode, add and encode again.  none costs nothing to encode or decode:
 * the gradient is sent as it is. */
#include "config.h"

#include "codec_private.h"

/* ---- none ---- */

static void none_describe(const CsCodecParams *p, GString *out) {
  g_string_append(out, cs_dtype_name(p->dtype));
}

static uint64_t none_wire_bits(const CsCodecParams *p, uint64_t n, uint64_t k) {
  return cs_codec_saturate((cs_codec_u128)n * (cs_codec_u128)cs_dtype_bits(p->dtype));
}

static void none_layout(const CsCodecHeader *h, CsCodecLayout *l) {
  l->total += (size_t)h->n * cs_codec_dtype_bytes(h->dtype);
}

static bool none_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l, const float *x,
                        uint8_t *out, GError **error) {
  cs_codec_store_values(h->dtype, x, (size_t)h->n, out + CS_CODEC_HEADER_BYTES);
  return true;
}

static bool none_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                        float *out, bool add, GError **error) {
  cs_codec_load_values(h->dtype, in + CS_CODEC_HEADER_BYTES, (size_t)h->n, out, add);
  return true;
}

static const CsCodecKernelOps none_kernel = {
    .layout = none_layout,
    .encode = none_encode,
    .decode = none_decode,
};

const CsCodecMethodDef cs_codec_none = {
    .name = "none",
    .help = "every element in the gradient's dtype",
    .summable = true,
    .cost = {0, 0, 258},
    .describe = none_describe,
    .wire_bits = none_wire_bits,
    .kernel = &none_kernel,
};

/* ---- fp16, bf16: 16 bits an element, whatever the dtype ---- */

static void half_describe(const CsCodecParams *p, GString *out) { g_string_append(out, "rne"); }

static uint64_t half_wire_bits(const CsCodecParams *p, uint64_t n, uint64_t k) {
  return cs_codec_saturate(16 * (cs_codec_u128)n);
}

static void half_layout(const CsCodecHeader *h, CsCodecLayout *l) { l->total += 2 * (size_t)h->n; }

static uint16_t *halves(uint8_t *payload) {
  return (uint16_t *)(void *)(payload + CS_CODEC_HEADER_BYTES);
}

static const uint16_t *const_halves(const uint8_t *payload) {
  return (const uint16_t *)(const void *)(payload + CS_CODEC_HEADER_BYTES);
}

static bool fp16_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l, const float *x,
                        uint8_t *out, GError **error) {
  cs_kern_f32_to_f16(x, (size_t)h->n, halves(out));
  return true;
}

static bool fp16_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                        float *out, bool add, GError **error) {
  cs_kern_f16_to_f32(const_halves(in), (size_t)h->n, out, add);
  return true;
}

static bool bf16_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l, const float *x,
                        uint8_t *out, GError **error) {
  cs_kern_f32_to_bf16(x, (size_t)h->n, halves(out));
  return true;
}

static bool bf16_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                        float *out, bool add, GError **error) {
  cs_kern_bf16_to_f32(const_halves(in), (size_t)h->n, out, add);
  return true;
}

static const CsCodecKernelOps fp16_kernel = {
    .layout = half_layout,
    .encode = fp16_encode,
    .decode = fp16_decode,
};

static const CsCodecKernelOps bf16_kernel = {
    .layout = half_layout,
    .encode = bf16_encode,
    .decode = bf16_decode,
};

const CsCodecMethodDef cs_codec_fp16 = {
    .name = "fp16",
    .help = "every element as IEEE half, round to nearest even",
    .summable = true,
    .cost = {203, 208, 258},
    .describe = half_describe,
    .wire_bits = half_wire_bits,
    .kernel = &fp16_kernel,
};

const CsCodecMethodDef cs_codec_bf16 = {
    .name = "bf16",
    .help = "every element as bfloat16, round to nearest even",
    .summable = true,
    .cost = {225, 202, 258},
    .describe = half_describe,
    .wire_bits = half_wire_bits,
    .kernel = &bf16_kernel,
};
