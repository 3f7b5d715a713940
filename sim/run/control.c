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

/* Every message finished: stop, unless more work is to come (and the
 * watchdog rests until messages are outstanding again). */
void cs_sim_on_idle(void *ctx) {
  CsSim *sim = ctx;
  if (sim->wd_armed) {
    cs_engine_cancel(sim->e, sim->wd_event);
    sim->wd_armed = false;
  }
  stop_if_done(sim);
}

static void on_workload_done(void *ctx) { stop_if_done(ctx); }

/* The watchdog: every half `watchdog` of simulated time while messages
 * are outstanding (the engine's hook arms it again when they are after a
 * pause), no data packet delivered since a check a whole `watchdog` ago
 * ends the run.  It ticks only while messages are outstanding, so a long
 * compute adds no event. */
static void on_watchdog(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  CsSim *sim = ctx;
  CsTime now = cs_engine_now(e);
  uint64_t p = cs_fabric_totals(sim->fabric).data.delivered;
  if (cs_fabric_active(sim->fabric) == 0) {
    sim->wd_armed = false;
    return;
  }
  if (p != sim->wd_progress) {
    sim->wd_progress = p;
    sim->wd_since = now;
  } else if (now - sim->wd_since >= sim->s->watchdog) {
    sim->wd_fired = true;
    cs_engine_stop(e);
    return;
  }
  sim->wd_event = cs_engine_schedule(e, sim->s->watchdog / 2, on_watchdog, sim, 0);
}

static void arm_watchdog(CsSim *sim) {
  if (sim->s->watchdog <= 0 || !(sim->fabric->models & CS_MODELS_PACKETS)) return;
  sim->wd_armed = true;
  sim->wd_progress = cs_fabric_totals(sim->fabric).data.delivered;
  sim->wd_since = cs_engine_now(sim->e);
  sim->wd_event = cs_engine_schedule(sim->e, sim->s->watchdog / 2, on_watchdog, sim, 0);
}

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
  uint32_t failed = sim->retired_failed;
  for (uint32_t m = cs_fabric_first_message(sim->fabric); m < cs_fabric_messages(sim->fabric); m++)
    failed += cs_fabric_message(sim->fabric, m)->failed;
  sim->failed = failed;
}

void cs_sim_set_progress(CsSim *sim, CsProgressFn fn, void *ctx) {
  sim->progress = fn;
  sim->progress_ctx = ctx;
}

void cs_sim_install_hook(CsSim *sim);

void cs_sim_set_interrupt(CsSim *sim, volatile sig_atomic_t *flag) {
  sim->interrupt = flag;
  cs_sim_install_hook(sim);
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
  if (!sim->wd_armed && sim->running && cs_fabric_active(sim->fabric) > 0) arm_watchdog(sim);
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
  /* the network's check reads every packet it holds: run it at most once
   * per as many events, so that it costs each event O(1) however many
   * packets are in flight (86,540 at once made resnet50-4x8 take a
   * minute) */
  uint64_t ev = cs_engine_events_executed(e);
  if (ev - sim->last_full_check < cs_fabric_totals(sim->fabric).pool_packets) return true;
  sim->last_full_check = ev;
  return cs_fabric_check_state(sim->fabric, &sim->check_error);
}

void cs_sim_install_hook(CsSim *sim) {
  bool want = sim->checks || sim->interrupt || (sim->s->watchdog > 0 && (sim->fabric->models & CS_MODELS_PACKETS));
  cs_engine_set_hook(sim->e, want ? CS_SIM_CHECK_EVERY : 0, check_hook, sim);
}

void cs_sim_set_checks(CsSim *sim, bool on) {
  sim->checks = on;
  cs_sim_install_hook(sim);
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
    for (uint32_t m = cs_fabric_first_message(sim->fabric); m < cs_fabric_messages(sim->fabric); m++)
      k += cs_fabric_message(sim->fabric, m)->delivered;
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

/* A run that cannot go on: why, then the messages left unfinished. */
static bool stuck_error(CsSim *sim, const char *why, GError **error) {
  GString *m = g_string_new(NULL);
  uint32_t n = 0, shown = 0;
  for (uint32_t i = cs_fabric_first_message(sim->fabric); i < cs_fabric_messages(sim->fabric); i++) {
    const CsMessageStats *x = cs_fabric_message(sim->fabric, i);
    if (x->delivered || x->failed) continue;
    if (shown < 5) {
      g_string_append_printf(m, "%smessage %u (%s -> %s, %" G_GUINT64_FORMAT " B, sent at %.6f s)", shown ? ", " : "", i,
                             sim->t->nodes[sim->t->hosts[x->src]].name, sim->t->nodes[sim->t->hosts[x->dst]].name,
                             (guint64)x->payload, (double)x->start * 1e-12);
      shown++;
    }
    n++;
  }
  /* what ran adds up all the same (packets held where they wait): the
   * caller may write the result files up to then */
  if (!cs_fabric_check_accounting(sim->fabric, error)) {
    g_string_free(m, TRUE);
    return false;
  }
  g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_STUCK, "%s: error: %s; %u message%s unfinished%s%s%s",
              sim->s->file, why, n, n == 1 ? "" : "s", n ? ": " : "", m->str, n > shown ? ", ..." : "");
  g_string_free(m, TRUE);
  return false;
}

static void on_background_end(CsEngine *e, void *ctx, uint64_t arg) { (void)e, (void)ctx, (void)arg; }

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
  /* fluid background sources (flow fidelity) take no event of their own: a
   * run of background alone goes on to `duration` all the same */
  if (s->background->len > 0 && s->duration > 0 && !(sim->fabric->models & CS_MODELS_PACKETS))
    cs_engine_schedule_at(sim->e, s->duration, on_background_end, sim, 0);
  sim->running = true;
  arm_watchdog(sim);
  CsTime until = s->duration > 0 ? s->duration : CS_TIME_MAX;
  cs_engine_set_horizon(sim->e, until);
  CsRunResult r = work_done(sim) && s->background->len == 0 ? CS_RUN_EMPTY
                 : sim->progress                           ? run_with_progress(sim, until)
                                                           : cs_engine_run(sim->e, until);
  sim->end = cs_engine_now(sim->e);
  cs_fabric_run_ends(sim->fabric); /* messages still in progress: what they sent */
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
  g_autofree char *stuck = cs_fabric_stuck(sim->fabric);
  if (stuck) return stuck_error(sim, stuck, error);
  if (sim->wd_fired) {
    g_autofree char *why = g_strdup_printf("the watchdog ended the run at %.6f s: no data packet delivered for %.6f s "
                                           "(watchdog: %.6f s)",
                                           (double)sim->end * 1e-12, (double)(sim->end - sim->wd_since) * 1e-12,
                                           (double)s->watchdog * 1e-12);
    return stuck_error(sim, why, error);
  }
  if (r == CS_RUN_EMPTY && until == CS_TIME_MAX && cs_fabric_active(sim->fabric) > 0 && !cs_engine_overflowed(sim->e))
    return stuck_error(sim, "nothing left to happen, yet messages are outstanding", error);
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

