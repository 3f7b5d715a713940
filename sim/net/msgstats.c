/* msgstats.c - the fabrics' per-message statistics (msgstats.h). */
#include "config.h"

#include <string.h>

#include "msgstats.h"

void cs_stats_grow(CsStatsRing *r) {
  uint32_t cap = r->cap ? 2 * r->cap : 64;
  g_assert(cap > r->cap); /* 2^31 messages held at once is past any run */
  _Static_assert(sizeof(CsMessageStats) == 64, "a message's statistics in one cache line");
  CsMessageStats *v = g_aligned_alloc(cap, sizeof(CsMessageStats), 64);
  uint8_t *done = g_new0(uint8_t, cap);
  for (uint32_t m = r->base; m < r->n; m++) {
    v[m & (cap - 1)] = r->v[m & (r->cap - 1)];
    done[m & (cap - 1)] = r->done[m & (r->cap - 1)];
  }
  g_aligned_free(r->v);
  g_free(r->done);
  r->v = v;
  r->done = done;
  r->cap = cap;
}

void cs_stats_free(CsStatsRing *r) {
  g_aligned_free(r->v);
  g_free(r->done);
  memset(r, 0, sizeof *r);
}
