/* world.c - what validate and model share: parse FILE.yaml [--set K=V]...,
 * load the scenario, build its network and routes, report any error. */
#include "config.h"

#include <stdio.h>

#include "commands.h"

int cs_cli_load_world(const char *command, const char *summary, int argc, char **argv, CsCliWorld *w) {
  g_auto(GStrv) sets = NULL;
  GOptionEntry entries[] = {
      CS_CLI_SET_OPTION(sets),
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("FILE.yaml");
  g_option_context_set_summary(ctx, summary);
  g_option_context_set_description(ctx, "Exit status: 0 success, 2 bad usage or scenario (the message says where).\n");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  *w = (CsCliWorld){NULL, NULL, NULL};
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "commsim %s: %s\n", command, error->message);
    return CS_EXIT_USAGE;
  }
  if (argc != 2) {
    fprintf(stderr, "commsim %s: expected one scenario file (see 'commsim %s --help')\n", command, command);
    return CS_EXIT_USAGE;
  }
  if (!(w->s = cs_scenario_load(argv[1], (const char *const *)sets, &error)) ||
      !(w->t = cs_topology_build(w->s, &error))) {
    fprintf(stderr, "%s\n", error->message);
    cs_cli_world_clear(w);
    return CS_EXIT_USAGE;
  }
  if (!(w->r = cs_scenario_routes(w->s, w->t, &error)) || !cs_scenario_check(w->s, w->t, w->r, &error)) {
    fprintf(stderr, "%s\n", error->message);
    cs_cli_world_clear(w);
    return CS_EXIT_USAGE;
  }
  return -1;
}

void cs_cli_world_clear(CsCliWorld *w) {
  cs_routes_free(w->r);
  cs_topology_free(w->t);
  cs_scenario_free(w->s);
  *w = (CsCliWorld){NULL, NULL, NULL};
}
