/* scenario.h - a scenario file as plain validated structs.
 *
 * cs_scenario_load() reads the YAML (SPEC section 3), applies `--set`
 * overrides, checks every key, unit and range, and returns a CsScenario
 * whose values are in integer base units (picoseconds, bit/s, bytes).
 * Every error names FILE:LINE:COLUMN.  Nothing here builds the network:
 * the topology module turns `topology` (or `nodes` + `links`) into nodes
 * and links, and checks names and connectivity.
 */
#ifndef COMMSIM_SCENARIO_H
#define COMMSIM_SCENARIO_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/engine.h"
#include "commsim/yamltree.h"

typedef enum { CS_ROLE_WORKER, CS_ROLE_SERVER, CS_ROLE_HOST, CS_ROLE_SWITCH } CsRole;
typedef enum { CS_ROUTING_SHORTEST, CS_ROUTING_ECMP } CsRouting;
typedef enum { CS_QUEUE_DROPTAIL, CS_QUEUE_RED, CS_QUEUE_ECN } CsQueueKind;
typedef enum { CS_LOSS_NONE, CS_LOSS_BERNOULLI, CS_LOSS_GILBERT } CsLossModel;
typedef enum {
  CS_TOPO_EXPLICIT,
  CS_TOPO_STAR,
  CS_TOPO_RING,
  CS_TOPO_DUMBBELL,
  CS_TOPO_FAT_TREE,
  CS_TOPO_TORUS2D,
  CS_TOPO_TREE,
} CsTopoType;
/* A row of the protocol table (cc.h: cs_protocols); the built-in rows: */
typedef uint32_t CsProtocol;
enum { CS_PROTO_FIXED, CS_PROTO_RENO, CS_PROTO_DCTCP };
typedef enum {
  CS_COLL_PS,
  CS_COLL_RING,
  CS_COLL_TREE,
  CS_COLL_HALVING_DOUBLING,
  CS_COLL_ALLGATHER,
} CsCollective;
typedef enum { CS_PATTERN_CBR, CS_PATTERN_POISSON, CS_PATTERN_ONOFF } CsPattern;

typedef struct {
  CsLossModel model;
  double rate;                /* bernoulli */
  double p, r;                /* gilbert-elliott: good->bad, bad->good per packet */
  double loss_good, loss_bad; /* loss probability in each state */
} CsLossSpec;

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
} CsLinkSpec;

typedef struct {
  char *name;
  CsRole role;
  int line, col; /* where it was declared (explicit topologies) */
} CsNodeSpec;

typedef struct {
  char *a, *b;
  CsLinkSpec spec;
  int line, col;
} CsLinkDecl;

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
} CsTopologySpec;

typedef struct {
  CsProtocol protocol;
  int64_t mtu, header, ack; /* bytes */
  int64_t window;           /* packets, or bytes when window_bytes */
  bool window_bytes;
  int64_t init_cwnd; /* packets */
  CsTime min_rto;
  int64_t max_timeouts; /* consecutive timeouts before a message is abandoned */
  CsTime initial_rto;   /* before a connection has an RTT sample */
  int64_t host_queue;   /* bytes a host's egress may hold waiting before its flows pause;
                         * 0 = unlimited, -1 = 100 us of the host's link (the default) */
} CsTransportSpec;

typedef struct {
  char *method; /* validated name; the codec module interprets it */
  int64_t bits;
  double ratio;
  int64_t index_bits;
  int64_t bucket;
  bool error_feedback;
  bool cost_set;      /* compression.cost given (then speedup does not apply) */
  CsTime cost_encode; /* per element, ps */
  CsTime cost_decode;
  CsTime cost_reduce;
  double speedup; /* divides the default (measured) costs */
} CsCompressionSpec;

typedef struct {
  bool present;
  int64_t params;
  char *dtype; /* fp32 | fp16 | bf16 */
  int64_t iterations;
  int64_t warmup; /* first iterations left out of the summary's means */
  CsTime compute;
  double compute_jitter;
  double backward_fraction;
  int64_t buckets; /* bytes; 0 = one bucket after compute */
  int64_t accumulation;
  CsCollective collective;
  int64_t chunks;
  GArray *servers; /* CsNameRef; empty = all servers */
  bool sync, pull;
  CsCompressionSpec compression;
  int line, col; /* of `workload:` */
} CsWorkloadSpec;

/* A name used somewhere in the file, with where. */
typedef struct {
  char *name;
  int line, col;
} CsNameRef;

typedef struct {
  char *src, *dst;
  CsPattern pattern;
  int64_t rate; /* bit/s */
  int64_t size; /* bytes per packet, on the wire */
  CsTime on, off;
  int line, col;
} CsBackgroundSpec;

typedef struct {
  char *src, *dst;
  int64_t size; /* payload bytes */
  CsTime start;
  int line, col;
} CsFlowSpec;

enum {
  CS_TRACE_SUMMARY = 1 << 0,
  CS_TRACE_ITERATIONS = 1 << 1,
  CS_TRACE_MESSAGES = 1 << 2,
  CS_TRACE_LINKS = 1 << 3,
  CS_TRACE_PACKETS = 1 << 4,
  CS_TRACE_TIMELINE = 1 << 5,
};

typedef struct {
  char *dir;
  unsigned traces; /* CS_TRACE_* bits */
  CsTime sample_interval;
} CsOutputSpec;

typedef struct {
  char *key;         /* as written: a dotted key, or several joined by commas (a zipped axis) */
  char **keys;       /* the dotted keys */
  GPtrArray *values; /* per value of the axis: a NULL-terminated char ** with one value per key */
  int line, col;
} CsSweepAxis;

typedef struct {
  char *file; /* the path it was loaded from */
  char *name;
  uint64_t seed;
  CsRouting routing;
  CsTime duration;
  CsLinkSpec defaults;
  CsTopologySpec topology;
  CsTransportSpec transport;
  CsWorkloadSpec workload;
  GArray *background; /* CsBackgroundSpec */
  GArray *flows;      /* CsFlowSpec */
  CsOutputSpec output;
  GArray *sweep; /* CsSweepAxis */
} CsScenario;

/* Load, override and validate.  `overrides` are "KEY=VALUE" strings (may be
 * NULL).  On error returns NULL with a located message. */
CsScenario *cs_scenario_load(const char *path, const char *const *overrides, GError **error);
/* The same from text; `name` stands for the file in messages. */
CsScenario *cs_scenario_load_string(const char *text, const char *name,
                                    const char *const *overrides, GError **error);
/* From a tree that already has its overrides (a sweep point). */
CsScenario *cs_scenario_from_yaml(CsYamlDoc *doc, const char *path, GError **error);
void cs_scenario_free(CsScenario *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsScenario, cs_scenario_free)

/* A tree's uplink: host bandwidth * hosts_per_leaf / oversubscription, to
 * the bit/s; -1 when that is below 1 bit/s or beyond int64. */
int64_t cs_tree_uplink_bps(int64_t host_bps, int64_t hosts_per_leaf, double oversubscription);

const char *cs_role_name(CsRole role);
const char *cs_topo_type_name(CsTopoType type);
const char *cs_collective_name(CsCollective c);
const char *cs_protocol_name(CsProtocol p);
const char *cs_queue_name(CsQueueKind q);

/* What a scalar key holds, for tools that show swept values as numbers. */
typedef enum {
  CS_KEY_OTHER,       /* a name, a flag, or a plain number */
  CS_KEY_BANDWIDTH,   /* bit/s */
  CS_KEY_TIME,        /* picoseconds in, seconds out */
  CS_KEY_SIZE,        /* bytes */
  CS_KEY_BUFFER,      /* bytes, or packets ("64pkt") */
  CS_KEY_COUNT,       /* "25.6M" */
  CS_KEY_PROBABILITY, /* "1%" */
} CsKeyKind;
/* The kind of a dotted key as --set takes it (list items by number:
 * "links.0.bandwidth"). */
CsKeyKind cs_scenario_key_kind(const char *dotted);
/* A value of that kind in base units, as text for a CSV cell
 * ("10Gbps" -> "10000000000", "100us" -> "0.0001", "1%" -> "0.01"),
 * with *unit the column suffix ("bps", "s", "bytes", "pkt", "count",
 * "fraction"); NULL for CS_KEY_OTHER or a value that does not parse. */
char *cs_scenario_value_number(CsKeyKind kind, const char *value, const char **unit);

/* Every key the loader accepts, as dotted paths with `[]` for list items
 * ("links[].bandwidth"); NULL-terminated.  The reference documentation
 * is checked against it. */
const char *const *cs_scenario_known_keys(void);

#endif
