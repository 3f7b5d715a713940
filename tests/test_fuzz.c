/* test_fuzz.c - replay the fuzz targets' seeds and every input a fuzzer
 * found (tests/fuzz/regress/), so that a fixed crash stays fixed under the
 * normal and the sanitizer builds.  A target aborts on a failed oracle. */
#include "config.h"

#include <check.h>
#include <glib.h>

#include "fuzz/fuzz.h"
#include "testutil.h"

/* Feed every regular file of SUBDIR (under the source tree) to TARGET;
 * returns how many. */
static int replay(const char *subdir, int (*target)(const uint8_t *, size_t)) {
  g_autofree char *dir = g_build_filename(test_srcdir(), subdir, NULL);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  int n = 0;
  const char *name;
  while ((name = g_dir_read_name(d))) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) || name[0] == '.') continue;
    g_autofree char *data = NULL;
    gsize len = 0;
    ck_assert_msg(g_file_get_contents(path, &data, &len, NULL), "cannot read %s", path);
    ck_assert_int_eq(target((const uint8_t *)data, len), 0);
    n++;
  }
  return n;
}

START_TEST(scenario_seeds) {
  /* the examples and the bad-scenario corpus are the fuzzer's seeds */
  ck_assert_int_ge(replay("topologies", cs_fuzz_scenario), 14);
  ck_assert_int_ge(replay("tests/scenarios/bad", cs_fuzz_scenario), 76);
}
END_TEST

START_TEST(scenario_regressions) {
  /* inputs the fuzzer found (each fixed): the 7 committed so far at least */
  ck_assert_int_ge(replay("tests/fuzz/regress/scenario", cs_fuzz_scenario), 7);
}
END_TEST

START_TEST(units_seeds) {
  ck_assert_int_ge(replay("tests/fuzz/seeds/units", cs_fuzz_units), 17);
  replay("tests/fuzz/regress/units", cs_fuzz_units);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fuzz");
  TCase *tc = tcase_create("replay");
  tcase_add_test(tc, scenario_seeds);
  tcase_add_test(tc, scenario_regressions);
  tcase_add_test(tc, units_seeds);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
