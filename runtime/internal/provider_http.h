/* What the HTTP model providers (openai, anthropic) share: the endpoint and
 * key, the request's life on the HTTP client (status, stream or whole
 * reply, errors in words, retry hints), the trace with keys redacted, and
 * the request body as segments. Each provider adds only its protocol: the
 * request body it writes and the reply reader that turns its events into
 * text, reasoning, tool calls, usage and a stop reason. Not installed. */
#ifndef AW_PROVIDER_HTTP_H
#define AW_PROVIDER_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "agentwire/buf.h"
#include "agentwire/provider.h"
#include "internal/http.h"

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
    /* For AW_EIO from a reader (the stream itself reported an error, or
     * ended early): whether asking again may help. */
    bool error_retryable;
} aw_reply_info;

void aw_reply_info_init(aw_reply_info *info);
/* Copy a string field into a fixed buffer, cut on a character boundary. */
void aw_reply_copy(char *dst, size_t cap, const char *p, size_t n);

/* A reply reader, behind function pointers so the engine below serves
 * every protocol. feed takes the event stream in any chunks; finish is its
 * end; whole takes a reply that came as one JSON document. They return 0,
 * AW_ESTOP (a sink callback asked to stop), AW_ESYNTAX ("bad stream event
 * at byte 120: ..."), AW_ELIMIT, AW_EIO (the reply reported an error, or
 * ended before it was complete; see error_retryable), AW_ENOMEM, with the
 * message (never naming the provider) in err. */
typedef struct aw_reply_reader_ops {
    size_t size;
    void (*init)(void *r, const aw_allocator *alloc, const aw_reply_sink *sink);
    int (*feed)(void *r, const char *p, size_t n, aw_error *err);
    int (*finish)(void *r, aw_error *err);
    int (*whole)(void *r, const char *p, size_t n, aw_error *err);
    const aw_reply_info *(*info)(const void *r);
    void (*release)(void *r);
} aw_reply_reader_ops;

/* ---- the request body as segments ---------------------------------------------------- */

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

/* ---- one provider instance's endpoint -------------------------------------------------- */

typedef struct aw_hp_kind {
    const char *name;           /* "openai": the prefix of every message */
    const char *key_env;        /* "OPENAI_API_KEY" */
    const char *base_env;       /* "OPENAI_BASE_URL" */
    const char *base_default;   /* "https://api.openai.com/v1" */
    const char *path;           /* appended to the base URL: "/chat/completions" */
    const char *key_header;     /* "Authorization: Bearer ", "x-api-key: " */
    const char *fixed_header;   /* "anthropic-version: 2023-06-01", or NULL */
    const aw_reply_reader_ops *reader;
} aw_hp_kind;

typedef struct aw_hp {
    const aw_hp_kind *kind;
    aw_provider *p;
    aw_http *http;
    char *url;
    char *key;             /* NULL: none (a loopback server) */
    char *headers[4];      /* the key's header among them */
    size_t nheaders;
    size_t inflight;       /* requests running: caches must not move under them */
    struct hp_call *calls; /* those requests */
} aw_hp;

/* Base URL, key (a missing key is an error unless the server is on this
 * machine: "openai: OPENAI_API_KEY is not set"), headers, HTTP client. */
int aw_hp_init(aw_hp *hp, aw_provider *p, const aw_hp_kind *kind, aw_error *err);
/* Also ends the requests still running: no callback, their aw_model_call
 * handles freed (the caller must not cancel them afterwards). */
void aw_hp_release(aw_hp *hp);

/* Start call's request with body (moved in: the caller's aw_body is left
 * empty). Reports through aw_model_call_* from the loop. */
int aw_hp_send(aw_hp *hp, aw_model_call *call, aw_body *body, bool stream, aw_error *err);
void aw_hp_cancel(aw_model_call *call);

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
