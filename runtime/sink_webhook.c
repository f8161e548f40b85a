/* The webhook sink: each envelope POSTed as JSON to the URL, through the
 * runtime's HTTP client on the loop (http.c), so a slow receiver never
 * blocks the run.
 *
 * Order: per channel (one session), one envelope at a time, the next only
 * once the one before it is delivered or given up on; channels go at once,
 * up to MAX_IN_FLIGHT requests. Retries: a connection failure, a timeout,
 * a 5xx, 408 or 429 is tried again after 250 ms, 500 ms, 1 s, 2 s (or the
 * Retry-After asked, up to 30 s), MAX_ATTEMPTS in all; other statuses are
 * final. An envelope that cannot be delivered (attempts spent, a final
 * status, a full queue, the end of the sink) goes to the dead-letter file
 * when there is one, one JSON line each:
 *
 *   {"channel": "agent.<session>", "error": "...", "attempts": N,
 *    "at": "2026-01-16T10:05:00.123Z", "envelope": {...}}
 *
 * and is counted as dropped in any case.
 *
 * Each request carries Content-Type: application/json, X-Agentwire-Channel
 * and, with a secret, X-Agentwire-Signature-256: sha256=HEX, the
 * HMAC-SHA256 of the body (GitHub's form of it, so receivers' helpers for
 * that header fit).
 *
 * Threads: the requests are made by a thread of the sink's own, on a loop
 * and an HTTP client of its own. One HTTP request costs about 200 us of
 * CPU (libcurl's set-up, the socket's system calls), which on the run's
 * thread was a tenth of a run sending 1,000 envelopes a second; send now
 * only queues the envelope and rings the thread. The queue, what is in
 * flight and the counts in base are shared, under mu; the thread owns its
 * loop, the HTTP client, the slots and the backoff timer; the run's thread
 * owns w->line. The sink's allocator is called from both threads. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agentwire/agentwire.h"
#include "agentwire/buf.h"
#include "agentwire/envelope.h"
#include "agentwire/sink.h"
#include "internal/http.h"
#include "internal/rt_util.h"
#include "internal/sha256.h"
#include "internal/sink_queue.h"

#define MAX_IN_FLIGHT 4
#define MAX_ATTEMPTS 5
#define FIRST_BACKOFF_MS 250
#define MAX_RETRY_AFTER_MS 30000
#define CONNECT_TIMEOUT_MS 2000
#define REQUEST_TIMEOUT_MS 5000
#define SCAN_LIMIT 1024 /* items looked at for one that may go */

typedef struct webhook_sink webhook_sink;

typedef struct delivery {
    webhook_sink *w;
    aw_sink_item *item; /* NULL: the slot is free */
    aw_http_req *req;
    char channel_header[200];
    char signature_header[100];
    const char *headers[4];
    aw_text body;
} delivery;

/* What the run's thread asks of the delivery thread. */
typedef enum { ASK_NOTHING, ASK_ABANDON, ASK_STOP } ask_kind;

struct webhook_sink {
    aw_sink base;
    const aw_allocator *alloc;
    char *url;
    char *secret;
    size_t secret_len;
    char *dead_path;
    int dead_fd;

    /* shared, under mu; changed is broadcast when the queue, what is in
     * flight or ask changes */
    pthread_mutex_t mu;
    pthread_cond_t changed;
    aw_sink_queue queue;
    size_t in_flight;
    bool unreachable;        /* the last attempt got no answer at all (refused, timed out) */
    ask_kind ask;
    char abandon_why[sizeof ((aw_sink *)0)->error + 64];
    aw_buf dead_line;        /* a dead letter being written */

    /* the delivery thread's */
    pthread_t thread;
    bool thread_started;
    aw_loop *loop;
    aw_http *http;
    int bell;                /* an eventfd the run's thread rings */
    atomic_bool rung;        /* rung and not answered yet: one write for many sends */
    aw_watch *bell_watch;
    delivery slots[MAX_IN_FLIGHT];
    aw_timer *wake;          /* the earliest backoff's end */

    /* the run's thread's */
    aw_buf line;             /* an envelope being queued */
};

static void lock(webhook_sink *w) { pthread_mutex_lock(&w->mu); }
static void unlock_changed(webhook_sink *w)
{
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->mu);
}

static void pump(webhook_sink *w);

/* ---- giving up on an envelope ------------------------------------------------------------ */

/* Under mu. */
static void dead_letter(webhook_sink *w, const char *channel, const char *body, size_t len, unsigned attempts,
                        const char *why)
{
    w->base.dropped++;
    if (w->dead_fd < 0)
        return;
    aw_buf *b = &w->dead_line;
    aw_buf_clear(b);
    int rc = aw_buf_append_str(b, "{\"channel\":") || aw_json_write_string(b, channel, strlen(channel)) ||
             aw_buf_append_str(b, ",\"error\":") || aw_json_write_string(b, why, strlen(why)) ||
             aw_buf_printf(b, ",\"attempts\":%u,\"at\":\"", attempts) ||
             aw_time_format_rfc3339(aw_rt_wall_ms(), true, b) || aw_buf_append_str(b, "\",\"envelope\":") ||
             aw_buf_append(b, body, len) || aw_buf_append_str(b, "}\n");
    if (rc) {
        snprintf(w->base.error, sizeof w->base.error, "%.200s: out of memory for a dead letter", w->dead_path);
        return;
    }
    /* one write(2) a line, O_APPEND: workers may share the file */
    if (aw_rt_write_all(w->dead_fd, b->data, b->len)) {
        snprintf(w->base.error, sizeof w->base.error, "%.180s: %.60s", w->dead_path, strerror(errno));
        return;
    }
    w->base.dead_lettered++;
}

/* Under mu. */
static void give_up(webhook_sink *w, aw_sink_item *it, const char *why)
{
    dead_letter(w, aw_sink_item_channel(it), aw_sink_item_body(it), it->body_len, it->attempts, why);
    aw_sink_queue_remove(&w->queue, it);
}

/* ---- one delivery ---------------------------------------------------------------------------- */

static bool worth_retrying(const aw_http_result *res)
{
    if (res->code)
        return res->code != AW_ENOMEM;
    return res->status >= 500 || res->status == 408 || res->status == 429;
}

static int64_t backoff_ms(unsigned attempts, int64_t retry_after)
{
    if (retry_after >= 0)
        return retry_after < MAX_RETRY_AFTER_MS ? retry_after : MAX_RETRY_AFTER_MS;
    int64_t ms = (int64_t)FIRST_BACKOFF_MS << (attempts > 1 ? attempts - 1 : 0);
    return ms;
}

static void on_done(void *ctx, const aw_http_result *res)
{
    delivery *d = ctx;
    webhook_sink *w = d->w;
    aw_sink_item *it = d->item;
    d->item = NULL;
    d->req = NULL;
    char why[200] = "";
    bool delivered = !res->code && res->status >= 200 && res->status < 300;
    if (!delivered && res->code)
        snprintf(why, sizeof why, "%s", res->error ? res->error : "the request failed");
    else if (!delivered)
        snprintf(why, sizeof why, "HTTP %d%s%s", res->status, *aw_http_reason(res->status) ? " " : "",
                 aw_http_reason(res->status));
    lock(w);
    w->in_flight--;
    it->in_flight = false;
    if (delivered) {
        w->base.sent++;
        w->unreachable = false;
        aw_sink_queue_remove(&w->queue, it);
    } else {
        snprintf(w->base.error, sizeof w->base.error, "%.80s: %.170s", w->base.name, why);
        w->unreachable = res->code != 0;
        if (worth_retrying(res) && it->attempts < MAX_ATTEMPTS)
            it->not_before = aw_loop_now(w->loop) + backoff_ms(it->attempts, res->retry_after_ms);
        else
            give_up(w, it, why);
    }
    unlock_changed(w);
    pump(w);
}

static int start_delivery(webhook_sink *w, delivery *d, aw_sink_item *it)
{
    memset(d, 0, sizeof *d);
    d->w = w;
    snprintf(d->channel_header, sizeof d->channel_header, "X-Agentwire-Channel: %s", aw_sink_item_channel(it));
    size_t nh = 0;
    d->headers[nh++] = "Content-Type: application/json";
    d->headers[nh++] = d->channel_header;
    if (w->secret) {
        char hex[65];
        aw_hmac_sha256_hex(w->secret, w->secret_len, aw_sink_item_body(it), it->body_len, hex);
        snprintf(d->signature_header, sizeof d->signature_header, "X-Agentwire-Signature-256: sha256=%s", hex);
        d->headers[nh++] = d->signature_header;
    }
    d->body = (aw_text){aw_sink_item_body(it), it->body_len};
    aw_http_options o = {
        .method = "POST",
        .url = w->url,
        .headers = d->headers,
        .header_count = nh,
        .body = &d->body,
        .body_count = 1,
        .connect_timeout_ms = CONNECT_TIMEOUT_MS,
        .request_timeout_ms = REQUEST_TIMEOUT_MS,
        .fns = {.on_done = on_done},
        .ctx = d,
    };
    aw_error err;
    d->item = it; /* the slot is taken before the request can end */
    if (aw_http_start(w->http, &o, &d->req, &err)) {
        d->item = NULL;
        lock(w);
        snprintf(w->base.error, sizeof w->base.error, "%.80s: %.170s", w->base.name, err.message);
        it->in_flight = false;
        w->in_flight--;
        give_up(w, it, w->base.error);
        unlock_changed(w);
        return -1;
    }
    return 0;
}

static delivery *free_slot(webhook_sink *w)
{
    for (size_t i = 0; i < MAX_IN_FLIGHT; i++)
        if (!w->slots[i].item)
            return &w->slots[i];
    return NULL;
}

static void on_wake(void *ctx)
{
    webhook_sink *w = ctx;
    aw_timer_free(w->wake);
    w->wake = NULL;
    pump(w);
}

/* Start what may go: the first item of each channel (those behind it wait
 * for it), unless it is on its way or waiting out its backoff. The items
 * are chosen under mu and marked in flight (the run's thread only appends,
 * and only this thread removes), then their requests started without it. */
static void pump(webhook_sink *w)
{
    const aw_sink_item *seen[MAX_IN_FLIGHT * 4]; /* the first item of each channel met */
    aw_sink_item *picked[MAX_IN_FLIGHT];
    size_t nseen = 0, scanned = 0, npicked = 0;
    int64_t now = aw_loop_now(w->loop), next_wake = -1;
    lock(w);
    aw_sink_item *it = w->queue.head;
    while (it && w->in_flight < MAX_IN_FLIGHT && scanned++ < SCAN_LIMIT) {
        aw_sink_item *next = it->next;
        bool blocked = false;
        for (size_t i = 0; i < nseen && !blocked; i++)
            blocked = aw_sink_item_same_channel(seen[i], it);
        if (!blocked) {
            if (nseen == sizeof seen / sizeof *seen)
                break; /* enough channels looked at for now */
            seen[nseen++] = it;
            if (!it->in_flight) {
                if (it->not_before > now) {
                    if (next_wake < 0 || it->not_before < next_wake)
                        next_wake = it->not_before;
                } else {
                    it->in_flight = true;
                    it->attempts++;
                    w->in_flight++;
                    picked[npicked++] = it;
                }
            }
        }
        it = next;
    }
    pthread_mutex_unlock(&w->mu);
    for (size_t i = 0; i < npicked; i++)
        start_delivery(w, free_slot(w), picked[i]);
    if (next_wake >= 0) {
        if (w->wake)
            aw_timer_reset(w->wake, next_wake - now);
        else
            w->wake = aw_loop_timer(w->loop, next_wake - now, on_wake, w);
    }
}

/* ---- the sink --------------------------------------------------------------------------------- */

/* The delivery thread's bell: the run's thread queued something or asks. */
static void ring(webhook_sink *w)
{
    if (!atomic_exchange(&w->rung, true)) {
        uint64_t one = 1;
        ssize_t k;
        do
            k = write(w->bell, &one, sizeof one);
        while (k < 0 && errno == EINTR);
    }
}

static int webhook_send(aw_sink *s, const char *channel, const aw_json_value *env, aw_error *err)
{
    webhook_sink *w = s->impl;
    aw_buf_clear(&w->line);
    if (aw_json_write(env, NULL, &w->line, err))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    lock(w);
    int rc = aw_sink_queue_push(&w->queue, channel, w->line.data, w->line.len, NULL);
    if (rc == 1) {
        snprintf(s->error, sizeof s->error, "%.180s: the queue is full (the receiver is slow or away)", s->name);
        dead_letter(w, channel, w->line.data, w->line.len, 0, "the queue was full");
        aw_rt_error(err, AW_EIO, "%s", s->error);
    }
    pthread_mutex_unlock(&w->mu);
    if (rc == AW_ENOMEM)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (rc)
        return AW_EIO;
    ring(w);
    return 0;
}

static size_t webhook_pending(const aw_sink *s)
{
    webhook_sink *w = s->impl;
    lock(w);
    size_t n = w->queue.count;
    pthread_mutex_unlock(&w->mu);
    return n;
}

/* The delivery thread: everything still queued is given up on; requests
 * on their way are cancelled (their receiver may have taken them: a dead
 * letter then is one that arrived, which a receiver tells by the
 * envelope). */
static void abandon(webhook_sink *w, const char *why)
{
    for (size_t i = 0; i < MAX_IN_FLIGHT; i++)
        if (w->slots[i].item) {
            aw_http_cancel(w->slots[i].req);
            w->slots[i].item = NULL;
        }
    lock(w);
    for (aw_sink_item *it = w->queue.head; it; it = it->next)
        it->in_flight = false;
    w->in_flight = 0;
    while (w->queue.head)
        give_up(w, w->queue.head, why);
    pthread_mutex_unlock(&w->mu);
}

/* The delivery thread does what the run's thread asks; ASK_NOTHING when
 * it asked nothing. */
static ask_kind answer(webhook_sink *w)
{
    lock(w);
    ask_kind ask = w->ask;
    char why[sizeof w->abandon_why];
    snprintf(why, sizeof why, "%s", w->abandon_why);
    pthread_mutex_unlock(&w->mu);
    if (ask == ASK_STOP) {
        abandon(w, "the sink was closed before delivering it");
        aw_loop_stop(w->loop);
    } else if (ask == ASK_ABANDON) {
        abandon(w, why);
        lock(w);
        w->ask = ASK_NOTHING;
        unlock_changed(w);
    }
    return ask;
}

static void on_bell(void *ctx, int fd, unsigned events)
{
    (void)events;
    webhook_sink *w = ctx;
    uint64_t n;
    while (read(fd, &n, sizeof n) < 0 && errno == EINTR)
        ;
    /* after the read, before looking at the queue and what is asked: a
     * ring before this point is in what is looked at, one after it
     * writes again (cleared before the read, a ring in between was read
     * away while the flag stayed set, and no ring was heard again) */
    atomic_store(&w->rung, false);
    if (answer(w) == ASK_NOTHING)
        pump(w);
}

static void *delivery_thread(void *arg)
{
    webhook_sink *w = arg;
    for (;;) {
        /* returns once stopped (ASK_STOP, answered), or when a turn of the
         * loop failed (out of memory): what was asked meanwhile is
         * answered without the loop, and the loop tried again shortly */
        int rc = aw_loop_run(w->loop);
        if (answer(w) == ASK_STOP)
            return NULL;
        if (rc) {
            struct timespec pause = {0, 10 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
}

/* The run's thread: wait for the delivery thread (at most timeout_ms). */
static int webhook_flush(aw_sink *s, int64_t timeout_ms, aw_error *err)
{
    (void)err;
    webhook_sink *w = s->impl;
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    int64_t ms = timeout_ms > 0 ? timeout_ms : 0;
    end.tv_sec += (time_t)(ms / 1000);
    end.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    lock(w);
    /* A receiver that did not answer at all last time (down, hanging) is
     * not waited for: its envelopes would only wait out their backoff to
     * fail again. One that answered (a 500) may take them on a retry. */
    while (w->queue.count && !(w->unreachable && !w->in_flight))
        if (pthread_cond_timedwait(&w->changed, &w->mu, &end) == ETIMEDOUT)
            break;
    if (w->queue.count) {
        snprintf(w->abandon_why, sizeof w->abandon_why, "not delivered by the end of the run%s%s",
                 s->error[0] ? ": " : "", s->error);
        w->ask = ASK_ABANDON;
        pthread_mutex_unlock(&w->mu);
        ring(w);
        lock(w);
        while (w->ask == ASK_ABANDON)
            pthread_cond_wait(&w->changed, &w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    /* counted (and dead-lettered), not a failure of the run: the caller
     * reports the drops */
    return 0;
}

static void webhook_destroy(aw_sink *s)
{
    webhook_sink *w = s->impl;
    if (w->thread_started) {
        lock(w);
        w->ask = ASK_STOP;
        pthread_mutex_unlock(&w->mu);
        ring(w);
        pthread_join(w->thread, NULL);
    }
    aw_watch_free(w->bell_watch);
    aw_timer_free(w->wake);
    aw_http_free(w->http);
    aw_loop_free(w->loop);
    if (w->bell >= 0)
        close(w->bell);
    aw_sink_queue_clear(&w->queue);
    if (w->dead_fd >= 0)
        close(w->dead_fd);
    if (w->secret) {
        memset(w->secret, 0, w->secret_len);
        aw_free(w->alloc, w->secret);
    }
    aw_free(w->alloc, w->dead_path);
    aw_free(w->alloc, w->url);
    aw_buf_free(&w->line);
    aw_buf_free(&w->dead_line);
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->mu);
    aw_free(w->alloc, s->name);
    aw_free(w->alloc, w);
}

static const aw_sink_ops webhook_ops = {"webhook", webhook_send, webhook_flush, webhook_destroy, webhook_pending};

/* The URL for messages: user:password@ and the query (tokens live there)
 * left out. */
static char *display_name(const aw_allocator *a, const char *url)
{
    const char *scheme_end = strstr(url, "://");
    const char *host = scheme_end ? scheme_end + 3 : url;
    const char *path = host + strcspn(host, "/?#");
    const char *at = memchr(host, '@', (size_t)(path - host));
    if (at)
        host = at + 1;
    size_t keep_path = strcspn(path, "?#");
    aw_buf b;
    aw_buf_init(&b, a);
    if (aw_buf_append(&b, url, (size_t)(scheme_end ? scheme_end + 3 - url : 0)) ||
        aw_buf_append(&b, host, (size_t)(path - host)) || aw_buf_append(&b, path, keep_path) ||
        (path[keep_path] == '?' && aw_buf_append_str(&b, "?..."))) {
        aw_buf_free(&b);
        return NULL;
    }
    return aw_buf_detach(&b, NULL);
}

aw_sink *aw_sink_webhook_open(aw_loop *l, const char *url, const aw_sink_options *opts, aw_error *err)
{
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    webhook_sink *w = aw_malloc(alloc, sizeof *w);
    if (!w) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(w, 0, sizeof *w);
    w->alloc = alloc;
    w->dead_fd = -1;
    w->bell = -1;
    atomic_init(&w->rung, false);
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* flush's deadline */
    pthread_cond_init(&w->changed, &ca);
    pthread_condattr_destroy(&ca);
    w->base.ops = &webhook_ops;
    w->base.impl = w;
    aw_sink_queue_init(&w->queue, alloc, opts ? opts->queue_max : 0);
    aw_buf_init(&w->line, alloc);
    aw_buf_init(&w->dead_line, alloc);
    const char *secret = opts ? opts->secret : NULL;
    const char *dead = opts ? opts->dead_letter : NULL;
    if (!(w->url = aw_rt_strdup(alloc, url)) || !(w->base.name = display_name(alloc, url)) ||
        (secret && !(w->secret = aw_rt_strdup(alloc, secret))) || (dead && !(w->dead_path = aw_rt_strdup(alloc, dead)))) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        webhook_destroy(&w->base);
        return NULL;
    }
    w->secret_len = secret ? strlen(secret) : 0;
    if (dead && (w->dead_fd = open(dead, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) < 0) {
        aw_rt_error(err, AW_EINVAL, "%s: %s", dead, strerror(errno));
        webhook_destroy(&w->base);
        return NULL;
    }
    /* the delivery thread's loop and HTTP client, made here (libcurl's
     * global set-up belongs to the program's thread) */
    (void)l;
    if (!(w->loop = aw_loop_new(alloc, err)) || !(w->http = aw_http_new(w->loop, alloc, err))) {
        webhook_destroy(&w->base);
        return NULL;
    }
    if ((w->bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
        !(w->bell_watch = aw_loop_watch(w->loop, w->bell, AW_WATCH_READ, on_bell, w))) {
        aw_rt_error(err, w->bell < 0 ? AW_EIO : AW_ENOMEM, "%s", w->bell < 0 ? strerror(errno) : "out of memory");
        webhook_destroy(&w->base);
        return NULL;
    }
    /* the thread takes no signal: they are the program's (SIGINT, SIGTERM
     * and SIGCHLD reach the thread that waits for them) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, delivery_thread, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        aw_rt_error(err, AW_EIO, "the webhook's thread could not start: %s", strerror(rc));
        webhook_destroy(&w->base);
        return NULL;
    }
    w->thread_started = true;
    return &w->base;
}
