/* topology.h - the network as nodes, links and ports.
 *
 * Built from a scenario's `topology:` generator or its explicit `nodes:`
 * and `links:`.  Nodes are numbered hosts first (workers, then idle hosts,
 * then servers, as SPEC 3.0 places them), then switches; a node's ports
 * are sorted by the node at their far end, so "the first port that leads
 * there" breaks ties by node order.  Names are for set-up and output only:
 * nothing on the simulated path looks a name up.
 */
#ifndef COMMSIM_TOPOLOGY_H
#define COMMSIM_TOPOLOGY_H

#include <glib.h>
#include <stdint.h>

#include "commsim/scenario.h"

typedef struct {
  char *name;
  CsRole role;
  uint32_t first_port, n_ports; /* this node's ports: topo->ports[first_port ..] */
  int32_t host;                 /* index among hosts, -1 for a switch */
} CsNode;

typedef struct {
  uint32_t a, b; /* node indices; direction 0 is a->b, 1 is b->a */
  CsLinkSpec spec;
} CsLink;

/* One direction of a link, seen from the node that sends on it. */
typedef struct {
  uint32_t link;
  uint32_t peer; /* node at the far end */
  uint8_t dir;   /* 0: link.a -> link.b */
} CsPort;

typedef struct {
  CsNode *nodes;
  uint32_t n_nodes;
  CsLink *links;
  uint32_t n_links;
  CsPort *ports; /* 2 * n_links, grouped by node */
  uint32_t *hosts, n_hosts; /* node indices, in host order */
  uint32_t *workers, n_workers;
  uint32_t *servers, n_servers;
  uint32_t n_switches;
  int64_t bisection_bps; /* -1 when the generator does not know it */
  GHashTable *by_name;   /* name -> node index + 1 */
} CsTopology;

/* Build the network of a scenario and check every name the scenario uses
 * (flows, background, workload servers) against it. */
CsTopology *cs_topology_build(const CsScenario *s, GError **error);
void cs_topology_free(CsTopology *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsTopology, cs_topology_free)

/* Node index by name, or -1. */
int64_t cs_topology_find(const CsTopology *t, const char *name);

#endif
