/* A small HTTP/1.1 client for tests of agentwire serve: raw requests (so a
 * test can send hostile ones), responses read to the end (chunked bodies
 * decoded), and server-sent event streams read event by event. Loopback
 * only; every wait is bounded. */
#ifndef AW_TEST_HTTP_CLIENT_H
#define AW_TEST_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct aw_http_resp {
    int status;     /* 0 when no status line came */
    char *head;     /* the status line and headers, NUL-terminated */
    char *body;     /* decoded, NUL-terminated */
    size_t body_len;
} aw_http_resp;

/* Send request (bytes as given) to 127.0.0.1:port and read the response
 * until the server closes or timeout_ms pass. 0, or -1 when nothing
 * could be sent or read. */
int aw_http_raw(uint16_t port, const char *request, size_t len, aw_http_resp *out, int timeout_ms);
/* GET path with "Connection: close" and the extra header lines given
 * (each ending in \r\n, or NULL). */
int aw_http_get(uint16_t port, const char *path, const char *headers, aw_http_resp *out);
/* A header's value (case-insensitive name), copied into buf; NULL when absent. */
const char *aw_http_header(const aw_http_resp *r, const char *name, char *buf, size_t cap);
void aw_http_resp_free(aw_http_resp *r);

/* ---- server-sent events ---------------------------------------------------------- */

typedef struct aw_sse {
    int fd;
    int status;
    bool chunked, closed;
    int comments; /* comment lines seen (heartbeats) */
    char *raw;   /* bytes read, not yet decoded */
    size_t raw_len;
    char *text;  /* the decoded stream, not yet taken as events */
    size_t text_len;
} aw_sse;

/* GET path as an event stream, with Last-Event-ID when last_id is not
 * NULL; waits for the headers. 0 with s->status set, or -1. */
int aw_sse_open(aw_sse *s, uint16_t port, const char *path, const char *last_id, int timeout_ms);
/* The next event's id and data (malloc'd; id NULL when it had none),
 * waiting at most timeout_ms: 0, or -1 on timeout or the stream's end.
 * Comments and retry lines are skipped. */
int aw_sse_next(aw_sse *s, char **id, char **data, int timeout_ms);
void aw_sse_close(aw_sse *s);

#endif
