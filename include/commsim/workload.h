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
  CsLoc at; /* of `workload:` */
} CsWorkloadSpec;

/* Elements of a full bucket (the last may hold fewer): `buckets` bytes of
 * the dtype, at least one element, at most the gradient; one bucket for
 * asynchronous ps.  How many buckets that makes. */
static inline uint64_t cs_workload_bucket_elements(const CsWorkloadSpec *w) {
  uint64_t n = (uint64_t)w->params;
  uint64_t per = w->buckets > 0 ? (uint64_t)w->buckets / (uint64_t)(cs_dtype_bits(w->dtype) / 8) : n;
  if (per == 0) per = 1;
  bool async = cs_collective_has(w->collective, CS_COLLF_SERVERS) && !w->sync;
  return async || per > n ? n : per;
}
static inline uint64_t cs_workload_bucket_count(const CsWorkloadSpec *w) {
  uint64_t per = cs_workload_bucket_elements(w);
  return ((uint64_t)w->params + per - 1) / per;
}

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
