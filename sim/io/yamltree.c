/* yamltree.c - libyaml events to a tree of located nodes. */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "commsim/yamltree.h"


struct CsYamlDoc {
  CsYamlNode *root;
  GStringChunk *strings; /* origins */
};

static CsYamlNode *node_new(CsYamlKind kind, const char *origin, int line, int col) {
  CsYamlNode *n = g_new0(CsYamlNode, 1);
  n->kind = kind;
  n->origin = origin;
  n->line = line;
  n->col = col;
  if (kind == CS_YAML_MAP) n->keys = g_ptr_array_new();
  if (kind != CS_YAML_SCALAR) n->items = g_ptr_array_new();
  return n;
}

static void node_free(CsYamlNode *n) {
  if (!n) return;
  g_free(n->text);
  if (n->keys) {
    for (guint i = 0; i < n->keys->len; i++) node_free(n->keys->pdata[i]);
    g_ptr_array_free(n->keys, TRUE);
  }
  if (n->items) {
    for (guint i = 0; i < n->items->len; i++) node_free(n->items->pdata[i]);
    g_ptr_array_free(n->items, TRUE);
  }
  g_free(n);
}

static size_t node_count(const CsYamlNode *n) {
  size_t c = 1;
  if (n->keys)
    for (guint i = 0; i < n->keys->len; i++) c += node_count(n->keys->pdata[i]);
  if (n->items)
    for (guint i = 0; i < n->items->len; i++) c += node_count(n->items->pdata[i]);
  return c;
}

/* Copies keep their original locations; `origins` re-homes the strings. */
static CsYamlNode *node_copy(const CsYamlNode *n, GStringChunk *origins) {
  CsYamlNode *c = node_new(n->kind, origins ? g_string_chunk_insert_const(origins, n->origin) : n->origin,
                           n->line, n->col);
  c->text = g_strdup(n->text);
  c->plain = n->plain;
  c->anchor_line = n->anchor_line;
  c->anchor_col = n->anchor_col;
  if (n->keys)
    for (guint i = 0; i < n->keys->len; i++) g_ptr_array_add(c->keys, node_copy(n->keys->pdata[i], origins));
  if (n->items)
    for (guint i = 0; i < n->items->len; i++)
      g_ptr_array_add(c->items, node_copy(n->items->pdata[i], origins));
  return c;
}

/* A copy an alias brought: it is where the alias is, from where the anchor is. */
static void relocate(CsYamlNode *n, int line, int col) {
  if (n->anchor_line == 0) n->anchor_line = n->line, n->anchor_col = n->col;
  n->line = line;
  n->col = col;
  if (n->keys)
    for (guint i = 0; i < n->keys->len; i++) relocate(n->keys->pdata[i], line, col);
  if (n->items)
    for (guint i = 0; i < n->items->len; i++) relocate(n->items->pdata[i], line, col);
}

const char *cs_yaml_kind_name(CsYamlKind kind) {
  switch (kind) {
  case CS_YAML_MAP: return "a map";
  case CS_YAML_SEQ: return "a list";
  default: return "a value";
  }
}

CsLoc cs_yaml_loc(const CsYamlNode *node) { return (CsLoc){node->origin, node->line, node->col}; }

void cs_yaml_error(GError **error, const CsYamlNode *node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (node && node->line > 0 && node->anchor_line > 0)
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s:%d:%d: error: %s (the value comes through this alias from line %d, column %d)", node->origin,
                node->line, node->col, msg, node->anchor_line, node->anchor_col);
  else if (node && node->line > 0)
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s:%d:%d: error: %s",
                node->origin, node->line, node->col, msg);
  else if (node)
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s: error: %s", node->origin,
                msg);
  else
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "error: %s", msg);
}

CsYamlNode *cs_yaml_map_get(const CsYamlNode *map, const char *key, CsYamlNode **key_out) {
  if (!map || map->kind != CS_YAML_MAP) return NULL;
  for (guint i = 0; i < map->keys->len; i++) {
    CsYamlNode *k = map->keys->pdata[i];
    if (strcmp(k->text, key) == 0) {
      if (key_out) *key_out = k;
      return map->items->pdata[i];
    }
  }
  return NULL;
}

bool cs_yaml_map_remove(CsYamlNode *map, const char *key) {
  if (!map || map->kind != CS_YAML_MAP) return false;
  for (guint i = 0; i < map->keys->len; i++)
    if (strcmp(((CsYamlNode *)map->keys->pdata[i])->text, key) == 0) {
      node_free(g_ptr_array_steal_index(map->keys, i));
      node_free(g_ptr_array_steal_index(map->items, i));
      return true;
    }
  return false;
}

/* ---- the parser ---- */

typedef struct {
  CsYamlDoc *doc;
  const char *origin;
  GHashTable *anchors; /* name -> node (owned by the tree) */
  size_t alias_nodes;
  GPtrArray *stack; /* open collections */
  CsYamlNode *pending_key; /* MAP on top: the key waiting for its value */
  GPtrArray *pending_keys; /* one per open map level */
  GPtrArray *dead;         /* nodes out of the tree, freed after the anchors */
} Builder;

static void set_yaml_error(GError **error, const char *origin, const yaml_parser_t *p) {
  const yaml_mark_t *m = &p->problem_mark;
  if (p->context)
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s:%zu:%zu: error: YAML syntax: %s %s (from line %zu)", origin, m->line + 1,
                m->column + 1, p->problem ? p->problem : "error", p->context,
                p->context_mark.line + 1);
  else
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s:%zu:%zu: error: YAML syntax: %s",
                origin, m->line + 1, m->column + 1, p->problem ? p->problem : "error");
}

/* Merge `<<` entries of a finished map: keys already present win.  The
 * merge key and its value leave the tree for `dead`, not freed at once:
 * an anchor inside them may still be named by a later alias. */
static bool apply_merge_keys(CsYamlNode *map, GPtrArray *dead, GError **error) {
  for (guint i = 0; i < map->keys->len;) {
    CsYamlNode *k = map->keys->pdata[i];
    if (strcmp(k->text, "<<") != 0) {
      i++;
      continue;
    }
    CsYamlNode *v = map->items->pdata[i];
    g_ptr_array_remove_index(map->keys, i);
    g_ptr_array_remove_index(map->items, i);
    GPtrArray *sources = g_ptr_array_new();
    if (v->kind == CS_YAML_SCALAR) g_ptr_array_add(sources, v); /* refused below */
    else if (v->kind == CS_YAML_MAP) g_ptr_array_add(sources, v);
    else if (v->kind == CS_YAML_SEQ)
      for (guint j = 0; j < v->items->len; j++) g_ptr_array_add(sources, v->items->pdata[j]);
    for (guint s = 0; s < sources->len; s++) {
      CsYamlNode *src = sources->pdata[s];
      if (src->kind != CS_YAML_MAP) {
        cs_yaml_error(error, k, "a merge key ('<<') takes a map or a list of maps");
        g_ptr_array_free(sources, TRUE);
        g_ptr_array_add(dead, k);
        g_ptr_array_add(dead, v);
        return false;
      }
      for (guint j = 0; j < src->keys->len; j++) {
        CsYamlNode *sk = src->keys->pdata[j];
        if (cs_yaml_map_get(map, sk->text, NULL)) continue;
        g_ptr_array_add(map->keys, node_copy(sk, NULL));
        g_ptr_array_add(map->items, node_copy(src->items->pdata[j], NULL));
      }
    }
    g_ptr_array_free(sources, TRUE);
    g_ptr_array_add(dead, k);
    g_ptr_array_add(dead, v);
  }
  return true;
}

/* Attach a finished node to its parent (or make it the root). */
static bool attach(Builder *b, CsYamlNode *n, GError **error) {
  if (b->stack->len == 0) {
    b->doc->root = n;
    return true;
  }
  CsYamlNode *top = g_ptr_array_index(b->stack, b->stack->len - 1);
  if (top->kind == CS_YAML_SEQ) {
    g_ptr_array_add(top->items, n);
    return true;
  }
  CsYamlNode **pending = (CsYamlNode **)&g_ptr_array_index(b->pending_keys, b->pending_keys->len - 1);
  if (*pending == NULL) { /* n is a key */
    if (n->kind != CS_YAML_SCALAR) {
      cs_yaml_error(error, n, "a map key must be a plain value, not %s", cs_yaml_kind_name(n->kind));
      node_free(n);
      return false;
    }
    CsYamlNode *first = NULL;
    if (strcmp(n->text, "<<") != 0 && cs_yaml_map_get(top, n->text, &first)) {
      cs_yaml_error(error, n, "duplicate key '%s' (first given at line %d)", n->text, first->line);
      node_free(n);
      return false;
    }
    *pending = n;
    return true;
  }
  g_ptr_array_add(top->keys, *pending);
  g_ptr_array_add(top->items, n);
  *pending = NULL;
  return true;
}

static void register_anchor(Builder *b, const yaml_char_t *anchor, CsYamlNode *n) {
  if (anchor) g_hash_table_replace(b->anchors, g_strdup((const char *)anchor), n);
}

CsYamlDoc *cs_yaml_load_string(const char *text, gsize len, const char *name, GError **error) {
  CsYamlDoc *doc = g_new0(CsYamlDoc, 1);
  doc->strings = g_string_chunk_new(256);
  const char *origin = g_string_chunk_insert_const(doc->strings, name);

  const char *nul = memchr(text, '\0', len);
  if (nul) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: not a text file (a NUL byte at offset %td)", origin, nul - text);
    cs_yaml_doc_free(doc);
    return NULL;
  }

  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  Builder b = {doc, origin, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), 0,
               g_ptr_array_new(), NULL, g_ptr_array_new(), g_ptr_array_new_with_free_func((GDestroyNotify)node_free)};
  bool ok = true, done = false;
  int documents = 0;
  /* anchors of open collections, registered when they close */
  GPtrArray *open_anchors = g_ptr_array_new_with_free_func(g_free);

  while (ok && !done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      set_yaml_error(error, origin, &parser);
      ok = false;
      break;
    }
    int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
    switch (ev.type) {
    case YAML_STREAM_END_EVENT: done = true; break;
    case YAML_DOCUMENT_START_EVENT:
      if (++documents > 1) {
        CsYamlNode where = {.origin = origin, .line = line, .col = col};
        cs_yaml_error(error, &where, "a scenario is one YAML document; a second one starts here");
        ok = false;
      }
      break;
    case YAML_SCALAR_EVENT: {
      if (memchr(ev.data.scalar.value, '\0', ev.data.scalar.length)) {
        /* a "\0" escape: C strings would end there and the rest vanish */
        CsYamlNode where = {.origin = origin, .line = line, .col = col};
        cs_yaml_error(error, &where, "a NUL character (\\0) in a value is refused");
        ok = false;
        break;
      }
      CsYamlNode *n = node_new(CS_YAML_SCALAR, origin, line, col);
      n->text = g_strndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
      n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
      register_anchor(&b, ev.data.scalar.anchor, n);
      ok = attach(&b, n, error);
      break;
    }
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
      bool is_map = ev.type == YAML_MAPPING_START_EVENT;
      CsYamlNode *n = node_new(is_map ? CS_YAML_MAP : CS_YAML_SEQ, origin, line, col);
      const yaml_char_t *anchor = is_map ? ev.data.mapping_start.anchor : ev.data.sequence_start.anchor;
      g_ptr_array_add(b.stack, n);
      g_ptr_array_add(b.pending_keys, NULL);
      g_ptr_array_add(open_anchors, anchor ? g_strdup((const char *)anchor) : NULL);
      break;
    }
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT: {
      CsYamlNode *n = g_ptr_array_steal_index(b.stack, b.stack->len - 1);
      g_ptr_array_remove_index(b.pending_keys, b.pending_keys->len - 1);
      char *anchor = g_ptr_array_steal_index(open_anchors, open_anchors->len - 1);
      if (n->kind == CS_YAML_MAP && !apply_merge_keys(n, b.dead, error)) {
        node_free(n);
        g_free(anchor);
        ok = false;
        break;
      }
      register_anchor(&b, (const yaml_char_t *)anchor, n);
      g_free(anchor);
      ok = attach(&b, n, error);
      break;
    }
    case YAML_ALIAS_EVENT: {
      const char *name_a = (const char *)ev.data.alias.anchor;
      CsYamlNode *target = g_hash_table_lookup(b.anchors, name_a);
      CsYamlNode where = {.origin = origin, .line = line, .col = col};
      if (!target) {
        cs_yaml_error(error, &where, "alias '*%s' names no complete anchor before it", name_a);
        ok = false;
        break;
      }
      size_t add = node_count(target);
      if (b.alias_nodes + add > CS_YAML_MAX_ALIAS_NODES) {
        cs_yaml_error(error, &where,
                      "aliases expand to more than %d nodes: refused (a 'billion laughs' file?)",
                      CS_YAML_MAX_ALIAS_NODES);
        ok = false;
        break;
      }
      b.alias_nodes += add;
      CsYamlNode *copy = node_copy(target, NULL);
      relocate(copy, line, col);
      ok = attach(&b, copy, error);
      break;
    }
    default: break;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  /* on failure, free whatever is still open */
  for (guint i = 0; i < b.stack->len; i++) node_free(b.stack->pdata[i]);
  for (guint i = 0; i < b.pending_keys->len; i++) node_free(b.pending_keys->pdata[i]);
  g_ptr_array_free(b.stack, TRUE);
  g_ptr_array_free(b.pending_keys, TRUE);
  g_ptr_array_free(open_anchors, TRUE);
  g_hash_table_destroy(b.anchors);
  g_ptr_array_free(b.dead, TRUE);
  if (ok && (doc->root == NULL || (doc->root->kind == CS_YAML_SCALAR && doc->root->plain &&
                                   doc->root->text[0] == '\0'))) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: the file is empty: a scenario needs at least a topology", origin);
    ok = false;
  }
  if (ok && doc->root->kind != CS_YAML_MAP) {
    cs_yaml_error(error, doc->root, "a scenario is a map of keys (name:, topology:, ...), not %s",
                  cs_yaml_kind_name(doc->root->kind));
    ok = false;
  }
  if (!ok) {
    cs_yaml_doc_free(doc);
    return NULL;
  }
  return doc;
}

/* A small text file: refuse what is not a file (a directory, a device
 * such as /dev/zero, a socket) and anything beyond CS_YAML_MAX_FILE_BYTES,
 * reading at most that much (a pipe is fine). */
GString *cs_read_small_file(const char *path, const char *what, GError **error) {
  GStatBuf st;
  if (g_stat(path, &st) != 0) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot read: %s", path, g_strerror(errno));
    return NULL;
  }
  const char *not = S_ISDIR(st.st_mode)    ? "is a directory"
                    : S_ISCHR(st.st_mode)  ? "is a character device"
                    : S_ISBLK(st.st_mode)  ? "is a block device"
                    : S_ISSOCK(st.st_mode) ? "is a socket"
                                           : NULL;
  if (not) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: %s, not a %s", path, not, what);
    return NULL;
  }
  if (S_ISREG(st.st_mode) && st.st_size > CS_YAML_MAX_FILE_BYTES) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO,
                "%s: error: %lld bytes: larger than %d MiB, which no %s needs (is it the right file?)", path,
                (long long)st.st_size, CS_YAML_MAX_FILE_BYTES >> 20, what);
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot read: %s", path, g_strerror(errno));
    return NULL;
  }
  GString *text = g_string_new(NULL);
  char buf[65536];
  size_t n;
  bool too_big = false;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    g_string_append_len(text, buf, (gssize)n);
    if (text->len > CS_YAML_MAX_FILE_BYTES) {
      too_big = true;
      break;
    }
  }
  bool failed = ferror(f);
  int err = errno;
  fclose(f);
  if (failed)
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot read: %s", path, g_strerror(err));
  else if (too_big)
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO,
                "%s: error: more than %d MiB: larger than any %s needs (is it the right file?)", path,
                CS_YAML_MAX_FILE_BYTES >> 20, what);
  if (failed || too_big) {
    g_string_free(text, TRUE);
    return NULL;
  }
  return text;
}

CsYamlDoc *cs_yaml_load_file(const char *path, GError **error) {
  GString *text = cs_read_small_file(path, "scenario file", error);
  if (!text) return NULL;
  CsYamlDoc *doc = cs_yaml_load_string(text->str, text->len, path, error);
  g_string_free(text, TRUE);
  return doc;
}

void cs_yaml_doc_free(CsYamlDoc *doc) {
  if (!doc) return;
  node_free(doc->root);
  g_string_chunk_free(doc->strings);
  g_free(doc);
}

CsYamlNode *cs_yaml_root(CsYamlDoc *doc) { return doc->root; }

/* A canonical form: every scalar length-prefixed, so no text can pose as
 * structure. */
static void canonical(const CsYamlNode *n, GString *out) {
  switch (n->kind) {
  case CS_YAML_SCALAR:
    g_string_append_printf(out, "%c%zu:%s", n->plain ? 's' : 'q', strlen(n->text), n->text);
    break;
  case CS_YAML_MAP:
    g_string_append_printf(out, "{%u", n->keys->len);
    for (guint i = 0; i < n->keys->len; i++) {
      canonical(n->keys->pdata[i], out);
      canonical(n->items->pdata[i], out);
    }
    g_string_append_c(out, '}');
    break;
  case CS_YAML_SEQ:
    g_string_append_printf(out, "[%u", n->items->len);
    for (guint i = 0; i < n->items->len; i++) canonical(n->items->pdata[i], out);
    g_string_append_c(out, ']');
    break;
  }
}

char *cs_yaml_fingerprint(const CsYamlDoc *doc) {
  GString *c = g_string_new(NULL);
  canonical(doc->root, c);
  char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)c->str, c->len);
  g_string_free(c, TRUE);
  return sum;
}

CsYamlDoc *cs_yaml_doc_copy(const CsYamlDoc *doc) {
  CsYamlDoc *c = g_new0(CsYamlDoc, 1);
  c->strings = g_string_chunk_new(256);
  c->root = node_copy(doc->root, c->strings);
  return c;
}

/* ---- overrides ---- */

static bool parse_index(const char *s, guint *out) {
  if (!*s) return false;
  guint64 v = 0;
  for (const char *p = s; *p; p++) {
    if (!g_ascii_isdigit(*p) || v > 1000000000) return false;
    v = v * 10 + (guint64)(*p - '0');
  }
  *out = (guint)v;
  return true;
}

/* Where a --set value's nodes are: the --set itself (no line of a file). */
static void at_origin(CsYamlNode *n, const char *origin) {
  n->origin = origin;
  n->line = n->col = n->anchor_line = n->anchor_col = 0;
  if (n->keys)
    for (guint i = 0; i < n->keys->len; i++) at_origin(n->keys->pdata[i], origin);
  if (n->items)
    for (guint i = 0; i < n->items->len; i++) at_origin(n->items->pdata[i], origin);
}

/* A --set value: a scalar, "[a, b, c]" for a list or "{k: v, ...}" for a
 * map, both read as YAML (nested maps and lists, quoted items).  NULL with
 * *error set when such a value does not read. */
static CsYamlNode *value_node(const char *value, const char *origin, GError **error) {
  size_t len = strlen(value);
  bool map = len >= 2 && value[0] == '{' && value[len - 1] == '}';
  bool seq = len >= 2 && value[0] == '[' && value[len - 1] == ']';
  if (map || seq) { /* read as YAML: a list's items may be maps ([{src: w0, ...}]) or quoted */
    GError *e = NULL;
    /* a document's root must be a map: the value is read as {v: VALUE} */
    g_autofree char *wrapped = g_strdup_printf("{v: %s}", value);
    CsYamlDoc *v = cs_yaml_load_string(wrapped, strlen(wrapped), origin, &e);
    CsYamlKind want = map ? CS_YAML_MAP : CS_YAML_SEQ;
    CsYamlNode *got = v && v->root && v->root->kind == CS_YAML_MAP && v->root->items->len == 1 ? v->root->items->pdata[0]
                                                                                                : NULL;
    if (!got || got->kind != want) {
      /* the reader's message is "ORIGIN:1:COLUMN: error: WHAT": the --set is one line */
      const char *what = e ? e->message : map ? "it is not a map" : "it is not a list";
      int line = 0, col = 0;
      const char *tail = e && g_str_has_prefix(what, origin) ? what + strlen(origin) : NULL; /* past the value */
      if (tail && sscanf(tail, ":%d:%d:", &line, &col) == 2 && strstr(tail, "error: "))
        what = strstr(tail, "error: ") + strlen("error: ");
      col -= 4; /* "{v: " */
      g_autofree char *at = col > 0 ? g_strdup_printf(" (at character %d of the value)", col) : g_strdup("");
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s: error: a value written %s is a YAML %s: %s%s",
                  origin, map ? "{...}" : "[...]", map ? "map" : "list", what, at);
      g_clear_error(&e);
      cs_yaml_doc_free(v);
      return NULL;
    }
    v->root->items->pdata[0] = NULL; /* taken from the value's document, its origins made the --set's */
    at_origin(got, origin);
    cs_yaml_doc_free(v);
    return got;
  }
  CsYamlNode *n = node_new(CS_YAML_SCALAR, origin, 0, 0);
  n->text = g_strdup(value);
  n->plain = true;
  return n;
}

bool cs_yaml_set_path(CsYamlDoc *doc, const char *path, const char *value, const char *origin_text,
                      GError **error) {
  const char *origin = g_string_chunk_insert_const(doc->strings, origin_text);
  CsYamlNode where = {.origin = origin};
  if (!path || !*path) {
    cs_yaml_error(error, &where, "expected KEY=VALUE with a dotted key, such as defaults.loss=0.01");
    return false;
  }
  g_auto(GStrv) parts = g_strsplit(path, ".", -1);
  for (guint i = 0; parts[i]; i++)
    if (!*parts[i]) {
      cs_yaml_error(error, &where, "'%s' has an empty part", path);
      return false;
    }
  /* the value first: what is refused leaves the document as it was (the
   * walk below fails only on a part that exists, before it adds one) */
  CsYamlNode *val = value_node(value, origin, error);
  if (!val) return false;
  CsYamlNode *cur = doc->root;
  for (guint i = 0; parts[i]; i++) {
    const char *part = parts[i];
    bool last = parts[i + 1] == NULL;
    CsYamlNode *next = NULL;
    if (cur->kind == CS_YAML_SEQ) {
      guint idx;
      if (!parse_index(part, &idx) || idx >= cur->items->len) {
        cs_yaml_error(error, &where, "'%s' is a list of %u items: '%s' is not an index from 0 to %u",
                      path, cur->items->len, part, cur->items->len ? cur->items->len - 1 : 0);
        node_free(val);
        return false;
      }
      if (last) {
        node_free(cur->items->pdata[idx]);
        cur->items->pdata[idx] = val;
        return true;
      }
      cur = cur->items->pdata[idx];
      continue;
    }
    if (cur->kind != CS_YAML_MAP) {
      cs_yaml_error(error, &where, "cannot set '%s': the part before '%s' is %s, not a map", path,
                    part, cs_yaml_kind_name(cur->kind));
      node_free(val);
      return false;
    }
    for (guint j = 0; j < cur->keys->len; j++)
      if (strcmp(((CsYamlNode *)cur->keys->pdata[j])->text, part) == 0) {
        if (last) {
          node_free(cur->items->pdata[j]);
          cur->items->pdata[j] = val;
          return true;
        }
        next = cur->items->pdata[j];
        break;
      }
    if (!next) {
      CsYamlNode *k = node_new(CS_YAML_SCALAR, origin, 0, 0);
      k->text = g_strdup(part);
      k->plain = true;
      next = last ? val : node_new(CS_YAML_MAP, origin, 0, 0);
      g_ptr_array_add(cur->keys, k);
      g_ptr_array_add(cur->items, next);
      if (last) return true;
    }
    cur = next;
  }
  return true; /* not reached: the last part returns */
}

bool cs_yaml_set(CsYamlDoc *doc, const char *assignment, GError **error) {
  g_autofree char *origin = g_strdup_printf("--set %s", assignment);
  const char *eq = strchr(assignment, '=');
  if (!eq) {
    CsYamlNode where = {.origin = origin};
    cs_yaml_error(error, &where, "expected KEY=VALUE, such as defaults.loss=0.01");
    return false;
  }
  g_autofree char *path = g_strndup(assignment, (gsize)(eq - assignment));
  g_strstrip(path);
  g_autofree char *value = g_strstrip(g_strdup(eq + 1));
  return cs_yaml_set_path(doc, path, value, origin, error);
}

CsYamlNode *cs_yaml_lookup(CsYamlNode *root, const char *path) {
  g_auto(GStrv) parts = g_strsplit(path, ".", -1);
  CsYamlNode *cur = root;
  for (guint i = 0; parts[i] && cur; i++) {
    if (cur->kind == CS_YAML_MAP) {
      cur = cs_yaml_map_get(cur, parts[i], NULL);
    } else if (cur->kind == CS_YAML_SEQ) {
      guint idx;
      cur = parse_index(parts[i], &idx) && idx < cur->items->len ? cur->items->pdata[idx] : NULL;
    } else {
      return NULL;
    }
  }
  return cur;
}

/* ---- suggestions ---- */

int cs_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return 1000;
  int row[65];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int prev = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int cur = row[j];
      int sub = prev + (g_ascii_tolower(a[i - 1]) != g_ascii_tolower(b[j - 1]));
      int best = MIN(sub, MIN(row[j] + 1, row[j - 1] + 1));
      row[j] = best;
      prev = cur;
    }
  }
  return row[lb];
}

const char *cs_closest(const char *word, const char *const *candidates) {
  const char *best = NULL;
  int best_d = 1000;
  for (const char *const *c = candidates; *c; c++) {
    int d = cs_edit_distance(word, *c);
    if (d < best_d) {
      best_d = d;
      best = *c;
    }
  }
  int limit = MAX(2, (int)strlen(word) / 3);
  return best_d <= limit ? best : NULL;
}
