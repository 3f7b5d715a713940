/* traces.c - the files written while the run goes: links.csv samples,
 * packets.csv rows, timeline.json's queue counters. */
#include "config.h"

#include "sim_private.h"

/* ---- traces written while the run goes ---- */

static const char *node_name(const CsSim *sim, uint32_t n) { return sim->t->nodes[n].name; }

static void queue_counter(CsSim *sim, uint32_t di, uint64_t bytes) {
  if (sim->queue_shown[di] == bytes) return;
  sim->queue_shown[di] = bytes;
  QueueSample q = {sim->last_sample, di, bytes};
  g_array_append_val(sim->queue_samples, q);
}

static void link_row(void *ctx, uint32_t link, int dir, const CsLinkSample *x) {
  CsSim *sim = ctx;
  sim->rows++;
  if (sim->queue_samples && (sim->fabric->models & CS_MODELS_PACKETS)) { /* a fluid model has no queues */
    sim->queue_seen[2 * link + (uint32_t)dir] = sim->sample_pass;
    queue_counter(sim, 2 * link + (uint32_t)dir, x->queue_max);
  }
  CsCsv *c = sim->links_csv;
  if (!c) return;
  const CsLink *l = &sim->t->links[link];
  cs_csv_str(c, node_name(sim, dir ? l->b : l->a));
  cs_csv_str(c, node_name(sim, dir ? l->a : l->b));
  cs_csv_time(c, sim->last_sample);
  cs_csv_time(c, cs_engine_now(sim->e));
  cs_csv_uint(c, x->bytes);
  cs_csv_real(c, x->utilization);
  if (sim->fabric->models & CS_MODELS_PACKETS) {
    cs_csv_real(c, x->queue_mean);
    cs_csv_uint(c, x->queue_max);
    cs_csv_uint(c, x->drops);
    cs_csv_uint(c, x->losses);
    cs_csv_uint(c, x->marks);
    if (x->paused_s > 0) cs_csv_real(c, x->paused_s);
    else cs_csv_uint(c, 0); /* no PFC, or not paused: the common case, without formatting a real */
  } else { /* queues, drops, losses, marks and pauses are not modelled */
    for (int i = 0; i < 6; i++) cs_csv_empty(c);
  }
  cs_csv_end_row(c);
}

void cs_sim_sample_links(CsSim *sim) {
  sim->sample_pass++;
  cs_fabric_sample_links(sim->fabric, sim->last_sample, link_row, sim);
  if (sim->queue_samples) /* directions idle over the whole interval: back to 0 */
    for (uint32_t di = 0; di < 2 * sim->t->n_links; di++)
      if (sim->queue_seen[di] != sim->sample_pass) queue_counter(sim, di, 0);
  sim->last_sample = cs_engine_now(sim->e);
}

/* Where the first stage ends: past the plan's estimate (by 5 %) and past
 * nine tenths of the limit, at most at the limit.  The plan keeps the
 * estimate within nine tenths (CS_SIM_PLAN_SHARE): a run it got right is
 * left alone, and one that outlasts it keeps at least a twentieth of the
 * limit for the stages after. */
static double first_stage(double estimate, double limit) {
  return fmin(limit, fmax(CS_SIM_PLAN_SHARE * limit, 1.05 * estimate));
}

/* The run's own check of the sampled rows (see cs_sim_late_note): the
 * rows or passes have passed the first stage's end, or, after a raise,
 * those since the last one half of what was left then: the rest of the
 * run gets ten times fewer.  Each later stage takes at most half of what
 * is left, so the total stays under the limit however long the run (but
 * for one pass's rows at each raise), and with as many rows per sample
 * each stage after the second covers five times the simulated time of
 * the one before. */
static void keep_in_budget(CsSim *sim) {
  if (sim->force) return;
  uint64_t passes = sim->sample_pass; /* (the check holds them far below 2^32) */
  bool over;
  if (sim->raises) {
    over = (double)(sim->rows - sim->stage_rows) > 0.5 * (sim->budget_rows - (double)sim->stage_rows) ||
           (double)(passes - sim->stage_passes) > 0.5 * (sim->budget_passes - (double)sim->stage_passes);
  } else {
    double est_passes = sim->est_end_s / ((double)sim->sample_interval * 1e-12);
    over = (double)sim->rows > first_stage(est_passes * sim->est_dirs, sim->budget_rows) ||
           (double)passes > first_stage(est_passes, sim->budget_passes);
  }
  if (!over) return;
  if (sim->sample_interval > CS_TIME_MAX / 100) return; /* ten times more would outlast simulated time */
  if (!sim->raises) {
    sim->raised_at = cs_engine_now(sim->e), sim->raised_from = sim->sample_interval;
    sim->raised_rows = sim->rows, sim->raised_passes = passes;
  }
  sim->raises++;
  sim->sample_interval *= 10;
  sim->stage_rows = sim->rows, sim->stage_passes = passes;
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN], b3[CS_FORMAT_LEN];
  GString *n = g_string_new(NULL);
  double est = sim->est_end_s / ((double)sim->raised_from * 1e-12);
  g_string_printf(n,
                  "%s: warning: %s: the run outlasted its estimate (loss or congestion): at %s of simulated time "
                  "its %" G_GUINT64_FORMAT " rows in %" G_GUINT64_FORMAT
                  " samples had passed the estimate (about %.3g rows in %.3g samples) and nine tenths of a limit "
                  "(2M rows, 10M samples), so output.sample_interval went from %s to %s",
                  sim->s->file, cs_sim_sampled_what(sim->s), cs_format_human_seconds((double)sim->raised_at * 1e-12, b3),
                  sim->raised_rows, sim->raised_passes, est * sim->est_dirs, est, cs_format_time(sim->raised_from, b1),
                  cs_format_time(sim->sample_interval, b2));
  if (sim->raises > 1) g_string_append_printf(n, " in %u tenfold steps", sim->raises);
  g_string_append_printf(n, " (a row's t_start_s and t_end_s give its span); --force keeps %s",
                         cs_format_time(sim->s->output.sample_interval, b1));
  g_free(sim->late_note);
  sim->late_note = g_string_free(n, FALSE);
}

/* The sampler is the engine's daemon: it never keeps a run going, so a
 * run ends at its last event, traced or not. */
static void on_sample(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  CsSim *sim = ctx;
  cs_sim_sample_links(sim);
  keep_in_budget(sim);
  /* No packet anywhere and nothing happens before the next event: skip
   * the empty intervals up to the boundary at or before it, so that a
   * long idle stretch (a late flow start, a long compute phase) costs one
   * sample, not one per interval.  (With packets queued or on a wire the
   * links are busy between events: no skipping then.) */
  CsTime iv = sim->sample_interval, now = cs_engine_now(e);
  if (iv > CS_TIME_MAX - now) return; /* the end of simulated time */
  CsTime at = now - now % iv + iv; /* the next multiple of iv: now + iv, but after a raise */
  if (!cs_fabric_busy(sim->fabric)) {
    CsTime next = cs_engine_next_time(e);
    if (next == CS_TIME_MAX) return;
    if (next > at && next - next % iv > at) at = next - next % iv;
  }
  cs_engine_set_daemon(e, at, on_sample, sim);
}

static const char *const event_names[] = {"enqueue", "transmit", "drop", "loss", "deliver", "ack"};

static void packet_row(void *ctx, const CsPacketTrace *ev) {
  CsSim *sim = ctx;
  CsCsv *c = sim->packets_csv;
  cs_csv_time(c, ev->time);
  cs_csv_str(c, event_names[ev->event]);
  if (ev->link != UINT32_MAX) {
    const CsLink *l = &sim->t->links[ev->link];
    cs_csv_str(c, node_name(sim, ev->dir ? l->b : l->a));
    cs_csv_str(c, node_name(sim, ev->dir ? l->a : l->b));
  } else {
    cs_csv_str(c, node_name(sim, sim->t->hosts[ev->src_host]));
    cs_csv_str(c, node_name(sim, sim->t->hosts[ev->dst_host]));
  }
  if (ev->background) {
    char b[24];
    snprintf(b, sizeof b, "bg%u", ev->owner);
    cs_csv_str(c, b);
  } else {
    cs_csv_uint(c, ev->owner);
  }
  cs_csv_uint(c, ev->seq);
  cs_csv_uint(c, ev->bytes);
  cs_csv_uint(c, ev->queue_bytes);
  cs_csv_end_row(c);
}

void cs_sim_open_traces(CsSim *sim) {
  unsigned tr = sim->s->output.traces;
  if (!sim->outdir) return;
  cs_csv_remove_stale(sim->outdir); /* what killed runs left */
  if (tr & CS_TRACE_LINKS) {
    static const char *cols[] = {"src", "dst", "t_start_s", "t_end_s", "bytes", "utilization", "queue_mean_bytes",
                                 "queue_max_bytes", "drops", "losses", "marks", "paused_s", NULL};
    sim->links_csv = cs_csv_open(sim->outdir, "links.csv", cols, sim->trace_error ? NULL : &sim->trace_error);
  }
  if (tr & CS_TRACE_PACKETS) {
    static const char *cols[] = {"time_s", "event", "src", "dst", "flow", "seq", "bytes", "queue_bytes", NULL};
    sim->packets_csv = cs_csv_open(sim->outdir, "packets.csv", cols, sim->trace_error ? NULL : &sim->trace_error);
    if (sim->packets_csv) cs_fabric_set_packet_trace(sim->fabric, packet_row, sim);
  }
  /* messages.csv as they finish, unless something needs them all at the
   * end (timeline.json's spans; raw flows, which run prints) or some were
   * sent before the run (none are: cs_sim_run opens the traces first) */
  if ((tr & CS_TRACE_MESSAGES) && !(tr & CS_TRACE_TIMELINE) && sim->s->flows->len == 0 && !sim->worker_host &&
      cs_fabric_messages(sim->fabric) == 0) {
    sim->messages_csv = cs_sim_messages_open(sim->outdir, sim->trace_error ? NULL : &sim->trace_error);
    if (sim->messages_csv) cs_sim_retire_messages(sim);
  }
  if (tr & CS_TRACE_TIMELINE) {
    cs_coll_record_spans(sim->env, true);
    sim->queue_samples = g_array_new(FALSE, FALSE, sizeof(QueueSample));
    sim->queue_shown = g_new0(uint64_t, 2 * (size_t)sim->t->n_links + 1);
    sim->queue_seen = g_new0(uint32_t, 2 * (size_t)sim->t->n_links + 1);
  }
  if (sim->links_csv || sim->queue_samples)
    cs_engine_set_daemon(sim->e, sim->sample_interval, on_sample, sim);
}

