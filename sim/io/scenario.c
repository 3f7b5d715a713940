/* scenario.c - from a YAML tree to a validated CsScenario.
 *
 * One reader per section; each checks its keys against the list of keys
 * it knows (an unknown key is an error with a "did you mean"), reads each
 * value with the units parser, and checks ranges.  A key that is absent
 * keeps the default set before reading.  Messages start with the dotted
 * key ("defaults.latency: ...") so a user can find the place even from a
 * --set on the command line.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "commsim/cc.h"
#include "commsim/codec.h"
#include "commsim/scenario.h"
#include "commsim/units.h"

/* ---- names ---- */

static const char *const role_names[] = {"worker", "server", "host", "switch", NULL};
static const char *const trace_names[] = {"summary", "iterations", "messages",
                                          "links",   "packets",    "timeline", NULL};
static const char *const loss_model_names[] = {"bernoulli", "gilbert-elliott", NULL};

/* Where a node is, its file interned in the scenario (the tree goes). */
static CsLoc loc_of(CsScenario *s, const CsYamlNode *n) {
  return (CsLoc){g_string_chunk_insert_const(s->strings, n->origin), n->line, n->col};
}

/* ---- the keys: params.h's table ---- */

const char *const *cs_scenario_known_keys(void) {
  static const char **all = NULL; /* built once: sweeps read it from threads */
  if (g_once_init_enter(&all)) {
    GPtrArray *a = g_ptr_array_new();
    for (const CsParam *p = cs_params; p->key; p++) g_ptr_array_add(a, (char *)p->key);
    g_ptr_array_add(a, NULL);
    g_once_init_leave(&all, (const char **)g_ptr_array_free(a, FALSE));
  }
  return all;
}

/* The keys of a section, for check_keys. */
#define KEYS(section) cs_param_section_keys(section)

/* The table's row of a dotted key as --set takes it ("links.0.bandwidth"), or NULL. */
static const CsParam *param_of(const char *dotted) {
  g_auto(GStrv) parts = g_strsplit(dotted, ".", -1);
  GString *k = g_string_new(NULL);
  for (guint i = 0; parts[i]; i++) {
    bool index = parts[i][0] && strspn(parts[i], "0123456789") == strlen(parts[i]);
    if (index) g_string_append(k, "[]");
    else g_string_append_printf(k, "%s%s", k->len ? "." : "", parts[i]);
  }
  const CsParam *p = cs_param_find(k->str);
  g_string_free(k, TRUE);
  return p;
}

/* A value of a dotted key as the loader reads it, as text that two
 * values share when they read the same ("1Gbps" and "1000Mbps", "1%" and
 * "0.01"); the text itself where the key has no number or the value does
 * not parse. */
static char *value_as_read(const char *dotted, const char *t) {
  const CsParam *p = param_of(dotted);
  int64_t v = 0;
  double d = 0;
  bool pkt = false, ok = false;
  switch (p ? p->kind : CS_KEY_OTHER) {
  case CS_KEY_BANDWIDTH: ok = cs_parse_bandwidth(t, &v, NULL); break;
  case CS_KEY_TIME: ok = cs_parse_time(t, &v, NULL); break;
  case CS_KEY_SIZE: ok = cs_parse_size(t, &v, NULL); break;
  case CS_KEY_COUNT: ok = cs_parse_count(t, &v, NULL); break;
  case CS_KEY_BUFFER: ok = cs_parse_buffer(t, &v, &pkt, NULL); break;
  case CS_KEY_REAL:
    if (cs_parse_real(t, &d, NULL)) return g_strdup_printf("=%a", d);
    break;
  case CS_KEY_PROBABILITY:
    if (cs_parse_probability(t, &d, NULL)) return g_strdup_printf("=%a", d);
    break;
  default: break;
  }
  if (ok) return g_strdup_printf("=%" G_GINT64_FORMAT "%s", (gint64)v, pkt ? "pkt" : "");
  return g_strdup_printf("'%s", t);
}

CsKeyKind cs_scenario_key_kind(const char *dotted) {
  const CsParam *p = param_of(dotted);
  /* what has a number: the rest (names, flags, plain numbers) is "other" */
  return p && p->kind >= CS_KEY_BANDWIDTH && p->kind <= CS_KEY_PROBABILITY ? p->kind : CS_KEY_OTHER;
}

/* One part of a dotted key: a list index by its number ("01" is "1"). */
static bool same_part(const char *a, size_t la, const char *b, size_t lb) {
  bool ia = la && strspn(a, "0123456789") >= la, ib = lb && strspn(b, "0123456789") >= lb;
  if (ia && ib) {
    while (la > 1 && *a == '0') a++, la--;
    while (lb > 1 && *b == '0') b++, lb--;
  }
  return la == lb && !memcmp(a, b, la);
}

CsKeysOverlap cs_scenario_keys_overlap(const char *a, const char *b) {
  for (;;) {
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");
    if (!same_part(a, la, b, lb)) return CS_KEYS_APART;
    a += la, b += lb;
    if (!*a && !*b) return CS_KEYS_SAME;
    if (!*a) return CS_KEYS_AROUND;
    if (!*b) return CS_KEYS_INSIDE;
    a++, b++;
  }
}

char *cs_scenario_value_number(CsKeyKind kind, const char *value, const char **unit) {
  int64_t v = 0;
  double d = 0;
  bool pkt = false;
  switch (kind) {
  case CS_KEY_BANDWIDTH:
    *unit = "bps";
    return cs_parse_bandwidth(value, &v, NULL) ? g_strdup_printf("%" G_GINT64_FORMAT, (gint64)v) : NULL;
  case CS_KEY_TIME:
    *unit = "s";
    return cs_parse_time(value, &v, NULL) ? g_strdup_printf("%.12g", (double)v * 1e-12) : NULL;
  case CS_KEY_SIZE:
    *unit = "bytes";
    return cs_parse_size(value, &v, NULL) ? g_strdup_printf("%" G_GINT64_FORMAT, (gint64)v) : NULL;
  case CS_KEY_BUFFER:
    if (!cs_parse_buffer(value, &v, &pkt, NULL)) return NULL;
    *unit = pkt ? "pkt" : "bytes";
    return g_strdup_printf("%" G_GINT64_FORMAT, (gint64)v);
  case CS_KEY_COUNT:
    *unit = "count";
    return cs_parse_count(value, &v, NULL) ? g_strdup_printf("%" G_GINT64_FORMAT, (gint64)v) : NULL;
  case CS_KEY_PROBABILITY:
    *unit = "fraction";
    return cs_parse_probability(value, &d, NULL) ? g_strdup_printf("%.12g", d) : NULL;
  default: return NULL;
  }
}

/* ---- reading helpers ---- */

typedef struct {
  GError **error;
} Ctx;

static char *join_list(const char *const *names) {
  GString *s = g_string_new(NULL);
  size_t n = g_strv_length((char **)names);
  for (size_t i = 0; i < n; i++) {
    if (i) g_string_append(s, i + 1 == n ? " or " : ", ");
    g_string_append(s, names[i]);
  }
  return g_string_free(s, FALSE);
}

static bool check_keys(const CsYamlNode *map, const char *path, const char *const *allowed,
                       GError **error) {
  for (guint i = 0; i < map->keys->len; i++) {
    CsYamlNode *k = map->keys->pdata[i];
    if (g_strv_contains(allowed, k->text)) continue;
    const char *close = cs_closest(k->text, allowed);
    g_autofree char *where = *path ? g_strdup_printf(" in '%s'", path) : g_strdup("");
    const char *colon = strchr(k->text, ':');
    g_autofree char *before = colon ? g_strndup(k->text, (gsize)(colon - k->text)) : NULL;
    if (before && g_strv_contains(allowed, before)) /* {bandwidth:10Gbps}: one plain scalar to YAML */
      cs_yaml_error(error, k, "unknown key '%s'%s: YAML needs a space after the colon: write '%s: %s'", k->text, where,
                    before, colon + 1);
    else if (close)
      cs_yaml_error(error, k, "unknown key '%s'%s (did you mean '%s'?)", k->text, where, close);
    else {
      g_autofree char *list = join_list(allowed);
      cs_yaml_error(error, k, "unknown key '%s'%s: expected %s", k->text, where, list);
    }
    return false;
  }
  return true;
}

static bool expect_kind(const CsYamlNode *n, CsYamlKind kind, const char *path, GError **error) {
  if (n->kind == kind) return true;
  cs_yaml_error(error, n, "%s must be %s, not %s", path, cs_yaml_kind_name(kind),
                cs_yaml_kind_name(n->kind));
  return false;
}

/* A scalar with a value; NULL (and an error) otherwise. */
static const char *scalar_text(const CsYamlNode *n, const char *path, GError **error) {
  if (!expect_kind(n, CS_YAML_SCALAR, path, error)) return NULL;
  if (n->plain && (n->text[0] == '\0' || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0)) {
    cs_yaml_error(error, n, "%s has no value", path);
    return NULL;
  }
  return n->text;
}

static char *key_path(const char *path, const char *key) {
  return *path ? g_strdup_printf("%s.%s", path, key) : g_strdup(key);
}

/* The value of `key` in `map`, or NULL when absent (not an error). */
static CsYamlNode *value_of(const CsYamlNode *map, const char *key) {
  return cs_yaml_map_get(map, key, NULL);
}

/* Where to point a message about `key`: its value, or the map that lacks
 * it when the value is a default (a message always has a location). */
static const CsYamlNode *at(const CsYamlNode *map, const char *key) {
  const CsYamlNode *v = value_of(map, key);
  return v ? v : map;
}

/* The scalar text of `key` in `map`: true with *text NULL when the key is
 * absent; false (with an error) when it is there but not a usable value.
 * *kp receives the dotted key for messages. */
static bool key_scalar(const CsYamlNode *map, const char *path, const char *key, CsYamlNode **node, char **kp,
                       const char **text, GError **error) {
  *text = NULL;
  *node = value_of(map, key);
  if (!*node) return true;
  *kp = key_path(path, key);
  *text = scalar_text(*node, *kp, error);
  return *text != NULL;
}

/* A value that did not parse: its message, with the key, at the value. */
static bool parse_failed(const CsYamlNode *v, const char *kp, GError *e, GError **error) {
  cs_yaml_error(error, v, "%s: %s", kp, e->message);
  g_error_free(e);
  return false;
}

/* A probability (the loss models' keys): absent keeps the default in *out. */
static bool get_prob(const CsYamlNode *map, const char *path, const char *key, double *out, GError **error) {
  CsYamlNode *v;
  g_autofree char *kp = NULL;
  const char *t;
  if (!key_scalar(map, path, key, &v, &kp, &t, error)) return false;
  if (!t) return true;
  GError *e = NULL;
  return cs_parse_probability(t, out, &e) || parse_failed(v, kp, e, error);
}

static bool parse_bool(const char *t, bool *out, GError **e) {
  if (strcmp(t, "true") == 0) *out = true;
  else if (strcmp(t, "false") == 0) *out = false;
  else {
    g_set_error(e, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "'%s' is not true or false", t);
    return false;
  }
  return true;
}

static bool get_buffer(const CsYamlNode *map, const char *path, const char *key, int64_t *out, bool *pkt,
                       GError **error) {
  CsYamlNode *v;
  g_autofree char *kp = NULL;
  const char *t;
  if (!key_scalar(map, path, key, &v, &kp, &t, error)) return false;
  if (!t) return true;
  GError *e = NULL;
  return cs_parse_buffer(t, out, pkt, &e) || parse_failed(v, kp, e, error);
}

static bool parse_enum(const CsYamlNode *v, const char *kp, const char *what,
                       const char *const *names, int *out, GError **error) {
  const char *t = scalar_text(v, kp, error);
  if (!t) return false;
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], t) == 0) {
      *out = i;
      return true;
    }
  g_autofree char *list = join_list(names);
  const char *close = cs_closest(t, names);
  if (close)
    cs_yaml_error(error, v, "%s: '%s' is not a %s: use %s (did you mean '%s'?)", kp, t, what, list,
                  close);
  else
    cs_yaml_error(error, v, "%s: '%s' is not a %s: use %s", kp, t, what, list);
  return false;
}

static bool get_enum(const CsYamlNode *map, const char *path, const char *key, const char *what,
                     const char *const *names, int *out, GError **error) {
  CsYamlNode *v = value_of(map, key);
  if (!v) return true;
  g_autofree char *kp = key_path(path, key);
  return parse_enum(v, kp, what, names, out, error);
}

static bool get_string(const CsYamlNode *map, const char *path, const char *key, char **out,
                       GError **error) {
  CsYamlNode *v = value_of(map, key);
  if (!v) return true;
  g_autofree char *kp = key_path(path, key);
  const char *t = scalar_text(v, kp, error);
  if (!t) return false;
  g_free(*out);
  *out = g_strdup(t);
  return true;
}

/* A node name: letters, digits and _ . : - only (names appear in CSV
 * files and folder names). */
static bool valid_name(const char *s) {
  if (!*s) return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && !strchr("_.:-", *p)) return false;
  return true;
}

static bool get_name(const CsYamlNode *map, const char *path, const char *key, char **out,
                     GError **error) {
  CsYamlNode *v = value_of(map, key);
  if (!v) return true;
  if (!get_string(map, path, key, out, error)) return false;
  if (!valid_name(*out)) {
    g_autofree char *kp = key_path(path, key);
    cs_yaml_error(error, v, "%s: '%s' is not a valid node name (letters, digits, '_', '.', ':', '-')",
                  kp, *out);
    return false;
  }
  return true;
}

static bool require_key(const CsYamlNode *map, const char *path, const char *key, GError **error) {
  if (value_of(map, key)) return true;
  cs_yaml_error(error, map, "%s needs '%s'", *path ? path : "the scenario", key);
  return false;
}

#define FAIL_AT(node, ...)                  \
  do {                                      \
    cs_yaml_error(error, node, __VA_ARGS__); \
    return false;                           \
  } while (0)

/* ---- the keys the table binds (params.h) ---- */

/* p's key within `section` ("" for the top level) when it lies directly in it, else NULL. */
static const char *key_in(const CsParam *p, const char *section) {
  size_t n = strlen(section);
  const char *rest = p->key;
  if (n) {
    if (strncmp(p->key, section, n) != 0 || p->key[n] != '.') return NULL;
    rest = p->key + n + 1;
  }
  return strchr(rest, '.') ? NULL : rest;
}

static void *field_of(void *base, const CsParam *p) { return (char *)base + p->offset; }

/* A value of p's kind into its field (not enums and names, whose
 * messages are their own). */
static bool parse_param(const CsParam *p, const char *t, void *base, GError **e) {
  void *f = field_of(base, p);
  switch (p->kind) {
  case CS_KEY_BANDWIDTH: return cs_parse_bandwidth(t, f, e);
  case CS_KEY_TIME: return cs_parse_time(t, f, e);
  case CS_KEY_SIZE: return cs_parse_size(t, f, e);
  case CS_KEY_COUNT: return cs_parse_count(t, f, e);
  case CS_KEY_REAL: return cs_parse_real(t, f, e);
  case CS_KEY_PROBABILITY: return cs_parse_probability(t, f, e);
  case CS_KEY_BOOL: return parse_bool(t, f, e);
  case CS_KEY_BUFFER: {
    bool pkt = false;
    if (!cs_parse_buffer(t, f, &pkt, e)) return false;
    if (p->flag) *(bool *)((char *)base + p->flag - 1) = pkt;
    return true;
  }
  case CS_KEY_STRING:
  case CS_KEY_NAME:
    g_free(*(char **)f);
    *(char **)f = g_strdup(t);
    return true;
  case CS_KEY_ENUM:
    for (uint32_t i = 0; p->names()[i]; i++)
      if (!strcmp(p->names()[i], t)) {
        memcpy(f, &i, sizeof i); /* enums and table rows are 4 bytes */
        return true;
      }
    g_set_error(e, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "'%s' is not a %s", t, p->what);
    return false;
  default: g_assert_not_reached();
  }
}

/* The rows bound to `base` whose key starts with `prefix`: their defaults
 * into *ptr (what a new scenario, link or list item starts from). */
static void apply_defaults(CsParamBase base, const char *prefix, void *ptr) {
  for (const CsParam *p = cs_params; p->key; p++)
    if (p->base == base && p->set && g_str_has_prefix(p->key, prefix)) {
      GError *e = NULL;
      if (!parse_param(p, p->set, ptr, &e)) g_error("params.c: the default of %s: %s", p->key, e->message);
    }
}

/* p's range, on its field, for messages: the value in the field's unit. */
static double field_number(const CsParam *p, void *base) {
  void *f = field_of(base, p);
  if (p->kind == CS_KEY_REAL || p->kind == CS_KEY_PROBABILITY) return *(double *)f;
  if (p->kind == CS_KEY_TIME) return (double)*(int64_t *)f / (double)CS_SEC; /* ranges are in seconds */
  return (double)*(int64_t *)f;
}

static bool check_range(const CsYamlNode *map, const char *path, const char *key, const CsParam *p, void *base,
                        GError **error) {
  double v = field_number(p, base);
  bool open = p->range & CS_PARAM_MIN_OPEN;
  if ((open ? v > p->min : v >= p->min) && v <= p->max) return true;
  g_autofree char *kp = key_path(path, key);
  if (isinf(p->max)) FAIL_AT(at(map, key), "%s must be %s %g", kp, open ? "larger than" : "at least", p->min);
  if (p->kind == CS_KEY_COUNT) FAIL_AT(at(map, key), "%s must be from %g to %g", kp, p->min, p->max);
  const char *unit = p->kind == CS_KEY_TIME ? " s" : "";
  FAIL_AT(at(map, key), "%s must lie in %c%g%s, %g%s]", kp, open ? '(' : '[', p->min, unit, p->max, unit);
}

/* Every key of `section` (its rows' keys, "links[]" for list items) that
 * the table binds to `base` and `map` holds: read into *ptr, then checked
 * against its range.  `path` names the map in messages ("links[3]"). */
static bool read_params(const CsYamlNode *map, const char *path, const char *section, CsParamBase base, void *ptr,
                        GError **error) {
  for (const CsParam *p = cs_params; p->key; p++) {
    const char *key = p->base == base && !p->custom ? key_in(p, section) : NULL;
    CsYamlNode *v = key ? value_of(map, key) : NULL;
    if (!v) continue;
    g_autofree char *kp = key_path(path, key);
    if (p->kind == CS_KEY_ENUM) {
      int i = 0;
      if (!parse_enum(v, kp, p->what, p->names(), &i, error)) return false;
      memcpy(field_of(ptr, p), &i, sizeof i);
    } else if (p->kind == CS_KEY_NAME) {
      if (!get_name(map, path, key, field_of(ptr, p), error)) return false;
    } else {
      const char *t = scalar_text(v, kp, error);
      GError *e = NULL;
      if (!t) return false;
      if (!parse_param(p, t, ptr, &e)) return parse_failed(v, kp, e, error);
    }
  }
  for (const CsParam *p = cs_params; p->key; p++) {
    const char *key = p->base == base && (p->range & CS_PARAM_RANGE) ? key_in(p, section) : NULL;
    if (key && value_of(map, key) && !check_range(map, path, key, p, ptr, error)) return false;
  }
  return true;
}

/* ---- sections ---- */

static bool read_loss(const CsYamlNode *v, const char *kp, CsLossSpec *loss, GError **error) {
  if (v->kind == CS_YAML_SCALAR) {
    double p = 0;
    const char *t = scalar_text(v, kp, error);
    if (!t) return false;
    GError *e = NULL;
    if (!cs_parse_probability(t, &p, &e)) {
      cs_yaml_error(error, v, "%s: %s", kp, e->message);
      g_error_free(e);
      return false;
    }
    *loss = (CsLossSpec){p > 0 ? CS_LOSS_BERNOULLI : CS_LOSS_NONE, p, 0, 0, 0, 0};
    return true;
  }
  if (!expect_kind(v, CS_YAML_MAP, kp, error)) return false;
  if (!check_keys(v, kp, KEYS("defaults.loss"), error)) return false;
  if (!require_key(v, kp, "model", error)) return false;
  int model = 0;
  if (!get_enum(v, kp, "model", "loss model", loss_model_names, &model, error)) return false;
  CsLossSpec l = {0};
  if (model == 0) {
    if (!require_key(v, kp, "rate", error)) return false;
    for (const char *const *k = (const char *const[]){"p", "r", "loss_good", "loss_bad", NULL}; *k; k++)
      if (value_of(v, *k))
        FAIL_AT(at(v, *k), "%s.%s belongs to the gilbert-elliott model, not bernoulli", kp, *k);
    if (!get_prob(v, kp, "rate", &l.rate, error)) return false;
    l.model = l.rate > 0 ? CS_LOSS_BERNOULLI : CS_LOSS_NONE;
  } else {
    if (value_of(v, "rate"))
      FAIL_AT(at(v, "rate"), "%s.rate belongs to the bernoulli model; gilbert-elliott takes p, r, loss_good, loss_bad", kp);
    if (!require_key(v, kp, "p", error) || !require_key(v, kp, "r", error)) return false;
    l.loss_bad = 1.0; /* the classic Gilbert model: every packet in the bad state is lost */
    if (!get_prob(v, kp, "p", &l.p, error) || !get_prob(v, kp, "r", &l.r, error) ||
        !get_prob(v, kp, "loss_good", &l.loss_good, error) ||
        !get_prob(v, kp, "loss_bad", &l.loss_bad, error))
      return false;
    if (l.r == 0 && l.p > 0)
      FAIL_AT(at(v, "r"), "%s.r is 0: the bad state would never end (use r > 0)", kp);
    l.model = CS_LOSS_GILBERT;
  }
  *loss = l;
  return true;
}

/* Where a map of link settings came from, for errors about the links
 * it sets (world.c): the map, or the last of its values (or of those of
 * its pfc, ecn and loss maps) that a --set gave, which is then most likely
 * what the error is about (a headroom a --set of buffer or xoff broke). */
static CsLoc settings_loc(CsScenario *s, const CsYamlNode *map) {
  const CsYamlNode *from_set = g_str_has_prefix(map->origin, "--set ") ? map : NULL;
  for (guint i = 0; map->kind == CS_YAML_MAP && i < map->items->len; i++) {
    const CsYamlNode *v = map->items->pdata[i];
    if (g_str_has_prefix(v->origin, "--set ")) from_set = v;
    for (guint j = 0; v->kind == CS_YAML_MAP && j < v->items->len; j++) {
      const CsYamlNode *w = v->items->pdata[j];
      if (g_str_has_prefix(w->origin, "--set ")) from_set = w;
    }
  }
  return loc_of(s, from_set ? from_set : map);
}

/* Link settings on top of `*spec` (already holding the inherited ones). */
static bool read_link_settings(const CsYamlNode *map, const char *path, const char *section, CsLinkSpec *spec,
                               GError **error) {
  if (!read_params(map, path, section, CS_PARAM_LINK, spec, error)) return false;
  if (value_of(map, "buffer")) {
    if (!get_buffer(map, path, "buffer", &spec->buffer, &spec->buffer_pkt, error)) return false;
    spec->buffer_set = true;
    if (spec->buffer == 0) {
      g_autofree char *kp = key_path(path, "buffer");
      FAIL_AT(at(map, "buffer"), "%s: a buffer of 0 holds no packet: use at least 1pkt", kp);
    }
  }
  if (value_of(map, "bandwidth") && spec->bandwidth == 0) {
    g_autofree char *kp = key_path(path, "bandwidth");
    FAIL_AT(at(map, "bandwidth"), "%s: a bandwidth of 0 carries nothing: use a positive value", kp);
  }
  CsYamlNode *v;
  if ((v = value_of(map, "loss"))) {
    g_autofree char *kp = key_path(path, "loss");
    if (!read_loss(v, kp, &spec->loss, error)) return false;
  }
  if ((v = value_of(map, "pfc"))) {
    g_autofree char *kp = key_path(path, "pfc");
    if (!expect_kind(v, CS_YAML_MAP, kp, error) || !check_keys(v, kp, KEYS("defaults.pfc"), error) ||
        !require_key(v, kp, "xoff", error) || !read_params(v, kp, "defaults.pfc", CS_PARAM_LINK, spec, error))
      return false;
    if (!value_of(v, "xon")) spec->pfc_xon = spec->pfc_xoff / 5 * 4;
    if (spec->pfc_xoff > 0 && spec->pfc_xon >= spec->pfc_xoff)
      FAIL_AT(at(v, "xon"), "%s.xon (%" G_GINT64_FORMAT " B) must be below xoff (%" G_GINT64_FORMAT " B)", kp,
              (gint64)spec->pfc_xon, (gint64)spec->pfc_xoff);
  }
  if ((v = value_of(map, "ecn"))) {
    g_autofree char *kp = key_path(path, "ecn");
    if (!expect_kind(v, CS_YAML_MAP, kp, error) || !check_keys(v, kp, KEYS("defaults.ecn"), error) ||
        !require_key(v, kp, "kmin", error) || !require_key(v, kp, "kmax", error) ||
        !read_params(v, kp, "defaults.ecn", CS_PARAM_LINK, spec, error))
      return false;
    if (spec->ecn_kmax <= spec->ecn_kmin)
      FAIL_AT(at(v, "kmax"), "%s.kmax (%" G_GINT64_FORMAT " B) must be larger than kmin (%" G_GINT64_FORMAT " B)", kp,
              (gint64)spec->ecn_kmax, (gint64)spec->ecn_kmin);
  }
  if (spec->ecn_kmax > 0 && spec->queue == CS_QUEUE_RED && (value_of(map, "ecn") || value_of(map, "queue"))) {
    const char *k = value_of(map, "ecn") ? "ecn" : "queue";
    g_autofree char *kp = key_path(path, k);
    FAIL_AT(at(map, k), "%s: ecn marking and queue red do not go together (RED drops early what ECN would mark): "
            "use queue droptail or ecn with it", kp);
  }
  if ((v = value_of(map, "red"))) {
    g_autofree char *kp = key_path(path, "red");
    if (!expect_kind(v, CS_YAML_MAP, kp, error) || !check_keys(v, kp, KEYS("defaults.red"), error) ||
        !read_params(v, kp, "defaults.red", CS_PARAM_LINK, spec, error))
      return false;
    if (spec->red.max <= spec->red.min)
      FAIL_AT(v, "%s: max (%" G_GINT64_FORMAT " B) must be larger than min (%" G_GINT64_FORMAT " B)",
              kp, (gint64)spec->red.max, (gint64)spec->red.min);
    if (spec->red.weight <= 0) FAIL_AT(v, "%s: weight must be larger than 0", kp);
  }
  return true;
}

/* topology.gpus_per_host, intra and servers_at: what every generator takes. */
static bool read_machines(const CsYamlNode *v, CsScenario *s, GError **error) {
  CsTopologySpec *t = &s->topology;
  const char *I = "topology.intra";
  CsYamlNode *iv = value_of(v, "intra");
  if (t->gpus_per_host > 1 && !iv)
    FAIL_AT(at(v, "gpus_per_host"),
            "topology.gpus_per_host: machines of %" G_GINT64_FORMAT " workers need topology.intra: {bandwidth, latency}, the links inside a machine",
            (gint64)t->gpus_per_host);
  if (iv) {
    if (t->gpus_per_host == 1) FAIL_AT(iv, "%s applies with gpus_per_host larger than 1 (the links inside a machine)", I);
    if (!expect_kind(iv, CS_YAML_MAP, I, error) || !check_keys(iv, I, KEYS(I), error) ||
        !require_key(iv, I, "bandwidth", error) || !require_key(iv, I, "latency", error))
      return false;
    t->intra = s->defaults;
    t->intra.buffer_set = false;
    memset(&t->intra.loss, 0, sizeof t->intra.loss);
    if (!read_params(iv, I, I, CS_PARAM_LINK, &t->intra, error)) return false;
    if (t->intra.bandwidth == 0) FAIL_AT(at(iv, "bandwidth"), "%s.bandwidth: a bandwidth of 0 carries nothing: use a positive value", I);
  }
  if (t->gpus_per_host > 1 && t->workers >= 0 && t->workers % t->gpus_per_host != 0)
    FAIL_AT(at(v, "workers"),
            "topology.workers: %" G_GINT64_FORMAT " workers do not fill machines of gpus_per_host %" G_GINT64_FORMAT
            ": give a multiple of %" G_GINT64_FORMAT,
            (gint64)t->workers, (gint64)t->gpus_per_host, (gint64)t->gpus_per_host);
  CsYamlNode *sa = value_of(v, "servers_at");
  if (sa) {
    const char *A = "topology.servers_at";
    if (!expect_kind(sa, CS_YAML_SEQ, A, error)) return false;
    if (sa->items->len == 0) FAIL_AT(sa, "%s: the list is empty (omit it to put servers in the last positions)", A);
    for (guint i = 0; i < sa->items->len; i++) {
      CsYamlNode *n = sa->items->pdata[i];
      g_autofree char *kp = g_strdup_printf("%s[%u]", A, i);
      const char *name = scalar_text(n, kp, error);
      if (!name) return false;
      CsNameRef r = {g_strdup(name), loc_of(s, n)};
      g_array_append_val(t->servers_at, r);
    }
    if (value_of(v, "servers") && t->servers != (int64_t)sa->items->len)
      FAIL_AT(sa, "%s names %u switch%s for %" G_GINT64_FORMAT " server%s: one name per server", A, sa->items->len,
              sa->items->len == 1 ? "" : "es", (gint64)t->servers, t->servers == 1 ? "" : "s");
    t->servers = sa->items->len;
  }
  return true;
}

static bool read_topology(const CsYamlNode *v, CsScenario *s, GError **error) {
  CsTopologySpec *t = &s->topology;
  if (!expect_kind(v, CS_YAML_MAP, "topology", error) ||
      !check_keys(v, "topology", KEYS("topology"), error) || !require_key(v, "topology", "type", error))
    return false;
  int type = 0;
  if (!get_enum(v, "topology", "type", "topology type", cs_topo_generator_names(), &type, error)) return false;
  t->type = (CsTopoType)(type + 1);
  const CsTopoGenerator *gen = cs_topo_generators[t->type];
  if (!read_params(v, "topology", "topology", CS_PARAM_TOPOLOGY, t, error)) return false;

  /* what the generator takes, needs and checks */
  for (guint i = 0; i < v->keys->len; i++) {
    CsYamlNode *k = v->keys->pdata[i];
    static const char *const common[] = {"type", "gpus_per_host", "intra", "servers_at", NULL};
    if (g_strv_contains(common, k->text) || g_strv_contains(gen->takes, k->text)) continue;
    g_autofree char *list = join_list(gen->takes);
    FAIL_AT(k, "topology: '%s' is not a parameter of type %s (it takes %s)", k->text, gen->name, list);
  }
  for (const char *const *need = gen->needs; *need; need++)
    if (!value_of(v, *need)) FAIL_AT(v, "topology: type %s needs '%s'", gen->name, *need);
  const char *key = NULL;
  g_autofree char *refusal = gen->check ? gen->check(t, &s->defaults, &key) : NULL;
  if (refusal) FAIL_AT(at(v, key), "%s", refusal);
  if (t->workers > 1000000 || t->servers > 1000000) /* before adding them */
    FAIL_AT(t->workers > 1000000 ? at(v, "workers") : at(v, "servers"),
            "topology: more than 1,000,000 hosts is beyond what commsim simulates");
  if (!read_machines(v, s, error)) return false;
  /* Hosts the generator makes, before roles are assigned (-1: one per worker and server). */
  int64_t hosts = gen->hosts ? gen->hosts(t) : -1;
  int64_t G = t->gpus_per_host, machines = t->workers >= 0 ? t->workers / G : -1;
  if (hosts >= 0) {
    if (t->servers > hosts)
      FAIL_AT(at(v, "servers"), "topology.servers: %" G_GINT64_FORMAT " servers do not fit in %" G_GINT64_FORMAT " hosts",
              (gint64)t->servers, (gint64)hosts);
    if (machines >= 0 && machines + t->servers > hosts) {
      if (G > 1)
        FAIL_AT(at(v, "workers"),
                "topology.workers: %" G_GINT64_FORMAT " workers (%" G_GINT64_FORMAT " machines of %" G_GINT64_FORMAT
                ") and %" G_GINT64_FORMAT " servers do not fit in the %" G_GINT64_FORMAT " hosts of this %s",
                (gint64)t->workers, (gint64)machines, (gint64)G, (gint64)t->servers, (gint64)hosts, gen->name);
      FAIL_AT(at(v, "workers"),
              "topology.workers: %" G_GINT64_FORMAT " workers and %" G_GINT64_FORMAT " servers do not fit in the %" G_GINT64_FORMAT " hosts of this %s",
              (gint64)t->workers, (gint64)t->servers, (gint64)hosts, gen->name);
    }
    if (G > 1 && (hosts - t->servers) * G > 1000000)
      FAIL_AT(at(v, "gpus_per_host"), "topology: more than 1,000,000 workers is beyond what commsim simulates");
  } else if (t->workers + t->servers < 2) {
    FAIL_AT(at(v, "workers"), "topology: a %s needs at least 2 hosts (workers + servers)", gen->name);
  }
  if (t->workers + t->servers > 1000000 || hosts > 1000000)
    FAIL_AT(v, "topology: more than 1,000,000 hosts is beyond what commsim simulates");

  t->bottleneck = s->defaults;
  t->bottleneck.buffer_set = false;
  CsYamlNode *b;
  if ((b = value_of(v, "bottleneck"))) {
    if (!expect_kind(b, CS_YAML_MAP, "topology.bottleneck", error) ||
        !check_keys(b, "topology.bottleneck", KEYS("topology.bottleneck"), error) ||
        !read_link_settings(b, "topology.bottleneck", "topology.bottleneck", &t->bottleneck, error))
      return false;
    t->bottleneck.at = t->bottleneck.headroom_at = settings_loc(s, b);
  }
  return true;
}

static bool read_explicit(const CsYamlNode *nodes, const CsYamlNode *links, CsScenario *s,
                          GError **error) {
  CsTopologySpec *t = &s->topology;
  t->type = CS_TOPO_EXPLICIT;
  if (!expect_kind(nodes, CS_YAML_SEQ, "nodes", error)) return false;
  if (nodes->items->len == 0) FAIL_AT(nodes, "nodes: the list is empty");
  for (guint i = 0; i < nodes->items->len; i++) {
    CsYamlNode *n = nodes->items->pdata[i];
    g_autofree char *path = g_strdup_printf("nodes[%u]", i);
    if (!expect_kind(n, CS_YAML_MAP, path, error) || !check_keys(n, path, KEYS("nodes[]"), error) ||
        !require_key(n, path, "name", error) || !require_key(n, path, "role", error))
      return false;
    CsNodeSpec ns = {NULL, CS_ROLE_HOST, loc_of(s, n)};
    int role = 0;
    bool ok = get_name(n, path, "name", &ns.name, error);
    g_array_append_val(t->nodes, ns); /* the scenario owns the name, also a bad one */
    if (!ok) return false;
    if (!get_enum(n, path, "role", "role", role_names, &role, error)) return false;
    g_array_index(t->nodes, CsNodeSpec, t->nodes->len - 1).role = (CsRole)role;
  }
  if (!links) return true;
  if (!expect_kind(links, CS_YAML_SEQ, "links", error)) return false;
  for (guint i = 0; i < links->items->len; i++) {
    CsYamlNode *l = links->items->pdata[i];
    g_autofree char *path = g_strdup_printf("links[%u]", i);
    if (!expect_kind(l, CS_YAML_MAP, path, error) || !check_keys(l, path, KEYS("links[]"), error) ||
        !require_key(l, path, "a", error) || !require_key(l, path, "b", error))
      return false;
    CsLinkDecl d = {NULL, NULL, s->defaults, loc_of(s, l)};
    d.spec.buffer_set = false;
    d.spec.at = d.spec.headroom_at = settings_loc(s, l);
    bool ok = get_name(l, path, "a", &d.a, error) && get_name(l, path, "b", &d.b, error) &&
              read_link_settings(l, path, "links[]", &d.spec, error);
    g_array_append_val(t->links, d);
    if (!ok) return false;
  }
  return true;
}

/* links_override: a list of {match, any key of links[] but a and b}. */
static bool read_overrides(const CsYamlNode *v, CsScenario *s, GError **error) {
  if (!expect_kind(v, CS_YAML_SEQ, "links_override", error)) return false;
  const char *const *link_keys = KEYS("links[]");
  GPtrArray *allowed = g_ptr_array_new();
  g_ptr_array_add(allowed, (char *)"match");
  for (const char *const *k = link_keys; *k; k++)
    if (strcmp(*k, "a") && strcmp(*k, "b")) g_ptr_array_add(allowed, (char *)*k);
  g_ptr_array_add(allowed, NULL);
  static const struct {
    const char *key;
    unsigned field;
  } fields[] = {{"bandwidth", CS_LINK_SET_BANDWIDTH}, {"latency", CS_LINK_SET_LATENCY}, {"buffer", CS_LINK_SET_BUFFER},
                {"queue", CS_LINK_SET_QUEUE},         {"loss", CS_LINK_SET_LOSS},       {"red", CS_LINK_SET_RED},
                {"ecn_threshold", CS_LINK_SET_ECN},   {"pfc", CS_LINK_SET_PFC},         {"ecn", CS_LINK_SET_ECN_CURVE}};
  bool ok = true;
  for (guint i = 0; ok && i < v->items->len; i++) {
    CsYamlNode *e = v->items->pdata[i];
    g_autofree char *path = g_strdup_printf("links_override[%u]", i);
    CsLinkOverride o = {NULL, s->defaults, 0, settings_loc(s, e)};
    ok = expect_kind(e, CS_YAML_MAP, path, error) && check_keys(e, path, (const char *const *)allowed->pdata, error) &&
         require_key(e, path, "match", error);
    if (!ok) break;
    g_autofree char *mp = g_strdup_printf("%s.match", path);
    const char *m = scalar_text(value_of(e, "match"), mp, error);
    if (!m) {
      ok = false;
      break;
    }
    if (!*m) {
      cs_yaml_error(error, value_of(e, "match"), "%s: an empty pattern matches no link", mp);
      ok = false;
      break;
    }
    for (size_t f = 0; f < G_N_ELEMENTS(fields); f++)
      if (value_of(e, fields[f].key)) o.fields |= fields[f].field;
    if (!o.fields) {
      cs_yaml_error(error, e, "%s: give at least one link setting to change (bandwidth, latency, loss, ...)", path);
      ok = false;
      break;
    }
    ok = read_link_settings(e, path, "links[]", &o.spec, error);
    if (!ok) break;
    o.match = g_strdup(m);
    g_array_append_val(s->topology.overrides, o);
  }
  g_ptr_array_free(allowed, TRUE);
  return ok;
}

static bool read_transport(const CsYamlNode *v, CsScenario *s, GError **error) {
  CsTransportSpec *t = &s->transport;
  if (!expect_kind(v, CS_YAML_MAP, "transport", error) ||
      !check_keys(v, "transport", KEYS("transport"), error) ||
      !read_params(v, "transport", "transport", CS_PARAM_TRANSPORT, t, error))
    return false;
  bool cwnd_pkt = true;
  CsYamlNode *w;
  if ((w = value_of(v, "window"))) {
    bool pkt = false;
    if (!get_buffer(v, "transport", "window", &t->window, &pkt, error)) return false;
    t->window_bytes = !pkt;
    if (t->window == 0) FAIL_AT(w, "transport.window must hold at least one packet");
  }
  if ((w = value_of(v, "init_cwnd"))) {
    if (!get_buffer(v, "transport", "init_cwnd", &t->init_cwnd, &cwnd_pkt, error)) return false;
    if (!cwnd_pkt) FAIL_AT(w, "transport.init_cwnd is counted in packets: write it as 10pkt");
    if (t->init_cwnd == 0) FAIL_AT(w, "transport.init_cwnd must be at least 1pkt");
  }
  if (t->mtu <= t->header)
    FAIL_AT(value_of(v, "mtu") ? at(v, "mtu") : at(v, "header"),
            "transport: mtu (%" G_GINT64_FORMAT " B) must be larger than header (%" G_GINT64_FORMAT " B), or no payload fits",
            (gint64)t->mtu, (gint64)t->header);
  if (t->mtu > 1000000) FAIL_AT(at(v, "mtu"), "transport.mtu: at most 1MB");
  if (t->ack == 0) FAIL_AT(at(v, "ack"), "transport.ack: an acknowledgement needs at least 1 B");
  if (t->ack > t->mtu)
    FAIL_AT(at(v, value_of(v, "ack") ? "ack" : "mtu"), "transport.ack (%" G_GINT64_FORMAT " B) must not be larger than mtu (%" G_GINT64_FORMAT " B)",
            (gint64)t->ack, (gint64)t->mtu);
  if (t->protocol == CS_PROTO_ROCE &&
      (t->window_bytes ? MAX(1, (t->window + t->mtu - 1) / t->mtu) : t->window) < t->delayed_ack)
    FAIL_AT(at(v, value_of(v, "window") ? "window" : "delayed_ack"),
            "transport: with roce, delayed_ack (%" G_GINT64_FORMAT ") coalesces ACKs and must not exceed window (%" G_GINT64_FORMAT
            " packets), or a queue pair would wait for an ACK that never comes",
            (gint64)t->delayed_ack, (gint64)(t->window_bytes ? MAX(1, (t->window + t->mtu - 1) / t->mtu) : t->window));
  static const char *const subs[] = {"transport.cubic", "transport.bbr", "transport.dcqcn"};
  for (size_t i = 0; i < G_N_ELEMENTS(subs); i++) {
    CsYamlNode *m = value_of(v, subs[i] + strlen("transport."));
    if (m && (!expect_kind(m, CS_YAML_MAP, subs[i], error) || !check_keys(m, subs[i], KEYS(subs[i]), error) ||
              !read_params(m, subs[i], subs[i], CS_PARAM_TRANSPORT, t, error)))
      return false;
  }
  /* a protocol's own keys given to another would be ignored: refused, as
   * a topology type's parameters are (a user who writes cubic with cc:
   * dcqcn would believe DCQCN is on).  DCQCN's parameters stay allowed
   * with cc: none, so that one file compares the two. */
  static const struct {
    const char *key;
    uint32_t protocol; /* the only one that reads it */
    const char *what;
  } own[] = {
      {"cc", CS_PROTO_ROCE, "roce's rate control"},
      {"retransmit", CS_PROTO_ROCE, "roce's loss repair"},
      {"rto", CS_PROTO_ROCE, "roce's fixed timeout (TCP's are min_rto and initial_rto)"},
      {"dcqcn", CS_PROTO_ROCE, "the map of roce's DCQCN parameters"},
      {"cubic", CS_PROTO_CUBIC, "the map of cubic's parameters"},
      {"bbr", CS_PROTO_BBR, "the map of bbr's parameters"},
  };
  const char *const *protocols = cs_protocol_names();
  for (size_t i = 0; i < G_N_ELEMENTS(own); i++)
    if (value_of(v, own[i].key) && t->protocol != own[i].protocol)
      FAIL_AT(at(v, own[i].key), "transport.%s is %s: protocol %s does not read it (remove it, or set protocol: %s)",
              own[i].key, own[i].what, protocols[t->protocol], protocols[own[i].protocol]);
  /* TCP's own keys: roce's queue pairs (transport.c) read none of them */
  static const char *const qp = "a queue pair has no window, repairs loss by `retransmit` and times out after `rto`";
  static const struct {
    const char *key, *why;
  } tcp_only[] = {
      {"recovery", qp},
      {"init_cwnd", qp},
      {"initial_rto", qp},
      {"min_rto", qp},
      {"ack_delay", "a queue pair's receiver ACKs every `delayed_ack` packets and at a message's end, with no timer"},
      {"idle_restart", "a queue pair has no window to restart after an idle time"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(tcp_only); i++)
    if (value_of(v, tcp_only[i].key) && t->protocol == CS_PROTO_ROCE)
      FAIL_AT(at(v, tcp_only[i].key), "transport.%s is TCP's: roce does not read it (%s)", tcp_only[i].key,
              tcp_only[i].why);
  return true;
}

static bool read_cost(const CsYamlNode *v, CsWorkloadSpec *w, GError **error) {
  CsCompressionSpec *c = &w->compression;
  const char *kp = "workload.compression.cost";
  if (!expect_kind(v, CS_YAML_MAP, kp, error) || !check_keys(v, kp, KEYS(kp), error)) return false;
  for (const char *const *k = KEYS(kp); *k; k++)
    if (!require_key(v, kp, *k, error)) return false;
  c->cost_set = true;
  return read_params(v, kp, kp, CS_PARAM_WORKLOAD, w, error);
}

/* workload.convergence (CsConvergenceSpec): its keys, then the target
 * (one of accuracy and loss) by hand. */
static bool read_convergence(const CsYamlNode *v, CsScenario *s, GError **error) {
  CsWorkloadSpec *w = &s->workload;
  CsConvergenceSpec *c = &w->convergence;
  const char *C = "workload.convergence", *T = "workload.convergence.target";
  if (!expect_kind(v, CS_YAML_MAP, C, error) || !check_keys(v, C, KEYS(C), error) ||
      !read_params(v, C, C, CS_PARAM_WORKLOAD, w, error))
    return false;
  c->present = true;
  c->at = loc_of(s, v);
  c->target_is_loss = false;
  c->target = 0.9;
  CsYamlNode *tv = value_of(v, "target");
  if (tv) {
    if (!expect_kind(tv, CS_YAML_MAP, T, error) || !check_keys(tv, T, KEYS(T), error)) return false;
    CsYamlNode *acc = value_of(tv, "accuracy"), *loss = value_of(tv, "loss");
    if ((acc != NULL) == (loss != NULL)) FAIL_AT(tv, "%s: give one of accuracy and loss", T);
    const char *key = acc ? "accuracy" : "loss";
    g_autofree char *kp = g_strdup_printf("%s.%s", T, key);
    const char *text = scalar_text(acc ? acc : loss, kp, error);
    if (!text) return false;
    GError *e = NULL;
    if (!cs_parse_real(text, &c->target, &e)) return parse_failed(acc ? acc : loss, kp, e, error);
    c->target_is_loss = loss != NULL;
    if (acc && !(c->target > 0 && c->target <= 1))
      FAIL_AT(acc, "%s must lie in (0, 1]: an accuracy above 1 cannot be reached", kp);
    if (loss && !(c->target > 0 && isfinite(c->target))) FAIL_AT(loss, "%s must be larger than 0", kp);
  }
  if (c->batch > c->samples_per_worker)
    FAIL_AT(at(v, value_of(v, "batch") ? "batch" : "samples_per_worker"),
            "%s.batch (%" G_GINT64_FORMAT ") must not exceed samples_per_worker (%" G_GINT64_FORMAT ")", C,
            (gint64)c->batch, (gint64)c->samples_per_worker);
  if (value_of(v, "hidden") && c->task != CS_TASK_MLP)
    FAIL_AT(at(v, "hidden"), "%s.hidden applies to task mlp only (task is %s)", C, cs_conv_task_names()[c->task]);
  if (cs_collective_has(w->collective, CS_COLLF_SERVERS) && !w->pull)
    FAIL_AT(v, "%s: the workers never get the result back with pull: false, so there is no model to train on them "
               "(set workload.pull: true)", C);
  return true;
}

/* ---- per-layer gradients: workload.model, layers, layers_csv, device ---- */

/* One layer's value from its text (a list item's key or a CSV cell). */
static bool layer_value(CsLayer *l, const char *key, const char *text, bool *has_time, GError **e) {
  if (!strcmp(key, "name")) {
    g_free(l->name);
    l->name = g_strdup(text);
    return true;
  }
  if (!strcmp(key, "params")) return cs_parse_count(text, &l->params, e);
  if (!strcmp(key, "flops")) {
    if (!cs_parse_real(text, &l->flops, e)) return false;
    if (!(l->flops >= 0) || !isfinite(l->flops)) {
      g_set_error(e, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "'%s' is not a number of FLOPs (0 or more)", text);
      return false;
    }
    return true;
  }
  *has_time = true;
  return cs_parse_time(text, !strcmp(key, "forward") ? &l->forward : &l->backward, e);
}

static bool read_layer_list(const CsYamlNode *lv, CsScenario *s, GError **error) {
  CsWorkloadSpec *w = &s->workload;
  const char *P = "workload.layers";
  if (!expect_kind(lv, CS_YAML_SEQ, P, error)) return false;
  if (lv->items->len == 0) FAIL_AT(lv, "%s: the list is empty", P);
  w->layers = cs_layers_new();
  for (guint i = 0; i < lv->items->len; i++) {
    CsYamlNode *n = lv->items->pdata[i];
    g_autofree char *path = g_strdup_printf("%s[%u]", P, i);
    if (!expect_kind(n, CS_YAML_MAP, path, error) || !check_keys(n, path, KEYS("workload.layers[]"), error) ||
        !require_key(n, path, "params", error))
      return false;
    CsLayer l = {g_strdup_printf("layer%u", i), 0, -1, 0, -1}; /* backward -1: not given (0 is a time) */
    g_array_append_val(w->layers, l);
    CsLayer *lp = &g_array_index(w->layers, CsLayer, w->layers->len - 1);
    bool has_time = false;
    for (guint k = 0; k < n->keys->len; k++) {
      const char *key = ((CsYamlNode *)n->keys->pdata[k])->text;
      CsYamlNode *val = n->items->pdata[k];
      g_autofree char *kp = key_path(path, key);
      const char *t = scalar_text(val, kp, error);
      GError *e = NULL;
      if (!t) return false;
      if (!layer_value(lp, key, t, &has_time, &e)) return parse_failed(val, kp, e, error);
    }
    if (value_of(n, "flops") && has_time)
      FAIL_AT(n, "%s: give times (forward, backward) or flops, not both", path);
  }
  return true;
}

static bool read_layers_csv(const CsYamlNode *cv, CsScenario *s, GError **error) {
  CsWorkloadSpec *w = &s->workload;
  const char *text = scalar_text(cv, "workload.layers_csv", error);
  if (!text) return false;
  /* relative to the scenario's folder; given with --set, to the current one */
  bool from_file = s->file && !strcmp(cv->origin, s->file);
  g_autofree char *dir = from_file ? g_path_get_dirname(s->file) : g_strdup(".");
  g_autofree char *path = g_path_is_absolute(text) || !strcmp(dir, ".") ? g_strdup(text) : g_build_filename(dir, text, NULL);
  GError *e = NULL;
  GString *body = cs_read_small_file(path, "layers file", &e);
  if (!body) {
    /* the file's own message ("PATH: error: WHY"), at the key that named it */
    const char *why = strstr(e->message, ": error: ");
    cs_yaml_error(error, cv, "workload.layers_csv: %s%s: %s", text,
                  from_file && !g_path_is_absolute(text) ? " (relative to the scenario's folder)" : "", why ? why + strlen(": error: ") : e->message);
    g_error_free(e);
    return false;
  }
  const char *file = g_string_chunk_insert_const(s->strings, path);
  /* a UTF-8 byte-order mark (Excel's "CSV UTF-8") is no part of the header */
  const char *start = g_str_has_prefix(body->str, "\xEF\xBB\xBF") ? body->str + 3 : body->str;
  g_auto(GStrv) lines = g_strsplit(start, "\n", -1);
  g_string_free(body, TRUE);
  static const char *const columns[] = {"name", "params", "forward", "backward", "flops", NULL};
  g_auto(GStrv) head = NULL;
  w->layers = cs_layers_new();
  int line = 0, head_line = 0;
  bool comments = false;
  for (char **lp = lines; *lp; lp++) {
    line++;
    const char *raw = *lp, *first = raw;
    while (g_ascii_isspace(*first)) first++;
    comments |= *first == '#';
    if (!*first || *first == '#') continue;
    g_auto(GStrv) cells = g_strsplit(raw, ",", -1);
    /* each cell's column: where its text starts, counted in characters */
    guint ncells = g_strv_length(cells);
    g_autofree int *col = g_new(int, ncells + 1);
    gsize off = 0;
    for (guint c = 0; c < ncells; c++) {
      gsize lead = 0, len = strlen(cells[c]);
      while (g_ascii_isspace(cells[c][lead])) lead++;
      col[c] = 1 + (int)g_utf8_strlen(raw, (gssize)(off + lead));
      off += len + 1;
      g_strstrip(cells[c]);
    }
    if (!head) {
      for (char **c = cells; *c; c++) {
        for (char **d = cells; d < c; d++)
          if (!strcmp(*d, *c)) {
            cs_error_at(error, (CsLoc){file, line, col[c - cells]},
                        "column '%s' is in the header twice (first at column %d): each column once", *c, col[d - cells]);
            return false;
          }
        if (g_strv_contains(columns, *c) && g_strv_length(cells) > 0) continue;
        const char *close = cs_closest(*c, columns);
        cs_error_at(error, (CsLoc){file, line, col[c - cells]}, "unknown column '%s'%s%s%s: the columns are name, params, forward, backward, flops",
                    *c, close ? " (did you mean '" : "", close ? close : "", close ? "'?)" : "");
        return false;
      }
      if (!g_strv_contains((const char *const *)cells, "params")) {
        cs_error_at(error, (CsLoc){file, line, 1}, "the header has no 'params' column");
        return false;
      }
      /* flops and a time: at the later of the two */
      int flops = -1, time = -1;
      for (guint c = 0; c < ncells; c++) {
        if (!strcmp(cells[c], "flops")) flops = (int)c;
        else if (time < 0 && (!strcmp(cells[c], "forward") || !strcmp(cells[c], "backward"))) time = (int)c;
      }
      if (flops >= 0 && time >= 0) {
        cs_error_at(error, (CsLoc){file, line, col[MAX(flops, time)]}, "give times (forward, backward) or flops, not both");
        return false;
      }
      head = g_steal_pointer(&cells);
      head_line = line;
      continue;
    }
    guint nhead = g_strv_length(head);
    if (ncells != nhead) {
      /* at the first cell too many, or at the end of the line where one is missing */
      const char *end = raw + strlen(raw);
      while (end > raw && g_ascii_isspace(end[-1])) end--;
      int at = ncells > nhead ? col[nhead] : 1 + (int)g_utf8_strlen(raw, end - raw);
      cs_error_at(error, (CsLoc){file, line, at}, "%u cells where the header has %u columns", ncells, nhead);
      return false;
    }
    CsLayer l = {g_strdup_printf("layer%u", w->layers->len), 0, -1, 0, -1}; /* backward -1: not given */
    g_array_append_val(w->layers, l);
    CsLayer *lay = &g_array_index(w->layers, CsLayer, w->layers->len - 1);
    bool has_time = false;
    for (guint c = 0; head[c]; c++) {
      if (!strcmp(head[c], "name") && !*cells[c]) continue;
      if (!layer_value(lay, head[c], cells[c], &has_time, &e)) {
        cs_error_at(error, (CsLoc){file, line, col[c]}, "%s: %s", head[c], e->message);
        g_error_free(e);
        return false;
      }
    }
  }
  if (!head) {
    cs_error_at(error, (CsLoc){file, 1, 1}, "no layers: the file is empty%s: give a header (name,params,backward...) "
                "and a row per layer", comments ? " but for comments" : "");
    return false;
  }
  if (w->layers->len == 0) {
    cs_error_at(error, (CsLoc){file, head_line, 1}, "no layers: the header has no row below it: give a row per layer");
    return false;
  }
  return true;
}

/* Layers given: they set params and compute; what they replace is refused. */
static bool resolve_layers(const CsYamlNode *v, const CsYamlNode *src, bool device, CsScenario *s, GError **error) {
  CsWorkloadSpec *w = &s->workload;
  GArray *L = w->layers;
  const char *what = w->model >= 0 ? "the model's tensors" : "the layers";
  /* the readers leave backward at -1 where a layer does not give one: a
   * backward of 0 is a time (a tensor whose module's FLOPs sit on
   * another), its absence is not */
  g_autofree bool *no_backward = g_new0(bool, L->len + 1);
  for (guint i = 0; i < L->len; i++) {
    CsLayer *l = &g_array_index(L, CsLayer, i);
    if (l->backward < 0) no_backward[i] = true, l->backward = 0;
  }
  if (value_of(v, "params")) FAIL_AT(at(v, "params"), "workload.params: %s give the parameters: drop params", what);
  if (value_of(v, "backward_fraction"))
    FAIL_AT(at(v, "backward_fraction"), "workload.backward_fraction: %s give the backward pass: drop backward_fraction", what);
  int64_t params = 0;
  double flops = 0;
  bool any_flops = false, any_time = false;
  for (guint i = 0; i < L->len; i++) {
    const CsLayer *l = &g_array_index(L, CsLayer, i);
    if (l->params > INT64_MAX / 2 - params) FAIL_AT(src, "%s: more than 2^62 parameters", what);
    params += l->params;
    if (l->flops >= 0) any_flops = true, flops += l->flops;
    else if (l->forward || l->backward) any_time = true;
  }
  if (params == 0) FAIL_AT(src, "%s hold no parameters: there is no gradient to reduce", what);
  w->params = params;
  bool compute_given = value_of(v, "compute") != NULL;
  if (device) {
    if (compute_given) FAIL_AT(at(v, "compute"), "workload.compute: workload.device sets it from the FLOPs: drop one of them");
    if (any_time || !any_flops) FAIL_AT(src, "%s: workload.device needs every layer's flops, not times", what);
    double rate = w->tflops * 1e12 * w->efficiency, total = 0;
    for (guint i = 0; i < L->len; i++) {
      CsLayer *l = &g_array_index(L, CsLayer, i);
      double fwd = l->flops * (double)w->batch / rate;
      total += 3 * fwd;
      if (total > 1e6) FAIL_AT(at(v, "device"), "workload.device: a micro-batch would take more than 10^6 s: check tflops and batch");
      l->forward = (CsTime)llround(fwd * 1e12);
      l->backward = 2 * l->forward;
    }
  } else if (any_flops) { /* the zoo without a device: compute split by FLOPs, forward a third */
    if (w->model < 0) FAIL_AT(src, "%s give flops: set workload.device to turn them into times, or give times", what);
    double cum = 0;
    CsTime fprev = 0, bprev = 0, C = w->compute;
    for (guint i = 0; i < L->len; i++) {
      CsLayer *l = &g_array_index(L, CsLayer, i);
      cum += l->flops;
      CsTime f = (CsTime)llround((double)C / 3 * (flops > 0 ? cum / flops : (double)(i + 1) / L->len));
      CsTime b = (CsTime)llround((double)C * 2 / 3 * (flops > 0 ? cum / flops : (double)(i + 1) / L->len));
      l->forward = f - fprev;
      l->backward = b - bprev;
      fprev = f, bprev = b;
    }
  } else {
    if (compute_given) FAIL_AT(at(v, "compute"), "workload.compute: the layers' times give it: drop compute");
    if (value_of(v, "batch")) FAIL_AT(at(v, "batch"), "workload.batch applies with workload.device");
    /* without a device each layer's backward time is required: a layer
     * without one (or a CSV without the column) made the whole
     * computation 0 s, accepted in silence; one given as 0 is taken */
    for (guint i = 0; i < L->len; i++) {
      const CsLayer *l = &g_array_index(L, CsLayer, i);
      if (!no_backward[i]) continue;
      const CsYamlNode *at_layer = src && src->kind == CS_YAML_SEQ && i < src->items->len ? src->items->pdata[i] : src;
      FAIL_AT(at_layer, "%s: layer %u%s%s%s has no backward time: give each layer's backward (and forward), or flops "
              "with workload.device", what, i, l->name ? " (" : "", l->name ? l->name : "", l->name ? ")" : "");
    }
  }
  CsTime compute = 0;
  for (guint i = 0; i < L->len; i++) {
    const CsLayer *l = &g_array_index(L, CsLayer, i);
    if (l->forward > CS_TIME_MAX / 4 || l->backward > CS_TIME_MAX / 4 || compute > CS_TIME_MAX / 4)
      FAIL_AT(src, "%s: a micro-batch longer than any run", what);
    compute += l->forward + l->backward;
  }
  w->compute = compute;
  return true;
}

static bool read_layers(const CsYamlNode *v, CsScenario *s, GError **error) {
  CsWorkloadSpec *w = &s->workload;
  CsYamlNode *mv = value_of(v, "model"), *lv = value_of(v, "layers"), *cv = value_of(v, "layers_csv"),
             *dv = value_of(v, "device");
  CsYamlNode *src = mv ? mv : lv ? lv : cv;
  if (!!mv + !!lv + !!cv > 1)
    FAIL_AT(mv && lv ? lv : cv, "workload: give one of model, layers and layers_csv");
  w->model = -1;
  if (dv) {
    const char *D = "workload.device";
    if (!expect_kind(dv, CS_YAML_MAP, D, error) || !check_keys(dv, D, KEYS(D), error) ||
        !require_key(dv, D, "tflops", error) || !read_params(dv, D, D, CS_PARAM_WORKLOAD, w, error))
      return false;
    if (!src) FAIL_AT(dv, "%s turns a model's FLOPs into times: give workload.model, or layers with flops", D);
  }
  if (value_of(v, "batch") && !dv)
    FAIL_AT(at(v, "batch"), "workload.batch applies with workload.device (it multiplies the FLOPs of a sample)");
  if (value_of(v, "first_bucket") && !src)
    FAIL_AT(at(v, "first_bucket"), "workload.first_bucket applies to per-layer gradients (model, layers or layers_csv)");
  if (!src) return true;
  if (mv) {
    int i = 0;
    if (!parse_enum(mv, "workload.model", "model of the zoo", cs_zoo_names(), &i, error)) return false;
    w->model = i;
    w->layers = cs_zoo_layers(cs_zoo[i]);
  } else if (lv ? !read_layer_list(lv, s, error) : !read_layers_csv(cv, s, error)) {
    return false;
  }
  return resolve_layers(v, src, dv != NULL, s, error);
}

static bool read_workload(const CsYamlNode *v, CsScenario *s, GError **error) {
  CsWorkloadSpec *w = &s->workload;
  const char *P = "workload";
  if (!expect_kind(v, CS_YAML_MAP, P, error) || !check_keys(v, P, KEYS(P), error)) return false;
  w->present = true;
  w->at = loc_of(s, v);
  if (!read_params(v, P, P, CS_PARAM_WORKLOAD, w, error)) return false;
  if (!read_layers(v, s, error)) return false;
  if (w->iterations > 1000000) FAIL_AT(at(v, "iterations"), "workload.iterations: at most 1M");
  if (w->warmup >= w->iterations)
    FAIL_AT(value_of(v, "warmup") ? at(v, "warmup") : at(v, "iterations"),
            "workload.warmup (%" G_GINT64_FORMAT ") must be smaller than iterations (%" G_GINT64_FORMAT "): some iteration must be measured",
            (gint64)w->warmup, (gint64)w->iterations);
  if (w->compute_jitter < 0)
    FAIL_AT(at(v, "compute_jitter"), "workload.compute_jitter is a relative standard deviation: 0 or more");
  /* one iteration's compute is accumulation micro-batches: refused here
   * when it alone passes what simulated time holds, as compute is (it
   * would otherwise end the run at run time, exit 1) */
  if (w->accumulation > 1 && w->compute > CS_TIME_MAX / w->accumulation)
    FAIL_AT(at(v, "accumulation"),
            "workload.accumulation: %" G_GINT64_FORMAT " micro-batches of %.6gs of compute make an iteration of "
            "about %.3g s: simulated time ends after 9223372s (about 106 days)",
            (gint64)w->accumulation, (double)w->compute * 1e-12, (double)w->compute * 1e-12 * (double)w->accumulation);
  const char *coll_name = cs_collective_name(w->collective);
  bool servers = cs_collective_has(w->collective, CS_COLLF_SERVERS);
  if (w->chunks > 1 && !cs_collective_has(w->collective, CS_COLLF_CHUNKS))
    FAIL_AT(at(v, "chunks"), "workload.chunks pipelines the tree collective only (collective is %s)", coll_name);
  if (value_of(v, "sync") && !servers)
    FAIL_AT(at(v, "sync"), "workload.sync applies to collective ps only (collective is %s)", coll_name);
  if (value_of(v, "pull") && !servers)
    FAIL_AT(at(v, "pull"), "workload.pull applies to collective ps only (collective is %s)", coll_name);

  CsYamlNode *sv;
  if ((sv = value_of(v, "servers"))) {
    if (!expect_kind(sv, CS_YAML_SEQ, "workload.servers", error)) return false;
    if (!servers) FAIL_AT(sv, "workload.servers applies to collective ps only (collective is %s)", coll_name);
    for (guint i = 0; i < sv->items->len; i++) {
      CsYamlNode *n = sv->items->pdata[i];
      const char *t = scalar_text(n, "workload.servers[]", error);
      if (!t) return false;
      for (guint j = 0; j < w->servers->len; j++) {
        const CsNameRef *prev = &g_array_index(w->servers, CsNameRef, j);
        if (!strcmp(prev->name, t))
          FAIL_AT(n, "workload.servers: '%s' is listed twice (first at line %d): each server holds one shard", t,
                  prev->at.line);
      }
      CsNameRef r = {g_strdup(t), loc_of(s, n)};
      g_array_append_val(w->servers, r);
    }
  }

  CsCompressionSpec *c = &w->compression;
  CsYamlNode *cv;
  if ((cv = value_of(v, "compression"))) {
    const char *C = "workload.compression";
    if (!expect_kind(cv, CS_YAML_MAP, C, error) || !check_keys(cv, C, KEYS(C), error) ||
        !read_params(cv, C, C, CS_PARAM_WORKLOAD, w, error))
      return false;
    if (c->bucket < 1) FAIL_AT(at(cv, "bucket"), "%s.bucket must be at least 1 element", C);
    CsYamlNode *cost;
    if ((cost = value_of(cv, "cost")) && !read_cost(cost, w, error)) return false;
  }
  CsYamlNode *conv;
  if ((conv = value_of(v, "convergence")) && !read_convergence(conv, s, error)) return false;
  g_autofree char *refusal = cs_collective_codec_refusal(w->collective, c->method);
  if (refusal) {
    CsYamlNode *at = value_of(v, "collective");
    if (!at && cv) at = value_of(cv, "method");
    cs_yaml_error(error, at ? at : v, "workload: %s", refusal);
    return false;
  }
  return true;
}

static bool read_background(const CsYamlNode *v, CsScenario *s, GError **error) {
  if (!expect_kind(v, CS_YAML_SEQ, "background", error)) return false;
  for (guint i = 0; i < v->items->len; i++) {
    CsYamlNode *e = v->items->pdata[i];
    g_autofree char *path = g_strdup_printf("background[%u]", i);
    if (!expect_kind(e, CS_YAML_MAP, path, error) || !check_keys(e, path, KEYS("background[]"), error))
      return false;
    for (const char *const *k = (const char *const[]){"src", "dst", "pattern", "rate", NULL}; *k; k++)
      if (!require_key(e, path, *k, error)) return false;
    CsBackgroundSpec b = {.at = loc_of(s, e)};
    apply_defaults(CS_PARAM_BACKGROUND, "background[].", &b);
    bool ok = read_params(e, path, "background[]", CS_PARAM_BACKGROUND, &b, error);
    g_array_append_val(s->background, b); /* the scenario owns the names, also bad ones */
    if (!ok) return false;
    if (b.rate == 0) FAIL_AT(at(e, "rate"), "%s.rate must be larger than 0", path);
    if (b.size == 0) FAIL_AT(at(e, "size"), "%s.size must be at least 1 B", path);
    if (b.pattern == CS_PATTERN_ONOFF) {
      if (!require_key(e, path, "on", error) || !require_key(e, path, "off", error)) return false;
      if (b.on == 0) FAIL_AT(at(e, "on"), "%s.on must be larger than 0", path);
    } else {
      for (const char *const *k = (const char *const[]){"on", "off", NULL}; *k; k++)
        if (value_of(e, *k))
          FAIL_AT(at(e, *k), "%s.%s applies to pattern onoff only", path, *k);
    }
    if (strcmp(b.src, b.dst) == 0) FAIL_AT(at(e, "dst"), "%s: src and dst are both '%s'", path, b.src);
  }
  return true;
}

static bool read_flows(const CsYamlNode *v, CsScenario *s, GError **error) {
  if (!expect_kind(v, CS_YAML_SEQ, "flows", error)) return false;
  for (guint i = 0; i < v->items->len; i++) {
    CsYamlNode *e = v->items->pdata[i];
    g_autofree char *path = g_strdup_printf("flows[%u]", i);
    if (!expect_kind(e, CS_YAML_MAP, path, error) || !check_keys(e, path, KEYS("flows[]"), error))
      return false;
    for (const char *const *k = (const char *const[]){"src", "dst", "size", NULL}; *k; k++)
      if (!require_key(e, path, *k, error)) return false;
    CsFlowSpec f = {.at = loc_of(s, e)};
    apply_defaults(CS_PARAM_FLOW, "flows[].", &f);
    bool ok = read_params(e, path, "flows[]", CS_PARAM_FLOW, &f, error);
    g_array_append_val(s->flows, f);
    if (!ok) return false;
    if (f.size == 0) FAIL_AT(at(e, "size"), "%s.size must be at least 1 B", path);
    if (strcmp(f.src, f.dst) == 0) FAIL_AT(at(e, "dst"), "%s: src and dst are both '%s'", path, f.src);
  }
  return true;
}

static bool read_output(const CsYamlNode *v, CsScenario *s, GError **error) {
  CsOutputSpec *o = &s->output;
  if (!expect_kind(v, CS_YAML_MAP, "output", error) || !check_keys(v, "output", KEYS("output"), error) ||
      !read_params(v, "output", "output", CS_PARAM_OUTPUT, o, error))
    return false;
  CsYamlNode *t;
  if ((t = value_of(v, "traces"))) {
    if (!expect_kind(t, CS_YAML_SEQ, "output.traces", error)) return false;
    o->traces = 0;
    for (guint i = 0; i < t->items->len; i++) {
      int which = 0;
      g_autofree char *path = g_strdup_printf("output.traces[%u]", i);
      if (!parse_enum(t->items->pdata[i], path, "trace", trace_names, &which, error)) return false;
      if (o->traces & (1u << which)) FAIL_AT(t->items->pdata[i], "%s: '%s' is listed twice", path, trace_names[which]);
      o->traces |= 1u << which;
    }
  }
  return true;
}

/* A sweep axis is a dotted key and a list of values, or several keys
 * joined by commas and a list of lists, zipped: `workload.compression.method,
 * workload.collective: [[none, ring], [topk, allgather]]` sweeps pairs. */
static bool read_sweep(const CsYamlNode *v, CsScenario *s, GError **error) {
  if (!expect_kind(v, CS_YAML_MAP, "sweep", error)) return false;
  for (guint i = 0; i < v->keys->len; i++) {
    CsYamlNode *k = v->keys->pdata[i], *list = v->items->pdata[i];
    g_auto(GStrv) keys = g_strsplit(k->text, ",", -1);
    guint nk = g_strv_length(keys);
    CsLoc *key_at = g_new(CsLoc, nk);
    for (guint j = 0, off = 0; j < nk; j++) {
      /* a plain key on its line: each dotted key at its own column */
      key_at[j] = loc_of(s, k);
      gsize lead = strspn(keys[j], " \t"), len = strlen(keys[j]);
      if (k->plain && k->line > 0 && !k->anchor_line)
        key_at[j].col += (int)g_utf8_strlen(k->text, (gssize)(off + lead));
      off += (guint)len + 1;
      g_strstrip(keys[j]);
    }
    CsSweepAxis ax = {g_strdup(k->text), g_strdupv(keys), g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev),
                      loc_of(s, k), key_at};
    g_array_append_val(s->sweep, ax);
    for (guint j = 0; j < nk; j++) {
      if (!*keys[j]) FAIL_AT(k, "sweep: '%s' has an empty key", k->text);
      if (strncmp(keys[j], "sweep", 5) == 0 && (keys[j][5] == '\0' || keys[j][5] == '.'))
        FAIL_AT(k, "sweep: a sweep cannot sweep itself ('%s')", keys[j]);
      /* a key set twice at each point: the later value would win, silently */
      for (guint a = 0; a < s->sweep->len; a++) {
        const CsSweepAxis *prev = &g_array_index(s->sweep, CsSweepAxis, a);
        for (guint q = 0; prev->keys[q] && (a + 1 < s->sweep->len || q < j); q++) {
          CsKeysOverlap o = cs_scenario_keys_overlap(keys[j], prev->keys[q]);
          if (o == CS_KEYS_APART) continue;
          CsLoc was = prev->key_at[q];
          if (o == CS_KEYS_SAME)
            cs_error_at(error, key_at[j], "sweep: '%s' is swept twice (first at line %d, column %d): each key once in "
                        "a sweep, or a point would set it twice and keep the last value", keys[j], was.line, was.col);
          else
            cs_error_at(error, key_at[j], "sweep: '%s' %s '%s', swept at line %d, column %d: a point would set "
                        "both and keep the last: sweep one of them", keys[j],
                        o == CS_KEYS_INSIDE ? "is within" : "holds", prev->keys[q], was.line, was.col);
          return false;
        }
      }
    }
    if (!expect_kind(list, CS_YAML_SEQ, "a sweep axis", error)) return false;
    if (list->items->len == 0) FAIL_AT(list, "sweep.%s: the list of values is empty", k->text);
    for (guint j = 0; j < list->items->len; j++) {
      CsYamlNode *item = list->items->pdata[j];
      g_autofree char *kp = g_strdup_printf("sweep.%s[%u]", k->text, j);
      char **vals = g_new0(char *, nk + 1);
      g_ptr_array_add(ax.values, vals);
      if (nk == 1) {
        if (item->kind != CS_YAML_SCALAR)
          FAIL_AT(item, "%s must be a value, not %s: a value in quotes, written [a, b] or {k: v}, sets a list or a map "
                  "(as with --set), such as \"{xoff: 200KB, xon: 160KB}\"", kp, cs_yaml_kind_name(item->kind));
        const char *t = scalar_text(item, kp, error);
        if (!t) return false;
        vals[0] = g_strdup(t);
      } else {
        if (item->kind != CS_YAML_SEQ || item->items->len != nk)
          FAIL_AT(item, "%s: the axis zips %u keys: each value is a list of %u values, such as [none, ring]", kp, nk, nk);
        for (guint q = 0; q < nk; q++) {
          const char *t = scalar_text(item->items->pdata[q], kp, error);
          if (!t) return false;
          vals[q] = g_strdup(t);
        }
      }
      /* the same value twice, however written, gives two points that are one */
      for (guint e = 0; e < j; e++) {
        char **prev = ax.values->pdata[e];
        guint q = 0, written = nk; /* the first key whose value is written otherwise */
        for (; q < nk; q++) {
          g_autofree char *a = value_as_read(keys[q], prev[q]), *b = value_as_read(keys[q], vals[q]);
          if (strcmp(a, b)) break;
          if (written == nk && strcmp(prev[q], vals[q])) written = q;
        }
        if (q < nk) continue;
        if (written < nk)
          FAIL_AT(item, "%s repeats value %u of the axis ('%s' is '%s'): each value once (two points would be the same run)",
                  kp, e, vals[written], prev[written]);
        FAIL_AT(item, "%s repeats value %u of the axis: each value once (two points would be the same run)", kp, e);
      }
    }
  }
  return true;
}

static char *file_stem(const char *path) {
  g_autofree char *base = g_path_get_basename(path);
  char *dot = strrchr(base, '.');
  if (dot && dot != base) *dot = '\0';
  return g_strdup(base);
}

static bool read_scenario(CsYamlNode *root, CsScenario *s, GError **error) {
  if (!check_keys(root, "", KEYS(""), error)) return false;
  if (!get_string(root, "", "name", &s->name, error)) return false;
  if (!valid_name(s->name))
    FAIL_AT(at(root, "name"), "name: '%s' may hold letters, digits, '_', '.', ':' and '-' only (it names output folders)",
            s->name);
  CsYamlNode *v;
  if ((v = value_of(root, "seed"))) {
    const char *t = scalar_text(v, "seed", error);
    if (!t) return false;
    guint64 seed;
    if (!g_ascii_string_to_unsigned(t, 10, 0, G_MAXUINT64, &seed, NULL))
      FAIL_AT(v, "seed: '%s' is not a whole number from 0 to 2^64-1", t);
    s->seed = seed;
  }
  if ((v = value_of(root, "fidelity"))) {
    int fid = 0;
    if (!parse_enum(v, "fidelity", "fidelity", cs_fidelity_names(), &fid, error)) return false;
    if (!cs_fidelities[fid].new)
      FAIL_AT(v, "fidelity: %s (%s) is planned but not built yet; use packet", cs_fidelities[fid].name,
              cs_fidelities[fid].help);
    s->fidelity = (uint32_t)fid;
  }
  if (!read_params(root, "", "", CS_PARAM_SCENARIO, s, error)) return false;
  if ((v = value_of(root, "hybrid"))) {
    if (!expect_kind(v, CS_YAML_MAP, "hybrid", error) || !check_keys(v, "hybrid", KEYS("hybrid"), error) ||
        !read_params(v, "hybrid", "hybrid", CS_PARAM_SCENARIO, s, error))
      return false;
    s->hybrid_at = loc_of(s, v);
  }
  if (s->watchdog > 0 && s->watchdog < CS_US)
    FAIL_AT(at(root, "watchdog"), "watchdog: at least 1us (it checks every half of it), or 0 to turn it off");

  if ((v = value_of(root, "defaults"))) {
    if (!expect_kind(v, CS_YAML_MAP, "defaults", error) ||
        !check_keys(v, "defaults", KEYS("defaults"), error) ||
        !read_link_settings(v, "defaults", "defaults", &s->defaults, error))
      return false;
    s->defaults.buffer_set = false; /* a default buffer bounds switch ports only */
    s->defaults.at = s->defaults.headroom_at = settings_loc(s, v);
  }

  CsYamlNode *topo = value_of(root, "topology"), *nodes = value_of(root, "nodes"),
             *links = value_of(root, "links");
  if (topo && nodes)
    FAIL_AT(nodes, "give either topology: (a generator) or nodes: and links:, not both");
  if (topo && links) FAIL_AT(links, "links: belongs to explicit topologies (nodes: + links:), not to topology:");
  if (links && !nodes) FAIL_AT(links, "links: needs nodes: to name the nodes they join");
  if (!topo && !nodes)
    FAIL_AT(root, "the scenario has no network: add topology: (a generator) or nodes: and links:");
  if (topo ? !read_topology(topo, s, error) : !read_explicit(nodes, links, s, error)) return false;
  CsYamlNode *ov;
  if ((ov = value_of(root, "links_override")) && !read_overrides(ov, s, error)) return false;

  if ((v = value_of(root, "transport")) && !read_transport(v, s, error)) return false;
  /* the watchdog's default outlasts transport.max_timeouts of backoff, so
   * that a dead link abandons its messages first: each timeout at most
   * CS_TCP_MAX_RTO, one more for the tail-loss probe sent in the first's
   * place, and one for the last ACK to come back (roce's RTO is fixed and
   * at most 10 s: 600 s cover its default 15) */
  if (!value_of(root, "watchdog") && s->watchdog > 0 && s->transport.protocol != CS_PROTO_ROCE) {
    CsTime need = ((CsTime)s->transport.max_timeouts + 2) * CS_TCP_MAX_RTO;
    if (need > s->watchdog) s->watchdog = need;
  }
  CsYamlNode *wkey = NULL;
  if ((v = cs_yaml_map_get(root, "workload", &wkey))) {
    if (!read_workload(v, s, error)) return false;
    /* problems of the workload as a whole point at its key */
    s->workload.at = loc_of(s, wkey);
  }
  if ((v = value_of(root, "background")) && !read_background(v, s, error)) return false;
  if ((v = value_of(root, "flows")) && !read_flows(v, s, error)) return false;
  if ((v = value_of(root, "output")) && !read_output(v, s, error)) return false;
  if ((v = value_of(root, "sweep")) && !read_sweep(v, s, error)) return false;

  /* what the fidelity cannot model is refused, not left out silently */
  const CsFidelityDef *fid = &cs_fidelities[s->fidelity];
  if (!(fid->models & CS_MODELS_PACKETS) && (s->output.traces & CS_TRACE_PACKETS))
    FAIL_AT(at(value_of(root, "output") ? value_of(root, "output") : root, "traces"),
            "output.traces: packets.csv needs packets, and fidelity %s has none (use fidelity: packet)", fid->name);
  if (!(fid->models & CS_MODELS_PACKETS) && s->transport.ack * 10 > s->transport.mtu) {
    CsYamlNode *tv = value_of(root, "transport");
    FAIL_AT(tv && value_of(tv, "ack") ? at(tv, "ack") : at(root, "fidelity"),
            "transport.ack: fidelity %s takes the ACKs' load off the reverse route's capacity, which needs an ACK of "
            "at most a tenth of mtu (%" G_GINT64_FORMAT " B here; use fidelity: packet)",
            fid->name, (gint64)(s->transport.mtu / 10));
  }
  for (guint i = 0; !(fid->models & CS_MODELS_OPEN_LOOP) && i < s->background->len; i++) {
    const CsBackgroundSpec *b = &g_array_index(s->background, CsBackgroundSpec, i);
    if (b->pattern == CS_PATTERN_CBR) continue;
    double mean = b->pattern == CS_PATTERN_ONOFF ? (double)b->rate * (double)b->on / (double)(b->on + b->off) : (double)b->rate;
    char buf[CS_FORMAT_LEN];
    cs_error_at(error, b->at,
                "background[%u]: fidelity %s carries open-loop traffic at a constant rate only: write pattern: cbr "
                "with rate: %s (this %s source's mean), or use fidelity: packet",
                i, fid->name, cs_format_bandwidth((int64_t)llround(mean), buf), cs_pattern_names()[b->pattern]);
    return false;
  }

  if (!s->workload.present && s->flows->len == 0) {
    if (s->background->len == 0)
      FAIL_AT(root, "nothing to simulate: add workload:, flows: or background:");
    if (s->duration == 0)
      FAIL_AT(at(root, "background"),
              "only background traffic runs: set duration: (it would run forever)");
  }
  if (!s->output.dir) s->output.dir = g_build_filename("results", s->name, NULL);
  return true;
}

static CsScenario *scenario_new(const char *path) {
  CsScenario *s = g_new0(CsScenario, 1);
  s->file = g_strdup(path);
  s->strings = g_string_chunk_new(256);
  s->topology.at = (CsLoc){g_string_chunk_insert_const(s->strings, path), 0, 0};
  s->name = file_stem(path);
  s->seed = 1;
  /* every bound key's default (params.c), then what the table cannot say */
  apply_defaults(CS_PARAM_SCENARIO, "", s);
  apply_defaults(CS_PARAM_LINK, "defaults.", &s->defaults);
  apply_defaults(CS_PARAM_TOPOLOGY, "topology.", &s->topology);
  apply_defaults(CS_PARAM_TRANSPORT, "transport.", &s->transport);
  apply_defaults(CS_PARAM_WORKLOAD, "workload.", &s->workload);
  apply_defaults(CS_PARAM_OUTPUT, "output.", &s->output);
  s->topology.workers = -1;       /* every host that is not a server */
  s->workload.model = -1;
  s->transport.host_queue = -1;   /* 100 us of the host's link */
  s->topology.nodes = g_array_new(FALSE, TRUE, sizeof(CsNodeSpec));
  s->topology.links = g_array_new(FALSE, TRUE, sizeof(CsLinkDecl));
  s->topology.overrides = g_array_new(FALSE, TRUE, sizeof(CsLinkOverride));
  s->topology.servers_at = g_array_new(FALSE, TRUE, sizeof(CsNameRef));
  s->workload.servers = g_array_new(FALSE, TRUE, sizeof(CsNameRef));
  s->background = g_array_new(FALSE, TRUE, sizeof(CsBackgroundSpec));
  s->flows = g_array_new(FALSE, TRUE, sizeof(CsFlowSpec));
  s->output.traces = CS_TRACE_SUMMARY | CS_TRACE_ITERATIONS | CS_TRACE_MESSAGES | CS_TRACE_LINKS;
  s->sweep = g_array_new(FALSE, TRUE, sizeof(CsSweepAxis));
  return s;
}

void cs_scenario_free(CsScenario *s) {
  if (!s) return;
  g_string_chunk_free(s->strings);
  g_free(s->file);
  g_free(s->name);
  for (guint i = 0; i < s->topology.nodes->len; i++)
    g_free(g_array_index(s->topology.nodes, CsNodeSpec, i).name);
  g_array_free(s->topology.nodes, TRUE);
  for (guint i = 0; i < s->topology.links->len; i++) {
    CsLinkDecl *d = &g_array_index(s->topology.links, CsLinkDecl, i);
    g_free(d->a);
    g_free(d->b);
  }
  g_array_free(s->topology.links, TRUE);
  for (guint i = 0; i < s->topology.overrides->len; i++) g_free(g_array_index(s->topology.overrides, CsLinkOverride, i).match);
  g_array_free(s->topology.overrides, TRUE);
  for (guint i = 0; i < s->topology.servers_at->len; i++) g_free(g_array_index(s->topology.servers_at, CsNameRef, i).name);
  g_array_free(s->topology.servers_at, TRUE);
  for (guint i = 0; i < s->workload.servers->len; i++)
    g_free(g_array_index(s->workload.servers, CsNameRef, i).name);
  g_array_free(s->workload.servers, TRUE);
  cs_layers_free(s->workload.layers);
  for (guint i = 0; i < s->background->len; i++) {
    CsBackgroundSpec *b = &g_array_index(s->background, CsBackgroundSpec, i);
    g_free(b->src);
    g_free(b->dst);
  }
  g_array_free(s->background, TRUE);
  for (guint i = 0; i < s->flows->len; i++) {
    CsFlowSpec *f = &g_array_index(s->flows, CsFlowSpec, i);
    g_free(f->src);
    g_free(f->dst);
  }
  g_array_free(s->flows, TRUE);
  g_free(s->output.dir);
  for (guint i = 0; i < s->sweep->len; i++) {
    CsSweepAxis *a = &g_array_index(s->sweep, CsSweepAxis, i);
    g_free(a->key);
    g_strfreev(a->keys);
    g_free(a->key_at);
    g_ptr_array_free(a->values, TRUE);
  }
  g_array_free(s->sweep, TRUE);
  g_free(s);
}

/* Each value of each sweep axis, applied alone to the scenario, must give
 * a valid scenario: a typo in a sweep fails at load, not hours into it. */
static bool check_sweep_values(const CsYamlDoc *doc, const CsScenario *s, const char *path,
                               GError **error) {
  CsYamlNode *sweep = cs_yaml_map_get(cs_yaml_root((CsYamlDoc *)doc), "sweep", NULL);
  for (guint i = 0; i < s->sweep->len; i++) {
    const CsSweepAxis *ax = &g_array_index(s->sweep, CsSweepAxis, i);
    CsYamlNode *list = cs_yaml_map_get(sweep, ax->key, NULL);
    for (guint j = 0; j < ax->values->len; j++) {
      CsYamlNode *item = list->items->pdata[j];
      g_autoptr(CsYamlDoc) copy = cs_yaml_doc_copy(doc);
      cs_yaml_map_remove(cs_yaml_root(copy), "sweep");
      g_autofree char *origin = g_strdup_printf("%s:%d:%d", item->origin, item->line, item->col);
      char **vals = ax->values->pdata[j];
      for (guint q = 0; ax->keys[q]; q++)
        if (!cs_yaml_set_path(copy, ax->keys[q], vals[q], origin, error)) return false;
      CsScenario *point = scenario_new(path);
      bool ok = read_scenario(cs_yaml_root(copy), point, error);
      cs_scenario_free(point);
      if (!ok) return false;
    }
  }
  return true;
}

CsScenario *cs_scenario_from_yaml(CsYamlDoc *doc, const char *path, GError **error) {
  CsScenario *s = scenario_new(path);
  if (!read_scenario(cs_yaml_root(doc), s, error) || !check_sweep_values(doc, s, path, error)) {
    cs_scenario_free(s);
    return NULL;
  }
  return s;
}

static CsScenario *load_doc(CsYamlDoc *doc, const char *path, const char *const *overrides,
                            GError **error) {
  if (!doc) return NULL;
  for (size_t i = 0; overrides && overrides[i]; i++)
    if (!cs_yaml_set(doc, overrides[i], error)) return NULL;
  return cs_scenario_from_yaml(doc, path, error);
}

CsScenario *cs_scenario_load(const char *path, const char *const *overrides, GError **error) {
  g_autoptr(CsYamlDoc) doc = cs_yaml_load_file(path, error);
  return load_doc(doc, path, overrides, error);
}

CsScenario *cs_scenario_load_string(const char *text, const char *name,
                                    const char *const *overrides, GError **error) {
  g_autoptr(CsYamlDoc) doc = cs_yaml_load_string(text, strlen(text), name, error);
  return load_doc(doc, name, overrides, error);
}
