/* tree.c - a two-level tree: `leaves` leaf switches of `hosts_per_leaf`
 * hosts under one root; each leaf's uplink carries its hosts' bandwidth
 * divided by `oversubscription`. */
#include "config.h"

#include <math.h>

#include "builder.h"

static char *check(const CsTopologySpec *t, const CsLinkSpec *d, const char **key) {
  *key = "leaves";
  if (t->leaves < 1) return g_strdup("topology.leaves must be at least 1");
  *key = "hosts_per_leaf";
  if (t->hosts_per_leaf < 1) return g_strdup("topology.hosts_per_leaf must be at least 1");
  if (t->leaves > 1000000 || t->hosts_per_leaf > 1000000 / t->leaves) /* before multiplying */
    return g_strdup("topology: more than 1,000,000 hosts is beyond what commsim simulates");
  *key = "oversubscription";
  if (!(t->oversubscription > 0) || !isfinite(t->oversubscription))
    return g_strdup("topology.oversubscription must be a number larger than 0");
  if (cs_tree_uplink_bps(d->bandwidth, t->hosts_per_leaf, t->oversubscription) < 0) {
    double up = (double)d->bandwidth * (double)t->hosts_per_leaf / t->oversubscription;
    return g_strdup_printf("topology.oversubscription: %g gives leaf uplinks of %.4g bit/s (%" G_GINT64_FORMAT
                           " bit/s x %" G_GINT64_FORMAT " hosts / %g): a bandwidth must lie from 1 bit/s to %.4g bit/s",
                           t->oversubscription, up, (gint64)d->bandwidth, (gint64)t->hosts_per_leaf,
                           t->oversubscription, (double)INT64_MAX);
  }
  return NULL;
}

static int64_t hosts(const CsTopologySpec *t) { return t->leaves * t->hosts_per_leaf; }

static int64_t build(CsTopoBuilder *b, const CsTopologySpec *t, const CsLinkSpec *d) {
  int64_t L = t->leaves, n = t->hosts_per_leaf, H = L * n, bw = d->bandwidth;
  uint32_t h0 = cs_topo_add_hosts(b, H, t->workers, t->servers);
  uint32_t root = cs_topo_add_switch(b);
  CsLinkSpec up = *d;
  up.bandwidth = cs_tree_uplink_bps(bw, n, t->oversubscription); /* in range: checked at load */
  for (int64_t l = 0; l < L; l++) {
    uint32_t leaf = cs_topo_add_switch(b);
    cs_topo_add_link(b, leaf, root, &up);
    for (int64_t i = 0; i < n; i++) cs_topo_add_link(b, h0 + (uint32_t)(l * n + i), leaf, d);
  }
  if (L == 1) return H / 2 * bw;
  return cs_min64(H / 2 * bw, L / 2 * up.bandwidth);
}

const CsTopoGenerator cs_topo_tree = {
    .name = "tree",
    .help = "leaf switches under one root, uplinks oversubscribed by topology.oversubscription",
    .takes = (const char *const[]){"leaves", "hosts_per_leaf", "oversubscription", "workers", "servers", NULL},
    .needs = (const char *const[]){"leaves", "hosts_per_leaf", NULL},
    .check = check,
    .hosts = hosts,
    .build = build,
};
