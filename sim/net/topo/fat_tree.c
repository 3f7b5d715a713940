/* fat_tree.c - the k-ary fat-tree of Al-Fares et al. (2008): k pods of
 * k/2 edge and k/2 aggregation switches; each edge switch serves k/2
 * hosts; (k/2)^2 cores, aggregation switch j of every pod joins cores
 * j*k/2 .. j*k/2 + k/2 - 1.  Switches are numbered edges pod by pod, then
 * aggregations pod by pod, then cores. */
#include "config.h"

#include "builder.h"

static char *check(const CsTopologySpec *t, const CsLinkSpec *d, const char **key) {
  (void)d;
  *key = "k";
  if (t->k < 2 || t->k % 2 != 0 || t->k > 256)
    return g_strdup_printf("topology.k: a fat-tree needs an even k from 2 to 256, not %" G_GINT64_FORMAT, (gint64)t->k);
  return NULL;
}

static int64_t hosts(const CsTopologySpec *t) { return t->k * t->k * t->k / 4; }

static int64_t build(CsTopoBuilder *b, const CsTopologySpec *t, const CsLinkSpec *d) {
  int64_t k = t->k, half = k / 2, H = hosts(t);
  uint32_t h0 = cs_topo_add_hosts(b, H, t->workers, t->servers);
  uint32_t edge0 = b->nodes->len;
  for (int64_t i = 0; i < k * half; i++) cs_topo_add_switch(b);
  uint32_t agg0 = b->nodes->len;
  for (int64_t i = 0; i < k * half; i++) cs_topo_add_switch(b);
  uint32_t core0 = b->nodes->len;
  for (int64_t i = 0; i < half * half; i++) cs_topo_add_switch(b);
  for (int64_t p = 0; p < k; p++)
    for (int64_t e = 0; e < half; e++) {
      uint32_t edge = edge0 + (uint32_t)(p * half + e);
      for (int64_t i = 0; i < half; i++) cs_topo_add_link(b, h0 + (uint32_t)(p * half * half + e * half + i), edge, d);
      for (int64_t a = 0; a < half; a++) cs_topo_add_link(b, edge, agg0 + (uint32_t)(p * half + a), d);
    }
  for (int64_t p = 0; p < k; p++)
    for (int64_t a = 0; a < half; a++)
      for (int64_t c = 0; c < half; c++)
        cs_topo_add_link(b, agg0 + (uint32_t)(p * half + a), core0 + (uint32_t)(a * half + c), d);
  return H / 2 * d->bandwidth; /* full bisection */
}

const CsTopoGenerator cs_topo_fat_tree = {
    .name = "fat-tree",
    .help = "k-ary fat-tree (Al-Fares et al., 2008): k^3/4 hosts, full bisection",
    .takes = (const char *const[]){"k", "workers", "servers", NULL},
    .needs = (const char *const[]){"k", NULL},
    .check = check,
    .hosts = hosts,
    .build = build,
};
