/* simutil.h - a simulation of a scenario given as text, for the suites
 * that look inside one (its network, its messages) rather than at the
 * program's files. */
#ifndef COMMSIM_SIMUTIL_H
#define COMMSIM_SIMUTIL_H

#include <check.h>
#include <glib.h>

#include "commsim/fabric.h"
#include "commsim/sim.h"

typedef struct {
  CsScenario *s;
  CsSim *sim;
} Run;

/* Load `yaml` (named `name` in messages) with the "KEY=VALUE" overrides
 * `sets` (or NULL) and set up its simulation; a failure fails the test. */
static inline Run sim_load(const char *yaml, const char *name, const char *const *sets) {
  Run r = {0};
  GError *e = NULL;
  r.s = cs_scenario_load_string(yaml, name, sets, &e);
  ck_assert_msg(r.s != NULL, "%s", e ? e->message : "");
  r.sim = cs_sim_new(r.s, &e);
  ck_assert_msg(r.sim != NULL, "%s", e ? e->message : "");
  return r;
}

/* Run it to the end; a failure fails the test. */
static inline void sim_go(Run *r) {
  GError *e = NULL;
  ck_assert_msg(cs_sim_run(r->sim, &e), "%s", e ? e->message : "");
}

/* Load `yaml` at `fidelity` with the overrides `more` (or NULL), run it to
 * the end and check that every message finished. */
static inline Run sim_run_at(const char *yaml, const char *name, const char *fidelity, const char *const *more) {
  const char *sets[16];
  int k = 0;
  g_autofree char *fid = g_strdup_printf("fidelity=%s", fidelity);
  sets[k++] = fid;
  for (const char *const *m = more; m && *m && k < 15; m++) sets[k++] = *m;
  sets[k] = NULL;
  Run r = sim_load(yaml, name, sets);
  sim_go(&r);
  ck_assert_uint_eq(cs_sim_unfinished(r.sim), 0);
  return r;
}

/* Worker w's record of iteration i (it must have ended). */
static inline const CsIterRecord *sim_rec(Run *r, uint32_t w, uint32_t i) {
  const CsIterRecord *x = cs_workload_record(cs_sim_workload(r->sim), w, i);
  ck_assert_ptr_nonnull(x);
  return x;
}

/* The last worker's end of iteration 1: when a single collective is over. */
static inline CsTime sim_iter1_end(Run *r) {
  CsTime end = 0;
  for (uint32_t w = 0; w < cs_workload_workers(cs_sim_workload(r->sim)); w++)
    if (sim_rec(r, w, 1)->end > end) end = sim_rec(r, w, 1)->end;
  return end;
}

/* The last message's delivery, in seconds (every message must have been
 * delivered). */
static inline double sim_last_end(Run *r) {
  double end = 0;
  const CsFabric *f = cs_sim_fabric(r->sim);
  for (uint32_t m = cs_fabric_first_message(f); m < cs_fabric_messages(f); m++) {
    const CsMessageStats *x = cs_fabric_message(f, m);
    ck_assert_msg(x->delivered, "message %u was not delivered", m);
    if ((double)x->end * 1e-12 > end) end = (double)x->end * 1e-12;
  }
  return end;
}

static inline void sim_done(Run *r) {
  cs_sim_free(r->sim);
  cs_scenario_free(r->s);
}

#endif
