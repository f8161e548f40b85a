/* A request body as segments: text the request owns interleaved with
 * references to bytes a provider keeps (its cached history), so a long
 * history is sent without being copied. Not installed. */
#ifndef AW_HTTP_BODY_H
#define AW_HTTP_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include "agentwire/buf.h"
#include "agentwire/event.h"

/* Text the request owns, interleaved with references to bytes the provider
 * keeps (its cached history), so a long history is sent without copying.
 * Owned text is written with aw_body_text(); references must stay
 * unchanged until the request ends. */
typedef struct aw_body_item {
    bool owned;
    size_t part; /* owned: index into parts */
    aw_text ref;
} aw_body_item;

#define AW_BODY_MAX_ITEMS 16

typedef struct aw_body {
    aw_buf parts[AW_BODY_MAX_ITEMS / 2 + 1];
    size_t nparts;
    aw_body_item items[AW_BODY_MAX_ITEMS];
    size_t nitems;
    aw_text segs[AW_BODY_MAX_ITEMS]; /* made by aw_body_segments */
    const aw_allocator *alloc;
    int failed;
} aw_body;

void aw_body_init(aw_body *b, const aw_allocator *alloc);
void aw_body_release(aw_body *b);
/* The owned part being written (a new one after a reference); NULL once
 * something failed (aw_body_failed says what). */
aw_buf *aw_body_text(aw_body *b);
void aw_body_ref(aw_body *b, const char *p, size_t n);
int aw_body_failed(const aw_body *b);
/* The segments in order; valid until the body is released or moved. */
const aw_text *aw_body_segments(aw_body *b, size_t *count);
/* All of it in one buffer (for tests and the trace). */
int aw_body_join(const aw_body *b, aw_buf *out);

#endif
