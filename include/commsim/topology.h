/* topology.h - the network as nodes, links and ports.
 *
 * Built from a scenario's `topology:` generator or its explicit `nodes:`
 * and `links:`.  Nodes are numbered hosts first (workers, then idle hosts,
 * then servers, as SPEC 3.0 places them), then switches; a node's ports
 * are sorted by the node at their far end, so "the first port that leads
 * there" breaks ties by node order.  Names are for set-up and output only:
 * nothing on the simulated path looks a name up.
 *
 * Layer 1 (models; docs/design.md). Owns nodes, links, ports and the topology
 * generators' table; does not touch routing, the network's state, scenarios.
 */
#ifndef COMMSIM_TOPOLOGY_H
#define COMMSIM_TOPOLOGY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/error.h"
#include "commsim/time.h"
#include "commsim/loss.h"

typedef enum { CS_ROLE_WORKER, CS_ROLE_SERVER, CS_ROLE_HOST, CS_ROLE_SWITCH } CsRole;
typedef enum { CS_QUEUE_DROPTAIL, CS_QUEUE_RED, CS_QUEUE_ECN } CsQueueKind;
typedef enum {
  CS_TOPO_EXPLICIT,
  CS_TOPO_STAR,
  CS_TOPO_RING,
  CS_TOPO_DUMBBELL,
  CS_TOPO_FAT_TREE,
  CS_TOPO_TORUS2D,
  CS_TOPO_TREE,
} CsTopoType;

typedef struct {
  int64_t min, max; /* average queue thresholds, bytes */
  double max_p;     /* drop probability at max */
  double weight;    /* EWMA weight of the average */
} CsRedSpec;

/* Settings of one link (both directions). */
typedef struct {
  int64_t bandwidth; /* bit/s */
  CsTime latency;    /* one-way propagation */
  int64_t buffer;    /* bytes, or packets when buffer_pkt */
  bool buffer_pkt;
  bool buffer_set; /* given on the link itself (a host's queue is bounded only then) */
  CsQueueKind queue;
  CsRedSpec red;
  int64_t ecn_threshold; /* bytes, or packets when ecn_threshold_pkt */
  bool ecn_threshold_pkt;
  CsLossSpec loss;
  /* PFC (both ends' ingress ports): at pfc_xoff bytes waiting at a switch
   * that came in by this link, pause the direction that brought them;
   * resume at pfc_xon.  pfc_xoff 0: no PFC. */
  int64_t pfc_xoff, pfc_xon;
  /* ecn: {kmin, kmax, pmax} (bytes): RED's marking curve on the queue an
   * ECN-capable packet finds; ecn_kmax 0: none (queue: ecn's threshold,
   * if any, applies) */
  int64_t ecn_kmin, ecn_kmax;
  double ecn_pmax;
  /* where its settings were last given (`defaults:`, its links[] entry or
   * a links_override that matched it), for errors about one link; no file
   * when nothing gave them */
  CsLoc at;
  /* where its bandwidth, latency, buffer or pfc were last given: what a
   * PFC headroom or a buffer's error is about (an override of its ecn
   * alone does not move it) */
  CsLoc headroom_at;
} CsLinkSpec;

typedef struct {
  char *name;
  CsRole role;
  CsLoc at; /* where it was declared */
} CsNodeSpec;

typedef struct {
  char *a, *b;
  CsLinkSpec spec;
  CsLoc at;
} CsLinkDecl;

/* links_override: the settings a pattern gives every link it matches. */
enum {
  CS_LINK_SET_BANDWIDTH = 1u << 0,
  CS_LINK_SET_LATENCY = 1u << 1,
  CS_LINK_SET_BUFFER = 1u << 2,
  CS_LINK_SET_QUEUE = 1u << 3,
  CS_LINK_SET_LOSS = 1u << 4,
  CS_LINK_SET_RED = 1u << 5,
  CS_LINK_SET_ECN = 1u << 6,
  CS_LINK_SET_PFC = 1u << 7,
  CS_LINK_SET_ECN_CURVE = 1u << 8,
};
typedef struct {
  char *match;     /* "a-b" (either order), '*' and '?' as in shell patterns */
  CsLinkSpec spec; /* the values of the fields given */
  unsigned fields; /* CS_LINK_SET_* */
  CsLoc at;
} CsLinkOverride;

/* The network a scenario asks for: a generator and its parameters, or
 * explicit nodes and links. */
typedef struct {
  CsTopoType type;
  int64_t workers; /* -1: every host that is not a server */
  int64_t servers;
  int64_t k;            /* fat-tree */
  int64_t x, y;         /* torus2d */
  int64_t leaves;       /* tree */
  int64_t hosts_per_leaf;
  double oversubscription;
  CsLinkSpec bottleneck; /* dumbbell: defaults overridden by `bottleneck:` */
  /* explicit */
  GArray *nodes; /* CsNodeSpec */
  GArray *links; /* CsLinkDecl */
  GArray *overrides; /* CsLinkOverride: links_override, applied in order after the network is laid out */
  int64_t gpus_per_host; /* workers per machine on an internal switch; 1: a worker is a host */
  CsLinkSpec intra;      /* the links from each worker to its machine's internal switch */
  GArray *servers_at;    /* CsNameRef: switches to put the servers under; empty: the last host positions */
  CsLoc at;      /* the file, for what has no line of its own */
} CsTopologySpec;

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
  uint32_t gpus_per_host; /* workers w[h*G .. h*G+G) share machine h's internal switch */
  /* `switching: cut-through`: a switch forwards a packet once its first
   * cut_through bytes have arrived (CS_CUT_THROUGH_BYTES); 0: once all of
   * it has (store-and-forward, the default) */
  uint32_t cut_through;
  GHashTable *by_name;   /* name -> node index + 1 */
} CsTopology;

/* What a cut-through switch must have of a packet before it starts to
 * send it: its first 64 bytes (the smallest Ethernet frame, which holds
 * the headers a forwarding decision reads). */
#define CS_CUT_THROUGH_BYTES 64u
typedef enum { CS_SWITCHING_STORE_AND_FORWARD, CS_SWITCHING_CUT_THROUGH } CsSwitching;
const char *const *cs_switching_names(void); /* in CsSwitching order, NULL-terminated */

/* The bytes of a packet that the node sending on link direction di
 * (2 x link + dir) needs before it forwards the packet: cut_through when
 * that node is a switch of a cut-through network, else 0 (all of it:
 * hosts, a ring's forwarding ones included, store and forward). */
static inline uint32_t cs_dir_cut_bytes(const CsTopology *t, uint32_t di) {
  if (!t->cut_through) return 0;
  const CsLink *l = &t->links[di / 2];
  return t->nodes[di % 2 ? l->b : l->a].role == CS_ROLE_SWITCH ? t->cut_through : 0;
}

/* Build the network a spec describes, its links inheriting `defaults`
 * (the scenario's cs_topology_build also checks the names it uses). */
CsTopology *cs_topology_new(const CsTopologySpec *spec, const CsLinkSpec *defaults, GError **error);
/* Give every link whose ends' names, "a-b" or "b-a", match o->match the
 * fields o gives; returns how many links matched. */
uint32_t cs_topology_override(CsTopology *t, const CsLinkOverride *o);
void cs_topology_free(CsTopology *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsTopology, cs_topology_free)

/* Node index by name, or -1. */
int64_t cs_topology_find(const CsTopology *t, const char *name);
/* Whether `name` is a host of t; false with a located error otherwise
 * ("WHAT: unknown node 'x' (did you mean 'w1'?)", or a switch). */
bool cs_topology_check_host(const CsTopology *t, const char *name, const char *what, CsLoc at, GError **error);

/* A tree's uplink: host bandwidth * hosts_per_leaf / oversubscription, to
 * the bit/s; -1 when that is below 1 bit/s or beyond int64. */
int64_t cs_tree_uplink_bps(int64_t host_bps, int64_t hosts_per_leaf, double oversubscription);

/* ---- the generators: one row per topology.type ----
 * A generator is one file under sim/net/topo/ and one row of
 * cs_topo_generators (its table, sim/net/topo/generators.c). */
typedef struct CsTopoBuilder CsTopoBuilder; /* hosts, switches, links (sim/net/topo/builder.h) */
typedef struct {
  const char *name;
  const char *help;         /* one line: what it builds */
  const char *const *takes; /* the keys of topology: it reads besides type, in the order messages list them */
  const char *const *needs; /* those it requires */
  /* What its values must satisfy beyond their kinds: NULL, or a message
   * (to free) about topology.*key; `defaults` are the links' settings. */
  char *(*check)(const CsTopologySpec *t, const CsLinkSpec *defaults, const char **key);
  /* The hosts it lays out; NULL: workers + servers. */
  int64_t (*hosts)(const CsTopologySpec *t);
  /* Lay out its hosts, switches and links; the bisection bandwidth it knows, or -1. */
  int64_t (*build)(CsTopoBuilder *b, const CsTopologySpec *t, const CsLinkSpec *defaults);
} CsTopoGenerator;

/* Indexed by CsTopoType (row 0, explicit, has no build), NULL-terminated. */
extern const CsTopoGenerator *const cs_topo_generators[];
/* The generators' names (explicit aside), NULL-terminated: topology.type's values. */
const char *const *cs_topo_generator_names(void);

const char *cs_role_name(CsRole role);
const char *cs_topo_type_name(CsTopoType type);
const char *cs_queue_name(CsQueueKind q);
const char *const *cs_queue_names(void); /* in CsQueueKind order, NULL-terminated */

/* The time in seconds a lone message of `packets` packets (all `full`
 * bytes on the wire but the last, `last` bytes) takes over hops of
 * bit/s `bps[k]` and one-way latency `lat_s[k]`, packet by packet as the
 * packet network moves it: behind hop k the train of full packets is
 * spaced by the slowest full packet time up to k (its first packet
 * arrives after every hop's store-and-forward), and the last packet
 * leaves a hop once it has arrived and the packet before it has left.
 * A last packet smaller than the others therefore waits behind them where
 * no hop before was slower, not only at the slowest hop.  `cut` (NULL:
 * none): cut[k] > 0 when the node before hop k (k >= 1) forwards cut
 * through after that many bytes (cs_dir_cut_bytes): a packet starts there
 * once those bytes have arrived, or later if it would otherwise finish
 * before its last bit arrives, so the hop adds max(its own time - the
 * hop before's + the cut's time there, 0) instead of its own time. */
static inline double cs_path_hop_adds(double bytes, const double *bps, const double *cut, int k) {
  double own = 8.0 * bytes / bps[k];
  if (!cut || k == 0 || cut[k] <= 0) return own;
  double before = 8.0 * bytes / bps[k - 1], c = 8.0 * (cut[k] < bytes ? cut[k] : bytes) / bps[k - 1];
  double adds = own - before + c;
  return adds > 0 ? adds : 0;
}

static inline double cs_path_message_time(uint64_t packets, double full, double last, const double *bps,
                                          const double *lat_s, const double *cut, int hops) {
  double first = 0, period = 0, t_last = 0; /* at hop k: when the first full packet, and the last, have left it */
  for (int k = 0; k < hops; k++) {
    double f = 8.0 * full / bps[k];
    if (period < f) period = f;
    first += cs_path_hop_adds(full, bps, cut, k);
    double before = packets > 1 ? first + (double)(packets - 2) * period : 0; /* the packet before the last leaves */
    double own = t_last + cs_path_hop_adds(last, bps, cut, k), behind = before + 8.0 * last / bps[k];
    t_last = own > behind ? own : behind;
    first += lat_s[k];
    t_last += lat_s[k];
  }
  return t_last;
}

/* What that time adds to the message's wire bytes at the slowest hop's
 * rate (the part a fluid or a busiest-link model counts apart): the
 * latencies and the store-and-forward.  hops >= 1, packets >= 1. */
static inline double cs_path_message_tail(uint64_t packets, double full, double last, const double *bps,
                                          const double *lat_s, const double *cut, int hops) {
  double bmin = bps[0];
  for (int k = 1; k < hops; k++)
    if (bps[k] < bmin) bmin = bps[k];
  double wire = (double)(packets - 1) * full + last;
  return cs_path_message_time(packets, full, last, bps, lat_s, cut, hops) - 8.0 * wire / bmin;
}

#endif
