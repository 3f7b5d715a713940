/* test_pfc.c - priority flow control (SPEC 7.3): lossless incast, pause
 * propagation, deadlock reported and not hung, the headroom check, the
 * watchdog. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "commsim/fabric.h"
#include "simutil.h"

static double fct(Run *r, uint32_t m) {
  const CsMessageStats *x = cs_fabric_message(cs_sim_fabric(r->sim), m);
  ck_assert(x->delivered);
  return (double)(x->end - x->start) * 1e-12;
}

/* 8 senders of 10 MB into one 10 Gbps port on a star; ingress buffers of
 * 300 KB, XOFF at 200 KB.  The port is the bottleneck: with PFC nothing is
 * dropped and the last byte arrives after N x size on the wire / B
 * (1500-byte packets carrying 1442 bytes; one packet's store-and-forward
 * and 2 us of latency are under 0.1 %). */
static const char *incast = "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 300KB, pfc: {xoff: 200KB, xon: 160KB}}\n"
                            "topology: {type: star, workers: 9}\n"
                            "transport: {protocol: fixed, window: 1000pkt}\n"
                            "flows:\n"
                            "  - {src: w1, dst: w0, size: 10MB}\n  - {src: w2, dst: w0, size: 10MB}\n"
                            "  - {src: w3, dst: w0, size: 10MB}\n  - {src: w4, dst: w0, size: 10MB}\n"
                            "  - {src: w5, dst: w0, size: 10MB}\n  - {src: w6, dst: w0, size: 10MB}\n"
                            "  - {src: w7, dst: w0, size: 10MB}\n  - {src: w8, dst: w0, size: 10MB}\n";

START_TEST(test_incast) {
  Run r = sim_load(incast, "incast", NULL);
  cs_sim_set_checks(r.sim, true);
  sim_go(&r);
  const CsSummary *m = cs_sim_summary(r.sim);
  ck_assert_uint_eq(m->packets_dropped, 0);
  ck_assert_uint_gt(m->pause_frames, 0);
  ck_assert_double_gt(m->paused_s_max, 0.01);
  double want = 8 * 10e6 * 1500.0 / 1442.0 * 8 / 10e9; /* 0.06657 s */
  double got = sim_last_end(&r);
  ck_assert_msg(fabs(got / want - 1) <= 0.02, "incast: %.6f s, N x size / B = %.6f s", got, want);
  sim_done(&r);
  /* without PFC the 300 KB port drops, and reno recovers every flow */
  r = sim_load(incast, "incast", (const char *const[]){"defaults.pfc.xoff=0", "transport.protocol=reno", NULL});
  sim_go(&r);
  ck_assert_uint_gt(cs_sim_summary(r.sim)->packets_dropped, 0);
  ck_assert_uint_eq(cs_sim_summary(r.sim)->pause_frames, 0);
  sim_last_end(&r);
  sim_done(&r);
}
END_TEST

/* Pause propagation: 4 senders on switch s0 fill receiver r behind switch
 * s1 (a 10 Gbps port); a victim h0 -> v shares only the 100 Gbps s0-s1
 * link with them.  Without PFC its path is free: 20 MB in 20e6 x 1500/1442
 * x 8 / 10 Gbps = 16.6 ms.  With PFC, s1 pauses s0 -> s1 for r's packets
 * and the victim's wait behind them (head-of-line blocking): it ends with
 * the congested flows, about 4 times later. */
static const char *hol = "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 400KB, pfc: {xoff: 200KB, xon: 160KB}}\n"
                         "nodes: [{name: s0, role: switch}, {name: s1, role: switch}, {name: h0, role: host},\n"
                         "        {name: h1, role: host}, {name: h2, role: host}, {name: h3, role: host},\n"
                         "        {name: h4, role: host}, {name: r, role: host}, {name: v, role: host}]\n"
                         "links: [{a: s0, b: s1, bandwidth: 100Gbps}, {a: h0, b: s0}, {a: h1, b: s0}, {a: h2, b: s0},\n"
                         "        {a: h3, b: s0}, {a: h4, b: s0}, {a: r, b: s1}, {a: v, b: s1}]\n"
                         "transport: {protocol: reno}\n"
                         "flows:\n"
                         "  - {src: h0, dst: v, size: 20MB}\n  - {src: h1, dst: r, size: 20MB}\n"
                         "  - {src: h2, dst: r, size: 20MB}\n  - {src: h3, dst: r, size: 20MB}\n"
                         "  - {src: h4, dst: r, size: 20MB}\n";

START_TEST(test_pause_propagation) {
  double alone = 20e6 * 1500.0 / 1442.0 * 8 / 10e9;
  Run r = sim_load(hol, "hol", (const char *const[]){"defaults.pfc.xoff=0", NULL});
  sim_go(&r);
  double free_path = fct(&r, 0);
  ck_assert_msg(fabs(free_path / alone - 1) <= 0.02, "victim without PFC: %.6f s, alone %.6f s", free_path, alone);
  sim_done(&r);
  r = sim_load(hol, "hol", NULL);
  sim_go(&r);
  double blocked = fct(&r, 0);
  ck_assert_uint_eq(cs_sim_summary(r.sim)->packets_dropped, 0);
  ck_assert_msg(blocked > 3 * free_path, "victim with PFC: %.6f s, without %.6f s", blocked, free_path);
  sim_done(&r);
}
END_TEST

/* A ring of 5 hosts that forward, each sending 2 hops clockwise: every
 * link carries one flow in transit, so each direction's pause waits on the
 * next one's.  With small buffers the cycle closes: the run ends at once
 * with the cycle named (not after minutes of timeouts, and never hung).
 * Without the fifth flow there is no cycle, and every flow arrives. */
static const char *ring = "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 100KB, pfc: {xoff: 60KB, xon: 40KB}}\n"
                          "topology: {type: ring, workers: 5}\n"
                          "transport: {protocol: fixed, window: 1000pkt}\n"
                          "flows:\n"
                          "  - {src: w0, dst: w2, size: 20MB}\n  - {src: w1, dst: w3, size: 20MB}\n"
                          "  - {src: w2, dst: w4, size: 20MB}\n  - {src: w3, dst: w0, size: 20MB}\n";

START_TEST(test_deadlock) {
  g_autofree char *cyclic = g_strconcat(ring, "  - {src: w4, dst: w1, size: 20MB}\n", NULL);
  Run r = sim_load(cyclic, "ring", NULL);
  GError *e = NULL;
  ck_assert(!cs_sim_run(r.sim, &e));
  ck_assert(g_error_matches(e, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_STUCK)); /* run writes its files all the same */
  ck_assert_msg(strstr(e->message, "PFC deadlock") &&
                    strstr(e->message, "w0->w1, w1->w2, w2->w3, w3->w4, w4->w0") &&
                    strstr(e->message, "5 messages unfinished"),
                "%s", e->message);
  ck_assert_double_lt((double)cs_engine_now(cs_sim_engine(r.sim)) * 1e-12, 0.01);
  g_error_free(e);
  sim_done(&r);
  r = sim_load(ring, "ring", NULL);
  cs_sim_set_checks(r.sim, true);
  sim_go(&r);
  sim_last_end(&r);
  ck_assert_uint_eq(cs_sim_summary(r.sim)->packets_dropped, 0);
  ck_assert_uint_gt(cs_sim_summary(r.sim)->pause_frames, 0);
  sim_done(&r);
}
END_TEST

/* Loss on a PFC link is decided when a packet arrives (a pause moves its
 * transmission): every byte is still accounted for (--check), and the
 * flows end. */
START_TEST(test_lossy_pfc) {
  Run r = sim_load(incast, "incast", (const char *const[]){"defaults.loss=0.5%", "transport.protocol=reno", NULL});
  cs_sim_set_checks(r.sim, true);
  sim_go(&r);
  sim_last_end(&r);
  ck_assert_uint_gt(cs_sim_summary(r.sim)->packets_lost, 0);
  ck_assert_uint_eq(cs_sim_summary(r.sim)->packets_dropped, 0);
  sim_done(&r);
}
END_TEST

/* `yaml` loads and its simulation is refused with a message that starts with `prefix`. */
static void refused_at(const char *yaml, const char *name, const char *const *sets, const char *prefix) {
  GError *e = NULL;
  CsScenario *s = cs_scenario_load_string(yaml, name, sets, &e);
  ck_assert_msg(s != NULL, "%s", e ? e->message : "");
  ck_assert_ptr_null(cs_sim_new(s, &e));
  ck_assert_msg(g_str_has_prefix(e->message, prefix), "%s", e->message);
  g_clear_error(&e);
  cs_scenario_free(s);
}

START_TEST(test_headroom) {
  /* 100 us each way at 10 Gbps: 2 x 125 KB + 2 MTU must fit above xoff */
  GError *e = NULL;
  CsScenario *s = cs_scenario_load_string(incast, "incast", (const char *const[]){"defaults.latency=100us", NULL}, &e);
  ck_assert_ptr_nonnull(s);
  CsSim *sim = cs_sim_new(s, &e);
  ck_assert_ptr_null(sim);
  ck_assert_msg(strstr(e->message, "link w0-sw0: PFC headroom: buffer 300000 B - xoff 200000 B leaves 100000 B") &&
                    strstr(e->message, "(2 x latency x bandwidth + 2 MTU = 253000 B)"),
                "%s", e->message);
  g_clear_error(&e);
  cs_scenario_free(s);
  /* the error names where the link's settings came from: here the
   * links_override entry of line 2 (it had no line at all) */
  refused_at("topology: {type: star, workers: 2}\n"
             "links_override: [{match: w1-sw0, buffer: 50KB, pfc: {xoff: 48KB}}]\n"
             "flows: [{src: w0, dst: w1, size: 1MB}]\n",
             "o.yaml", NULL, "o.yaml:2:18: error: link w1-sw0: PFC headroom: buffer 50000 B - xoff 48000 B");
  /* an override that sets only ecn leaves the place with the buffer and
   * xoff (defaults, line 1), and a dumbbell's bottleneck is its own */
  refused_at("defaults: {bandwidth: 25Gbps, latency: 2us, pfc: {xoff: 50000B}, buffer: 60000B}\n"
             "topology: {type: star, workers: 2}\n"
             "links_override: [{match: '*', ecn: {kmin: 10KB, kmax: 100KB}}]\n"
             "transport: {protocol: roce, mtu: 9000B}\n"
             "flows: [{src: w0, dst: w1, size: 1MB}]\n",
             "e.yaml", NULL, "e.yaml:1:11: error: link w0-sw0: PFC headroom");
  refused_at("defaults: {bandwidth: 10Gbps, latency: 1us}\n"
             "topology: {type: dumbbell, workers: 4,\n"
             "  bottleneck: {latency: 50us, buffer: 300KB, pfc: {xoff: 200KB}}}\n"
             "flows: [{src: w0, dst: w2, size: 1MB}]\n",
             "b.yaml", NULL, "b.yaml:3:15: error: link sw0-sw1: PFC headroom");
  /* a --set that broke the headroom is named, not the file's defaults */
  refused_at(incast, "incast", (const char *const[]){"defaults.pfc.xoff=295KB", NULL},
             "--set defaults.pfc.xoff=295KB: error: link w0-sw0: PFC headroom");
}
END_TEST

/* Background packets larger than transport.mtu: the headroom holds two of
 * them (2 x 1 us x 10 Gbps / 8 + 2 x 9000 B = 20500 B above xoff).  Found
 * by a random campaign: with room for two MTUs only (5500 B) the run
 * dropped 2,295,000 B that came in by PFC ports, an internal error. */
START_TEST(test_headroom_background) {
  const char *y = "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 120500B, pfc: {xoff: 100000B}}\n"
                  "topology: {type: star, workers: 3}\n"
                  "transport: {protocol: roce}\n"
                  "background:\n"
                  "  - {src: w1, dst: w0, pattern: cbr, rate: 10Gbps, size: 9000B}\n"
                  "  - {src: w2, dst: w0, pattern: cbr, rate: 10Gbps, size: 9000B}\n"
                  "duration: 2ms\n";
  Run r = sim_load(y, "bg", NULL);
  sim_go(&r); /* (a drop at a PFC port fails the run) */
  ck_assert_uint_eq(cs_sim_summary(r.sim)->bg_packets_dropped, 0);
  ck_assert_uint_gt(cs_sim_summary(r.sim)->pause_frames, 0);
  sim_done(&r);
  GError *e = NULL;
  CsScenario *s = cs_scenario_load_string(y, "bg", (const char *const[]){"defaults.buffer=120499B", NULL}, &e);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_null(cs_sim_new(s, &e));
  ck_assert_msg(strstr(e->message, "(2 x latency x bandwidth + 2 x background[0]'s size = 20500 B)"), "%s", e->message);
  g_clear_error(&e);
  cs_scenario_free(s);
}
END_TEST

/* The watchdog: a link that loses everything, retransmissions that never
 * arrive; after 50 ms without a delivered packet the run ends, naming the
 * message (before transport.max_timeouts of backoff would abandon it). */
START_TEST(test_watchdog) {
  Run r = sim_load("topology: {type: star, workers: 2}\n"
                   "links_override: [{match: w1-sw0, loss: 1}]\n"
                   "watchdog: 50ms\n"
                   "flows: [{src: w0, dst: w1, size: 1MB}]\n",
                   "dead", NULL);
  GError *e = NULL;
  ck_assert(!cs_sim_run(r.sim, &e));
  ck_assert_msg(strstr(e->message, "the watchdog ended the run") &&
                    strstr(e->message, "1 message unfinished: message 0 (w0 -> w1, 1000000 B"),
                "%s", e->message);
  g_error_free(e);
  sim_done(&r);
}
END_TEST

/* Cases a review found stalling, each must now complete under --check:
 * an egress queue left idle with entries long gone must not keep its
 * ingress count up (the XOFF came too early, the XON never); a host of a
 * ring that sends by two ports (ECMP per packet) must find its TCP small
 * queue entries per port when one of them pauses. */
START_TEST(test_review_cases) {
  static const char *const cases[] = {
      "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 300KB, pfc: {xoff: 200KB, xon: 160KB}}\n"
      "topology: {type: star, workers: 5}\n"
      "links_override: [{match: w1-sw0, bandwidth: 5Gbps}]\n"
      "transport: {protocol: fixed, window: 125pkt}\n"
      "watchdog: 1s\n"
      "flows: [{src: w0, dst: w1, size: 2MB}, {src: w0, dst: w3, size: 2MB, start: 10ms},\n"
      "        {src: w4, dst: w3, size: 2MB, start: 10ms}]\n",
      "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 100KB}\n"
      "topology: {type: ring, workers: 4}\n"
      "links_override: [{match: w0-w1, pfc: {xoff: 60KB, xon: 40KB}}]\n"
      "routing: ecmp-packet\nseed: 3\n"
      "transport: {protocol: fixed, window: 1000pkt}\n"
      "watchdog: 100ms\n"
      "flows: [{src: w0, dst: w2, size: 20MB}, {src: w1, dst: w2, size: 20MB}]\n",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    Run r = sim_load(cases[i], "review", NULL);
    cs_sim_set_checks(r.sim, true);
    sim_go(&r);
    sim_last_end(&r);
    ck_assert_uint_eq(cs_sim_summary(r.sim)->packets_dropped, 0);
    sim_done(&r);
  }
}
END_TEST

static Suite *pfc_suite(void) {
  Suite *s = suite_create("pfc");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_incast);
  tcase_add_test(tc, test_pause_propagation);
  tcase_add_test(tc, test_deadlock);
  tcase_add_test(tc, test_lossy_pfc);
  tcase_add_test(tc, test_headroom);
  tcase_add_test(tc, test_headroom_background);
  tcase_add_test(tc, test_watchdog);
  tcase_add_test(tc, test_review_cases);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(pfc_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
