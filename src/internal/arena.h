/* A bump allocator: many small allocations, freed all at once. JSON
 * documents live in one so that freeing a document is one pass over a few
 * blocks, whatever its size. */
#ifndef AW_INTERNAL_ARENA_H
#define AW_INTERNAL_ARENA_H

#include <stddef.h>

#include "agentwire/alloc.h"

typedef struct aw_arena_block {
    struct aw_arena_block *next;
    void *raw;   /* what the allocator returned: a large block starts later
                    in it, on a huge-page boundary (see arena.c) */
    size_t cap;
    size_t used;
    /* data follows, 16-byte aligned */
} aw_arena_block;

typedef struct aw_arena {
    const aw_allocator *alloc;
    aw_arena_block *head; /* newest block first */
    size_t total;         /* bytes of all blocks, for growth */
} aw_arena;

void aw__arena_init(aw_arena *a, const aw_allocator *alloc);
/* 8-byte aligned memory, or NULL when the allocator fails. */
void *aw__arena_alloc(aw_arena *a, size_t n);
/* Make sure the next allocations of up to n bytes in total fit in one
 * block (one allocation up front instead of several as the arena grows). */
int aw__arena_reserve(aw_arena *a, size_t n);
/* Forget every allocation but keep the newest block for reuse. */
void aw__arena_reset(aw_arena *a);
void aw__arena_free(aw_arena *a);

#endif
