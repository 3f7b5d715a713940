/* test_plot.c - `commsim plot` makes valid PNG and PDF files of sensible
 * size from a run folder and a sweep folder, and refuses what it cannot
 * plot.  Skipped (77) without gnuplot. */
#include "config.h"

#include "testutil.h"

#include <check.h>
#include <math.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commsim/plot.h"

static void run_ok(const char *const *args) {
  g_autofree char *out = NULL, *err = NULL;
  int rc = run_commsim(args, &out, &err);
  ck_assert_msg(rc == 0, "commsim %s failed: %s", args[0], err);
}

/* A PNG: its 8-byte signature, an IHDR of the size asked, more than 5 KB. */
static void check_png(const char *dir, const char *name) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  ck_assert_msg(g_file_get_contents(path, &data, &len, NULL), "no %s", path);
  ck_assert_msg(len > 5000, "%s is only %zu bytes", name, len);
  ck_assert_int_eq(memcmp(data, "\x89PNG\r\n\x1a\n", 8), 0);
  ck_assert_int_eq(memcmp(data + 12, "IHDR", 4), 0);
  unsigned w = ((unsigned char)data[16] << 24) | ((unsigned char)data[17] << 16) | ((unsigned char)data[18] << 8) |
               (unsigned char)data[19];
  ck_assert_uint_ge(w, 800);
}

/* A PDF: its signature and its end-of-file marker. */
static void check_pdf(const char *dir, const char *name) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  ck_assert_msg(g_file_get_contents(path, &data, &len, NULL), "no %s", path);
  ck_assert_msg(len > 1000, "%s is only %zu bytes", name, len);
  ck_assert_int_eq(memcmp(data, "%PDF-", 5), 0);
  bool eof = false; /* the trailer's end-of-file marker, in the last bytes */
  for (gsize i = len > 64 ? len - 64 : 0; i + 5 <= len && !eof; i++) eof = !memcmp(data + i, "%%EOF", 5);
  ck_assert_msg(eof, "%s has no %%%%EOF", name);
}

static void check_both(const char *dir, const char *stem) {
  g_autofree char *png = g_strdup_printf("%s.png", stem), *pdf = g_strdup_printf("%s.pdf", stem);
  check_png(dir, png);
  check_pdf(dir, pdf);
}

static const char *scenario = "topology: {type: star, workers: 4}\n"
                              "workload: {params: 300K, iterations: 3, compute: 2ms, buckets: 400KB, collective: ring}\n"
                              "sweep:\n  defaults.bandwidth: [1Gbps, 10Gbps]\n  workload.compression.method: [none, fp16]\n";

START_TEST(test_plots) {
  g_autofree char *dir = g_dir_make_tmp("commsim-plot-test-XXXXXX", NULL);
  g_autofree char *file = g_build_filename(dir, "s.yaml", NULL);
  ck_assert(g_file_set_contents(file, scenario, -1, NULL));
  g_autofree char *runs = g_build_filename(dir, "run", NULL), *sweeps = g_build_filename(dir, "sweep", NULL);
  run_ok((const char *const[]){"run", file, "-o", runs, "-q", NULL});
  run_ok((const char *const[]){"plot", runs, NULL});
  const char *run_plots[] = {"iteration", "utilization", "queues", "messages_cdf"};
  for (int i = 0; i < 4; i++) check_both(runs, run_plots[i]);
  run_ok((const char *const[]){"sweep", file, "-o", sweeps, "-q", NULL});
  run_ok((const char *const[]){"plot", sweeps, NULL});
  /* the breakdown per point; iteration and speedup against the swept
   * bandwidth, a line per method (nothing held at a first value) */
  check_both(sweeps, "iteration");
  check_both(sweeps, "iteration_vs_bandwidth");
  check_both(sweeps, "speedup_vs_bandwidth");
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A method whose collective none never rides (topk on allgather) has no
 * speedup over none: plot leaves its points out and says which (it left
 * them out without a word) */
START_TEST(test_plot_speedup_left_out) {
  g_autofree char *dir = g_dir_make_tmp("commsim-plot-test-XXXXXX", NULL);
  g_autofree char *file = g_build_filename(dir, "s.yaml", NULL);
  ck_assert(g_file_set_contents(file,
                                "topology: {type: star, workers: 4, servers: 1}\n"
                                "workload: {params: 100K, iterations: 2, compute: 1ms, collective: ring}\n"
                                "sweep:\n  defaults.bandwidth: [1Gbps, 10Gbps]\n"
                                "  workload.compression.method, workload.collective:\n"
                                "    - [none, ring]\n    - [topk, allgather]\n    - [none, ps]\n    - [fp16, ps]\n",
                                -1, NULL));
  g_autofree char *sweeps = g_build_filename(dir, "sweep", NULL);
  run_ok((const char *const[]){"sweep", file, "-o", sweeps, "-q", NULL});
  g_autofree char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"plot", sweeps, NULL}, &out, &err), 0);
  ck_assert_msg(strstr(err, "speedup_vs_*: 2 points left out") &&
                    strstr(err, "(bandwidth=1Gbps, method=topk, collective=allgather)"),
                "%s", err);
  check_both(sweeps, "speedup_vs_bandwidth"); /* fp16 on ps against none on ps */
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Folders plot refuses: not there or not commsim's (exit 2), nothing to
 * draw (exit 1); once a foreign folder exited 0 with nothing drawn. */
/* A saturated link sampled every 0.1 s, in bins of 0.79 s: each bin's
 * time-weighted mean is 1 (whole samples put in the bin of their middle
 * gave 8 x 0.1 / 0.79 = 1.0127 in some bins); an interval across bins is
 * shared by its overlaps; past the last bin counts in the last. */
START_TEST(test_plot_spread) {
  enum { B = 2 };
  double acc[B] = {0, 0}, bw = 0.79;
  for (int k = 0; k < 16; k++) cs_plot_spread(acc, B, bw, k * 0.1, fmin((k + 1) * 0.1, 1.58), 1.0);
  for (int k = 0; k < B; k++) ck_assert_double_eq_tol(acc[k] / bw, 1.0, 1e-12);
  double one[3] = {0, 0, 0};
  cs_plot_spread(one, 3, 1.0, 0.5, 2.25, 2.0); /* 0.5 in bin 0, 1 in bin 1, 0.25 in bin 2 */
  ck_assert_double_eq_tol(one[0], 1.0, 1e-12);
  ck_assert_double_eq_tol(one[1], 2.0, 1e-12);
  ck_assert_double_eq_tol(one[2], 0.5, 1e-12);
  cs_plot_spread(one, 3, 1.0, 2.5, 4.0, 1.0); /* past the end: the last bin */
  ck_assert_double_eq_tol(one[2], 2.0, 1e-12);
}
END_TEST

START_TEST(test_plot_refusals) {
  g_autofree char *dir = g_dir_make_tmp("commsim-plot-test-XXXXXX", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *missing = g_build_filename(dir, "nothing-here", NULL);
  ck_assert_int_eq(run_commsim((const char *const[]){"plot", missing, NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "error: no such folder"));
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"plot", dir, NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "neither sweep.csv nor summary.csv here"));
  g_free(out), g_free(err);
  g_autofree char *foreign = g_build_filename(dir, "summary.csv", NULL);
  ck_assert(g_file_set_contents(foreign, "a,b\r\n1,2\r\n", -1, NULL));
  ck_assert_int_eq(run_commsim((const char *const[]){"plot", dir, NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "summary.csv is not commsim's"));
  g_free(out), g_free(err);
  g_unlink(foreign);
  g_autofree char *file = g_build_filename(dir, "s.yaml", NULL);
  ck_assert(g_file_set_contents(file, "topology: {type: star, workers: 2}\nflows: [{src: w0, dst: w1, size: 1MB}]\n"
                                      "output: {traces: [summary]}\n", -1, NULL));
  g_autofree char *run = g_build_filename(dir, "run", NULL);
  run_ok((const char *const[]){"run", file, "-q", "-o", run, NULL});
  ck_assert_int_eq(run_commsim((const char *const[]){"plot", run, NULL}, &out, &err), 1);
  ck_assert_ptr_nonnull(strstr(err, "error: nothing to plot"));
  rm_rf(dir);
}
END_TEST

int main(void) {
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");
  if (!gnuplot) {
    fprintf(stderr, "gnuplot not found (Debian: gnuplot-nox): skipped\n");
    return 77;
  }
  Suite *s = suite_create("plot");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_plots);
  tcase_add_test(tc, test_plot_speedup_left_out);
  tcase_add_test(tc, test_plot_refusals);
  tcase_add_test(tc, test_plot_spread);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
