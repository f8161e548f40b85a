/* agentwire runtime — where UI envelopes go (--events, repeatable).
 *
 *   -  or a file             JSON lines, one envelope each, as they happen
 *   redis://[:PASSWORD@]HOST:PORT[/DB]
 *                            PUBLISH on the envelope's channel ("agent.<session>")
 *                            in Laravel's Redis broadcaster payload:
 *                            {"event": TYPE, "data": ENVELOPE, "socket": null}
 *   http://... https://...   a webhook: each envelope POSTed as JSON, in order per
 *                            channel, retried with backoff, optionally signed
 *                            (X-Agentwire-Signature-256: sha256=HMAC-SHA256 hex of
 *                            the body), dead-lettered when it cannot be delivered
 *
 * A sink kind is one file (sink_KIND.c) implementing aw_sink_ops, chosen
 * by aw_sink_open from the destination's form. A sink never slows a run:
 * send only queues (bounded); delivery happens on the loop while the run
 * goes on (a webhook's, on a thread of its own: its requests cost CPU the
 * run's thread should not pay). One that cannot keep up drops envelopes and counts them, and
 * keeps the order of those it delivers. */
#ifndef AGENTWIRE_SINK_H
#define AGENTWIRE_SINK_H

#include <stdint.h>

#include "error.h"
#include "json.h"
#include "loop.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_sink aw_sink;

typedef struct aw_sink_ops {
    const char *kind; /* "file", ... */
    /* One envelope for channel ("agent.<session>"); never blocks the run. */
    int (*send)(aw_sink *s, const char *channel, const aw_json_value *envelope, aw_error *err);
    /* Deliver what is queued, waiting at most timeout_ms (the end of a run;
     * the loop is served meanwhile, so call it from outside the loop).
     * What is left then is given up on (dropped, or dead-lettered). */
    int (*flush)(aw_sink *s, int64_t timeout_ms, aw_error *err);
    void (*destroy)(aw_sink *s);
    /* Envelopes queued and not yet delivered or given up on (NULL: none
     * ever wait), so a program on a shared loop sees when a sink is idle. */
    size_t (*pending)(const aw_sink *s);
} aw_sink_ops;

struct aw_sink {
    const aw_sink_ops *ops;
    void *impl;
    char *name;          /* the destination as given, secrets removed */
    uint64_t sent;       /* envelopes delivered */
    uint64_t dropped;    /* envelopes given up on (queue full, peer gone) */
    uint64_t dead_lettered; /* of those, written to the dead-letter file */
    char error[256];     /* the last delivery failure in words ("" when none) */
};

typedef struct aw_sink_options {
    const char *secret;          /* webhooks: HMAC-SHA256 signing key */
    const char *dead_letter;     /* webhooks: file for envelopes that could not be delivered
                                    (JSON lines, appended) */
    size_t queue_max;            /* redis, webhooks: envelopes waiting at most; 0: 10000 */
    const aw_allocator *alloc;   /* webhooks call it from their delivery thread too:
                                    it must be thread-safe (malloc is) */
} aw_sink_options;

/* Open a sink for a destination ("-", a path, redis://, http(s)://).
 * Network sinks connect on the loop, in the background: opening never
 * waits for the peer, and a peer that is down is retried. */
aw_sink *aw_sink_open(aw_loop *l, const char *dest, const aw_sink_options *opts, aw_error *err);
void aw_sink_free(aw_sink *s);

/* A file sink on an open descriptor (not closed by the sink). A pipe, a
 * FIFO or a terminal is written without blocking, through a description
 * of the sink's own (the descriptor's O_NONBLOCK is left alone): a reader
 * that stalls costs queued envelopes (up to 1 MB), then dropped ones. */
aw_sink *aw_sink_file_fd(int fd, const char *name, const aw_allocator *alloc, aw_error *err);

/* Envelopes waiting in s (0 for a sink that never queues). */
size_t aw_sink_pending(const aw_sink *s);

#ifdef __cplusplus
}
#endif
#endif
