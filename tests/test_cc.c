/* test_cc.c - the congestion-control algorithms against their
 * definitions: CUBIC's window curve step by step against RFC 9438's
 * equations (concave and convex regions, the Reno-friendly region, fast
 * convergence, the timeout), HyStart's two exits; BBR's sequence of modes
 * and its bandwidth estimate on a fixed-rate link, its probe-rtt, and its
 * rate under loss; RACK-TLP's reordering window and tail-loss probes;
 * persistent connections, idle restart and delayed ACKs, on the packet
 * network. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "commsim/cc.h"
#include "commsim/sim.h"
#include "simutil.h"

/* ---- CUBIC, driven ACK by ACK ---- */

static CsCcConfig cubic_cfg(bool hystart) {
  return (CsCcConfig){.init_cwnd = 10, .max_cwnd = 1e9, .mss = 1448, .mtu = 1500, .cubic_c = 0.4, .cubic_beta = 0.7,
                      .cubic_fast_convergence = true, .cubic_reno_friendly = true, .hystart = hystart};
}

static const CsCcOps *ops_of(const char *name) {
  const CsProtocolDef *p = cs_protocol_find(name);
  ck_assert_ptr_nonnull(p);
  return p->ops;
}

/* An algorithm's connection state with its configuration, outside any network. */
typedef struct {
  CsCcConfig cfg;
  CsCc cc;
  const CsCcOps *ops;
} Fix;

/* Algorithm `name` (CUBIC's configuration, HyStart on or off, BBR's
 * defaults) at a window of `cwnd` packets. */
static void fix_at(Fix *x, const char *name, bool hystart, double cwnd) {
  memset(x, 0, sizeof *x);
  x->cfg = cubic_cfg(hystart);
  x->cfg.bbr_high_gain = 2.0 / log(2.0);
  x->cfg.bbr_probe_rtt_interval = 10 * CS_SEC;
  x->cfg.bbr_probe_rtt_time = 200 * CS_MS;
  x->ops = ops_of(name);
  x->cc.cfg = &x->cfg;
  x->cc.max_cwnd = x->cfg.max_cwnd;
  x->cc.last_send = -1;
  x->cc.line_bps = 10000000000ull;
  x->ops->init(&x->cc);
  x->cc.cwnd = cwnd;
}

/* CUBIC (HyStart on or off) at a window of `cwnd` packets. */
static void cubic_at(Fix *x, bool hystart, double cwnd) { fix_at(x, "cubic", hystart, cwnd); }

/* One round trip of ACKs, one per packet of the window, evenly spread
 * over `rtt` from `*t`, each with that RTT; positions advance with them. */
static void ack_round(const CsCcOps *ops, CsCc *cc, CsTime *t, CsTime rtt, uint64_t *pos) {
  uint32_t n = (uint32_t)cc->cwnd;
  if (n < 1) n = 1;
  for (uint32_t i = 0; i < n; i++) {
    *t += rtt / n;
    (*pos)++;
    CsAck a = {.newly = 1, .rtt = rtt, .una = *pos, .nxt = *pos + n, .in_flight = n, .min_rtt = rtt, .now = *t};
    if (ops->on_ack) ops->on_ack(cc, &a);
    ops->cong_avoid(cc, &a);
  }
}

/* RFC 9438 eq. 1 and 2: W_cubic(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta) / C). */
static double w_cubic(double t, double wmax) {
  double k = cbrt(wmax * (1 - 0.7) / 0.4);
  return 0.4 * pow(t - k, 3) + wmax;
}

/* After a loss at W_max = 100 the window follows W_cubic round by round:
 * 70 at the loss, concave up to W_max at K = cbrt(75) = 4.217 s, convex
 * beyond.  With a 100 ms RTT the Reno-friendly estimate (0.53 packet per
 * RTT) stays below the curve throughout.  Each ACK aims at W_cubic one RTT
 * ahead, so at the end of a round the window is where the curve is;
 * within 1 % plus one packet (the window's integer rounds). */
START_TEST(test_cubic_curve) {
  Fix x;
  cubic_at(&x, false, 100);
  const CsCcOps *ops = x.ops;
  CsCc *cc = &x.cc;
  ops->on_loss(cc, CS_SEC);
  ck_assert_double_eq_tol(cc->cwnd, 70, 1e-9);
  ck_assert_double_eq_tol(cc->ssthresh, 70, 1e-9);
  CsTime t = CS_SEC, t0 = CS_SEC, rtt = 100 * CS_MS;
  uint64_t pos = 1000;
  double worst = 0;
  for (int r = 0; r < 85; r++) { /* 8.5 s: to twice K */
    ack_round(ops, cc, &t, rtt, &pos);
    double want = w_cubic((double)(t - t0) * 1e-12, 100);
    double err = fabs(cc->cwnd - want) / want;
    if (err > worst) worst = err;
    ck_assert_msg(fabs(cc->cwnd - want) <= 0.01 * want + 1, "round %d at %.2f s: cwnd %.2f, W_cubic %.2f", r,
                  (double)(t - t0) * 1e-12, cc->cwnd, want);
  }
  /* beyond K the window has passed W_max: the convex region */
  ck_assert_double_gt(cc->cwnd, 125);
}
END_TEST

/* With a 1 ms RTT, the curve barely leaves 70 packets in 100 ms (W_cubic(0.1)
 * = 72.1), while Reno with CUBIC's beta would gain 3 (1 - beta) / (1 + beta)
 * = 0.529 packet per RTT: the Reno-friendly region, in which the window is
 * W_est = 70 + 0.529 x 100 = 122.9 (RFC 9438 4.3), within 3 % (the
 * window follows W_est one round behind). */
START_TEST(test_cubic_reno_friendly) {
  Fix x;
  cubic_at(&x, false, 100);
  const CsCcOps *ops = x.ops;
  CsCc *cc = &x.cc;
  ops->on_loss(cc, CS_SEC);
  CsTime t = CS_SEC, rtt = CS_MS;
  uint64_t pos = 1000;
  for (int r = 0; r < 100; r++) ack_round(ops, cc, &t, rtt, &pos);
  double w_est = 70 + 3 * 0.3 / 1.7 * 100;
  ck_assert_msg(fabs(cc->cwnd - w_est) <= 0.03 * w_est, "cwnd %.2f, W_est %.2f", cc->cwnd, w_est);
  ck_assert_double_gt(cc->cwnd, w_cubic(0.1, 100) + 40);
}
END_TEST

/* Fast convergence (RFC 9438 4.7): a loss at 800 packets, below the last
 * W_max (1000), remembers W_max = 800 (1 + 0.7) / 2 = 680, so the curve's
 * plateau is at 680: K = cbrt((680 - 560) / 0.4) = 6.69 s after the cut
 * to 560.  Without fast convergence the plateau is 800 (K = 8.43 s).  (The
 * Reno-friendly estimate, 560 + 0.53 per 100 ms round, stays below.)
 * Within 1 %. */
static double plateau_after_two_losses(bool fast) {
  Fix x;
  cubic_at(&x, false, 1000);
  x.cfg.cubic_fast_convergence = fast;
  const CsCcOps *ops = x.ops;
  CsCc *cc = &x.cc;
  ops->on_loss(cc, CS_SEC);
  cc->cwnd = 800;
  ops->on_loss(cc, CS_SEC);
  ck_assert_double_eq_tol(cc->cwnd, 560, 1e-9);
  double k = cbrt(((fast ? 680.0 : 800.0) - 560) / 0.4);
  CsTime t = CS_SEC, rtt = 100 * CS_MS;
  uint64_t pos = 0;
  while ((double)(t - CS_SEC) * 1e-12 < k) ack_round(ops, cc, &t, rtt, &pos);
  return cc->cwnd;
}

START_TEST(test_cubic_fast_convergence) {
  double w = plateau_after_two_losses(true);
  ck_assert_msg(fabs(w - 680) <= 6.8, "cwnd %.2f at K, W_max 680", w);
  w = plateau_after_two_losses(false);
  ck_assert_msg(fabs(w - 800) <= 8.0, "cwnd %.2f at K, W_max 800", w);
}
END_TEST

/* A timeout: one packet, ssthresh = 0.7 cwnd, W_max forgotten: slow start
 * back to 70, then the curve from there with K = 0, which Linux bounds
 * below by 5 % per round while no W_max is known (cnt <= 20): ten rounds
 * of avoidance multiply the window by 1.05^10 = 1.63, within 2 %. */
START_TEST(test_cubic_timeout) {
  Fix x;
  cubic_at(&x, false, 100);
  const CsCcOps *ops = x.ops;
  CsCc *cc = &x.cc;
  ops->on_timeout(cc, CS_SEC);
  ck_assert_double_eq_tol(cc->cwnd, 1, 1e-9);
  ck_assert_double_eq_tol(cc->ssthresh, 70, 1e-9);
  /* slow start back to 70, then the curve from there with K = 0 */
  CsTime t = CS_SEC, rtt = 100 * CS_MS;
  uint64_t pos = 0;
  while (cc->cwnd < 70) ack_round(ops, cc, &t, rtt, &pos);
  ck_assert_double_le(cc->cwnd, 70 * 1.05 + 1);
  double want = cc->cwnd * pow(1.05, 10);
  for (int r = 0; r < 10; r++) ack_round(ops, cc, &t, rtt, &pos);
  ck_assert_msg(fabs(cc->cwnd - want) <= 0.02 * want, "cwnd %.2f after ten rounds, want %.2f", cc->cwnd, want);
}
END_TEST

/* HyStart's ACK train: in slow start from 16 packets, ACKs less than 2 ms
 * apart; when the train has lasted half of the least RTT plus Linux's ACK
 * allowance ((10 ms + 1 ms) / 2: the allowance, 4 x 64 KB at
 * 2 cwnd / SRTT = 5.8 MB/s, is capped at 1 ms), slow start ends:
 * ssthresh = cwnd.  Not before. */
START_TEST(test_hystart_ack_train) {
  Fix x;
  cubic_at(&x, true, 20);
  const CsCcOps *ops = x.ops;
  CsCc *cc = &x.cc;
  CsTime t = CS_SEC, rtt = 10 * CS_MS;
  uint64_t pos = 0;
  CsTime start = t;
  while (isinf(cc->ssthresh) && t - start < 20 * CS_MS) {
    t += 10 * CS_US; /* a train */
    pos++;
    CsAck a = {.newly = 0, .rtt = rtt, .srtt = rtt, .una = pos, .nxt = 1000000, .now = t};
    ops->on_ack(cc, &a);
    ops->cong_avoid(cc, &a);
  }
  ck_assert(!isinf(cc->ssthresh));
  /* the round began at the first ACK (10 us in): the train ends slow
   * start at the first ACK past 5.5 ms after it */
  CsTime when = t - start;
  ck_assert_msg(when > 5500 * CS_US + 10 * CS_US && when <= 5500 * CS_US + 20 * CS_US, "slow start ended after %lld ps",
                (long long)when);
  /* ssthresh is the window when it ended (this ACK's growth aside) */
  ck_assert(cc->ssthresh <= cc->cwnd && cc->cwnd <= cc->ssthresh + 1);
}
END_TEST

/* HyStart's delay increase: the least RTT of a round's first 8 samples
 * above the least RTT seen plus max(4 ms, RTT / 8) ends slow start.  ACKs
 * 3 ms apart (no train).  The first ACK, 10 ms, ends a round of its own;
 * in the next, RTTs of 13 ms over the least 10 ms do not end slow start,
 * 15 ms do. */
static bool hystart_delay_exits(CsTime later_rtt) {
  Fix x;
  cubic_at(&x, true, 20);
  const CsCcOps *ops = x.ops;
  CsCc *cc = &x.cc;
  CsTime t = CS_SEC;
  uint64_t pos = 0;
  for (int i = 0; i < 30; i++) {
    t += 3 * CS_MS;
    pos++;
    CsAck a = {.newly = 0, .rtt = i == 0 ? 10 * CS_MS : later_rtt, .una = pos, .nxt = i == 0 ? 2 : 1000000, .now = t};
    ops->on_ack(cc, &a);
  }
  return !isinf(cc->ssthresh);
}

START_TEST(test_hystart_delay) {
  ck_assert(!hystart_delay_exits(13 * CS_MS));
  ck_assert(hystart_delay_exits(15 * CS_MS));
}
END_TEST

/* DCTCP: ECN and loss together cut the window at most once per window of
 * data (RFC 3168 6.1.2; Linux's CWR and Recovery states).  At 100 packets
 * with alpha = 1 (its initial value) an ECN echo halves the window; a loss
 * found in the same window cuts no further, and neither does an echo
 * during the recovery that a loss starts later; past the window an echo
 * cuts again. */
START_TEST(test_dctcp_one_cut_per_window) {
  Fix x;
  fix_at(&x, "dctcp", false, 100);
  CsCc *cc = &x.cc;
  CsAck a = {.newly = 1, .ece = true, .rtt = CS_MS, .una = 1, .nxt = 100, .now = CS_SEC};
  x.ops->on_ack(cc, &a);
  ck_assert_double_eq_tol(cc->cwnd, 50, 1e-9); /* alpha 1: half */
  x.ops->on_loss(cc, a.now); /* a drop from the same window */
  ck_assert_double_eq_tol(cc->cwnd, 50, 1e-9);
  ck_assert_double_eq_tol(cc->ssthresh, 50, 1e-9);
  /* the window acknowledged: a loss now cuts, and an echo during its recovery does not */
  a = (CsAck){.newly = 1, .rtt = CS_MS, .una = 100, .nxt = 150, .now = CS_SEC + CS_MS};
  x.ops->on_ack(cc, &a);
  x.ops->on_loss(cc, a.now);
  ck_assert_double_eq_tol(cc->cwnd, 25, 1e-9);
  a = (CsAck){.newly = 1, .ece = true, .rtt = CS_MS, .una = 101, .nxt = 150, .in_recovery = true, .now = CS_SEC + 2 * CS_MS};
  x.ops->on_ack(cc, &a);
  ck_assert_double_eq_tol(cc->cwnd, 25, 1e-9);
  /* recovery over: an echo cuts by alpha / 2 again */
  a = (CsAck){.newly = 1, .ece = true, .rtt = CS_MS, .una = 150, .nxt = 175, .now = CS_SEC + 3 * CS_MS};
  x.ops->on_ack(cc, &a);
  ck_assert(cc->cwnd < 25);
}
END_TEST

/* DCTCP's alpha counts packets, not ACKs (RFC 8257 3.3, Linux): with
 * delayed ACKs, 4 ACKs of 2 packets unmarked and 4 of 1 packet marked (a
 * receiver ACKs at once when the marks change) are 4 marked packets of
 * 12, not 4 ACKs of 8.  A window ends at the first ACK (win_end 0): alpha
 * = 15/16 x 1 + 1/16 x 0 after it; then the 8 ACKs below and the ninth,
 * which ends their window, count 4 marked packets of 13: alpha = 15/16 x
 * alpha + 1/16 x 4/13 (4/9 when ACKs were counted). */
START_TEST(test_dctcp_alpha_counts_packets) {
  Fix x;
  fix_at(&x, "dctcp", false, 100);
  CsCc *cc = &x.cc;
  CsAck a = {.newly = 1, .rtt = CS_MS, .una = 1, .nxt = 13, .now = CS_SEC};
  x.ops->on_ack(cc, &a); /* ends the first window (nothing counted yet): alpha 15/16 */
  for (int i = 0; i < 8; i++) {
    bool marked = i % 2;
    a = (CsAck){.newly = marked ? 1 : 2, .ece = marked, .rtt = CS_MS, .una = 2 + (uint64_t)i, .nxt = 13,
                .in_recovery = true, /* no cut: alpha alone */
                .now = CS_SEC + (i + 1) * CS_MS};
    x.ops->on_ack(cc, &a);
  }
  a = (CsAck){.newly = 1, .rtt = CS_MS, .una = 13, .nxt = 20, .now = CS_SEC + 10 * CS_MS};
  x.ops->on_ack(cc, &a); /* the window of 12 packets (and this one) ends */
  double alpha1 = 15.0 / 16.0, frac = 4.0 / 13.0; /* 4 marked of the 12 and this ACK's 1 */
  double want = 15.0 / 16.0 * alpha1 + frac / 16.0;
  /* alpha shows in the cut an echo makes now: cwnd x (1 - alpha / 2) */
  double before = cc->cwnd;
  a = (CsAck){.newly = 1, .ece = true, .rtt = CS_MS, .una = 14, .nxt = 20, .now = CS_SEC + 11 * CS_MS};
  x.ops->on_ack(cc, &a);
  ck_assert_double_eq_tol(cc->cwnd, before * (1.0 - want / 2.0), 1e-9);
}
END_TEST

/* BBR leaves probe-rtt when sending resumes after an idle time that
 * outlasted it (Linux's bbr_cwnd_event: CA_EVENT_TX_START in probe-rtt
 * calls bbr_check_probe_rtt_done): without it the first ACK after the
 * restart would still find probe-rtt and its 4-packet window. */
START_TEST(test_bbr_probe_rtt_ends_on_restart) {
  Fix x;
  fix_at(&x, "bbr", false, 10);
  CsCc *cc = &x.cc;
  CsAck a = {.newly = 1, .rtt = 100 * CS_US, .una = 1, .nxt = 10, .in_flight = 9, .delivered = 1, .now = CS_SEC};
  x.ops->on_ack(cc, &a);
  ck_assert_str_ne(x.ops->mode(cc), "probe_rtt");
  /* 11 s on the least RTT has expired: probe-rtt, at 2 packets in flight its 200 ms start */
  a = (CsAck){.newly = 1, .rtt = 200 * CS_US, .una = 2, .nxt = 10, .in_flight = 2, .delivered = 2, .now = 12 * CS_SEC};
  x.ops->on_ack(cc, &a);
  ck_assert_str_eq(x.ops->mode(cc), "probe_rtt");
  /* idle until 12.1 s: still within its 200 ms */
  x.ops->on_event(cc, CS_CC_TX_START, 12 * CS_SEC + 100 * CS_MS);
  ck_assert_str_eq(x.ops->mode(cc), "probe_rtt");
  /* idle past them: the restart ends it */
  x.ops->on_event(cc, CS_CC_TX_START, 12 * CS_SEC + 300 * CS_MS);
  ck_assert_str_ne(x.ops->mode(cc), "probe_rtt");
}
END_TEST

/* ---- the packet network ---- */

static Run load(const char *yaml) { return sim_load(yaml, "cc.yaml", NULL); }
static void go(Run *r) { sim_go(r); }
static void done(Run *r) { sim_done(r); }

typedef struct {
  GPtrArray *modes;   /* the sequence of modes, each once per visit */
  double bw_sum;      /* bandwidth estimates in probe_bw, summed */
  uint64_t bw_n;
  CsTime probe_rtt_start, probe_rtt_time; /* the first visit to probe_rtt */
  double min_cwnd_in_probe_rtt;
  uint32_t samples;
} Trace;

static void on_sample(void *ctx, const CsConnSample *s) {
  Trace *t = ctx;
  t->samples++;
  const char *last = t->modes->len ? g_ptr_array_index(t->modes, t->modes->len - 1) : "";
  if (strcmp(last, s->mode)) {
    if (!strcmp(last, "probe_rtt") && !t->probe_rtt_time) t->probe_rtt_time = s->now - t->probe_rtt_start;
    if (!strcmp(s->mode, "probe_rtt") && !t->probe_rtt_start) t->probe_rtt_start = s->now;
    g_ptr_array_add(t->modes, (char *)s->mode);
  }
  if (!strcmp(s->mode, "probe_bw")) t->bw_sum += s->bandwidth_bps, t->bw_n++;
  if (!strcmp(s->mode, "probe_rtt") && s->cwnd < t->min_cwnd_in_probe_rtt) t->min_cwnd_in_probe_rtt = s->cwnd;
}

/* BBR through a 1 Gbps bottleneck behind a 10 Gbps first hop, a 1 ms round
 * trip (250 us per link and direction): startup (which queues at the
 * bottleneck), drain, then probe-bw; its bandwidth estimate is the
 * bottleneck's rate in full 1500 B packets (1 Gbps) within 2 %.  With probe_rtt_interval 200 ms it
 * enters probe-rtt, holds 4 packets for probe_rtt_time (20 ms) and a
 * round, and returns to probe-bw, its bandwidth estimate kept (the
 * samples of probe-rtt are app-limited).  With the default interval
 * (10 s) the transfer (250 MB of payload, 260.06 MB on the wire) takes its
 * serialization time, 2.0804 s, within 1 %: startup is a few round trips. */
START_TEST(test_bbr_modes_and_bandwidth) {
  Run r = load("defaults: {bandwidth: 1Gbps, latency: 250us, buffer: 10MB}\n"
               "nodes: [{name: a, role: host}, {name: b, role: host}, {name: s, role: switch}]\n"
               "links: [{a: a, b: s, bandwidth: 10Gbps}, {a: s, b: b}]\n"
               "transport: {protocol: bbr, mtu: 1500B, header: 58B, ack: 64B, bbr: {probe_rtt_interval: 200ms, "
               "probe_rtt_time: 20ms}}\n"
               "flows: [{src: a, dst: b, size: 250MB}]\n");
  Trace t = {.modes = g_ptr_array_new(), .min_cwnd_in_probe_rtt = INFINITY};
  cs_net_set_conn_trace(cs_sim_net(r.sim), on_sample, &t);
  go(&r);
  ck_assert_uint_ge(t.modes->len, 5);
  ck_assert_str_eq(g_ptr_array_index(t.modes, 0), "startup");
  ck_assert_str_eq(g_ptr_array_index(t.modes, 1), "drain");
  ck_assert_str_eq(g_ptr_array_index(t.modes, 2), "probe_bw");
  ck_assert_str_eq(g_ptr_array_index(t.modes, 3), "probe_rtt");
  ck_assert_str_eq(g_ptr_array_index(t.modes, 4), "probe_bw");
  double bw = t.bw_sum / (double)t.bw_n;
  ck_assert_msg(fabs(bw - 1e9) <= 0.02e9, "bandwidth estimate %.4g bit/s", bw);
  ck_assert_double_le(t.min_cwnd_in_probe_rtt, 4.0);
  ck_assert_msg(t.probe_rtt_time >= 20 * CS_MS && t.probe_rtt_time <= 23 * CS_MS, "probe_rtt lasted %lld ps",
                (long long)t.probe_rtt_time);
  const CsMessageStats *m = cs_net_message(cs_sim_net(r.sim), 0);
  ck_assert(m->delivered);
  double want = ceil(250e6 / 1442) * 1500 * 8 / 1e9;
  g_ptr_array_free(t.modes, TRUE);
  done(&r);
  r = load("defaults: {bandwidth: 1Gbps, latency: 250us, buffer: 10MB}\n"
           "nodes: [{name: a, role: host}, {name: b, role: host}, {name: s, role: switch}]\n"
           "links: [{a: a, b: s, bandwidth: 10Gbps}, {a: s, b: b}]\n"
           "transport: {protocol: bbr, mtu: 1500B, header: 58B, ack: 64B}\n"
           "flows: [{src: a, dst: b, size: 250MB}]\n");
  go(&r);
  m = cs_net_message(cs_sim_net(r.sim), 0);
  ck_assert(m->delivered);
  ck_assert_msg(fabs((double)m->end * 1e-12 - want) <= 0.01 * want, "fct %.4f s, want %.4f", (double)m->end * 1e-12,
                want);
  done(&r);
}
END_TEST

/* Loss does not cut BBR's rate: at 1 % random loss on the link it still
 * moves within 10 % of the lossless time, while cubic slows down by more
 * than 3x (its window is cut at every loss). */
static double fct_with(const char *protocol, double loss) {
  g_autofree char *y = g_strdup_printf("defaults: {bandwidth: 1Gbps, latency: 500us, buffer: 10MB, loss: %g}\n"
                                       "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
                                       "links: [{a: a, b: b}]\n"
                                       "transport: {protocol: %s}\n"
                                       "flows: [{src: a, dst: b, size: 50MB}]\n",
                                       loss, protocol);
  Run r = load(y);
  go(&r);
  const CsMessageStats *m = cs_net_message(cs_sim_net(r.sim), 0);
  ck_assert(m->delivered);
  double s = (double)m->end * 1e-12;
  done(&r);
  return s;
}

START_TEST(test_bbr_holds_rate_under_loss) {
  double clean = fct_with("bbr", 0), lossy = fct_with("bbr", 0.01);
  ck_assert_msg(lossy <= 1.10 * clean, "bbr: %.4f s lossless, %.4f s at 1 %%", clean, lossy);
  double cclean = fct_with("cubic", 0), clossy = fct_with("cubic", 0.01);
  ck_assert_msg(clossy >= 3 * cclean, "cubic: %.4f s lossless, %.4f s at 1 %%", cclean, clossy);
}
END_TEST

/* CUBIC's response function (RFC 9438 5.1): under random loss p a long
 * flow averages (C (3 + beta) / (4 (1 - beta)))^(1/4) (RTT / p)^(3/4)
 * packets per round trip when that exceeds the Reno-friendly
 * sqrt(3 / (2 p)).  RTT 100 ms (a 10 Gbps link, 50 ms each way), p = 1e-4:
 * 187 packets per RTT (Reno: 122), 21.6 Mbit/s of payload.  A 2 GB
 * transfer (about 150 losses; the first few epochs, from slow start's
 * overshoot, weigh little) averages within 30 % of it (+13 % measured).  (Reno's
 * Mathis rate is checked in test_net.) */
START_TEST(test_cubic_response_function) {
  Run r = load("defaults: {bandwidth: 10Gbps, latency: 50ms, loss: 0.0001}\n"
               "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
               "links: [{a: a, b: b}]\n"
               "transport: {protocol: cubic, initial_rto: 1s}\n"
               "flows: [{src: a, dst: b, size: 2GB}]\n");
  go(&r);
  const CsMessageStats *m = cs_net_message(cs_sim_net(r.sim), 0);
  ck_assert(m->delivered);
  double rtt = 0.1 + 8 * 1500 / 10e9 + 8 * 64 / 10e9;
  double w = pow(0.4 * 3.7 / (4 * 0.3), 0.25) * pow(rtt / 1e-4, 0.75);
  double want = w * 1442 * 8 / rtt, got = 2e9 * 8 / ((double)(m->end - m->start) * 1e-12);
  ck_assert_msg(fabs(got / want - 1) <= 0.30, "goodput %.4g bit/s, response function %.4g", got, want);
  done(&r);
}
END_TEST

/* Two paths of equal hops and different latency (5 us more through s3),
 * packets sprayed over them (ecmp-packet): packets arrive out of order.
 * sack's duplicate threshold takes each overtaken packet for lost; RACK
 * waits a reordering window, widened by the duplicates it is told of
 * (D-SACK), so it retransmits a small fraction of what sack does.  Both
 * deliver everything.  (The same network with shortest routing reorders
 * nothing: no retransmission at all.) */
static uint64_t retx_with(const char *recovery, const char *routing) {
  g_autofree char *y = g_strdup_printf(
      "routing: %s\n"
      "defaults: {bandwidth: 10Gbps, latency: 1us, buffer: 4MB}\n"
      "nodes: [{name: a, role: host}, {name: b, role: host}, {name: s1, role: switch}, {name: s2, role: switch},\n"
      "        {name: s3, role: switch}, {name: s4, role: switch}]\n"
      "links: [{a: a, b: s1}, {a: s1, b: s2}, {a: s1, b: s3, latency: 6us}, {a: s2, b: s4}, {a: s3, b: s4},\n"
      "        {a: s4, b: b}]\n"
      "transport: {protocol: cubic, recovery: %s}\n"
      "flows: [{src: a, dst: b, size: 20MB}]\n",
      routing, recovery);
  Run r = load(y);
  go(&r);
  const CsMessageStats *m = cs_net_message(cs_sim_net(r.sim), 0);
  ck_assert(m->delivered);
  uint64_t n = m->retransmissions;
  done(&r);
  return n;
}

START_TEST(test_rack_tolerates_reordering) {
  ck_assert_uint_eq(retx_with("rack", "shortest"), 0);
  ck_assert_uint_eq(retx_with("sack", "shortest"), 0);
  uint64_t sack = retx_with("sack", "ecmp-packet"), rack = retx_with("rack", "ecmp-packet");
  ck_assert_msg(sack > 100, "sack: %llu retransmissions", (unsigned long long)sack);
  ck_assert_msg(rack * 10 < sack, "rack %llu, sack %llu retransmissions", (unsigned long long)rack,
                (unsigned long long)sack);
}
END_TEST

/* Tail losses: 2000 messages of 8 packets one after the other, each on a
 * connection of its own, over a link losing 2 % of packets.  A lost last
 * packet has no later packet to reveal it (on a shared connection the next
 * message's would): sack waits for the RTO (min_rto 1 ms, 50x the RTT),
 * RACK's tail-loss probe (2 SRTT) resends it and the ACK that comes back
 * lets RACK see it.  RACK-TLP takes far fewer timeouts and less time. */
static void tail(const char *recovery, uint64_t *timeouts, double *end) {
  GString *y = g_string_new("defaults: {bandwidth: 10Gbps, latency: 5us, loss: 0.02}\n"
                            "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
                            "links: [{a: a, b: b}]\n");
  g_string_append_printf(y, "transport: {protocol: cubic, recovery: %s, connections: per-message}\nflows:\n", recovery);
  for (int i = 0; i < 2000; i++) g_string_append_printf(y, "  - {src: a, dst: b, size: 11536B, start: %dus}\n", 50 * i);
  Run r = load(y->str);
  g_string_free(y, TRUE);
  go(&r);
  *timeouts = 0;
  *end = 0;
  CsNet *net = cs_sim_net(r.sim);
  for (uint32_t i = 0; i < cs_net_messages(net); i++) {
    const CsMessageStats *m = cs_net_message(net, i);
    ck_assert(m->delivered);
    *timeouts += m->timeouts;
    *end += (double)(m->end - m->start) * 1e-12;
  }
  done(&r);
}

START_TEST(test_tail_loss_probe) {
  uint64_t to_sack, to_rack;
  double t_sack, t_rack;
  tail("sack", &to_sack, &t_sack);
  tail("rack", &to_rack, &t_rack);
  ck_assert_msg(to_sack >= 100, "sack: %llu timeouts", (unsigned long long)to_sack);
  ck_assert_msg(to_rack * 4 < to_sack, "timeouts: rack %llu, sack %llu", (unsigned long long)to_rack,
                (unsigned long long)to_sack);
  ck_assert_msg(t_rack < 0.5 * t_sack, "message times: rack %.4f s, sack %.4f s", t_rack, t_sack);
}
END_TEST

/* The probe when the RTO would come first (RFC 8985 7.2: PTO = min(2 SRTT,
 * the time left to the RTO), as Linux): with 1 ms links the round trip
 * (2 ms) passes min_rto (1 ms), RTO = SRTT + 1 ms is sooner than 2 SRTT,
 * and the probe goes at the RTO's time instead of it.  500 messages of 8
 * packets, a connection each, 2 % loss: a lost tail is found by the probe
 * about as often as with 5 us links (3 timeouts in both; 18 at 1 ms when
 * the RTO was left to fire). */
static uint64_t tail_timeouts(const char *latency) {
  GString *y = g_string_new("");
  g_string_append_printf(y, "defaults: {bandwidth: 1Gbps, latency: %s, loss: 0.02}\n"
                            "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
                            "links: [{a: a, b: b}]\n"
                            "transport: {protocol: cubic, recovery: rack, connections: per-message}\nflows:\n",
                         latency);
  for (int i = 0; i < 500; i++) g_string_append_printf(y, "  - {src: a, dst: b, size: 11536B, start: %dms}\n", 10 * i);
  Run r = load(y->str);
  g_string_free(y, TRUE);
  go(&r);
  uint64_t n = 0;
  CsNet *net = cs_sim_net(r.sim);
  for (uint32_t i = 0; i < cs_net_messages(net); i++) {
    ck_assert(cs_net_message(net, i)->delivered);
    n += cs_net_message(net, i)->timeouts;
  }
  done(&r);
  return n;
}

START_TEST(test_tail_loss_probe_before_rto) {
  uint64_t near = tail_timeouts("5us"), far = tail_timeouts("1ms");
  ck_assert_msg(far <= near + 3, "timeouts: %llu with 1 ms links, %llu with 5 us", (unsigned long long)far,
                (unsigned long long)near);
}
END_TEST

/* RFC 8985 7.4.2: a probe that resent the tail and was not reported a
 * duplicate (no D-SACK) repaired a loss, and the algorithm cuts its window
 * for it once the ACKs pass it (Linux's tcp_process_tlp_ack).  Two
 * 5-packet messages 1 ms apart on one connection, 5 % loss: with seed 42
 * message 0 loses only its last packet, which the probe resends; when
 * message 1's ACKs come back the window is cut as for a loss (cubic:
 * ssthresh 0.7 x 10 = 7), where it was left whole. */
static void last_ssthresh(void *ctx, const CsConnSample *s) { *(double *)ctx = s->ssthresh; }

START_TEST(test_tail_loss_probe_repair_cuts) {
  Run r = load("seed: 42\n"
               "defaults: {bandwidth: 10Gbps, latency: 5us, loss: 0.05}\n"
               "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
               "links: [{a: a, b: b}]\n"
               "transport: {protocol: cubic, recovery: rack}\n"
               "flows: [{src: a, dst: b, size: 7210B, start: 0}, {src: a, dst: b, size: 7210B, start: 1ms}]\n");
  double ssthresh = 0;
  cs_net_set_conn_trace(cs_sim_net(r.sim), last_ssthresh, &ssthresh);
  go(&r);
  CsNet *net = cs_sim_net(r.sim);
  const CsMessageStats *m0 = cs_net_message(net, 0), *m1 = cs_net_message(net, 1);
  ck_assert(m0->delivered && m1->delivered);
  /* the scenario: one retransmission (the probe), no timeout, nothing lost of message 1 */
  ck_assert_uint_eq(m0->retransmissions, 1);
  ck_assert_uint_eq(m0->timeouts, 0);
  ck_assert_uint_eq(m1->retransmissions, 0);
  ck_assert_msg(fabs(ssthresh - 7) < 1e-9, "ssthresh %g after a loss repaired by the probe", ssthresh);
  done(&r);
}
END_TEST

/* Messages queued on one connection: 200 of 100 packets, all given at
 * once, so each goes when the one before has sent everything.  A lost
 * tail of a message is revealed by the later messages' packets arriving
 * (the stream's SACKs above the hole) and, failing that, by the timeout,
 * which only the stream's cumulative ACK restarts: no message waits for
 * the later ones to be done.  With sack as with rack, at 1 % loss there is
 * (almost) no timeout, and at 5 % no message ends more than 2 ms (two
 * RTOs) after the first later message to end. */
static void queued(const char *recovery, double loss, uint64_t *timeouts, double *lag, double *last) {
  GString *y = g_string_new("seed: 3\n");
  g_string_append_printf(y, "defaults: {bandwidth: 10Gbps, latency: 5us, buffer: 4MB, loss: %g}\n", loss);
  g_string_append_printf(y, "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
                            "links: [{a: a, b: b}]\n"
                            "transport: {protocol: reno, recovery: %s, min_rto: 1ms}\nflows:\n",
                         recovery);
  for (int i = 0; i < 200; i++) g_string_append(y, "  - {src: a, dst: b, size: 144200B, start: 0}\n");
  Run r = load(y->str);
  g_string_free(y, TRUE);
  go(&r);
  CsNet *net = cs_sim_net(r.sim);
  uint32_t n = cs_net_messages(net);
  *timeouts = 0;
  *lag = *last = 0;
  CsTime first_later = CS_TIME_MAX; /* the earliest end among the messages after i */
  for (uint32_t i = n; i-- > 0;) {
    const CsMessageStats *m = cs_net_message(net, i);
    ck_assert(m->delivered);
    *timeouts += m->timeouts;
    if (first_later < m->end && (double)(m->end - first_later) * 1e-12 > *lag) *lag = (double)(m->end - first_later) * 1e-12;
    if (m->end < first_later) first_later = m->end;
    if ((double)m->end * 1e-12 > *last) *last = (double)m->end * 1e-12;
  }
  done(&r);
}

START_TEST(test_queued_messages_tail_loss) {
  uint64_t to_sack, to_rack;
  double lag, end_sack, end_rack;
  queued("rack", 0.01, &to_rack, &lag, &end_rack);
  queued("sack", 0.01, &to_sack, &lag, &end_sack);
  ck_assert_msg(to_sack <= 2, "sack: %llu timeouts (rack %llu)", (unsigned long long)to_sack,
                (unsigned long long)to_rack);
  ck_assert_msg(end_sack <= 1.05 * end_rack, "last message at %.6f s with sack, %.6f s with rack", end_sack, end_rack);
  queued("sack", 0.05, &to_sack, &lag, &end_sack);
  ck_assert_msg(lag <= 2e-3, "a message ended %.6f s after a later one", lag);
}
END_TEST

/* Persistent connections: ten 1 MB messages between the same hosts, each
 * after the last has finished (1 MB at 10 Gbps is 0.87 ms on the wire, an
 * RTT about 200 us, slow start from 10 packets needs 4 rounds to fill the
 * 170-packet BDP).  min_rto 50 ms.  Started 5 ms apart, a message finds
 * the window its predecessor left on the same connection; with a
 * connection per message each starts cold.  Started 2 s apart, idle for
 * 40 RTOs, idle restart takes the window back to init_cwnd: as cold
 * as new connections.  Without idle restart the window survives the gap. */
static double ten_messages(const char *connections, bool idle_restart, int gap_ms) {
  GString *y = g_string_new("defaults: {bandwidth: 10Gbps, latency: 100us}\n"
                            "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
                            "links: [{a: a, b: b}]\n");
  g_string_append_printf(y, "transport: {protocol: reno, connections: %s, idle_restart: %s, min_rto: 50ms}\nflows:\n",
                         connections, idle_restart ? "true" : "false");
  for (int i = 0; i < 10; i++) g_string_append_printf(y, "  - {src: a, dst: b, size: 1MB, start: %dms}\n", i * gap_ms);
  Run r = load(y->str);
  g_string_free(y, TRUE);
  go(&r);
  CsNet *net = cs_sim_net(r.sim);
  double sum = 0;
  for (uint32_t i = 1; i < 10; i++) { /* the first is cold either way */
    const CsMessageStats *m = cs_net_message(net, i);
    ck_assert(m->delivered);
    ck_assert_int_gt(m->start, cs_net_message(net, i - 1)->end); /* one after the other */
    sum += (double)(m->end - m->start) * 1e-12;
  }
  done(&r);
  return sum / 9;
}

START_TEST(test_persistent_connections) {
  double warm = ten_messages("persistent", true, 5), cold = ten_messages("per-message", true, 5);
  ck_assert_msg(cold > warm + 3 * 200e-6, "per message %.6f s, persistent %.6f s", cold, warm);
  double restarted = ten_messages("persistent", true, 2000), cold_far = ten_messages("per-message", true, 2000);
  ck_assert_msg(fabs(restarted - cold_far) <= 0.01 * cold_far, "idle restart %.6f s, per message %.6f s", restarted,
                cold_far);
  double kept = ten_messages("persistent", false, 2000);
  ck_assert_msg(kept < cold_far - 3 * 200e-6, "no idle restart %.6f s, per message %.6f s", kept, cold_far);
}
END_TEST

/* Delayed ACKs: with delayed_ack 2 a long in-order transfer takes about
 * one ACK per two data packets (quick-ACK for the first 16 packets and the
 * last one at once); with 1, one per packet. */
static uint64_t acks_with(int delayed) {
  g_autofree char *y = g_strdup_printf("defaults: {bandwidth: 10Gbps, latency: 10us}\n"
                                       "nodes: [{name: a, role: host}, {name: b, role: host}]\n"
                                       "links: [{a: a, b: b}]\n"
                                       "transport: {protocol: cubic, delayed_ack: %d, ack_delay: 40ms}\n"
                                       "flows: [{src: a, dst: b, size: 14420000B}]\n",
                                       delayed);
  Run r = load(y);
  go(&r);
  CsNetTotals t = cs_net_totals(cs_sim_net(r.sim));
  ck_assert_uint_eq(t.data.sent, 10000);
  uint64_t n = t.ack.sent;
  done(&r);
  return n;
}

START_TEST(test_delayed_acks) {
  ck_assert_uint_eq(acks_with(1), 10000);
  uint64_t two = acks_with(2);
  /* 16 quick ACKs, then (10000 - 16) / 2, and the last packet's own */
  ck_assert_msg(two >= 5000 && two <= 5020, "%llu ACKs", (unsigned long long)two);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("cc");
  TCase *c = tcase_create("cubic");
  tcase_add_test(c, test_cubic_curve);
  tcase_add_test(c, test_cubic_reno_friendly);
  tcase_add_test(c, test_cubic_fast_convergence);
  tcase_add_test(c, test_cubic_timeout);
  tcase_add_test(c, test_hystart_ack_train);
  tcase_add_test(c, test_hystart_delay);
  tcase_add_test(c, test_dctcp_one_cut_per_window);
  tcase_add_test(c, test_dctcp_alpha_counts_packets);
  tcase_add_test(c, test_bbr_probe_rtt_ends_on_restart);
  suite_add_tcase(s, c);
  TCase *n = tcase_create("network");
  tcase_set_timeout(n, 120);
  tcase_add_test(n, test_cubic_response_function);
  tcase_add_test(n, test_bbr_modes_and_bandwidth);
  tcase_add_test(n, test_bbr_holds_rate_under_loss);
  tcase_add_test(n, test_rack_tolerates_reordering);
  tcase_add_test(n, test_tail_loss_probe);
  tcase_add_test(n, test_tail_loss_probe_before_rto);
  tcase_add_test(n, test_tail_loss_probe_repair_cuts);
  tcase_add_test(n, test_queued_messages_tail_loss);
  tcase_add_test(n, test_persistent_connections);
  tcase_add_test(n, test_delayed_acks);
  suite_add_tcase(s, n);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
