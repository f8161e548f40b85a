/* The explicit stack of a walk over nested JSON values (no recursion on
 * input depth): it starts in an array on the C stack and moves to the
 * heap only for deep values. */
#ifndef AW_INTERNAL_WALK_STACK_H
#define AW_INTERNAL_WALK_STACK_H

#include <string.h>

#include "agentwire/alloc.h"

/* Double *cap entries of elem bytes: a stack still in `local` (the
 * caller's C-stack array) is copied to the heap, a heap one reallocated.
 * Returns the new stack, or NULL (the old one untouched) when out of
 * memory. */
static inline void *aw__walk_stack_grow(const aw_allocator *alloc, void *stack, const void *local, size_t *cap,
                                        size_t elem) {
    size_t bytes = 2 * *cap * elem;
    void *grown = stack == local ? aw_malloc(alloc, bytes) : aw_realloc(alloc, stack, bytes);
    if (!grown) return NULL;
    if (stack == local) memcpy(grown, local, *cap * elem);
    *cap *= 2;
    return grown;
}

#endif
