/* routes.c - time to build a fat-tree and its routing tables.
 *
 * Usage: bench/routes [K...]   (default: 8 16 26; k = 26 gives 4,394 hosts)
 * Reports the topology build, the route build (best of 3: one BFS, the
 * rows of the other destinations come when first asked for), the table
 * size once every row is filled, and the time to look up every path from
 * one host (ECMP), which fills every edge switch's row.
 */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  int defaults[] = {8, 16, 26};
  int n = argc > 1 ? argc - 1 : 3;
  printf("%4s %7s %7s %12s %12s %12s %16s\n", "k", "hosts", "nodes", "topology_s", "routes_s",
         "table_MB", "paths_from_1_s");
  for (int i = 0; i < n; i++) {
    int k = argc > 1 ? atoi(argv[i + 1]) : defaults[i];
    g_autofree char *text =
        g_strdup_printf("routing: ecmp\ntopology: {type: fat-tree, k: %d}\nworkload: {params: 1M}\n", k);
    GError *e = NULL;
    CsScenario *s = cs_scenario_load_string(text, "bench.yaml", NULL, &e);
    if (!s) {
      fprintf(stderr, "%s\n", e->message);
      return 1;
    }
    double t0 = wall();
    CsTopology *t = cs_topology_build(s, &e);
    double t_topo = wall() - t0;
    double best = 1e9;
    CsRoutes *r = NULL;
    for (int round = 0; round < 3; round++) {
      cs_routes_free(r);
      t0 = wall();
      r = cs_routes_build(t, CS_ROUTING_ECMP, &e);
      double dt = wall() - t0;
      if (dt < best) best = dt;
    }
    uint32_t ports[64];
    t0 = wall();
    for (uint32_t h = 1; h < t->n_hosts; h++) cs_routes_path(r, t->hosts[0], h, h * 0x9e3779b97f4a7c15ULL, ports, 64);
    double t_paths = wall() - t0;
    printf("%4d %7u %7u %12.4f %12.4f %12.1f %16.4f\n", k, t->n_hosts, t->n_nodes, t_topo, best,
           (double)cs_routes_stats(r).table_bytes / 1e6, t_paths);
    cs_routes_free(r);
    cs_topology_free(t);
    cs_scenario_free(s);
  }
  return 0;
}
