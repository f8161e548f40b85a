/* agentwire runtime — the session viewer: a small HTTP server over a
 * session store (agentwire serve).
 *
 *   GET /                              the sessions, with filters
 *   GET /sessions/ID                   one session: its timeline, token chart,
 *                                      final report; live while it runs
 *   GET /api/sessions                  ?status=&agent=&kind=&q=&since=&limit=&offset=
 *   GET /api/sessions/ID               {"session", "steps", "accounting"}
 *   GET /api/sessions/ID/events        server-sent events: seed 003's envelopes,
 *                                      id = the stored event's number, resumed
 *                                      from Last-Event-ID (or ?after=)
 *   GET /api/sessions/ID/thread        the <thread> XML
 *   GET /api/sessions/ID/accounting    the accounting rows, JSON lines
 *   GET /static/...                    the embedded CSS and JavaScript
 *
 * The pages are built in the browser from the API (every value put in the
 * page as text, never as markup) and are embedded in the library: no
 * files, no network beyond this server. The server listens on loopback
 * unless given a token; with one, every /api/ request must carry it
 * ("Authorization: Bearer T" or "?token=T"). It only reads the store.
 *
 * The server runs on threads of its own (libmicrohttpd's, and one that
 * watches the store for followed sessions): aw_server_start returns once
 * it listens, aw_server_stop ends it. */
#ifndef AGENTWIRE_SERVE_H
#define AGENTWIRE_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_server aw_server;

/* A line about what the server does (started, a store failure). */
typedef void (*aw_serve_log_fn)(void *ctx, const char *msg);

typedef struct aw_serve_options {
    const char *store_url;   /* required */
    const char *listen;      /* "HOST:PORT" ("[::1]:8080" for IPv6); NULL: "127.0.0.1:8080"; port 0: any free one */
    const char *token;       /* required unless HOST is a loopback address; at least 16 characters */
    unsigned threads;        /* threads serving requests; 0: 4 */
    int64_t poll_ms;         /* how often followed sessions are looked at; 0: 250 */
    int64_t heartbeat_ms;    /* an SSE comment this often keeps idle streams open; 0: 15000 */
    size_t max_connections;  /* 0: 256 */
    aw_serve_log_fn log;
    void *log_ctx;
    const aw_allocator *alloc;
} aw_serve_options;

/* Open the store, bind and start serving. Errors say what is wrong: an
 * address that is not loopback without a token (AW_EINVAL), an address in
 * use, a store that cannot be opened. */
aw_server *aw_server_start(const aw_serve_options *opts, aw_error *err);
/* "127.0.0.1:8080", as bound (the port chosen when 0 was asked). */
const char *aw_server_address(const aw_server *s);
uint16_t aw_server_port(const aw_server *s);
/* Envelopes written to event streams so far. */
uint64_t aw_server_envelopes_sent(const aw_server *s);
/* Close every connection (event streams end) and free the server. */
void aw_server_stop(aw_server *s);

#ifdef __cplusplus
}
#endif
#endif
