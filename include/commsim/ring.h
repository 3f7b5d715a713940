/* ring.h - the growable containers of the simulated path, written once.
 *
 * A ring: a FIFO of any type, its capacity a power of two so that an
 * index wraps with a mask; it doubles when full, keeping the order.  A
 * pool: slots reused through a free list threaded through a field of the
 * slot's own type, so a packet or a pending step costs no allocation once
 * the pool has grown to what is in flight.  A growable array: doubling.
 * A binary min-heap over a growable array, ordered by a `less` macro or
 * function of two element pointers.
 *
 * Macros, so that each user keeps its struct compact, its element type
 * and the fast path inlined (the packet path runs through them).
 *
 * Layer 0 (base; docs/design.md). Owns the ring, pool, growable array and
 * heap macros; does not touch anything else.
 */
#ifndef COMMSIM_RING_H
#define COMMSIM_RING_H

#include <glib.h>
#include <stdint.h>
#include <string.h>

/* ---- ring ---- */
#define CS_RING(T)                 \
  struct {                         \
    T *buf;                        \
    uint32_t head, len, cap;       \
  }
/* The i-th from the front (i < len). */
#define CS_RING_AT(r, i) ((r).buf[((r).head + (uint32_t)(i)) & ((r).cap - 1)])
#define CS_RING_FRONT(r) ((r).buf[(r).head])
#define CS_RING_BACK(r) CS_RING_AT(r, (r).len - 1)
/* Append a value at the back; a full ring doubles (from `first`, a power of two). */
#define CS_RING_PUSH(r, first, ...)                                                                     \
  do {                                                                                                \
    if (G_UNLIKELY((r).len == (r).cap))                                                               \
      cs_ring_grow((void **)&(r).buf, &(r).head, (r).len, &(r).cap, sizeof *(r).buf, (first));        \
    CS_RING_AT(r, (r).len) = __VA_ARGS__;                                                             \
    (r).len++;                                                                                        \
  } while (0)
/* Drop the front (len > 0). */
#define CS_RING_POP(r) ((r).head = ((r).head + 1) & ((r).cap - 1), (r).len--)
#define CS_RING_FREE(r) (g_free((r).buf), (r).buf = NULL, (r).head = (r).len = (r).cap = 0)

/* Double a ring's storage, its elements moved to the front in order. */
static inline void cs_ring_grow(void **buf, uint32_t *head, uint32_t len, uint32_t *cap, size_t elem, uint32_t first) {
  uint32_t n = *cap ? 2 * *cap : first;
  g_assert(n > len && (n & (n - 1)) == 0);
  char *b = g_malloc((size_t)n * elem);
  uint32_t tail = *cap ? *cap - *head : 0; /* elements from head to the end of the old storage */
  if (tail > len) tail = len;
  if (len) memcpy(b, (char *)*buf + (size_t)*head * elem, (size_t)tail * elem);
  if (len > tail) memcpy(b + (size_t)tail * elem, *buf, (size_t)(len - tail) * elem);
  g_free(*buf);
  *buf = b;
  *head = 0;
  *cap = n;
}

/* ---- growable array ---- */
/* Room for element `len` of array `ptr` of capacity `cap` (doubling from `first`). */
#define CS_GROW(ptr, len, cap, first)                                 \
  do {                                                                \
    if (G_UNLIKELY((len) == (cap))) {                                 \
      (cap) = (cap) ? 2 * (cap) : (first);                            \
      (ptr) = g_renew(__typeof__(*(ptr)), (ptr), (cap));              \
    }                                                                 \
  } while (0)

/* ---- binary min-heap (array `h` of `len` elements, capacity `cap`) ---- */
/* Add x (an lvalue of the element type). */
#define CS_HEAP_PUSH(h, len, cap, first, x, less)          \
  do {                                                     \
    CS_GROW(h, len, cap, first);                           \
    uint32_t i_ = (len)++;                                 \
    while (i_ > 0 && less(&(x), &(h)[(i_ - 1) / 2])) {     \
      (h)[i_] = (h)[(i_ - 1) / 2];                         \
      i_ = (i_ - 1) / 2;                                   \
    }                                                      \
    (h)[i_] = (x);                                         \
  } while (0)
/* Put x (a value of the element type) at place `at` or below it, moving
 * lesser children up (len > at; h[at] is free). */
#define CS_HEAP_DOWN(h, len, at, x, less)                                   \
  do {                                                                      \
    __typeof__(*(h)) x_ = (x);                                              \
    uint32_t i_ = (at);                                                     \
    for (;;) {                                                              \
      uint32_t c_ = 2 * i_ + 1;                                             \
      if (c_ >= (len)) break;                                               \
      if (c_ + 1 < (len) && less(&(h)[c_ + 1], &(h)[c_])) c_++;             \
      if (!less(&(h)[c_], &x_)) break;                                      \
      (h)[i_] = (h)[c_];                                                    \
      i_ = c_;                                                              \
    }                                                                       \
    (h)[i_] = x_;                                                           \
  } while (0)
/* Take the least element into `out` (len > 0). */
#define CS_HEAP_POP(h, len, out, less)                                      \
  do {                                                                      \
    (out) = (h)[0];                                                         \
    if (--(len)) CS_HEAP_DOWN(h, len, 0, (h)[len], less);                   \
  } while (0)

/* ---- pool ---- */
#define CS_POOL_NONE UINT32_MAX
/* A slot of array `items` (used `len`, capacity `cap`): the head of the
 * free list `free` (threaded through each slot's field `next`), else a
 * new one at the end.  Its index into `out`. */
#define CS_POOL_TAKE(items, len, cap, free, next, first, out) \
  do {                                                         \
    (out) = (free);                                            \
    if (G_LIKELY((out) != CS_POOL_NONE)) {                     \
      (free) = (items)[(out)].next;                            \
    } else {                                                   \
      CS_GROW(items, len, cap, first);                         \
      (out) = (len)++;                                         \
    }                                                          \
  } while (0)
/* Give slot `slot` back. */
#define CS_POOL_PUT(items, free, next, slot) \
  do {                                       \
    (items)[(slot)].next = (free);           \
    (free) = (slot);                         \
  } while (0)

#endif
