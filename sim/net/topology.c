/* topology.c - explicit topologies, the generators' results, and the
 * name checks.
 *
 * Generators (one file each under topo/) lay out hosts with their roles,
 * then switches and links in a documented order.  Explicit topologies
 * take nodes and links as written.  Both end in the same place: a link
 * list, turned into per-node port arrays sorted by peer.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/rng.h"
#include "commsim/topology.h"
#include "commsim/yamltree.h"
#include "topo/builder.h"

typedef CsTopoBuilder Builder;

static uint32_t add_node(Builder *b, char *name, CsRole role) {
  CsNode n = {name, role, 0, 0, -1};
  g_array_append_val(b->nodes, n);
  return b->nodes->len - 1;
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
  GHashTable *pairs = g_hash_table_new(cs_int64_hash, g_int64_equal);
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
    cs_topo_add_link(b, ends[0], ends[1], &l->spec);
    /* `keys` does not grow past its reserved size, so kp stays valid */
    g_hash_table_insert(pairs, kp, GUINT_TO_POINTER(i + 1));
  }
  g_hash_table_destroy(pairs);
  g_array_free(keys, TRUE);
  return ok;
}

/* ---- machines and server places (topology.gpus_per_host, servers_at) ----
 * The generator has laid out host positions with roles.  servers_at moves
 * the servers to positions under the switches it names; then every worker
 * position becomes a machine: an internal switch host<k> joined by `intra`
 * links to G workers.  Nodes are renumbered (workers, idle hosts,
 * servers, the generator's switches, the machines' switches) and hosts
 * renamed in their new order. */

/* The host position under switch `sw` that servers_at takes: the last one
 * not taken yet; -1 if none. */
static int64_t free_position_under(const Builder *b, uint32_t sw, uint32_t n_hosts, const uint8_t *taken) {
  int64_t best = -1;
  for (guint l = 0; l < b->links->len; l++) {
    const CsLink *k = &g_array_index(b->links, CsLink, l);
    uint32_t other = k->a == sw ? k->b : k->b == sw ? k->a : UINT32_MAX;
    if (other < n_hosts && !taken[other] && (int64_t)other > best) best = other;
  }
  return best;
}

static char *switch_names(const Builder *b, uint32_t first) {
  uint32_t n = b->nodes->len - first;
  if (n == 0) return g_strdup("none: its hosts are linked directly");
  const char *lo = g_array_index(b->nodes, CsNode, first).name, *hi = g_array_index(b->nodes, CsNode, b->nodes->len - 1).name;
  return n == 1 ? g_strdup(lo) : g_strdup_printf("%s .. %s", lo, hi);
}

static bool relayout(Builder *b, const CsTopologySpec *spec, GError **error) {
  uint32_t G = spec->gpus_per_host > 1 ? (uint32_t)spec->gpus_per_host : 1;
  bool place = spec->servers_at && spec->servers_at->len > 0;
  if (G == 1 && !place) return true;
  CsNode *old = (CsNode *)b->nodes->data;
  uint32_t n_old = b->nodes->len, H = 0;
  while (H < n_old && old[H].role != CS_ROLE_SWITCH) H++;
  CsRole *role = g_new(CsRole, H + 1);
  uint32_t W = 0;
  for (uint32_t p = 0; p < H; p++) role[p] = old[p].role, W += old[p].role == CS_ROLE_WORKER;
  if (place) {
    uint8_t *taken = g_new0(uint8_t, H + 1);
    for (guint i = 0; i < spec->servers_at->len; i++) {
      const CsNameRef *r = &g_array_index(spec->servers_at, CsNameRef, i);
      int64_t sw = -1;
      for (uint32_t n = H; n < n_old; n++)
        if (!strcmp(old[n].name, r->name)) sw = n;
      if (sw < 0) {
        g_autofree char *names = switch_names(b, H);
        cs_error_at(error, r->at, "topology.servers_at[%u]: '%s' is not a switch of this topology (its switches: %s)", i,
                    r->name, names);
        g_free(role), g_free(taken);
        return false;
      }
      int64_t pos = free_position_under(b, (uint32_t)sw, H, taken);
      if (pos < 0) {
        cs_error_at(error, r->at, "topology.servers_at[%u]: every host under '%s' already holds a server", i, r->name);
        g_free(role), g_free(taken);
        return false;
      }
      taken[pos] = 1;
    }
    /* the other positions: workers first, in position order, then idle hosts */
    uint32_t w = 0;
    for (uint32_t p = 0; p < H; p++) role[p] = taken[p] ? CS_ROLE_SERVER : w++ < W ? CS_ROLE_WORKER : CS_ROLE_HOST;
    g_free(taken);
  }
  /* the new numbering: workers (G per worker position), idle hosts, servers, switches, machines */
  uint32_t n_new = n_old + (G > 1 ? W * G : 0);
  uint32_t *map = g_new(uint32_t, n_old + 1); /* old node -> the node its links now end at */
  CsNode *nodes = g_new0(CsNode, n_new + 1);
  uint32_t next = 0, counts[3] = {0, 0, 0};
  static const CsRole order[3] = {CS_ROLE_WORKER, CS_ROLE_HOST, CS_ROLE_SERVER};
  uint32_t machine_first = n_old + (G > 1 ? W * G : 0) - (G > 1 ? W : 0);
  uint32_t machine = 0;
  for (int o = 0; o < 3; o++)
    for (uint32_t p = 0; p < H; p++) {
      if (role[p] != order[o]) continue;
      if (order[o] == CS_ROLE_WORKER && G > 1) {
        for (uint32_t g = 0; g < G; g++)
          nodes[next++] = (CsNode){g_strdup_printf("w%u", counts[0]++), CS_ROLE_WORKER, 0, 0, -1};
        map[p] = machine_first + machine++;
        continue;
      }
      const char *prefix = order[o] == CS_ROLE_WORKER ? "w" : order[o] == CS_ROLE_HOST ? "h" : "ps";
      nodes[next] = (CsNode){g_strdup_printf("%s%u", prefix, counts[o]++), order[o], 0, 0, -1};
      map[p] = next++;
    }
  for (uint32_t n = H; n < n_old; n++) {
    nodes[next] = old[n];
    old[n].name = NULL;
    map[n] = next++;
  }
  for (uint32_t k = 0; G > 1 && k < W; k++) nodes[next++] = (CsNode){g_strdup_printf("host%u", k), CS_ROLE_SWITCH, 0, 0, -1};
  for (uint32_t p = 0; p < H; p++) g_free(old[p].name);
  g_array_set_size(b->nodes, 0);
  g_array_append_vals(b->nodes, nodes, n_new);
  for (guint l = 0; l < b->links->len; l++) {
    CsLink *k = &g_array_index(b->links, CsLink, l);
    k->a = map[k->a];
    k->b = map[k->b];
  }
  for (uint32_t k = 0; G > 1 && k < W; k++)
    for (uint32_t g = 0; g < G; g++) cs_topo_add_link(b, k * G + g, machine_first + k, &spec->intra);
  g_free(nodes);
  g_free(map);
  g_free(role);
  return true;
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
  Builder b = {g_array_new(FALSE, TRUE, sizeof(CsNode)), g_array_new(FALSE, TRUE, sizeof(CsLink)), 0};
  CsTopology *t = g_new0(CsTopology, 1);
  t->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  t->bisection_bps = -1;
  t->gpus_per_host = spec->gpus_per_host > 1 ? (uint32_t)spec->gpus_per_host : 1;
  bool ok = true;
  if (spec->type == CS_TOPO_EXPLICIT) {
    ok = explicit_topology(&b, spec, t->by_name, error);
  } else {
    CsTopologySpec gen = *spec; /* the generator lays out machines: one host position per G workers */
    if (gen.gpus_per_host > 1 && gen.workers > 0) gen.workers /= gen.gpus_per_host;
    t->bisection_bps = cs_topo_generators[spec->type]->build(&b, &gen, defaults);
    ok = relayout(&b, spec, error);
    for (guint i = 0; ok && i < b.nodes->len; i++)
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

uint32_t cs_topology_override(CsTopology *t, const CsLinkOverride *o) {
  GPatternSpec *pat = g_pattern_spec_new(o->match);
  uint32_t n = 0;
  for (uint32_t l = 0; l < t->n_links; l++) {
    CsLinkSpec *s = &t->links[l].spec;
    const char *a = t->nodes[t->links[l].a].name, *b = t->nodes[t->links[l].b].name;
    g_autofree char *ab = g_strdup_printf("%s-%s", a, b), *ba = g_strdup_printf("%s-%s", b, a);
    if (!g_pattern_spec_match_string(pat, ab) && !g_pattern_spec_match_string(pat, ba)) continue;
    n++;
    s->at = o->at;
    if (o->fields & (CS_LINK_SET_BANDWIDTH | CS_LINK_SET_LATENCY | CS_LINK_SET_BUFFER | CS_LINK_SET_PFC))
      s->headroom_at = o->at;
    if (o->fields & CS_LINK_SET_BANDWIDTH) s->bandwidth = o->spec.bandwidth;
    if (o->fields & CS_LINK_SET_LATENCY) s->latency = o->spec.latency;
    if (o->fields & CS_LINK_SET_BUFFER) {
      s->buffer = o->spec.buffer;
      s->buffer_pkt = o->spec.buffer_pkt;
      s->buffer_set = true;
    }
    if (o->fields & CS_LINK_SET_QUEUE) s->queue = o->spec.queue;
    if (o->fields & CS_LINK_SET_LOSS) s->loss = o->spec.loss;
    if (o->fields & CS_LINK_SET_RED) s->red = o->spec.red;
    if (o->fields & CS_LINK_SET_ECN) {
      s->ecn_threshold = o->spec.ecn_threshold;
      s->ecn_threshold_pkt = o->spec.ecn_threshold_pkt;
    }
    if (o->fields & CS_LINK_SET_PFC) s->pfc_xoff = o->spec.pfc_xoff, s->pfc_xon = o->spec.pfc_xon;
    if (o->fields & CS_LINK_SET_ECN_CURVE)
      s->ecn_kmin = o->spec.ecn_kmin, s->ecn_kmax = o->spec.ecn_kmax, s->ecn_pmax = o->spec.ecn_pmax;
  }
  g_pattern_spec_free(pat);
  return n;
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
static const char *const queue_names[] = {"droptail", "red", "ecn", NULL};

const char *cs_role_name(CsRole r) { return role_names[r]; }
const char *cs_topo_type_name(CsTopoType t) { return cs_topo_generators[t]->name; }
const char *cs_queue_name(CsQueueKind q) { return queue_names[q]; }
const char *const *cs_queue_names(void) { return queue_names; }

const char *const *cs_switching_names(void) {
  static const char *const names[] = {"store-and-forward", "cut-through", NULL}; /* CsSwitching order */
  return names;
}

int64_t cs_tree_uplink_bps(int64_t host_bps, int64_t hosts_per_leaf, double oversubscription) {
  double up = (double)host_bps * (double)hosts_per_leaf / oversubscription;
  if (!(up >= 0.5) || up >= 9.2e18) return -1; /* below 1 bit/s once rounded, or past int64 */
  return (int64_t)(up + 0.5);
}
