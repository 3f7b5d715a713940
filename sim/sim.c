/* sim.c - assembling and running one simulation. */
#include "config.h"

#include <string.h>

#include "commsim/csv.h"
#include "commsim/sim.h"

struct CsSim {
  const CsScenario *s;
  CsTopology *t;
  CsRoutes *r;
  CsEngine *e;
  CsNet *net;
  uint32_t flows_started;
  uint32_t *flow_msg; /* flows[i] is message flow_msg[i] */
  uint32_t failed;
  CsTime end;
  double wall;
};

static void on_idle(CsNet *net, void *ctx);

CsSim *cs_sim_new(const CsScenario *s, GError **error) {
  CsSim *sim = g_new0(CsSim, 1);
  sim->s = s;
  sim->t = cs_topology_build(s, error);
  if (!sim->t) goto fail;
  sim->r = cs_routes_build(sim->t, s->routing, error);
  if (!sim->r) {
    g_prefix_error(error, "%s: ", s->file);
    goto fail;
  }
  sim->e = cs_engine_new();
  sim->net = cs_net_new(sim->e, s, sim->t, sim->r);
  cs_net_set_idle_fn(sim->net, on_idle, sim);
  return sim;
fail:
  cs_sim_free(sim);
  return NULL;
}

void cs_sim_free(CsSim *sim) {
  if (!sim) return;
  cs_net_free(sim->net);
  cs_engine_free(sim->e);
  cs_routes_free(sim->r);
  cs_topology_free(sim->t);
  g_free(sim->flow_msg);
  g_free(sim);
}

static bool work_done(CsSim *sim) {
  return sim->flows_started == sim->s->flows->len && cs_net_active(sim->net) == 0;
}

static void on_delivered(CsNet *net, void *ctx, uint32_t msg, bool failed) {
  (void)net, (void)msg;
  CsSim *sim = ctx;
  if (failed) sim->failed++;
}

/* Every message finished: stop, unless more flows are still to start. */
static void on_idle(CsNet *net, void *ctx) {
  (void)net;
  CsSim *sim = ctx;
  if (work_done(sim)) {
    cs_net_stop_background(sim->net);
    cs_engine_stop(sim->e);
  }
}

static void on_flow_start(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  CsSim *sim = ctx;
  const CsFlowSpec *f = &g_array_index(sim->s->flows, CsFlowSpec, arg);
  uint32_t src = (uint32_t)sim->t->nodes[cs_topology_find(sim->t, f->src)].host;
  uint32_t dst = (uint32_t)sim->t->nodes[cs_topology_find(sim->t, f->dst)].host;
  sim->flows_started++;
  sim->flow_msg[arg] = cs_net_send(sim->net, src, dst, (uint64_t)f->size, on_delivered, sim);
}

bool cs_sim_run(CsSim *sim, GError **error) {
  const CsScenario *s = sim->s;
  gint64 t0 = g_get_monotonic_time();
  sim->flow_msg = g_new(uint32_t, s->flows->len + 1);
  memset(sim->flow_msg, 0xff, sizeof(uint32_t) * (s->flows->len + 1)); /* not started */
  for (guint i = 0; i < s->flows->len; i++)
    cs_engine_schedule_at(sim->e, g_array_index(s->flows, CsFlowSpec, i).start, on_flow_start, sim, i);
  cs_net_start_background(sim->net);
  CsTime until = s->duration > 0 ? s->duration : CS_TIME_MAX;
  CsRunResult r = work_done(sim) && s->background->len == 0 ? CS_RUN_EMPTY : cs_engine_run(sim->e, until);
  sim->end = cs_engine_now(sim->e);
  sim->wall = (double)(g_get_monotonic_time() - t0) * 1e-6;
  if (r == CS_RUN_OVERFLOW) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: simulated time would pass 9223372s (2^63 ps); the run stopped at %.6f s", s->file,
                (double)sim->end * 1e-12);
    return false;
  }
  return cs_net_check_accounting(sim->net, error);
}

CsEngine *cs_sim_engine(CsSim *sim) { return sim->e; }
CsNet *cs_sim_net(CsSim *sim) { return sim->net; }
const CsTopology *cs_sim_topology(const CsSim *sim) { return sim->t; }
CsTime cs_sim_end_time(const CsSim *sim) { return sim->end; }
double cs_sim_wall_seconds(const CsSim *sim) { return sim->wall; }
uint32_t cs_sim_failed(const CsSim *sim) { return sim->failed; }

uint32_t cs_sim_unfinished(const CsSim *sim) {
  uint32_t n = sim->s->flows->len - sim->flows_started;
  for (uint32_t m = 0; m < cs_net_messages(sim->net); m++) {
    const CsMessageStats *st = cs_net_message(sim->net, m);
    n += !st->delivered && !st->failed;
  }
  return n;
}

static bool write_messages(CsSim *sim, const char *dir, GError **error) {
  static const char *cols[] = {"iteration", "step", "src", "dst", "payload_bytes", "wire_bytes",
                               "start_s",   "end_s", "retransmissions", NULL};
  CsCsv *c = cs_csv_open(dir, "messages.csv", cols, error);
  if (!c) return false;
  for (uint32_t i = 0; i < sim->s->flows->len; i++) {
    if (sim->flow_msg[i] == UINT32_MAX) continue; /* `duration` ended the run before it started */
    const CsMessageStats *st = cs_net_message(sim->net, sim->flow_msg[i]);
    cs_csv_uint(c, 0); /* raw transfers: iteration 0, step = the flow's index */
    cs_csv_uint(c, i);
    cs_csv_str(c, sim->t->nodes[sim->t->hosts[st->src]].name);
    cs_csv_str(c, sim->t->nodes[sim->t->hosts[st->dst]].name);
    cs_csv_uint(c, st->payload);
    cs_csv_uint(c, st->wire_bytes);
    cs_csv_time(c, st->start);
    if (st->delivered) cs_csv_time(c, st->end);
    else cs_csv_empty(c); /* not delivered: no end */
    cs_csv_uint(c, st->retransmissions);
    cs_csv_end_row(c);
  }
  return cs_csv_close(c, error);
}

bool cs_sim_write_outputs(CsSim *sim, const char *dir, GError **error) {
  if ((sim->s->output.traces & CS_TRACE_MESSAGES) && !write_messages(sim, dir, error)) return false;
  return true;
}
