/* agentwire runtime — the event loop every run is driven by.
 *
 * One thread, one loop: a provider's HTTP stream, the pipes of running
 * tools and MCP servers, child exits and timers are all served from here,
 * so no slow peer blocks the others and every wait can have a timeout.
 *
 * Handles (watches, timers) may be freed from inside any callback,
 * including their own: the loop only forgets them once the current
 * dispatch is over. Nothing here installs a signal handler; a program that
 * wants SIGINT to stop a run makes a pipe, writes to it from its handler
 * and watches the read end (agentwire's command does exactly that). */
#ifndef AGENTWIRE_LOOP_H
#define AGENTWIRE_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "alloc.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_loop aw_loop;
typedef struct aw_watch aw_watch;
typedef struct aw_timer aw_timer;

enum { AW_WATCH_READ = 1, AW_WATCH_WRITE = 2 };

/* events: the watched AW_WATCH_* bits that are ready; a hang-up or an
 * error sets every watched bit, so a reader meets EOF (or the error) in
 * read() and a writer EPIPE in write(). */
typedef void (*aw_watch_fn)(void *ctx, int fd, unsigned events);
typedef void (*aw_timer_fn)(void *ctx);
typedef void (*aw_defer_fn)(void *ctx);

aw_loop *aw_loop_new(const aw_allocator *alloc, aw_error *err);
/* Frees the loop; watches and armed timers still registered are freed with
 * it (their owners must not touch them afterwards). */
void aw_loop_free(aw_loop *l);

/* Milliseconds on the monotonic clock, as of the current dispatch. */
int64_t aw_loop_now(const aw_loop *l);
/* The same, read afresh from the clock. */
int64_t aw_loop_clock(void);

/* Watch fd for the given AW_WATCH_* events; the fd stays the caller's to
 * close (after aw_watch_free). */
aw_watch *aw_loop_watch(aw_loop *l, int fd, unsigned events, aw_watch_fn fn, void *ctx);
void aw_watch_set(aw_watch *w, unsigned events);
void aw_watch_free(aw_watch *w);

/* A one-shot timer firing after ms milliseconds (0: on the next turn of
 * the loop). Free it to cancel; re-arm it with aw_timer_reset. */
aw_timer *aw_loop_timer(aw_loop *l, int64_t ms, aw_timer_fn fn, void *ctx);
void aw_timer_reset(aw_timer *t, int64_t ms);
void aw_timer_free(aw_timer *t);

/* Run fn on the next turn of the loop, outside the current call stack
 * (for completions that must not re-enter their caller). */
int aw_loop_defer(aw_loop *l, aw_defer_fn fn, void *ctx);

/* Serve events until aw_loop_stop is called or nothing is left to wait for
 * (no watches and no timers). Returns 0, or a negative AW_E* code when
 * poll itself fails. */
int aw_loop_run(aw_loop *l);
/* Serve one round: wait at most timeout_ms (-1: until something happens). */
int aw_loop_once(aw_loop *l, int64_t timeout_ms);
void aw_loop_stop(aw_loop *l);

const aw_allocator *aw_loop_allocator(const aw_loop *l);

#ifdef __cplusplus
}
#endif
#endif
