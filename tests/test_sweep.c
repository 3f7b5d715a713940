/* test_sweep.c - sweep expansion, determinism across thread counts,
 * resume, shards and merge. */
#include "config.h"

#include "testutil.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commsim/sweep.h"

static const char *scenario =
    "seed: 4\n"
    "defaults: {loss: 0.0005}\n"
    "topology: {type: star, workers: 4, servers: 1}\n"
    "workload: {params: 200K, iterations: 2, compute: 1ms, compute_jitter: 0.1, buckets: 400KB, collective: ring}\n"
    "sweep:\n"
    "  defaults.bandwidth: [10Gbps, 25Gbps, 100Gbps]\n"
    "  workload.compression.method, workload.collective: [[none, ring], [uniform, ring], [topk, allgather], [sign, ps]]\n";

static char *scenario_file(void) {
  char *path = NULL;
  int fd = g_file_open_tmp("commsim-sweep-XXXXXX.yaml", &path, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert(g_file_set_contents(path, scenario, -1, NULL));
  return path;
}


/* sweep.csv without wall_s, which is the only column allowed to differ */
static char *sweep_csv(const char *dir) {
  g_autofree char *path = g_build_filename(dir, "sweep.csv", NULL);
  g_autofree char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "no %s", path);
  g_auto(GStrv) lines = g_strsplit(text, "\r\n", -1);
  g_autoptr(GPtrArray) header = cs_csv_split_line(lines[0]);
  guint wall = 0;
  for (guint i = 0; i < header->len; i++)
    if (!strcmp(header->pdata[i], "wall_s")) wall = i;
  ck_assert_uint_gt(wall, 0);
  GString *s = g_string_new(NULL);
  for (guint l = 0; lines[l] && *lines[l]; l++) {
    g_autoptr(GPtrArray) f = cs_csv_split_line(lines[l]);
    ck_assert_uint_eq(f->len, header->len); /* every row has every column */
    for (guint i = 0; i < f->len; i++)
      if (i != wall) g_string_append_printf(s, "%s,", (char *)f->pdata[i]);
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}

START_TEST(test_expansion) {
  g_autofree char *f = scenario_file();
  GError *e = NULL;
  g_autoptr(CsSweep) sw = cs_sweep_new(f, NULL, &e);
  ck_assert_msg(sw != NULL, "%s", e ? e->message : "");
  /* 3 bandwidths x 4 (method, collective) pairs, the last axis fastest */
  ck_assert_uint_eq(cs_sweep_size(sw), 12);
  const CsSweepPoint *p5 = cs_sweep_point(sw, 5);
  ck_assert_str_eq(p5->values[0], "25Gbps");
  ck_assert_str_eq(p5->values[1], "uniform");
  ck_assert_str_eq(p5->values[2], "ring");
  ck_assert_str_eq(p5->name, "defaults.bandwidth=25Gbps,workload.compression.method=uniform,workload.collective=ring");
  /* an override applies to every point; a sweep value overrides it */
  const char *sets[] = {"defaults.bandwidth=1Gbps", NULL};
  g_autoptr(CsSweep) sw2 = cs_sweep_new(f, sets, &e);
  ck_assert_uint_eq(cs_sweep_size(sw2), 12);
  /* no sweep: a clear refusal */
  ck_assert(g_file_set_contents(f, "topology: {type: star, workers: 2}\nworkload: {params: 1K}\n", -1, NULL));
  ck_assert_ptr_null(cs_sweep_new(f, NULL, &e));
  ck_assert_ptr_nonnull(strstr(e->message, "error: the scenario has no sweep: section"));
  g_clear_error(&e);
  g_unlink(f);
}
END_TEST

START_TEST(test_jobs_resume_shards) {
  g_autofree char *f = scenario_file();
  g_autofree char *d1 = g_dir_make_tmp("commsim-sw1-XXXXXX", NULL), *d2 = g_dir_make_tmp("commsim-sw2-XXXXXX", NULL);
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d1, "-j", "1", "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d2, "-j", "2", "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *whole = sweep_csv(d1);
  g_autofree char *two = sweep_csv(d2);
  ck_assert_str_eq(whole, two); /* -j 1 and -j 2: the same rows, in grid order */
  ck_assert_int_eq((int)(strchr(whole, '\n') - whole) > 0, 1);
  int rows = 0;
  for (const char *p = whole; *p; p++) rows += *p == '\n';
  ck_assert_int_eq(rows, 13); /* header + 12 points */

  /* resume: delete half the points' folders; the rerun runs only those
   * and ends with the same sweep.csv */
  g_autoptr(CsSweep) sw = cs_sweep_new(f, NULL, NULL);
  for (uint32_t i = 0; i < 12; i += 2) {
    g_autofree char *p = g_build_filename(d2, cs_sweep_point(sw, i)->name, NULL);
    rm_rf(p);
  }
  g_autofree char *keep = g_build_filename(d2, cs_sweep_point(sw, 1)->name, "summary.csv", NULL);
  GStatBuf before, after;
  ck_assert_int_eq(g_stat(keep, &before), 0);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d2, "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  ck_assert_int_eq(g_stat(keep, &after), 0);
  ck_assert_int_eq(before.st_mtime, after.st_mtime); /* a complete point was not run again */
  ck_assert_int_eq(before.st_ino, after.st_ino);
  g_autofree char *resumed = sweep_csv(d2);
  ck_assert_str_eq(whole, resumed);

  /* shards 0/3, 1/3, 2/3 merged: the whole */
  g_autofree char *base = g_dir_make_tmp("commsim-sh-XXXXXX", NULL);
  g_autofree char *s0 = g_build_filename(base, "s0", NULL), *s1 = g_build_filename(base, "s1", NULL),
                  *s2 = g_build_filename(base, "s2", NULL), *m = g_build_filename(base, "merged", NULL);
  const char *shards[] = {"0/3", "1/3", "2/3"};
  const char *dirs[] = {s0, s1, s2};
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", dirs[k], "--shard", shards[k], "-q", NULL}, &out, &err), 0);
    g_free(out), g_free(err);
  }
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", "--merge", s2, s0, s1, "-o", m, "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *merged = sweep_csv(m);
  ck_assert_str_eq(whole, merged);
  /* bad shard syntax */
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "--shard", "3/3", NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "expected K/N with 0 <= K < N"));
  g_free(out), g_free(err);
  rm_rf(d1);
  rm_rf(d2);
  rm_rf(base);
  g_unlink(f);
}
END_TEST

/* scripts/slurm-sweep-array.sbatch, run as Slurm would run its 3 array
 * tasks, then --merge: the rows of a single-process sweep. */
START_TEST(test_slurm_array_script) {
  g_autofree char *f = g_build_filename(test_srcdir(), "tests", "scenarios", "hardening", "sweep-8.yaml", NULL);
  g_autofree char *script = g_build_filename(test_srcdir(), "scripts", "slurm-sweep-array.sbatch", NULL);
  g_autofree char *commsim = g_build_filename(test_builddir(), "sim", "commsim", NULL);
  g_autofree char *tmp = g_dir_make_tmp("commsim-slurm-XXXXXX", NULL);
  g_autofree char *arr = g_build_filename(tmp, "array", NULL), *one = g_build_filename(tmp, "one", NULL);
  for (int k = 0; k < 3; k++) {
    g_autofree char *cmd = g_strdup_printf("SLURM_ARRAY_TASK_ID=%d SLURM_ARRAY_TASK_COUNT=3 SLURM_CPUS_PER_TASK=1 "
                                           "COMMSIM='%s' bash '%s' '%s' '%s'",
                                           k, commsim, script, f, arr);
    ck_assert_int_eq(system(cmd), 0);
  }
  g_autofree char *s0 = g_build_filename(arr, "shard-0", NULL), *s1 = g_build_filename(arr, "shard-1", NULL),
                  *s2 = g_build_filename(arr, "shard-2", NULL);
  const char *merge[] = {"sweep", "-q", "--merge", s0, s1, s2, "-o", arr, NULL};
  const char *single[] = {"sweep", "-q", "-j", "2", f, "-o", one, NULL};
  g_autofree char *o1 = NULL, *e1 = NULL, *o2 = NULL, *e2 = NULL;
  ck_assert_int_eq(run_commsim(merge, &o1, &e1), 0);
  ck_assert_int_eq(run_commsim(single, &o2, &e2), 0);
  g_autofree char *a = sweep_csv(arr), *b = sweep_csv(one);
  ck_assert_str_eq(a, b);
  rm_rf(tmp);
}
END_TEST

static Suite *sweep_suite(void) {
  Suite *s = suite_create("sweep");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_expansion);
  tcase_add_test(tc, test_jobs_resume_shards);
  tcase_add_test(tc, test_slurm_array_script);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(sweep_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
