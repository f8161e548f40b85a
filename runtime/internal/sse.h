/* A streaming reader of Server-Sent Events (the WHATWG "event stream"
 * format), the framing of every streaming model API.
 *
 * Input comes in chunks of any size, from one byte up; lines end in CRLF,
 * LF or CR (a CR at the end of one chunk and an LF at the start of the
 * next are one line end). Comment lines (":...") are skipped; `data:`
 * lines of one event are joined with "\n"; `event:`, `id:` and `retry:`
 * are kept as the format says. Time is linear in the input, and memory is
 * bounded: a line longer than max_line, or an event whose data grows past
 * max_event, is an error naming the byte where it started, so a hostile
 * stream cannot make the reader grow without end. Not installed. */
#ifndef AW_SSE_H
#define AW_SSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentwire/buf.h"
#include "agentwire/error.h"
#include "agentwire/event.h"

typedef struct aw_sse_event {
    aw_text type;     /* the event: field; empty when none was given (the format calls it "message") */
    aw_text data;     /* the data: lines joined with "\n" */
    aw_text id;       /* the last event id seen in the stream so far */
    int64_t retry_ms; /* the last retry: value seen in the stream; -1 when none */
    uint64_t offset;  /* byte offset in the stream of the event's first field line */
} aw_sse_event;

typedef struct aw_sse_handlers {
    /* One dispatched event; its texts live until the callback returns.
     * Nonzero: stop (feed returns AW_ESTOP). */
    int (*on_event)(void *ctx, const aw_sse_event *ev);
    /* A field line that is not data/event/id/retry (e.g. llama.cpp's
     * "error: {...}"), at byte offset. The format says to ignore these;
     * NULL does. Nonzero: stop. */
    int (*on_other)(void *ctx, aw_text field, aw_text value, uint64_t offset);
} aw_sse_handlers;

#define AW_SSE_DEFAULT_MAX_LINE ((size_t)8 << 20)
#define AW_SSE_DEFAULT_MAX_EVENT ((size_t)32 << 20)

typedef struct aw_sse_reader {
    size_t max_line, max_event;
    aw_sse_handlers fns;
    void *ctx;
    aw_buf line;          /* a line not yet ended, carried to the next chunk */
    aw_buf data;          /* the pending event's data, each line followed by "\n" */
    aw_buf type;
    aw_buf id;
    int64_t retry_ms;
    uint64_t pos;         /* bytes of the stream consumed before the current chunk */
    uint64_t line_start;  /* stream offset of the carried line */
    uint64_t event_start; /* stream offset of the pending event's first field */
    bool event_open;      /* some field line since the last dispatch */
    bool after_cr;        /* the last byte was a CR: an LF next ends nothing */
    bool first_line_done; /* a leading byte order mark is only skipped on line one */
    int failed;           /* an error code once feed failed; every later feed returns it */
    aw_error failure;
} aw_sse_reader;

/* Limits of 0 mean the defaults above. */
void aw_sse_init(aw_sse_reader *r, const aw_allocator *alloc, size_t max_line, size_t max_event,
                 const aw_sse_handlers *fns, void *ctx);
/* Frees the buffers; the reader may be initialized again. */
void aw_sse_release(aw_sse_reader *r);

/* Feed the next chunk. Returns 0; AW_ESTOP when a handler asked to stop;
 * AW_ELIMIT for a line or event past the limits ("an event-stream line
 * longer than 8388608 bytes at byte 17"); AW_ENOMEM. err gets the
 * message and err->offset the stream offset. After an error every later
 * call returns the same error. */
int aw_sse_feed(aw_sse_reader *r, const char *p, size_t n, aw_error *err);

/* The end of the stream. A last event whose lines all ended but that no
 * blank line followed is still dispatched (some servers leave the blank
 * line out at the very end); a line cut off by the end is AW_ESYNTAX
 * ("the stream ended inside a line at byte 120"). */
int aw_sse_finish(aw_sse_reader *r, aw_error *err);

/* Bytes consumed so far. */
static inline uint64_t aw_sse_position(const aw_sse_reader *r) { return r->pos; }

#endif
