/* agentwire serve, inside: the envelopes of stored steps (serve_feed.c),
 * the session summary folded from them (serve_summary.c), the JSON API
 * (serve_api.c), server-sent events (serve_sse.c), the embedded pages
 * (serve_static.c) and the HTTP plumbing (serve.c, serve_http.c). Not
 * installed. */
#ifndef AW_SERVE_IMPL_H
#define AW_SERVE_IMPL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agentwire/serve.h"
#include "agentwire/store.h"

/* ---- envelopes of stored steps (serve_feed.c) ------------------------------------- */

/* A stored number (a time in ms, a count, an event number) as a whole
 * number from 0 to 10^15, or dflt: stored rows may hold anything, and
 * the sums and differences made of them must not overflow. */
#define AW__SERVE_NUM_MAX 1000000000000000LL
static inline int64_t aw__serve_num(const aw_json_value *o, const char *key, int64_t dflt)
{
    const aw_json_value *v = aw_json_get(o, key);
    if (!aw_json_is_number(v) || !(v->u.num.d >= 0) || v->u.num.d > (double)AW__SERVE_NUM_MAX)
        return dflt;
    return (int64_t)v->u.num.d;
}
/* a + b for counts (0 .. 10^15 each), stopping at INT64_MAX */
static inline int64_t aw__serve_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/* Where a stream of envelopes stands: every envelope of the events up to
 * `after`, and the first `part` envelopes of event `part_seq` (one stored
 * event may give several envelopes: a tool result that ends a step gives
 * agent.tool.completed and agent.step.completed). As an SSE id: "N" for
 * {N, 0, 0}, "N.j" for {N - 1, N, j}. */
typedef struct aw__serve_cursor {
    int64_t after;
    int64_t part_seq;
    unsigned part;
} aw__serve_cursor;

/* "N" or "N.j" (N >= 0, j >= 1, each at most 18 digits) -> cursor; -1 when
 * malformed. */
int aw__serve_cursor_parse(const char *s, aw__serve_cursor *c);

/* One envelope and its SSE id ("N" or "N.j"); nonzero stops the feed. */
typedef int (*aw__serve_envelope_fn)(void *ctx, const char *id, const aw_json_value *envelope);

/* The envelopes of aw_store_steps's steps after *cur, through the envelope
 * adapter (seed 003), in order; *cur follows each envelope handed over
 * (and each stored event that gives none). */
int aw__serve_feed(const aw_json_value *steps, const char *session_id, aw__serve_cursor *cur, const aw_allocator *a,
                   aw__serve_envelope_fn fn, void *ctx, aw_error *err);

/* ---- the session summary (serve_summary.c) ------------------------------------------ */

/* The steps of a session from its envelopes: [{"step_number", "started_at",
 * "ended_at", "duration_ms", "usage", "finish_reason", "errors", "tools":
 * [{"tool_call_id", "tool_name", "started_at", "duration_ms", "success",
 * "error", "args_summary", "result_summary"}]}], and the accounting rows'
 * counts: {"model_requests", "tool_calls", "tool_failures", "by_tool":
 * [{"name", "calls", "failures", "total_ms"}]}. */
typedef struct aw__serve_summary {
    aw_json_doc *doc;
    aw_json_value *steps;
    size_t current; /* the step tool envelopes belong to: the last one begun */
    bool oom;
} aw__serve_summary;
/* Start an empty summary in doc (0, or AW_ENOMEM). */
int aw__serve_summary_init(aw__serve_summary *s, aw_json_doc *doc);
/* An aw__serve_envelope_fn: fold one envelope in (ctx: the summary). */
int aw__serve_summary_add(void *summary, const char *id, const aw_json_value *envelope);
aw_json_value *aw__serve_accounting_summary(aw_json_doc *doc, const aw_json_value *rows);

/* ---- the server ---------------------------------------------------------------------- */

/* Store handles, one per request at a time (a handle serves one thread
 * at a time): taken and given back, opened when none is free, at most
 * `cap` open. */
typedef struct aw__store_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    aw_store **free_list;
    size_t nfree, open, cap;
    char *url;
    const aw_allocator *alloc;
} aw__store_pool;

aw_store *aw__pool_take(aw__store_pool *p, aw_error *err);
/* rc: the result of the store call made with it (AW_STORE_EIO closes it). */
void aw__pool_give(aw__store_pool *p, aw_store *s, int rc);

typedef struct aw__sse_client aw__sse_client;

struct aw_server {
    const aw_allocator *alloc;
    struct MHD_Daemon *daemon;
    aw__store_pool pool;
    char *token;             /* NULL: none (loopback only) */
    bool loopback;
    char address[80];        /* "127.0.0.1:8080" as bound */
    uint16_t port;
    int64_t poll_ms, heartbeat_ms;
    size_t max_sse;
    aw_serve_log_fn log;
    void *log_ctx;
    /* server-sent event clients (serve_sse.c) */
    pthread_mutex_t sse_mu;
    pthread_cond_t sse_cv;
    aw__sse_client *clients;
    size_t nclients;
    bool stopping;
    pthread_t poller;
    bool poller_running;
    atomic_ullong envelopes_sent;
};

void aw__serve_log(aw_server *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- responses (serve_http.c) --------------------------------------------------------- */

/* A response body made through the server's allocator, freed by MHD's
 * callback when the response is done with. */
struct MHD_Response *aw__response_buf(aw_server *s, aw_buf *body, const char *content_type);
/* {"error": message, "status": code} with the headers every reply has. */
enum MHD_Result aw__reply_error(aw_server *s, struct MHD_Connection *c, unsigned status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Queue r with the security headers (and release it). */
enum MHD_Result aw__reply(struct MHD_Connection *c, unsigned status, struct MHD_Response *r);
/* The store's failure as an HTTP status: 404 for no such session, 503
 * for a database that does not answer, 500 for the rest. */
unsigned aw__status_for_store(int rc);

/* ---- routes --------------------------------------------------------------------------- */

/* serve_http.c: libmicrohttpd's access handler (cls: the server) */
enum MHD_Result aw__serve_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **req);

/* serve_api.c: GET /api/sessions[/ID[/thread|/accounting]] */
enum MHD_Result aw__api_sessions(aw_server *s, struct MHD_Connection *c);
enum MHD_Result aw__api_session(aw_server *s, struct MHD_Connection *c, const char *id, const char *what);
/* serve_sse.c: GET /api/sessions/ID/events, the poller that wakes
 * followers when a session grows, and their end at shutdown */
enum MHD_Result aw__api_events(aw_server *s, struct MHD_Connection *c, const char *id);
int aw__sse_start(aw_server *s, aw_error *err);
void aw__sse_stop(aw_server *s);
void aw__sse_free(aw_server *s); /* after the daemon stopped */
/* serve_static.c: the embedded pages and files, by path; NULL when none */
typedef struct aw__static_file {
    const char *name;         /* "app.css" */
    const unsigned char *data;
    size_t len;
    const char *etag;         /* "\"<sha1>\"" */
} aw__static_file;
const aw__static_file *aw__static_find(const char *path);
enum MHD_Result aw__serve_static(aw_server *s, struct MHD_Connection *c, const aw__static_file *f);

#endif
