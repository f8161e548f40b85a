/* An HTTP client on the runtime's loop, over libcurl's multi socket
 * interface: curl's sockets become aw_loop watches and its timeout one
 * aw_loop timer, so model streams, tool pipes and timers share one thread.
 *
 * Every callback runs from the loop, never from inside libcurl, so a
 * callback may cancel any request (its own included) or start new ones.
 * Not installed. */
#ifndef AW_HTTP_H
#define AW_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentwire/error.h"
#include "agentwire/event.h"
#include "agentwire/loop.h"

typedef struct aw_http aw_http;
typedef struct aw_http_req aw_http_req;

typedef struct aw_http_result {
    /* 0 when a whole response arrived, whatever its status; AW_EIO when the
     * exchange failed (error says how), AW_ENOMEM. */
    int code;
    int status;             /* the HTTP status; 0 when none arrived */
    int curl_code;          /* libcurl's CURLcode, for logs (the words are in error); 0 for our own errors */
    bool retryable;         /* a connection error or a timeout: trying again may work */
    bool timed_out;
    int64_t retry_after_ms; /* from Retry-After (seconds or an HTTP date) or retry-after-ms; -1 when none */
    /* What happened, in words, when code != 0: "could not connect to
     * 127.0.0.1:9: connection refused", "timed out after 60 s waiting for
     * the first byte". */
    const char *error;
} aw_http_result;

typedef struct aw_http_fns {
    /* The final response's status and header lines ("Name: value\r\n"
     * each, the status line left out), before its body. */
    void (*on_head)(void *ctx, int status, aw_text headers);
    /* Body bytes as they arrive (decoded from chunked transfer). */
    void (*on_data)(void *ctx, const char *p, size_t n);
    /* Exactly once, last, unless the request was cancelled; the request
     * is gone when it returns. */
    void (*on_done)(void *ctx, const aw_http_result *res);
} aw_http_fns;

typedef struct aw_http_options {
    const char *method;           /* NULL: POST when there is a body, else GET */
    const char *url;
    const char *const *headers;   /* "Name: value" each */
    size_t header_count;
    /* The request body as segments sent one after another, so a caller
     * sends a cached history without joining it to the rest. The bytes
     * must stay as they are until on_done or the cancel. */
    const aw_text *body;
    size_t body_count;
    /* In ms; 0: no limit of that kind. connect: until the connection is up
     * (TLS included); first byte: from then until the response begins;
     * idle: between two pieces of the response; request: the whole. */
    int64_t connect_timeout_ms;
    int64_t first_byte_timeout_ms;
    int64_t idle_timeout_ms;
    int64_t request_timeout_ms;
    aw_http_fns fns;
    void *ctx;
} aw_http_options;

/* A client serving any number of requests at once on l. */
aw_http *aw_http_new(aw_loop *l, const aw_allocator *alloc, aw_error *err);
/* Cancels the requests still running (no callbacks). Not from a callback,
 * and before the loop is freed (curl hands its sockets back through it). */
void aw_http_free(aw_http *h);

/* Start a request; callbacks follow from the loop. Fails at once only for
 * what cannot be sent at all (a URL curl refuses, no memory). */
int aw_http_start(aw_http *h, const aw_http_options *o, aw_http_req **out, aw_error *err);
/* Stop a request at any time before on_done: no callback follows. */
void aw_http_cancel(aw_http_req *r);

/* Requests started and not yet done or cancelled. */
size_t aw_http_active(const aw_http *h);

/* The value of header `name` (any case) in a header block as on_head gives
 * it, spaces around it trimmed; false when absent. */
bool aw_http_header_get(aw_text headers, const char *name, aw_text *value);

/* A Retry-After value (delay seconds or an HTTP date, RFC 9110 10.2.3) in
 * ms from now_wall_s (seconds since 1970); -1 when it is neither. */
int64_t aw_http_parse_retry_after(aw_text value, int64_t now_wall_s);

/* Whether url's host is this machine (127.0.0.0/8, ::1, localhost). */
bool aw_http_url_is_loopback(const char *url);

/* "Unauthorized" for 401, "Overloaded" for 529, ...; "" when unknown. */
const char *aw_http_reason(int status);

#endif
