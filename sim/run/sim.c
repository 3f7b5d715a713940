/* sim.c - assembling one simulation: its world, network, workload and
 * sampling plan; what the other files of the run layer read back. */
#include "config.h"

#include "sim_private.h"


/* How long the run will last, which link directions it will use and
 * how many messages it will send (*messages), roughly and before running:
 * the model's iterations for the workload (on an idle network, so on the
 * short side; the messages of its plan, every bucket's), each flow alone
 * at its path's slowest link, and the background sources' paths. */
static double estimate_run(const CsScenario *s, const CsTopology *t, const CsRoutes *r, uint8_t *used,
                           double *messages) {
  double end = 0, workload_messages = 0;
  if (s->workload.present) {
    CsModel m;
    if (cs_model_estimate(s, t, r, &m, NULL)) {
      end = m.iter_overlap_s * (double)s->workload.iterations;
      for (uint32_t d = 0; d < 2 * t->n_links; d++) used[d] |= m.dirs_used[d];
      workload_messages = m.messages * (double)s->workload.iterations;
      cs_model_clear(&m);
    }
  }
  uint32_t *ports = g_new(uint32_t, t->n_nodes + 1);
  for (int k = 0; k < 2; k++) {
    guint n = k == 0 ? s->flows->len : s->background->len;
    for (guint i = 0; i < n; i++) {
      const char *src = k == 0 ? g_array_index(s->flows, CsFlowSpec, i).src : g_array_index(s->background, CsBackgroundSpec, i).src;
      const char *dst = k == 0 ? g_array_index(s->flows, CsFlowSpec, i).dst : g_array_index(s->background, CsBackgroundSpec, i).dst;
      uint32_t a = (uint32_t)cs_topology_find(t, src), b = (uint32_t)cs_topology_find(t, dst);
      double lat = 0, bmin = INFINITY;
      for (int dir = 0; dir < 2; dir++) { /* data one way, ACKs the other */
        int h = cs_routes_path(r, dir ? b : a, (uint32_t)t->nodes[dir ? a : b].host, 0, ports, (int)t->n_nodes);
        for (int j = 0; j < h; j++) {
          const CsPort *pt = &t->ports[ports[j]];
          used[2 * pt->link + pt->dir] = 1;
          if (dir == 0) {
            lat += (double)t->links[pt->link].spec.latency * 1e-12;
            bmin = fmin(bmin, (double)t->links[pt->link].spec.bandwidth);
          }
        }
      }
      if (k == 0) {
        const CsFlowSpec *f = &g_array_index(s->flows, CsFlowSpec, i);
        end = fmax(end, (double)f->start * 1e-12 + lat + (double)f->size * 8.0 * s->transport.mtu /
                                                          (double)(s->transport.mtu - s->transport.header) / bmin);
      }
    }
  }
  g_free(ports);
  double cut = (double)s->duration * 1e-12; /* 0: none */
  if (cut > 0 && end > cut) workload_messages *= cut / end;
  *messages = workload_messages + (double)s->flows->len;
  if (cut > 0 && (end == 0 || end > cut)) end = cut;
  return end;
}

/* messages.csv past this (by estimate_run): run says so before it starts. */
#define MESSAGES_NOTE_BYTES (1.0 * (1 << 30))
#define MESSAGES_ROW_BYTES 62.0 /* a ring's rows at 16,384 workers: 33,447,554,535 bytes in 537 M */

/* links.csv (and timeline.json's queue counters) sample every link
 * direction every sample_interval.  An interval that would take more than
 * nine tenths of CS_SIM_MAX_SAMPLES samples or CS_SIM_MAX_LINK_ROWS rows
 * (by estimate_run; the last tenth is for a run that outlasts it, which
 * the run's own check handles, traces.c) is raised, with a note, to the
 * smallest of 1, 2, 5 x 10^k ps that does not; cs_sim_set_force keeps
 * it.  validate shows the same plan.  *end_s and *n_dirs: the estimate
 * itself (the run's length and its link directions), for that check. */
static CsTime plan_sampling(const CsScenario *s, const CsTopology *t, const CsRoutes *r, char **note, double *end_s,
                            uint32_t *n_dirs, char **messages_note) {
  *note = NULL;
  *end_s = 0, *n_dirs = 0;
  if (messages_note) *messages_note = NULL;
  if (!(s->output.traces & (CS_TRACE_LINKS | CS_TRACE_TIMELINE))) return s->output.sample_interval;
  uint8_t *used = g_new0(uint8_t, 2 * (size_t)t->n_links + 1);
  double messages;
  double end = estimate_run(s, t, r, used, &messages);
  if (messages_note && (s->output.traces & CS_TRACE_MESSAGES) && messages * MESSAGES_ROW_BYTES > MESSAGES_NOTE_BYTES) {
    char b1[CS_FORMAT_LEN];
    *messages_note = g_strdup_printf("%s: note: messages.csv will hold about %.3g M rows, about %s (a row per message: the "
                                     "collective's, every bucket and iteration, and the raw flows); leave messages out of "
                                     "output.traces unless you want it (say --set 'output.traces=[summary, iterations, links]')",
                                     s->file, messages / 1e6, cs_format_human_bytes(messages * MESSAGES_ROW_BYTES, b1));
  }
  uint32_t dirs = 0;
  for (uint32_t d = 0; d < 2 * t->n_links; d++) dirs += used[d];
  g_free(used);
  *end_s = end, *n_dirs = dirs;
  double iv = (double)s->output.sample_interval * 1e-12;
  double samples = end / iv, rows = samples * dirs;
  if (samples <= CS_SIM_PLAN_SHARE * CS_SIM_MAX_SAMPLES && rows <= CS_SIM_PLAN_SHARE * CS_SIM_MAX_LINK_ROWS)
    return s->output.sample_interval;
  double want = fmax(end / (CS_SIM_PLAN_SHARE * CS_SIM_MAX_SAMPLES), end * dirs / (CS_SIM_PLAN_SHARE * CS_SIM_MAX_LINK_ROWS));
  CsTime raised = 0;
  for (CsTime decade = 1; !raised && decade <= CS_TIME_MAX / 10; decade *= 10)
    for (int m = 1; m <= 5 && !raised; m += m == 1 ? 1 : 3) /* 1, 2, 5 */
      if ((double)(m * decade) * 1e-12 >= want) raised = m * decade;
  if (!raised) raised = CS_TIME_MAX / 10;
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN], b3[CS_FORMAT_LEN];
  *note = g_strdup_printf("%s: warning: output.sample_interval %s would take about %.3g samples and %.3g rows of "
                              "%s (about %s of simulated time over %u link directions), past nine tenths of the limits (2M rows, "
                              "10M samples; the rest is for a run that outlasts the estimate): raised to %s; "
                              "--force keeps %s",
                              s->file, cs_format_time(s->output.sample_interval, b1), samples, rows,
                              cs_sim_sampled_what(s), cs_format_human_seconds(end, b3), dirs, cs_format_time(raised, b2),
                              cs_format_time(s->output.sample_interval, b1));
  return raised;
}

CsTime cs_sim_plan_sampling(const CsScenario *s, const CsTopology *t, const CsRoutes *r, char **note,
                            char **messages_note) {
  double end;
  uint32_t dirs;
  return plan_sampling(s, t, r, note, &end, &dirs, messages_note);
}

const char *cs_sim_sampled_what(const CsScenario *s) {
  return s->output.traces & CS_TRACE_LINKS ? "links.csv" : "timeline.json's queue counters";
}

void cs_sim_set_force(CsSim *sim, bool force) {
  sim->force = force;
  if (!force) return;
  sim->sample_interval = sim->s->output.sample_interval;
  g_clear_pointer(&sim->note, g_free);
}

const char *cs_sim_note(const CsSim *sim) { return sim->note; }
const char *cs_sim_late_note(const CsSim *sim) { return sim->late_note; }
const char *cs_sim_scenario_note(const CsSim *sim) { return sim->scenario_note; }
const char *cs_sim_messages_note(const CsSim *sim) { return sim->messages_note; }

/* cs_sim_scenario_note's lines, from the scenario, its topology and the fidelity. */
static char *scenario_notes(const CsScenario *s, const CsTopology *t, unsigned models) {
  GString *n = g_string_new(NULL);
  const CsLoc file = {s->file, 0, 0};
  if (s->hybrid_at.file && !(models & CS_MODELS_JUMPS))
    cs_note_at(n, s->hybrid_at, "the hybrid: section has no effect at fidelity %s", cs_fidelities[s->fidelity].name);
  bool marks = false, lossy = false;
  for (uint32_t l = 0; l < t->n_links; l++) {
    marks |= t->links[l].spec.ecn_kmax > 0 || t->links[l].spec.queue == CS_QUEUE_ECN;
    lossy |= cs_loss_mean(&t->links[l].spec.loss) > 0;
  }
  bool roce = s->transport.protocol == CS_PROTO_ROCE;
  /* DCQCN hears of congestion by ECN marks alone */
  if (roce && s->transport.roce_cc == CS_ROCE_CC_DCQCN && (models & CS_MODELS_PACKETS) && !marks)
    cs_note_at(n, file, "cc dcqcn, but no link marks ECN (ecn: {kmin, kmax, pmax} or queue: ecn): no congestion "
               "notification is ever sent and every queue pair stays at its line rate");
  /* loss is a cap without packets, not packets lost and resent; roce is
   * not capped (loss_cap): its retransmissions are charged as bytes,
   * go-back-n's round trip of packets per loss among them, and its
   * timeouts are not modelled (tests/test_roce.c, docs/network.md) */
  if (lossy && !(models & CS_MODELS_PACKETS) && roce)
    cs_note_at(n, file, "at fidelity %s a roce flow on a lossy route carries its retransmissions (go-back-n: a round "
               "trip of packets per loss) but never times out: within 1 %% of the packet fidelity's time up to 1 %% "
               "loss, faster above (at 3 %%: go-back-n 0.69, selective 0.93 of it); use fidelity packet there",
               cs_fidelities[s->fidelity].name);
  else if (lossy && !(models & CS_MODELS_PACKETS))
    cs_note_at(n, file, "at fidelity %s a flow on a lossy route runs at most at the Mathis rate of a long flow: with "
               "loss its times are a bound, not a measure (resnet50-lossy-link: 0.64 of the packet fidelity's "
               "iteration); use fidelity packet", cs_fidelities[s->fidelity].name);
  return g_string_free(n, n->len == 0);
}
CsTime cs_sim_sample_interval(const CsSim *sim) { return sim->sample_interval; }

/* A retired message's wire bytes for its worker (a run cut by duration
 * reports what each worker's iterations carried). */
static G_GNUC_NO_INLINE void retire_host_wire(CsSim *sim, uint32_t it, const CsMessageStats *st) {
  struct RetireHost *h = &sim->retire_host[st->src];
  if (it != h->iter) h->iter = it, h->wire = 0; /* (a worker's iterations retire in order) */
  h->wire += (double)st->wire_bytes;
}

/* The first message of an iteration not seen yet: the array grows. */
static G_GNUC_NO_INLINE void retire_wire_grown(CsSim *sim, uint32_t it, const CsMessageStats *st) {
  g_array_set_size(sim->retired_wire, it + 1);
  g_array_index(sim->retired_wire, double, it) += (double)st->wire_bytes;
  if (sim->retire_host != NULL) retire_host_wire(sim, it, st);
}

/* A finished message the fabric forgets: what the summary and the
 * failure count need of it.  Once per message when no trace lists them:
 * the rarer cases above are calls in last position, so that the common
 * one runs without a frame. */
static void on_retire(void *ctx, uint32_t msg, const CsMessageStats *st) {
  (void)msg;
  CsSim *sim = ctx;
  sim->retired_failed += st->failed;
  uint32_t it = st->iteration;
  if (!sim->worker_host[st->src] || it == 0) return; /* a flat array: the nodes' records are far apart in memory; iteration 0: flows */
  if (G_UNLIKELY(it >= sim->retired_wire->len)) {
    retire_wire_grown(sim, it, st);
    return;
  }
  g_array_index(sim->retired_wire, double, it) += (double)st->wire_bytes;
  if (G_UNLIKELY(sim->retire_host != NULL)) retire_host_wire(sim, it, st);
}

/* The same, messages.csv's row first (its own function: on_retire runs
 * without a frame, and a call inside it would cost one per message). */
static void on_retire_row(void *ctx, uint32_t msg, const CsMessageStats *st) {
  CsSim *sim = ctx;
  cs_sim_message_row(sim, sim->messages_csv, st);
  on_retire(ctx, msg, st);
}

void cs_sim_retire_messages(CsSim *sim) {
  g_assert(sim->worker_host == NULL && sim->s->flows->len == 0);
  sim->worker_host = g_new0(uint8_t, sim->t->n_hosts + 1);
  for (uint32_t w = 0; w < sim->t->n_workers; w++) sim->worker_host[sim->t->nodes[sim->t->workers[w]].host] = 1;
  if (sim->s->duration > 0) {
    sim->retire_host = g_new0(struct RetireHost, sim->t->n_hosts + 1);
    for (uint32_t w = 0; w < sim->t->n_workers; w++) sim->retire_host[sim->t->nodes[sim->t->workers[w]].host].worker = w + 1;
  }
  cs_fabric_set_retire(sim->fabric, sim->messages_csv ? on_retire_row : on_retire, sim);
}

CsSim *cs_sim_new(const CsScenario *s, GError **error) {
  CsSim *sim = g_new0(CsSim, 1);
  sim->s = s;
  sim->t = cs_topology_build(s, error);
  for (uint32_t l = 0; sim->t && l < sim->t->n_links; l++) sim->pfc |= sim->t->links[l].spec.pfc_xoff > 0;
  if (!sim->t) goto fail;
  sim->r = cs_scenario_routes(s, sim->t, error);
  if (!sim->r || !cs_scenario_check(s, sim->t, sim->r, error)) goto fail;
  sim->e = cs_engine_new();
  sim->net_config = cs_scenario_net_config(s);
  sim->fabric = cs_fabric_new(&cs_fidelities[s->fidelity], sim->e, &sim->net_config, sim->t, sim->r);
  cs_fabric_set_idle(sim->fabric, cs_sim_on_idle, sim);
  /* without a trace that lists every message (and raw flows, which run
   * prints), the fabric may forget finished ones: a ring of 4,096 workers
   * sends 33.5 M (with messages.csv it may too, once the file is open:
   * cs_sim_open_traces) */
  sim->retired_wire = g_array_new(FALSE, TRUE, sizeof(double));
  if (!(s->output.traces & (CS_TRACE_MESSAGES | CS_TRACE_TIMELINE)) && s->flows->len == 0) cs_sim_retire_messages(sim);
  sim->env = cs_coll_env_new(sim->e, sim->fabric, sim->t);
  if (s->workload.present) {
    sim->wl = cs_workload_new(sim->env, sim->e, &s->workload, s->seed, sim->t, error);
    if (!sim->wl) goto fail;
  }
  sim->sample_interval = plan_sampling(s, sim->t, sim->r, &sim->note, &sim->est_end_s, &sim->est_dirs, &sim->messages_note);
  sim->scenario_note = scenario_notes(s, sim->t, cs_fidelities[s->fidelity].models);
  sim->budget_rows = CS_SIM_MAX_LINK_ROWS;
  sim->budget_passes = CS_SIM_MAX_SAMPLES;
  cs_sim_install_hook(sim);
  return sim;
fail:
  cs_sim_free(sim);
  return NULL;
}

void cs_sim_free(CsSim *sim) {
  if (!sim) return;
  if (sim->retired_wire) g_array_free(sim->retired_wire, TRUE);
  g_free(sim->worker_host);
  g_free(sim->retire_host);
  if (sim->links_csv) cs_csv_abort(sim->links_csv);
  if (sim->packets_csv) cs_csv_abort(sim->packets_csv);
  if (sim->messages_csv) cs_csv_abort(sim->messages_csv);
  g_free(sim->outdir);
  g_free(sim->note);
  g_free(sim->messages_note);
  g_free(sim->late_note);
  g_free(sim->scenario_note);
  g_clear_error(&sim->trace_error);
  g_clear_error(&sim->check_error);
  if (sim->queue_samples) g_array_free(sim->queue_samples, TRUE);
  g_free(sim->queue_shown);
  g_free(sim->queue_seen);
  cs_workload_free(sim->wl);
  cs_coll_env_free(sim->env);
  if (sim->conv) g_array_free(sim->conv, TRUE);
  if (sim->conv_time) g_array_free(sim->conv_time, TRUE);
  cs_fabric_free(sim->fabric);
  cs_engine_free(sim->e);
  cs_routes_free(sim->r);
  cs_topology_free(sim->t);
  g_free(sim);
}

CsEngine *cs_sim_engine(CsSim *sim) { return sim->e; }
uint64_t cs_sim_events(const CsSim *sim) {
  /* hybrid's watch is left out, as the sampler is: a trace changes no count */
  return cs_engine_events_executed(sim->e) - cs_fabric_totals(sim->fabric).watch_events;
}
CsFabric *cs_sim_fabric(CsSim *sim) { return sim->fabric; }
CsNet *cs_sim_net(CsSim *sim) { return sim->fabric->ops == cs_fidelities[0].ops ? sim->fabric->impl : NULL; }
const CsTopology *cs_sim_topology(const CsSim *sim) { return sim->t; }
CsWorkload *cs_sim_workload(CsSim *sim) { return sim->wl; }
CsTime cs_sim_end_time(const CsSim *sim) { return sim->end; }
double cs_sim_wall_seconds(const CsSim *sim) { return sim->wall; }
uint32_t cs_sim_failed(const CsSim *sim) { return sim->failed; }

uint32_t cs_sim_unfinished(const CsSim *sim) {
  uint32_t n = sim->s->flows->len - sim->flows_started;
  for (uint32_t m = cs_fabric_first_message(sim->fabric); m < cs_fabric_messages(sim->fabric); m++) {
    const CsMessageStats *st = cs_fabric_message(sim->fabric, m);
    n += !st->delivered && !st->failed;
  }
  return n;
}

uint32_t cs_sim_unfinished_workers(const CsSim *sim) {
  if (!sim->wl) return 0;
  uint32_t n = 0, it = cs_workload_iterations(sim->wl);
  for (uint32_t w = 0; w < cs_workload_workers(sim->wl); w++) n += cs_workload_record(sim->wl, w, it) == NULL;
  return n;
}

