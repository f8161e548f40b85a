/* Private parts of the thread codec shared by the whole-list encoder, the
 * JSON-text encoder and the append-only writer. */
#ifndef AW_INTERNAL_THREAD_H
#define AW_INTERNAL_THREAD_H

#include "agentwire/thread.h"

/* Write one <event ...>body</event> for ev at position id. scratch is a
 * reusable buffer for the compact JSON of args and non-string results. */
int aw__thread_event(const aw_event *ev, size_t id, aw_text tool_name, const aw_thread_options *opts,
                     aw_buf *out, aw_buf *scratch);

/* Write what follows the last event: "\n</thread>", and "\n" and the
 * prefill when there is one. */
int aw__thread_close(const aw_thread_options *opts, aw_buf *out);

/* Output handed on in blocks (aw_thread_encode_json_stream): the caller's
 * options, and for events read from JSON text, how to fill the place of an
 * event's "type" value in an error (locate may be NULL). */
typedef struct aw__thread_stream {
    const aw_thread_stream_options *opts; /* NULL, or a NULL sink: all stays in the buffer */
    void (*locate)(void *ctx, const aw_event *ev, aw_error *where);
    void *locate_ctx;
} aw__thread_stream;

/* A block is handed on once the buffer holds this much: large enough that
 * the calls cost nothing, small enough to stay in the cache. */
#define AW__THREAD_BLOCK (256u * 1024u)

/* Hand out's bytes to stream's sink and empty out: 0, or AW_ESTOP when the
 * sink refuses them. */
int aw__thread_flush(const aw__thread_stream *stream, aw_buf *out, aw_error *err);

/* aw_thread_encode into out; with a stream whose sink is set, out is
 * handed on block by block and left empty. Errors are filled in err; out
 * is not rolled back. */
int aw__thread_encode_events(const aw_event *events, size_t n, const aw_thread_options *opts, aw_buf *out,
                             const aw__thread_stream *stream, aw_error *err);

/* An event of a type the format does not know, for so->on_unknown
 * (which must be set): `where` holds its place (line 0: none; then the
 * message names index). 0 to go on, or AW_ETYPE with err = *where when the
 * callback rejects it. */
int aw__thread_unknown(const aw_thread_stream_options *so, const aw_event *ev, size_t index, aw_error *where,
                       aw_error *err);

/* Kinds that become an <event> line. */
int aw__thread_is_written(aw_event_kind kind);

/* The first place in p[0..n), a line or more of JSON-lines text, where a
 * tool_call event's type may be spelled ("tool_call", or a \u escape of an
 * ASCII letter): n when there is none, and then no line of p is a
 * tool_call event. isa: 0 byte by byte, 1 SSE2, 2 the best the CPU has
 * (the tests hold the vector scans to the first). */
size_t aw__thread_scan_call(const char *p, size_t n, int isa);

/* Read a line the scan found, p[0..n) (no line break), without parsing it:
 * 1 and the toolCallId and toolName (pointing into p) when it is a
 * tool_call event, 0 when it is none (or no valid one), -1 when the parser
 * must decide (escapes in the strings that matter, a structure that does
 * not close). For a line that is valid JSON, 1 and 0 agree with the
 * parser's reading; allow_bom: as the read options'. */
int aw__thread_skim_call(const char *p, size_t n, int allow_bom, aw_text *id, aw_text *name);

#endif
