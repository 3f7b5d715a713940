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
  CsCliWorld w;
  int status = cs_cli_load_world("model", "Closed-form (alpha-beta) estimate of the scenario's iteration: no simulation.",
                                 argc, argv, &w);
  if (status >= 0) return status;
  const CsScenario *s = w.s;
  const CsTopology *t = w.t;
  g_autoptr(GError) error = NULL;
  CsModel m;
  if (!cs_model_estimate(s, t, w.r, &m, &error)) {
    fprintf(stderr, "%s\n", error->message);
    cs_cli_world_clear(&w);
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
  cs_cli_world_clear(&w);
  return CS_EXIT_OK;
}
