/* agentwire runtime — what a run leaves on disk, as it happens:
 *
 *   thread      the agent events as a <thread> document, kept valid XML
 *               after every event (the closing tag rewritten last)
 *   sinks       UI envelopes (seed 003) through aw_sink destinations
 *   accounting  JSON lines: one per model request and one per tool call
 *   trace       every request and response body, keys redacted
 *   record      the model's replies, as replay:FILE plays them
 *
 * aw_records_observer gives the observer to put in a run's configuration;
 * one aw_records may serve several runs (sub-agents): each record names
 * its run. */
#ifndef AGENTWIRE_RECORDS_H
#define AGENTWIRE_RECORDS_H

#include <stdbool.h>

#include "envelope.h"
#include "error.h"
#include "run.h"
#include "sink.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_records_config {
    const char *thread_path;
    const char *accounting_path;
    const char *trace_path;
    const char *record_path;
    aw_sink *const *sinks;      /* not owned */
    size_t sink_count;
    /* How long aw_records_close waits for slow destinations to deliver
     * (the loop is served meanwhile): 0: 5 s. < 0: not at all, and no
     * accounting row for them: for a program whose loop goes on (a
     * worker), which waits for aw_sink_pending itself. */
    int64_t sink_flush_ms;
    aw_envelope_preset preset;  /* AW_ENVELOPE_MINIMAL drops stream chunks */
    bool stream_events;         /* send agent.stream.chunk envelopes */
    const aw_allocator *alloc;
} aw_records_config;

typedef struct aw_records aw_records;

/* Opens (truncates) every file named. Errors name the file. */
aw_records *aw_records_new(const aw_records_config *cfg, aw_error *err);
/* The observer that writes them (valid while the records live). */
aw_run_observer aw_records_observer(aw_records *rec);
/* An aw_trace_fn for providers' configurations (ctx: the records), so
 * request and response bodies land in the trace file. */
void aw_records_trace(void *ctx, const char *what, const char *p, size_t n);
/* The first write error seen (a full disk), or NULL. */
const char *aw_records_error(const aw_records *rec);
/* Flush and close; returns the first error (also one seen earlier). */
int aw_records_close(aw_records *rec, aw_error *err);
void aw_records_free(aw_records *rec);

#ifdef __cplusplus
}
#endif
#endif
