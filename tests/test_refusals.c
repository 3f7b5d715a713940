/* test_refusals.c - validate and run agree on every refusal.
 *
 * `commsim validate F` is the promise that `commsim run F` will not refuse
 * F, and the other way round: for every scenario that one of them refuses,
 * both must exit with status 2, print nothing on stdout and one line on
 * stderr, "LOCATION: error: MESSAGE", with the same location and the same
 * message; run must not have created its output folder.  The scenarios:
 * tests/scenarios/bad/ (whose "# expect: " line gives the message too),
 * tests/scenarios/hardening/ (where validate accepts a file, run must not
 * refuse it), scenarios written here for the refusals found only once the
 * network is built (sizes, memory estimates, names resolved against the
 * topology), and paths that are no scenario file.
 *
 * Where the two disagree today, the case is listed in known_failures
 * below with what each prints; the test checks that this is still so, so
 * that a fix shows up (and its entry is then removed).  No timing is
 * asserted: only statuses and texts. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdbool.h>
#include <string.h>

#include "testutil.h"

/* ---- known failures ----
 *
 * Cases where validate and run do not refuse alike, with what each prints
 * today ("%F" stands for the scenario's path).  Each entry is a bug to
 * fix; once fixed, the test fails with "changed" until the entry goes. */
typedef struct {
  const char *name; /* a corpus file's name, or a written case's name */
  int validate_status;
  const char *validate_err;
  int run_status; /* of run -q -o DIR */
  const char *run_err;
  const char *why;
} KnownFailure;

static const KnownFailure known_failures[] = {
    {NULL, 0, NULL, 0, NULL, NULL}, /* none today */
};

static const KnownFailure *known_failure(const char *name) {
  for (size_t i = 0; known_failures[i].name; i++)
    if (strcmp(known_failures[i].name, name) == 0) return &known_failures[i];
  return NULL;
}

/* ---- running both ---- */

typedef struct {
  int status;
  char *out, *err;
} Outcome;

static void outcome_clear(Outcome *o) {
  g_free(o->out);
  g_free(o->err);
}

/* commsim COMMAND [ARGS...] [-q -o DIR] PATH */
static Outcome run_one(const char *command, const char *path, const char *const *args, const char *outdir) {
  const char *argv[16];
  int k = 0;
  argv[k++] = command;
  for (const char *const *a = args; a && *a; a++) argv[k++] = *a;
  if (outdir) argv[k++] = "-q", argv[k++] = "-o", argv[k++] = outdir;
  argv[k++] = path;
  argv[k] = NULL;
  ck_assert_int_lt(k, (int)G_N_ELEMENTS(argv));
  Outcome o = {0, NULL, NULL};
  o.status = run_commsim(argv, &o.out, &o.err);
  return o;
}

/* A text without its last line end, for reports. */
static int chomped(const char *s) {
  size_t n = strlen(s);
  return (int)(n && s[n - 1] == '\n' ? n - 1 : n);
}

/* "%F" in a recorded text replaced by the path. */
static char *with_path(const char *text, const char *path) {
  g_auto(GStrv) parts = g_strsplit(text, "%F", -1);
  return g_strjoinv(path, parts);
}

/* One line "LOC: error: MSG\n": LOC (with its ": ") and MSG, or false. */
static bool split_error(const char *err, char **loc, char **msg) {
  const char *e = strstr(err, "error: ");
  size_t n = strlen(err);
  if (!e || n == 0 || err[n - 1] != '\n' || strchr(err, '\n') != err + n - 1) return false;
  *loc = g_strndup(err, (gsize)(e - err));
  *msg = g_strndup(e + 7, (gsize)(err + n - 1 - (e + 7)));
  return true;
}

/* What is wrong with one case, appended to `bad` ("" when all is well). */
static void check_case(GString *bad, const char *name, const char *path, const char *const *args, const char *want) {
  g_autofree char *tmp = g_dir_make_tmp("commsim-refusal-XXXXXX", NULL);
  ck_assert(tmp != NULL);
  g_autofree char *outdir = g_build_filename(tmp, "out", NULL);
  Outcome v = run_one("validate", path, args, NULL), r = run_one("run", path, args, outdir);
  bool wrote = g_file_test(outdir, G_FILE_TEST_EXISTS);
  rm_rf(tmp);

  const KnownFailure *kf = known_failure(name);
  if (kf) {
    g_autofree char *ve = with_path(kf->validate_err, path), *re = with_path(kf->run_err, path);
    if (v.status != kf->validate_status || strcmp(v.err, ve) != 0 || r.status != kf->run_status ||
        strcmp(r.err, re) != 0)
      g_string_append_printf(bad,
                             "%s: a known failure changed (fixed? then remove its entry from known_failures):\n"
                             "  validate: exit %d: %.*s\n  run:      exit %d: %.*s\n",
                             name, v.status, chomped(v.err), v.err, r.status, chomped(r.err), r.err);
    outcome_clear(&v), outcome_clear(&r);
    return;
  }

  GString *why = g_string_new(NULL);
  if (v.status != 2) g_string_append_printf(why, "  validate exits %d, not 2\n", v.status);
  if (r.status != 2) g_string_append_printf(why, "  run exits %d, not 2\n", r.status);
  if (*v.out) g_string_append(why, "  validate prints on stdout\n");
  if (*r.out) g_string_append(why, "  run prints on stdout\n");
  if (wrote) g_string_append(why, "  run refused but created its output folder\n");
  g_autofree char *vloc = NULL, *vmsg = NULL, *rloc = NULL, *rmsg = NULL;
  bool vok = split_error(v.err, &vloc, &vmsg), rok = split_error(r.err, &rloc, &rmsg);
  if (!vok) g_string_append(why, "  validate prints no single 'LOC: error: MSG' line\n");
  if (!rok) g_string_append(why, "  run prints no single 'LOC: error: MSG' line\n");
  if (vok && rok && strcmp(vmsg, rmsg) != 0) g_string_append(why, "  the messages differ\n");
  if (vok && rok && strcmp(vloc, rloc) != 0) g_string_append(why, "  the locations differ\n");
  if (want && strcmp(v.err, want) != 0) g_string_append_printf(why, "  validate does not print the expected %s", want);
  if (want && strcmp(r.err, want) != 0) g_string_append_printf(why, "  run does not print the expected %s", want);
  if (why->len)
    g_string_append_printf(bad, "%s:\n%s  validate: exit %d: %.*s\n  run:      exit %d: %.*s\n", name, why->str,
                           v.status, chomped(v.err), v.err, r.status, chomped(r.err), r.err);
  g_string_free(why, TRUE);
  outcome_clear(&v), outcome_clear(&r);
}

static GPtrArray *yaml_files(const char *sub) {
  g_autofree char *dir = g_build_filename(test_srcdir(), "tests", "scenarios", sub, NULL);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  const char *n;
  while ((n = g_dir_read_name(d)))
    if (g_str_has_suffix(n, ".yaml")) g_ptr_array_add(files, g_strdup(n));
  g_ptr_array_sort(files, (GCompareFunc)g_strcmp0);
  return files;
}

/* ---- the corpora ---- */

/* Every file of tests/scenarios/bad: refused alike, with the message its
 * "# expect: " line gives. */
START_TEST(bad_corpus) {
  g_autoptr(GPtrArray) files = yaml_files("bad");
  ck_assert_uint_ge(files->len, 50);
  g_autoptr(GString) bad = g_string_new(NULL);
  for (guint i = 0; i < files->len; i++) {
    const char *n = files->pdata[i];
    g_autofree char *path = g_build_filename(test_srcdir(), "tests", "scenarios", "bad", n, NULL);
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    ck_assert_msg(g_str_has_prefix(text, "# expect: "), "%s: no '# expect: ' line", path);
    char *nl = strchr(text, '\n');
    ck_assert(nl != NULL);
    g_autofree char *want = g_strdup_printf("%s%.*s\n", path, (int)(nl - text - 10), text + 10);
    check_case(bad, n, path, NULL, want);
  }
  ck_assert_msg(bad->len == 0, "validate and run disagree:\n%s", bad->str);
}
END_TEST

/* tests/scenarios/hardening holds refusals (torus-90k) and files that
 * are valid but fail or stop at run time (exit 1: time-overflow,
 * loss-one) or run (exit 0).  What validate refuses, run refuses alike;
 * what validate accepts, run does not refuse (its own outcome is
 * test_hardening's).  long-run.yaml is shortened, in both. */
static const struct {
  const char *file;
  const char *args[3];
} shortened[] = {
    {"long-run.yaml", {"--set", "workload.iterations=2", NULL}},
};

START_TEST(hardening_corpus) {
  g_autoptr(GPtrArray) files = yaml_files("hardening");
  ck_assert_uint_ge(files->len, 7);
  g_autoptr(GString) bad = g_string_new(NULL);
  int refusals = 0;
  for (guint i = 0; i < files->len; i++) {
    const char *n = files->pdata[i];
    g_autofree char *path = g_build_filename(test_srcdir(), "tests", "scenarios", "hardening", n, NULL);
    const char *const *args = NULL;
    for (size_t j = 0; j < G_N_ELEMENTS(shortened); j++)
      if (strcmp(shortened[j].file, n) == 0) args = shortened[j].args;
    Outcome v = run_one("validate", path, args, NULL);
    if (v.status == 2 || known_failure(n)) {
      check_case(bad, n, path, args, NULL);
      refusals++;
    } else {
      ck_assert_msg(v.status == 0, "%s: validate exits %d: %s", n, v.status, v.err);
      g_autofree char *tmp = g_dir_make_tmp("commsim-refusal-XXXXXX", NULL);
      g_autofree char *outdir = g_build_filename(tmp, "out", NULL);
      Outcome r = run_one("run", path, args, outdir);
      rm_rf(tmp);
      if (r.status == 2)
        g_string_append_printf(bad, "%s: validate accepts it, run refuses it:\n  run: exit 2: %s", n, r.err);
      outcome_clear(&r);
    }
    outcome_clear(&v);
  }
  ck_assert_int_ge(refusals, 1); /* torus-90k */
  ck_assert_msg(bad->len == 0, "validate and run disagree:\n%s", bad->str);
}
END_TEST

/* ---- refusals found once the network is built ----
 *
 * Each case: a scenario, extra arguments for both commands, and what both
 * must print after the file's path. */
typedef struct {
  const char *name;
  const char *yaml;
  const char *args[3];
  const char *want; /* after the path; NULL: agreement only */
} Case;

static const Case cases[] = {
    {"buckets-4B", "topology: {type: star, workers: 4}\nworkload: {params: 25.6M, buckets: 4B}\n", {NULL},
     ":2:1: error: workload.buckets: more than 1,000,000 buckets per iteration; use larger buckets\n"},
    {"bucket-2^30-packets", "topology: {type: star, workers: 2}\nworkload: {params: 200G, buckets: 1000GB}\n", {NULL},
     ":2:1: error: workload: a bucket of 200000000000 elements would need more than 2^30 packets in one message; "
     "use buckets: (bytes) to split it\n"},
    {"tree-oversubscription-1e-12",
     "topology: {type: tree, leaves: 2, hosts_per_leaf: 4, oversubscription: 1e-12}\nworkload: {params: 1M}\n",
     {NULL},
     ":1:72: error: topology.oversubscription: 1e-12 gives leaf uplinks of 4e+22 bit/s (10000000000 bit/s x 4 "
     "hosts / 1e-12): a bandwidth must lie from 1 bit/s to 9.223e+18 bit/s\n"},
    {"tree-oversubscription-1e30",
     "topology: {type: tree, leaves: 2, hosts_per_leaf: 4, oversubscription: 1e30}\nworkload: {params: 1M}\n",
     {NULL},
     ":1:72: error: topology.oversubscription: 1e+30 gives leaf uplinks of 4e-20 bit/s (10000000000 bit/s x 4 "
     "hosts / 1e+30): a bandwidth must lie from 1 bit/s to 9.223e+18 bit/s\n"},
    {"halving-doubling-3", "topology: {type: star, workers: 3}\nworkload: {params: 1M, collective: halving-doubling}\n",
     {NULL},
     ":2:1: error: workload: collective halving-doubling needs a power-of-two number of workers, not 3 (use ring or "
     "tree)\n"},
    {"halving-doubling-3-by-set",
     "topology: {type: star, workers: 4}\nworkload: {params: 1M, collective: halving-doubling}\n",
     {"--set", "topology.workers=3", NULL},
     ":2:1: error: workload: collective halving-doubling needs a power-of-two number of workers, not 3 (use ring or "
     "tree)\n"},
    {"ps-without-servers", "topology: {type: ring, workers: 4}\nworkload: {params: 1M, collective: ps}\n", {NULL},
     ":2:1: error: workload: collective ps needs servers and the topology has none (set topology.servers, or role: "
     "server)\n"},
    {"servers-names-a-worker",
     "topology: {type: star, workers: 4, servers: 1}\nworkload: {params: 1M, collective: ps, servers: [w1]}\n",
     {NULL}, ":2:50: error: workload.servers: 'w1' is a worker, not a server\n"},
    {"servers-names-a-switch",
     "topology: {type: star, workers: 4, servers: 1}\nworkload: {params: 1M, collective: ps, servers: [sw0]}\n",
     {NULL}, ":2:50: error: workload.servers: 'sw0' is a switch, not a server\n"},
    {"flow-unknown-host",
     "topology: {type: star, workers: 4}\nflows:\n  - {src: w0, dst: w1, size: 1MB}\n"
     "  - {src: nohost, dst: w1, size: 1MB}\n",
     {NULL}, ":4:5: error: flows[1].src: unknown node 'nohost' (hosts are w0 .. w3)\n"},
    {"flow-to-a-switch", "topology: {type: star, workers: 4}\nflows:\n  - {src: w0, dst: sw0, size: 1MB}\n", {NULL},
     ":3:5: error: flows[0].dst: 'sw0' is a switch; traffic starts and ends at hosts\n"},
    {"background-unknown-host",
     "topology: {type: star, workers: 4}\nduration: 1ms\nbackground:\n"
     "  - {src: w0, dst: h7, pattern: poisson, rate: 1Gbps}\n",
     {NULL}, ":4:5: error: background[0].dst: unknown node 'h7' (did you mean 'w0'?)\n"},
    {"flow-2^30-packets", "topology: {type: star, workers: 2}\nflows:\n  - {src: w0, dst: w1, size: 2000GB}\n", {NULL},
     ":3:5: error: flows[0].size: more than 2^30 packets of 1442 B in one message\n"},
    /* the memory estimate of tests/test_hardening.c */
    {"routing-tables-90k-rows",
     "topology: {type: torus2d, x: 300, y: 300}\nworkload: {params: 1M, collective: ring, iterations: 1}\n", {NULL},
     ": error: the routing tables of 90000 destinations x 90000 nodes would take 15.1 GiB (2 bytes each); commsim "
     "refuses more than 8 GiB\n"},
    {"records-beyond-8GiB",
     "topology: {type: star, workers: 200}\nworkload: {params: 1M, collective: ring, iterations: 1000000}\n",
     {NULL},
     ":2:1: error: workload.iterations: the records of 200 workers x 1000000 iterations would take 11.9 GiB "
     "(64 bytes each); commsim refuses more than 8 GiB\n"},
    {"more-than-1M-hosts", "topology: {type: fat-tree, k: 200}\nworkload: {params: 1M}\n", {NULL},
     ":1:11: error: topology: more than 1,000,000 hosts is beyond what commsim simulates\n"},
    {"duration-beyond-2^63ps",
     "topology: {type: star, workers: 2}\nduration: 10000000s\nflows:\n  - {src: w0, dst: w1, size: 1MB}\n", {NULL},
     ":2:11: error: duration: '10000000s' is too large: simulated time ends after 9223372s (about 106 days)\n"},
    /* YAML reads a colon without a space after it as part of one plain scalar */
    {"colon-without-space", "topology: {type: star, workers: 4}\ndefaults: {bandwidth:10Gbps}\n", {NULL},
     ":2:12: error: unknown key 'bandwidth:10Gbps' in 'defaults': YAML needs a space after the colon: write "
     "'bandwidth: 10Gbps'\n"},
    {"sample-interval-0",
     "topology: {type: star, workers: 2}\nflows:\n  - {src: w0, dst: w1, size: 1MB}\noutput: {sample_interval: 0}\n",
     {NULL}, ":4:27: error: output.sample_interval must be larger than 0\n"},
};

START_TEST(written_cases) {
  g_autoptr(GString) bad = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const Case *c = &cases[i];
    g_autofree char *path = write_temp_yaml(c->yaml);
    g_autofree char *want = c->want ? g_strconcat(path, c->want, NULL) : NULL;
    check_case(bad, c->name, path, c->args, want);
    g_unlink(path);
  }
  ck_assert_msg(bad->len == 0, "validate and run disagree:\n%s", bad->str);
}
END_TEST

/* Paths that are no scenario file: refused unread, alike. */
START_TEST(not_scenario_files) {
  g_autofree char *dir = g_dir_make_tmp("commsim-refusal-XXXXXX", NULL);
  ck_assert(dir != NULL);
  g_autofree char *missing = g_build_filename(dir, "missing.yaml", NULL);
  g_autofree char *want_dir = g_strconcat(dir, ": error: is a directory, not a scenario file\n", NULL);
  g_autofree char *want_missing = g_strconcat(missing, ": error: cannot read: No such file or directory\n", NULL);
  g_autoptr(GString) bad = g_string_new(NULL);
  check_case(bad, "a-directory", dir, NULL, want_dir);
  check_case(bad, "a-missing-file", missing, NULL, want_missing);
  if (g_file_test("/dev/zero", G_FILE_TEST_EXISTS))
    check_case(bad, "a-character-device", "/dev/zero", NULL,
               "/dev/zero: error: is a character device, not a scenario file\n");
  rm_rf(dir);
  ck_assert_msg(bad->len == 0, "validate and run disagree:\n%s", bad->str);
}
END_TEST

/* Every known failure names a case that exists. */
/* Not a refusal but a warning: a sampling interval run would raise (1ps
 * on a 1 MB flow: 8e8 samples, docs/analysis.md).  validate shows the
 * interval run will use and prints run's warning, word for word. */
START_TEST(warnings_alike) {
  g_autofree char *path = write_temp_yaml(
      "topology: {type: star, workers: 2}\nflows:\n  - {src: w0, dst: w1, size: 1MB}\noutput: {sample_interval: 1ps}\n");
  g_autofree char *tmp = g_dir_make_tmp("commsim-refusal-XXXXXX", NULL);
  g_autofree char *outdir = g_build_filename(tmp, "out", NULL);
  const char *v_argv[] = {"validate", path, NULL}, *r_argv[] = {"run", "-o", outdir, path, NULL};
  Outcome v = {0, NULL, NULL}, r = {0, NULL, NULL};
  v.status = run_commsim(v_argv, &v.out, &v.err);
  r.status = run_commsim(r_argv, &r.out, &r.err);
  rm_rf(tmp);
  ck_assert_int_eq(v.status, 0);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(v.err, "warning: output.sample_interval 1ps would take about 8.34e+08 samples"));
  ck_assert_str_eq(v.err, r.err);
  ck_assert_ptr_nonnull(strstr(v.out, "links sampled every 2ns (raised from 1ps; run --force keeps it)"));
  outcome_clear(&v);
  outcome_clear(&r);
  g_unlink(path);
}
END_TEST

START_TEST(known_failures_exist) {
  for (size_t i = 0; known_failures[i].name; i++) {
    const char *n = known_failures[i].name;
    bool found = false;
    for (size_t j = 0; j < G_N_ELEMENTS(cases); j++) found |= strcmp(cases[j].name, n) == 0;
    if (!found) {
      g_autofree char *bad = g_build_filename(test_srcdir(), "tests", "scenarios", "bad", n, NULL);
      g_autofree char *hard = g_build_filename(test_srcdir(), "tests", "scenarios", "hardening", n, NULL);
      found = g_file_test(bad, G_FILE_TEST_EXISTS) || g_file_test(hard, G_FILE_TEST_EXISTS);
    }
    ck_assert_msg(found, "known_failures names '%s', which is no case", n);
  }
}
END_TEST

static Suite *refusals_suite(void) {
  Suite *s = suite_create("refusals");
  TCase *tc = tcase_create("agree");
  tcase_add_test(tc, bad_corpus);
  tcase_add_test(tc, hardening_corpus);
  tcase_add_test(tc, written_cases);
  tcase_add_test(tc, not_scenario_files);
  tcase_add_test(tc, known_failures_exist);
  tcase_add_test(tc, warnings_alike);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(refusals_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
