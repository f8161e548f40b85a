/* agentwire — the one allocator interface.
 *
 * Every allocation the library makes goes through an aw_allocator. Pass NULL
 * wherever an allocator is asked for to get the C library's malloc/realloc/free.
 * Tests plug in an allocator that fails the N-th call to prove that every
 * failure path returns cleanly. */
#ifndef AGENTWIRE_ALLOC_H
#define AGENTWIRE_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_allocator {
    /* Same contracts as malloc/realloc/free; ctx is passed back unchanged.
     * realloc is called with ptr == NULL for a fresh block and never with
     * size == 0. free is called with NULL never. */
    void *(*malloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} aw_allocator;

/* The allocator used when NULL is given: the C library's. */
const aw_allocator *aw_allocator_default(void);

/* NULL-safe helpers that route through `a` (or the default when NULL). */
void *aw_malloc(const aw_allocator *a, size_t size);
void *aw_realloc(const aw_allocator *a, void *ptr, size_t size);
void aw_free(const aw_allocator *a, void *ptr);

#ifdef __cplusplus
}
#endif
#endif
