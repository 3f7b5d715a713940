/* scenario.h - a scenario file as plain validated structs.
 *
 * cs_scenario_load() reads the YAML (docs/scenario.md), applies `--set`
 * overrides, checks every key, unit and range, and returns a CsScenario
 * whose values are in integer base units (picoseconds, bit/s, bytes).
 * Every error names FILE:LINE:COLUMN.  Nothing here builds the network:
 * the topology module turns `topology` (or `nodes` + `links`) into nodes
 * and links, and checks names and connectivity.
 *
 * Layer 6 (scenario; docs/design.md). Owns the scenario's structs, their
 * reading and their one validation pass; does not touch running anything.
 */
#ifndef COMMSIM_SCENARIO_H
#define COMMSIM_SCENARIO_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/codec.h"
#include "commsim/collective.h"
#include "commsim/engine.h"
#include "commsim/error.h"
#include "commsim/fabric.h"
#include "commsim/model.h"
#include "commsim/net.h"
#include "commsim/params.h"
#include "commsim/routing.h"
#include "commsim/topology.h"
#include "commsim/workload.h"
#include "commsim/yamltree.h"

/* A raw transfer (flows[]). */
typedef struct {
  char *src, *dst;
  int64_t size; /* payload bytes */
  CsTime start;
  CsLoc at;
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
  CsLoc at;
  CsLoc *key_at;     /* per key: where it is written (its column within a zipped axis's key) */
} CsSweepAxis;

typedef struct {
  char *file; /* the path it was loaded from */
  char *name;
  uint64_t seed;
  CsRouting routing;
  CsSwitching switching;
  uint32_t fidelity; /* a row of fabric.h's cs_fidelities */
  int64_t hybrid_rounds;   /* hybrid.rounds */
  double hybrid_tolerance; /* hybrid.tolerance */
  CsLoc hybrid_at;         /* where a hybrid: section was given (file NULL: none) */
  CsTime duration;
  CsTime watchdog; /* a packet run with messages outstanding and none delivered for this long ends (0: never;
                   * unless given, at least max_timeouts + 2 minutes with TCP) */
  CsLinkSpec defaults;
  CsTopologySpec topology;
  CsTransportSpec transport;
  CsWorkloadSpec workload;
  GArray *background; /* CsBackgroundSpec */
  GArray *flows;      /* CsFlowSpec */
  CsOutputSpec output;
  GArray *sweep; /* CsSweepAxis */
  GStringChunk *strings; /* where each value came from (CsLoc.file): the file, --set texts */
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

/* What each layer needs of a scenario, assembled (world.c). */
CsNetConfig cs_scenario_net_config(const CsScenario *s);
/* Build the network of a scenario and check every name the scenario uses
 * (flows, background, workload servers) against it. */
CsTopology *cs_topology_build(const CsScenario *s, GError **error);
/* Its routes (an error names the file). */
CsRoutes *cs_scenario_routes(const CsScenario *s, const CsTopology *t, GError **error);
/* Everything `run` would refuse before simulating, for a scenario whose
 * network is built: sizes and limits, the codec's parameters, the
 * collective against the topology.  validate, model and run all call it,
 * so they refuse the same scenarios with the same messages. */
bool cs_scenario_check(const CsScenario *s, const CsTopology *t, const CsRoutes *r, GError **error);
/* The model's estimate of a scenario's training (model.h). */
bool cs_model_estimate(const CsScenario *s, const CsTopology *t, const CsRoutes *r, CsModel *m, GError **error);

/* The kind (params.h) of a dotted key as --set takes it, for tools that
 * show swept values as numbers, CS_KEY_OTHER for what has none (list items by number:
 * "links.0.bandwidth"). */
CsKeyKind cs_scenario_key_kind(const char *dotted);
/* A value of that kind in base units, as text for a CSV cell
 * ("10Gbps" -> "10000000000", "100us" -> "0.0001", "1%" -> "0.01"),
 * with *unit the column suffix ("bps", "s", "bytes", "pkt", "count",
 * "fraction"); NULL for CS_KEY_OTHER or a value that does not parse. */
char *cs_scenario_value_number(CsKeyKind kind, const char *value, const char **unit);

/* How two dotted keys as --set takes them meet, list indexes compared
 * as numbers: CS_KEYS_APART, CS_KEYS_SAME, CS_KEYS_INSIDE (a is within
 * b: "defaults.pfc.xoff" in "defaults.pfc") or CS_KEYS_AROUND (b within a). */
typedef enum { CS_KEYS_APART, CS_KEYS_SAME, CS_KEYS_INSIDE, CS_KEYS_AROUND } CsKeysOverlap;
CsKeysOverlap cs_scenario_keys_overlap(const char *a, const char *b);

/* Every key the loader accepts, as dotted paths with `[]` for list items
 * ("links[].bandwidth"); NULL-terminated.  The reference documentation
 * is checked against it. */
const char *const *cs_scenario_known_keys(void);

#endif
