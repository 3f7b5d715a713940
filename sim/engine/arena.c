/* arena.c - one block for a computation's large scratch buffers (arena.h). */
#include "config.h"

#include "commsim/arena.h"

#include <stdint.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((size_t)2 << 20)

struct CsArena {
  char *base;   /* the first buffer */
  size_t size;  /* what the buffers may take */
  size_t used;
  void *map;    /* the mapping, or NULL */
  void *heap;   /* or the heap block base is in */
  size_t map_len;
  GPtrArray *blocks; /* CS_ARENA_SEPARATE: each buffer's */
};

CsArena *cs_arena_new(size_t bytes, gboolean one_off) {
  CsArena *a = g_new0(CsArena, 1);
  a->size = bytes;
  if (CS_ARENA_SEPARATE) {
    a->blocks = g_ptr_array_new_with_free_func(g_free);
    return a;
  }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (one_off && bytes >= CS_ARENA_HUGE && bytes <= SIZE_MAX / 2) {
    size_t span = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    size_t len = span + HUGE_PAGE; /* room to start on a 2 MB boundary */
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      a->map = m;
      a->map_len = len;
      a->base = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
      (void)madvise(a->base, span, MADV_HUGEPAGE); /* advice: 4 KB pages where refused */
      return a;
    }
  }
#endif
  a->heap = g_malloc(bytes + CS_ARENA_ALIGN);
  a->base = (char *)(((uintptr_t)a->heap + CS_ARENA_ALIGN - 1) & ~(uintptr_t)(CS_ARENA_ALIGN - 1));
  return a;
}

void *cs_arena_take(CsArena *a, size_t bytes) {
  size_t want = cs_arena_size(1, bytes);
  g_assert(want <= a->size - a->used);
  a->used += want;
  if (a->blocks) {
    void *b = g_malloc(bytes ? bytes : 1);
    g_ptr_array_add(a->blocks, b);
    return b;
  }
  return a->base + a->used - want;
}

gboolean cs_arena_mapped(const CsArena *a) { return a->map != NULL; }

void cs_arena_free(CsArena *a) {
  if (!a) return;
  if (a->blocks) g_ptr_array_free(a->blocks, TRUE);
#ifdef __linux__
  if (a->map) munmap(a->map, a->map_len);
#endif
  g_free(a->heap);
  g_free(a);
}
