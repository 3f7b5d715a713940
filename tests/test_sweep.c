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

static char *scenario_file(void) { return write_temp_yaml(scenario); }


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
  ck_assert_str_eq(p5->name, "005-bandwidth=25Gbps,method=uniform,collective=ring");
  /* an override applies to every point; one on a swept key would apply to none: refused */
  const char *sets[] = {"defaults.latency=2us", NULL};
  g_autoptr(CsSweep) sw2 = cs_sweep_new(f, sets, &e);
  ck_assert_msg(sw2 != NULL, "%s", e ? e->message : "");
  ck_assert_uint_eq(cs_sweep_size(sw2), 12);
  const char *swept[] = {"defaults.bandwidth=1Gbps", NULL};
  ck_assert_ptr_null(cs_sweep_new(f, swept, &e));
  ck_assert_ptr_nonnull(strstr(e->message, "--set defaults.bandwidth=1Gbps: error: 'defaults.bandwidth' is swept ("));
  g_clear_error(&e);
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
  /* -j 0 and -j -1 are refused (0 used to run as the default, the number of cores) */
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d2, "-j", k ? "-1" : "0", "-q", NULL}, &out, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "-j must be 1 or more"));
    g_free(out), g_free(err);
  }
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

/* Point folders are the point's index and a bounded slug: two values that
 * sanitize alike (r1:h2, r1_h2) get folders and rows of their own (they
 * once shared one, the second row copying the first); nine long axes
 * (past the file-name limit once, when every point failed) run; the full
 * values are in point.yaml; a value repeated in an axis is refused. */
/* What run notes of a scenario before it runs, sweep notes of each point
 * it concerns, under -q too, each line naming the point (sweep said
 * nothing of a hybrid: section at another fidelity, of loss at the flow
 * fidelity, or of cc dcqcn with no link marking ECN). */
START_TEST(test_point_notes) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\ndefaults: {loss: 1%}\n"
                                       "hybrid: {rounds: 8}\nflows: [{src: w0, dst: w1, size: 100KB}]\n"
                                       "sweep: {fidelity: [packet, flow, hybrid]}\n");
  g_autofree char *d = g_dir_make_tmp("commsim-swn-XXXXXX", NULL);
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d, "-q", "-j", "1", NULL}, &out, &err), 0);
  g_autofree char *hp = g_strdup_printf("point 000-fidelity=packet: %s:3:9: note: the hybrid: section has no effect "
                                        "at fidelity packet\n", f);
  g_autofree char *hf = g_strdup_printf("point 001-fidelity=flow: %s:3:9: note: the hybrid: section has no effect "
                                        "at fidelity flow\n", f);
  g_autofree char *mf = g_strdup_printf("point 001-fidelity=flow: %s: note: at fidelity flow a flow on a lossy route "
                                        "runs at most at the Mathis rate", f);
  ck_assert_msg(strstr(err, hp) && strstr(err, hf) && strstr(err, mf), "%s", err);
  ck_assert_msg(!strstr(err, "point 002"), "%s", err); /* hybrid reads its section, and models the loss */
  ck_assert_msg(!strstr(strstr(err, "Mathis") + 1, "Mathis"), "%s", err); /* the flow point's alone */
  g_free(out), g_free(err);
  rm_rf(d);
  g_unlink(f);
}
END_TEST

START_TEST(test_point_folders) {
  g_autofree char *f = write_temp_yaml("nodes: [{name: r0, role: worker}, {name: 'r1:h2', role: worker},\n"
                                  "        {name: r1_h2, role: worker}, {name: sw, role: switch}]\n"
                                  "links: [{a: r0, b: sw}, {a: 'r1:h2', b: sw, bandwidth: 10Gbps},\n"
                                  "        {a: r1_h2, b: sw, bandwidth: 1Gbps}]\n"
                                  "flows: [{src: r0, dst: r1_h2, size: 1MB}]\n"
                                  "sweep: {flows.0.dst: ['r1:h2', r1_h2]}\n");
  g_autofree char *d = g_dir_make_tmp("commsim-swn-XXXXXX", NULL);
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d, "-q", "-j", "2", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *a = g_build_filename(d, "000-dst=r1_h2", "summary.csv", NULL);
  g_autofree char *b = g_build_filename(d, "001-dst=r1_h2", "summary.csv", NULL);
  ck_assert(g_file_test(a, G_FILE_TEST_EXISTS) && g_file_test(b, G_FILE_TEST_EXISTS));
  g_autofree char *csv = sweep_csv(d);
  g_auto(GStrv) rows = g_strsplit(csv, "\n", -1);
  ck_assert(g_str_has_prefix(rows[1], "r1:h2,"));
  ck_assert(g_str_has_prefix(rows[2], "r1_h2,"));
  ck_assert_str_ne(rows[1] + 6, rows[2] + 6); /* 10 Gbps and 1 Gbps: different runs */
  g_autofree char *pdir = g_build_filename(d, "000-dst=r1_h2", NULL);
  g_autofree char *point = slurp(pdir, "point.yaml");
  ck_assert_ptr_nonnull(strstr(point, "point: 0\n"));
  ck_assert_ptr_nonnull(strstr(point, "  flows.0.dst: \"r1:h2\"\n"));
  rm_rf(d);

  /* nine axes of long keys: one point, its folder name short */
  g_autofree char *g = write_temp_yaml("topology: {type: star, workers: 2}\n"
                                  "workload: {params: 10K, iterations: 1, compute: 1ms, collective: ps, pull: true}\n"
                                  "topology.servers: 1\n"
                                  "sweep:\n"
                                  "  workload.compression.method: [uniform]\n  workload.compression.bits: [8]\n"
                                  "  workload.compression.bucket: [512]\n  workload.compression.index_bits: [32]\n"
                                  "  workload.compression.ratio: [0.01]\n  workload.compression.error_feedback: [false]\n"
                                  "  workload.compression.speedup: [1]\n  workload.backward_fraction: [0.5]\n"
                                  "  workload.compute_jitter: [0]\n");
  /* (the scenario above has a stray top-level key: refused with its location) */
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", g, "-o", d, "-q", NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, ":3:1: error: unknown key 'topology.servers'"));
  g_free(out), g_free(err);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(g, &text, NULL, NULL));
  GString *fixed = g_string_new(text);
  g_string_replace(fixed, "topology.servers: 1\n", "", 1);
  g_string_replace(fixed, "workers: 2}", "workers: 2, servers: 1}", 1);
  ck_assert(g_file_set_contents(g, fixed->str, -1, NULL));
  g_string_free(fixed, TRUE);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", g, "-o", d, "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  GDir *dir = g_dir_open(d, 0, NULL);
  const char *name;
  int folders = 0;
  while ((name = g_dir_read_name(dir))) {
    g_autofree char *full = g_build_filename(d, name, NULL);
    if (!g_file_test(full, G_FILE_TEST_IS_DIR)) continue;
    folders++;
    ck_assert_uint_le(strlen(name), 4 + 60);
    ck_assert(g_str_has_prefix(name, "000-method=uniform,bits=8,bucket=512,"));
  }
  g_dir_close(dir);
  ck_assert_int_eq(folders, 1);
  rm_rf(d);

  /* a value twice in an axis */
  g_autofree char *r = write_temp_yaml("topology: {type: star, workers: 2}\nflows: [{src: w0, dst: w1, size: 1MB}]\n"
                                  "sweep: {defaults.bandwidth: [1Gbps, 10Gbps, 1Gbps]}\n");
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", r, "-o", d, "-q", NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, ":3:45: error: sweep.defaults.bandwidth[2] repeats value 0 of the axis"));
  g_free(out), g_free(err);
  g_unlink(f);
  g_unlink(g);
  g_unlink(r);
}
END_TEST

/* docs/analysis.md: --set applies to every point.  One on a swept key
 * (or within one, or a map holding one) would be undone at every point:
 * refused with the --set and the axis's place; a --set beside the axes,
 * or a map that leaves the swept key out, runs. */
START_TEST(test_set_on_swept_key) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\n"
                                       "workload: {params: 10K, iterations: 1, compute: 1ms}\n"
                                       "defaults: {buffer: 512KB}\n"
                                       "sweep:\n  workload.params: [10K, 20K]\n"
                                       "  defaults.loss, defaults.pfc.xoff: [[0, 100KB]]\n");
  g_autofree char *d = g_dir_make_tmp("commsim-sws-XXXXXX", NULL);
  struct {
    const char *set, *want;
  } bad[] = {
      {"workload.params=5M", "--set workload.params=5M: error: 'workload.params' is swept (%s:5:3): every point sets it "
                             "to the axis's values, so this --set would change nothing: drop the --set, or the axis\n"},
      {" workload.params = 5M", "--set  workload.params = 5M: error: 'workload.params' is swept (%s:5:3)"},
      {"defaults.pfc.xoff.x=1", "--set defaults.pfc.xoff.x=1: error: defaults.pfc.xoff must be a value"}, /* the scenario's refusal first */
      {"defaults.loss=1%", "--set defaults.loss=1%: error: 'defaults.loss' is swept (%s:6:3)"},
      {"defaults.pfc={xoff: 200KB, xon: 80KB}",
       "--set defaults.pfc={xoff: 200KB, xon: 80KB}: error: its value sets 'defaults.pfc.xoff', which is swept "
       "(%s:6:18): every point sets it to the axis's values instead: leave it out of the --set, or drop the axis\n"},
      {"workload={params: 1M}", "--set workload={params: 1M}: error: its value sets 'workload.params', which is swept (%s:5:3)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    char *out = NULL, *err = NULL;
    g_autofree char *want = g_strdup_printf(bad[i].want, f);
    ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d, "-q", "--set", bad[i].set, NULL}, &out, &err), 2);
    ck_assert_msg(g_str_has_prefix(err, want), "--set %s:\n  want: %s\n  got:  %s", bad[i].set, want, err);
    g_free(out), g_free(err);
  }
  /* within a swept map */
  g_autofree char *m = write_temp_yaml("topology: {type: star, workers: 2}\n"
                                       "workload: {params: 10K, iterations: 1, compute: 1ms}\n"
                                       "defaults: {buffer: 512KB, pfc: {xoff: 200KB, xon: 160KB}}\n"
                                       "sweep: {defaults.pfc: [\"{xoff: 100KB, xon: 80KB}\"]}\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", m, "-o", d, "-q", "--set", "defaults.pfc.xon=50KB", NULL}, &out, &err), 2);
  g_autofree char *want = g_strdup_printf("--set defaults.pfc.xon=50KB: error: it is within 'defaults.pfc', which is swept "
                                          "(%s:4:9): every point replaces 'defaults.pfc' with the axis's values, so this "
                                          "--set would change nothing: drop the --set, or the axis\n", m);
  ck_assert_str_eq(err, want);
  g_free(out), g_free(err);
  /* beside the axes, or a map without the swept key: every point has it */
  const char *ok[] = {"workload.iterations=2", "defaults={buffer: 1MB}", NULL};
  for (guint i = 0; ok[i]; i++) {
    ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d, "-q", "-j", "1", "--set", ok[i], NULL}, &out, &err), 0);
    g_free(out), g_free(err);
  }
  g_autofree char *p = g_build_filename(d, "000-params=10K,loss=0,xoff=100KB", NULL);
  g_autofree char *point = slurp(p, "summary.csv");
  ck_assert_ptr_nonnull(point);
  rm_rf(d);
  g_unlink(f);
  g_unlink(m);
}
END_TEST

/* sweep.csv for pandas: each swept value with a unit also as a number in
 * base units, in a column named with the unit. */
START_TEST(test_sweep_csv_numbers) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\nflows: [{src: w0, dst: w1, size: 100KB}]\n"
                                  "sweep:\n  defaults.bandwidth: [1Gbps, 2.5Gbps]\n  defaults.latency: [100us]\n"
                                  "  defaults.buffer: [64pkt, 1MB]\n  defaults.loss: [1%]\n");
  g_autofree char *d = g_dir_make_tmp("commsim-swc-XXXXXX", NULL);
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d, NULL}, &out, &err), 0);
  /* it ends with a table of the results, a row per point */
  ck_assert_msg(strstr(out, "point  bandwidth  latency  buffer  loss      max util      drops retransmit\n"), "%s", out);
  ck_assert_ptr_nonnull(strstr(out, "\n    3  2.5Gbps    100us    1MB     1%  "));
  ck_assert_ptr_nonnull(strstr(out, "4 of 4 points in "));
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", "", NULL}, &out, &err), 2);
  g_free(out), g_free(err);
  g_autofree char *text = slurp(d, "sweep.csv");
  g_auto(GStrv) lines = g_strsplit(text, "\r\n", -1);
  ck_assert(g_str_has_prefix(lines[0], "defaults.bandwidth,defaults.bandwidth_bps,defaults.latency,defaults.latency_s,"
                                       "defaults.buffer,defaults.buffer_pkt,defaults.buffer_bytes,defaults.loss,"
                                       "defaults.loss_fraction,scenario,"));
  ck_assert(g_str_has_prefix(lines[1], "1Gbps,1000000000,100us,0.0001,64pkt,64,,1%,0.01,"));
  ck_assert(g_str_has_prefix(lines[4], "2.5Gbps,2500000000,100us,0.0001,1MB,,1000000,1%,0.01,"));
  /* what does not apply is empty, never 0: no workload, no background */
  g_autoptr(GPtrArray) h = cs_csv_split_line(lines[0]);
  g_autoptr(GPtrArray) r = cs_csv_split_line(lines[1]);
  for (guint i = 0; i < h->len; i++) {
    const char *c = h->pdata[i];
    if (!strcmp(c, "iter_mean_s") || !strcmp(c, "wire_bytes_per_worker") || !strcmp(c, "bg_packets_sent") ||
        !strcmp(c, "staleness_mean") || !strcmp(c, "iterations"))
      ck_assert_msg(!strcmp(r->pdata[i], ""), "%s is '%s', not empty", c, (char *)r->pdata[i]);
  }
  rm_rf(d);
  g_unlink(f);
}
END_TEST

/* Fidelity as an axis: one `fidelity` column (the axis's; the summary's
 * own column of that name is not repeated), and the flow point's packet
 * columns empty. */
START_TEST(test_sweep_fidelity) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 4}\n"
                                       "workload: {params: 1M, iterations: 2, compute: 1ms, collective: ring}\n"
                                       "sweep:\n  fidelity: [packet, flow]\n");
  g_autofree char *d = g_dir_make_tmp("commsim-swf-XXXXXX", NULL);
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d, "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *text = slurp(d, "sweep.csv");
  g_auto(GStrv) lines = g_strsplit(text, "\r\n", -1);
  g_autoptr(GPtrArray) h = cs_csv_split_line(lines[0]);
  g_autoptr(GPtrArray) p = cs_csv_split_line(lines[1]), q = cs_csv_split_line(lines[2]);
  int seen = 0;
  for (guint i = 0; i < h->len; i++) {
    const char *c = h->pdata[i];
    seen += !strcmp(c, "fidelity");
    if (!strcmp(c, "fidelity")) {
      ck_assert_str_eq(p->pdata[i], "packet");
      ck_assert_str_eq(q->pdata[i], "flow");
    }
    if (!strcmp(c, "packets_sent")) {
      ck_assert_str_ne(p->pdata[i], "");
      ck_assert_str_eq(q->pdata[i], "");
    }
  }
  ck_assert_int_eq(seen, 1);
  rm_rf(d);
  g_unlink(f);
}
END_TEST

/* --merge refuses shards of two sweeps and shards that disagree on a
 * point (exit 2, naming them), and reports missing points (exit 1 unless
 * --allow-partial); once it took all three silently. */
START_TEST(test_merge_refusals) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\nflows: [{src: w0, dst: w1, size: 100KB}]\n"
                                  "sweep: {defaults.bandwidth: [1Gbps, 2Gbps, 5Gbps, 10Gbps]}\n");
  g_autofree char *base = g_dir_make_tmp("commsim-mg-XXXXXX", NULL);
  g_autofree char *s0 = g_build_filename(base, "s0", NULL), *s1 = g_build_filename(base, "s1", NULL),
                  *o = g_build_filename(base, "other", NULL), *m = g_build_filename(base, "m", NULL);
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-q", "-o", s0, "--shard", "0/2", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-q", "-o", s1, "--shard", "1/2", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-q", "-o", o, "--shard", "1/2", "--set",
                                                     "defaults.latency=5us", NULL},
                               &out, &err), 0);
  g_free(out), g_free(err);
  /* another sweep's shard */
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", "--merge", s0, o, "-o", m, NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "a shard of another sweep than"));
  ck_assert_ptr_nonnull(strstr(err, o));
  g_free(out), g_free(err);
  /* a shard missing: the points are named, exit 1; --allow-partial: 0 */
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", "--merge", s0, "-o", m, NULL}, &out, &err), 1);
  ck_assert_ptr_nonnull(strstr(err, "error: 2 of 4 points are in no shard: 1, 3"));
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", "--merge", s0, "-o", m, "--allow-partial", NULL}, &out, &err), 0);
  ck_assert_ptr_nonnull(strstr(err, "note: 2 of 4 points are in no shard: 1, 3"));
  g_free(out), g_free(err);
  /* two shards holding different results for one point */
  g_autofree char *csv = slurp(s1, "sweep.csv");
  GString *bad = g_string_new(csv);
  g_string_replace(bad, ",star,2,0,", ",star,3,0,", 1);
  g_autofree char *s1csv = g_build_filename(s1, "sweep.csv", NULL);
  ck_assert(g_file_set_contents(s1csv, bad->str, -1, NULL));
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", "--merge", s0, s1, s1, "-o", m, NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *s1b = g_build_filename(base, "s1b", NULL);
  g_autofree char *cp = g_strdup_printf("cp -r '%s' '%s' && printf '%%s' '%s' > '%s/sweep.csv'", s1, s1b, csv, s1b);
  ck_assert_int_eq(system(cp), 0);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", "--merge", s0, s1, s1b, "-o", m, NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "error: point 1 differs between"));
  g_free(out), g_free(err);
  g_string_free(bad, TRUE);
  /* not a sweep's folder */
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", "--merge", base, "-o", m, NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "not a sweep's folder"));
  g_free(out), g_free(err);
  rm_rf(base);
  g_unlink(f);
}
END_TEST

/* Resume takes a folder's results only if they are of the same point of
 * the same scenario (point.yaml's fingerprint): after an edit of the
 * scenario, a rerun runs every point again. */
START_TEST(test_resume_checks_fingerprint) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\nflows: [{src: w0, dst: w1, size: 100KB}]\n"
                                  "sweep: {defaults.bandwidth: [1Gbps, 10Gbps]}\n");
  g_autofree char *d = g_dir_make_tmp("commsim-swf-XXXXXX", NULL);
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d, "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *before = sweep_csv(d);
  ck_assert(g_file_set_contents(f, "topology: {type: star, workers: 2}\ndefaults: {latency: 1ms}\n"
                                   "flows: [{src: w0, dst: w1, size: 100KB}]\n"
                                   "sweep: {defaults.bandwidth: [1Gbps, 10Gbps]}\n", -1, NULL));
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", d, "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *after = sweep_csv(d);
  ck_assert_str_ne(before, after);
  g_autofree char *fresh = g_dir_make_tmp("commsim-swf-XXXXXX", NULL);
  ck_assert_int_eq(run_commsim((const char *const[]){"sweep", f, "-o", fresh, "-q", NULL}, &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *clean = sweep_csv(fresh);
  ck_assert_str_eq(after, clean);
  rm_rf(d);
  rm_rf(fresh);
  g_unlink(f);
}
END_TEST

static Suite *sweep_suite(void) {
  Suite *s = suite_create("sweep");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_expansion);
  tcase_add_test(tc, test_jobs_resume_shards);
  tcase_add_test(tc, test_slurm_array_script);
  tcase_add_test(tc, test_point_notes);
  tcase_add_test(tc, test_point_folders);
  tcase_add_test(tc, test_set_on_swept_key);
  tcase_add_test(tc, test_sweep_csv_numbers);
  tcase_add_test(tc, test_sweep_fidelity);
  tcase_add_test(tc, test_merge_refusals);
  tcase_add_test(tc, test_resume_checks_fingerprint);
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
