/* ring.c - hosts in a cycle, each linked to the next (no switch). */
#include "config.h"

#include "builder.h"

static int64_t build(CsTopoBuilder *b, const CsTopologySpec *t, const CsLinkSpec *d) {
  int64_t H = t->workers + t->servers;
  uint32_t h0 = cs_topo_add_hosts(b, H, t->workers, t->servers);
  for (int64_t i = 0; i < H; i++) {
    if (H == 2 && i == 1) break; /* a ring of two is one link */
    cs_topo_add_link(b, h0 + (uint32_t)i, h0 + (uint32_t)((i + 1) % H), d);
  }
  return H == 2 ? d->bandwidth : 2 * d->bandwidth; /* a cut through a cycle crosses two links */
}

const CsTopoGenerator cs_topo_ring = {
    .name = "ring",
    .help = "hosts in a cycle, each linked to the next, no switch",
    .takes = (const char *const[]){"workers", "servers", NULL},
    .needs = (const char *const[]){"workers", NULL},
    .build = build,
};
