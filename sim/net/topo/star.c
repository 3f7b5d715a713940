/* star.c - every host on one switch. */
#include "config.h"

#include "builder.h"

static int64_t build(CsTopoBuilder *b, const CsTopologySpec *t, const CsLinkSpec *d) {
  int64_t H = t->workers + t->servers;
  uint32_t h0 = cs_topo_add_hosts(b, H, t->workers, t->servers);
  uint32_t c = cs_topo_add_switch(b);
  for (int64_t i = 0; i < H; i++) cs_topo_add_link(b, h0 + (uint32_t)i, c, d);
  return H / 2 * d->bandwidth; /* a non-blocking switch: half the hosts send to the other half */
}

const CsTopoGenerator cs_topo_star = {
    .name = "star",
    .help = "every host on one non-blocking switch",
    .takes = (const char *const[]){"workers", "servers", NULL},
    .needs = (const char *const[]){"workers", NULL},
    .build = build,
};
