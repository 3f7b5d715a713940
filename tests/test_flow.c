/* test_flow.c - the flow fidelity (fidelity: flow) against hand
 * calculations, the closed form and the packet fidelity. */
#include "config.h"

#include "testutil.h"

#include <check.h>
#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/model.h"
#include "commsim/scenario.h"
#include "commsim/sim.h"
#include "simutil.h"

static Run run(const char *yaml, const char *fidelity, const char *const *more) {
  return sim_run_at(yaml, "flow.yaml", fidelity, more);
}

static void done(Run *r) { sim_done(r); }

static double end_s(Run *r, uint32_t msg) {
  const CsMessageStats *st = cs_fabric_message(cs_sim_fabric(r->sim), msg);
  ck_assert(st->delivered);
  return (double)st->end * 1e-12;
}

/* 1. Max-min by hand: w0 (2 Gbps link) and w1 (10 Gbps) send S to w2 over
 * a 10 Gbps link.  w0's flow is held to 2 Gbps by its own link; w1's gets
 * the 8 Gbps left, ends first, and w0's goes on at 2 Gbps.  No headers;
 * ACKs of 1 B per packet take 1/1000 of the reverse directions, which no
 * data crosses.  Each end = bits / rate + the path's latencies + the last
 * packet's store-and-forward at the hop that is not the slowest. */
static const char *maxmin = "nodes: [{name: w0, role: host}, {name: w1, role: host}, {name: w2, role: host}, "
                            "{name: sw, role: switch}]\n"
                            "links:\n"
                            "  - {a: w0, b: sw, bandwidth: 2Gbps, latency: 1us}\n"
                            "  - {a: w1, b: sw, bandwidth: 10Gbps, latency: 1us}\n"
                            "  - {a: sw, b: w2, bandwidth: 10Gbps, latency: 1us}\n"
                            "transport: {mtu: 1000B, header: 0B, ack: 1B}\n"
                            "flows:\n"
                            "  - {src: w0, dst: w2, size: 10MB}\n"
                            "  - {src: w1, dst: w2, size: 10MB}\n";

START_TEST(test_max_min_by_hand) {
  Run r = run(maxmin, "flow", NULL);
  double bits = 8 * 10e6, lat = 2e-6, sf2 = 8 * 1000 / 2e9, sf10 = 8 * 1000 / 10e9;
  /* w0: slowest hop is its own 2 Gbps link; the 10 Gbps hop adds a packet's store-and-forward */
  ck_assert_double_eq_tol(end_s(&r, 0), bits / 2e9 + lat + sf10, 1e-9);
  (void)sf2;
  ck_assert_double_eq_tol(end_s(&r, 1), bits / 8e9 + lat + sf10, 1e-9);
  done(&r);
}
END_TEST

/* 1'. Max-min by hand where directions fill together and fill later as
 * others freeze (the refill's heap: a direction's entry moved as its
 * level rises, ties taken by number).  On one switch, every host sending
 * one flow of S (no host queue shared): a and d have 2 Gbps links, the
 * rest 10 Gbps; a, b and c send to r1, d and e to r2.  a's and d's links
 * fill first, both at 2 Gbps; r1's link then holds 8 Gbps for b and c (4
 * each, its level up from 10/3), r2's 8 for e (up from 5).  Ends: e at S /
 * 8 Gbps, b and c at S / 4, a and d at S / 2 (each flow's bottleneck is
 * its own for the rest of its time: no rate moves at an end), plus the
 * latencies and a packet's store-and-forward, as above. */
START_TEST(test_max_min_ties) {
  GString *y = g_string_new("nodes: [{name: sw, role: switch}");
  const char *hosts[] = {"a", "b", "c", "d", "e", "r1", "r2"};
  for (size_t i = 0; i < G_N_ELEMENTS(hosts); i++) g_string_append_printf(y, ", {name: %s, role: host}", hosts[i]);
  g_string_append(y, "]\nlinks:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(hosts); i++)
    g_string_append_printf(y, "  - {a: %s, b: sw, bandwidth: %s, latency: 1us}\n", hosts[i],
                           i == 0 || i == 3 ? "2Gbps" : "10Gbps");
  g_string_append(y, "transport: {mtu: 1000B, header: 0B, ack: 1B}\nflows:\n"
                     "  - {src: a, dst: r1, size: 10MB}\n  - {src: b, dst: r1, size: 10MB}\n"
                     "  - {src: c, dst: r1, size: 10MB}\n  - {src: d, dst: r2, size: 10MB}\n"
                     "  - {src: e, dst: r2, size: 10MB}\n");
  Run r = run(y->str, "flow", NULL);
  double bits = 8 * 10e6, tail = 2e-6 + 8 * 1000 / 10e9;
  const double rate[] = {2e9, 4e9, 4e9, 2e9, 8e9};
  for (uint32_t m = 0; m < G_N_ELEMENTS(rate); m++) ck_assert_double_eq_tol(end_s(&r, m), bits / rate[m] + tail, 1e-9);
  /* one fill of the five at the start; e's end leaves d alone on its
   * links, b's and c's leave a: each refilled alone, outside the count */
  CsNetTotals tot = cs_fabric_totals(cs_sim_fabric(r.sim));
  ck_assert_uint_eq(tot.refills, 1);
  ck_assert_uint_eq(tot.refill_flows, 5);
  done(&r);
  g_string_free(y, TRUE);
}
END_TEST

/* The rows of links.csv (header dropped) of scenario y at flow fidelity
 * sampled every `interval` (NULL: the default); the run in *out, for its
 * fabric (sim_done it). */
static GStrv links_rows(const char *y, const char *interval, Run *out) {
  g_autofree char *dir = g_dir_make_tmp("commsim-flow-XXXXXX", NULL);
  g_autofree char *every = interval ? g_strconcat("output.sample_interval=", interval, NULL) : NULL;
  const char *sets[] = {"fidelity=flow", "output.traces=[summary,links]", every, NULL};
  *out = sim_load(y, "flow.yaml", sets);
  cs_sim_set_output_dir(out->sim, dir);
  sim_go(out);
  GError *e = NULL;
  ck_assert_msg(cs_sim_write_outputs(out->sim, dir, &e), "%s", e ? e->message : "");
  g_autofree char *path = g_build_filename(dir, "links.csv", NULL), *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  rm_rf(dir);
  GStrv lines = g_strsplit(text, "\n", -1);
  GPtrArray *rows = g_ptr_array_new();
  for (guint i = 1; lines[i] && *lines[i]; i++) g_ptr_array_add(rows, g_strdup(g_strchomp(lines[i])));
  g_ptr_array_add(rows, NULL);
  g_strfreev(lines);
  return (GStrv)g_ptr_array_free(rows, FALSE);
}

/* 1b. Bytes carried: the same run's directions report what crossed them,
 * as the packet network counts them.  sw -> w2 carried both flows' 20 MB;
 * w0 -> sw 10 MB; w2 -> sw the ACKs of both, 1 B per 1000 B packet
 * (20,000 B); w1's uplink's reverse, w1's ACKs (10,000 B).  Sampled in
 * intervals of 1 ms, the rows of sw -> w2 add up to the same 20 MB
 * (rounded per row to a byte), and an interval in which a direction carried
 * less than a byte has no row (links.csv in the SPEC). */
START_TEST(test_bytes_carried) {
  Run r = run(maxmin, "flow", NULL);
  CsFabric *f = cs_sim_fabric(r.sim);
  ck_assert_uint_eq(cs_fabric_link_stats(f, 2, 0).bytes, 20000000);
  ck_assert_uint_eq(cs_fabric_link_stats(f, 0, 0).bytes, 10000000);
  ck_assert_uint_eq(cs_fabric_link_stats(f, 2, 1).bytes, 20000);
  ck_assert_uint_eq(cs_fabric_link_stats(f, 1, 1).bytes, 10000);
  ck_assert_uint_eq(cs_fabric_link_stats(f, 1, 0).bytes, 10000000);
  done(&r);
  Run s;
  g_auto(GStrv) lines = links_rows(maxmin, "1ms", &s);
  double down = 0;
  guint rows = 0;
  for (guint i = 0; lines[i]; i++) {
    g_auto(GStrv) v = g_strsplit(lines[i], ",", -1);
    ck_assert_uint_ge(g_strv_length(v), 5);
    ck_assert_msg(g_ascii_strtod(v[4], NULL) >= 1, "a row without a byte: %s", lines[i]);
    if (!strcmp(v[0], "sw") && !strcmp(v[1], "w2")) down += g_ascii_strtod(v[4], NULL), rows++;
  }
  ck_assert_uint_ge(rows, 40); /* w0's flow lasts 40 ms */
  ck_assert_double_eq_tol(down, 20e6, 1);
  sim_done(&s);
  /* A load too light to carry a byte per interval: 1 MB from w0 to w1
   * over one 10 Gbps link, sampled every 200 ns; the ACKs (1 B per 1000 B
   * packet: 10 Mbit/s, 2 bits per interval) carry 1,000 B in all, and the
   * rows of w1 -> w0 add up to them (what is short of a byte waits for the
   * next interval) as the data's rows add up to 1 MB. */
  const char *light = "nodes: [{name: w0, role: host}, {name: w1, role: host}]\n"
                      "links: [{a: w0, b: w1, bandwidth: 10Gbps, latency: 1us}]\n"
                      "transport: {mtu: 1000B, header: 0B, ack: 1B}\n"
                      "flows: [{src: w0, dst: w1, size: 1MB}]\n";
  Run l;
  g_auto(GStrv) lines2 = links_rows(light, "200ns", &l);
  double fwd = 0, back = 0;
  guint back_rows = 0;
  for (guint i = 0; lines2[i]; i++) {
    g_auto(GStrv) v = g_strsplit(lines2[i], ",", -1);
    if (!strcmp(v[0], "w0")) fwd += g_ascii_strtod(v[4], NULL);
    else back += g_ascii_strtod(v[4], NULL), back_rows++;
  }
  ck_assert_double_eq_tol(fwd, 1e6, 1);
  ck_assert_double_eq_tol(back, 1000, 1);
  ck_assert_uint_gt(back_rows, 100); /* spread over the flow's 800 us, a byte every few intervals */
  sim_done(&l);
  /* Held ACKs, counted when their message is delivered, put no more into a
   * row than the line carries in its interval (a ring of 8 hosts,
   * halving-doubling of 100K fp32, 10 Gbps: 1.07 times the line in a 100 us
   * row before), and the rows still add up to the direction's bytes. */
  const char *hd = "topology: {type: ring, workers: 8}\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "workload: {params: 100K, iterations: 2, compute: 0, collective: halving-doubling}\n";
  Run h;
  g_auto(GStrv) lines3 = links_rows(hd, NULL, &h);
  double w0_w1 = 0, most = 0;
  for (guint i = 0; lines3[i]; i++) {
    g_auto(GStrv) v = g_strsplit(lines3[i], ",", -1);
    double span = g_ascii_strtod(v[3], NULL) - g_ascii_strtod(v[2], NULL), bytes = g_ascii_strtod(v[4], NULL);
    most = fmax(most, 8 * bytes / 10e9 / span);
    if (!strcmp(v[0], "w0") && !strcmp(v[1], "w1")) w0_w1 += bytes;
  }
  ck_assert_msg(most <= 1 + 1e-6, "a row at %.4f of the line", most);
  CsFabric *hf = cs_sim_fabric(h.sim);
  const CsTopology *ht = cs_sim_topology(h.sim);
  guint found = 0;
  for (uint32_t l2 = 0; l2 < ht->n_links; l2++)
    if (!strcmp(ht->nodes[ht->links[l2].a].name, "w0") && !strcmp(ht->nodes[ht->links[l2].b].name, "w1")) {
      ck_assert_double_eq_tol(w0_w1, (double)cs_fabric_link_stats(hf, l2, 0).bytes, 1);
      found++;
    }
  ck_assert_uint_eq(found, 1);
  sim_done(&h);
}
END_TEST

/* 1c. A burst's ACKs on a star, which wait in the receiver's queue
 * (burst_acks) rather than load the links as the fluid's do, are counted
 * in both directions back as they are made: a ring all-reduce of 4, 1K
 * fp32 (6 steps, a message of one packet each way each: 6 ACKs of 64 B),
 * 6,732 B each way on w0's link, as the packet network counts them (6,348
 * B, the data alone, before). */
START_TEST(test_star_ack_bytes) {
  const char *star4 = "topology: {type: star, workers: 4}\n"
                      "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                      "workload: {params: 1K, iterations: 1, compute: 0, collective: ring}\n";
  Run f = run(star4, "flow", NULL), p = run(star4, "packet", NULL);
  for (int dir = 0; dir < 2; dir++) {
    uint64_t fb = cs_fabric_link_stats(cs_sim_fabric(f.sim), 0, dir).bytes;
    ck_assert_uint_eq(fb, cs_fabric_link_stats(cs_sim_fabric(p.sim), 0, dir).bytes);
    ck_assert_uint_eq(fb, 6732);
  }
  done(&f);
  done(&p);
  /* messages past init_cwnd (last_window): their earlier windows' ACKs in
   * the fluid at the message's weight, the last window's held, together
   * the message's ACKs, not one more for its smaller last packet (6 B a
   * direction more before, 2026-12-10).  An all-gather of 3 on a star
   * (28 packets a message): 86,832 B on every direction; an exchange of
   * 20,000 B between two hosts of a k = 4 fat-tree switch: 43,416 B. */
  static const char *const cases[][2] = {
      {"topology: {type: star, workers: 3}\n", "workload.collective=allgather"},
      {"topology: {type: fat-tree, k: 4, workers: 2}\n", "workload.collective=ring"},
  };
  static const uint64_t want[] = {86832, 43416};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *y = g_strconcat(cases[i][0],
                                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                                     "workload: {params: 10K, iterations: 1, compute: 0}\n",
                                     NULL);
    const char *more[] = {cases[i][1], NULL};
    f = run(y, "flow", more), p = run(y, "packet", more);
    for (int dir = 0; dir < 2; dir++) {
      uint64_t fb = cs_fabric_link_stats(cs_sim_fabric(f.sim), 0, dir).bytes;
      ck_assert_uint_eq(fb, cs_fabric_link_stats(cs_sim_fabric(p.sim), 0, dir).bytes);
      ck_assert_uint_eq(fb, want[i]);
    }
    done(&f);
    done(&p);
  }
}
END_TEST

/* 1a. ACKs' load couples two flows: w0 and w1 send to each other, 10 MB
 * and 5 MB, with 100 B of ACK per 1000 B packet, so each direction carries
 * one flow's data and a tenth of the other's rate in ACKs.  Both run at
 * r = C - r / 10, r = C / 1.1 (the refills stop once an ACK load moves by
 * less than 0.1 % of C, so within 0.1 % of it) until the 5 MB flow ends at
 * 8 x 5 MB x 1.1 / C = 4.4 ms; its ACKs gone, the other takes the whole
 * link for its last 5 MB, 4.0 ms more.  Each delivery adds 2 us of latency
 * and a packet's store-and-forward (0.8 us). */
static const char *acks = "topology: {type: star, workers: 2}\n"
                          "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                          "transport: {mtu: 1000B, header: 0B, ack: 100B}\n"
                          "flows:\n"
                          "  - {src: w0, dst: w1, size: 10MB}\n"
                          "  - {src: w1, dst: w0, size: 5MB}\n";

START_TEST(test_ack_coupling) {
  Run r = run(acks, "flow", NULL);
  double C = 10e9, tail = 2e-6 + 8 * 1000 / C;
  double short_end = 8 * 5e6 * 1.1 / C, long_end = short_end + 8 * 5e6 / C;
  ck_assert_msg(fabs(end_s(&r, 1) - tail - short_end) < 1.5e-3 * short_end, "5 MB: %.9f, not %.9f", end_s(&r, 1),
                short_end + tail);
  ck_assert_msg(fabs(end_s(&r, 0) - tail - long_end) < 1.5e-3 * long_end, "10 MB: %.9f, not %.9f", end_s(&r, 0),
                long_end + tail);
  done(&r);
}
END_TEST

/* 1a'. A ring of four flows that start together (w0 -> w1 -> w2 -> w3 ->
 * w0 on a star), 20 B of ACK per 1000 B packet: each link direction
 * carries one flow's data and its neighbour's ACKs, so each runs at
 * r = C - r / 50, r = C / 1.02 (within the 0.1 % slack), and all four end
 * together at 8 x 10 MB x 1.02 / C.  The flows are alone on their
 * directions and take their rates in one refill, with the ACK loads they
 * set on one another (fill's alone_acks_ahead). */
START_TEST(test_ring_acks_ahead) {
  const char *yaml = "topology: {type: star, workers: 4}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                     "transport: {mtu: 1000B, header: 0B, ack: 20B}\n"
                     "flows:\n"
                     "  - {src: w0, dst: w1, size: 10MB}\n"
                     "  - {src: w1, dst: w2, size: 10MB}\n"
                     "  - {src: w2, dst: w3, size: 10MB}\n"
                     "  - {src: w3, dst: w0, size: 10MB}\n";
  Run r = run(yaml, "flow", NULL);
  double C = 10e9, tail = 2e-6 + 8 * 1000 / C, fluid = 8 * 10e6 * 1.02 / C;
  for (uint32_t m = 0; m < 4; m++)
    ck_assert_msg(fabs(end_s(&r, m) - tail - fluid) < 1e-3 * fluid, "flow %u: %.9f, not %.9f", m, end_s(&r, m),
                  fluid + tail);
  done(&r);
}
END_TEST

/* 1b. A long route: two hosts through 8 switches in series, 9 hops each
 * way (18 link directions with the ACKs' reverse route).  Each flow runs at the line rate
 * (the other's ACKs, 1 B per 1000 B packet, load its directions by 0.1 %
 * of their capacity, within the slack that triggers a refill); its end
 * is its bits at 10 Gbps, 9 latencies of 1 us and the store-and-forward
 * of its last packet at the 8 hops that are not the slowest. */
START_TEST(test_long_route) {
  GString *y = g_string_new("nodes: [{name: a, role: host}, {name: b, role: host}");
  for (int i = 1; i <= 8; i++) g_string_append_printf(y, ", {name: s%d, role: switch}", i);
  g_string_append(y, "]\ndefaults: {bandwidth: 10Gbps, latency: 1us}\nlinks:\n  - {a: a, b: s1}\n");
  for (int i = 1; i < 8; i++) g_string_append_printf(y, "  - {a: s%d, b: s%d}\n", i, i + 1);
  g_string_append(y, "  - {a: s8, b: b}\n"
                     "transport: {mtu: 1000B, header: 0B, ack: 1B, window: 100000, init_cwnd: 100000pkt}\n"
                     "flows:\n  - {src: a, dst: b, size: 10MB}\n  - {src: b, dst: a, size: 5MB}\n");
  Run r = run(y->str, "flow", NULL);
  double tail = 9e-6 + 8 * (8 * 1000 / 10e9);
  ck_assert_double_eq_tol(end_s(&r, 0), 8 * 10e6 / 10e9 + tail, 1e-9);
  ck_assert_double_eq_tol(end_s(&r, 1), 8 * 5e6 / 10e9 + tail, 1e-9);
  done(&r);
  g_string_free(y, TRUE);
}
END_TEST

/* 2. Every collective on an idle star: flow equals the closed form (the
 * model replays the same steps with the same message times) and lies
 * within 1 % of the packet fidelity. */
static const char *star = "topology: {type: star, workers: 8}\n"
                          "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                          "workload: {params: 25.6M, iterations: 3, warmup: 1, compute: 10ms, collective: ring}\n";

START_TEST(test_collectives_match) {
  const char *colls[] = {"ring", "tree", "halving-doubling", "allgather"};
  for (size_t i = 0; i < G_N_ELEMENTS(colls); i++) {
    g_autofree char *set = g_strdup_printf("workload.collective=%s", colls[i]);
    const char *more[] = {set, NULL};
    Run f = run(star, "flow", more), p = run(star, "packet", more);
    double flow = cs_sim_summary(f.sim)->iter_mean_s, packet = cs_sim_summary(p.sim)->iter_mean_s;
    CsModel m;
    GError *e = NULL;
    g_autoptr(CsRoutes) routes = cs_routes_build(cs_sim_topology(f.sim), CS_ROUTING_SHORTEST, &e);
    ck_assert(cs_model_estimate(f.s, cs_sim_topology(f.sim), routes, &m, &e));
    /* the ACK load a direction reserves lags by up to 0.1 % of its capacity */
    ck_assert_msg(fabs(flow / m.iter_overlap_s - 1) < 1e-3, "%s: flow %.6f model %.6f", colls[i], flow,
                  m.iter_overlap_s);
    cs_model_clear(&m);
    ck_assert_msg(fabs(flow / packet - 1) < 0.01, "%s: flow %.6f packet %.6f", colls[i], flow, packet);
    done(&f);
    done(&p);
  }
}
END_TEST

/* base with the overrides `more` (NULL-ended) at flow fidelity and at
 * packet level, *f and *p, whose mean iterations are equal to the
 * picosecond (the caller reads them further, then done()) */
static void iter_as_packet(const char *base, const char *const *more, Run *f, Run *p) {
  *f = run(base, "flow", more), *p = run(base, "packet", more);
  double flow = cs_sim_summary(f->sim)->iter_mean_s, packet = cs_sim_summary(p->sim)->iter_mean_s;
  ck_assert_msg(fabs(flow - packet) < 1e-12, "%s %s: flow %.12f s, packet %.12f s", more[0], more[1] ? more[1] : "",
                flow, packet);
}

/* 2'. Small messages on a star: a message within init_cwnd goes into its
 * host's queue whole (a burst), and its ACKs go into the receiver's
 * queue behind the receiver's own burst, so they take no bandwidth from
 * either while they are sent, as at packet level; the flow fidelity
 * charges them to the receiver's queue when the message is delivered.
 * A ring of 4, 10K fp32 (messages of 10,000 B, 7 packets), and an
 * all-gather, halving-doubling and tree of 8, 1K fp32: the packet run's
 * mean iteration to the picosecond (the ring 71.1862 us).  While the
 * fluid loaded the links with their ACKs, 64 B per packet, as it sent
 * the bursts (until 2026-12-07), the ring took 73.2300 us (+2.9 %), the
 * all-gather +1.6 %, halving-doubling +1.2 %. */
START_TEST(test_burst_acks) {
  const char *base = "topology: {type: star, workers: 8}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                     "workload: {params: 1K, iterations: 1, compute: 0, collective: ring}\n";
  static const char *const cases[][3] = {
      {"workload.collective=ring", "workload.params=10K", "topology.workers=4"},
      {"workload.collective=allgather", NULL, NULL},
      {"workload.collective=halving-doubling", NULL, NULL},
      {"workload.collective=tree", NULL, NULL},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *more[] = {cases[i][0], cases[i][1], cases[i][2], NULL};
    Run f, p;
    iter_as_packet(base, more, &f, &p);
    double packet = cs_sim_summary(p.sim)->iter_mean_s;
    if (i == 0) ck_assert_msg(fabs(packet - 71.1862e-6) < 1e-12, "ring: packet %.12f s", packet);
    done(&f);
    done(&p);
  }
}
END_TEST

/* Messages past the window a connection starts with, on a star (10K
 * fp32: 20,000 B of 14 packets for a ring of 2, 40,000 B of 28 for an
 * all-gather): each host puts its first window of 10 packets into its
 * queue at once, and the ACKs for the other's wait behind it, then at the
 * switch behind the last packet coming to the sender: the rest goes in at
 * 15.2512 us, not a round trip (4.5 us) after the first.  The last window
 * of each goes in whole, its ACKs behind the receiver's own as a burst's.
 * A ring of 2 (an exchange): 23.1008 us a step, 44.2404 us in all (the
 * second step, its window grown, whole at once); all-gathers of 2 (its
 * message ends at 39.7504 us) and 3
 * (a ring of sends: the data coming to the sender is a third host's)
 * and halving-doubling of 8.  Each as the packet run, to the picosecond;
 * the flow fidelity gave 0.959 (the rest a round trip after the first
 * window) to 1.023 (the ACKs beside the data) of it before. */
START_TEST(test_window_acks) {
  const char *base = "topology: {type: star, workers: 2}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                     "workload: {params: 10K, iterations: 1, compute: 0, collective: ring}\n";
  static const char *const cases[][2] = {
      {"workload.collective=ring", NULL},
      {"workload.collective=allgather", NULL},
      {"workload.collective=allgather", "topology.workers=3"},
      {"workload.collective=halving-doubling", "topology.workers=8"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *more[] = {cases[i][0], cases[i][1], NULL};
    Run f, p;
    iter_as_packet(base, more, &f, &p);
    double packet = cs_sim_summary(p.sim)->iter_mean_s;
    if (i == 0) {
      ck_assert_msg(fabs(packet - 44.2404e-6) < 1e-12, "ring of 2: packet %.12f s", packet);
      ck_assert_msg(fabs(end_s(&f, 0) - 23.1008e-6) < 1e-12, "ring of 2: first step %.12f s", end_s(&f, 0));
    }
    if (i == 1) /* (a message of 28 packets: windows of 10 and 18) */
      ck_assert_msg(fabs(end_s(&f, 0) - 39.7504e-6) < 1e-12 && fabs(end_s(&p, 0) - 39.7504e-6) < 1e-12,
                    "all-gather of 2: flow %.12f s, packet %.12f s", end_s(&f, 0), end_s(&p, 0));
    done(&f);
    done(&p);
  }
}
END_TEST

/* 2'''. The same off a star (FlowNet.trains): the first window's ACKs
 * wait behind the receiver's own window, and those of a message within
 * the window (the second step's) behind its data, which they follow on
 * the way back.  Two hosts joined by one link (a ring of 2): 10 packets
 * leave each by 12 us, the first ACK comes back at 13.0512 us, the 4
 * packets left go out by 17.7008 us and arrive at 18.7008 us; the second
 * step, 14 packets at once, 16.6496 us on the wire and 1 us more.  Two
 * hosts of one k = 4 fat-tree switch: as on a star of 2 (test_window_acks,
 * 23.1008 us a step, 44.2404 us in all).  An all-gather of 2 over the one
 * link (28 packets: windows of 10 and 18).  Each as the packet run to the
 * picosecond; the flow fidelity gave 1.0101, 0.9589 and 1.0094 of it
 * before (the rest a round trip after the first window, and the second
 * step's ACKs beside its data). */
START_TEST(test_window_acks_off_star) {
  static const char *const cases[][2] = {
      {"topology: {type: ring, workers: 2}\n", "workload.collective=ring"},
      {"topology: {type: fat-tree, k: 4, workers: 2}\n", "workload.collective=ring"},
      {"topology: {type: ring, workers: 2}\n", "workload.collective=allgather"},
  };
  static const double want[] = {37.6404e-6, 44.2404e-6, 40.5104e-6}, first[] = {18.7008e-6, 23.1008e-6, 0};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *y = g_strconcat(cases[i][0],
                                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                                     "workload: {params: 10K, iterations: 1, compute: 0, collective: ring}\n",
                                     NULL);
    const char *more[] = {cases[i][1], NULL};
    Run f, p;
    iter_as_packet(y, more, &f, &p);
    double packet = cs_sim_summary(p.sim)->iter_mean_s;
    ck_assert_msg(fabs(packet - want[i]) < 1e-12, "case %zu: packet %.12f s", i, packet);
    if (first[i] > 0)
      ck_assert_msg(fabs(end_s(&f, 0) - first[i]) < 1e-12, "case %zu: first step %.12f s", i, end_s(&f, 0));
    done(&f);
    done(&p);
  }
}
END_TEST

/* A ring of `workers` hosts (10 Gbps, 1 us, 64 MB): 2 MB from a to b at
 * 0, then n messages of `size` B from c to d, one every `every_ns` from 0. */
static GString *big_and_bursts(int workers, const char *a, const char *b, const char *c, const char *d, int size,
                               int n, int every_ns) {
  GString *y = g_string_new(NULL);
  g_string_printf(y,
                  "topology: {type: ring, workers: %d}\n"
                  "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                  "flows: [{src: %s, dst: %s, size: 2MB}",
                  workers, a, b);
  for (int k = 0; k < n; k++)
    g_string_append_printf(y, ", {src: %s, dst: %s, size: %dB, start: %dns}", c, d, size, every_ns * k);
  g_string_append(y, "]\n");
  return y;
}

/* Bursts' ACKs off a star wait in the receiver's queue as on a star
 * (burst_acks), not beside the data in the fluid, and take their time in
 * the trains that pass while they are made (acks_pass).  (a) Two hosts on
 * one link, a ring all-reduce of 1K fp32 (2,000 B each way a step, 1,500
 * + 616 B on the wire): each host's burst has left before the ACKs for
 * the other's come back, 5.5146 us as at packet level to the picosecond
 * (the fluid's ACKs, beside the data, gave 5.718606 us).  (b) A ring of 5,
 * 10,000 B (7 packets, 10,364 B on the wire) from w0 to w1 and from w2 to
 * w0 through w1, at once: the packet run's 9.3248 and 11.8832 us to the
 * picosecond.  w0's burst is in its queue before the ACKs for w2's come
 * back through it (the fluid slowed it to 9.6832 us with them); w2's
 * train passes w1 -> w0 while w1 makes the 7 ACKs for w0's packets, 64 B
 * and 51.2 ns each: 11.5248 + 7 x 0.0512 = 11.8832 us (11.5248 us before,
 * without them).  (c) Where a fluid flow crosses their way back, bursts'
 * ACKs load it as before: a ring of 4, 2 MB from w1 to w0 and 130 bursts
 * of 14,000 B from w0 to w1, 11.7 us apart: the 2 MB message within 0.1 %
 * of the packet run's 1.73212 ms (1.6654 ms, 3.9 % early, while every
 * burst's ACKs were held: a review's case).  (d) ACKs made while the
 * receiver's queue holds its own burst leave behind it, at once, and a
 * train held up by ACKs at one hop leaves gaps that the next hop's fill:
 * an all-gather of 10K fp32 with a fixed window (bursts of 28 packets)
 * on a k = 4 fat-tree of 7 workers, each host sending as it receives,
 * within 1 % of the packet run (1.068 with the ACKs taken as made and
 * their time added at every hop). */
START_TEST(test_link_acks) {
  const char *two = "topology: {type: ring, workers: 2}\n"
                    "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                    "workload: {params: 1K, iterations: 1, compute: 0, collective: ring}\n";
  static const char *const two_more[] = {"workload.collective=ring", NULL};
  Run f, p;
  iter_as_packet(two, two_more, &f, &p);
  double packet = cs_sim_summary(p.sim)->iter_mean_s;
  ck_assert_msg(fabs(packet - 5.5146e-6) < 1e-12, "ring of 2: packet %.12f s", packet);
  done(&f);
  done(&p);
  const char *five = "topology: {type: ring, workers: 5}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                     "flows: [{src: w0, dst: w1, size: 10000B}, {src: w2, dst: w0, size: 10000B}]\n";
  static const double want[] = {9.3248e-6, 11.8832e-6};
  f = run(five, "flow", NULL), p = run(five, "packet", NULL);
  for (uint32_t m = 0; m < 2; m++) {
    ck_assert_msg(fabs(end_s(&f, m) - want[m]) < 1e-12, "ring of 5, message %u: flow %.9f s", m, end_s(&f, m));
    ck_assert_msg(fabs(end_s(&p, m) - want[m]) < 1e-12, "ring of 5, message %u: packet %.9f s", m, end_s(&p, m));
  }
  done(&f);
  done(&p);
  GString *cross = big_and_bursts(4, "w1", "w0", "w0", "w1", 14000, 130, 11700);
  f = run(cross->str, "flow", NULL), p = run(cross->str, "packet", NULL);
  ck_assert_msg(fabs(end_s(&p, 0) - 1.73212e-3) < 1e-9, "crossed: packet %.9f s", end_s(&p, 0));
  ck_assert_msg(fabs(end_s(&f, 0) / end_s(&p, 0) - 1) < 1e-3, "crossed: flow %.9f s, packet %.9f s", end_s(&f, 0),
                end_s(&p, 0));
  done(&f);
  done(&p);
  g_string_free(cross, TRUE);
  const char *ag = "topology: {type: fat-tree, k: 4, workers: 7}\n"
                   "defaults: {buffer: 1GB}\n"
                   "transport: {protocol: fixed, window: 100000pkt}\n"
                   "workload: {params: 10K, iterations: 1, compute: 0, buckets: 0, collective: allgather,\n"
                   "  compression: {cost: {encode: 0, decode: 0, reduce: 0}}}\n";
  f = run(ag, "flow", NULL), p = run(ag, "packet", NULL);
  double agf = cs_sim_summary(f.sim)->iter_mean_s, agp = cs_sim_summary(p.sim)->iter_mean_s;
  ck_assert_msg(fabs(agf / agp - 1) < 0.01, "all-gather on the fat-tree: flow %.9f s, packet %.9f s", agf, agp);
  done(&f);
  done(&p);
}
END_TEST

/* Scenario y's first three messages end at want[] (s) to the picosecond,
 * at flow fidelity and at packet level (case i of a test). */
static void three_ends(const char *y, size_t i, const double want[3]) {
  Run f = run(y, "flow", NULL), p = run(y, "packet", NULL);
  for (uint32_t m = 0; m < 3; m++) {
    ck_assert_msg(fabs(end_s(&f, m) - want[m]) < 1e-12, "case %zu, message %u: flow %.9f s", i, m, end_s(&f, m));
    ck_assert_msg(fabs(end_s(&p, m) - want[m]) < 1e-12, "case %zu, message %u: packet %.9f s", i, m, end_s(&p, m));
  }
  done(&f);
  done(&p);
}

/* Bursts past a star pass the hops after their first as trains
 * (train_pass): a ring of 4 hosts that forward (shortest routes, 10 Gbps,
 * 1 us), 2,000 B (1,500 + 616 B on the wire) from w1 to w2, from w0 to w2
 * through w1, and from w3 to w2 at 3 us.  By hand: w1's leave its link by
 * 1.6928 us and arrive at 2.6928 us; w0's first packet comes in to w1 at
 * 2.2 us, the link free, its second at 2.6928 us, behind the first until
 * 3.4 us: 4.8928 us; w3's alone, 5.6928 us.  The fluid held w1 -> w2 for
 * both from 0 (4.3856 and 6.5856 us).  With w1's sent at 1.5 us, it is on
 * w1's link when w0's first packet comes in (until 3.1928 us), and w0's
 * waits behind it: 5.8856 us.  And a ps of 8 workers and one server on the
 * k = 4 fat-tree (ECMP), 1K fp32 (3-packet pushes and pulls): each equal
 * to the packet run to the picosecond (1.027 of it before). */
START_TEST(test_trains) {
  static const char *const w1_at[] = {"0", "1500ns"};
  /* (messages are numbered as they are sent: w1, w0, w3; then w0, w1, w3) */
  static const double want[][3] = {{2.6928e-6, 4.8928e-6, 5.6928e-6}, {5.8856e-6, 4.1928e-6, 5.6928e-6}};
  for (size_t i = 0; i < G_N_ELEMENTS(w1_at); i++) {
    g_autofree char *y = g_strdup_printf("topology: {type: ring, workers: 4}\n"
                                         "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 1MB}\n"
                                         "flows: [{src: w1, dst: w2, size: 2000B, start: %s}, {src: w0, dst: w2, "
                                         "size: 2000B}, {src: w3, dst: w2, size: 2000B, start: 3us}]\n",
                                         w1_at[i]);
    three_ends(y, i, want[i]);
  }
  /* w1 puts 10,000 B for w2, w3 and w4 into its queue at once, and w0
   * 5,000 B for w2 and w3 through w1 (a ring of 7): w0's packets come in
   * to w1 behind all of w1's (FIFO), 30.16 and 36.5456 us, as at packet
   * level to the picosecond (the train behind w1's bursts and sharing the
   * line with them as well, before a review: 40.73 us for w0 -> w3) */
  static const char *const fwd =
      "topology: {type: ring, workers: 7}\n"
      "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
      "flows: [{src: w1, dst: w2, size: 10000B}, {src: w1, dst: w3, size: 10000B}, {src: w1, dst: w4, size: 10000B},"
      " {src: w0, dst: w2, size: 5000B}, {src: w0, dst: w3, size: 5000B}]\n";
  static const double fwd_want[] = {9.3248e-6, 19.8496e-6, 30.3744e-6, 30.16e-6, 36.5456e-6};
  Run fw = run(fwd, "flow", NULL);
  for (uint32_t m = 0; m < 5; m++)
    ck_assert_msg(fabs(end_s(&fw, m) - fwd_want[m]) < 1e-12, "forwarding queue, message %u: flow %.9f s", m,
                  end_s(&fw, m));
  done(&fw);
  /* a 2 MB flow from w1 to w2, and bursts from w0 crossing w1 -> w2 every
   * 10 us: the bursts stay fluid flows over all their hops (a train would
   * not slow the large flow down, nor count against it); the large flow
   * ends as at packet level, 1.8318528 ms (1.6654 ms while trains crossed
   * it unseen, a review's case) */
  GString *big = big_and_bursts(5, "w1", "w2", "w0", "w2", 10000, 20, 10000);
  Run bf = run(big->str, "flow", NULL);
  ck_assert_msg(fabs(end_s(&bf, 0) - 1.8318528e-3) < 1e-9, "the large flow: %.9f s", end_s(&bf, 0));
  done(&bf);
  g_string_free(big, TRUE);
  /* bursts that leave their first links at one instant pass the hops
   * after in the order they come in to them: a ring of 7, 1,336 B (1,394
   * B on the wire, 1.1152 us) from w0 to w3 through w1 and w2, from w1 to
   * w3 through w2, and three from w2 to w3, at once.  w2's leave by 3.3456
   * us; w1's comes in to w2 at 2.1152 us and goes after them, 5.4608 us;
   * w0's comes in at 4.2304 us and goes after w1's, 6.576 us, as at
   * packet level.  Placed whole one after the other, w0's train took the
   * gap before w1's came in: 6.3456 and 7.4608 us. */
  const char *tie = "topology: {type: ring, workers: 7}\n"
                    "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                    "flows: [{src: w0, dst: w3, size: 1336B}, {src: w1, dst: w3, size: 1336B}, "
                    "{src: w2, dst: w3, size: 1336B}, {src: w2, dst: w3, size: 1336B}, {src: w2, dst: w3, size: 1336B}]\n";
  static const double tie_want[] = {6.576e-6, 5.4608e-6, 2.1152e-6, 3.2304e-6, 4.3456e-6};
  /* a train passes a hop in the gaps there as its packets come in: a ring
   * of 5, 10,000 B (7 packets, 8.2912 us) from w0 to w2 through w1 at 0,
   * and from w1 to w3 at 8 us; w0's packets come in to w1 from 2.2 us,
   * the first five go before w1's burst, the last two after it: 19.8496
   * us, as at packet level (25.6496 us while a train waited for a gap
   * that held it whole) */
  const char *gap = "topology: {type: ring, workers: 5}\n"
                    "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                    "flows: [{src: w0, dst: w2, size: 10000B}, {src: w1, dst: w3, size: 10000B, start: 8us}]\n";
  Run gf = run(gap, "flow", NULL), gp = run(gap, "packet", NULL);
  ck_assert_msg(fabs(end_s(&gf, 0) - 19.8496e-6) < 1e-12 && fabs(end_s(&gp, 0) - 19.8496e-6) < 1e-12,
                "a train split by a burst: flow %.9f s, packet %.9f s", end_s(&gf, 0), end_s(&gp, 0));
  done(&gf);
  done(&gp);
  /* more trains at one instant than the first lot gathered (64): 200
   * hosts in a ring each send 9,000 B to the host 4 further at once,
   * every message 31.0992 us as at packet level (placed in lots of 64,
   * those at each lot's edge took 20.45-35.50 us: a review's case) */
  GString *sym = g_string_new("topology: {type: ring, workers: 200}\n"
                              "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\nflows: [");
  for (int i = 0; i < 200; i++)
    g_string_append_printf(sym, "%s{src: w%d, dst: w%d, size: 9000B}", i ? ", " : "", i, (i + 4) % 200);
  g_string_append(sym, "]\n");
  Run sf = run(sym->str, "flow", NULL);
  for (uint32_t m = 0; m < 200; m++)
    ck_assert_msg(fabs(end_s(&sf, m) - 31.0992e-6) < 1e-12, "200 trains at once, message %u: flow %.9f s", m, end_s(&sf, m));
  done(&sf);
  g_string_free(sym, TRUE);
  /* a hop whose list of trains is long: 16 hosts in a ring each send 200
   * B to the host 7 further, 8 times 0.3 us apart; the last delivery at
   * flow fidelity within 30 % of the packet run's (13.1072 us; 16.6624
   * us now; 43.5880 us while a train that found 16 trains on a hop went
   * after the last, the gaps before it left empty: a review's case) */
  GString *many = g_string_new("topology: {type: ring, workers: 16}\n"
                               "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\nflows: [");
  for (int r = 0; r < 8; r++)
    for (int i = 0; i < 16; i++)
      g_string_append_printf(many, "%s{src: w%d, dst: w%d, size: 200B, start: %dns}", r || i ? ", " : "", i, (i + 7) % 16,
                             300 * r);
  g_string_append(many, "]\n");
  Run mf = run(many->str, "flow", NULL), mp = run(many->str, "packet", NULL);
  double last_f = 0, last_p = 0;
  for (uint32_t m = 0; m < 128; m++) last_f = fmax(last_f, end_s(&mf, m)), last_p = fmax(last_p, end_s(&mp, m));
  ck_assert_msg(fabs(last_p - 13.1072e-6) < 1e-12, "many trains: packet %.9f s", last_p);
  ck_assert_msg(last_f / last_p < 1.3 && last_f / last_p > 0.9, "many trains: flow %.9f s, packet %.9f s", last_f, last_p);
  done(&mf);
  done(&mp);
  g_string_free(many, TRUE);
  Run tf = run(tie, "flow", NULL);
  for (uint32_t m = 0; m < 5; m++)
    ck_assert_msg(fabs(end_s(&tf, m) - tie_want[m]) < 1e-12, "trains at one instant, message %u: flow %.9f s", m,
                  end_s(&tf, m));
  done(&tf);
  const char *ps = "topology: {type: fat-tree, k: 4, workers: 8, servers: 1}\n"
                   "routing: ecmp\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "workload: {params: 1K, iterations: 1, compute: 0, collective: ps}\n";
  static const char *const ps_more[] = {"workload.collective=ps", NULL};
  Run f, p;
  iter_as_packet(ps, ps_more, &f, &p);
  done(&f);
  done(&p);
}
END_TEST

/* GPUs' bursts at their NIC (nic_interleave): the NIC takes packets in
 * the order they come in from the GPUs, so a burst's packets that come in
 * before the last packet of another GPU's burst still coming in go before
 * it.  Machines of 4 GPUs (intra 100 Gbps, 500 ns), NICs of 10 Gbps:
 * (a) 4,000 B from w0 and 12,000 B from w1 at once, then 4,000 B from w2
 * at 600 ns, whose last packet comes in before w1's last two: 10.15312,
 * 21.05776 and 19.49232 us; (b) 4,000 B from w0, w1 and w2, 200 ns
 * apart, each overlapping only the one before: 8.95312, 12.29232 and
 * 14.43152 us.  Each as the packet run, to the picosecond.  (With every
 * burst of a group waiting for the whole of each later one, (a)'s first
 * ended at 19.75 us; with the tie broken at once, at 7.75312 us.) */
START_TEST(test_nic_interleave) {
  static const char *const flows[] = {
      "[{src: w0, dst: w4, size: 4000B}, {src: w1, dst: w5, size: 12000B}, "
      "{src: w2, dst: w6, size: 4000B, start: 600ns}]",
      "[{src: w0, dst: w4, size: 4000B}, {src: w1, dst: w5, size: 4000B, start: 200ns}, "
      "{src: w2, dst: w6, size: 4000B, start: 400ns}]",
  };
  static const double want[][3] = {{10.15312e-6, 21.05776e-6, 19.49232e-6}, {8.95312e-6, 12.29232e-6, 14.43152e-6}};
  for (size_t i = 0; i < G_N_ELEMENTS(flows); i++) {
    g_autofree char *y = g_strdup_printf(
        "topology: {type: star, workers: 8, gpus_per_host: 4, intra: {bandwidth: 100Gbps, latency: 500ns}}\n"
        "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 4MB}\n"
        "flows: %s\n",
        flows[i]);
    three_ends(y, i, want[i]);
  }
}
END_TEST

/* The ACKs of GPUs' bursts (hierarchical, 1K fp32: 2,000 B within a
 * machine, then 1,000 B between machines, 2 machines of 2 GPUs, intra 100
 * Gbps and 500 ns, NICs of 10 Gbps and 1 us).  They wait in the
 * receiver's queue and at its NIC behind what those hold (burst_acks),
 * and a burst that comes to the NIC behind them waits for them
 * (take_turn): at packet level the ACK of w0's message to w2, made at
 * 5.28036 us on a ring of 2 machines, reaches w2's NIC while w3's next
 * burst is on its line, and w2's next burst goes after it, 51.2 ns later.
 * On a star every message is the packet run's to the picosecond; on a
 * ring of 2 machines (no star: their ACKs were in the fluid, 1.0195 of
 * the packet run) all but the last step, whose burst within w0's machine
 * is held up there by an ACK for w1 at packet level (5.12 ns). */
START_TEST(test_gpu_burst_acks) {
  const char *y = "topology: {type: star, workers: 4, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 500ns}}\n"
                  "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                  "workload: {params: 1K, iterations: 1, compute: 0, collective: hierarchical}\n";
  static const char *const on_star[] = {"topology.type=star", NULL};
  Run f, p;
  iter_as_packet(y, on_star, &f, &p);
  done(&f);
  done(&p);
  static const char *const ring[] = {"topology.type=ring", NULL};
  f = run(y, "flow", ring), p = run(y, "packet", ring);
  double fi = cs_sim_summary(f.sim)->iter_mean_s, pi = cs_sim_summary(p.sim)->iter_mean_s;
  ck_assert_msg(fabs(pi - 9.2599e-6) < 1e-12, "ring: packet %.12f s", pi); /* (the mean over the 4 workers) */
  ck_assert_msg(fabs(fi - (pi - 2.56e-9)) < 1e-12, "ring: flow %.12f s, packet %.12f s", fi, pi); /* (2 of them) */
  uint32_t n = cs_fabric_messages(cs_sim_fabric(p.sim));
  for (uint32_t m = 0; m + 2 < n; m++) /* (all but the last step's two) */
    ck_assert_msg(fabs(end_s(&f, m) - end_s(&p, m)) < 1e-12, "ring, message %u: flow %.12f s, packet %.12f s", m,
                  end_s(&f, m), end_s(&p, m));
  done(&f);
  done(&p);
  /* through machines that forward (8 machines of 2 GPUs on a 4 x 4 torus,
   * 10K fp32) the ACKs load the fluid, as the packet run interleaves them
   * with the data those machines send: 1.073 of the packet run (1.189 with
   * them held, fabric_back) */
  static const char *const torus[] = {"topology.type=torus2d", "topology.x=4", "topology.y=4", "topology.workers=16",
                                      "workload.params=10K", "routing=ecmp", "transport.protocol=reno", NULL};
  f = run(y, "flow", torus), p = run(y, "packet", torus);
  fi = cs_sim_summary(f.sim)->iter_mean_s, pi = cs_sim_summary(p.sim)->iter_mean_s;
  ck_assert_msg(fi / pi > 1.05 && fi / pi < 1.10, "torus: flow %.9f s, packet %.9f s", fi, pi);
  done(&f);
  done(&p);
}
END_TEST

/* 3. Incast: 8 hosts send 10 MB each to one at once.  The receiver's
 * link is shared evenly: every flow ends at 8 x wire bits / B (+ its
 * tail); the packet fidelity (Reno, 1 MB buffers) within 5 %. */
static const char *incast = "topology: {type: star, workers: 9}\n"
                            "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 1MB}\n"
                            "flows:\n"
                            "  - {src: w1, dst: w0, size: 10MB}\n  - {src: w2, dst: w0, size: 10MB}\n"
                            "  - {src: w3, dst: w0, size: 10MB}\n  - {src: w4, dst: w0, size: 10MB}\n"
                            "  - {src: w5, dst: w0, size: 10MB}\n  - {src: w6, dst: w0, size: 10MB}\n"
                            "  - {src: w7, dst: w0, size: 10MB}\n  - {src: w8, dst: w0, size: 10MB}\n";

START_TEST(test_incast) {
  Run f = run(incast, "flow", NULL), p = run(incast, "packet", NULL);
  double packets = ceil(10e6 / 1442), wire = 10e6 + packets * 58;
  /* after the wire bytes at the line rate: the latencies and a full
   * packet's store-and-forward at the switch (the last packet, smaller,
   * waits there behind the one before it, as in the packet network) */
  double tail = 2e-6 + 8 * 1500 / 10e9;
  double want = 8 * 8 * wire / 10e9 + tail;
  double flow_last = 0, packet_last = 0;
  for (uint32_t m = 0; m < 8; m++) {
    ck_assert_double_eq_tol(end_s(&f, m), want, 1e-9);
    flow_last = fmax(flow_last, end_s(&f, m));
    packet_last = fmax(packet_last, end_s(&p, m));
  }
  ck_assert_msg(fabs(flow_last / packet_last - 1) < 0.05, "flow %.6f packet %.6f", flow_last, packet_last);
  done(&f);
  done(&p);
}
END_TEST

/* 3b. The shipped incast and dumbbell examples at flow and at packet
 * fidelity: the last delivery (raw transfers) or the mean iteration
 * (training) within 5 %.  The flow fidelity carries open-loop background
 * at a constant rate only, so the dumbbells' sources are written as cbr
 * at their mean rate (a 2 Gbps poisson source; an onoff source of 10 Gbps
 * on 1 ms in 5).  Measured: pfc-incast 1.0000 with PFC and without (0.066577 s),
 * dumbbell 1.0000 (0.2081 s), training-dumbbell 1.02. */
static char *example(const char *file, const char *from, const char *to) {
  g_autofree char *path = g_build_filename(test_srcdir(), "topologies", file, NULL);
  char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  if (!from) return text;
  g_auto(GStrv) parts = g_strsplit(text, from, -1);
  ck_assert_msg(g_strv_length(parts) == 2, "%s: \"%s\" should be there once", file, from);
  g_free(text);
  return g_strjoinv(to, parts);
}

START_TEST(test_examples_incast_dumbbell) {
  static const struct {
    const char *file, *from, *to, *set;
    bool training;
  } cases[] = {
      {"pfc-incast.yaml", NULL, NULL, NULL, false},
      {"pfc-incast.yaml", NULL, NULL, "defaults.pfc.xoff=0", false},
      {"dumbbell.yaml", "pattern: poisson, rate: 2Gbps", "pattern: cbr, rate: 2Gbps", NULL, false},
      {"training-dumbbell.yaml", "pattern: onoff, rate: 10Gbps, on: 1ms, off: 4ms", "pattern: cbr, rate: 2Gbps",
       "workload.iterations=2", true},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *yaml = example(cases[i].file, cases[i].from, cases[i].to);
    const char *more[] = {"output.traces=[summary]", cases[i].set, NULL};
    double v[2];
    for (int k = 0; k < 2; k++) {
      Run r = run(yaml, k ? "packet" : "flow", more);
      v[k] = cases[i].training ? cs_sim_summary(r.sim)->iter_mean_s : sim_last_end(&r);
      done(&r);
    }
    ck_assert_msg(v[0] > 0 && fabs(v[0] / v[1] - 1) < 0.05, "%s (%s): flow %.6f s, packet %.6f s", cases[i].file,
                  cases[i].set ? cases[i].set : "as shipped", v[0], v[1]);
  }
}
END_TEST

/* 4. Loss caps a TCP flow's rate at MSS / RTT x sqrt(3/2) / sqrt(p)
 * (Mathis et al.), p the route's loss; cubic's at its own response
 * function or Reno's, the larger; `fixed` and `bbr` have no such cap.  A route
 * that loses everything fails its messages, as the packet fidelity does
 * after its timeouts. */

/* A host's queue in turn.  A message the transport puts whole into its
 * host's queue (within init_cwnd, or any size for roce's queue pairs, and
 * within host_queue) leaves after those put in before it, at the line
 * rate, as at packet level; the others share the link.  By hand, w0 sends
 * 4,000 B to w1, w2 and w3 at once (10 Gbps, 1 us; 3 packets, 4,174 wire
 * bytes): 3.3392 us on the wire each, and a lone message takes 6.5392 us
 * (3.3392 + 2 x 1 us + the last 1,174 B packet behind the second full one
 * at the switch, 1.2 us); message k ends at k x 3.3392 + 6.5392 us.  (The
 * flow fidelity ended all three at 13.2176 us.) */
/* The mean iteration of `yaml` at flow fidelity within `tol` of the packet fidelity's. */
static void mean_near_packet(const char *yaml, const char *what, double tol) {
  Run f = run(yaml, "flow", NULL), p = run(yaml, "packet", NULL);
  double fm = cs_sim_summary(f.sim)->iter_mean_s, pm = cs_sim_summary(p.sim)->iter_mean_s;
  ck_assert_msg(fabs(fm / pm - 1) < tol, "%s: flow %.9f s, packet %.9f s", what, fm, pm);
  done(&f);
  done(&p);
}

static const char *fan_out = "topology: {type: star, workers: 4}\n"
                             "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                             "flows: [{src: w0, dst: w1, size: 4000B}, {src: w0, dst: w2, size: 4000B}, "
                             "{src: w0, dst: w3, size: 4000B}]\n";

START_TEST(test_host_queue_in_turn) {
  const double t1 = 3.3392e-6, lone = 6.5392e-6;
  Run f = run(fan_out, "flow", NULL), p = run(fan_out, "packet", NULL);
  for (uint32_t m = 0; m < 3; m++) {
    ck_assert_msg(fabs(end_s(&f, m) - (m * t1 + lone)) < 1e-12, "message %u: %.10f s, by hand %.10f s", m, end_s(&f, m),
                  m * t1 + lone);
    ck_assert_double_eq_tol(end_s(&p, m), end_s(&f, m), 1e-12);
  }
  done(&f);
  done(&p);
  /* Past init_cwnd, a message goes into the queue window by window (slow
   * start: 10, 20, 40 packets), each a round trip (5.4 us) after the one
   * before began to leave, behind what is there: the first windows of the
   * other two.  A full packet is 1.2 us, a lone message's tail 3.2 us
   * (2 x 1 us, and its last packet behind a full one at the switch).
   * 20,000 B (14 packets): three first windows (36 us), then each one's
   * last 4 packets (5,812 B, 4.6496 us): 43.8496, 48.4992, 53.1488 us.
   * 100,000 B (70 packets): 3 x 10 and 3 x 20 packets (108 us), then each
   * one's last 40 (59,060 B, 47.248 us): 158.448, 205.696, 252.944 us.  And
   * 100,000 B, 1,000 B and 20,000 B: 10 packets (12 us), the small one
   * (1,058 B, 0.8464 us; it ends at 15.6928 us), 10 packets (24.8464
   * us), the first's next 20 (48.8464 us), the third's last 4 (53.496 us
   * + 3.2), then the first's last 40 (100.744 us + 3.2).  The packet
   * fidelity's times, to the picosecond.  (The flow fidelity ended each
   * set together, with the last.)  roce has no window: three 100 KB
   * messages (104,060 wire bytes, 83.248 us each, 86.448 us alone) in
   * turn.  Past the host queue's limit (3,000 B) the three share w0's link
   * and end together, near the packet fidelity's last. */
  struct {
    const char *set[5];
    double want[3];
  } other[] = {{{"flows.0.size=20000B", "flows.1.size=20000B", "flows.2.size=20000B", NULL}, {43.8496e-6, 48.4992e-6, 53.1488e-6}},
               {{"flows.0.size=100000B", "flows.1.size=100000B", "flows.2.size=100000B", NULL},
                {158.448e-6, 205.696e-6, 252.944e-6}},
               {{"flows.0.size=100000B", "flows.1.size=1000B", "flows.2.size=20000B", NULL}, {103.944e-6, 15.6928e-6, 56.696e-6}},
               {{"transport.protocol=roce", "flows.0.size=100KB", "flows.1.size=100KB", "flows.2.size=100KB", NULL},
                {86.448e-6, 169.696e-6, 252.944e-6}},
               {{"transport.host_queue=3000B", NULL}, {13.2176e-6, 13.2176e-6, 13.2176e-6}}};
  for (size_t k = 0; k < G_N_ELEMENTS(other); k++) {
    Run g = run(fan_out, "flow", other[k].set), q = run(fan_out, "packet", other[k].set);
    for (uint32_t m = 0; m < 3; m++) {
      ck_assert_msg(fabs(end_s(&g, m) - other[k].want[m]) < 1e-12, "case %zu, message %u: %.10f s, by hand %.10f s", k, m,
                    end_s(&g, m), other[k].want[m]);
      if (k < 4) ck_assert_double_eq_tol(end_s(&q, m), end_s(&g, m), 1e-12);
    }
    /* (past the host queue's limit, at packet level their last packets
     * interleave: the last to arrive, a small one, waits behind no full
     * one at the switch, 0.2608 us sooner than a lone message's tail) */
    double q_last = fmax(fmax(end_s(&q, 0), end_s(&q, 1)), end_s(&q, 2)), last = fmax(other[k].want[0], other[k].want[2]);
    ck_assert_msg(fabs(q_last - last) < 0.2609e-6, "case %zu: packet's last %.10f s", k, q_last);
    done(&g);
    done(&q);
  }
  /* Cut short at 5 us: the first has left whole, the second has sent
   * (5 - 3.3392) us x 10 Gbps = 2,076 B, the third, still waiting, none. */
  Run c = sim_load(fan_out, "flow.yaml", (const char *const[]){"fidelity=flow", "duration=5us", NULL});
  sim_go(&c);
  const uint64_t sent[] = {4174, 2076, 0};
  for (uint32_t m = 0; m < 3; m++) ck_assert_uint_eq(cs_fabric_message(cs_sim_fabric(c.sim), m)->wire_bytes, sent[m]);
  done(&c);
  /* 20,000 B each, cut at 20 us: the first's first window (15,000 B, to
   * 12 us), 8 us of the second's (10,000 B); the rests wait. */
  c = sim_load(fan_out, "flow.yaml",
               (const char *const[]){"fidelity=flow", "duration=20us", "flows.0.size=20000B", "flows.1.size=20000B",
                                     "flows.2.size=20000B", NULL});
  sim_go(&c);
  const uint64_t sent_w[] = {15000, 10000, 0};
  for (uint32_t m = 0; m < 3; m++) ck_assert_uint_eq(cs_fabric_message(cs_sim_fabric(c.sim), m)->wire_bytes, sent_w[m]);
  done(&c);
  /* A machine's NIC is its GPUs' queue: w0 and w1 (machine 0, 100 Gbps
   * inside) send 4,000 B each to machine 1 at once.  Their packets come
   * in to the NIC side by side and leave it in turn, one of each: the
   * first message ends the second's last packet (1,174 B, 0.9392 us)
   * before it, at 10.15312 and 11.09232 us, as at packet level (when the
   * tie was broken at once, the first ended at 7.75312 us: nic_interleave). */
  const char *machines = "topology: {type: star, workers: 4, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 500ns}}\n"
                         "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                         "flows: [{src: w0, dst: w2, size: 4000B}, {src: w1, dst: w3, size: 4000B}]\n";
  Run g = run(machines, "flow", NULL), q = run(machines, "packet", NULL);
  ck_assert_double_eq_tol(end_s(&g, 0), 10.15312e-6, 1e-12);
  ck_assert_double_eq_tol(end_s(&g, 1), 11.09232e-6, 1e-12);
  ck_assert_double_eq_tol(end_s(&q, 0), end_s(&g, 0), 1e-12);
  ck_assert_double_eq_tol(end_s(&q, 1), end_s(&g, 1), 1e-12);
  done(&g);
  done(&q);
  /* Collectives: a server's pulls of 1K fp32 to 8 workers, each on the
   * wire after the one before, take what they take at packet level (the
   * flow fidelity's mean iteration was 28 % above it, now 4 %: the
   * pushes' incast still ends them together, and the server sums them
   * after the last); a hierarchical all-reduce of 10K fp32 on 4 machines
   * of 2 GPUs, whose two rails share each NIC: the rails' messages take
   * turns there as at packet level, a packet apart out of the first step
   * (30 % above; 3 % below while that step's tie was broken at once; 2.5 %
   * above while the bursts' ACKs loaded the NICs as fluid; now 1.1 %
   * below: on a star of machines they wait at the receiver's GPU link and
   * NIC behind its bursts, burst_acks). */
  const char *ps = "topology: {type: star, workers: 8, servers: 1}\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "workload: {params: 1K, iterations: 1, compute: 0, collective: ps}\n";
  Run fp = run(ps, "flow", NULL), pp = run(ps, "packet", NULL);
  uint32_t pulls = 0;
  for (uint32_t m = 0; m < cs_fabric_messages(cs_sim_fabric(pp.sim)); m++) {
    const CsMessageStats *a = cs_fabric_message(cs_sim_fabric(fp.sim), m), *b = cs_fabric_message(cs_sim_fabric(pp.sim), m);
    if (a->step == 0) continue; /* (the pushes) */
    pulls++;
    ck_assert_int_eq(a->dst, b->dst);
    ck_assert_double_eq_tol((double)(a->end - a->start) * 1e-12, (double)(b->end - b->start) * 1e-12, 1e-12);
  }
  ck_assert_uint_eq(pulls, 8);
  done(&fp);
  done(&pp);
  mean_near_packet(ps, "ps", 0.05);
  mean_near_packet("topology: {type: star, workers: 8, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 500ns}}\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "workload: {params: 10K, iterations: 1, compute: 0, collective: hierarchical}\n",
                   "hierarchical", 0.015);
  /* Turns only where a host puts its own messages: bursts from several
   * hosts that meet at a receiver's link come in side by side, their
   * packets in turn (taken in turn there, in the order sent, a tree of 4
   * workers in 4 pieces, 10K fp32, was 13 % slow, and a message from an
   * idle host waited behind one still queued at its sender). */
  mean_near_packet("topology: {type: star, workers: 4}\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "workload: {params: 10K, iterations: 1, compute: 0, collective: tree, chunks: 4}\n",
                   "tree", 0.02);
  const char *rx = "topology: {type: star, workers: 4}\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                   "flows: [{src: w0, dst: w1, size: 10000B}, {src: w0, dst: w1, size: 10000B},\n"
                   "        {src: w0, dst: w1, size: 10000B}, {src: w0, dst: w1, size: 10000B},\n"
                   "        {src: w0, dst: w1, size: 10000B}, {src: w0, dst: w1, size: 10000B},\n"
                   "        {src: w0, dst: w2, size: 10000B, start: 1us}, {src: w3, dst: w2, size: 10000B, start: 2us}]\n";
  Run fx = run(rx, "flow", NULL), px = run(rx, "packet", NULL);
  ck_assert_double_eq_tol(end_s(&fx, 7), end_s(&px, 7), 1e-12); /* (13.5152 us: w2's link idle when w3 sends) */
  done(&fx);
  done(&px);
  /* A window under an mtu: a packet at a time (it looped on windows of 0 packets). */
  const char *tiny = "topology: {type: star, workers: 2}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                     "transport: {protocol: reno, window: 1000B}\n"
                     "flows: [{src: w0, dst: w1, size: 3000B}, {src: w0, dst: w1, size: 3000B, start: 100us}]\n";
  Run ft = run(tiny, "flow", NULL);
  ck_assert(end_s(&ft, 1) > 100e-6 && end_s(&ft, 1) < 200e-6);
  done(&ft);
  /* bbr paces once it has a round trip: three 4,000 B messages from w0
   * after warm-up ones share its link and end together, with the packet
   * fidelity's last (29.1, 30.0 and 31.0 us after they began there). */
  const char *bbr = "topology: {type: star, workers: 4}\n"
                    "defaults: {bandwidth: 10Gbps, latency: 10us}\n"
                    "transport: {protocol: bbr}\n"
                    "flows: [{src: w0, dst: w1, size: 4000B}, {src: w0, dst: w2, size: 4000B, start: 100us},\n"
                    "        {src: w0, dst: w3, size: 4000B, start: 200us}, {src: w0, dst: w1, size: 4000B, start: 500us},\n"
                    "        {src: w0, dst: w2, size: 4000B, start: 500us}, {src: w0, dst: w3, size: 4000B, start: 500us}]\n";
  Run fb = run(bbr, "flow", NULL), pb = run(bbr, "packet", NULL);
  ck_assert_double_eq_tol(end_s(&fb, 3), end_s(&fb, 5), 1e-12);
  ck_assert_double_eq_tol(end_s(&fb, 4), end_s(&fb, 5), 1e-12);
  ck_assert_double_eq_tol(end_s(&fb, 5), end_s(&pb, 5), 0.3e-6);
  done(&fb);
  done(&pb);
}
END_TEST

/* Slow start.  Two hosts on a star of 10 Gbps and 10 us links, reno's
 * init_cwnd of 10 packets; a message of 100 full packets (144,200 B
 * payload, 150,000 B on the wire: 120 us at the line rate, 1.2 us a
 * packet).  Its round trip: 4 x 10 us of latency, 2 x 1.2 us for a
 * packet and 2 x 0.0512 us for its ACK, 42.5024 us.  A window of 10
 * (12 us of packets) waits 30.5024 us for its ACKs, one of 20 (24 us)
 * 18.5024 us, one of 40 (48 us) fills the round trip: 49.0048 us lost,
 * on top of the lone time of 120 us + 20 us of latency + 1.2 us of
 * store-and-forward = 141.2 us.  The window then holds 110 packets: a
 * second message 0.3 ms later loses nothing; a third after 20 ms idle (more
 * than min_rto, 1 ms) starts from init_cwnd again (tcp_cwnd_restart,
 * halved per RTO idle).  With per-message connections every message
 * starts from init_cwnd; without idle_restart the third keeps the window.
 * The packet fidelity gives the same six times to 0.1 ns. */
static const char *slow_starts = "topology: {type: star, workers: 2}\n"
                                 "defaults: {bandwidth: 10Gbps, latency: 10us}\n"
                                 "flows:\n"
                                 "  - {src: w0, dst: w1, size: 144200B}\n"
                                 "  - {src: w0, dst: w1, size: 144200B, start: 300us}\n"
                                 "  - {src: w0, dst: w1, size: 144200B, start: 20ms}\n";

/* Standing queues (standing_q).  A ring of 4 hosts (10 Gbps, 1 us, 64 MB,
 * reno, shortest routes): w1 sends 6.25 MB to w2, and at 5.6 ms, its
 * connection's window grown, 6.25 MB more, while w2 sends 6.25 MB to w0
 * through w1, whose ACKs come back through w1.  There they wait behind
 * the 125,000 B (100 us: transport.host_queue) that w1's connection keeps
 * in its host's queue, so w2's slow start takes round trips of about
 * 109 us instead of the empty path's 8.8 us: its windows of 10, 20, 40 and
 * 80 packets (1.25 us each) lose about 96 + 84 + 59 + 9 = 248 us.  The
 * packet run: w2's message took 5638.0768 us; the flow fidelity gave
 * 5425.875 us (3.8 % early) with the empty path's round trips, within
 * 0.5 % of the packet run now.  On a star of 3 the same holds for the
 * ACKs that w1 sends behind its own warm connection's queue: w0's 3 MB to
 * w1 from 5.7 ms took 2825.2624 us at packet level, 2606.304 us here
 * with the empty path's round trips (7.7 % early), within 1 % now.  Two
 * hosts of a star that send each other
 * 6.25 MB at once build their queues as their windows grow: no round
 * trip is lost there, at either fidelity (5425.875 us here, 5428.830 us
 * at packet level). */
START_TEST(test_standing_queue) {
  const char *base = "topology: {type: ring, workers: 4}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                     "flows:\n"
                     "  - {src: w1, dst: w2, size: 6250000B}\n"
                     "  - {src: w2, dst: w0, size: 6250000B, start: 5600us}\n"
                     "  - {src: w1, dst: w2, size: 6250000B, start: 5600us}\n";
  Run f = run(base, "flow", NULL), p = run(base, "packet", NULL);
  double took_p = end_s(&p, 1) - 5600e-6, took_f = end_s(&f, 1) - 5600e-6;
  ck_assert_msg(fabs(took_p - 5638.0768e-6) < 1e-10, "packet: %.10f s", took_p);
  ck_assert_msg(fabs(took_f / took_p - 1) < 0.005, "flow %.10f s, packet %.10f s", took_f, took_p);
  ck_assert_msg(took_f > 5425.875e-6 + 200e-6, "flow %.10f s: slow start's rounds as on an empty path", took_f);
  done(&f);
  done(&p);
  const char *star3 = "topology: {type: star, workers: 3}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                     "flows:\n"
                     "  - {src: w1, dst: w2, size: 6250000B}\n"
                     "  - {src: w1, dst: w2, size: 6250000B, start: 5600us}\n"
                     "  - {src: w0, dst: w1, size: 3000000B, start: 5700us}\n";
  f = run(star3, "flow", NULL);
  p = run(star3, "packet", NULL);
  took_p = end_s(&p, 2) - 5700e-6, took_f = end_s(&f, 2) - 5700e-6;
  ck_assert_msg(fabs(took_p - 2825.2624e-6) < 1e-10, "star, packet: %.10f s", took_p);
  ck_assert_msg(fabs(took_f / took_p - 1) < 0.01, "star: flow %.10f s, packet %.10f s", took_f, took_p);
  done(&f);
  done(&p);
  const char *both = "topology: {type: star, workers: 2}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                     "flows: [{src: w0, dst: w1, size: 6250000B}, {src: w1, dst: w0, size: 6250000B}]\n";
  f = run(both, "flow", NULL);
  p = run(both, "packet", NULL);
  for (uint32_t m = 0; m < 2; m++) {
    ck_assert_msg(fabs(end_s(&f, m) - 5425.874601e-6) < 1e-11, "flow %u: %.12f s", m, end_s(&f, m));
    ck_assert_msg(fabs(end_s(&p, m) - 5428.8304e-6) < 1e-11, "packet %u: %.12f s", m, end_s(&p, m));
  }
  done(&f);
  done(&p);
}
END_TEST

/* Slow start behind a standing queue that refills (ss_wait).  Two GPUs of
 * one machine (100 Gbps and 500 ns to its NIC): w1 sends 12.5 MB to w0,
 * and 71 us later w0 sends as much to w1, whose ACKs wait in w1's queue
 * behind what w1's connection keeps there, 125 KB a microsecond of the
 * line, 1.25 MB full (transport.host_queue, 100 us).  At packet level
 * w0's windows of 10 and 20 packets wait 70 and 65 us (the queue still
 * filling, then running down from full), and every later one 100 us: an
 * ACK leaves as the queue runs empty, w1 refills it then, and the next
 * window's ACKs come in 2.25 us later, behind nearly all of it.  Here the
 * queue holds 66.142 us when w0 begins and fills 33.858 us later; the
 * round trips (2.25 us empty) are 68.392, 67.716 and then 100 us, and
 * windows of 10 to 640 packets of 0.124764 us lose 67.144 + 65.221 +
 * 95.010 + 90.020 + 80.040 + 60.080 + 20.150 = 477.665 us.  The message
 * took 1541.5016 us at packet level; 1414.45 us here with the queue's
 * 66 us in every round trip (8.2 % early), 1560.36 us now (the fluid's
 * share of the machine's link is the rest: w1's ACKs beside w0's data
 * from the start, where at packet level w0 fills it only once its window
 * has grown). */
START_TEST(test_standing_refills) {
  const char *y = "topology: {type: star, workers: 4, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 500ns}}\n"
                  "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                  "flows: [{src: w1, dst: w0, size: 12500000B}, {src: w0, dst: w1, size: 12500000B, start: 71us}]\n";
  Run f = run(y, "flow", NULL), p = run(y, "packet", NULL);
  double took_p = end_s(&p, 1) - 71e-6, took_f = end_s(&f, 1) - 71e-6;
  ck_assert_msg(fabs(took_p - 1541.5016e-6) < 1e-10, "packet: %.10f s", took_p);
  ck_assert_msg(fabs(took_f / took_p - 1) < 0.015, "flow %.10f s, packet %.10f s", took_f, took_p);
  ck_assert_msg(took_f > 1414.46e-6 + 60e-6, "flow %.10f s: every round trip behind the queue as it was at the start", took_f);
  done(&f);
  done(&p);
}
END_TEST

/* A host's queue in blocks (blocks_end).  On a star of 10 Gbps, w0 sends
 * 6.25 MB to w1 and to w2 at once, with reno.  At packet level each
 * connection keeps up to 125,000 B (transport.host_queue: 100 us) in w0's
 * queue and refills behind the other's: they take the link in blocks and
 * the message sent first ends first, 10.346344 ms, the other at
 * 10.405488 ms, when the two messages' bytes have crossed the link.  The
 * fluid ended both at 10.405488 ms; they now end half a block (50 us, a
 * last block's mean) apart, in the order sent, the last where it did.  The
 * links carry what they do at packet level.  Not where the host's link does not bind them
 * (both to receivers of 4 Gbps: 13.006060 and 13.018060 ms at packet
 * level, both at 13.006060 ms here), nor with cubic, whose packet run ends
 * them the other way round (not asserted: the gap is a mean). */
/* Every link direction of f's run carries the bytes it does in p's. */
static void links_as_packet(Run *f, Run *p, const char *what) {
  const CsTopology *t = cs_sim_topology(f->sim);
  for (uint32_t l = 0; l < t->n_links; l++)
    for (uint32_t d = 0; d < 2; d++) {
      uint64_t a = cs_fabric_link_stats(cs_sim_fabric(f->sim), l, d).bytes, b = cs_fabric_link_stats(cs_sim_fabric(p->sim), l, d).bytes;
      ck_assert_msg(a == b, "%s: link %u, direction %u: %" PRIu64 " B, packet %" PRIu64 " B", what, l, d, a, b);
    }
}

START_TEST(test_host_queue_blocks) {
  const char *y = "topology: {type: star, workers: 3}\n"
                  "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                  "transport: {protocol: reno}\n"
                  "flows: [{src: w0, dst: w1, size: 6250000B}, {src: w0, dst: w2, size: 6250000B}]\n";
  Run f = run(y, "flow", NULL), p = run(y, "packet", NULL);
  ck_assert_msg(fabs(end_s(&p, 0) - 10.346344e-3) < 1e-12 && fabs(end_s(&p, 1) - 10.405488e-3) < 1e-12,
                "packet: %.12f and %.12f s", end_s(&p, 0), end_s(&p, 1));
  ck_assert_msg(fabs(end_s(&f, 1) - end_s(&p, 1)) < 1e-12, "flow's last %.12f s", end_s(&f, 1));
  ck_assert_msg(fabs(end_s(&f, 1) - end_s(&f, 0) - 50e-6) < 1e-12, "flow's first %.12f s", end_s(&f, 0));
  /* every direction carries what it does at packet level: the first
   * message's bits that the fluid had left when it was delivered stay on
   * its own route (they went to the other flow, and the receivers' links
   * were 31,250 B apart, found by review) */
  links_as_packet(&f, &p, "two");
  done(&f);
  done(&p);
  /* The first 30,000 B longer: its fluid end 50 us after the other's, and
   * it is delivered 50 ns before it; what its flow had left then crosses
   * its links after the other's delivery, the last, and the run goes on
   * until it has (it stopped with the last message, its links 27,218 B
   * short).  (Found by a second review) the same beside a collective,
   * whose last message ended the run with the ghost still going: 6,012 B
   * short.  And six messages from w0 of a little unequal sizes: an early
   * one's ghost took a slot an earlier ghost had left, whose first end's
   * entry, still in the ends' heap, passed for the new one's and ended it
   * 22 us early: 13,580 B short. */
  const char *longer = "topology: {type: star, workers: 3}\n"
                       "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                       "transport: {protocol: reno}\n"
                       "flows: [{src: w0, dst: w1, size: 6280000B}, {src: w0, dst: w2, size: 6250000B}]\n";
  const char *mixed = "topology: {type: star, workers: 4, servers: 3}\n"
                      "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                      "transport: {protocol: reno}\n"
                      "workload: {params: 1000, iterations: 1, compute: 10.4ms, collective: ring}\n"
                      "flows: [{src: ps0, dst: ps1, size: 6280000B}, {src: ps0, dst: ps2, size: 6250000B}]\n";
  const char *six = "topology: {type: star, workers: 7}\n"
                    "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                    "transport: {protocol: reno}\n"
                    "flows: [{src: w0, dst: w1, size: 6296000B}, {src: w0, dst: w2, size: 6294000B},\n"
                    "        {src: w0, dst: w3, size: 6272000B}, {src: w0, dst: w4, size: 6270000B},\n"
                    "        {src: w0, dst: w5, size: 6270000B}, {src: w0, dst: w6, size: 6254000B}]\n";
  const char *more[] = {longer, mixed, six}, *names[] = {"longer", "beside a collective", "six"};
  for (int i = 0; i < 3; i++) {
    Run fm = run(more[i], "flow", NULL), pm = run(more[i], "packet", NULL);
    links_as_packet(&fm, &pm, names[i]);
    done(&fm);
    done(&pm);
  }
  const char *slow = "nodes: [{name: w0, role: worker}, {name: w1, role: worker}, {name: w2, role: worker},\n"
                     "        {name: s0, role: switch}]\n"
                     "links: [{a: w0, b: s0}, {a: s0, b: w1, bandwidth: 4Gbps}, {a: s0, b: w2, bandwidth: 4Gbps}]\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                     "transport: {protocol: reno}\n"
                     "flows: [{src: w0, dst: w1, size: 6250000B}, {src: w0, dst: w2, size: 6250000B}]\n";
  Run fs = run(slow, "flow", NULL);
  ck_assert_msg(fabs(end_s(&fs, 0) - 13.00606e-3) < 1e-12 && end_s(&fs, 0) == end_s(&fs, 1), "%.12f and %.12f s",
                end_s(&fs, 0), end_s(&fs, 1));
  done(&fs);
  /* Two GPUs' rails through their machine's NIC (its host queue: 100 us
   * of its link), hierarchical 25M fp32 on two machines of two: at packet
   * level they end 86 us apart, and the next steps start apart; the later
   * intra-machine send then spends its slow start behind the other's
   * refilling queue (test_standing_refills).  0.9888 of the packet run
   * while the rails ended together; 1.0003 now.  A ps of 3 workers and 3
   * servers on a ring, 25M: a server's pulls down one link end one after
   * another; 1.088 before, 0.996 now. */
  mean_near_packet("topology: {type: star, workers: 4, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 500ns}}\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "workload: {params: 25M, iterations: 1, compute: 0, collective: hierarchical}\n",
                   "hierarchical", 0.002);
  mean_near_packet("topology: {type: ring, workers: 3, servers: 3}\n"
                   "routing: ecmp\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "workload: {params: 25M, iterations: 1, compute: 0, collective: ps}\n",
                   "ps on a ring", 0.005);
}
END_TEST

/* A burst behind a standing queue (standing_wait).  On a star of 4, w0
 * sends 12.5 MB to w1, and from 1 ms 40 messages of 4,000 B to w2, 137 us
 * apart.  At packet level each waits behind what the first connection
 * keeps in w0's queue: from nothing to all of its 125,000 B (100 us at 10
 * Gbps), as it comes in just before or just after that connection's
 * refill: 9.5 to 108.1 us, 60.4 us on average.  Here each takes a lone
 * message's 9.8784 us and half that queue, 50 us (9.8784 us alone before). */
START_TEST(test_standing_wait) {
  GString *y = g_string_new("topology: {type: star, workers: 4}\n"
                            "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                            "flows:\n  - {src: w0, dst: w1, size: 12500000B}\n");
  for (int i = 0; i < 40; i++) g_string_append_printf(y, "  - {src: w0, dst: w2, size: 4000B, start: %dus}\n", 1000 + 137 * i);
  Run f = run(y->str, "flow", NULL), p = run(y->str, "packet", NULL);
  double sum_f = 0, sum_p = 0;
  for (uint32_t m = 1; m <= 40; m++) {
    double start = (1000 + 137 * (double)(m - 1)) * 1e-6, took = end_s(&f, m) - start;
    ck_assert_msg(fabs(took - 59.8784e-6) < 1e-11, "flow %u: %.12f s", m, took);
    sum_f += took;
    sum_p += end_s(&p, m) - start;
  }
  ck_assert_msg(fabs(sum_p / 40 - 60.4e-6) < 0.1e-6, "packet mean %.9f s", sum_p / 40);
  ck_assert_msg(fabs(sum_f / sum_p - 1) < 0.02, "flow mean %.9f s, packet %.9f s", sum_f / 40, sum_p / 40);
  done(&f);
  done(&p);
  g_string_free(y, TRUE);
}
END_TEST

/* A connection's messages in turn (conn_waits).  On a star, w0 sends
 * 6.25 MB to w1 at 0, 4,000 B to w1 at 1 ms and 2 MB to w1 at 2 ms, all on
 * one persistent connection: at packet level each goes out behind the one
 * before, 5.204344, 5.2076832 and 6.872040 ms.  The flow fidelity shared
 * the link among them as separate flows (the small one ended at 1.0099
 * ms, the large ones at 6.8720 and 5.3319 ms); now each waits for the
 * fluid end of the large one before it: the first and the last end as at
 * packet level to the picosecond, the small one 3.3 us after its packet
 * run (a lone message's time from the large one's fluid end, where the
 * packet run's first packets went into the queue before that end). */
START_TEST(test_connection_in_turn) {
  const char *y = "topology: {type: star, workers: 3}\n"
                  "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                  "flows:\n"
                  "  - {src: w0, dst: w1, size: 6250000B}\n"
                  "  - {src: w0, dst: w1, size: 4000B, start: 1000us}\n"
                  "  - {src: w0, dst: w1, size: 2000000B, start: 2000us}\n";
  Run f = run(y, "flow", NULL), p = run(y, "packet", NULL);
  const double want[] = {5.204344e-3, 5.2076832e-3, 6.872040e-3};
  for (uint32_t m = 0; m < 3; m++)
    ck_assert_msg(fabs(end_s(&p, m) - want[m]) < 1e-12, "packet %u: %.12f s", m, end_s(&p, m));
  ck_assert_msg(fabs(end_s(&f, 0) - want[0]) < 1e-12, "flow 0: %.12f s", end_s(&f, 0));
  ck_assert_msg(end_s(&f, 1) > want[0] && end_s(&f, 1) - want[1] < 5e-6, "flow 1: %.12f s", end_s(&f, 1));
  ck_assert_msg(fabs(end_s(&f, 2) - want[2]) < 1e-12, "flow 2: %.12f s", end_s(&f, 2));
  done(&f);
  done(&p);
  /* Posted at once: 1 MB then 100 KB (0.8354016 and 0.9186496 ms at packet
   * level; 0.919 and 0.170 ms here before), and four messages of 100
   * packets over 10 us links, whose first loses slow start's 49.0048 us
   * before its last bit leaves (190.2048, 310.2048, 430.2048 and 550.2048
   * us at packet level; 190.2, 261.2, 381.2 and 501.2 us here while the
   * next went at the first's fluid end): to the picosecond.  A fifth
   * posted at the instant the connection frees, 169.0048 us (a review's
   * case), goes behind the three that wait (670.2048 us), not ahead of
   * them (310.2048 us, while the send looked at the time alone).  And
   * 1,500 B posted 1 us after 100,000 B (within the host queue's limit,
   * in its host's queue window by window) goes in behind its last window:
   * 87.7408 us, the packet run's (16.5 us while it went into the queue
   * ahead of the later windows).  A roce queue pair's messages, posted at
   * once, 2 MB, 100 KB and 4,000 B: 1.6675568, 1.7508048 and 1.754144 ms
   * (the small ones 0.173 and 0.096 ms, the 2 MB 1.754 ms, while they
   * shared the link).  1 MB, 200 B and 130 KB at once: the 200 B comes
   * in right behind the 1 MB's last packet, 835.608 us (834.821 us, before
   * it, with a lone message's tail from the 1 MB's fluid end; a review's
   * case), then the 130 KB at 943.8304 us. */
  static const char *const at_once[] = {
      "topology: {type: star, workers: 2}\ndefaults: {bandwidth: 10Gbps, latency: 1us}\n"
      "flows: [{src: w0, dst: w1, size: 1MB}, {src: w0, dst: w1, size: 100KB}]\n",
      "topology: {type: star, workers: 2}\ndefaults: {bandwidth: 10Gbps, latency: 10us}\n"
      "flows: [{src: w0, dst: w1, size: 144200B}, {src: w0, dst: w1, size: 144200B},\n"
      "        {src: w0, dst: w1, size: 144200B}, {src: w0, dst: w1, size: 144200B}]\n",
      "topology: {type: star, workers: 2}\ndefaults: {bandwidth: 10Gbps, latency: 10us}\n"
      "flows: [{src: w0, dst: w1, size: 144200B}, {src: w0, dst: w1, size: 144200B},\n"
      "        {src: w0, dst: w1, size: 144200B}, {src: w0, dst: w1, size: 144200B},\n"
      "        {src: w0, dst: w1, size: 144200B, start: 169.0048us}]\n",
      "topology: {type: star, workers: 2}\ndefaults: {bandwidth: 10Gbps, latency: 1us}\n"
      "flows: [{src: w0, dst: w1, size: 100000B}, {src: w0, dst: w1, size: 1500B, start: 1us}]\n",
      "topology: {type: star, workers: 2}\ntransport: {protocol: roce}\ndefaults: {bandwidth: 10Gbps, latency: 1us}\n"
      "flows: [{src: w0, dst: w1, size: 2MB}, {src: w0, dst: w1, size: 100KB}, {src: w0, dst: w1, size: 4000B}]\n",
      "topology: {type: star, workers: 2}\ndefaults: {bandwidth: 10Gbps, latency: 1us}\n"
      "flows: [{src: w0, dst: w1, size: 1MB}, {src: w0, dst: w1, size: 200B}, {src: w0, dst: w1, size: 130KB}]\n"};
  static const double ends[][5] = {{835.4016e-6, 918.6496e-6},
                                   {190.2048e-6, 310.2048e-6, 430.2048e-6, 550.2048e-6},
                                   {190.2048e-6, 310.2048e-6, 430.2048e-6, 550.2048e-6, 670.2048e-6},
                                   {86.448e-6, 87.7408e-6},
                                   {1667.5568e-6, 1750.8048e-6, 1754.144e-6},
                                   {835.4016e-6, 835.608e-6, 943.8304e-6}};
  for (size_t i = 0; i < G_N_ELEMENTS(at_once); i++) {
    f = run(at_once[i], "flow", NULL);
    p = run(at_once[i], "packet", NULL);
    for (uint32_t m = 0; m < 5 && ends[i][m] > 0; m++) {
      ck_assert_msg(fabs(end_s(&p, m) - ends[i][m]) < 1e-12, "case %zu, packet %u: %.12f s", i, m, end_s(&p, m));
      ck_assert_msg(fabs(end_s(&f, m) - ends[i][m]) < 1e-12, "case %zu, flow %u: %.12f s", i, m, end_s(&f, m));
    }
    done(&f);
    done(&p);
  }
}
END_TEST

START_TEST(test_slow_start) {
  const double lone = 141.2e-6, lost = 49.0048e-6;
  const double starts[] = {0, 300e-6, 20e-3};
  const char *modes[] = {NULL, "transport.connections=per-message", "transport.idle_restart=false"};
  const double want[][3] = {{lone + lost, lone, lone + lost}, {lone + lost, lone + lost, lone + lost},
                            {lone + lost, lone, lone}};
  for (int k = 0; k < 3; k++) {
    const char *more[] = {modes[k], NULL};
    Run f = run(slow_starts, "flow", more), p = run(slow_starts, "packet", more);
    for (uint32_t m = 0; m < 3; m++) {
      ck_assert_msg(fabs(end_s(&f, m) - starts[m] - want[k][m]) < 1e-12, "%s: message %u took %.10f s, want %.10f s",
                    modes[k] ? modes[k] : "persistent", m, end_s(&f, m) - starts[m], want[k][m]);
      ck_assert_msg(fabs(end_s(&p, m) - end_s(&f, m)) < 1e-9, "%s: message %u: packet %.10f s, flow %.10f s",
                    modes[k] ? modes[k] : "persistent", m, end_s(&p, m), end_s(&f, m));
    }
    done(&f);
    done(&p);
  }
  /* Found by review.  (a) Five-packet messages do not grow the window
   * (the sender never used half of it: Linux's tcp_is_cwnd_limited), so
   * the 100-packet message after six of them loses the 49.0048 us.  (b)
   * Two paths of one hop count under ECMP, over 1 us and 20 us links (a
   * round trip of 5.3 and 81.3 us: init_cwnd of 10 fills only the first):
   * the messages the short path carries grow the pair's window too.  (c)
   * 30 packets over 250 us links, then 30 more 3.0 or 3.2 ms later: the
   * RTO (about the round trip, 1 ms, + min_rto) has passed since the
   * first's last bit left (about 1.03 ms, after its slow start) only at
   * 3.2 ms: the window restarts there and not at 3.0 ms, as at packet
   * level (1515.7 us at 3.2 ms, 1516.9 us at packet level). */
  GString *few = g_string_new("topology: {type: star, workers: 2}\n"
                              "defaults: {bandwidth: 10Gbps, latency: 10us}\nflows:\n");
  for (int i = 0; i < 6; i++) g_string_append_printf(few, "  - {src: w0, dst: w1, size: 7210B, start: %dus}\n", 100 * i);
  g_string_append(few, "  - {src: w0, dst: w1, size: 144200B, start: 600us}\n");
  GString *ecmp = g_string_new("routing: ecmp\n"
                               "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 1GB}\n"
                               "nodes: [{name: a, role: host}, {name: b, role: host}, {name: s1, role: switch}, "
                               "{name: s2, role: switch}]\n"
                               "links: [{a: a, b: s1}, {a: s1, b: b}, {a: a, b: s2, latency: 20us}, "
                               "{a: s2, b: b, latency: 20us}]\nflows:\n");
  for (int i = 0; i < 10; i++) g_string_append_printf(ecmp, "  - {src: a, dst: b, size: 144200B, start: %dus}\n", 400 * i);
  const char *idle = "topology: {type: star, workers: 2}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 250us}\n"
                     "flows: [{src: w0, dst: w1, size: 43260B}, {src: w0, dst: w1, size: 43260B, start: 3ms}]\n";
  struct {
    const char *yaml, *set;
    uint32_t n;
    double tol;
  } found[] = {{few->str, NULL, 7, 1e-12}, {ecmp->str, "seed=3", 10, 1e-12}, {idle, NULL, 2, 1e-12},
               {idle, "flows.1.start=3.2ms", 2, 2e-3}};
  for (size_t k = 0; k < G_N_ELEMENTS(found); k++) {
    const char *more[] = {found[k].set, NULL};
    Run f = run(found[k].yaml, "flow", more), p = run(found[k].yaml, "packet", more);
    for (uint32_t m = 0; m < found[k].n; m++)
      ck_assert_msg(fabs(end_s(&f, m) / end_s(&p, m) - 1) <= found[k].tol, "case %zu, message %u: flow %.10f s, packet %.10f s",
                    k, m, end_s(&f, m), end_s(&p, m));
    if (k == 0) ck_assert_double_eq_tol(end_s(&f, 6) - 600e-6, lone + lost, 1e-12);
    if (k >= 2) ck_assert(end_s(&f, 1) - (k == 2 ? 3e-3 : 3.2e-3) > (k == 2 ? 0 : 1.4e-3)); /* (restarted at 3.2 ms) */
    if (k == 2) ck_assert_double_lt(end_s(&f, 1) - 3e-3, 0.6e-3);
    done(&f);
    done(&p);
  }
  g_string_free(few, TRUE);
  g_string_free(ecmp, TRUE);
  /* a binomial tree of 16 workers on a k = 4 fat-tree, 10K fp32 (40 KB, 28
   * packets a message; round trips of 19.5 us across pods, 16 packets):
   * the flow fidelity was 8.5 % under the packet run without slow start
   * (0.000346314 s against 0.000378429 s), 0.02 % with it */
  const char *tree = "topology: {type: fat-tree, k: 4, workers: 16}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                     "workload: {params: 10K, iterations: 1, compute: 0, collective: tree}\n";
  Run f = run(tree, "flow", NULL), p = run(tree, "packet", NULL);
  double flow = cs_sim_summary(f.sim)->iter_mean_s, packet = cs_sim_summary(p.sim)->iter_mean_s;
  ck_assert_msg(fabs(flow / packet - 1) < 0.01, "tree: flow %.9f s, packet %.9f s", flow, packet);
  done(&f);
  done(&p);
}
END_TEST

static const char *lossy = "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
                           "links: [{a: a, b: b, bandwidth: 10Gbps, latency: 50us, loss: 0.01}]\n"
                           "transport: {mtu: 1500B, header: 58B, ack: 64B}\n"
                           "flows: [{src: a, dst: b, size: 10MB}]\n";

START_TEST(test_mathis_cap) {
  Run r = run(lossy, "flow", NULL);
  double rtt = 100e-6 + 8 * 1500 / 10e9 + 8 * 64 / 10e9;
  double rate = 8 * 1442 / rtt * sqrt(1.5) / sqrt(0.01);
  double packets = ceil(10e6 / 1442), wire = 10e6 + packets * 58;
  /* and every lost packet is sent again: 1 / (1 - p) transmissions each */
  ck_assert_double_eq_tol(end_s(&r, 0), 8 * wire / 0.99 / rate + 50e-6, 1e-6);
  done(&r);
  const char *fixed[] = {"transport.protocol=fixed", NULL};
  Run q = run(lossy, "flow", fixed); /* no cap from loss: the link's rate */
  ck_assert_double_eq_tol(end_s(&q, 0), 8 * wire / 0.99 / 10e9 + 50e-6, 1e-9);
  done(&q);
  const char *bbr[] = {"transport.protocol=bbr", NULL}; /* nor for bbr, which does not answer loss */
  q = run(lossy, "flow", bbr);
  ck_assert_double_eq_tol(end_s(&q, 0), 8 * wire / 0.99 / 10e9 + 50e-6, 1e-9);
  done(&q);
  /* cubic: the larger of RFC 9438's response function, (C (3 + beta) /
   * (4 (1 - beta)))^(1/4) (RTT / p)^(3/4) = 0.264 packet per RTT here, and
   * the Reno-friendly sqrt(3 / (2 p)) = 12.2: Reno's rate at this RTT */
  const char *cubic[] = {"transport.protocol=cubic", NULL};
  q = run(lossy, "flow", cubic);
  ck_assert_double_eq_tol(end_s(&q, 0), 8 * wire / 0.99 / rate + 50e-6, 1e-6);
  done(&q);
  /* with a 100 ms round trip and p = 1e-4, the cubic curve wins: 187 packets per RTT against 122 */
  const char *cubic_far[] = {"transport.protocol=cubic", "links.0.latency=50ms", "links.0.loss=0.0001", NULL};
  q = run(lossy, "flow", cubic_far);
  double rtt_far = 100e-3 + 8 * 1500 / 10e9 + 8 * 64 / 10e9;
  double w = pow(0.4 * 3.7 / (4 * 0.3), 0.25) * pow(rtt_far / 1e-4, 0.75);
  ck_assert_double_gt(w, sqrt(1.5 / 1e-4));
  ck_assert_double_eq_tol(end_s(&q, 0), 8 * wire / 0.9999 / (8 * 1442 * w / rtt_far) + 50e-3, 1e-6);
  done(&q);
  const char *dead[] = {"links.0.loss=1", NULL};
  GError *e = NULL;
  CsScenario *sc = cs_scenario_load_string(lossy, "flow.yaml", (const char *const[]){"fidelity=flow", dead[0], NULL}, &e);
  ck_assert_msg(sc != NULL, "%s", e ? e->message : "");
  CsSim *sim = cs_sim_new(sc, &e);
  ck_assert(sim && cs_sim_run(sim, &e));
  ck_assert_uint_eq(cs_sim_failed(sim), 1);
  ck_assert(cs_fabric_message(cs_sim_fabric(sim), 0)->failed);
  cs_sim_free(sim);
  cs_scenario_free(sc);
}
END_TEST

/* 5. What the run reports: the fidelity, and what it does not model as
 * empty cells, never 0. */
START_TEST(test_reports) {
  g_autofree char *dir = g_dir_make_tmp("commsim-flow-XXXXXX", NULL);
  const char *more[] = {"workload.iterations=2", NULL};
  Run f = run(star, "flow", more);
  GError *e = NULL;
  ck_assert_msg(cs_sim_write_outputs(f.sim, dir, &e), "%s", e ? e->message : "");
  g_autofree char *path = g_build_filename(dir, "summary.csv", NULL), *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_strchomp(g_strdelimit(lines[0], "\r", ' ')), g_strchomp(g_strdelimit(lines[1], "\r", ' ')); /* CRLF rows */
  g_auto(GStrv) cols = g_strsplit(lines[0], ",", -1), vals = g_strsplit(lines[1], ",", -1);
  guint n = g_strv_length(cols);
  ck_assert_uint_eq(g_strv_length(vals), n);
  /* fidelity follows the SPEC's and commsim's columns, before those of
   * workload.convergence, PFC and the hybrid fidelity */
  ck_assert_str_eq(cols[n - 8], "fidelity");
  ck_assert_str_eq(vals[n - 8], "flow");
  ck_assert_str_eq(cols[n - 7], "iterations_to_target");
  ck_assert_str_eq(cols[n - 3], "pause_frames");
  ck_assert_str_eq(cols[n - 1], "fast_forward_s");
  for (guint i = n - 7; i < n; i++) ck_assert_str_eq(vals[i], ""); /* no convergence, pauses or jumps: empty */
  for (guint i = 0; i < n; i++)
    if (!strcmp(cols[i], "packets_sent") || !strcmp(cols[i], "packets_dropped") || !strcmp(cols[i], "retransmissions"))
      ck_assert_str_eq(vals[i], "");
    else if (!strcmp(cols[i], "iter_mean_s"))
      ck_assert_double_gt(g_ascii_strtod(vals[i], NULL), 0);
  done(&f);
  rm_rf(dir);
}
END_TEST

/* A lone message's time, packet by packet, at both fidelities: 1,442 B
 * is one full packet; 1,443 B a full one and a 59-byte last one, which
 * waits at the switch behind the full one (4.4472 us at 10 Gbps over two
 * 1 us hops: 2 x 1.2 + 0.0472 + 2; flow fidelity gave 3.2944 us when it
 * charged only the last packet's store-and-forward), and so on; with the
 * first hop at 1 Gbps the train leaves it spaced by 12 us and the last
 * packet waits for nothing downstream. */
START_TEST(test_lone_message_time) {
  const char *yaml = "defaults: {bandwidth: 10Gbps, latency: 1us}\ntopology: {type: star, workers: 2}\n"
                     "flows: [{src: w0, dst: w1, size: 1MB}]\n";
  const char *sizes[] = {"flows.0.size=1442B", "flows.0.size=1443B", "flows.0.size=2885B", "flows.0.size=100KB"};
  for (int slow = 0; slow < 2; slow++)
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
      const char *more[] = {sizes[i], slow ? "links_override=[{match: w0-sw0, bandwidth: 1Gbps}]" : NULL, NULL};
      Run f = run(yaml, "flow", more), p = run(yaml, "packet", more);
      ck_assert_msg(fabs(end_s(&f, 0) - end_s(&p, 0)) < 1e-12, "%s%s: flow %.10f s, packet %.10f s", sizes[i],
                    slow ? " (first hop 1 Gbps)" : "", end_s(&f, 0), end_s(&p, 0));
      if (!slow && i == 1) ck_assert_double_eq_tol(end_s(&f, 0), 4.4472e-6, 1e-12);
      done(&f);
      done(&p);
    }
}
END_TEST

/* The same with `switching: cut-through`: the switch starts a packet once
 * its first 64 bytes are in, or, on an egress faster than the ingress
 * (the second hop at 40 Gbps), so that it ends as its last bit arrives.
 * 1,443 B: the full packet leaves w0 at 1.2 us, its first bit reaches
 * the switch at 1.0 us and it leaves there from 1.0512 to 2.2512 us; the
 * 59-byte last packet (under 64 bytes: it must be whole) is in at 2.2472
 * us and waits for it, ending at 2.2984 us: 3.2984 us with the second
 * latency (4.4472 us stored and forwarded).  Flow and packet agree to
 * the picosecond. */
START_TEST(test_lone_message_cut_through) {
  const char *yaml = "defaults: {bandwidth: 10Gbps, latency: 1us}\ntopology: {type: star, workers: 2}\n"
                     "switching: cut-through\nflows: [{src: w0, dst: w1, size: 1MB}]\n";
  const char *sizes[] = {"flows.0.size=1442B", "flows.0.size=1443B", "flows.0.size=2885B", "flows.0.size=100KB"};
  const char *rates[] = {NULL, "links_override=[{match: w0-sw0, bandwidth: 1Gbps}]",
                         "links_override=[{match: w1-sw0, bandwidth: 40Gbps}]"};
  for (size_t k = 0; k < G_N_ELEMENTS(rates); k++)
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
      const char *more[] = {sizes[i], rates[k], NULL};
      Run f = run(yaml, "flow", more), p = run(yaml, "packet", more);
      ck_assert_msg(fabs(end_s(&f, 0) - end_s(&p, 0)) < 1e-12, "%s %s: flow %.10f s, packet %.10f s", sizes[i],
                    rates[k] ? rates[k] : "", end_s(&f, 0), end_s(&p, 0));
      if (k == 0 && i == 1) ck_assert_double_eq_tol(end_s(&f, 0), 3.2984e-6, 1e-12);
      done(&f);
      done(&p);
    }
}
END_TEST

/* A message that `duration` leaves unfinished reports the wire bytes it
 * put on its first link by then, as links.csv counts them (it reported
 * the whole message's).  Five hosts on a switch, 10 Gbps, no headers,
 * ACKs of 1 B per 1000 B packet on the reverse routes; duration 2 ms:
 *  - A, w0 -> w1, 10 MB from 0: alone on w0's link for 0.5 ms at 10 Gbps
 *    (625,000 B), then sharing it with B at 5 Gbps for 1.5 ms (937,500 B):
 *    1,562,500 B.  A fluid flow sends from its first instant (the
 *    latencies are its tail, after its last bit), so no latency term.
 *  - B, w0 -> w2, 9 MB from 0.5 ms: 5 Gbps x 1.5 ms = 937,500 B.
 *  - C, w3 -> w4, 100 KB from 0, delivered (about 80 us): its whole
 *    100,000 B, as before.
 * w0's link carried A + B = 2,500,000 B.  Within a byte (rounding).  The
 * same lone flow sprayed (ecmp-packet, 8 paths sharing its first link) on
 * a fat-tree of 10 Gbps: 10 Gbps x 2 ms = 2,500,000 B, the paths' parts
 * added up. */
START_TEST(test_unfinished_wire_bytes) {
  const char *yaml = "nodes: [{name: sw, role: switch}, {name: w0, role: host}, {name: w1, role: host},\n"
                     "        {name: w2, role: host}, {name: w3, role: host}, {name: w4, role: host}]\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                     "links: [{a: w0, b: sw}, {a: w1, b: sw}, {a: w2, b: sw}, {a: w3, b: sw}, {a: w4, b: sw}]\n"
                     "transport: {mtu: 1000B, header: 0B, ack: 1B}\n"
                     "duration: 2ms\n"
                     "flows:\n"
                     "  - {src: w0, dst: w1, size: 10MB}\n"
                     "  - {src: w0, dst: w2, size: 9MB, start: 0.5ms}\n"
                     "  - {src: w3, dst: w4, size: 100KB}\n";
  Run r = sim_load(yaml, "flow.yaml", (const char *const[]){"fidelity=flow", NULL});
  sim_go(&r);
  ck_assert_uint_eq(cs_sim_unfinished(r.sim), 2);
  const CsFabric *f = cs_sim_fabric(r.sim);
  ck_assert_uint_eq(cs_fabric_messages(f), 3);
  double a = 10e9 * 0.5e-3 / 8 + 5e9 * 1.5e-3 / 8, b = 5e9 * 1.5e-3 / 8;
  bool seen[3] = {false};
  for (uint32_t m = 0; m < 3; m++) {
    const CsMessageStats *st = cs_fabric_message(f, m);
    int k = st->payload == 10000000 ? 0 : st->payload == 9000000 ? 1 : 2;
    seen[k] = true;
    ck_assert(st->delivered == (k == 2));
    double want = k == 0 ? a : k == 1 ? b : 100000;
    ck_assert_msg(fabs((double)st->wire_bytes - want) <= 1, "message of %" G_GUINT64_FORMAT " B: wire_bytes %" G_GUINT64_FORMAT
                  ", by hand %.0f", st->payload, st->wire_bytes, want);
  }
  ck_assert(seen[0] && seen[1] && seen[2]);
  ck_assert_uint_eq(cs_fabric_link_stats(cs_sim_fabric(r.sim), 0, 0).bytes, 2500000);
  done(&r);
  const char *sprayed = "topology: {type: fat-tree, k: 4}\nrouting: ecmp-packet\n"
                        "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                        "transport: {mtu: 1000B, header: 0B, ack: 1B}\nduration: 2ms\n"
                        "flows: [{src: w0, dst: w15, size: 10MB}]\n";
  Run s = sim_load(sprayed, "flow.yaml", (const char *const[]){"fidelity=flow", NULL});
  sim_go(&s);
  const CsMessageStats *st = cs_fabric_message(cs_sim_fabric(s.sim), 0);
  ck_assert(!st->delivered);
  ck_assert_msg(fabs((double)st->wire_bytes - 10e9 * 2e-3 / 8) <= 1, "sprayed: wire_bytes %" G_GUINT64_FORMAT,
                st->wire_bytes);
  done(&s);
}
END_TEST

/* Background alone: a flow at its source's rate until `duration`, with
 * no event of its own; the run lasts the duration, as at packet level,
 * and its links carry 1 Gbps of 10 on two of the four directions (mean
 * 0.05, most 0.1), 1.25 MB each in 10 ms.  (It ended at 0 s, all zeros.) */
START_TEST(test_background_alone) {
  const char *yaml = "topology: {type: star, workers: 2}\n"
                     "background: [{src: w0, dst: w1, pattern: cbr, rate: 1Gbps}]\nduration: 10ms\n";
  for (int k = 0; k < 2; k++) {
    Run r = sim_load(yaml, "bg", (const char *const[]){k ? "fidelity=packet" : "fidelity=flow", NULL});
    sim_go(&r);
    ck_assert_int_eq(cs_sim_end_time(r.sim), 10000000000LL);
    const CsSummary *m = cs_sim_summary(r.sim);
    double tol = k ? 1e-3 : 1e-9; /* packets: whole packets of 1,500 bytes */
    ck_assert_msg(fabs(m->link_util_mean - 0.05) <= 0.05 * tol && fabs(m->link_util_max - 0.1) <= 0.1 * tol,
                  "%s: utilization mean %.9f, max %.9f", k ? "packet" : "flow", m->link_util_mean, m->link_util_max);
    sim_done(&r);
  }
}
END_TEST

/* 6. Many at once: a ring all-reduce of 1,024 workers takes one refill
 * per step of the ring and its result is the alpha-beta formula with
 * headers and ACKs (2 (P-1) steps of n/P each). */
START_TEST(test_ring_1024) {
  const char *yaml = "topology: {type: star, workers: 1024}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                     "transport: {mtu: 1000B, header: 0B, ack: 1B}\n"
                     "workload: {params: 25M, iterations: 1, compute: 0s, buckets: 0, collective: ring,\n"
                     "           compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 0s}}}\n"
                     "output: {traces: [summary]}\n";
  Run r = run(yaml, "flow", NULL);
  /* the largest piece, 24,415 fp32 elements (25M / 1024 rounded up), in 98 packets */
  double n = 4 * ceil(25e6 / 1024), packets = ceil(n / 1000);
  /* a host's uplink carries its piece and 1 B of ACK per packet of the piece it receives;
   * then the latencies and a full packet's store-and-forward at the switch
   * (the last, smaller, waits behind the one before it) */
  double step = 8 * n * (1 + packets / n) / 10e9 + 2e-6 + 8 * 1000 / 10e9;
  double comm = cs_sim_summary(r.sim)->comm_s;
  ck_assert_msg(fabs(comm / (2 * 1023 * step) - 1) < 0.002, "comm %.6f want %.6f", comm, 2 * 1023 * step);
  /* a few events per message (its start, its end, its delivery, the step after), none per packet */
  uint32_t messages = cs_fabric_messages(cs_sim_fabric(r.sim));
  ck_assert_uint_eq(messages, 1024 * 2046);
  ck_assert_uint_lt(cs_sim_events(r.sim), 5 * (uint64_t)messages);
  /* no trace lists the messages: every one was forgotten once finished */
  ck_assert_uint_eq(cs_fabric_first_message(cs_sim_fabric(r.sim)), messages);
  done(&r);
}
END_TEST

/* 6b. A refill costs no event of its own: a ring of 8 workers with equal
 * pieces (8M elements) runs in lockstep, each step's 8 messages ending
 * their fluid phase at one instant and delivered at another.  The events
 * are then the workload's two per worker (its compute and its bucket
 * ready), the refill the first sends ask for (they come from the
 * workload, outside the fabric's events), and per step of 2 (P-1) = 14
 * one fluid end and one delivery, whose refills (the new messages', and
 * the rounds their ACK loads ask for) run inside them: 16 + 1 + 28 = 45,
 * and one more a picosecond after the first step's messages began, past
 * their connections' first windows, where the standing queues on their
 * ways are read (standing_q; later steps' fit their grown windows): 46.
 * An event per refill and per round gave 58. */
START_TEST(test_refill_inside) {
  const char *yaml = "topology: {type: star, workers: 8}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                     "transport: {mtu: 1000B, header: 0B, ack: 1B}\n"
                     "workload: {params: 8M, iterations: 1, compute: 0s, buckets: 0, collective: ring,\n"
                     "           compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 0s}}}\n"
                     "output: {traces: [summary]}\n";
  Run r = run(yaml, "flow", NULL);
  ck_assert_uint_eq(cs_fabric_messages(cs_sim_fabric(r.sim)), 8 * 14);
  ck_assert_uint_eq(cs_sim_events(r.sim), 2 * 8 + 1 + 2 * 14 + 1);
  done(&r);
}
END_TEST

/* 6b. Deliveries out of the order of their fluid ends.  a -> b crosses
 * four 10 Gbps hops (a, s1, s2, s3, b), c -> d two (c, s3, d); no link
 * direction carries both.  a's 10 MB leave at 8 ms and arrive after four
 * latencies of 1 us and three store-and-forwards of a 1000 B packet
 * (0.8 us each): 8 ms + 6.4 us.  c's 10 MB + 2000 B leave 1.6 us later and
 * arrive after two latencies and one store-and-forward: 8 ms + 4.4 us,
 * before a's.  Each arrives at its own time, whatever order they left in. */
START_TEST(test_delivery_order) {
  const char *yaml = "nodes: [{name: a, role: host}, {name: b, role: host}, {name: c, role: host}, "
                     "{name: d, role: host}, {name: s1, role: switch}, {name: s2, role: switch}, "
                     "{name: s3, role: switch}]\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                     "links: [{a: a, b: s1}, {a: s1, b: s2}, {a: s2, b: s3}, {a: s3, b: b}, "
                     "{a: c, b: s3}, {a: s3, b: d}]\n"
                     "transport: {mtu: 1000B, header: 0B, ack: 1B, window: 100000, init_cwnd: 100000pkt}\n"
                     "flows:\n  - {src: a, dst: b, size: 10MB}\n  - {src: c, dst: d, size: 10002000B}\n";
  Run r = run(yaml, "flow", NULL);
  double sf = 8 * 1000 / 10e9;
  ck_assert_double_eq_tol(end_s(&r, 0), 8 * 10e6 / 10e9 + 4e-6 + 3 * sf, 1e-9);
  ck_assert_double_eq_tol(end_s(&r, 1), 8 * 10.002e6 / 10e9 + 2e-6 + sf, 1e-9);
  ck_assert_double_lt(end_s(&r, 1), end_s(&r, 0));
  done(&r);
}
END_TEST

/* 6c. Flows that end at one instant are delivered in the order their
 * messages were sent, so what the deliveries send next is numbered in
 * that order too.  A ring of 8 in lockstep: step 0's messages are 0..7,
 * w_k -> w_k+1; w_k+1 gets its message k-th and sends its step-1
 * message then, so message 8 + k comes from w_k+1 (mod 8).  (A heap that
 * left ties in its own order numbered them otherwise: message 8 came from
 * w0.) */
START_TEST(test_tie_order) {
  const char *yaml = "topology: {type: star, workers: 8}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                     "transport: {mtu: 1000B, header: 0B, ack: 1B}\n"
                     "workload: {params: 8M, iterations: 1, compute: 0s, buckets: 0, collective: ring,\n"
                     "           compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 0s}}}\n"
                     "output: {traces: [summary, messages]}\n";
  Run r = run(yaml, "flow", NULL);
  const CsFabric *f = cs_sim_fabric(r.sim);
  for (uint32_t k = 0; k < 8; k++) {
    ck_assert_uint_eq(cs_fabric_message(f, k)->src, k);
    ck_assert_double_eq(end_s(&r, k), end_s(&r, 0)); /* one instant */
    ck_assert_uint_eq(cs_fabric_message(f, 8 + k)->src, (k + 1) % 8);
  }
  done(&r);
}
END_TEST

/* 6d. A long flow whose rate changes thousands of times: a -> c (100 MB)
 * shares c's link with 2,000 flows of 10 KB from b, one every 20 us.  No
 * ACK crosses a data direction (they go back on c's uplink), so each short
 * flow and the long one get 5 Gbps for 16 us (80,000 bits at 5 Gbps), and
 * the long one has 10 Gbps for the 4 us left: 120,000 bits a period.  After
 * 2,000 periods (40 ms) it has 8e8 - 2.4e8 bits left at 10 Gbps (56 ms),
 * then two latencies of 1 us and one store-and-forward (0.8 us).  Its ends
 * superseded at every change (4,000 of them) are dropped as they pile up;
 * the one in force must survive. */
START_TEST(test_many_changes) {
  GString *y = g_string_new("nodes: [{name: a, role: host}, {name: b, role: host}, {name: c, role: host}, "
                            "{name: sw, role: switch}]\n"
                            "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                            "links: [{a: a, b: sw}, {a: b, b: sw}, {a: sw, b: c}]\n"
                            "transport: {mtu: 1000B, header: 0B, ack: 1B, window: 100000}\n"
                            "flows:\n  - {src: a, dst: c, size: 100MB}\n");
  for (int k = 0; k < 2000; k++) g_string_append_printf(y, "  - {src: b, dst: c, size: 10KB, start: %dus}\n", 20 * k);
  Run r = run(y->str, "flow", NULL);
  ck_assert_double_eq_tol(end_s(&r, 0), 40e-3 + (8e8 - 2000 * 120000.0) / 10e9 + 2e-6 + 8 * 1000 / 10e9, 1e-8);
  for (uint32_t k = 1; k <= 2000; k++) /* 16 us at 5 Gbps after its start, and its tail */
    ck_assert_double_eq_tol(end_s(&r, k), 20e-6 * (k - 1) + 16e-6 + 2e-6 + 8 * 1000 / 10e9, 1e-8);
  done(&r);
  g_string_free(y, TRUE);
}
END_TEST

/* 6e. Ends set out of their order: 40 flows start at once, each alone
 * on its links (w_k -> w_40+k; the ACKs go back on directions no data
 * crosses), with sizes 1,000 KB + 25 KB x (17 k mod 40), so the refill
 * sets their ends in an order that is not theirs: some go in front of
 * the ends already set, some between them, some further back than the
 * ring of ends takes (the heap).  Each is delivered at its own end,
 * bits / 10 Gbps + two latencies + a packet's store-and-forward. */
START_TEST(test_ends_out_of_order) {
  GString *y = g_string_new("topology: {type: star, workers: 80}\n"
                            "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                            "transport: {mtu: 1000B, header: 0B, ack: 1B, window: 100000}\n"
                            "flows:\n");
  for (int k = 0; k < 40; k++)
    g_string_append_printf(y, "  - {src: w%d, dst: w%d, size: %dKB}\n", k, 40 + k, 1000 + 25 * ((17 * k) % 40));
  Run r = run(y->str, "flow", NULL);
  for (uint32_t k = 0; k < 40; k++) {
    double bits = 8e3 * (1000 + 25 * ((17 * k) % 40));
    ck_assert_double_eq_tol(end_s(&r, k), bits / 10e9 + 2e-6 + 8 * 1000 / 10e9, 2e-12);
  }
  done(&r);
  g_string_free(y, TRUE);
}
END_TEST

/* 7. Forgetting finished messages (no messages.csv) changes no figure:
 * a ring of 64 workers with two iterations (the first a warm-up, so the
 * summary's wire bytes count only the second's messages) gives the same
 * summary with and without messages.csv, and holds no message at its end
 * without it. */
START_TEST(test_retire) {
  const char *yaml = "topology: {type: star, workers: 64}\n"
                     "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                     "workload: {params: 1M, iterations: 2, warmup: 1, compute: 1ms, collective: ring}\n"
                     "output: {traces: [summary]}\n";
  const char *with_messages[] = {"output.traces=[summary,messages]", NULL};
  Run a = run(yaml, "flow", NULL), b = run(yaml, "flow", with_messages);
  const CsFabric *fa = cs_sim_fabric(a.sim), *fb = cs_sim_fabric(b.sim);
  ck_assert_uint_eq(cs_fabric_messages(fa), cs_fabric_messages(fb));
  ck_assert_uint_eq(cs_fabric_first_message(fa), cs_fabric_messages(fa));
  ck_assert_uint_eq(cs_fabric_first_message(fb), 0);
  const CsSummary *x = cs_sim_summary(a.sim), *y = cs_sim_summary(b.sim);
  ck_assert_uint_eq(x->iterations_measured, 64);
  ck_assert_double_eq(x->iter_mean_s, y->iter_mean_s);
  ck_assert_double_eq(x->comm_s, y->comm_s);
  /* 2 x 63 pieces of 1M / 64 fp32 (62,500 B) with their headers, from the second iteration only */
  ck_assert_double_gt(x->wire_bytes_per_worker, 126 * 62500.0);
  ck_assert_double_lt(x->wire_bytes_per_worker, 126 * 62500.0 * 1.05);
  ck_assert_double_eq(x->wire_bytes_per_worker, y->wire_bytes_per_worker);
  done(&a);
  done(&b);
}
END_TEST

/* The flow fidelity runs its next fluid end or delivery inside the event
 * before when that comes next (cs_engine_advance_own), and schedules its
 * plans at the end of each event: every message starts and ends as when
 * each plan is scheduled as it is made (the engine's own path off), on
 * scenarios where plans meet at one instant: one-hop torus routes of 0
 * latency (a tail of 0: a delivery planned at the instant it is planned),
 * compute steps and buckets (sends from outside the fabric's events), and
 * a ring of 64 on a star. */
static void own_matches_reference(const char *yaml, uint32_t min_messages) {
  Run r[2];
  for (int k = 0; k < 2; k++) {
    r[k] = sim_load(yaml, "own.yaml", NULL);
    cs_engine_set_own(cs_sim_engine(r[k].sim), k == 0);
    sim_go(&r[k]);
    ck_assert_uint_eq(cs_sim_unfinished(r[k].sim), 0);
  }
  const CsFabric *f0 = cs_sim_fabric(r[0].sim), *f1 = cs_sim_fabric(r[1].sim);
  ck_assert_uint_eq(cs_fabric_messages(f0), cs_fabric_messages(f1));
  ck_assert_uint_ge(cs_fabric_messages(f0), min_messages);
  for (uint32_t m = 0; m < cs_fabric_messages(f0); m++) {
    const CsMessageStats *a = cs_fabric_message(f0, m), *b = cs_fabric_message(f1, m);
    ck_assert_msg(a->src == b->src && a->dst == b->dst && a->start == b->start && a->end == b->end,
                  "message %u: %u->%u %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT " against %u->%u %" G_GINT64_FORMAT
                  "..%" G_GINT64_FORMAT " ps",
                  m, a->src, a->dst, (gint64)a->start, (gint64)a->end, b->src, b->dst, (gint64)b->start, (gint64)b->end);
  }
  ck_assert_int_eq(cs_sim_end_time(r[0].sim), cs_sim_end_time(r[1].sim));
  ck_assert_uint_le(cs_sim_events(r[0].sim), cs_sim_events(r[1].sim)); /* (no empty events for replaced plans) */
  sim_done(&r[0]);
  sim_done(&r[1]);
}

/* Packet spraying (routing: ecmp-packet): a message's bits go over its 8
 * paths, drawn as the packet network draws them, an eighth per path.  w0
 * sends 10 MB to w1 over two equal-cost paths, through m1 (10 Gbps) or m2
 * (1 Gbps).  The eighths that drew m2 share its 1 Gbps, those that drew
 * m1 take what is left of w0's link (they are never the slower: j eighths
 * on m2 get 1 Gbps / j each, the others 9 Gbps / (8 - j), more for any j
 * >= 1), so the message ends when m2 has carried its j eighths: j x 1.25
 * MB x 8 / 1 Gbps, plus a tail of microseconds (the latencies and
 * store-and-forward).  Seed 1 draws m2 for 3 eighths: 30 ms; seed 2 for
 * 6: 60 ms.  Under `ecmp` the whole message takes one path. */
static const char *sprayed = "nodes: [{name: w0, role: host}, {name: w1, role: host}, {name: s1, role: switch},\n"
                             "        {name: s2, role: switch}, {name: m1, role: switch}, {name: m2, role: switch}]\n"
                             "links:\n"
                             "  - {a: w0, b: s1}\n"
                             "  - {a: s1, b: m1}\n"
                             "  - {a: s1, b: m2, bandwidth: 1Gbps}\n"
                             "  - {a: m1, b: s2}\n"
                             "  - {a: m2, b: s2}\n"
                             "  - {a: s2, b: w1}\n"
                             "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                             "transport: {protocol: fixed, window: 100000pkt, mtu: 1000B, header: 0B, ack: 1B}\n"
                             "flows: [{src: w0, dst: w1, size: 10MB}]\n";

START_TEST(test_spraying) {
  const char *seeds[] = {"seed=1", "seed=2"};
  int want_j[] = {3, 6};
  for (int i = 0; i < 2; i++) {
    const char *sets[] = {"routing=ecmp-packet", seeds[i], NULL};
    Run r = run(sprayed, "flow", sets);
    CsFabric *f = cs_sim_fabric(r.sim);
    uint64_t via_m1 = cs_fabric_link_stats(f, 1, 0).bytes, via_m2 = cs_fabric_link_stats(f, 2, 0).bytes;
    ck_assert_uint_eq(via_m1 + via_m2, 10000000);
    ck_assert_uint_eq(via_m2, (uint64_t)want_j[i] * 1250000);
    double want = (double)via_m2 * 8 / 1e9;
    ck_assert_msg(end_s(&r, 0) >= want && end_s(&r, 0) <= want + 20e-6, "%s: ends at %.9f s, %u eighths on m2: %.9f s",
                  seeds[i], end_s(&r, 0), want_j[i], want);
    done(&r);
    /* m2 loses every packet: its eighths go to m1 (the packet network
     * sends what it loses there again on another path), and the message
     * is delivered as if m1 were its only path: 10 MB at 10 Gbps */
    const char *dead[] = {"routing=ecmp-packet", seeds[i], "links_override=[{match: s1-m2, loss: 1}]", NULL};
    Run x = run(sprayed, "flow", dead);
    f = cs_sim_fabric(x.sim);
    ck_assert_uint_eq(cs_fabric_link_stats(f, 1, 0).bytes, 10000000);
    ck_assert_double_eq_tol(end_s(&x, 0), 8e-3, 20e-6);
    ck_assert_uint_eq(cs_fabric_message(f, 0)->wire_bytes, 10000000);
    done(&x);
    const char *one[] = {"routing=ecmp", seeds[i], NULL};
    Run e = run(sprayed, "flow", one);
    f = cs_sim_fabric(e.sim);
    via_m2 = cs_fabric_link_stats(f, 2, 0).bytes;
    ck_assert(via_m2 == 0 || via_m2 == 10000000);
    done(&e);
  }
}
END_TEST

/* Messages of a few bytes, whose one ACK (64 B) outweighs their packet
 * (59 B for 1 B): their ACK load is at most a tenth of their rate, so no
 * direction carries more than its capacity.  Found by a random campaign: a
 * run cut by its duration while such a message was under way failed its
 * accounting (a direction at 1.08475e10 bit/s of 1e10: 64 / 59). */
START_TEST(test_tiny_message_acks) {
  const char *y = "topology: {type: star, workers: 5}\n"
                  "transport: {protocol: roce}\n"
                  "flows:\n"
                  "  - {src: w1, dst: w0, size: 1B, start: 1ms}\n"
                  "  - {src: w0, dst: w1, size: 5B, start: 1ms}\n"
                  "  - {src: w2, dst: w0, size: 1B, start: 1ms}\n"
                  "  - {src: w3, dst: w4, size: 2B, start: 1ms}\n"
                  "duration: 1ms\n";
  const char *sets[] = {"fidelity=flow", NULL};
  Run r = sim_load(y, "tiny.yaml", sets);
  sim_go(&r); /* (its accounting at the end, with the four under way) */
  ck_assert_uint_eq(cs_sim_unfinished(r.sim), 4);
  GError *e = NULL;
  ck_assert_msg(cs_fabric_check_accounting(cs_sim_fabric(r.sim), &e), "%s", e ? e->message : "");
  sim_done(&r);
}
END_TEST

START_TEST(test_own_path_order) {
  static const char *const yamls[] = {
      "topology: {type: torus2d, x: 2, y: 4}\n"
      "defaults: {bandwidth: 100Gbps, latency: 2us}\n"
      "transport: {mtu: 1500B, header: 58B, ack: 1B}\n"
      "workload: {params: 2000000, iterations: 3, compute: 1ms, buckets: 256KB, collective: ring,\n"
      "  compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 0s}}}\n"
      "fidelity: flow\noutput: {traces: [summary, messages]}\n",
      "topology: {type: torus2d, x: 2, y: 2}\n"
      "defaults: {bandwidth: 10Gbps, latency: 0us}\n"
      "transport: {mtu: 1000B, header: 0B, ack: 64B}\n"
      "workload: {params: 1M, iterations: 2, compute: 1ms, buckets: 256KB, collective: ring,\n"
      "  compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 0s}}}\n"
      "fidelity: flow\noutput: {traces: [summary, messages]}\n",
      "topology: {type: star, workers: 64}\n"
      "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
      "transport: {mtu: 1000B, header: 0B, ack: 1B}\n"
      "workload: {params: 4M, iterations: 1, compute: 0s, buckets: 0, collective: ring,\n"
      "  compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 0s}}}\n"
      "fidelity: flow\noutput: {traces: [summary, messages]}\n",
      /* a later review's: an inline delivery's callback (w2's last add, 1 ps
       * per element) scheduled a compute end for the very picosecond of a
       * fluid end waiting to be handed over, and ran before it: w2 -> w3
       * and w0 -> w1 took each other's message numbers */
      "fidelity: flow\ntopology: {type: ring, workers: 4}\n"
      "defaults: {bandwidth: 40Gbps, latency: 0s}\n"
      "links_override: [{match: w0-w1, bandwidth: 10Gbps}, {match: w1-w2, latency: 1232800ps}]\n"
      "transport: {protocol: fixed, mtu: 4096B, header: 58B}\n"
      "workload: {collective: allgather, params: 1500, iterations: 3, compute: 0s, buckets: 2000B,\n"
      "  compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 1ps}}}\n",
      /* the same under ECMP, where a message's number picks its path: an
       * iteration took 22 % longer */
      "fidelity: flow\nseed: 3\nrouting: ecmp\n"
      "defaults: {bandwidth: 1000000000000000000, latency: 0s}\n"
      "nodes: [{name: w0, role: worker}, {name: w1, role: worker}, {name: w2, role: worker}, {name: w3, role: worker},\n"
      "  {name: a0, role: switch}, {name: b0, role: switch}, {name: a1, role: switch}, {name: b1, role: switch},\n"
      "  {name: a2, role: switch}, {name: b2, role: switch}, {name: a3, role: switch}, {name: b3, role: switch}]\n"
      "links:\n"
      "  - {a: w0, b: a0, bandwidth: 40Gbps}\n  - {a: w0, b: b0, bandwidth: 10Gbps}\n"
      "  - {a: a0, b: w1}\n  - {a: b0, b: w1}\n"
      "  - {a: w1, b: a1, bandwidth: 40Gbps, latency: 409600ps}\n  - {a: w1, b: b1, bandwidth: 40Gbps, latency: 409600ps}\n"
      "  - {a: a1, b: w2}\n  - {a: b1, b: w2}\n"
      "  - {a: w2, b: a2, bandwidth: 40Gbps}\n  - {a: w2, b: b2, bandwidth: 10Gbps}\n"
      "  - {a: a2, b: w3}\n  - {a: b2, b: w3}\n"
      "  - {a: w3, b: a3, bandwidth: 40Gbps}\n  - {a: w3, b: b3, bandwidth: 10Gbps}\n"
      "  - {a: a3, b: w0}\n  - {a: b3, b: w0}\n"
      "transport: {protocol: fixed, mtu: 4096B, header: 58B}\n"
      "workload: {collective: allgather, params: 1500, iterations: 1, compute: 0s, buckets: 2000B,\n"
      "  compression: {method: none, cost: {encode: 0s, decode: 0s, reduce: 1ps}}}\n",
  };
  own_matches_reference(yamls[_i], _i < 3 ? 100 : 10);
}
END_TEST

/* 8. A refill follows only the directions that bind (gather): here the
 * new flow g meets o on s1 -> s2, which o alone fills to 6 Gbps (its own
 * 6 Gbps link holds it), so g is gathered alone and s1 -> s2 bounds it
 * with o's 6 Gbps taken: 4 Gbps, below o's rate there.  o was bound by
 * that direction after all, and the round is gathered again with it: the
 * max-min shares are 5 and 5 Gbps.  o (10 MB from 0) has sent 6 Mb by g's
 * start at 1 ms and ends at 1 ms + 74 Mb / 5 Gbps = 15.8 ms; g then runs
 * at 10 Gbps for its last 6 Mb, 0.6 ms.  Each then arrives after three
 * latencies and a packet's store-and-forward at its two 10 Gbps hops
 * after the first (4.6 us).  Without the second gathering g ran at 4 Gbps
 * and o at 6 Gbps: o ended at 1 ms + 74 Mb / 6 Gbps. */
static const char *bound = "nodes: [{name: o, role: host}, {name: g, role: host}, {name: p, role: host}, "
                           "{name: q, role: host}, {name: s1, role: switch}, {name: s2, role: switch}]\n"
                           "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                           "links: [{a: o, b: s1, bandwidth: 6Gbps}, {a: g, b: s1}, {a: s1, b: s2}, {a: s2, b: p}, "
                           "{a: s2, b: q}]\n"
                           "transport: {mtu: 1000B, header: 0B, ack: 1B}\n"
                           "flows:\n"
                           "  - {src: o, dst: p, size: 10MB}\n"
                           "  - {src: g, dst: q, size: 10MB, start: 1ms}\n";

START_TEST(test_refill_bound) {
  Run r = run(bound, "flow", NULL);
  double tail = 3e-6 + 2 * 8 * 1000 / 10e9;
  ck_assert_double_eq_tol(end_s(&r, 0), 1e-3 + 74e6 / 5e9 + tail, 1e-9);
  ck_assert_double_eq_tol(end_s(&r, 1), 1e-3 + 74e6 / 5e9 + 6e6 / 10e9 + tail, 1e-9);
  done(&r);
}
END_TEST

/* A run of `yaml` at flow fidelity with checks on (every 1,024 events
 * and at the end): it ends, its messages all sent, and the checks ran. */
static void checked_flow_run(const char *yaml, const char *name, uint32_t messages) {
  const char *sets[] = {"fidelity=flow", "output.traces=[summary]", NULL};
  Run r = sim_load(yaml, name, sets);
  cs_sim_set_checks(r.sim, true);
  sim_go(&r);
  ck_assert_uint_eq(cs_sim_unfinished(r.sim), 0);
  ck_assert_uint_eq(cs_fabric_messages(cs_sim_fabric(r.sim)), messages);
  ck_assert_uint_gt(cs_sim_checks_run(r.sim), 0);
  done(&r);
}

/* 8b. The shares stay max-min where the refills follow only the binding
 * directions: halving-doubling on a k = 8 fat-tree with ECMP, whose
 * collisions join most of a step's 128 flows through directions they do
 * not fill.  With checks on, every event tests every live flow (it runs at
 * its cap, or crosses a full direction where no flow runs faster) and
 * every direction's load; a refill that left out a flow it moves fails
 * it (seen with the second gathering of test_refill_bound turned off). */
START_TEST(test_refill_max_min) {
  checked_flow_run("topology: {type: fat-tree, k: 8, workers: 128}\n"
                   "routing: ecmp\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us}\n"
                   "workload: {params: 6.4M, iterations: 1, buckets: 0, collective: halving-doubling, compute: 1ms}\n",
                   "hd.yaml", 128 * 14);
}
END_TEST

/* 8b'. The fluid ends' entries are compacted once they pass twice those
 * in force, the ghosts' among them (flows that carry what a message
 * delivered early had left).  A ps of 50 workers and 50 servers on a
 * star, 10M fp32: the servers' pulls leave up to some 2,500 ghosts, more
 * than the messages in flight; counted without them, every end placed
 * compacted (3,781 compactions for 639,645 entries put, each a pass over
 * thousands: at 100 x 100 half the run, at 200 x 200 more than ten
 * minutes).  With checks on, each compaction must have dropped more than
 * 1,024 entries (flow_state). */
START_TEST(test_ends_compacted_with_ghosts) {
  checked_flow_run("topology: {type: star, workers: 50, servers: 50}\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "transport: {protocol: reno}\n"
                   "workload: {params: 10M, iterations: 1, compute: 0, collective: ps}\n",
                   "ps50.yaml", 2 * 2 * 50 * 50); /* 40 MB: 2 buckets of 25MB */
}
END_TEST

/* 8b''. Likewise the idle routes kept (8c) are dropped once they pass
 * KEPT_IDLE and the routes held: a ps of 320 workers and 64 servers, 64K
 * fp32, on a k = 12 fat-tree with ECMP holds more than 8,192 routes at
 * once (20,480 pairs), and dropping each time 8,192 fell idle took 3
 * passes over a table mostly held (at 2,048 x 256, a quarter of the
 * run).  With checks on, each drop must take half the table at least. */
START_TEST(test_kept_routes_dropped_by_half) {
  checked_flow_run("topology: {type: fat-tree, k: 12, workers: 320, servers: 64}\n"
                   "routing: ecmp\n"
                   "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"
                   "transport: {protocol: reno}\n"
                   "workload: {params: 64K, iterations: 1, compute: 0, collective: ps}\n",
                   "ps320.yaml", 2 * 320 * 64);
}
END_TEST

/* 8c. ECMP routes are drawn for each message and kept while flows hold
 * them (and a while after), with their shape: a route drawn again for a
 * message of another size gives that size's time.  Messages one after
 * another from w0 on a k = 4 fat-tree with ECMP, to w1 (on its switch:
 * one route, kept as w0's last) and to w15 (another pod: drawn among
 * 16), each alone on the network, last exactly as long as the same
 * message sent alone in a run of its own.  Then, checks on (they count
 * every kept route's holders: flows, and hosts' last routes), messages of
 * 10 KB on a k = 8 fat-tree: 5,000 between pods with packet spraying, one
 * a microsecond (8 routes each), and 24,000 with ECMP, every other one to
 * a host on the sender's switch (its last route), the others between
 * pods, one each 0.5 us: both pass the 8,192 idle routes kept, so the
 * idle ones are dropped while some ten messages are in flight.  A drop
 * that takes held routes fails the first (a crash), a count one too high
 * where a last route is taken again fails the second. */
START_TEST(test_kept_routes) {
  static const char *const sizes[] = {"1MB", "10KB", "1MB", "3000B", "250KB", "1MB"};
  const char *topo = "topology: {type: fat-tree, k: 4}\nrouting: ecmp\ndefaults: {bandwidth: 10Gbps, latency: 1us}\n";
  for (int far = 0; far < 2; far++) {
    GString *y = g_string_new(topo);
    g_string_append(y, "flows:\n");
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
      g_string_append_printf(y, "  - {src: w0, dst: %s, size: %s, start: %zums}\n", far ? "w15" : "w1", sizes[i], 10 * i);
    Run r = run(y->str, "flow", NULL);
    for (uint32_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
      const CsMessageStats *st = cs_fabric_message(cs_sim_fabric(r.sim), i);
      ck_assert(st->delivered);
      g_autofree char *one = g_strdup_printf("%sflows: [{src: w0, dst: %s, size: %s}]\n", topo, far ? "w15" : "w1", sizes[i]);
      Run a = run(one, "flow", NULL);
      ck_assert_msg(st->end - st->start == cs_fabric_message(cs_sim_fabric(a.sim), 0)->end,
                    "%s to %s: %.9f s, alone %.9f s", sizes[i], far ? "w15" : "w1", (double)(st->end - st->start) * 1e-12,
                    end_s(&a, 0));
      done(&a);
    }
    done(&r);
    g_string_free(y, TRUE);
  }
  for (int spray = 1; spray >= 0; spray--) {
    GString *y = g_string_new(spray ? "topology: {type: fat-tree, k: 8}\nrouting: ecmp-packet\nflows:\n"
                                    : "topology: {type: fat-tree, k: 8}\nrouting: ecmp\nflows:\n");
    uint32_t count = spray ? 5000 : 24000;
    for (uint32_t i = 0; i < count; i++) {
      uint32_t a = i % 128, other_pod = (a + 64 + i / 128 % 64) % 128, same_switch = a / 4 * 4 + (a + 1) % 4;
      g_string_append_printf(y, "  - {src: w%u, dst: w%u, size: 10KB, start: %uns}\n", a,
                             !spray && i % 2 ? same_switch : other_pod, spray ? 1000 * i : 500 * i);
    }
    const char *sets[] = {"fidelity=flow", "output.traces=[summary]", NULL};
    Run h = sim_load(y->str, "many.yaml", sets);
    g_string_free(y, TRUE);
    cs_sim_set_checks(h.sim, true);
    sim_go(&h);
    ck_assert_uint_eq(cs_sim_unfinished(h.sim), 0);
    ck_assert_uint_eq(cs_fabric_messages(cs_sim_fabric(h.sim)), count);
    done(&h);
  }
}
END_TEST

static Suite *flow_suite(void) {
  Suite *s = suite_create("flow");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_max_min_by_hand);
  tcase_add_test(tc, test_max_min_ties);
  tcase_add_test(tc, test_bytes_carried);
  tcase_add_test(tc, test_star_ack_bytes);
  tcase_add_test(tc, test_ack_coupling);
  tcase_add_test(tc, test_ring_acks_ahead);
  tcase_add_test(tc, test_long_route);
  tcase_add_test(tc, test_collectives_match);
  tcase_add_test(tc, test_burst_acks);
  tcase_add_test(tc, test_window_acks);
  tcase_add_test(tc, test_window_acks_off_star);
  tcase_add_test(tc, test_trains);
  tcase_add_test(tc, test_link_acks);
  tcase_add_test(tc, test_nic_interleave);
  tcase_add_test(tc, test_gpu_burst_acks);
  tcase_add_test(tc, test_incast);
  tcase_add_test(tc, test_examples_incast_dumbbell);
  tcase_add_test(tc, test_mathis_cap);
  tcase_add_test(tc, test_reports);
  tcase_add_test(tc, test_background_alone);
  tcase_add_test(tc, test_unfinished_wire_bytes);
  tcase_add_test(tc, test_lone_message_time);
  tcase_add_test(tc, test_lone_message_cut_through);
  tcase_add_test(tc, test_ring_1024);
  tcase_add_test(tc, test_refill_inside);
  tcase_add_test(tc, test_retire);
  tcase_add_test(tc, test_delivery_order);
  tcase_add_test(tc, test_tie_order);
  tcase_add_test(tc, test_many_changes);
  tcase_add_test(tc, test_ends_out_of_order);
  tcase_add_test(tc, test_tiny_message_acks);
  tcase_add_test(tc, test_spraying);
  tcase_add_loop_test(tc, test_own_path_order, 0, 5);
  tcase_add_test(tc, test_refill_bound);
  tcase_add_test(tc, test_refill_max_min);
  tcase_add_test(tc, test_ends_compacted_with_ghosts);
  tcase_add_test(tc, test_kept_routes_dropped_by_half);
  tcase_add_test(tc, test_kept_routes);
  tcase_add_test(tc, test_slow_start);
  tcase_add_test(tc, test_standing_queue);
  tcase_add_test(tc, test_standing_refills);
  tcase_add_test(tc, test_host_queue_blocks);
  tcase_add_test(tc, test_standing_wait);
  tcase_add_test(tc, test_connection_in_turn);
  tcase_add_test(tc, test_host_queue_in_turn);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(flow_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
