/* yamltree.h - a YAML document as a tree of located nodes.
 *
 * libyaml's events become maps, sequences and scalars that remember where
 * they came from (file, line, column), so every later check can say where
 * the problem is.  Aliases are expanded as copies, with a bound on the
 * nodes they may add (a "billion laughs" file is refused at once, not
 * expanded); YAML merge keys (`<<: *base`) are applied.  `--set KEY=VALUE`
 * overrides are applied to the tree before anything reads it, so they meet
 * the same checks as the file.  Scalars stay strings: their meaning (unit,
 * enum, number) is for the reader of the tree to decide.
 *
 * Layer 0 (base; docs/design.md). Owns the YAML tree with locations, aliases,
 * merge keys; does not touch what the keys mean (scenario.c).
 */
#ifndef COMMSIM_YAMLTREE_H
#define COMMSIM_YAMLTREE_H

#include <glib.h>
#include <stdbool.h>

#include "commsim/error.h"

typedef enum { CS_YAML_SCALAR, CS_YAML_MAP, CS_YAML_SEQ } CsYamlKind;

typedef struct CsYamlNode CsYamlNode;
struct CsYamlNode {
  CsYamlKind kind;
  const char *origin; /* file name, or the "--set K=V" text; owned by the doc */
  int line, col;      /* 1-based; 0 when the node came from --set; an alias's copy: the alias */
  int anchor_line, anchor_col; /* a copy made for an alias: where the original is; else 0 */
  char *text;         /* SCALAR: the value */
  bool plain;         /* SCALAR: unquoted (so an empty plain scalar is "no value") */
  GPtrArray *keys;    /* MAP: key scalars (CsYamlNode *), in file order */
  GPtrArray *items;   /* MAP: values, parallel to keys; SEQ: the items */
};

typedef struct CsYamlDoc CsYamlDoc;

/* The largest scenario file read: anything longer is not a scenario. */
#define CS_YAML_MAX_FILE_BYTES (64 << 20)

/* The most nodes that aliases may add to a document. */
#define CS_YAML_MAX_ALIAS_NODES 100000

CsYamlDoc *cs_yaml_load_file(const char *path, GError **error);
/* The text of a small file (`what` it should be, for messages): not a
 * directory or device, at most CS_YAML_MAX_FILE_BYTES; NULL with an error. */
GString *cs_read_small_file(const char *path, const char *what, GError **error);
/* `name` is used in locations. */
CsYamlDoc *cs_yaml_load_string(const char *text, gsize len, const char *name, GError **error);
void cs_yaml_doc_free(CsYamlDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsYamlDoc, cs_yaml_doc_free)

CsYamlNode *cs_yaml_root(CsYamlDoc *doc);
/* A deep copy of the whole document (for sweep points). */
CsYamlDoc *cs_yaml_doc_copy(const CsYamlDoc *doc);

/* A SHA-256 (hex, to free) of the document's content: keys, values and
 * structure, in order, but neither comments nor layout nor locations; two
 * documents that read the same have the same fingerprint. */
char *cs_yaml_fingerprint(const CsYamlDoc *doc);

/* Apply "a.b.c=value": intermediate maps are created as needed, numeric
 * parts index sequences.  The value replaces whatever was there. */
bool cs_yaml_set(CsYamlDoc *doc, const char *assignment, GError **error);
/* The same with the path and the value given apart. */
bool cs_yaml_set_path(CsYamlDoc *doc, const char *path, const char *value, const char *origin,
                      GError **error);

/* Map lookup; NULL when absent.  `key_out` receives the key node. */
CsYamlNode *cs_yaml_map_get(const CsYamlNode *map, const char *key, CsYamlNode **key_out);
/* Remove `key` and its value from a map; false when absent. */
bool cs_yaml_map_remove(CsYamlNode *map, const char *key);
/* Node at a dotted path, or NULL. */
CsYamlNode *cs_yaml_lookup(CsYamlNode *root, const char *path);

/* Where a node is (its alias, when an alias brought it). */
CsLoc cs_yaml_loc(const CsYamlNode *node);

/* Set `error` to "ORIGIN:LINE:COL: error: MESSAGE" (or "ORIGIN: error:
 * MESSAGE" without a line) for a problem at `node`; a node that an alias
 * brought is located at the alias, and the message says where its anchor
 * is. */
void cs_yaml_error(GError **error, const CsYamlNode *node, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
/* What kind of node it is, for messages: "a map", "a list", "a value". */
const char *cs_yaml_kind_name(CsYamlKind kind);

/* Levenshtein distance, for "did you mean" suggestions. */
int cs_edit_distance(const char *a, const char *b);
/* The closest of `candidates` (NULL-terminated) to `word`, or NULL when
 * none is close (distance at most a third of the word's length, min 2). */
const char *cs_closest(const char *word, const char *const *candidates);

#endif
