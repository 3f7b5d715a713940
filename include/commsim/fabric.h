/* fabric.h - the message fabric: the one way collectives, workloads and
 * the run talk to a network.
 *
 * A fabric carries messages: send N bytes from host A to host B and be
 * called back when they have arrived (or been given up on), with a tag
 * for messages.csv; it says when nothing is in flight any more (idle);
 * it reports per-message and per-link statistics, samples its links for
 * links.csv, checks its own invariants, and may report packet events.
 * What happens beneath - packets, queues and a transport, or fluid flows
 * sharing links - is the implementation's: the packet network (net.h)
 * is the first, chosen by the scenario's `fidelity` through the table
 * below, the one place that knows them all (as Redis's ae.c picks one of
 * ae_epoll.c, ae_kqueue.c, ae_select.c).
 *
 * An implementation is an ops table over its own object; a hook it cannot
 * serve is NULL (a fluid model has no packet events) and the inline
 * wrappers below answer for it.
 *
 * Layer 3 (fabric; docs/design.md). Owns the message interface and the
 * fidelities' table; does not touch collectives and workloads (its callers).
 */
#ifndef COMMSIM_FABRIC_H
#define COMMSIM_FABRIC_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/engine.h"
#include "commsim/netstats.h"
#include "commsim/routing.h"
#include "commsim/topology.h"

typedef struct {
  /* messages: numbered 0, 1, 2... in the order sent */
  uint32_t (*send)(void *impl, uint32_t src_host, uint32_t dst_host, uint64_t bytes, CsDeliverFn fn,
                   void *ctx);
  void (*tag)(void *impl, uint32_t msg, uint32_t iteration, uint32_t step);
  uint32_t (*messages)(const void *impl);
  const CsMessageStats *(*message)(const void *impl, uint32_t msg);
  uint32_t (*active)(const void *impl); /* messages not finished */
  uint32_t (*failed)(const void *impl); /* messages given up on */
  void (*set_idle)(void *impl, CsIdleFn fn, void *ctx);
  /* open-loop background traffic, if the fabric carries it */
  void (*start_background)(void *impl);
  void (*stop_background)(void *impl);
  /* links */
  CsLinkStats (*link_stats)(void *impl, uint32_t link, int dir);
  void (*sample_links)(void *impl, CsTime t0, CsLinkSampleFn fn, void *ctx);
  bool (*busy)(const void *impl); /* anything on a wire or in a queue now */
  /* the run's totals and invariants */
  CsNetTotals (*totals)(const void *impl);
  bool (*check_accounting)(const void *impl, GError **error);
  bool (*check_state)(const void *impl, GError **error); /* --check's expensive invariants; may be NULL */
  /* why it stopped the engine when it cannot go on (a PFC deadlock), to
   * free; NULL: it did not.  May be NULL. */
  char *(*stuck)(const void *impl);
  void (*set_packet_trace)(void *impl, CsPacketTraceFn fn, void *ctx); /* NULL: no packet events */
  /* with a retire function, the fabric may forget a finished message's
   * statistics once every message before it has finished, handing them
   * to fn first (in number order); first_message is then the lowest
   * number still held.  NULL: it keeps every message. */
  void (*set_retire)(void *impl, CsRetireFn fn, void *ctx);
  uint32_t (*first_message)(const void *impl);
  /* the run is over with messages still in progress (its duration ended
   * it): their statistics say what they had sent by then.  May be NULL
   * (a fabric whose statistics grow as it sends). */
  void (*run_ends)(void *impl);
  void (*free)(void *impl);
} CsFabricOps;

typedef struct {
  const char *fidelity;
  unsigned models; /* CS_MODELS_*: what its reports hold */
  const CsFabricOps *ops;
  void *impl;
} CsFabric;

/* What a fidelity models (CsFidelityDef.models); what it does not, the
 * run reports as not modelled (empty cells), and the reader refuses to
 * ask of it (packets.csv; open-loop traffic other than a constant rate). */
enum {
  CS_MODELS_PACKETS = 1u << 0,   /* packets: queues, drops, losses, retransmissions, marks, packets.csv */
  CS_MODELS_OPEN_LOOP = 1u << 1, /* poisson and onoff background sources as such */
  CS_MODELS_JUMPS = 1u << 2,     /* fast-forwards steady phases: reads the scenario's hybrid: section */
};

/* The fidelities: one row per implementation.  A row without `new` is a
 * fidelity that is planned: the scenario reader refuses it, naming it. */
typedef struct {
  const char *name;
  const char *help;
  unsigned models; /* CS_MODELS_* */
  void *(*new)(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r);
  const CsFabricOps *ops;
} CsFidelityDef;

extern const CsFidelityDef cs_fidelities[]; /* terminated by a NULL name */
const CsFidelityDef *cs_fidelity_find(const char *name);
const char *const *cs_fidelity_names(void);

/* A fabric of fidelity `def` (one with `new`), from the implementation's
 * own config (the packet network's: a CsNetConfig); free with cs_fabric_free. */
CsFabric *cs_fabric_new(const CsFidelityDef *def, CsEngine *engine, const void *config, const CsTopology *t,
                        const CsRoutes *r);
void cs_fabric_free(CsFabric *f);

static inline uint32_t cs_fabric_send(CsFabric *f, uint32_t src, uint32_t dst, uint64_t bytes, CsDeliverFn fn,
                                      void *ctx) {
  return f->ops->send(f->impl, src, dst, bytes, fn, ctx);
}
static inline void cs_fabric_tag(CsFabric *f, uint32_t msg, uint32_t iteration, uint32_t step) {
  f->ops->tag(f->impl, msg, iteration, step);
}
static inline uint32_t cs_fabric_messages(const CsFabric *f) { return f->ops->messages(f->impl); }
static inline const CsMessageStats *cs_fabric_message(const CsFabric *f, uint32_t msg) {
  return f->ops->message(f->impl, msg);
}
/* The lowest message number whose statistics are held (cs_fabric_message
 * answers from it to cs_fabric_messages - 1): 0 unless the fabric retires
 * finished messages. */
static inline uint32_t cs_fabric_first_message(const CsFabric *f) {
  return f->ops->first_message ? f->ops->first_message(f->impl) : 0;
}
/* false when the fabric keeps every message anyway (fn is never called) */
static inline bool cs_fabric_set_retire(CsFabric *f, CsRetireFn fn, void *ctx) {
  if (!f->ops->set_retire) return false;
  f->ops->set_retire(f->impl, fn, ctx);
  return true;
}
static inline uint32_t cs_fabric_active(const CsFabric *f) { return f->ops->active(f->impl); }
static inline uint32_t cs_fabric_failed(const CsFabric *f) { return f->ops->failed(f->impl); }
static inline void cs_fabric_set_idle(CsFabric *f, CsIdleFn fn, void *ctx) { f->ops->set_idle(f->impl, fn, ctx); }
static inline void cs_fabric_start_background(CsFabric *f) {
  if (f->ops->start_background) f->ops->start_background(f->impl);
}
static inline void cs_fabric_stop_background(CsFabric *f) {
  if (f->ops->stop_background) f->ops->stop_background(f->impl);
}
static inline CsLinkStats cs_fabric_link_stats(CsFabric *f, uint32_t link, int dir) {
  return f->ops->link_stats(f->impl, link, dir);
}
static inline void cs_fabric_sample_links(CsFabric *f, CsTime t0, CsLinkSampleFn fn, void *ctx) {
  f->ops->sample_links(f->impl, t0, fn, ctx);
}
static inline void cs_fabric_run_ends(CsFabric *f) {
  if (f->ops->run_ends) f->ops->run_ends(f->impl);
}
static inline bool cs_fabric_busy(const CsFabric *f) { return f->ops->busy(f->impl); }
static inline CsNetTotals cs_fabric_totals(const CsFabric *f) { return f->ops->totals(f->impl); }
static inline bool cs_fabric_check_accounting(const CsFabric *f, GError **error) {
  return f->ops->check_accounting(f->impl, error);
}
static inline char *cs_fabric_stuck(const CsFabric *f) { return f->ops->stuck ? f->ops->stuck(f->impl) : NULL; }
static inline bool cs_fabric_check_state(const CsFabric *f, GError **error) {
  return !f->ops->check_state || f->ops->check_state(f->impl, error);
}
/* false when the fabric has no packet events to give */
static inline bool cs_fabric_set_packet_trace(CsFabric *f, CsPacketTraceFn fn, void *ctx) {
  if (!f->ops->set_packet_trace) return false;
  f->ops->set_packet_trace(f->impl, fn, ctx);
  return true;
}

#endif
