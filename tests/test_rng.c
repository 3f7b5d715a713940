/* test_rng.c - reproducibility, stream independence and the moments of
 * every distribution, each against its formula within 5 standard errors. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>

#include "commsim/rng.h"

#define N 1000000

START_TEST(test_reference_vector) {
  /* xoshiro256** from state {1, 2, 3, 4}: the reference implementation's
   * first four outputs. */
  CsRng r = {{1, 2, 3, 4}};
  ck_assert_uint_eq(cs_rng_next(&r), 11520ULL);
  ck_assert_uint_eq(cs_rng_next(&r), 0ULL);
  ck_assert_uint_eq(cs_rng_next(&r), 1509978240ULL);
  ck_assert_uint_eq(cs_rng_next(&r), 1215971899390074240ULL);
}
END_TEST

START_TEST(test_reproducible) {
  CsRng a, b;
  cs_rng_init(&a, 12345, 7);
  cs_rng_init(&b, 12345, 7);
  for (int i = 0; i < 1000; i++) ck_assert_uint_eq(cs_rng_next(&a), cs_rng_next(&b));
  /* a different stream or seed gives a different sequence */
  CsRng c, d;
  cs_rng_init(&a, 12345, 7);
  cs_rng_init(&c, 12345, 8);
  cs_rng_init(&d, 12346, 7);
  int same_c = 0, same_d = 0;
  for (int i = 0; i < 1000; i++) {
    uint64_t x = cs_rng_next(&a);
    same_c += x == cs_rng_next(&c);
    same_d += x == cs_rng_next(&d);
  }
  ck_assert_int_eq(same_c, 0);
  ck_assert_int_eq(same_d, 0);
}
END_TEST

START_TEST(test_stream_ids) {
  ck_assert_uint_eq(cs_rng_stream_id("link", 3, 4), cs_rng_stream_id("link", 3, 4));
  ck_assert_uint_ne(cs_rng_stream_id("link", 3, 4), cs_rng_stream_id("link", 4, 3));
  ck_assert_uint_ne(cs_rng_stream_id("link", 3, 4), cs_rng_stream_id("bg", 3, 4));
}
END_TEST

/* Keys (src << 32 | dst) that differ in src alone, or in dst alone, hash
 * apart: 4,096 of each give 4,096 hashes, and in 4,093 buckets (a prime,
 * as a GHashTable's modulus) at most 9 share one (balls into as many
 * bins: the fullest holds about 7).  GLib 2.74's g_int64_hash gives the
 * 4,096 of one dst a single hash. */
START_TEST(test_int64_hash) {
  for (int side = 0; side < 2; side++) {
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    uint32_t *bucket = g_new0(uint32_t, 4093), most = 0;
    for (int64_t i = 0; i < 4096; i++) {
      int64_t key = side ? (i << 32 | 7) : (7LL << 32 | i), same = key;
      unsigned h = cs_int64_hash(&key);
      ck_assert_uint_eq(h, cs_int64_hash(&same));
      g_hash_table_add(seen, GUINT_TO_POINTER(h));
      most = MAX(most, ++bucket[h % 4093]);
    }
    ck_assert_uint_eq(g_hash_table_size(seen), 4096);
    ck_assert_uint_le(most, 9);
    g_free(bucket);
    g_hash_table_destroy(seen);
  }
}
END_TEST

START_TEST(test_streams_uncorrelated) {
  /* Pearson correlation of paired uniforms from adjacent streams (and from
   * seeds whose xor with the stream coincides): standard error 1/sqrt(n). */
  const uint64_t pairs[][4] = {{1, 0, 1, 1}, {1, 1, 0, 0}, {5, 2, 7, 0}};
  for (size_t k = 0; k < 3; k++) {
    CsRng a, b;
    cs_rng_init(&a, pairs[k][0], pairs[k][1]);
    cs_rng_init(&b, pairs[k][2], pairs[k][3]);
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    for (int i = 0; i < N; i++) {
      double x = cs_rng_uniform(&a), y = cs_rng_uniform(&b);
      sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
    }
    double cov = sxy / N - (sx / N) * (sy / N);
    double r = cov / sqrt((sxx / N - (sx / N) * (sx / N)) * (syy / N - (sy / N) * (sy / N)));
    ck_assert_double_lt(fabs(r), 5.0 / sqrt(N));
  }
}
END_TEST

/* Mean and variance of n draws against the formula: the mean within 5
 * sigma/sqrt(n); the variance within 5 sqrt((mu4 - sigma^4) / n). */
typedef double (*Draw)(CsRng *r, const double *p);

static void check_moments(Draw draw, const double *p, double mean, double var, double mu4,
                          uint64_t stream) {
  CsRng r;
  cs_rng_init(&r, 2024, stream);
  double s = 0, ss = 0;
  for (int i = 0; i < N; i++) {
    double x = draw(&r, p);
    s += x;
    ss += x * x;
  }
  double m = s / N, v = ss / N - m * m;
  ck_assert_double_lt(fabs(m - mean), 5.0 * sqrt(var / N));
  ck_assert_double_lt(fabs(v - var), 5.0 * sqrt((mu4 - var * var) / N));
}

static double d_uniform(CsRng *r, const double *p) { (void)p; return cs_rng_uniform(r); }
static double d_exp(CsRng *r, const double *p) { return cs_rng_exponential(r, p[0]); }
static double d_normal(CsRng *r, const double *p) { return cs_rng_normal(r, p[0], p[1]); }
static double d_bern(CsRng *r, const double *p) { return cs_rng_bernoulli(r, p[0]) ? 1.0 : 0.0; }
static double d_below(CsRng *r, const double *p) { return (double)cs_rng_below(r, (uint64_t)p[0]); }
static double d_lognormal(CsRng *r, const double *p) {
  return cs_rng_lognormal_mean_cv(r, p[0], p[1]);
}

START_TEST(test_uniform) {
  /* U(0,1): mean 1/2, variance 1/12, fourth central moment 1/80. */
  check_moments(d_uniform, NULL, 0.5, 1.0 / 12, 1.0 / 80, 1);
}
END_TEST

START_TEST(test_exponential) {
  /* Exp(mean m): variance m^2, fourth central moment 9 m^4. */
  double p[] = {3.0};
  check_moments(d_exp, p, 3.0, 9.0, 9.0 * 81.0, 2);
}
END_TEST

START_TEST(test_normal) {
  /* N(mu, s^2): fourth central moment 3 s^4. */
  double p[] = {-2.0, 1.5};
  check_moments(d_normal, p, -2.0, 2.25, 3.0 * 2.25 * 2.25, 3);
}
END_TEST

/* cs_rng_normal_fill: the moments of N(0, 1) (as test_normal), its
 * fourth moment (3) within 5 sigma (its variance 96 / n), and the mass
 * of each tail against the normal's: beyond 1 (0.158655), 2 (0.022750),
 * R = 3.4426 where the ziggurat's base strip starts (2.8816e-4) and 4
 * (3.1671e-5), each within 5 sigma of its binomial count. */
START_TEST(test_normal_fill) {
  const size_t n = 4000000;
  float *x = malloc(n * sizeof *x);
  ck_assert_ptr_nonnull(x);
  CsRng r;
  cs_rng_init(&r, 2024, 11);
  cs_rng_normal_fill(&r, x, n);
  const double at[] = {1.0, 2.0, 3.442619855899, 4.0}, mass[] = {0.158655254, 0.022750132, 2.8816e-4, 3.1671e-5};
  double s = 0, ss = 0, s4 = 0;
  double above[4] = {0}, below[4] = {0};
  for (size_t i = 0; i < n; i++) {
    double v = x[i];
    s += v, ss += v * v, s4 += v * v * v * v;
    for (int k = 0; k < 4; k++) above[k] += v > at[k], below[k] += v < -at[k];
  }
  double m = s / (double)n, var = ss / (double)n - m * m;
  ck_assert_double_lt(fabs(m), 5.0 / sqrt((double)n));
  ck_assert_double_lt(fabs(var - 1.0), 5.0 * sqrt(2.0 / (double)n));
  ck_assert_double_lt(fabs(s4 / (double)n - 3.0), 5.0 * sqrt(96.0 / (double)n));
  for (int k = 0; k < 4; k++) {
    double want = mass[k] * (double)n, sd = sqrt(want * (1 - mass[k]));
    ck_assert_msg(fabs(above[k] - want) < 5 * sd && fabs(below[k] - want) < 5 * sd, "tail beyond %g: %g and %g, want %g",
                  at[k], above[k], below[k], want);
  }
  free(x);
}
END_TEST

START_TEST(test_bernoulli) {
  /* Bernoulli(p): variance p(1-p); fourth central moment p(1-p)(1-3p(1-p)). */
  double p[] = {0.01};
  double q = 0.01 * 0.99;
  check_moments(d_bern, p, 0.01, q, q * (1 - 3 * q), 4);
}
END_TEST

START_TEST(test_below) {
  /* Discrete uniform on {0..9}: mean 4.5, variance (10^2-1)/12 = 8.25,
   * fourth central moment (n^2-1)(3n^2-7)/240 = 99*293/240. */
  double p[] = {10};
  check_moments(d_below, p, 4.5, 8.25, 99.0 * 293.0 / 240.0, 5);
  CsRng r;
  cs_rng_init(&r, 1, 1);
  for (int i = 0; i < 1000; i++) ck_assert_uint_lt(cs_rng_below(&r, 3), 3);
  ck_assert_uint_eq(cs_rng_below(&r, 1), 0);
}
END_TEST

START_TEST(test_lognormal) {
  /* Lognormal with mean m and cv c: variance (c m)^2.  With s^2 = ln(1+c^2)
   * and w = e^{s^2} = 1 + c^2, the kurtosis is w^4 + 2 w^3 + 3 w^2 - 3, so
   * the fourth central moment is m^4 (w-1)^2 (w^4 + 2 w^3 + 3 w^2 - 3). */
  double m = 50.0, c = 0.3, w = 1 + c * c;
  double p[] = {m, c};
  double mu4 = pow(m, 4) * (w - 1) * (w - 1) * (pow(w, 4) + 2 * pow(w, 3) + 3 * w * w - 3);
  check_moments(d_lognormal, p, m, (c * m) * (c * m), mu4, 6);
  CsRng r;
  cs_rng_init(&r, 1, 1);
  ck_assert_double_eq(cs_rng_lognormal_mean_cv(&r, 7.0, 0.0), 7.0);
}
END_TEST

static Suite *rng_suite(void) {
  Suite *s = suite_create("rng");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_reference_vector);
  tcase_add_test(tc, test_reproducible);
  tcase_add_test(tc, test_stream_ids);
  tcase_add_test(tc, test_int64_hash);
  tcase_add_test(tc, test_streams_uncorrelated);
  tcase_add_test(tc, test_uniform);
  tcase_add_test(tc, test_exponential);
  tcase_add_test(tc, test_normal);
  tcase_add_test(tc, test_normal_fill);
  tcase_add_test(tc, test_bernoulli);
  tcase_add_test(tc, test_below);
  tcase_add_test(tc, test_lognormal);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(rng_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
