/* routing.c - hop distances by BFS from every host; next hops from them. */
#include "config.h"

#include <string.h>

#include "commsim/routing.h"

#define UNREACHED UINT16_MAX

struct CsRoutes {
  const CsTopology *t;
  CsRouting mode;
  uint16_t *dist; /* dist[host * n_nodes + node] */
};

static inline uint16_t dist_of(const CsRoutes *r, uint32_t node, uint32_t host) {
  return r->dist[(size_t)host * r->t->n_nodes + node];
}

CsRoutes *cs_routes_build(const CsTopology *t, CsRouting mode, GError **error) {
  size_t bytes = (size_t)t->n_hosts * t->n_nodes * sizeof(uint16_t);
  if (bytes > CS_ROUTES_MAX_BYTES) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "error: the routing tables of %u hosts x %u nodes would take %.1f GiB (2 bytes each); "
                "commsim refuses more than %llu GiB",
                t->n_hosts, t->n_nodes, (double)bytes / (1 << 30), CS_ROUTES_MAX_BYTES >> 30);
    return NULL;
  }
  CsRoutes *r = g_new0(CsRoutes, 1);
  r->t = t;
  r->mode = mode;
  r->dist = g_new(uint16_t, (size_t)t->n_hosts * t->n_nodes + 1);
  uint32_t *queue = g_new(uint32_t, t->n_nodes + 1);
  for (uint32_t h = 0; h < t->n_hosts; h++) {
    uint16_t *d = r->dist + (size_t)h * t->n_nodes;
    memset(d, 0xff, t->n_nodes * sizeof *d);
    uint32_t head = 0, tail = 0;
    d[t->hosts[h]] = 0;
    queue[tail++] = t->hosts[h];
    while (head < tail) {
      uint32_t n = queue[head++];
      uint16_t dn = d[n];
      if (dn + 1 >= UNREACHED) {
        g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                    "error: a path longer than %d hops (from %s): commsim's routing tables hold at most that",
                    UNREACHED - 1, t->nodes[t->hosts[h]].name);
        g_free(queue);
        cs_routes_free(r);
        return NULL;
      }
      const CsNode *node = &t->nodes[n];
      for (uint32_t p = node->first_port; p < node->first_port + node->n_ports; p++) {
        uint32_t m = t->ports[p].peer;
        if (d[m] == UNREACHED) {
          d[m] = (uint16_t)(dn + 1);
          queue[tail++] = m;
        }
      }
    }
    for (uint32_t g = 0; g < t->n_hosts; g++)
      if (d[t->hosts[g]] == UNREACHED) {
        g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                    "error: no path between %s and %s: the network is in pieces",
                    t->nodes[t->hosts[h]].name, t->nodes[t->hosts[g]].name);
        g_free(queue);
        cs_routes_free(r);
        return NULL;
      }
  }
  g_free(queue);
  return r;
}

void cs_routes_free(CsRoutes *r) {
  if (!r) return;
  g_free(r->dist);
  g_free(r);
}

int cs_routes_distance(const CsRoutes *r, uint32_t node, uint32_t host) {
  uint16_t d = dist_of(r, node, host);
  return d == UNREACHED ? -1 : d;
}

static inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint32_t cs_routes_next_port(const CsRoutes *r, uint32_t node, uint32_t host, uint64_t flow) {
  const CsTopology *t = r->t;
  const CsNode *n = &t->nodes[node];
  uint16_t want = (uint16_t)(dist_of(r, node, host) - 1);
  uint32_t first = n->first_port, end = first + n->n_ports;
  if (r->mode == CS_ROUTING_SHORTEST) {
    for (uint32_t p = first; p < end; p++)
      if (dist_of(r, t->ports[p].peer, host) == want) return p;
    g_assert_not_reached();
  }
  uint32_t count = 0;
  for (uint32_t p = first; p < end; p++) count += dist_of(r, t->ports[p].peer, host) == want;
  g_assert(count > 0);
  /* the hash mixes in the node so that successive hops choose independently */
  uint32_t pick = (uint32_t)(mix(flow ^ mix((uint64_t)node + 0x9e3779b97f4a7c15ULL)) % count);
  for (uint32_t p = first; p < end; p++)
    if (dist_of(r, t->ports[p].peer, host) == want && pick-- == 0) return p;
  g_assert_not_reached();
  return 0;
}

int cs_routes_path(const CsRoutes *r, uint32_t node, uint32_t host, uint64_t flow, uint32_t *ports,
                   int max) {
  uint32_t target = r->t->hosts[host];
  int hops = 0;
  while (node != target) {
    if (hops == max) return -1;
    uint32_t p = cs_routes_next_port(r, node, host, flow);
    ports[hops++] = p;
    node = r->t->ports[p].peer;
  }
  return hops;
}

CsRouteStats cs_routes_stats(const CsRoutes *r) {
  const CsTopology *t = r->t;
  CsRouteStats st = {0, 0.0, (size_t)t->n_hosts * t->n_nodes * sizeof(uint16_t)};
  double sum = 0;
  for (uint32_t h = 0; h < t->n_hosts; h++)
    for (uint32_t g = 0; g < t->n_hosts; g++) {
      int d = dist_of(r, t->hosts[g], h);
      if (d > st.diameter) st.diameter = d;
      sum += d;
    }
  if (t->n_hosts > 1) st.mean_hops = sum / ((double)t->n_hosts * (t->n_hosts - 1));
  return st;
}

CsRouting cs_routes_mode(const CsRoutes *r) { return r->mode; }

const char *const *cs_routing_names(void) {
  static const char *const names[] = {"shortest", "ecmp", "ecmp-packet", NULL}; /* CsRouting order */
  return names;
}
