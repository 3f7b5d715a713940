/* test_run.c - `commsim run` as a user meets it: exit statuses, the
 * summary, and messages.csv (columns, rows, atomic writing). */
#include "config.h"

#include "testutil.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>



START_TEST(test_run_flows_and_messages_csv) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  /* N = 1000 packets over 2 hops at 10 Gbps, 1 us: 2 + 2.4 + 999 * 1.2 us */
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 3}\n"
                                  "transport: {protocol: fixed, window: 10000pkt}\n"
                                  "flows:\n  - {src: w0, dst: w1, size: 1442000B}\n"
                                  "  - {src: w2, dst: w0, size: 100B, start: 5ms}\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", dir, NULL}, &out, &err), 0);
  ck_assert_str_eq(err, "");
  ck_assert_ptr_nonnull(strstr(out, "packets            sent    delivered      dropped         lost    in_flight"));
  g_free(out), g_free(err);
  g_autofree char *csv_path = g_build_filename(dir, "messages.csv", NULL);
  g_autofree char *csv = NULL;
  ck_assert(g_file_get_contents(csv_path, &csv, NULL, NULL));
  /* the 100 B flow: one 158 B packet, 2 hops: start 5 ms + 2 * 1 us + 2 * 126.4 ns */
  ck_assert_str_eq(csv,
                   "iteration,step,src,dst,payload_bytes,wire_bytes,start_s,end_s,retransmissions\r\n"
                   "0,0,w0,w1,1442000,1500000,0.000000000000,0.001203200000,0\r\n"
                   "0,1,w2,w0,100,158,0.005000000000,0.005002252800,0\r\n");
  /* no temporary file is left behind */
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name;
  int files = 0;
  while ((name = g_dir_read_name(d))) files++;
  g_dir_close(d);
  ck_assert_int_eq(files, 3); /* messages.csv, summary.csv and links.csv: no temporary file left */
  g_unlink(csv_path);
  g_autofree char *sum_path = g_build_filename(dir, "summary.csv", NULL);
  g_unlink(sum_path);
  g_autofree char *links_path = g_build_filename(dir, "links.csv", NULL);
  g_unlink(links_path);
  g_rmdir(dir);
  g_unlink(f);
}
END_TEST

START_TEST(test_run_example) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *ex = g_build_filename(test_srcdir(), "topologies", "dumbbell.yaml", NULL);
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", ex, "-o", dir, "-q", NULL}, &out, &err), 0);
  ck_assert_str_eq(out, ""); /* -q */
  g_free(out), g_free(err);
  g_autofree char *csv_path = g_build_filename(dir, "messages.csv", NULL);
  ck_assert(g_file_test(csv_path, G_FILE_TEST_EXISTS));
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_run_dead_link_exits_1) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml("nodes: [{name: a, role: worker}, {name: b, role: worker}]\n"
                                  "links: [{a: a, b: b, loss: 1}]\n"
                                  "transport: {max_timeouts: 2}\n"
                                  "flows: [{src: a, dst: b, size: 10KB}]\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", dir, "-q", NULL}, &out, &err), 1);
  g_autofree char *want = g_strdup_printf(
      "%s: error: 1 message was undeliverable (abandoned after 2 consecutive timeouts); see messages.csv (no end_s)\n", f);
  ck_assert_str_eq(err, want);
  g_free(out), g_free(err);
  g_autofree char *csv_path = g_build_filename(dir, "messages.csv", NULL);
  g_autofree char *csv = NULL;
  ck_assert(g_file_get_contents(csv_path, &csv, NULL, NULL));
  ck_assert_ptr_nonnull(strstr(csv, "\r\n0,0,a,b,10000,"));
  ck_assert_ptr_nonnull(strstr(csv, ",0.000000000000,,")); /* no end_s */
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
  g_unlink(f);
}
END_TEST

START_TEST(test_run_errors) {
  char *out = NULL, *err = NULL;
  /* a codec the collective cannot carry: a located refusal, status 2 */
  g_autofree char *ring = g_build_filename(test_srcdir(), "topologies", "ring.yaml", NULL);
  ck_assert_int_eq(run_commsim((const char *const[]){"run", ring, "--set", "workload.compression.method=topk", NULL},
                               &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "ring.yaml:22:15: error: workload: compression method 'topk' cannot be carried "
                                    "by collective 'ring': each worker keeps different indices, so payloads cannot "
                                    "be added at a reduction hop; use ps or allgather\n"));
  g_free(out), g_free(err);
  /* an output folder that cannot be made: status 1, and the reason */
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\nflows: [{src: w0, dst: w1, size: 1KB}]\n");
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", "/proc/commsim/x", NULL}, &out, &err), 1);
  ck_assert_ptr_nonnull(strstr(err, "/proc/commsim/x: error: cannot create the output folder:"));
  g_free(out), g_free(err);
  /* --seed is --set seed=: one parser, one range (0 to 2^64-1) */
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "--seed", "-5", NULL}, &out, &err), 2);
  ck_assert_str_eq(err, "--set seed=-5: error: seed: '-5' is not a whole number from 0 to 2^64-1\n");
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "--seed", "-1", NULL}, &out, &err), 2);
  g_free(out), g_free(err);
  g_autofree char *d1 = g_dir_make_tmp("commsim-run-XXXXXX", NULL), *d2 = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", d1, "--seed", "18446744073709551615", NULL},
                               &out, &err), 0);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", d2, "--set", "seed=18446744073709551615", NULL},
                               &out, &err), 0);
  g_free(out), g_free(err);
  g_autofree char *m1 = slurp(d1, "messages.csv"), *m2 = slurp(d2, "messages.csv");
  ck_assert_str_eq(m1, m2);
  /* an empty output folder name is bad usage */
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", "", NULL}, &out, &err), 2);
  ck_assert_str_eq(err, "commsim run: -o: the output folder's name is empty\n");
  g_free(out), g_free(err);
  rm_rf(d1);
  rm_rf(d2);
  ck_assert_int_eq(run_commsim((const char *const[]){"run", NULL}, &out, &err), 2);
  g_free(out), g_free(err);
  g_unlink(f);
}
END_TEST

/* A folder holds one run's files: what an earlier run wrote and this one
 * does not (a trace no longer asked for, plots) is removed; a sweep's
 * folder is refused.  A file with a sweep: says that run simulates its
 * base point only. */
START_TEST(test_run_output_folder) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\nflows: [{src: w0, dst: w1, size: 1KB}]\n"
                                  "output: {traces: [summary, messages, links, timeline]}\n"
                                  "sweep: {defaults.bandwidth: [1Gbps, 10Gbps]}\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", dir, NULL}, &out, &err), 0);
  ck_assert_ptr_nonnull(strstr(err, "note: the scenario has a sweep: of 2 points; run simulates its base point only"));
  g_free(out), g_free(err);
  g_autofree char *png = g_build_filename(dir, "queues.png", NULL);
  ck_assert(g_file_set_contents(png, "an old plot", -1, NULL));
  g_autofree char *tl = g_build_filename(dir, "timeline.json", NULL);
  ck_assert(g_file_test(tl, G_FILE_TEST_EXISTS));
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", dir, "--set", "output.traces=[summary]", NULL},
                               &out, &err), 0);
  g_free(out), g_free(err);
  ck_assert(!g_file_test(tl, G_FILE_TEST_EXISTS));
  ck_assert(!g_file_test(png, G_FILE_TEST_EXISTS));
  g_autofree char *msg = g_build_filename(dir, "messages.csv", NULL);
  ck_assert(!g_file_test(msg, G_FILE_TEST_EXISTS));
  g_autofree char *sum = slurp(dir, "summary.csv");
  ck_assert_ptr_nonnull(sum);
  /* a sweep's folder */
  g_autofree char *sweep = g_build_filename(dir, "sweep.csv", NULL);
  ck_assert(g_file_set_contents(sweep, "x\r\n", -1, NULL));
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", dir, NULL}, &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "error: this folder holds a sweep's results (sweep.csv)"));
  g_free(out), g_free(err);
  rm_rf(dir);
  g_unlink(f);
}
END_TEST

/* What a user reads: sizes in one unit per column and for people, "1
 * server", and a link table that shows where the drops are, not only the
 * busiest directions.  Here a ps incast drops at the server's port while
 * a background flow from w1 keeps w1's link the busiest of all. */
/* A gradient smaller than the bucket size is one bucket of its own size
 * (a 4-byte gradient was "1 bucket of 25MB") */
START_TEST(test_run_small_gradient) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\nworkload: {params: 1, iterations: 1}\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", dir, NULL}, &out, &err), 0);
  ck_assert_msg(strstr(out, "on 2 workers, none, 1 bucket of 4B (the whole gradient)\n"), "%s", out);
  g_free(out), g_free(err);
  rm_rf(dir);
  g_unlink(f);
}
END_TEST

/* validate shows the links whose settings differ from the defaults (a
 * links_override's loss was nowhere in its output) */
START_TEST(test_validate_other_links) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 3}\nworkload: {params: 1M}\n"
                                       "links_override: [{match: w0-sw0, loss: {model: gilbert-elliott, p: 0.01, r: 0.1, "
                                       "loss_bad: 0.5}}, {match: 'w?-sw0', bandwidth: 1Gbps}, {match: w0-sw0, bandwidth: 10Gbps}]\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", f, NULL}, &out, &err), 0);
  ck_assert_msg(strstr(out, "\nw0-sw0       10Gbps, latency 1us, buffer 512KB, queue droptail, loss gilbert-elliott p 0.01 "
                            "r 0.1 good 0 bad 0.5 (long-run 0.0454545)\n"),
                "%s", out);
  ck_assert_msg(strstr(out, "\nw1-sw0 +1    1Gbps, latency 1us, buffer 512KB, queue droptail, no loss\n"), "%s", out);
  g_free(out), g_free(err);
  g_unlink(f);
}
END_TEST

/* validate tells messages.csv's size as run does (test_traces checks the
 * count): a ring of 2,048 workers, 3 iterations, 25.2 M rows */
START_TEST(test_validate_messages_note) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2048}\nfidelity: flow\n"
                                       "workload: {params: 25M, iterations: 3, compute: 0, buckets: 0, collective: ring}\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"validate", f, NULL}, &out, &err), 0);
  ck_assert_msg(strstr(err, ": note: messages.csv will hold about 25.2 M rows, about 1.56 GB"), "%s", err);
  g_free(out), g_free(err);
  g_unlink(f);
}
END_TEST

/* --help names the command as it is typed */
START_TEST(test_run_help_usage) {
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", "--help", NULL}, &out, &err), 0);
  ck_assert_msg(strstr(out, "\n  commsim run [OPTION"), "%s", out);
  g_free(out), g_free(err);
}
END_TEST

/* At flow fidelity loss is a cap: run says its times are a bound (they
 * were 0.62 of the packet fidelity's on resnet50-lossy-link, unsaid) */
START_TEST(test_run_flow_loss_note) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 2}\ndefaults: {loss: 1%}\n"
                                       "flows: [{src: w0, dst: w1, size: 1MB}]\n");
  for (int k = 0; k < 2; k++) {
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", dir, "--set", k ? "fidelity=packet" : "fidelity=flow", NULL},
                                 &out, &err),
                     0);
    ck_assert_msg((strstr(err, "with loss its times are a bound, not a measure") != NULL) == (k == 0), "%s", err);
    g_free(out), g_free(err);
  }
  /* roce has no Mathis cap: its retransmissions are bytes and its
   * timeouts are not modelled, which its note says instead (it said
   * "a bound", which roce's times at flow fidelity are not) */
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", dir, "--set", "fidelity=flow", "--set",
                                                     "transport.protocol=roce", NULL},
                               &out, &err),
                   0);
  ck_assert_msg(strstr(err, "a roce flow on a lossy route carries its retransmissions") != NULL, "%s", err);
  ck_assert_msg(strstr(err, "a bound") == NULL, "%s", err);
  g_free(out), g_free(err);
  rm_rf(dir);
  g_unlink(f);
}
END_TEST

/* `run yaml -q` once per case, each with up to two --set values (NULL:
 * none): stderr holds `note` exactly in the cases of `want`. */
static void check_note(const char *yaml, const char *const cases[][2], int n, const char *note, const bool *want) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml(yaml);
  for (int k = 0; k < n; k++) {
    const char *args[10] = {"run", f, "-q", "-o", dir};
    int a = 5;
    for (int j = 0; j < 2 && cases[k][j]; j++) {
      args[a++] = "--set";
      args[a++] = cases[k][j];
    }
    args[a] = NULL;
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run_commsim(args, &out, &err), 0);
    ck_assert_msg((strstr(err, note) != NULL) == want[k], "case %d (%s): %s", k, cases[k][0], err);
    g_free(out), g_free(err);
  }
  rm_rf(dir);
  g_unlink(f);
}

/* DCQCN hears of congestion by ECN marks alone: with no link marking, its
 * queue pairs stay at line rate, which run says (a PFC incast without
 * `ecn` looked like DCQCN at work) */
START_TEST(test_run_dcqcn_no_ecn_note) {
  const char *const sets[][2] = {{"transport.cc=dcqcn", NULL},
                                 {"transport.cc=dcqcn", "defaults.ecn={kmin: 5KB, kmax: 100KB, pmax: 0.01}"},
                                 {"transport.cc=none", NULL}};
  check_note("topology: {type: star, workers: 3}\ntransport: {protocol: roce}\n"
             "flows: [{src: w1, dst: w0, size: 100KB}, {src: w2, dst: w0, size: 100KB}]\n",
             sets, 3, "no link marks ECN", (const bool[]){true, false, false});
}
END_TEST

/* A run that ends stuck (here a PFC deadlock) exits 1 and still writes
 * its files up to then: the paused directions of the cycle in links.csv,
 * the unfinished messages in messages.csv. */
START_TEST(test_run_stuck_writes) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml(
      "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 100KB, pfc: {xoff: 60KB, xon: 40KB}}\n"
      "topology: {type: ring, workers: 5}\ntransport: {protocol: fixed, window: 1000pkt}\nflows:\n"
      "  - {src: w0, dst: w2, size: 20MB}\n  - {src: w1, dst: w3, size: 20MB}\n  - {src: w2, dst: w4, size: 20MB}\n"
      "  - {src: w3, dst: w0, size: 20MB}\n  - {src: w4, dst: w1, size: 20MB}\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", dir, NULL}, &out, &err), 1);
  ck_assert_msg(strstr(err, "PFC deadlock") && strstr(err, "cover the run up to"), "%s", err);
  g_autofree char *links = g_build_filename(dir, "links.csv", NULL);
  g_autofree char *msgs = g_build_filename(dir, "messages.csv", NULL);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(links, &text, NULL, NULL));
  /* a row of w0 -> w1 with time paused (the last column) */
  gboolean paused = FALSE;
  g_auto(GStrv) rows = g_strsplit(text, "\n", -1);
  for (char **r = rows; *r && !paused; r++)
    if (g_str_has_prefix(*r, "w0,w1,")) paused = g_ascii_strtod(strrchr(*r, ',') + 1, NULL) > 0;
  ck_assert_msg(paused, "%s", text);
  g_autofree char *mtext = NULL;
  ck_assert(g_file_get_contents(msgs, &mtext, NULL, NULL));
  g_auto(GStrv) mrows = g_strsplit(mtext, "\n", -1);
  ck_assert_int_eq(g_strv_length(mrows), 7); /* header, 5 rows, the final newline */
  g_free(out), g_free(err);
  rm_rf(dir);
  g_unlink(f);
}
END_TEST

/* A hybrid: section at another fidelity is not silently ignored */
START_TEST(test_run_hybrid_section_note) {
  const char *const fids[][2] = {{"fidelity=packet", NULL}, {"fidelity=flow", NULL}, {"fidelity=hybrid", NULL}};
  check_note("topology: {type: star, workers: 2}\nhybrid: {rounds: 8}\nflows: [{src: w0, dst: w1, size: 100KB}]\n", fids, 3,
             ":2:9: note: the hybrid: section has no effect at fidelity", (const bool[]){true, true, false});
}
END_TEST

/* RACK-TLP probes in the open state only (RFC 8985 7.2): after a
 * timeout the retransmissions arm no probe, so on a link that loses
 * everything the transmissions follow the RTO's doubling alone.  (A probe
 * 10 ms after each timeout doubled them: 0, 0.01, 0.02, 0.04, 0.05, ...)
 * Before the first timeout the probe takes the RTO's place (no RTT
 * sample: PTO = initial_rto, capped at the RTO): 0, 0.01 (the probe),
 * 0.02 (the RTO), 0.04, 0.08, ... */
START_TEST(test_run_no_probe_after_timeout) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml("nodes: [{name: a, role: worker}, {name: b, role: worker}]\n"
                                       "links: [{a: a, b: b, bandwidth: 10Gbps, latency: 10us, loss: 1}]\n"
                                       "transport: {protocol: cubic, recovery: rack, max_timeouts: 6}\n"
                                       "flows: [{src: a, dst: b, size: 1KB}]\noutput: {traces: [summary, packets]}\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", dir, NULL}, &out, &err), 1);
  g_autofree char *path = g_build_filename(dir, "packets.csv", NULL);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  g_auto(GStrv) rows = g_strsplit(text, "\n", -1);
  double t[16];
  int n = 0;
  for (char **r = rows; *r && n < 16; r++)
    if (strstr(*r, ",transmit,")) t[n++] = g_ascii_strtod(*r, NULL);
  ck_assert_int_ge(n, 6);
  double d = (t[2] - t[1]) - (t[1] - t[0]);
  ck_assert_msg(d <= 1e-4 && d >= -1e-4, "transmissions 0-2: %.6f, %.6f, %.6f s", t[0], t[1], t[2]);
  for (int i = 3; i < n; i++) /* every gap at least about twice the one before */
    ck_assert_msg(t[i] - t[i - 1] >= 1.9 * (t[i - 1] - t[i - 2]), "transmissions %d-%d: %.6f, %.6f, %.6f s", i - 2, i,
                  t[i - 2], t[i - 1], t[i]);
  g_free(out), g_free(err);
  rm_rf(dir);
  g_unlink(f);
}
END_TEST

/* summary.csv's servers: those that ran the ps (workload.servers), not
 * every server of the topology */
START_TEST(test_run_summary_servers) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 4, servers: 2}\n"
                                       "workload: {params: 100K, iterations: 1, compute: 1ms, collective: ps}\n");
  const char *sets[] = {"seed=1", "workload.servers=[ps0]"};
  const char *want[] = {"2", "1"};
  for (int k = 0; k < 2; k++) {
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-q", "-o", dir, "--set", sets[k], NULL}, &out, &err), 0);
    g_autofree char *path = g_build_filename(dir, "summary.csv", NULL);
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    g_auto(GStrv) rows = g_strsplit(text, "\n", -1);
    g_auto(GStrv) head = g_strsplit(rows[0], ",", -1), row = g_strsplit(rows[1], ",", -1);
    ck_assert_str_eq(head[3], "servers");
    ck_assert_msg(!strcmp(row[3], want[k]), "%s: servers %s", sets[k], row[3]);
    g_free(out), g_free(err);
  }
  rm_rf(dir);
  g_unlink(f);
}
END_TEST

/* commsim model says when its ps estimate is the synchronous one */
START_TEST(test_model_async_says) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 4, servers: 1}\n"
                                       "workload: {params: 100K, iterations: 1, compute: 1ms, collective: ps}\n");
  for (int k = 0; k < 2; k++) {
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(
        run_commsim((const char *const[]){"model", f, "--set", k ? "workload.sync=false" : "workload.sync=true", NULL}, &out, &err),
        0);
    ck_assert_msg((strstr(out, "(sync: false: this is the synchronous ps's estimate") != NULL) == (k == 1), "%s", out);
    g_free(out), g_free(err);
  }
  g_unlink(f);
}
END_TEST

/* commsim model of a scenario without a workload: refused, located at the
 * file's start as a missing network is, with what to add */
START_TEST(test_model_no_workload) {
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 4}\n"
                                       "flows: [{src: w1, dst: w0, size: 1MB}]\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"model", f, NULL}, &out, &err), 2);
  g_autofree char *want = g_strdup_printf("%s:1:1: error: commsim model estimates training iterations and the scenario "
                                          "has no workload: add workload:", f);
  ck_assert_msg(g_str_has_prefix(err, want), "%s", err);
  ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "one line: %s", err);
  ck_assert_str_eq(out, "");
  g_free(out), g_free(err);
  g_unlink(f);
}
END_TEST

START_TEST(test_run_console) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml("topology: {type: star, workers: 20, servers: 1}\ndefaults: {buffer: 16pkt}\n"
                                  "workload: {params: 100K, iterations: 1, compute: 1ms, buckets: 0, collective: ps}\n"
                                  "background: [{src: w1, dst: w2, pattern: cbr, rate: 9Gbps}]\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", dir, NULL}, &out, &err), 0);
  ck_assert_msg(strstr(out, "on 20 workers and 1 server, none, 1 bucket of the whole gradient\n"), "%s", out);
  ck_assert_msg(strstr(out, ": training, 1 background source; output in "), "%s", out);
  ck_assert_ptr_nonnull(strstr(out, "  wire bytes per worker      4"));
  ck_assert_ptr_nonnull(strstr(out, " KB   (headers and retransmissions included)"));
  ck_assert_ptr_nonnull(strstr(out, "sent (MB)"));
  /* sw0->ps0 (the incast) and w1->sw0 (the busiest) are both in the table */
  char *table = strstr(out, "\nlink ");
  ck_assert_ptr_nonnull(table);
  ck_assert_ptr_nonnull(strstr(table, "\nsw0->ps0 "));
  ck_assert_ptr_nonnull(strstr(table, "\nw1->sw0 "));
  ck_assert_ptr_nonnull(strstr(table, "(link directions: the 2 with the most drops and losses, then the busiest;"));
  ck_assert_ptr_null(strstr(out, "busiest are)"));
  /* no size written in bytes with a unit glued to it, as 186411372B was */
  GRegex *raw = g_regex_new("[0-9]{4,}B\\b", 0, 0, NULL);
  ck_assert_msg(!g_regex_match(raw, out, 0, NULL), "%s", out);
  g_regex_unref(raw);
  g_free(out), g_free(err);
  /* duration ends the run before any iteration: no zeros where
   * summary.csv has empty cells (it printed "iteration 0.000000 s") */
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", dir, "--set", "duration=100us", NULL}, &out, &err), 0);
  ck_assert_msg(strstr(out, "per worker and iteration: no iteration measured (none finished after the warm-up)\n"), "%s", out);
  ck_assert_msg(!strstr(out, "0.000000 s"), "%s", out);
  g_free(out), g_free(err);
  rm_rf(dir);
  g_unlink(f);
}
END_TEST

/* roce's timeouts with nothing dropped: the note names the cause, packet
 * spraying under go-back-n (out of order: discarded), or else round trips
 * longer than the RTO. */
START_TEST(test_run_roce_timeout_note) {
  g_autofree char *dir = g_dir_make_tmp("commsim-run-XXXXXX", NULL);
  g_autofree char *f = write_temp_yaml("routing: ecmp-packet\n"
                                       "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 512KB, pfc: {xoff: 200KB}}\n"
                                       "topology: {type: fat-tree, k: 4, workers: 16}\n"
                                       "transport: {protocol: roce}\n"
                                       "flows:\n  - {src: w4, dst: w0, size: 2MB}\n  - {src: w8, dst: w0, size: 2MB}\n"
                                       "  - {src: w12, dst: w0, size: 2MB}\n  - {src: w5, dst: w0, size: 2MB}\n");
  char *out = NULL, *err = NULL;
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", dir, NULL}, &out, &err), 0);
  ck_assert_msg(strstr(out, "no packet dropped or lost: routing ecmp-packet sprays") != NULL, "%s", out);
  g_free(out), g_free(err);
  ck_assert_int_eq(run_commsim((const char *const[]){"run", f, "-o", dir, "--set", "transport.retransmit=selective", NULL},
                               &out, &err), 0);
  ck_assert(strstr(out, "routing ecmp-packet sprays") == NULL); /* selective keeps what comes out of order */
  g_free(out), g_free(err);
  rm_rf(dir);
}
END_TEST

static Suite *run_suite(void) {
  Suite *s = suite_create("run");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_run_flows_and_messages_csv);
  tcase_add_test(tc, test_run_roce_timeout_note);
  tcase_add_test(tc, test_run_example);
  tcase_add_test(tc, test_run_dead_link_exits_1);
  tcase_add_test(tc, test_run_errors);
  tcase_add_test(tc, test_run_output_folder);
  tcase_add_test(tc, test_run_console);
  tcase_add_test(tc, test_run_flow_loss_note);
  tcase_add_test(tc, test_run_dcqcn_no_ecn_note);
  tcase_add_test(tc, test_run_stuck_writes);
  tcase_add_test(tc, test_run_hybrid_section_note);
  tcase_add_test(tc, test_run_no_probe_after_timeout);
  tcase_add_test(tc, test_run_summary_servers);
  tcase_add_test(tc, test_model_async_says);
  tcase_add_test(tc, test_model_no_workload);
  tcase_add_test(tc, test_run_help_usage);
  tcase_add_test(tc, test_run_small_gradient);
  tcase_add_test(tc, test_validate_other_links);
  tcase_add_test(tc, test_validate_messages_note);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(run_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
