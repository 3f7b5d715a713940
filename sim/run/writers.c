/* writers.c - a run's output files: summary.csv, iterations.csv,
 * messages.csv, timeline.json, and the output folder's checks. */
#include "config.h"

#include "sim_private.h"

/* ---- files ---- */

static const char *const summary_cols[] = {
    "scenario", "topology", "workers", "servers", "collective", "method", "bits", "wire_bytes_per_worker",
    "iterations", "iter_mean_s", "iter_p50_s", "iter_p99_s", "compute_s", "comm_s", "codec_s",
    "exposed_comm_s", "packets_sent", "packets_dropped", "packets_lost", "retransmissions",
    "link_util_mean", "link_util_max", "codec_nmse", "events", "wall_s", "bg_packets_sent",
    "bg_packets_dropped", "bg_packets_lost", "bg_delay_mean_s",
    /* commsim's additions, after the SPEC's columns */
    "staleness_mean", "allreduce_nmse", "codec_outside_compute_s", "fidelity",
    /* workload.convergence */
    "iterations_to_target", "time_to_target_s", "final_loss", "final_accuracy",
    /* PFC (empty without it) */
    "pause_frames", "paused_s_max",
    /* fidelity hybrid (empty otherwise) */
    "fast_forward_s", NULL};

const char *const *cs_sim_summary_columns(void) { return summary_cols; }

/* One summary row's fields, as strings (for summary.csv and sweep.csv).
 * A value that does not apply to the run (iteration times without a
 * workload or without a measured iteration, staleness of synchronous
 * training, background delay without background traffic) is empty,
 * never 0. */
GPtrArray *cs_sim_summary_fields(CsSim *sim) {
  const CsSummary *m = cs_sim_summary(sim);
  const CsScenario *s = sim->s;
  GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
  bool w = s->workload.present, measured = w && m->iterations_measured > 0;
  bool bg = s->background->len > 0;
  bool pk = sim->fabric->models & CS_MODELS_PACKETS; /* packets, drops, losses, retransmissions: else not modelled */
  bool async = w && cs_collective_has(s->workload.collective, CS_COLLF_SERVERS) && !s->workload.sync;
  CsCodecMethod method = s->workload.compression.method;
#define ADD(...) g_ptr_array_add(f, g_strdup_printf(__VA_ARGS__))
#define EMPTY() g_ptr_array_add(f, g_strdup(""))
#define REAL_IF(ok, x) ((ok) ? ADD("%.12f", (x)) : EMPTY())
#define UINT(x) ADD("%" G_GUINT64_FORMAT, (guint64)(x))
#define UINT_IF(ok, x) ((ok) ? UINT(x) : EMPTY())
  ADD("%s", s->name);
  ADD("%s", cs_topo_type_name(s->topology.type));
  ADD("%u", m->workers);
  ADD("%u", m->servers);
  ADD("%s", w ? cs_collective_name(s->workload.collective) : "");
  ADD("%s", w ? cs_codec_method_name(method) : "");
  bool has_bits = w && (method == CS_CODEC_UNIFORM || method == CS_CODEC_STOCHASTIC);
  if (has_bits) ADD("%" G_GINT64_FORMAT, (gint64)s->workload.compression.bits);
  else EMPTY();
  if (measured) ADD("%.0f", m->wire_bytes_per_worker);
  else EMPTY();
  UINT_IF(w, m->iterations_measured);
  REAL_IF(measured, m->iter_mean_s);
  REAL_IF(measured, m->iter_p50_s);
  REAL_IF(measured, m->iter_p99_s);
  REAL_IF(measured, m->compute_s);
  REAL_IF(measured, m->comm_s);
  REAL_IF(measured, m->codec_s);
  REAL_IF(measured, m->exposed_comm_s);
  UINT_IF(pk, m->packets_sent);
  UINT_IF(pk, m->packets_dropped);
  UINT_IF(pk, m->packets_lost);
  UINT_IF(pk, m->retransmissions);
  ADD("%.6f", m->link_util_mean);
  ADD("%.6f", m->link_util_max);
  if (isnan(m->codec_nmse)) EMPTY();
  else ADD("%.6e", m->codec_nmse);
  UINT(m->events);
  ADD("%.3f", sim->reproducible ? 0.0 : m->wall_s);
  UINT_IF(bg && pk, m->bg_packets_sent);
  UINT_IF(bg && pk, m->bg_packets_dropped);
  UINT_IF(bg && pk, m->bg_packets_lost);
  REAL_IF(bg && pk && m->bg_delivered > 0, m->bg_delay_mean_s);
  if (async && measured) ADD("%.3f", m->staleness_mean);
  else EMPTY();
  if (isnan(m->allreduce_nmse)) EMPTY();
  else ADD("%.6e", m->allreduce_nmse);
  REAL_IF(measured, m->codec_outside_s);
  ADD("%s", sim->fabric->fidelity);
  bool conv = sim->conv && sim->conv->len > 0, reached = conv && sim->conv_reached > 0;
  UINT_IF(reached, sim->conv_reached);
  REAL_IF(reached, reached ? g_array_index(sim->conv_time, double, sim->conv_reached - 1) : 0.0);
  if (conv) {
    const CsConvPoint *last = &g_array_index(sim->conv, CsConvPoint, sim->conv->len - 1);
    ADD("%.6f", last->loss);
    ADD("%.6f", last->accuracy);
  } else {
    EMPTY();
    EMPTY();
  }
  bool pfc = pk && sim->pfc;
  UINT_IF(pfc, m->pause_frames);
  REAL_IF(pfc, m->paused_s_max);
  REAL_IF(!strcmp(sim->fabric->fidelity, "hybrid"), m->fast_forward_s);
#undef ADD
#undef EMPTY
#undef REAL_IF
#undef UINT
#undef UINT_IF
  return f;
}

static bool write_summary(CsSim *sim, const char *dir, GError **error) {
  CsCsv *c = cs_csv_open(dir, "summary.csv", summary_cols, error);
  if (!c) return false;
  GPtrArray *f = cs_sim_summary_fields(sim);
  for (guint i = 0; i < f->len; i++) cs_csv_str(c, f->pdata[i]);
  cs_csv_end_row(c);
  g_ptr_array_free(f, TRUE);
  return cs_csv_close(c, error);
}

static bool write_iterations(CsSim *sim, const char *dir, GError **error) {
  static const char *cols[] = {"worker", "iteration", "start_s", "compute_end_s", "comm_end_s", "end_s", "codec_s",
                               "codec_outside_compute_s", "exposed_comm_s", NULL};
  CsCsv *c = cs_csv_open(dir, "iterations.csv", cols, error);
  if (!c) return false;
  for (uint32_t w = 0; sim->wl && w < cs_workload_workers(sim->wl); w++)
    for (uint32_t i = 1; i <= cs_workload_iterations(sim->wl); i++) {
      const CsIterRecord *r = cs_workload_record(sim->wl, w, i);
      if (!r) break;
      cs_csv_str(c, sim->t->nodes[sim->t->workers[w]].name);
      cs_csv_uint(c, i);
      cs_csv_time(c, r->start);
      cs_csv_time(c, r->compute_end);
      cs_csv_time(c, r->comm_end);
      cs_csv_time(c, r->end);
      cs_csv_time(c, r->codec);
      cs_csv_time(c, r->codec_outside);
      cs_csv_time(c, cs_iter_exposed(r));
      cs_csv_end_row(c);
    }
  return cs_csv_close(c, error);
}

static bool write_convergence(CsSim *sim, const char *dir, GError **error) {
  static const char *cols[] = {"iteration", "time_s", "loss", "accuracy", "grad_nmse", "simulated", NULL};
  CsCsv *c = cs_csv_open(dir, "convergence.csv", cols, error);
  if (!c) return false;
  for (guint i = 0; i < sim->conv->len; i++) {
    const CsConvPoint *p = &g_array_index(sim->conv, CsConvPoint, i);
    cs_csv_uint(c, p->iteration);
    cs_csv_real(c, g_array_index(sim->conv_time, double, i));
    cs_csv_real(c, p->loss);
    cs_csv_real(c, p->accuracy);
    cs_csv_real(c, p->grad_nmse);
    cs_csv_uint(c, p->iteration <= sim->conv_simulated);
    cs_csv_end_row(c);
  }
  return cs_csv_close(c, error);
}

static const char *const message_cols[] = {"iteration", "step", "src", "dst", "payload_bytes", "wire_bytes",
                                           "start_s",   "end_s", "retransmissions", NULL};

CsCsv *cs_sim_messages_open(const char *dir, GError **error) { return cs_csv_open(dir, "messages.csv", message_cols, error); }

void cs_sim_message_row(const CsSim *sim, CsCsv *c, const CsMessageStats *st) {
  cs_csv_uint(c, st->iteration);
  cs_csv_uint(c, st->step);
  cs_csv_str(c, sim->t->nodes[sim->t->hosts[st->src]].name);
  cs_csv_str(c, sim->t->nodes[sim->t->hosts[st->dst]].name);
  cs_csv_uint(c, st->payload);
  cs_csv_uint(c, st->wire_bytes);
  cs_csv_time(c, st->start);
  if (st->delivered) cs_csv_time(c, st->end);
  else cs_csv_empty(c); /* not delivered: no end */
  if (sim->fabric->models & CS_MODELS_PACKETS) cs_csv_uint(c, st->retransmissions);
  else cs_csv_empty(c); /* not modelled */
  cs_csv_end_row(c);
}

/* The messages the fabric holds, after those streamed while the run went
 * on (sim->messages_csv: every one of them was numbered below these). */
static bool write_messages(CsSim *sim, const char *dir, GError **error) {
  CsCsv *c = sim->messages_csv;
  sim->messages_csv = NULL;
  if (!c) c = cs_sim_messages_open(dir, error);
  if (!c) return false;
  for (uint32_t m = cs_fabric_first_message(sim->fabric); m < cs_fabric_messages(sim->fabric); m++)
    cs_sim_message_row(sim, c, cs_fabric_message(sim->fabric, m));
  return cs_csv_close(c, error);
}

/* Chrome trace-event JSON (Perfetto, chrome://tracing).  The format asks
 * spans on one track to nest, so each node is a process with a track per
 * kind of activity: "compute" (forward and backward passes), "codec"
 * (serialized on the node: never overlapping) and as many "messages N"
 * tracks as the node has messages in flight at once (a message goes to
 * the first track free at its start).  Link queues are counter tracks of
 * a "links" process.  Times are microseconds with three decimals: whole
 * nanoseconds, each end rounded down before the duration is taken, so that
 * a viewer adding ts and dur in nanoseconds gets the same integer and a
 * span that ends when the next starts never overlaps it by a rounding. */
#define US_FMT "%" G_GINT64_FORMAT ".%03" G_GINT64_FORMAT
#define US_ARG(ns) (gint64)((ns) / 1000), (gint64)((ns) % 1000)
enum { TID_COMPUTE = 1, TID_CODEC = 2, TID_MESSAGES = 3 };

static void timeline_span(FILE *f, const char *name, const char *cat, uint32_t pid, uint32_t tid, CsTime start,
                          CsTime end) {
  CsTime a = start / 1000, b = end / 1000; /* ns */
  fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":" US_FMT ",\"dur\":" US_FMT,
          name, cat, pid, tid, US_ARG(a), US_ARG(b - a));
}

static void timeline_thread(FILE *f, uint32_t pid, uint32_t tid, const char *name) {
  fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}", pid, tid, name);
  fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"sort_index\":%u}}", pid,
          tid, tid);
}

static bool write_timeline(CsSim *sim, const char *dir, GError **error) {
  g_autofree char *final = g_build_filename(dir, "timeline.json", NULL);
  g_autofree char *tmp = cs_csv_temp_name(dir, "timeline.json");
  FILE *f = g_mkdir_with_parents(dir, 0755) == 0 ? fopen(tmp, "w") : NULL;
  if (!f) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write: %s", final, g_strerror(errno));
    return false;
  }
  const CsTopology *t = sim->t;
  setvbuf(f, NULL, _IOFBF, 1 << 16);
  fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"scenario\":\"%s\"},\"traceEvents\":[\n", sim->s->name);
  /* node n is process n + 1 (pid 0 is special to some viewers); the links are the last */
  uint32_t links_pid = t->n_nodes + 1;
  fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"links (queue bytes)\"}}", links_pid);
  fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"sort_index\":%u}}", links_pid,
          links_pid);
  for (uint32_t n = 0; n < t->n_nodes; n++) {
    fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"%s\"}}", n + 1, t->nodes[n].name);
    fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"sort_index\":%u}}", n + 1, n + 1);
  }
  uint32_t W = sim->wl ? cs_workload_workers(sim->wl) : 0;
  for (uint32_t w = 0; w < W; w++) {
    uint32_t pid = t->workers[w] + 1;
    timeline_thread(f, pid, TID_COMPUTE, "compute");
    for (uint32_t i = 1; i <= cs_workload_iterations(sim->wl); i++) {
      const CsIterRecord *r = cs_workload_record(sim->wl, w, i);
      if (!r) break;
      timeline_span(f, "compute", "compute", pid, TID_COMPUTE, r->start, r->compute_end);
      fprintf(f, ",\"args\":{\"iteration\":%u}}", i);
    }
  }
  const GArray *spans = cs_coll_spans(sim->env);
  bool *has_codec = g_new0(bool, t->n_nodes);
  for (guint i = 0; spans && i < spans->len; i++) {
    const CsCodecSpan *sp = &g_array_index(spans, CsCodecSpan, i);
    if (!has_codec[sp->node]) timeline_thread(f, sp->node + 1, TID_CODEC, "codec");
    has_codec[sp->node] = true;
    timeline_span(f, "codec", "codec", sp->node + 1, TID_CODEC, sp->start, sp->end);
    fputc('}', f);
  }
  g_free(has_codec);
  /* messages start in the order they are numbered: first fit on tracks */
  GArray **lanes = g_new0(GArray *, t->n_nodes); /* per node: CsTime end of each track's last span */
  for (uint32_t m = cs_fabric_first_message(sim->fabric); m < cs_fabric_messages(sim->fabric); m++) {
    const CsMessageStats *st = cs_fabric_message(sim->fabric, m);
    uint32_t a = t->hosts[st->src], b = t->hosts[st->dst];
    CsTime end = st->delivered || st->failed ? st->end : sim->end;
    if (!lanes[a]) lanes[a] = g_array_new(FALSE, FALSE, sizeof(CsTime));
    guint lane = 0;
    while (lane < lanes[a]->len && g_array_index(lanes[a], CsTime, lane) > st->start) lane++;
    if (lane == lanes[a]->len) {
      g_array_append_val(lanes[a], end);
      g_autofree char *name = g_strdup_printf("messages %u", lane + 1);
      timeline_thread(f, a + 1, TID_MESSAGES + lane, name);
    }
    g_array_index(lanes[a], CsTime, lane) = end;
    g_autofree char *name = g_strdup_printf("%s->%s", t->nodes[a].name, t->nodes[b].name);
    timeline_span(f, name, "message", a + 1, TID_MESSAGES + lane, st->start, end);
    fprintf(f,
            ",\"args\":{\"message\":%u,\"payload_bytes\":%" G_GUINT64_FORMAT ",\"iteration\":%u,\"step\":%u,"
            "\"retransmissions\":%u,\"delivered\":%s}}",
            m, st->payload, st->iteration, st->step, st->retransmissions, st->delivered ? "true" : "false");
  }
  for (uint32_t n = 0; n < t->n_nodes; n++)
    if (lanes[n]) g_array_free(lanes[n], TRUE);
  g_free(lanes);
  /* queue counters: the most bytes waiting in each sampling interval, from
   * its start; a direction's counter returns to 0 when its queue empties */
  for (guint i = 0; sim->queue_samples && i < sim->queue_samples->len; i++) {
    const QueueSample *q = &g_array_index(sim->queue_samples, QueueSample, i);
    const CsLink *l = &t->links[q->dir / 2];
    uint32_t from = q->dir % 2 ? l->b : l->a, to = q->dir % 2 ? l->a : l->b;
    fprintf(f, ",\n{\"name\":\"%s->%s\",\"ph\":\"C\",\"pid\":%u,\"ts\":" US_FMT ",\"args\":{\"queue_bytes\":%" G_GUINT64_FORMAT "}}",
            t->nodes[from].name, t->nodes[to].name, links_pid, US_ARG(q->time / 1000), q->bytes);
  }
  fprintf(f, "\n]}\n");
  bool ok = fflush(f) == 0 && !ferror(f);
  ok = fclose(f) == 0 && ok && g_rename(tmp, final) == 0;
  if (!ok) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write", final);
    g_unlink(tmp);
  }
  return ok;
}
#undef US_FMT
#undef US_ARG

/* The files a run writes, by trace. */
static const struct {
  unsigned trace;
  const char *name;
} run_files[] = {
    {CS_TRACE_SUMMARY, "summary.csv"},   {CS_TRACE_ITERATIONS, "iterations.csv"}, {CS_TRACE_MESSAGES, "messages.csv"},
    {CS_TRACE_LINKS, "links.csv"},       {CS_TRACE_PACKETS, "packets.csv"},       {CS_TRACE_TIMELINE, "timeline.json"},
};

bool cs_sim_check_output_dir(const char *dir, GError **error) {
  if (g_file_test(dir, G_FILE_TEST_EXISTS) && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s: error: the output folder is a file", dir);
    return false;
  }
  g_autofree char *sweep = g_build_filename(dir, "sweep.csv", NULL);
  if (g_file_test(sweep, G_FILE_TEST_EXISTS)) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: this folder holds a sweep's results (sweep.csv); write the run elsewhere with -o DIR", dir);
    return false;
  }
  return true;
}

/* What an earlier run left that this one did not rewrite. */
static void remove_stale_outputs(CsSim *sim, const char *dir, bool wrote_iterations) {
  unsigned tr = sim->s->output.traces;
  for (size_t i = 0; i < G_N_ELEMENTS(run_files); i++) {
    bool wrote = (tr & run_files[i].trace) && (run_files[i].trace != CS_TRACE_ITERATIONS || wrote_iterations);
    if (wrote) continue;
    g_autofree char *path = g_build_filename(dir, run_files[i].name, NULL);
    g_unlink(path);
  }
  for (const char *const *stem = cs_plot_run_stems; *stem; stem++)
    for (const char *const *ext = cs_plot_formats; *ext; ext++) {
      g_autofree char *name = g_strdup_printf("%s.%s", *stem, *ext);
      g_autofree char *path = g_build_filename(dir, name, NULL);
      g_unlink(path);
    }
}

bool cs_sim_write_outputs(CsSim *sim, const char *dir, GError **error) {
  unsigned tr = sim->s->output.traces;
  if (sim->links_csv) {
    CsCsv *c = sim->links_csv;
    sim->links_csv = NULL;
    if (!cs_csv_close(c, error)) return false;
  }
  if (sim->packets_csv) {
    CsCsv *c = sim->packets_csv;
    sim->packets_csv = NULL;
    cs_fabric_set_packet_trace(sim->fabric, NULL, NULL);
    if (!cs_csv_close(c, error)) return false;
  }
  if ((tr & CS_TRACE_TIMELINE) && !write_timeline(sim, dir, error)) return false;
  if ((tr & CS_TRACE_ITERATIONS) && sim->wl && !write_iterations(sim, dir, error)) return false;
  if ((tr & CS_TRACE_MESSAGES) && !write_messages(sim, dir, error)) return false;
  if (sim->conv) {
    if (!write_convergence(sim, dir, error)) return false;
  } else {
    g_autofree char *path = g_build_filename(dir, "convergence.csv", NULL);
    g_unlink(path); /* an earlier run's */
  }
  /* last: a sweep takes a folder with a summary.csv as a complete point */
  if ((tr & CS_TRACE_SUMMARY) && !write_summary(sim, dir, error)) return false;
  remove_stale_outputs(sim, dir, sim->wl != NULL);
  return true;
}
