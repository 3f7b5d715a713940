/* plot.c - PNG plots of a run or sweep folder, drawn by gnuplot.
 *
 * The CSV files are read here and reduced to small data files for
 * gnuplot, with a script per plot; gnuplot (Debian's gnuplot-nox) draws
 * them with its cairo PNG terminal.  Axis labels carry units.
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commsim/plot.h"
#include "commsim/sweep.h"
#include "commsim/units.h"
#include "commsim/yamltree.h"

const char *const cs_plot_run_stems[] = {"iteration", "utilization", "queues", "messages_cdf", NULL};
const char *const cs_plot_formats[] = {"png", "pdf", NULL};

typedef struct {
  GPtrArray *header; /* char * */
  GPtrArray *rows;   /* GPtrArray of char * */
} Table;

static void table_free(Table *t) {
  if (t->header) g_ptr_array_free(t->header, TRUE);
  if (t->rows) g_ptr_array_free(t->rows, TRUE);
}

static bool read_table(const char *dir, const char *name, Table *t) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_autofree char *text = NULL;
  memset(t, 0, sizeof *t);
  if (!g_file_get_contents(path, &text, NULL, NULL)) return false;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  if (!lines[0]) return false;
  t->header = cs_csv_split_line(lines[0]);
  t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  for (guint i = 1; lines[i]; i++) {
    g_strchomp(lines[i]);
    if (!*lines[i]) continue;
    GPtrArray *f = cs_csv_split_line(lines[i]);
    if (f->len == t->header->len) g_ptr_array_add(t->rows, f);
    else g_ptr_array_unref(f);
  }
  return true;
}

static int col(const Table *t, const char *name) {
  for (guint i = 0; i < t->header->len; i++)
    if (!strcmp(t->header->pdata[i], name)) return (int)i;
  return -1;
}

static const char *cell(const Table *t, guint row, int c) {
  return ((GPtrArray *)t->rows->pdata[row])->pdata[c];
}

static double num(const Table *t, guint row, int c) { return g_ascii_strtod(cell(t, row, c), NULL); }

typedef struct {
  const char *dir;
  char *work; /* temporary folder for data and scripts */
  GPtrArray *made;
  GError **error;
} Plotter;

static const char *style =
    "set terminal pngcairo size 1000,600 font 'sans,11'\n"
    "set grid ytics lc rgb '#dddddd'\n"
    "set key outside right top\n"
    "set border 3\nset xtics nomirror\nset ytics nomirror\n";

/* Write `data` and `script` (which names the output PNG) and run gnuplot. */
static bool draw(Plotter *p, const char *png, const char *data, const char *script) {
  g_autofree char *dat = g_build_filename(p->work, "data.dat", NULL);
  g_autofree char *gp = g_build_filename(p->work, "plot.gp", NULL);
  g_autofree char *out = g_build_filename(p->dir, png, NULL);
  g_autofree char *full = g_strdup_printf("%sset output '%s'\n%s", style, out, script);
  char *body = NULL;
  /* the script reads the data file by name */
  GString *s = g_string_new(full);
  g_string_replace(s, "DATA", dat, 0);
  body = g_string_free(s, FALSE);
  bool ok = g_file_set_contents(dat, data, -1, p->error) && g_file_set_contents(gp, body, -1, p->error);
  g_free(body);
  if (!ok) return false;
  const char *argv[] = {"gnuplot", gp, NULL};
  g_autofree char *err = NULL;
  int status = 0;
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                    &status, p->error))
    return false;
  if (!g_spawn_check_wait_status(status, NULL)) {
    g_set_error(p->error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "gnuplot failed on %s: %s", png, err ? err : "");
    return false;
  }
  g_ptr_array_add(p->made, g_strdup(png));
  return true;
}

/* A label for gnuplot: no quotes, no underscores turned to subscripts. */
static char *label(const char *s) {
  char *l = g_strdup(s);
  for (char *c = l; *c; c++)
    if (*c == '"' || *c == '\'') *c = ' ';
  return l;
}

/* ---- a run folder ---- */

static bool plot_iterations(Plotter *p) {
  Table t;
  if (!read_table(p->dir, "iterations.csv", &t)) return true;
  int it = col(&t, "iteration"), st = col(&t, "start_s"), ce = col(&t, "compute_end_s"), en = col(&t, "end_s"),
      cd = col(&t, "codec_s");
  guint max_it = 0;
  for (guint r = 0; r < t.rows->len; r++) max_it = MAX(max_it, (guint)num(&t, r, it));
  GString *d = g_string_new("# iteration compute_ms codec_ms exposed_ms\n");
  for (guint i = 1; i <= max_it; i++) {
    double comp = 0, codec = 0, total = 0;
    guint n = 0;
    for (guint r = 0; r < t.rows->len; r++) {
      if ((guint)num(&t, r, it) != i) continue;
      comp += num(&t, r, ce) - num(&t, r, st);
      codec += num(&t, r, cd);
      total += num(&t, r, en) - num(&t, r, st);
      n++;
    }
    if (n) g_string_append_printf(d, "%u %.6f %.6f %.6f\n", i, comp / n * 1e3, codec / n * 1e3,
                                  fmax(0, (total - comp - codec) / n * 1e3));
  }
  table_free(&t);
  bool ok = draw(p, "iteration.png", d->str,
                 "set title 'Where an iteration goes (mean over workers)'\n"
                 "set xlabel 'iteration'\nset ylabel 'time (ms)'\n"
                 "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
                 "set boxwidth 0.7\n"
                 "plot 'DATA' using 2:xtic(1) title 'compute' lc rgb '#4477aa', '' using 3 title 'codec' lc rgb '#ccbb44', "
                 "'' using 4 title 'exposed communication' lc rgb '#ee6677'\n");
  g_string_free(d, TRUE);
  return ok;
}

static bool plot_links(Plotter *p) {
  Table t;
  if (!read_table(p->dir, "links.csv", &t)) return true;
  int src = col(&t, "src"), dst = col(&t, "dst"), t0 = col(&t, "t_start_s"), t1 = col(&t, "t_end_s"),
      by = col(&t, "bytes"), ut = col(&t, "utilization"), qm = col(&t, "queue_mean_bytes");
  /* the six link directions that carried the most bytes */
  GHashTable *bytes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  for (guint r = 0; r < t.rows->len; r++) {
    char *k = g_strdup_printf("%s->%s", cell(&t, r, src), cell(&t, r, dst));
    double *v = g_hash_table_lookup(bytes, k);
    if (!v) {
      v = g_new0(double, 1);
      g_hash_table_insert(bytes, g_strdup(k), v);
    }
    *v += num(&t, r, by);
    g_free(k);
  }
  GList *keys = g_hash_table_get_keys(bytes);
  GPtrArray *top = g_ptr_array_new();
  for (int n = 0; n < 6; n++) {
    const char *best = NULL;
    double bv = -1;
    for (GList *l = keys; l; l = l->next) {
      double v = *(double *)g_hash_table_lookup(bytes, l->data);
      bool taken = false;
      for (guint i = 0; i < top->len; i++) taken |= !strcmp(top->pdata[i], l->data);
      if (!taken && (v > bv || (v == bv && best && strcmp(l->data, best) < 0))) bv = v, best = l->data;
    }
    if (!best) break;
    g_ptr_array_add(top, (gpointer)best);
  }
  bool ok = true;
  /* averaged into at most 200 bins over the run, idle time counting as 0,
   * so that a long run stays readable */
  double tmax = 0;
  for (guint r = 0; r < t.rows->len; r++) tmax = fmax(tmax, num(&t, r, t1));
  guint bins = 200;
  double bw = tmax > 0 ? tmax / bins : 1;
  double *acc = g_new(double, bins);
  const char *what[2] = {"utilization.png", "queues.png"};
  for (int kind = 0; ok && kind < 2 && top->len; kind++) {
    GString *d = g_string_new(NULL), *plot = g_string_new("plot ");
    for (guint i = 0; i < top->len; i++) {
      memset(acc, 0, sizeof(double) * bins);
      for (guint r = 0; r < t.rows->len; r++) {
        g_autofree char *k = g_strdup_printf("%s->%s", cell(&t, r, src), cell(&t, r, dst));
        if (strcmp(k, top->pdata[i])) continue;
        double a = num(&t, r, t0), b = num(&t, r, t1);
        guint bin = MIN((guint)((a + b) / 2 / bw), bins - 1);
        acc[bin] += (b - a) * (kind == 0 ? num(&t, r, ut) : num(&t, r, qm));
      }
      g_string_append_printf(d, "# %s\n", (char *)top->pdata[i]);
      for (guint b = 0; b < bins; b++)
        g_string_append_printf(d, "%.6f %.6f\n", (b + 0.5) * bw * 1e3, kind == 0 ? acc[b] / bw * 100 : acc[b] / bw / 1e3);
      g_string_append(d, "\n\n");
      g_autofree char *lab = label(top->pdata[i]);
      g_string_append_printf(plot, "%s'DATA' index %u with lines lw 2 title '%s'", i ? ", " : "", i, lab);
    }
    g_autofree char *script = g_strdup_printf(
        "set title '%s of the busiest links (%.3g ms bins)'\nset xlabel 'time (ms)'\nset ylabel '%s'\n%s%s\n",
        kind == 0 ? "Utilization" : "Mean queue", bw * 1e3, kind == 0 ? "utilization (%)" : "bytes waiting (KB)",
        kind == 0 ? "set yrange [0:105]\n" : "set yrange [0:*]\n", plot->str);
    ok = draw(p, what[kind], d->str, script);
    g_string_free(d, TRUE);
    g_string_free(plot, TRUE);
  }
  g_free(acc);
  g_ptr_array_free(top, TRUE);
  g_list_free(keys);
  g_hash_table_destroy(bytes);
  table_free(&t);
  return ok;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static bool plot_messages(Plotter *p) {
  Table t;
  if (!read_table(p->dir, "messages.csv", &t)) return true;
  int st = col(&t, "start_s"), en = col(&t, "end_s");
  double *fct = g_new(double, t.rows->len + 1);
  guint n = 0;
  for (guint r = 0; r < t.rows->len; r++)
    if (*cell(&t, r, en)) fct[n++] = (num(&t, r, en) - num(&t, r, st)) * 1e3;
  qsort(fct, n, sizeof *fct, cmp_double);
  GString *d = g_string_new("# completion_ms fraction\n");
  guint step = n > 2000 ? n / 2000 : 1; /* at most about 2000 points */
  for (guint i = 0; i < n; i += step) g_string_append_printf(d, "%.6f %.6f\n", fct[i], (double)(i + 1) / n);
  if (n) g_string_append_printf(d, "%.6f 1\n", fct[n - 1]);
  bool ok = n == 0 || draw(p, "messages_cdf.png", d->str,
                           "set title 'Message completion times'\nset xlabel 'completion time (ms)'\n"
                           "set ylabel 'fraction of messages'\nset yrange [0:1]\nset key off\n"
                           "plot 'DATA' using 1:2 with steps lw 2 lc rgb '#4477aa'\n");
  g_string_free(d, TRUE);
  g_free(fct);
  table_free(&t);
  return ok;
}

/* ---- a sweep folder ---- */

static bool plot_sweep(Plotter *p, Table *t) {
  /* the swept keys are the columns before "scenario" */
  int first = col(t, "scenario");
  int im = col(t, "iter_mean_s"), cs = col(t, "compute_s"), cd = col(t, "codec_s"), ex = col(t, "exposed_comm_s");
  GString *d = g_string_new("# point compute_ms codec_ms exposed_ms\n");
  for (guint r = 0; r < t->rows->len; r++) {
    GString *name = g_string_new(NULL);
    for (int c = 0; c < first; c++) g_string_append_printf(name, "%s%s", c ? " " : "", cell(t, r, c));
    g_autofree char *lab = label(name->str);
    g_string_free(name, TRUE);
    g_string_append_printf(d, "\"%s\" %.6f %.6f %.6f\n", lab, num(t, r, cs) * 1e3, num(t, r, cd) * 1e3,
                           fmax(0, num(t, r, ex) * 1e3));
  }
  guint w = MAX(1000, 40 * t->rows->len);
  g_autofree char *script = g_strdup_printf(
      "set terminal pngcairo size %u,650 font 'sans,10'\n"
      "set title 'Where an iteration goes, per sweep point (mean over workers)'\n"
      "set ylabel 'time (ms)'\nset xtics rotate by -45\nset bmargin 12\n"
      "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\nset boxwidth 0.7\n"
      "plot 'DATA' using 2:xtic(1) title 'compute' lc rgb '#4477aa', '' using 3 title 'codec' lc rgb '#ccbb44', "
      "'' using 4 title 'exposed communication' lc rgb '#ee6677'\n",
      w);
  bool ok = draw(p, "iteration.png", d->str, script);
  g_string_free(d, TRUE);
  if (!ok) return false;

  /* speedup over no compression against bandwidth, one line per method,
   * the other swept keys at their first value */
  int bw = -1, me = -1;
  for (int c = 0; c < first; c++) {
    if (g_str_has_suffix(t->header->pdata[c], "bandwidth")) bw = c;
    if (!strcmp(t->header->pdata[c], "workload.compression.method")) me = c;
  }
  if (bw < 0 || me < 0) return true;
  GPtrArray *methods = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *bws = g_ptr_array_new_with_free_func(g_free);
  for (guint r = 0; r < t->rows->len; r++) {
    if (!g_ptr_array_find_with_equal_func(methods, cell(t, r, me), g_str_equal, NULL))
      g_ptr_array_add(methods, g_strdup(cell(t, r, me)));
    if (!g_ptr_array_find_with_equal_func(bws, cell(t, r, bw), g_str_equal, NULL))
      g_ptr_array_add(bws, g_strdup(cell(t, r, bw)));
  }
  /* rows whose other keys equal the first row's */
  GString *data = g_string_new(NULL), *plot = g_string_new("plot ");
  guint series = 0;
  for (guint m = 0; m < methods->len; m++) {
    g_string_append_printf(data, "# %s\n", (char *)methods->pdata[m]);
    for (guint b = 0; b < bws->len; b++) {
      double base = NAN, mine = NAN;
      for (guint r = 0; r < t->rows->len; r++) {
        bool same = !strcmp(cell(t, r, bw), bws->pdata[b]);
        for (int c = 0; c < first && same; c++)
          if (c != bw && c != me && strcmp(t->header->pdata[c], "workload.collective")) same = !strcmp(cell(t, r, c), cell(t, 0, c));
        if (!same) continue;
        if (!strcmp(cell(t, r, me), "none")) base = num(t, r, im);
        if (!strcmp(cell(t, r, me), methods->pdata[m])) mine = num(t, r, im);
      }
      int64_t bps = 0;
      if (!cs_parse_bandwidth(bws->pdata[b], &bps, NULL)) continue;
      if (!isnan(base) && !isnan(mine) && mine > 0)
        g_string_append_printf(data, "%.6f %.6f\n", (double)bps / 1e9, base / mine);
    }
    g_string_append(data, "\n\n");
    g_autofree char *lab = label(methods->pdata[m]);
    g_string_append_printf(plot, "%s'DATA' index %u with linespoints lw 2 pt 7 title '%s'", series ? ", " : "", m, lab);
    series++;
  }
  g_string_append(plot, ", 1 with lines dt 2 lc rgb '#888888' notitle\n");
  g_autofree char *script2 = g_strdup_printf("set title 'Speedup of an iteration over no compression'\n"
                                             "set xlabel 'link bandwidth (Gbps)'\nset ylabel 'speedup (x)'\nset logscale x\n%s",
                                             plot->str);
  ok = draw(p, "speedup.png", data->str, script2);
  g_string_free(data, TRUE);
  g_string_free(plot, TRUE);
  g_ptr_array_free(methods, TRUE);
  g_ptr_array_free(bws, TRUE);
  return ok;
}

GPtrArray *cs_plot_dir(const char *dir, GError **error) {
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");
  if (!gnuplot) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO,
                "gnuplot not found: install the Debian package gnuplot-nox (scripts/bootstrap does)");
    return NULL;
  }
  Plotter p = {dir, NULL, g_ptr_array_new_with_free_func(g_free), error};
  p.work = g_dir_make_tmp("commsim-plot-XXXXXX", error);
  if (!p.work) {
    g_ptr_array_free(p.made, TRUE);
    return NULL;
  }
  Table sweep;
  bool ok;
  if (read_table(dir, "sweep.csv", &sweep)) {
    ok = plot_sweep(&p, &sweep);
    table_free(&sweep);
  } else {
    g_autofree char *summary = g_build_filename(dir, "summary.csv", NULL);
    g_autofree char *messages = g_build_filename(dir, "messages.csv", NULL);
    if (!g_file_test(summary, G_FILE_TEST_EXISTS) && !g_file_test(messages, G_FILE_TEST_EXISTS)) {
      g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO,
                  "%s: error: neither sweep.csv nor summary.csv here: not a run or sweep folder", dir);
      ok = false;
    } else {
      ok = plot_iterations(&p) && plot_links(&p) && plot_messages(&p);
    }
  }
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", p.work);
  if (system(cmd) != 0) { /* a temporary folder left behind is harmless */
  }
  g_free(p.work);
  if (!ok) {
    g_ptr_array_free(p.made, TRUE);
    return NULL;
  }
  return p.made;
}
