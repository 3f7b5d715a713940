/* cmd_run.c - `commsim run FILE.yaml`: simulate one scenario, print a
 * summary, write the CSV files. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "commands.h"
#include "commsim/scenario.h"
#include "commsim/sim.h"
#include "commsim/units.h"

/* One decimal unit for a whole column, chosen by its largest value, so
 * that a column never mixes units. */
typedef struct {
  double div;
  const char *name;
} Unit;

/* Decimals that keep three significant digits of the column's largest value. */
static int decimals(Unit u, double max) {
  double v = max / u.div;
  return u.div == 1 ? 0 : v < 10 ? 3 : v < 100 ? 2 : 1;
}

static Unit bytes_unit(double max) {
  static const Unit u[] = {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}};
  for (size_t i = 0; i < G_N_ELEMENTS(u); i++)
    if (max >= u[i].div) return u[i];
  return (Unit){1, "B"};
}

static void print_messages(CsSim *sim) {
  CsFabric *net = cs_sim_fabric(sim);
  const CsTopology *t = cs_sim_topology(sim);
  uint32_t n = cs_fabric_messages(net);
  if (n == 0) return;
  double max = 0;
  for (uint32_t m = 0; m < n; m++) max = fmax(max, (double)cs_fabric_message(net, m)->payload);
  Unit u = bytes_unit(max);
  g_autofree char *size_h = g_strdup_printf("size (%s)", u.name);
  printf("%-6s %-8s %-8s %12s %14s %14s %14s %10s %6s %4s\n", "flow", "src", "dst", size_h, "start_s", "end_s", "fct_s",
         "Gbps", "retx", "rto");
  for (uint32_t m = 0; m < n; m++) {
    const CsMessageStats *st = cs_fabric_message(net, m);
    printf("%-6u %-8s %-8s %12.*f %14.9f ", m, t->nodes[t->hosts[st->src]].name, t->nodes[t->hosts[st->dst]].name,
           decimals(u, max), (double)st->payload / u.div, (double)st->start * 1e-12);
    if (st->delivered) {
      CsTime fct = st->end - st->start;
      double gbps = fct > 0 ? (double)st->payload * 8.0 / (double)fct * 1e3 : 0; /* bits per ps -> Gbps */
      printf("%14.9f %14.9f %10.3f ", (double)st->end * 1e-12, (double)fct * 1e-12, gbps);
    } else {
      printf("%14s %14s %10s ", st->failed ? "FAILED" : "unfinished", "-", "-");
    }
    if (net->models & CS_MODELS_PACKETS) printf("%6u %4u\n", st->retransmissions, st->timeouts);
    else printf("%6s %4s\n", "-", "-"); /* not modelled */
  }
  printf("(Gbps: goodput, payload bits over the completion time; rto: timeouts)\n\n");
}

static void print_training(CsSim *sim, const CsScenario *s) {
  const CsSummary *m = cs_sim_summary(sim);
  const CsWorkloadSpec *w = &s->workload;
  char b1[CS_FORMAT_LEN], b2[CS_FORMAT_LEN];
  printf("training: %s of %s %s parameters on %u worker%s", cs_collective_name(w->collective),
         cs_format_count(w->params, b1), cs_dtype_name(w->dtype), m->workers, m->workers == 1 ? "" : "s");
  if (cs_collective_has(w->collective, CS_COLLF_SERVERS))
    printf(" and %u server%s%s", m->servers, m->servers == 1 ? "" : "s", w->sync ? "" : " (asynchronous)");
  uint32_t nb = cs_workload_buckets(cs_sim_workload(sim));
  if (w->buckets && nb > 1)
    printf(", %s, %u buckets of %s%s%s\n", cs_codec_method_name(w->compression.method), nb, w->layers ? "up to " : "",
           cs_format_size(w->buckets, b2), w->layers ? " in reverse layer order (DDP)" : "");
  else if (w->buckets) /* one bucket holds the whole gradient, which may be smaller than the bucket size */
    printf(", %s, 1 bucket of %s (the whole gradient)\n", cs_codec_method_name(w->compression.method),
           cs_format_size((int64_t)cs_workload_bucket_elements(w) * cs_dtype_bits(w->dtype) / 8, b2));
  else
    printf(", %s, 1 bucket of the whole gradient\n", cs_codec_method_name(w->compression.method));
  if (m->iterations_measured == 0) { /* summary.csv leaves these cells empty: no zeros here either */
    printf("per worker and iteration: no iteration measured (none finished after the warm-up)\n");
  } else {
    printf("per worker and iteration (means over %" G_GUINT64_FORMAT " worker-iterations):\n", (guint64)m->iterations_measured);
    printf("  %-26s %s   (headers and retransmissions included)\n", "wire bytes per worker",
           cs_format_human_bytes(m->wire_bytes_per_worker, b1));
    printf("  %-26s %.6f s   (p50 %.6f s, p99 %.6f s)\n", "iteration", m->iter_mean_s, m->iter_p50_s, m->iter_p99_s);
    printf("  %-26s %.6f s\n", "compute", m->compute_s);
    printf("  %-26s %.6f s   (first gradient byte sent to last result byte received)\n", "communication", m->comm_s);
    printf("  %-26s %.6f s   (encode, decode, reduction arithmetic; %.6f s of it outside compute)\n", "codec",
           m->codec_s, m->codec_outside_s);
    printf("  %-26s %.6f s   (only waiting on the network: iteration - compute - codec outside compute)\n",
           "exposed communication", m->exposed_comm_s);
  }
  if (!isnan(m->codec_nmse)) printf("  %-26s %.4e   (one encode/decode by the real kernel)\n", "codec error (nmse)", m->codec_nmse);
  if (!isnan(m->allreduce_nmse))
    printf("  %-26s %.4e   (the collective's summed result, error compounded at reduction hops)\n", "result error (nmse)",
           m->allreduce_nmse);
  if (cs_collective_has(w->collective, CS_COLLF_SERVERS) && !w->sync) printf("  %-26s %.2f updates\n", "staleness", m->staleness_mean);
  uint32_t n, reached, simulated;
  const double *when;
  double mean;
  const CsConvPoint *cv = cs_sim_convergence(sim, &n, &when, &reached, &simulated, &mean);
  if (cv && n > 0) {
    const CsConvergenceSpec *c = &w->convergence;
    g_autofree char *target = g_strdup_printf("%s %s %g", c->target_is_loss ? "loss" : "accuracy",
                                              c->target_is_loss ? "<=" : ">=", c->target);
    if (reached)
      printf("  %-26s %s reached at iteration %u, %.6f s   (%s trained for real through the codec)\n",
             "time to target", target, reached, when[reached - 1], cs_conv_task_names()[c->task]);
    else
      printf("  %-26s %s not reached in %u iterations (%.6f s)\n", "time to target", target, n, when[n - 1]);
    printf("  %-26s loss %.4f, accuracy %.4f after %u iterations   (held-out set; convergence.csv)\n", "training",
           cv[n - 1].loss, cv[n - 1].accuracy, n);
    if (n > simulated)
      printf("  %-26s iterations %u to %u take the mean measured iteration, %.6f s each\n", "", simulated + 1, n, mean);
  }
  if (cs_sim_fabric(sim)->models & CS_MODELS_PACKETS)
    printf("  %-26s %" G_GUINT64_FORMAT " retransmissions, %" G_GUINT64_FORMAT " drops, %" G_GUINT64_FORMAT " losses\n\n",
           "network (whole run)", m->retransmissions, m->packets_dropped, m->packets_lost);
  else
    printf("  %-26s fidelity %s: queues, drops, losses and retransmissions not modelled\n\n", "network (whole run)",
           cs_sim_fabric(sim)->fidelity);
}

/* The link directions worth a look: those that dropped or lost the most
 * (up to 8), then the busiest, 16 rows in all, busiest first. */
static void print_links(CsSim *sim, const CsScenario *s) {
  CsFabric *net = cs_sim_fabric(sim);
  const CsTopology *t = cs_sim_topology(sim);
  CsTime end = cs_sim_end_time(sim);
  typedef struct {
    uint32_t link;
    int dir;
    CsLinkStats st;
    bool shown;
  } Row;
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
  uint32_t idle = 0;
  for (uint32_t l = 0; l < t->n_links; l++)
    for (int dir = 0; dir < 2; dir++) {
      Row r = {l, dir, cs_fabric_link_stats(net, l, dir), false};
      if (r.st.bytes == 0) idle++;
      else g_array_append_val(rows, r);
    }
  if (rows->len == 0) return;
  guint want = MIN(rows->len, 16u), shown = 0, lossy = 0;
  for (; shown < 8; shown++) { /* the most drops and losses */
    Row *best = NULL;
    for (guint i = 0; i < rows->len; i++) {
      Row *r = &g_array_index(rows, Row, i);
      uint64_t bad = r->st.drops + r->st.losses;
      if (!r->shown && bad && (!best || bad > best->st.drops + best->st.losses)) best = r;
    }
    if (!best) break;
    best->shown = true;
    lossy++;
  }
  for (; shown < want; shown++) { /* then the busiest */
    Row *best = NULL;
    for (guint i = 0; i < rows->len; i++) {
      Row *r = &g_array_index(rows, Row, i);
      if (!r->shown && (!best || r->st.busy > best->st.busy)) best = r;
    }
    best->shown = true;
  }
  double max_bytes = 0, max_queue = 0;
  uint64_t rest_drops = 0, rest_losses = 0;
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = &g_array_index(rows, Row, i);
    if (!r->shown) {
      rest_drops += r->st.drops, rest_losses += r->st.losses;
      continue;
    }
    max_bytes = fmax(max_bytes, (double)r->st.bytes);
    max_queue = fmax(max_queue, (double)r->st.queue_max);
  }
  Unit ub = bytes_unit(max_bytes), uq = bytes_unit(max_queue);
  g_autofree char *hb = g_strdup_printf("sent (%s)", ub.name), *hm = g_strdup_printf("queue_mean (%s)", uq.name),
                  *hx = g_strdup_printf("queue_max (%s)", uq.name);
  printf("%-18s %12s %10s %6s %15s %15s %9s %9s %9s\n", "link", hb, "packets", "util", hm, hx, "drops", "losses", "marks");
  for (guint k = 0; k < shown; k++) { /* busiest first */
    const Row *r = NULL;
    for (guint i = 0; i < rows->len; i++) {
      const Row *c = &g_array_index(rows, Row, i);
      if (c->shown && (!r || c->st.busy > r->st.busy)) r = c;
    }
    ((Row *)r)->shown = false;
    const CsLink *link = &t->links[r->link];
    g_autofree char *name = g_strdup_printf("%s->%s", t->nodes[r->dir ? link->b : link->a].name,
                                            t->nodes[r->dir ? link->a : link->b].name);
    double util = end > 0 ? (double)r->st.busy / (double)end : 0;
    double qmean = end > 0 ? r->st.queue_integral / (double)end : 0;
    int db = decimals(ub, max_bytes), dq = decimals(uq, max_queue);
    if (!(net->models & CS_MODELS_PACKETS)) { /* fluid: bytes and utilization only */
      printf("%-18s %12.*f %10s %5.1f%% %15s %15s %9s %9s %9s\n", name, db, (double)r->st.bytes / ub.div, "-", 100 * util,
             "-", "-", "-", "-", "-");
      continue;
    }
    printf("%-18s %12.*f %10" G_GUINT64_FORMAT " %5.1f%% %15.*f %15.*f %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT
           " %9" G_GUINT64_FORMAT "\n",
           name, db, (double)r->st.bytes / ub.div, r->st.packets, 100 * util, dq, qmean / uq.div, dq,
           (double)r->st.queue_max / uq.div, r->st.drops, r->st.losses, r->st.marks);
  }
  GString *note = g_string_new(NULL);
  if (lossy == 1) g_string_append(note, "the one with drops or losses, then the busiest");
  else if (lossy) g_string_append_printf(note, "the %u with the most drops and losses, then the busiest", lossy);
  else g_string_append(note, "the busiest");
  if (rows->len > shown) {
    g_string_append_printf(note, "; %u more carried traffic", rows->len - shown);
    if (rest_drops || rest_losses)
      g_string_append_printf(note, ", with %" G_GUINT64_FORMAT " drops and %" G_GUINT64_FORMAT " losses between them",
                             rest_drops, rest_losses);
  }
  if (idle) g_string_append_printf(note, "; %u idle", idle);
  printf("(link directions: %s; util and queue_mean over the whole run%s)\n\n", note->str,
         (s->output.traces & CS_TRACE_LINKS) ? "; all of them over time in links.csv" : "");
  g_string_free(note, TRUE);
  g_array_free(rows, TRUE);
}

/* Flows refilled per event past which a flow run says its refills took it (print_totals) */
#define REFILL_HEAVY 50

static void print_totals(CsSim *sim, const CsScenario *s) {
  CsFabric *net = cs_sim_fabric(sim);
  CsNetTotals tot = cs_fabric_totals(net);
  uint64_t events = cs_sim_events(sim);
  double wall = cs_sim_wall_seconds(sim);
  if (!(net->models & CS_MODELS_PACKETS)) {
    printf("packets: not modelled (fidelity %s: every message a fluid flow)\n", net->fidelity);
    printf("simulated %.9f s in %.3f s of wall time: %" G_GUINT64_FORMAT " events (%.2f M/s), %u messages\n",
           (double)cs_sim_end_time(sim) * 1e-12, wall, events, wall > 0 ? (double)events / wall * 1e-6 : 0.0,
           cs_fabric_messages(net));
    /* (rates refilled over many flows at most events, and a run long
     * enough to matter: a ps of many servers) */
    if (tot.refills > 0 && tot.refill_flows > REFILL_HEAVY * events && wall >= 5)
      printf("note: the rates were refilled %" G_GUINT64_FORMAT " times, over %.0f flows each on average: these "
             "flows share links all together (as a ps of many servers does), and a packet-level run may take less "
             "time (README.md, \"Which to use\")\n",
             tot.refills, (double)tot.refill_flows / (double)tot.refills);
    return;
  }
  printf("%-10s %12s %12s %12s %12s %12s\n", "packets", "sent", "delivered", "dropped", "lost", "in_flight");
  const char *names[] = {"data", "ack", "background"};
  const CsPacketCounts *c[] = {&tot.data, &tot.ack, &tot.bg};
  for (int i = 0; i < 3; i++) {
    if (c[i]->sent == 0 && i == 2) continue;
    printf("%-10s %12" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT
           " %12" G_GUINT64_FORMAT "\n",
           names[i], c[i]->sent, c[i]->delivered, c[i]->dropped, c[i]->lost, c[i]->in_flight);
  }
  printf("retransmissions %" G_GUINT64_FORMAT ", timeouts %" G_GUINT64_FORMAT ", ECN marks %" G_GUINT64_FORMAT,
         tot.retransmissions, tot.timeouts, tot.marks);
  if (s->transport.protocol == CS_PROTO_ROCE) /* ACK packets include them */
    printf(", CNPs %" G_GUINT64_FORMAT ", NACKs %" G_GUINT64_FORMAT, tot.cnps, tot.nacks);
  printf("\n");
  if (s->transport.protocol == CS_PROTO_ROCE && tot.timeouts > 0 && tot.data.dropped + tot.data.lost + tot.ack.dropped +
                                                                        tot.ack.lost == 0) {
    char b[CS_FORMAT_LEN];
    if (s->routing == CS_ROUTING_ECMP_PACKET && s->transport.retransmit == CS_RETX_GO_BACK_N)
      printf("note: %" G_GUINT64_FORMAT " timeouts and no packet dropped or lost: routing ecmp-packet sprays each queue "
             "pair's packets over several paths, and go-back-n discards every packet that comes out of order and "
             "resends from the gap (retransmissions %" G_GUINT64_FORMAT "); retransmit: selective keeps them (see "
             "docs/network.md, RoCE)\n",
             tot.timeouts, tot.retransmissions);
    else
      printf("note: %" G_GUINT64_FORMAT " timeouts and no packet dropped or lost: round trips outlast transport.rto (%s) "
             "in the queues; every one resent what was in flight (see docs/network.md, RoCE)\n",
             tot.timeouts, cs_format_time(s->transport.rto, b));
  }
  if (tot.bg.delivered)
    printf("background one-way delay: mean %.3f us over %" G_GUINT64_FORMAT " packets\n",
           tot.bg_delay_sum_s / (double)tot.bg.delivered * 1e6, tot.bg.delivered);
  printf("simulated %.9f s in %.3f s of wall time: %" G_GUINT64_FORMAT " events (%.2f M/s), %" G_GUINT64_FORMAT
         " packet-hops (%.2f M/s), at most %zu packets in flight\n",
         (double)cs_sim_end_time(sim) * 1e-12, wall, events, wall > 0 ? (double)events / wall * 1e-6 : 0.0,
         tot.hops, wall > 0 ? (double)tot.hops / wall * 1e-6 : 0.0, tot.pool_packets);
  if (!strcmp(net->fidelity, "hybrid")) {
    double end = (double)cs_sim_end_time(sim) * 1e-12, ff = (double)tot.fast_forwarded * 1e-12;
    printf("fast-forwarded %.9f s of it (%.1f %%) in %" G_GUINT64_FORMAT " jumps: the packets and hops above include "
           "those the jumps carried at the measured rates; drops, losses and retransmissions only those simulated\n",
           ff, end > 0 ? 100 * ff / end : 0.0, tot.jumps);
  }
}

typedef struct {
  gint64 start, last;
  bool shown;
} Progress;

static void show_progress(void *ctx, CsTime now, uint64_t events, double done) {
  Progress *p = ctx;
  gint64 t = g_get_monotonic_time();
  if (t - p->last < 250000) return; /* four lines a second at most */
  p->last = t;
  double wall = (double)(g_get_monotonic_time() - p->start) * 1e-6;
  fprintf(stderr, "\r[commsim] %.6f s simulated, %.1f M events/s", (double)now * 1e-12,
          wall > 0 ? (double)events / wall * 1e-6 : 0.0);
  if (done > 0 && done < 1) fprintf(stderr, ", %.0f%% done, ETA %.0f s   ", 100 * done, wall * (1 - done) / done);
  else fprintf(stderr, "   ");
  fflush(stderr);
  p->shown = true;
}

int cs_cmd_run(int argc, char **argv) {
  g_auto(GStrv) sets = NULL;
  g_autofree char *outdir = NULL, *seed = NULL;
  gboolean quiet = FALSE, check = FALSE, reproducible = FALSE, force = FALSE;
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &outdir, "Write the CSV files to DIR (default: output.dir)", "DIR"},
      CS_CLI_SET_OPTION(sets),
      {"seed", 0, 0, G_OPTION_ARG_STRING, &seed, "Override the scenario's seed (as --set seed=N)", "N"},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print no summary, only errors", NULL},
      {"check", 0, 0, G_OPTION_ARG_NONE, &check,
       "Check the expensive invariants (queues recomputed, packets on wires) every 1024 events, or every as many as the packets in flight when more", NULL},
      {"reproducible", 0, 0, G_OPTION_ARG_NONE, &reproducible,
       "Write wall_s as 0: runs of one scenario give byte-identical files", NULL},
      {"force", 0, 0, G_OPTION_ARG_NONE, &force,
       "Keep output.sample_interval even where links.csv would grow past 2M rows (it is raised otherwise)", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("FILE.yaml");
  g_option_context_set_summary(ctx, "Simulate one scenario: print a summary and write CSV files.");
  g_option_context_set_description(
      ctx, "SIGINT (Ctrl-C) or SIGTERM stops the run cleanly: no result file is written or left half-written.\n"
           "Exit status: 0 success, 1 messages undeliverable, an internal failure or a file that cannot be\n"
           "written, 2 bad usage or scenario, 130 (SIGINT) or 143 (SIGTERM) interrupted.\n");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "commsim run: %s\n", error->message);
    return CS_EXIT_USAGE;
  }
  if (argc != 2) {
    fprintf(stderr, "commsim run: expected one scenario file (see 'commsim run --help')\n");
    return CS_EXIT_USAGE;
  }
  if (outdir && !*outdir) {
    fprintf(stderr, "commsim run: -o: the output folder's name is empty\n");
    return CS_EXIT_USAGE;
  }
  GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
  for (char **s = sets; s && *s; s++) g_ptr_array_add(all, g_strdup(*s));
  /* one parser and one range for the seed: the scenario's */
  if (seed) g_ptr_array_add(all, g_strdup_printf("seed=%s", seed));
  g_ptr_array_add(all, NULL);
  g_autoptr(CsScenario) s = cs_scenario_load(argv[1], (const char *const *)all->pdata, &error);
  g_ptr_array_free(all, TRUE);
  if (!s) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_USAGE;
  }
  g_autoptr(CsSim) sim = cs_sim_new(s, &error);
  if (!sim) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_USAGE;
  }
  const char *dir = outdir ? outdir : s->output.dir;
  if (s->sweep->len && !quiet) {
    uint64_t points = 1;
    for (guint i = 0; i < s->sweep->len; i++) points *= g_array_index(s->sweep, CsSweepAxis, i).values->len;
    fprintf(stderr, "%s: note: the scenario has a sweep: of %" G_GUINT64_FORMAT " %s; run simulates its base point only (commsim sweep runs every point)\n",
            s->file, points, points == 1 ? "point" : "points");
  }
  if (!cs_sim_check_output_dir(dir, &error)) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_USAGE;
  }
  cs_sim_set_output_dir(sim, dir);
  cs_sim_set_force(sim, force);
  if (cs_sim_note(sim)) fprintf(stderr, "%s\n", cs_sim_note(sim));
  if (cs_sim_scenario_note(sim)) fprintf(stderr, "%s\n", cs_sim_scenario_note(sim));
  if (cs_sim_messages_note(sim)) fprintf(stderr, "%s\n", cs_sim_messages_note(sim));
  /* progress on a terminal only: never in files, never with -q */
  Progress progress = {g_get_monotonic_time(), 0, false};
  if (!quiet && isatty(STDERR_FILENO)) cs_sim_set_progress(sim, show_progress, &progress);
  cs_sim_set_checks(sim, check);
  cs_sim_set_reproducible(sim, reproducible);
  cs_cli_catch_signals();
  cs_sim_set_interrupt(sim, &cs_cli_signal);
  bool ran = cs_sim_run(sim, &error);
  if (progress.shown) fputc('\n', stderr);
  if (!ran && g_error_matches(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INTERRUPTED)) {
    fprintf(stderr, "%s; no result file was written\n", error->message);
    return cs_cli_signal_status();
  }
  if (!ran && g_error_matches(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_STUCK)) {
    /* a deadlock or the watchdog: the files up to then say where it stuck
     * (links.csv's paused_s, the unfinished messages) */
    fprintf(stderr, "%s\n", error->message);
    g_clear_error(&error);
    if (!cs_sim_write_outputs(sim, dir, &error)) {
      fprintf(stderr, "%s\n", error->message);
      return CS_EXIT_RUNTIME;
    }
    fprintf(stderr, "%s: note: the result files in %s cover the run up to %.6f s, where it ended\n", s->file, dir,
            (double)cs_sim_end_time(sim) * 1e-12);
    return CS_EXIT_RUNTIME;
  }
  if (!ran) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_RUNTIME;
  }
  if (!cs_sim_write_outputs(sim, dir, &error)) {
    fprintf(stderr, "%s\n", error->message);
    return CS_EXIT_RUNTIME;
  }
  if (!quiet) {
    GString *what = g_string_new(s->workload.present ? "training" : "");
    if (s->flows->len)
      g_string_append_printf(what, "%s%u flow%s", what->len ? ", " : "", s->flows->len, s->flows->len == 1 ? "" : "s");
    if (s->background->len)
      g_string_append_printf(what, "%s%u background source%s", what->len ? ", " : "", s->background->len,
                             s->background->len == 1 ? "" : "s");
    printf("scenario %s: %s; output in %s\n\n", s->name, what->str, dir);
    g_string_free(what, TRUE);
    if (s->workload.present) print_training(sim, s);
    if (s->flows->len) print_messages(sim);
    print_links(sim, s);
    print_totals(sim, s);
  }
  if (cs_sim_late_note(sim)) fprintf(stderr, "%s\n", cs_sim_late_note(sim));
  uint32_t failed = cs_sim_failed(sim), unfinished = cs_sim_unfinished(sim);
  uint32_t stuck = cs_sim_unfinished_workers(sim);
  if (stuck && !failed)
    fprintf(stderr, "%s: note: %u workers did not finish every iteration before the run ended\n", s->file, stuck);
  if (unfinished)
    fprintf(stderr, "%s: note: %u %s still in progress when duration ended the run\n", s->file, unfinished,
            unfinished == 1 ? "message was" : "messages were");
  if (failed && !(cs_sim_fabric(sim)->models & CS_MODELS_PACKETS)) {
    fprintf(stderr, "%s: error: %u %s undeliverable (a link of the route loses every packet); see messages.csv (no end_s)\n",
            s->file, failed, failed == 1 ? "message was" : "messages were");
    return CS_EXIT_RUNTIME;
  }
  if (failed) {
    fprintf(stderr,
            "%s: error: %u %s undeliverable (abandoned after %" G_GINT64_FORMAT
            " consecutive timeouts); see messages.csv (no end_s)\n",
            s->file, failed, failed == 1 ? "message was" : "messages were", (gint64)s->transport.max_timeouts);
    if (s->transport.protocol == CS_PROTO_ROCE && cs_sim_summary(sim)->packets_dropped > 0)
      fprintf(stderr, "%s: note: roce queue pairs that send at line rate into queues that drop lock one another out, as "
              "on a real fabric without PFC: give the links pfc (and ecn marking for dcqcn), or a larger "
              "transport.max_timeouts (docs/network.md, RoCE)\n", s->file);
    return CS_EXIT_RUNTIME;
  }
  return CS_EXIT_OK;
}
