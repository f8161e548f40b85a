/* What the HTTP model providers (openai, anthropic) share: the endpoint and
 * key, the request's life on the HTTP client (status, stream or whole
 * reply, errors in words, retry hints), the trace with keys redacted, the
 * cached wire form of the conversation, and the base of the reply readers.
 * Each provider adds only its protocol: the request body it writes and
 * the reader that turns its events into text, reasoning, tool calls,
 * usage and a stop reason. Not installed. */
#ifndef AW_PROVIDER_HTTP_H
#define AW_PROVIDER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentwire/buf.h"
#include "agentwire/json.h"
#include "agentwire/provider.h"
#include "internal/http.h"
#include "internal/http_body.h"
#include "internal/sse.h"
#include "internal/wire_cache.h"

/* ---- what a reply reader reports into ---------------------------------------------- */

/* The reader's callbacks: the provider's call, or a test or fuzz harness.
 * Nonzero from any of them stops the reader (AW_ESTOP). */
typedef struct aw_reply_sink {
    int (*text)(void *ctx, const char *p, size_t n);
    int (*reasoning)(void *ctx, const char *p, size_t n);
    int (*tool_call)(void *ctx, const aw_chat_call *call);
    void *ctx;
} aw_reply_sink;

/* What a reply said besides its content. */
typedef struct aw_reply_info {
    aw_model_usage usage;
    bool has_usage;
    char stop_reason[64];
    char model[128];
    /* For AW_EIO from a reader (the reply reported an error, or ended
     * early): whether asking again may help. */
    bool error_retryable;
} aw_reply_info;

/* Copy a string field into a fixed buffer, cut on a character boundary. */
void aw_reply_copy(char *dst, size_t cap, const char *p, size_t n);

/* A reply reader, behind function pointers so one engine serves every
 * protocol. feed takes the event stream in any chunks; finish is its end;
 * whole takes a reply that came as one JSON document. They return 0,
 * AW_ESTOP (a sink callback asked to stop), AW_ESYNTAX ("bad stream event
 * at byte 120: ..."), AW_ELIMIT, AW_EIO (the reply reported an error, or
 * ended before it was complete; see error_retryable), AW_ENOMEM, with the
 * message (never naming the provider) in err; after an error, the same
 * again. */
typedef struct aw_reply_reader_ops {
    size_t size;
    void (*init)(void *r, const aw_allocator *alloc, const aw_reply_sink *sink);
    int (*feed)(void *r, const char *p, size_t n, aw_error *err);
    int (*finish)(void *r, aw_error *err);
    int (*whole)(void *r, const char *p, size_t n, aw_error *err);
    const aw_reply_info *(*info)(const void *r);
    void (*release)(void *r);
} aw_reply_reader_ops;

/* ---- the base every reader is built on ---------------------------------------------- */

/* The first member of a reader: the sink, the SSE reader its events come
 * from, what the reply said, and the first error (kept, so every later
 * call and the SSE callbacks return it). */
typedef struct aw_reply_base {
    const aw_allocator *alloc;
    aw_reply_sink sink;
    aw_sse_reader sse;
    aw_reply_info info;
    int status;
    aw_error err;
} aw_reply_base;

void aw_reply_base_init(aw_reply_base *b, const aw_allocator *alloc, const aw_reply_sink *sink,
                        const aw_sse_handlers *events, void *ctx);
void aw_reply_base_release(aw_reply_base *b);

/* Record the first error (code and message) and return its code. */
int aw_reply_fail(aw_reply_base *b, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* AW_ESYNTAX: "bad stream event at byte N: " and what is wrong; at
 * AW_REPLY_WHOLE (a reply that came as one document), "bad reply: ". */
#define AW_REPLY_WHOLE UINT64_MAX
int aw_reply_bad(aw_reply_base *b, uint64_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Text or reasoning to the sink (nothing for n == 0), a whole tool call;
 * AW_ESTOP once the sink asks to stop. */
int aw_reply_emit(aw_reply_base *b, bool reasoning, const char *p, size_t n);
int aw_reply_emit_call(aw_reply_base *b, const aw_chat_call *call);
/* An event's data as a JSON object (the caller frees *doc), or the error
 * naming the event's byte. */
int aw_reply_parse_event(aw_reply_base *b, const aw_sse_event *ev, aw_json_doc **doc);
/* A whole reply as JSON, or the error naming the byte. */
int aw_reply_parse_whole(aw_reply_base *b, const char *p, size_t n, aw_json_doc **doc);
/* The event stream into the SSE reader; its end. */
int aw_reply_feed(aw_reply_base *b, const char *p, size_t n, aw_error *err);
int aw_reply_end(aw_reply_base *b, aw_error *err);
/* The recorded status, its message copied to err. */
int aw_reply_status(const aw_reply_base *b, aw_error *err);

/* ---- a provider kind on HTTP ------------------------------------------------------------ */

typedef struct aw_hp_kind {
    const char *name;           /* "openai": the prefix of every message */
    const char *key_env;        /* "OPENAI_API_KEY" */
    const char *base_env;       /* "OPENAI_BASE_URL" */
    const char *base_default;   /* "https://api.openai.com/v1" */
    const char *path;           /* appended to the base URL: "/chat/completions" */
    const char *key_header;     /* "Authorization: Bearer ", "x-api-key: " */
    const char *fixed_header;   /* "anthropic-version: 2023-06-01", or NULL */
    aw_wire_request_fn write_request;
    const aw_reply_reader_ops *reader;
} aw_hp_kind;

/* aw_provider_ops for a kind: init takes the base URL and key (a missing
 * key is an error unless the server is on this machine: "openai:
 * OPENAI_API_KEY is not set") and makes the HTTP client; send writes the
 * body (from the cache unless a request in flight still reads it) and
 * starts it; destroy also ends the requests still running, reporting
 * nothing and freeing their aw_model_call handles. */
int aw_hp_provider_init(aw_provider *p, const aw_hp_kind *kind, aw_error *err);
int aw_hp_provider_send(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err);
void aw_hp_provider_cancel(aw_model_call *call);
void aw_hp_provider_destroy(aw_provider *p);

/* The message of an HTTP error reply: "401 Unauthorized: Incorrect API key
 * provided" from the API's JSON error document, or the start of a body
 * that is not one. */
void aw_hp_error_text(int status, const char *body, size_t n, char *out, size_t cap);

/* Whether an HTTP status is worth retrying: 429 and 5xx (529 included). */
bool aw_hp_status_retryable(int status);

/* Append p[0..n) to out with every occurrence of key (when not NULL)
 * written as "[redacted]". */
int aw_hp_scrub(const char *key, const char *p, size_t n, aw_buf *out);

#endif
