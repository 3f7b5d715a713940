/* codec_private.h - what the method files under sim/codec/ share with
 * codec.c (internal): the payload framing (header, sections, checks), a
 * method's payload hooks (CsCodecKernelOps), one worker's codec and the
 * value and bucket helpers more than one family uses.
 *
 * A payload is a 64-byte header followed by the body, each section at an
 * 8-byte offset so that the kernels read and write typed arrays in place.
 * codec.c checks a payload's header against its method's row before any
 * hook sees it, and writes the header after the hook has filled the body.
 */
#ifndef COMMSIM_CODEC_PRIVATE_H
#define COMMSIM_CODEC_PRIVATE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsim/codec.h"
#include "kernels.h"

#define CS_CODEC_HEADER_BYTES 64

/* In host byte order: payloads are in-memory messages. */
typedef struct {
  uint32_t magic;
  uint8_t method, dtype, bits, index_bits;
  uint64_t n, k, bucket, seed, round, body_len, reserved;
} CsCodecHeader;
G_STATIC_ASSERT(sizeof(CsCodecHeader) == CS_CODEC_HEADER_BYTES);

/* Where a payload's sections start (from the payload's first byte) and its
 * whole size.  A method sets the ones it has; the others stay at the end
 * of the header. */
typedef struct {
  size_t meta_off, codes_off, idx_off, total;
} CsCodecLayout;

/* One worker's encoder (codec.h): buffers reused from call to call so that
 * nothing is allocated per element. */
struct CsCodec {
  CsCodecParams p;
  uint64_t worker;
  float *residual; /* error feedback: e, residual_n elements */
  size_t residual_n;
  float *tmp; /* x + e, or a reduction's sum */
  size_t tmp_cap;
  float *vals; /* top-k's values before conversion to a 16/64-bit dtype */
  size_t vals_cap;
  CsTopkScratch topk;
};

/* A method's payload hooks.  Each gets a header that codec.c has built
 * from the codec's parameters (encode) or checked against the row (decode,
 * reduce), so the hooks trust n, k, bits and bucket; encode and decode are
 * called only for n > 0. */
struct CsCodecKernelOps {
  /* bits per code when the method fixes them (sign 1, terngrad 2), which
   * a payload's header must then say; 0 for a method without codes or one
   * that takes its width from `bits` (CS_CODEC_USES_BITS) */
  int code_bits;
  /* the body's sections for h (l arrives with every offset and the total
   * at the end of the header) */
  void (*layout)(const CsCodecHeader *h, CsCodecLayout *l);
  /* x[0..h->n) into out's body (the header is written after) */
  bool (*encode)(CsCodec *codec, const CsCodecHeader *h, const CsCodecLayout *l, const float *x,
                 uint8_t *out, GError **error);
  /* out[0..h->n) (=, +=) the payload's values */
  bool (*decode)(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l, float *out,
                 bool add, GError **error);
  /* a reduction hop without decoding, for a summable method whose values
   * add in place (randk); NULL: decode both, add, encode the sum */
  bool (*reduce)(const uint8_t *a, const CsCodecHeader *ha, const CsCodecLayout *la,
                 const uint8_t *b, const CsCodecHeader *hb, void *out, size_t out_cap,
                 size_t *out_len, GError **error);
};

typedef unsigned __int128 cs_codec_u128;

static inline uint64_t cs_codec_saturate(cs_codec_u128 v) {
  return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static inline size_t cs_codec_align8(size_t x) { return (x + 7) & ~(size_t)7; }

static inline size_t cs_codec_dtype_bytes(CsDtype d) { return (size_t)cs_dtype_bits(d) / 8; }

/* Buckets of n elements; a bucket below 1 counts as 1. */
static inline uint64_t cs_codec_buckets(uint64_t n, int64_t bucket) {
  uint64_t m = bucket < 1 ? 1 : (uint64_t)bucket;
  return n / m + (n % m != 0);
}

/* The elements per scale a kernel uses: a header may name any bucket
 * >= 1, and past n it is one bucket. */
static inline size_t cs_codec_bucket_len(const CsCodecHeader *h) {
  return (size_t)MIN(h->bucket, MAX(h->n, 1));
}

/* ---- scaled codes (uniform, stochastic, terngrad, sign) ----
 * scale_bytes per bucket (fp32 scales), then h->bits per element. */

static inline uint64_t cs_codec_scaled_wire_bits(uint64_t code_bits, uint64_t scale_bits,
                                                 const CsCodecParams *p, uint64_t n) {
  return cs_codec_saturate((cs_codec_u128)code_bits * n +
                           (cs_codec_u128)scale_bits * cs_codec_buckets(n, p->bucket));
}

static inline void cs_codec_scaled_layout(const CsCodecHeader *h, size_t scale_bytes,
                                          CsCodecLayout *l) {
  size_t n = (size_t)h->n;
  size_t nb = n == 0 ? 0 : (size_t)cs_codec_buckets(n, (int64_t)MIN(h->bucket, h->n));
  l->codes_off = CS_CODEC_HEADER_BYTES + cs_codec_align8(nb * scale_bytes);
  l->total = l->codes_off + (n * (size_t)h->bits + 7) / 8;
}

/* out (=, +=) the codes on a grid of `levels` steps per bucket. */
static inline void cs_codec_scaled_decode(CsGridKind kind, uint32_t levels, const uint8_t *in,
                                          const CsCodecHeader *h, const CsCodecLayout *l,
                                          float *out, bool add) {
  cs_kern_grid_decode(kind, in + l->codes_off, (const float *)(const void *)(in + l->meta_off),
                      (size_t)h->n, h->bits, levels, cs_codec_bucket_len(h), out, add);
}

/* Why an encoder refuses a bucket whose scale would overflow. */
#define CS_CODEC_SCALE_WHY "a bucket's scale would not be finite"

/* ---- shared by the families (codec.c) ---- */

/* k values of dtype d at dst, and back ((=, +=) into out). */
void cs_codec_store_values(CsDtype d, const float *v, size_t k, uint8_t *dst);
void cs_codec_load_values(CsDtype d, const uint8_t *src, size_t k, float *out, bool add);

/* A buffer of at least n floats, grown (never shrunk) as needed. */
float *cs_codec_grow(float **buf, size_t *cap, size_t n);

/* The sections of h's payload. */
CsCodecLayout cs_codec_layout(const CsCodecHeader *h);

/* Everything a decoder relies on, checked before a byte of the body is
 * read: a payload that passes cannot make a kernel read or write out of
 * bounds (top-k's indices are checked as they are read). */
bool cs_codec_parse_payload(const void *payload, size_t len, CsCodecHeader *h, CsCodecLayout *l,
                            GError **error);
/* Two payloads of the same method, dtype and length. */
bool cs_codec_parse_pair(const void *a, size_t a_len, const void *b, size_t b_len,
                         CsCodecHeader *ha, CsCodecLayout *la, CsCodecHeader *hb, CsCodecLayout *lb,
                         GError **error);
/* An output buffer that holds `need` bytes (and an input of n elements
 * that a kernel takes). */
bool cs_codec_check_buffers(const void *x, size_t n, void *out, size_t out_cap, size_t need,
                            size_t *out_len, GError **error);

/* false, with a CS_CODEC_ERROR_PAYLOAD "codec payload: ..." */
bool cs_codec_payload_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* false, with a CS_CODEC_ERROR_NONFINITE naming element i of x */
bool cs_codec_nonfinite_error(GError **error, CsCodecMethod method, const float *x, size_t i,
                              const char *why);

#endif
