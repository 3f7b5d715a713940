/* model.h - the closed-form estimate of a scenario's training iteration,
 * what `commsim model` prints beside the simulation's numbers.
 *
 * A collective is a sequence of steps; in each step some messages travel
 * at once (a ring's P neighbours, the pushes to one server, a level of the
 * binomial tree).  A step takes the time its busiest link direction needs
 * for what crosses it, data and the ACKs of the messages going the other
 * way, plus the latency terms of its slowest path:
 *
 *   step = max over link directions d of 8 load(d) / B(d)
 *        + max over messages of (sum of the path's latencies
 *                                + one last packet's store-and-forward at each other hop)
 *
 * when its messages reach the links they share at once (a direction
 * shares its rate among the messages that have reached it: the far
 * messages' latencies of an incast pass while the near ones are sent;
 * closed_form.h),
 * on the routes the simulation uses (ECMP: a path per message, as its
 * hash draws it, a step the mean over up to 16 draws; at least as long
 * as its largest message's wire bytes on its path's slowest link), with
 * messages cut into packets of
 * `mtu` with their headers.  On an idle network this is Hockney's
 * alpha-beta with the collective formulas of Thakur, Rabenseifner and
 * Gropp (2005), made exact by the packetization terms; where the
 * collective's own messages share a link (incast at a server, neighbours
 * across an oversubscribed uplink) the busiest link says how much, as
 * ASTRA-sim's analytical backend does.  Each worker handles its buckets
 * one after another as they become ready in the backward pass; a ps
 * worker pushes its shards one after another, servers pull to workers in
 * rank order, and the next bucket's pushes overlap the last pulls.  Codec
 * work is added where the simulation charges it.  What this leaves out is
 * what the simulation adds: windows, queues, drops, loss, retransmissions,
 * background traffic and stragglers.
 *
 * Layer 5 (workload; docs/design.md). Owns the closed-form estimate of an
 * iteration; does not touch the simulation, scenarios.
 */
#ifndef COMMSIM_MODEL_H
#define COMMSIM_MODEL_H

#include <glib.h>

#include "commsim/closed_form.h"
#include "commsim/codec.h"
#include "commsim/net.h"
#include "commsim/routing.h"
#include "commsim/topology.h"
#include "commsim/workload.h"

typedef struct {
  char *formula;      /* the collective's step structure, in words and symbols */
  char *terms;        /* the values of its terms */
  GArray *steps;      /* CsModelStep: the rounds of the largest bucket's operation */
  uint32_t buckets;
  double hops_mean;   /* mean hops of the collective's messages */
  double comm_s;      /* network time of every bucket's collective, back to back, for the last worker */
  double comm_mean_s; /* the same per worker, first byte sent to last byte received, mean over workers */
  double codec_s;     /* each worker's codec work (encode, reductions, decode) */
  double server_s;    /* ps: the servers' summing left on the critical path (most overlaps the pushes) */
  double wire_bytes;  /* payload bytes a worker sends per iteration */
  double messages;    /* messages an iteration sends, every participant's (servers' too), from the plan:
                       * exact up to 4 M steps of workers, scaled from the first ones past that */
  double compute_s;   /* accumulation * compute */
  double iter_serial_s;  /* compute + codec + communication: no overlap */
  double iter_overlap_s; /* buckets communicated during the backward pass: mean over workers */
  double iter_last_s;    /* the same for the last worker to finish */
  uint8_t *dirs_used;    /* per link direction (2 * link + dir): 1 if the collective's traffic crosses it */
  uint32_t n_dirs_used;
} CsModel;

/* The estimate of a workload on a network (the packets' sizes from the
 * transport; `routing` as the routes were built). */
bool cs_model_estimate_spec(const CsWorkloadSpec *w, const CsTransportSpec *tr, CsRouting routing,
                            const CsTopology *t, const CsRoutes *r, CsModel *m, GError **error);
void cs_model_clear(CsModel *m);

#endif
