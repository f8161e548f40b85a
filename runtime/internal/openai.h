/* The openai provider's two halves, callable without a socket (tests and
 * fuzz targets use them so): the Chat Completions request body with its
 * cache of what was written before, and the reply reader. Not installed. */
#ifndef AW_OPENAI_H
#define AW_OPENAI_H

#include "internal/escape_cache.h"
#include "internal/provider_http.h"
#include "internal/sse.h"

/* ---- the request ----------------------------------------------------------------- */

/* The wire form of the conversation as the last request wrote it: each
 * history message's JSON (",{...}" in turn), and the escaped <thread>. A
 * request after messages were appended writes only those. */
typedef struct aw_openai_cache {
    const aw_chat *chat;  /* the history written, and how much of it */
    size_t count;
    const char *first;    /* message 0's content, to tell two chats at one address apart */
    aw_buf history;
    aw_escape_cache thread;
} aw_openai_cache;

void aw_openai_cache_init(aw_openai_cache *c, const aw_allocator *alloc);
void aw_openai_cache_release(aw_openai_cache *c);

/* The request body for req into body (which references cache's bytes: the
 * cache must not change until the request ends). cache NULL: all written
 * into the body. */
int aw_openai_request(aw_openai_cache *cache, const char *model, const aw_model_request *req, bool stream,
                      aw_body *body, const aw_allocator *alloc);

/* ---- the reply ---------------------------------------------------------------------- */

typedef struct aw_openai_call_parts {
    aw_buf id, name, arguments;
    bool seen;
} aw_openai_call_parts;

typedef struct aw_openai_reader {
    const aw_allocator *alloc;
    aw_reply_sink sink;
    aw_sse_reader sse;
    aw_reply_info info;
    aw_openai_call_parts *calls; /* by the fragments' index */
    size_t ncalls;
    bool calls_sent;
    bool finished;  /* a finish_reason came */
    bool done;      /* data: [DONE] came */
    int status;     /* the first error, kept for the SSE callback to return */
    aw_error err;
} aw_openai_reader;

extern const aw_reply_reader_ops aw_openai_reader_ops;

#endif
