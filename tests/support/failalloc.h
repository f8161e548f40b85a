/* Test allocator that fails on demand, and a driver that proves every
 * allocation failure is handled: run the code once to count its
 * allocations, then again failing the 1st, the 2nd, ... in turn; each run
 * must return cleanly (an error code, or success when the code recovers)
 * with no block left allocated. */
#ifndef AW_TEST_FAILALLOC_H
#define AW_TEST_FAILALLOC_H

#include <stdbool.h>
#include <stddef.h>

#include "agentwire/alloc.h"

typedef struct aw_failalloc {
    aw_allocator base;
    long fail_at;   /* the N-th call (1-based) to malloc/realloc fails; -1: never */
    bool sticky;    /* after the first failure, fail every later call too */
    long calls;     /* malloc + realloc calls so far */
    long live;      /* blocks allocated and not freed */
    bool failed;    /* a failure was injected */
} aw_failalloc;

void aw_failalloc_init(aw_failalloc *fa, long fail_at);
const aw_allocator *aw_failalloc_allocator(aw_failalloc *fa);

/* fn runs the code under test with the given allocator and returns its
 * status (0 or a negative AW_E* code) after freeing everything it made.
 * Runs fn once to count calls (up to max_calls are swept; 0: all), then
 * once per failure point, asserting (cmocka) a negative return whenever a
 * failure was injected and fn did not succeed anyway, and no live blocks.
 * Returns the number of allocation calls of the clean run. */
long aw_failalloc_run(int (*fn)(const aw_allocator *a, void *ctx), void *ctx, long max_calls);

/* As aw_failalloc_run, but once an allocation fails every later one fails
 * too (the allocator stays out of memory), which takes the cleanup paths
 * that a single failure, recovered from, does not: each run must return
 * AW_ENOMEM with nothing left allocated, until a run needs fewer
 * allocations than the failure point and must succeed. */
void aw_failalloc_run_sticky(int (*fn)(const aw_allocator *a, void *ctx), void *ctx);

#endif
