/* train.c - time to accuracy: after the run, the small model of
 * workload.convergence is trained for real (convergence.h) and each of
 * its iterations is placed on the run's clock: iteration i ends when the
 * simulated iteration i ended on its last worker; iterations beyond the
 * simulated ones take the mean measured iteration (after warm-up) each. */
#include "config.h"

#include "sim_private.h"

/* When iteration i (1-based) ended on its last worker, or -1. */
static CsTime iteration_end(CsSim *sim, uint32_t i) {
  CsTime end = -1;
  for (uint32_t w = 0; w < cs_workload_workers(sim->wl); w++) {
    const CsIterRecord *r = cs_workload_record(sim->wl, w, i);
    if (!r) return -1;
    if (r->end > end) end = r->end;
  }
  return end;
}

const CsConvPoint *cs_sim_convergence(const CsSim *sim, uint32_t *n, const double **time_s, uint32_t *reached,
                                      uint32_t *simulated, double *mean_s) {
  *n = sim->conv ? sim->conv->len : 0;
  *time_s = sim->conv_time ? (const double *)sim->conv_time->data : NULL;
  *reached = sim->conv_reached;
  *simulated = sim->conv_simulated;
  *mean_s = sim->conv_mean_s;
  return sim->conv ? (const CsConvPoint *)sim->conv->data : NULL;
}

bool cs_sim_train(CsSim *sim, GError **error) {
  const CsScenario *s = sim->s;
  const CsConvergenceSpec *c = &s->workload.convergence;
  if (!sim->wl || !c->present) return true;
  uint32_t P = cs_workload_workers(sim->wl); /* the task's size was checked before the run (world.c) */
  /* the simulated clock: when each iteration ended on its last worker */
  g_autofree CsTime *ends = g_new(CsTime, cs_workload_iterations(sim->wl) + 1);
  uint32_t I = 0;
  while (I < cs_workload_iterations(sim->wl) && (ends[I + 1] = iteration_end(sim, I + 1)) >= 0) I++;
  if (I == 0) {
    cs_error_at(error, c->at, "workload.convergence: no iteration of the run ended, so there is no clock to train on");
    return false;
  }
  uint32_t first = (uint32_t)MIN((int64_t)I - 1, s->workload.warmup);
  ends[0] = 0;
  sim->conv_mean_s = (double)(ends[I] - ends[first]) / (double)(I - first) * 1e-12;
  CsConvSetup setup = {.collective = s->workload.collective,
                       .workers = P,
                       .group = sim->t->gpus_per_host,
                       .pull = s->workload.pull,
                       .sync = s->workload.sync,
                       .staleness = (uint32_t)lround(cs_sim_summary(sim)->staleness_mean),
                       .seed = s->seed};
  CsCodecCost cost;
  if (!cs_codec_from_spec(&s->workload.compression, s->workload.dtype, s->seed, &setup.codec, &cost, error)) return false;
  g_autoptr(CsTrainer) t = cs_trainer_new(c, &setup, error);
  if (!t) return false;
  sim->conv = g_array_new(FALSE, FALSE, sizeof(CsConvPoint));
  sim->conv_time = g_array_new(FALSE, FALSE, sizeof(double));
  sim->conv_simulated = I;
  for (uint32_t i = 1; i <= (uint32_t)c->max_iterations; i++) {
    CsConvPoint pt;
    if (!cs_trainer_step(t, &pt, error)) {
      g_prefix_error(error, "%s: ", s->file);
      return false;
    }
    double time = i <= I ? (double)ends[i] * 1e-12 : (double)ends[I] * 1e-12 + (i - I) * sim->conv_mean_s;
    g_array_append_val(sim->conv, pt);
    g_array_append_val(sim->conv_time, time);
    if (pt.reached && !sim->conv_reached) sim->conv_reached = i;
    if (pt.reached && c->stop_at_target) break;
  }
  return true;
}
