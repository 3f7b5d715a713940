/* routing.h - static shortest paths by hop count.
 *
 * Hop distances toward each destination, 16 bits per node, one row per
 * anchor: a host whose links all lead to one node (a worker on its
 * switch) shares that node's row with the other hosts there, since every
 * path to it passes that node; a host with several neighbours has its
 * own.  A row is filled by one breadth-first search when first asked
 * for, so a star of 16,384 workers holds one row of 16,385 entries, not
 * 16,384 of them.  A next hop toward a host is a port whose far end is
 * one hop closer: with `shortest` the first such port (node order breaks
 * ties), with `ecmp` one chosen by a hash of the flow among all of them
 * (`ecmp-packet`: by a hash per packet).  The ports one hop closer are
 * kept per node of more than four ports and row once found (4 bytes
 * each, rows allocated when first needed, with the distinct lists at most
 * 256 MB in all: past that hops scan their node's ports), so a hop costs
 * a lookup and a hash, not a scan.  A flow looks its path up once, when
 * it starts; packets then follow the path with no lookup at all.
 * The lazy rows make a CsRoutes one simulation's own: lookups from two
 * threads at once are not safe.
 *
 * Layer 1 (models; docs/design.md). Owns routing tables and paths; does not
 * touch the network's state, scenarios.
 */
#ifndef COMMSIM_ROUTING_H
#define COMMSIM_ROUTING_H

#include <glib.h>
#include <stdint.h>

#include "commsim/topology.h"

/* ecmp-packet: ECMP per packet (spraying): the network draws
 * CS_ECMP_PACKET_PATHS paths per message and direction, and each packet
 * takes one of them, so packets of one message arrive out of order. */
typedef enum { CS_ROUTING_SHORTEST, CS_ROUTING_ECMP, CS_ROUTING_ECMP_PACKET } CsRouting;
#define CS_ECMP_PACKET_PATHS 8

typedef struct CsRoutes CsRoutes;

#define CS_ROUTES_MAX_BYTES (8ULL << 30) /* refuse tables larger than 8 GiB */

/* Fails, naming both hosts, when some pair of hosts has no path, and with
 * an estimate when every row together would pass CS_ROUTES_MAX_BYTES. */
CsRoutes *cs_routes_build(const CsTopology *t, CsRouting mode, GError **error);
CsRouting cs_routes_mode(const CsRoutes *r);
const char *const *cs_routing_names(void); /* in CsRouting order, NULL-terminated */
void cs_routes_free(CsRoutes *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsRoutes, cs_routes_free)

/* Hops from `node` to host number `host` (an index among hosts). */
int cs_routes_distance(const CsRoutes *r, uint32_t node, uint32_t host);
/* The port (index into t->ports) `node` sends on toward `host`.  `flow`
 * is the flow's hash (ignored by shortest routing); node != the host. */
uint32_t cs_routes_next_port(const CsRoutes *r, uint32_t node, uint32_t host, uint64_t flow);
/* The ports of `node` one hop nearer `host`, in port order: returns
 * their count, and puts the first `cap` of them in `ports` (from the
 * tables kept for next hops: a star's switch is not scanned); node !=
 * the host. */
uint32_t cs_routes_next_ports(const CsRoutes *r, uint32_t node, uint32_t host, uint32_t *ports, uint32_t cap);
/* The ports of the whole path from `node` to `host`; returns the hop count
 * (at most `max`; -1 if the path is longer). */
int cs_routes_path(const CsRoutes *r, uint32_t node, uint32_t host, uint64_t flow, uint32_t *ports,
                   int max);
/* The same, and through *drawn (when not NULL) whether `flow` chose the
 * path among several: false when every flow would take it (ECMP between
 * hosts on one switch), always with shortest routing, and when the path
 * is too long (-1). */
int cs_routes_path_drawn(const CsRoutes *r, uint32_t node, uint32_t host, uint64_t flow, uint32_t *ports, int max,
                         bool *drawn);

typedef struct {
  int diameter;        /* longest host-to-host path, hops */
  double mean_hops;    /* over ordered pairs of distinct hosts */
  size_t table_bytes;  /* every row filled (the statistics need them all) */
} CsRouteStats;
CsRouteStats cs_routes_stats(const CsRoutes *r);

#endif
