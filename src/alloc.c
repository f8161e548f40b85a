/* The default allocator and the NULL-safe helpers every module calls. */
#include <stdlib.h>

#include "agentwire/alloc.h"

static void *libc_malloc(void *ctx, size_t size) { (void)ctx; return malloc(size); }
static void *libc_realloc(void *ctx, void *p, size_t size) { (void)ctx; return realloc(p, size); }
static void libc_free(void *ctx, void *p) { (void)ctx; free(p); }

static const aw_allocator libc_allocator = {libc_malloc, libc_realloc, libc_free, NULL};

const aw_allocator *aw_allocator_default(void) { return &libc_allocator; }

void *aw_malloc(const aw_allocator *a, size_t size) {
    if (!a) a = &libc_allocator;
    return a->malloc(a->ctx, size ? size : 1);
}

void *aw_realloc(const aw_allocator *a, void *ptr, size_t size) {
    if (!a) a = &libc_allocator;
    return a->realloc(a->ctx, ptr, size ? size : 1);
}

void aw_free(const aw_allocator *a, void *ptr) {
    if (!ptr) return;
    if (!a) a = &libc_allocator;
    a->free(a->ctx, ptr);
}
