/* params.h - every scenario key, declared once.
 *
 * One row per key: its kind, what it means, its values and default as the
 * reference shows them, and for the keys the reader takes generically
 * where the value goes (a field of one of the spec structs), the default
 * it starts from (written as a user would write it, parsed like the
 * user's value) and its range.  From the table come: the reader's known
 * keys per section, the defaults of a new scenario, the range checks and
 * their messages, the kind of each key for sweeps' numeric columns,
 * `commsim keys` and the reference tables of docs/scenario.md (a test
 * compares them line by line).  Keys with checks of their own (loss
 * models, a window in packets or bytes, lists) are read by hand in
 * scenario.c and marked `custom` or left unbound here.
 *
 * Layer 6 (scenario; docs/design.md). Owns the table of scenario keys; does
 * not touch the simulation.
 */
#ifndef COMMSIM_PARAMS_H
#define COMMSIM_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a key holds. */
typedef enum {
  CS_KEY_OTHER,       /* (not a key of the table) */
  CS_KEY_BANDWIDTH,   /* bit/s */
  CS_KEY_TIME,        /* picoseconds in, seconds out */
  CS_KEY_SIZE,        /* bytes */
  CS_KEY_BUFFER,      /* bytes, or packets ("64pkt") */
  CS_KEY_COUNT,       /* "25.6M" */
  CS_KEY_PROBABILITY, /* "1%" */
  CS_KEY_REAL,        /* a plain number */
  CS_KEY_BOOL,
  CS_KEY_ENUM,        /* one of `names` */
  CS_KEY_NAME,        /* a node's name */
  CS_KEY_STRING,
  CS_KEY_MAP,         /* a section */
  CS_KEY_LIST,
} CsKeyKind;

/* The struct a bound key's value goes into. */
typedef enum {
  CS_PARAM_UNBOUND,   /* read by hand */
  CS_PARAM_SCENARIO,  /* CsScenario */
  CS_PARAM_LINK,      /* CsLinkSpec: defaults, links[], topology.bottleneck */
  CS_PARAM_TOPOLOGY,  /* CsTopologySpec */
  CS_PARAM_TRANSPORT, /* CsTransportSpec */
  CS_PARAM_WORKLOAD,  /* CsWorkloadSpec (its compression too) */
  CS_PARAM_BACKGROUND,
  CS_PARAM_FLOW,
  CS_PARAM_OUTPUT,
} CsParamBase;

enum {
  CS_PARAM_RANGE = 1u << 0,    /* min and max apply (to the value in the kind's unit: bytes, s, bit/s) */
  CS_PARAM_MIN_OPEN = 1u << 1, /* > min rather than >= min */
};

typedef struct {
  const char *key;         /* dotted, "[]" for list items: "links[].latency" */
  CsKeyKind kind;
  const char *help;        /* the reference's "meaning" */
  const char *values;      /* its "unit / values" */
  const char *doc_default; /* its "default" */
  /* the reader's binding (base CS_PARAM_UNBOUND: read by hand) */
  CsParamBase base;
  bool custom;             /* the default comes from here; the reading and checks are scenario.c's */
  size_t offset;           /* of the field in the base struct */
  size_t flag;             /* buffers: 1 + offset of the bool "counted in packets", or 0 */
  const char *set;         /* the default, as a scenario would write it; NULL: zero or set by hand */
  double min, max;         /* with CS_PARAM_RANGE */
  unsigned range;
  const char *const *(*names)(void); /* enums: the names, NULL-terminated; the value is the index */
  const char *what;        /* enums: what a value is, for messages ("queue discipline") */
  const char *(*choice_help)(uint32_t i); /* enums from a registry: one line on each value, or NULL */
} CsParam;

/* The table, terminated by a row whose key is NULL. */
extern const CsParam cs_params[];
/* The row of a key written with "[]" for list items, or NULL. */
const CsParam *cs_param_find(const char *key);
/* The keys of one section ("workload.compression", "links[]", "" for the
 * top level), NULL-terminated (owned by the table: built once). */
const char *const *cs_param_section_keys(const char *section);
/* A row as a line of the reference's tables ("| `key` | meaning | values | default |"), to free. */
char *cs_param_reference_row(const CsParam *p);

#endif
