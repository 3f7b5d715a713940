/* engine.c - 4-ary heap of event keys over a pooled store of event bodies.
 *
 * Timers (cs_engine_schedule_timer_at) have a heap of their own: a
 * connection's retransmission timer sleeps far ahead, and in the one heap
 * every packet's arrival sifted past them (an incast of 15 reno senders
 * held 20 events, 15 of them such timers).  The run takes the earlier of
 * the two tops.
 *
 * Past 16 pending events (a packet run of a few hosts and more) the
 * later ones wait in a calendar of time buckets beside the heap, and the
 * heap takes one bucket at a time: see "The calendar" at the end.
 *
 * Why this shape: the heap entries carry the whole ordering key (time,
 * sequence) so sifting never touches the pool; the pool is only read when
 * an event runs.  A handler that schedules while it runs (the common case:
 * a packet's arrival schedules its departure) replaces the heap's top in
 * place and sifts once, instead of a pop followed by a push.
 */
#include "config.h"

#include <glib.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "commsim/engine.h"
#include "commsim/ring.h"

/* 16 bytes, so that the four children of a node fill one cache line (the
 * array is offset to make that so).  `order` is the scheduling sequence
 * number in its high 32 bits and the pool slot in its low 32: comparing
 * `order` compares sequence numbers, which are unique.  When the sequence
 * reaches 2^32 the pending events are renumbered in their current order,
 * which keeps every comparison as it was. */
typedef struct {
  CsTime time;
  uint64_t order;
} HeapEntry;

#define ENTRY_SLOT(x) ((uint32_t)((x).order & 0xffffffffu))
#define HEAP_ALIGN 64
#define HEAP_PAD 3 /* entries before index 0: children 4i+1.. start a line */

/* The calendar's sizes (see "The calendar" below). */
#define CAL_ON 16  /* the heap's length past which the calendar starts */
#define CAL_OFF 8   /* fewer pending events than this: it stops */
#define CAL_PER 8   /* events to a bucket, as the width is chosen */
#define CAL_KEEP 256 /* a spent run's buffer up to this many events goes back to a bucket */

/* A bucket of the calendar: its events, unsorted. */
struct CalBucket {
  HeapEntry *buf;
  uint32_t len, cap;
};

typedef struct {
  CsEventFn fn; /* NULL once cancelled */
  void *ctx;
  uint64_t arg;
  uint32_t gen;  /* bumped each time the slot is released */
  uint32_t next; /* free-list link, or SLOT_QUEUED */
} Slot;

#define SLOT_QUEUED UINT32_MAX
#define SLOT_END (UINT32_MAX - 1)

struct CsEngine {
  CsTime now; /* first: cs_engine_now reads it inline */
  HeapEntry *heap; /* = heap_block + HEAP_PAD */
  HeapEntry *heap_block;
  size_t heap_len, heap_cap;
  HeapEntry *timers; /* the timers' heap (sentinels past its entries, as the heap's) */
  size_t timers_len, timers_cap;
  Slot *pool;
  uint32_t pool_len, pool_cap;
  uint32_t free_head;
  uint64_t next_seq;
  uint64_t place_seq; /* cs_engine_take_place's, while place_held */
  bool place_held;
  uint64_t executed;
  size_t cancelled_pending; /* cancelled but still in the heap */
  /* The top entry is executing and may be overwritten by the first
   * schedule call of its handler (see file comment). */
  bool top_dead;
  bool timer_dead; /* the same, for a timer that is executing (the timers' top) */
  bool stop;
  bool running;   /* in cs_engine_run */
  bool own_off;   /* cs_engine_set_own(false) */
  CsTime until;   /* the running cs_engine_run's limit */
  CsTime horizon; /* cs_engine_set_horizon: no jump passes it */
  bool overflow;
  /* cs_engine_set_daemon */
  CsTime daemon_at;
  CsEventFn daemon_fn;
  void *daemon_ctx;
  uint64_t daemon_runs;
  /* cs_engine_set_hook: called when `executed` reaches hook_at */
  uint64_t hook_at, hook_every;
  CsEngineHook hook;
  void *hook_ctx;
  /* The calendar (see "The calendar" below): the heap holds the events
   * before cal_lim, the buckets and the overflow those at or after it. */
  CsTime cal_lim;      /* CS_TIME_MAX while off: every event goes to the heap */
  size_t cal_on_len;   /* the heap's length past which it starts (SIZE_MAX while on) */
  size_t cal_n;        /* events outside the heap: in its buckets, its overflow and the run's rest */
  size_t cal_in_buckets;
  unsigned cal_shift;  /* a bucket spans 2^cal_shift ps */
  uint64_t cal_cur;    /* the bucket number (time >> cal_shift) the heap holds up to */
  uint32_t cal_mask;   /* buckets - 1: bucket number b (cal_cur < b <= cal_cur + buckets) at b & cal_mask */
  struct CalBucket *cal_b;
  struct CalBucket cal_over;  /* later than the buckets' window */
  uint64_t cal_over_min;      /* the least bucket number in the overflow (UINT64_MAX: empty) */
  /* The run: the bucket the heap took last, sorted, and the events since
   * scheduled before the heap's end that were not earlier than its last.
   * Its first event not yet run is in the heap (its `order` is
   * run_head), the others wait here, counted in cal_n: a thousand events
   * of one time come one after the other, not through a heap of a
   * thousand. */
  HeapEntry *run;
  uint32_t run_pos, run_len, run_cap;
  uint64_t run_head; /* UINT64_MAX: none */
  HeapEntry *sort_tmp; /* a large bucket's sort's second buffer */
  uint32_t sort_cap;
  HeapEntry *spare;   /* a large spent run's buffer, for a bucket that grows past CAL_KEEP */
  uint32_t spare_cap;
  uint64_t cal_starts;        /* times it started (cs_engine_calendar_starts) */
  uint64_t cal_exec_at_start; /* `executed` when it last started */
  uint64_t cal_work;          /* since then: overflow events scanned, empty buckets passed, events sorted */
  bool cal_never;             /* cs_engine_set_calendar(false) */
  size_t cal_sized;           /* the events pending when it last started */
};

/* (time, order) without a branch (sifting compares about 5 times per
 * level, and event times are irregular). */
static inline bool key_less(const HeapEntry *a, const HeapEntry *b) {
  return cs_time_key_less(a->time, a->order, b->time, b->order);
}

/* Every place at or past heap_len holds this, later than any event: a
 * node's four children are always compared, without a branch on how
 * many it has (the heap of a packet run holds a few dozen events, and
 * the count of its last node's children is anyone's guess). */
static const HeapEntry SENTINEL = {CS_TIME_MAX, UINT64_MAX};
#define HEAP_TAIL 4 /* sentinels past heap_cap: the last node's children */

static void heap_resize(CsEngine *e, size_t cap) {
  HeapEntry *block = g_aligned_alloc(cap + HEAP_PAD + HEAP_TAIL, sizeof(HeapEntry), HEAP_ALIGN);
  for (size_t i = HEAP_PAD; i < cap + HEAP_PAD + HEAP_TAIL; i++) block[i] = SENTINEL;
  if (e->heap_block) {
    memcpy(block + HEAP_PAD, e->heap, e->heap_len * sizeof(HeapEntry));
    g_aligned_free(e->heap_block);
  }
  e->heap_block = block;
  e->heap = block + HEAP_PAD;
  e->heap_cap = cap;
}

/* The timers' storage: sentinels past the entries, as the heap's. */
static void timers_resize(CsEngine *e, size_t cap) {
  e->timers = g_renew(HeapEntry, e->timers, cap + HEAP_TAIL);
  for (size_t i = e->timers_len; i < cap + HEAP_TAIL; i++) e->timers[i] = SENTINEL;
  e->timers_cap = cap;
}

static inline CsEventId make_id(uint32_t slot, uint32_t gen) {
  return ((uint64_t)gen << 32) | (uint64_t)(slot + 1u);
}

CsEngine *cs_engine_new(void) {
  CsEngine *e = g_new0(CsEngine, 1);
  heap_resize(e, 1024);
  e->pool_cap = 1024;
  e->pool = g_new(Slot, e->pool_cap);
  e->free_head = SLOT_END;
  e->hook_at = UINT64_MAX;
  e->daemon_at = CS_TIME_MAX;
  e->horizon = CS_TIME_MAX;
  e->cal_lim = CS_TIME_MAX;
  e->cal_on_len = CAL_ON;
  e->cal_over_min = UINT64_MAX;
  e->run_head = UINT64_MAX;
  return e;
}

static void cal_free(CsEngine *e);

void cs_engine_free(CsEngine *e) {
  if (!e) return;
  cal_free(e);
  g_aligned_free(e->heap_block);
  g_free(e->timers);
  g_free(e->pool);
  g_free(e);
}

static G_GNUC_NO_INLINE uint32_t slot_new(CsEngine *e) {
  if (e->pool_len == e->pool_cap) {
    if (e->pool_cap >= SLOT_END / 2) g_error("commsim: more than 2^31 pending events");
    e->pool_cap *= 2;
    e->pool = g_renew(Slot, e->pool, e->pool_cap);
  }
  uint32_t s = e->pool_len++;
  e->pool[s].gen = 1;
  return s;
}

/* A free slot (the last released), else a new one. */
static inline uint32_t slot_alloc(CsEngine *e) {
  uint32_t s = e->free_head;
  if (G_LIKELY(s != SLOT_END)) {
    e->free_head = e->pool[s].next;
    return s;
  }
  return slot_new(e);
}

static inline void slot_release(CsEngine *e, uint32_t s) {
  Slot *sl = &e->pool[s];
  sl->gen++;
  if (G_UNLIKELY(sl->gen == 0)) sl->gen = 1;
  sl->next = e->free_head;
  e->free_head = s;
}

/* The index of the least of h[c..c+3] (sentinels past the end): a
 * tournament two compares deep, indices by arithmetic so that no branch
 * guesses. */
static inline size_t least_of_four(const HeapEntry *h, size_t c) {
  size_t b01 = c + key_less(&h[c + 1], &h[c]);
  size_t b23 = c + 2 + key_less(&h[c + 3], &h[c + 2]);
  return b01 ^ ((b01 ^ b23) & -(size_t)key_less(&h[b23], &h[b01]));
}

/* Move x up from place i until it fits. */
static inline void sift_up(HeapEntry *h, size_t i, HeapEntry x) {
  while (i > 0) {
    size_t p = (i - 1) / 4;
    if (!key_less(&x, &h[p])) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = x;
}

/* Up to SIFT_FLOYD entries (4 KB) the sift stops where the entry fits (an
 * incast's heaps hold 5-20); past it, Floyd's variant below.  Past
 * SIFT_FAR entries (64 KB, more than the first-level cache) it asks for
 * the next level's lines ahead: below that the four prefetches per level
 * cost more than they hide (1,024 workers, 2,049 entries: 3.2 % fewer
 * instructions and about 4 % less time without them; 4,096 workers,
 * 8,193 entries: 7 to 19 % more time without them). */
#define SIFT_FLOYD 256
#define SIFT_FAR 4096

/* sift_down_in for a heap of more than SIFT_FLOYD entries.  The entry
 * that takes the root's place is most often among the latest (a pipe's
 * next arrival, or the heap's last leaf on a pop) and sinks to the
 * bottom: the hole goes down the line of least children without a
 * compare with x at each level, and x rises from the bottom, usually not
 * at all (Floyd's variant; the heap ends as the usual sift leaves it).
 * In a heap past SIFT_FAR the next level is one of four lines: all four
 * are asked for at once, so the descent does not wait on memory at every
 * level.  The root's new
 * occupant is known after the first level, and its pool slot is
 * prefetched then (at a million pending events that miss was a fifth of
 * the run time). */
static inline void sift_down_large(HeapEntry *h, const Slot *pool, size_t n, HeapEntry x) {
  size_t i = 0;
  for (size_t c = 1; c < n; c = 4 * i + 1) {
    if (n > SIFT_FAR && 4 * c + 1 < n) { /* the children of c..c+3: h[4c+1..4c+16], four whole lines */
      const char *g = (const char *)&h[4 * c + 1];
      __builtin_prefetch(g);
      __builtin_prefetch(g + 64);
      __builtin_prefetch(g + 128);
      __builtin_prefetch(g + 192);
    }
    size_t best = least_of_four(h, c); /* a real entry: h[c] is one */
    h[i] = h[best];
    if (i == 0) __builtin_prefetch(&pool[ENTRY_SLOT(h[0])]);
    i = best;
  }
  sift_up(h, i, x);
}

/* Put x at the root and move it down until it fits (a large heap:
 * sift_down_large).  The root's new occupant is known after the first
 * level: its pool slot is prefetched then. */
static inline void sift_down_in(HeapEntry *h, const Slot *pool, size_t n, HeapEntry x) {
  if (n <= 4) { /* the root's children alone (a flow run's heap holds a handful): as many compares as children */
    size_t best = 1;
    for (size_t j = 2; j < n; j++)
      if (key_less(&h[j], &h[best])) best = j;
    if (n > 1 && key_less(&h[best], &x)) {
      h[0] = h[best];
      h[best] = x;
    } else {
      h[0] = x;
    }
    return;
  }
  if (n > SIFT_FLOYD) {
    sift_down_large(h, pool, n, x);
    return;
  }
  size_t i = 0;
  for (;;) {
    size_t c = 4 * i + 1;
    if (c >= n) break;
    size_t best = least_of_four(h, c);
    if (!key_less(&h[best], &x)) break;
    h[i] = h[best];
    if (i == 0) __builtin_prefetch(&pool[ENTRY_SLOT(h[0])]);
    i = best;
  }
  h[i] = x;
}

/* sift_down_in for the timers' heap, which holds a connection's event
 * each (an incast: 15, two levels): the loop alone, inline, without the
 * cases of a tiny or a large heap or the pool's prefetch (a paced queue
 * pair sets its timer again at every packet). */
static inline void sift_down_timers(HeapEntry *h, const Slot *pool, size_t n, HeapEntry x) {
  if (G_UNLIKELY(n > SIFT_FLOYD)) {
    sift_down_large(h, pool, n, x);
    return;
  }
  size_t i = 0;
  for (size_t c = 1; c < n; c = 4 * i + 1) {
    size_t best = least_of_four(h, c);
    if (!key_less(&h[best], &x)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = x;
}

static inline void sift_down_root(CsEngine *e, size_t n, HeapEntry x) { sift_down_in(e->heap, e->pool, n, x); }

/* Remove the top entry of heap h (*len entries, one at least). */
static inline void pop_from(HeapEntry *h, size_t *len, const Slot *pool) {
  size_t n = --*len;
  HeapEntry x = h[n];
  h[n] = SENTINEL;
  if (n > 0) sift_down_in(h, pool, n, x);
}

static inline void heap_pop(CsEngine *e) { pop_from(e->heap, &e->heap_len, e->pool); }

static void heapify(HeapEntry *h, size_t n);

/* Bucket number b (> cal_cur) has its place in the calendar's ring (else
 * the overflow). */
static inline bool in_ring(const CsEngine *e, uint64_t b) { return b - e->cal_cur <= (uint64_t)e->cal_mask + 1; }

/* x into the heap, at the bottom and up. */
static inline void heap_push(CsEngine *e, HeapEntry x) {
  if (G_UNLIKELY(e->heap_len == e->heap_cap)) heap_resize(e, e->heap_cap * 2);
  sift_up(e->heap, e->heap_len++, x);
}

static void cal_put(CsEngine *e, HeapEntry x);
static void cal_start(CsEngine *e);
static void cal_stop(CsEngine *e);
static void cal_refill(CsEngine *e);

/* After what stopped the calendar to move every event (a purge, a jump,
 * renumbering): it starts again at once if the heap is past CAL_ON (a
 * heap whose events replace one another in place never grows past it,
 * and waited without it: a third of a 128-worker run). */
static inline void cal_again(CsEngine *e) {
  if (e->heap_len > e->cal_on_len) cal_start(e);
}

/* The heap has nothing left but the running event's own entry: the
 * calendar's next bucket comes in. */
static inline void cal_fill(CsEngine *e) {
  if (G_UNLIKELY(e->cal_n > 0) && e->heap_len <= (size_t)e->top_dead) cal_refill(e);
}

/* The heap's top leaves: its place goes to the next event of the
 * bucket being run when the top was that bucket's, else to the heap's
 * last entry. */
static inline void heap_pop_top(CsEngine *e) {
  if (e->heap[0].order == e->run_head) {
    if (++e->run_pos < e->run_len) {
      HeapEntry x = e->run[e->run_pos];
      e->run_head = x.order;
      e->cal_n--;
      sift_down_root(e, e->heap_len, x);
      return;
    }
    e->run_head = UINT64_MAX;
  }
  heap_pop(e);
}

/* With the calendar on, an event before the heap's end that is not
 * earlier than the run's last joins the run: a thousand pipes in step
 * whose next arrivals fall in the bucket being run (1-byte ACKs 800 ps
 * apart) come one after the other, not through a heap of a thousand.
 * With no run left, it starts one.  False: it goes into the heap. */
static bool run_append(CsEngine *e, HeapEntry x);
static inline bool run_takes(CsEngine *e, HeapEntry x) {
  if (e->run_head != UINT64_MAX && key_less(&x, &e->run[e->run_len - 1])) return false;
  return run_append(e, x);
}

/* x into the heap, or the calendar when it lies past the heap's end
 * (a dead top stays: the run pops it).  The calendar starts when the
 * heap has grown past CAL_ON. */
static inline __attribute__((always_inline)) void heap_or_calendar(CsEngine *e, HeapEntry x) {
  if (G_UNLIKELY(e->cal_lim != CS_TIME_MAX)) { /* the calendar is on */
    if (x.time >= e->cal_lim) {
      cal_put(e, x);
      return;
    }
    if (run_takes(e, x)) return; /* in the run, behind its last event */
  }
  if (e->top_dead) {
    /* when >= now == time of every entry: x can take the root's place. */
    e->top_dead = false;
    sift_down_root(e, e->heap_len, x);
  } else {
    heap_push(e, x);
    if (G_UNLIKELY(e->heap_len > e->cal_on_len)) cal_start(e);
  }
}

static int cmp_seq(const void *a, const void *b) {
  uint64_t x = (*(HeapEntry *const *)a)->order >> 32, y = (*(HeapEntry *const *)b)->order >> 32;
  return x < y ? -1 : x > y;
}

/* Give the pending events sequence numbers 0..n-1 in the order of the
 * ones they had (which keeps every comparison of two entries, so the
 * heaps stay heaps), a held place its number among them. */
static void renumber(CsEngine *e) {
  cal_stop(e); /* its events are renumbered with the heap's */
  size_t n = e->heap_len + e->timers_len;
  HeapEntry **by_seq = g_new(HeapEntry *, n ? n : 1);
  for (size_t i = 0; i < e->heap_len; i++) by_seq[i] = &e->heap[i];
  for (size_t i = 0; i < e->timers_len; i++) by_seq[e->heap_len + i] = &e->timers[i];
  qsort(by_seq, n, sizeof *by_seq, cmp_seq);
  uint64_t seq = 0;
  bool placed = !e->place_held;
  for (size_t i = 0; i < n; i++) {
    if (!placed && (by_seq[i]->order >> 32) > e->place_seq) e->place_seq = seq++, placed = true;
    by_seq[i]->order = (seq++ << 32) | ENTRY_SLOT(*by_seq[i]);
  }
  if (!placed) e->place_seq = seq++;
  g_free(by_seq);
  e->next_seq = seq;
  cal_again(e);
}

/* A pool slot for the event and its heap entry; false past the end of
 * simulated time (not scheduled: the run reports it only if it would
 * have got there, see cs_engine_run). */
static inline bool new_entry_seq(CsEngine *e, CsTime when, CsEventFn fn, void *ctx, uint64_t arg, HeapEntry *x,
                                 uint32_t *slot, bool at_place) {
  g_assert(fn != NULL);
  if (G_UNLIKELY(when == CS_TIME_MAX)) {
    e->overflow = true;
    return false;
  }
  if (G_UNLIKELY(when < e->now))
    g_error("commsim: event scheduled in the past (%" G_GINT64_FORMAT " < %" G_GINT64_FORMAT " ps)",
            (gint64)when, (gint64)e->now);
  uint32_t s = slot_alloc(e);
  Slot *sl = &e->pool[s];
  sl->fn = fn;
  sl->ctx = ctx;
  sl->arg = arg;
  sl->next = SLOT_QUEUED;
  if (G_UNLIKELY(e->next_seq > UINT32_MAX)) renumber(e);
  uint64_t seq = at_place ? e->place_seq : e->next_seq++;
  *x = (HeapEntry){when, (seq << 32) | s};
  *slot = s;
  return true;
}

static inline bool new_entry(CsEngine *e, CsTime when, CsEventFn fn, void *ctx, uint64_t arg, HeapEntry *x,
                             uint32_t *slot) {
  return new_entry_seq(e, when, fn, ctx, arg, x, slot, false);
}

CsEventId cs_engine_schedule_at(CsEngine *e, CsTime when, CsEventFn fn, void *ctx,
                                uint64_t arg) {
  HeapEntry x;
  uint32_t s;
  if (!new_entry(e, when, fn, ctx, arg, &x, &s)) return CS_EVENT_NONE;
  heap_or_calendar(e, x);
  return make_id(s, e->pool[s].gen);
}

void cs_engine_take_place(CsEngine *e) {
  g_assert(!e->place_held);
  if (G_UNLIKELY(e->next_seq > UINT32_MAX)) renumber(e);
  e->place_seq = e->next_seq++;
  e->place_held = true;
}

void cs_engine_drop_place(CsEngine *e) { e->place_held = false; }
bool cs_engine_holds_place(const CsEngine *e) { return e->place_held; }

CsEventId cs_engine_schedule_at_place(CsEngine *e, CsTime when, CsEventFn fn, void *ctx, uint64_t arg) {
  g_assert(e->place_held);
  HeapEntry x;
  uint32_t s;
  bool made = new_entry_seq(e, when, fn, ctx, arg, &x, &s, true);
  e->place_held = false;
  if (!made) return CS_EVENT_NONE;
  heap_or_calendar(e, x); /* as cs_engine_schedule_at */
  return make_id(s, e->pool[s].gen);
}

CsEventId cs_engine_schedule_timer_at(CsEngine *e, CsTime when, CsEventFn fn, void *ctx, uint64_t arg) {
  HeapEntry x;
  uint32_t s;
  if (!new_entry(e, when, fn, ctx, arg, &x, &s)) return CS_EVENT_NONE;
  /* with the calendar on, a timer due within its ring goes there, as an
   * event does (the run takes the earlier of the two tops whatever holds
   * them): at 1,024 hosts a connection paused on its full host queue
   * wakes at packet rate, and the timers' heap of a thousand entries
   * was a tenth of the run; a far deadline stays in the timers' heap */
  if (G_UNLIKELY(e->cal_lim != CS_TIME_MAX) && in_ring(e, (uint64_t)x.time >> e->cal_shift)) {
    heap_or_calendar(e, x);
    return make_id(s, e->pool[s].gen);
  }
  if (e->timer_dead) { /* an executing timer that sets itself again (a pacing queue pair): in its place */
    e->timer_dead = false;
    sift_down_timers(e->timers, e->pool, e->timers_len, x);
  } else {
    if (G_UNLIKELY(e->timers_len == e->timers_cap)) timers_resize(e, e->timers_cap ? 2 * e->timers_cap : 64);
    sift_up(e->timers, e->timers_len++, x);
  }
  return make_id(s, e->pool[s].gen);
}

static inline void timers_pop(CsEngine *e) { pop_from(e->timers, &e->timers_len, e->pool); }

CsEventId cs_engine_schedule(CsEngine *e, CsTime delay, CsEventFn fn, void *ctx, uint64_t arg) {
  g_assert(delay >= 0);
  return cs_engine_schedule_at(e, cs_time_add(e->now, delay), fn, ctx, arg);
}

static Slot *lookup(const CsEngine *e, CsEventId id) {
  uint32_t s = (uint32_t)(id & 0xffffffffu);
  if (s == 0 || s > e->pool_len) return NULL;
  Slot *sl = &e->pool[s - 1];
  if (sl->gen != (uint32_t)(id >> 32) || sl->next != SLOT_QUEUED || sl->fn == NULL) return NULL;
  return sl;
}

static void settle_top(CsEngine *e);

/* Move x down from place i until it fits (heapify). */
static void sift_down_at(HeapEntry *h, size_t n, size_t i, HeapEntry x) {
  for (;;) {
    size_t c = 4 * i + 1, best = c;
    if (c >= n) break;
    for (size_t j = c + 1; j < c + 4 && j < n; j++)
      if (key_less(&h[j], &h[best])) best = j;
    if (!key_less(&h[best], &x)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = x;
}

/* The heap property over h[0..n) from any order (Floyd). */
static void heapify(HeapEntry *h, size_t n) {
  for (size_t i = n > 1 ? (n - 2) / 4 + 1 : 0; i-- > 0;) sift_down_at(h, n, i, h[i]);
}

/* Heap h[0..*len) without its cancelled entries (their slots released),
 * rebuilt, sentinels past its new end. */
static void purge_heap(CsEngine *e, HeapEntry *h, size_t *len) {
  size_t k = 0;
  for (size_t i = 0; i < *len; i++) {
    uint32_t s = ENTRY_SLOT(h[i]);
    if (e->pool[s].fn == NULL) slot_release(e, s);
    else h[k++] = h[i];
  }
  for (size_t i = k; i < *len; i++) h[i] = SENTINEL;
  *len = k;
  heapify(h, k);
}

/* Drop every cancelled entry and rebuild both heaps from the live ones.
 * A cancelled entry otherwise waits for its time: a connection that moves
 * a far deadline earlier at every pause left some 100 of them beside 20
 * live events (PFC incast, reno), and every pop sifted through them.  Keys
 * are unique, so the order of the events is the one they had. */
static void purge_cancelled(CsEngine *e) {
  settle_top(e); /* the running event's own entry first (its slot is already free) */
  cal_stop(e);   /* the calendar's events with the heap's (it starts again as the heap grows) */
  purge_heap(e, e->heap, &e->heap_len);
  purge_heap(e, e->timers, &e->timers_len);
  e->cancelled_pending = 0;
  cal_again(e);
}

bool cs_engine_cancel(CsEngine *e, CsEventId id) {
  Slot *sl = lookup(e, id);
  if (!sl) return false;
  sl->fn = NULL;
  e->cancelled_pending++;
  /* a quarter of the heap dead: purge (each purge follows at least 8 cancels, so its cost per cancel is bounded) */
  if (e->cancelled_pending >= 8 && 4 * e->cancelled_pending > e->heap_len + e->timers_len + e->cal_n)
    purge_cancelled(e);
  return true;
}

bool cs_engine_is_pending(const CsEngine *e, CsEventId id) {
  return lookup(e, id) != NULL;
}

/* The entry a heap would bring to its top once the running event's entry
 * (dead) is popped: the least of the top's children; else its top.  NULL
 * when there is none. */
static inline const HeapEntry *heap_next(const HeapEntry *h, size_t len, bool dead) {
  if (len <= dead) return NULL; /* none but the running event's (a flow fidelity's heap, mostly) */
  if (!dead) return &h[0];
  const HeapEntry *best = &h[least_of_four(h, 1)]; /* a dead top: len >= 1, sentinels past the end */
  return best->time == CS_TIME_MAX ? NULL : best;
}

static CsRunResult run_loop(CsEngine *e);

CsRunResult cs_engine_run(CsEngine *e, CsTime until) {
  g_assert(!e->running);
  e->running = true;
  e->until = until;
  CsRunResult r = run_loop(e);
  e->running = false;
  return r;
}

/* The time of heap_next's entry (CS_TIME_MAX: none). */
static inline CsTime heap_next_time(const HeapEntry *h, size_t len, bool dead) {
  const HeapEntry *x = heap_next(h, len, dead);
  return x ? x->time : CS_TIME_MAX;
}

/* The daemon, at its time (the loop's, and cs_engine_advance_own's). */
static void run_daemon(CsEngine *e) {
  e->now = e->daemon_at;
  e->daemon_at = CS_TIME_MAX;
  e->daemon_fn(e, e->daemon_ctx, 0);
  /* a daemon that fires far more often than events (a tiny sampling
   * interval, with --force) lets the hook run all the same: an
   * interrupt is seen within `hook_every` of its runs */
  if (G_UNLIKELY(e->hook_at != UINT64_MAX && ++e->daemon_runs % e->hook_every == 0) && !e->hook(e, e->hook_ctx))
    e->stop = true;
}

/* The hook, due (executed == hook_at). */
static void run_hook(CsEngine *e) {
  e->hook_at += e->hook_every;
  if (!e->hook(e, e->hook_ctx)) e->stop = true;
}

/* Another event before or at `when`: the own event would not run next. */
static inline bool other_by(CsEngine *e, CsTime when) {
  cal_fill(e);
  return heap_next_time(e->heap, e->heap_len, e->top_dead) <= when ||
         heap_next_time(e->timers, e->timers_len, e->timer_dead) <= when;
}

bool cs_engine_advance_own(CsEngine *e, CsTime when) {
  g_assert(e->running && when >= e->now);
  if (e->own_off || e->stop || when > e->until || other_by(e, when)) return false;
  /* between the event that ran and this one, what the loop does there:
   * the hook when due, the daemon when its time comes first (so that
   * neither changes which events run, nor their count) */
  if (G_UNLIKELY(e->executed == e->hook_at)) run_hook(e);
  while (G_UNLIKELY(e->daemon_at <= when) && !e->stop) {
    run_daemon(e);
    if (other_by(e, when)) return false; /* (a daemon that schedules) */
  }
  if (e->stop) return false;
  e->now = when;
  e->executed++;
  return true;
}

void cs_engine_set_own(CsEngine *e, bool allowed) { e->own_off = !allowed; }
bool cs_engine_own_allowed(const CsEngine *e) { return !e->own_off; }

/* cs_engine_run's loop, to e->until. */
static CsRunResult run_loop(CsEngine *e) {
  const CsTime until = e->until;
  e->stop = false;
  while (!e->stop) {
    if (G_UNLIKELY(e->heap_len == 0) && e->cal_n > 0) cal_refill(e);
    /* an event was dropped at the end of time: with nothing left before
     * it, the run has reached the end of time */
    bool timer = e->timers_len > 0 && (e->heap_len == 0 || key_less(&e->timers[0], &e->heap[0]));
    if (!timer && e->heap_len == 0) return e->overflow && until == CS_TIME_MAX ? CS_RUN_OVERFLOW : CS_RUN_EMPTY;
    HeapEntry top = timer ? e->timers[0] : e->heap[0];
    uint32_t top_slot = ENTRY_SLOT(top);
    Slot *sl = &e->pool[top_slot];
    CsEventFn fn = sl->fn;
    if (G_UNLIKELY(fn == NULL)) { /* cancelled */
      if (timer) timers_pop(e);
      else heap_pop_top(e);
      slot_release(e, top_slot);
      e->cancelled_pending--;
      continue;
    }
    if (G_UNLIKELY(top.time > until)) {
      /* the daemon's times up to the limit come before that event: run
       * them now (a run in slices, or one cut by its duration, samples
       * as one run does, whatever events lie past the limit) */
      while (e->daemon_at <= until && !e->stop) run_daemon(e);
      if (e->stop) continue;
      if (until > e->now) e->now = until;
      return CS_RUN_LIMIT;
    }
    if (G_UNLIKELY(e->daemon_at <= top.time)) { /* the daemon goes first at its time */
      run_daemon(e);
      continue;
    }
    void *ctx = sl->ctx;
    uint64_t arg = sl->arg;
    slot_release(e, top_slot);
    e->now = top.time;
    e->executed++;
    if (G_UNLIKELY(timer)) {
      e->timer_dead = true;
      fn(e, ctx, arg);
      if (e->timer_dead) {
        e->timer_dead = false;
        timers_pop(e);
      }
    } else if (top.order == e->run_head) { /* the bucket's next event takes its place at once */
      heap_pop_top(e);
      fn(e, ctx, arg);
    } else {
      e->top_dead = true;
      fn(e, ctx, arg);
      if (e->top_dead) {
        e->top_dead = false;
        heap_pop(e);
      }
    }
    if (G_UNLIKELY(e->executed == e->hook_at)) run_hook(e);
  }
  return CS_RUN_STOPPED;
}

uint64_t cs_engine_peek_arg(const CsEngine *e, CsEventFn fn) {
  const HeapEntry *h = e->heap, *best = h;
  if (e->top_dead) { /* the running event's place: the least of its children comes next, unless it schedules earlier */
    best = &h[least_of_four(h, 1)];
  }
  if (best->time == CS_TIME_MAX) return UINT64_MAX; /* a sentinel: nothing pending there */
  /* a timer first (the timers' top, or the least of its children while it runs) */
  size_t t0 = e->timer_dead ? 1 : 0, t1 = e->timer_dead ? 5 : 1;
  for (size_t j = t0; j < t1 && j < e->timers_len; j++)
    if (key_less(&e->timers[j], best)) return UINT64_MAX;
  const Slot *sl = &e->pool[ENTRY_SLOT(*best)];
  return sl->fn == fn ? sl->arg : UINT64_MAX;
}

void cs_engine_stop(CsEngine *e) { e->stop = true; }

void cs_engine_set_daemon(CsEngine *e, CsTime when, CsEventFn fn, void *ctx) {
  g_assert(when >= e->now);
  e->daemon_at = fn ? when : CS_TIME_MAX;
  e->daemon_fn = fn;
  e->daemon_ctx = ctx;
}

void cs_engine_set_hook(CsEngine *e, uint64_t every, CsEngineHook fn, void *ctx) {
  e->hook = fn;
  e->hook_ctx = ctx;
  e->hook_every = every;
  e->hook_at = every && fn ? e->executed + every : UINT64_MAX;
}
_Static_assert(offsetof(struct CsEngine, now) == 0, "cs_engine_now reads the first member");
const CsTime *cs_engine_clock(const CsEngine *e) { return &e->now; }
bool cs_engine_overflowed(const CsEngine *e) { return e->overflow; }
uint64_t cs_engine_events_executed(const CsEngine *e) { return e->executed; }
void cs_engine_set_next_seq(CsEngine *e, uint64_t seq) {
  g_assert(seq <= (uint64_t)UINT32_MAX + 1 && seq >= e->next_seq);
  e->next_seq = seq;
}
size_t cs_engine_queued(const CsEngine *e) {
  return e->heap_len + e->cal_n + e->timers_len - (e->top_dead ? 1 : 0) - (e->timer_dead ? 1 : 0);
}
size_t cs_engine_pending(const CsEngine *e) { return cs_engine_queued(e) - e->cancelled_pending; }

/* Drop the executing handler's own entry and cancelled entries at the top,
 * so the heap holds live events only at its root. */
static void settle_top(CsEngine *e) {
  if (e->top_dead) {
    e->top_dead = false;
    heap_pop(e);
  }
  if (e->timer_dead) {
    e->timer_dead = false;
    timers_pop(e);
  }
  for (;;) {
    while (e->heap_len > 0 && e->pool[ENTRY_SLOT(e->heap[0])].fn == NULL) {
      uint32_t s = ENTRY_SLOT(e->heap[0]);
      heap_pop_top(e);
      slot_release(e, s);
      e->cancelled_pending--;
    }
    if (e->heap_len > 0 || e->cal_n == 0) break;
    cal_refill(e); /* the heap ran out: the calendar's next bucket, and its top looked at again */
  }
  while (e->timers_len > 0 && e->pool[ENTRY_SLOT(e->timers[0])].fn == NULL) {
    uint32_t s = ENTRY_SLOT(e->timers[0]);
    timers_pop(e);
    slot_release(e, s);
    e->cancelled_pending--;
  }
}

/* Called from a handler at the end of each of the flow fabric's events:
 * the pop of the running event's entry is left to the next schedule
 * (which takes its place) or to the run, unless the entry that would come
 * up is a cancelled one, which settle_top drops first (the time of the
 * earliest pending event, as before). */
CsTime cs_engine_next_time(CsEngine *e) {
  cal_fill(e);
  const HeapEntry *a = heap_next(e->heap, e->heap_len, e->top_dead);
  const HeapEntry *b = heap_next(e->timers, e->timers_len, e->timer_dead);
  if ((a && !e->pool[ENTRY_SLOT(*a)].fn) || (b && !e->pool[ENTRY_SLOT(*b)].fn)) {
    settle_top(e);
    a = e->heap_len ? &e->heap[0] : NULL;
    b = e->timers_len ? &e->timers[0] : NULL;
  }
  CsTime t = a ? a->time : CS_TIME_MAX, u = b ? b->time : CS_TIME_MAX;
  return u < t ? u : t;
}

/* The earliest live event whose context is (mine) or is not (!mine) ctx,
 * before `t`. */
static CsTime earliest_in(const CsEngine *e, const HeapEntry *h, size_t n, const void *ctx, bool mine, CsTime t) {
  for (size_t i = 0; i < n; i++) {
    const Slot *sl = &e->pool[ENTRY_SLOT(h[i])];
    if (sl->fn && (sl->ctx == ctx) == mine && h[i].time < t) t = h[i].time;
  }
  return t;
}

static CsTime earliest(CsEngine *e, const void *ctx, bool mine, CsTime t) {
  settle_top(e);
  t = earliest_in(e, e->heap, e->heap_len, ctx, mine, t);
  if (e->cal_n > 0) {
    for (uint32_t b = 0; b <= e->cal_mask; b++) t = earliest_in(e, e->cal_b[b].buf, e->cal_b[b].len, ctx, mine, t);
    t = earliest_in(e, e->cal_over.buf, e->cal_over.len, ctx, mine, t);
    if (e->run_head != UINT64_MAX) t = earliest_in(e, e->run + e->run_pos + 1, e->run_len - e->run_pos - 1, ctx, mine, t);
  }
  return earliest_in(e, e->timers, e->timers_len, ctx, mine, t);
}

CsTime cs_engine_next_time_other(CsEngine *e, const void *ctx) {
  return earliest(e, ctx, false, e->daemon_at < e->horizon ? e->daemon_at : e->horizon);
}

void cs_engine_set_horizon(CsEngine *e, CsTime t) { e->horizon = t; }
CsTime cs_engine_horizon(const CsEngine *e) { return e->horizon; }

CsTime cs_engine_next_time_of(CsEngine *e, const void *ctx) { return earliest(e, ctx, true, CS_TIME_MAX); }

/* Can ctx's live entries of h[0..n) move by delta without reaching the end of time; are there any? */
static bool jump_fits(const CsEngine *e, const HeapEntry *h, size_t n, const void *ctx, CsTime delta, bool *moved) {
  for (size_t i = 0; i < n; i++) {
    const Slot *sl = &e->pool[ENTRY_SLOT(h[i])];
    if (sl->ctx != ctx || !sl->fn) continue;
    if (cs_time_add(h[i].time, delta) == CS_TIME_MAX) return false;
    *moved = true;
  }
  return true;
}

/* ctx's live entries of h[0..n) later by delta: the shifted and the
 * unshifted events interleave anew, and the heap is rebuilt (keys
 * unchanged otherwise). */
static void jump_heap(const CsEngine *e, HeapEntry *h, size_t n, const void *ctx, CsTime delta) {
  for (size_t i = 0; i < n; i++) {
    const Slot *sl = &e->pool[ENTRY_SLOT(h[i])];
    if (sl->ctx == ctx && sl->fn) h[i].time += delta;
  }
  heapify(h, n);
}

bool cs_engine_jump(CsEngine *e, const void *ctx, CsTime delta) {
  g_assert(delta >= 0);
  if (delta == 0) return true;
  CsTime to = cs_time_add(e->now, delta);
  if (to == CS_TIME_MAX || cs_engine_next_time_other(e, ctx) < to) return false;
  cal_stop(e);        /* its events move as the heap's (it starts again as the heap grows) */
  bool moved = false; /* checked before anything moves */
  if (!jump_fits(e, e->heap, e->heap_len, ctx, delta, &moved) ||
      !jump_fits(e, e->timers, e->timers_len, ctx, delta, &moved))
    return false;
  if (moved) {
    jump_heap(e, e->heap, e->heap_len, ctx, delta);
    jump_heap(e, e->timers, e->timers_len, ctx, delta);
  }
  e->now = to;
  cal_again(e);
  return true;
}

/* ---- The calendar ----
 *
 * A packet run of a thousand hosts keeps an event for each link
 * direction's pipe: two thousand in the heap, six levels deep, and each
 * event's sift was a quarter of the run; at 8 and 32 hosts (17 and 65
 * entries) the sift was still a fifth, and the calendar gains 4 and 13 %
 * there.  Past CAL_ON entries the heap
 * keeps only the events before cal_lim, the end of the current bucket of
 * time, and the later ones wait unsorted in a calendar (Brown, 1988): a
 * ring of buckets 2^cal_shift ps wide, and an overflow for what lies past
 * the ring.  When the heap runs out, the next bucket that holds events
 * becomes the run: sorted (its events of one time came in the order of
 * their sequence numbers, so most often it is already), its first event
 * in the heap, the next taking its place as each leaves.  An event
 * scheduled before cal_lim joins the run's end when it is not earlier
 * than the run's last, else the heap.  Every event in the heap or the run
 * is earlier than every event in the buckets (they are split by time
 * alone, never between two events of one time), and the heap merges the
 * run with the rest, so the order is the engine's, (time, sequence), as
 * without the calendar: every run of a scenario is the same, event for
 * event.  Timers due within the ring come here too; far ones keep their
 * own heap.
 *
 * The width is chosen when it starts, from a sample of the events then
 * pending (cal_start).  Once it has served four times the events it
 * holds, it is chosen anew (a pass over them) when the calendar has done
 * more work than the events it served (overflow scanned, empty buckets
 * passed, buckets sorted) or when the events pending have doubled or
 * fallen to a quarter.  A spent run's buffer past CAL_KEEP events is
 * freed, so memory follows the events pending.  It stops, every event
 * back into the heap, when fewer than CAL_OFF remain, and for what moves
 * or renumbers every event (a jump, a purge of cancelled events, the
 * sequence's wrap); it starts again as the heap grows past CAL_ON, or at
 * once after those when the heap is past it.
 */
/* A full bucket grows: by doubling, but past CAL_KEEP events into the
 * spare (a large spent run's buffer, kept one at a time) when that holds
 * more: a ring's buckets of some 400 events between small ones had grown
 * from 8 by six reallocations each time (1 % of a 2,048-worker run). */
static G_GNUC_NO_INLINE void bucket_grow(CsEngine *e, struct CalBucket *b) {
  uint32_t want = b->cap ? 2 * b->cap : 8;
  if (want > CAL_KEEP && e->spare_cap > b->cap) {
    if (b->len) memcpy(e->spare, b->buf, (size_t)b->len * sizeof *b->buf);
    g_free(b->buf);
    b->buf = e->spare;
    b->cap = e->spare_cap;
    e->spare = NULL;
    e->spare_cap = 0;
    return;
  }
  b->buf = g_renew(HeapEntry, b->buf, want);
  b->cap = want;
}

static inline void bucket_push(CsEngine *e, struct CalBucket *b, HeapEntry x) {
  if (G_UNLIKELY(b->len == b->cap)) bucket_grow(e, b);
  b->buf[b->len++] = x;
}

static void heap_append(CsEngine *e, HeapEntry x) {
  if (e->heap_len == e->heap_cap) heap_resize(e, e->heap_cap * 2);
  e->heap[e->heap_len++] = x;
}

/* The heap holds the events of the buckets up to cal_cur. */
static void cal_set_lim(CsEngine *e) {
  uint64_t next = e->cal_cur + 1;
  e->cal_lim = next > ((uint64_t)CS_TIME_MAX >> e->cal_shift) ? CS_TIME_MAX : (CsTime)(next << e->cal_shift);
}

/* x (at or past cal_lim) into its bucket, or the overflow past the ring. */
static void cal_put(CsEngine *e, HeapEntry x) {
  uint64_t b = (uint64_t)x.time >> e->cal_shift; /* > cal_cur */
  if (in_ring(e, b)) {
    bucket_push(e, &e->cal_b[b & e->cal_mask], x);
    e->cal_in_buckets++;
  } else {
    bucket_push(e, &e->cal_over, x);
    if (b < e->cal_over_min) e->cal_over_min = b;
  }
  e->cal_n++;
}

/* The overflow's events that the ring now reaches, into their buckets. */
static void cal_migrate(CsEngine *e) {
  struct CalBucket *o = &e->cal_over;
  uint64_t least = UINT64_MAX;
  uint32_t k = 0;
  e->cal_work += o->len;
  for (uint32_t i = 0; i < o->len; i++) {
    uint64_t b = (uint64_t)o->buf[i].time >> e->cal_shift;
    if (in_ring(e, b)) {
      bucket_push(e, &e->cal_b[b & e->cal_mask], o->buf[i]);
      e->cal_in_buckets++;
    } else {
      o->buf[k++] = o->buf[i];
      if (b < least) least = b;
    }
  }
  o->len = k;
  e->cal_over_min = least;
}

/* src[a, m) and src[m, b), each in key order, into dst[a, b). */
static void merge_two(const HeapEntry *src, HeapEntry *dst, uint32_t a, uint32_t m, uint32_t b) {
  uint32_t x = a, y = m, o = a;
  while (x < m && y < b) dst[o++] = key_less(&src[y], &src[x]) ? src[y++] : src[x++];
  while (x < m) dst[o++] = src[x++];
  while (y < b) dst[o++] = src[y++];
}

/* A large bucket in key order by merging its ascending stretches, two by
 * two, until one is left: a ring's buckets of some 400 events out of
 * order are two or three stretches (events scheduled at two moments), a
 * merge or two where qsort's calls cost 112,000 instructions a bucket
 * at 512 workers.  (Keys are unique: the order is the one any sort
 * gives.) */
static void run_merge_sort(CsEngine *e, HeapEntry *r, uint32_t len) {
  if (e->sort_cap < len) {
    g_free(e->sort_tmp);
    e->sort_cap = MAX(len, 2 * e->sort_cap);
    e->sort_tmp = g_new(HeapEntry, e->sort_cap);
  }
  HeapEntry *src = r, *dst = e->sort_tmp;
  for (;;) {
    uint32_t stretches = 0;
    for (uint32_t a = 0; a < len; stretches++) {
      uint32_t m = a + 1;
      while (m < len && key_less(&src[m - 1], &src[m])) m++;
      uint32_t b = m;
      if (b < len)
        for (b++; b < len && key_less(&src[b - 1], &src[b]);) b++;
      merge_two(src, dst, a, m, b);
      a = b;
    }
    HeapEntry *t = src;
    src = dst;
    dst = t;
    if (stretches == 1) break;
  }
  if (src != r) memcpy(r, src, (size_t)len * sizeof *r);
}

/* A bucket in key order: by insertion when small (a few events, most
 * nearly in order), else by merging its ascending stretches. */
static void run_sort(CsEngine *e, HeapEntry *r, uint32_t len) {
  if (len > 32) {
    run_merge_sort(e, r, len);
    return;
  }
  for (uint32_t i = 1; i < len; i++) {
    HeapEntry x = r[i];
    uint32_t j = i;
    for (; j > 0 && key_less(&x, &r[j - 1]); j--) r[j] = r[j - 1];
    r[j] = x;
  }
}

static int cmp_time(const void *a, const void *b) {
  CsTime x = *(const CsTime *)a, y = *(const CsTime *)b;
  return x < y ? -1 : x > y;
}

/* Start: the width from the heap's events, which keeps those before the
 * end of the current bucket (a dead top among them: it is at `now`).
 * The ring spans four times the distance from now of the seven-eighths
 * quantile of the pending events (from a sample of 256 of them, every
 * k-th place of the heap), in buckets of about CAL_PER events: a
 * thousand events of one time fill one bucket, and the ones after them
 * spread over the ring, not into the overflow.  (A ring of twice that
 * distance was too short: the events of a 1,024-host ring spread past
 * it as queues grew, and each move of the overflow into the ring
 * scanned a thousand of them.) */
#define CAL_SAMPLE 256

/* The ring's buckets and their buffers let go. */
static void free_buckets(CsEngine *e) {
  if (e->cal_b)
    for (uint32_t b = 0; b <= e->cal_mask; b++) g_free(e->cal_b[b].buf);
  g_free(e->cal_b);
  e->cal_b = NULL;
}

static void cal_start(CsEngine *e) {
  size_t n = e->heap_len, stride = n / CAL_SAMPLE + 1, m = 0;
  CsTime d[CAL_SAMPLE + 1];
  for (size_t i = 0; i < n; i += stride) d[m++] = e->heap[i].time - e->now;
  qsort(d, m, sizeof *d, cmp_time);
  uint32_t nb = 64;
  while (nb < (1u << 20) && nb < 4 * n / CAL_PER) nb *= 2;
  uint64_t w = (uint64_t)d[m * 7 / 8] / (nb / 4);
  unsigned shift = 0;
  while (shift < 62 && ((uint64_t)2 << shift) <= w) shift++;
  if (nb != e->cal_mask + 1 || !e->cal_b) {
    free_buckets(e);
    e->cal_b = g_new0(struct CalBucket, nb);
    e->cal_mask = nb - 1;
  }
  e->cal_shift = shift;
  e->cal_cur = (uint64_t)e->now >> shift;
  cal_set_lim(e);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    if (e->heap[i].time >= e->cal_lim) cal_put(e, e->heap[i]);
    else e->heap[kept++] = e->heap[i];
  }
  for (size_t i = kept; i < n; i++) e->heap[i] = SENTINEL;
  e->heap_len = kept;
  heapify(e->heap, kept); /* a dead top, the least, stays at the root */
  e->cal_on_len = SIZE_MAX;
  e->cal_exec_at_start = e->executed;
  e->cal_sized = n;
  e->cal_work = 0;
  e->cal_starts++;
}

/* Stop: every event back into the heap, which is rebuilt (keys are
 * unique: the order is the one they had; a dead top, the least, stays at
 * the root). */
static void cal_stop(CsEngine *e) {
  if (e->cal_n > 0) {
    for (uint32_t b = 0; b <= e->cal_mask; b++) {
      struct CalBucket *bk = &e->cal_b[b];
      for (uint32_t i = 0; i < bk->len; i++) heap_append(e, bk->buf[i]);
      bk->len = 0;
    }
    for (uint32_t i = 0; i < e->cal_over.len; i++) heap_append(e, e->cal_over.buf[i]);
    e->cal_over.len = 0;
    if (e->run_head != UINT64_MAX)
      for (uint32_t i = e->run_pos + 1; i < e->run_len; i++) heap_append(e, e->run[i]);
    heapify(e->heap, e->heap_len);
  }
  e->run_head = UINT64_MAX;
  e->run_pos = e->run_len = 0;
  e->cal_n = e->cal_in_buckets = 0;
  e->cal_over_min = UINT64_MAX;
  e->cal_lim = CS_TIME_MAX;
  e->cal_on_len = e->cal_never ? SIZE_MAX : CAL_ON;
}

/* The heap has run out (but for a dead top): the next bucket that holds
 * events comes in (cal_n > 0). */
static void cal_refill_once(CsEngine *e) {
  uint32_t skipped = 0, len;
  for (;;) {
    if (e->cal_in_buckets == 0) e->cal_cur = e->cal_over_min - 1; /* the overflow alone: its first bucket next */
    /* the ring holds cal_cur + 1 .. cal_cur + buckets: the overflow's
     * events there move in before cal_cur + 1 is taken (after, the last
     * of them would share its place) */
    if (in_ring(e, e->cal_over_min)) cal_migrate(e);
    e->cal_cur++;
    struct CalBucket *b = &e->cal_b[e->cal_cur & e->cal_mask];
    if (b->len == 0) {
      skipped++;
      continue;
    }
    e->cal_work += skipped;
    /* the bucket becomes the run, sorted (its events of one time came in
     * the order of their sequence numbers: most often it is already),
     * its first event into the heap; the spent run's buffer becomes the
     * bucket's */
    len = b->len;
    HeapEntry *r = b->buf;
    uint32_t cap = b->cap;
    for (uint32_t i = 1; i < len; i++)
      if (!key_less(&r[i - 1], &r[i])) {
        run_sort(e, r, len);
        e->cal_work += len;
        break;
      }
    if (e->run_cap > CAL_KEEP) { /* a large spent buffer is not parked in the ring: every bucket
                                   * would keep the largest run's size (memory growing as the
                                   * square of the events pending); the largest is kept as the
                                   * spare (bucket_grow), the other let go */
      if (e->run_cap > e->spare_cap) {
        g_free(e->spare);
        e->spare = e->run;
        e->spare_cap = e->run_cap;
      } else {
        g_free(e->run);
      }
      e->run = NULL;
      e->run_cap = 0;
    }
    b->buf = e->run;
    b->cap = e->run_cap;
    b->len = 0;
    e->run = r;
    e->run_cap = cap;
    e->run_len = len;
    e->run_pos = 0;
    e->run_head = r[0].order;
    e->cal_in_buckets -= len;
    e->cal_n--; /* the rest of the run stays outside the heap */
    heap_push(e, r[0]);
    break;
  }
  cal_set_lim(e);
  size_t total = e->heap_len + e->cal_n;
  if (total < CAL_OFF) {
    cal_stop(e);
  } else if (e->executed - e->cal_exec_at_start > 4 * (uint64_t)total &&
             (e->cal_work > 2 * (e->executed - e->cal_exec_at_start) + total || total > 2 * e->cal_sized ||
              4 * total < e->cal_sized)) {
    /* more work on the calendar than events run, or twice or a quarter
     * the events it was sized for: the width and the ring chosen anew */
    cal_stop(e);
    cal_start(e);
  }
}

static void cal_refill(CsEngine *e) {
  do cal_refill_once(e); /* (a width chosen anew may leave the heap empty) */
  while (e->cal_n > 0 && e->heap_len <= (size_t)e->top_dead);
}

static bool run_append(CsEngine *e, HeapEntry x) {
  if (e->run_head == UINT64_MAX) { /* a new run: x is its head, into the heap */
    e->run_len = e->run_pos = 0;
    e->run_head = x.order;
    if (e->run_cap == 0) {
      e->run_cap = 64;
      e->run = g_renew(HeapEntry, e->run, e->run_cap);
    }
    e->run[e->run_len++] = x;
    return false;
  }
  if (G_UNLIKELY(e->run_len == e->run_cap)) {
    if (e->run_pos >= e->run_cap / 2) { /* the events run so far make room (a chain of events at one time: memory stays bounded) */
      memmove(e->run, e->run + e->run_pos, (e->run_len - e->run_pos) * sizeof *e->run);
      e->run_len -= e->run_pos;
      e->run_pos = 0;
    } else {
      e->run_cap = 2 * e->run_cap;
      e->run = g_renew(HeapEntry, e->run, e->run_cap);
    }
  }
  e->run[e->run_len++] = x;
  e->cal_n++;
  return true;
}

static void cal_free(CsEngine *e) {
  free_buckets(e);
  g_free(e->cal_over.buf);
  g_free(e->run);
  g_free(e->sort_tmp);
  g_free(e->spare);
}

uint64_t cs_engine_calendar_starts(const CsEngine *e) { return e->cal_starts; }

void cs_engine_set_calendar(CsEngine *e, bool allowed) {
  e->cal_never = !allowed;
  cal_stop(e);
}
