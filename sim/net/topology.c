/* topology.c - generators, explicit topologies, and the name checks.
 *
 * Generators first lay out H hosts and give them roles (workers w0.. in
 * the first positions, servers ps0.. in the last, idle hosts h0.. between
 * when `workers` leaves some over), then add switches sw0.. and links in a
 * documented order.  Explicit topologies take nodes and links as written.
 * Both end in the same place: a link list, turned into per-node port
 * arrays sorted by peer.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/topology.h"
#include "commsim/yamltree.h"

typedef struct {
  GArray *nodes; /* CsNode */
  GArray *links; /* CsLink */
} Builder;

static uint32_t add_node(Builder *b, char *name, CsRole role) {
  CsNode n = {name, role, 0, 0, -1};
  g_array_append_val(b->nodes, n);
  return b->nodes->len - 1;
}

static void add_link(Builder *b, uint32_t a, uint32_t c, const CsLinkSpec *spec) {
  CsLink l = {a, c, *spec};
  g_array_append_val(b->links, l);
}

/* H hosts with roles by position; returns the index of the first. */
static uint32_t add_hosts(Builder *b, int64_t hosts, int64_t workers, int64_t servers) {
  if (workers < 0) workers = hosts - servers;
  uint32_t first = b->nodes->len;
  int64_t idle = 0;
  for (int64_t i = 0; i < hosts; i++) {
    if (i < workers) add_node(b, g_strdup_printf("w%" G_GINT64_FORMAT, (gint64)i), CS_ROLE_WORKER);
    else if (i >= hosts - servers)
      add_node(b, g_strdup_printf("ps%" G_GINT64_FORMAT, (gint64)(i - (hosts - servers))), CS_ROLE_SERVER);
    else add_node(b, g_strdup_printf("h%" G_GINT64_FORMAT, (gint64)idle++), CS_ROLE_HOST);
  }
  return first;
}

static uint32_t add_switch(Builder *b, uint32_t *counter) {
  return add_node(b, g_strdup_printf("sw%u", (*counter)++), CS_ROLE_SWITCH);
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Returns the bisection bandwidth the generator knows, or -1. */
static int64_t generate(Builder *b, const CsTopologySpec *t, const CsLinkSpec *d) {
  int64_t bw = d->bandwidth;
  uint32_t sw = 0;
  switch (t->type) {
  case CS_TOPO_STAR: {
    int64_t H = t->workers + t->servers;
    uint32_t h0 = add_hosts(b, H, t->workers, t->servers);
    uint32_t c = add_switch(b, &sw);
    for (int64_t i = 0; i < H; i++) add_link(b, h0 + (uint32_t)i, c, d);
    return H / 2 * bw; /* a non-blocking switch: half the hosts send to the other half */
  }
  case CS_TOPO_RING: {
    int64_t H = t->workers + t->servers;
    uint32_t h0 = add_hosts(b, H, t->workers, t->servers);
    for (int64_t i = 0; i < H; i++) {
      if (H == 2 && i == 1) break; /* a ring of two is one link */
      add_link(b, h0 + (uint32_t)i, h0 + (uint32_t)((i + 1) % H), d);
    }
    return H == 2 ? bw : 2 * bw; /* a cut through a cycle crosses two links */
  }
  case CS_TOPO_DUMBBELL: {
    int64_t H = t->workers + t->servers;
    uint32_t h0 = add_hosts(b, H, t->workers, t->servers);
    uint32_t left = add_switch(b, &sw), right = add_switch(b, &sw);
    int64_t nleft = (H + 1) / 2;
    for (int64_t i = 0; i < H; i++) add_link(b, h0 + (uint32_t)i, i < nleft ? left : right, d);
    add_link(b, left, right, &t->bottleneck);
    return min64(t->bottleneck.bandwidth, H / 2 * bw);
  }
  case CS_TOPO_FAT_TREE: {
    /* Al-Fares et al. (2008): k pods of k/2 edge and k/2 aggregation
     * switches; each edge switch serves k/2 hosts; (k/2)^2 cores, agg j of
     * every pod joins cores j*k/2 .. j*k/2 + k/2 - 1.  Switch numbering:
     * edges pod by pod, then aggregations pod by pod, then cores. */
    int64_t k = t->k, half = k / 2, H = k * k * k / 4;
    uint32_t h0 = add_hosts(b, H, t->workers, t->servers);
    uint32_t edge0 = b->nodes->len;
    for (int64_t i = 0; i < k * half; i++) add_switch(b, &sw);
    uint32_t agg0 = b->nodes->len;
    for (int64_t i = 0; i < k * half; i++) add_switch(b, &sw);
    uint32_t core0 = b->nodes->len;
    for (int64_t i = 0; i < half * half; i++) add_switch(b, &sw);
    for (int64_t p = 0; p < k; p++)
      for (int64_t e = 0; e < half; e++) {
        uint32_t edge = edge0 + (uint32_t)(p * half + e);
        for (int64_t i = 0; i < half; i++)
          add_link(b, h0 + (uint32_t)(p * half * half + e * half + i), edge, d);
        for (int64_t a = 0; a < half; a++) add_link(b, edge, agg0 + (uint32_t)(p * half + a), d);
      }
    for (int64_t p = 0; p < k; p++)
      for (int64_t a = 0; a < half; a++)
        for (int64_t c = 0; c < half; c++)
          add_link(b, agg0 + (uint32_t)(p * half + a), core0 + (uint32_t)(a * half + c), d);
    return H / 2 * bw; /* full bisection */
  }
  case CS_TOPO_TORUS2D: {
    int64_t X = t->x, Y = t->y, H = X * Y;
    uint32_t h0 = add_hosts(b, H, t->workers, t->servers);
    for (int64_t j = 0; j < Y; j++)
      for (int64_t i = 0; i < X; i++) {
        uint32_t me = h0 + (uint32_t)(j * X + i);
        /* +x neighbour; with X == 2 the wraparound is the same link, with
         * X == 1 there is none. */
        if (X >= 3 || (X == 2 && i == 0)) add_link(b, me, h0 + (uint32_t)(j * X + (i + 1) % X), d);
        if (Y >= 3 || (Y == 2 && j == 0)) add_link(b, me, h0 + (uint32_t)(((j + 1) % Y) * X + i), d);
      }
    /* Halve across the longer side: the cut crosses each row (column) of
     * the other side twice with wraparound, once without. */
    int64_t longer = X >= Y ? X : Y, shorter = X >= Y ? Y : X;
    if (longer < 2) return -1;
    return shorter * (longer >= 3 ? 2 : 1) * bw;
  }
  case CS_TOPO_TREE: {
    int64_t L = t->leaves, n = t->hosts_per_leaf, H = L * n;
    uint32_t h0 = add_hosts(b, H, t->workers, t->servers);
    uint32_t root = add_switch(b, &sw);
    CsLinkSpec up = *d;
    up.bandwidth = cs_tree_uplink_bps(bw, n, t->oversubscription); /* in range: checked at load */
    for (int64_t l = 0; l < L; l++) {
      uint32_t leaf = add_switch(b, &sw);
      add_link(b, leaf, root, &up);
      for (int64_t i = 0; i < n; i++) add_link(b, h0 + (uint32_t)(l * n + i), leaf, d);
    }
    if (L == 1) return H / 2 * bw;
    return min64(H / 2 * bw, L / 2 * up.bandwidth);
  }
  default: return -1;
  }
}

static bool explicit_topology(Builder *b, const CsTopologySpec *t, GHashTable *by_name, GError **error) {
  /* hosts first (in declaration order), then switches, as for generators */
  for (int pass = 0; pass < 2; pass++)
    for (guint i = 0; i < t->nodes->len; i++) {
      const CsNodeSpec *n = &g_array_index(t->nodes, CsNodeSpec, i);
      if ((n->role == CS_ROLE_SWITCH) != (pass == 1)) continue;
      gpointer prev = g_hash_table_lookup(by_name, n->name);
      if (prev) {
        const CsNodeSpec *first = NULL;
        for (guint j = 0; j < i; j++)
          if (strcmp(g_array_index(t->nodes, CsNodeSpec, j).name, n->name) == 0) {
            first = &g_array_index(t->nodes, CsNodeSpec, j);
            break;
          }
        cs_error_at(error, n->at, "nodes[%u]: duplicate node name '%s' (first declared at line %d)", i, n->name,
                    first ? first->at.line : 0);
        return false;
      }
      uint32_t id = add_node(b, g_strdup(n->name), n->role);
      g_hash_table_insert(by_name, g_array_index(b->nodes, CsNode, id).name, GUINT_TO_POINTER(id + 1));
    }
  GHashTable *pairs = g_hash_table_new(g_int64_hash, g_int64_equal);
  GArray *keys = g_array_sized_new(FALSE, FALSE, sizeof(gint64), t->links->len);
  bool ok = true;
  for (guint i = 0; ok && i < t->links->len; i++) {
    const CsLinkDecl *l = &g_array_index(t->links, CsLinkDecl, i);
    CsLoc at = l->at;
    uint32_t ends[2];
    const char *names[2] = {l->a, l->b};
    for (int e = 0; e < 2 && ok; e++) {
      gpointer id = g_hash_table_lookup(by_name, names[e]);
      if (!id) {
        GPtrArray *cands = g_ptr_array_new();
        for (guint j = 0; j < t->nodes->len; j++)
          g_ptr_array_add(cands, g_array_index(t->nodes, CsNodeSpec, j).name);
        g_ptr_array_add(cands, NULL);
        const char *close = cs_closest(names[e], (const char *const *)cands->pdata);
        if (close)
          cs_error_at(error, at, "links[%u].%s: unknown node '%s' (did you mean '%s'?)", i,
                        e ? "b" : "a", names[e], close);
        else
          cs_error_at(error, at, "links[%u].%s: unknown node '%s': declare it under nodes:", i,
                        e ? "b" : "a", names[e]);
        g_ptr_array_free(cands, TRUE);
        ok = false;
      } else {
        ends[e] = GPOINTER_TO_UINT(id) - 1;
      }
    }
    if (!ok) break;
    if (ends[0] == ends[1]) {
      cs_error_at(error, at, "links[%u]: a link from '%s' to itself", i, l->a);
      ok = false;
      break;
    }
    uint32_t lo = MIN(ends[0], ends[1]), hi = MAX(ends[0], ends[1]);
    gint64 key = ((gint64)lo << 32) | hi;
    g_array_append_val(keys, key);
    gint64 *kp = &g_array_index(keys, gint64, keys->len - 1);
    gpointer prev = g_hash_table_lookup(pairs, kp);
    if (prev) {
      const CsLinkDecl *first = &g_array_index(t->links, CsLinkDecl, GPOINTER_TO_UINT(prev) - 1);
      cs_error_at(error, at, "links[%u]: duplicate link between '%s' and '%s' (first at line %d)", i,
                    l->a, l->b, first->at.line);
      ok = false;
      break;
    }
    add_link(b, ends[0], ends[1], &l->spec);
    /* `keys` does not grow past its reserved size, so kp stays valid */
    g_hash_table_insert(pairs, kp, GUINT_TO_POINTER(i + 1));
  }
  g_hash_table_destroy(pairs);
  g_array_free(keys, TRUE);
  return ok;
}

static int cmp_port(const void *x, const void *y) {
  const CsPort *a = x, *b = y;
  if (a->peer != b->peer) return a->peer < b->peer ? -1 : 1;
  return a->link < b->link ? -1 : a->link > b->link;
}

/* ---- names ---- */

bool cs_topology_check_host(const CsTopology *t, const char *name, const char *what, CsLoc at, GError **error) {
  int64_t id = cs_topology_find(t, name);
  if (id < 0) {
    GPtrArray *cands = g_ptr_array_new();
    for (uint32_t i = 0; i < t->n_hosts; i++) g_ptr_array_add(cands, t->nodes[t->hosts[i]].name);
    g_ptr_array_add(cands, NULL);
    const char *close = cs_closest(name, (const char *const *)cands->pdata);
    if (close)
      cs_error_at(error, at, "%s: unknown node '%s' (did you mean '%s'?)", what, name, close);
    else
      cs_error_at(error, at, "%s: unknown node '%s' (hosts are %s .. %s)", what, name, t->nodes[t->hosts[0]].name,
                  t->nodes[t->hosts[t->n_hosts - 1]].name);
    g_ptr_array_free(cands, TRUE);
    return false;
  }
  if (t->nodes[id].role == CS_ROLE_SWITCH) {
    cs_error_at(error, at, "%s: '%s' is a switch; traffic starts and ends at hosts", what, name);
    return false;
  }
  return true;
}

CsTopology *cs_topology_new(const CsTopologySpec *spec, const CsLinkSpec *defaults, GError **error) {
  Builder b = {g_array_new(FALSE, TRUE, sizeof(CsNode)), g_array_new(FALSE, TRUE, sizeof(CsLink))};
  CsTopology *t = g_new0(CsTopology, 1);
  t->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  t->bisection_bps = -1;
  bool ok = true;
  if (spec->type == CS_TOPO_EXPLICIT) {
    ok = explicit_topology(&b, spec, t->by_name, error);
  } else {
    t->bisection_bps = generate(&b, spec, defaults);
    for (guint i = 0; i < b.nodes->len; i++)
      g_hash_table_insert(t->by_name, g_array_index(b.nodes, CsNode, i).name, GUINT_TO_POINTER(i + 1));
  }
  t->n_nodes = b.nodes->len;
  t->nodes = (CsNode *)g_array_free(b.nodes, FALSE);
  t->n_links = b.links->len;
  t->links = (CsLink *)g_array_free(b.links, FALSE);
  if (!ok) {
    cs_topology_free(t);
    return NULL;
  }

  /* ports, grouped by node and sorted by peer */
  t->ports = g_new(CsPort, 2 * (size_t)t->n_links + 1);
  uint32_t *count = g_new0(uint32_t, t->n_nodes + 1);
  for (uint32_t l = 0; l < t->n_links; l++) count[t->links[l].a]++, count[t->links[l].b]++;
  uint32_t acc = 0;
  for (uint32_t n = 0; n < t->n_nodes; n++) {
    t->nodes[n].first_port = acc;
    t->nodes[n].n_ports = 0;
    acc += count[n];
  }
  for (uint32_t l = 0; l < t->n_links; l++) {
    CsNode *a = &t->nodes[t->links[l].a], *c = &t->nodes[t->links[l].b];
    t->ports[a->first_port + a->n_ports++] = (CsPort){l, t->links[l].b, 0};
    t->ports[c->first_port + c->n_ports++] = (CsPort){l, t->links[l].a, 1};
  }
  for (uint32_t n = 0; n < t->n_nodes; n++)
    qsort(t->ports + t->nodes[n].first_port, t->nodes[n].n_ports, sizeof(CsPort), cmp_port);
  g_free(count);

  /* hosts by role, in node order */
  t->hosts = g_new(uint32_t, t->n_nodes + 1);
  t->workers = g_new(uint32_t, t->n_nodes + 1);
  t->servers = g_new(uint32_t, t->n_nodes + 1);
  for (uint32_t n = 0; n < t->n_nodes; n++) {
    CsNode *node = &t->nodes[n];
    if (node->role == CS_ROLE_SWITCH) {
      t->n_switches++;
      continue;
    }
    node->host = (int32_t)t->n_hosts;
    t->hosts[t->n_hosts++] = n;
    if (node->role == CS_ROLE_WORKER) t->workers[t->n_workers++] = n;
    if (node->role == CS_ROLE_SERVER) t->servers[t->n_servers++] = n;
  }
  if (t->n_hosts == 0) {
    cs_error_at(error, (CsLoc){spec->at.file, 0, 0}, "the network has no hosts (workers, servers or hosts)");
    cs_topology_free(t);
    return NULL;
  }
  /* every host reaches every other: a breadth-first walk from the first */
  uint8_t *seen = g_new0(uint8_t, t->n_nodes);
  uint32_t *queue = g_new(uint32_t, t->n_nodes), head = 0, tail = 0;
  seen[t->hosts[0]] = 1;
  queue[tail++] = t->hosts[0];
  while (head < tail) {
    const CsNode *n = &t->nodes[queue[head++]];
    for (uint32_t p = n->first_port; p < n->first_port + n->n_ports; p++)
      if (!seen[t->ports[p].peer]) seen[t->ports[p].peer] = 1, queue[tail++] = t->ports[p].peer;
  }
  g_free(queue);
  for (uint32_t h = 1; h < t->n_hosts; h++) {
    const CsNode *n = &t->nodes[t->hosts[h]];
    if (seen[t->hosts[h]]) continue;
    const CsNodeSpec *decl = NULL;
    for (guint i = 0; i < spec->nodes->len; i++)
      if (strcmp(g_array_index(spec->nodes, CsNodeSpec, i).name, n->name) == 0)
        decl = &g_array_index(spec->nodes, CsNodeSpec, i);
    CsLoc at = decl ? decl->at : (CsLoc){spec->at.file, 0, 0};
    if (n->n_ports == 0)
      cs_error_at(error, at, "host '%s' has no link", n->name);
    else
      cs_error_at(error, at, "no path between %s and %s: the network is in pieces (no chain of links joins them)",
                    t->nodes[t->hosts[0]].name, n->name);
    g_free(seen);
    cs_topology_free(t);
    return NULL;
  }
  g_free(seen);
  return t;
}

void cs_topology_free(CsTopology *t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->n_nodes; i++) g_free(t->nodes[i].name);
  g_free(t->nodes);
  g_free(t->links);
  g_free(t->ports);
  g_free(t->hosts);
  g_free(t->workers);
  g_free(t->servers);
  g_hash_table_destroy(t->by_name);
  g_free(t);
}

int64_t cs_topology_find(const CsTopology *t, const char *name) {
  gpointer v = g_hash_table_lookup(t->by_name, name);
  return v ? (int64_t)GPOINTER_TO_UINT(v) - 1 : -1;
}

/* ---- names of things ---- */

static const char *const role_names[] = {"worker", "server", "host", "switch"};
static const char *const topo_names[] = {"explicit", "star", "ring", "dumbbell", "fat-tree", "torus2d", "tree"};
static const char *const queue_names[] = {"droptail", "red", "ecn"};

const char *cs_role_name(CsRole r) { return role_names[r]; }
const char *cs_topo_type_name(CsTopoType t) { return topo_names[t]; }
const char *cs_queue_name(CsQueueKind q) { return queue_names[q]; }

int64_t cs_tree_uplink_bps(int64_t host_bps, int64_t hosts_per_leaf, double oversubscription) {
  double up = (double)host_bps * (double)hosts_per_leaf / oversubscription;
  if (!(up >= 0.5) || up >= 9.2e18) return -1; /* below 1 bit/s once rounded, or past int64 */
  return (int64_t)(up + 0.5);
}
