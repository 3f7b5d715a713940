/* test_jobs.c - workloads as real jobs run them (SPEC 7.4): the model
 * zoo, DDP's buckets, device times, layers given by hand or in a CSV,
 * machines of several workers, servers placed under chosen switches, and
 * the hierarchical all-reduce against its closed form.
 *
 * Reference figures come from validation/zoo_reference.py, run with
 * Debian's python3-torch 1.13 and python3-torchvision 0.14: parameter
 * tensors from named_parameters(), forward FLOPs from hooks on every
 * Conv2d and Linear at a 1x3x224x224 input, and the bucket assignment
 * from torch.distributed._compute_bucket_assignment_by_size on the
 * reversed parameters with limits [1 MiB, 25 MiB], which a real DDP run
 * (gloo, bucket_cap_mb=25) rebuilt identically after its first
 * iteration. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "commsim/routing.h"
#include "commsim/workload.h"
#include "commsim/zoo.h"
#include "simutil.h"


static CsScenario *load(const char *yaml, const char *const *sets) {
  GError *e = NULL;
  CsScenario *s = cs_scenario_load_string(yaml, "jobs", sets, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  return s;
}

/* The refusal of `yaml`: its message contains `want`. */
static void refused(const char *yaml, const char *want) {
  GError *e = NULL;
  CsScenario *s = cs_scenario_load_string(yaml, "jobs", NULL, &e);
  if (s) { /* some refusals come once the network is built */
    CsSim *sim = cs_sim_new(s, &e);
    ck_assert_msg(sim == NULL, "accepted: %s", yaml);
    cs_scenario_free(s);
  }
  ck_assert_msg(e && strstr(e->message, want), "want '%s', got '%s'", want, e ? e->message : "(none)");
  g_error_free(e);
}

/* ---- the zoo ---- */

START_TEST(test_zoo_counts) {
  /* parameters: torchvision's and Hugging Face's counts; tensors: named_parameters() */
  static const struct {
    const char *name;
    int64_t params;
    guint tensors;
    double flops; /* forward, one sample; 0: not checked against a reference */
  } want[] = {
      {"resnet50", 25557032, 161, 8178368512.0},  /* torch hooks: conv 8,174,272,512 + fc 4,096,000 */
      {"vgg16", 138357544, 32, 30940528640.0},    /* conv 30,693,261,312 + linear 247,267,328 */
      {"bert-large", 335141888, 391, 0},
      {"gpt2-xl", 1557611200, 580, 0},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    const CsZooModel *m = cs_zoo_find(want[i].name);
    ck_assert_ptr_nonnull(m);
    GArray *L = cs_zoo_layers(m);
    int64_t params = 0;
    guint tensors = 0;
    double flops = 0;
    for (guint k = 0; k < L->len; k++) {
      const CsLayer *l = &g_array_index(L, CsLayer, k);
      params += l->params;
      tensors += l->params > 0;
      flops += l->flops;
    }
    ck_assert_int_eq(params, want[i].params);
    ck_assert_int_eq(m->params, want[i].params);
    ck_assert_uint_eq(tensors, want[i].tensors);
    if (want[i].flops > 0) ck_assert_double_eq(flops, want[i].flops);
    cs_layers_free(L);
  }
  ck_assert_ptr_null(cs_zoo_find("resnet18"));
}
END_TEST

/* BERT-large's FLOPs by hand, 512 tokens: per layer the four d x d
 * projections and the two feed-forward matrices (2 S (4 d^2 + 2 d ff))
 * and attention's two products (4 S^2 d); the pooler on one token. */
START_TEST(test_zoo_transformer_flops) {
  GArray *L = cs_zoo_layers(cs_zoo_find("bert-large"));
  double d = 1024, ff = 4096, S = 512, flops = 0;
  for (guint k = 0; k < L->len; k++) flops += g_array_index(L, CsLayer, k).flops;
  double want = 24 * (2 * S * (4 * d * d + 2 * d * ff) + 4 * S * S * d) + 2 * d * d;
  ck_assert_double_eq_tol(flops, want, 1);
  cs_layers_free(L);
}
END_TEST

/* ---- DDP's buckets ---- */

typedef struct {
  uint64_t elements;
  const char *lo, *hi; /* its tensors' first and last in forward order */
} WantBucket;

static void check_buckets(const char *model, const WantBucket *want, uint32_t n) {
  g_autofree char *y = g_strdup_printf("topology: {type: star, workers: 2}\n"
                                       "workload: {model: %s, buckets: 25MiB}\n", model);
  CsScenario *s = load(y, NULL);
  CsBucketPlan p;
  GError *e = NULL;
  ck_assert(cs_bucket_plan(&s->workload, &p, &e));
  ck_assert_uint_eq(p.n, n);
  for (uint32_t b = 0; b < n; b++) {
    ck_assert_uint_eq(p.elements[b], want[b].elements);
    ck_assert_str_eq(g_array_index(s->workload.layers, CsLayer, p.first_layer[b]).name, want[b].lo);
    ck_assert_str_eq(g_array_index(s->workload.layers, CsLayer, p.last_layer[b]).name, want[b].hi);
    if (b) ck_assert_double_gt(p.ready[b], p.ready[b - 1]); /* in the order the backward pass produces them */
  }
  ck_assert_double_eq(p.ready[n - 1], 1.0);
  cs_bucket_plan_clear(&p);
  cs_scenario_free(s);
}

START_TEST(test_ddp_buckets) {
  /* PyTorch 1.13's assignment, fp32, [1 MiB, 25 MiB] */
  static const WantBucket resnet[] = {
      {2049000, "fc.weight", "fc.bias"},
      {7875584, "layer4.1.conv2.weight", "layer4.2.bn3.bias"},
      {6563840, "layer4.0.conv2.weight", "layer4.1.bn1.bias"},
      {6637568, "layer3.0.downsample.0.weight", "layer4.0.bn1.bias"},
      {2431040, "conv1.weight", "layer3.0.bn3.bias"},
  };
  check_buckets("resnet50", resnet, 5);
  static const WantBucket vgg[] = {
      {4097000, "classifier.6.weight", "classifier.6.bias"},
      {16781312, "classifier.3.weight", "classifier.3.bias"},
      {102764544, "classifier.0.weight", "classifier.0.bias"},
      {7079424, "features.24.weight", "features.28.bias"},
      {7079936, "features.12.weight", "features.21.bias"},
      {555328, "features.0.weight", "features.10.bias"},
  };
  check_buckets("vgg16", vgg, 6);
}
END_TEST

/* workload.device: forward = FLOPs x batch / (tflops x efficiency),
 * backward twice that; the first bucket (fc) is ready after the forward
 * pass and fc's backward. */
START_TEST(test_device_times) {
  CsScenario *s = load("topology: {type: star, workers: 2}\n"
                       "workload: {model: resnet50, device: {tflops: 100, efficiency: 0.5}, batch: 32}\n",
                       NULL);
  double F = 8178368512.0, fc = 2.0 * 2048 * 1000;
  double want = 3 * F * 32 / 50e12;
  ck_assert_double_eq_tol((double)s->workload.compute * 1e-12, want, 161e-12); /* a picosecond per layer */
  CsBucketPlan p;
  GError *e = NULL;
  ck_assert(cs_bucket_plan(&s->workload, &p, &e));
  ck_assert_double_eq_tol(p.ready[0], (F + 2 * fc) / (3 * F), 1e-9);
  cs_bucket_plan_clear(&p);
  cs_scenario_free(s);
  /* without a device, compute is split by FLOPs: forward a third */
  s = load("topology: {type: star, workers: 2}\nworkload: {model: resnet50, compute: 30ms}\n", NULL);
  ck_assert_int_eq(s->workload.compute, 30 * CS_MS);
  ck_assert(cs_bucket_plan(&s->workload, &p, &e));
  ck_assert_double_eq_tol(p.ready[0], (F + 2 * fc) / (3 * F), 1e-9);
  cs_bucket_plan_clear(&p);
  cs_scenario_free(s);
}
END_TEST

/* Layers by hand: c (100k) and b (300k) fill the 1 MiB first bucket
 * (1.6 MB >= 1,048,576 B), ready when the backward pass has run c and b:
 * forward 1 ms + 1 ms + 1 ms = 3 ms of the 5 ms micro-batch; a (1M, 4 MB)
 * is the second, ready at the end.  The same from a CSV file. */
static const char *layers_yaml = "topology: {type: star, workers: 2}\n"
                                 "transport: {protocol: fixed, window: 1000pkt}\n"
                                 "workload:\n  iterations: 1\n  buckets: 2MB\n  collective: ring\n"
                                 "  compression: {cost: {encode: 0, decode: 0, reduce: 0}}\n"
                                 "  layers:\n"
                                 "    - {name: a, params: 1M, forward: 1ms, backward: 2ms}\n"
                                 "    - {name: b, params: 300K, backward: 1ms}\n"
                                 "    - {name: c, params: 100K, backward: 1ms}\n";

static void check_layers_plan(const CsScenario *s) {
  ck_assert_int_eq(s->workload.params, 1400000);
  ck_assert_int_eq(s->workload.compute, 5 * CS_MS);
  CsBucketPlan p;
  GError *e = NULL;
  ck_assert(cs_bucket_plan(&s->workload, &p, &e));
  ck_assert_uint_eq(p.n, 2);
  ck_assert_uint_eq(p.elements[0], 400000);
  ck_assert_uint_eq(p.elements[1], 1000000);
  ck_assert_double_eq_tol(p.ready[0], 0.6, 1e-12);
  ck_assert_double_eq(p.ready[1], 1.0);
  cs_bucket_plan_clear(&p);
}

START_TEST(test_layers) {
  Run r = sim_load(layers_yaml, "layers", NULL);
  check_layers_plan(r.s);
  sim_go(&r);
  /* the first bucket leaves when it is ready, 3 ms into the iteration */
  ck_assert_int_eq(sim_rec(&r, 0, 1)->first_send, 3 * CS_MS);
  ck_assert_int_ge(sim_iter1_end(&r), 5 * CS_MS);
  sim_done(&r);

  g_autofree char *dir = g_dir_make_tmp("commsim-jobs-XXXXXX", NULL);
  g_autofree char *csv = g_build_filename(dir, "layers.csv", NULL);
  g_autofree char *yaml = g_build_filename(dir, "s.yaml", NULL);
  ck_assert(g_file_set_contents(csv, "# a comment\nname,params,forward,backward\na,1M,1ms,2ms\nb,300K,0,1ms\nc,100000,0,0.001\n", -1, NULL));
  ck_assert(g_file_set_contents(yaml, "topology: {type: star, workers: 2}\n"
                                      "workload: {layers_csv: layers.csv, buckets: 2MB}\n", -1, NULL));
  GError *e = NULL;
  CsScenario *s = cs_scenario_load(yaml, NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  check_layers_plan(s);
  cs_scenario_free(s);
  /* a bad cell is refused at its line and column */
  ck_assert(g_file_set_contents(csv, "name,params,backward\na,1M,fast\n", -1, NULL));
  ck_assert_ptr_null(cs_scenario_load(yaml, NULL, &e));
  ck_assert_msg(strstr(e->message, "layers.csv:2:6: error: backward:"), "%s", e->message);
  g_clear_error(&e);
  g_unlink(csv);
  g_unlink(yaml);
  g_rmdir(dir);
}
END_TEST

/* Layers without parameters before the first one that has some (a stem
 * that computes but holds no weights): the last bucket is ready when the
 * backward pass has produced its first layer's gradient (forward 3 ms,
 * then b and a, 1 ms each: 5 ms of the 10 ms micro-batch), not when the
 * stem's 5 ms of backward have run too (it said 1.0, and the second
 * bucket left at 10 ms). */
START_TEST(test_layers_leading_without_params) {
  static const char *y = "topology: {type: star, workers: 2}\n"
                         "transport: {protocol: fixed, window: 100000pkt, ack: 1B}\n"
                         "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                         "workload:\n  iterations: 1\n  buckets: 25MiB\n  collective: ring\n"
                         "  compression: {cost: {encode: 0, decode: 0, reduce: 0}}\n"
                         "  layers:\n"
                         "    - {name: stem, params: 0, forward: 1ms, backward: 5ms}\n"
                         "    - {name: a, params: 1M, forward: 1ms, backward: 1ms}\n"
                         "    - {name: b, params: 1M, forward: 1ms, backward: 1ms}\n";
  Run r = sim_load(y, "stem", NULL);
  CsBucketPlan p;
  GError *e = NULL;
  ck_assert(cs_bucket_plan(&r.s->workload, &p, &e));
  ck_assert_uint_eq(p.n, 2);
  ck_assert_double_eq_tol(p.ready[0], 0.4, 1e-12);
  ck_assert_double_eq_tol(p.ready[1], 0.5, 1e-12);
  ck_assert_str_eq(g_array_index(r.s->workload.layers, CsLayer, p.first_layer[1]).name, "a");
  cs_bucket_plan_clear(&p);
  sim_go(&r);
  /* bucket 0 from 4 ms, bucket 1 right after it (ready at 5 ms), not at
   * 10 ms: both done at 4 ms + 2 x 3.337 ms (two 2 MB ring steps each) */
  double end = (double)sim_iter1_end(&r) * 1e-12;
  ck_assert_msg(end < 0.0107, "iteration %.6f s", end);
  ck_assert_double_ge(end, 0.0106);
  sim_done(&r);
}
END_TEST

/* A layers_csv file refused at the cell at fault: FILE:LINE:COLUMN, the
 * column in characters where the cell's text starts. */
START_TEST(test_layers_csv_refusals) {
  static const struct {
    const char *csv, *want; /* the message after the file's name */
  } bad[] = {
      /* a column twice: the last one won, silently */
      {"name,params,backward,forward,params\na,1M,1ms,1ms,2M\n",
       ":1:30: error: column 'params' is in the header twice (first at column 6): each column once"},
      {" name , params,backward, name\na,1M,1ms,b\n",
       ":1:26: error: column 'name' is in the header twice (first at column 2): each column once"},
      /* every refusal at its cell's column (it said column 1) */
      {"name,params,bakward\na,1M,1ms\n", ":1:13: error: unknown column 'bakward' (did you mean 'backward'?): the columns "
                                         "are name, params, forward, backward, flops"},
      {"name,params,backward\n\xc4\x83,1M,fast\n", /* a name of one character in two bytes */
       ":2:6: error: backward: 'fast' is not a time: expected a number with a unit such as 1.5us"},
      {"name,params,backward\r\na, 1M ,1ms,2ms\r\n", ":2:12: error: 4 cells where the header has 3 columns"},
      {"name,params,backward\na,1M \n", ":2:5: error: 2 cells where the header has 3 columns"},
      {"name,params,flops,backward\na,1,1,1ms\n", ":1:19: error: give times (forward, backward) or flops, not both"},
      /* a byte-order mark is skipped: columns count from the first visible character */
      {"\xef\xbb\xbfname,parms,backward\na,1M,1ms\n",
       ":1:6: error: unknown column 'parms' (did you mean 'params'?): the columns are name, params, forward, backward, flops"},
      /* no layers: at line 1 (it said no line) */
      {"", ":1:1: error: no layers: the file is empty: give a header (name,params,backward...) and a row per layer"},
      {"# only\n\n", ":1:1: error: no layers: the file is empty but for comments: give a header (name,params,backward...) "
                    "and a row per layer"},
      {"# a header\nname,params,backward\n", ":2:1: error: no layers: the header has no row below it: give a row per layer"},
  };
  g_autofree char *dir = g_dir_make_tmp("commsim-csv-XXXXXX", NULL);
  g_autofree char *csv = g_build_filename(dir, "layers.csv", NULL);
  g_autofree char *yaml = g_build_filename(dir, "s.yaml", NULL);
  ck_assert(g_file_set_contents(yaml, "topology: {type: star, workers: 2}\nworkload: {layers_csv: layers.csv}\n", -1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    GError *e = NULL;
    ck_assert(g_file_set_contents(csv, bad[i].csv, -1, NULL));
    ck_assert_ptr_null(cs_scenario_load(yaml, NULL, &e));
    g_autofree char *want = g_strconcat(csv, bad[i].want, NULL);
    ck_assert_str_eq(e->message, want);
    g_clear_error(&e);
  }
  /* Excel's "CSV UTF-8": a byte-order mark before the header */
  ck_assert(g_file_set_contents(csv, "\xef\xbb\xbfname,params,backward\r\na,1M,1ms\r\n", -1, NULL));
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load(yaml, NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  ck_assert_int_eq(s->workload.params, 1000000);
  g_unlink(csv);
  g_unlink(yaml);
  g_rmdir(dir);
}
END_TEST

/* A backward of 0 is a time (a weight whose module's FLOPs sit on another
 * tensor): taken where given, in a list or a CSV; a layer that gives none
 * is still refused. */
START_TEST(test_layers_backward_zero) {
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(
      "topology: {type: star, workers: 2}\n"
      "workload:\n  layers: [{name: a, params: 10, forward: 1ms, backward: 2ms}, {name: b, params: 5, backward: 0}]\n",
      "z.yaml", NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  ck_assert_int_eq(g_array_index(s->workload.layers, CsLayer, 1).backward, 0);
  ck_assert_int_eq(s->workload.compute, 3 * CS_MS);
  ck_assert_ptr_null(cs_scenario_load_string("topology: {type: star, workers: 2}\n"
                                             "workload:\n  layers: [{name: a, params: 10, backward: 2ms}, {name: b, params: 5, forward: 1ms}]\n",
                                             "n.yaml", NULL, &e));
  ck_assert_str_eq(e->message, "n.yaml:3:50: error: the layers: layer 1 (b) has no backward time: give each layer's "
                               "backward (and forward), or flops with workload.device");
  g_clear_error(&e);
  g_autofree char *dir = g_dir_make_tmp("commsim-csv-XXXXXX", NULL);
  g_autofree char *csv = g_build_filename(dir, "layers.csv", NULL);
  g_autofree char *yaml = g_build_filename(dir, "s.yaml", NULL);
  ck_assert(g_file_set_contents(yaml, "topology: {type: star, workers: 2}\nworkload: {layers_csv: layers.csv}\n", -1, NULL));
  ck_assert(g_file_set_contents(csv, "name,params,backward\nw,1M,0\nb,1K,4ms\n", -1, NULL));
  g_autoptr(CsScenario) c = cs_scenario_load(yaml, NULL, &e);
  ck_assert_msg(c != NULL, "%s", e ? e->message : "");
  ck_assert_int_eq(c->workload.compute, 4 * CS_MS);
  /* a CSV without the column gives no layer a backward time */
  ck_assert(g_file_set_contents(csv, "name,params,forward\nw,1M,1ms\n", -1, NULL));
  ck_assert_ptr_null(cs_scenario_load(yaml, NULL, &e));
  ck_assert_ptr_nonnull(strstr(e->message, "error: the layers: layer 0 (w) has no backward time"));
  g_clear_error(&e);
  g_unlink(csv);
  g_unlink(yaml);
  g_rmdir(dir);
}
END_TEST

/* ---- machines ---- */

START_TEST(test_machines) {
  Run r = sim_load("topology: {type: star, workers: 16, gpus_per_host: 8, intra: {bandwidth: 400Gbps, latency: 1us}}\n"
                   "workload: {params: 1M, iterations: 1}\n",
                   "machines", NULL);
  const CsTopology *t = cs_sim_topology(r.sim);
  ck_assert_uint_eq(t->n_workers, 16);
  ck_assert_uint_eq(t->gpus_per_host, 8);
  ck_assert_uint_eq(t->n_links, 2 + 16); /* two NICs, sixteen intra links */
  int64_t w0 = cs_topology_find(t, "w0"), w8 = cs_topology_find(t, "w8"), h0 = cs_topology_find(t, "host0");
  ck_assert(w0 >= 0 && w8 >= 0 && h0 >= 0);
  ck_assert_int_eq(t->nodes[h0].role, CS_ROLE_SWITCH);
  ck_assert_uint_eq(t->nodes[w0].n_ports, 1);
  const CsPort *p = &t->ports[t->nodes[w0].first_port];
  ck_assert_uint_eq(p->peer, (uint32_t)h0);
  ck_assert_int_eq(t->links[p->link].spec.bandwidth, 400000000000LL);
  ck_assert_int_eq(t->nodes[h0].n_ports, 9);
  GError *e = NULL;
  g_autoptr(CsRoutes) routes = cs_routes_build(t, CS_ROUTING_SHORTEST, &e);
  uint32_t w1 = (uint32_t)cs_topology_find(t, "w1");
  ck_assert_int_eq(cs_routes_distance(routes, (uint32_t)w0, (uint32_t)t->nodes[w1].host), 2); /* inside the machine */
  ck_assert_int_eq(cs_routes_distance(routes, (uint32_t)w0, (uint32_t)t->nodes[w8].host), 4);
  sim_done(&r);
}
END_TEST

/* servers_at: a tree of 3 leaves (sw1..sw3) of 4 positions; servers
 * under sw1 and sw3 take each leaf's last position, the 8 workers the
 * first free ones in order, and the 2 idle hosts what is left. */
START_TEST(test_servers_at) {
  Run r = sim_load("topology: {type: tree, leaves: 3, hosts_per_leaf: 4, workers: 8, servers_at: [sw1, sw3]}\n"
                   "workload: {params: 1M, iterations: 1, collective: ps}\n",
                   "servers_at", NULL);
  const CsTopology *t = cs_sim_topology(r.sim);
  ck_assert_uint_eq(t->n_servers, 2);
  static const struct {
    const char *host, *leaf;
  } where[] = {{"ps0", "sw1"}, {"ps1", "sw3"}, {"w0", "sw1"}, {"w2", "sw1"}, {"w3", "sw2"},
               {"w6", "sw2"},  {"w7", "sw3"},  {"h0", "sw3"}, {"h1", "sw3"}};
  for (size_t i = 0; i < G_N_ELEMENTS(where); i++) {
    int64_t n = cs_topology_find(t, where[i].host);
    ck_assert_msg(n >= 0, "%s", where[i].host);
    ck_assert_str_eq(t->nodes[t->ports[t->nodes[n].first_port].peer].name, where[i].leaf);
  }
  sim_go(&r);
  sim_done(&r);
  refused("topology: {type: tree, leaves: 2, hosts_per_leaf: 2, servers_at: [sw1, sw1, sw1]}\n"
          "workload: {params: 1M, collective: ps}\n",
          "every host under 'sw1' already holds a server");
  refused("topology: {type: star, workers: 4, servers_at: [leaf0]}\nworkload: {params: 1M, collective: ps}\n",
          "'leaf0' is not a switch of this topology (its switches: sw0)");
}
END_TEST

/* ---- hierarchical all-reduce ----
 * H = 4 machines of G workers on a star: NICs of 10 Gbps, intra links of
 * 400 Gbps, 1 us each; 8M fp32 elements, one bucket, no codec cost, a
 * window that never limits.  The closed form:
 *   2 (G-1)/G n/B_intra + 2 (H-1)/H n/B_NIC   (n in wire bytes: x 1500/1442)
 * plus per step the path's latency and a packet's store-and-forward per
 * extra hop: 2 (G-1) intra steps (2 hops), 2 (H-1) rail steps (4 hops:
 * the intra link twice and the NIC twice, one packet time at each beyond
 * the first). */
static double hier_time(uint32_t G, const char *collective) {
  g_autofree char *y = g_strdup_printf(
      "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 1GB}\n"
      "topology: {type: star, workers: %u, gpus_per_host: %u%s}\n"
      "transport: {protocol: fixed, window: 100000pkt, ack: 1B}\n"
      "workload:\n  params: 8388608\n  iterations: 1\n  compute: 0\n  buckets: 0\n  collective: %s\n"
      "  compression: {cost: {encode: 0, decode: 0, reduce: 0}}\n",
      4 * G, G, G > 1 ? ", intra: {bandwidth: 400Gbps, latency: 1us}" : "", collective);
  Run r = sim_load(y, "hier", NULL);
  sim_go(&r);
  double t = (double)sim_iter1_end(&r) * 1e-12;
  sim_done(&r);
  return t;
}

START_TEST(test_hierarchical) {
  const double H = 4, n = 8388608.0 * 4 * 1500 / 1442 * 8, Bi = 400e9, Be = 10e9, lat = 1e-6, pkt = 1500 * 8;
  static const uint32_t Gs[] = {1, 2, 8};
  for (size_t i = 0; i < G_N_ELEMENTS(Gs); i++) {
    double G = Gs[i], want;
    if (G == 1) /* a flat ring across the star: 2 hops per step */
      want = 2 * (H - 1) / H * n / Be + 2 * (H - 1) * (2 * lat + pkt / Be);
    else
      want = 2 * (G - 1) / G * n / Bi + 2 * (H - 1) / H * n / Be + 2 * (G - 1) * (2 * lat + pkt / Bi) +
             2 * (H - 1) * (4 * lat + pkt / Bi + 2 * pkt / Be);
    double got = hier_time(Gs[i], "hierarchical");
    ck_assert_msg(fabs(got / want - 1) <= 0.02, "G=%u: simulated %.6f s, closed form %.6f s", Gs[i], got, want);
    if (G == 8) { /* the flat ring on the same machines carries 2 (P-1)/P n through each NIC */
      double ring = hier_time(Gs[i], "ring");
      ck_assert_msg(got < 0.9 * ring, "hierarchical %.6f s, flat ring %.6f s", got, ring);
    }
  }
}
END_TEST

/* What is refused, and why. */
START_TEST(test_refusals) {
  refused("topology: {type: star, workers: 2}\nworkload: {model: resnet18}\n",
          "'resnet18' is not a model of the zoo: use resnet50, vgg16, bert-large or gpt2-xl");
  refused("topology: {type: star, workers: 12, gpus_per_host: 8, intra: {bandwidth: 1Tbps, latency: 1us}}\n"
          "workload: {params: 1M}\n",
          "12 workers do not fill machines of gpus_per_host 8: give a multiple of 8");
  refused("topology: {type: star, workers: 16, gpus_per_host: 8}\nworkload: {params: 1M}\n",
          "need topology.intra: {bandwidth, latency}");
  refused("topology: {type: star, workers: 2}\nworkload: {model: vgg16, params: 1M}\n",
          "workload.params: the model's tensors give the parameters");
  refused("topology: {type: star, workers: 2}\nworkload: {params: 1M, device: {tflops: 100}}\n",
          "workload.device turns a model's FLOPs into times");
  refused("topology: {type: star, workers: 2}\nworkload: {model: vgg16, compute: 1s, device: {tflops: 100}}\n",
          "workload.compute: workload.device sets it from the FLOPs");
  refused("topology: {type: star, workers: 2}\nworkload: {layers: [{params: 0, backward: 1ms}]}\n",
          "the layers hold no parameters");
  refused("topology: {type: star, workers: 2}\nworkload: {layers: [{params: 10, flops: 5}]}\n",
          "set workload.device");
  refused("topology: {type: star, workers: 2}\nworkload: {layers_csv: /nonexistent/x.csv}\n",
          "workload.layers_csv: /nonexistent/x.csv: cannot read");
}
END_TEST

static Suite *jobs_suite(void) {
  Suite *s = suite_create("jobs");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_zoo_counts);
  tcase_add_test(tc, test_zoo_transformer_flops);
  tcase_add_test(tc, test_ddp_buckets);
  tcase_add_test(tc, test_device_times);
  tcase_add_test(tc, test_layers);
  tcase_add_test(tc, test_layers_csv_refusals);
  tcase_add_test(tc, test_layers_leading_without_params);
  tcase_add_test(tc, test_layers_backward_zero);
  tcase_add_test(tc, test_machines);
  tcase_add_test(tc, test_servers_at);
  tcase_add_test(tc, test_hierarchical);
  tcase_add_test(tc, test_refusals);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(jobs_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
