/* test_convergence.c - time to accuracy against the known results of the
 * literature: fp16 and bf16 train as fp32 does; top-k without error
 * feedback stalls on skewed shards and recovers with it (Karimireddy et
 * al., 2019; Stich et al., 2018); signSGD's majority vote fails on skewed
 * shards and not on IID ones (Chen et al., 2020); unbiased stochastic
 * quantization's error follows its bits and costs iterations only when
 * it dominates the gradient's own noise (QSGD); time_to_target_s is the
 * simulated end of the first iteration that reaches the target.  Runs in
 * flow fidelity: the network's time only places iterations on a clock. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/sim.h"
#include "simutil.h"

static const char *base = "name: conv\n"
                          "topology: {type: star, workers: 8, servers: 1}\n"
                          "defaults: {bandwidth: 10Gbps}\n"
                          "fidelity: flow\n"
                          "workload:\n"
                          "  params: 1M\n"
                          "  iterations: 3\n"
                          "  compute: 1ms\n"
                          "  buckets: 0\n"
                          "  collective: %s\n"
                          "  compression: {method: %s, bits: %d, error_feedback: %s}\n"
                          "  convergence: {max_iterations: 3000, heterogeneity: %g, target: {loss: 0.3}}\n";

typedef struct {
  uint32_t reached; /* 0: not within max_iterations */
  double final_loss, nmse_mean;
} Outcome;

static Outcome train(const char *collective, const char *method, int bits, bool ef, double heterogeneity) {
  g_autofree char *y = g_strdup_printf(base, collective, method, bits, ef ? "true" : "false", heterogeneity);
  Run r = sim_load(y, "conv.yaml", NULL);
  sim_go(&r);
  uint32_t n, reached, simulated;
  const double *when;
  double mean;
  const CsConvPoint *p = cs_sim_convergence(r.sim, &n, &when, &reached, &simulated, &mean);
  ck_assert_uint_gt(n, 0);
  Outcome o = {reached, p[n - 1].loss, 0};
  for (uint32_t i = 0; i < n; i++) o.nmse_mean += p[i].grad_nmse / n;
  sim_done(&r);
  return o;
}

/* fp16 and bf16 reach the target in the same number of iterations as fp32
 * (within 10 %: their rounding is far below the mini-batch's noise). */
START_TEST(test_half_precision) {
  Outcome f32 = train("ring", "none", 8, false, 0), f16 = train("ring", "fp16", 8, false, 0),
          b16 = train("ring", "bf16", 8, false, 0);
  ck_assert_uint_gt(f32.reached, 10);
  ck_assert_msg(fabs((double)f16.reached - f32.reached) <= 0.1 * f32.reached, "fp16 %u, fp32 %u", f16.reached, f32.reached);
  ck_assert_msg(fabs((double)b16.reached - f32.reached) <= 0.1 * f32.reached, "bf16 %u, fp32 %u", b16.reached, f32.reached);
}
END_TEST

/* Top-k 1 % on shards where 90 % of a worker's samples are of one class:
 * without error feedback the coordinates it never sends never move and
 * training stalls short of the target in 3000 iterations; with error
 * feedback it reaches it within 10 % of the iterations uncompressed
 * allgather needs. */
START_TEST(test_topk_error_feedback) {
  Outcome plain = train("allgather", "topk", 8, false, 0.9), ef = train("allgather", "topk", 8, true, 0.9),
          none = train("allgather", "none", 8, false, 0.9);
  ck_assert_uint_gt(none.reached, 0);
  ck_assert_msg(plain.reached == 0 && plain.final_loss > 0.4, "top-k without EF: reached %u, loss %.3f", plain.reached,
                plain.final_loss);
  ck_assert_msg(ef.reached > 0 && fabs((double)ef.reached - none.reached) <= 0.1 * none.reached,
                "top-k with EF %u, none %u", ef.reached, none.reached);
}
END_TEST

/* signSGD with majority vote on a parameter server: on IID shards it
 * reaches the target; on shards of one class each (90 %) the median of the
 * workers' gradients is far from their mean and it does not in 3000
 * iterations. */
START_TEST(test_sign_majority_vote) {
  Outcome iid = train("ps", "sign", 8, false, 0), skewed = train("ps", "sign", 8, false, 0.9);
  ck_assert_uint_gt(iid.reached, 0);
  ck_assert_msg(skewed.reached == 0 && skewed.final_loss > 0.4, "sign on skewed shards: reached %u, loss %.3f",
                skewed.reached, skewed.final_loss);
}
END_TEST

/* Stochastic (unbiased) quantization: the error it adds to the aggregate
 * falls with its levels as 1 / (2^b - 1)^2 (predicted 25x from 2 to 4
 * bits; within a factor 2); at 4 and 8 bits it is below the mini-batch's
 * own noise and the iterations are fp32's within 10 %; at 2 bits (an
 * error about 10 times the mean gradient) it costs iterations. */
START_TEST(test_stochastic_variance) {
  Outcome f32 = train("ring", "none", 8, false, 0), b2 = train("ring", "stochastic", 2, false, 0),
          b4 = train("ring", "stochastic", 4, false, 0), b8 = train("ring", "stochastic", 8, false, 0);
  double ratio = b2.nmse_mean / b4.nmse_mean;
  ck_assert_msg(ratio > 25.0 / 2 && ratio < 25.0 * 2, "nmse 2 bits / 4 bits = %.1f", ratio);
  ck_assert_msg(fabs((double)b4.reached - f32.reached) <= 0.1 * f32.reached, "4 bits %u, fp32 %u", b4.reached, f32.reached);
  ck_assert_msg(fabs((double)b8.reached - f32.reached) <= 0.1 * f32.reached, "8 bits %u, fp32 %u", b8.reached, f32.reached);
  ck_assert_msg(b2.reached > 1.2 * f32.reached, "2 bits %u, fp32 %u", b2.reached, f32.reached);
}
END_TEST

/* The clock: iteration i ends when the simulated iteration i ended on its
 * last worker; time_to_target_s is that of the first iteration that
 * reaches the target; beyond the simulated iterations each takes the
 * mean measured one (after warm-up). */
START_TEST(test_clock) {
  g_autofree char *y = g_strdup_printf(base, "ring", "none", 8, "false", 0.0);
  Run r = sim_load(y, "conv.yaml", NULL);
  sim_go(&r);
  uint32_t n, reached, simulated;
  const double *when;
  double mean;
  const CsConvPoint *p = cs_sim_convergence(r.sim, &n, &when, &reached, &simulated, &mean);
  CsWorkload *wl = cs_sim_workload(r.sim);
  ck_assert_uint_eq(simulated, 3);
  ck_assert_uint_eq(n, reached); /* stop_at_target */
  ck_assert(p[reached - 1].reached && !p[reached - 2].reached);
  CsTime end[4] = {0};
  for (uint32_t i = 1; i <= 3; i++)
    for (uint32_t w = 0; w < cs_workload_workers(wl); w++)
      if (cs_workload_record(wl, w, i)->end > end[i]) end[i] = cs_workload_record(wl, w, i)->end;
  for (uint32_t i = 1; i <= 3; i++) ck_assert_double_eq_tol(when[i - 1], (double)end[i] * 1e-12, 1e-12);
  ck_assert_double_eq_tol(mean, (double)end[3] * 1e-12 / 3, 1e-12);
  ck_assert_double_eq_tol(when[reached - 1], (double)end[3] * 1e-12 + (reached - 3) * mean, 1e-9);
  GPtrArray *f = cs_sim_summary_fields(r.sim);
  const char *const *cols = cs_sim_summary_columns();
  for (guint i = 0; i < f->len; i++)
    if (!strcmp(cols[i], "iterations_to_target")) ck_assert_uint_eq(strtoul(f->pdata[i], NULL, 10), reached);
  g_ptr_array_free(f, TRUE);
  sim_done(&r);
}
END_TEST

/* A learning rate too large diverges, and the run says so, with a codec as
 * without (uniform's encoder met the first non-finite gradient before the
 * check on the parameters did, and refused to encode it instead) */
START_TEST(test_diverged) {
  const char *methods[] = {"none", "uniform"};
  for (int k = 0; k < 2; k++) {
    g_autofree char *y = g_strdup_printf(base, "ring", methods[k], 8, "false", 0.0);
    const char *sets[] = {"workload.convergence.task=mlp", "workload.convergence.lr=100", "workload.params=200K", NULL};
    Run r = sim_load(y, "conv.yaml", sets);
    GError *e = NULL;
    ck_assert(!cs_sim_run(r.sim, &e));
    ck_assert_msg(strstr(e->message, "the parameters diverged at iteration"), "%s: %s", methods[k], e->message);
    g_error_free(e);
    sim_done(&r);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("convergence");
  TCase *c = tcase_create("literature");
  tcase_set_timeout(c, 300);
  tcase_add_test(c, test_half_precision);
  tcase_add_test(c, test_topk_error_feedback);
  tcase_add_test(c, test_sign_majority_vote);
  tcase_add_test(c, test_stochastic_variance);
  tcase_add_test(c, test_clock);
  tcase_add_test(c, test_diverged);
  suite_add_tcase(s, c);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
