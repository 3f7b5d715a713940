/* test_hardening.c - the invariants, limits and bad conditions of issue
 * "Hardening": every example under --check, the checker catching a broken
 * queue, 100,000 hosts, time overflow, a link that loses everything, an
 * unwritable folder, a full disk, SIGINT during a run and a sweep, and
 * byte-identical outputs across runs, thread counts and traces. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/net/net_private.h"
#include "../sim/run/sim_private.h"
#include "commsim/sim.h"
#include "testutil.h"

static char *scenario(const char *name) {
  return g_build_filename(test_srcdir(), "tests", "scenarios", "hardening", name, NULL);
}

static char *tmpdir(void) {
  char *d = g_dir_make_tmp("commsim-hard-XXXXXX", NULL);
  ck_assert(d != NULL);
  return d;
}

/* Names in DIR (recursively, relative, sorted), hidden ones included. */
static void list_into(const char *root, const char *rel, GPtrArray *out) {
  g_autofree char *dir = rel ? g_build_filename(root, rel, NULL) : g_strdup(root);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  if (!d) return;
  const char *n;
  while ((n = g_dir_read_name(d))) {
    char *r = rel ? g_build_filename(rel, n, NULL) : g_strdup(n);
    g_autofree char *full = g_build_filename(root, r, NULL);
    g_ptr_array_add(out, r);
    if (g_file_test(full, G_FILE_TEST_IS_DIR)) list_into(root, r, out);
  }
}

static int cmp_str(gconstpointer a, gconstpointer b) { return strcmp(*(char **)a, *(char **)b); }

static GPtrArray *list_files(const char *root) {
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  list_into(root, NULL, out);
  g_ptr_array_sort(out, cmp_str);
  return out;
}

/* Every file under A equals the file of the same name under B. */
static void assert_same_tree(const char *a, const char *b) {
  g_autoptr(GPtrArray) fa = list_files(a), fb = list_files(b);
  ck_assert_uint_eq(fa->len, fb->len);
  ck_assert_uint_gt(fa->len, 0);
  for (guint i = 0; i < fa->len; i++) {
    ck_assert_str_eq(fa->pdata[i], fb->pdata[i]);
    g_autofree char *pa = g_build_filename(a, fa->pdata[i], NULL), *pb = g_build_filename(b, fb->pdata[i], NULL);
    if (g_file_test(pa, G_FILE_TEST_IS_DIR)) continue;
    g_autofree char *ta = NULL, *tb = NULL;
    gsize la, lb;
    ck_assert(g_file_get_contents(pa, &ta, &la, NULL) && g_file_get_contents(pb, &tb, &lb, NULL));
    ck_assert_msg(la == lb && memcmp(ta, tb, la) == 0, "%s and %s differ", pa, pb);
  }
}

/* No temporary file left anywhere under DIR. */
static void assert_no_temporaries(const char *dir) {
  g_autoptr(GPtrArray) f = list_files(dir);
  for (guint i = 0; i < f->len; i++) ck_assert_msg(!strstr(f->pdata[i], ".tmp"), "left behind: %s", (char *)f->pdata[i]);
}

/* Run commsim ARGS: assert its exit status and that stderr says `want`. */
static void expect(const char *const *args, int status, const char *want) {
  g_autofree char *o = NULL, *err = NULL;
  int rc = run_commsim(args, &o, &err);
  ck_assert_msg(rc == status, "exit %d, not %d: %s", rc, status, err);
  ck_assert_msg(strstr(err, want) != NULL, "'%s' not in: %s", want, err);
}

/* ---- invariants ---- */

/* Every example, with --check (each with one iteration, to keep the suite
 * short): the checks pass and the run succeeds. */
START_TEST(examples_pass_check) {
  g_autofree char *dir = g_build_filename(test_srcdir(), "topologies", NULL);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert(d != NULL);
  g_autofree char *out = tmpdir();
  const char *n;
  int runs = 0;
  while ((n = g_dir_read_name(d))) {
    if (!g_str_has_suffix(n, ".yaml")) continue;
    g_autofree char *path = g_build_filename(dir, n, NULL);
    g_autoptr(GError) e = NULL;
    g_autoptr(CsScenario) s = cs_scenario_load(path, NULL, &e);
    ck_assert_msg(s != NULL, "%s", e ? e->message : "");
    const char *args[12] = {"run", "--check", "-q", path, "-o", out};
    int k = 6;
    if (s->workload.present) args[k++] = "--set", args[k++] = "workload.iterations=1", args[k++] = "--set",
                             args[k++] = "workload.warmup=0";
    args[k] = NULL;
    g_autofree char *o = NULL, *err = NULL;
    int rc = run_commsim(args, &o, &err);
    ck_assert_msg(rc == 0, "%s --check: exit %d: %s", n, rc, err);
    runs++;
  }
  ck_assert_int_ge(runs, 14);
  rm_rf(out);
}
END_TEST

/* Load a scenario and build its simulation. */
static CsSim *sim_of(const char *yaml, CsScenario **s) {
  g_autoptr(GError) e = NULL;
  *s = cs_scenario_load_string(yaml, "check.yaml", NULL, &e);
  ck_assert_msg(*s != NULL, "%s", e ? e->message : "");
  CsSim *sim = cs_sim_new(*s, &e);
  ck_assert_msg(sim != NULL, "%s", e ? e->message : "");
  return sim;
}

static const char *incast =
    "topology: {type: star, workers: 4}\n"
    "defaults: {buffer: 32KB}\n"
    "flows:\n"
    "  - {src: w0, dst: w3, size: 2MB}\n"
    "  - {src: w1, dst: w3, size: 2MB}\n"
    "  - {src: w2, dst: w3, size: 2MB}\n";

/* The scenario run twice, the second with --check's checks: they ran
 * every CS_SIM_CHECK_EVERY events, and the two runs had the same events
 * and end (each test then compares what is its own, and frees). */
typedef struct {
  CsScenario *s1, *s2;
  CsSim *a, *b;
} Checked;

static Checked run_checked(const char *yaml) {
  Checked c;
  c.a = sim_of(yaml, &c.s1);
  c.b = sim_of(yaml, &c.s2);
  cs_sim_set_checks(c.b, true);
  g_autoptr(GError) e = NULL;
  ck_assert(cs_sim_run(c.a, &e));
  ck_assert_msg(cs_sim_run(c.b, &e), "%s", e ? e->message : "");
  ck_assert_uint_gt(cs_sim_events(c.b), 10000);
  ck_assert_uint_eq(cs_sim_checks_run(c.b), cs_engine_events_executed(cs_sim_engine(c.b)) / CS_SIM_CHECK_EVERY);
  ck_assert_uint_eq(cs_sim_checks_run(c.a), 0);
  ck_assert_uint_eq(cs_sim_events(c.a), cs_sim_events(c.b));
  ck_assert_int_eq(cs_sim_end_time(c.a), cs_sim_end_time(c.b));
  return c;
}

static void checked_free(Checked *c) {
  cs_sim_free(c->a);
  cs_sim_free(c->b);
  cs_scenario_free(c->s1);
  cs_scenario_free(c->s2);
}

/* The flow fidelity runs most of its events itself, inside the one
 * before (cs_engine_advance_own): the checks (and an interrupt, which
 * uses the same hook) still come every 1,024 events. */
START_TEST(checks_run_at_flow_fidelity) {
  Checked c = run_checked("topology: {type: star, workers: 128}\n"
                          "fidelity: flow\n"
                          "workload: {params: 1M, iterations: 1, compute: 0s, buckets: 0, collective: ring,\n"
                          "           compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 0s}}}\n");
  checked_free(&c);
}
END_TEST

/* every 1024 events; the same events at the same times, the same drops */
START_TEST(checks_run_and_change_nothing) {
  Checked c = run_checked(incast);
  CsSim *a = c.a, *b = c.b;
  ck_assert_uint_eq(cs_net_totals(cs_sim_net(a)).data.dropped, cs_net_totals(cs_sim_net(b)).data.dropped);
  ck_assert_uint_gt(cs_net_totals(cs_sim_net(a)).data.dropped, 0); /* the incast overflows 32KB */
  checked_free(&c);
}
END_TEST

/* The checker is not vacuous: a queue whose count disagrees with its
 * contents, bytes that appear on a wire, and a message reported twice
 * are each caught.  A hook breaks the state between events once a queue
 * holds packets, checks, and mends it. */
typedef struct {
  CsSim *sim;
  bool done;
  char *queue_msg, *bytes_msg, *twice_msg;
  bool clean_before, clean_after;
} Breaker;

static char *check_msg(CsNet *net, bool state) {
  GError *e = NULL;
  bool ok = state ? cs_net_check_state(net, &e) : cs_net_check_accounting(net, &e);
  char *m = ok ? NULL : g_strdup(e->message);
  g_clear_error(&e);
  return m;
}

static bool break_and_check(CsEngine *engine, void *ctx) {
  (void)engine;
  Breaker *b = ctx;
  CsNet *net = cs_sim_net(b->sim);
  LinkDir *full = NULL;
  for (uint32_t i = 0; i < 2 * cs_sim_topology(b->sim)->n_links; i++)
    if (net->dirs[i].q.len > 1) full = &net->dirs[i];
  if (!full) return true;
  g_autofree char *before = check_msg(net, true);
  b->clean_before = before == NULL;
  full->q_bytes += 1;
  b->queue_msg = check_msg(net, true);
  full->q_bytes -= 1;
  full->out_bytes += 1500;
  b->bytes_msg = check_msg(net, false);
  full->out_bytes -= 1500;
  net->notified++;
  b->twice_msg = check_msg(net, false);
  net->notified--;
  g_autofree char *after = check_msg(net, true);
  b->clean_after = after == NULL;
  b->done = true;
  return false;
}

START_TEST(checker_catches_broken_state) {
  CsScenario *s;
  CsSim *sim = sim_of(incast, &s);
  Breaker b = {sim, false, NULL, NULL, NULL, false, false};
  cs_engine_set_hook(cs_sim_engine(sim), 1, break_and_check, &b);
  g_autoptr(GError) e = NULL;
  cs_sim_run(sim, &e);
  ck_assert(b.done);
  ck_assert(b.clean_before && b.clean_after);
  ck_assert_msg(b.queue_msg && strstr(b.queue_msg, "the queue holds") != NULL, "%s", b.queue_msg);
  ck_assert_msg(b.bytes_msg && strstr(b.bytes_msg, "bytes do not add up") != NULL, "%s", b.bytes_msg);
  ck_assert_msg(b.twice_msg && strstr(b.twice_msg, "deliveries were reported") != NULL, "%s", b.twice_msg);
  g_free(b.queue_msg);
  g_free(b.bytes_msg);
  g_free(b.twice_msg);
  cs_sim_free(sim);
  cs_scenario_free(s);
}
END_TEST

/* ---- limits ---- */

START_TEST(routing_tables_refused_with_estimate) {
  g_autofree char *f = scenario("torus-90k.yaml");
  /* 90,000 rows (a torus's hosts are their own routers) x 90,000 nodes x 2 bytes = 16,200,000,000 B = 15.1 GiB */
  const char *validate[] = {"validate", f, NULL}, *run[] = {"run", "-q", f, NULL};
  expect(validate, 2, "90000 destinations x 90000 nodes would take 15.1 GiB");
  expect(run, 2, "90000 destinations x 90000 nodes would take 15.1 GiB");
  /* the per-iteration records: 20,000 x 1,000,000 x 64 B = 1.28e12 B = 1192.1 GiB (on 200 x 100 hosts, whose
   * routing tables would take 20,000 x 20,000 x 2 B = 745 MiB: allowed) */
  const char *args[] = {"run",  "-q",  f, "--set", "topology.x=200", "--set", "topology.y=100", "--set", "topology.workers=20000",
                        "--set", "workload.iterations=1000000", NULL};
  expect(args, 2, "20000 workers x 1000000 iterations would take 1192.1 GiB");
}
END_TEST

START_TEST(time_overflow_ends_cleanly) {
  g_autofree char *f = scenario("time-overflow.yaml");
  g_autofree char *out = tmpdir();
  const char *args[] = {"run", "-q", f, "-o", out, NULL};
  /* the third compute phase would end at 12,000,000 s > 2^63 ps = 9,223,372.04 s;
   * the run stops after the second, at 8,000,000 s plus two all-reduces */
  expect(args, 1, "simulated time would pass 9223372s (2^63 ps); the run stopped at 8000000.");
  g_autoptr(GPtrArray) files = list_files(out);
  ck_assert_uint_eq(files->len, 0); /* nothing written, nothing left */
  rm_rf(out);
  /* an event past the end of time that the run would never reach is no error */
  g_autofree char *g = scenario("overflow-beyond-duration.yaml");
  g_autofree char *out2 = tmpdir();
  const char *args3[] = {"run", "-q", g, "-o", out2, NULL};
  g_autofree char *o3 = NULL, *err3 = NULL;
  ck_assert_msg(run_commsim(args3, &o3, &err3) == 0, "%s", err3);
  rm_rf(out2);
  /* a time that does not fit is a scenario error */
  const char *args2[] = {"validate", f, "--set", "workload.compute=10000000s", NULL};
  expect(args2, 2, "workload.compute");
}
END_TEST

/* A packet whose serialization passes the end of simulated time (1 bit/s,
 * 1,500 KB background packets): its end saturates at the end of time and
 * the link's times never run backwards, so --check holds all along; the
 * flow that waits behind it is abandoned after its timeouts, as any
 * message that cannot get through (exit 1, not an internal error). */
START_TEST(serialization_past_end_of_time) {
  g_autofree char *f = scenario("serialization-overflow.yaml");
  g_autofree char *out = tmpdir();
  const char *args[] = {"run", "-q", "--check", f, "-o", out, NULL};
  g_autofree char *o = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim(args, &o, &err), 1);
  ck_assert_msg(strstr(err, "internal error") == NULL, "%s", err);
  ck_assert_msg(strstr(err, "1 message was undeliverable") != NULL, "%s", err);
  rm_rf(out);
}
END_TEST

START_TEST(loss_of_one_gives_up_and_reports) {
  g_autofree char *f = scenario("loss-one.yaml");
  g_autofree char *out = tmpdir();
  const char *args[] = {"run", "-q", f, "-o", out, NULL};
  expect(args, 1, "2 messages were undeliverable (abandoned after 6 consecutive timeouts)");
  /* messages.csv: both rows, neither with an end */
  g_autofree char *m = slurp(out, "messages.csv");
  ck_assert(m != NULL);
  g_auto(GStrv) lines = g_strsplit(m, "\r\n", -1);
  ck_assert_uint_eq(g_strv_length(lines), 4); /* header, 2 rows, "" */
  for (int i = 1; i <= 2; i++) ck_assert_msg(strstr(lines[i], ",,") != NULL, "%s has an end_s", lines[i]);
  rm_rf(out);
  /* training: a collective waiting on an abandoned message ends the run too */
  g_autofree char *td = g_build_filename(test_srcdir(), "topologies", "training-dumbbell.yaml", NULL);
  g_autofree char *out2 = tmpdir();
  const char *targs[] = {"run", "-q", td, "-o", out2, "--set", "topology.bottleneck.loss=1", NULL};
  expect(targs, 1, "undeliverable (abandoned after 15 consecutive timeouts)");
  rm_rf(out2);
  /* Linux's RTOs (initial_rto 1 s): 15 timeouts span 603 s (1 + 2 + ...
   * + 32, then 60 s each), past the 600 s the watchdog gives a run; the
   * default watchdog outlasts them, so the messages are abandoned */
  g_autofree char *lr = g_build_filename(test_srcdir(), "validation", "linux-ring4.yaml", NULL);
  g_autofree char *out3 = tmpdir();
  const char *largs[] = {"run", "-q", lr, "-o", out3, "--set", "defaults.loss=1", NULL};
  expect(largs, 1, "4 messages were undeliverable (abandoned after 15 consecutive timeouts)");
  rm_rf(out3);
}
END_TEST

/* Run sim into a new folder; links.csv's rows (not its header). */
static guint run_links_rows(CsSim *sim) {
  GError *e = NULL;
  g_autofree char *dir = tmpdir();
  cs_sim_set_output_dir(sim, dir);
  ck_assert_msg(cs_sim_run(sim, &e), "%s", e ? e->message : "");
  ck_assert(cs_sim_write_outputs(sim, dir, &e));
  g_autofree char *links = slurp(dir, "links.csv");
  guint rows = 0;
  for (const char *p = links; (p = strchr(p, '\n')); p++) rows++;
  rm_rf(dir);
  return rows - 1;
}

/* A sampling interval that would sample for a quarter of an hour (1ps on
 * a 1 MB flow) or write 505 MB (100 KB over 1 Kbps) is raised, with a
 * warning; --force keeps it.  The raised intervals: the flow lasts about
 * 834 us over 4 link directions (data and ACKs, 2 hops each way), so at
 * most 2M rows = 500,000 samples need 1.67 ns: 2ns; the 1 Kbps flow lasts
 * about 832 s: 832 s * 4 / 2M = 1.66 ms: 2ms. */
START_TEST(sample_interval_bounded) {
  const char *y1 = "topology: {type: star, workers: 2}\nflows: [{src: w0, dst: w1, size: 1MB}]\n"
                   "output: {sample_interval: 1ps}\n";
  const char *y2 = "topology: {type: star, workers: 2}\ndefaults: {bandwidth: 1Kbps}\n"
                   "flows: [{src: w0, dst: w1, size: 100KB}]\n";
  const char *ys[] = {y1, y2};
  const CsTime want[] = {2 * CS_NS, 2 * CS_MS};
  for (int i = 0; i < 2; i++) {
    GError *e = NULL;
    g_autoptr(CsScenario) s = cs_scenario_load_string(ys[i], "si.yaml", NULL, &e);
    g_autoptr(CsSim) sim = cs_sim_new(s, &e);
    ck_assert_int_eq(cs_sim_sample_interval(sim), want[i]);
    ck_assert_ptr_nonnull(strstr(cs_sim_note(sim), "warning: output.sample_interval"));
    ck_assert_ptr_nonnull(strstr(cs_sim_note(sim), "--force keeps"));
    guint rows = run_links_rows(sim);
    ck_assert_uint_le(rows, 2000000);
    ck_assert_uint_gt(rows, 1000);
    cs_sim_set_force(sim, true);
    ck_assert_int_eq(cs_sim_sample_interval(sim), s->output.sample_interval);
    ck_assert_ptr_null(cs_sim_note(sim));
  }
  /* the shipped examples keep theirs */
  g_autofree char *ex = g_build_filename(test_srcdir(), "topologies", "fat-tree.yaml", NULL);
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load(ex, NULL, &e);
  g_autoptr(CsSim) sim = cs_sim_new(s, &e);
  ck_assert_ptr_null(cs_sim_note(sim));
}
END_TEST

/* The plan's estimate assumes an idle network; loss makes a run last far
 * longer, and the run itself then raises the interval.  200 KB over
 * 10 Gbps is estimated at about 0.17 ms: at 10ns, 16,700 samples and
 * 67,000 rows over the 4 directions, within the limits.  With 5 % loss
 * the roce flow retransmits for 3.66 ms and, forced, writes 100,792 rows.
 * With the row limit lowered to 20,000 for the test, the first stage takes
 * at most nine tenths of it, each later one half of what is left (plus
 * one pass's rows, 4 here), so the run
 * stays within 20,000 + 4 per raise; the results do not change. */
START_TEST(sample_interval_bounded_while_running) {
  const char *y = "topology: {type: star, workers: 2}\ndefaults: {loss: 0.05}\ntransport: {protocol: roce}\n"
                  "flows: [{src: w0, dst: w1, size: 200KB}]\noutput: {sample_interval: 10ns, traces: [summary, links]}\n";
  guint rows[2];
  CsTime end[2];
  uint64_t events[2];
  for (int force = 0; force < 2; force++) {
    GError *e = NULL;
    g_autoptr(CsScenario) s = cs_scenario_load_string(y, "late.yaml", NULL, &e);
    g_autoptr(CsSim) sim = cs_sim_new(s, &e);
    ck_assert_ptr_null(cs_sim_note(sim)); /* the plan sees nothing wrong */
    sim->budget_rows = 20000;
    cs_sim_set_force(sim, force);
    rows[force] = run_links_rows(sim);
    end[force] = cs_sim_end_time(sim);
    events[force] = cs_sim_events(sim);
    if (force) {
      ck_assert_ptr_null(cs_sim_late_note(sim));
      ck_assert_int_eq(cs_sim_sample_interval(sim), 10 * CS_NS);
    } else {
      ck_assert_uint_ge(sim->raises, 1);
      ck_assert_uint_le(rows[0], 20000 + 4 * sim->raises);
      CsTime iv = 10 * CS_NS;
      for (uint32_t k = 0; k < sim->raises; k++) iv *= 10;
      ck_assert_int_eq(cs_sim_sample_interval(sim), iv);
      ck_assert_ptr_nonnull(strstr(cs_sim_late_note(sim), "late.yaml: warning: links.csv: the run outlasted its estimate"));
      ck_assert_ptr_nonnull(strstr(cs_sim_late_note(sim), "--force keeps 10ns"));
    }
  }
  ck_assert_uint_gt(rows[1], 100000); /* 100,792 */
  ck_assert_int_eq(end[0], end[1]);
  ck_assert_uint_eq(events[0], events[1]);
}
END_TEST

/* A run whose estimate was right is left alone even between nine tenths
 * of the limit and the limit: at flow fidelity a lone 1 MB flow's length
 * is what the plan estimates (it is the closed form), so with the row
 * limit set to its rows / 0.95 nothing is raised, and with its rows / 1.2
 * (the limit passed) the interval is. */
static guint run_rows(const char *y, double budget_of, gboolean force, gboolean *raised) {
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(y, "exact.yaml", NULL, &e);
  g_autoptr(CsSim) sim = cs_sim_new(s, &e);
  ck_assert_ptr_null(cs_sim_note(sim));
  if (budget_of > 0) sim->budget_rows = budget_of;
  cs_sim_set_force(sim, force);
  guint rows = run_links_rows(sim);
  *raised = cs_sim_late_note(sim) != NULL;
  return rows;
}

START_TEST(sample_interval_estimate_kept) {
  const char *y = "topology: {type: star, workers: 2}\nfidelity: flow\nflows: [{src: w0, dst: w1, size: 1MB}]\n"
                  "output: {sample_interval: 100ns, traces: [summary, links]}\n";
  gboolean raised;
  guint all = run_rows(y, 0, TRUE, &raised);
  ck_assert_uint_gt(all, 20000); /* 834 us / 100 ns x 4 directions: 33,000 or so */
  ck_assert_uint_eq(run_rows(y, all / 0.95, FALSE, &raised), all);
  ck_assert(!raised);
  ck_assert_uint_lt(run_rows(y, all / 1.2, FALSE, &raised), all);
  ck_assert(raised);
}
END_TEST

/* Background traffic faster than its host's link: the host queue drops
 * the excess at 1,000 packets waiting (it once grew until GLib aborted).
 * cbr at 20 Gbps into a 10 Gbps link for 50 ms: 83,334 packets of 1500 B
 * (50 ms * 20e9 / 12000 bits, +1 at t = 0), of which the link carries
 * about half. */
START_TEST(background_faster_than_link) {
  GError *e = NULL;
  g_autoptr(CsScenario) s = cs_scenario_load_string(
      "topology: {type: star, workers: 2}\nduration: 50ms\n"
      "background: [{src: w0, dst: w1, pattern: cbr, rate: 20Gbps}]\noutput: {traces: [summary]}\n",
      "bg.yaml", NULL, &e);
  g_autoptr(CsSim) sim = cs_sim_new(s, &e);
  ck_assert(cs_sim_run(sim, &e));
  const CsSummary *m = cs_sim_summary(sim);
  ck_assert_uint_eq(m->bg_packets_sent, 83334);
  ck_assert_uint_gt(m->bg_packets_dropped, 40000);
  CsNetTotals tot = cs_net_totals(cs_sim_net(sim));
  ck_assert_uint_le(tot.pool_packets, 1100); /* memory bounded by the queue, not by the run's length */
  ck_assert_uint_eq(tot.bg.sent, tot.bg.delivered + tot.bg.dropped + tot.bg.lost + tot.bg.in_flight);
}
END_TEST

START_TEST(unwritable_output_folder) {
  g_autofree char *f = scenario("determinism.yaml");
  g_autofree char *base = tmpdir();
  g_autofree char *file = g_build_filename(base, "a-file", NULL);
  ck_assert(g_file_set_contents(file, "x", 1, NULL));
  g_autofree char *out = g_build_filename(file, "out", NULL); /* under a regular file: even root cannot */
  const char *args[] = {"run", "-q", f, "-o", out, NULL};
  g_autofree char *want = g_strdup_printf("%s: error: cannot create the output folder: Not a directory", out);
  expect(args, 1, want);
  rm_rf(base);
}
END_TEST

/* A full disk: the summary to /dev/full, and the files to a 64 KiB tmpfs
 * (when this machine lets the test mount one in a namespace of its own). */
START_TEST(disk_full) {
  g_autofree char *f = scenario("determinism.yaml");
  if (g_file_test("/dev/full", G_FILE_TEST_EXISTS)) {
    g_autofree char *out = tmpdir();
    g_autofree char *cmd = g_strdup_printf("'%s/sim/commsim' run '%s' -o '%s' > /dev/full 2>'%s/err'", test_builddir(), f,
                                           out, out);
    int st = system(cmd);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 1);
    g_autofree char *err = slurp(out, "err");
    ck_assert_msg(strstr(err, "cannot write to standard output: No space left on device") != NULL, "%s", err);
    rm_rf(out);
  }
  g_autofree char *mnt = tmpdir();
  g_autofree char *cmd = g_strdup_printf(
      "unshare -m sh -c \"mount -t tmpfs -o size=64k commsim-full '%s' 2>/dev/null || exit 77; "
      "'%s/sim/commsim' run -q '%s' -o '%s/out' --set 'output.traces=[summary, links, packets]'; echo \\$? > '%s/rc'; "
      "ls -a '%s/out' > '%s/ls'; cat '%s/rc' '%s/ls'\" > '%s.txt' 2>'%s.err'",
      mnt, test_builddir(), f, mnt, mnt, mnt, mnt, mnt, mnt, mnt, mnt);
  int st = system(cmd);
  g_autofree char *txtp = g_strdup_printf("%s.txt", mnt), *errp = g_strdup_printf("%s.err", mnt);
  g_autofree char *txt = NULL, *err = NULL;
  bool got = g_file_get_contents(txtp, &txt, NULL, NULL) && g_file_get_contents(errp, &err, NULL, NULL);
  g_unlink(txtp);
  g_unlink(errp);
  if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
    fprintf(stderr, "disk_full: no tmpfs in a private mount namespace here: only /dev/full was tested\n");
  } else {
    ck_assert(got);
    /* exit 1, "No space left on device", and nothing half-written: the
     * streamed packets.csv never made it to its name */
    ck_assert_msg(g_str_has_prefix(txt, "1\n"), "%s / %s", txt, err);
    ck_assert_msg(strstr(err, "No space left on device") != NULL, "%s", err);
    ck_assert_msg(strstr(txt, "packets.csv") == NULL && strstr(txt, ".tmp") == NULL, "%s", txt);
  }
  rm_rf(mnt);
}
END_TEST

/* ---- signals ---- */

/* Whether any name under DIR ends with `suffix`. */
static bool has_file(const char *dir, const char *suffix) {
  g_autoptr(GPtrArray) f = list_files(dir);
  for (guint i = 0; i < f->len; i++)
    if (g_str_has_suffix(f->pdata[i], suffix) || (suffix[0] == '.' && strstr(f->pdata[i], suffix))) return true;
  return false;
}

/* Start commsim ARGS; once a file whose name ends with (or, for a name
 * starting with '.', contains) `marker` appears under `dir` -- the run is
 * under way -- send `sig`; return the exit status.  Polling instead of a
 * fixed delay keeps the test right however slow the machine (valgrind). */
static int interrupt_when(const char *const *args, const char *dir, const char *marker, int sig, char **err) {
  GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(argv, g_build_filename(test_builddir(), "sim", "commsim", NULL));
  for (const char *const *a = args; *a; a++) g_ptr_array_add(argv, g_strdup(*a));
  g_ptr_array_add(argv, NULL);
  GPid pid;
  int err_fd;
  g_autoptr(GError) e = NULL;
  ck_assert_msg(g_spawn_async_with_pipes(NULL, (char **)argv->pdata, NULL,
                                         G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, &pid,
                                         NULL, NULL, &err_fd, &e),
                "%s", e ? e->message : "");
  g_ptr_array_free(argv, TRUE);
  int st;
  for (int i = 0; i < 60000 && !has_file(dir, marker); i++) {
    ck_assert_msg(waitpid(pid, &st, WNOHANG) == 0, "commsim ended before %s appeared", marker);
    g_usleep(10000);
  }
  g_usleep(200000); /* well inside the run */
  kill(pid, sig);
  g_autofree char *text = read_to_end(err_fd); /* its stderr, for the failure message */
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  *err = g_steal_pointer(&text);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(sigint_during_run) {
  g_autofree char *f = scenario("long-run.yaml");
  int sigs[] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++) {
    g_autofree char *out = tmpdir();
    g_autofree char *o = g_build_filename(out, "run", NULL);
    const char *args[] = {"run", "-q", f, "-o", o, NULL};
    /* the run takes minutes: it is in the middle, streaming packets.csv,
     * when the signal comes */
    g_autofree char *err = NULL;
    int rc = interrupt_when(args, out, ".packets.csv.tmp", sigs[i], &err);
    ck_assert_msg(rc == 128 + sigs[i], "exit %d: %s", rc, err);
    /* no file at all: the streamed traces' temporary files are gone */
    g_autoptr(GPtrArray) files = list_files(o);
    ck_assert_msg(files->len == 0, "left: %s", files->len ? (char *)files->pdata[0] : "");
    rm_rf(out);
  }
}
END_TEST

START_TEST(sigint_during_sweep_then_resume) {
  g_autofree char *f = scenario("sweep-8.yaml");
  g_autofree char *out = tmpdir();
  g_autofree char *a = g_build_filename(out, "a", NULL), *b = g_build_filename(out, "b", NULL);
  const char *args[] = {"sweep", "-q", "-j", "1", "--reproducible", f, "-o", a, NULL};
  /* 8 points of about 0.4 s: interrupted once the first is complete */
  g_autofree char *err = NULL;
  int rc = interrupt_when(args, out, "summary.csv", SIGINT, &err);
  ck_assert_msg(rc == 130, "exit %d: %s", rc, err);
  g_autofree char *partial = slurp(a, "sweep.csv");
  ck_assert(partial == NULL); /* no sweep.csv until every point is done */
  assert_no_temporaries(a);
  g_autoptr(GPtrArray) done = list_files(a);
  guint complete = 0;
  for (guint i = 0; i < done->len; i++) complete += g_str_has_suffix(done->pdata[i], "summary.csv");
  ck_assert_uint_ge(complete, 1);
  ck_assert_uint_lt(complete, 8);
  /* the same command resumes; the result is that of a sweep never interrupted */
  g_autofree char *o1 = NULL, *e1 = NULL, *o2 = NULL, *e2 = NULL;
  ck_assert_int_eq(run_commsim(args, &o1, &e1), 0);
  const char *fresh[] = {"sweep", "-q", "-j", "2", "--reproducible", f, "-o", b, NULL};
  ck_assert_int_eq(run_commsim(fresh, &o2, &e2), 0);
  assert_same_tree(a, b);
  rm_rf(out);
}
END_TEST

/* A run killed by SIGKILL cannot remove its temporary files: the next run
 * into the folder removes those whose process is gone. */
START_TEST(stale_temporaries_removed) {
  g_autofree char *f = scenario("determinism.yaml");
  g_autofree char *out = tmpdir();
  /* a pid that is certainly gone: a child that has been waited for */
  GPid pid;
  const char *argv[] = {"/bin/true", NULL};
  ck_assert(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, NULL));
  int st;
  waitpid(pid, &st, 0);
  g_autofree char *stale = g_strdup_printf("%s/.links.csv.tmp.%s.%d", out, g_get_host_name(), (int)pid);
  g_autofree char *alive = g_strdup_printf("%s/.links.csv.tmp.%s.%d", out, g_get_host_name(), (int)getpid());
  /* a zombie (exited, not yet reaped: waitid's WNOWAIT leaves it so), as a
   * killed sweep rank whose parent died stays under a PID 1 that does not
   * reap: gone too (kill(pid, 0) alone finds it alive) */
  GPid zpid;
  ck_assert(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &zpid, NULL));
  siginfo_t info;
  ck_assert_int_eq(waitid(P_PID, (id_t)zpid, &info, WEXITED | WNOWAIT), 0);
  ck_assert_int_eq(kill(zpid, 0), 0);
  g_autofree char *zombie = g_strdup_printf("%s/.messages.csv.tmp.%s.%d", out, g_get_host_name(), (int)zpid);
  ck_assert(g_file_set_contents(zombie, "a zombie's", -1, NULL));
  /* the same pid on another host (a sweep's rank elsewhere): not ours to judge */
  g_autofree char *remote = g_strdup_printf("%s/.links.csv.tmp.some-other-host.%d", out, (int)pid);
  ck_assert(g_file_set_contents(remote, "another host's", -1, NULL));
  ck_assert(g_file_set_contents(stale, "half a file", -1, NULL));
  ck_assert(g_file_set_contents(alive, "still being written", -1, NULL));
  const char *args[] = {"run", "-q", f, "-o", out, NULL};
  g_autofree char *o = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim(args, &o, &err), 0);
  ck_assert(!g_file_test(stale, G_FILE_TEST_EXISTS));
  ck_assert(!g_file_test(zombie, G_FILE_TEST_EXISTS));
  waitpid(zpid, &st, 0);
  ck_assert(g_file_test(alive, G_FILE_TEST_EXISTS)); /* a live process's file is left alone */
  ck_assert(g_file_test(remote, G_FILE_TEST_EXISTS));
  rm_rf(out);
}
END_TEST

/* ---- determinism ---- */

START_TEST(five_runs_byte_identical) {
  g_autofree char *f = scenario("determinism.yaml");
  g_autofree char *out = tmpdir();
  g_autofree char *first = g_build_filename(out, "0", NULL);
  for (int i = 0; i < 5; i++) {
    g_autofree char *o = g_strdup_printf("%s/%d", out, i);
    const char *args[] = {"run", "-q", "--reproducible", f, "-o", o, NULL};
    g_autofree char *so = NULL, *se = NULL;
    ck_assert_int_eq(run_commsim(args, &so, &se), 0);
    if (i) assert_same_tree(first, o);
  }
  /* the files are those the scenario asks for, and the run had losses */
  g_autoptr(GPtrArray) files = list_files(first);
  ck_assert_uint_eq(files->len, 4);
  g_autofree char *summary = slurp(first, "summary.csv");
  ck_assert(summary != NULL);
  rm_rf(out);
}
END_TEST

START_TEST(traces_change_nothing) {
  g_autofree char *f = scenario("determinism.yaml");
  g_autofree char *out = tmpdir();
  g_autofree char *a = g_build_filename(out, "a", NULL), *b = g_build_filename(out, "b", NULL);
  const char *plain[] = {"run", "-q", "--reproducible", f, "-o", a, NULL};
  const char *traced[] = {"run", "-q", "--reproducible", f, "-o", b, "--set",
                          "output.traces=[summary, iterations, messages, links, packets, timeline]", NULL};
  g_autofree char *o1 = NULL, *e1 = NULL, *o2 = NULL, *e2 = NULL;
  ck_assert_int_eq(run_commsim(plain, &o1, &e1), 0);
  ck_assert_int_eq(run_commsim(traced, &o2, &e2), 0);
  g_autofree char *pk = g_build_filename(b, "packets.csv", NULL), *tl = g_build_filename(b, "timeline.json", NULL);
  ck_assert(g_file_test(pk, G_FILE_TEST_EXISTS) && g_file_test(tl, G_FILE_TEST_EXISTS));
  g_unlink(pk);
  g_unlink(tl);
  assert_same_tree(a, b);
  rm_rf(out);
}
END_TEST

START_TEST(sweep_jobs_byte_identical) {
  g_autofree char *f = scenario("sweep-8.yaml");
  g_autofree char *out = tmpdir();
  g_autofree char *a = g_build_filename(out, "a", NULL), *b = g_build_filename(out, "b", NULL);
  const char *j1[] = {"sweep", "-q", "-j", "1", "--reproducible", f, "-o", a, NULL};
  const char *j2[] = {"sweep", "-q", "-j", "2", "--reproducible", f, "-o", b, NULL};
  g_autofree char *o1 = NULL, *e1 = NULL, *o2 = NULL, *e2 = NULL;
  ck_assert_int_eq(run_commsim(j1, &o1, &e1), 0);
  ck_assert_int_eq(run_commsim(j2, &o2, &e2), 0);
  assert_same_tree(a, b); /* sweep.csv and every point's files */
  g_autofree char *csv = slurp(a, "sweep.csv");
  g_auto(GStrv) lines = g_strsplit(csv, "\r\n", -1);
  ck_assert_uint_eq(g_strv_length(lines), 10); /* header, 8 points, "" */
  rm_rf(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("hardening");
  TCase *inv = tcase_create("invariants");
  tcase_add_test(inv, examples_pass_check);
  tcase_add_test(inv, checks_run_and_change_nothing);
  tcase_add_test(inv, checks_run_at_flow_fidelity);
  tcase_add_test(inv, checker_catches_broken_state);
  suite_add_tcase(s, inv);
  TCase *lim = tcase_create("limits");
  tcase_add_test(lim, routing_tables_refused_with_estimate);
  tcase_add_test(lim, time_overflow_ends_cleanly);
  tcase_add_test(lim, serialization_past_end_of_time);
  tcase_add_test(lim, loss_of_one_gives_up_and_reports);
  tcase_add_test(lim, unwritable_output_folder);
  tcase_add_test(lim, sample_interval_bounded);
  tcase_add_test(lim, sample_interval_bounded_while_running);
  tcase_add_test(lim, sample_interval_estimate_kept);
  tcase_add_test(lim, background_faster_than_link);
  tcase_add_test(lim, disk_full);
  suite_add_tcase(s, lim);
  TCase *sig = tcase_create("signals");
  tcase_add_test(sig, sigint_during_run);
  tcase_add_test(sig, sigint_during_sweep_then_resume);
  tcase_add_test(sig, stale_temporaries_removed);
  suite_add_tcase(s, sig);
  TCase *det = tcase_create("determinism");
  tcase_add_test(det, five_runs_byte_identical);
  tcase_add_test(det, traces_change_nothing);
  tcase_add_test(det, sweep_jobs_byte_identical);
  suite_add_tcase(s, det);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
