/* cmd_model.c - `commsim model FILE.yaml`: the closed-form estimate of the
 * scenario's training iteration, with its formula and terms. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>

#include "commands.h"
#include "commsim/model.h"
#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"
#include "commsim/units.h"

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
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN];
  const CsWorkloadSpec *wl = &s->workload;
  printf("scenario     %s: %s, %u worker%s", s->name, cs_collective_name(wl->collective), t->n_workers,
         t->n_workers == 1 ? "" : "s");
  if (cs_collective_has(wl->collective, CS_COLLF_SERVERS)) printf(", %u server%s", t->n_servers, t->n_servers == 1 ? "" : "s");
  printf(", method %s, %u bucket%s\n", cs_codec_method_name(wl->compression.method), m.buckets, m.buckets == 1 ? "" : "s");
  printf("formula      %s\n", m.formula);
  printf("terms        %s\n", m.terms);
  printf("step = the busiest link direction's bytes (data and ACKs) over its bandwidth + the slowest path's latency\n"
         "       and %s terms (less what passes while a link sends messages that reach it later);\n"
         "       on the real routes, for the largest bucket (in the estimate, a message between two workers\n"
         "       takes its own path's terms and its own route's busiest direction):\n",
         t->cut_through ? "cut-through" : "store-and-forward");
  printf("  %-40s %5s %12s %12s %12s  %-16s %10s\n", "step", "count", "each_s", "busiest_s", "latency_s",
         "bound by", "its bytes");
  for (guint i = 0; i < m.steps->len; i++) {
    const CsModelStep *st = &g_array_index(m.steps, CsModelStep, i);
    const CsLink *l = &t->links[st->link];
    g_autofree char *link = g_strdup_printf("%s->%s", t->nodes[st->dir ? l->b : l->a].name,
                                            t->nodes[st->dir ? l->a : l->b].name);
    printf("  %-40s %5u %12.9f %12.9f %12.9f  %-16s %10s\n", st->label, st->count, st->seconds, st->bound_s,
           st->latency_s, link, cs_format_human_bytes(st->bound_bytes, b1));
  }
  printf("estimate     communication %.9f s (the network alone, buckets back to back: last worker", m.comm_s);
  if (fabs(m.comm_mean_s - m.comm_s) > 1e-12) printf("; %.9f s mean over workers", m.comm_mean_s);
  printf(")\n");
  printf("             codec %.9f s per worker", m.codec_s);
  if (cs_collective_has(wl->collective, CS_COLLF_SERVERS)) printf(", summing on the servers %.9f s on the critical path", m.server_s);
  printf(", compute %.9f s\n", m.compute_s);
  printf("             iteration %.9f s with no overlap, %.9f s with buckets communicated during the backward pass\n"
         "             (mean over workers; the last worker %.9f s)\n",
         m.iter_serial_s, m.iter_overlap_s, m.iter_last_s);
  printf("             payload a worker sends per iteration: %s\n", cs_format_human_bytes(m.wire_bytes, b2));
  printf("(the collective alone on the real routes: windows, queues, drops, loss, background traffic and stragglers "
         "are what `commsim run` adds)\n");
  if (cs_collective_has(wl->collective, CS_COLLF_SERVERS) && !wl->sync)
    printf("(sync: false: this is the synchronous ps's estimate; the asynchronous one's staleness and overlap are "
           "`commsim run`'s)\n");
  cs_model_clear(&m);
  cs_cli_world_clear(&w);
  return CS_EXIT_OK;
}
