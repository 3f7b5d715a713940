/* dumbbell.c - two switches joined by one bottleneck link, the hosts
 * split between them (the first half on the left). */
#include "config.h"

#include "builder.h"

static int64_t build(CsTopoBuilder *b, const CsTopologySpec *t, const CsLinkSpec *d) {
  int64_t H = t->workers + t->servers;
  uint32_t h0 = cs_topo_add_hosts(b, H, t->workers, t->servers);
  uint32_t left = cs_topo_add_switch(b), right = cs_topo_add_switch(b);
  int64_t nleft = (H + 1) / 2;
  for (int64_t i = 0; i < H; i++) cs_topo_add_link(b, h0 + (uint32_t)i, i < nleft ? left : right, d);
  cs_topo_add_link(b, left, right, &t->bottleneck);
  return cs_min64(t->bottleneck.bandwidth, H / 2 * d->bandwidth);
}

const CsTopoGenerator cs_topo_dumbbell = {
    .name = "dumbbell",
    .help = "two switches joined by one bottleneck link (topology.bottleneck), the hosts split between them",
    .takes = (const char *const[]){"workers", "servers", "bottleneck", NULL},
    .needs = (const char *const[]){"workers", NULL},
    .build = build,
};
