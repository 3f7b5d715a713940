/* cmd_model.c - `commsim model FILE.yaml`: the closed-form estimate of the
 * scenario's training iteration, with its formula and terms. */
#include "config.h"

#include <glib.h>
#include <stdio.h>

#include "commands.h"
#include "commsim/model.h"
#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"

int cs_cmd_model(int argc, char **argv) {
  g_auto(GStrv) sets = NULL;
  GOptionEntry entries[] = {
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scalar by its dotted key", "KEY=VALUE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("FILE.yaml");
  g_option_context_set_summary(ctx, "Closed-form (alpha-beta) estimate of the scenario's iteration: no simulation.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "commsim model: %s\n", error->message);
    return CS_EXIT_USAGE;
  }
  if (argc != 2) {
    fprintf(stderr, "commsim model: expected one scenario file (see 'commsim model --help')\n");
    return CS_EXIT_USAGE;
  }
  g_autoptr(CsScenario) s = cs_scenario_load(argv[1], (const char *const *)sets, &error);
  if (!s) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_USAGE;
  }
  g_autoptr(CsTopology) t = cs_topology_build(s, &error);
  if (!t) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_USAGE;
  }
  g_autoptr(CsRoutes) r = cs_routes_build(t, s->routing, &error);
  if (!r) {
    fprintf(stderr, "%s: %s\n", s->file, error->message);
    return CS_EXIT_USAGE;
  }
  CsModel m;
  if (!cs_model_estimate(s, t, r, &m, &error)) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_USAGE;
  }
  printf("scenario     %s: %s, %u workers, %u servers, method %s\n", s->name, cs_collective_name(s->workload.collective),
         t->n_workers, t->n_servers, s->workload.compression.method);
  printf("formula      %s\n", m.formula);
  printf("per message  T(m) = sum(L) + beta * (m + N header [+ N ack when both ways are busy]) + (h-1) beta S_last\n");
  printf("terms        %s\n", m.terms);
  printf("estimate     communication %.6f s, codec %.6f s, compute %.6f s\n", m.comm_s, m.codec_s, m.compute_s);
  printf("             iteration %.6f s with no overlap, %.6f s with communication hidden behind the backward pass\n",
         m.iter_serial_s, m.iter_overlap_s);
  printf("             payload bytes a worker sends per iteration: %.0f\n", m.wire_bytes);
  printf("(an idle network: congestion, loss, windows, queues and stragglers are what `commsim run` adds)\n");
  cs_model_clear(&m);
  return CS_EXIT_OK;
}
