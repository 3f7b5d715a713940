/* arena.h - one block for a computation's large scratch buffers.
 *
 * A first touch of a page costs 12-17 us on the virtual machines commsim
 * is measured on (bench/RESULTS.md): the nmse estimate's 1-2 MB
 * of buffers took more page faults than the whole packet simulation of
 * the hybrid ns-3 ring.  A one-off block (a computation the process does
 * once) of CS_ARENA_HUGE bytes or more is mapped on 2 MB boundaries and
 * advised for transparent huge pages (Linux, where the kernel allows
 * them: one fault per 2 MB); any other is one heap allocation, which the
 * heap reuses when the same computation comes again (a training round:
 * a mapping per round would fault and zero a fresh 2 MB each time).
 * Buffers are handed out in order, each 64-byte aligned, and let go all
 * at once; their contents are undefined.  Under AddressSanitizer each
 * buffer is a heap block of its own (16-byte aligned), so that an
 * overrun from one into the next is caught (valgrind's memcheck does not
 * see such overruns: the buffers have no red zones between them).
 *
 * Layer 0 (base; docs/design.md): touches nothing else.
 */
#ifndef COMMSIM_ARENA_H
#define COMMSIM_ARENA_H

#include <glib.h>
#include <stddef.h>

#define CS_ARENA_HUGE ((size_t)1 << 20)
#define CS_ARENA_ALIGN ((size_t)64)

/* 1 where each buffer is a heap block of its own (AddressSanitizer) */
#if defined(__SANITIZE_ADDRESS__)
#define CS_ARENA_SEPARATE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CS_ARENA_SEPARATE 1
#endif
#endif
#ifndef CS_ARENA_SEPARATE
#define CS_ARENA_SEPARATE 0
#endif

typedef struct CsArena CsArena;

/* A block for buffers of `bytes` in all, each counted rounded up to
 * CS_ARENA_ALIGN (cs_arena_size sums them so); `one_off`: the process
 * does this computation once (mapped for huge pages when large). */
CsArena *cs_arena_new(size_t bytes, gboolean one_off);
/* The next `bytes` of the block; past its size is a programming error. */
void *cs_arena_take(CsArena *a, size_t bytes);
void cs_arena_free(CsArena *a);
/* What `count` buffers of `bytes` take of a block. */
static inline size_t cs_arena_size(size_t count, size_t bytes) {
  return count * ((bytes + CS_ARENA_ALIGN - 1) / CS_ARENA_ALIGN * CS_ARENA_ALIGN);
}
/* Whether the block was mapped for huge pages (for tests). */
gboolean cs_arena_mapped(const CsArena *a);

#endif
