/* agentwire serve: where it listens (loopback unless a token guards it),
 * the store handles its threads share, and its start and stop. The
 * requests are in serve_http.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal/rt_util.h"
#include "internal/serve_impl.h"

#define DEFAULT_LISTEN "127.0.0.1:8080"
#define MIN_TOKEN_LEN 16
/* How long a request waits for a store handle before giving up (503). */
#define POOL_WAIT_MS 30000

/* One line to the log callback: without its line ends (libmicrohttpd's
 * messages have them), cut at 511 bytes. */
static void log_line(aw_server *s, const char *fmt, va_list ap)
{
    if (!s->log)
        return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = 0;
    s->log(s->log_ctx, msg);
}

void aw__serve_log(aw_server *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(s, fmt, ap);
    va_end(ap);
}

/* ---- store handles ------------------------------------------------------------------ */

static int pool_init(aw__store_pool *p, const char *url, size_t cap, const aw_allocator *a)
{
    memset(p, 0, sizeof *p);
    p->alloc = a;
    p->cap = cap;
    p->url = aw_rt_strdup(a, url);
    p->free_list = aw_malloc(a, cap * sizeof *p->free_list);
    if (!p->url || !p->free_list) {
        aw_free(a, p->url);
        aw_free(a, p->free_list);
        return AW_ENOMEM;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return 0;
}

static void pool_free(aw__store_pool *p)
{
    for (size_t i = 0; i < p->nfree; i++)
        aw_store_close(p->free_list[i]);
    aw_free(p->alloc, p->free_list);
    aw_free(p->alloc, p->url);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

aw_store *aw__pool_take(aw__store_pool *p, aw_error *err)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += POOL_WAIT_MS / 1000;
    pthread_mutex_lock(&p->mu);
    while (!p->nfree && p->open >= p->cap)
        if (pthread_cond_timedwait(&p->cv, &p->mu, &until) == ETIMEDOUT) {
            pthread_mutex_unlock(&p->mu);
            aw_rt_error(err, AW_STORE_EIO, "every store connection is busy");
            return NULL;
        }
    if (p->nfree) {
        aw_store *s = p->free_list[--p->nfree];
        pthread_mutex_unlock(&p->mu);
        return s;
    }
    p->open++;
    pthread_mutex_unlock(&p->mu);
    /* A viewer never writes: a read-only handle, so it can neither change
     * nor lock what runs are writing. */
    aw_store_options so = {.alloc = p->alloc, .read_only = true};
    aw_store *s = aw_store_open(p->url, &so, err);
    if (!s) {
        pthread_mutex_lock(&p->mu);
        p->open--;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    return s;
}

/* A handle that failed with AW_STORE_EIO (a connection lost) is closed,
 * not handed out again: the next request opens a fresh one. */
void aw__pool_give(aw__store_pool *p, aw_store *s, int rc)
{
    if (!s)
        return;
    bool broken = rc == AW_STORE_EIO;
    if (broken)
        aw_store_close(s);
    pthread_mutex_lock(&p->mu);
    if (broken)
        p->open--;
    else
        p->free_list[p->nfree++] = s;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* ---- the address ---------------------------------------------------------------------- */

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return true;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return false;
}

/* "HOST:PORT" or "[V6]:PORT" -> a bound, listening socket (fd), or -1
 * with err set. */
static int listen_on(aw_server *s, const char *where, aw_error *err)
{
    char host[256];
    const char *colon = strrchr(where, ':');
    const char *h = where;
    size_t hn = colon ? (size_t)(colon - where) : 0;
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
        h++;
        hn -= 2;
    }
    if (!colon || hn == 0 || hn >= sizeof host || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        strlen(colon + 1) > 5 || atoi(colon + 1) > 65535) {
        aw_rt_error(err, AW_EINVAL, "--listen wants HOST:PORT (127.0.0.1:8080, [::1]:8080), not '%s'", where);
        return -1;
    }
    memcpy(host, h, hn);
    host[hn] = 0;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res = NULL;
    int gai = getaddrinfo(host, colon + 1, &hints, &res);
    if (gai) {
        aw_rt_error(err, AW_EINVAL, "cannot listen on %s: %s", where, gai_strerror(gai));
        return -1;
    }
    s->loopback = is_loopback(res->ai_addr);
    if (!s->loopback && !s->token) {
        freeaddrinfo(res);
        aw_rt_error(err, AW_EINVAL,
                    "%s is not a loopback address: anyone who reaches it could read every session; "
                    "give --token (at least %d characters) to serve beyond this machine",
                    where, MIN_TOKEN_LEN);
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 64)) {
        aw_rt_error(err, AW_EINVAL, "cannot listen on %s: %s", where, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    char ip[INET6_ADDRSTRLEN] = "?";
    getsockname(fd, (struct sockaddr *)&bound, &blen);
    if (bound.ss_family == AF_INET6) {
        s->port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&bound)->sin6_addr, ip, sizeof ip);
        snprintf(s->address, sizeof s->address, "[%s]:%u", ip, s->port);
    } else {
        s->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
        inet_ntop(AF_INET, &((struct sockaddr_in *)&bound)->sin_addr, ip, sizeof ip);
        snprintf(s->address, sizeof s->address, "%s:%u", ip, s->port);
    }
    return fd;
}

static int check_token(const char *t, aw_error *err)
{
    if (strlen(t) < MIN_TOKEN_LEN)
        return aw_rt_error(err, AW_EINVAL, "the token is too short to guard anything: at least %d characters",
                           MIN_TOKEN_LEN);
    for (const char *p = t; *p; p++)
        if (*p <= ' ' || *p > '~')
            return aw_rt_error(err, AW_EINVAL, "the token must be printable ASCII without spaces (it travels in a header)");
    return 0;
}

/* ---- start and stop -------------------------------------------------------------------- */

static void mhd_log(void *ctx, const char *fmt, va_list ap) { log_line(ctx, fmt, ap); }

aw_server *aw_server_start(const aw_serve_options *o, aw_error *err)
{
    aw_error_clear(err);
    if (!o || !o->store_url || !*o->store_url) {
        aw_rt_error(err, AW_EINVAL, "no store given");
        return NULL;
    }
    if (o->token && check_token(o->token, err))
        return NULL;
    const aw_allocator *a = o->alloc ? o->alloc : aw_allocator_default();
    aw_server *s = aw_malloc(a, sizeof *s);
    if (!s) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->alloc = a;
    s->log = o->log;
    s->log_ctx = o->log_ctx;
    s->poll_ms = o->poll_ms > 0 ? o->poll_ms : 250;
    s->heartbeat_ms = o->heartbeat_ms > 0 ? o->heartbeat_ms : 15000;
    unsigned threads = o->threads ? o->threads : 4;
    size_t max_conn = o->max_connections ? o->max_connections : 256;
    pthread_mutex_init(&s->sse_mu, NULL);
    pthread_cond_init(&s->sse_cv, NULL);
    if (o->token && !(s->token = aw_rt_strdup(a, o->token))) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        goto fail;
    }
    /* one handle per serving thread, and one for the poller */
    if (pool_init(&s->pool, o->store_url, threads + 1, a)) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        goto fail;
    }
    /* Made (or brought up to this binary's schema) as a run would, so a
     * viewer may start before the first run; one it may not write to (a
     * read-only database role) is fine when it can be read. */
    aw_store_options rw = {.alloc = a};
    aw_store_close(aw_store_open(o->store_url, &rw, NULL));
    /* open one now, so a store that cannot be read is said at once */
    aw_store *first = aw__pool_take(&s->pool, err);
    if (!first)
        goto fail_pool;
    char store_name[200];
    snprintf(store_name, sizeof store_name, "%s", aw_store_url(first));
    aw__pool_give(&s->pool, first, 0);
    int fd = listen_on(s, o->listen ? o->listen : DEFAULT_LISTEN, err);
    if (fd < 0)
        goto fail_pool;
    if (aw__sse_start(s, err)) {
        close(fd);
        goto fail_pool;
    }
    s->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0, NULL, NULL,
        /* the logger first, so that every message goes through it */
        aw__serve_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)max_conn, MHD_OPTION_CONNECTION_TIMEOUT, 60u,
        /* the request line and headers must fit here: a bigger one gets 431 */
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024, MHD_OPTION_END);
    if (!s->daemon) {
        close(fd);
        aw__sse_stop(s);
        aw_rt_error(err, AW_EINVAL, "the HTTP server could not start on %s", s->address);
        goto fail_pool;
    }
    aw__serve_log(s, "serving %s on http://%s/%s", store_name, s->address,
                  s->token ? " (a token is required)" : "");
    return s;
fail_pool:
    pool_free(&s->pool);
fail:
    aw_free(a, s->token);
    pthread_mutex_destroy(&s->sse_mu);
    pthread_cond_destroy(&s->sse_cv);
    aw_free(a, s);
    return NULL;
}

void aw_server_stop(aw_server *s)
{
    if (!s)
        return;
    /* streams first: a suspended connection must be resumed (and end)
     * before the daemon may stop */
    aw__sse_stop(s);
    MHD_stop_daemon(s->daemon);
    aw__sse_free(s);
    pool_free(&s->pool);
    aw_free(s->alloc, s->token);
    pthread_mutex_destroy(&s->sse_mu);
    pthread_cond_destroy(&s->sse_cv);
    aw_free(s->alloc, s);
}

const char *aw_server_address(const aw_server *s) { return s->address; }
uint16_t aw_server_port(const aw_server *s) { return s->port; }
uint64_t aw_server_envelopes_sent(const aw_server *s) { return atomic_load(&((aw_server *)s)->envelopes_sent); }
