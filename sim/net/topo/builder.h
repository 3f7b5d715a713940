/* builder.h - what a topology generator builds with (private to
 * sim/net/): hosts laid out with their roles, switches, links.  Hosts
 * first (workers w0.. in the first positions, servers ps0.. in the last,
 * idle hosts h0.. between when `workers` leaves some over), then switches
 * sw0.. and links in the generator's documented order. */
#ifndef COMMSIM_NET_TOPO_BUILDER_H
#define COMMSIM_NET_TOPO_BUILDER_H

#include <glib.h>

#include "commsim/topology.h"

struct CsTopoBuilder {
  GArray *nodes; /* CsNode */
  GArray *links; /* CsLink */
  uint32_t switches; /* named so far */
};

/* H hosts with roles by position; the index of the first. */
uint32_t cs_topo_add_hosts(CsTopoBuilder *b, int64_t hosts, int64_t workers, int64_t servers);
uint32_t cs_topo_add_switch(CsTopoBuilder *b);
void cs_topo_add_link(CsTopoBuilder *b, uint32_t a, uint32_t c, const CsLinkSpec *spec);

static inline int64_t cs_min64(int64_t a, int64_t b) { return a < b ? a : b; }

#endif
