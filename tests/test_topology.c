/* test_topology.c - every generator's node and link counts, diameter and
 * mean path length against formulas; routing paths; ECMP spread. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/params.h"
#include "commsim/topology.h"

typedef struct {
  CsScenario *s;
  CsTopology *t;
  CsRoutes *r;
} World;

static World build(const char *yaml, CsRouting routing) {
  World w = {0};
  GError *e = NULL;
  g_autofree char *text = g_strdup_printf("%s\nworkload: {params: 1M}\n", yaml);
  w.s = cs_scenario_load_string(text, "t.yaml", NULL, &e);
  ck_assert_msg(w.s != NULL, "%s", e ? e->message : "");
  w.s->routing = routing;
  w.t = cs_topology_build(w.s, &e);
  ck_assert_msg(w.t != NULL, "%s", e ? e->message : "");
  w.r = cs_routes_build(w.t, routing, &e);
  ck_assert_msg(w.r != NULL, "%s", e ? e->message : "");
  return w;
}

static void destroy(World *w) {
  cs_routes_free(w->r);
  cs_topology_free(w->t);
  cs_scenario_free(w->s);
}

/* Every host pair: the path exists, each hop crosses a port of the node it
 * is at, its length equals the BFS distance, and it ends at the target. */
static void check_all_paths(World *w) {
  uint32_t ports[1024];
  for (uint32_t a = 0; a < w->t->n_hosts; a++)
    for (uint32_t b = 0; b < w->t->n_hosts; b++) {
      if (a == b) continue;
      uint32_t node = w->t->hosts[a];
      int hops = cs_routes_path(w->r, node, b, a * 7919u + b, ports, 1024);
      ck_assert_int_eq(hops, cs_routes_distance(w->r, node, b));
      for (int i = 0; i < hops; i++) {
        const CsNode *n = &w->t->nodes[node];
        ck_assert(ports[i] >= n->first_port && ports[i] < n->first_port + n->n_ports);
        node = w->t->ports[ports[i]].peer;
      }
      ck_assert_uint_eq(node, w->t->hosts[b]);
    }
}

START_TEST(test_star) {
  World w = build("topology: {type: star, workers: 7, servers: 2}", CS_ROUTING_SHORTEST);
  /* H hosts + 1 switch, H links; every path host-switch-host: 2 hops */
  ck_assert_uint_eq(w.t->n_hosts, 9);
  ck_assert_uint_eq(w.t->n_switches, 1);
  ck_assert_uint_eq(w.t->n_links, 9);
  ck_assert_uint_eq(w.t->n_workers, 7);
  ck_assert_uint_eq(w.t->n_servers, 2);
  /* names and positions: workers first, servers last (SPEC 3.0) */
  ck_assert_str_eq(w.t->nodes[w.t->hosts[0]].name, "w0");
  ck_assert_str_eq(w.t->nodes[w.t->hosts[7]].name, "ps0");
  ck_assert_str_eq(w.t->nodes[w.t->hosts[8]].name, "ps1");
  ck_assert_str_eq(w.t->nodes[9].name, "sw0");
  CsRouteStats st = cs_routes_stats(w.r);
  ck_assert_int_eq(st.diameter, 2);
  ck_assert_double_eq_tol(st.mean_hops, 2.0, 1e-12);
  ck_assert_int_eq(w.t->bisection_bps, 4 * 10000000000LL); /* floor(9/2) host links */
  check_all_paths(&w);
  destroy(&w);
}
END_TEST

START_TEST(test_ring) {
  int sizes[] = {2, 3, 8, 9};
  for (int i = 0; i < 4; i++) {
    int H = sizes[i];
    g_autofree char *y = g_strdup_printf("topology: {type: ring, workers: %d}", H);
    World w = build(y, CS_ROUTING_SHORTEST);
    /* H links (one for H = 2), no switches; diameter floor(H/2); the sum
     * of distances from one host is H^2/4 (H even) or (H^2-1)/4 (H odd) */
    ck_assert_uint_eq(w.t->n_links, H == 2 ? 1 : H);
    ck_assert_uint_eq(w.t->n_switches, 0);
    CsRouteStats st = cs_routes_stats(w.r);
    ck_assert_int_eq(st.diameter, H / 2);
    double sum = H % 2 == 0 ? H * H / 4.0 : (H * H - 1) / 4.0;
    ck_assert_double_eq_tol(st.mean_hops, sum / (H - 1), 1e-12);
    check_all_paths(&w);
    destroy(&w);
  }
}
END_TEST

START_TEST(test_dumbbell) {
  World w = build("topology: {type: dumbbell, workers: 5, servers: 1, bottleneck: {bandwidth: 1Gbps, latency: 7us}}",
                  CS_ROUTING_SHORTEST);
  /* H + 1 links, 2 switches; the first ceil(H/2) hosts on sw0 */
  ck_assert_uint_eq(w.t->n_links, 7);
  ck_assert_uint_eq(w.t->n_switches, 2);
  CsRouteStats st = cs_routes_stats(w.r);
  ck_assert_int_eq(st.diameter, 3);
  /* from each host: 2 on its side at 2 hops, 3 across at 3: (4 + 9)/5 */
  ck_assert_double_eq_tol(st.mean_hops, 13.0 / 5.0, 1e-12);
  const CsLink *b = &w.t->links[w.t->n_links - 1];
  ck_assert_str_eq(w.t->nodes[b->a].name, "sw0");
  ck_assert_str_eq(w.t->nodes[b->b].name, "sw1");
  ck_assert_int_eq(b->spec.bandwidth, 1000000000LL);
  ck_assert_int_eq(b->spec.latency, 7 * CS_US);
  ck_assert_int_eq(w.t->links[0].spec.bandwidth, 10000000000LL); /* hosts: defaults */
  ck_assert_int_eq(w.t->bisection_bps, 1000000000LL);
  check_all_paths(&w);
  destroy(&w);
}
END_TEST

START_TEST(test_fat_tree) {
  int ks[] = {2, 4, 6, 8};
  for (int i = 0; i < 4; i++) {
    int k = ks[i];
    g_autofree char *y = g_strdup_printf("topology: {type: fat-tree, k: %d, servers: 1}", k);
    World w = build(y, CS_ROUTING_SHORTEST);
    /* Al-Fares et al.: k^3/4 hosts, 5k^2/4 switches, 3k^3/4 links */
    ck_assert_uint_eq(w.t->n_hosts, k * k * k / 4);
    ck_assert_uint_eq(w.t->n_switches, 5 * k * k / 4);
    ck_assert_uint_eq(w.t->n_links, 3 * k * k * k / 4);
    ck_assert_uint_eq(w.t->n_servers, 1);
    ck_assert_uint_eq(w.t->n_workers, k * k * k / 4 - 1);
    CsRouteStats st = cs_routes_stats(w.r);
    /* From one host: k/2 - 1 under its edge (2 hops), (k/2)(k/2 - 1) in its
     * pod (4 hops), (k - 1) k^2/4 in other pods (6 hops). */
    double h = k / 2.0, H = k * k * k / 4.0;
    double mean = ((h - 1) * 2 + h * (h - 1) * 4 + (k - 1) * h * h * 6) / (H - 1);
    ck_assert_int_eq(st.diameter, k == 2 ? 6 : 6);
    ck_assert_double_eq_tol(st.mean_hops, mean, 1e-9);
    ck_assert_int_eq(w.t->bisection_bps, (int64_t)(H / 2) * 10000000000LL);
    if (k <= 6) check_all_paths(&w);
    destroy(&w);
  }
}
END_TEST

START_TEST(test_torus) {
  int dims[][2] = {{4, 4}, {3, 5}, {2, 3}, {1, 5}};
  for (int i = 0; i < 4; i++) {
    int X = dims[i][0], Y = dims[i][1];
    g_autofree char *y = g_strdup_printf("topology: {type: torus2d, x: %d, y: %d}", X, Y);
    World w = build(y, CS_ROUTING_SHORTEST);
    /* links per dimension: d >= 3: d per line (wraparound), 2: 1, 1: 0 */
    int lx = X >= 3 ? X : X - 1, ly = Y >= 3 ? Y : Y - 1;
    ck_assert_uint_eq(w.t->n_links, lx * Y + ly * X);
    ck_assert_uint_eq(w.t->n_hosts, X * Y);
    CsRouteStats st = cs_routes_stats(w.r);
    ck_assert_int_eq(st.diameter, X / 2 + Y / 2);
    check_all_paths(&w);
    destroy(&w);
  }
}
END_TEST

START_TEST(test_tree) {
  World w = build("defaults: {bandwidth: 10Gbps}\n"
                  "topology: {type: tree, leaves: 4, hosts_per_leaf: 6, oversubscription: 3, servers: 2}",
                  CS_ROUTING_SHORTEST);
  /* L + 1 switches, L*n hosts, L uplinks + L*n host links */
  ck_assert_uint_eq(w.t->n_switches, 5);
  ck_assert_uint_eq(w.t->n_hosts, 24);
  ck_assert_uint_eq(w.t->n_links, 4 + 24);
  /* uplink = 10 Gbps * 6 / 3 = 20 Gbps */
  int uplinks = 0;
  for (uint32_t l = 0; l < w.t->n_links; l++)
    if (w.t->links[l].spec.bandwidth == 20000000000LL) uplinks++;
  ck_assert_int_eq(uplinks, 4);
  CsRouteStats st = cs_routes_stats(w.r);
  ck_assert_int_eq(st.diameter, 4);
  /* from a host: 5 on its leaf at 2 hops, 18 elsewhere at 4: (10 + 72)/23 */
  ck_assert_double_eq_tol(st.mean_hops, 82.0 / 23.0, 1e-12);
  /* bisection: min(12 host links, 2 uplinks) = 40 Gbps */
  ck_assert_int_eq(w.t->bisection_bps, 40000000000LL);
  check_all_paths(&w);
  destroy(&w);
}
END_TEST

START_TEST(test_idle_hosts) {
  World w = build("topology: {type: fat-tree, k: 4, workers: 8, servers: 2}", CS_ROUTING_SHORTEST);
  /* 16 hosts: w0..w7, then 6 idle h0..h5, then ps0, ps1 */
  ck_assert_uint_eq(w.t->n_workers, 8);
  ck_assert_uint_eq(w.t->n_servers, 2);
  ck_assert_str_eq(w.t->nodes[w.t->hosts[8]].name, "h0");
  ck_assert_str_eq(w.t->nodes[w.t->hosts[13]].name, "h5");
  ck_assert_str_eq(w.t->nodes[w.t->hosts[14]].name, "ps0");
  ck_assert_int_eq(w.t->nodes[w.t->hosts[8]].role, CS_ROLE_HOST);
  destroy(&w);
}
END_TEST

START_TEST(test_explicit) {
  World w = build("nodes:\n"
                  "  - {name: s2, role: switch}\n  - {name: a, role: worker}\n"
                  "  - {name: s1, role: switch}\n  - {name: b, role: server}\n"
                  "links:\n  - {a: a, b: s1}\n  - {a: s1, b: s2}\n  - {a: s2, b: b, bandwidth: 1Gbps}\n",
                  CS_ROUTING_SHORTEST);
  /* hosts are numbered first, in declaration order, then switches */
  ck_assert_str_eq(w.t->nodes[0].name, "a");
  ck_assert_str_eq(w.t->nodes[1].name, "b");
  ck_assert_str_eq(w.t->nodes[2].name, "s2");
  ck_assert_uint_eq(w.t->n_links, 3);
  ck_assert_int_eq(w.t->bisection_bps, -1);
  CsRouteStats st = cs_routes_stats(w.r);
  ck_assert_int_eq(st.diameter, 3);
  ck_assert_int_eq(cs_topology_find(w.t, "s1"), 3);
  ck_assert_int_eq(cs_topology_find(w.t, "zz"), -1);
  check_all_paths(&w);
  destroy(&w);
}
END_TEST

/* Shortest routing breaks ties by node order: on a fat-tree every flow
 * between two pods takes the lowest-numbered aggregation and core switch. */
START_TEST(test_shortest_tie_break) {
  World w = build("topology: {type: fat-tree, k: 4}", CS_ROUTING_SHORTEST);
  uint32_t ports[16];
  for (uint64_t flow = 0; flow < 100; flow++) {
    int hops = cs_routes_path(w.r, w.t->hosts[0], 15, flow, ports, 16);
    ck_assert_int_eq(hops, 6);
    /* hop 0: host->edge; 1: edge->agg; 2: agg->core.  Switch numbering:
     * 8 edges sw0..sw7, 8 aggs sw8..sw15, 4 cores sw16..sw19. */
    ck_assert_str_eq(w.t->nodes[w.t->ports[ports[1]].peer].name, "sw8");
    ck_assert_str_eq(w.t->nodes[w.t->ports[ports[2]].peer].name, "sw16");
  }
  destroy(&w);
}
END_TEST

/* ECMP: flows from pod 0 to pod 3 spread over the (k/2)^2 core switches
 * evenly: each within 10 % of 10000 / (k/2)^2. */
START_TEST(test_ecmp_spread) {
  int k = 8;
  World w = build("topology: {type: fat-tree, k: 8}", CS_ROUTING_ECMP);
  int cores = (k / 2) * (k / 2);
  uint32_t core0 = w.t->n_nodes - (uint32_t)cores;
  int count[64] = {0};
  uint32_t ports[16];
  uint32_t dst = w.t->n_hosts - 1; /* last host, in the last pod */
  for (uint64_t flow = 0; flow < 10000; flow++) {
    uint64_t hash = flow * 0x9e3779b97f4a7c15ULL; /* flows' hashes, as the transport will give them */
    int hops = cs_routes_path(w.r, w.t->hosts[0], dst, hash, ports, 16);
    ck_assert_int_eq(hops, 6);
    uint32_t core = w.t->ports[ports[2]].peer;
    ck_assert_uint_ge(core, core0);
    count[core - core0]++;
  }
  double even = 10000.0 / cores;
  for (int c = 0; c < cores; c++)
    ck_assert_msg(fabs(count[c] - even) <= 0.1 * even, "core %d carries %d flows, even is %.0f", c,
                  count[c], even);
  /* the same flow always takes the same path */
  uint32_t p1[16], p2[16];
  cs_routes_path(w.r, w.t->hosts[3], dst, 12345, p1, 16);
  cs_routes_path(w.r, w.t->hosts[3], dst, 12345, p2, 16);
  ck_assert_int_eq(memcmp(p1, p2, sizeof(uint32_t) * 6), 0);
  destroy(&w);
}
END_TEST

/* Routing tables beyond CS_ROUTES_MAX_BYTES are refused with an estimate:
 * a torus's hosts are their own routers, one row each. */
START_TEST(test_routes_too_large) {
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string("topology: {type: torus2d, x: 260, y: 260}\nworkload: {params: 1M}\n",
                                                    "big.yaml", NULL, &e);
  ck_assert_ptr_nonnull(s);
  g_autoptr(CsTopology) t = cs_topology_build(s, &e);
  ck_assert_ptr_nonnull(t);
  /* 67600 rows x 67600 nodes x 2 B = 9,139,520,000 B = 8.5 GiB > 8 GiB */
  ck_assert_ptr_null(cs_routes_build(t, CS_ROUTING_SHORTEST, &e));
  ck_assert_str_eq(e->message, "error: the routing tables of 67600 destinations x 67600 nodes would take 8.5 GiB (2 "
                               "bytes each); commsim refuses more than 8 GiB");
  g_clear_error(&e);
}
END_TEST

/* Hops from every node to host h by a plain search from h itself. */
static void naive_hops(const CsTopology *t, uint32_t h, int *d) {
  uint32_t *q = g_new(uint32_t, t->n_nodes);
  for (uint32_t n = 0; n < t->n_nodes; n++) d[n] = -1;
  uint32_t head = 0, tail = 0;
  d[t->hosts[h]] = 0;
  q[tail++] = t->hosts[h];
  while (head < tail) {
    uint32_t n = q[head++];
    for (uint32_t p = t->nodes[n].first_port; p < t->nodes[n].first_port + t->nodes[n].n_ports; p++)
      if (d[t->ports[p].peer] < 0) {
        d[t->ports[p].peer] = d[n] + 1;
        q[tail++] = t->ports[p].peer;
      }
  }
  g_free(q);
}

/* The rows are shared by the hosts on one switch (a star: one row; a
 * fat-tree: one per edge switch; a machine of GPUs: one per internal
 * switch) or are a host's own (a torus, a host on two switches), and the
 * distances from every node to every host are those of a search from the
 * host itself. */
START_TEST(test_route_rows) {
  static const struct {
    const char *yaml;
    uint32_t rows;
  } cases[] = {
      {"topology: {type: star, workers: 300}", 1},
      {"topology: {type: fat-tree, k: 4}", 8},
      {"topology: {type: torus2d, x: 4, y: 3}", 12},
      {"topology: {type: ring, workers: 5}", 5},
      {"topology: {type: dumbbell, workers: 5}", 2},
      {"topology: {type: tree, leaves: 3, hosts_per_leaf: 4}", 3},
      {"topology: {type: fat-tree, k: 4, gpus_per_host: 4, intra: {bandwidth: 100Gbps, latency: 1us}}", 16},
      /* h0 on s0 and s1 (its own row), h1 on s1, h2 on s0; s2 on no link, unreached from any host */
      {"nodes: [{name: h0, role: worker}, {name: h1, role: worker}, {name: h2, role: worker}, {name: s0, role: switch},"
       " {name: s1, role: switch}, {name: s2, role: switch}]\nlinks: [{a: h0, b: s0}, {a: h0, b: s1}, {a: h1, b: s1}, {a: h2, b: s0},"
       " {a: s0, b: s1}]",
       3},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    for (CsRouting mode = CS_ROUTING_SHORTEST; mode <= CS_ROUTING_ECMP; mode++) {
      World w = build(cases[i].yaml, mode);
      int *d = g_new(int, w.t->n_nodes);
      for (uint32_t h = 0; h < w.t->n_hosts; h++) {
        naive_hops(w.t, h, d);
        for (uint32_t n = 0; n < w.t->n_nodes; n++)
          ck_assert_msg(cs_routes_distance(w.r, n, h) == d[n], "%s: node %u to host %u: %d, not %d", cases[i].yaml, n,
                        h, cs_routes_distance(w.r, n, h), d[n]);
      }
      g_free(d);
      ck_assert_msg(cs_routes_stats(w.r).table_bytes == (size_t)cases[i].rows * w.t->n_nodes * 2, "%s: %zu bytes",
                    cases[i].yaml, cs_routes_stats(w.r).table_bytes);
      check_all_paths(&w);
      destroy(&w);
    }
  }
}
END_TEST

/* The next hop against a search from the host itself, for every node
 * and host: a port of the node whose far end is one hop nearer; with
 * shortest routing the first such port; with ECMP the one the flow's hash
 * picks among them in port order (the hash below is the one paths are
 * drawn with: changing it changes every ECMP result), asked twice (at a
 * node of more than four ports, the second answer comes from the ports
 * kept per node and row: k = 6, both graphs, the machines' switches).  A path is
 * drawn exactly when some hop of it has more than one such port. */
static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

START_TEST(test_next_port) {
  static const char *const yamls[] = {
      "topology: {type: fat-tree, k: 4}",
      "topology: {type: fat-tree, k: 6}",
      "topology: {type: star, workers: 7}", /* (the switch toward a host: its one port, found without a scan) */
      "topology: {type: torus2d, x: 4, y: 3}",
      "topology: {type: dumbbell, workers: 5}",
      "topology: {type: tree, leaves: 3, hosts_per_leaf: 4}",
      "topology: {type: fat-tree, k: 4, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 1us}}",
      /* h0 on two switches (its own row, kept at s2: s0 or s1); every switch of 5 or 6 ports, kept */
      "nodes: [{name: h0, role: worker}, {name: h1, role: worker}, {name: h2, role: worker}, {name: h3, role: worker},"
      " {name: h4, role: worker}, {name: h5, role: worker}, {name: h6, role: worker}, {name: h7, role: worker},"
      " {name: h8, role: worker}, {name: s0, role: switch}, {name: s1, role: switch}, {name: s2, role: switch}]\n"
      "links: [{a: h0, b: s0}, {a: h0, b: s1}, {a: h1, b: s2}, {a: h2, b: s2}, {a: h3, b: s2}, {a: h4, b: s0},"
      " {a: h5, b: s0}, {a: h8, b: s0}, {a: h6, b: s1}, {a: h7, b: s1}, {a: s0, b: s2}, {a: s1, b: s2}, {a: s0, b: s1}]",
      /* x, y, z hang off h0, a worker of 5 ports: they share h0's row, kept at h0 (s0 or s1 toward s2's hosts)
       * and at s2 (s0 or s1 toward h0's row) */
      "nodes: [{name: h0, role: worker}, {name: x, role: worker}, {name: y, role: worker}, {name: z, role: worker},"
      " {name: h1, role: worker}, {name: h2, role: worker}, {name: h3, role: worker}, {name: h4, role: worker},"
      " {name: h5, role: worker}, {name: h6, role: worker}, {name: h7, role: worker}, {name: h8, role: worker},"
      " {name: s0, role: switch}, {name: s1, role: switch}, {name: s2, role: switch}]\n"
      "links: [{a: h0, b: s0}, {a: h0, b: s1}, {a: h0, b: x}, {a: h0, b: y}, {a: h0, b: z}, {a: h1, b: s0},"
      " {a: h2, b: s0}, {a: h3, b: s1}, {a: h4, b: s1}, {a: h5, b: s2}, {a: h6, b: s2}, {a: h7, b: s2}, {a: h8, b: s2},"
      " {a: s0, b: s1}, {a: s0, b: s2}, {a: s1, b: s2}]",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(yamls); i++)
    for (CsRouting mode = CS_ROUTING_SHORTEST; mode <= CS_ROUTING_ECMP; mode++) {
      World w = build(yamls[i], mode);
      const CsTopology *t = w.t;
      int *d = g_new(int, t->n_nodes);
      uint32_t *near = g_new(uint32_t, 2 * (size_t)t->n_links + 1);
      uint32_t drawn_paths = 0;
      for (uint32_t h = 0; h < t->n_hosts; h++) {
        naive_hops(t, h, d);
        for (uint32_t node = 0; node < t->n_nodes; node++) {
          if (node == t->hosts[h] || d[node] < 0) continue;
          const CsNode *n = &t->nodes[node];
          uint32_t count = 0;
          for (uint32_t p = n->first_port; p < n->first_port + n->n_ports; p++)
            if (d[t->ports[p].peer] == d[node] - 1) near[count++] = p;
          ck_assert_uint_gt(count, 0);
          /* all of them, in port order, from the kept ports too (asked
           * twice); a smaller cap fills that many and counts them all */
          for (int again = 0; again < 2; again++) {
            uint32_t got[64] = {0}, k = cs_routes_next_ports(w.r, node, h, got, 64);
            ck_assert_msg(k == count, "%s, mode %d: node %s to host %u: %u ports nearer, not %u", yamls[i], mode, n->name,
                          h, k, count);
            for (uint32_t j = 0; j < count; j++) ck_assert_uint_eq(got[j], near[j]);
            uint32_t one[2] = {UINT32_MAX, UINT32_MAX};
            ck_assert_uint_eq(cs_routes_next_ports(w.r, node, h, one, 1), count);
            ck_assert_uint_eq(one[0], near[0]);
            ck_assert_uint_eq(one[1], UINT32_MAX);
          }
          for (uint64_t f = 0; f < 16; f++) {
            uint64_t flow = f * 0x9e3779b97f4a7c15ULL;
            uint32_t want = mode == CS_ROUTING_SHORTEST
                                ? near[0]
                                : near[mix(flow ^ mix((uint64_t)node + 0x9e3779b97f4a7c15ULL)) % count];
            for (int again = 0; again < 2; again++)
              ck_assert_msg(cs_routes_next_port(w.r, node, h, flow) == want, "%s, mode %d: node %s to host %u, flow %lu",
                            yamls[i], mode, n->name, h, (unsigned long)f);
          }
        }
        /* drawn: some hop of the path had a choice */
        for (uint32_t a = 0; a < t->n_hosts; a++) {
          if (a == h) continue;
          uint32_t ports[64];
          bool drawn = true, choice = false;
          int hops = cs_routes_path_drawn(w.r, t->hosts[a], h, 12345, ports, 64, &drawn);
          ck_assert_int_eq(hops, d[t->hosts[a]]);
          uint32_t node = t->hosts[a];
          for (int k = 0; k < hops; k++) {
            const CsNode *n = &t->nodes[node];
            uint32_t count = 0;
            for (uint32_t p = n->first_port; p < n->first_port + n->n_ports; p++) count += d[t->ports[p].peer] == d[node] - 1;
            choice |= count > 1;
            node = t->ports[ports[k]].peer;
          }
          ck_assert_msg(drawn == (choice && mode != CS_ROUTING_SHORTEST), "%s, mode %d: host %u to %u", yamls[i], mode, a, h);
          drawn_paths += drawn;
        }
      }
      /* every case but the star, the dumbbell and the tree has pairs with a choice of paths */
      if (mode == CS_ROUTING_ECMP && !strstr(yamls[i], "star") && !strstr(yamls[i], "dumbbell") &&
          !strstr(yamls[i], "tree, leaves"))
        ck_assert_msg(drawn_paths > 0, "%s: no path drawn", yamls[i]);
      g_free(near);
      g_free(d);
      destroy(&w);
    }
}
END_TEST

/* The generators' table: every row whole, named as topology.type's
 * values (which the reference lists), and what each takes covers what it
 * needs. */
START_TEST(test_generator_table) {
  const char *const *names = cs_topo_generator_names();
  const CsParam *type = cs_param_find("topology.type");
  ck_assert_ptr_nonnull(type);
  size_t n = 0;
  for (size_t i = 1; cs_topo_generators[i]; i++, n++) {
    const CsTopoGenerator *g = cs_topo_generators[i];
    ck_assert_str_eq(names[i - 1], g->name);
    ck_assert_str_eq(cs_topo_type_name((CsTopoType)i), g->name);
    ck_assert(g->build && g->help && g->takes && g->needs);
    for (const char *const *k = g->needs; *k; k++) ck_assert(g_strv_contains(g->takes, *k));
    g_autofree char *quoted = g_strdup_printf("`%s`", g->name);
    ck_assert_msg(strstr(type->values, quoted), "topology.type's reference does not list %s", g->name);
  }
  ck_assert_uint_eq(n, 6);
  ck_assert_ptr_null(names[n]);
  ck_assert_ptr_null(cs_topo_generators[CS_TOPO_EXPLICIT]->build);
}
END_TEST

/* links_override changes only the links its patterns match, in either
 * orientation, entries in order (a later one wins); a pattern that
 * matches nothing is an error naming it, at its location. */
START_TEST(test_links_override) {
  World w = build("topology: {type: star, workers: 4}\n"
                  "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                  "links_override:\n"
                  "  - {match: sw0-w1, loss: 0.01}\n"
                  "  - {match: 'w*-sw0', bandwidth: 25Gbps}\n"
                  "  - {match: w3-sw0, bandwidth: 1Gbps, latency: 5us}\n",
                  CS_ROUTING_SHORTEST);
  for (uint32_t l = 0; l < w.t->n_links; l++) {
    const CsLink *k = &w.t->links[l];
    const char *host = w.t->nodes[k->a].role == CS_ROLE_SWITCH ? w.t->nodes[k->b].name : w.t->nodes[k->a].name;
    bool w1 = !strcmp(host, "w1"), w3 = !strcmp(host, "w3");
    ck_assert_int_eq(k->spec.loss.model, w1 ? CS_LOSS_BERNOULLI : CS_LOSS_NONE);
    if (w1) ck_assert_double_eq(k->spec.loss.rate, 0.01);
    ck_assert_int_eq(k->spec.bandwidth, w3 ? 1000000000LL : 25000000000LL);
    ck_assert_int_eq(k->spec.latency, w3 ? 5 * CS_US : CS_US);
  }
  destroy(&w);
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string("topology: {type: star, workers: 4}\n"
                                                    "links_override: [{match: 'w9-*', loss: 0.5}]\n"
                                                    "workload: {params: 1M}\n",
                                                    "o.yaml", NULL, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  CsTopology *t = cs_topology_build(s, &e);
  ck_assert_ptr_null(t);
  ck_assert_msg(strstr(e->message, "o.yaml:2:") && strstr(e->message, "'w9-*' matches no link"), "%s", e->message);
  g_error_free(e);
}
END_TEST

static Suite *topology_suite(void) {
  Suite *s = suite_create("topology");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_star);
  tcase_add_test(tc, test_generator_table);
  tcase_add_test(tc, test_ring);
  tcase_add_test(tc, test_dumbbell);
  tcase_add_test(tc, test_fat_tree);
  tcase_add_test(tc, test_torus);
  tcase_add_test(tc, test_tree);
  tcase_add_test(tc, test_idle_hosts);
  tcase_add_test(tc, test_explicit);
  tcase_add_test(tc, test_shortest_tie_break);
  tcase_add_test(tc, test_ecmp_spread);
  tcase_add_test(tc, test_next_port);
  tcase_add_test(tc, test_routes_too_large);
  tcase_add_test(tc, test_route_rows);
  tcase_add_test(tc, test_links_override);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(topology_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
