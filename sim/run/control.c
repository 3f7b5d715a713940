/* control.c - running one simulation: flows started on time, the run
 * stopped when the work is done, progress, interrupts, --check. */
#include "config.h"

#include "sim_private.h"

static bool work_done(CsSim *sim) {
  return sim->flows_started == sim->s->flows->len && cs_fabric_active(sim->fabric) == 0 &&
         (!sim->wl || cs_workload_done(sim->wl));
}

static void stop_if_done(CsSim *sim) {
  /* a message abandoned leaves its collective waiting for ever: once
   * nothing else is in flight, the run is over (and reports it) */
  bool stuck = cs_fabric_failed(sim->fabric) > 0 && cs_fabric_active(sim->fabric) == 0 &&
               sim->flows_started == sim->s->flows->len;
  if (work_done(sim) || stuck) {
    cs_fabric_stop_background(sim->fabric);
    cs_engine_stop(sim->e);
  }
}

static void on_delivered(void *ctx, uint32_t msg, bool failed) {
  (void)msg;
  CsSim *sim = ctx;
  if (failed) sim->failed++;
}

/* Every message finished: stop, unless more work is to come. */
void cs_sim_on_idle(void *ctx) {
  stop_if_done(ctx);
}

static void on_workload_done(void *ctx) { stop_if_done(ctx); }

static void on_flow_start(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e;
  CsSim *sim = ctx;
  const CsFlowSpec *f = &g_array_index(sim->s->flows, CsFlowSpec, arg);
  uint32_t src = (uint32_t)sim->t->nodes[cs_topology_find(sim->t, f->src)].host;
  uint32_t dst = (uint32_t)sim->t->nodes[cs_topology_find(sim->t, f->dst)].host;
  sim->flows_started++;
  uint32_t msg = cs_fabric_send(sim->fabric, src, dst, (uint64_t)f->size, on_delivered, sim);
  cs_fabric_tag(sim->fabric, msg, 0, (uint32_t)arg); /* raw transfers: iteration 0, step = index */
}

/* Messages of collectives that fail are counted here too. */
static void count_failures(CsSim *sim) {
  uint32_t failed = 0;
  for (uint32_t m = 0; m < cs_fabric_messages(sim->fabric); m++) failed += cs_fabric_message(sim->fabric, m)->failed;
  sim->failed = failed;
}

void cs_sim_set_progress(CsSim *sim, CsProgressFn fn, void *ctx) {
  sim->progress = fn;
  sim->progress_ctx = ctx;
}

static void install_hook(CsSim *sim);

void cs_sim_set_interrupt(CsSim *sim, volatile sig_atomic_t *flag) {
  sim->interrupt = flag;
  install_hook(sim);
}
void cs_sim_set_reproducible(CsSim *sim, bool on) { sim->reproducible = on; }

/* Every CS_SIM_CHECK_EVERY events: stop if interrupted (so a signal is
 * seen within that many events, however long a progress slice); with
 * --check, time never went back and the network's expensive invariants
 * hold. */
static bool check_hook(CsEngine *e, void *ctx) {
  CsSim *sim = ctx;
  if (sim->interrupt && *sim->interrupt) {
    sim->interrupted = true;
    return false;
  }
  if (!sim->checks) return true;
  CsTime now = cs_engine_now(e);
  sim->checks_run++;
  if (now < sim->last_check) {
    g_set_error(&sim->check_error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERNAL,
                "internal error: simulated time went back from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                " ps (please report this as a bug)",
                (gint64)sim->last_check, (gint64)now);
    return false;
  }
  sim->last_check = now;
  return cs_fabric_check_state(sim->fabric, &sim->check_error);
}

static void install_hook(CsSim *sim) {
  bool want = sim->checks || sim->interrupt;
  cs_engine_set_hook(sim->e, want ? CS_SIM_CHECK_EVERY : 0, check_hook, sim);
}

void cs_sim_set_checks(CsSim *sim, bool on) {
  sim->checks = on;
  install_hook(sim);
}

uint64_t cs_sim_checks_run(const CsSim *sim) { return sim->checks_run; }

static double fraction_done(CsSim *sim) {
  const CsScenario *s = sim->s;
  if (sim->wl) {
    uint32_t P = cs_workload_workers(sim->wl), I = cs_workload_iterations(sim->wl), k = 0;
    for (uint32_t w = 0; w < P; w++)
      for (uint32_t i = 1; i <= I && cs_workload_record(sim->wl, w, i); i++) k++;
    return (double)k / ((double)P * I);
  }
  if (s->flows->len) {
    uint32_t k = 0;
    for (uint32_t m = 0; m < cs_fabric_messages(sim->fabric); m++) k += cs_fabric_message(sim->fabric, m)->delivered;
    return (double)k / s->flows->len;
  }
  if (s->duration > 0) return (double)cs_engine_now(sim->e) / (double)s->duration;
  return -1;
}

/* The engine in slices of simulated time sized to about a quarter second
 * of wall time each, reporting between them: the same events in the same
 * order as one run. */
static CsRunResult run_with_progress(CsSim *sim, CsTime until) {
  CsTime slice = 10 * CS_US;
  for (;;) {
    gint64 t0 = g_get_monotonic_time();
    CsTime now = cs_engine_now(sim->e);
    CsTime limit = until - now > slice ? now + slice : until;
    CsRunResult r = cs_engine_run(sim->e, limit);
    if (r != CS_RUN_LIMIT || limit == until) return r;
    gint64 dt = g_get_monotonic_time() - t0;
    if (dt < 100000 && slice < CS_TIME_MAX / 4) slice *= 2;
    else if (dt > 400000 && slice > 1) slice /= 2;
    sim->progress(sim->progress_ctx, cs_engine_now(sim->e), cs_sim_events(sim), fraction_done(sim));
  }
}

void cs_sim_set_output_dir(CsSim *sim, const char *dir) {
  g_free(sim->outdir);
  sim->outdir = g_strdup(dir);
}

bool cs_sim_run(CsSim *sim, GError **error) {
  const CsScenario *s = sim->s;
  gint64 t0 = g_get_monotonic_time();
  cs_sim_open_traces(sim);
  if (sim->trace_error) {
    g_propagate_error(error, sim->trace_error);
    sim->trace_error = NULL;
    return false;
  }
  for (guint i = 0; i < s->flows->len; i++)
    cs_engine_schedule_at(sim->e, g_array_index(s->flows, CsFlowSpec, i).start, on_flow_start, sim, i);
  if (sim->wl) cs_workload_start(sim->wl, on_workload_done, sim);
  cs_fabric_start_background(sim->fabric);
  CsTime until = s->duration > 0 ? s->duration : CS_TIME_MAX;
  CsRunResult r = work_done(sim) && s->background->len == 0 ? CS_RUN_EMPTY
                 : sim->progress                           ? run_with_progress(sim, until)
                                                           : cs_engine_run(sim->e, until);
  sim->end = cs_engine_now(sim->e);
  if ((sim->links_csv || sim->queue_samples) && sim->end > sim->last_sample)
    cs_sim_sample_links(sim); /* the last, partial interval */
  sim->wall = (double)(g_get_monotonic_time() - t0) * 1e-6;
  count_failures(sim);
  if (sim->interrupted) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED,
                "%s: interrupted at %.6f s of simulated time (%.1f s of wall time)", s->file,
                (double)sim->end * 1e-12, sim->wall);
    return false;
  }
  if (sim->check_error) {
    g_propagate_prefixed_error(error, sim->check_error, "%s: --check after %" G_GUINT64_FORMAT " events, at %.9f s: ",
                               s->file, cs_engine_events_executed(sim->e), (double)sim->end * 1e-12);
    sim->check_error = NULL;
    return false;
  }
  if (r == CS_RUN_OVERFLOW || (r == CS_RUN_EMPTY && until == CS_TIME_MAX && cs_engine_overflowed(sim->e))) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: simulated time would pass 9223372s (2^63 ps); the run stopped at %.6f s", s->file,
                (double)sim->end * 1e-12);
    return false;
  }
  if (!cs_fabric_check_accounting(sim->fabric, error)) return false;
  if (sim->checks && !cs_fabric_check_state(sim->fabric, error)) return false;
  return cs_sim_train(sim, error);
}

