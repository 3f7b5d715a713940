/* test_units.c - a table of good and bad quantities with the exact value
 * or the exact error expected, and round trips through formatting. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/rng.h"
#include "commsim/units.h"

typedef enum { BW, TIME, SIZE, BUF, COUNT, PROB } Kind;

typedef struct {
  Kind kind;
  const char *text;
  int64_t value;     /* expected, when error is NULL */
  const char *error; /* expected message, exactly */
  bool pkt;          /* BUF: packets expected */
} Case;

static const Case cases[] = {
    /* bandwidth */
    {BW, "10Gbps", 10000000000LL, NULL, 0},
    {BW, "2.5Gbps", 2500000000LL, NULL, 0},
    {BW, "100Mbps", 100000000LL, NULL, 0},
    {BW, "1Tbps", 1000000000000LL, NULL, 0},
    {BW, "56Kbps", 56000LL, NULL, 0},
    {BW, "1000", 1000LL, NULL, 0},      /* bare: bit/s */
    {BW, "1e9", 1000000000LL, NULL, 0}, /* exponent */
    {BW, " 25 Gbps ", 25000000000LL, NULL, 0},
    {BW, "0.001Kbps", 1LL, NULL, 0},
    {BW, "10 Gbit", 0, "'10 Gbit' is not a bandwidth: use bps, Kbps, Mbps, Gbps or Tbps", 0},
    {BW, "10gbps", 0,
     "'10gbps' is not a bandwidth: use bps, Kbps, Mbps, Gbps or Tbps (suffixes are case-sensitive: did you mean 'Gbps'?)",
     0},
    {BW, "10us", 0, "'10us' is a time, not a bandwidth: use bps, Kbps, Mbps, Gbps or Tbps", 0},
    {BW, "-1Gbps", 0, "'-1Gbps' is negative: a bandwidth must be zero or more", 0},
    {BW, "0.5bps", 0, "'0.5bps' is not a whole number of bits per second", 0},
    {BW, "10000000Tbps", 0,
     "'10000000Tbps' is too large: a bandwidth must be below 2^63 bits per second", 0},
    {BW, "", 0, "empty value: expected a bandwidth such as 10Gbps", 0},
    {BW, "fast", 0, "'fast' is not a bandwidth: expected a number with a unit such as 10Gbps", 0},
    {BW, "10 Gbps x", 0, "'10 Gbps x' is not a bandwidth: unexpected text after the unit", 0},
    /* time: bare numbers are seconds; the result is picoseconds */
    {TIME, "1us", 1000000LL, NULL, 0},
    {TIME, "1.5us", 1500000LL, NULL, 0},
    {TIME, "0.1us", 100000LL, NULL, 0}, /* exact, not 99999 */
    {TIME, "50ms", 50000000000LL, NULL, 0},
    {TIME, "2s", 2000000000000LL, NULL, 0},
    {TIME, "0.000001", 1000000LL, NULL, 0},
    {TIME, "1e-6", 1000000LL, NULL, 0},
    {TIME, "7ps", 7LL, NULL, 0},
    {TIME, "250ns", 250000LL, NULL, 0},
    {TIME, "0", 0, NULL, 0},
    {TIME, "-0", 0, NULL, 0},
    {TIME, "9223372s", 9223372000000000000LL, NULL, 0},
    {TIME, "9223373s", 0, "'9223373s' is too large: simulated time ends after 9223372s (about 106 days)", 0},
    {TIME, "0.5ps", 0, "'0.5ps' is not a whole number of picoseconds (the resolution of simulated time)", 0},
    {TIME, "-1us", 0, "'-1us' is negative: a time must be zero or more", 0},
    {TIME, "1 sec", 0, "'1 sec' is not a time: use ps, ns, us, ms or s", 0},
    {TIME, "1MS", 0,
     "'1MS' is not a time: use ps, ns, us, ms or s (suffixes are case-sensitive: did you mean 'ms'?)", 0},
    {TIME, "1KB", 0, "'1KB' is a size, not a time: use ps, ns, us, ms or s", 0},
    /* size */
    {SIZE, "1500B", 1500LL, NULL, 0},
    {SIZE, "512KB", 512000LL, NULL, 0},
    {SIZE, "100MB", 100000000LL, NULL, 0},
    {SIZE, "1GB", 1000000000LL, NULL, 0},
    {SIZE, "512KiB", 524288LL, NULL, 0},
    {SIZE, "1.5KiB", 1536LL, NULL, 0},
    {SIZE, "4GiB", 4294967296LL, NULL, 0},
    {SIZE, "58", 58LL, NULL, 0},
    {SIZE, "1.5B", 0, "'1.5B' is not a whole number of bytes", 0},
    {SIZE, "64pkt", 0, "'64pkt': packets ('pkt') measure buffers only; use B, KB, MB, GB, KiB, MiB or GiB", 0},
    {SIZE, "10Mb", 0,
     "'10Mb' is not a size: use B, KB, MB, GB, KiB, MiB or GiB (suffixes are case-sensitive: did you mean 'MB'?)",
     0},
    {SIZE, "-5B", 0, "'-5B' is negative: a size must be zero or more", 0},
    {SIZE, "10Gbps", 0, "'10Gbps' is a bandwidth, not a size: use B, KB, MB, GB, KiB, MiB or GiB", 0},
    /* buffer: a size or packets */
    {BUF, "64pkt", 64LL, NULL, 1},
    {BUF, "4096pkt", 4096LL, NULL, 1},
    {BUF, "512KB", 512000LL, NULL, 0},
    {BUF, "1.5pkt", 0, "'1.5pkt' is not a whole number of packets", 0},
    /* count */
    {COUNT, "25.6M", 25600000LL, NULL, 0},
    {COUNT, "10", 10LL, NULL, 0},
    {COUNT, "1K", 1000LL, NULL, 0},
    {COUNT, "2G", 2000000000LL, NULL, 0},
    {COUNT, "2.5", 0, "'2.5' is not a whole number", 0},
    {COUNT, "3k", 0,
     "'3k' is not a count: use K, M or G (or no suffix) (suffixes are case-sensitive: did you mean 'K'?)",
     0},
    {COUNT, "12 apples", 0, "'12 apples' is not a count: use K, M or G (or no suffix)", 0},
    {COUNT, "99999999999G", 0, "'99999999999G' is too large: a count must be below 2^63", 0},
};

static void run_case(const Case *c) {
  GError *err = NULL;
  int64_t v = -1;
  bool pkt = false, ok;
  switch (c->kind) {
  case BW: ok = cs_parse_bandwidth(c->text, &v, &err); break;
  case TIME: ok = cs_parse_time(c->text, &v, &err); break;
  case SIZE: ok = cs_parse_size(c->text, &v, &err); break;
  case BUF: ok = cs_parse_buffer(c->text, &v, &pkt, &err); break;
  case COUNT: ok = cs_parse_count(c->text, &v, &err); break;
  default: ck_abort(); return;
  }
  if (c->error) {
    ck_assert_msg(!ok, "'%s' was accepted as %" G_GINT64_FORMAT, c->text, (gint64)v);
    ck_assert_str_eq(err->message, c->error);
    g_error_free(err);
  } else {
    ck_assert_msg(ok, "'%s' refused: %s", c->text, err ? err->message : "?");
    ck_assert_int_eq(v, c->value);
    if (c->kind == BUF) ck_assert_int_eq(pkt, c->pkt);
  }
}

START_TEST(test_table) {
  ck_assert_int_ge(G_N_ELEMENTS(cases), 40);
  run_case(&cases[_i]);
}
END_TEST

START_TEST(test_probability) {
  GError *err = NULL;
  double p;
  ck_assert(cs_parse_probability("0.01", &p, NULL));
  ck_assert_double_eq(p, 0.01);
  ck_assert(cs_parse_probability("1%", &p, NULL));
  ck_assert_double_eq(p, 0.01);
  ck_assert(cs_parse_probability("0", &p, NULL));
  ck_assert_double_eq(p, 0.0);
  ck_assert(cs_parse_probability("1", &p, NULL));
  ck_assert_double_eq(p, 1.0);
  ck_assert(cs_parse_probability("100%", &p, NULL));
  ck_assert_double_eq(p, 1.0);
  ck_assert(cs_parse_probability("0.5 %", &p, NULL));
  ck_assert_double_eq(p, 0.005);
  ck_assert(!cs_parse_probability("1.5", &p, &err));
  ck_assert_str_eq(err->message, "'1.5' is not a probability: it must lie in [0, 1] (or [0%, 100%])");
  g_clear_error(&err);
  ck_assert(!cs_parse_probability("-0.1", &p, &err));
  ck_assert_str_eq(err->message, "'-0.1' is not a probability: it must lie in [0, 1] (or [0%, 100%])");
  g_clear_error(&err);
  ck_assert(!cs_parse_probability("high", &p, &err));
  ck_assert_str_eq(err->message,
                   "'high' is not a probability: use a number in [0, 1] or a percentage such as 1%");
  g_clear_error(&err);
  ck_assert(!cs_parse_probability("150%", &p, &err));
  g_clear_error(&err);
}
END_TEST

START_TEST(test_real) {
  GError *err = NULL;
  double v;
  ck_assert(cs_parse_real("0.66", &v, NULL));
  ck_assert_double_eq(v, 0.66);
  ck_assert(cs_parse_real("-2.5e3", &v, NULL));
  ck_assert_double_eq(v, -2500.0);
  ck_assert(!cs_parse_real("1e999", &v, &err));
  ck_assert_str_eq(err->message, "'1e999' is out of range");
  g_clear_error(&err);
  ck_assert(!cs_parse_real("nan", &v, &err));
  ck_assert_str_eq(err->message, "'nan' is not a number");
  g_clear_error(&err);
}
END_TEST

START_TEST(test_format) {
  char b[CS_FORMAT_LEN];
  ck_assert_str_eq(cs_format_bandwidth(10000000000LL, b), "10Gbps");
  ck_assert_str_eq(cs_format_bandwidth(2500000000LL, b), "2.5Gbps");
  ck_assert_str_eq(cs_format_bandwidth(999, b), "999bps");
  ck_assert_str_eq(cs_format_time(1500000, b), "1.5us");
  ck_assert_str_eq(cs_format_time(0, b), "0s");
  ck_assert_str_eq(cs_format_time(50 * CS_MS, b), "50ms");
  ck_assert_str_eq(cs_format_time(1234567, b), "1.234567us");
  ck_assert_str_eq(cs_format_time(3 * CS_SEC + 1, b), "3.000000000001s");
  ck_assert_str_eq(cs_format_size(1500, b), "1500B"); /* ties go to bytes */
  ck_assert_str_eq(cs_format_size(25000000, b), "25MB");
  ck_assert_str_eq(cs_format_size(1234567, b), "1234567B"); /* shorter than 1.234567MB */
  ck_assert_str_eq(cs_format_size(1234000, b), "1234KB");
  ck_assert_str_eq(cs_format_size(524288, b), "512KiB");
  ck_assert_str_eq(cs_format_size(512000, b), "512KB");
  ck_assert_str_eq(cs_format_size(58, b), "58B");
  ck_assert_str_eq(cs_format_count(25600000, b), "25.6M");
  ck_assert_str_eq(cs_format_count(7, b), "7");
}
END_TEST

START_TEST(test_round_trip) {
  /* parse(format(x)) == x for random values of every magnitude. */
  CsRng r;
  cs_rng_init(&r, 99, 0);
  char b[CS_FORMAT_LEN];
  for (int i = 0; i < 20000; i++) {
    int64_t x = (int64_t)(cs_rng_next(&r) >> (1 + cs_rng_below(&r, 63)));
    int64_t y = -1;
    ck_assert(cs_parse_bandwidth(cs_format_bandwidth(x, b), &y, NULL));
    ck_assert_int_eq(x, y);
    ck_assert(cs_parse_time(cs_format_time(x, b), &y, NULL));
    ck_assert_int_eq(x, y);
    ck_assert(cs_parse_size(cs_format_size(x, b), &y, NULL));
    ck_assert_int_eq(x, y);
    ck_assert(cs_parse_count(cs_format_count(x, b), &y, NULL));
    ck_assert_int_eq(x, y);
  }
}
END_TEST

static Suite *units_suite(void) {
  Suite *s = suite_create("units");
  TCase *tc = tcase_create("core");
  tcase_add_loop_test(tc, test_table, 0, (int)G_N_ELEMENTS(cases));
  tcase_add_test(tc, test_probability);
  tcase_add_test(tc, test_real);
  tcase_add_test(tc, test_format);
  tcase_add_test(tc, test_round_trip);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(units_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
