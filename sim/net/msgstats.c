/* msgstats.c - the fabrics' per-message statistics (msgstats.h). */
#include "config.h"

#include <string.h>

#include "msgstats.h"

static void grow(CsStatsRing *r) {
  uint32_t cap = r->cap ? 2 * r->cap : 64;
  g_assert(cap > r->cap); /* 2^31 messages held at once is past any run */
  CsMessageStats *v = g_new(CsMessageStats, cap);
  uint8_t *done = g_new0(uint8_t, cap);
  for (uint32_t m = r->base; m < r->n; m++) {
    v[m & (cap - 1)] = r->v[m & (r->cap - 1)];
    done[m & (cap - 1)] = r->done[m & (r->cap - 1)];
  }
  g_free(r->v);
  g_free(r->done);
  r->v = v;
  r->done = done;
  r->cap = cap;
}

uint32_t cs_stats_add(CsStatsRing *r) {
  if (r->n - r->base == r->cap) grow(r);
  uint32_t m = r->n++;
  memset(&r->v[m & (r->cap - 1)], 0, sizeof(CsMessageStats));
  r->done[m & (r->cap - 1)] = 0;
  return m;
}

void cs_stats_done(CsStatsRing *r, uint32_t m) {
  r->done[m & (r->cap - 1)] = 1;
  if (!r->retire || m != r->base) return;
  while (r->base < r->n && r->done[r->base & (r->cap - 1)]) {
    r->retire(r->ctx, r->base, &r->v[r->base & (r->cap - 1)]);
    r->base++;
  }
}

void cs_stats_free(CsStatsRing *r) {
  g_free(r->v);
  g_free(r->done);
  memset(r, 0, sizeof *r);
}
