/* workload.h - training iterations on every worker.
 *
 * Synchronous training (every collective, and ps with sync: true), per
 * worker and iteration: `accumulation` micro-batches of `compute` each
 * (times a lognormal factor of mean 1 and coefficient of variation
 * `compute_jitter`, drawn per micro-batch from the worker's stream); in the
 * last micro-batch's backward pass (`backward_fraction` of it) gradient
 * buckets of `buckets` bytes become ready at even intervals, in reverse
 * layer order; each bucket is encoded on the worker's codec stream and
 * reduced by its own collective operation, one bucket at a time per worker
 * in order (as DDP does), overlapping the rest of the backward pass.  The
 * next iteration starts when the worker has every bucket's result.
 *
 * Asynchronous ps (sync: false): each worker, after its compute, pushes
 * its whole gradient to the servers and pulls the parameters back on its
 * own; staleness counts the other workers' updates applied between its
 * pull and its next push.
 *
 * Layer 5 (workload; docs/design.md). Owns training iterations over a
 * collective; does not touch the packet network, scenarios.
 */
#ifndef COMMSIM_WORKLOAD_H
#define COMMSIM_WORKLOAD_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/codec.h"
#include "commsim/collective.h"
#include "commsim/convergence.h"
#include "commsim/error.h"
#include "commsim/topology.h"
#include "commsim/zoo.h"

/* A scenario's workload: section. */
typedef struct {
  bool present;
  int64_t params;
  CsDtype dtype;
  int64_t iterations;
  int64_t warmup; /* first iterations left out of the summary's means */
  CsTime compute;
  double compute_jitter;
  double backward_fraction;
  int64_t buckets; /* bytes; 0 = one bucket after compute */
  int64_t accumulation;
  CsCollective collective;
  int64_t chunks;
  GArray *servers; /* CsNameRef; empty = all servers */
  bool sync, pull;
  CsCompressionSpec compression;
  CsConvergenceSpec convergence; /* time to accuracy (convergence.h) */
  /* Per-layer gradients (SPEC 7.4): set from workload.model, layers or
   * layers_csv at load, with each layer's forward and backward time;
   * params and compute are then their sums (one micro-batch).  NULL: the
   * gradient is `params` in equal buckets. */
  GArray *layers;     /* CsLayer, forward order */
  int model;          /* index into cs_zoo, -1 */
  double tflops, efficiency; /* workload.device; tflops 0 = not given */
  int64_t batch;      /* samples per micro-batch (workload.device) */
  int64_t first_bucket; /* bytes: DDP's smaller first bucket (layers only) */
  CsLoc at; /* of `workload:` */
} CsWorkloadSpec;

/* The gradient's buckets, in the order they become ready.  Without
 * layers: `buckets` bytes of the dtype each (the last may hold fewer), at
 * least one element, ready at even intervals over the backward pass.
 * With layers: PyTorch DDP's rule, tensors in reverse layer order, a
 * bucket closed once it holds at least its limit (`first_bucket` for the
 * first, `buckets` after), ready when the backward pass has produced its
 * last tensor.  One bucket for asynchronous ps, or buckets: 0. */
typedef struct {
  uint32_t n;
  uint64_t *elements; /* per bucket */
  uint32_t *first_layer, *last_layer; /* with layers: the bucket's tensors, forward order (lowest, highest) */
  /* when it is ready, as the part of the last micro-batch's compute done
   * by then (0 < ready <= 1); equal buckets keep backward_fraction's rule */
  double *ready;
  uint64_t largest;
} CsBucketPlan;

/* The plan for w; false with an error beyond 1,000,000 buckets. */
bool cs_bucket_plan(const CsWorkloadSpec *w, CsBucketPlan *plan, GError **error);
void cs_bucket_plan_clear(CsBucketPlan *plan);
/* Elements of a full equal bucket (no layers), at least 1, at most the gradient. */
uint64_t cs_workload_bucket_elements(const CsWorkloadSpec *w);

typedef struct CsWorkload CsWorkload;

/* One worker's iteration. */
typedef struct {
  CsTime start, compute_end;
  CsTime first_send;  /* first gradient byte sent; -1 if none */
  CsTime comm_end;    /* last result byte received */
  CsTime end;         /* updated parameters ready */
  CsTime codec;       /* encode, decode and reduction work on this worker */
  CsTime codec_outside; /* the part of `codec` after compute_end (not overlapping compute) */
  double staleness;   /* async ps only */
} CsIterRecord;

/* The part of an iteration in which the worker neither computes nor runs
 * codec work, only waits on the network (SPEC 6: the union of its busy
 * intervals taken out).  Compute is one interval from `start`, codec work
 * is serialized on the worker and lies within the iteration, so the
 * union is compute plus the codec work after compute_end. */
static inline CsTime cs_iter_exposed(const CsIterRecord *r) {
  CsTime e = r->end - r->compute_end - r->codec_outside;
  return e > 0 ? e : 0;
}

/* The spec (and its servers) must outlive the workload; seed drives the
 * compute jitter and the codecs. */
CsWorkload *cs_workload_new(CsCollEnv *env, CsEngine *engine, const CsWorkloadSpec *spec, uint64_t seed,
                            const CsTopology *t, GError **error);
void cs_workload_free(CsWorkload *wl);
typedef void (*CsWorkloadDoneFn)(void *ctx);
/* Start iteration 1 on every worker now; fn is called when every worker
 * has finished every iteration. */
void cs_workload_start(CsWorkload *wl, CsWorkloadDoneFn fn, void *ctx);
bool cs_workload_done(const CsWorkload *wl);

uint32_t cs_workload_workers(const CsWorkload *wl);
uint32_t cs_workload_iterations(const CsWorkload *wl);
/* Iterations are numbered from 1. NULL for one not reached. */
const CsIterRecord *cs_workload_record(const CsWorkload *wl, uint32_t worker, uint32_t iteration);
uint32_t cs_workload_buckets(const CsWorkload *wl);

#endif
