/* plot.c - plots of a run or sweep folder, drawn by gnuplot, in PNG and
 * PDF.
 *
 * The CSV files are read here (cs_csv_each_row: whole, their fields in
 * one string chunk; messages.csv, a row per message, without keeping
 * it) and reduced to small data files for
 * gnuplot, with a script per plot; gnuplot (Debian's gnuplot-nox) draws
 * each with its cairo terminals.  Axis labels carry units.
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commsim/csv.h"
#include "commsim/plot.h"
#include "commsim/units.h"
#include "commsim/yamltree.h"

const char *const cs_plot_run_stems[] = {"iteration", "utilization", "queues", "messages_cdf", "convergence", NULL};
const char *const cs_plot_formats[] = {"png", "pdf", NULL};

/* ---- CSV files, read whole ---- */

typedef struct {
  GStringChunk *text; /* the fields */
  GPtrArray *cells;   /* char *, row-major, header first */
  guint ncols, nrows;
} Table;

static void table_free(Table *t) {
  if (t->text) g_string_chunk_free(t->text);
  if (t->cells) g_ptr_array_free(t->cells, TRUE);
  memset(t, 0, sizeof *t);
}

static void table_row(void *ctx, char **fields, unsigned n, bool header) {
  Table *t = ctx;
  if (header) t->ncols = n;
  for (unsigned i = 0; i < n; i++) g_ptr_array_add(t->cells, g_string_chunk_insert(t->text, fields[i]));
  t->nrows++;
}

/* A whole file, by cs_csv_each_row's rules (RFC 4180; rows with another
 * number of fields than the header left out); false without a header. */
static bool table_read(const char *dir, const char *name, Table *t) {
  memset(t, 0, sizeof *t);
  t->text = g_string_chunk_new(1 << 20);
  t->cells = g_ptr_array_new();
  if (!cs_csv_each_row(dir, name, table_row, t)) {
    table_free(t);
    return false;
  }
  t->nrows--; /* the header */
  return true;
}

static int col(const Table *t, const char *name) {
  for (guint i = 0; i < t->ncols; i++)
    if (!strcmp(t->cells->pdata[i], name)) return (int)i;
  return -1;
}

static const char *cell(const Table *t, guint row, int c) { return t->cells->pdata[(row + 1) * t->ncols + (guint)c]; }

static double num(const Table *t, guint row, int c) {
  if (c < 0) return NAN;
  const char *s = cell(t, row, c);
  char *e;
  double v = g_ascii_strtod(s, &e);
  return *s && e != s ? v : NAN;
}

/* ---- gnuplot ---- */

typedef struct {
  const char *dir;
  char *work; /* temporary folder for data and scripts */
  GPtrArray *made;
  GError **error;
  GPtrArray *notes; /* what the plots leave out, said (NULL: not asked) */
} Plotter;

static const char *style = "set termoption noenhanced\nset grid ytics lc rgb '#dddddd'\n"
                           "set key outside right top\n"
                           "set border 3\nset xtics nomirror\nset ytics nomirror\n";

/* Write `data` and draw `body` (a script whose data file is DATA) into
 * DIR/STEM.png and DIR/STEM.pdf, w x h pixels (a hundredth of it in
 * inches for the PDF). */
static bool draw(Plotter *p, const char *stem, const char *data, const char *body, int w, int h) {
  g_autofree char *dat = g_build_filename(p->work, "data.dat", NULL);
  g_autofree char *gp = g_build_filename(p->work, "plot.gp", NULL);
  GString *b = g_string_new(body);
  g_string_replace(b, "DATA", dat, 0);
  GString *s = g_string_new(NULL);
  for (const char *const *fmt = cs_plot_formats; *fmt; fmt++) {
    g_autofree char *out = g_strdup_printf("%s/%s.%s", p->dir, stem, *fmt);
    if (!strcmp(*fmt, "png")) g_string_append_printf(s, "set terminal pngcairo size %d,%d font 'sans,11'\n", w, h);
    else g_string_append_printf(s, "set terminal pdfcairo size %.2fin,%.2fin font 'sans,8'\n", w / 100.0, h / 100.0);
    g_string_append_printf(s, "set output '%s'\n%s%s\nunset output\nreset\n", out, style, b->str);
  }
  g_string_free(b, TRUE);
  bool ok = g_file_set_contents(dat, data, -1, p->error) && g_file_set_contents(gp, s->str, -1, p->error);
  g_string_free(s, TRUE);
  if (!ok) return false;
  const char *argv[] = {"gnuplot", gp, NULL};
  g_autofree char *err = NULL;
  int status = 0;
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                    &status, p->error))
    return false;
  if (!g_spawn_check_wait_status(status, NULL)) {
    g_set_error(p->error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "gnuplot failed on %s: %s", stem, err ? err : "");
    return false;
  }
  for (const char *const *fmt = cs_plot_formats; *fmt; fmt++) g_ptr_array_add(p->made, g_strdup_printf("%s.%s", stem, *fmt));
  return true;
}

/* A label for gnuplot (text is not "enhanced": underscores stay): no quotes. */
static char *label(const char *s) {
  char *l = g_strdup(s);
  for (char *c = l; *c; c++)
    if (*c == '"' || *c == '\'') *c = ' ';
  return l;
}

/* ---- a run folder ---- */

/* Compute, codec work outside compute, and exposed communication per
 * iteration, mean over workers: the three add up to the iteration. */
static bool plot_iterations(Plotter *p, bool *drew) {
  Table t;
  if (!table_read(p->dir, "iterations.csv", &t)) return true;
  int it = col(&t, "iteration"), st = col(&t, "start_s"), ce = col(&t, "compute_end_s"), en = col(&t, "end_s"),
      cd = col(&t, "codec_s"), co = col(&t, "codec_outside_compute_s");
  if (it < 0 || st < 0 || ce < 0 || en < 0) {
    table_free(&t);
    return true;
  }
  guint max_it = 0;
  for (guint r = 0; r < t.nrows; r++) max_it = MAX(max_it, (guint)num(&t, r, it));
  double *sum = g_new0(double, 3 * (size_t)max_it + 3);
  guint *n = g_new0(guint, max_it + 1);
  for (guint r = 0; r < t.nrows; r++) {
    guint i = (guint)num(&t, r, it);
    if (i < 1) continue;
    double comp = num(&t, r, ce) - num(&t, r, st), total = num(&t, r, en) - num(&t, r, st);
    /* older files have no codec_outside_compute_s: count all codec work as outside */
    double outside = co >= 0 ? num(&t, r, co) : fmin(cd >= 0 ? num(&t, r, cd) : 0, total - comp);
    sum[3 * i] += comp, sum[3 * i + 1] += outside, sum[3 * i + 2] += fmax(0, total - comp - outside);
    n[i]++;
  }
  GString *d = g_string_new("# iteration compute_ms codec_outside_ms exposed_ms\n");
  for (guint i = 1; i <= max_it; i++)
    if (n[i])
      g_string_append_printf(d, "%u %.6f %.6f %.6f\n", i, sum[3 * i] / n[i] * 1e3, sum[3 * i + 1] / n[i] * 1e3,
                             sum[3 * i + 2] / n[i] * 1e3);
  g_free(sum);
  g_free(n);
  table_free(&t);
  guint every = max_it > 40 ? (max_it + 39) / 40 : 1;
  g_autofree char *script = g_strdup_printf(
      "set title 'Where an iteration goes (mean over workers)'\n"
      "set xlabel 'iteration'\nset ylabel 'time (ms)'\n"
      "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
      "set boxwidth 0.7\n"
      "plot 'DATA' using 2:xtic(int($1) %% %u == 0 || $1 == 1 ? stringcolumn(1) : '') title 'compute' lc rgb '#4477aa', "
      "'' using 3 title 'codec (outside compute)' lc rgb '#ccbb44', "
      "'' using 4 title 'exposed communication' lc rgb '#ee6677'\n",
      every);
  bool ok = draw(p, "iteration", d->str, script, 1000, 600);
  g_string_free(d, TRUE);
  *drew |= ok;
  return ok;
}

void cs_plot_spread(double *acc, unsigned bins, double bw, double a, double b, double v) {
  if (!(b > a) || bins == 0) return;
  unsigned k = a / bw >= bins ? bins - 1 : (unsigned)(a / bw);
  for (; k < bins; k++) {
    double lo = fmax(a, k * bw), hi = k + 1 == bins ? b : fmin(b, (k + 1) * bw);
    if (hi > lo) acc[k] += (hi - lo) * v;
    if (hi >= b) break;
  }
}

/* Utilization over time of the six link directions that carried the most
 * bytes, and the queue of the six that held the most, averaged into 200
 * bins (idle time as 0), each sample shared among the bins it overlaps:
 * one pass over links.csv. */
static bool plot_links(Plotter *p, bool *drew) {
  Table t;
  if (!table_read(p->dir, "links.csv", &t)) return true;
  int src = col(&t, "src"), dst = col(&t, "dst"), t0 = col(&t, "t_start_s"), t1 = col(&t, "t_end_s"),
      by = col(&t, "bytes"), ut = col(&t, "utilization"), qm = col(&t, "queue_mean_bytes");
  if (src < 0 || dst < 0 || t0 < 0 || t1 < 0 || by < 0 || ut < 0 || qm < 0) {
    table_free(&t);
    return true;
  }
  enum { BINS = 200 };
  double tmax = 0;
  for (guint r = 0; r < t.nrows; r++) tmax = fmax(tmax, num(&t, r, t1));
  double bw = tmax > 0 ? tmax / BINS : 1;
  GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  GArray *bytes = g_array_new(FALSE, TRUE, sizeof(double)), *held = g_array_new(FALSE, TRUE, sizeof(double)),
         *acc = g_array_new(FALSE, TRUE, sizeof(double));
  GString *key = g_string_new(NULL);
  for (guint r = 0; r < t.nrows; r++) {
    g_string_printf(key, "%s->%s", cell(&t, r, src), cell(&t, r, dst));
    gpointer v = g_hash_table_lookup(index, key->str);
    guint i;
    if (!v) {
      i = names->len;
      g_ptr_array_add(names, g_strdup(key->str));
      g_hash_table_insert(index, g_strdup(key->str), GUINT_TO_POINTER(i + 1));
      g_array_set_size(bytes, i + 1);
      g_array_set_size(held, i + 1);
      g_array_set_size(acc, (i + 1) * 2 * BINS);
    } else {
      i = GPOINTER_TO_UINT(v) - 1;
    }
    double a = num(&t, r, t0), b = num(&t, r, t1);
    double q = num(&t, r, qm);
    if (isnan(q)) q = 0; /* queues not modelled (fidelity: flow): no queues plot */
    g_array_index(bytes, double, i) += num(&t, r, by);
    g_array_index(held, double, i) += (b - a) * q;
    /* (a sample's whole share in the bin of its middle put 8 samples of
     * 0.1 ms in some 0.79 ms bins: 101 % of a saturated link) */
    cs_plot_spread(&g_array_index(acc, double, (i * 2 + 0) * BINS), BINS, bw, a, b, num(&t, r, ut));
    cs_plot_spread(&g_array_index(acc, double, (i * 2 + 1) * BINS), BINS, bw, a, b, q);
  }
  g_string_free(key, TRUE);
  table_free(&t);
  guint top[2][6], ntop[2] = {0, 0};
  for (int kind = 0; kind < 2; kind++) {
    GArray *by_what = kind == 0 ? bytes : held;
    for (; ntop[kind] < 6; ntop[kind]++) {
      int best = -1;
      for (guint i = 0; i < names->len; i++) {
        bool taken = false;
        for (guint k = 0; k < ntop[kind]; k++) taken |= top[kind][k] == i;
        double v = g_array_index(by_what, double, i);
        if (taken || (kind == 1 && v <= 0)) continue;
        if (best < 0 || v > g_array_index(by_what, double, best) ||
            (v == g_array_index(by_what, double, best) && strcmp(names->pdata[i], names->pdata[best]) < 0))
          best = (int)i;
      }
      if (best < 0) break;
      top[kind][ntop[kind]] = (guint)best;
    }
  }
  bool ok = true;
  const char *what[2] = {"utilization", "queues"};
  for (int kind = 0; ok && kind < 2; kind++) {
    if (!ntop[kind]) continue;
    GString *d = g_string_new(NULL), *plot = g_string_new("plot ");
    for (guint k = 0; k < ntop[kind]; k++) {
      guint i = top[kind][k];
      g_string_append_printf(d, "# %s\n", (char *)names->pdata[i]);
      for (guint b = 0; b < BINS; b++) {
        double v = g_array_index(acc, double, (i * 2 + (guint)kind) * BINS + b) / bw;
        g_string_append_printf(d, "%.6f %.6f\n", (b + 0.5) * bw * 1e3, kind == 0 ? v * 100 : v / 1e3);
      }
      g_string_append(d, "\n\n");
      g_autofree char *lab = label(names->pdata[i]);
      g_string_append_printf(plot, "%s'DATA' index %u with lines lw 2 title '%s'", k ? ", " : "", k, lab);
    }
    g_autofree char *script = g_strdup_printf(
        "set title '%s (%.3g ms bins)'\nset xlabel 'time (ms)'\n"
        "set ylabel '%s'\n%s%s\n",
        kind == 0 ? "Utilization of the link directions that carried the most" : "Mean queue of the link directions that held the most",
        bw * 1e3, kind == 0 ? "utilization (%)" : "bytes waiting (KB)",
        kind == 0 ? "set yrange [0:105]\n" : "set yrange [0:*]\n", plot->str);
    ok = draw(p, what[kind], d->str, script, 1000, 600);
    *drew |= ok;
    g_string_free(d, TRUE);
    g_string_free(plot, TRUE);
  }
  g_hash_table_destroy(index);
  g_ptr_array_free(names, TRUE);
  g_array_free(bytes, TRUE);
  g_array_free(held, TRUE);
  g_array_free(acc, TRUE);
  return ok;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* messages.csv's completion times (ms) of the delivered messages */
typedef struct {
  int st, en;
  double *fct;
  gsize n, cap;
} Fct;

static void fct_row(void *ctx, char **f, unsigned n, bool header) {
  Fct *x = ctx;
  if (header) {
    for (unsigned i = 0; i < n; i++) {
      if (!strcmp(f[i], "start_s")) x->st = (int)i;
      if (!strcmp(f[i], "end_s")) x->en = (int)i;
    }
    return;
  }
  if (x->st < 0 || x->en < 0 || !*f[x->en]) return;
  if (x->n == x->cap) {
    x->cap = x->cap ? 2 * x->cap : 4096;
    x->fct = g_renew(double, x->fct, x->cap);
  }
  x->fct[x->n++] = (cs_csv_number(f[x->en]) - cs_csv_number(f[x->st])) * 1e3;
}

static bool plot_messages(Plotter *p, bool *drew) {
  Fct x = {-1, -1, NULL, 0, 0};
  if (!cs_csv_each_row(p->dir, "messages.csv", fct_row, &x) || x.st < 0 || x.en < 0) {
    g_free(x.fct);
    return true;
  }
  double *fct = x.fct;
  guint n = (guint)x.n;
  qsort(fct, n, sizeof *fct, cmp_double);
  GString *d = g_string_new("# completion_ms fraction\n");
  guint step = n > 2000 ? n / 2000 : 1; /* at most about 2000 points */
  for (guint i = 0; i < n; i += step) g_string_append_printf(d, "%.6f %.6f\n", fct[i], (double)(i + 1) / n);
  if (n) g_string_append_printf(d, "%.6f 1\n", fct[n - 1]);
  bool ok = n == 0 || draw(p, "messages_cdf", d->str,
                           "set title 'Message completion times'\nset xlabel 'completion time (ms)'\n"
                           "set ylabel 'fraction of messages'\nset yrange [0:1]\nset key off\n"
                           "plot 'DATA' using 1:2 with steps lw 2 lc rgb '#4477aa'\n",
                           1000, 600);
  *drew |= n > 0 && ok;
  g_string_free(d, TRUE);
  g_free(fct);
  return ok;
}

/* Time to accuracy (convergence.csv): held-out loss and accuracy against
 * the run's clock. */
static bool plot_convergence(Plotter *p, bool *drew) {
  Table t;
  if (!table_read(p->dir, "convergence.csv", &t)) return true;
  int ts = col(&t, "time_s"), lo = col(&t, "loss"), ac = col(&t, "accuracy");
  if (ts < 0 || lo < 0 || ac < 0 || t.nrows == 0) {
    table_free(&t);
    return true;
  }
  GString *d = g_string_new("# time_s loss accuracy\n");
  guint step = t.nrows > 3000 ? t.nrows / 3000 : 1;
  for (guint r = 0; r < t.nrows; r += step)
    g_string_append_printf(d, "%.9g %.9g %.9g\n", num(&t, r, ts), num(&t, r, lo), num(&t, r, ac));
  bool ok = draw(p, "convergence", d->str,
                 "set title 'Time to accuracy: the small model trained through the codec, on the run''s clock'\n"
                 "set xlabel 'simulated time (s)'\nset ylabel 'held-out loss'\nset y2label 'held-out accuracy'\n"
                 "set ytics nomirror\nset y2tics\nset yrange [0:*]\nset y2range [0:1]\nset key outside right top\n"
                 "plot 'DATA' using 1:2 with lines lw 2 lc rgb '#4477aa' title 'loss', "
                 "'DATA' using 1:3 axes x1y2 with lines lw 2 lc rgb '#ee6677' title 'accuracy'\n",
                 1000, 600);
  *drew |= ok;
  g_string_free(d, TRUE);
  table_free(&t);
  return ok;
}

/* ---- a sweep folder ---- */

/* A swept key: its column of values as written, and where it has a unit
 * its values as numbers (the _unit column beside it, or the values
 * themselves when they are plain numbers). */
typedef struct {
  int col, num_col; /* num_col -1: the text itself is numeric, or none */
  const char *name, *leaf, *unit;
  bool numeric;
} Axis;

static double axis_value(const Table *t, const Axis *a, guint r) {
  return a->num_col >= 0 ? num(t, r, a->num_col) : num(t, r, a->col);
}

/* How an axis's numbers are shown: a scale and a unit for the label. */
static void axis_scale(const Axis *a, double max, double *div, const char **unit) {
  *div = 1;
  *unit = a->unit ? a->unit : "";
  if (!a->unit) return;
  if (!strcmp(a->unit, "bps")) {
    static const char *const u[] = {"Tbps", "Gbps", "Mbps", "Kbps"};
    static const double d[] = {1e12, 1e9, 1e6, 1e3};
    for (int i = 0; i < 4; i++)
      if (max >= d[i]) {
        *div = d[i], *unit = u[i];
        return;
      }
  } else if (!strcmp(a->unit, "s")) {
    if (max < 1e-3) *div = 1e-6, *unit = "us";
    else if (max < 1) *div = 1e-3, *unit = "ms";
  } else if (!strcmp(a->unit, "bytes")) {
    static const char *const u[] = {"GB", "MB", "KB"};
    static const double d[] = {1e9, 1e6, 1e3};
    for (int i = 0; i < 3; i++)
      if (max >= d[i]) {
        *div = d[i], *unit = u[i];
        return;
      }
  } else if (!strcmp(a->unit, "fraction")) {
    *div = 0.01, *unit = "%";
  } else if (!strcmp(a->unit, "count")) {
    *unit = "";
  }
}

/* Whether key b's value is a function of key a's (a zipped axis: each
 * method rides one collective). */
static bool tied(const Table *t, const Axis *a, const Axis *b) {
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  bool ok = true;
  for (guint r = 0; r < t->nrows && ok; r++) {
    const char *x = cell(t, r, a->col), *y = cell(t, r, b->col);
    const char *had = g_hash_table_lookup(seen, x);
    if (had) ok = !strcmp(had, y);
    else g_hash_table_insert(seen, (gpointer)x, (gpointer)y);
  }
  g_hash_table_destroy(seen);
  return ok;
}

/* The label of row r's values of every axis but `skip` (and those
 * `skip2` ties): the line it belongs to. */
static char *others_label(const Table *t, const Axis *ax, guint n, guint skip, const bool *omit, guint r) {
  GString *s = g_string_new(NULL);
  for (guint k = 0; k < n; k++) {
    if (k == skip || omit[k]) continue;
    g_string_append_printf(s, "%s%s=%s", s->len ? ", " : "", ax[k].leaf, cell(t, r, ax[k].col));
  }
  return g_string_free(s, FALSE);
}

/* Per point, the iteration's breakdown as horizontal bars: each point on
 * a line of its own with its values, readable for a few hundred points. */
static bool plot_sweep_breakdown(Plotter *p, const Table *t, const Axis *ax, guint na, bool *drew) {
  int cs = col(t, "compute_s"), co = col(t, "codec_outside_compute_s"), ex = col(t, "exposed_comm_s"),
      cd = col(t, "codec_s");
  if (cs < 0 || ex < 0 || t->nrows > 300) return true;
  GString *d = g_string_new("# y compute_end outside_end exposed_end label\n");
  guint rows = 0;
  for (guint r = 0; r < t->nrows; r++) {
    double c = num(t, r, cs) * 1e3, e = num(t, r, ex) * 1e3;
    if (isnan(c) || isnan(e)) continue;
    double o = co >= 0 ? num(t, r, co) * 1e3 : num(t, r, cd) * 1e3;
    if (isnan(o)) o = 0;
    GString *lab = g_string_new(NULL);
    for (guint k = 0; k < na; k++) g_string_append_printf(lab, "%s%s", k ? " " : "", cell(t, r, ax[k].col));
    g_autofree char *l = label(lab->str);
    g_string_free(lab, TRUE);
    double y = -(double)rows;
    g_string_append_printf(d, "%.1f %.6f %.6f %.6f \"%s\"\n", y, c, c + o, c + o + e, l);
    rows++;
  }
  bool ok = true;
  if (rows) {
    int h = MAX(450, 110 + 17 * (int)rows);
    ok = draw(p, "iteration", d->str,
              "set title 'Where an iteration goes, per sweep point (mean over workers)'\n"
              "set xlabel 'time (ms)'\nset key outside top center horizontal\n"
              "set ytics scale 0 font ',9'\nset offsets 0, 0, 0.6, 0.6\n"
              "set style fill solid 0.85 border -1\nset grid noytics xtics\n"
              "plot 'DATA' using ($2/2):1:(0):2:($1-0.4):($1+0.4):ytic(5) with boxxyerror title 'compute' lc rgb '#4477aa', "
              "'' using (($2+$3)/2):1:2:3:($1-0.4):($1+0.4) with boxxyerror title 'codec (outside compute)' lc rgb '#ccbb44', "
              "'' using (($3+$4)/2):1:3:4:($1-0.4):($1+0.4) with boxxyerror title 'exposed communication' lc rgb '#ee6677'\n",
              1100, h);
    *drew |= ok;
  }
  g_string_free(d, TRUE);
  return ok;
}

/* A line plot against axis `a`: one line per value of the other axes
 * together (never some of them silently at their first value).  value():
 * the y of row r, NAN to leave it out. */
typedef double (*RowValue)(const Table *t, guint r, void *ctx, const Axis *ax, guint na, guint a, const bool *omit);

static bool plot_lines(Plotter *p, const Table *t, const Axis *ax, guint na, guint a, const bool *omit, const char *stem,
                       const char *title, const char *ylabel, RowValue value, void *ctx, const char *extra, bool *drew) {
  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free); /* labels, in order of first appearance */
  GArray *pts = g_array_new(FALSE, FALSE, sizeof(double) * 3); /* line, x, y */
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (guint r = 0; r < t->nrows; r++) {
    double x = axis_value(t, &ax[a], r), y = value(t, r, ctx, ax, na, a, omit);
    if (isnan(x) || isnan(y)) continue;
    char *l = others_label(t, ax, na, a, omit, r);
    guint line;
    if (!g_ptr_array_find_with_equal_func(lines, l, g_str_equal, &line)) {
      line = lines->len;
      g_ptr_array_add(lines, l);
    } else {
      g_free(l);
    }
    double v[3] = {line, x, y};
    g_array_append_val(pts, v);
    xmin = fmin(xmin, x), xmax = fmax(xmax, x);
    ymin = fmin(ymin, y), ymax = fmax(ymax, y);
  }
  bool ok = true;
  if (pts->len >= 2 && xmax > xmin) {
    double div;
    const char *unit;
    axis_scale(&ax[a], fmax(fabs(xmin), fabs(xmax)), &div, &unit);
    GString *d = g_string_new(NULL), *plot = g_string_new("plot ");
    for (guint line = 0; line < lines->len; line++) {
      GArray *mine = g_array_new(FALSE, FALSE, sizeof(double) * 2);
      for (guint i = 0; i < pts->len; i++) {
        const double *v = &g_array_index(pts, double, 3 * i);
        if ((guint)v[0] == line) g_array_append_vals(mine, v + 1, 1);
      }
      g_array_sort(mine, cmp_double);
      g_string_append_printf(d, "# %s\n", (char *)lines->pdata[line]);
      for (guint i = 0; i < mine->len; i++)
        g_string_append_printf(d, "%.9g %.9g\n", g_array_index(mine, double, 2 * i) / div, g_array_index(mine, double, 2 * i + 1));
      g_string_append(d, "\n\n");
      g_array_free(mine, TRUE);
      g_autofree char *lab = label(*(char *)lines->pdata[line] ? lines->pdata[line] : "all points");
      g_string_append_printf(plot, "%s'DATA' index %u with linespoints lw 2 pt %u ps 1.2 dt %u title '%s'", line ? ", " : "",
                             line, 5 + line % 9, 1 + (line / 9) % 4, lab);
    }
    g_autofree char *xl = label(ax[a].name);
    bool logx = xmin > 0 && xmax / xmin >= 50;
    bool logy = ymin > 0 && ymax / ymin >= 50; /* values over two decades and more: a log scale shows them all */
    g_autofree char *script = g_strdup_printf("set title '%s'\nset xlabel '%s%s%s%s'\nset ylabel '%s'\n%s%s"
                                              "set key outside right top font ',9'\n%s\n%s\n",
                                              title, xl, *unit ? " (" : "", unit, *unit ? ")" : "", ylabel,
                                              logx ? "set logscale x\n" : "", extra ? extra : "",
                                              logy ? "set logscale y" : "set yrange [0:*]", plot->str);
    int w = lines->len > 12 ? 1300 : 1100;
    ok = draw(p, stem, d->str, script, w, 650);
    *drew |= ok;
    g_string_free(d, TRUE);
    g_string_free(plot, TRUE);
  }
  g_ptr_array_free(lines, TRUE);
  g_array_free(pts, TRUE);
  return ok;
}

static double iter_ms(const Table *t, guint r, void *ctx, const Axis *ax, guint na, guint a, const bool *omit) {
  (void)ax, (void)na, (void)a, (void)omit;
  return num(t, r, GPOINTER_TO_INT(ctx)) * 1e3;
}

static double seconds(const Table *t, guint r, void *ctx, const Axis *ax, guint na, guint a, const bool *omit) {
  (void)ax, (void)na, (void)a, (void)omit;
  return num(t, r, GPOINTER_TO_INT(ctx));
}

/* Speedup over no compression: row r's iteration against that of the row
 * with method none and the same values of every other axis (those tied to
 * the method aside: its collective). */
typedef struct {
  int it;
  guint method; /* the method axis */
  const bool *tied_to_method;
} SpeedCtx;

static double speedup(const Table *t, guint r, void *ctx, const Axis *ax, guint na, guint a, const bool *omit) {
  (void)omit;
  SpeedCtx *c = ctx;
  if (!strcmp(cell(t, r, ax[c->method].col), "none")) return NAN;
  double mine = num(t, r, c->it);
  for (guint q = 0; q < t->nrows; q++) {
    if (strcmp(cell(t, q, ax[c->method].col), "none")) continue;
    bool same = true;
    for (guint k = 0; k < na && same; k++)
      if (k != c->method && !c->tied_to_method[k]) same = !strcmp(cell(t, q, ax[k].col), cell(t, r, ax[k].col));
    (void)a;
    if (same) return num(t, q, c->it) / mine;
  }
  return NAN;
}

/* A column plotted against the swept axes, and its speedup over method none. */
typedef struct {
  int col;
  const char *stem, *title, *ylabel; /* title: printf with the axis */
  RowValue value;
  const char *speed_stem, *speed_title, *speed_ylabel;
} Metric;

static bool plot_sweep(Plotter *p, Table *t, bool *drew) {
  int first = col(t, "scenario"), it = col(t, "iter_mean_s");
  if (first <= 0) return true;
  /* the swept keys: columns before scenario, each perhaps with a _unit twin */
  Axis *ax = g_new0(Axis, (size_t)first + 1);
  guint na = 0;
  static const char *const units[] = {"bps", "s", "bytes", "pkt", "count", "fraction", NULL};
  for (int c = 0; c < first; c++) {
    const char *name = t->cells->pdata[c];
    if (na > 0) {
      Axis *prev = &ax[na - 1];
      size_t pl = strlen(prev->name);
      bool twin = false;
      for (const char *const *u = units; *u && !twin; u++)
        twin = !strncmp(name, prev->name, pl) && name[pl] == '_' && !strcmp(name + pl + 1, *u);
      if (twin) {
        if (prev->num_col < 0) { /* the first twin with a value in every row */
          bool full = true;
          for (guint r = 0; r < t->nrows && full; r++) full = *cell(t, r, c) != '\0';
          if (full) prev->num_col = c, prev->unit = name + pl + 1, prev->numeric = true;
        }
        continue;
      }
    }
    const char *leaf = strrchr(name, '.');
    ax[na] = (Axis){c, -1, name, leaf ? leaf + 1 : name, NULL, true};
    for (guint r = 0; r < t->nrows && ax[na].numeric; r++) ax[na].numeric = !isnan(num(t, r, c));
    na++;
  }
  for (guint k = 0; k < na; k++) /* a buffer axis in bytes and packets has numbers in neither twin alone */
    if (ax[k].num_col < 0 && ax[k].unit) ax[k].numeric = false;
  bool ok = plot_sweep_breakdown(p, t, ax, na, drew);
  bool *none = g_new0(bool, na + 1);
  int method = -1;
  for (guint k = 0; k < na; k++)
    if (g_str_has_suffix(ax[k].name, "compression.method")) method = (int)k;
  bool has_none = false;
  for (guint r = 0; method >= 0 && r < t->nrows; r++) has_none |= !strcmp(cell(t, r, ax[method].col), "none");
  bool *tied_m = g_new0(bool, na + 1);
  for (guint k = 0; method >= 0 && k < na; k++) tied_m[k] = (int)k != method && tied(t, &ax[method], &ax[k]);
  /* an axis zipped one to one with an earlier one (workload.model with its
   * batch) is that axis under another name: no plot against it, and not
   * in the lines' labels */
  bool *twin = g_new0(bool, na + 1), *omit = g_new0(bool, na + 1);
  for (guint k = 0; k < na; k++)
    for (guint j = 0; j < k && !twin[k]; j++) twin[k] = tied(t, &ax[j], &ax[k]) && tied(t, &ax[k], &ax[j]);
  /* the mean iteration, and the time to the convergence target where
   * points reached it: each against every axis with numbers, and its
   * speedup over no compression */
  const Metric metrics[] = {
      {it, "iteration", "Mean iteration time against %s (a line per value of the other axes)", "iteration (ms)",
       iter_ms, "speedup", "Speedup of an iteration over no compression, against %s", "speedup over method none (x)"},
      {col(t, "time_to_target_s"), "time_to_target",
       "Simulated time to the convergence target against %s (points that reached it)", "time to target (s)", seconds,
       "time_to_target_speedup", "Speedup to the convergence target over no compression, against %s",
       "speedup to target over method none (x)"},
  };
  bool speed_drawn = false;
  for (size_t m = 0; ok && m < G_N_ELEMENTS(metrics); m++) {
    const Metric *me = &metrics[m];
    bool any = false;
    for (guint r = 0; me->col >= 0 && r < t->nrows; r++) any |= !isnan(num(t, r, me->col));
    for (guint a = 0; ok && any && a < na; a++) {
      if (!ax[a].numeric || twin[a]) continue;
      /* the lines: every other axis but twins and those that follow from this one */
      for (guint k = 0; k < na; k++) omit[k] = none[k] || twin[k] || (k != a && tied(t, &ax[a], &ax[k]));
      g_autofree char *stem = g_strdup_printf("%s_vs_%s", me->stem, ax[a].leaf);
      g_autofree char *title = g_strdup_printf(me->title, ax[a].leaf);
      ok = plot_lines(p, t, ax, na, a, omit, stem, title, me->ylabel, me->value, GINT_TO_POINTER(me->col), NULL, drew);
      if (ok && method >= 0 && has_none && (int)a != method && !tied_m[a]) {
        SpeedCtx sc = {me->col, (guint)method, tied_m};
        g_autofree char *s2 = g_strdup_printf("%s_vs_%s", me->speed_stem, ax[a].leaf);
        g_autofree char *t2 = g_strdup_printf(me->speed_title, ax[a].leaf);
        ok = plot_lines(p, t, ax, na, a, omit, s2, t2, me->speed_ylabel, speedup, &sc,
                        "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#888888'\n", drew);
        speed_drawn = true;
      }
    }
    /* the points a speedup plot leaves out, said: no row of method none
     * at their other values (a collective that only compressed methods
     * ride, as allgather with topk) */
    if (ok && speed_drawn && p->notes) {
      SpeedCtx sc = {me->col, (guint)method, tied_m};
      GString *which = g_string_new(NULL);
      guint n = 0;
      for (guint r = 0; r < t->nrows; r++) {
        if (!strcmp(cell(t, r, ax[method].col), "none") || isnan(num(t, r, me->col)) ||
            !isnan(speedup(t, r, &sc, ax, na, 0, omit)))
          continue;
        if (n++ < 3) {
          g_string_append_printf(which, "%s(", n > 1 ? ", " : "");
          for (guint k = 0, w = 0; k < na; k++)
            if (!twin[k]) g_string_append_printf(which, "%s%s=%s", w++ ? ", " : "", ax[k].leaf, cell(t, r, ax[k].col));
          g_string_append(which, ")");
        }
      }
      if (n)
        g_ptr_array_add(p->notes, g_strdup_printf("%s_vs_*: %u point%s left out, with no row of method none at the same "
                                                  "values of the other keys: %s%s",
                                                  me->speed_stem, n, n == 1 ? "" : "s", which->str, n > 3 ? ", ..." : ""));
      g_string_free(which, TRUE);
    }
    speed_drawn = false;
  }
  g_free(none);
  g_free(twin);
  g_free(omit);
  g_free(tied_m);
  g_free(ax);
  return ok;
}

/* ---- the folder ---- */

GPtrArray *cs_plot_dir(const char *dir, GPtrArray *notes, GError **error) {
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s: error: no such folder", dir);
    return NULL;
  }
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");
  if (!gnuplot) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO,
                "gnuplot not found: install the Debian package gnuplot-nox (scripts/bootstrap does)");
    return NULL;
  }
  Table sweep, summary;
  bool is_sweep = table_read(dir, "sweep.csv", &sweep), is_run = !is_sweep && table_read(dir, "summary.csv", &summary);
  if (!is_sweep && !is_run) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: neither sweep.csv nor summary.csv here: not a folder that commsim run or sweep wrote", dir);
    return NULL;
  }
  Table *own = is_sweep ? &sweep : &summary;
  if (col(own, "scenario") < 0 || col(own, "iter_mean_s") < 0 || col(own, "packets_sent") < 0) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: %s is not commsim's (it lacks the columns scenario, iter_mean_s, packets_sent)", dir,
                is_sweep ? "sweep.csv" : "summary.csv");
    table_free(own);
    return NULL;
  }
  Plotter p = {dir, NULL, g_ptr_array_new_with_free_func(g_free), error, notes};
  p.work = g_dir_make_tmp("commsim-plot-XXXXXX", error);
  if (!p.work) {
    table_free(own);
    g_ptr_array_free(p.made, TRUE);
    return NULL;
  }
  bool drew = false, ok;
  if (is_sweep) ok = plot_sweep(&p, &sweep, &drew);
  else ok = plot_iterations(&p, &drew) && plot_links(&p, &drew) && plot_messages(&p, &drew) && plot_convergence(&p, &drew);
  table_free(own);
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", p.work);
  if (system(cmd) != 0) { /* a temporary folder left behind is harmless */
  }
  g_free(p.work);
  if (ok && !drew) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO,
                "%s: error: nothing to plot: %s", dir,
                is_sweep ? "no swept axis with numbers and no iteration times (a sweep without workload: is plotted "
                           "from its points' folders)"
                         : "no iterations.csv, links.csv or delivered message in messages.csv (see output.traces)");
    ok = false;
  }
  if (!ok) {
    g_ptr_array_free(p.made, TRUE);
    return NULL;
  }
  return p.made;
}
