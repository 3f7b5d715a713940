/* sparse.c - the sparsifiers, which send k = ceil(ratio n) of the n
 * elements as values in the gradient's dtype: topk (the k largest
 * magnitudes, with their indices) and randk (k indices drawn from the
 * shared seed and the round, so that every worker picks the same ones and
 * none travel).  And their sum, cs_codec_sparse_merge().
 *
 * Payloads: topk's values, then its indices (32 bits each, increasing,
 * whatever index_bits says: index_bits models an index coding, which the
 * wire size counts and the buffer does not); randk's values alone. */
#include "config.h"

#include <string.h>

#include "codec_private.h"
#include "commsim/rng.h"

/* Values travel through the sparse paths in batches of this many, on the
 * stack. */
#define BATCH 1024

static uint8_t *values(uint8_t *payload) { return payload + CS_CODEC_HEADER_BYTES; }
static const uint8_t *const_values(const uint8_t *payload) {
  return payload + CS_CODEC_HEADER_BYTES;
}

/* "r=0.01", and the values' dtype unless it is fp32 */
static void ratio_describe(const CsCodecParams *p, GString *out) {
  char r[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf(out, "r=%s", g_ascii_formatd(r, sizeof r, "%g", p->ratio));
}

static void dtype_describe(const CsCodecParams *p, GString *out) {
  if (p->dtype != CS_DTYPE_FP32) g_string_append_printf(out, " %s", cs_dtype_name(p->dtype));
}

/* ---- topk ---- */

static void topk_describe(const CsCodecParams *p, GString *out) {
  ratio_describe(p, out);
  g_string_append_printf(out, " idx=%d", p->index_bits);
  dtype_describe(p, out);
}

static uint64_t topk_wire_bits(const CsCodecParams *p, uint64_t n, uint64_t k) {
  return cs_codec_saturate((cs_codec_u128)k *
                           ((cs_codec_u128)cs_dtype_bits(p->dtype) + (cs_codec_u128)p->index_bits));
}

static void topk_layout(const CsCodecHeader *h, CsCodecLayout *l) {
  l->idx_off =
      CS_CODEC_HEADER_BYTES + cs_codec_align8((size_t)h->k * cs_codec_dtype_bytes(h->dtype));
  l->total = l->idx_off + 4 * (size_t)h->k;
}

static bool check_indices(const uint32_t *idx, uint64_t k, uint64_t n, GError **error) {
  for (uint64_t j = 0; j < k; j++)
    if (idx[j] >= n || (j > 0 && idx[j] <= idx[j - 1]))
      return cs_codec_payload_error(
          error, "index %" G_GUINT64_FORMAT " (%u) is out of order or range", (guint64)j, idx[j]);
  return true;
}

static bool topk_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l, const float *x,
                        uint8_t *out, GError **error) {
  size_t k = (size_t)h->k, bad = 0;
  if (k == 0) return true;
  uint32_t *idx = (uint32_t *)(void *)(out + l->idx_off);
  /* fp32 values are selected straight into the payload */
  float *val = h->dtype == CS_DTYPE_FP32 ? (float *)(void *)values(out)
                                         : cs_codec_grow(&c->vals, &c->vals_cap, k);
  if (!cs_kern_topk(x, (size_t)h->n, k, &c->topk, idx, val, &bad, CS_TOPK_AUTO))
    return cs_codec_nonfinite_error(error, h->method, x, bad, "NaN has no magnitude to rank");
  if (h->dtype != CS_DTYPE_FP32) cs_codec_store_values(h->dtype, val, k, values(out));
  return true;
}

static bool topk_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                        float *out, bool add, GError **error) {
  const uint32_t *idx = (const uint32_t *)(const void *)(in + l->idx_off);
  size_t vb = cs_codec_dtype_bytes(h->dtype);
  if (!check_indices(idx, h->k, h->n, error)) return false;
  if (!add) memset(out, 0, (size_t)h->n * sizeof *out);
  float v[BATCH];
  for (size_t j0 = 0; j0 < h->k; j0 += BATCH) {
    size_t len = MIN((size_t)BATCH, (size_t)h->k - j0);
    cs_codec_load_values(h->dtype, const_values(in) + j0 * vb, len, v, false);
    for (size_t j = 0; j < len; j++) out[idx[j0 + j]] += v[j];
  }
  return true;
}

static const CsCodecKernelOps topk_kernel = {
    .layout = topk_layout,
    .encode = topk_encode,
    .decode = topk_decode,
};

/* reduce: merging two payloads (cs_codec_sparse_merge), per element of the
 * gradient */
const CsCodecMethodDef cs_codec_topk = {
    .name = "topk",
    .help = "the k largest magnitudes (ties: the lower index), as k values and k indices",
    .uses = CS_CODEC_USES_RATIO | CS_CODEC_USES_INDEX_BITS,
    .why_not_summable =
        "each worker keeps different indices, so payloads cannot be added at a reduction hop",
    .cost = {637, 265, 336},
    .describe = topk_describe,
    .wire_bits = topk_wire_bits,
    .kernel = &topk_kernel,
};

/* ---- randk ---- */

static void randk_describe(const CsCodecParams *p, GString *out) {
  ratio_describe(p, out);
  dtype_describe(p, out);
}

static uint64_t randk_wire_bits(const CsCodecParams *p, uint64_t n, uint64_t k) {
  return cs_codec_saturate((cs_codec_u128)k * (cs_codec_u128)cs_dtype_bits(p->dtype));
}

static void randk_layout(const CsCodecHeader *h, CsCodecLayout *l) {
  l->total += (size_t)h->k * cs_codec_dtype_bytes(h->dtype);
}

/* The same for every worker: the indices depend on the seed and the round
 * alone. */
static void randk_indices(CsRandkIter *it, const CsCodecHeader *h) {
  cs_randk_iter_init(it, (size_t)h->n, (size_t)h->k, h->seed,
                     cs_rng_stream_id("codec-randk", h->round, 0));
}

static bool randk_encode(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l, const float *x,
                         uint8_t *out, GError **error) {
  CsRandkIter it;
  uint32_t idx[BATCH];
  float v[BATCH];
  size_t vb = cs_codec_dtype_bytes(h->dtype), done = 0, got;
  randk_indices(&it, h);
  while ((got = cs_randk_iter_next(&it, idx, BATCH)) > 0) {
    for (size_t j = 0; j < got; j++) v[j] = x[idx[j]];
    cs_codec_store_values(h->dtype, v, got, values(out) + done * vb);
    done += got;
  }
  return true;
}

static bool randk_decode(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                         float *out, bool add, GError **error) {
  CsRandkIter it;
  uint32_t idx[BATCH];
  float v[BATCH];
  size_t vb = cs_codec_dtype_bytes(h->dtype), done = 0, got;
  if (!add) memset(out, 0, (size_t)h->n * sizeof *out);
  randk_indices(&it, h);
  while ((got = cs_randk_iter_next(&it, idx, BATCH)) > 0) {
    cs_codec_load_values(h->dtype, const_values(in) + done * vb, got, v, false);
    for (size_t j = 0; j < got; j++) out[idx[j]] += v[j];
    done += got;
  }
  return true;
}

/* randk payloads of the same (seed, round) carry the same indices: their
 * values add in place. */
static bool randk_add(const uint8_t *a, const CsCodecHeader *ha, const CsCodecLayout *la,
                      const uint8_t *b, const CsCodecHeader *hb, void *out, size_t out_cap,
                      size_t *out_len, GError **error) {
  if (ha->seed != hb->seed || ha->round != hb->round || ha->k != hb->k)
    return cs_codec_payload_error(error,
                                  "randk payloads with different indices (seed, round or k)");
  if (!cs_codec_check_buffers(NULL, 0, out, out_cap, la->total, out_len, error)) return false;
  uint8_t *o = out;
  size_t vb = cs_codec_dtype_bytes(ha->dtype);
  float va[BATCH], vb2[BATCH];
  for (size_t j0 = 0; j0 < ha->k; j0 += BATCH) {
    size_t len = MIN((size_t)BATCH, (size_t)ha->k - j0);
    cs_codec_load_values(ha->dtype, const_values(a) + j0 * vb, len, va, false);
    cs_codec_load_values(hb->dtype, const_values(b) + j0 * vb, len, vb2, false);
    cs_kern_add(va, vb2, len);
    cs_codec_store_values(ha->dtype, va, len, values(o) + j0 * vb);
  }
  memcpy(o, ha, sizeof *ha);
  *out_len = la->total;
  return true;
}

static const CsCodecKernelOps randk_kernel = {
    .layout = randk_layout,
    .encode = randk_encode,
    .decode = randk_decode,
    .reduce = randk_add,
};

/* reduce: adding its k values, per element of the gradient */
const CsCodecMethodDef cs_codec_randk = {
    .name = "randk",
    .help = "k values at indices drawn from the shared seed; no indices on the wire",
    .uses = CS_CODEC_USES_RATIO,
    .summable = true,
    .cost = {99, 284, 5},
    .describe = randk_describe,
    .wire_bits = randk_wire_bits,
    .kernel = &randk_kernel,
};

/* ---- the sum of two sparse payloads ---- */

bool cs_codec_sparse_merge(const void *a, size_t a_len, const void *b, size_t b_len, void *out,
                           size_t out_cap, size_t *out_len, GError **error) {
  CsCodecHeader ha, hb;
  CsCodecLayout la, lb;
  if (!cs_codec_parse_pair(a, a_len, b, b_len, &ha, &la, &hb, &lb, error)) return false;
  if (ha.method == CS_CODEC_RANDK)
    return randk_add(a, &ha, &la, b, &hb, out, out_cap, out_len, error);
  if (ha.method != CS_CODEC_TOPK)
    return cs_codec_payload_error(error, "a sparse merge takes topk or randk payloads, not %s",
                                  cs_codec_method_name(ha.method));
  const uint8_t *pa = a, *pb = b;
  const uint32_t *ia = (const uint32_t *)(const void *)(pa + la.idx_off);
  const uint32_t *ib = (const uint32_t *)(const void *)(pb + lb.idx_off);
  if (!check_indices(ia, ha.k, ha.n, error) || !check_indices(ib, hb.k, hb.n, error)) return false;
  /* first the size of the union, then the merge itself */
  size_t ka = (size_t)ha.k, kb = (size_t)hb.k, k = 0;
  for (size_t i = 0, j = 0; i < ka || j < kb; k++) {
    if (j == kb || (i < ka && ia[i] < ib[j]))
      i++;
    else if (i == ka || ib[j] < ia[i])
      j++;
    else
      i++, j++;
  }
  CsCodecHeader h = ha;
  h.k = k;
  CsCodecLayout l = cs_codec_layout(&h);
  h.body_len = l.total - CS_CODEC_HEADER_BYTES;
  if (!cs_codec_check_buffers(NULL, 0, out, out_cap, l.total, out_len, error)) return false;
  uint8_t *o = out;
  uint32_t *io = (uint32_t *)(void *)(o + l.idx_off);
  size_t vb = cs_codec_dtype_bytes(ha.dtype);
  const uint8_t *va = const_values(pa), *vbp = const_values(pb);
  uint8_t *vo = values(o);
  for (size_t i = 0, j = 0, t = 0; t < k; t++) {
    float x = 0.0f, y = 0.0f;
    if (j == kb || (i < ka && ia[i] < ib[j])) {
      cs_codec_load_values(ha.dtype, va + i * vb, 1, &x, false);
      io[t] = ia[i++];
    } else if (i == ka || ib[j] < ia[i]) {
      cs_codec_load_values(hb.dtype, vbp + j * vb, 1, &y, false);
      io[t] = ib[j++];
    } else {
      cs_codec_load_values(ha.dtype, va + i * vb, 1, &x, false);
      cs_codec_load_values(hb.dtype, vbp + j * vb, 1, &y, false);
      io[t] = ia[i];
      i++, j++;
    }
    float s = x + y;
    cs_codec_store_values(ha.dtype, &s, 1, vo + t * vb);
  }
  memcpy(o, &h, sizeof h);
  *out_len = l.total;
  return true;
}
