/* The runtime's bump allocator (internal/rt_arena.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal/rt_arena.h"

#define BLOCK_SIZE 8192

struct aw_arena_block {
    aw_arena_block *next;
    size_t used, size;
    max_align_t data[];
};

void aw_arena_init(aw_arena *a, const aw_allocator *alloc)
{
    a->alloc = alloc;
    a->blocks = NULL;
}

void aw_arena_free(aw_arena *a)
{
    while (a->blocks) {
        aw_arena_block *next = a->blocks->next;
        aw_free(a->alloc, a->blocks);
        a->blocks = next;
    }
}

void *aw_arena_alloc(aw_arena *a, size_t n)
{
    const size_t align = sizeof(max_align_t);
    if (n > SIZE_MAX / 2)
        return NULL;
    n = (n + align - 1) / align * align;
    aw_arena_block *b = a->blocks;
    if (!b || b->size - b->used < n) {
        /* a large request gets a block of its own, behind the current one,
         * so the room left in the current block is not wasted */
        size_t size = n > BLOCK_SIZE / 4 ? n : BLOCK_SIZE;
        aw_arena_block *nb = aw_malloc(a->alloc, sizeof *nb + size);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->size = size;
        if (b && size != BLOCK_SIZE) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            a->blocks = nb;
        }
        b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

char *aw_arena_strndup(aw_arena *a, const char *p, size_t n)
{
    char *d = aw_arena_alloc(a, n + 1);
    if (d) {
        if (n)
            memcpy(d, p, n);
        d[n] = 0;
    }
    return d;
}

char *aw_arena_strdup(aw_arena *a, const char *s) { return aw_arena_strndup(a, s, strlen(s)); }

char *aw_arena_printf(aw_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *d = aw_arena_alloc(a, (size_t)n + 1);
    if (!d)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}
