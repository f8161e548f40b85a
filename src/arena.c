#include <stdint.h>
#include <string.h>

#include "internal/arena.h"

#define BLOCK_HEADER ((sizeof(aw_arena_block) + 15) & ~(size_t)15)
#define MIN_BLOCK 4096

void aw__arena_init(aw_arena *a, const aw_allocator *alloc) {
    a->alloc = alloc;
    a->head = NULL;
    a->total = 0;
}

static aw_arena_block *new_block(aw_arena *a, size_t need) {
    /* Grow geometrically with the arena so the number of blocks stays
     * logarithmic in the document size. */
    size_t cap = a->total < MIN_BLOCK ? MIN_BLOCK : a->total;
    if (cap < need) cap = need;
    if (cap > SIZE_MAX - BLOCK_HEADER) return NULL;
    aw_arena_block *b = aw_malloc(a->alloc, BLOCK_HEADER + cap);
    if (!b) return NULL;
    b->cap = cap;
    b->used = 0;
    b->next = a->head;
    a->head = b;
    a->total += cap;
    return b;
}

void *aw__arena_alloc(aw_arena *a, size_t n) {
    if (n > SIZE_MAX - 16) return NULL;
    n = (n + 7) & ~(size_t)7;
    aw_arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        b = new_block(a, n);
        if (!b) return NULL;
    }
    void *p = (char *)b + BLOCK_HEADER + b->used;
    b->used += n;
    return p;
}

int aw__arena_reserve(aw_arena *a, size_t n) {
    if (n > SIZE_MAX - 16) return -1;
    n = (n + 7) & ~(size_t)7;
    if (a->head && a->head->cap - a->head->used >= n) return 0;
    return new_block(a, n) ? 0 : -1;
}

void aw__arena_reset(aw_arena *a) {
    aw_arena_block *keep = a->head;
    if (!keep) return;
    aw_arena_block *b = keep->next;
    while (b) {
        aw_arena_block *next = b->next;
        aw_free(a->alloc, b);
        b = next;
    }
    keep->next = NULL;
    keep->used = 0;
    a->total = keep->cap;
}

void aw__arena_free(aw_arena *a) {
    aw_arena_block *b = a->head;
    while (b) {
        aw_arena_block *next = b->next;
        aw_free(a->alloc, b);
        b = next;
    }
    a->head = NULL;
    a->total = 0;
}
