/* The openai provider's two halves, callable without a socket (tests and
 * fuzz targets use them so): the Chat Completions request body with its
 * cache of what was written before, and the reply reader. Not installed. */
#ifndef AW_OPENAI_H
#define AW_OPENAI_H

#include "internal/provider_http.h"
#include "internal/sse.h"
#include "internal/wire_cache.h"

/* ---- the request ----------------------------------------------------------------- */

/* The request body for req into body, which references cache's bytes
 * (the cache must not change until the request ends). An
 * aw_wire_request_fn: through aw_wire_request it writes without a cache. */
int aw_openai_request(aw_wire_cache *cache, const char *model, const aw_model_request *req, bool stream,
                      aw_body *body, const aw_allocator *alloc);

/* ---- the reply ---------------------------------------------------------------------- */

typedef struct aw_openai_call_parts {
    aw_buf id, name, arguments;
    bool seen;
} aw_openai_call_parts;

typedef struct aw_openai_reader {
    aw_reply_base base;
    aw_openai_call_parts *calls; /* by the fragments' index */
    size_t ncalls;
    bool calls_sent;
    bool finished;  /* a finish_reason came */
    bool done;      /* data: [DONE] came */
} aw_openai_reader;

extern const aw_reply_reader_ops aw_openai_reader_ops;

#endif
