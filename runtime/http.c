/* The HTTP client: libcurl's multi socket interface driven by aw_loop.
 *
 * curl tells us which sockets to watch (sock_cb) and when to call it back
 * (timer_cb); the loop's watches and one timer call
 * curl_multi_socket_action. Inside that call curl runs our easy-handle
 * callbacks, which only buffer (status, headers, body bytes) and move the
 * request's own timers; once curl returns, after_action hands what was
 * buffered to the caller and reports finished requests. So the caller's
 * code never runs inside libcurl, where removing or adding a handle is
 * not allowed, and may cancel or start requests from any callback.
 *
 * Timeouts are our own timers rather than curl's, so each can say in words
 * which wait ran out: connect, first byte (reset while the request body is
 * still being taken), idle between pieces of the reply, the whole request. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "agentwire/agentwire.h"
#include "agentwire/buf.h"
#include "internal/http.h"
#include "internal/rt_util.h"

/* Headers past this are a hostile or broken server. */
#define MAX_HEAD_BYTES ((size_t)64 << 10)
/* A timer with no limit of its kind is armed this far out. */
#define FAR_MS ((int64_t)24 * 3600 * 1000)

typedef struct sock_watch {
    aw_http *h;
    aw_watch *w;
    struct sock_watch *prev, *next;
} sock_watch;

struct aw_http {
    aw_loop *loop;
    const aw_allocator *alloc;
    CURLM *multi;
    aw_timer *timer;   /* curl's timeout; exists while requests do */
    aw_http_req *reqs; /* requests in flight */
    size_t active;
    sock_watch *socks;
};

enum phase { PHASE_CONNECT, PHASE_FIRST_BYTE, PHASE_RECEIVING };

struct aw_http_req {
    aw_http *h;
    aw_http_req *prev, *next;
    CURL *easy;
    struct curl_slist *headers;
    aw_http_fns fns;
    void *ctx;

    aw_text *body;
    size_t body_count, seg, seg_off;
    curl_off_t body_len, body_sent;

    int64_t connect_ms, first_byte_ms, idle_ms, request_ms;
    aw_timer *stall; /* the wait of the current phase */
    aw_timer *whole;
    enum phase phase;

    int status;       /* of the response being received */
    aw_buf head;      /* its header lines */
    bool head_done;   /* the final response's headers are all in */
    bool head_sent;
    aw_buf pending;   /* body bytes not yet handed over */

    bool cancelled;   /* by the caller while one of its callbacks ran */
    bool finishing;   /* on_done is being called */
    int busy;         /* callbacks of this request on the stack */
    /* An error decided inside a curl callback (no memory, headers too
     * long): reported instead of curl's own code once curl returns. */
    int local_code;
    char local_error[512];
    char where[256];  /* host:port, for messages */
    char errbuf[CURL_ERROR_SIZE];
};

static void after_action(aw_http *h);
static void finish(aw_http_req *r, CURLcode cc);

/* ---- sockets and curl's timer ------------------------------------------------ */

static void action(aw_http *h, curl_socket_t fd, int flags)
{
    int running = 0;
    curl_multi_socket_action(h->multi, fd, flags, &running);
    after_action(h);
}

static void on_socket(void *ctx, int fd, unsigned events)
{
    sock_watch *sw = ctx;
    int flags = ((events & AW_WATCH_READ) ? CURL_CSELECT_IN : 0) | ((events & AW_WATCH_WRITE) ? CURL_CSELECT_OUT : 0);
    action(sw->h, fd, flags);
}

static void on_curl_timer(void *ctx)
{
    aw_http *h = ctx;
    action(h, CURL_SOCKET_TIMEOUT, 0);
}

/* strlcpy: the message cut to fit. */
static void copy_text(char *dst, size_t n, const char *src)
{
    size_t k = strlen(src);
    if (k >= n)
        k = n - 1;
    memcpy(dst, src, k);
    dst[k] = 0;
}

static void set_local_error(aw_http_req *r, int code, const char *msg)
{
    if (r && !r->local_code) {
        r->local_code = code;
        copy_text(r->local_error, sizeof r->local_error, msg);
    }
}

static void sock_unlink_free(aw_http *h, sock_watch *sw)
{
    if (sw->prev)
        sw->prev->next = sw->next;
    else
        h->socks = sw->next;
    if (sw->next)
        sw->next->prev = sw->prev;
    aw_watch_free(sw->w);
    aw_free(h->alloc, sw);
}

static int sock_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    aw_http *h = userp;
    sock_watch *sw = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sw) {
            curl_multi_assign(h->multi, s, NULL);
            sock_unlink_free(h, sw);
        }
        return 0;
    }
    unsigned events = ((what & CURL_POLL_IN) ? AW_WATCH_READ : 0) | ((what & CURL_POLL_OUT) ? AW_WATCH_WRITE : 0);
    if (sw) {
        aw_watch_set(sw->w, events);
        return 0;
    }
    sw = aw_malloc(h->alloc, sizeof *sw);
    if (sw) {
        memset(sw, 0, sizeof *sw);
        sw->h = h;
        sw->w = aw_loop_watch(h->loop, s, events, on_socket, sw);
        if (!sw->w) {
            aw_free(h->alloc, sw);
            sw = NULL;
        }
    }
    if (!sw) {
        /* Without a watch the transfer would wait for nothing: it fails
         * once curl returns (after_action). */
        aw_http_req *r = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
        set_local_error(r, AW_ENOMEM, "out of memory");
        return 0;
    }
    sw->next = h->socks;
    if (h->socks)
        h->socks->prev = sw;
    h->socks = sw;
    curl_multi_assign(h->multi, s, sw);
    return 0;
}

static int timer_cb(CURLM *multi, long ms, void *userp)
{
    (void)multi;
    aw_http *h = userp;
    /* The timer exists while requests do (made before the first is added);
     * a call when none runs has nothing to drive. */
    if (h->timer)
        aw_timer_reset(h->timer, ms < 0 ? FAR_MS : ms);
    return 0;
}

/* ---- the client -------------------------------------------------------------- */

aw_http *aw_http_new(aw_loop *l, const aw_allocator *alloc, aw_error *err)
{
    aw_http *h = aw_malloc(alloc, sizeof *h);
    if (!h) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(h, 0, sizeof *h);
    h->loop = l;
    h->alloc = alloc;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        aw_free(alloc, h);
        aw_rt_error(err, AW_ENOMEM, "libcurl could not be initialized");
        return NULL;
    }
    h->multi = curl_multi_init();
    if (!h->multi) {
        curl_global_cleanup();
        aw_free(alloc, h);
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
    return h;
}

size_t aw_http_active(const aw_http *h) { return h->active; }

/* Free a request that is out of curl's multi handle or about to be. */
static void destroy(aw_http_req *r)
{
    aw_http *h = r->h;
    if (r->easy) {
        curl_multi_remove_handle(h->multi, r->easy);
        curl_easy_cleanup(r->easy);
    }
    curl_slist_free_all(r->headers);
    if (r->prev)
        r->prev->next = r->next;
    else if (h->reqs == r)
        h->reqs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    aw_timer_free(r->stall);
    aw_timer_free(r->whole);
    aw_buf_free(&r->head);
    aw_buf_free(&r->pending);
    aw_free(h->alloc, r->body);
    aw_free(h->alloc, r);
    if (--h->active == 0 && h->timer) {
        aw_timer_free(h->timer);
        h->timer = NULL;
    }
}

void aw_http_free(aw_http *h)
{
    if (!h)
        return;
    while (h->reqs)
        destroy(h->reqs);
    curl_multi_cleanup(h->multi);
    while (h->socks)
        sock_unlink_free(h, h->socks);
    aw_timer_free(h->timer);
    curl_global_cleanup();
    aw_free(h->alloc, h);
}

/* ---- one request: curl's callbacks ------------------------------------------ */

static void arm_stall(aw_http_req *r, enum phase phase)
{
    r->phase = phase;
    int64_t ms = phase == PHASE_CONNECT ? r->connect_ms : phase == PHASE_FIRST_BYTE ? r->first_byte_ms : r->idle_ms;
    aw_timer_reset(r->stall, ms > 0 ? ms : FAR_MS);
}

static int prereq_cb(void *clientp, char *ip, char *local_ip, int port, int local_port)
{
    (void)ip;
    (void)local_ip;
    (void)port;
    (void)local_port;
    arm_stall(clientp, PHASE_FIRST_BYTE);
    return CURL_PREREQFUNC_OK;
}

/* The request body, from the segments in turn. */
static size_t read_cb(char *buf, size_t size, size_t nitems, void *userdata)
{
    aw_http_req *r = userdata;
    size_t room = size * nitems, n = 0;
    while (n < room && r->seg < r->body_count) {
        const aw_text *s = &r->body[r->seg];
        size_t k = s->len - r->seg_off;
        if (k > room - n)
            k = room - n;
        if (k)
            memcpy(buf + n, s->ptr + r->seg_off, k);
        n += k;
        r->seg_off += k;
        if (r->seg_off == s->len) {
            r->seg++;
            r->seg_off = 0;
        }
    }
    r->body_sent += (curl_off_t)n;
    /* The first-byte wait counts from the last byte sent. */
    if (r->phase == PHASE_FIRST_BYTE)
        arm_stall(r, PHASE_FIRST_BYTE);
    return n;
}

/* curl rewinds when it sends the request again on a fresh connection
 * (a kept-alive one the server had closed). */
static int seek_cb(void *userdata, curl_off_t offset, int origin)
{
    aw_http_req *r = userdata;
    if (origin != SEEK_SET || offset < 0 || offset > r->body_len)
        return CURL_SEEKFUNC_CANTSEEK;
    r->seg = 0;
    r->seg_off = 0;
    curl_off_t left = offset;
    while (r->seg < r->body_count && left >= (curl_off_t)r->body[r->seg].len) {
        left -= (curl_off_t)r->body[r->seg].len;
        r->seg++;
    }
    r->seg_off = (size_t)left;
    r->body_sent = offset;
    return CURL_SEEKFUNC_OK;
}

static void touch(aw_http_req *r) { arm_stall(r, PHASE_RECEIVING); }

static int parse_status(const char *line, size_t n)
{
    const char *sp = memchr(line, ' ', n);
    if (!sp || (size_t)(sp - line) + 4 > n)
        return 0;
    int s = 0;
    for (int i = 1; i <= 3; i++) {
        char c = sp[i];
        if (c < '0' || c > '9')
            return 0;
        s = s * 10 + (c - '0');
    }
    return s;
}

static size_t header_cb(char *buf, size_t size, size_t nitems, void *userdata)
{
    aw_http_req *r = userdata;
    size_t n = size * nitems;
    touch(r);
    if (n >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
        /* A new response (after a 100 Continue, or the only one). */
        r->status = parse_status(buf, n);
        r->head_done = false;
        aw_buf_clear(&r->head);
        return n;
    }
    if (r->head_done)
        return n; /* trailers after a chunked body */
    if ((n == 2 && buf[0] == '\r' && buf[1] == '\n') || (n == 1 && buf[0] == '\n')) {
        if (r->status >= 200)
            r->head_done = true;
        return n;
    }
    if (r->head.len + n > MAX_HEAD_BYTES) {
        set_local_error(r, AW_EIO, "the reply's headers are longer than 64 KiB");
        return 0;
    }
    if (aw_buf_append(&r->head, buf, n)) {
        set_local_error(r, AW_ENOMEM, "out of memory");
        return 0;
    }
    return n;
}

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    aw_http_req *r = userdata;
    size_t n = size * nmemb;
    touch(r);
    if (aw_buf_append(&r->pending, ptr, n)) {
        set_local_error(r, AW_ENOMEM, "out of memory");
        return 0;
    }
    return n;
}

/* ---- handing over what curl delivered ---------------------------------------- */

static bool has_pending(const aw_http_req *r)
{
    if (r->cancelled || r->local_code || r->finishing)
        return false;
    return (r->head_done && !r->head_sent) || (r->head_sent && r->pending.len);
}

/* Give the caller the head and body bytes buffered so far. Returns false
 * when the caller cancelled r (which is then freed). */
static bool deliver(aw_http_req *r)
{
    r->busy++;
    if (r->head_done && !r->head_sent) {
        r->head_sent = true;
        if (r->fns.on_head)
            r->fns.on_head(r->ctx, r->status, (aw_text){r->head.data ? r->head.data : "", r->head.len});
    }
    if (!r->cancelled && r->head_sent && r->pending.len) {
        size_t n = r->pending.len;
        r->pending.len = 0; /* bytes arriving meanwhile would go after; none can (no curl call here) */
        if (r->fns.on_data)
            r->fns.on_data(r->ctx, r->pending.data, n);
        /* A reply much larger than one read need not keep its peak buffer. */
        if (!r->cancelled && r->pending.cap > ((size_t)4 << 20))
            aw_buf_free(&r->pending);
    }
    r->busy--;
    if (r->cancelled && r->busy == 0) {
        destroy(r);
        return false;
    }
    return true;
}

static void after_action(aw_http *h)
{
    /* A callback may free or start any request, so the scan starts over
     * after each request served; there are few. */
    for (;;) {
        aw_http_req *r = h->reqs;
        while (r && !has_pending(r) && !(r->local_code && !r->finishing && !r->busy))
            r = r->next;
        if (!r)
            break;
        if (r->local_code) {
            finish(r, CURLE_ABORTED_BY_CALLBACK);
            continue;
        }
        deliver(r);
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(h->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        aw_http_req *r = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        if (r && !r->finishing)
            finish(r, msg->data.result);
    }
}

/* ---- the result in words -------------------------------------------------------- */

static void lower_first(char *s)
{
    if (s[0] >= 'A' && s[0] <= 'Z' && !(s[1] >= 'A' && s[1] <= 'Z'))
        s[0] = (char)(s[0] - 'A' + 'a');
}

static void format_duration(char *out, size_t n, int64_t ms)
{
    if (ms < 1000)
        snprintf(out, n, "%lld ms", (long long)ms);
    else if (ms % 1000 == 0)
        snprintf(out, n, "%lld s", (long long)(ms / 1000));
    else
        snprintf(out, n, "%.1f s", (double)ms / 1000.0);
}

static void describe_timeout(const aw_http_req *r, bool whole, char *out, size_t n)
{
    char d[32];
    if (whole) {
        format_duration(d, sizeof d, r->request_ms);
        snprintf(out, n, "timed out after %s, the limit for the whole request", d);
        return;
    }
    switch (r->phase) {
    case PHASE_CONNECT:
        format_duration(d, sizeof d, r->connect_ms);
        snprintf(out, n, "timed out after %s connecting to %s", d, r->where);
        break;
    case PHASE_FIRST_BYTE:
        format_duration(d, sizeof d, r->first_byte_ms);
        if (r->body_sent < r->body_len)
            snprintf(out, n, "timed out after %s sending the request to %s", d, r->where);
        else
            snprintf(out, n, "timed out after %s waiting for the first byte", d);
        break;
    case PHASE_RECEIVING:
        format_duration(d, sizeof d, r->idle_ms);
        snprintf(out, n, "timed out after %s waiting for the next piece of the reply", d);
        break;
    }
}

static bool describe_curl(const aw_http_req *r, CURLcode cc, char *out, size_t n)
{
    long os_errno = 0;
    curl_easy_getinfo(r->easy, CURLINFO_OS_ERRNO, &os_errno);
    char why[CURL_ERROR_SIZE];
    copy_text(why, sizeof why, os_errno ? strerror((int)os_errno) : (r->errbuf[0] ? r->errbuf : curl_easy_strerror(cc)));
    lower_first(why);
    bool retry = true;
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_HOST:
        snprintf(out, n, "could not resolve the host name of %s", r->where);
        break;
    case CURLE_COULDNT_RESOLVE_PROXY:
        snprintf(out, n, "could not resolve the proxy's host name");
        break;
    case CURLE_COULDNT_CONNECT:
        snprintf(out, n, "could not connect to %s: %s", r->where, why);
        break;
    case CURLE_OPERATION_TIMEDOUT:
        describe_timeout(r, false, out, n);
        break;
    case CURLE_SEND_ERROR:
        snprintf(out, n, "the connection to %s failed while sending the request: %s", r->where, why);
        break;
    case CURLE_RECV_ERROR:
        snprintf(out, n, "the connection to %s failed while receiving the reply: %s", r->where, why);
        break;
    case CURLE_GOT_NOTHING:
        snprintf(out, n, "%s closed the connection without replying", r->where);
        break;
    case CURLE_PARTIAL_FILE:
        snprintf(out, n, "the connection to %s closed before the whole reply arrived", r->where);
        break;
    case CURLE_WEIRD_SERVER_REPLY:
        snprintf(out, n, "%s sent something that is not an HTTP reply", r->where);
        break;
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        snprintf(out, n, "the HTTP/2 exchange with %s failed: %s", r->where, why);
        break;
    case CURLE_SSL_CONNECT_ERROR:
        snprintf(out, n, "the TLS handshake with %s failed: %s", r->where, why);
        break;
    case CURLE_PEER_FAILED_VERIFICATION:
        snprintf(out, n, "the TLS certificate of %s was not accepted: %s", r->where, why);
        retry = false;
        break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        snprintf(out, n, "the URL cannot be used: %s", why);
        retry = false;
        break;
    default: {
        char what[96];
        copy_text(what, sizeof what, curl_easy_strerror(cc));
        lower_first(what);
        snprintf(out, n, "the request to %s failed: %s%s%s", r->where, what, r->errbuf[0] ? ": " : "", r->errbuf);
        retry = cc != CURLE_SSL_CACERT_BADFILE && cc != CURLE_SSL_CERTPROBLEM && cc != CURLE_SSL_CIPHER;
    }
    }
    return retry;
}

static int64_t retry_after_of(const aw_http_req *r)
{
    aw_text head = {r->head.data ? r->head.data : "", r->head.len}, v;
    if (aw_http_header_get(head, "retry-after-ms", &v)) {
        int64_t ms = 0;
        size_t i = 0;
        for (; i < v.len && v.ptr[i] >= '0' && v.ptr[i] <= '9' && ms < INT64_MAX / 10 - 10; i++)
            ms = ms * 10 + (v.ptr[i] - '0');
        if (i > 0 && (i == v.len || v.ptr[i] == '.'))
            return ms;
    }
    if (aw_http_header_get(head, "retry-after", &v))
        return aw_http_parse_retry_after(v, (int64_t)time(NULL));
    return -1;
}

/* Report the end of r (cc from curl, or our own error) and free it. */
static void finish(aw_http_req *r, CURLcode cc)
{
    char msg[sizeof r->local_error + 256];
    aw_http_result res;
    memset(&res, 0, sizeof res);
    res.retry_after_ms = -1;
    if (r->local_code) {
        res.code = r->local_code;
        res.error = r->local_error;
        res.retryable = r->local_code == AW_EIO;
    } else if (cc != CURLE_OK) {
        res.code = AW_EIO;
        res.curl_code = (int)cc;
        res.retryable = describe_curl(r, cc, msg, sizeof msg);
        res.timed_out = cc == CURLE_OPERATION_TIMEDOUT;
        res.error = msg;
    }
    if (r->head_done) {
        res.status = r->status;
        res.retry_after_ms = retry_after_of(r);
    }
    /* What arrived before the end goes out first. */
    if (has_pending(r) && !deliver(r))
        return;
    curl_multi_remove_handle(r->h->multi, r->easy);
    r->finishing = true;
    if (r->fns.on_done)
        r->fns.on_done(r->ctx, &res);
    destroy(r);
}

/* One of our own timers ran out. */
static void timed_out(aw_http_req *r, bool whole)
{
    describe_timeout(r, whole, r->local_error, sizeof r->local_error);
    r->local_code = AW_EIO;
    /* A timeout is final: what is buffered (nothing, as the loop ran
     * after_action since) is dropped with the request. */
    curl_multi_remove_handle(r->h->multi, r->easy);
    r->finishing = true;
    aw_http_result res;
    memset(&res, 0, sizeof res);
    res.code = AW_EIO;
    res.status = r->head_done ? r->status : 0;
    res.retryable = true;
    res.timed_out = true;
    res.retry_after_ms = -1;
    res.error = r->local_error;
    if (r->fns.on_done)
        r->fns.on_done(r->ctx, &res);
    destroy(r);
}

static void on_stall(void *ctx) { timed_out(ctx, false); }
static void on_whole(void *ctx) { timed_out(ctx, true); }

/* ---- starting and cancelling ----------------------------------------------------- */

static int where_of(aw_http_req *r, const char *url, aw_error *err)
{
    CURLU *u = curl_url();
    if (!u)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    char *scheme = NULL, *host = NULL, *port = NULL;
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, 0);
    if (uc == CURLUE_OK)
        uc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    if (uc == CURLUE_OK)
        uc = curl_url_get(u, CURLUPART_HOST, &host, 0);
    if (uc == CURLUE_OK)
        uc = curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    int rc = 0;
    if (uc != CURLUE_OK)
        rc = aw_rt_error(err, AW_EINVAL, "the URL '%.200s' is not valid: %s", url, curl_url_strerror(uc));
    else if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
        rc = aw_rt_error(err, AW_EINVAL, "the URL '%.200s' cannot be used (http and https only)", url);
    else
        snprintf(r->where, sizeof r->where, "%s:%s", host, port);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

static int setup_easy(aw_http_req *r, const aw_http_options *o, aw_error *err)
{
    CURL *e = r->easy;
    for (size_t i = 0; i < o->header_count; i++) {
        struct curl_slist *s = curl_slist_append(r->headers, o->headers[i]);
        if (!s)
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
        r->headers = s;
    }
    /* No "Expect: 100-continue" round trip before a large body. */
    struct curl_slist *s = curl_slist_append(r->headers, "Expect:");
    if (!s)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    r->headers = s;
    if (curl_easy_setopt(e, CURLOPT_URL, o->url) != CURLE_OK)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    /* redirects are not followed, but a proxy must not lead elsewhere */
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "agentwire/" AGENTWIRE_VERSION_STRING);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, prereq_cb);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, r);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    /* A server on this machine is never reached through a proxy the
     * environment names for the outside world. */
    if (aw_http_url_is_loopback(o->url))
        curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
    /* curl's own connect limit backs ours up (ours fires first and says
     * which wait ran out). */
    if (r->connect_ms > 0)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(r->connect_ms + 1000));
    const char *method = o->method ? o->method : (o->body_count ? "POST" : "GET");
    if (o->body_count || strcmp(method, "POST") == 0) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, r->body_len);
        curl_easy_setopt(e, CURLOPT_READFUNCTION, read_cb);
        curl_easy_setopt(e, CURLOPT_READDATA, r);
        curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, seek_cb);
        curl_easy_setopt(e, CURLOPT_SEEKDATA, r);
    }
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L); /* a HEAD reply has no body to wait for */
    else if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    return 0;
}

int aw_http_start(aw_http *h, const aw_http_options *o, aw_http_req **out, aw_error *err)
{
    *out = NULL;
    aw_http_req *r = aw_malloc(h->alloc, sizeof *r);
    if (!r)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(r, 0, sizeof *r);
    r->h = h;
    r->fns = o->fns;
    r->ctx = o->ctx;
    r->connect_ms = o->connect_timeout_ms;
    r->first_byte_ms = o->first_byte_timeout_ms;
    r->idle_ms = o->idle_timeout_ms;
    r->request_ms = o->request_timeout_ms;
    aw_buf_init(&r->head, h->alloc);
    aw_buf_init(&r->pending, h->alloc);
    /* linked in at once, so destroy() undoes every step below */
    r->next = h->reqs;
    if (h->reqs)
        h->reqs->prev = r;
    h->reqs = r;
    h->active++;

    int rc = where_of(r, o->url, err);
    if (!rc && o->body_count) {
        r->body = aw_malloc(h->alloc, o->body_count * sizeof *r->body);
        if (!r->body)
            rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
        else {
            memcpy(r->body, o->body, o->body_count * sizeof *r->body);
            r->body_count = o->body_count;
            for (size_t i = 0; i < o->body_count; i++)
                r->body_len += (curl_off_t)o->body[i].len;
        }
    }
    if (!rc && !h->timer && !(h->timer = aw_loop_timer(h->loop, FAR_MS, on_curl_timer, h)))
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (!rc && (!(r->stall = aw_loop_timer(h->loop, FAR_MS, on_stall, r)) ||
                !(r->whole = aw_loop_timer(h->loop, r->request_ms > 0 ? r->request_ms : FAR_MS, on_whole, r))))
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (!rc && !(r->easy = curl_easy_init()))
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (!rc)
        rc = setup_easy(r, o, err);
    if (!rc) {
        arm_stall(r, PHASE_CONNECT);
        if (curl_multi_add_handle(h->multi, r->easy) != CURLM_OK) {
            rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
        }
    }
    if (rc) {
        destroy(r);
        return rc;
    }
    *out = r;
    return 0;
}

void aw_http_cancel(aw_http_req *r)
{
    if (!r || r->cancelled || r->finishing)
        return;
    if (r->busy) {
        /* deliver() frees it once the callback returns */
        r->cancelled = true;
        return;
    }
    destroy(r);
}
