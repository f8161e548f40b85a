/* MADV_HUGEPAGE is a Linux extension, hidden by -std=c11 without this. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "internal/arena.h"

#define BLOCK_HEADER ((sizeof(aw_arena_block) + 15) & ~(size_t)15)
#define MIN_BLOCK 4096

/* Large blocks (a big document's copy and values) are placed on 2 MiB
 * boundaries and marked for transparent huge pages where the system has
 * them. Fresh memory costs a page fault per page touched, and on virtual
 * machines a fault per 4 KiB costs more than parsing the bytes in it; a
 * huge page brings 2 MiB per fault. Only the placement uses the caller's
 * allocator (HUGE_PAGE more bytes, never touched); the advice is a hint
 * that is harmless where it does not apply, so its result is ignored. */
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN_BLOCK ((size_t)4 << 20)
#else
#define HUGE_PAGE 0
#define HUGE_MIN_BLOCK SIZE_MAX
#endif

void aw__arena_init(aw_arena *a, const aw_allocator *alloc) {
    a->alloc = alloc;
    a->head = NULL;
    a->total = 0;
}

/* Allocate a block of at least cap data bytes; *cap gets the real size. */
static aw_arena_block *place_block(aw_arena *a, size_t *cap) {
    if (*cap < HUGE_MIN_BLOCK) {
        void *raw = aw_malloc(a->alloc, BLOCK_HEADER + *cap);
        if (!raw) return NULL;
        aw_arena_block *b = raw;
        b->raw = raw;
        return b;
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    size_t rounded = (*cap + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (rounded < *cap || rounded > SIZE_MAX - BLOCK_HEADER - HUGE_PAGE) return NULL;
    char *raw = aw_malloc(a->alloc, BLOCK_HEADER + HUGE_PAGE + rounded);
    if (!raw) return NULL;
    uintptr_t data = ((uintptr_t)raw + BLOCK_HEADER + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    madvise((void *)data, rounded, MADV_HUGEPAGE);
    aw_arena_block *b = (aw_arena_block *)(data - BLOCK_HEADER);
    b->raw = raw;
    *cap = rounded;
    return b;
#else
    return NULL; /* not reached: HUGE_MIN_BLOCK is SIZE_MAX */
#endif
}

static aw_arena_block *new_block(aw_arena *a, size_t need, int exact) {
    /* Grow geometrically with the arena so the number of blocks stays
     * logarithmic in the document size. A reservation for a fresh arena
     * (a document's first block: the caller knows what it needs) takes
     * what it asked for, not the 4 KiB minimum: many small documents kept
     * at once then take a third less memory, and fresh memory costs page
     * faults. */
    size_t cap = exact ? need : a->total < MIN_BLOCK ? MIN_BLOCK : a->total;
    if (cap < need) cap = need;
    if (cap > SIZE_MAX - BLOCK_HEADER) return NULL;
    aw_arena_block *b = place_block(a, &cap);
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
        b = new_block(a, n, 0);
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
    return new_block(a, n, a->head == NULL) ? 0 : -1;
}

void aw__arena_reset(aw_arena *a) {
    aw_arena_block *keep = a->head;
    if (!keep) return;
    aw_arena_block *b = keep->next;
    while (b) {
        aw_arena_block *next = b->next;
        aw_free(a->alloc, b->raw);
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
        aw_free(a->alloc, b->raw);
        b = next;
    }
    a->head = NULL;
    a->total = 0;
}
