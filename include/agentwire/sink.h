/* agentwire runtime — where UI envelopes go (--events, repeatable).
 *
 *   -  or a file             JSON lines, one envelope each, as they happen
 *
 * A sink kind is one file (sink_KIND.c) implementing aw_sink_ops, chosen
 * by aw_sink_open from the destination's form. A sink never slows a run:
 * one that cannot keep up drops envelopes and counts them. */
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
    /* Deliver what is queued, waiting at most timeout_ms (the end of a run). */
    int (*flush)(aw_sink *s, int64_t timeout_ms, aw_error *err);
    void (*destroy)(aw_sink *s);
} aw_sink_ops;

struct aw_sink {
    const aw_sink_ops *ops;
    void *impl;
    char *name;          /* the destination as given, secrets removed */
    uint64_t sent;       /* envelopes delivered */
    uint64_t dropped;    /* envelopes given up on (queue full, peer gone) */
};

typedef struct aw_sink_options {
    const char *secret;          /* webhooks: HMAC-SHA256 signing key */
    const char *dead_letter;     /* webhooks: file for envelopes that could not be delivered */
    const aw_allocator *alloc;
} aw_sink_options;

/* Open a sink for a destination ("-", a path). */
aw_sink *aw_sink_open(aw_loop *l, const char *dest, const aw_sink_options *opts, aw_error *err);
void aw_sink_free(aw_sink *s);

/* A file sink on an open descriptor (not closed by the sink). A pipe, a
 * FIFO or a terminal is written without blocking, through a description
 * of the sink's own (the descriptor's O_NONBLOCK is left alone): a reader
 * that stalls costs queued envelopes (up to 1 MB), then dropped ones. */
aw_sink *aw_sink_file_fd(int fd, const char *name, const aw_allocator *alloc, aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
