/* codec.c - names, wire sizes, collectives and costs of the gradient
 * codecs, and the payload framing around the kernels of kernels.c.
 *
 * A payload is a 64-byte header followed by the body, each section at an
 * 8-byte offset so that the kernels read and write typed arrays in place:
 *
 *   none         values (n x dtype)
 *   fp16, bf16   values (n x 16 bits)
 *   uniform      (min, max) per bucket as fp32 | codes, b bits each
 *   stochastic   scale per bucket as fp32      | codes, b bits each
 *   sign         scale per bucket              | codes, 1 bit each
 *   terngrad     scale per bucket              | codes, 2 bits each
 *   topk         values (k x dtype)            | indices (k x 32 bits, increasing)
 *   randk        values (k x dtype); the indices are drawn again from (seed, round)
 *
 * The body is the SPEC's wire formula rounded up to whole bytes, plus at
 * most 7 bytes of padding between sections, except top-k's indices: they
 * are stored in 32 bits whatever `index_bits` says (index_bits models an
 * index coding; the wire size uses it, the buffer does not).
 */
#include "config.h"

#include "commsim/codec.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "commsim/rng.h"
#include "kernels.h"

G_DEFINE_QUARK(cs-codec-error-quark, cs_codec_error)

/* ---- names ---- */

static const char *const method_names[CS_CODEC_N_METHODS] = {
    "none", "fp16", "bf16", "uniform", "stochastic", "topk", "randk", "sign", "terngrad"};
static const char *const dtype_names[CS_DTYPE_N] = {"fp32", "fp16", "bf16", "fp64"};
static const int dtype_bit_counts[CS_DTYPE_N] = {32, 16, 16, 64};

#define METHOD_LIST "none, fp16, bf16, uniform, stochastic, topk, randk, sign or terngrad"
#define DTYPE_LIST "fp32, fp16, bf16 or fp64"
#define COLLECTIVE_LIST "ps, ring, tree, halving-doubling or allgather"

static bool valid_method(CsCodecMethod m) { return (unsigned)m < CS_CODEC_N_METHODS; }
static bool valid_dtype(CsDtype d) { return (unsigned)d < CS_DTYPE_N; }

const char *cs_codec_method_name(CsCodecMethod m) {
  return valid_method(m) ? method_names[m] : "(invalid)";
}

const char *cs_dtype_name(CsDtype d) { return valid_dtype(d) ? dtype_names[d] : "(invalid)"; }

int cs_dtype_bits(CsDtype d) { return valid_dtype(d) ? dtype_bit_counts[d] : 0; }

static size_t dtype_bytes(CsDtype d) { return (size_t)cs_dtype_bits(d) / 8; }

bool cs_codec_method_parse(const char *text, CsCodecMethod *method, GError **error) {
  for (int m = 0; m < CS_CODEC_N_METHODS; m++)
    if (text && strcmp(text, method_names[m]) == 0) {
      *method = (CsCodecMethod)m;
      return true;
    }
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
              "'%s' is not a compression method: use " METHOD_LIST, text ? text : "");
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

static bool uses_bits(CsCodecMethod m) { return m == CS_CODEC_UNIFORM || m == CS_CODEC_STOCHASTIC; }
static bool uses_ratio(CsCodecMethod m) { return m == CS_CODEC_TOPK || m == CS_CODEC_RANDK; }
static bool uses_bucket(CsCodecMethod m) {
  return m == CS_CODEC_UNIFORM || m == CS_CODEC_STOCHASTIC || m == CS_CODEC_SIGN ||
         m == CS_CODEC_TERNGRAD;
}

bool cs_codec_params_validate(const CsCodecParams *p, GError **error) {
  if (!valid_method(p->method)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "invalid compression method %d: use " METHOD_LIST, (int)p->method);
    return false;
  }
  if (!valid_dtype(p->dtype)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "invalid gradient dtype %d: use " DTYPE_LIST, (int)p->dtype);
    return false;
  }
  const char *name = method_names[p->method];
  if (uses_bits(p->method) && (p->bits < 1 || p->bits > 16)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "%s: bits is %d: use a whole number from 1 to 16", name, p->bits);
    return false;
  }
  if (uses_ratio(p->method) && !(p->ratio > 0.0 && p->ratio <= 1.0)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "%s: ratio is %g: use a share of the elements in (0, 1], such as 0.01", name,
                p->ratio);
    return false;
  }
  if (p->method == CS_CODEC_TOPK && (p->index_bits < 0 || p->index_bits > 64)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "topk: index_bits is %d: use 0 to 64 (0 counts the values only)", p->index_bits);
    return false;
  }
  if (uses_bucket(p->method) && p->bucket < 1) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "%s: bucket is %" G_GINT64_FORMAT ": use 1 or more elements per scale", name,
                (gint64)p->bucket);
    return false;
  }
  return true;
}

char *cs_codec_params_describe(const CsCodecParams *p) {
  GString *s = g_string_new(NULL);
  char r[G_ASCII_DTOSTR_BUF_SIZE];
  switch (p->method) {
    case CS_CODEC_NONE:
      g_string_append(s, cs_dtype_name(p->dtype));
      break;
    case CS_CODEC_FP16:
    case CS_CODEC_BF16:
      g_string_append(s, "rne");
      break;
    case CS_CODEC_UNIFORM:
    case CS_CODEC_STOCHASTIC:
      g_string_append_printf(s, "b=%d m=%" G_GINT64_FORMAT, p->bits, (gint64)p->bucket);
      break;
    case CS_CODEC_SIGN:
    case CS_CODEC_TERNGRAD:
      g_string_append_printf(s, "m=%" G_GINT64_FORMAT, (gint64)p->bucket);
      break;
    case CS_CODEC_TOPK:
      g_string_append_printf(s, "r=%s idx=%d", g_ascii_formatd(r, sizeof r, "%g", p->ratio),
                             p->index_bits);
      break;
    case CS_CODEC_RANDK:
      g_string_append_printf(s, "r=%s", g_ascii_formatd(r, sizeof r, "%g", p->ratio));
      break;
    default:
      g_string_append(s, "?");
  }
  if ((p->method == CS_CODEC_TOPK || p->method == CS_CODEC_RANDK) && p->dtype != CS_DTYPE_FP32)
    g_string_append_printf(s, " %s", cs_dtype_name(p->dtype));
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

typedef unsigned __int128 u128;

static uint64_t saturate(u128 v) { return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v; }

static uint64_t buckets_of(uint64_t n, int64_t bucket) {
  uint64_t m = bucket < 1 ? 1 : (uint64_t)bucket;
  return n / m + (n % m != 0);
}

uint64_t cs_codec_wire_bits(const CsCodecParams *p, uint64_t n) {
  u128 d = (u128)cs_dtype_bits(p->dtype), nn = n;
  switch (p->method) {
    case CS_CODEC_NONE:
      return saturate(nn * d);
    case CS_CODEC_FP16:
    case CS_CODEC_BF16:
      return saturate(16 * nn);
    case CS_CODEC_UNIFORM:
      return saturate((u128)p->bits * nn + 64 * (u128)buckets_of(n, p->bucket));
    case CS_CODEC_STOCHASTIC:
      return saturate((u128)p->bits * nn + 32 * (u128)buckets_of(n, p->bucket));
    case CS_CODEC_TOPK:
      return saturate((u128)cs_codec_k(p->ratio, n) * (d + (u128)p->index_bits));
    case CS_CODEC_RANDK:
      return saturate((u128)cs_codec_k(p->ratio, n) * d);
    case CS_CODEC_SIGN:
      return saturate(nn + 32 * (u128)buckets_of(n, p->bucket));
    case CS_CODEC_TERNGRAD:
      return saturate(2 * nn + 32 * (u128)buckets_of(n, p->bucket));
    default:
      return 0;
  }
}

bool cs_codec_method_summable(CsCodecMethod m) {
  return valid_method(m) && m != CS_CODEC_TOPK && m != CS_CODEC_SIGN && m != CS_CODEC_TERNGRAD;
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
  if (!valid_method(m)) return 0;
  /* A reduction hop (ring, tree, halving-doubling) must turn two payloads
   * into one of the same kind: only summable methods can. */
  return cs_codec_method_summable(m) ? CS_CODEC_COLL_ALL
                                     : (CS_CODEC_COLL_PS | CS_CODEC_COLL_ALLGATHER);
}

const char *cs_codec_why_not_summable(CsCodecMethod m) {
  switch (m) {
    case CS_CODEC_TOPK:
      return "each worker keeps different indices, so payloads cannot be added at a "
             "reduction hop";
    case CS_CODEC_SIGN:
      return "1-bit signs cannot be added at a reduction hop (the ps takes a majority vote)";
    case CS_CODEC_TERNGRAD:
      return "ternary codes with each worker's own scale cannot be added at a reduction hop";
    default:
      return "its payloads cannot be added at a reduction hop";
  }
}

char *cs_codec_collective_refusal(CsCodecMethod m, const char *collective) {
  CsCodecCollective c;
  if (!valid_method(m)) return g_strdup_printf("invalid compression method %d", (int)m);
  if (!cs_codec_collective_parse(collective, &c, NULL))
    return g_strdup_printf("'%s' is not a collective: use " COLLECTIVE_LIST,
                           collective ? collective : "");
  unsigned allowed = cs_codec_method_collectives(m);
  if (allowed & c) return NULL;
  GString *names = g_string_new(NULL);
  size_t count = 0, total = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(collectives); i++) total += (allowed & collectives[i].flag) != 0;
  for (size_t i = 0; i < G_N_ELEMENTS(collectives); i++) {
    if (!(allowed & collectives[i].flag)) continue;
    if (count > 0) g_string_append(names, count + 1 == total ? " or " : ", ");
    g_string_append(names, collectives[i].name);
    count++;
  }
  char *msg = g_strdup_printf("compression method '%s' cannot be carried by collective '%s': %s; "
                              "use %s",
                              method_names[m], collective, cs_codec_why_not_summable(m), names->str);
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

/* Per element of the fp32 gradient, in ps, at the SPEC defaults (b 8,
 * r 0.01, bucket 512), one thread, measured on the project's machine
 * (AMD EPYC, 2 cores, AVX2 clones and F16C; bench/RESULTS.md) with
 *   sim/commsim codecs --elements 16M --repeat 5            (2026-12-02)
 * and rounded to the picosecond.  none encodes and decodes nothing (the
 * gradient is sent as it is).  reduce is the fp32 addition of one decoded
 * payload into the sum (cs_codec_add, the median of the dense rows: 258
 * ps, memory-bound like memcpy's 271 ps); for topk it is merging two
 * payloads (cs_codec_sparse_merge), for randk adding its k values, for
 * sign a two-voter majority vote, each per element of the gradient. */
static const CsCodecCost default_costs[CS_CODEC_N_METHODS] = {
    [CS_CODEC_NONE] = {0, 0, 258},
    [CS_CODEC_FP16] = {203, 208, 258},
    [CS_CODEC_BF16] = {225, 202, 258},
    [CS_CODEC_UNIFORM] = {461, 195, 258},
    [CS_CODEC_STOCHASTIC] = {835, 197, 258},
    [CS_CODEC_TOPK] = {637, 265, 336},
    [CS_CODEC_RANDK] = {99, 284, 5},
    [CS_CODEC_SIGN] = {246, 188, 570},
    [CS_CODEC_TERNGRAD] = {1007, 201, 258},
};

CsCodecCost cs_codec_cost_default(CsCodecMethod m) {
  CsCodecCost zero = {0, 0, 0};
  return valid_method(m) ? default_costs[m] : zero;
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
  if (!valid_method(m)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "invalid compression method %d: use " METHOD_LIST, (int)m);
    return false;
  }
  if (!(isfinite(speedup) && speedup > 0.0)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID,
                "compression.speedup is %g: use a factor greater than 0 (50 for a GPU, say)",
                speedup);
    return false;
  }
  CsCodecCost d = default_costs[m];
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

/* ---- payload layout ---- */

#define HEADER_BYTES 64
#define PAYLOAD_MAGIC 0x31475343u /* "CSG1" */

typedef struct {
  uint32_t magic;
  uint8_t method, dtype, bits, index_bits;
  uint64_t n, k, bucket, seed, round, body_len, reserved;
} Header;
G_STATIC_ASSERT(sizeof(Header) == HEADER_BYTES);

typedef struct {
  size_t meta_off, codes_off, idx_off, total;
} Layout;

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

static int code_bits(CsCodecMethod m, int bits) {
  switch (m) {
    case CS_CODEC_UNIFORM:
    case CS_CODEC_STOCHASTIC:
      return bits;
    case CS_CODEC_SIGN:
      return 1;
    case CS_CODEC_TERNGRAD:
      return 2;
    default:
      return 0;
  }
}

static uint32_t code_levels(CsCodecMethod m, int bits) {
  switch (m) {
    case CS_CODEC_UNIFORM:
    case CS_CODEC_STOCHASTIC:
      return (1u << bits) - 1u;
    case CS_CODEC_SIGN:
      return 1;
    case CS_CODEC_TERNGRAD:
      return 2;
    default:
      return 0;
  }
}

/* Sections of a payload.  n <= CS_CODEC_MAX_ELEMENTS keeps every size far
 * from overflow; bucket >= 1, k <= n. */
static Layout layout_of(CsCodecMethod m, CsDtype d, int bits, uint64_t n, uint64_t k,
                        uint64_t bucket) {
  Layout l = {HEADER_BYTES, HEADER_BYTES, HEADER_BYTES, HEADER_BYTES};
  size_t vb = dtype_bytes(d);
  size_t nb = n == 0 ? 0 : (size_t)buckets_of(n, (int64_t)MIN(bucket, n));
  switch (m) {
    case CS_CODEC_NONE:
      l.total += n * vb;
      break;
    case CS_CODEC_FP16:
    case CS_CODEC_BF16:
      l.total += 2 * n;
      break;
    case CS_CODEC_UNIFORM:
    case CS_CODEC_STOCHASTIC:
    case CS_CODEC_SIGN:
    case CS_CODEC_TERNGRAD: {
      size_t meta = nb * (m == CS_CODEC_UNIFORM ? 8 : 4);
      l.codes_off = HEADER_BYTES + align8(meta);
      l.total = l.codes_off + (n * (size_t)code_bits(m, bits) + 7) / 8;
      break;
    }
    case CS_CODEC_TOPK:
      l.idx_off = HEADER_BYTES + align8(k * vb);
      l.total = l.idx_off + 4 * k;
      break;
    case CS_CODEC_RANDK:
      l.total += k * vb;
      break;
    default:
      break;
  }
  return l;
}

static uint64_t payload_k(const CsCodecParams *p, uint64_t n) {
  return uses_ratio(p->method) ? cs_codec_k(p->ratio, n) : n;
}

size_t cs_codec_payload_size(const CsCodecParams *p, uint64_t n) {
  if (!cs_codec_params_validate(p, NULL) || n > CS_CODEC_MAX_ELEMENTS) return 0;
  return layout_of(p->method, p->dtype, code_bits(p->method, p->bits), n, payload_k(p, n),
                   (uint64_t)p->bucket)
      .total;
}

static bool payload_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool payload_error(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_PAYLOAD, "codec payload: %s", msg);
  g_free(msg);
  return false;
}

/* Everything a decoder relies on, checked before a byte of the body is
 * read: a payload that passes cannot make a kernel read or write out of
 * bounds (top-k's indices are checked separately, as they are read). */
static bool parse_payload(const void *payload, size_t len, Header *h, Layout *l,
                          GError **error) {
  if (payload == NULL) return payload_error(error, "no buffer");
  if ((uintptr_t)payload % 8 != 0) return payload_error(error, "buffer is not 8-byte aligned");
  if (len < HEADER_BYTES)
    return payload_error(error, "%zu bytes, shorter than its %d-byte header", len, HEADER_BYTES);
  memcpy(h, payload, sizeof *h);
  if (h->magic != PAYLOAD_MAGIC) return payload_error(error, "not a commsim codec payload");
  if (h->method >= CS_CODEC_N_METHODS) return payload_error(error, "unknown method %u", h->method);
  if (h->dtype >= CS_DTYPE_N) return payload_error(error, "unknown dtype %u", h->dtype);
  CsCodecMethod m = h->method;
  if (h->n > CS_CODEC_MAX_ELEMENTS)
    return payload_error(error, "%" G_GUINT64_FORMAT " elements, more than a kernel takes",
                         (guint64)h->n);
  if (uses_bits(m) && (h->bits < 1 || h->bits > 16))
    return payload_error(error, "%s with %u bits", method_names[m], h->bits);
  if (m == CS_CODEC_SIGN && h->bits != 1) return payload_error(error, "sign with %u bits", h->bits);
  if (m == CS_CODEC_TERNGRAD && h->bits != 2)
    return payload_error(error, "terngrad with %u bits", h->bits);
  if (uses_bucket(m) && h->bucket < 1) return payload_error(error, "bucket of 0 elements");
  if (uses_ratio(m) ? (h->k > h->n || (h->n > 0 && h->k == 0)) : h->k != h->n)
    return payload_error(error, "%" G_GUINT64_FORMAT " values for %" G_GUINT64_FORMAT " elements",
                         (guint64)h->k, (guint64)h->n);
  *l = layout_of(m, h->dtype, h->bits, h->n, h->k, h->bucket);
  if (len != l->total || h->body_len != l->total - HEADER_BYTES)
    return payload_error(error, "%zu bytes where its header makes %zu", len, l->total);
  return true;
}

static void write_header(uint8_t *out, CsCodecMethod m, const CsCodecParams *p, uint64_t n,
                         uint64_t k, uint64_t round, const Layout *l) {
  Header h = {
      .magic = PAYLOAD_MAGIC,
      .method = (uint8_t)m,
      .dtype = (uint8_t)p->dtype,
      .bits = (uint8_t)code_bits(m, p->bits),
      .index_bits = (uint8_t)(m == CS_CODEC_TOPK ? p->index_bits : 0),
      .n = n,
      .k = k,
      .bucket = uses_bucket(m) ? (uint64_t)MIN((uint64_t)p->bucket, MAX(n, 1)) : 0,
      .seed = p->seed,
      .round = round,
      .body_len = l->total - HEADER_BYTES,
      .reserved = 0,
  };
  memcpy(out, &h, sizeof h);
}

/* ---- values in a dtype (none, topk, randk) ---- */

static void store_values(CsDtype d, const float *v, size_t k, uint8_t *dst) {
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

static void load_values(CsDtype d, const uint8_t *src, size_t k, float *out, bool add) {
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

/* Values travel through the sparse paths in batches of this many, on the
 * stack. */
#define BATCH 1024

/* ---- the codec ---- */

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

const CsCodecParams *cs_codec_get_params(const CsCodec *c) { return &c->p; }

const float *cs_codec_residual(const CsCodec *c, size_t *n) {
  if (n) *n = c->residual_n;
  return c->residual;
}

static float *grow(float **buf, size_t *cap, size_t n) {
  if (*cap < n) {
    g_free(*buf);
    *buf = g_new(float, MAX(n, 1));
    *cap = n;
  }
  return *buf;
}

static bool nonfinite_error(GError **error, const char *method, const float *x, size_t i,
                            const char *why) {
  g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_NONFINITE,
              "%s cannot encode element %zu, which is %s: %s", method, i,
              isnan(x[i]) ? "NaN" : (x[i] > 0 ? "inf" : "-inf"), why);
  return false;
}

static uint64_t stochastic_stream(uint64_t worker, uint64_t round) {
  return cs_rng_stream_id("codec-stochastic", worker, round);
}

static uint64_t randk_stream(uint64_t round) { return cs_rng_stream_id("codec-randk", round, 0); }

/* Encode x with the codec's parameters (no error feedback) into out,
 * which holds the layout's total. */
static bool encode_raw(CsCodec *c, uint64_t round, const float *x, size_t n, uint8_t *out,
                       const Layout *l, GError **error) {
  const CsCodecParams *p = &c->p;
  const CsCodecMethod m = p->method;
  const char *name = method_names[m];
  size_t bucket = (size_t)MIN((uint64_t)p->bucket, MAX(n, 1));
  uint64_t k = payload_k(p, n);
  size_t bad = 0;
  uint8_t *body = out + HEADER_BYTES;
  float *meta = (float *)(void *)(out + l->meta_off);
  uint8_t *codes = out + l->codes_off;
  const char *scale_why = "a bucket's scale would not be finite";
  if (n == 0) {
    write_header(out, m, p, n, k, round, l);
    return true;
  }
  switch (m) {
    case CS_CODEC_NONE:
      store_values(p->dtype, x, n, body);
      break;
    case CS_CODEC_FP16:
      cs_kern_f32_to_f16(x, n, (uint16_t *)(void *)body);
      break;
    case CS_CODEC_BF16:
      cs_kern_f32_to_bf16(x, n, (uint16_t *)(void *)body);
      break;
    case CS_CODEC_UNIFORM:
      if (!cs_kern_uniform_encode(x, n, p->bits, bucket, meta, codes, &bad))
        return nonfinite_error(error, name, x, bad, scale_why);
      break;
    case CS_CODEC_STOCHASTIC:
    case CS_CODEC_TERNGRAD: {
      int b = code_bits(m, p->bits);
      if (!cs_kern_stochastic_encode(x, n, b, code_levels(m, p->bits), bucket, p->seed,
                                     stochastic_stream(c->worker, round), meta, codes, &bad))
        return nonfinite_error(error, name, x, bad, scale_why);
      break;
    }
    case CS_CODEC_SIGN:
      if (!cs_kern_sign_encode(x, n, bucket, meta, codes, &bad))
        return nonfinite_error(error, name, x, bad, scale_why);
      break;
    case CS_CODEC_TOPK: {
      if (k == 0) break;
      uint32_t *idx = (uint32_t *)(void *)(out + l->idx_off);
      float *val = p->dtype == CS_DTYPE_FP32 ? (float *)(void *)body
                                             : grow(&c->vals, &c->vals_cap, (size_t)k);
      if (!cs_kern_topk(x, n, (size_t)k, &c->topk, idx, val, &bad, CS_TOPK_AUTO))
        return nonfinite_error(error, name, x, bad, "NaN has no magnitude to rank");
      if (p->dtype != CS_DTYPE_FP32) store_values(p->dtype, val, (size_t)k, body);
      break;
    }
    case CS_CODEC_RANDK: {
      CsRandkIter it;
      uint32_t idx[BATCH];
      float v[BATCH];
      size_t vb = dtype_bytes(p->dtype), done = 0, got;
      cs_randk_iter_init(&it, n, (size_t)k, p->seed, randk_stream(round));
      while ((got = cs_randk_iter_next(&it, idx, BATCH)) > 0) {
        for (size_t j = 0; j < got; j++) v[j] = x[idx[j]];
        store_values(p->dtype, v, got, body + done * vb);
        done += got;
      }
      break;
    }
    default:
      g_assert_not_reached();
  }
  write_header(out, m, p, n, k, round, l);
  return true;
}

static bool check_indices(const uint32_t *idx, uint64_t k, uint64_t n, GError **error) {
  for (uint64_t j = 0; j < k; j++)
    if (idx[j] >= n || (j > 0 && idx[j] <= idx[j - 1]))
      return payload_error(error, "index %" G_GUINT64_FORMAT " (%u) is out of order or range",
                           (guint64)j, idx[j]);
  return true;
}

/* out (=, +=) the payload's values; the header has been parsed. */
static bool decode_parsed(const uint8_t *in, const Header *h, const Layout *l, float *out,
                          bool add, GError **error) {
  const CsCodecMethod m = h->method;
  const size_t n = (size_t)h->n;
  const uint8_t *body = in + HEADER_BYTES;
  const float *meta = (const float *)(const void *)(in + l->meta_off);
  const uint8_t *codes = in + l->codes_off;
  size_t vb = dtype_bytes(h->dtype);
  if (n == 0) return true;
  /* a header may name any bucket >= 1; past n it is one bucket */
  size_t bucket = (size_t)MIN(h->bucket, MAX(h->n, 1));
  switch (m) {
    case CS_CODEC_NONE:
      load_values(h->dtype, body, n, out, add);
      break;
    case CS_CODEC_FP16:
      cs_kern_f16_to_f32((const uint16_t *)(const void *)body, n, out, add);
      break;
    case CS_CODEC_BF16:
      cs_kern_bf16_to_f32((const uint16_t *)(const void *)body, n, out, add);
      break;
    case CS_CODEC_UNIFORM:
      cs_kern_grid_decode(CS_GRID_UNIFORM, codes, meta, n, h->bits, code_levels(m, h->bits),
                          bucket, out, add);
      break;
    case CS_CODEC_STOCHASTIC:
    case CS_CODEC_SIGN:
    case CS_CODEC_TERNGRAD:
      cs_kern_grid_decode(CS_GRID_SYMMETRIC, codes, meta, n, h->bits, code_levels(m, h->bits),
                          bucket, out, add);
      break;
    case CS_CODEC_TOPK: {
      const uint32_t *idx = (const uint32_t *)(const void *)(in + l->idx_off);
      if (!check_indices(idx, h->k, h->n, error)) return false;
      if (!add) memset(out, 0, n * sizeof *out);
      float v[BATCH];
      for (size_t j0 = 0; j0 < h->k; j0 += BATCH) {
        size_t len = MIN((size_t)BATCH, (size_t)h->k - j0);
        load_values(h->dtype, body + j0 * vb, len, v, false);
        for (size_t j = 0; j < len; j++) out[idx[j0 + j]] += v[j];
      }
      break;
    }
    case CS_CODEC_RANDK: {
      if (!add) memset(out, 0, n * sizeof *out);
      CsRandkIter it;
      uint32_t idx[BATCH];
      float v[BATCH];
      size_t done = 0, got;
      cs_randk_iter_init(&it, n, (size_t)h->k, h->seed, randk_stream(h->round));
      while ((got = cs_randk_iter_next(&it, idx, BATCH)) > 0) {
        load_values(h->dtype, body + done * vb, got, v, false);
        for (size_t j = 0; j < got; j++) out[idx[j]] += v[j];
        done += got;
      }
      break;
    }
    default:
      g_assert_not_reached();
  }
  return true;
}

static bool decode_into(const void *payload, size_t len, float *out, size_t n, bool add,
                        GError **error) {
  Header h;
  Layout l;
  if (!parse_payload(payload, len, &h, &l, error)) return false;
  if (h.n != n)
    return payload_error(error, "%" G_GUINT64_FORMAT " elements, the output holds %zu",
                         (guint64)h.n, n);
  if (n > 0 && out == NULL) return payload_error(error, "no output array");
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
  Header h;
  Layout l;
  if (!parse_payload(payload, len, &h, &l, error)) return false;
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
  if (uses_ratio(h.method)) {
    uint64_t per = (uint64_t)cs_dtype_bits(h.dtype) + (h.method == CS_CODEC_TOPK ? h.index_bits : 0);
    info->wire_bits = saturate((u128)h.k * per);
  } else {
    info->wire_bits = cs_codec_wire_bits(&p, h.n);
  }
  return true;
}

static bool check_buffers(const void *x, size_t n, void *out, size_t out_cap, size_t need,
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

bool cs_codec_encode(CsCodec *c, uint64_t round, const float *x, size_t n, void *out,
                     size_t out_cap, size_t *out_len, GError **error) {
  if (!c) {
    g_set_error_literal(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID, "no codec");
    return false;
  }
  const CsCodecParams *p = &c->p;
  Layout l = layout_of(p->method, p->dtype, code_bits(p->method, p->bits), n,
                       payload_k(p, n), (uint64_t)p->bucket);
  if (!check_buffers(x, n, out, out_cap, l.total, out_len, error)) return false;
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
    float *s = grow(&c->tmp, &c->tmp_cap, n);
    size_t bad;
    /* The residual is never allowed to hold a NaN or inf: it would stay
     * in every later encoding. */
    if (!cs_kern_add_finite(x, c->residual, n, s, &bad))
      return nonfinite_error(error, method_names[p->method], s, bad,
                             "with error feedback, x + e must be finite (the residual would "
                             "keep it forever)");
    src = s;
  }
  if (!encode_raw(c, round, src, n, out, &l, error)) return false;
  *out_len = l.total;
  if (p->error_feedback) {
    Header h;
    memcpy(&h, out, sizeof h);
    decode_parsed(out, &h, &l, c->residual, false, NULL);
    cs_kern_sub_from(src, n, c->residual);
  }
  return true;
}

/* ---- aggregation ---- */

void cs_codec_add(float *acc, const float *y, size_t n) { cs_kern_add(acc, y, n); }

const char *cs_codec_kernel_isa(void) { return cs_kern_isa(); }

static bool parse_pair(const void *a, size_t a_len, const void *b, size_t b_len, Header *ha,
                       Layout *la, Header *hb, Layout *lb, GError **error) {
  if (!parse_payload(a, a_len, ha, la, error) || !parse_payload(b, b_len, hb, lb, error))
    return false;
  if (ha->method != hb->method || ha->n != hb->n || ha->dtype != hb->dtype)
    return payload_error(error, "cannot combine %s (%" G_GUINT64_FORMAT " x %s) with %s (%"
                         G_GUINT64_FORMAT " x %s)",
                         method_names[ha->method], (guint64)ha->n, dtype_names[ha->dtype],
                         method_names[hb->method], (guint64)hb->n, dtype_names[hb->dtype]);
  return true;
}

/* randk payloads of the same (seed, round) carry the same indices: their
 * values add in place. */
static bool randk_add(const uint8_t *a, const Header *ha, const Layout *la, const uint8_t *b,
                      const Header *hb, void *out, size_t out_cap, size_t *out_len,
                      GError **error) {
  if (ha->seed != hb->seed || ha->round != hb->round || ha->k != hb->k)
    return payload_error(error, "randk payloads with different indices (seed, round or k)");
  if (!check_buffers(NULL, 0, out, out_cap, la->total, out_len, error)) return false;
  uint8_t *o = out;
  size_t vb = dtype_bytes(ha->dtype);
  float va[BATCH], vb2[BATCH];
  for (size_t j0 = 0; j0 < ha->k; j0 += BATCH) {
    size_t len = MIN((size_t)BATCH, (size_t)ha->k - j0);
    load_values(ha->dtype, a + HEADER_BYTES + j0 * vb, len, va, false);
    load_values(hb->dtype, b + HEADER_BYTES + j0 * vb, len, vb2, false);
    cs_kern_add(va, vb2, len);
    store_values(ha->dtype, va, len, o + HEADER_BYTES + j0 * vb);
  }
  memcpy(o, ha, sizeof *ha);
  *out_len = la->total;
  return true;
}

bool cs_codec_reduce(CsCodec *c, uint64_t round, const void *a, size_t a_len, const void *b,
                     size_t b_len, void *out, size_t out_cap, size_t *out_len, GError **error) {
  if (!c) {
    g_set_error_literal(error, CS_CODEC_ERROR, CS_CODEC_ERROR_INVALID, "no codec");
    return false;
  }
  const CsCodecParams *p = &c->p;
  if (!cs_codec_method_summable(p->method)) {
    g_set_error(error, CS_CODEC_ERROR, CS_CODEC_ERROR_COLLECTIVE,
                "%s payloads cannot be summed in place: %s", method_names[p->method],
                cs_codec_why_not_summable(p->method));
    return false;
  }
  Header ha, hb;
  Layout la, lb;
  if (!parse_pair(a, a_len, b, b_len, &ha, &la, &hb, &lb, error)) return false;
  if (ha.method != p->method)
    return payload_error(error, "a %s payload given to a %s codec", method_names[ha.method],
                         method_names[p->method]);
  if (p->method == CS_CODEC_RANDK)
    return randk_add(a, &ha, &la, b, &hb, out, out_cap, out_len, error);
  size_t n = (size_t)ha.n;
  Layout l = layout_of(p->method, p->dtype, code_bits(p->method, p->bits), n, payload_k(p, n),
                       (uint64_t)p->bucket);
  if (!check_buffers(NULL, 0, out, out_cap, l.total, out_len, error)) return false;
  float *sum = grow(&c->tmp, &c->tmp_cap, n);
  if (!decode_parsed(a, &ha, &la, sum, false, error) ||
      !decode_parsed(b, &hb, &lb, sum, true, error))
    return false;
  if (!encode_raw(c, round, sum, n, out, &l, error)) return false;
  *out_len = l.total;
  return true;
}

bool cs_codec_sparse_merge(const void *a, size_t a_len, const void *b, size_t b_len, void *out,
                           size_t out_cap, size_t *out_len, GError **error) {
  Header ha, hb;
  Layout la, lb;
  if (!parse_pair(a, a_len, b, b_len, &ha, &la, &hb, &lb, error)) return false;
  if (ha.method == CS_CODEC_RANDK)
    return randk_add(a, &ha, &la, b, &hb, out, out_cap, out_len, error);
  if (ha.method != CS_CODEC_TOPK)
    return payload_error(error, "a sparse merge takes topk or randk payloads, not %s",
                         method_names[ha.method]);
  const uint8_t *pa = a, *pb = b;
  const uint32_t *ia = (const uint32_t *)(const void *)(pa + la.idx_off);
  const uint32_t *ib = (const uint32_t *)(const void *)(pb + lb.idx_off);
  if (!check_indices(ia, ha.k, ha.n, error) || !check_indices(ib, hb.k, hb.n, error))
    return false;
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
  Layout l = layout_of(CS_CODEC_TOPK, ha.dtype, 0, ha.n, k, 0);
  if (!check_buffers(NULL, 0, out, out_cap, l.total, out_len, error)) return false;
  uint8_t *o = out;
  uint32_t *io = (uint32_t *)(void *)(o + l.idx_off);
  size_t vb = dtype_bytes(ha.dtype);
  const uint8_t *va = pa + HEADER_BYTES, *vbp = pb + HEADER_BYTES;
  uint8_t *vo = o + HEADER_BYTES;
  for (size_t i = 0, j = 0, t = 0; t < k; t++) {
    float x = 0.0f, y = 0.0f;
    if (j == kb || (i < ka && ia[i] < ib[j])) {
      load_values(ha.dtype, va + i * vb, 1, &x, false);
      io[t] = ia[i++];
    } else if (i == ka || ib[j] < ia[i]) {
      load_values(hb.dtype, vbp + j * vb, 1, &y, false);
      io[t] = ib[j++];
    } else {
      load_values(ha.dtype, va + i * vb, 1, &x, false);
      load_values(hb.dtype, vbp + j * vb, 1, &y, false);
      io[t] = ia[i];
      i++, j++;
    }
    float s = x + y;
    store_values(ha.dtype, &s, 1, vo + t * vb);
  }
  Header h = ha;
  h.k = k;
  h.body_len = l.total - HEADER_BYTES;
  memcpy(o, &h, sizeof h);
  *out_len = l.total;
  return true;
}

bool cs_codec_sign_vote(const void *const *payloads, const size_t *lens, size_t count, void *out,
                        size_t out_cap, size_t *out_len, GError **error) {
  if (count == 0 || payloads == NULL || lens == NULL)
    return payload_error(error, "a vote needs at least one payload");
  if (count > UINT32_MAX) return payload_error(error, "too many voters");
  Header h0;
  Layout l0;
  if (!parse_payload(payloads[0], lens[0], &h0, &l0, error)) return false;
  if (h0.method != CS_CODEC_SIGN)
    return payload_error(error, "a vote takes sign payloads, not %s", method_names[h0.method]);
  for (size_t p = 1; p < count; p++) {
    Header h;
    Layout l;
    if (!parse_payload(payloads[p], lens[p], &h, &l, error)) return false;
    if (h.method != CS_CODEC_SIGN || h.n != h0.n || h.bucket != h0.bucket)
      return payload_error(error, "voter %zu is not a sign payload of the same gradient", p);
  }
  if (!check_buffers(NULL, 0, out, out_cap, l0.total, out_len, error)) return false;
  size_t n = (size_t)h0.n, nb = n == 0 ? 0 : (size_t)buckets_of(n, (int64_t)h0.bucket);
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
