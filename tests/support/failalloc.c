#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "agentwire/error.h"
#include "failalloc.h"

/* Blocks carry a header so that live blocks are counted exactly and a
 * foreign pointer is caught. */
typedef struct hdr {
    size_t size;
    size_t magic;
} hdr;
#define MAGIC ((size_t)0xA110C8ED)

/* The counts are atomic: a sink's delivery thread (sink_webhook.c)
 * allocates beside the run's thread. */
static bool should_fail(aw_failalloc *fa) {
    long n = __atomic_add_fetch(&fa->calls, 1, __ATOMIC_SEQ_CST);
    if ((fa->fail_at >= 0 && n == fa->fail_at) || (fa->sticky && __atomic_load_n(&fa->failed, __ATOMIC_SEQ_CST))) {
        __atomic_store_n(&fa->failed, true, __ATOMIC_SEQ_CST);
        return true;
    }
    return false;
}

static void *new_block(aw_failalloc *fa, size_t size) {
    hdr *h = malloc(sizeof(hdr) + size);
    if (!h) return NULL;
    h->size = size;
    h->magic = MAGIC;
    __atomic_add_fetch(&fa->live, 1, __ATOMIC_SEQ_CST);
    return h + 1;
}

static void *fa_malloc(void *ctx, size_t size) {
    aw_failalloc *fa = ctx;
    if (should_fail(fa)) return NULL;
    return new_block(fa, size);
}

static void *fa_realloc(void *ctx, void *p, size_t size) {
    aw_failalloc *fa = ctx;
    if (should_fail(fa)) return NULL;
    if (!p) return new_block(fa, size);
    hdr *h = (hdr *)p - 1;
    if (h->magic != MAGIC) abort();
    hdr *n = realloc(h, sizeof(hdr) + size);
    if (!n) return NULL;
    n->size = size;
    return n + 1;
}

static void fa_free(void *ctx, void *p) {
    aw_failalloc *fa = ctx;
    if (!p) return;
    hdr *h = (hdr *)p - 1;
    if (h->magic != MAGIC) abort();
    h->magic = 0;
    __atomic_sub_fetch(&fa->live, 1, __ATOMIC_SEQ_CST);
    free(h);
}

void aw_failalloc_init(aw_failalloc *fa, long fail_at) {
    fa->base.malloc = fa_malloc;
    fa->base.realloc = fa_realloc;
    fa->base.free = fa_free;
    fa->base.ctx = fa;
    fa->fail_at = fail_at;
    fa->sticky = false;
    fa->calls = 0;
    fa->live = 0;
    fa->failed = false;
}

const aw_allocator *aw_failalloc_allocator(aw_failalloc *fa) { return &fa->base; }

long aw_failalloc_run(int (*fn)(const aw_allocator *a, void *ctx), void *ctx, long max_calls) {
    aw_failalloc fa;
    aw_failalloc_init(&fa, -1);
    int rc = fn(&fa.base, ctx);
    assert_int_equal(rc, 0);
    assert_int_equal(fa.live, 0);
    long total = fa.calls;
    long limit = (max_calls > 0 && max_calls < total) ? max_calls : total;
    for (long n = 1; n <= limit; n++) {
        aw_failalloc_init(&fa, n);
        rc = fn(&fa.base, ctx);
        if (fa.failed && rc != 0) assert_true(rc < 0);
        if (fa.live != 0) fail_msg("allocation failure %ld of %ld leaked %ld block(s)", n, total, fa.live);
    }
    return total;
}

void aw_failalloc_run_sticky(int (*fn)(const aw_allocator *a, void *ctx), void *ctx) {
    for (long n = 1;; n++) {
        aw_failalloc fa;
        aw_failalloc_init(&fa, n);
        fa.sticky = true;
        int rc = fn(&fa.base, ctx);
        if (fa.live != 0) fail_msg("allocation %ld failed for good: %ld block(s) leaked", n, fa.live);
        if (!fa.failed) {
            assert_int_equal(rc, 0);
            return; /* fewer than n allocations: all done */
        }
        assert_int_equal(rc, AW_ENOMEM);
    }
}
