/* model.h - the closed-form (alpha-beta) cost of a scenario's collective,
 * the formula `commsim model` prints beside the simulation's numbers.
 *
 * Hockney's model per message, alpha + beta * bytes, with the collective
 * formulas of Thakur, Rabenseifner and Gropp (2005), made exact for an idle
 * network of store-and-forward links by its packetization terms: a message
 * of m payload bytes in N packets crosses h hops in
 *   T(m) = sum(L) + 8 * (m + N * header [+ N * ack]) / B + (h - 1) * 8 * S_last / B
 * where B is the path's bandwidth, S_last the last packet on the wire, and
 * the ACK term counts the acknowledgements that share the sender's link
 * when every worker sends and receives at once (ring, halving-doubling,
 * allgather).  Codec costs are added per step as the simulation charges
 * them.  What this leaves out is what the simulation adds: congestion,
 * loss, windows, queues and stragglers.
 */
#ifndef COMMSIM_MODEL_H
#define COMMSIM_MODEL_H

#include <glib.h>

#include "commsim/codec.h"
#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"

typedef struct {
  char *formula;      /* the collective's formula, in words and symbols */
  char *terms;        /* the values of its terms */
  double alpha_s;     /* per-message latency term: sum(L) + (h-1) S/B */
  double beta_s_per_byte;
  uint32_t hops;
  double comm_s;      /* one all-reduce of the whole gradient, network terms */
  double codec_s;     /* its codec compute on the critical path */
  double wire_bytes;  /* payload bytes a worker sends per iteration */
  double compute_s;   /* accumulation * compute */
  double iter_serial_s;  /* compute + codec + comm: no overlap */
  double iter_overlap_s; /* communication hidden behind the backward pass where it can be */
} CsModel;

bool cs_model_estimate(const CsScenario *s, const CsTopology *t, const CsRoutes *r, CsModel *m, GError **error);
void cs_model_clear(CsModel *m);

/* T(m) above for one message on the path from node a to host b. */
double cs_model_message_s(const CsScenario *s, const CsTopology *t, const CsRoutes *r, uint32_t a, uint32_t b_host,
                          uint64_t payload, bool acks_share_link);

#endif
