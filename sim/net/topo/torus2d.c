/* torus2d.c - an x by y grid of hosts with wraparound, each host linked
 * to its +x and +y neighbours (no switch). */
#include "config.h"

#include "builder.h"

static char *check(const CsTopologySpec *t, const CsLinkSpec *d, const char **key) {
  (void)d;
  *key = t->x < 1 || t->x > 65536 ? "x" : "y";
  if (t->x < 1 || t->x > 65536) return g_strdup("topology.x must be from 1 to 65536");
  if (t->y < 1 || t->y > 65536) return g_strdup("topology.y must be from 1 to 65536");
  return NULL;
}

static int64_t hosts(const CsTopologySpec *t) { return t->x * t->y; }

static int64_t build(CsTopoBuilder *b, const CsTopologySpec *t, const CsLinkSpec *d) {
  int64_t X = t->x, Y = t->y, H = X * Y;
  uint32_t h0 = cs_topo_add_hosts(b, H, t->workers, t->servers);
  for (int64_t j = 0; j < Y; j++)
    for (int64_t i = 0; i < X; i++) {
      uint32_t me = h0 + (uint32_t)(j * X + i);
      /* +x neighbour; with X == 2 the wraparound is the same link, with
       * X == 1 there is none. */
      if (X >= 3 || (X == 2 && i == 0)) cs_topo_add_link(b, me, h0 + (uint32_t)(j * X + (i + 1) % X), d);
      if (Y >= 3 || (Y == 2 && j == 0)) cs_topo_add_link(b, me, h0 + (uint32_t)(((j + 1) % Y) * X + i), d);
    }
  /* Halve across the longer side: the cut crosses each row (column) of
   * the other side twice with wraparound, once without. */
  int64_t longer = X >= Y ? X : Y, shorter = X >= Y ? Y : X;
  if (longer < 2) return -1;
  return shorter * (longer >= 3 ? 2 : 1) * d->bandwidth;
}

const CsTopoGenerator cs_topo_torus2d = {
    .name = "torus2d",
    .help = "x by y hosts with wraparound, each linked to its +x and +y neighbours",
    .takes = (const char *const[]){"x", "y", "workers", "servers", NULL},
    .needs = (const char *const[]){"x", "y", NULL},
    .check = check,
    .hosts = hosts,
    .build = build,
};
