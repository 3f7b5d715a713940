/* hold.c - the classic hold model (Jones, 1986) on the commsim engine and,
 * in the same run, on a bare hand-inlined binary heap as the reference.
 *
 * Q events are pending; each executed event schedules one more at
 * now + Exp(1 us).  Both loops draw the same delays from the same stream.
 * The bare heap holds only (time, sequence) keys, pops the minimum and
 * pushes the successor: no handler call, no pool, no cancellation.
 *
 * Usage: bench/hold [EVENTS] [Q...]   (defaults: 10000000 events; Q = 1e3 1e5 1e6)
 */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "commsim/engine.h"
#include "commsim/rng.h"

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline CsTime draw(CsRng *r) {
  return (CsTime)cs_rng_exponential(r, 1e6); /* mean 1 us in ps */
}

/* ---- engine ---- */
typedef struct {
  CsRng rng;
  uint64_t left;
} Hold;

static void hold_event(CsEngine *e, void *ctx, uint64_t arg) {
  Hold *h = ctx;
  cs_engine_schedule(e, draw(&h->rng), hold_event, h, arg);
  if (--h->left == 0) cs_engine_stop(e);
}

static double run_engine(size_t q, uint64_t events, CsTime *end_time) {
  CsEngine *e = cs_engine_new();
  Hold h;
  cs_rng_init(&h.rng, 1, 0);
  for (size_t i = 0; i < q; i++) cs_engine_schedule(e, draw(&h.rng), hold_event, &h, i);
  /* warm-up: one pass over the queue, as the bare loop does */
  h.left = q;
  cs_engine_run(e, CS_TIME_MAX);
  /* measured: exactly `events` executions */
  uint64_t start = cs_engine_events_executed(e);
  h.left = events;
  double t0 = wall();
  cs_engine_run(e, CS_TIME_MAX);
  double dt = wall() - t0;
  *end_time = cs_engine_now(e);
  uint64_t done = cs_engine_events_executed(e) - start;
  cs_engine_free(e);
  return (double)done / dt;
}

/* ---- bare binary heap ---- */
typedef struct {
  CsTime t;
  uint64_t seq;
} Key;

static inline int less(const Key *a, const Key *b) {
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static double run_bare(size_t q, uint64_t events, CsTime *end_time) {
  Key *h = malloc(sizeof(Key) * (q + 2));
  size_t n = 0;
  uint64_t seq = 0;
  CsRng rng;
  cs_rng_init(&rng, 1, 0);
  CsTime now = 0;
  uint64_t total = q + events;
  double t0 = 0;
  for (size_t i = 0; i < q; i++) {
    Key x = {draw(&rng), seq++};
    size_t j = n++;
    while (j > 0 && less(&x, &h[(j - 1) / 2])) {
      h[j] = h[(j - 1) / 2];
      j = (j - 1) / 2;
    }
    h[j] = x;
  }
  for (uint64_t k = 0; k < total; k++) {
    if (k == q) t0 = wall(); /* after the same warm-up pass */
    /* pop */
    Key top = h[0];
    now = top.t;
    Key last = h[--n];
    size_t j = 0;
    for (;;) {
      size_t c = 2 * j + 1;
      if (c >= n) break;
      if (c + 1 < n && less(&h[c + 1], &h[c])) c++;
      if (!less(&h[c], &last)) break;
      h[j] = h[c];
      j = c;
    }
    h[j] = last;
    /* push the successor */
    Key x = {now + draw(&rng), seq++};
    j = n++;
    while (j > 0 && less(&x, &h[(j - 1) / 2])) {
      h[j] = h[(j - 1) / 2];
      j = (j - 1) / 2;
    }
    h[j] = x;
  }
  double dt = wall() - t0;
  *end_time = now;
  free(h);
  return (double)events / dt;
}

int main(int argc, char **argv) {
  uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ULL;
  size_t qs_default[] = {1000, 100000, 1000000};
  size_t nq = argc > 2 ? (size_t)(argc - 2) : 3;
  printf("hold model: %" G_GUINT64_FORMAT " events per run, delays Exp(1us)\n", events);
  printf("%10s %14s %14s %8s\n", "Q", "engine ev/s", "bare-heap ev/s", "ratio");
  for (size_t i = 0; i < nq; i++) {
    size_t q = argc > 2 ? (size_t)strtoull(argv[2 + i], NULL, 10) : qs_default[i];
    CsTime te, tb;
    /* interleave three rounds and keep each one's best: the machine is shared */
    double e = 0, b = 0;
    for (int round = 0; round < 3; round++) {
      double x = run_engine(q, events, &te), y = run_bare(q, events, &tb);
      if (x > e) e = x;
      if (y > b) b = y;
    }
    if (te != tb) fprintf(stderr, "warning: end times differ (%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT ")\n", (gint64)te, (gint64)tb);
    printf("%10zu %14.3e %14.3e %8.2f\n", q, e, b, e / b);
  }
  return 0;
}
