/* msgstats.h - the fabrics' per-message statistics: a ring of the
 * messages from the lowest still held, by number.
 *
 * Without a retire function every message is held (messages.csv lists
 * them all).  With one, a message the fabric has marked done is handed
 * over and forgotten once every lower-numbered message is done too, so
 * memory follows the messages in flight, not the messages sent.
 *
 * Layer 3 (fabric; docs/design.md), private to sim/net.
 */
#ifndef COMMSIM_MSGSTATS_H
#define COMMSIM_MSGSTATS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "commsim/netstats.h"

typedef struct {
  CsMessageStats *v; /* message m at v[m & (cap - 1)] */
  uint8_t *done;     /* the same places: marked done */
  uint32_t base, n, cap; /* held: [base, n); cap a power of two */
  CsRetireFn retire;
  void *ctx;
} CsStatsRing;

/* Out of line: the ring doubled. */
void cs_stats_grow(CsStatsRing *r);
void cs_stats_free(CsStatsRing *r);

/* The next message's number, its statistics zeroed.  (Inline, as
 * cs_stats_done: two calls per message at flow fidelity.) */
static inline uint32_t cs_stats_add(CsStatsRing *r) {
  if (G_UNLIKELY(r->n - r->base == r->cap)) cs_stats_grow(r);
  uint32_t m = r->n++;
  memset(&r->v[m & (r->cap - 1)], 0, sizeof(CsMessageStats));
  r->done[m & (r->cap - 1)] = 0;
  return m;
}

/* Message m is done (its fabric will not touch its statistics again):
 * with a retire function, what is done from the lowest held is handed
 * over and forgotten. */
static inline void cs_stats_done(CsStatsRing *r, uint32_t m) {
  r->done[m & (r->cap - 1)] = 1;
  if (!r->retire || m != r->base) return;
  /* m is the lowest held (most messages end in the order they were
   * sent): it and the done ones after it, here without a call */
  do {
    r->retire(r->ctx, r->base, &r->v[r->base & (r->cap - 1)]);
    r->base++;
  } while (r->base < r->n && r->done[r->base & (r->cap - 1)]);
}

static inline CsMessageStats *cs_stats_at(const CsStatsRing *r, uint32_t m) {
  g_assert(m >= r->base && m < r->n); /* held (cs_fabric_first_message) */
  return &r->v[m & (r->cap - 1)];
}

#endif
