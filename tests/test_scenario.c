/* test_scenario.c - scenario loading: the bad-file corpus (each file names
 * the exact message it must produce), the shipped examples, defaults,
 * overrides, YAML features, and the key reference. */
#include "config.h"

#include "testutil.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "commsim/scenario.h"
#include "commsim/topology.h"
#include "commsim/yamltree.h"
#include "commsim/units.h"

/* Run `commsim ARGS...`; returns the exit status, stdout and stderr. */
static GPtrArray *list_dir(const char *dir, const char *suffix) {
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  GDir *d = g_dir_open(dir, 0, NULL);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  const char *name;
  while ((name = g_dir_read_name(d)))
    if (g_str_has_suffix(name, suffix)) g_ptr_array_add(files, g_build_filename(dir, name, NULL));
  g_dir_close(d);
  g_ptr_array_sort(files, (GCompareFunc)g_strcmp0);
  return files;
}

/* Every file in tests/scenarios/bad opens with "# expect: SUFFIX": the
 * exact message after the file name.  validate must print exactly that on
 * stderr and exit with status 2. */
START_TEST(test_bad_corpus) {
  g_autofree char *dir = g_build_filename(test_srcdir(), "tests", "scenarios", "bad", NULL);
  GPtrArray *files = list_dir(dir, ".yaml");
  ck_assert_uint_ge(files->len, 50);
  for (guint i = 0; i < files->len; i++) {
    const char *f = files->pdata[i];
    g_autofree char *text = NULL;
    gsize len;
    ck_assert(g_file_get_contents(f, &text, &len, NULL));
    ck_assert_msg(g_str_has_prefix(text, "# expect: "), "%s: no '# expect: ' line", f);
    char *nl = strchr(text, '\n');
    g_autofree char *want = g_strdup_printf("%s%.*s\n", f, (int)(nl - text - 10), text + 10);
    char *out = NULL, *err = NULL;
    int rc = run_commsim((const char *const[]){"validate", f, NULL}, &out, &err);
    ck_assert_msg(rc == 2, "%s: exit status %d, not 2", f, rc);
    ck_assert_msg(strcmp(err, want) == 0, "%s:\n  want: %s  got:  %s", f, want, err);
    ck_assert_str_eq(out, "");
    g_free(out);
    g_free(err);
  }
  g_ptr_array_free(files, TRUE);
}
END_TEST

/* Every shipped example validates and opens with a comment. */
START_TEST(test_examples_validate) {
  g_autofree char *dir = g_build_filename(test_srcdir(), "topologies", NULL);
  GPtrArray *files = list_dir(dir, ".yaml");
  ck_assert_uint_ge(files->len, 7); /* one per generator + explicit */
  for (guint i = 0; i < files->len; i++) {
    const char *f = files->pdata[i];
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(f, &text, NULL, NULL));
    ck_assert_msg(text[0] == '#', "%s does not open with a comment", f);
    char *out = NULL, *err = NULL;
    int rc = run_commsim((const char *const[]){"validate", f, NULL}, &out, &err);
    ck_assert_msg(rc == 0, "%s: %s", f, err);
    ck_assert(g_str_has_suffix(out, "valid\n"));
    g_free(out);
    g_free(err);
  }
  g_ptr_array_free(files, TRUE);
}
END_TEST

START_TEST(test_usage_errors) {
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "expected one scenario file"));
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", "/nonexistent.yaml", NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "/nonexistent.yaml: error: cannot read:"));
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", "/tmp", NULL}, &out, &err), 2);
  ck_assert_str_eq(err, "/tmp: error: is a directory, not a scenario file\n");
  g_free(out), g_free(err);
  g_autofree char *star = g_build_filename(test_srcdir(), "topologies", "star.yaml", NULL);
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", star, "--set", "defaults.bandwith=1Gbps", NULL},
                               &out, &err), 2);
  ck_assert_str_eq(err, "--set defaults.bandwith=1Gbps: error: unknown key 'bandwith' in 'defaults' (did you mean 'bandwidth'?)\n");
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", star, "--set", "nonsense", NULL}, &out, &err), 2);
  ck_assert_str_eq(err, "--set nonsense: error: expected KEY=VALUE, such as defaults.loss=0.01\n");
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", star, "--set", "topology.workers=3x", NULL}, &out, &err), 2);
  ck_assert_str_eq(err, "--set topology.workers=3x: error: topology.workers: '3x' is not a count: use K, M or G (or no suffix)\n");
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"nosuch", NULL}, &out, &err), 2);
  g_free(out), g_free(err);
  /* not a file: refused at once (validate /dev/zero once read for ever) */
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", "/dev/zero", NULL}, &out, &err), 2);
  ck_assert_str_eq(err, "/dev/zero: error: is a character device, not a scenario file\n");
  g_free(out), g_free(err);
  /* more than 64 MiB: refused by its size, unread */
  g_autofree char *big = NULL;
  int fd = g_file_open_tmp("commsim-big-XXXXXX.yaml", &big, NULL);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)65 << 20), 0);
  close(fd);
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", big, NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "error: 68157440 bytes: larger than 64 MiB, which no scenario file needs"));
  g_free(out), g_free(err);
  g_unlink(big);
}
END_TEST

/* Values the docs allow: a ratio as a percentage, fp64 gradients. */
START_TEST(test_documented_values) {
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(
      "topology: {type: star, workers: 4}\nworkload: {params: 1M, dtype: fp64, collective: allgather,\n"
      "  compression: {method: topk, ratio: 1%}}\n",
      "v.yaml", NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  ck_assert_double_eq(s->workload.compression.ratio, 0.01);
  ck_assert_int_eq(s->workload.dtype, CS_DTYPE_FP64);
}
END_TEST

static const char *minimal = "topology: {type: star, workers: 4}\nworkload: {params: 1M}\n";

START_TEST(test_defaults) {
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(minimal, "dir/min.yaml", NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  ck_assert_str_eq(s->name, "min"); /* the file's stem */
  ck_assert_uint_eq(s->seed, 1);
  ck_assert_int_eq(s->defaults.bandwidth, 10000000000LL);
  ck_assert_int_eq(s->defaults.latency, 1 * CS_US);
  ck_assert_int_eq(s->defaults.buffer, 512000);
  ck_assert(!s->defaults.buffer_set);
  ck_assert_int_eq(s->transport.protocol, CS_PROTO_RENO);
  ck_assert_int_eq(s->transport.mtu, 1500);
  ck_assert_int_eq(s->transport.header, 58);
  ck_assert_int_eq(s->transport.ack, 64);
  ck_assert_int_eq(s->transport.window, 4096);
  ck_assert_int_eq(s->transport.init_cwnd, 10);
  ck_assert_int_eq(s->transport.min_rto, 1 * CS_MS);
  ck_assert_int_eq(s->workload.params, 1000000);
  ck_assert_int_eq(s->workload.iterations, 10);
  ck_assert_int_eq(s->workload.compute, 50 * CS_MS);
  ck_assert_double_eq(s->workload.backward_fraction, 0.66);
  ck_assert_int_eq(s->workload.buckets, 25000000);
  ck_assert_int_eq(s->workload.collective, CS_COLL_RING);
  ck_assert_int_eq(s->workload.compression.method, CS_CODEC_NONE);
  ck_assert_int_eq(s->workload.compression.bits, 8);
  ck_assert_int_eq(s->workload.compression.bucket, 512);
  ck_assert_int_eq(s->workload.compression.index_bits, 32);
  ck_assert_str_eq(s->output.dir, "results/min");
  ck_assert_int_eq(s->output.sample_interval, 100 * CS_US);
  ck_assert_uint_eq(s->output.traces, CS_TRACE_SUMMARY | CS_TRACE_ITERATIONS | CS_TRACE_MESSAGES | CS_TRACE_LINKS);
}
END_TEST

START_TEST(test_link_overrides) {
  const char *text =
      "defaults: {bandwidth: 25Gbps, latency: 2us, loss: 1%}\n"
      "nodes:\n"
      "  - {name: w0, role: worker}\n  - {name: w1, role: worker}\n  - {name: s, role: switch}\n"
      "links:\n"
      "  - {a: w0, b: s}\n"
      "  - {a: w1, b: s, bandwidth: 100Gbps, buffer: 64pkt, loss: {model: gilbert-elliott, p: 0.01, r: 0.5}}\n"
      "workload: {params: 1M}\n";
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(text, "x.yaml", NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  CsLinkDecl *l0 = &g_array_index(s->topology.links, CsLinkDecl, 0);
  CsLinkDecl *l1 = &g_array_index(s->topology.links, CsLinkDecl, 1);
  ck_assert_int_eq(l0->spec.bandwidth, 25000000000LL); /* inherited */
  ck_assert_int_eq(l0->spec.latency, 2 * CS_US);
  ck_assert_int_eq(l0->spec.loss.model, CS_LOSS_BERNOULLI);
  ck_assert_double_eq(l0->spec.loss.rate, 0.01);
  ck_assert(!l0->spec.buffer_set);
  ck_assert_int_eq(l1->spec.bandwidth, 100000000000LL); /* overridden */
  ck_assert_int_eq(l1->spec.latency, 2 * CS_US);
  ck_assert(l1->spec.buffer_set && l1->spec.buffer_pkt);
  ck_assert_int_eq(l1->spec.buffer, 64);
  ck_assert_int_eq(l1->spec.loss.model, CS_LOSS_GILBERT);
  ck_assert_double_eq(l1->spec.loss.p, 0.01);
  ck_assert_double_eq(l1->spec.loss.loss_bad, 1.0); /* default: the classic Gilbert channel */
}
END_TEST

/* `yaml` with one --set `set` is refused with exactly `want`. */
static void set_refused(const char *yaml, const char *set, const char *want) {
  const char *sets[] = {set, NULL};
  GError *e = NULL;
  ck_assert_ptr_null(cs_scenario_load_string(yaml, "m.yaml", sets, &e));
  ck_assert_str_eq(e->message, want);
  g_error_free(e);
}

START_TEST(test_set_overrides) {
  const char *sets[] = {"defaults.loss=0.01", "workload.compression.bits=4",
                        "workload.compression.method=uniform", "topology.workers=16", "seed=99", NULL};
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(minimal, "m.yaml", sets, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  ck_assert_double_eq(s->defaults.loss.rate, 0.01);
  ck_assert_int_eq(s->workload.compression.bits, 4);
  ck_assert_int_eq(s->workload.compression.method, CS_CODEC_UNIFORM);
  ck_assert_int_eq(s->topology.workers, 16);
  ck_assert_uint_eq(s->seed, 99);
  /* into a list by index */
  const char *text = "nodes:\n  - {name: a, role: worker}\n  - {name: b, role: worker}\n"
                     "links:\n  - {a: a, b: b}\nworkload: {params: 1M}\n";
  const char *sets2[] = {"links.0.bandwidth=1Gbps", NULL};
  g_autoptr(CsScenario) s2 = cs_scenario_load_string(text, "l.yaml", sets2, &e);
  ck_assert_msg(s2 != NULL, "%s", e ? e->message : "");
  ck_assert_int_eq(g_array_index(s2->topology.links, CsLinkDecl, 0).spec.bandwidth, 1000000000LL);
  set_refused(text, "links.5.bandwidth=1Gbps",
              "--set links.5.bandwidth=1Gbps: error: 'links.5.bandwidth' is a list of 1 items: '5' is not an index from 0 to 0");
  set_refused(minimal, "topology.type.x=1",
              "--set topology.type.x=1: error: cannot set 'topology.type.x': the part before 'x' is a value, not a map");
  /* a map written {...}: a new key, and one that replaces what the file had */
  const char *sets5[] = {"defaults.buffer=512KB", "defaults.pfc={xoff: 200KB, xon: 160KB}", NULL};
  g_autoptr(CsScenario) s5 = cs_scenario_load_string(minimal, "m.yaml", sets5, &e);
  ck_assert_msg(s5 != NULL, "%s", e ? e->message : "");
  ck_assert_int_eq(s5->defaults.pfc_xoff, 200000);
  ck_assert_int_eq(s5->defaults.pfc_xon, 160000);
  const char *sets6[] = {"topology={type: star, workers: 5}", NULL};
  g_autoptr(CsScenario) s6 = cs_scenario_load_string(minimal, "m.yaml", sets6, &e);
  ck_assert_msg(s6 != NULL, "%s", e ? e->message : "");
  ck_assert_int_eq(s6->topology.workers, 5);
  /* its keys meet the file's checks; what YAML refuses names the character */
  set_refused(minimal, "defaults.pfc={xoff: 200KB, xonn: 160KB}",
              "--set defaults.pfc={xoff: 200KB, xonn: 160KB}: error: unknown key 'xonn' in 'defaults.pfc' (did you mean 'xon'?)");
  set_refused(minimal, "defaults.pfc={xoff: 1, xoff: 2}",
              "--set defaults.pfc={xoff: 1, xoff: 2}: error: a value written {...} is a YAML map: "
              "duplicate key 'xoff' (first given at line 1) (at character 11 of the value)");
  /* the reader's message is cut after the value, which may hold "error: " itself */
  set_refused(minimal, "defaults.pfc={error: 1, error: 2}",
              "--set defaults.pfc={error: 1, error: 2}: error: a value written {...} is a YAML map: "
              "duplicate key 'error' (first given at line 1) (at character 12 of the value)");
  /* a list written [...] is YAML too: maps as its items, quoted items without their quotes */
  const char *sets7[] = {"flows=[{src: w0, dst: w1, size: 1MB}, {src: w1, dst: w0, size: 2MB}]",
                         "output.traces=[\"summary\", messages]", NULL};
  g_autoptr(CsScenario) s7 = cs_scenario_load_string(minimal, "m.yaml", sets7, &e);
  ck_assert_msg(s7 != NULL, "%s", e ? e->message : "");
  ck_assert_uint_eq(s7->flows->len, 2);
  ck_assert_int_eq(g_array_index(s7->flows, CsFlowSpec, 1).size, 2000000);
  ck_assert_uint_eq(s7->output.traces, CS_TRACE_SUMMARY | CS_TRACE_MESSAGES);
  set_refused(minimal, "output.traces=[summary, [x]",
              "--set output.traces=[summary, [x]: error: a value written [...] is a YAML list: YAML syntax: did not "
              "find expected ',' or ']' while parsing a flow sequence (from line 1) (at character 14 of the value)");
  /* a value refused leaves the document as it was: no half-made path */
  CsYamlDoc *doc = cs_yaml_load_string("x: 1\n", 5, "d.yaml", &e);
  ck_assert_msg(doc != NULL, "%s", e ? e->message : "");
  ck_assert(!cs_yaml_set(doc, "a.b.c={d: 1}}", &e));
  g_clear_error(&e);
  ck_assert(!cs_yaml_set(doc, "a.b..c=1", &e));
  ck_assert_str_eq(e->message, "--set a.b..c=1: error: 'a.b..c' has an empty part");
  g_clear_error(&e);
  ck_assert_ptr_null(cs_yaml_lookup(cs_yaml_root(doc), "a"));
  ck_assert(cs_yaml_set(doc, "a.b.c={d: 1}", &e));
  ck_assert_ptr_nonnull(cs_yaml_lookup(cs_yaml_root(doc), "a.b.c.d"));
  cs_yaml_doc_free(doc);
}
END_TEST

START_TEST(test_yaml_features) {
  /* anchors, aliases and merge keys; the local key wins over the merged */
  const char *ok = "defaults: &d {bandwidth: 100Gbps, latency: 500ns}\n"
                   "topology:\n  type: dumbbell\n  workers: 4\n  bottleneck: {<<: *d, latency: 9us}\n"
                   "workload: {params: 1M}\n";
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(ok, "y.yaml", NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  ck_assert_int_eq(s->topology.bottleneck.bandwidth, 100000000000LL);
  ck_assert_int_eq(s->topology.bottleneck.latency, 9 * CS_US);
  ck_assert_int_eq(s->defaults.latency, 500 * CS_NS);
  /* quoted strings are values too; an empty quoted value is not "no value" */
  ck_assert_ptr_null(cs_scenario_load_string("name: ''\ntopology: {type: star, workers: 2}\nworkload: {}\n", "q.yaml", NULL, &e));
  ck_assert_str_eq(e->message, "q.yaml:1:7: error: name: '' may hold letters, digits, '_', '.', ':' and '-' only (it names output folders)");
  g_clear_error(&e);
}
END_TEST

START_TEST(test_sweep_parsed) {
  const char *text = "topology: {type: star, workers: 4}\nworkload: {params: 1M}\n"
                     "sweep:\n  defaults.bandwidth: [1Gbps, 10Gbps, 100Gbps]\n"
                     "  workload.compression.method: [none, uniform]\n";
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(text, "s.yaml", NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  ck_assert_uint_eq(s->sweep->len, 2);
  CsSweepAxis *a = &g_array_index(s->sweep, CsSweepAxis, 0);
  ck_assert_str_eq(a->key, "defaults.bandwidth");
  ck_assert_uint_eq(a->values->len, 3);
  ck_assert_str_eq(((char **)a->values->pdata[2])[0], "100Gbps");
  /* a zipped axis */
  const char *zipped = "topology: {type: star, workers: 4, servers: 1}\nworkload: {params: 1M}\n"
                       "sweep:\n  workload.compression.method, workload.collective: [[none, ring], [topk, ps]]\n";
  g_autoptr(CsScenario) z = cs_scenario_load_string(zipped, "z.yaml", NULL, &e);
  ck_assert_msg(z != NULL, "%s", e ? e->message : "");
  CsSweepAxis *za = &g_array_index(z->sweep, CsSweepAxis, 0);
  ck_assert_str_eq(za->keys[1], "workload.collective");
  ck_assert_str_eq(((char **)za->values->pdata[1])[0], "topk");
  ck_assert_str_eq(((char **)za->values->pdata[1])[1], "ps");
  /* a zipped pair that cannot work is refused at load, at its place */
  const char *bad = "topology: {type: star, workers: 4, servers: 1}\nworkload: {params: 1M}\n"
                    "sweep:\n  workload.compression.method, workload.collective: [[none, ring], [topk, ring]]\n";
  ck_assert_ptr_null(cs_scenario_load_string(bad, "b.yaml", NULL, &e));
  ck_assert_ptr_nonnull(strstr(e->message, "b.yaml:4:68: error: workload: compression method 'topk' cannot be carried"));
  g_clear_error(&e);
  /* a repeat is a value read the same, however written; what reads otherwise is two values */
  const char *units = "topology: {type: star, workers: 4}\nworkload: {params: 1M, compute: 1ms}\n"
                      "sweep:\n  defaults.buffer: [64pkt, 96000B, 64]\n  workload.compute: [1ms, 1000us]\n";
  ck_assert_ptr_null(cs_scenario_load_string(units, "r.yaml", NULL, &e));
  ck_assert_str_eq(e->message, "r.yaml:5:27: error: sweep.workload.compute[1] repeats value 0 of the axis ('1000us' is "
                               "'1ms'): each value once (two points would be the same run)");
  g_clear_error(&e);
  const char *plain = "topology: {type: star, workers: 4}\nworkload: {params: 1M, compute: 1ms, collective: allgather}\n"
                      "sweep:\n  workload.compression.ratio, workload.compression.method: [[0.1, topk], [1e-1, uniform]]\n"
                      "  defaults.loss: [0, 0.0, 1%]\n";
  ck_assert_ptr_null(cs_scenario_load_string(plain, "p.yaml", NULL, &e));
  ck_assert_ptr_nonnull(strstr(e->message, "p.yaml:5:22: error: sweep.defaults.loss[1] repeats value 0 of the axis ('0.0' is '0')"));
  g_clear_error(&e);
  /* a map as a value: in quotes, as with --set; a map itself is refused with the way to write it */
  const char *maps = "defaults: {buffer: 512KB}\ntopology: {type: star, workers: 4}\nworkload: {params: 1M}\n"
                     "sweep:\n  defaults.pfc: [\"{xoff: 100KB, xon: 80KB}\", \"{xoff: 200KB, xon: 160KB}\"]\n";
  g_autoptr(CsScenario) m = cs_scenario_load_string(maps, "m.yaml", NULL, &e);
  ck_assert_msg(m != NULL, "%s", e ? e->message : "");
  const char *unquoted = "topology: {type: star, workers: 4}\nworkload: {params: 1M}\n"
                         "sweep:\n  defaults.pfc: [{xoff: 100KB, xon: 80KB}]\n";
  ck_assert_ptr_null(cs_scenario_load_string(unquoted, "u.yaml", NULL, &e));
  ck_assert_str_eq(e->message, "u.yaml:4:18: error: sweep.defaults.pfc[0] must be a value, not a map: a value in quotes, "
                               "written [a, b] or {k: v}, sets a list or a map (as with --set), such as "
                               "\"{xoff: 200KB, xon: 160KB}\"");
  g_clear_error(&e);
}
END_TEST

/* Every key the loader accepts is documented in docs/scenario.md as
 * `dotted.key`, and the reference documents no key the loader refuses. */
START_TEST(test_reference_lists_every_key) {
  g_autofree char *path = g_build_filename(test_srcdir(), "docs", "scenario.md", NULL);
  g_autofree char *doc = NULL;
  ck_assert_msg(g_file_get_contents(path, &doc, NULL, NULL), "cannot read %s", path);
  const char *const *keys = cs_scenario_known_keys();
  int n = 0;
  for (; keys[n]; n++) {
    g_autofree char *quoted = g_strdup_printf("| `%s` |", keys[n]);
    ck_assert_msg(strstr(doc, quoted) != NULL, "docs/scenario.md does not document `%s`", keys[n]);
  }
  ck_assert_int_ge(n, 80);
  /* the other way: every table row's key is known */
  g_auto(GStrv) lines = g_strsplit(doc, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    if (!g_str_has_prefix(lines[i], "| `")) continue;
    char *end = strstr(lines[i] + 3, "` |");
    if (!end) continue;
    g_autofree char *key = g_strndup(lines[i] + 3, (gsize)(end - lines[i] - 3));
    ck_assert_msg(g_strv_contains(keys, key), "docs/scenario.md documents unknown key `%s`", key);
  }
}
END_TEST

/* The reference's table rows are the parameter table's (params.h), line
 * for line: `commsim keys --markdown` prints them, so the docs cannot
 * drift from what the reader takes, its defaults and its values. */
START_TEST(test_reference_rows_are_the_table) {
  g_autofree char *path = g_build_filename(test_srcdir(), "docs", "scenario.md", NULL);
  g_autofree char *doc = NULL;
  ck_assert(g_file_get_contents(path, &doc, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(doc, "\n", -1);
  GHashTable *rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  int n = 0;
  for (const CsParam *p = cs_params; p->key; p++, n++) {
    char *row = cs_param_reference_row(p);
    ck_assert_msg(g_strv_contains((const char *const *)lines, row), "docs/scenario.md lacks the row\n%s", row);
    g_hash_table_add(rows, row);
  }
  ck_assert_int_eq(n, 192);
  for (int i = 0; lines[i]; i++)
    if (g_str_has_prefix(lines[i], "| `"))
      ck_assert_msg(g_hash_table_contains(rows, lines[i]), "docs/scenario.md has a row the table lacks:\n%s", lines[i]);
  g_hash_table_destroy(rows);
  /* and every default the reader starts from is the one the reference
   * shows (its first word, backquotes aside: "`65pkt` (DCTCP's K ...)") */
  int bound = 0;
  for (const CsParam *p = cs_params; p->key; p++) {
    if (!p->set) continue;
    g_autofree char *shown = g_strdup(p->doc_default);
    g_strdelimit(shown, "`", ' ');
    g_strstrip(shown);
    char *space = strchr(shown, ' ');
    if (space) *space = '\0';
    ck_assert_msg(!strcmp(shown, p->set), "%s: the reader starts from %s, the reference says %s", p->key, p->set,
                  p->doc_default);
    bound++;
  }
  ck_assert_int_ge(bound, 40);
}
END_TEST

/* Every value a registry offers is named in its key's reference row (a
 * new collective, codec method, protocol or generator cannot go
 * undocumented), and the reader takes each of them. */
START_TEST(test_reference_names_registry_values) {
  int keys = 0;
  GHashTable *seen = g_hash_table_new(NULL, NULL); /* the first row of each list documents it; links[].queue says "as defaults.queue" */
  for (const CsParam *p = cs_params; p->key; p++) {
    if (p->kind != CS_KEY_ENUM || !p->names || g_hash_table_contains(seen, p->names())) continue;
    g_hash_table_add(seen, (gpointer)p->names());
    keys++;
    for (const char *const *v = p->names(); *v; v++) {
      g_autofree char *quoted = g_strdup_printf("`%s`", *v);
      ck_assert_msg(strstr(p->values, quoted) || strstr(p->help, quoted), "%s: the reference does not name %s", p->key,
                    *v);
    }
  }
  ck_assert_int_ge(keys, 8); /* routing, queues, topology type, protocol, dtype, collective, method, pattern */
  g_hash_table_destroy(seen);
}
END_TEST

static Suite *scenario_suite(void) {
  Suite *s = suite_create("scenario");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_bad_corpus);
  tcase_add_test(tc, test_reference_rows_are_the_table);
  tcase_add_test(tc, test_reference_names_registry_values);
  tcase_add_test(tc, test_examples_validate);
  tcase_add_test(tc, test_usage_errors);
  tcase_add_test(tc, test_defaults);
  tcase_add_test(tc, test_documented_values);
  tcase_add_test(tc, test_link_overrides);
  tcase_add_test(tc, test_set_overrides);
  tcase_add_test(tc, test_yaml_features);
  tcase_add_test(tc, test_sweep_parsed);
  tcase_add_test(tc, test_reference_lists_every_key);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(scenario_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
