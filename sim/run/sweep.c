/* sweep.c - grid expansion, parallel points, resume, shards and merge. */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commsim/csv.h"
#include "commsim/scenario.h"
#include "commsim/sim.h"
#include "commsim/sweep.h"

struct CsSweep {
  char *path;
  CsYamlDoc *doc; /* with the overrides, without the sweep */
  CsScenario *base;
  GPtrArray *points; /* CsSweepPoint * */
  char **all_keys;   /* the swept keys, in column order */
  char *fingerprint; /* of the scenario with its overrides and its sweep */
};

/* A point's folder: its index, zero-padded to the grid's width, and a
 * readable slug of its values (the last part of each key), cut to
 * SLUG_MAX characters: unique and short, however many axes; the full
 * values are in the folder's point.yaml. */
#define SLUG_MAX 60

static void point_free(gpointer p) {
  CsSweepPoint *pt = p;
  g_free(pt->name);
  g_strfreev(pt->keys);
  g_strfreev(pt->values);
  g_free(pt);
}

static char *point_name(uint32_t index, uint32_t total, char **keys, char **values) {
  int width = 3;
  for (uint32_t n = total ? total - 1 : 0; n >= 1000; n /= 10) width++;
  GString *slug = g_string_new(NULL);
  for (guint i = 0; keys[i]; i++) {
    const char *leaf = strrchr(keys[i], '.');
    g_string_append_printf(slug, "%s%s=%s", i ? "," : "", leaf ? leaf + 1 : keys[i], values[i]);
  }
  for (gsize i = 0; i < slug->len; i++)
    if (!g_ascii_isalnum(slug->str[i]) && !strchr("._=,+-", slug->str[i])) slug->str[i] = '_';
  if (slug->len > SLUG_MAX) g_string_truncate(slug, SLUG_MAX);
  char *name = g_strdup_printf("%0*u-%s", width, index, slug->str);
  g_string_free(slug, TRUE);
  return name;
}

/* A --set that the sweep undoes at every point: on a swept key, within
 * one (the axis's value replaces it), or around one with a value that
 * holds the swept key.  docs/analysis.md: a --set applies to every point,
 * so one that no point would see is refused, not dropped. */
static bool check_overrides(const CsSweep *sw, const char *const *overrides, GError **error) {
  for (size_t i = 0; overrides && overrides[i]; i++) {
    const char *eq = strchr(overrides[i], '=');
    if (!eq) continue; /* cs_yaml_set refused it already */
    g_autofree char *key = g_strstrip(g_strndup(overrides[i], (gsize)(eq - overrides[i])));
    g_autofree char *origin = g_strdup_printf("--set %s", overrides[i]);
    for (guint a = 0; a < sw->base->sweep->len; a++) {
      const CsSweepAxis *ax = &g_array_index(sw->base->sweep, CsSweepAxis, a);
      for (guint q = 0; ax->keys[q]; q++) {
        CsKeysOverlap o = cs_scenario_keys_overlap(key, ax->keys[q]);
        if (o == CS_KEYS_AROUND) { /* the swept key inside the --set's value? */
          const CsYamlNode *n = cs_yaml_lookup(cs_yaml_root(sw->doc), ax->keys[q]);
          if (!n || g_strcmp0(n->origin, origin)) continue;
        } else if (o == CS_KEYS_APART) continue;
        const CsLoc at = ax->key_at[q];
        if (o == CS_KEYS_SAME)
          cs_error_at(error, (CsLoc){origin, 0, 0}, "'%s' is swept (%s:%d:%d): every point sets it to the axis's values, "
                      "so this --set would change nothing: drop the --set, or the axis", key, at.file, at.line, at.col);
        else if (o == CS_KEYS_INSIDE)
          cs_error_at(error, (CsLoc){origin, 0, 0}, "it is within '%s', which is swept (%s:%d:%d): every point replaces "
                      "'%s' with the axis's values, so this --set would change nothing: drop the --set, or the axis",
                      ax->keys[q], at.file, at.line, at.col, ax->keys[q]);
        else
          cs_error_at(error, (CsLoc){origin, 0, 0}, "its value sets '%s', which is swept (%s:%d:%d): every point sets "
                      "it to the axis's values instead: leave it out of the --set, or drop the axis",
                      ax->keys[q], at.file, at.line, at.col);
        return false;
      }
    }
  }
  return true;
}

CsSweep *cs_sweep_new(const char *path, const char *const *overrides, GError **error) {
  CsSweep *sw = g_new0(CsSweep, 1);
  sw->path = g_strdup(path);
  sw->points = g_ptr_array_new_with_free_func(point_free);
  sw->doc = cs_yaml_load_file(path, error);
  if (!sw->doc) goto fail;
  for (size_t i = 0; overrides && overrides[i]; i++)
    if (!cs_yaml_set(sw->doc, overrides[i], error)) goto fail;
  sw->base = cs_scenario_from_yaml(sw->doc, path, error);
  if (!sw->base) goto fail;
  GArray *axes = sw->base->sweep;
  if (axes->len == 0) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: the scenario has no sweep: section (a map of dotted keys to lists of values)", path);
    goto fail;
  }
  if (!check_overrides(sw, overrides, error)) goto fail;
  sw->fingerprint = cs_yaml_fingerprint(sw->doc); /* the sweep included */
  cs_yaml_map_remove(cs_yaml_root(sw->doc), "sweep");
  GPtrArray *keys = g_ptr_array_new();
  uint64_t total = 1;
  for (guint a = 0; a < axes->len; a++) {
    const CsSweepAxis *ax = &g_array_index(axes, CsSweepAxis, a);
    for (guint q = 0; ax->keys[q]; q++) g_ptr_array_add(keys, g_strdup(ax->keys[q]));
    total *= ax->values->len;
    if (total > 1000000) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                  "%s: error: the sweep has more than 1,000,000 points", path);
      g_ptr_array_free(keys, TRUE);
      goto fail;
    }
  }
  g_ptr_array_add(keys, NULL);
  sw->all_keys = (char **)g_ptr_array_free(keys, FALSE);
  guint nkeys = g_strv_length(sw->all_keys);
  /* the last axis changes fastest */
  guint *digit = g_new0(guint, axes->len);
  for (uint64_t p = 0; p < total; p++) {
    CsSweepPoint *pt = g_new0(CsSweepPoint, 1);
    pt->index = (uint32_t)p;
    pt->keys = g_strdupv(sw->all_keys);
    pt->values = g_new0(char *, nkeys + 1);
    guint k = 0;
    for (guint a = 0; a < axes->len; a++) {
      const CsSweepAxis *ax = &g_array_index(axes, CsSweepAxis, a);
      char **vals = ax->values->pdata[digit[a]];
      for (guint q = 0; ax->keys[q]; q++) pt->values[k++] = g_strdup(vals[q]);
    }
    pt->name = point_name((uint32_t)p, (uint32_t)total, pt->keys, pt->values);
    g_ptr_array_add(sw->points, pt);
    for (gint a = (gint)axes->len - 1; a >= 0; a--) {
      if (++digit[a] < g_array_index(axes, CsSweepAxis, a).values->len) break;
      digit[a] = 0;
    }
  }
  g_free(digit);
  return sw;
fail:
  cs_sweep_free(sw);
  return NULL;
}

void cs_sweep_free(CsSweep *sw) {
  if (!sw) return;
  g_free(sw->path);
  cs_yaml_doc_free(sw->doc);
  cs_scenario_free(sw->base);
  g_ptr_array_free(sw->points, TRUE);
  g_strfreev(sw->all_keys);
  g_free(sw->fingerprint);
  g_free(sw);
}

uint32_t cs_sweep_size(const CsSweep *sw) { return sw->points->len; }
const CsSweepPoint *cs_sweep_point(const CsSweep *sw, uint32_t i) { return sw->points->pdata[i]; }
const char *cs_sweep_default_dir(const CsSweep *sw) { return sw->base->output.dir; }

/* ---- CSV lines ---- */

GPtrArray *cs_csv_split_line(const char *line) {
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  const char *p = line;
  for (;;) {
    GString *v = g_string_new(NULL);
    if (*p == '"') {
      p++;
      while (*p) {
        if (*p == '"' && p[1] == '"') g_string_append_c(v, '"'), p += 2;
        else if (*p == '"') {
          p++;
          break;
        } else g_string_append_c(v, *p++);
      }
    }
    while (*p && *p != ',' && *p != '\r' && *p != '\n') g_string_append_c(v, *p++);
    g_ptr_array_add(f, g_string_free(v, FALSE));
    if (*p != ',') break;
    p++;
  }
  return f;
}

/* The data row of a point's summary.csv, or NULL. */
static GPtrArray *read_summary_row(const char *pdir) {
  g_autofree char *path = g_build_filename(pdir, "summary.csv", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return NULL;
  char *row = strchr(text, '\n');
  if (!row || !row[1]) return NULL;
  GPtrArray *f = cs_csv_split_line(row + 1);
  if (f->len != g_strv_length((char **)cs_sim_summary_columns())) {
    g_ptr_array_free(f, TRUE);
    return NULL;
  }
  return f;
}

/* ---- running ---- */

/* "KEY: VALUE" lines of a small file we wrote; the value of `key`, or NULL. */
static char *read_field(const char *path, const char *key) {
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return NULL;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  size_t kl = strlen(key);
  for (guint i = 0; lines[i]; i++)
    if (!strncmp(lines[i], key, kl) && lines[i][kl] == ':') return g_strstrip(g_strdup(lines[i] + kl + 1));
  return NULL;
}

/* A YAML double-quoted scalar. */
static void quoted(GString *out, const char *v) {
  g_string_append_c(out, '"');
  for (const char *c = v; *c; c++) {
    if (*c == '"' || *c == '\\') g_string_append_c(out, '\\');
    g_string_append_c(out, *c);
  }
  g_string_append_c(out, '"');
}

/* point.yaml: which point a folder holds, and the fingerprint of the
 * scenario it ran, so that a rerun with another grid or scenario does not
 * take an old result for a new point. */
static bool write_point_file(const CsSweep *sw, const CsSweepPoint *pt, const char *pdir, const char *fingerprint,
                             GError **error) {
  GString *t = g_string_new("# commsim sweep: the point this folder holds\n");
  g_string_append_printf(t, "point: %u\nof: %u\nfingerprint: %s\nscenario: ", pt->index, sw->points->len, fingerprint);
  quoted(t, sw->path);
  g_string_append(t, "\nvalues:\n");
  for (guint q = 0; pt->keys[q]; q++) {
    g_string_append_printf(t, "  %s: ", pt->keys[q]);
    quoted(t, pt->values[q]);
    g_string_append_c(t, '\n');
  }
  g_autofree char *path = g_build_filename(pdir, "point.yaml", NULL);
  bool ok = g_mkdir_with_parents(pdir, 0755) == 0 && g_file_set_contents(path, t->str, (gssize)t->len, NULL);
  if (!ok) g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write", path);
  g_string_free(t, TRUE);
  return ok;
}

/* A point's notes on stderr, each line named by the point (notes and
 * warnings are printed under -q too, as run prints them). */
static void point_notes(const char *point, const char *notes) {
  if (!notes) return;
  g_auto(GStrv) lines = g_strsplit(notes, "\n", -1);
  for (char **l = lines; *l; l++) fprintf(stderr, "point %s: %s\n", point, *l);
}

GPtrArray *cs_sweep_run_point(CsSweep *sw, uint32_t index, const char *dir, const CsSweepOptions *opt,
                              GError **error) {
  const CsSweepPoint *pt = sw->points->pdata[index];
  g_autofree char *pdir = g_build_filename(dir, pt->name, NULL);
  GError *e = NULL;
  CsYamlDoc *copy = cs_yaml_doc_copy(sw->doc);
  g_autofree char *origin = g_strdup_printf("sweep point %s", pt->name);
  bool ok = true;
  for (guint q = 0; ok && pt->keys[q]; q++) ok = cs_yaml_set_path(copy, pt->keys[q], pt->values[q], origin, &e);
  g_autofree char *fp = cs_yaml_fingerprint(copy);
  /* complete already, and of this very point and scenario: resume */
  g_autofree char *pfile = g_build_filename(pdir, "point.yaml", NULL);
  g_autofree char *had = read_field(pfile, "fingerprint");
  GPtrArray *row = had && !strcmp(had, fp) ? read_summary_row(pdir) : NULL;
  if (row) {
    cs_yaml_doc_free(copy);
    return row;
  }
  if (opt->interrupt && *opt->interrupt) {
    cs_yaml_doc_free(copy);
    g_clear_error(&e);
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED, "point %s: not started (interrupted)",
                pt->name);
    return NULL;
  }
  /* another point's or another scenario's results: not ours to keep */
  g_autofree char *old = g_build_filename(pdir, "summary.csv", NULL);
  g_unlink(old);
  CsScenario *s = ok ? cs_scenario_from_yaml(copy, sw->path, &e) : NULL;
  if (s && write_point_file(sw, pt, pdir, fp, &e)) {
    s->output.traces |= CS_TRACE_SUMMARY; /* a sweep needs every point's row */
    CsSim *sim = cs_sim_new(s, &e);
    if (sim) {
      cs_sim_set_output_dir(sim, pdir);
      cs_sim_set_checks(sim, opt->checks);
      cs_sim_set_reproducible(sim, opt->reproducible);
      cs_sim_set_force(sim, opt->force);
      point_notes(pt->name, cs_sim_note(sim));
      point_notes(pt->name, cs_sim_scenario_note(sim));
      if (opt->interrupt) cs_sim_set_interrupt(sim, opt->interrupt);
    }
    if (sim && cs_sim_run(sim, &e) && cs_sim_write_outputs(sim, pdir, &e)) row = cs_sim_summary_fields(sim);
    if (row) point_notes(pt->name, cs_sim_late_note(sim));
    cs_sim_free(sim);
  }
  cs_scenario_free(s);
  cs_yaml_doc_free(copy);
  if (!row) g_propagate_prefixed_error(error, e, "point %s: ", pt->name); /* every failure above sets e */
  return row;
}

/* Per swept key: its kind, and whether sweep.csv gives it a column of
 * numbers (in base units, named KEY_UNIT) beside the text; a buffer axis
 * may have both a _bytes and a _pkt column. */
typedef struct {
  CsKeyKind kind;
  const char *units[2]; /* column suffixes, or NULL */
} KeyCols;

static void key_columns(const CsSweep *sw, guint k, KeyCols *kc) {
  memset(kc, 0, sizeof *kc);
  kc->kind = cs_scenario_key_kind(sw->all_keys[k]);
  if (kc->kind == CS_KEY_OTHER) return;
  for (guint i = 0; i < sw->points->len; i++) {
    const char *unit = NULL;
    g_autofree char *num = cs_scenario_value_number(kc->kind, ((CsSweepPoint *)sw->points->pdata[i])->values[k], &unit);
    if (!num) continue;
    if (!kc->units[0]) kc->units[0] = unit;
    else if (strcmp(kc->units[0], unit) && !kc->units[1]) kc->units[1] = unit;
  }
}

static bool write_info(const CsSweep *sw, const char *dir, const char *shard, uint32_t present, GError **error) {
  GString *t = g_string_new("# commsim sweep: what sweep.csv in this folder holds\n");
  g_string_append_printf(t, "fingerprint: %s\npoints: %u\nshard: %s\npresent: %u\nscenario: ", sw->fingerprint,
                         sw->points->len, shard, present);
  quoted(t, sw->path);
  g_string_append_c(t, '\n');
  g_autofree char *tmp = cs_csv_temp_name(dir, "sweep-info.yaml");
  g_autofree char *path = g_build_filename(dir, "sweep-info.yaml", NULL);
  bool ok = g_file_set_contents(tmp, t->str, (gssize)t->len, NULL) && g_rename(tmp, path) == 0;
  if (!ok) {
    g_unlink(tmp);
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write", path);
  }
  g_string_free(t, TRUE);
  return ok;
}

bool cs_sweep_write_csv(CsSweep *sw, const char *dir, GPtrArray *const *rows, const CsSweepOptions *opt,
                        GError **error) {
  /* sweep.csv: the swept keys (each with its numbers in base units beside
   * it where it has a unit), the summary's columns, the point's index */
  guint nkeys = g_strv_length(sw->all_keys);
  KeyCols *kc = g_new0(KeyCols, nkeys + 1);
  GPtrArray *cols = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < nkeys; i++) {
    g_ptr_array_add(cols, g_strdup(sw->all_keys[i]));
    key_columns(sw, i, &kc[i]);
    for (int u = 0; u < 2 && kc[i].units[u]; u++) g_ptr_array_add(cols, g_strdup_printf("%s_%s", sw->all_keys[i], kc[i].units[u]));
  }
  /* a summary column named as a swept key (fidelity) is that key's column already */
  const char *const *sum = cs_sim_summary_columns();
  guint nsum = g_strv_length((char **)sum);
  gboolean *dup = g_new0(gboolean, nsum + 1);
  for (guint c = 0; c < nsum; c++) {
    dup[c] = g_strv_contains((const char *const *)sw->all_keys, sum[c]);
    if (!dup[c]) g_ptr_array_add(cols, g_strdup(sum[c]));
  }
  g_ptr_array_add(cols, g_strdup("point"));
  g_ptr_array_add(cols, NULL);
  CsCsv *csv = cs_csv_open(dir, "sweep.csv", (const char *const *)cols->pdata, error);
  g_ptr_array_free(cols, TRUE);
  if (!csv) {
    g_free(kc);
    g_free(dup);
    return false;
  }
  uint32_t present = 0;
  for (uint32_t i = 0; i < sw->points->len; i++) {
    if (!rows[i]) continue;
    present++;
    const CsSweepPoint *pt = sw->points->pdata[i];
    for (guint q = 0; q < nkeys; q++) {
      cs_csv_str(csv, pt->values[q]);
      const char *unit = NULL;
      g_autofree char *num = cs_scenario_value_number(kc[q].kind, pt->values[q], &unit);
      for (int u = 0; u < 2 && kc[q].units[u]; u++) cs_csv_str(csv, num && !strcmp(unit, kc[q].units[u]) ? num : "");
    }
    for (guint f = 0; f < rows[i]->len; f++)
      if (!dup[f]) cs_csv_str(csv, rows[i]->pdata[f]);
    cs_csv_uint(csv, i);
    cs_csv_end_row(csv);
  }
  g_free(kc);
  g_free(dup);
  if (!cs_csv_close(csv, error)) return false;
  g_autofree char *shard = opt && opt->shard_n ? g_strdup_printf("%u/%u", opt->shard_k, opt->shard_n) : g_strdup("all");
  return write_info(sw, dir, shard, present, error);
}

bool cs_sweep_mine(const CsSweepOptions *opt, uint32_t index) {
  return !opt->shard_n || index % opt->shard_n == opt->shard_k;
}

typedef struct {
  CsSweep *sw;
  const CsSweepOptions *opt;
  const char *dir;
  GPtrArray **rows; /* per point */
  char **errors;    /* per point */
  GAsyncQueue *done;
} RunCtx;

static void run_point(gpointer data, gpointer user) {
  RunCtx *ctx = user;
  CsSweepPoint *pt = data;
  GError *e = NULL;
  GPtrArray *row = cs_sweep_run_point(ctx->sw, pt->index, ctx->dir, ctx->opt, &e);
  ctx->rows[pt->index] = row;
  if (!row && !g_error_matches(e, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED))
    ctx->errors[pt->index] = g_strdup(e->message);
  g_clear_error(&e);
  g_async_queue_push(ctx->done, GUINT_TO_POINTER(pt->index + 1));
}

void cs_sweep_format_eta(double s, char *buf, size_t n) {
  if (s < 60) snprintf(buf, n, "%.0fs", s);
  else if (s < 3600) snprintf(buf, n, "%.0fm%02.0fs", s / 60 - 0.5, (double)((long)s % 60));
  else snprintf(buf, n, "%.1fh", s / 3600);
}

bool cs_sweep_run(CsSweep *sw, const char *dir, const CsSweepOptions *opt, uint32_t *failed, GError **error) {
  uint32_t n = sw->points->len;
  GPtrArray **rows = g_new0(GPtrArray *, n);
  char **errors = g_new0(char *, n);
  RunCtx ctx = {sw, opt, dir, rows, errors, g_async_queue_new()};
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot create the output folder: %s", dir,
                g_strerror(errno));
    g_free(rows);
    g_free(errors);
    g_async_queue_unref(ctx.done);
    return false;
  }
  guint jobs = opt->jobs ? opt->jobs : g_get_num_processors();
  GThreadPool *pool = g_thread_pool_new(run_point, &ctx, (gint)jobs, TRUE, NULL);
  uint32_t queued = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!cs_sweep_mine(opt, i)) continue;
    g_thread_pool_push(pool, sw->points->pdata[i], NULL);
    queued++;
  }
  gint64 t0 = g_get_monotonic_time();
  for (uint32_t got = 0; got < queued;) {
    gpointer msg = g_async_queue_timeout_pop(ctx.done, 500000);
    if (msg) got++;
    if (opt->progress) {
      double el = (double)(g_get_monotonic_time() - t0) * 1e-6;
      char eta[32] = "?";
      if (got) cs_sweep_format_eta(el / got * (queued - got), eta, sizeof eta);
      fprintf(stderr, "\r[commsim sweep] %u/%u points done, ETA %s   ", got, queued, got == queued ? "0s" : eta);
      fflush(stderr);
    }
  }
  if (opt->progress) fputc('\n', stderr);
  g_thread_pool_free(pool, FALSE, TRUE);
  g_async_queue_unref(ctx.done);

  bool ok = cs_sweep_finish(sw, dir, opt, rows, errors, queued, failed, error);
  for (uint32_t i = 0; i < n; i++) {
    if (rows[i]) g_ptr_array_free(rows[i], TRUE);
    g_free(errors[i]);
  }
  g_free(rows);
  g_free(errors);
  return ok;
}

bool cs_sweep_finish(CsSweep *sw, const char *dir, const CsSweepOptions *opt, GPtrArray *const *rows,
                     char *const *errors, uint32_t queued, uint32_t *failed, GError **error) {
  uint32_t n = sw->points->len, bad = 0, complete = 0;
  for (uint32_t i = 0; i < n; i++) {
    /* again at the end: a killed process may have outlived its job */
    const CsSweepPoint *pt = sw->points->pdata[i];
    g_autofree char *pdir = g_build_filename(dir, pt->name, NULL);
    cs_csv_remove_stale(pdir);
    if (errors[i]) {
      fprintf(stderr, "%s\n", errors[i]);
      bad++;
    }
    complete += rows[i] != NULL;
  }
  if (failed) *failed = bad;
  if (opt->interrupt && *opt->interrupt) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED,
                "%s: interrupted with %u of %u points complete; no sweep.csv was written: run the same command "
                "again to resume",
                dir, complete, queued);
    return false;
  }
  return cs_sweep_write_csv(sw, dir, rows, opt, error);
}

/* ---- merge ---- */

typedef struct {
  uint64_t point;
  char *line;
  char *cmp;       /* the line with wall_s blanked: rows of one point must agree on it */
  const char *dir; /* where it came from */
} Row;

static int cmp_row(const void *a, const void *b) {
  const Row *x = a, *y = b;
  return x->point < y->point ? -1 : x->point > y->point;
}

static char *blank_field(const char *line, int field) {
  GPtrArray *f = cs_csv_split_line(line);
  if (field >= 0 && (guint)field < f->len) {
    g_free(f->pdata[field]);
    f->pdata[field] = g_strdup("");
  }
  g_ptr_array_add(f, NULL);
  char *joined = g_strjoinv("\x1f", (char **)f->pdata);
  g_ptr_array_free(f, TRUE);
  return joined;
}

bool cs_sweep_merge(const char *const *dirs, const char *out, uint32_t *missing, char **missing_text, GError **error) {
  g_autofree char *header = NULL, *fingerprint = NULL;
  const char *first_dir = NULL;
  guint64 total = 0;
  int wall_col = -1;
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
  bool ok = true;
  *missing = 0;
  if (missing_text) *missing_text = NULL;
  for (size_t d = 0; ok && dirs[d]; d++) {
    g_autofree char *info = g_build_filename(dirs[d], "sweep-info.yaml", NULL);
    g_autofree char *path = g_build_filename(dirs[d], "sweep.csv", NULL);
    g_autofree char *fp = read_field(info, "fingerprint"), *pts = read_field(info, "points");
    g_autofree char *text = NULL;
    guint64 n = 0;
    if (!fp || !pts || !g_ascii_string_to_unsigned(pts, 10, 1, G_MAXUINT32, &n, NULL) ||
        !g_file_get_contents(path, &text, NULL, NULL)) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                  "%s: error: not a sweep's folder (no sweep.csv and sweep-info.yaml written by commsim sweep)", dirs[d]);
      ok = false;
      break;
    }
    if (!fingerprint) {
      fingerprint = g_strdup(fp), total = n, first_dir = dirs[d];
    } else if (strcmp(fingerprint, fp) || n != total) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                  "%s: error: a shard of another sweep than %s's (their scenarios, overrides or grids differ): "
                  "merge the shards of one sweep",
                  dirs[d], first_dir);
      ok = false;
      break;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i]; i++) g_strchomp(lines[i]);
    if (!header) {
      header = g_strdup(lines[0]);
      g_autoptr(GPtrArray) h = cs_csv_split_line(header);
      for (guint c = 0; c < h->len; c++)
        if (!strcmp(h->pdata[c], "wall_s")) wall_col = (int)c;
    } else if (strcmp(header, lines[0]) != 0) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                  "%s: error: its columns differ from %s's (written by another version of commsim?)", path, first_dir);
      ok = false;
      break;
    }
    for (guint i = 1; lines[i]; i++) {
      if (!*lines[i]) continue;
      const char *last = strrchr(lines[i], ',');
      guint64 point;
      if (!last || !g_ascii_string_to_unsigned(last + 1, 10, 0, total - 1, &point, NULL)) {
        g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                    "%s:%u: error: a row without a point number below %" G_GUINT64_FORMAT, path, i + 1, total);
        ok = false;
        break;
      }
      Row r = {point, g_strdup(lines[i]), blank_field(lines[i], wall_col), dirs[d]};
      g_array_append_val(rows, r);
    }
  }
  if (ok) {
    g_array_sort(rows, cmp_row);
    for (guint i = 1; ok && i < rows->len; i++) {
      const Row *a = &g_array_index(rows, Row, i - 1), *b = &g_array_index(rows, Row, i);
      if (a->point == b->point && strcmp(a->cmp, b->cmp)) {
        g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                    "error: point %" G_GUINT64_FORMAT " differs between %s and %s: the shards disagree on one run "
                    "(rerun one of them)",
                    a->point, a->dir, b->dir);
        ok = false;
      }
    }
  }
  uint32_t present = 0;
  if (ok) {
    g_autofree char *tmp = cs_csv_temp_name(out, "sweep.csv");
    g_autofree char *final = g_build_filename(out, "sweep.csv", NULL);
    FILE *f = g_mkdir_with_parents(out, 0755) == 0 ? fopen(tmp, "w") : NULL;
    if (!f) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write", final);
      ok = false;
    } else {
      fprintf(f, "%s\r\n", header);
      GString *gaps = g_string_new(NULL);
      guint64 next = 0;
      for (guint i = 0; i <= rows->len; i++) {
        guint64 p = i < rows->len ? g_array_index(rows, Row, i).point : total;
        if (i && i < rows->len && p == g_array_index(rows, Row, i - 1).point) continue; /* a point in two shards, agreeing */
        for (; next < p; next++) {
          if (++*missing <= 20) g_string_append_printf(gaps, "%s%" G_GUINT64_FORMAT, gaps->len ? ", " : "", next);
        }
        if (i == rows->len) break;
        fprintf(f, "%s\r\n", g_array_index(rows, Row, i).line);
        present++;
        next = p + 1;
      }
      if (*missing > 20) g_string_append(gaps, ", ...");
      if (missing_text && *missing)
        *missing_text = g_strdup_printf("%u of %" G_GUINT64_FORMAT " points are in no shard: %s", *missing, total, gaps->str);
      g_string_free(gaps, TRUE);
      ok = fflush(f) == 0 && !ferror(f);
      ok = fclose(f) == 0 && ok && g_rename(tmp, final) == 0;
      if (!ok) {
        g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write", final);
        g_unlink(tmp);
      }
    }
  }
  if (ok) { /* the merged folder says what it holds, so that it can be merged again */
    GString *t = g_string_new("# commsim sweep: what sweep.csv in this folder holds\n");
    g_string_append_printf(t, "fingerprint: %s\npoints: %" G_GUINT64_FORMAT "\nshard: merged\npresent: %u\n", fingerprint,
                           total, present);
    g_autofree char *path = g_build_filename(out, "sweep-info.yaml", NULL);
    ok = g_file_set_contents(path, t->str, (gssize)t->len, NULL);
    if (!ok) g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write", path);
    g_string_free(t, TRUE);
  }
  for (guint i = 0; i < rows->len; i++) {
    g_free(g_array_index(rows, Row, i).line);
    g_free(g_array_index(rows, Row, i).cmp);
  }
  g_array_free(rows, TRUE);
  return ok;
}
