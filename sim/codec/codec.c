/* codec.c - what every codec method shares: names, parameters, wire
 * sizes, collectives and costs through the method table (methods.c), and
 * the payload framing around the methods' hooks (codec_private.h): the
 * header, its checks, error feedback and the reduction hop.  What a method
 * does with its elements is in its family's file (cast.c, quantize.c,
 * sign.c, sparse.c); the per-element loops are in kernels.c.
 *
 * The body is the SPEC's wire formula rounded up to whole bytes, plus at
 * most 7 bytes of padding between sections, except top-k's indices (see
 * sparse.c).
 */
#include "config.h"

#include "commsim/codec.h"

#include <math.h>
#include <string.h>

#include "codec_private.h"

G_DEFINE_QUARK(cs-codec-error-quark, cs_codec_error)

/* ---- names ---- */

static const char *const dtype_names[CS_DTYPE_N + 1] = {"fp32", "fp16", "bf16", "fp64", NULL};
static const int dtype_bit_counts[CS_DTYPE_N] = {32, 16, 16, 64};

#define DTYPE_LIST "fp32, fp16, bf16 or fp64"
#define COLLECTIVE_LIST "ps, ring, tree, halving-doubling, allgather or hierarchical"

static bool valid_dtype(CsDtype d) { return (unsigned)d < CS_DTYPE_N; }

/* The i-th of `total` names of a list read as "a, b or c". */
static void append_listed(GString *s, size_t i, size_t total, const char *name) {
  if (i > 0) g_string_append(s, i + 1 == total ? " or " : ", ");
  g_string_append(s, name);
}

/* "none, fp16, ... or terngrad", for messages (built once, like the
 * names). */
static const char *method_list(void) {
  static const char *list = NULL;
  if (g_once_init_enter(&list)) {
    GString *s = g_string_new(NULL);
    for (size_t i = 0; cs_codec_methods[i]; i++)
      append_listed(s, i, CS_CODEC_N_METHODS, cs_codec_methods[i]->name);
    g_once_init_leave(&list, g_string_free(s, FALSE));
  }
  return list;
}

const char *cs_codec_method_name(CsCodecMethod m) {
  const CsCodecMethodDef *def = cs_codec_method_def(m);
  return def ? def->name : "(invalid)";
}

const char *cs_dtype_name(CsDtype d) { return valid_dtype(d) ? dtype_names[d] : "(invalid)"; }
const char *const *cs_dtype_names(void) { return dtype_names; }

int cs_dtype_bits(CsDtype d) { return valid_dtype(d) ? dtype_bit_counts[d] : 0; }

bool cs_codec_method_parse(const char *text, CsCodecMethod *method, GError **error) {
  if (cs_codec_method_find(text, method)) return true;
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
              "'%s' is not a compression method: use %s", text ? text : "", method_list());
  return false;
}

bool cs_dtype_parse(const char *text, CsDtype *dtype, GError **error) {
  for (int d = 0; d < CS_DTYPE_N; d++)
    if (text && strcmp(text, dtype_names[d]) == 0) {
      *dtype = (CsDtype)d;
      return true;
    }
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
              "'%s' is not a gradient dtype: use " DTYPE_LIST, text ? text : "");
  return false;
}

static bool invalid_method_error(GError **error, CsCodecMethod m) {
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
              "invalid compression method %d: use %s", (int)m, method_list());
  return false;
}

/* ---- parameters ---- */

void cs_codec_params_init(CsCodecParams *p) {
  memset(p, 0, sizeof *p);
  p->method = CS_CODEC_NONE;
  p->dtype = CS_DTYPE_FP32;
  p->bits = CS_CODEC_DEFAULT_BITS;
  p->ratio = CS_CODEC_DEFAULT_RATIO;
  p->index_bits = CS_CODEC_DEFAULT_INDEX_BITS;
  p->bucket = CS_CODEC_DEFAULT_BUCKET;
  p->error_feedback = false;
  p->seed = 0;
}

static bool uses(const CsCodecMethodDef *def, unsigned what) { return (def->uses & what) != 0; }

bool cs_codec_params_validate(const CsCodecParams *p, GError **error) {
  const CsCodecMethodDef *def = cs_codec_method_def(p->method);
  if (!def) return invalid_method_error(error, p->method);
  if (!valid_dtype(p->dtype)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "invalid gradient dtype %d: use " DTYPE_LIST, (int)p->dtype);
    return false;
  }
  const char *name = def->name;
  if (uses(def, CS_CODEC_USES_BITS) && (p->bits < 1 || p->bits > 16)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "%s: bits is %d: use a whole number from 1 to 16", name, p->bits);
    return false;
  }
  if (uses(def, CS_CODEC_USES_RATIO) && !(p->ratio > 0.0 && p->ratio <= 1.0)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "%s: ratio is %g: use a share of the elements in (0, 1], such as 0.01", name,
                p->ratio);
    return false;
  }
  if (uses(def, CS_CODEC_USES_INDEX_BITS) && (p->index_bits < 0 || p->index_bits > 64)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "%s: index_bits is %d: use 0 to 64 (0 counts the values only)", name,
                p->index_bits);
    return false;
  }
  if (uses(def, CS_CODEC_USES_BUCKET) && p->bucket < 1) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "%s: bucket is %" G_GINT64_FORMAT ": use 1 or more elements per scale", name,
                (gint64)p->bucket);
    return false;
  }
  return true;
}

char *cs_codec_params_describe(const CsCodecParams *p) {
  GString *s = g_string_new(NULL);
  const CsCodecMethodDef *def = cs_codec_method_def(p->method);
  if (def)
    def->describe(p, s);
  else
    g_string_append(s, "?");
  if (p->error_feedback) g_string_append(s, " ef");
  return g_string_free(s, FALSE);
}

/* ---- wire sizes ---- */

uint64_t cs_codec_k(double ratio, uint64_t n) {
  if (n == 0) return 0;
  if (!(ratio > 0.0)) return 1;
  if (ratio >= 1.0) return n;
  double p = ratio * (double)n;
  double r = nearbyint(p);
  uint64_t k;
  if (r >= 1.0 && fabs(p - r) <= 1e-9 * r)
    k = (uint64_t)r;
  else
    k = p >= (double)n ? n : (uint64_t)ceil(p);
  return k < 1 ? 1 : (k > n ? n : k);
}

/* The values a payload of n elements carries. */
static uint64_t payload_k(const CsCodecMethodDef *def, const CsCodecParams *p, uint64_t n) {
  return uses(def, CS_CODEC_USES_RATIO) ? cs_codec_k(p->ratio, n) : n;
}

uint64_t cs_codec_wire_bits(const CsCodecParams *p, uint64_t n) {
  const CsCodecMethodDef *def = cs_codec_method_def(p->method);
  return def ? def->wire_bits(p, n, payload_k(def, p, n)) : 0;
}

bool cs_codec_method_summable(CsCodecMethod m) {
  const CsCodecMethodDef *def = cs_codec_method_def(m);
  return def && def->summable;
}

/* ---- collectives ---- */

static const struct {
  const char *name;
  CsCodecCollective flag;
} collectives[] = {
    {"ps", CS_CODEC_COLL_PS},
    {"ring", CS_CODEC_COLL_RING},
    {"tree", CS_CODEC_COLL_TREE},
    {"halving-doubling", CS_CODEC_COLL_HALVING_DOUBLING},
    {"allgather", CS_CODEC_COLL_ALLGATHER},
    {"hierarchical", CS_CODEC_COLL_HIERARCHICAL},
};

bool cs_codec_collective_parse(const char *text, CsCodecCollective *c, GError **error) {
  for (size_t i = 0; i < G_N_ELEMENTS(collectives); i++)
    if (text && strcmp(text, collectives[i].name) == 0) {
      *c = collectives[i].flag;
      return true;
    }
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
              "'%s' is not a collective: use " COLLECTIVE_LIST, text ? text : "");
  return false;
}

const char *cs_codec_collective_name(CsCodecCollective c) {
  for (size_t i = 0; i < G_N_ELEMENTS(collectives); i++)
    if (collectives[i].flag == c) return collectives[i].name;
  return "(invalid)";
}

unsigned cs_codec_method_collectives(CsCodecMethod m) {
  if (!cs_codec_method_def(m)) return 0;
  /* A reduction hop (ring, tree, halving-doubling) must turn two payloads
   * into one of the same kind: only summable methods can. */
  return cs_codec_method_summable(m) ? CS_CODEC_COLL_ALL
                                     : (CS_CODEC_COLL_PS | CS_CODEC_COLL_ALLGATHER);
}

const char *cs_codec_why_not_summable(CsCodecMethod m) {
  const CsCodecMethodDef *def = cs_codec_method_def(m);
  return def && def->why_not_summable ? def->why_not_summable
                                      : "its payloads cannot be added at a reduction hop";
}

char *cs_codec_collective_refusal(CsCodecMethod m, const char *collective) {
  CsCodecCollective c;
  if (!cs_codec_method_def(m)) return g_strdup_printf("invalid compression method %d", (int)m);
  if (!cs_codec_collective_parse(collective, &c, NULL))
    return g_strdup_printf("'%s' is not a collective: use " COLLECTIVE_LIST,
                           collective ? collective : "");
  unsigned allowed = cs_codec_method_collectives(m);
  if (allowed & c) return NULL;
  GString *names = g_string_new(NULL);
  size_t count = 0, total = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(collectives); i++) total += (allowed & collectives[i].flag) != 0;
  for (size_t i = 0; i < G_N_ELEMENTS(collectives); i++)
    if (allowed & collectives[i].flag) append_listed(names, count++, total, collectives[i].name);
  char *msg = g_strdup_printf("compression method '%s' cannot be carried by collective '%s': %s; "
                              "use %s",
                              cs_codec_method_name(m), collective, cs_codec_why_not_summable(m),
                              names->str);
  g_string_free(names, TRUE);
  return msg;
}

bool cs_codec_check_collective(CsCodecMethod m, const char *collective, GError **error) {
  CsCodecCollective c;
  if (!cs_codec_collective_parse(collective, &c, error)) return false;
  char *msg = cs_codec_collective_refusal(m, collective);
  if (!msg) return true;
  g_set_error_literal(error, CS_CODEC_ERROR, CS_CODEC_ERROR_COLLECTIVE, msg);
  g_free(msg);
  return false;
}

/* ---- cost ---- */

/* The rows' costs: per element of the fp32 gradient, in ps, at the SPEC
 * defaults (b 8, r 0.01, bucket 512), one thread, measured on the
 * project's machine (AMD EPYC, 2 cores, AVX2 clones and F16C;
 * bench/RESULTS.md) with
 *   sim/commsim codecs --elements 16M --repeat 5            (2026-12-02)
 * and rounded to the picosecond.  reduce is the fp32 addition of one
 * decoded payload into the sum (cs_codec_add, the median of the dense
 * rows: 258 ps, memory-bound like memcpy's 271 ps), except where a row
 * says otherwise (topk, randk, sign). */
CsCodecCost cs_codec_cost_default(CsCodecMethod m) {
  CsCodecCost zero = {0, 0, 0};
  const CsCodecMethodDef *def = cs_codec_method_def(m);
  return def ? def->cost : zero;
}

static bool override_field(const char *name, CsTime set, double dflt, double *out,
                           GError **error) {
  if (set == CS_CODEC_COST_DEFAULT) {
    *out = dflt;
    return true;
  }
  if (set < 0) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "compression.cost.%s is negative: use a time per element such as 0.4ns", name);
    return false;
  }
  *out = (double)set;
  return true;
}

bool cs_codec_cost_resolve(CsCodecMethod m, double speedup, const CsCodecCostOverride *ovr,
                           CsCodecCost *cost, GError **error) {
  const CsCodecMethodDef *def = cs_codec_method_def(m);
  if (!def) return invalid_method_error(error, m);
  if (!(isfinite(speedup) && speedup > 0.0)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "compression.speedup is %g: use a factor greater than 0 (50 for a GPU, say)",
                speedup);
    return false;
  }
  CsCodecCost d = def->cost;
  d.encode_ps /= speedup;
  d.decode_ps /= speedup;
  d.reduce_ps /= speedup;
  if (!ovr) {
    *cost = d;
    return true;
  }
  CsCodecCost c;
  if (!override_field("encode", ovr->encode, d.encode_ps, &c.encode_ps, error) ||
      !override_field("decode", ovr->decode, d.decode_ps, &c.decode_ps, error) ||
      !override_field("reduce", ovr->reduce, d.reduce_ps, &c.reduce_ps, error))
    return false;
  *cost = c;
  return true;
}

CsTime cs_codec_cost_time(double ps_per_element, uint64_t n) {
  double t = ps_per_element * (double)n;
  if (!(t >= 0.0)) return 0;
  if (t >= 9.2e18) return CS_TIME_MAX;
  return (CsTime)llround(t);
}

/* ---- payload framing ---- */

#define PAYLOAD_MAGIC 0x31475343u /* "CSG1" */

/* The width of a method's codes: its fixed one, or `bits`. */
static int code_bits(const CsCodecMethodDef *def, int bits) {
  return uses(def, CS_CODEC_USES_BITS) ? bits : def->kernel->code_bits;
}

CsCodecLayout cs_codec_layout(const CsCodecHeader *h) {
  CsCodecLayout l = {CS_CODEC_HEADER_BYTES, CS_CODEC_HEADER_BYTES, CS_CODEC_HEADER_BYTES,
                     CS_CODEC_HEADER_BYTES};
  cs_codec_methods[h->method]->kernel->layout(h, &l);
  return l;
}

/* The header of the payload that the codec's parameters make of n
 * elements: what the hooks work from, written after them.  Parameters a
 * method does not use are left 0, and so is a bucket larger than n (one
 * bucket).  n <= CS_CODEC_MAX_ELEMENTS keeps every size far from
 * overflow. */
static CsCodecHeader header_for(const CsCodecParams *p, uint64_t n, uint64_t round,
                                CsCodecLayout *l) {
  const CsCodecMethodDef *def = cs_codec_methods[p->method];
  CsCodecHeader h = {
      .magic = PAYLOAD_MAGIC,
      .method = (uint8_t)p->method,
      .dtype = (uint8_t)p->dtype,
      .bits = (uint8_t)code_bits(def, p->bits),
      .index_bits = (uint8_t)(uses(def, CS_CODEC_USES_INDEX_BITS) ? p->index_bits : 0),
      .n = n,
      .k = payload_k(def, p, n),
      .bucket = uses(def, CS_CODEC_USES_BUCKET) ? (uint64_t)MIN((uint64_t)p->bucket, MAX(n, 1)) : 0,
      .seed = p->seed,
      .round = round,
      .reserved = 0,
  };
  *l = cs_codec_layout(&h);
  h.body_len = l->total - CS_CODEC_HEADER_BYTES;
  return h;
}

size_t cs_codec_payload_size(const CsCodecParams *p, uint64_t n) {
  if (!cs_codec_params_validate(p, NULL) || n > CS_CODEC_MAX_ELEMENTS) return 0;
  CsCodecLayout l;
  header_for(p, n, 0, &l);
  return l.total;
}

bool cs_codec_payload_error(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_PAYLOAD, "codec payload: %s", msg);
  g_free(msg);
  return false;
}

bool cs_codec_parse_payload(const void *payload, size_t len, CsCodecHeader *h, CsCodecLayout *l,
                            GError **error) {
  if (payload == NULL) return cs_codec_payload_error(error, "no buffer");
  if ((uintptr_t)payload % 8 != 0)
    return cs_codec_payload_error(error, "buffer is not 8-byte aligned");
  if (len < CS_CODEC_HEADER_BYTES)
    return cs_codec_payload_error(error, "%zu bytes, shorter than its %d-byte header", len,
                                  CS_CODEC_HEADER_BYTES);
  memcpy(h, payload, sizeof *h);
  if (h->magic != PAYLOAD_MAGIC)
    return cs_codec_payload_error(error, "not a commsim codec payload");
  const CsCodecMethodDef *def = cs_codec_method_def(h->method);
  if (!def) return cs_codec_payload_error(error, "unknown method %u", h->method);
  if (h->dtype >= CS_DTYPE_N) return cs_codec_payload_error(error, "unknown dtype %u", h->dtype);
  if (h->n > CS_CODEC_MAX_ELEMENTS)
    return cs_codec_payload_error(error, "%" G_GUINT64_FORMAT " elements, more than a kernel takes",
                                  (guint64)h->n);
  int fixed = def->kernel->code_bits;
  if (uses(def, CS_CODEC_USES_BITS) ? (h->bits < 1 || h->bits > 16) : (fixed && h->bits != fixed))
    return cs_codec_payload_error(error, "%s with %u bits", def->name, h->bits);
  if (uses(def, CS_CODEC_USES_BUCKET) && h->bucket < 1)
    return cs_codec_payload_error(error, "bucket of 0 elements");
  if (uses(def, CS_CODEC_USES_RATIO) ? (h->k > h->n || (h->n > 0 && h->k == 0)) : h->k != h->n)
    return cs_codec_payload_error(error,
                                  "%" G_GUINT64_FORMAT " values for %" G_GUINT64_FORMAT " elements",
                                  (guint64)h->k, (guint64)h->n);
  *l = cs_codec_layout(h);
  if (len != l->total || h->body_len != l->total - CS_CODEC_HEADER_BYTES)
    return cs_codec_payload_error(error, "%zu bytes where its header makes %zu", len, l->total);
  return true;
}

bool cs_codec_parse_pair(const void *a, size_t a_len, const void *b, size_t b_len,
                         CsCodecHeader *ha, CsCodecLayout *la, CsCodecHeader *hb, CsCodecLayout *lb,
                         GError **error) {
  if (!cs_codec_parse_payload(a, a_len, ha, la, error) ||
      !cs_codec_parse_payload(b, b_len, hb, lb, error))
    return false;
  if (ha->method != hb->method || ha->n != hb->n || ha->dtype != hb->dtype)
    return cs_codec_payload_error(
        error,
        "cannot combine %s (%" G_GUINT64_FORMAT " x %s) with %s (%" G_GUINT64_FORMAT " x %s)",
        cs_codec_method_name(ha->method), (guint64)ha->n, cs_dtype_name(ha->dtype),
        cs_codec_method_name(hb->method), (guint64)hb->n, cs_dtype_name(hb->dtype));
  return true;
}

bool cs_codec_check_buffers(const void *x, size_t n, void *out, size_t out_cap, size_t need,
                            size_t *out_len, GError **error) {
  if (n > CS_CODEC_MAX_ELEMENTS) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "%zu elements: a kernel takes at most %" G_GUINT64_FORMAT, n,
                (guint64)CS_CODEC_MAX_ELEMENTS);
    return false;
  }
  if ((n > 0 && x == NULL) || out == NULL || out_len == NULL) {
    g_set_error_literal(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                        "codec: missing input, output or length");
    return false;
  }
  if ((uintptr_t)out % 8 != 0) {
    g_set_error_literal(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                        "codec: the output buffer is not 8-byte aligned");
    return false;
  }
  if (out_cap < need) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "codec: the output holds %zu bytes, the payload needs %zu", out_cap, need);
    return false;
  }
  return true;
}

bool cs_codec_nonfinite_error(GError **error, CsCodecMethod method, const float *x, size_t i,
                              const char *why) {
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_NONFINITE,
              "%s cannot encode element %zu, which is %s: %s", cs_codec_method_name(method), i,
              isnan(x[i]) ? "NaN" : (x[i] > 0 ? "inf" : "-inf"), why);
  return false;
}

/* ---- values in a dtype (none, topk, randk) ---- */

void cs_codec_store_values(CsDtype d, const float *v, size_t k, uint8_t *dst) {
  switch (d) {
    case CS_DTYPE_FP32:
      memcpy(dst, v, k * sizeof *v);
      break;
    case CS_DTYPE_FP16:
      cs_kern_f32_to_f16(v, k, (uint16_t *)(void *)dst);
      break;
    case CS_DTYPE_BF16:
      cs_kern_f32_to_bf16(v, k, (uint16_t *)(void *)dst);
      break;
    case CS_DTYPE_FP64:
      cs_kern_f32_to_f64(v, k, (double *)(void *)dst);
      break;
    default:
      g_assert_not_reached();
  }
}

void cs_codec_load_values(CsDtype d, const uint8_t *src, size_t k, float *out, bool add) {
  switch (d) {
    case CS_DTYPE_FP32:
      cs_kern_f32_copy((const float *)(const void *)src, k, out, add);
      break;
    case CS_DTYPE_FP16:
      cs_kern_f16_to_f32((const uint16_t *)(const void *)src, k, out, add);
      break;
    case CS_DTYPE_BF16:
      cs_kern_bf16_to_f32((const uint16_t *)(const void *)src, k, out, add);
      break;
    case CS_DTYPE_FP64:
      cs_kern_f64_to_f32((const double *)(const void *)src, k, out, add);
      break;
    default:
      g_assert_not_reached();
  }
}

/* ---- the codec ---- */

CsCodec *cs_codec_new(const CsCodecParams *params, uint64_t worker, GError **error) {
  if (!params) {
    g_set_error_literal(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID, "no codec parameters");
    return NULL;
  }
  if (!cs_codec_params_validate(params, error)) return NULL;
  CsCodec *c = g_new0(CsCodec, 1);
  c->p = *params;
  c->worker = worker;
  return c;
}

void cs_codec_free(CsCodec *c) {
  if (!c) return;
  g_free(c->residual);
  g_free(c->tmp);
  g_free(c->vals);
  cs_topk_scratch_clear(&c->topk);
  g_free(c);
}

void cs_codec_release_scratch(CsCodec *c) {
  g_clear_pointer(&c->tmp, g_free);
  c->tmp_cap = 0;
  g_clear_pointer(&c->vals, g_free);
  c->vals_cap = 0;
  cs_topk_scratch_clear(&c->topk);
}

const CsCodecParams *cs_codec_get_params(const CsCodec *c) { return &c->p; }

const float *cs_codec_residual(const CsCodec *c, size_t *n) {
  if (n) *n = c->residual_n;
  return c->residual;
}

float *cs_codec_grow(float **buf, size_t *cap, size_t n) {
  if (*cap < n) {
    g_free(*buf);
    *buf = g_new(float, MAX(n, 1));
    *cap = n;
  }
  return *buf;
}

/* ---- encode, decode ---- */

/* Encode x with the codec's parameters (no error feedback) into out,
 * which holds l's total, as the header h says. */
static bool encode_raw(CsCodec *c, const CsCodecHeader *h, const CsCodecLayout *l, const float *x,
                       uint8_t *out, GError **error) {
  if (h->n > 0 && !cs_codec_methods[h->method]->kernel->encode(c, h, l, x, out, error))
    return false;
  memcpy(out, h, sizeof *h);
  return true;
}

/* out (=, +=) the payload's values; the header has been parsed. */
static bool decode_parsed(const uint8_t *in, const CsCodecHeader *h, const CsCodecLayout *l,
                          float *out, bool add, GError **error) {
  if (h->n == 0) return true;
  return cs_codec_methods[h->method]->kernel->decode(in, h, l, out, add, error);
}

static bool decode_into(const void *payload, size_t len, float *out, size_t n, bool add,
                        GError **error) {
  CsCodecHeader h;
  CsCodecLayout l;
  if (!cs_codec_parse_payload(payload, len, &h, &l, error)) return false;
  if (h.n != n)
    return cs_codec_payload_error(error, "%" G_GUINT64_FORMAT " elements, the output holds %zu",
                                  (guint64)h.n, n);
  if (n > 0 && out == NULL) return cs_codec_payload_error(error, "no output array");
  return decode_parsed(payload, &h, &l, out, add, error);
}

bool cs_codec_decode(const void *payload, size_t len, float *out, size_t n, GError **error) {
  return decode_into(payload, len, out, n, false, error);
}

bool cs_codec_decode_add(const void *payload, size_t len, float *acc, size_t n, GError **error) {
  return decode_into(payload, len, acc, n, true, error);
}

bool cs_codec_payload_info(const void *payload, size_t len, CsCodecPayloadInfo *info,
                           GError **error) {
  CsCodecHeader h;
  CsCodecLayout l;
  if (!cs_codec_parse_payload(payload, len, &h, &l, error)) return false;
  CsCodecParams p;
  cs_codec_params_init(&p);
  p.method = h.method;
  p.dtype = h.dtype;
  p.bits = h.bits;
  p.index_bits = h.index_bits;
  p.bucket = (int64_t)MAX(h.bucket, 1);
  info->method = h.method;
  info->dtype = h.dtype;
  info->bits = h.bits;
  info->index_bits = h.index_bits;
  info->n = h.n;
  info->k = h.k;
  info->bucket = h.bucket;
  /* the formula with this payload's k (a sparse merge makes k grow) */
  info->wire_bits = cs_codec_methods[h.method]->wire_bits(&p, h.n, h.k);
  return true;
}

bool cs_codec_encode(CsCodec *c, uint64_t round, const float *x, size_t n, void *out,
                     size_t out_cap, size_t *out_len, GError **error) {
  if (!c) {
    g_set_error_literal(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID, "no codec");
    return false;
  }
  const CsCodecParams *p = &c->p;
  CsCodecLayout l;
  CsCodecHeader h = header_for(p, n, round, &l);
  if (!cs_codec_check_buffers(x, n, out, out_cap, l.total, out_len, error)) return false;
  const float *src = x;
  if (p->error_feedback) {
    if (c->residual && c->residual_n != n) {
      g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                  "error feedback: this codec's residual has %zu elements, not %zu "
                  "(use one codec per gradient tensor)",
                  c->residual_n, n);
      return false;
    }
    if (!c->residual) {
      c->residual = g_new0(float, MAX(n, 1));
      c->residual_n = n;
    }
    float *s = cs_codec_grow(&c->tmp, &c->tmp_cap, n);
    size_t bad;
    /* The residual is never allowed to hold a NaN or inf: it would stay
     * in every later encoding. */
    if (!cs_kern_add_finite(x, c->residual, n, s, &bad))
      return cs_codec_nonfinite_error(error, p->method, s, bad,
                                      "with error feedback, x + e must be finite (the residual "
                                      "would keep it forever)");
    src = s;
  }
  if (!encode_raw(c, &h, &l, src, out, error)) return false;
  *out_len = l.total;
  if (p->error_feedback) {
    decode_parsed(out, &h, &l, c->residual, false, NULL);
    cs_kern_sub_from(src, n, c->residual);
  }
  return true;
}

/* ---- aggregation ---- */

void cs_codec_add(float *acc, const float *y, size_t n) { cs_kern_add(acc, y, n); }

const char *cs_codec_kernel_isa(void) { return cs_kern_isa(); }

bool cs_codec_reduce(CsCodec *c, uint64_t round, const void *a, size_t a_len, const void *b,
                     size_t b_len, void *out, size_t out_cap, size_t *out_len, GError **error) {
  if (!c) {
    g_set_error_literal(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID, "no codec");
    return false;
  }
  const CsCodecParams *p = &c->p;
  const CsCodecMethodDef *def = cs_codec_methods[p->method];
  if (!def->summable) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_COLLECTIVE,
                "%s payloads cannot be summed in place: %s", def->name,
                cs_codec_why_not_summable(p->method));
    return false;
  }
  CsCodecHeader ha, hb;
  CsCodecLayout la, lb;
  if (!cs_codec_parse_pair(a, a_len, b, b_len, &ha, &la, &hb, &lb, error)) return false;
  if (ha.method != p->method)
    return cs_codec_payload_error(error, "a %s payload given to a %s codec",
                                  cs_codec_method_name(ha.method), def->name);
  if (def->kernel->reduce)
    return def->kernel->reduce(a, &ha, &la, b, &hb, out, out_cap, out_len, error);
  size_t n = (size_t)ha.n;
  CsCodecLayout l;
  CsCodecHeader h = header_for(p, n, round, &l);
  if (!cs_codec_check_buffers(NULL, 0, out, out_cap, l.total, out_len, error)) return false;
  float *sum = cs_codec_grow(&c->tmp, &c->tmp_cap, n);
  if (!decode_parsed(a, &ha, &la, sum, false, error) ||
      !decode_parsed(b, &hb, &lb, sum, true, error))
    return false;
  if (!encode_raw(c, &h, &l, sum, out, error)) return false;
  *out_len = l.total;
  return true;
}

bool cs_codec_from_spec(const CsCompressionSpec *c, CsDtype dtype, uint64_t seed, CsCodecParams *params,
                        CsCodecCost *cost, GError **error) {
  cs_codec_params_init(params);
  params->method = c->method;
  params->dtype = dtype;
  params->bits = (int)c->bits;
  params->ratio = c->ratio;
  params->index_bits = (int)c->index_bits;
  params->bucket = c->bucket;
  params->error_feedback = c->error_feedback;
  params->seed = seed;
  if (!cs_codec_params_validate(params, error)) return false;
  CsCodecCostOverride o = {c->cost_encode, c->cost_decode, c->cost_reduce};
  return cs_codec_cost_resolve(params->method, c->speedup, c->cost_set ? &o : NULL, cost, error);
}
