/* agentwire serve's requests: who may ask (the token, the Host of a
 * loopback server), which route answers, and the replies' common parts:
 * the security headers every reply has and JSON errors.
 *
 * Only GET and HEAD are answered. Nothing is read from the file system:
 * a path either names an embedded file or a route, or is 404, so no path
 * can lead anywhere else. Request lines and headers are bounded by
 * libmicrohttpd's per-connection memory (32 KiB: 431 past it). */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal/rt_util.h"
#include "internal/serve_impl.h"

/* Scripts, styles, streams and fetches from this server only; no frames,
 * no plugins, no <base> tricks. */
#define CSP "default-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'; object-src 'none'"

enum MHD_Result aw__reply(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
    if (!r)
        return MHD_NO; /* out of memory: the connection is closed */
    MHD_add_response_header(r, "Content-Security-Policy", CSP);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A body allocated through the server's allocator, handed to MHD. */
typedef struct body {
    const aw_allocator *alloc;
    char *data;
} body;

static void body_free(void *cls)
{
    body *b = cls;
    aw_free(b->alloc, b->data);
    aw_free(b->alloc, b);
}

struct MHD_Response *aw__response_buf(aw_server *s, aw_buf *buf, const char *content_type)
{
    body *b = aw_malloc(s->alloc, sizeof *b);
    if (!b) {
        aw_buf_free(buf);
        return NULL;
    }
    size_t len = buf->len;
    b->alloc = s->alloc;
    b->data = aw_buf_detach(buf, NULL);
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback_cls(len, b->data ? b->data : (char *)"", body_free, b);
    if (!r) {
        body_free(b);
        return NULL;
    }
    MHD_add_response_header(r, "Content-Type", content_type);
    return r;
}

static struct MHD_Response *error_response(aw_server *s, unsigned status, const char *msg)
{
    aw_buf b;
    aw_buf_init(&b, s->alloc);
    if (aw_buf_append_str(&b, "{\"error\":") || aw_json_write_string(&b, msg, strlen(msg)) ||
        aw_buf_printf(&b, ",\"status\":%u}\n", status)) {
        aw_buf_free(&b);
        return NULL;
    }
    struct MHD_Response *r = aw__response_buf(s, &b, "application/json; charset=utf-8");
    if (r)
        MHD_add_response_header(r, "Cache-Control", "no-store");
    return r;
}

enum MHD_Result aw__reply_error(aw_server *s, struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return aw__reply(c, status, error_response(s, status, msg));
}

unsigned aw__status_for_store(int rc)
{
    return rc == AW_STORE_ENOTFOUND ? MHD_HTTP_NOT_FOUND
           : rc == AW_STORE_EIO     ? MHD_HTTP_SERVICE_UNAVAILABLE
                                    : MHD_HTTP_INTERNAL_SERVER_ERROR;
}

/* ---- who may ask ------------------------------------------------------------------------ */

/* Equal without telling, by its time, how much of it matched. */
static bool same_secret(const char *given, const char *want)
{
    size_t n = strlen(want), m = strlen(given);
    unsigned char diff = (unsigned char)(n != m);
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(want[i] ^ given[i < m ? i : 0]);
    return diff == 0;
}

static bool authorized(aw_server *s, struct MHD_Connection *c)
{
    if (!s->token)
        return true;
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (auth && !strncasecmp(auth, "Bearer ", 7) && same_secret(auth + 7, s->token))
        return true;
    const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    return q && same_secret(q, s->token);
}

/* A server on loopback without a token answers only to loopback names:
 * a web page the browser fetched from elsewhere, its name made to point
 * at 127.0.0.1 (DNS rebinding), must not read the sessions. */
static bool host_allowed(aw_server *s, struct MHD_Connection *c)
{
    if (s->token)
        return true;
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!host)
        return true; /* HTTP/1.0 clients; browsers always send it */
    char name[64];
    const char *end = host[0] == '[' ? strchr(host, ']') : strchr(host, ':');
    size_t n = end ? (size_t)(end - host) + (host[0] == '[') : strlen(host);
    if (n >= sizeof name)
        return false;
    memcpy(name, host, n);
    name[n] = 0;
    if (!strcasecmp(name, "localhost") || !strcmp(name, "[::1]"))
        return true;
    struct in_addr a4;
    return inet_pton(AF_INET, name, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/* ---- routes ---------------------------------------------------------------------------------- */

/* A session id in a path: 1 to 256 bytes, no '/', no control character. */
static bool good_id(const char *id, size_t n)
{
    if (n == 0 || n > 256)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)id[i] < 0x20 || id[i] == 0x7f || id[i] == '/')
            return false;
    return true;
}

static enum MHD_Result api(aw_server *s, struct MHD_Connection *c, const char *url)
{
    if (!authorized(s, c)) {
        struct MHD_Response *r = error_response(s, MHD_HTTP_UNAUTHORIZED,
                                                "this server wants its token: Authorization: Bearer TOKEN, or ?token=TOKEN");
        if (r)
            MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"agentwire\"");
        return aw__reply(c, MHD_HTTP_UNAUTHORIZED, r);
    }
    if (!strcmp(url, "/api/sessions") || !strcmp(url, "/api/sessions/"))
        return aw__api_sessions(s, c);
    if (strncmp(url, "/api/sessions/", 14) != 0)
        return aw__reply_error(s, c, MHD_HTTP_NOT_FOUND, "no such route: %.200s", url);
    const char *id = url + 14, *slash = strchr(id, '/');
    size_t n = slash ? (size_t)(slash - id) : strlen(id);
    const char *what = slash ? slash + 1 : "";
    if (!good_id(id, n))
        return aw__reply_error(s, c, MHD_HTTP_BAD_REQUEST,
                               "a session id has 1 to 256 characters, none of them '/' or a control character");
    if (strcmp(what, "") && strcmp(what, "events") && strcmp(what, "thread") && strcmp(what, "accounting"))
        return aw__reply_error(s, c, MHD_HTTP_NOT_FOUND, "no such route: %.200s (a session has events, thread, accounting)",
                               url);
    char sid[257];
    memcpy(sid, id, n);
    sid[n] = 0;
    if (!strcmp(what, "events"))
        return aw__api_events(s, c, sid);
    return aw__api_session(s, c, sid, what);
}

static enum MHD_Result route(aw_server *s, struct MHD_Connection *c, const char *url)
{
    if (!strncmp(url, "/api/", 5))
        return api(s, c, url);
    const aw__static_file *f = NULL;
    if (!strcmp(url, "/"))
        f = aw__static_find("/");
    else if (!strncmp(url, "/sessions/", 10) && good_id(url + 10, strlen(url + 10)))
        f = aw__static_find("/sessions/");
    else if (!strncmp(url, "/static/", 8))
        f = aw__static_find(url);
    if (!f)
        return aw__reply_error(s, c, MHD_HTTP_NOT_FOUND, "not found: %.200s", url);
    return aw__serve_static(s, c, f);
}

enum MHD_Result aw__serve_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **req)
{
    (void)version;
    (void)upload;
    aw_server *s = cls;
    bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    /* A GET is answered on the second call, once libmicrohttpd knows the
     * request is whole: answered on the first, the connection could not
     * be kept open for the next request. Anything else is refused at
     * once, before its body is read. */
    static int seen, with_body;
    if (get && !*req) {
        *req = &seen;
        return MHD_YES;
    }
    if (get && *upload_size) { /* read and dropped; refused once it is all in */
        *upload_size = 0;
        *req = &with_body;
        return MHD_YES;
    }
    if (get && *req == &with_body)
        return aw__reply_error(s, c, MHD_HTTP_BAD_REQUEST, "a GET has no body");
    if (!get) {
        struct MHD_Response *r = error_response(s, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served");
        if (r)
            MHD_add_response_header(r, "Allow", "GET, HEAD");
        return aw__reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
    }
    if (!host_allowed(s, c))
        return aw__reply_error(s, c, MHD_HTTP_FORBIDDEN,
                               "this server answers to localhost only; give it a --token to serve other names");
    if (url[0] != '/')
        return aw__reply_error(s, c, MHD_HTTP_BAD_REQUEST, "a path must start with '/'");
    return route(s, c, url);
}
