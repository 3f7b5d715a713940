/* time.h - simulated time: a signed 64-bit count of picoseconds.
 *
 * The type and its saturating sums, apart from the engine, so that what
 * only measures time (codec costs, specs) needs nothing else of it.
 *
 * Layer 0 (base; docs/design.md). Owns simulated time and its saturating
 * sums; does not touch anything else.
 */
#ifndef COMMSIM_TIME_H
#define COMMSIM_TIME_H

#include <stdint.h>

/* Simulated time: a signed 64-bit count of picoseconds (about 106 days). */
typedef int64_t CsTime;

#define CS_PS ((CsTime)1)
#define CS_NS ((CsTime)1000)
#define CS_US ((CsTime)1000000)
#define CS_MS ((CsTime)1000000000)
#define CS_SEC ((CsTime)1000000000000)
#define CS_TIME_MAX INT64_MAX

/* a + b (b >= 0), or CS_TIME_MAX when that would pass the end of
 * simulated time.  CS_TIME_MAX itself is never an event's time: an event
 * scheduled there ends the run with CS_RUN_OVERFLOW, so every sum of times
 * that can grow without bound goes through these. */
static inline CsTime cs_time_add(CsTime a, CsTime b) { return b > CS_TIME_MAX - a ? CS_TIME_MAX : a + b; }
/* a + round(ps) for a real number of picoseconds (ps >= 0), saturating. */
static inline CsTime cs_time_add_real(CsTime a, double ps) {
  if (!(ps < (double)(CS_TIME_MAX - a))) return CS_TIME_MAX; /* also NaN */
  CsTime d = (CsTime)(ps + 0.5);
  return cs_time_add(a, d);
}

/* (ta, a) before (tb, b), times first (never negative), as one unsigned
 * 128-bit compare: a compare and a subtract with borrow, no branch to
 * mispredict (the keys of the engine's and the flow fabric's heaps). */
static inline int cs_time_key_less(CsTime ta, uint64_t a, CsTime tb, uint64_t b) {
  return ((unsigned __int128)(uint64_t)ta << 64 | a) < ((unsigned __int128)(uint64_t)tb << 64 | b);
}

#endif
