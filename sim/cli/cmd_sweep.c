/* cmd_sweep.c - `commsim sweep FILE.yaml [-o DIR] [-j N] [--shard K/N]` and
 * `commsim sweep --merge DIR... [-o OUT]`. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "commsim/sweep.h"
#include "commsim/units.h"
#include "commsim/yamltree.h"
#include "sweep_mpi.h"

/* A unit for a whole column, by its largest value, with the decimals that
 * keep three significant digits of it. */
typedef struct {
  double div;
  const char *name;
  int decimals;
} Scale;

static Scale scale_of(double max, double min, const double *divs, const char *const *names, int n) {
  int i = 0;
  while (i + 1 < n && max < divs[i]) i++;
  double v = max / divs[i];
  int d = v < 10 ? 3 : v < 100 ? 2 : 1;
  /* and two significant digits of the smallest value that is not 0 */
  if (min > 0 && min < INFINITY) d = MAX(d, MIN(6, (int)ceil(-log10(min / divs[i])) + 1));
  return (Scale){divs[i], names[i], d};
}

static Scale seconds_scale(double max, double min) {
  static const double d[] = {1, 1e-3, 1e-6};
  static const char *const n[] = {"s", "ms", "us"};
  return scale_of(max, min, d, n, 3);
}

static Scale bytes_scale(double max, double min) {
  static const double d[] = {1e9, 1e6, 1e3, 1};
  static const char *const n[] = {"GB", "MB", "KB", "B"};
  Scale s = scale_of(max, min, d, n, 4);
  if (s.div == 1) s.decimals = 0;
  return s;
}

/* The sweep's results, compactly: a row per point (at most 40) with its
 * swept values and the headline numbers. */
static void print_results(const char *dir) {
  g_autofree char *path = g_build_filename(dir, "sweep.csv", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return;
  g_auto(GStrv) lines = g_strsplit(text, "\r\n", -1);
  if (!lines[0] || !lines[1] || !*lines[1]) return;
  g_autoptr(GPtrArray) h = cs_csv_split_line(lines[0]);
  int first = -1, point = -1, it = -1, ex = -1, wire = -1, drops = -1, retx = -1, util = -1;
  for (guint c = 0; c < h->len; c++) {
    const char *n = h->pdata[c];
    if (!strcmp(n, "scenario") && first < 0) first = (int)c;
    if (!strcmp(n, "point")) point = (int)c;
    if (!strcmp(n, "iter_mean_s")) it = (int)c;
    if (!strcmp(n, "exposed_comm_s")) ex = (int)c;
    if (!strcmp(n, "wire_bytes_per_worker")) wire = (int)c;
    if (!strcmp(n, "packets_dropped")) drops = (int)c;
    if (!strcmp(n, "retransmissions")) retx = (int)c;
    if (!strcmp(n, "link_util_max")) util = (int)c;
  }
  if (first < 0 || point < 0) return;
  /* the swept keys: the text columns before "scenario" (not their _unit twins) */
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(int));
  for (int c = 0; c < first; c++) {
    const char *n = h->pdata[c];
    bool twin = false;
    for (int k = 0; k < c && !twin; k++) twin = g_str_has_prefix(n, h->pdata[k]) && n[strlen(h->pdata[k])] == '_';
    if (!twin) g_array_append_val(keys, c);
  }
  guint rows = 0;
  while (lines[rows + 1] && *lines[rows + 1]) rows++;
  GPtrArray **cells = g_new0(GPtrArray *, rows);
  for (guint r = 0; r < rows; r++) cells[r] = cs_csv_split_line(lines[r + 1]);
  /* widths of the swept values' columns */
  int *w = g_new0(int, keys->len + 1);
  for (guint k = 0; k < keys->len; k++) {
    const char *name = h->pdata[g_array_index(keys, int, k)], *leaf = strrchr(name, '.');
    w[k] = (int)strlen(leaf ? leaf + 1 : name);
    for (guint r = 0; r < rows; r++) w[k] = MAX(w[k], (int)strlen(cells[r]->pdata[g_array_index(keys, int, k)]));
  }
  bool training = false;
  for (guint r = 0; r < rows && it >= 0; r++) training |= *(char *)cells[r]->pdata[it] != '\0';
  /* one unit per column, chosen by its largest value */
  double mx[3] = {0, 0, 0}, mn[3] = {INFINITY, INFINITY, INFINITY};
  int cols3[3] = {it, ex, wire};
  for (guint r = 0; r < rows && training; r++)
    for (int k = 0; k < 3; k++) {
      double v = g_ascii_strtod(cells[r]->pdata[cols3[k]], NULL);
      mx[k] = fmax(mx[k], v);
      if (v > 0) mn[k] = fmin(mn[k], v);
    }
  Scale si = seconds_scale(mx[0], mn[0]), se = seconds_scale(mx[1], mn[1]), sw = bytes_scale(mx[2], mn[2]);
  printf("\n%5s", "point");
  for (guint k = 0; k < keys->len; k++) {
    const char *name = h->pdata[g_array_index(keys, int, k)], *leaf = strrchr(name, '.');
    printf("  %-*s", w[k], leaf ? leaf + 1 : name);
  }
  if (training) {
    g_autofree char *a = g_strdup_printf("iteration (%s)", si.name), *b = g_strdup_printf("exposed (%s)", se.name),
                    *c = g_strdup_printf("wire/worker (%s)", sw.name);
    printf("  %14s %14s %17s", a, b, c);
  } else {
    printf("  %12s", "max util");
  }
  printf(" %10s %10s\n", "drops", "retransmit");
  guint shown = MIN(rows, 40u);
  for (guint r = 0; r < shown; r++) {
    GPtrArray *f = cells[r];
    printf("%5s", (char *)f->pdata[point]);
    for (guint k = 0; k < keys->len; k++) printf("  %-*s", w[k], (char *)f->pdata[g_array_index(keys, int, k)]);
    if (training) {
      const char *iv = f->pdata[it], *ev = f->pdata[ex], *wv = f->pdata[wire];
      if (*iv) printf("  %14.*f", si.decimals, g_ascii_strtod(iv, NULL) / si.div);
      else printf("  %14s", "-");
      if (*ev) printf(" %14.*f", se.decimals, g_ascii_strtod(ev, NULL) / se.div);
      else printf(" %14s", "-");
      if (*wv) printf(" %17.*f", sw.decimals, g_ascii_strtod(wv, NULL) / sw.div);
      else printf(" %17s", "-");
    } else {
      printf("  %11.1f%%", 100 * g_ascii_strtod(f->pdata[util], NULL));
    }
    printf(" %10s %10s\n", (char *)f->pdata[drops], (char *)f->pdata[retx]);
  }
  if (rows > shown) printf("(%u more rows in %s)\n", rows - shown, path);
  for (guint r = 0; r < rows; r++) g_ptr_array_free(cells[r], TRUE);
  g_free(cells);
  g_free(w);
  g_array_free(keys, TRUE);
}

int cs_cmd_sweep(int argc, char **argv) {
  g_auto(GStrv) sets = NULL;
  g_autofree char *outdir = NULL, *shard = NULL;
  gint jobs = G_MININT; /* not given: the number of cores */
  gboolean merge = FALSE, quiet = FALSE, check = FALSE, reproducible = FALSE, force = FALSE, partial = FALSE;
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &outdir, "Write the points and sweep.csv to DIR (default: output.dir)", "DIR"},
      {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Run N points at once (default: the number of cores)", "N"},
      {"shard", 0, 0, G_OPTION_ARG_STRING, &shard, "Run only the points whose index is K modulo N", "K/N"},
      {"merge", 0, 0, G_OPTION_ARG_NONE, &merge, "Join the sweep.csv of the shard folders given as arguments", NULL},
      {"allow-partial", 0, 0, G_OPTION_ARG_NONE, &partial, "With --merge: points in no shard are not an error", NULL},
      CS_CLI_SET_OPTION(sets),
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress and no summary", NULL},
      {"check", 0, 0, G_OPTION_ARG_NONE, &check, "Check the expensive invariants in every point (see run --help)", NULL},
      {"reproducible", 0, 0, G_OPTION_ARG_NONE, &reproducible, "Write wall_s as 0 (byte-identical results)", NULL},
      {"force", 0, 0, G_OPTION_ARG_NONE, &force, "Keep output.sample_interval in every point (see run --help)", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("FILE.yaml | --merge DIR...");
  g_option_context_set_summary(ctx, "Run every point of the scenario's sweep: grid; one row per point in DIR/sweep.csv.");
  g_option_context_set_description(ctx,
                                   "A point whose folder already holds its summary.csv is not run again: rerun the same\n"
                                   "command to resume an interrupted sweep. SIGINT (Ctrl-C) or SIGTERM stops the running\n"
                                   "points cleanly and writes no sweep.csv; rerun to resume.\n"
                                   "Exit status: 0 every point ran, 1 some point failed, 2 bad usage or scenario,\n"
                                   "130 (SIGINT) or 143 (SIGTERM) interrupted.\n");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "commsim sweep: %s\n", error->message);
    return CS_EXIT_USAGE;
  }
  if (outdir && !*outdir) {
    fprintf(stderr, "commsim sweep: -o: the output folder's name is empty\n");
    return CS_EXIT_USAGE;
  }
  if (merge) {
    if (argc < 2) {
      fprintf(stderr, "commsim sweep --merge: expected the shards' folders\n");
      return CS_EXIT_USAGE;
    }
    const char *out = outdir ? outdir : ".";
    uint32_t missing = 0;
    g_autofree char *gaps = NULL;
    if (!cs_sweep_merge((const char *const *)argv + 1, out, &missing, &gaps, &error)) {
      fprintf(stderr, "commsim sweep --merge: %s\n", error->message);
      return g_error_matches(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID) ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
    }
    if (missing) fprintf(stderr, "commsim sweep --merge: %s: %s\n", partial ? "note" : "error", gaps);
    if (!quiet) printf("merged %d folder%s into %s/sweep.csv\n", argc - 1, argc == 2 ? "" : "s", out);
    return missing && !partial ? CS_EXIT_RUNTIME : CS_EXIT_OK;
  }
  if (argc != 2) {
    fprintf(stderr, "commsim sweep: expected one scenario file (see 'commsim sweep --help')\n");
    return CS_EXIT_USAGE;
  }
  CsSweepOptions opt = {0};
  if (jobs != G_MININT && jobs < 1) {
    fprintf(stderr, "commsim sweep: -j must be 1 or more\n");
    return CS_EXIT_USAGE;
  }
  opt.jobs = jobs == G_MININT ? 0 : (uint32_t)jobs; /* 0: the number of cores */
  if (shard) {
    guint64 k, n;
    g_auto(GStrv) parts = g_strsplit(shard, "/", 2);
    if (g_strv_length(parts) != 2 || !g_ascii_string_to_unsigned(parts[0], 10, 0, 1000000, &k, NULL) ||
        !g_ascii_string_to_unsigned(parts[1], 10, 1, 1000000, &n, NULL) || k >= n) {
      fprintf(stderr, "commsim sweep: --shard '%s': expected K/N with 0 <= K < N, such as 0/4\n", shard);
      return CS_EXIT_USAGE;
    }
    opt.shard_k = (uint32_t)k, opt.shard_n = (uint32_t)n;
  }
  opt.progress = !quiet && isatty(STDERR_FILENO);
  g_autoptr(CsSweep) sw = cs_sweep_new(argv[1], (const char *const *)sets, &error);
  if (!sw) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_USAGE;
  }
  const char *dir = outdir ? outdir : cs_sweep_default_dir(sw);
  uint32_t failed = 0;
  opt.checks = check;
  opt.reproducible = reproducible;
  opt.force = force;
  opt.quiet = quiet;
  opt.interrupt = &cs_cli_signal;
  cs_cli_catch_signals();
  if (cs_sweep_mpi_launched()) {
#ifdef HAVE_MPI
    return cs_sweep_mpi(sw, dir, &opt, quiet);
#else
    fprintf(stderr,
            "commsim sweep: started by mpirun, but this commsim was built without MPI: every rank would run every "
            "point. Build with ./configure --with-mpi, or use --shard K/N and --merge\n");
    return CS_EXIT_USAGE;
#endif
  }
  if (!cs_sweep_run(sw, dir, &opt, &failed, &error)) {
    if (g_error_matches(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED)) {
      fprintf(stderr, "%s\n", error->message);
      return cs_cli_signal_status();
    }
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_RUNTIME;
  }
  if (!quiet) {
    uint32_t n = cs_sweep_size(sw), mine = opt.shard_n ? (n + opt.shard_n - 1 - opt.shard_k) / opt.shard_n : n;
    print_results(dir);
    printf("\n%u of %u point%s%s in %s/sweep.csv", mine - failed, n, n == 1 ? "" : "s",
           opt.shard_n ? " (this shard's)" : "", dir);
    printf(failed ? "; %u failed (see above)\n" : "\n", failed);
  }
  return failed ? CS_EXIT_RUNTIME : CS_EXIT_OK;
}
