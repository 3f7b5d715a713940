/* routing.c - hop distances by BFS, one row per destination anchor, filled
 * when first asked for; next hops from them, and the ports one hop nearer
 * kept per node and row once found. */
#include "config.h"

#include <string.h>

#include "commsim/routing.h"

#define UNREACHED UINT16_MAX
#define NO_PORT UINT32_MAX

struct CsRoutes {
  const CsTopology *t;
  CsRouting mode;
  uint32_t n_rows;
  uint32_t *row_of;    /* per host: the row of its anchor */
  uint8_t *via;        /* per host: 1 when its anchor is its one neighbour, 0 when it is itself */
  uint32_t *last_port; /* per host with via: the anchor's port to it; NO_PORT if it has several, or no via */
  uint32_t *anchor;    /* per row: the node the row's BFS starts from */
  uint16_t **rows;     /* per row: hops from every node to the anchor; NULL until first needed */
  uint32_t *queue;     /* the BFS's, n_nodes + 1 */
  size_t filled_bytes;
  /* The ports one hop nearer a row's anchor, from each node of more than
   * NEAR_SCAN ports (its column): NEAR_ONE | port when there is one, else 1 + the
   * offset of its list in near_ports (a count, then the ports in order:
   * lists are shared, a fat-tree switch has few), 0 until first needed,
   * NEAR_NONE where the budget ran out.  They depend on the row alone,
   * not on which of its hosts is sought, but at the anchor of a host
   * beside it (where the ports lead to that host: with one link, which
   * is all a scenario can give today, last_port answers first).  near is
   * NULL when no node has a column.  Rows and lists together take at most
   * NEAR_MAX_BYTES (near_bytes counts them, lists twice with their
   * keys): past that, hops scan their node's ports. */
  uint32_t *col_of;     /* per node: its column, or NO_PORT for a node of NEAR_SCAN ports or fewer */
  uint32_t n_cols;
  uint32_t **near;      /* per row, NULL until first needed: per column */
  GArray *near_ports;   /* uint32_t */
  GHashTable *near_ids; /* a list's bytes (GBytes) -> 1 + its offset */
  size_t near_bytes;
};

#define NEAR_ONE 0x80000000u
#define NEAR_NONE 0xffffffffu /* not kept: scan (never NEAR_ONE | a port, 2 n_links < NEAR_ONE) */
/* A node of at most this many ports is scanned, not kept: a scan of four
 * costs about a lookup, and a torus (every node a host of four ports,
 * its own row) would triple its tables (4 bytes beside the distance's 2). */
#define NEAR_SCAN 4
#define NEAR_MAX_BYTES (256ULL << 20)

/* Hops from every node to r->anchor[row]; false when some path is longer
 * than the table holds (then the row stays unfilled). */
static bool fill_row(CsRoutes *r, uint32_t row) {
  const CsTopology *t = r->t;
  uint16_t *d = g_new(uint16_t, t->n_nodes + 1);
  memset(d, 0xff, t->n_nodes * sizeof *d);
  uint32_t head = 0, tail = 0, *queue = r->queue;
  d[r->anchor[row]] = 0;
  queue[tail++] = r->anchor[row];
  while (head < tail) {
    uint32_t n = queue[head++];
    uint16_t dn = d[n];
    if (dn + 2 >= UNREACHED) { /* + 1 for the next hop, + 1 for a host past its anchor */
      g_free(d);
      return false;
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
  r->rows[row] = d;
  r->filled_bytes += (size_t)t->n_nodes * sizeof *d;
  return true;
}

/* The hops from `node` to host `host`: a host anchored on its one
 * neighbour is one hop past it from anywhere else. */
static inline uint16_t dist_of(const CsRoutes *r, uint32_t node, uint32_t host) {
  if (node == r->t->hosts[host]) return 0;
  uint32_t row = r->row_of[host];
  if (G_UNLIKELY(!r->rows[row]) && !fill_row((CsRoutes *)r, row)) g_assert_not_reached(); /* checked at build */
  uint16_t d = r->rows[row][node];
  return d == UNREACHED ? UNREACHED : (uint16_t)(d + r->via[host]); /* a node in no host's piece: unreached */
}

static void set_long_error(GError **error, const CsTopology *t, uint32_t node) {
  g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
              "error: a path longer than %d hops (from %s): commsim's routing tables hold at most that",
              UNREACHED - 2, t->nodes[node].name);
}

CsRoutes *cs_routes_build(const CsTopology *t, CsRouting mode, GError **error) {
  CsRoutes *r = g_new0(CsRoutes, 1);
  r->t = t;
  r->mode = mode;
  r->row_of = g_new(uint32_t, t->n_hosts + 1);
  r->via = g_new0(uint8_t, t->n_hosts + 1);
  r->last_port = g_new(uint32_t, t->n_hosts + 1);
  memset(r->last_port, 0xff, (t->n_hosts + 1) * sizeof *r->last_port); /* NO_PORT */
  r->anchor = g_new(uint32_t, t->n_hosts + 1);
  /* A host whose ports all lead to one node (a worker on its switch)
   * shares that node's row with the other hosts on it: every path to the
   * host passes there.  A host with several neighbours has its own. */
  uint32_t *row_at = g_new(uint32_t, t->n_nodes + 1); /* node -> its row + 1, 0 if none */
  memset(row_at, 0, (t->n_nodes + 1) * sizeof *row_at);
  for (uint32_t h = 0; h < t->n_hosts; h++) {
    const CsNode *node = &t->nodes[t->hosts[h]];
    uint32_t a = t->hosts[h];
    if (node->n_ports > 0) {
      uint32_t nb = t->ports[node->first_port].peer;
      bool one = nb != a;
      for (uint32_t p = node->first_port; one && p < node->first_port + node->n_ports; p++) one = t->ports[p].peer == nb;
      if (one) {
        a = nb;
        r->via[h] = 1;
        /* the anchor's ports to this host: the first, when it is the only
         * one (a node's ports are sorted by peer: found by bisection, not
         * by a scan of a switch's every port for each of its hosts) */
        const CsNode *an = &t->nodes[nb];
        uint32_t lo = an->first_port, end = an->first_port + an->n_ports, hi = end;
        while (lo < hi) {
          uint32_t mid = lo + (hi - lo) / 2;
          if (t->ports[mid].peer < t->hosts[h]) lo = mid + 1;
          else hi = mid;
        }
        bool only = lo < end && t->ports[lo].peer == t->hosts[h] && (lo + 1 == end || t->ports[lo + 1].peer != t->hosts[h]);
        r->last_port[h] = only ? lo : NO_PORT;
      }
    }
    if (!row_at[a]) {
      r->anchor[r->n_rows] = a;
      row_at[a] = ++r->n_rows;
    }
    r->row_of[h] = row_at[a] - 1;
  }
  g_free(row_at);
  size_t bytes = (size_t)r->n_rows * t->n_nodes * sizeof(uint16_t);
  if (bytes > CS_ROUTES_MAX_BYTES) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "error: the routing tables of %u destinations x %u nodes would take %.1f GiB (2 bytes each); "
                "commsim refuses more than %llu GiB",
                r->n_rows, t->n_nodes, (double)bytes / (1 << 30), CS_ROUTES_MAX_BYTES >> 30);
    cs_routes_free(r);
    return NULL;
  }
  r->rows = g_new0(uint16_t *, r->n_rows + 1);
  r->queue = g_new(uint32_t, t->n_nodes + 1);
  r->col_of = g_new(uint32_t, t->n_nodes + 1);
  for (uint32_t n = 0; n < t->n_nodes; n++) r->col_of[n] = t->nodes[n].n_ports > NEAR_SCAN ? r->n_cols++ : NO_PORT;
  if (r->n_cols > 0 && 2 * (uint64_t)t->n_links < NEAR_ONE) {
    r->near = g_new0(uint32_t *, r->n_rows + 1);
    r->near_ports = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    r->near_ids = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
  }
  if (t->n_hosts == 0) return r;
  /* One search from the first host's row: every host must be in its
   * piece of the network, and when it is at most half the table's reach
   * from everything, no path is too long for the table (a path's hops are
   * at most its ends' hops to that anchor); otherwise every row now. */
  if (!fill_row(r, r->row_of[0])) {
    set_long_error(error, t, r->anchor[r->row_of[0]]);
    cs_routes_free(r);
    return NULL;
  }
  const uint16_t *d0 = r->rows[r->row_of[0]];
  uint16_t far = 0;
  for (uint32_t n = 0; n < t->n_nodes; n++)
    if (d0[n] != UNREACHED && d0[n] > far) far = d0[n];
  for (uint32_t g = 0; g < t->n_hosts; g++)
    if (d0[t->hosts[g]] == UNREACHED) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                  "error: no path between %s and %s: the network is in pieces", t->nodes[t->hosts[0]].name,
                  t->nodes[t->hosts[g]].name);
      cs_routes_free(r);
      return NULL;
    }
  if (2 * (uint32_t)far + 2 >= UNREACHED - 1)
    for (uint32_t row = 0; row < r->n_rows; row++)
      if (!r->rows[row] && !fill_row(r, row)) {
        set_long_error(error, t, r->anchor[row]);
        cs_routes_free(r);
        return NULL;
      }
  return r;
}

void cs_routes_free(CsRoutes *r) {
  if (!r) return;
  for (uint32_t i = 0; r->rows && i < r->n_rows; i++) g_free(r->rows[i]);
  g_free(r->rows);
  g_free(r->queue);
  g_free(r->row_of);
  g_free(r->via);
  g_free(r->last_port);
  g_free(r->anchor);
  for (uint32_t i = 0; r->near && i < r->n_rows; i++) g_free(r->near[i]);
  g_free(r->near);
  if (r->near_ports) g_array_unref(r->near_ports);
  if (r->near_ids) g_hash_table_unref(r->near_ids);
  g_free(r->col_of);
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

/* The ports of `node` one hop nearer `host`, in order: their count, and
 * up to `cap` of them in `near`; with `first`, only the first. */
static uint32_t nearer(const CsRoutes *r, uint32_t node, uint32_t host, uint32_t *near, uint32_t cap, bool first) {
  const CsTopology *t = r->t;
  const CsNode *n = &t->nodes[node];
  uint16_t want = (uint16_t)(dist_of(r, node, host) - 1);
  uint32_t count = 0;
  for (uint32_t p = n->first_port; p < n->first_port + n->n_ports; p++)
    if (dist_of(r, t->ports[p].peer, host) == want) {
      if (count < cap) near[count] = p;
      count++;
      if (first) break;
    }
  g_assert(count > 0);
  return count;
}

/* The near entry of `node`'s column in `host`'s row, found and kept
 * (NEAR_NONE past the budget). */
static G_GNUC_NO_INLINE uint32_t near_fill(CsRoutes *r, uint32_t node, uint32_t host) {
  uint32_t row = r->row_of[host], col = r->col_of[node];
  if (!r->near[row]) {
    if (r->near_bytes + r->n_cols * sizeof(uint32_t) > NEAR_MAX_BYTES) return NEAR_NONE;
    r->near[row] = g_new0(uint32_t, r->n_cols);
    r->near_bytes += r->n_cols * sizeof(uint32_t);
  }
  uint32_t *list = g_new(uint32_t, r->t->nodes[node].n_ports + 1);
  uint32_t count = list[0] = nearer(r, node, host, list + 1, r->t->nodes[node].n_ports, false);
  uint32_t e;
  if (count == 1) {
    e = NEAR_ONE | list[1];
  } else {
    GBytes *key = g_bytes_new_take(list, (count + 1) * sizeof *list);
    list = NULL;
    e = GPOINTER_TO_UINT(g_hash_table_lookup(r->near_ids, key));
    size_t cost = 2 * (count + 1) * sizeof(uint32_t) + 64; /* the list, its key and the table's node */
    if (!e && r->near_bytes + cost > NEAR_MAX_BYTES) {
      e = NEAR_NONE;
    } else if (!e) {
      g_assert(r->near_ports->len + count + 1 < NEAR_ONE);
      e = r->near_ports->len + 1;
      g_array_append_vals(r->near_ports, g_bytes_get_data(key, NULL), count + 1);
      g_hash_table_insert(r->near_ids, g_bytes_ref(key), GUINT_TO_POINTER(e));
      r->near_bytes += cost;
    }
    g_bytes_unref(key);
  }
  g_free(list);
  r->near[row][col] = e;
  return e;
}

/* The kept near entry of `node` toward `host` (NEAR_ONE | port, or 1 +
 * a list's offset), or NEAR_NONE when the node's ports are to be scanned:
 * a node of few ports, no tables, a host's anchor toward it, or past the
 * budget. */
static inline uint32_t near_entry(const CsRoutes *r, uint32_t node, uint32_t host) {
  uint32_t row = r->row_of[host], col = r->col_of[node];
  if (r->near == NULL || col == NO_PORT || (r->via[host] && node == r->anchor[row])) return NEAR_NONE;
  uint32_t e = r->near[row] ? r->near[row][col] : 0;
  return G_LIKELY(e) ? e : near_fill((CsRoutes *)r, node, host);
}

uint32_t cs_routes_next_ports(const CsRoutes *r, uint32_t node, uint32_t host, uint32_t *ports, uint32_t cap) {
  const CsNode *n = &r->t->nodes[node];
  uint32_t one = NO_PORT;
  if (r->last_port[host] != NO_PORT && node == r->anchor[r->row_of[host]]) one = r->last_port[host];
  else if (n->n_ports == 1) one = n->first_port;
  if (one != NO_PORT) {
    if (cap > 0) ports[0] = one;
    return 1;
  }
  uint32_t e = near_entry(r, node, host);
  if (e == NEAR_NONE) return nearer(r, node, host, ports, cap, false);
  if (e & NEAR_ONE) {
    if (cap > 0) ports[0] = e & ~NEAR_ONE;
    return 1;
  }
  const uint32_t *list = &g_array_index(r->near_ports, uint32_t, e - 1);
  memcpy(ports, list + 1, MIN(list[0], cap) * sizeof *ports);
  return list[0];
}

/* The next port, and through *choices how many it was drawn among. */
static inline __attribute__((always_inline)) uint32_t next_port_of(const CsRoutes *r, uint32_t node, uint32_t host,
                                                                   uint64_t flow, uint32_t *choices) {
  const CsTopology *t = r->t;
  *choices = 1;
  /* the last hop, from a host's anchor over its only link: no search
   * among the anchor's ports (a star's switch has thousands) */
  uint32_t row = r->row_of[host];
  if (r->last_port[host] != NO_PORT && node == r->anchor[row]) return r->last_port[host];
  const CsNode *n = &t->nodes[node];
  if (n->n_ports == 1) return n->first_port;
  /* the hash mixes in the node so that successive hops choose independently */
#define PICK(count) ((uint32_t)(mix(flow ^ mix((uint64_t)node + 0x9e3779b97f4a7c15ULL)) % (count)))
  uint32_t e = near_entry(r, node, host);
  if (G_LIKELY(e != NEAR_NONE)) {
    if (e & NEAR_ONE) return e & ~NEAR_ONE;
    const uint32_t *list = &g_array_index(r->near_ports, uint32_t, e - 1);
    if (r->mode == CS_ROUTING_SHORTEST) return list[1];
    *choices = list[0];
    return list[1 + PICK(list[0])];
  }
  /* the ports one hop nearer, in order (a pass over the node's ports,
   * not two, when they are few: a torus's four; shortest routing stops
   * at the first) */
  uint32_t near[64], count = nearer(r, node, host, near, G_N_ELEMENTS(near), r->mode == CS_ROUTING_SHORTEST);
  if (r->mode == CS_ROUTING_SHORTEST) return near[0];
  *choices = count;
  uint32_t pick = PICK(count);
#undef PICK
  if (count <= G_N_ELEMENTS(near)) return near[pick];
  uint16_t want = (uint16_t)(dist_of(r, node, host) - 1);
  for (uint32_t p = n->first_port; p < n->first_port + n->n_ports; p++)
    if (dist_of(r, t->ports[p].peer, host) == want && pick-- == 0) return p;
  g_assert_not_reached();
  return 0;
}

uint32_t cs_routes_next_port(const CsRoutes *r, uint32_t node, uint32_t host, uint64_t flow) {
  uint32_t choices;
  return next_port_of(r, node, host, flow, &choices);
}

int cs_routes_path_drawn(const CsRoutes *r, uint32_t node, uint32_t host, uint64_t flow, uint32_t *ports, int max,
                         bool *drawn) {
  uint32_t target = r->t->hosts[host], choices, most = 1;
  int hops = 0;
  if (drawn) *drawn = false;
  while (node != target) {
    if (hops == max) return -1;
    uint32_t p = next_port_of(r, node, host, flow, &choices);
    most = choices > most ? choices : most;
    ports[hops++] = p;
    node = r->t->ports[p].peer;
  }
  if (drawn) *drawn = most > 1;
  return hops;
}

int cs_routes_path(const CsRoutes *r, uint32_t node, uint32_t host, uint64_t flow, uint32_t *ports,
                   int max) {
  return cs_routes_path_drawn(r, node, host, flow, ports, max, NULL);
}

CsRouteStats cs_routes_stats(const CsRoutes *r) {
  const CsTopology *t = r->t;
  CsRouteStats st = {0, 0.0, 0};
  double sum = 0;
  for (uint32_t h = 0; h < t->n_hosts; h++)
    for (uint32_t g = 0; g < t->n_hosts; g++) {
      int d = dist_of(r, t->hosts[g], h);
      if (d > st.diameter) st.diameter = d;
      sum += d;
    }
  st.table_bytes = r->filled_bytes; /* every row, now */
  if (t->n_hosts > 1) st.mean_hops = sum / ((double)t->n_hosts * (t->n_hosts - 1));
  return st;
}

CsRouting cs_routes_mode(const CsRoutes *r) { return r->mode; }

const char *const *cs_routing_names(void) {
  static const char *const names[] = {"shortest", "ecmp", "ecmp-packet", NULL}; /* CsRouting order */
  return names;
}
