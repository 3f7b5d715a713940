/* test_net.c - the packet network against formulas: store-and-forward
 * timing, M/D/1 queueing, drop-tail overflow, the Mathis throughput of
 * reno under loss, fairness, DCTCP's queue, Gilbert-Elliott loss, packet
 * accounting, determinism, a dead link that must end the run, and a
 * machine's NIC as its GPUs' host queue. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/loss.h"
#include "commsim/sim.h"
#include "simutil.h"

static Run run(const char *yaml) {
  Run r = sim_load(yaml, "net.yaml", NULL);
  sim_go(&r);
  return r;
}

static void done(Run *r) { sim_done(r); }

static const CsMessageStats *msg(Run *r, uint32_t i) { return cs_net_message(cs_sim_net(r->sim), i); }

/* The link whose ends are named a and b; *dir set to the a->b direction. */
static uint32_t find_link(Run *r, const char *a, const char *b, int *dir) {
  const CsTopology *t = cs_sim_topology(r->sim);
  int64_t na = cs_topology_find(t, a), nb = cs_topology_find(t, b);
  for (uint32_t l = 0; l < t->n_links; l++) {
    if (t->links[l].a == na && t->links[l].b == nb) return *dir = 0, l;
    if (t->links[l].a == nb && t->links[l].b == na) return *dir = 1, l;
  }
  ck_abort_msg("no link %s-%s", a, b);
  return 0;
}

/* 1. N full packets over h store-and-forward hops of bandwidth B and
 * latency L, window large, no loss: the last byte arrives at
 * h*L + h*S/B + (N-1)*S/B, to the picosecond. */
#define STAR_1000_PACKETS                                                      \
  "topology: {type: star, workers: 2}\n"                                       \
  "transport: {protocol: fixed, window: 100000pkt, mtu: 1500B, header: 58B}\n" \
  "flows: [{src: w0, dst: w1, size: 1442000B}]\n"

START_TEST(test_store_and_forward_exact) {
  /* star: h = 2, B = 10 Gbps, L = 1 us, S = 1500 B -> S/B = 1.2 us;
   * N = 1000: 2 + 2.4 + 999 * 1.2 = 1203.2 us */
  Run r = run(STAR_1000_PACKETS);
  ck_assert(msg(&r, 0)->delivered);
  ck_assert_int_eq(msg(&r, 0)->end, 1203200000LL);
  ck_assert_uint_eq(msg(&r, 0)->packets, 1000);
  ck_assert_uint_eq(msg(&r, 0)->wire_bytes, 1500000);
  done(&r);
}
END_TEST

/* w0 -10G,1us- s1 -1G,2us- s2 -10G,1us- w1, N = 100 packets of 1500 B */
#define BOTTLENECK_PATH                                                                                            \
  "nodes:\n  - {name: w0, role: worker}\n  - {name: w1, role: worker}\n"                                           \
  "  - {name: s1, role: switch}\n  - {name: s2, role: switch}\n"                                                  \
  "links:\n  - {a: w0, b: s1}\n  - {a: s1, b: s2, bandwidth: 1Gbps, latency: 2us, buffer: 1000pkt}\n"            \
  "  - {a: s2, b: w1}\n"                                                                                           \
  "transport: {protocol: fixed, window: 100000pkt}\n"                                                             \
  "flows: [{src: w0, dst: w1, size: 144200B}]\n"

START_TEST(test_store_and_forward_bottleneck) {
  /* sum of L (4 us) + S/10G + S/1G + S/10G (1.2 + 12 + 1.2 us)
   * + (N-1) * S/1G (99 * 12 us) = 1206.4 us */
  Run r = run(BOTTLENECK_PATH);
  ck_assert_int_eq(msg(&r, 0)->end, 1206400000LL);
  done(&r);
}
END_TEST

/* switching: cut-through.  The same N = 1000 packets over the star: the
 * switch starts each once its first 64 bytes are in (51.2 ns at 10 Gbps),
 * so the second hop adds 51.2 ns instead of 1.2 us:
 * 2 + 1.2 + 0.0512 + 999 * 1.2 = 1202.0512 us. */
START_TEST(test_cut_through_exact) {
  Run r = run("switching: cut-through\n" STAR_1000_PACKETS);
  ck_assert(msg(&r, 0)->delivered);
  ck_assert_int_eq(msg(&r, 0)->end, 1202051200LL);
  done(&r);
}
END_TEST

/* Cut through across rates: w0 -10G- s1 -1G- s2 -10G- w1 as in
 * test_store_and_forward_bottleneck (1206.4 us stored and forwarded).
 * s1 starts a packet on its slower egress 51.2 ns after its first bit
 * came in (saving 1.2 - 0.0512 us); s2's egress is faster than its
 * ingress, so it starts a packet 1.2 us before its last bit is in, not
 * sooner (it would run dry): it ends as that bit arrives (saving 1.2 us).
 * 1206.4 - 1.1488 - 1.2 = 1204.0512 us. */
START_TEST(test_cut_through_rates) {
  Run r = run("switching: cut-through\n" BOTTLENECK_PATH);
  ck_assert_int_eq(msg(&r, 0)->end, 1204051200LL);
  done(&r);
}
END_TEST

/* Cut-through is the switches': a ring's hosts that forward still store
 * and forward.  Ring of 4, w0 -> w2 over w1 (two hops, the middle a
 * host), 10 packets of 1500 B at 10 Gbps, 1 us: 2 + 2 * 1.2 + 9 * 1.2 =
 * 15.2 us either way. */
START_TEST(test_cut_through_hosts_store) {
  for (int cut = 0; cut < 2; cut++) {
    Run r = run(cut ? "topology: {type: ring, workers: 4}\nswitching: cut-through\n"
                      "transport: {protocol: fixed, window: 1000pkt, mtu: 1500B, header: 58B}\n"
                      "flows: [{src: w0, dst: w2, size: 14420B}]\n"
                    : "topology: {type: ring, workers: 4}\n"
                      "transport: {protocol: fixed, window: 1000pkt, mtu: 1500B, header: 58B}\n"
                      "flows: [{src: w0, dst: w2, size: 14420B}]\n");
    ck_assert_int_eq(msg(&r, 0)->end, 15200000LL);
    done(&r);
  }
}
END_TEST

/* A link whose per-packet time is not a whole number of picoseconds keeps
 * exact time: 1000 packets of 1500 B at 7 Gbps take ceil(1000 * 12000 bits
 * / 7e9 s) = 1714285715 ps on the first link, not 1000 * round(S/B). */
START_TEST(test_no_drift) {
  Run r = run("defaults: {bandwidth: 7Gbps, latency: 0}\n"
              "topology: {type: ring, workers: 2}\n"
              "transport: {protocol: fixed, window: 100000pkt}\n"
              "flows: [{src: w0, dst: w1, size: 1442000B}]\n");
  ck_assert_int_eq(msg(&r, 0)->end, 1714285715LL);
  done(&r);
}
END_TEST

/* 2. M/D/1: Poisson arrivals of 1500 B packets into a 10 Gbps link at
 * load rho: mean wait rho / (2 mu (1 - rho)) = rho * S/B / (2 (1 - rho)).
 * Mean one-way delay = wait + S/B + L, over about 1M packets. */
static void md1(double rho, const char *rate) {
  g_autofree char *y = g_strdup_printf("defaults: {latency: 1us}\n"
                                       "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
                                       "links: [{a: a, b: b}]\n"
                                       "duration: %s\n"
                                       "background: [{src: a, dst: b, pattern: poisson, rate: %s, size: 1500B}]\n",
                                       rho < 0.6 ? "2.4s" : "1.5s", rate);
  Run r = run(y);
  CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
  ck_assert_uint_gt(t.bg.delivered, 900000);
  double sb = 1.2e-6, wait = t.bg_delay_sum_s / (double)t.bg.delivered - sb - 1e-6;
  double want = rho * sb / (2 * (1 - rho));
  ck_assert_msg(fabs(wait - want) <= 0.03 * want, "rho %.1f: wait %.4g s, M/D/1 %.4g s", rho, wait, want);
  done(&r);
}

START_TEST(test_md1_half) { md1(0.5, "5Gbps"); }
END_TEST
START_TEST(test_md1_080) { md1(0.8, "8Gbps"); }
END_TEST

/* 3a. Loss both ways: an ACK carries its receiver's SACK block (the run of
 * packets just below the one it answers), so a lost ACK hides nothing
 * the next one of the run says: every retransmission repairs a lost data
 * packet.  (With one packet a block, 20 MB at 1 % loss sent 331-449
 * retransmissions for 313-316 lost packets: a packet whose ACK was lost
 * was called lost too.)  BBR's rounds may probe a few more. */
START_TEST(test_ack_loss_sack_block) {
  static const char *const ccs[] = {"reno", "cubic", "bbr"}, *const recs[] = {"sack", "rack"};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) {
      g_autofree char *cc = g_strdup_printf("transport.protocol=%s", ccs[i]);
      g_autofree char *rec = g_strdup_printf("transport.recovery=%s", recs[j]);
      const char *sets[] = {cc, rec, NULL};
      Run r = sim_load("defaults: {bandwidth: 10Gbps, latency: 10us, loss: 0.01}\n"
                       "topology: {type: star, workers: 2}\n"
                       "flows: [{src: w0, dst: w1, size: 20MB}]\n",
                       "net.yaml", sets);
      sim_go(&r);
      CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
      ck_assert(msg(&r, 0)->delivered);
      ck_assert_uint_gt(t.ack.lost, 100); /* ACKs were lost (1 % of about 14,000) */
      if (i < 2)
        ck_assert_msg(t.retransmissions == t.data.lost, "%s %s: %" G_GUINT64_FORMAT " retransmissions, %" G_GUINT64_FORMAT " lost",
                      ccs[i], recs[j], (guint64)t.retransmissions, (guint64)t.data.lost);
      else
        ck_assert_msg(t.retransmissions >= t.data.lost && t.retransmissions <= t.data.lost * 105 / 100,
                      "%s %s: %" G_GUINT64_FORMAT " retransmissions, %" G_GUINT64_FORMAT " lost", ccs[i], recs[j],
                      (guint64)t.retransmissions, (guint64)t.data.lost);
      done(&r);
    }
}
END_TEST

/* 3. Two senders at line rate into one switch port with a 64-packet
 * buffer: drops occur, both flows complete, and every retransmission
 * repairs a drop or a loss (the ACKs' SACK blocks leave no guesswork). */
START_TEST(test_droptail_overflow) {
  Run r = run("defaults: {buffer: 64pkt}\n"
              "topology: {type: star, workers: 3}\n"
              "flows: [{src: w0, dst: w2, size: 20MB}, {src: w1, dst: w2, size: 20MB}]\n");
  CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
  ck_assert(msg(&r, 0)->delivered && msg(&r, 1)->delivered);
  ck_assert_uint_gt(t.data.dropped, 0);
  ck_assert_uint_eq(t.retransmissions, t.data.dropped + t.data.lost);
  int dir;
  uint32_t l = find_link(&r, "sw0", "w2", &dir);
  CsLinkStats st = cs_net_link_stats(cs_sim_net(r.sim), l, dir);
  ck_assert_uint_eq(st.drops, t.data.dropped); /* all at that port */
  ck_assert_uint_le(st.queue_max, 64 * 1500);
  done(&r);
}
END_TEST

/* 4. Reno over a path with Bernoulli loss p: long-run throughput within
 * 30 % of Mathis et al. (1997): (MSS / RTT) * sqrt(3 / (2 p)).  The
 * path's bandwidth-delay product (10 Gbps * 103 us = 86 packets) exceeds
 * the windows loss allows (about 12 and 39 packets), so loss, not
 * bandwidth, limits the flow; min_rto (1 ms) is well above the RTT, as in
 * a datacentre, so recovery does not time out spuriously. */
static void mathis(double p, const char *size) {
  g_autofree char *y = g_strdup_printf(
      "defaults: {latency: 25us}\n"
      "nodes: [{name: a, role: host}, {name: b, role: host}, {name: s, role: switch}]\n"
      "links: [{a: a, b: s}, {a: s, b: b, loss: %g}]\n"
      "transport: {protocol: reno}\n"
      "flows: [{src: a, dst: b, size: %s}]\n",
      p, size);
  Run r = run(y);
  const CsMessageStats *m = msg(&r, 0);
  ck_assert(m->delivered);
  double mss = 1442 * 8.0;
  /* RTT: 4 latencies + data serialization on 2 links + ACK serialization on 2 */
  double rtt = 4 * 25e-6 + 2 * 1500 * 8 / 1e10 + 2 * 64 * 8 / 1e10;
  double want = mss / rtt * sqrt(3.0 / (2.0 * p));
  double got = (double)m->payload * 8.0 / ((double)(m->end - m->start) * 1e-12);
  ck_assert_msg(fabs(got - want) <= 0.3 * want, "p %g: %.4g bit/s, Mathis %.4g bit/s", p, got, want);
  done(&r);
}

START_TEST(test_mathis_1e3) { mathis(1e-3, "500MB"); }
END_TEST
START_TEST(test_mathis_1e2) { mathis(1e-2, "100MB"); }
END_TEST

/* 5. Four reno flows through a dumbbell bottleneck: the bottleneck busy at
 * least 90 % of the time and Jain's index of their goodputs at least 0.9. */
START_TEST(test_fairness) {
  Run r = run("defaults: {bandwidth: 40Gbps}\n"
              "topology: {type: dumbbell, workers: 8, bottleneck: {bandwidth: 10Gbps, buffer: 256KB}}\n"
              "flows: [{src: w0, dst: w4, size: 100MB}, {src: w1, dst: w5, size: 100MB},\n"
              "        {src: w2, dst: w6, size: 100MB}, {src: w3, dst: w7, size: 100MB}]\n");
  double sum = 0, sumsq = 0;
  CsTime first_end = CS_TIME_MAX;
  for (int i = 0; i < 4; i++) {
    const CsMessageStats *m = msg(&r, (uint32_t)i);
    ck_assert(m->delivered);
    double x = (double)m->payload / (double)(m->end - m->start);
    sum += x, sumsq += x * x;
    if (m->end < first_end) first_end = m->end;
  }
  double jain = sum * sum / (4 * sumsq);
  ck_assert_msg(jain >= 0.9, "Jain's index %.3f", jain);
  int dir;
  uint32_t l = find_link(&r, "sw0", "sw1", &dir);
  CsLinkStats st = cs_net_link_stats(cs_sim_net(r.sim), l, dir);
  double util = (double)st.busy / (double)cs_sim_end_time(r.sim);
  ck_assert_msg(util >= 0.9, "bottleneck utilization %.3f", util);
  done(&r);
}
END_TEST

/* 6. DCTCP keeps the bottleneck's mean queue near the marking threshold K
 * (within [K/2, 2K]); reno through the same queue (it does not negotiate
 * ECN, so the port only drops) fills the buffer. */
static double bottleneck_queue(const char *proto, uint64_t *drops, uint64_t *max) {
  g_autofree char *y = g_strdup_printf(
      "defaults: {bandwidth: 40Gbps, latency: 5us}\n"
      "topology:\n  type: dumbbell\n  workers: 4\n"
      "  bottleneck: {bandwidth: 10Gbps, buffer: 512KB, queue: ecn, ecn_threshold: 65pkt}\n"
      "transport: {protocol: %s}\n"
      "flows: [{src: w0, dst: w2, size: 200MB}, {src: w1, dst: w3, size: 200MB}]\n",
      proto);
  Run r = run(y);
  int dir;
  uint32_t l = find_link(&r, "sw0", "sw1", &dir);
  CsLinkStats st = cs_net_link_stats(cs_sim_net(r.sim), l, dir);
  *drops = st.drops;
  *max = st.queue_max;
  double mean = st.queue_integral / (double)cs_sim_end_time(r.sim);
  done(&r);
  return mean;
}

START_TEST(test_dctcp_queue) {
  double K = 65 * 1500;
  uint64_t drops, max;
  double q = bottleneck_queue("dctcp", &drops, &max);
  ck_assert_msg(q >= 0.5 * K && q <= 2 * K, "dctcp mean queue %.0f B, K = %.0f B", q, K);
  ck_assert_uint_eq(drops, 0);
  double qr = bottleneck_queue("reno", &drops, &max);
  ck_assert_msg(qr > 2 * K, "reno mean queue %.0f B", qr);
  ck_assert_uint_gt(drops, 0);
  ck_assert_uint_ge(max, 512000 - 1500); /* the buffer filled */
}
END_TEST

/* RED drops early: the queue never reaches the 512KB buffer and its mean
 * stays below RED's max threshold (90KB), yet packets are dropped. */
START_TEST(test_red_drops_early) {
  Run r = run("defaults: {bandwidth: 40Gbps, latency: 5us}\n"
              "topology:\n  type: dumbbell\n  workers: 4\n"
              "  bottleneck: {bandwidth: 10Gbps, buffer: 512KB, queue: red,\n"
              "               red: {min: 30KB, max: 90KB, max_p: 0.1, weight: 0.002}}\n"
              "flows: [{src: w0, dst: w2, size: 100MB}, {src: w1, dst: w3, size: 100MB}]\n");
  int dir;
  uint32_t l = find_link(&r, "sw0", "sw1", &dir);
  CsLinkStats st = cs_net_link_stats(cs_sim_net(r.sim), l, dir);
  double mean = st.queue_integral / (double)cs_sim_end_time(r.sim);
  ck_assert_uint_gt(st.drops, 0);
  ck_assert_uint_lt(st.queue_max, 512000 - 1500); /* never full: the drops were early */
  ck_assert_msg(mean < 90000, "mean queue %.0f B", mean);
  ck_assert(msg(&r, 0)->delivered && msg(&r, 1)->delivered);
  done(&r);
}
END_TEST

/* 7. Gilbert-Elliott: the long-run loss rate is
 * p/(p+r) * loss_bad + r/(p+r) * loss_good, within 5 %. */
START_TEST(test_gilbert_elliott) {
  CsLossSpec spec = {CS_LOSS_GILBERT, 0, 0.01, 0.1, 0.001, 0.5};
  double want = 0.01 / 0.11 * 0.5 + 0.1 / 0.11 * 0.001;
  ck_assert_double_eq_tol(cs_loss_mean(&spec), want, 1e-15);
  CsLossState st;
  cs_loss_init(&st, &spec, 1, 2);
  uint64_t lost = 0, n = 10000000;
  for (uint64_t i = 0; i < n; i++) lost += cs_loss_next(&st);
  double rate = (double)lost / (double)n;
  ck_assert_msg(fabs(rate - want) <= 0.05 * want, "GE loss %.5f, stationary %.5f", rate, want);
  /* and through the network: a cbr stream over a GE link */
  Run r = run("nodes: [{name: a, role: host}, {name: b, role: host}]\n"
              "links: [{a: a, b: b, loss: {model: gilbert-elliott, p: 0.01, r: 0.1, loss_good: 0.001, loss_bad: 0.5}}]\n"
              "duration: 0.6s\n"
              "background: [{src: a, dst: b, pattern: cbr, rate: 10Gbps, size: 1500B}]\n");
  CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
  double net_rate = (double)t.bg.lost / (double)(t.bg.sent - t.bg.in_flight);
  ck_assert_uint_gt(t.bg.sent, 490000);
  ck_assert_msg(fabs(net_rate - want) <= 0.1 * want, "network GE loss %.5f", net_rate);
  done(&r);
}
END_TEST

/* An onoff source's mean rate is rate x on / (on + off), however the
 * bursts compare with a packet time (12 us at 1 Gbps): bursts of 100 us,
 * of 1 us (a packet spans 12 of them), of 10 ps (1.2 million: drawn as
 * counts) and of 1 ps with no silence (the rate itself).  Each burst used
 * to begin with a whole packet: 1 us bursts sent 1.22 Gbps instead of
 * 0.1, and 1 ps bursts with no silence a packet per picosecond. */
START_TEST(test_onoff_rate) {
  const struct {
    const char *on, *off;
    double share;
  } c[] = {{"100us", "200us", 1.0 / 3}, {"1us", "9us", 0.1}, {"10ps", "90ps", 0.1}, {"1ps", "0s", 1.0}};
  for (size_t i = 0; i < G_N_ELEMENTS(c); i++) {
    g_autofree char *y = g_strdup_printf("topology: {type: star, workers: 2}\nduration: 0.5s\n"
                                         "background: [{src: w0, dst: w1, pattern: onoff, rate: 1Gbps, on: %s, off: %s, "
                                         "size: 1500B}]\n",
                                         c[i].on, c[i].off);
    Run r = run(y);
    CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
    double want = 1e9 * c[i].share * 0.5 / (1500 * 8);
    ck_assert_msg(fabs((double)t.bg.sent / want - 1) <= 0.05, "on %s off %s: %lu packets, want %.0f", c[i].on, c[i].off,
                  (unsigned long)t.bg.sent, want);
    done(&r);
  }
}
END_TEST

/* 8. Same scenario, same seed: identical per-flow results; another seed:
 * different losses. */
static void flow_results(const char *seed, CsTime *ends, uint32_t *retx) {
  g_autofree char *y = g_strdup_printf(
      "seed: %s\n"
      "defaults: {loss: 0.001}\n"
      "topology: {type: dumbbell, workers: 4, bottleneck: {bandwidth: 10Gbps, buffer: 64pkt}}\n"
      "flows: [{src: w0, dst: w2, size: 10MB}, {src: w1, dst: w3, size: 10MB, start: 10us}]\n"
      "background: [{src: w0, dst: w3, pattern: onoff, rate: 5Gbps, on: 100us, off: 200us}]\n",
      seed);
  Run r = run(y);
  for (int i = 0; i < 2; i++) {
    ends[i] = msg(&r, (uint32_t)i)->end;
    retx[i] = msg(&r, (uint32_t)i)->retransmissions;
  }
  done(&r);
}

START_TEST(test_deterministic) {
  CsTime a[2], b[2], c[2];
  uint32_t ra[2], rb[2], rc[2];
  flow_results("5", a, ra);
  flow_results("5", b, rb);
  flow_results("6", c, rc);
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(a[i], b[i]);
    ck_assert_uint_eq(ra[i], rb[i]);
  }
  ck_assert(a[0] != c[0] || a[1] != c[1]);
}
END_TEST

/* A link that loses every packet: the message is abandoned at its
 * max_timeouts-th consecutive timeout and the run ends.  With an RTO of
 * 1 ms doubling, timeouts fall at 1, 3 and 7 ms: the 3rd abandons it. */
START_TEST(test_dead_link_ends) {
  Run r = run("nodes: [{name: a, role: worker}, {name: b, role: worker}]\n"
              "links: [{a: a, b: b, loss: 1}]\n"
              "transport: {max_timeouts: 3, min_rto: 1ms, initial_rto: 1ms}\n"
              "flows: [{src: a, dst: b, size: 1MB}]\n");
  const CsMessageStats *m = msg(&r, 0);
  ck_assert(m->failed && !m->delivered);
  ck_assert_uint_eq(m->timeouts, 3);
  ck_assert_int_eq(m->end, 7 * CS_MS);
  ck_assert_uint_eq(cs_sim_failed(r.sim), 1);
  CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
  ck_assert_uint_eq(t.data.lost, t.data.sent); /* every packet lost, and accounted */
  done(&r);
}
END_TEST

/* Memory follows the packets in flight, not the packets sent. */
START_TEST(test_pool_bounded) {
  Run r = run("topology: {type: star, workers: 2}\n"
              "flows: [{src: w0, dst: w1, size: 100MB}]\n");
  CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
  ck_assert_uint_gt(t.data.sent, 69000); /* 100 MB / 1442 B */
  ck_assert_uint_le(t.pool_packets, 8192);
  ck_assert_uint_eq(t.data.in_flight + t.ack.in_flight, 0);
  done(&r);
}
END_TEST

/* Message slots follow the messages in flight, not the messages sent: a
 * ring of 8 workers over 20 iterations with 1 % loss on every link (stale
 * duplicates and late ACKs name done messages) and delayed ACKs (a held
 * ACK names its message too).  Forgetting finished messages (no
 * messages.csv) changes no figure of the summary. */
START_TEST(test_message_slots_reused) {
  const char *yaml = "topology: {type: star, workers: 8}\n"
                     "defaults: {loss: 0.01}\n"
                     "transport: {delayed_ack: 2}\n"
                     "workload: {params: 1M, iterations: 20, warmup: 1, compute: 1ms, collective: ring}\n"
                     "output: {traces: [summary]}\n";
  const char *with_messages[] = {"output.traces=[summary,messages]", NULL};
  Run a = sim_load(yaml, "net.yaml", NULL), b = sim_load(yaml, "net.yaml", with_messages);
  sim_go(&a);
  sim_go(&b);
  CsNet *na = cs_sim_net(a.sim), *nb = cs_sim_net(b.sim);
  uint32_t sent = cs_net_messages(na);
  ck_assert_uint_eq(sent, cs_net_messages(nb));
  ck_assert_uint_ge(sent, 20 * 8 * 14); /* 2 (P - 1) messages per worker and iteration, per bucket */
  ck_assert_uint_gt(cs_net_totals(na).retransmissions, 0);
  /* every message is in flight for one step of its bucket's collective */
  ck_assert_msg(cs_net_message_slots(na) * 20 < sent, "%u slots for %u messages", cs_net_message_slots(na), sent);
  ck_assert_uint_eq(cs_net_message_slots(na), cs_net_message_slots(nb));
  ck_assert_uint_eq(cs_net_first_message(na), sent); /* all forgotten */
  ck_assert_uint_eq(cs_net_first_message(nb), 0);
  const CsSummary *x = cs_sim_summary(a.sim), *y = cs_sim_summary(b.sim);
  ck_assert_double_eq(x->iter_mean_s, y->iter_mean_s);
  ck_assert_double_eq(x->wire_bytes_per_worker, y->wire_bytes_per_worker);
  ck_assert_uint_eq(x->retransmissions, y->retransmissions);
  GError *e = NULL;
  ck_assert_msg(cs_net_check_accounting(na, &e), "%s", e ? e->message : "");
  sim_done(&a);
  sim_done(&b);
}
END_TEST

/* The engine's calendar (past 16 pending events: here some 900 pipes
 * and timers) changes no figure: a ring of 300 workers at 0.1 % loss
 * (retransmission timers, their cancels, full host queues) for 1 ms,
 * with the calendar and with every event in the heap: the same events,
 * message by message, and the same totals. */
START_TEST(test_calendar_same_run) {
  const char *yaml = "topology: {type: star, workers: 300}\n"
                     "defaults: {loss: 0.001}\n"
                     "workload: {params: 25M, iterations: 1, compute: 0s, buckets: 0, collective: ring}\n"
                     "duration: 1ms\n"
                     "output: {traces: [summary, messages]}\n";
  Run a = sim_load(yaml, "net.yaml", NULL), b = sim_load(yaml, "net.yaml", NULL);
  cs_engine_set_calendar(cs_sim_engine(b.sim), false);
  sim_go(&a);
  sim_go(&b);
  ck_assert_uint_ge(cs_engine_calendar_starts(cs_sim_engine(a.sim)), 1);
  ck_assert_uint_eq(cs_engine_calendar_starts(cs_sim_engine(b.sim)), 0);
  ck_assert_uint_gt(cs_sim_events(a.sim), 500000); /* 769,296 */
  ck_assert_uint_eq(cs_sim_events(a.sim), cs_sim_events(b.sim));
  CsNet *na = cs_sim_net(a.sim), *nb = cs_sim_net(b.sim);
  uint32_t n = cs_net_messages(na);
  ck_assert_uint_eq(n, cs_net_messages(nb));
  ck_assert_uint_ge(n, 300);
  for (uint32_t i = 0; i < n; i++) {
    const CsMessageStats *x = cs_net_message(na, i), *y = cs_net_message(nb, i);
    ck_assert_int_eq(x->start, y->start);
    ck_assert_int_eq(x->end, y->end);
    ck_assert_uint_eq(x->wire_bytes, y->wire_bytes);
    ck_assert_uint_eq(x->retransmissions, y->retransmissions);
    ck_assert_uint_eq(x->timeouts, y->timeouts);
  }
  CsNetTotals ta = cs_net_totals(na), tb = cs_net_totals(nb);
  ck_assert_uint_gt(ta.retransmissions, 0);
  ck_assert_uint_eq(ta.retransmissions, tb.retransmissions);
  ck_assert_uint_eq(ta.timeouts, tb.timeouts);
  ck_assert_uint_eq(ta.hops, tb.hops);
  ck_assert_uint_eq(ta.data.sent, tb.data.sent);
  ck_assert_uint_eq(ta.data.delivered, tb.data.delivered);
  ck_assert_uint_eq(ta.data.lost, tb.data.lost);
  ck_assert_uint_eq(ta.ack.sent, tb.ack.sent);
  ck_assert_uint_eq(ta.data.in_flight, tb.data.in_flight);
  sim_done(&a);
  sim_done(&b);
}
END_TEST

/* links_override on a generated star: loss on w0's link only.  The flow
 * from w0 loses packets and recovers them; the flow between w2 and w3,
 * and every other link, lose none. */
START_TEST(test_override_one_link) {
  Run r = run("topology: {type: star, workers: 4}\n"
              "links_override: [{match: w0-sw0, loss: 0.02}]\n"
              "flows: [{src: w0, dst: w1, size: 5MB}, {src: w2, dst: w3, size: 5MB}]\n");
  ck_assert(msg(&r, 0)->delivered && msg(&r, 1)->delivered);
  ck_assert_uint_gt(msg(&r, 0)->retransmissions, 0);
  ck_assert_uint_eq(msg(&r, 1)->retransmissions, 0);
  const CsTopology *t = cs_sim_topology(r.sim);
  for (uint32_t l = 0; l < t->n_links; l++) {
    uint64_t lost = cs_net_link_stats(cs_sim_net(r.sim), l, 0).losses + cs_net_link_stats(cs_sim_net(r.sim), l, 1).losses;
    bool w0 = !strcmp(t->nodes[t->links[l].a].name, "w0") || !strcmp(t->nodes[t->links[l].b].name, "w0");
    if (w0) ck_assert_uint_gt(lost, 0);
    else ck_assert_uint_eq(lost, 0);
  }
  done(&r);
}
END_TEST

/* Machines of two GPUs (topology.gpus_per_host): a GPU's connection to
 * another machine keeps its host queue at its machine's NIC, as a host's
 * TCP small queues do at its own link, and the NIC drops none of its
 * GPUs' packets.  NIC 10 Gbps, intra links 100 Gbps, 1 us each. */
#define TWO_MACHINES                                                                          \
  "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64MB}\n"                               \
  "topology: {type: star, workers: 4, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 1us}}\n"

START_TEST(test_machine_nic_host_queue) {
  /* Both GPUs of host0 send 20 MB with reno.  Each connection may have
   * host_queue (100 us of the NIC: 125,000 B) not yet started at the NIC,
   * plus the packet that took it past, plus one whose turn there is less
   * than its way from the GPU (lead) away: 2 x (125,000 + 2 x 1,500) B
   * at most.  Before the NIC held them (2026-12-07), each connection
   * could fill its 100 Gbps link's 1.25 MB, slow start piled megabytes up
   * at the NIC, and the round trip outgrew the RTO: spurious timeouts
   * resent thousands of packets that no link had dropped. */
  Run r = run(TWO_MACHINES "flows: [{src: w0, dst: w2, size: 20MB}, {src: w1, dst: w3, size: 20MB}]\n");
  ck_assert(msg(&r, 0)->delivered && msg(&r, 1)->delivered);
  CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
  ck_assert_uint_eq(t.data.dropped, 0);
  ck_assert_uint_eq(t.retransmissions, 0);
  ck_assert_uint_eq(t.timeouts, 0);
  int dir;
  uint32_t l = find_link(&r, "host0", "sw0", &dir);
  CsLinkStats st = cs_net_link_stats(cs_sim_net(r.sim), l, dir);
  ck_assert_uint_le(st.queue_max, 2 * (125000 + 2 * 1500));
  ck_assert_uint_ge(st.queue_max, 125000); /* (both fill it) */
  done(&r);
  /* With a buffer of its own on the NIC's link, the NIC is bounded, as a
   * host's link is: 64 packets, and slow start overflows it. */
  r = run(TWO_MACHINES "links_override: [{match: host0-sw0, buffer: 64pkt}]\n"
                       "transport: {host_queue: 0}\n"
                       "flows: [{src: w0, dst: w2, size: 20MB}, {src: w1, dst: w3, size: 20MB}]\n");
  ck_assert(msg(&r, 0)->delivered && msg(&r, 1)->delivered);
  t = cs_net_totals(cs_sim_net(r.sim));
  l = find_link(&r, "host0", "sw0", &dir);
  st = cs_net_link_stats(cs_sim_net(r.sim), l, dir);
  ck_assert_uint_gt(st.drops, 0);
  ck_assert_uint_eq(st.drops, t.data.dropped);
  ck_assert_uint_le(st.queue_max, 64 * 1500);
  done(&r);
  /* Packets lost on the GPUs' own links, some as they are sent (their
   * small-queue entries learn then that they are gone): every message
   * arrives.  (Entries pushed after a loss at the send stayed waiting for
   * a packet that never came, and the connection stalled for good: 15
   * timeouts, then its message abandoned.) */
  static const char *const protos[] = {"fixed", "roce", "reno"};
  for (size_t i = 0; i < G_N_ELEMENTS(protos); i++) {
    g_autofree char *y = g_strdup_printf(
        "defaults: {bandwidth: 100Gbps, latency: 1us, buffer: 4MB}\n"
        "topology: {type: star, workers: 4, gpus_per_host: 2, intra: {bandwidth: 400Gbps, latency: 1us}}\n"
        "transport: {protocol: %s}\n"
        "links_override: [{match: 'w*-host*', loss: 0.05}]\n"
        "flows: [{src: w0, dst: w2, size: 20MB}, {src: w1, dst: w3, size: 20MB}, {src: w2, dst: w0, size: 20MB}]\n",
        protos[i]);
    r = run(y);
    ck_assert_uint_eq(cs_sim_unfinished(r.sim), 0);
    for (uint32_t m = 0; m < 3; m++) ck_assert_msg(msg(&r, m)->delivered, "%s: message %u", protos[i], m);
    ck_assert_uint_gt(cs_net_totals(cs_sim_net(r.sim)).retransmissions, 0);
    done(&r);
  }
  /* Machines on a ring pass one another's packets on: their links are
   * switch ports for those, bounded by the buffer (64 KB), and drop. */
  r = run("defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 64KB}\n"
          "topology: {type: ring, workers: 8, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 100ns}}\n"
          "flows: [{src: w0, dst: w4, size: 5MB}, {src: w2, dst: w4, size: 5MB}, {src: w1, dst: w5, size: 5MB}]\n");
  ck_assert_uint_eq(cs_sim_unfinished(r.sim), 0);
  t = cs_net_totals(cs_sim_net(r.sim));
  ck_assert_uint_gt(t.data.dropped, 0);
  done(&r);
}
END_TEST

/* A lone GPU's connection refills its host queue as its last packet there
 * is a way from the GPU (its link's latency and a packet's time on it)
 * from its turn at the NIC, so the NIC never idles: the flow ends as if
 * its sender were always ready.  Path w0 -100G,2us- host0 -10G,1us- sw0
 * -10G,1us- host1 -100G,2us- w2: the first packet takes 6 us + 2 x 0.12
 * + 2 x 1.2 us = 8.64 us, each of the 999 others 1.2 us more at the NIC:
 * 1207.44 us, to the picosecond.  (Refilled when its last packet started
 * at the NIC, the NIC would idle 2.12 - 1.2 us in every refill of 84
 * packets.) */
START_TEST(test_machine_nic_no_gap) {
  Run r = run("defaults: {bandwidth: 10Gbps, latency: 1us}\n"
              "topology: {type: star, workers: 4, gpus_per_host: 2, intra: {bandwidth: 100Gbps, latency: 2us}}\n"
              "transport: {protocol: fixed, window: 100000pkt, mtu: 1500B, header: 58B}\n"
              "flows: [{src: w0, dst: w2, size: 1442000B}]\n");
  ck_assert(msg(&r, 0)->delivered);
  ck_assert_int_eq(msg(&r, 0)->end, 1207440000LL);
  done(&r);
}
END_TEST

static Suite *net_suite(void) {
  Suite *s = suite_create("net");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_store_and_forward_exact);
  tcase_add_test(tc, test_store_and_forward_bottleneck);
  tcase_add_test(tc, test_cut_through_exact);
  tcase_add_test(tc, test_cut_through_rates);
  tcase_add_test(tc, test_cut_through_hosts_store);
  tcase_add_test(tc, test_no_drift);
  tcase_add_test(tc, test_md1_half);
  tcase_add_test(tc, test_md1_080);
  tcase_add_test(tc, test_droptail_overflow);
  tcase_add_test(tc, test_ack_loss_sack_block);
  tcase_add_test(tc, test_mathis_1e3);
  tcase_add_test(tc, test_mathis_1e2);
  tcase_add_test(tc, test_fairness);
  tcase_add_test(tc, test_dctcp_queue);
  tcase_add_test(tc, test_red_drops_early);
  tcase_add_test(tc, test_gilbert_elliott);
  tcase_add_test(tc, test_deterministic);
  tcase_add_test(tc, test_onoff_rate);
  tcase_add_test(tc, test_dead_link_ends);
  tcase_add_test(tc, test_pool_bounded);
  tcase_add_test(tc, test_message_slots_reused);
  tcase_add_test(tc, test_calendar_same_run);
  tcase_add_test(tc, test_override_one_link);
  tcase_add_test(tc, test_machine_nic_host_queue);
  tcase_add_test(tc, test_machine_nic_no_gap);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(net_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
