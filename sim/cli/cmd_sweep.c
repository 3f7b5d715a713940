/* cmd_sweep.c - `commsim sweep FILE.yaml [-o DIR] [-j N] [--shard K/N]` and
 * `commsim sweep --merge DIR... [-o OUT]`. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "commsim/sweep.h"
#include "sweep_mpi.h"

int cs_cmd_sweep(int argc, char **argv) {
  g_auto(GStrv) sets = NULL;
  g_autofree char *outdir = NULL, *shard = NULL;
  gint jobs = 0;
  gboolean merge = FALSE, quiet = FALSE, check = FALSE, reproducible = FALSE, force = FALSE;
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &outdir, "Write the points and sweep.csv to DIR (default: output.dir)", "DIR"},
      {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Run N points at once (default: the number of cores)", "N"},
      {"shard", 0, 0, G_OPTION_ARG_STRING, &shard, "Run only the points whose index is K modulo N", "K/N"},
      {"merge", 0, 0, G_OPTION_ARG_NONE, &merge, "Join the sweep.csv of the shard folders given as arguments", NULL},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scalar by its dotted key", "KEY=VALUE"},
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
    if (!cs_sweep_merge((const char *const *)argv + 1, out, &error)) {
      fprintf(stderr, "%s\n", error->message);
      return CS_EXIT_RUNTIME;
    }
    if (!quiet) printf("merged %d folders into %s/sweep.csv\n", argc - 1, out);
    return CS_EXIT_OK;
  }
  if (argc != 2) {
    fprintf(stderr, "commsim sweep: expected one scenario file (see 'commsim sweep --help')\n");
    return CS_EXIT_USAGE;
  }
  CsSweepOptions opt = {0};
  if (jobs < 0) {
    fprintf(stderr, "commsim sweep: -j must be 1 or more\n");
    return CS_EXIT_USAGE;
  }
  opt.jobs = (uint32_t)jobs;
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
    printf("%u of %u points%s in %s/sweep.csv", mine - failed, n, opt.shard_n ? " (this shard's)" : "", dir);
    printf(failed ? "; %u failed (see above)\n" : "\n", failed);
  }
  return failed ? CS_EXIT_RUNTIME : CS_EXIT_OK;
}
