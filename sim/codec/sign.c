/* sign.c - signSGD with a scale: per bucket the mean magnitude, one bit
 * per element (1 for x >= 0, both zeros positive); and the majority vote
 * that stands in for a sum, since signs do not add (a ps votes instead). */
#include "config.h"

#include <string.h>

#include "codec_private.h"

static void sign_describe(const CsCodecParams *p, GString *out) {
  g_string_append_printf(out, "m=%" G_GINT64_FORMAT, (gint64)p->bucket);
}

static uint64_t sign_wire_bits(const CsCodecParams *p, uint64_t n, uint64_t k) {
  return cs_codec_scaled_wire_bits(1, 32, p, n);
}

static void sign_layout(const CsCodecHeader *h, CsCodecLayout *l) {
  cs_codec_scaled_layout(h, 4, l);
}

static bool sign_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l, const float *x,
                        uint8_t *out, GError **error) {
  size_t bad = 0;
  if (!cs_kern_sign_encode(x, (size_t)h->n, cs_codec_bucket_len(h),
                           (float *)(void *)(out + l->meta_off), out + l->codes_off, &bad))
    return cs_codec_nonfinite_error(error, h->method, x, bad, CS_CODEC_SCALE_WHY);
  return true;
}

/* -s for a 0 bit, s for a 1: the symmetric grid of one step */
static bool sign_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                        float *out, bool add, GError **error) {
  cs_codec_scaled_decode(CS_GRID_SYMMETRIC, 1, in, h, l, out, add);
  return true;
}

static const CsCodecKernelOps sign_kernel = {
    .code_bits = 1,
    .layout = sign_layout,
    .encode = sign_encode,
    .decode = sign_decode,
};

/* reduce: a two-voter majority vote (cs_codec_sign_vote), per element of
 * the gradient */
const CsCodecMethodDef cs_codec_sign = {
    .name = "sign",
    .help = "per bucket the mean magnitude; one sign bit per element",
    .uses = CS_CODEC_USES_BUCKET,
    .why_not_summable =
        "1-bit signs cannot be added at a reduction hop (the ps takes a majority vote)",
    .cost = {246, 188, 570},
    .describe = sign_describe,
    .wire_bits = sign_wire_bits,
    .kernel = &sign_kernel,
};

bool cs_codec_sign_vote(const void *const *payloads, const size_t *lens, size_t count, void *out,
                        size_t out_cap, size_t *out_len, GError **error) {
  if (count == 0 || payloads == NULL || lens == NULL)
    return cs_codec_payload_error(error, "a vote needs at least one payload");
  if (count > UINT32_MAX) return cs_codec_payload_error(error, "too many voters");
  CsCodecHeader h0;
  CsCodecLayout l0;
  if (!cs_codec_parse_payload(payloads[0], lens[0], &h0, &l0, error)) return false;
  if (h0.method != CS_CODEC_SIGN)
    return cs_codec_payload_error(error, "a vote takes sign payloads, not %s",
                                  cs_codec_method_name(h0.method));
  for (size_t p = 1; p < count; p++) {
    CsCodecHeader h;
    CsCodecLayout l;
    if (!cs_codec_parse_payload(payloads[p], lens[p], &h, &l, error)) return false;
    if (h.method != CS_CODEC_SIGN || h.n != h0.n || h.bucket != h0.bucket)
      return cs_codec_payload_error(error, "voter %zu is not a sign payload of the same gradient",
                                    p);
  }
  if (!cs_codec_check_buffers(NULL, 0, out, out_cap, l0.total, out_len, error)) return false;
  size_t n = (size_t)h0.n, nb = n == 0 ? 0 : (size_t)cs_codec_buckets(n, (int64_t)h0.bucket);
  uint8_t *o = out;
  float *meta = (float *)(void *)(o + l0.meta_off);
  for (size_t b = 0; b < nb; b++) {
    double s = 0.0;
    for (size_t p = 0; p < count; p++) {
      float v;
      memcpy(&v, (const uint8_t *)payloads[p] + l0.meta_off + 4 * b, sizeof v);
      s += v;
    }
    meta[b] = (float)(s / (double)count);
  }
  const uint8_t **codes = g_new(const uint8_t *, count);
  for (size_t p = 0; p < count; p++) codes[p] = (const uint8_t *)payloads[p] + l0.codes_off;
  cs_kern_sign_vote(codes, count, n, o + l0.codes_off);
  g_free(codes);
  memcpy(o, &h0, sizeof h0);
  *out_len = l0.total;
  return true;
}
