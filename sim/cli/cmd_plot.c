/* cmd_plot.c - `commsim plot DIR`: PNG plots of a run or sweep folder. */
#include "config.h"

#include <glib.h>
#include <stdio.h>

#include "commands.h"
#include "commsim/plot.h"
#include "commsim/yamltree.h"

int cs_cmd_plot(int argc, char **argv) {
  GOptionEntry entries[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("DIR");
  g_option_context_set_summary(ctx, "Draw plots (gnuplot; PNG and PDF) from a run or sweep folder, into that folder.");
  g_option_context_set_description(ctx, "Exit status: 0 plots drawn, 1 nothing to draw or gnuplot failed, 2 not a run or sweep folder.\n");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "commsim plot: %s\n", error->message);
    return CS_EXIT_USAGE;
  }
  if (argc != 2) {
    fprintf(stderr, "commsim plot: expected one folder (see 'commsim plot --help')\n");
    return CS_EXIT_USAGE;
  }
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
  GPtrArray *made = cs_plot_dir(argv[1], notes, &error);
  for (guint i = 0; i < notes->len; i++) fprintf(stderr, "commsim plot: note: %s\n", (char *)notes->pdata[i]);
  if (!made) {
    fprintf(stderr, "commsim plot: %s\n", error->message);
    return g_error_matches(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID) ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
  }
  for (guint i = 0; i < made->len; i++) printf("%s/%s\n", argv[1], (char *)made->pdata[i]);
  g_ptr_array_free(made, TRUE);
  return CS_EXIT_OK;
}
