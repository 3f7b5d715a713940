/* test_codec.c - the gradient codecs: wire sizes against the SPEC table,
 * bit-exact fp16/bf16 rounding, quantization error against its bound and
 * its theory, exact top-k, shared rand-k indices, unbiased stochastic
 * rounding, the aggregation helpers, error feedback, non-finite input,
 * malformed payloads, costs, and the `commsim codecs` command. */
#include "config.h"

#include <check.h>
#include <float.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "commsim/codec.h"
#include "codec_private.h"
#include "commsim/rng.h"
#include "kernels.h"

/* check's ck_assert records its location on every call (a write to the
 * runner), which in loops over millions of elements cost seconds: these
 * only call into check when the condition fails. */
#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond);    \
  } while (0)
#define CHECK_MSG(cond, ...)                  \
  do {                                        \
    if (!(cond)) ck_abort_msg(__VA_ARGS__);   \
  } while (0)

static CsCodecParams params(CsCodecMethod m) {
  CsCodecParams p;
  cs_codec_params_init(&p);
  p.method = m;
  p.seed = 42;
  return p;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static float *random_floats(size_t n, uint64_t seed, double lo, double hi) {
  float *x = g_new(float, MAX(n, 1));
  CsRng r;
  cs_rng_init(&r, seed, 1);
  for (size_t i = 0; i < n; i++) x[i] = (float)(lo + (hi - lo) * cs_rng_uniform(&r));
  return x;
}

/* Encode with a fresh codec; returns the payload (g_aligned_free it). */
static void *encode(const CsCodecParams *p, uint64_t worker, uint64_t round, const float *x,
                    size_t n, size_t *len) {
  g_autoptr(GError) error = NULL;
  g_autoptr(CsCodec) c = cs_codec_new(p, worker, &error);
  ck_assert_ptr_nonnull(c);
  size_t cap = cs_codec_payload_size(p, n);
  void *out = g_aligned_alloc0(1, MAX(cap, 8), 8);
  CHECK_MSG(cs_codec_encode(c, round, x, n, out, cap, len, &error), "%s",
                error ? error->message : "");
  ck_assert_uint_eq(*len, cap);
  return out;
}

static float *roundtrip(const CsCodecParams *p, const float *x, size_t n) {
  size_t len;
  void *buf = encode(p, 0, 0, x, n, &len);
  float *y = g_new(float, MAX(n, 1));
  g_autoptr(GError) error = NULL;
  CHECK_MSG(cs_codec_decode(buf, len, y, n, &error), "%s", error ? error->message : "");
  g_aligned_free(buf);
  return y;
}

/* ---- the method layer ---- */

START_TEST(test_wire_bits_table) {
  /* Hand-computed rows of the SPEC table. */
  struct {
    CsCodecMethod m;
    CsDtype d;
    int bits;
    double ratio;
    int index_bits;
    int64_t bucket;
    uint64_t n, want;
  } rows[] = {
      {CS_CODEC_NONE, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1000, 32000},        /* 32 n */
      {CS_CODEC_NONE, CS_DTYPE_FP64, 8, 0.01, 32, 512, 1000, 64000},        /* 64 n */
      {CS_CODEC_NONE, CS_DTYPE_BF16, 8, 0.01, 32, 512, 1000, 16000},        /* 16 n */
      {CS_CODEC_FP16, CS_DTYPE_FP64, 8, 0.01, 32, 512, 1000, 16000},        /* 16 n, any dtype */
      {CS_CODEC_BF16, CS_DTYPE_FP32, 8, 0.01, 32, 512, 3, 48},              /* 16 * 3 */
      {CS_CODEC_UNIFORM, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1000, 8128},      /* 8000 + 64*2 */
      {CS_CODEC_UNIFORM, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1024, 8320},      /* 8192 + 64*2 */
      {CS_CODEC_UNIFORM, CS_DTYPE_FP32, 4, 0.01, 32, 7, 50, 712},           /* 200 + 64*8 */
      {CS_CODEC_UNIFORM, CS_DTYPE_FP32, 1, 0.01, 32, 1, 5, 325},            /* 5 + 64*5 */
      {CS_CODEC_STOCHASTIC, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1000, 8064},   /* 8000 + 32*2 */
      {CS_CODEC_STOCHASTIC, CS_DTYPE_FP32, 16, 0.01, 32, 100, 1001, 16368}, /* 16016 + 32*11 */
      {CS_CODEC_TOPK, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1000, 640},          /* k=10: 10*(32+32) */
      {CS_CODEC_TOPK, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1001, 704},          /* k=ceil(10.01)=11 */
      {CS_CODEC_TOPK, CS_DTYPE_FP16, 8, 0.1, 0, 512, 95, 160},              /* k=10: 10*16 */
      {CS_CODEC_TOPK, CS_DTYPE_FP32, 8, 0.07, 20, 512, 100, 364},           /* k=7: 7*52 */
      {CS_CODEC_RANDK, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1000, 320},         /* 10*32, no index */
      {CS_CODEC_RANDK, CS_DTYPE_BF16, 8, 0.5, 32, 512, 3, 32},              /* k=2: 2*16 */
      {CS_CODEC_SIGN, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1000, 1064},         /* 1000 + 32*2 */
      {CS_CODEC_SIGN, CS_DTYPE_FP32, 8, 0.01, 32, 1000, 1000, 1032},        /* 1000 + 32*1 */
      {CS_CODEC_TERNGRAD, CS_DTYPE_FP32, 8, 0.01, 32, 512, 1000, 2064},     /* 2000 + 32*2 */
      {CS_CODEC_TERNGRAD, CS_DTYPE_FP32, 8, 0.01, 32, 3, 10, 148},          /* 20 + 32*4 */
      /* 25.6M elements, SPEC defaults: the paper-sized model */
      {CS_CODEC_UNIFORM, CS_DTYPE_FP32, 8, 0.01, 32, 512, 25600000, 208000000}, /* 204.8M+64*50000 */
      {CS_CODEC_TOPK, CS_DTYPE_FP32, 8, 0.01, 32, 512, 25600000, 16384000},     /* 256000 * 64 */
      {CS_CODEC_SIGN, CS_DTYPE_FP32, 8, 0.01, 32, 512, 25600000, 27200000},     /* 25.6M + 1.6M */
      {CS_CODEC_NONE, CS_DTYPE_FP32, 8, 0.01, 32, 512, 0, 0},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    CsCodecParams p = params(rows[i].m);
    p.dtype = rows[i].d;
    p.bits = rows[i].bits;
    p.ratio = rows[i].ratio;
    p.index_bits = rows[i].index_bits;
    p.bucket = rows[i].bucket;
    CHECK_MSG(cs_codec_wire_bits(&p, rows[i].n) == rows[i].want, "row %zu: %" G_GUINT64_FORMAT,
                  i, (guint64)cs_codec_wire_bits(&p, rows[i].n));
  }
}
END_TEST

START_TEST(test_wire_bits_formula) {
  /* Every method at many n and buckets against the SPEC formulas written
   * out here independently (integer ceil). */
  const uint64_t ns[] = {1, 2, 7, 8, 511, 512, 513, 1000, 4097, 1000003};
  const int64_t ms[] = {1, 3, 8, 512, 1000, 5000000};
  for (size_t a = 0; a < G_N_ELEMENTS(ns); a++)
    for (size_t b = 0; b < G_N_ELEMENTS(ms); b++)
      for (int bits = 1; bits <= 16; bits += 5) {
        uint64_t n = ns[a], m = (uint64_t)ms[b], nb = ceil_div(n, m);
        uint64_t k = ceil_div(n, 100); /* r = 0.01 */
        uint64_t want[CS_CODEC_N_METHODS] = {
            32 * n, 16 * n, 16 * n, bits * n + 64 * nb, bits * n + 32 * nb,
            k * (32 + 32), k * 32, n + 32 * nb, 2 * n + 32 * nb};
        for (int meth = 0; meth < CS_CODEC_N_METHODS; meth++) {
          CsCodecParams p = params((CsCodecMethod)meth);
          p.bits = bits;
          p.bucket = ms[b];
          ck_assert_uint_eq(cs_codec_wire_bits(&p, n), want[meth]);
          /* the payload holds the formula in whole bytes; bucketed methods
           * add at most 7 bytes of alignment between scales and codes,
           * top-k stores 32-bit indices, which index_bits 32 matches */
          size_t body = cs_codec_payload_size(&p, n) - 64;
          uint64_t bytes = ceil_div(want[meth], 8);
          ck_assert_uint_ge(body, bytes);
          ck_assert_uint_le(body, bytes + 7);
        }
      }
}
END_TEST

START_TEST(test_k) {
  ck_assert_uint_eq(cs_codec_k(0.07, 100), 7);      /* not 8: 0.07 is stored as 0.0700..01 */
  ck_assert_uint_eq(cs_codec_k(0.01, 25600000), 256000);
  ck_assert_uint_eq(cs_codec_k(0.01, 1), 1);         /* ceil(0.01) */
  ck_assert_uint_eq(cs_codec_k(0.5, 3), 2);          /* ceil(1.5) */
  ck_assert_uint_eq(cs_codec_k(1e-12, 10), 1);       /* ceil(1e-11) */
  ck_assert_uint_eq(cs_codec_k(1.0, 12345), 12345);
  ck_assert_uint_eq(cs_codec_k(0.14, 100), 14);      /* 0.14 * 100 = 14.000000000000002 */
  ck_assert_uint_eq(cs_codec_k(0.01, 0), 0);
}
END_TEST

START_TEST(test_saturation) {
  CsCodecParams p = params(CS_CODEC_NONE);
  p.dtype = CS_DTYPE_FP64;
  ck_assert_uint_eq(cs_codec_wire_bits(&p, UINT64_MAX), UINT64_MAX);
  ck_assert_uint_eq(cs_codec_wire_bits(&p, UINT64_MAX / 64), UINT64_MAX / 64 * 64);
}
END_TEST

START_TEST(test_names) {
  g_autoptr(GError) error = NULL;
  CsCodecMethod m;
  for (int i = 0; i < CS_CODEC_N_METHODS; i++) {
    CHECK(cs_codec_method_parse(cs_codec_method_name((CsCodecMethod)i), &m, NULL));
    ck_assert_int_eq(m, i);
  }
  CHECK(!cs_codec_method_parse("qsgd", &m, &error));
  ck_assert_str_eq(error->message,
                   "'qsgd' is not a compression method: use none, fp16, bf16, uniform, "
                   "stochastic, topk, randk, sign or terngrad");
  g_clear_error(&error);
  CsDtype d;
  CHECK(cs_dtype_parse("bf16", &d, NULL) && d == CS_DTYPE_BF16);
  CHECK(cs_dtype_parse("fp64", &d, NULL) && d == CS_DTYPE_FP64);
  CHECK(!cs_dtype_parse("int8", &d, &error));
  ck_assert_str_eq(error->message, "'int8' is not a gradient dtype: use fp32, fp16, bf16 or fp64");
  ck_assert_int_eq(cs_dtype_bits(CS_DTYPE_FP16), 16);
  ck_assert_int_eq(cs_dtype_bits(CS_DTYPE_FP64), 64);
}
END_TEST

/* The method table: every row at its number in CsCodecMethod, found by
 * its name, with what codec.c calls without looking: what a new method's
 * file must fill in. */
START_TEST(test_method_table) {
  static const struct {
    CsCodecMethod method;
    const char *name;
  } order[] = {
      {CS_CODEC_NONE, "none"},       {CS_CODEC_FP16, "fp16"},
      {CS_CODEC_BF16, "bf16"},       {CS_CODEC_UNIFORM, "uniform"},
      {CS_CODEC_STOCHASTIC, "stochastic"}, {CS_CODEC_TOPK, "topk"},
      {CS_CODEC_RANDK, "randk"},     {CS_CODEC_SIGN, "sign"},
      {CS_CODEC_TERNGRAD, "terngrad"},
  };
  ck_assert_uint_eq(G_N_ELEMENTS(order), CS_CODEC_N_METHODS);
  const char *const *names = cs_codec_method_names();
  ck_assert_ptr_eq(names, cs_codec_method_names()); /* built once */
  for (size_t i = 0; i < G_N_ELEMENTS(order); i++) {
    CHECK_MSG(cs_codec_methods[order[i].method] != NULL, "no row %d", (int)order[i].method);
    ck_assert_str_eq(cs_codec_methods[order[i].method]->name, order[i].name);
    ck_assert_str_eq(names[order[i].method], order[i].name);
  }
  ck_assert_ptr_null(cs_codec_methods[CS_CODEC_N_METHODS]);
  ck_assert_ptr_null(names[CS_CODEC_N_METHODS]);
  ck_assert_ptr_null(cs_codec_method_def(CS_CODEC_N_METHODS));
  for (CsCodecMethod m = 0; cs_codec_methods[m]; m++) {
    const CsCodecMethodDef *def = cs_codec_methods[m];
    CsCodecMethod found = CS_CODEC_N_METHODS;
    ck_assert_ptr_eq(cs_codec_method_find(def->name, &found), def);
    ck_assert_int_eq(found, m);
    ck_assert_ptr_eq(cs_codec_method_def(m), def);
    ck_assert_ptr_eq(names[m], def->name);
    ck_assert_str_eq(cs_codec_method_name(m), def->name);
    CHECK_MSG(def->help && def->help[0] && !strchr(def->help, '\n'), "%s: help", def->name);
    /* summable, or a reason why not for the messages: never both */
    CHECK_MSG(def->summable == (def->why_not_summable == NULL), "%s: summable", def->name);
    CHECK_MSG(def->describe && def->wire_bits && def->kernel, "%s: hooks", def->name);
    CHECK_MSG(def->kernel->layout && def->kernel->encode && def->kernel->decode, "%s: kernel",
              def->name);
    /* adding without decoding is a sum only for a summable method */
    CHECK_MSG(!def->kernel->reduce || def->summable, "%s: reduce", def->name);
    /* the codes' width is fixed or is `bits`, not both */
    CHECK_MSG(!(def->kernel->code_bits && (def->uses & CS_CODEC_USES_BITS)), "%s: code bits",
              def->name);
    /* index bits count per value sent: only a method that sends k of them */
    CHECK_MSG(!(def->uses & CS_CODEC_USES_INDEX_BITS) || (def->uses & CS_CODEC_USES_RATIO),
              "%s: index_bits", def->name);
    CHECK_MSG(def->cost.encode_ps >= 0 && def->cost.decode_ps >= 0 && def->cost.reduce_ps > 0,
              "%s: cost", def->name);
  }
  ck_assert_ptr_null(cs_codec_method_find("qsgd", NULL));
  ck_assert_ptr_null(cs_codec_method_find(NULL, NULL));
}
END_TEST

START_TEST(test_params_validate) {
  struct {
    CsCodecMethod m;
    int bits;
    double ratio;
    int index_bits;
    int64_t bucket;
    const char *error;
  } rows[] = {
      {CS_CODEC_UNIFORM, 0, 0.01, 32, 512, "uniform: bits is 0: use a whole number from 1 to 16"},
      {CS_CODEC_STOCHASTIC, 17, 0.01, 32, 512,
       "stochastic: bits is 17: use a whole number from 1 to 16"},
      {CS_CODEC_TOPK, 8, 0.0, 32, 512,
       "topk: ratio is 0: use a share of the elements in (0, 1], such as 0.01"},
      {CS_CODEC_RANDK, 8, 1.5, 32, 512,
       "randk: ratio is 1.5: use a share of the elements in (0, 1], such as 0.01"},
      {CS_CODEC_TOPK, 8, 0.01, 65, 512, "topk: index_bits is 65: use 0 to 64 (0 counts the values only)"},
      {CS_CODEC_SIGN, 8, 0.01, 32, 0, "sign: bucket is 0: use 1 or more elements per scale"},
      {CS_CODEC_NONE, 0, 0.0, -1, 0, NULL}, /* none ignores what it does not use */
      {CS_CODEC_UNIFORM, 16, 0.0, -1, 1, NULL},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    CsCodecParams p = params(rows[i].m);
    p.bits = rows[i].bits;
    p.ratio = rows[i].ratio;
    p.index_bits = rows[i].index_bits;
    p.bucket = rows[i].bucket;
    g_autoptr(GError) error = NULL;
    bool ok = cs_codec_params_validate(&p, &error);
    if (rows[i].error) {
      CHECK(!ok);
      ck_assert_str_eq(error->message, rows[i].error);
      ck_assert_ptr_null(cs_codec_new(&p, 0, NULL));
    } else {
      CHECK(ok);
    }
  }
}
END_TEST

START_TEST(test_collectives) {
  /* SPEC table: none..stochastic and randk: all; topk, sign, terngrad: ps, allgather */
  const unsigned want[CS_CODEC_N_METHODS] = {
      CS_CODEC_COLL_ALL, CS_CODEC_COLL_ALL, CS_CODEC_COLL_ALL,
      CS_CODEC_COLL_ALL, CS_CODEC_COLL_ALL, CS_CODEC_COLL_PS | CS_CODEC_COLL_ALLGATHER,
      CS_CODEC_COLL_ALL, CS_CODEC_COLL_PS | CS_CODEC_COLL_ALLGATHER,
      CS_CODEC_COLL_PS | CS_CODEC_COLL_ALLGATHER};
  const char *names[] = {"ps", "ring", "tree", "halving-doubling", "allgather"};
  for (int m = 0; m < CS_CODEC_N_METHODS; m++) {
    ck_assert_uint_eq(cs_codec_method_collectives((CsCodecMethod)m), want[m]);
    CHECK(cs_codec_method_summable((CsCodecMethod)m) == (want[m] == CS_CODEC_COLL_ALL));
    for (int c = 0; c < 5; c++) {
      char *msg = cs_codec_collective_refusal((CsCodecMethod)m, names[c]);
      CHECK((msg == NULL) == ((want[m] >> c) & 1));
      CHECK((msg == NULL) == cs_codec_check_collective((CsCodecMethod)m, names[c], NULL));
      g_free(msg);
    }
  }
  g_autofree char *msg = cs_codec_collective_refusal(CS_CODEC_TOPK, "ring");
  ck_assert_str_eq(msg,
                   "compression method 'topk' cannot be carried by collective 'ring': each worker "
                   "keeps different indices, so payloads cannot be added at a reduction hop; use "
                   "ps or allgather");
  g_autoptr(GError) error = NULL;
  CHECK(!cs_codec_check_collective(CS_CODEC_SIGN, "tree", &error));
  CHECK(g_error_matches(error, CS_CODEC_ERROR, CS_CODEC_ERROR_COLLECTIVE));
  CHECK(strstr(error->message, "use ps or allgather") != NULL);
  g_clear_error(&error);
  CHECK(!cs_codec_check_collective(CS_CODEC_NONE, "butterfly", &error));
  ck_assert_str_eq(error->message,
                   "'butterfly' is not a collective: use ps, ring, tree, halving-doubling, "
                   "allgather or hierarchical");
}
END_TEST

START_TEST(test_cost) {
  CsCodecCost d = cs_codec_cost_default(CS_CODEC_UNIFORM), c;
  CHECK(d.encode_ps > 0 && d.decode_ps > 0 && d.reduce_ps > 0);
  CsCodecCost none = cs_codec_cost_default(CS_CODEC_NONE);
  CHECK(none.encode_ps == 0 && none.decode_ps == 0 && none.reduce_ps > 0);
  /* speedup 50 divides every default by 50 */
  CHECK(cs_codec_cost_resolve(CS_CODEC_UNIFORM, 50.0, NULL, &c, NULL));
  ck_assert_double_eq_tol(c.encode_ps, d.encode_ps / 50.0, 1e-9);
  ck_assert_double_eq_tol(c.reduce_ps, d.reduce_ps / 50.0, 1e-9);
  /* an override replaces its field and is not scaled; the others scale */
  CsCodecCostOverride o = {400, CS_CODEC_COST_DEFAULT, 0};
  CHECK(cs_codec_cost_resolve(CS_CODEC_UNIFORM, 50.0, &o, &c, NULL));
  ck_assert_double_eq(c.encode_ps, 400.0);
  ck_assert_double_eq_tol(c.decode_ps, d.decode_ps / 50.0, 1e-9);
  ck_assert_double_eq(c.reduce_ps, 0.0);
  g_autoptr(GError) error = NULL;
  CHECK(!cs_codec_cost_resolve(CS_CODEC_UNIFORM, 0.0, NULL, &c, &error));
  ck_assert_str_eq(error->message,
                   "compression.speedup is 0: use a factor greater than 0 (50 for a GPU, say)");
  g_clear_error(&error);
  CHECK(!cs_codec_cost_resolve(CS_CODEC_UNIFORM, NAN, NULL, &c, NULL));
  o.decode = -5;
  CHECK(!cs_codec_cost_resolve(CS_CODEC_UNIFORM, 1.0, &o, &c, &error));
  /* 25.6M elements at 0.4 ns = 10.24 ms; 3 at 0.5 ps = 1.5 ps -> 2 (nearest) */
  ck_assert_int_eq(cs_codec_cost_time(400.0, 25600000), 10240000000LL);
  ck_assert_int_eq(cs_codec_cost_time(0.5, 3), 2);
  ck_assert_int_eq(cs_codec_cost_time(1e9, UINT64_MAX), CS_TIME_MAX);
}
END_TEST

/* ---- fp16 and bf16 ---- */

static float bits_f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

START_TEST(test_fp16_patterns) {
  struct {
    float f;
    uint16_t h;
  } rows[] = {
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {65504.0f, 0x7BFF},                /* largest half */
      {65519.0f, 0x7BFF},                /* below the midpoint 65520 */
      {65520.0f, 0x7C00},                /* midpoint, 0x7BFF is odd: ties to even = inf */
      {1e6f, 0x7C00},                    /* overflow */
      {-INFINITY, 0xFC00},
      {0x1p-14f, 0x0400},                /* smallest normal */
      {0x1p-24f, 0x0001},                /* smallest subnormal */
      {0x1p-25f, 0x0000},                /* half of it: tie, to even (0) */
      {0x1.8p-24f, 0x0002},              /* 1.5 units: tie, to even (2) */
      {0x1.4p-24f, 0x0001},              /* 1.25 units: down */
      {0x1p-26f, 0x0000},                /* underflow */
      {1.0f + 0x1p-11f, 0x3C00},         /* tie between 0x3C00 and 0x3C01: even */
      {1.0f + 0x1.8p-10f, 0x3C02},       /* tie between 0x3C01 and 0x3C02: even */
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3C01}, /* just above the tie */
      {0.1f, 0x2E66},                    /* 0.0999755859375 */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    CHECK_MSG(cs_kern_f16_from_f32(rows[i].f) == rows[i].h, "row %zu: %04x", i,
                  cs_kern_f16_from_f32(rows[i].f));
    uint16_t h;
    cs_kern_f32_to_f16(&rows[i].f, 1, &h);
    ck_assert_uint_eq(h, rows[i].h);
  }
  /* NaN: quiet NaN with the sign and top payload bits */
  ck_assert_uint_eq(cs_kern_f16_from_f32(bits_f(0x7FC00000u)), 0x7E00);
  ck_assert_uint_eq(cs_kern_f16_from_f32(bits_f(0xFF800001u)), 0xFE00); /* sNaN made quiet */
  ck_assert_uint_eq(cs_kern_f16_from_f32(bits_f(0x7FA00000u)), 0x7F00);
  /* decode */
  CHECK(cs_kern_f32_from_f16(0x3C00) == 1.0f);
  CHECK(cs_kern_f32_from_f16(0x0001) == 0x1p-24f);
  CHECK(cs_kern_f32_from_f16(0x03FF) == 0x1.ff8p-15f); /* largest subnormal: 1023 * 2^-24 */
  CHECK(cs_kern_f32_from_f16(0x7BFF) == 65504.0f);
  CHECK(cs_kern_f32_from_f16(0xFC00) == -INFINITY);
  CHECK(isnan(cs_kern_f32_from_f16(0x7E00)));
  ck_assert_uint_eq(f_bits(cs_kern_f32_from_f16(0x7C01)), 0x7FC02000u); /* made quiet */
  /* every non-NaN half survives the round trip half -> float -> half */
  for (uint32_t h = 0; h < 65536; h++) {
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) continue;
    CHECK(cs_kern_f16_from_f32(cs_kern_f32_from_f16((uint16_t)h)) == h);
  }
}
END_TEST

START_TEST(test_fp16_portable_matches_hardware) {
  if (!cs_kern_have_f16c()) return; /* nothing to compare with */
  /* every half decoded both ways, and 1M random float bit patterns (all
   * classes: the exponent is drawn uniformly) encoded both ways */
  enum { N = 1 << 20 };
  uint16_t *h = g_new(uint16_t, 65536);
  float *a = g_new(float, 65536), *b = g_new(float, 65536);
  for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  cs_kern_f16_to_f32(h, 65536, a, false);
  cs_kern_f16_to_f32_portable(h, 65536, b, false);
  ck_assert_int_eq(memcmp(a, b, 65536 * sizeof *a), 0);
  float *x = g_new(float, N);
  uint16_t *p = g_new(uint16_t, N), *q = g_new(uint16_t, N);
  CsRng r;
  cs_rng_init(&r, 7, 7);
  for (size_t i = 0; i < N; i++) x[i] = bits_f((uint32_t)cs_rng_next(&r));
  cs_kern_f32_to_f16(x, N, p);
  cs_kern_f32_to_f16_portable(x, N, q);
  for (size_t i = 0; i < N; i++)
    CHECK_MSG(p[i] == q[i], "%08x: hardware %04x, portable %04x", f_bits(x[i]), p[i], q[i]);
  g_free(h), g_free(a), g_free(b), g_free(x), g_free(p), g_free(q);
}
END_TEST

START_TEST(test_bf16_patterns) {
  struct {
    uint32_t f;
    uint16_t h;
  } rows[] = {
      {0x3F800000u, 0x3F80},   /* 1.0 */
      {0x3F808000u, 0x3F80},   /* 1 + 2^-8: tie, to even */
      {0x3F818000u, 0x3F82},   /* 1 + 3 * 2^-8: tie, to even (up) */
      {0x3F808001u, 0x3F81},   /* just above the tie */
      {0x3F807FFFu, 0x3F80},   /* just below */
      {0x7F7FFFFFu, 0x7F80},   /* FLT_MAX rounds up to inf */
      {0x7F800000u, 0x7F80},   /* inf */
      {0xFF800000u, 0xFF80},   /* -inf */
      {0x000116C2u, 0x0001},   /* a subnormal rounds like any other */
      {0x7FC00000u, 0x7FC0},   /* quiet NaN */
      {0x7F800001u, 0x7FC0},   /* signalling NaN made quiet (its payload is in the low bits) */
      {0xFFA00000u, 0xFFE0},   /* NaN keeps sign and top payload */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    CHECK_MSG(cs_kern_bf16_from_f32(bits_f(rows[i].f)) == rows[i].h, "row %zu: %04x", i,
                  cs_kern_bf16_from_f32(bits_f(rows[i].f)));
    ck_assert_uint_eq(f_bits(cs_kern_f32_from_bf16(rows[i].h)), (uint32_t)rows[i].h << 16);
  }
}
END_TEST

START_TEST(test_half_codecs_roundtrip) {
  /* Through a payload: decode(encode(x)) is the element conversion. */
  size_t n = 1003;
  float *x = random_floats(n, 3, -70000.0, 70000.0);
  x[0] = NAN, x[1] = INFINITY, x[2] = 1e-30f;
  CsCodecParams p16 = params(CS_CODEC_FP16), pb = params(CS_CODEC_BF16);
  float *y = roundtrip(&p16, x, n), *z = roundtrip(&pb, x, n);
  for (size_t i = 0; i < n; i++) {
    float e16 = cs_kern_f32_from_f16(cs_kern_f16_from_f32(x[i]));
    float eb = cs_kern_f32_from_bf16(cs_kern_bf16_from_f32(x[i]));
    CHECK(f_bits(y[i]) == f_bits(e16));
    CHECK(f_bits(z[i]) == f_bits(eb));
  }
  CHECK(isnan(y[0]) && isinf(y[1]) && y[2] == 0.0f);
  /* none in fp64 is exact; none in bf16 is bf16 */
  CsCodecParams pn = params(CS_CODEC_NONE);
  pn.dtype = CS_DTYPE_FP64;
  float *w = roundtrip(&pn, x, n);
  ck_assert_int_eq(memcmp(w + 1, x + 1, (n - 1) * sizeof *x), 0);
  g_free(w);
  pn.dtype = CS_DTYPE_BF16;
  w = roundtrip(&pn, x, n);
  for (size_t i = 0; i < n; i++) CHECK(f_bits(w[i]) == f_bits(z[i]));
  g_free(x), g_free(y), g_free(z), g_free(w);
}
END_TEST

/* ---- bit streams ---- */

START_TEST(test_pack_roundtrip) {
  CsRng r;
  cs_rng_init(&r, 11, 0);
  const size_t lens[] = {1, 2, 7, 8, 9, 15, 16, 17, 100, 2048, 2051};
  uint16_t q[2051], back[2051];
  uint8_t buf[2051 * 2 + 16];
  for (int bits = 1; bits <= 16; bits++)
    for (size_t a = 0; a < G_N_ELEMENTS(lens); a++) {
      size_t len = lens[a], bytes = (len * (size_t)bits + 7) / 8;
      for (size_t i = 0; i < len; i++) q[i] = (uint16_t)cs_rng_below(&r, 1u << bits);
      memset(buf, 0xA5, sizeof buf);
      cs_kern_pack(q, len, bits, buf);
      /* nothing written past ceil(len * bits / 8) bytes */
      for (size_t i = bytes; i < sizeof buf; i++) CHECK(buf[i] == 0xA5);
      cs_kern_unpack(buf, len, bits, back);
      ck_assert_int_eq(memcmp(q, back, len * sizeof *q), 0);
    }
  /* the layout is a little-endian bit stream: codes 1, 2, 3 of 3 bits are
   * 001 010 011 -> bits 0..8 = 1,0,0, 0,1,0, 1,1,0 -> bytes 0xD1, 0x00 */
  uint16_t three[3] = {1, 2, 3};
  cs_kern_pack(three, 3, 3, buf);
  ck_assert_uint_eq(buf[0], 0xD1);
  ck_assert_uint_eq(buf[1] & 1u, 0);
}
END_TEST

/* ---- quantizers ---- */

START_TEST(test_uniform_half_step) {
  /* |x - x'| <= step / 2 per element, step = (max - min) / (2^b - 1) of its
   * bucket, plus the float rounding of (x - min) / step (a few ulp of the
   * code, t < 2^16: 2^-7 of a step at most at 16 bits). */
  size_t n = 10007; /* not a multiple of any bucket below */
  float *x = random_floats(n, 5, -3.0, 7.0);
  const int64_t buckets[] = {1, 7, 512, 20000};
  for (int bits = 1; bits <= 16; bits++)
    for (size_t bi = 0; bi < G_N_ELEMENTS(buckets); bi++) {
      CsCodecParams p = params(CS_CODEC_UNIFORM);
      p.bits = bits;
      p.bucket = buckets[bi];
      float *y = roundtrip(&p, x, n);
      size_t m = (size_t)MIN(buckets[bi], (int64_t)n);
      for (size_t b0 = 0; b0 < n; b0 += m) {
        size_t b1 = MIN(b0 + m, n);
        float lo = x[b0], hi = x[b0];
        for (size_t i = b0; i < b1; i++) lo = MIN(lo, x[i]), hi = MAX(hi, x[i]);
        double step = ((double)hi - lo) / ((1 << bits) - 1);
        for (size_t i = b0; i < b1; i++)
          CHECK_MSG(fabs((double)x[i] - y[i]) <=
                            step * (0.5 + 1.0 / 64) + 4 * FLT_EPSILON * (fabs(lo) + fabs(hi)),
                        "b=%d m=%zu i=%zu: |%g - %g| > %g/2", bits, m, i, x[i], y[i], step);
      }
      g_free(y);
    }
  g_free(x);
}
END_TEST

START_TEST(test_uniform_error_theory) {
  /* x ~ U(-1, 1): the rounding error is uniform on [-step/2, step/2], so
   * its mean square is step^2 / 12 with each bucket's own step; the
   * measured sum of squares must be within 5 % of sum m_b step_b^2 / 12. */
  size_t n = 1 << 20, m = 512;
  float *x = random_floats(n, 9, -1.0, 1.0);
  const int bitss[] = {2, 4, 8, 12};
  for (size_t t = 0; t < G_N_ELEMENTS(bitss); t++) {
    CsCodecParams p = params(CS_CODEC_UNIFORM);
    p.bits = bitss[t];
    p.bucket = (int64_t)m;
    float *y = roundtrip(&p, x, n);
    double measured = 0.0, theory = 0.0;
    for (size_t b0 = 0; b0 < n; b0 += m) {
      float lo = x[b0], hi = x[b0];
      for (size_t i = b0; i < b0 + m; i++) lo = MIN(lo, x[i]), hi = MAX(hi, x[i]);
      double step = ((double)hi - lo) / ((1 << p.bits) - 1);
      theory += (double)m * step * step / 12.0;
      for (size_t i = b0; i < b0 + m; i++) measured += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
    }
    CHECK_MSG(fabs(measured / theory - 1.0) < 0.05, "b=%d: measured/theory = %g", p.bits,
                  measured / theory);
    g_free(y);
  }
  g_free(x);
}
END_TEST

/* Decode the mean over `rounds` encodings of x with their own random
 * streams, and check every element within 5 sigma of x: stochastic
 * rounding between grid points g <= x < g + step picks g + step with
 * probability f = (x - g) / step, variance step^2 f (1 - f). */
static void check_unbiased(CsCodecMethod m, int bits, uint32_t levels) {
  enum { N = 64, ROUNDS = 4000 };
  float x[N];
  CsRng r;
  cs_rng_init(&r, 77, 0);
  for (int i = 0; i < N; i++) x[i] = (float)(2.0 * cs_rng_uniform(&r) - 1.0);
  x[0] = 1.0f; /* the bucket's scale s = max |x| = 1: grid -1 + j * 2 / levels */
  x[1] = -0.25f, x[2] = 0.0f;
  CsCodecParams p = params(m);
  p.bits = bits;
  p.bucket = N;
  g_autoptr(CsCodec) c = cs_codec_new(&p, 3, NULL);
  size_t cap = cs_codec_payload_size(&p, N), len;
  void *buf = g_aligned_alloc(1, cap, 8);
  double mean[N] = {0};
  float y[N];
  for (int t = 0; t < ROUNDS; t++) {
    CHECK(cs_codec_encode(c, (uint64_t)t, x, N, buf, cap, &len, NULL));
    CHECK(cs_codec_decode(buf, len, y, N, NULL));
    for (int i = 0; i < N; i++) mean[i] += y[i] / (double)ROUNDS;
  }
  double step = 2.0 / levels;
  for (int i = 0; i < N; i++) {
    double u = (x[i] + 1.0) / step, f = u - floor(u);
    double sigma = step * sqrt(f * (1.0 - f) / ROUNDS);
    /* + 2^-16 of a step: the resolution of the random threshold */
    CHECK_MSG(fabs(mean[i] - x[i]) <= 5.0 * sigma + step * 0x1p-16 + 1e-6,
                  "%s i=%d: mean %g, x %g, sigma %g", cs_codec_method_name(m), i, mean[i], x[i],
                  sigma);
  }
  g_aligned_free(buf);
}

START_TEST(test_stochastic_unbiased) {
  check_unbiased(CS_CODEC_STOCHASTIC, 2, 3);
  check_unbiased(CS_CODEC_STOCHASTIC, 1, 1);
  check_unbiased(CS_CODEC_TERNGRAD, 2, 2);
}
END_TEST

START_TEST(test_stochastic_streams) {
  /* Same (seed, worker, round): the same payload; another worker or round:
   * different rounding. */
  size_t n = 4096, la, lb, lc, ld;
  float *x = random_floats(n, 4, -1, 1);
  CsCodecParams p = params(CS_CODEC_STOCHASTIC);
  p.bits = 3;
  void *a = encode(&p, 1, 9, x, n, &la), *b = encode(&p, 1, 9, x, n, &lb);
  void *c = encode(&p, 2, 9, x, n, &lc), *d = encode(&p, 1, 10, x, n, &ld);
  ck_assert_int_eq(memcmp(a, b, la), 0);
  ck_assert_int_ne(memcmp((char *)a + 64, (char *)c + 64, la - 64), 0);
  ck_assert_int_ne(memcmp((char *)a + 64, (char *)d + 64, la - 64), 0);
  g_aligned_free(a), g_aligned_free(b), g_aligned_free(c), g_aligned_free(d);
  g_free(x);
}
END_TEST

START_TEST(test_sign_and_terngrad) {
  /* sign: +-mean|x| per bucket; zero counts as positive */
  float x[6] = {1.0f, -2.0f, 3.0f, 0.0f, -0.0f, -6.0f};
  CsCodecParams p = params(CS_CODEC_SIGN);
  p.bucket = 3; /* buckets {1,-2,3}: mean 2; {0,-0,-6}: mean 2 */
  float *y = roundtrip(&p, x, 6);
  const float want[6] = {2, -2, 2, 2, 2, -2};
  for (int i = 0; i < 6; i++) CHECK(y[i] == want[i]);
  g_free(y);
  /* terngrad: values in {-s, 0, s}, s = max|x| of the bucket */
  p = params(CS_CODEC_TERNGRAD);
  p.bucket = 3;
  y = roundtrip(&p, x, 6);
  const float s[6] = {3, 3, 3, 6, 6, 6};
  for (int i = 0; i < 6; i++) CHECK(y[i] == 0.0f || fabsf(y[i]) == s[i]);
  CHECK(y[2] == 3.0f && y[5] == -6.0f); /* |x| = s: always s */
  g_free(y);
}
END_TEST

/* sign on finite values whose float sums overflow: a bucket of 4,096
 * values of +-1e36 (their |x| sum, 4.1e39, is past float's 3.4e38) decodes
 * to +-1e36, its mean |x|, not NaN: the mean is taken in double then
 * (codecs.md: such a bucket is computed in double) */
START_TEST(test_sign_huge_values) {
  enum { N = 4096 };
  float *x = g_new(float, N);
  for (int i = 0; i < N; i++) x[i] = i % 3 ? 1e36f : -1e36f;
  CsCodecParams p = params(CS_CODEC_SIGN);
  p.bucket = N;
  float *y = roundtrip(&p, x, N);
  for (int i = 0; i < N; i++) CHECK(y[i] == x[i]);
  g_free(y);
  g_free(x);
}
END_TEST

/* ---- sparsifiers ---- */

typedef struct {
  float mag;
  uint32_t idx;
} Ranked;

static int by_rank(const void *a, const void *b) {
  const Ranked *x = a, *y = b;
  if (x->mag != y->mag) return x->mag > y->mag ? -1 : 1;
  return x->idx < y->idx ? -1 : 1;
}

static int by_index(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The k largest |x| with ties to the lower index, by sorting. */
static uint32_t *topk_reference(const float *x, size_t n, size_t k) {
  Ranked *r = g_new(Ranked, n);
  for (size_t i = 0; i < n; i++) r[i] = (Ranked){fabsf(x[i]), (uint32_t)i};
  qsort(r, n, sizeof *r, by_rank);
  uint32_t *idx = g_new(uint32_t, k);
  for (size_t i = 0; i < k; i++) idx[i] = r[i].idx;
  qsort(idx, k, sizeof *idx, by_index);
  g_free(r);
  return idx;
}

static void check_topk(const float *x, size_t n, size_t k, CsTopkPath path) {
  uint32_t *want = topk_reference(x, n, k);
  uint32_t *idx = g_new(uint32_t, k);
  float *val = g_new(float, k);
  CsTopkScratch s = {0};
  size_t bad;
  CHECK(cs_kern_topk(x, n, k, &s, idx, val, &bad, path));
  for (size_t i = 0; i < k; i++) {
    CHECK_MSG(idx[i] == want[i], "n=%zu k=%zu path=%d: [%zu] %u != %u", n, k, path, i, idx[i],
                  want[i]);
    CHECK(f_bits(val[i]) == f_bits(x[idx[i]]));
  }
  cs_topk_scratch_clear(&s);
  g_free(want), g_free(idx), g_free(val);
}

START_TEST(test_topk_exact) {
  size_t n = 100003;
  /* many ties: 41 magnitudes, both signs */
  float *x = g_new(float, n);
  CsRng r;
  cs_rng_init(&r, 21, 0);
  for (size_t i = 0; i < n; i++) x[i] = (float)((int)cs_rng_below(&r, 81) - 40) * 0.25f;
  float *g = g_new(float, n); /* gradient-like: normal, few ties */
  for (size_t i = 0; i < n; i++) g[i] = (float)cs_rng_normal(&r, 0.0, 1e-3);
  g[5] = INFINITY, g[6] = -INFINITY; /* infinities are the largest magnitudes */
  const size_t ks[] = {1, 2, 17, 1001, 50000, n - 1, n};
  const CsTopkPath paths[] = {CS_TOPK_AUTO, CS_TOPK_FORCE_SAMPLE, CS_TOPK_FORCE_EXACT};
  for (size_t a = 0; a < G_N_ELEMENTS(ks); a++)
    for (size_t b = 0; b < G_N_ELEMENTS(paths); b++) {
      check_topk(x, n, ks[a], paths[b]);
      check_topk(g, n, ks[a], paths[b]);
    }
  /* all equal: every element ties, the first k win */
  for (size_t i = 0; i < n; i++) x[i] = -1.5f;
  check_topk(x, n, 1000, CS_TOPK_FORCE_SAMPLE);
  /* a sample that misleads: the strided sample positions hold the large
   * values, so its threshold is too high and the exact path takes over */
  for (size_t i = 0; i < n; i++) x[i] = (float)(i % 1000) * 1e-3f;
  for (size_t j = 0; j < 8192; j++) x[(uint64_t)j * n / 8192] = 5.0f + (float)j;
  check_topk(x, n, 9000, CS_TOPK_FORCE_SAMPLE);
  check_topk(x, n, 100, CS_TOPK_FORCE_SAMPLE);
  g_free(x), g_free(g);
}
END_TEST

START_TEST(test_topk_payload) {
  size_t n = 5000;
  float *x = random_floats(n, 31, -1.0, 1.0);
  CsCodecParams p = params(CS_CODEC_TOPK);
  p.ratio = 0.02; /* k = 100 */
  float *y = roundtrip(&p, x, n);
  uint32_t *want = topk_reference(x, n, 100);
  size_t kept = 0;
  for (size_t i = 0, j = 0; i < n; i++) {
    bool in = j < 100 && want[j] == i;
    if (in) j++;
    CHECK(y[i] == (in ? x[i] : 0.0f));
    kept += y[i] != 0.0f;
  }
  ck_assert_uint_eq(kept, 100);
  /* fp16 values: the kept values rounded to half */
  p.dtype = CS_DTYPE_FP16;
  float *z = roundtrip(&p, x, n);
  for (size_t j = 0; j < 100; j++)
    CHECK(z[want[j]] == cs_kern_f32_from_f16(cs_kern_f16_from_f32(x[want[j]])));
  g_free(x), g_free(y), g_free(z), g_free(want);
}
END_TEST

START_TEST(test_randk_shared) {
  /* Workers 0 and 5 with the same seed and round keep the same indices;
   * one per stratum of n/k; another round picks others. */
  size_t n = 1000, la, lb, lc;
  float *x = g_new(float, n), *y = g_new(float, n);
  for (size_t i = 0; i < n; i++) x[i] = 1.0f + (float)i, y[i] = -0.5f * (float)i;
  CsCodecParams p = params(CS_CODEC_RANDK);
  p.ratio = 0.05; /* k = 50, strata of 20 */
  void *a = encode(&p, 0, 3, x, n, &la), *b = encode(&p, 5, 3, y, n, &lb);
  void *c = encode(&p, 0, 4, x, n, &lc);
  float *da = g_new(float, n), *db = g_new(float, n), *dc = g_new(float, n);
  CHECK(cs_codec_decode(a, la, da, n, NULL));
  CHECK(cs_codec_decode(b, lb, db, n, NULL));
  CHECK(cs_codec_decode(c, lc, dc, n, NULL));
  size_t kept = 0, differ = 0;
  for (size_t i = 0; i < n; i++) {
    CHECK(i == 0 || (da[i] != 0.0f) == (db[i] != 0.0f)); /* y[0] = 0 */
    if (da[i] != 0.0f) {
      CHECK(da[i] == x[i] && db[i] == y[i]);
      kept++;
    }
    differ += (da[i] != 0.0f) != (dc[i] != 0.0f);
  }
  ck_assert_uint_eq(kept, 50);
  ck_assert_uint_gt(differ, 0);
  for (size_t s = 0; s < 50; s++) {
    size_t in = 0;
    for (size_t i = 20 * s; i < 20 * (s + 1); i++) in += da[i] != 0.0f;
    ck_assert_uint_eq(in, 1);
  }
  /* summable in place: the reduce adds the values */
  g_autoptr(CsCodec) codec = cs_codec_new(&p, 0, NULL);
  void *sum = g_aligned_alloc(1, la, 8);
  size_t ls;
  CHECK(cs_codec_reduce(codec, 3, a, la, b, lb, sum, la, &ls, NULL));
  float *ds = g_new(float, n);
  CHECK(cs_codec_decode(sum, ls, ds, n, NULL));
  for (size_t i = 0; i < n; i++) CHECK(ds[i] == da[i] + db[i]);
  /* another round's payload does not add */
  g_autoptr(GError) error = NULL;
  CHECK(!cs_codec_reduce(codec, 3, a, la, c, lc, sum, la, &ls, &error));
  CHECK(g_error_matches(error, CS_CODEC_ERROR, CS_CODEC_ERROR_PAYLOAD));
  g_aligned_free(a), g_aligned_free(b), g_aligned_free(c), g_aligned_free(sum);
  g_free(x), g_free(y), g_free(da), g_free(db), g_free(dc), g_free(ds);
}
END_TEST

/* ---- aggregation ---- */

START_TEST(test_uniform_reduce) {
  /* decode-add-encode: the result is within half a step (of the sum's
   * buckets) of decode(a) + decode(b). */
  size_t n = 3000, la, lb, lo;
  float *x = random_floats(n, 1, -1, 1), *y = random_floats(n, 2, -2, 0.5);
  CsCodecParams p = params(CS_CODEC_UNIFORM);
  p.bucket = 1000;
  void *a = encode(&p, 0, 0, x, n, &la), *b = encode(&p, 1, 0, y, n, &lb);
  float *da = g_new(float, n), *sum = g_new(float, n);
  CHECK(cs_codec_decode(a, la, da, n, NULL));
  CHECK(cs_codec_decode(b, lb, sum, n, NULL));
  cs_codec_add(sum, da, n);
  g_autoptr(CsCodec) c = cs_codec_new(&p, 0, NULL);
  void *out = g_aligned_alloc(1, la, 8);
  CHECK(cs_codec_reduce(c, 0, a, la, b, lb, out, la, &lo, NULL));
  float *r = g_new(float, n);
  CHECK(cs_codec_decode(out, lo, r, n, NULL));
  for (size_t b0 = 0; b0 < n; b0 += 1000) {
    float mn = sum[b0], mx = sum[b0];
    for (size_t i = b0; i < b0 + 1000; i++) mn = MIN(mn, sum[i]), mx = MAX(mx, sum[i]);
    double step = ((double)mx - mn) / 255;
    for (size_t i = b0; i < b0 + 1000; i++)
      CHECK(fabs((double)r[i] - sum[i]) <= step * 0.51 + 1e-6);
  }
  /* decode_add adds */
  memcpy(r, sum, n * sizeof *r);
  CHECK(cs_codec_decode_add(a, la, r, n, NULL));
  for (size_t i = 0; i < n; i++) CHECK(r[i] == sum[i] + da[i]);
  /* gather-only methods refuse to reduce */
  CsCodecParams pt = params(CS_CODEC_TOPK);
  g_autoptr(CsCodec) ct = cs_codec_new(&pt, 0, NULL);
  g_autoptr(GError) error = NULL;
  CHECK(!cs_codec_reduce(ct, 0, a, la, b, lb, out, la, &lo, &error));
  CHECK(g_error_matches(error, CS_CODEC_ERROR, CS_CODEC_ERROR_COLLECTIVE));
  g_aligned_free(a), g_aligned_free(b), g_aligned_free(out);
  g_free(x), g_free(y), g_free(da), g_free(sum), g_free(r);
}
END_TEST

START_TEST(test_sparse_merge) {
  /* a keeps {1:5, 3:-4} of x, b keeps {3:2, 6:7} of y: the merge is
   * {1:5, 3:-2, 6:7}, k = 3 */
  float x[8] = {0, 5, 0, -4, 0, 0, 0, 0}, y[8] = {0, 0, 0, 2, 0, 0, 7, 0};
  CsCodecParams p = params(CS_CODEC_TOPK);
  p.ratio = 0.25; /* k = 2 of 8 */
  size_t la, lb, lo;
  void *a = encode(&p, 0, 0, x, 8, &la), *b = encode(&p, 1, 0, y, 8, &lb);
  void *out = g_aligned_alloc(1, la + lb, 8);
  CHECK(cs_codec_sparse_merge(a, la, b, lb, out, la + lb, &lo, NULL));
  CsCodecPayloadInfo info;
  CHECK(cs_codec_payload_info(out, lo, &info, NULL));
  ck_assert_uint_eq(info.k, 3);
  ck_assert_uint_eq(info.wire_bits, 3 * (32 + 32));
  float r[8];
  CHECK(cs_codec_decode(out, lo, r, 8, NULL));
  const float want[8] = {0, 5, 0, -2, 0, 0, 7, 0};
  for (int i = 0; i < 8; i++) CHECK(r[i] == want[i]);
  /* too small an output is an error, not an overflow */
  g_autoptr(GError) error = NULL;
  CHECK(!cs_codec_sparse_merge(a, la, b, lb, out, 64, &lo, &error));
  g_aligned_free(a), g_aligned_free(b), g_aligned_free(out);
}
END_TEST

START_TEST(test_sign_vote) {
  /* Three voters over 8 elements (one bucket); voter scales mean|x| = 1, 2,
   * 3, so the vote's scale is 2.  Majorities: element 0: + + + -> +;
   * 1: + - - -> -; 2: - - + -> -; 3: - + + -> +; 4..7 follow voter 0
   * when the others split. */
  float v[3][8] = {
      {1, 1, -1, -1, 1, -1, 1, -1},
      {2, -2, -2, 2, 2, -2, -2, 2},
      {3, -3, 3, 3, -3, 3, 3, -3},
  };
  const float want[8] = {2, -2, -2, 2, 2, -2, 2, -2};
  CsCodecParams p = params(CS_CODEC_SIGN);
  size_t lens[3];
  void *pl[3];
  for (int w = 0; w < 3; w++) pl[w] = encode(&p, (uint64_t)w, 0, v[w], 8, &lens[w]);
  void *out = g_aligned_alloc(1, lens[0], 8);
  size_t lo;
  CHECK(cs_codec_sign_vote((const void *const *)pl, lens, 3, out, lens[0], &lo, NULL));
  float r[8];
  CHECK(cs_codec_decode(out, lo, r, 8, NULL));
  for (int i = 0; i < 8; i++) CHECK_MSG(r[i] == want[i], "%d: %g", i, r[i]);
  /* two voters that disagree everywhere: every tie votes +, scale 1.5 */
  CHECK(cs_codec_sign_vote((const void *const *)pl, lens, 2, out, lens[0], &lo, NULL));
  CHECK(cs_codec_decode(out, lo, r, 8, NULL));
  const float tie[8] = {1.5, 1.5, -1.5, 1.5, 1.5, -1.5, 1.5, 1.5};
  for (int i = 0; i < 8; i++) CHECK_MSG(r[i] == tie[i], "%d: %g", i, r[i]);
  for (int w = 0; w < 3; w++) g_aligned_free(pl[w]);
  g_aligned_free(out);
}
END_TEST

/* ---- error feedback ---- */

static void check_error_feedback(CsCodecParams p) {
  /* sum_t decode(encode(x_t + e_t)) + e_T = sum_t x_t: nothing is lost,
   * only delayed (to float rounding: a few ulp of the running sums, which
   * stay below T = 20, ulp(20) = 2e-6, times T steps). */
  enum { N = 2000, T = 20 };
  p.error_feedback = true;
  g_autoptr(CsCodec) c = cs_codec_new(&p, 0, NULL);
  size_t cap = cs_codec_payload_size(&p, N), len;
  void *buf = g_aligned_alloc(1, cap, 8);
  double in[N] = {0}, out[N] = {0}, mag = 0.0;
  float y[N];
  for (int t = 0; t < T; t++) {
    float *x = random_floats(N, 100 + (uint64_t)t, -1.0, 1.0);
    CHECK(cs_codec_encode(c, (uint64_t)t, x, N, buf, cap, &len, NULL));
    CHECK(cs_codec_decode(buf, len, y, N, NULL));
    for (int i = 0; i < N; i++) in[i] += x[i], out[i] += y[i], mag += fabs(x[i]);
    g_free(x);
  }
  size_t rn;
  const float *e = cs_codec_residual(c, &rn);
  ck_assert_uint_eq(rn, N);
  double worst = 0.0;
  for (int i = 0; i < N; i++) worst = MAX(worst, fabs(out[i] + e[i] - in[i]));
  /* each step adds at most ~2 ulp of values below 2T: < 1e-5 */
  CHECK_MSG(worst < 1e-4, "%s: worst %g", cs_codec_method_name(p.method), worst);
  g_aligned_free(buf);
}

START_TEST(test_error_feedback) {
  CsCodecParams p = params(CS_CODEC_TOPK);
  p.ratio = 0.05;
  check_error_feedback(p);
  p = params(CS_CODEC_UNIFORM);
  p.bits = 2;
  check_error_feedback(p);
  check_error_feedback(params(CS_CODEC_SIGN));
  check_error_feedback(params(CS_CODEC_STOCHASTIC));
  check_error_feedback(params(CS_CODEC_FP16));
  /* a residual has one length */
  p = params(CS_CODEC_SIGN);
  p.error_feedback = true;
  g_autoptr(CsCodec) c = cs_codec_new(&p, 0, NULL);
  float x[16] = {1};
  char buf[512] __attribute__((aligned(8)));
  size_t len;
  CHECK(cs_codec_encode(c, 0, x, 16, buf, sizeof buf, &len, NULL));
  g_autoptr(GError) error = NULL;
  CHECK(!cs_codec_encode(c, 1, x, 8, buf, sizeof buf, &len, &error));
  CHECK(strstr(error->message, "residual has 16 elements, not 8") != NULL);
}
END_TEST

/* A codec that let go of its scratch encodes and reduces as one that
 * kept it: the same bytes, round after round, its residual (error
 * feedback) kept across the release. */
START_TEST(test_release_scratch) {
  const CsCodecMethod ms[] = {CS_CODEC_TOPK, CS_CODEC_UNIFORM, CS_CODEC_STOCHASTIC, CS_CODEC_FP16};
  size_t n = 5000;
  float *x = random_floats(n, 3, -1, 1), *y = random_floats(n, 4, -1, 1);
  for (size_t i = 0; i < G_N_ELEMENTS(ms); i++) {
    CsCodecParams p = params(ms[i]);
    p.ratio = 0.05;
    p.error_feedback = true;
    g_autoptr(CsCodec) a = cs_codec_new(&p, 7, NULL);
    g_autoptr(CsCodec) b = cs_codec_new(&p, 7, NULL);
    g_autoptr(CsCodec) c = cs_codec_new(&p, 8, NULL); /* another worker's payload */
    size_t cap = cs_codec_payload_size(&p, n) * 2 + 64;
    uint8_t *pa = g_malloc(cap), *pb = g_malloc(cap), *py = g_malloc(cap), *ra = g_malloc(cap), *rb = g_malloc(cap);
    for (uint64_t round = 0; round < 3; round++) {
      size_t la, lb, ly, lra, lrb;
      CHECK(cs_codec_encode(a, round, x, n, pa, cap, &la, NULL));
      cs_codec_release_scratch(a);
      CHECK(cs_codec_encode(b, round, x, n, pb, cap, &lb, NULL));
      CHECK(la == lb && memcmp(pa, pb, la) == 0);
      if (!cs_codec_method_summable(ms[i])) continue;
      CHECK(cs_codec_encode(c, round, y, n, py, cap, &ly, NULL));
      CHECK(cs_codec_reduce(a, round, pa, la, py, ly, ra, cap, &lra, NULL));
      cs_codec_release_scratch(a);
      CHECK(cs_codec_reduce(b, round, pb, lb, py, ly, rb, cap, &lrb, NULL));
      CHECK(lra == lrb && memcmp(ra, rb, lra) == 0);
    }
    g_free(pa), g_free(pb), g_free(py), g_free(ra), g_free(rb);
  }
  g_free(x);
  g_free(y);
}
END_TEST

/* ---- non-finite input ---- */

START_TEST(test_nonfinite) {
  size_t n = 3000;
  float *x = random_floats(n, 8, -1, 1);
  const CsCodecMethod refuse[] = {CS_CODEC_UNIFORM, CS_CODEC_STOCHASTIC, CS_CODEC_SIGN,
                                  CS_CODEC_TERNGRAD};
  const float bad[] = {NAN, INFINITY, -INFINITY};
  for (size_t a = 0; a < G_N_ELEMENTS(refuse); a++)
    for (size_t b = 0; b < G_N_ELEMENTS(bad); b++) {
      x[2047] = bad[b];
      CsCodecParams p = params(refuse[a]);
      g_autoptr(CsCodec) c = cs_codec_new(&p, 0, NULL);
      size_t cap = cs_codec_payload_size(&p, n), len;
      void *buf = g_aligned_alloc(1, cap, 8);
      g_autoptr(GError) error = NULL;
      CHECK(!cs_codec_encode(c, 0, x, n, buf, cap, &len, &error));
      CHECK(g_error_matches(error, CS_CODEC_ERROR, CS_CODEC_ERROR_NONFINITE));
      CHECK_MSG(strstr(error->message, "cannot encode element 2047, which is") != NULL, "%s",
                    error->message);
      g_aligned_free(buf);
    }
  /* fp16, bf16, none, randk carry them as IEEE does */
  x[2047] = NAN, x[5] = INFINITY, x[6] = -INFINITY;
  const CsCodecMethod carry[] = {CS_CODEC_NONE, CS_CODEC_FP16, CS_CODEC_BF16};
  for (size_t a = 0; a < G_N_ELEMENTS(carry); a++) {
    CsCodecParams p = params(carry[a]);
    float *y = roundtrip(&p, x, n);
    CHECK(isnan(y[2047]) && y[5] == INFINITY && y[6] == -INFINITY);
    g_free(y);
  }
  CsCodecParams p = params(CS_CODEC_RANDK);
  p.ratio = 1.0;
  float *y = roundtrip(&p, x, n);
  CHECK(isnan(y[2047]) && y[5] == INFINITY);
  g_free(y);
  /* topk keeps infinities (the largest magnitudes) and refuses NaN */
  x[2047] = 0.5f;
  p = params(CS_CODEC_TOPK);
  y = roundtrip(&p, x, n);
  CHECK(y[5] == INFINITY && y[6] == -INFINITY);
  g_free(y);
  x[2047] = NAN;
  {
    g_autoptr(CsCodec) c = cs_codec_new(&p, 0, NULL);
    size_t cap = cs_codec_payload_size(&p, n), len;
    void *buf = g_aligned_alloc(1, cap, 8);
    g_autoptr(GError) error = NULL;
    CHECK(!cs_codec_encode(c, 0, x, n, buf, cap, &len, &error));
    ck_assert_str_eq(error->message,
                     "topk cannot encode element 2047, which is NaN: NaN has no magnitude to rank");
    g_aligned_free(buf);
  }
  /* with error feedback even fp16 refuses, and the residual is kept */
  p = params(CS_CODEC_FP16);
  p.error_feedback = true;
  g_autoptr(CsCodec) c = cs_codec_new(&p, 0, NULL);
  float *ok = random_floats(n, 12, -1, 1);
  size_t cap = cs_codec_payload_size(&p, n), len;
  void *buf = g_aligned_alloc(1, cap, 8);
  CHECK(cs_codec_encode(c, 0, ok, n, buf, cap, &len, NULL));
  float *before = g_memdup2(cs_codec_residual(c, NULL), n * sizeof(float));
  g_autoptr(GError) error = NULL;
  CHECK(!cs_codec_encode(c, 1, x, n, buf, cap, &len, &error));
  CHECK(g_error_matches(error, CS_CODEC_ERROR, CS_CODEC_ERROR_NONFINITE));
  ck_assert_int_eq(memcmp(before, cs_codec_residual(c, NULL), n * sizeof(float)), 0);
  /* finite values whose span overflows float still encode (the double
   * path): -3e38 and 3e38 in one bucket, 1 bit */
  float big[4] = {-3e38f, 3e38f, 1e38f, -1e38f};
  p = params(CS_CODEC_UNIFORM);
  p.bits = 1;
  float *yb = roundtrip(&p, big, 4);
  CHECK(yb[0] == -3e38f && yb[1] == 3e38f && yb[2] == 3e38f && yb[3] == -3e38f);
  g_free(yb);
  p = params(CS_CODEC_STOCHASTIC);
  big[0] = FLT_MAX;
  yb = roundtrip(&p, big, 4);
  for (int i = 0; i < 4; i++) CHECK(isfinite(yb[i]));
  g_free(yb);
  g_aligned_free(buf);
  g_free(x), g_free(ok), g_free(before);
}
END_TEST

/* ---- malformed payloads and arguments ---- */

START_TEST(test_bad_payloads) {
  size_t n = 100, len;
  float *x = random_floats(n, 2, -1, 1), y[100];
  CsCodecParams p = params(CS_CODEC_TOPK);
  p.ratio = 0.1;
  uint8_t *buf = encode(&p, 0, 0, x, n, &len);
  g_autoptr(GError) error = NULL;
  /* wrong length, wrong n, truncated, not aligned */
  CHECK(!cs_codec_decode(buf, len - 1, y, n, &error));
  g_clear_error(&error);
  CHECK(!cs_codec_decode(buf, len, y, n - 1, &error));
  g_clear_error(&error);
  CHECK(!cs_codec_decode(buf, 10, y, n, &error));
  g_clear_error(&error);
  CHECK(!cs_codec_decode(buf + 4, len - 4, y, n, &error));
  ck_assert_str_eq(error->message, "codec payload: buffer is not 8-byte aligned");
  g_clear_error(&error);
  /* indices out of order or range */
  uint32_t *idx = (uint32_t *)(void *)(buf + 64 + 40);
  uint32_t keep = idx[3];
  idx[3] = idx[2];
  CHECK(!cs_codec_decode(buf, len, y, n, &error));
  CHECK(g_error_matches(error, CS_CODEC_ERROR, CS_CODEC_ERROR_PAYLOAD));
  g_clear_error(&error);
  idx[3] = keep;
  idx[9] = 100000;
  CHECK(!cs_codec_decode(buf, len, y, n, &error));
  g_clear_error(&error);
  /* every single-byte corruption of the header is refused or decodes
   * without touching memory it should not (ASan watches) */
  uint8_t *copy = g_aligned_alloc(1, len, 8);
  for (size_t i = 0; i < 64; i++)
    for (int v = 0; v < 256; v += 51) {
      memcpy(copy, buf, len);
      copy[i] = (uint8_t)v;
      float *out = g_new(float, n);
      (void)cs_codec_decode(copy, len, out, n, NULL);
      g_free(out);
    }
  /* not a payload at all */
  memset(copy, 0, len);
  CHECK(!cs_codec_decode(copy, len, y, n, &error));
  ck_assert_str_eq(error->message, "codec payload: not a commsim codec payload");
  g_clear_error(&error);
  /* an encode into too small a buffer, or with no input */
  g_autoptr(CsCodec) c = cs_codec_new(&p, 0, NULL);
  CHECK(!cs_codec_encode(c, 0, x, n, copy, 64, &len, &error));
  g_clear_error(&error);
  CHECK(!cs_codec_encode(c, 0, NULL, n, copy, 4096, &len, &error));
  g_aligned_free(buf), g_aligned_free(copy);
  g_free(x);
}
END_TEST

START_TEST(test_empty_and_tiny) {
  /* n = 0 and n = 1 for every method */
  for (int m = 0; m < CS_CODEC_N_METHODS; m++) {
    CsCodecParams p = params((CsCodecMethod)m);
    size_t len;
    float one = 0.75f;
    void *buf = encode(&p, 0, 0, &one, 1, &len);
    float y = 0;
    CHECK(cs_codec_decode(buf, len, &y, 1, NULL));
    CHECK_MSG(m == CS_CODEC_STOCHASTIC || m == CS_CODEC_TERNGRAD || y == 0.75f, "%s: %g",
                  cs_codec_method_name((CsCodecMethod)m), y);
    g_aligned_free(buf);
    buf = encode(&p, 0, 0, NULL, 0, &len);
    ck_assert_uint_eq(len, 64);
    CHECK(cs_codec_decode(buf, len, NULL, 0, NULL));
    g_aligned_free(buf);
  }
}
END_TEST

/* ---- the command ---- */

static int run_commsim(const char *args, char **out, char **err) {
  const char *dir = g_getenv("top_builddir");
  g_autofree char *cmd =
      g_strdup_printf("%s/sim/commsim %s", dir ? dir : ".", args);
  int status = 0;
  g_autoptr(GError) error = NULL;
  CHECK_MSG(g_spawn_command_line_sync(cmd, out, err, &status, &error), "%s",
                error ? error->message : "");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(test_command) {
  g_autofree char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim("codecs --elements 20K --repeat 1", &out, &err), 0);
  for (int m = 0; m < CS_CODEC_N_METHODS; m++) {
    g_autofree char *row = g_strdup_printf("\n%-10s ", cs_codec_method_name((CsCodecMethod)m));
    CHECK_MSG(strstr(out, row) != NULL, "no row for %s in:\n%s",
                  cs_codec_method_name((CsCodecMethod)m), out);
  }
  CHECK(strstr(out, "\nmemcpy ") != NULL);
  g_free(out), g_free(err);
  /* CSV on stdout: a header and memcpy + 9 rows */
  ck_assert_int_eq(run_commsim("codecs -n 5000 -r 1 --distribution laplace --csv -", &out, &err), 0);
  g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
  ck_assert_uint_eq(g_strv_length(lines), 1 + 1 + CS_CODEC_N_METHODS + 1); /* trailing "" */
  CHECK(g_str_has_prefix(lines[0], "method,params,bits_per_element,compression_ratio,"));
  /* n = 5000, m = 512: (8 * 5000 + 64 * 10) / 5000 = 8.128 bits, 32 / 8.128 = 3.937 */
  CHECK(g_str_has_prefix(lines[5], "uniform,b=8 m=512,8.128,3.937"));
  g_free(out), g_free(err);
  /* bad usage: exit 2 and a message */
  ck_assert_int_eq(run_commsim("codecs --distribution cauchy", &out, &err), 2);
  ck_assert_str_eq(err, "commsim codecs: --distribution: 'cauchy' is not a distribution: use "
                        "normal or laplace (see 'commsim codecs --help')\n");
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim("codecs --elements 10Gbps", &out, &err), 2);
  CHECK(strstr(err, "--elements:") != NULL);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim("codecs --methods none,qsgd", &out, &err), 2);
  CHECK(strstr(err, "'qsgd' is not a compression method") != NULL);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim("codecs --bits 20 --methods uniform", &out, &err), 2);
  g_free(out), g_free(err);
  /* an empty method list (it ran memcpy alone), a scale whose test
   * gradient overflows float (a codec's refusal, exit 1, it was) */
  ck_assert_int_eq(run_commsim("codecs --methods ''", &out, &err), 2);
  CHECK(strstr(err, "--methods: empty") != NULL);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim("codecs -n 4096 -r 1 --scale 1e39 -m sign", &out, &err), 2);
  CHECK(strstr(err, "--scale: 1e+39 makes the test gradient overflow float") != NULL);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim("codecs --nonsense", &out, &err), 2);
}
END_TEST

static Suite *codec_suite(void) {
  Suite *s = suite_create("codec");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_wire_bits_table);
  tcase_add_test(tc, test_wire_bits_formula);
  tcase_add_test(tc, test_k);
  tcase_add_test(tc, test_saturation);
  tcase_add_test(tc, test_names);
  tcase_add_test(tc, test_method_table);
  tcase_add_test(tc, test_params_validate);
  tcase_add_test(tc, test_collectives);
  tcase_add_test(tc, test_cost);
  tcase_add_test(tc, test_fp16_patterns);
  tcase_add_test(tc, test_fp16_portable_matches_hardware);
  tcase_add_test(tc, test_bf16_patterns);
  tcase_add_test(tc, test_half_codecs_roundtrip);
  tcase_add_test(tc, test_pack_roundtrip);
  tcase_add_test(tc, test_uniform_half_step);
  tcase_add_test(tc, test_uniform_error_theory);
  tcase_add_test(tc, test_stochastic_unbiased);
  tcase_add_test(tc, test_stochastic_streams);
  tcase_add_test(tc, test_sign_and_terngrad);
  tcase_add_test(tc, test_sign_huge_values);
  tcase_add_test(tc, test_topk_exact);
  tcase_add_test(tc, test_topk_payload);
  tcase_add_test(tc, test_randk_shared);
  tcase_add_test(tc, test_uniform_reduce);
  tcase_add_test(tc, test_sparse_merge);
  tcase_add_test(tc, test_sign_vote);
  tcase_add_test(tc, test_error_feedback);
  tcase_add_test(tc, test_release_scratch);
  tcase_add_test(tc, test_nonfinite);
  tcase_add_test(tc, test_bad_payloads);
  tcase_add_test(tc, test_empty_and_tiny);
  tcase_add_test(tc, test_command);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(codec_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
