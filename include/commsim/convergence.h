/* convergence.h - time to accuracy: a small model trained for real
 * through the scenario's codec and collective (SPEC section 7.5).
 *
 * Every worker holds a shard of a synthetic classification task drawn
 * from the seed (class means N(0, separation^2 / features) per feature,
 * samples at their class's mean plus N(0, 1) noise; with heterogeneity h
 * a sample of worker w belongs to class w mod classes with probability h,
 * to a uniformly drawn class otherwise).  Each iteration every worker
 * computes the gradient of the mean cross-entropy of a mini-batch of its
 * shard - multiclass logistic regression, or an MLP with one ReLU hidden
 * layer - and the gradients go through what the simulated messages carry
 * (cs_coll_reduce_real): the codec's real kernels with each worker's error
 * feedback, the collective's reduction hops (decode, add, encode again),
 * the majority vote of sign on parameter servers, the exact sum of
 * gathered payloads, the server's encoding of the pull.  The parameters
 * move by lr times the mean.  Asynchronous ps applies each worker's
 * gradient alone, computed on parameters `staleness` updates old.  After
 * each iteration the model is evaluated on a held-out set drawn from
 * every class alike.
 *
 * Layer 5 (workload; docs/design.md). Owns the training of the small model;
 * does not touch the network, the engine or scenarios.
 */
#ifndef COMMSIM_CONVERGENCE_H
#define COMMSIM_CONVERGENCE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/codec.h"
#include "commsim/collective.h"
#include "commsim/error.h"

typedef enum { CS_TASK_LOGISTIC, CS_TASK_MLP } CsConvTask;
const char *const *cs_conv_task_names(void); /* in CsConvTask order, NULL-terminated */

/* workload.convergence */
typedef struct {
  bool present;
  uint32_t task; /* CsConvTask */
  int64_t features, classes, hidden;
  int64_t samples_per_worker, test_samples;
  double heterogeneity; /* 0: IID shards ... 1: a class per worker */
  double separation;    /* the class means' spread, in noise standard deviations */
  int64_t batch;
  double lr;
  bool target_is_loss;
  double target; /* an accuracy in (0, 1], or a loss > 0 */
  int64_t max_iterations;
  bool stop_at_target;
  CsLoc at; /* of `convergence:` */
} CsConvergenceSpec;
/* The most values (samples x features over every shard and the held-out
 * set) a task may hold: 256M floats, 1 GiB. */
#define CS_CONV_MAX_VALUES ((uint64_t)1 << 28)

/* What one iteration of training gave. */
typedef struct {
  uint32_t iteration; /* 1, 2, ... */
  double loss;        /* mean cross-entropy on the held-out set */
  double accuracy;    /* on the held-out set */
  double grad_nmse;   /* ||result - exact mean||^2 / ||exact mean||^2 of this iteration's aggregate */
  bool reached;       /* the target is met */
} CsConvPoint;

typedef struct {
  CsCollective collective;
  uint32_t workers;
  uint32_t group;      /* workers per machine (the hierarchical collective's chain) */
  bool pull;           /* ps: the servers send the sum back encoded */
  bool sync;           /* ps: false = each worker's gradient applied alone, stale */
  uint32_t staleness;  /* async ps: updates between a worker's pull and its push's application */
  CsCodecParams codec;
  uint64_t seed;
} CsConvSetup;

typedef struct CsTrainer CsTrainer;

/* The data and the model's initial parameters (all zero).  Fails with a
 * message when the codec refuses (non-finite gradients cannot happen with
 * these tasks unless lr diverges, which is reported at the step). */
CsTrainer *cs_trainer_new(const CsConvergenceSpec *spec, const CsConvSetup *setup, GError **error);
void cs_trainer_free(CsTrainer *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsTrainer, cs_trainer_free)
/* Parameters of the model (the gradient's elements). */
uint64_t cs_trainer_params(const CsTrainer *t);
/* One iteration: gradients, the collective, the update, the evaluation. */
bool cs_trainer_step(CsTrainer *t, CsConvPoint *out, GError **error);
/* The held-out loss and accuracy of the current parameters. */
void cs_trainer_evaluate(const CsTrainer *t, double *loss, double *accuracy);

#endif
