/* engine.h - the discrete-event core of commsim.
 *
 * An engine owns a clock (integer picoseconds), a queue of pending events
 * and nothing else: it knows nothing of networks, packets or training.
 * Events are a plain function, a context pointer and one 64-bit argument.
 * Events with equal times run in the order they were scheduled (FIFO), so
 * the same program with the same seed executes the same sequence, every
 * run.
 *
 * The queue is an array-based 4-ary min-heap of (time, sequence, slot)
 * keys, and a second one for timers (cs_engine_schedule_timer_at), the
 * earlier of their tops running next; event bodies live in a growable pool recycled through a free list,
 * so scheduling does not call malloc once the pool has grown to the number
 * of events pending at once.  Cancelling is O(1): the event is marked and
 * skipped when its time comes (as ns-3's EventId::Cancel does).
 *
 * Layer 0 (base; docs/design.md). Owns the clock, the event queue, hooks and
 * the daemon timer; does not touch what events do.
 */
#ifndef COMMSIM_ENGINE_H
#define COMMSIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsim/time.h"

typedef struct CsEngine CsEngine;

/* An event handler.  `ctx` and `arg` are what was given to schedule. */
typedef void (*CsEventFn)(CsEngine *engine, void *ctx, uint64_t arg);

/* Names one scheduled event; stays unique after the event has run (a
 * generation count guards slot reuse), so cancelling a stale id is a
 * harmless no-op.  0 is never a valid id. */
typedef uint64_t CsEventId;
#define CS_EVENT_NONE ((CsEventId)0)

typedef enum {
  CS_RUN_EMPTY,    /* no event left */
  CS_RUN_LIMIT,    /* the next event lies beyond the time limit */
  CS_RUN_STOPPED,  /* cs_engine_stop() was called */
  CS_RUN_OVERFLOW, /* every event is done but one scheduled past CS_TIME_MAX
                      (only when running without a time limit) */
} CsRunResult;

CsEngine *cs_engine_new(void);
void cs_engine_free(CsEngine *engine);

/* Schedule `fn(engine, ctx, arg)` at absolute time `when` (>= now).  At
 * CS_TIME_MAX (a saturated sum) nothing is scheduled: the engine records
 * the overflow, and a run without a time limit (until = CS_TIME_MAX) that
 * executes every other event ends with CS_RUN_OVERFLOW instead of
 * CS_RUN_EMPTY.  A run with a limit, or one that is stopped, never gets
 * there and reports as usual. */
CsEventId cs_engine_schedule_at(CsEngine *engine, CsTime when, CsEventFn fn,
                                void *ctx, uint64_t arg);
/* As cs_engine_schedule_at, for a timer: an event that mostly waits far
 * ahead or is moved (a connection's retransmission timer, a queue pair's
 * pacing).  Timers wait in a heap of their own, so that the many near
 * events (a packet's arrival at the next hop) do not sift past them; the
 * order of all events is the same: by time, then by scheduling order
 * across both.  Cancelled, counted and jumped as any other event. */
CsEventId cs_engine_schedule_timer_at(CsEngine *engine, CsTime when, CsEventFn fn, void *ctx, uint64_t arg);
/* Schedule after `delay` (>= 0) from now; a delay past the end of
 * simulated time is treated as at CS_TIME_MAX (above). */
CsEventId cs_engine_schedule(CsEngine *engine, CsTime delay, CsEventFn fn,
                             void *ctx, uint64_t arg);
/* One timer that does not keep the run going (a sampler): fn(engine, ctx,
 * 0) runs at `when` only if some other event lies at or after it, before
 * the other events of that time; a run whose other events are all done
 * ends without it, its clock at the last of them.  It is not counted in
 * cs_engine_events_executed.  Setting it again replaces it; CS_TIME_MAX
 * (or a NULL fn) clears it. */
void cs_engine_set_daemon(CsEngine *engine, CsTime when, CsEventFn fn, void *ctx);

/* Cancel a pending event.  Returns true if it was pending.  A cancelled
 * event's entry stays queued until its time or until cancelled entries
 * make a quarter of the queue (then they are all dropped at once). */
bool cs_engine_cancel(CsEngine *engine, CsEventId id);
/* Whether `id` is scheduled and neither executed nor cancelled. */
bool cs_engine_is_pending(const CsEngine *engine, CsEventId id);

/* Execute events in order until the queue is empty, the next event lies
 * after `until` (then now = until), or a handler calls cs_engine_stop().
 * A later call continues where this one ended. */
CsRunResult cs_engine_run(CsEngine *engine, CsTime until);
/* Ask the running loop to return after the current event. */
void cs_engine_stop(CsEngine *engine);

/* For a handler about to schedule an event of its own at `when` (>= now):
 * whether that event would run next and at once, i.e. every other
 * pending event lies after `when` (a cancelled one counts as pending),
 * `when` is within the running cs_engine_run's limit and no stop was
 * asked.  Then what the loop does between two events is done here (the
 * hook when due, the daemon when its time comes first, either of which
 * may stop the run: false), the clock moves to `when` and the event
 * counts as executed; the handler does what that event would do itself,
 * the engine's schedule, sift and dispatch saved (a flow fidelity's
 * next fluid end or delivery is most often such an event).  The events
 * run, their order and their count are those of scheduling it.  False:
 * schedule it.  Only from a handler. */
bool cs_engine_advance_own(CsEngine *engine, CsTime when);
/* A place in the order of events, for an event whose owner decides
 * later whether to schedule it (a flow fidelity's plan, held back while
 * the events it makes run inline).  Among the events of its time, the
 * event scheduled with cs_engine_schedule_at_place comes where it would
 * have come had it been scheduled when the place was taken: before those
 * scheduled since.  One place at a time; dropping it schedules nothing. */
void cs_engine_take_place(CsEngine *engine);
CsEventId cs_engine_schedule_at_place(CsEngine *engine, CsTime when, CsEventFn fn, void *ctx, uint64_t arg);
void cs_engine_drop_place(CsEngine *engine);
bool cs_engine_holds_place(const CsEngine *engine);
/* Whether cs_engine_advance_own may say yes (true by default).  Off, it
 * always says no, and its callers schedule every event as it comes: the
 * reference that tests compare the own path with. */
void cs_engine_set_own(CsEngine *engine, bool allowed);
bool cs_engine_own_allowed(const CsEngine *engine);

/* Call `fn` between events, after every `every` events executed and every
 * `every` runs of the daemon (0 or a NULL fn: never); a false return stops
 * the run (CS_RUN_STOPPED).  For
 * checks that must see the state between events; it costs the loop one
 * compare per event. */
typedef bool (*CsEngineHook)(CsEngine *engine, void *ctx);
void cs_engine_set_hook(CsEngine *engine, uint64_t every, CsEngineHook fn, void *ctx);

/* The current time.  Inline, read through the engine's first member (the
 * rest stays private): every hop reads it, and a call cost 1-2 % of a
 * packet run. */
static inline CsTime cs_engine_now(const CsEngine *engine) { return *(const CsTime *)(const void *)engine; }
/* The argument of the event likely to run next (the least pending one
 * once the running event's place is given up), if its function is `fn`;
 * UINT64_MAX otherwise.  For prefetching what it will touch. */
uint64_t cs_engine_peek_arg(const CsEngine *engine, CsEventFn fn);
/* Where the engine keeps the current time, for a hot path that reads it
 * often (*clock == cs_engine_now, for the engine's lifetime). */
const CsTime *cs_engine_clock(const CsEngine *engine);
/* Whether an event was dropped at CS_TIME_MAX (a caller that runs in
 * slices sees CS_RUN_EMPTY at the end, and asks this). */
bool cs_engine_overflowed(const CsEngine *engine);
/* Events executed so far (cancelled ones are not counted). */
uint64_t cs_engine_events_executed(const CsEngine *engine);

/* How many times the calendar started: past 16 pending events the
 * engine keeps the later ones in buckets of time beside its heap (the
 * order of events is the same; for tests and measurements). */
uint64_t cs_engine_calendar_starts(const CsEngine *engine);

/* Allow the calendar (the default) or keep every event in the heap (for
 * checking that the calendar changes nothing; the run is slower past a
 * thousand pending events). */
void cs_engine_set_calendar(CsEngine *engine, bool allowed);
/* For tests: the next scheduling sequence number, so that a test reaches
 * the renumbering at 2^32 (after which pending events are numbered anew
 * in their order) without 2^32 schedules.  At most 2^32; seq must exceed
 * every pending event's (use it on a new engine). */
void cs_engine_set_next_seq(CsEngine *engine, uint64_t seq);
/* Events scheduled and neither executed nor cancelled. */
size_t cs_engine_pending(const CsEngine *engine);
/* Entries in the queue: the pending events and the cancelled ones not yet dropped. */
size_t cs_engine_queued(const CsEngine *engine);
/* Time of the earliest pending event, or CS_TIME_MAX when none. */
CsTime cs_engine_next_time(CsEngine *engine);

/* Fast-forwarding one owner's events (hybrid fidelity): the earliest
 * pending event whose context is not `ctx`, or the daemon's time or the
 * horizon if earlier (CS_TIME_MAX: none). */
CsTime cs_engine_next_time_other(CsEngine *engine, const void *ctx);
/* The end of simulated time for jumps (a run's duration; CS_TIME_MAX by
 * default).  cs_engine_run's `until` does not bound them: a run in slices
 * (a progress display) jumps as one run does, and a jump may take the
 * clock past a slice's end. */
void cs_engine_set_horizon(CsEngine *engine, CsTime t);
CsTime cs_engine_horizon(const CsEngine *engine);
/* The earliest pending event whose context is `ctx` (the running
 * handler's own aside), or CS_TIME_MAX when it has none. */
CsTime cs_engine_next_time_of(CsEngine *engine, const void *ctx);
/* Move the clock `delta` (>= 0) ahead and every pending event whose
 * context is `ctx` with it, as if that owner's part of the simulation had
 * been translated in time; the others keep their times.  Refused (false,
 * nothing changed) when another event or the daemon lies before the new
 * time.  May be called from a handler. */
bool cs_engine_jump(CsEngine *engine, const void *ctx, CsTime delta);

#endif
