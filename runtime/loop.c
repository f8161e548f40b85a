/* The event loop: poll(2) over the watched descriptors, a binary heap of
 * timers, and a queue of deferred calls.
 *
 * Handles freed during a dispatch are only marked dead and unlinked; their
 * memory goes at the end of the round, so a callback may free any handle
 * (its own included) and the loop never reads freed memory. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "agentwire/loop.h"

struct aw_watch {
    aw_loop *loop;
    int fd;
    unsigned events;
    aw_watch_fn fn;
    void *ctx;
    bool dead;
    size_t index; /* in loop->watches */
    aw_watch *next_dead;
};

struct aw_timer {
    aw_loop *loop;
    int64_t deadline;
    uint64_t seq; /* ties broken by arming order, so equal deadlines fire FIFO */
    aw_timer_fn fn;
    void *ctx;
    long heap_index; /* -1: not armed */
    bool dead;
    aw_timer *next_dead;
};

typedef struct deferred {
    aw_defer_fn fn;
    void *ctx;
} deferred;

struct aw_loop {
    const aw_allocator *alloc;
    aw_watch **watches;
    size_t nwatches, cap_watches;
    aw_timer **heap;
    size_t nheap, cap_heap;
    uint64_t timer_seq;
    deferred *defers;
    size_t ndefers, cap_defers;
    struct pollfd *pfds;
    aw_watch **pwatch; /* the watch of each pollfd */
    size_t cap_pfds, cap_pwatch;
    aw_watch *dead_watches;
    aw_timer *dead_timers;
    int dispatching;
    bool stopped;
    int64_t now;
};

int64_t aw_loop_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Grow *p (elements of size sz) to hold at least need. */
static int grow(const aw_allocator *a, void **p, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    void *q = aw_realloc(a, *p, n * sz);
    if (!q)
        return AW_ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

aw_loop *aw_loop_new(const aw_allocator *alloc, aw_error *err)
{
    aw_loop *l = aw_malloc(alloc, sizeof *l);
    if (!l) {
        if (err) {
            err->code = AW_ENOMEM;
            strcpy(err->message, "out of memory");
        }
        return NULL;
    }
    memset(l, 0, sizeof *l);
    l->alloc = alloc;
    l->now = aw_loop_clock();
    return l;
}

const aw_allocator *aw_loop_allocator(const aw_loop *l) { return l->alloc; }

int64_t aw_loop_now(const aw_loop *l) { return l->now; }

/* ---- timers: a min-heap on (deadline, seq) ------------------------------ */

static bool timer_before(const aw_timer *a, const aw_timer *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void heap_place(aw_loop *l, size_t i, aw_timer *t)
{
    l->heap[i] = t;
    t->heap_index = (long)i;
}

static void heap_up(aw_loop *l, size_t i)
{
    aw_timer *t = l->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_before(t, l->heap[parent]))
            break;
        heap_place(l, i, l->heap[parent]);
        i = parent;
    }
    heap_place(l, i, t);
}

static void heap_down(aw_loop *l, size_t i)
{
    aw_timer *t = l->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->nheap)
            break;
        if (c + 1 < l->nheap && timer_before(l->heap[c + 1], l->heap[c]))
            c++;
        if (!timer_before(l->heap[c], t))
            break;
        heap_place(l, i, l->heap[c]);
        i = c;
    }
    heap_place(l, i, t);
}

static void heap_remove(aw_loop *l, aw_timer *t)
{
    if (t->heap_index < 0)
        return;
    size_t i = (size_t)t->heap_index;
    t->heap_index = -1;
    l->nheap--;
    if (i == l->nheap)
        return;
    heap_place(l, i, l->heap[l->nheap]);
    heap_up(l, i);
    heap_down(l, (size_t)l->heap[i]->heap_index);
}

static int heap_insert(aw_loop *l, aw_timer *t)
{
    if (grow(l->alloc, (void **)&l->heap, &l->cap_heap, l->nheap + 1, sizeof *l->heap))
        return AW_ENOMEM;
    l->nheap++;
    heap_place(l, l->nheap - 1, t);
    heap_up(l, l->nheap - 1);
    return 0;
}

aw_timer *aw_loop_timer(aw_loop *l, int64_t ms, aw_timer_fn fn, void *ctx)
{
    aw_timer *t = aw_malloc(l->alloc, sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->loop = l;
    t->fn = fn;
    t->ctx = ctx;
    t->heap_index = -1;
    /* Reserve the heap slot now so that re-arming never fails. */
    if (grow(l->alloc, (void **)&l->heap, &l->cap_heap, l->nheap + 1, sizeof *l->heap)) {
        aw_free(l->alloc, t);
        return NULL;
    }
    aw_timer_reset(t, ms);
    return t;
}

void aw_timer_reset(aw_timer *t, int64_t ms)
{
    aw_loop *l = t->loop;
    if (t->dead)
        return;
    heap_remove(l, t);
    t->deadline = aw_loop_clock() + (ms < 0 ? 0 : ms);
    t->seq = ++l->timer_seq;
    /* The slot was reserved when the timer was made (the heap never holds
     * more timers than exist), so this cannot fail. */
    (void)heap_insert(l, t);
}

void aw_timer_free(aw_timer *t)
{
    if (!t || t->dead)
        return;
    aw_loop *l = t->loop;
    heap_remove(l, t);
    t->dead = true;
    if (l->dispatching) {
        t->next_dead = l->dead_timers;
        l->dead_timers = t;
    } else {
        aw_free(l->alloc, t);
    }
}

/* ---- watches -------------------------------------------------------------- */

aw_watch *aw_loop_watch(aw_loop *l, int fd, unsigned events, aw_watch_fn fn, void *ctx)
{
    if (grow(l->alloc, (void **)&l->watches, &l->cap_watches, l->nwatches + 1, sizeof *l->watches))
        return NULL;
    aw_watch *w = aw_malloc(l->alloc, sizeof *w);
    if (!w)
        return NULL;
    memset(w, 0, sizeof *w);
    w->loop = l;
    w->fd = fd;
    w->events = events;
    w->fn = fn;
    w->ctx = ctx;
    w->index = l->nwatches;
    l->watches[l->nwatches++] = w;
    return w;
}

void aw_watch_set(aw_watch *w, unsigned events)
{
    if (w && !w->dead)
        w->events = events;
}

void aw_watch_free(aw_watch *w)
{
    if (!w || w->dead)
        return;
    aw_loop *l = w->loop;
    /* Unlink at once (the last watch takes its place), free later. */
    size_t i = w->index;
    l->nwatches--;
    if (i != l->nwatches) {
        l->watches[i] = l->watches[l->nwatches];
        l->watches[i]->index = i;
    }
    w->dead = true;
    if (l->dispatching) {
        w->next_dead = l->dead_watches;
        l->dead_watches = w;
    } else {
        aw_free(l->alloc, w);
    }
}

/* ---- deferred calls ----------------------------------------------------------- */

int aw_loop_defer(aw_loop *l, aw_defer_fn fn, void *ctx)
{
    if (grow(l->alloc, (void **)&l->defers, &l->cap_defers, l->ndefers + 1, sizeof *l->defers))
        return AW_ENOMEM;
    l->defers[l->ndefers].fn = fn;
    l->defers[l->ndefers].ctx = ctx;
    l->ndefers++;
    return 0;
}

/* ---- the round ------------------------------------------------------------------ */

static void sweep(aw_loop *l)
{
    while (l->dead_watches) {
        aw_watch *w = l->dead_watches;
        l->dead_watches = w->next_dead;
        aw_free(l->alloc, w);
    }
    while (l->dead_timers) {
        aw_timer *t = l->dead_timers;
        l->dead_timers = t->next_dead;
        aw_free(l->alloc, t);
    }
}

static void run_defers(aw_loop *l)
{
    /* Only those queued before this round: a deferred call that defers
     * again runs in the next round, so the loop still polls between. */
    size_t n = l->ndefers;
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        deferred d = l->defers[i];
        d.fn(d.ctx);
    }
    memmove(l->defers, l->defers + n, (l->ndefers - n) * sizeof *l->defers);
    l->ndefers -= n;
}

static void fire_timers(aw_loop *l)
{
    /* Timers armed during this pass get a deadline after now, so this ends. */
    int64_t now = aw_loop_clock();
    l->now = now;
    while (l->nheap > 0 && l->heap[0]->deadline <= now) {
        aw_timer *t = l->heap[0];
        heap_remove(l, t);
        t->fn(t->ctx);
    }
}

int aw_loop_once(aw_loop *l, int64_t timeout_ms)
{
    l->dispatching++;
    l->now = aw_loop_clock();
    run_defers(l);

    int64_t wait = timeout_ms;
    if (l->ndefers > 0 || l->stopped)
        wait = 0;
    if (l->nheap > 0) {
        int64_t until = l->heap[0]->deadline - aw_loop_clock();
        if (until < 0)
            until = 0;
        if (wait < 0 || until < wait)
            wait = until;
    }
    if (wait > 1000 * 60 * 60)
        wait = 1000 * 60 * 60;

    int rc = 0;
    if (grow(l->alloc, (void **)&l->pfds, &l->cap_pfds, l->nwatches + 1, sizeof *l->pfds) ||
        grow(l->alloc, (void **)&l->pwatch, &l->cap_pwatch, l->nwatches + 1, sizeof *l->pwatch)) {
        rc = AW_ENOMEM;
        goto out;
    }
    nfds_t n = 0;
    for (size_t i = 0; i < l->nwatches; i++) {
        aw_watch *w = l->watches[i];
        if (!w->events)
            continue;
        l->pfds[n].fd = w->fd;
        l->pfds[n].events = (short)(((w->events & AW_WATCH_READ) ? POLLIN : 0) |
                                    ((w->events & AW_WATCH_WRITE) ? POLLOUT : 0));
        l->pfds[n].revents = 0;
        l->pwatch[n] = w;
        n++;
    }
    /* Nothing could ever wake an endless wait: the deferred calls just run
     * were the last work. */
    if (n == 0 && wait < 0)
        wait = 0;
    int got = poll(l->pfds, n, wait < 0 ? -1 : (int)wait);
    if (got < 0 && errno != EINTR) {
        rc = AW_EINVAL;
        goto out;
    }
    l->now = aw_loop_clock();
    for (nfds_t i = 0; got > 0 && i < n; i++) {
        short re = l->pfds[i].revents;
        if (!re)
            continue;
        aw_watch *w = l->pwatch[i];
        if (w->dead)
            continue;
        /* A hang-up or an error wakes every watched direction, so a reader
         * meets EOF in read() and a writer EPIPE in write(). */
        unsigned ev = 0;
        if (re & POLLIN)
            ev |= AW_WATCH_READ;
        if (re & POLLOUT)
            ev |= AW_WATCH_WRITE;
        if (re & (POLLHUP | POLLERR | POLLNVAL))
            ev |= AW_WATCH_READ | AW_WATCH_WRITE;
        ev &= w->events;
        if (ev)
            w->fn(w->ctx, w->fd, ev);
    }
    fire_timers(l);
out:
    l->dispatching--;
    if (!l->dispatching)
        sweep(l);
    return rc;
}

void aw_loop_stop(aw_loop *l) { l->stopped = true; }

int aw_loop_run(aw_loop *l)
{
    l->stopped = false;
    while (!l->stopped) {
        if (l->nwatches == 0 && l->nheap == 0 && l->ndefers == 0)
            break;
        int rc = aw_loop_once(l, -1);
        if (rc)
            return rc;
    }
    l->stopped = false;
    return 0;
}

void aw_loop_free(aw_loop *l)
{
    if (!l)
        return;
    while (l->nwatches)
        aw_watch_free(l->watches[l->nwatches - 1]);
    while (l->nheap)
        aw_timer_free(l->heap[l->nheap - 1]);
    sweep(l);
    aw_free(l->alloc, l->watches);
    aw_free(l->alloc, l->heap);
    aw_free(l->alloc, l->defers);
    aw_free(l->alloc, l->pfds);
    aw_free(l->alloc, l->pwatch);
    aw_free(l->alloc, l);
}
