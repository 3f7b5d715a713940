/* test_engine.c - ordering, cancellation, limits and a randomized
 * comparison of the engine against a sorted reference list. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/arena.h"
#include "commsim/engine.h"
#include "commsim/rng.h"

/* A log of (time, arg) pairs in execution order. */
typedef struct {
  CsTime time[4096];
  uint64_t arg[4096];
  int n;
} Log;

static void record(CsEngine *e, void *ctx, uint64_t arg) {
  Log *log = ctx;
  ck_assert_int_lt(log->n, 4096);
  log->time[log->n] = cs_engine_now(e);
  log->arg[log->n] = arg;
  log->n++;
}

START_TEST(test_order_by_time) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  CsTime times[] = {50, 10, 40, 20, 30};
  for (int i = 0; i < 5; i++) cs_engine_schedule_at(e, times[i], record, &log, (uint64_t)i);
  ck_assert_int_eq(cs_engine_pending(e), 5);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(log.n, 5);
  /* sorted times 10,20,30,40,50 are args 1,3,4,2,0 */
  uint64_t want[] = {1, 3, 4, 2, 0};
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(log.time[i], (i + 1) * 10);
    ck_assert_uint_eq(log.arg[i], want[i]);
  }
  ck_assert_uint_eq(cs_engine_events_executed(e), 5);
  ck_assert_int_eq(cs_engine_now(e), 50);
  cs_engine_free(e);
}
END_TEST

START_TEST(test_fifo_ties) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  /* 1000 events at the same time, interleaved with events at other times:
   * equal times run in scheduling order. */
  for (int i = 0; i < 1000; i++) {
    cs_engine_schedule_at(e, 7 * CS_US, record, &log, (uint64_t)i);
    if (i % 3 == 0) cs_engine_schedule_at(e, 9 * CS_US, record, &log, 100000 + (uint64_t)i);
  }
  cs_engine_run(e, CS_TIME_MAX);
  for (int i = 0; i < 1000; i++) ck_assert_uint_eq(log.arg[i], (uint64_t)i);
  for (int i = 1000; i < log.n; i++) ck_assert_uint_eq(log.arg[i], 100000 + (uint64_t)(i - 1000) * 3);
  cs_engine_free(e);
}
END_TEST

/* A handler that schedules children at now + 0 must run them after every
 * event already queued for now (FIFO), even with the in-place top reuse. */
static Log chain_log;
static void chain(CsEngine *e, void *ctx, uint64_t arg) {
  record(e, &chain_log, arg);
  if (arg < 3) {
    cs_engine_schedule(e, 0, chain, ctx, arg + 10);
    cs_engine_schedule(e, 0, chain, ctx, arg + 20);
  }
}

START_TEST(test_zero_delay_fifo) {
  CsEngine *e = cs_engine_new();
  chain_log.n = 0;
  for (uint64_t i = 0; i < 3; i++) cs_engine_schedule_at(e, 5, chain, NULL, i);
  cs_engine_run(e, CS_TIME_MAX);
  uint64_t want[] = {0, 1, 2, 10, 20, 11, 21, 12, 22};
  ck_assert_int_eq(chain_log.n, 9);
  for (int i = 0; i < 9; i++) ck_assert_uint_eq(chain_log.arg[i], want[i]);
  cs_engine_free(e);
}
END_TEST

START_TEST(test_cancel) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  CsEventId a = cs_engine_schedule_at(e, 10, record, &log, 1);
  CsEventId b = cs_engine_schedule_at(e, 20, record, &log, 2);
  CsEventId c = cs_engine_schedule_at(e, 30, record, &log, 3);
  ck_assert(cs_engine_is_pending(e, b));
  ck_assert(cs_engine_cancel(e, b));
  ck_assert(!cs_engine_cancel(e, b)); /* twice: no-op */
  ck_assert(!cs_engine_is_pending(e, b));
  ck_assert_int_eq(cs_engine_pending(e), 2);
  ck_assert(!cs_engine_cancel(e, CS_EVENT_NONE));
  cs_engine_run(e, CS_TIME_MAX);
  ck_assert_int_eq(log.n, 2);
  ck_assert_uint_eq(log.arg[0], 1);
  ck_assert_uint_eq(log.arg[1], 3);
  ck_assert_uint_eq(cs_engine_events_executed(e), 2);
  /* Executed ids are stale: cancelling them does nothing, even after their
   * slots are reused by new events. */
  ck_assert(!cs_engine_cancel(e, a));
  CsEventId d = cs_engine_schedule_at(e, 40, record, &log, 4);
  ck_assert(!cs_engine_cancel(e, c));
  ck_assert(cs_engine_is_pending(e, d));
  cs_engine_run(e, CS_TIME_MAX);
  ck_assert_int_eq(log.n, 3);
  cs_engine_free(e);
}
END_TEST

/* An event that cancels another due at the same time. */
static CsEventId victim;
static void killer(CsEngine *e, void *ctx, uint64_t arg) {
  ck_assert(cs_engine_cancel(e, victim));
  record(e, ctx, arg);
}

START_TEST(test_cancel_from_handler) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  cs_engine_schedule_at(e, 10, killer, &log, 1);
  victim = cs_engine_schedule_at(e, 10, record, &log, 2);
  cs_engine_schedule_at(e, 10, record, &log, 3);
  cs_engine_run(e, CS_TIME_MAX);
  ck_assert_int_eq(log.n, 2);
  ck_assert_uint_eq(log.arg[1], 3);
  cs_engine_free(e);
}
END_TEST

START_TEST(test_time_limit) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  for (int i = 1; i <= 10; i++) cs_engine_schedule_at(e, i * CS_MS, record, &log, (uint64_t)i);
  /* The limit is inclusive: the event at exactly 4 ms runs. */
  ck_assert_int_eq(cs_engine_run(e, 4 * CS_MS), CS_RUN_LIMIT);
  ck_assert_int_eq(log.n, 4);
  ck_assert_int_eq(cs_engine_now(e), 4 * CS_MS);
  ck_assert_int_eq(cs_engine_run(e, 4500 * CS_US), CS_RUN_LIMIT);
  ck_assert_int_eq(cs_engine_now(e), 4500 * CS_US); /* the clock advances to the limit */
  ck_assert_int_eq(cs_engine_next_time(e), 5 * CS_MS);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(log.n, 10);
  ck_assert_int_eq(cs_engine_next_time(e), CS_TIME_MAX);
  cs_engine_free(e);
}
END_TEST

static void stopper(CsEngine *e, void *ctx, uint64_t arg) {
  record(e, ctx, arg);
  if (arg == 3) cs_engine_stop(e);
}

START_TEST(test_stop) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  for (int i = 1; i <= 6; i++) cs_engine_schedule_at(e, i, stopper, &log, (uint64_t)i);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_STOPPED);
  ck_assert_int_eq(log.n, 3);
  ck_assert_int_eq(cs_engine_pending(e), 3);
  /* run again: continues */
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(log.n, 6);
  cs_engine_free(e);
}
END_TEST

static void far_future(CsEngine *e, void *ctx, uint64_t arg) {
  record(e, ctx, arg);
  /* now = 1 s; a delay of CS_TIME_MAX overflows. */
  ck_assert_uint_eq(cs_engine_schedule(e, CS_TIME_MAX, record, ctx, 99), CS_EVENT_NONE);
}

START_TEST(test_overflow) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  cs_engine_schedule_at(e, CS_SEC, far_future, &log, 1);
  cs_engine_schedule_at(e, 2 * CS_SEC, record, &log, 2);
  /* with a limit before the end of time, the dropped event does not matter */
  ck_assert_int_eq(cs_engine_run(e, 10 * CS_SEC), CS_RUN_EMPTY);
  /* the event at 2 s still runs; then nothing is left but the dropped one */
  ck_assert_int_eq(log.n, 2);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_OVERFLOW);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_OVERFLOW); /* sticky */
  cs_engine_free(e);
}
END_TEST

/* A timer moved earlier again and again (cancel, schedule sooner) beside
 * a few live events: the cancelled entries do not pile up in the queue
 * (at most a quarter of it, once past 8), and the events still run in
 * their order, the moved timer at its last time. */
typedef struct {
  CsEngine *e;
  CsEventId timer;
  CsTime timer_at;
  int ticks, timer_runs;
  size_t most_queued;
  CsTime last;
} Rearm;

static void rearm_timer(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  Rearm *r = ctx;
  ck_assert_int_eq(cs_engine_now(e), r->timer_at);
  r->timer_runs++;
}

static void rearm_tick(CsEngine *e, void *ctx, uint64_t arg) {
  Rearm *r = ctx;
  ck_assert_int_ge(cs_engine_now(e), r->last);
  r->last = cs_engine_now(e);
  r->ticks++;
  /* the timer comes 1 ps sooner each tick, far after every tick */
  ck_assert(cs_engine_cancel(e, r->timer));
  r->timer_at--;
  r->timer = cs_engine_schedule_at(e, r->timer_at, rearm_timer, r, 0);
  size_t q = cs_engine_queued(e);
  if (q > r->most_queued) r->most_queued = q;
  ck_assert_uint_le(cs_engine_pending(e), 4 + 1); /* the other chains' ticks and the timer */
  if (arg + 5 < 1000) cs_engine_schedule(e, 5, rearm_tick, r, arg + 5);
}

START_TEST(test_cancelled_entries_dropped) {
  Rearm r = {.e = cs_engine_new(), .timer_at = 1000000};
  r.timer = cs_engine_schedule_at(r.e, r.timer_at, rearm_timer, &r, 0);
  for (uint64_t k = 0; k < 5; k++) cs_engine_schedule_at(r.e, (CsTime)k, rearm_tick, &r, k);
  ck_assert_int_eq(cs_engine_run(r.e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(r.timer_runs, 1);
  ck_assert_int_eq(r.ticks, 1000); /* five chains of 200 */
  ck_assert_int_eq(r.timer_at, 1000000 - 1000);
  /* 6 live entries: without dropping, the ~1000 cancelled timers stayed queued */
  ck_assert_uint_le(r.most_queued, 6 + 8);
  ck_assert_uint_eq(cs_engine_queued(r.e), 0);
  cs_engine_free(r.e);
}
END_TEST

/* Randomized: a mix of schedule (from inside handlers, at random delays
 * including ties), cancel and limits; the execution order must equal the
 * reference: all surviving events sorted by (time, scheduling order). */
typedef struct {
  CsTime time;
  uint64_t seq;
  bool cancelled;
  bool ran;
} Ref;

typedef struct {
  CsEngine *e;
  CsRng rng;
  Ref *ref;
  CsEventId *ids;
  uint64_t n, cap;
  uint64_t *order;
  uint64_t n_order;
  bool timers; /* half the events as timers (their own heap), at random */
  bool wide;   /* delays from 1 ps to about 1 s, not only 0-7 ns: the calendar's overflow, its widths chosen anew */
  size_t most_queued; /* the most events pending at once */
} World;

static void rand_handler(CsEngine *e, void *ctx, uint64_t arg);

static void rand_schedule(World *w) {
  if (w->n >= w->cap) return;
  CsTime delay = (CsTime)cs_rng_below(&w->rng, 8) * 1000; /* many ties */
  if (w->wide && cs_rng_below(&w->rng, 2)) /* a power of two from 1 ps to 2^40 ps (1.1 s), give or take */
    delay = ((CsTime)1 << cs_rng_below(&w->rng, 41)) + (CsTime)cs_rng_below(&w->rng, 1000);
  uint64_t k = w->n++;
  w->ref[k] = (Ref){cs_engine_now(w->e) + delay, k, false, false};
  if (w->timers && cs_rng_below(&w->rng, 2))
    w->ids[k] = cs_engine_schedule_timer_at(w->e, cs_engine_now(w->e) + delay, rand_handler, w, k);
  else
    w->ids[k] = cs_engine_schedule(w->e, delay, rand_handler, w, k);
}

static void rand_handler(CsEngine *e, void *ctx, uint64_t arg) {
  World *w = ctx;
  ck_assert(!w->ref[arg].cancelled);
  ck_assert(!w->ref[arg].ran);
  ck_assert_int_eq(cs_engine_now(e), w->ref[arg].time);
  w->ref[arg].ran = true;
  w->order[w->n_order++] = arg;
  if (cs_engine_queued(e) > w->most_queued) w->most_queued = cs_engine_queued(e);
  int children = (int)cs_rng_below(&w->rng, 4); /* 0..3: grows until cap, then drains */
  for (int i = 0; i < children; i++) rand_schedule(w);
  if (cs_rng_below(&w->rng, 5) == 0 && w->n > 0) {
    uint64_t victim_k = cs_rng_below(&w->rng, w->n);
    bool was = !w->ref[victim_k].cancelled && !w->ref[victim_k].ran;
    ck_assert_int_eq(cs_engine_cancel(e, w->ids[victim_k]), was);
    if (was) w->ref[victim_k].cancelled = true;
  }
}

static int ref_cmp(const void *a, const void *b) {
  const Ref *x = a, *y = b;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

START_TEST(test_randomized_against_sorted_reference) {
  World w = {0};
  w.e = cs_engine_new();
  cs_rng_init(&w.rng, 42, (uint64_t)_i);
  w.timers = _i % 8 >= 4; /* the same with timers mixed in: one order across both heaps */
  w.wide = _i >= 8;
  /* two of each eight cross 2^32 schedules (the engine renumbers the
   * pending events of both heaps there) after some 1,000 of the run's */
  if (_i % 8 >= 6) cs_engine_set_next_seq(w.e, ((uint64_t)1 << 32) - 1000);
  w.cap = 100000;
  w.ref = g_new(Ref, w.cap);
  w.ids = g_new(CsEventId, w.cap);
  w.order = g_new(uint64_t, w.cap);
  for (int i = 0; i < 500; i++) rand_schedule(&w);
  /* run in slices to exercise the limit path too */
  CsTime t = 0;
  CsRunResult r;
  do {
    t += 3500;
    r = cs_engine_run(w.e, t);
  } while (r == CS_RUN_LIMIT);
  ck_assert_int_eq(r, CS_RUN_EMPTY);
  ck_assert_int_eq(cs_engine_pending(w.e), 0);

  /* The reference: every event that was never cancelled, sorted. Events
   * cancelled after they ran were not cancelled (cancel returned false). */
  Ref *sorted = g_new(Ref, w.n);
  uint64_t m = 0;
  for (uint64_t k = 0; k < w.n; k++)
    if (!w.ref[k].cancelled) sorted[m++] = w.ref[k];
  qsort(sorted, m, sizeof *sorted, ref_cmp);
  ck_assert_uint_eq(m, w.n_order);
  ck_assert_uint_eq(cs_engine_events_executed(w.e), m);
  for (uint64_t i = 0; i < m; i++) ck_assert_uint_eq(w.order[i], sorted[i].seq);
  ck_assert_uint_gt(m, 10000); /* the test did real work */
  ck_assert_uint_gt(w.most_queued, 4096); /* past the small heaps' sift: the large one's (over 256 entries) was used */
  /* and past 16: the calendar held the later events */
  ck_assert_uint_ge(cs_engine_calendar_starts(w.e), 1);
  g_free(sorted);
  g_free(w.ref);
  g_free(w.ids);
  g_free(w.order);
  cs_engine_free(w.e);
}
END_TEST

/* Same program, same seed: the same sequence twice. */
static uint64_t run_hash(uint64_t seed) {
  World w = {0};
  w.e = cs_engine_new();
  cs_rng_init(&w.rng, seed, 0);
  w.cap = 20000;
  w.ref = g_new(Ref, w.cap);
  w.ids = g_new(CsEventId, w.cap);
  w.order = g_new(uint64_t, w.cap);
  for (int i = 0; i < 100; i++) rand_schedule(&w);
  cs_engine_run(w.e, CS_TIME_MAX);
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t i = 0; i < w.n_order; i++) h = (h ^ w.order[i]) * 1099511628211ULL;
  g_free(w.ref);
  g_free(w.ids);
  g_free(w.order);
  cs_engine_free(w.e);
  return h;
}

/* The daemon (a sampler): runs every 10 ps while other events remain,
 * before the events of its own time, is not counted, and never keeps a
 * run going: the clock ends at the last other event (35), not at the
 * daemon's next time (40). */
static void daemon_tick(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  Log *log = ctx;
  record(e, log, 999);
  cs_engine_set_daemon(e, cs_engine_now(e) + 10, daemon_tick, log);
}

START_TEST(test_daemon) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  cs_engine_schedule_at(e, 20, record, &log, 1);
  cs_engine_schedule_at(e, 35, record, &log, 2);
  cs_engine_set_daemon(e, 10, daemon_tick, &log);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  CsTime want_t[] = {10, 20, 20, 30, 35};
  uint64_t want_a[] = {999, 999, 1, 999, 2};
  ck_assert_int_eq(log.n, 5);
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(log.time[i], want_t[i]);
    ck_assert_uint_eq(log.arg[i], want_a[i]);
  }
  ck_assert_int_eq(cs_engine_now(e), 35);
  ck_assert_uint_eq(cs_engine_events_executed(e), 2);
  cs_engine_free(e);
}
END_TEST

/* A daemon far more frequent than the events (a 1 ps sampler before an
 * event at 1 us) still lets the hook run: here it stops the run at its
 * first call, after 100 daemon runs, before the event (which would have
 * run after a million daemon runs with the hook never called). */
static void daemon_every_ps(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  (*(uint64_t *)ctx)++;
  cs_engine_set_daemon(e, cs_engine_now(e) + 1, daemon_every_ps, ctx);
}
static bool stop_hook(CsEngine *e, void *ctx) {
  (void)e;
  (*(int *)ctx)++;
  return false;
}
static void never(CsEngine *e, void *ctx, uint64_t arg) {
  (void)e, (void)ctx, (void)arg;
}
START_TEST(test_daemon_lets_hook_run) {
  CsEngine *e = cs_engine_new();
  uint64_t ticks = 0;
  int calls = 0;
  cs_engine_schedule_at(e, 1000000, never, NULL, 0);
  cs_engine_set_daemon(e, 0, daemon_every_ps, &ticks);
  cs_engine_set_hook(e, 100, stop_hook, &calls);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_STOPPED);
  ck_assert_int_eq(calls, 1);
  ck_assert_uint_eq(ticks, 100);
  ck_assert_uint_eq(cs_engine_events_executed(e), 0);
  ck_assert_int_lt(cs_engine_now(e), 1000000);
  cs_engine_free(e);
}
END_TEST

START_TEST(test_deterministic) {
  ck_assert_uint_eq(run_hash(7), run_hash(7));
  ck_assert_uint_ne(run_hash(7), run_hash(8));
}
END_TEST

/* cs_engine_peek_arg: the argument of the event that comes next if its
 * function is the one asked about.  While an event runs, its own place
 * does not count: the next is the least of the others. */
typedef struct {
  uint64_t seen[8]; /* what peek gave for `record`, by the running event's arg */
} Peek;

static void peeking(CsEngine *e, void *ctx, uint64_t arg) {
  Peek *pk = ctx;
  pk->seen[arg] = cs_engine_peek_arg(e, peeking);
}

START_TEST(test_peek_arg) {
  CsEngine *e = cs_engine_new();
  Peek pk = {{0}};
  ck_assert_uint_eq(cs_engine_peek_arg(e, peeking), UINT64_MAX); /* nothing pending */
  /* times 40, 10, 30, 20 for args 0..3; and at 25 an event of another function */
  CsTime at[] = {40, 10, 30, 20};
  for (uint64_t i = 0; i < 4; i++) cs_engine_schedule_at(e, at[i], peeking, &pk, i);
  Log log = {.n = 0};
  cs_engine_schedule_at(e, 25, record, &log, 7);
  ck_assert_uint_eq(cs_engine_peek_arg(e, peeking), 1); /* 10 comes first */
  ck_assert_uint_eq(cs_engine_peek_arg(e, record), UINT64_MAX);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  /* at 10 the next is 20 (arg 3); at 20 it is `record` at 25; at 30, 40 (arg 0); at 40 none */
  ck_assert_uint_eq(pk.seen[1], 3);
  ck_assert_uint_eq(pk.seen[3], UINT64_MAX);
  ck_assert_uint_eq(pk.seen[2], 0);
  ck_assert_uint_eq(pk.seen[0], UINT64_MAX);
  ck_assert_int_eq(log.n, 1);
  cs_engine_free(e);
}
END_TEST

/* next_time asked from a handler: the running event's entry does not
 * count, so it is the time of the event that runs next (when the handler
 * schedules nothing), whether that is a child of the heap's top, a tie at
 * the same instant, or a timer.  500 events and 100 timers at times drawn
 * from 0..299 (many ties); each handler records what next_time says, and
 * the next handler's time must be it. */
typedef struct {
  CsTime now[600], next[600];
  int n;
} NextLog;

static void ask_next(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  NextLog *l = ctx;
  l->now[l->n] = cs_engine_now(e);
  l->next[l->n++] = cs_engine_next_time(e);
}

START_TEST(test_next_time_in_handler) {
  CsEngine *e = cs_engine_new();
  NextLog *l = g_new0(NextLog, 1);
  uint32_t x = 12345;
  for (int i = 0; i < 600; i++) {
    x = x * 1103515245u + 12345u;
    CsTime t = (CsTime)((x >> 16) % 300);
    if (i % 6 == 5) cs_engine_schedule_timer_at(e, t, ask_next, l, 0);
    else cs_engine_schedule_at(e, t, ask_next, l, 0);
  }
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(l->n, 600);
  for (int i = 0; i + 1 < 600; i++) {
    ck_assert_int_le(l->now[i], l->now[i + 1]);
    ck_assert_int_eq(l->next[i], l->now[i + 1]);
  }
  ck_assert_int_eq(l->next[599], CS_TIME_MAX);
  g_free(l);
  cs_engine_free(e);
}
END_TEST

/* ... and an event cancelled from the handler does not count: A and B at
 * 10, C at 20; A cancels B and asks: 20. */
typedef struct {
  CsEventId b;
  CsTime next;
} CancelAsk;

static void cancel_then_ask(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  CancelAsk *c = ctx;
  ck_assert(cs_engine_cancel(e, c->b));
  c->next = cs_engine_next_time(e);
  cs_engine_stop(e);
}

START_TEST(test_next_time_after_cancel) {
  CsEngine *e = cs_engine_new();
  CancelAsk c = {0, -1};
  Log log = {.n = 0};
  cs_engine_schedule_at(e, 10, cancel_then_ask, &c, 0);
  c.b = cs_engine_schedule_at(e, 10, record, &log, 1);
  cs_engine_schedule_at(e, 20, record, &log, 2);
  cs_engine_run(e, CS_TIME_MAX);
  ck_assert_int_eq(c.next, 20);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(log.n, 1);
  ck_assert_uint_eq(log.arg[0], 2);
  cs_engine_free(e);
}
END_TEST

/* Timers (their own heap) and events are one order: by time, then by
 * scheduling order across both.  A timer that sets itself again from its
 * handler keeps its turn; a cancelled timer does not run; counts,
 * next_time and peek_arg see the timers. */
static void timer_again(CsEngine *e, void *ctx, uint64_t arg) {
  record(e, ctx, arg);
  if (arg < 102) cs_engine_schedule_timer_at(e, cs_engine_now(e) + 10, timer_again, ctx, arg + 1);
}

START_TEST(test_timers) {
  CsEngine *e = cs_engine_new();
  Log log = {.n = 0};
  cs_engine_schedule_at(e, 10, record, &log, 1);
  cs_engine_schedule_timer_at(e, 10, record, &log, 2);
  cs_engine_schedule_at(e, 10, record, &log, 3);
  cs_engine_schedule_timer_at(e, 5, record, &log, 4);
  CsEventId gone = cs_engine_schedule_timer_at(e, 7, record, &log, 5);
  cs_engine_schedule_timer_at(e, 12, timer_again, &log, 100); /* at 12, 22, 32 */
  cs_engine_schedule_at(e, 22, record, &log, 6);             /* before the timer set at 12 for 22 */
  cs_engine_schedule_at(e, 30, record, &log, 7);
  ck_assert_int_eq(cs_engine_pending(e), 8);
  ck_assert_int_eq(cs_engine_next_time(e), 5);
  ck_assert(cs_engine_cancel(e, gone));
  ck_assert_int_eq(cs_engine_pending(e), 7);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  uint64_t want_arg[] = {4, 1, 2, 3, 100, 6, 101, 7, 102};
  CsTime want_t[] = {5, 10, 10, 10, 12, 22, 22, 30, 32};
  ck_assert_int_eq(log.n, 9);
  for (int i = 0; i < 9; i++) {
    ck_assert_uint_eq(log.arg[i], want_arg[i]);
    ck_assert_int_eq(log.time[i], want_t[i]);
  }
  ck_assert_int_eq(cs_engine_pending(e), 0);
  /* peek_arg: a timer that comes first hides the next `peeking` event */
  Peek pk = {{0}};
  cs_engine_schedule_at(e, 50, peeking, &pk, 0);
  cs_engine_schedule_at(e, 70, peeking, &pk, 1);
  ck_assert_uint_eq(cs_engine_peek_arg(e, peeking), 0);
  cs_engine_schedule_timer_at(e, 40, record, &log, 8);
  ck_assert_uint_eq(cs_engine_peek_arg(e, peeking), UINT64_MAX);
  ck_assert_int_eq(cs_engine_next_time(e), 40);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(log.n, 10);
  ck_assert_uint_eq(pk.seen[0], 1); /* at 50 the next is 70 */
  cs_engine_free(e);
}
END_TEST

/* A jump moves one context's timers with its events. */
START_TEST(test_timers_jump) {
  CsEngine *e = cs_engine_new();
  Log a = {.n = 0}, b = {.n = 0};
  cs_engine_schedule_timer_at(e, 10, record, &a, 1);
  cs_engine_schedule_at(e, 20, record, &a, 2);
  cs_engine_schedule_timer_at(e, 30, record, &b, 3);
  ck_assert_int_eq(cs_engine_next_time_of(e, &a), 10);
  ck_assert_int_eq(cs_engine_next_time_other(e, &a), 30);
  ck_assert(!cs_engine_jump(e, &a, 31)); /* b's timer at 30 lies before 31 */
  ck_assert(cs_engine_jump(e, &a, 15));  /* a's at 25 and 35 */
  ck_assert_int_eq(cs_engine_next_time(e), 25);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(a.n, 2);
  ck_assert_int_eq(a.time[0], 25);
  ck_assert_int_eq(a.time[1], 35);
  ck_assert_int_eq(b.time[0], 30);
  cs_engine_free(e);
}
END_TEST

/* With the calendar on (3,000 events, most of them outside the heap),
 * the earliest event of a context and of the others is found wherever it
 * waits, and a jump moves one context's events, in order, past the
 * other's: A's 3,000 at 1,000 + 7i ps (i < 3,000), B's 10 at 1 ms + i. */
START_TEST(test_calendar_jump) {
  CsEngine *e = cs_engine_new();
  Log *a = g_new0(Log, 1), *b = g_new0(Log, 1);
  for (int i = 0; i < 10; i++) cs_engine_schedule_at(e, 1000000000 + i, record, b, 100000 + (uint64_t)i);
  for (int i = 2999; i >= 0; i--) cs_engine_schedule_at(e, 1000 + 7 * i, record, a, (uint64_t)i);
  ck_assert_uint_eq(cs_engine_calendar_starts(e), 1);
  ck_assert_int_eq(cs_engine_next_time_of(e, a), 1000);
  ck_assert_int_eq(cs_engine_next_time_other(e, a), 1000000000);
  ck_assert_int_eq(cs_engine_next_time_of(e, b), 1000000000);
  ck_assert_int_eq(cs_engine_next_time_other(e, b), 1000);
  ck_assert(!cs_engine_jump(e, a, 1000000001)); /* the clock would pass B's first */
  ck_assert(cs_engine_jump(e, a, 999000000)); /* the clock to 999 us; A's at 999,001,000 + 7i */
  ck_assert_int_eq(cs_engine_now(e), 999000000);
  ck_assert_int_eq(cs_engine_next_time(e), 999001000);
  ck_assert_uint_eq(cs_engine_queued(e), 3010);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(a->n, 3000);
  for (int i = 0; i < 3000; i++) {
    ck_assert_uint_eq(a->arg[i], (uint64_t)i);
    ck_assert_int_eq(a->time[i], 999001000 + 7 * i);
  }
  ck_assert_int_eq(b->n, 10);
  for (int i = 0; i < 10; i++) ck_assert_int_eq(b->time[i], 1000000000 + i);
  /* stopped for the jump and started again at once (3,010 events), then
   * sized anew as the run drains them */
  ck_assert_uint_ge(cs_engine_calendar_starts(e), 3);
  g_free(a);
  g_free(b);
  cs_engine_free(e);
}
END_TEST

/* The calendar's memory follows the events pending, not their square:
 * 4,096 events spread over [T, 2T) and then all on each step boundary kT
 * for 300 steps (each bucket in turn holds a run of all of them).  When
 * every bucket kept the largest run's buffer, the process grew to 22 MB
 * (its peak resident size); now to 2 MB.  The calendar starts sized for
 * the 4,096 (the heap alone while they are scheduled, as in a run that
 * grows fast). */
static const CsTime STEP_T = 1000003, STEP_END = 1000003LL * 300;
static void step_boundary(CsEngine *e, void *ctx, uint64_t arg) {
  CsTime next = (cs_engine_now(e) / STEP_T + 1) * STEP_T;
  if (next < STEP_END) cs_engine_schedule_at(e, next, step_boundary, ctx, arg);
}

START_TEST(test_calendar_memory) {
  struct mallinfo2 before = mallinfo2();
  CsEngine *e = cs_engine_new();
  cs_engine_set_calendar(e, false);
  for (uint64_t i = 0; i < 4096; i++)
    cs_engine_schedule(e, STEP_T + (CsTime)(i * 2654435761u % (uint64_t)STEP_T), step_boundary, NULL, i);
  cs_engine_set_calendar(e, true);
  cs_engine_schedule(e, 2 * STEP_T, step_boundary, NULL, 4096); /* the push that starts it */
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_uint_eq(cs_engine_events_executed(e), 1225002); /* 4,096 in [T, 2T), then 4,097 at each of 2T .. 299T */
  ck_assert_uint_eq(cs_engine_calendar_starts(e), 1);
  struct mallinfo2 after = mallinfo2(); /* (zeros under ASan, whose allocator it does not see) */
  size_t grown = after.uordblks + after.hblkhd - MIN(after.uordblks + after.hblkhd, before.uordblks + before.hblkhd);
  ck_assert_msg(grown < ((size_t)4 << 20), "the engine holds %zu bytes", grown);
  cs_engine_free(e);
}
END_TEST

/* cs_engine_advance_own: a handler runs its own next event itself only
 * when that event would run next and at once. */
typedef struct {
  Log log;
  CsTime ask;      /* the own event's time the handler asks for */
  int granted;     /* how many times it was */
  bool stop_first; /* ask for a stop before asking */
  int hooks;
} Own;

static bool count_hook(CsEngine *e, void *ctx) {
  (void)e;
  (*(int *)ctx)++;
  return true;
}

static void own_handler(CsEngine *e, void *ctx, uint64_t arg) {
  Own *o = ctx;
  record(e, &o->log, arg);
  if (arg != 1) return; /* only event 1 asks */
  if (o->stop_first) cs_engine_stop(e);
  while (o->ask != CS_TIME_MAX && cs_engine_advance_own(e, o->ask)) {
    o->granted++;
    record(e, &o->log, 100 + (uint64_t)o->granted); /* what the own event does */
    o->ask += 5;
  }
}

START_TEST(test_advance_own) {
  /* event 1 at 10 asks for 20, 25, 30, ...; event 2 at 32: granted at 20,
   * 25 and 30 (before 32), not at 35 */
  Own o = {.ask = 20};
  CsEngine *e = cs_engine_new();
  cs_engine_schedule_at(e, 10, own_handler, &o, 1);
  cs_engine_schedule_at(e, 32, own_handler, &o, 2);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(o.granted, 3);
  ck_assert_int_eq(o.log.n, 5);
  CsTime want_t[] = {10, 20, 25, 30, 32};
  for (int i = 0; i < 5; i++) ck_assert_int_eq(o.log.time[i], want_t[i]);
  ck_assert_int_eq(cs_engine_events_executed(e), 5); /* each granted one counts as executed */
  cs_engine_free(e);

  /* a tie is refused: the other event at 20 was scheduled first and runs first */
  o = (Own){.ask = 20};
  e = cs_engine_new();
  cs_engine_schedule_at(e, 10, own_handler, &o, 1);
  cs_engine_schedule_at(e, 20, own_handler, &o, 2);
  cs_engine_run(e, CS_TIME_MAX);
  ck_assert_int_eq(o.granted, 0);
  cs_engine_free(e);

  /* a timer, the run's limit and a stop refuse too */
  for (int c = 0; c < 3; c++) {
    o = (Own){.ask = 20, .stop_first = c == 2};
    e = cs_engine_new();
    cs_engine_schedule_at(e, 10, own_handler, &o, 1);
    if (c == 0) cs_engine_schedule_timer_at(e, 20, own_handler, &o, 2);
    cs_engine_run(e, c == 1 ? 19 : 100);
    ck_assert_msg(o.granted == 0, "case %d granted %d", c, o.granted);
    cs_engine_free(e);
  }

  /* the daemon and the hook run where the loop would run them: the
   * daemon before the own event of its time, the hook after every event
   * (every 1), own ones included */
  o = (Own){.ask = 20};
  e = cs_engine_new();
  cs_engine_schedule_at(e, 10, own_handler, &o, 1);
  cs_engine_set_daemon(e, 20, own_handler, &o); /* logs arg 0 */
  cs_engine_set_hook(e, 1, count_hook, &o.hooks);
  ck_assert_int_eq(cs_engine_run(e, 100), CS_RUN_EMPTY);
  ck_assert_int_eq(o.granted, 17); /* 20, 25, ..., 100 */
  ck_assert_int_eq(o.log.arg[1], 0); /* the daemon at 20 ... */
  ck_assert_int_eq(o.log.time[1], 20);
  ck_assert_int_eq(o.log.arg[2], 101); /* ... then the own event at 20 */
  ck_assert_int_eq(o.hooks, 19);       /* event 1, 17 own ones and the daemon's run */
  ck_assert_int_eq(cs_engine_events_executed(e), 18);
  cs_engine_free(e);
  /* the limit itself is allowed */
  o = (Own){.ask = 20};
  e = cs_engine_new();
  cs_engine_schedule_at(e, 10, own_handler, &o, 1);
  ck_assert_int_eq(cs_engine_run(e, 30), CS_RUN_EMPTY); /* (the handler schedules nothing when refused 35) */
  ck_assert_int_eq(o.granted, 3); /* 20, 25, 30 */
  ck_assert_int_eq(cs_engine_now(e), 30);
  cs_engine_free(e);
}
END_TEST

/* A run that stops at its limit runs the daemon's times up to the limit
 * first (a run cut by its duration samples to its end; in slices, as one
 * run): the only event lies past the limit. */
static void tick_daemon(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  record(e, ctx, 0);
  cs_engine_set_daemon(e, cs_engine_now(e) + 10, tick_daemon, ctx);
}

START_TEST(test_daemon_to_limit) {
  Log log = {.n = 0};
  CsEngine *e = cs_engine_new();
  cs_engine_schedule_at(e, 100, record, &log, 7);
  cs_engine_set_daemon(e, 10, tick_daemon, &log);
  ck_assert_int_eq(cs_engine_run(e, 55), CS_RUN_LIMIT);
  ck_assert_int_eq(log.n, 5); /* 10, 20, 30, 40, 50 */
  ck_assert_int_eq(log.time[4], 50);
  ck_assert_int_eq(cs_engine_now(e), 55);
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(log.n, 5 + 5 + 1); /* 60..100 (the daemon first at 100), then the event */
  ck_assert_int_eq(log.arg[10], 7);
  cs_engine_free(e);
}
END_TEST

/* Random chains of events, some spawning others (ties at every step):
 * running a chain's next event itself when cs_engine_advance_own allows
 * gives the order and count that scheduling every one gives. */
typedef struct {
  CsRng rng;
  bool own; /* use cs_engine_advance_own */
  uint64_t next_id, left, granted;
  int hooks; /* a hook every 7 events and a daemon every 3,000 ps: called as often */
  int stop_at; /* the hook's call that stops the run (0: none) */
  bool in_own, stopped_in_own; /* in cs_engine_advance_own; the stop came there */
  int daemons;
  int live;  /* chains going on: 1 to 4 */
  uint64_t *log_id;
  CsTime *log_t;
  uint64_t n;
  CsEngine *e;
} Chains;

#define CHAINS_LOG 100000 /* 20,000 steps and the events they spawn, each logged once more at the end */

static void chain_fire(CsEngine *e, void *ctx, uint64_t id) {
  Chains *c = ctx;
  for (;;) {
    ck_assert_uint_lt(c->n, CHAINS_LOG);
    c->log_id[c->n] = id;
    c->log_t[c->n++] = cs_engine_now(e);
    if (c->left == 0) return;
    c->left--;
    if (c->live < 4 && cs_rng_below(&c->rng, 3) == 0) { /* a chain spawns another */
      c->live++;
      cs_engine_schedule_at(e, cs_engine_now(e) + (CsTime)cs_rng_below(&c->rng, 4) * 1000, chain_fire, c, c->next_id++);
    }
    if (c->live > 1 && cs_rng_below(&c->rng, 4) == 0) { /* the chain ends */
      c->live--;
      return;
    }
    CsTime next = cs_engine_now(e) + (CsTime)cs_rng_below(&c->rng, 4) * 1000;
    c->in_own = c->own;
    bool granted = c->own && cs_engine_advance_own(e, next);
    c->in_own = false;
    if (granted) {
      c->granted++;
      continue;
    }
    cs_engine_schedule_at(e, next, chain_fire, c, id);
    return;
  }
}

static void chains_daemon(CsEngine *e, void *ctx, uint64_t arg) {
  (void)arg;
  Chains *c = ctx;
  c->daemons++;
  ck_assert_uint_lt(c->n, CHAINS_LOG);
  c->log_id[c->n] = UINT64_MAX; /* in the log, where it ran */
  c->log_t[c->n++] = cs_engine_now(e);
  cs_engine_set_daemon(e, cs_engine_now(e) + 3000, chains_daemon, c);
}

/* The hook, logged where it ran (its order against the daemon and the
 * events is the loop's); its stop_at-th call stops the run. */
static bool chains_hook(CsEngine *e, void *ctx) {
  Chains *c = ctx;
  c->hooks++;
  ck_assert_uint_lt(c->n, CHAINS_LOG);
  c->log_id[c->n] = UINT64_MAX - 1;
  c->log_t[c->n++] = cs_engine_now(e);
  if (c->hooks == c->stop_at) c->stopped_in_own = c->in_own;
  return c->hooks != c->stop_at;
}

static CsRunResult run_chains(Chains *c, bool own, int stop_at, uint64_t hook_every, uint64_t *executed) {
  CsEngine *e = cs_engine_new();
  *c = (Chains){.own = own, .left = 20000, .next_id = 8, .stop_at = stop_at};
  cs_rng_init(&c->rng, 7, 1);
  c->log_id = g_new(uint64_t, CHAINS_LOG);
  c->log_t = g_new(CsTime, CHAINS_LOG);
  c->live = 3;
  for (uint64_t i = 0; i < 3; i++) cs_engine_schedule_at(e, (CsTime)i * 500, chain_fire, c, i);
  cs_engine_set_hook(e, hook_every, chains_hook, c);
  c->e = e;
  cs_engine_set_daemon(e, 3000, chains_daemon, c);
  CsRunResult res = cs_engine_run(e, CS_TIME_MAX);
  *executed = cs_engine_events_executed(e);
  cs_engine_free(e);
  return res;
}

static void chains_same(const Chains *a, const Chains *b) {
  ck_assert_uint_eq(a->n, b->n);
  for (uint64_t i = 0; i < a->n; i++) {
    ck_assert_uint_eq(a->log_id[i], b->log_id[i]);
    ck_assert_int_eq(a->log_t[i], b->log_t[i]);
  }
}

START_TEST(test_advance_own_same_order) {
  Chains a, b;
  uint64_t ea, eb;
  ck_assert_int_eq(run_chains(&a, false, 0, 7, &ea), CS_RUN_EMPTY);
  ck_assert_int_eq(run_chains(&b, true, 0, 7, &eb), CS_RUN_EMPTY);
  chains_same(&a, &b); /* events, daemon and hook in one order */
  ck_assert_uint_eq(ea, eb);
  ck_assert_uint_eq(ea, a.n - (uint64_t)a.daemons - (uint64_t)a.hooks); /* the daemon is not counted */
  ck_assert_int_gt(a.daemons, 100);
  ck_assert_int_eq(a.daemons, b.daemons);
  ck_assert_int_eq(a.hooks, b.hooks);
  ck_assert_int_eq(a.hooks, (int)(ea / 7) + a.daemons / 7); /* every 7 events, and every 7 runs of the daemon */
  ck_assert_uint_gt(eb, 20000); /* the chains lived to the end */
  ck_assert_uint_gt(b.granted, 1000); /* the own path was taken, often */
  ck_assert_uint_lt(b.granted, b.n / 2); /* and refused often (ties, spawned events) */
  g_free(a.log_id), g_free(a.log_t), g_free(b.log_id), g_free(b.log_t);
  /* a hook (after every event) that stops the run: it ends where the
   * loop's would, whichever call stops it (inside cs_engine_advance_own,
   * after an event of the loop's, or after the daemon's run) */
  int inside = 0;
  for (int stop_at = 40; stop_at < 1000; stop_at += 37) {
    ck_assert_int_eq(run_chains(&a, false, stop_at, 1, &ea), CS_RUN_STOPPED);
    ck_assert_int_eq(run_chains(&b, true, stop_at, 1, &eb), CS_RUN_STOPPED);
    chains_same(&a, &b);
    ck_assert_uint_eq(ea, eb);
    ck_assert_int_eq(a.hooks, stop_at);
    inside += b.stopped_in_own;
    g_free(a.log_id), g_free(a.log_t), g_free(b.log_id), g_free(b.log_t);
  }
  ck_assert_int_gt(inside, 3); /* (the case a missing stop check would get wrong) */
}
END_TEST

/* A held place: the event scheduled at it comes, among those of its
 * time, before the ones scheduled after the place was taken; renumbering
 * at 2^32 keeps it there; a dropped place changes nothing. */
static Log *place_log;

static void place_run(CsEngine *e, const uint64_t *want, int n) {
  ck_assert_int_eq(cs_engine_run(e, CS_TIME_MAX), CS_RUN_EMPTY);
  ck_assert_int_eq(place_log->n, n);
  for (int i = 0; i < n; i++) ck_assert_uint_eq(place_log->arg[i], want[i]);
  cs_engine_free(e);
  place_log->n = 0;
}

START_TEST(test_place) {
  static Log log;
  place_log = &log;
  log.n = 0;
  CsEngine *e = cs_engine_new();
  cs_engine_schedule_at(e, 10, record, &log, 1);
  cs_engine_take_place(e);
  ck_assert(cs_engine_holds_place(e));
  cs_engine_schedule_at(e, 10, record, &log, 3);
  cs_engine_schedule_at(e, 5, record, &log, 0);
  cs_engine_schedule_at(e, 10, record, &log, 4);
  cs_engine_schedule_at_place(e, 10, record, &log, 2);
  ck_assert(!cs_engine_holds_place(e));
  place_run(e, (const uint64_t[]){0, 1, 2, 3, 4}, 5);

  /* the sequence passes 2^32 while the place is held: renumbered with it */
  e = cs_engine_new();
  cs_engine_set_next_seq(e, ((uint64_t)1 << 32) - 3);
  cs_engine_schedule_at(e, 10, record, &log, 1); /* seq 2^32 - 3 */
  cs_engine_take_place(e);                        /* 2^32 - 2 */
  cs_engine_schedule_at(e, 10, record, &log, 3);  /* 2^32 - 1 */
  cs_engine_schedule_at(e, 7, record, &log, 0);   /* 2^32: renumbered first (1, place, 3 become 0, 1, 2) */
  cs_engine_schedule_at(e, 10, record, &log, 4);
  cs_engine_schedule_at_place(e, 10, record, &log, 2);
  place_run(e, (const uint64_t[]){0, 1, 2, 3, 4}, 5);

  /* a place taken from a handler, the events it schedules after it, the
   * one at the place last: as if scheduled first */
  e = cs_engine_new();
  cs_engine_take_place(e);
  cs_engine_drop_place(e); /* dropped: nothing */
  cs_engine_take_place(e);
  cs_engine_schedule_at(e, 20, record, &log, 2);
  cs_engine_schedule_at_place(e, 20, record, &log, 1);
  place_run(e, (const uint64_t[]){1, 2}, 2);
}
END_TEST

/* Arenas: a one-off block of 1 MB or more is mapped on a 2 MB boundary
 * (but under AddressSanitizer, where each buffer is its own heap block),
 * any other is a heap block; the buffers are 64-byte aligned, apart, and
 * whole; a take past the block's size is a programming error (abort). */
START_TEST(test_arena) {
  const size_t sizes[] = {1000, 300000, 3 * 1000 * 1000};
  for (size_t k = 0; k < 2 * G_N_ELEMENTS(sizes); k++) {
    size_t each = sizes[k / 2], count = 5;
    gboolean one_off = k % 2;
    CsArena *a = cs_arena_new(cs_arena_size(count, each), one_off);
#ifdef __linux__
    ck_assert_int_eq(cs_arena_mapped(a), one_off && !CS_ARENA_SEPARATE && cs_arena_size(count, each) >= CS_ARENA_HUGE);
#endif
    unsigned char *b[5];
    for (size_t i = 0; i < count; i++) {
      b[i] = cs_arena_take(a, each);
      if (!CS_ARENA_SEPARATE) ck_assert_uint_eq((uintptr_t)b[i] % CS_ARENA_ALIGN, 0);
      memset(b[i], (int)i + 1, each);
    }
    if (cs_arena_mapped(a)) ck_assert_uint_eq((uintptr_t)b[0] % (2u << 20), 0);
    for (size_t i = 0; i < count; i++) /* no buffer wrote over another */
      ck_assert(b[i][0] == i + 1 && b[i][each - 1] == i + 1);
    cs_arena_free(a);
  }
}
END_TEST

START_TEST(test_arena_past_its_size) {
  CsArena *a = cs_arena_new(cs_arena_size(2, 100), TRUE);
  cs_arena_take(a, 100);
  cs_arena_take(a, 100);
  cs_arena_take(a, 1); /* aborts */
}
END_TEST

static Suite *engine_suite(void) {
  Suite *s = suite_create("engine");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_order_by_time);
  tcase_add_test(tc, test_arena);
  tcase_add_test_raise_signal(tc, test_arena_past_its_size, SIGABRT);
  tcase_add_test(tc, test_next_time_in_handler);
  tcase_add_test(tc, test_next_time_after_cancel);
  tcase_add_test(tc, test_fifo_ties);
  tcase_add_test(tc, test_zero_delay_fifo);
  tcase_add_test(tc, test_cancel);
  tcase_add_test(tc, test_cancel_from_handler);
  tcase_add_test(tc, test_cancelled_entries_dropped);
  tcase_add_test(tc, test_time_limit);
  tcase_add_test(tc, test_stop);
  tcase_add_test(tc, test_overflow);
  tcase_add_loop_test(tc, test_randomized_against_sorted_reference, 0, 16);
  tcase_add_test(tc, test_calendar_jump);
  tcase_add_test(tc, test_calendar_memory);
  tcase_add_test(tc, test_daemon);
  tcase_add_test(tc, test_daemon_lets_hook_run);
  tcase_add_test(tc, test_deterministic);
  tcase_add_test(tc, test_peek_arg);
  tcase_add_test(tc, test_timers);
  tcase_add_test(tc, test_timers_jump);
  tcase_add_test(tc, test_advance_own);
  tcase_add_test(tc, test_daemon_to_limit);
  tcase_add_test(tc, test_advance_own_same_order);
  tcase_add_test(tc, test_place);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(engine_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
