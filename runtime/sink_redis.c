/* The Redis sink: each envelope PUBLISHed on its channel ("agent.<session>")
 * as Laravel's Redis broadcaster writes an event,
 *
 *   {"event": "agent.step.started", "data": {ENVELOPE}, "socket": null}
 *
 * so Laravel Echo behind a Redis-scaled Reverb or laravel-echo-server sees
 * it as one of the application's own broadcasts.
 *
 * hiredis's asynchronous API on the loop: its socket is an aw_watch, so a
 * slow or dead Redis never blocks the run. Envelopes wait in a bounded
 * queue (sink_queue.c) until Redis acknowledges their PUBLISH; those that
 * come within BATCH_MS go in one write, a few hundred pipelined at once. When the connection is lost, the ones
 * not acknowledged are sent again on the next connection (Redis may have
 * gone before answering), and the connection is retried with backoff
 * (100 ms doubling to 2 s) for as long as the sink lives. A full queue
 * drops the newest envelope: what is delivered stays in order.
 *
 * hiredis 0.14 (Debian 12) has no allocator hooks: its own buffers come
 * from malloc. Everything of ours goes through the sink's allocator. */
#include <errno.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/buf.h"
#include "agentwire/sink.h"
#include "internal/redis_url.h"
#include "internal/rt_util.h"
#include "internal/sink_queue.h"

#define WINDOW 512               /* PUBLISHes written and not yet acknowledged */
/* Envelopes are handed to Redis together, this long after the first of
 * them: a run emits them in bursts (a step's start, its tools), and one
 * write and one reply read for several costs the run a fraction of one
 * each (measured: bench/run_sinks.sh). A UI sees them 10 ms later. */
#define BATCH_MS 25
#define CONNECT_TIMEOUT_MS 2000  /* hiredis 0.14's async connect has none of its own */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 2000

typedef struct redis_sink {
    aw_sink base;
    aw_loop *loop;
    const aw_allocator *alloc;
    aw_redis_url url;        /* host, port, db and the credentials (redis_url.c) */

    redisAsyncContext *ac;   /* NULL while there is no connection */
    aw_watch *watch;
    unsigned watch_events;
    bool connected;
    aw_timer *connect_timer; /* the connection attempt's deadline */
    aw_timer *retry_timer;   /* the next attempt */
    aw_timer *batch_timer;   /* the next hand-over of queued envelopes */
    int64_t backoff_ms;
    bool destroying;

    aw_sink_queue queue;
    aw_sink_item *unsent;    /* the first item not written on this connection */
    size_t unacked;
    aw_buf payload;
} redis_sink;

static void connect_now(redis_sink *r);
static void pump(redis_sink *r);

static void set_error(redis_sink *r, const char *what, const char *detail)
{
    snprintf(r->base.error, sizeof r->base.error, "%.60s:%d: %.60s%s%.120s", r->url.host, r->url.port, what, detail ? ": " : "",
             detail ? detail : "");
}

/* ---- hiredis's event hooks -------------------------------------------------------- */

static void on_socket(void *ctx, int fd, unsigned events)
{
    (void)fd;
    redis_sink *r = ctx;
    /* Either call may end in hiredis freeing the context (the peer went
     * away): it then calls on_disconnect or on_connect, which clear r->ac. */
    if (r->ac && (events & AW_WATCH_READ))
        redisAsyncHandleRead(r->ac);
    if (r->ac && (events & AW_WATCH_WRITE))
        redisAsyncHandleWrite(r->ac);
}

static void update_watch(redis_sink *r, unsigned events)
{
    r->watch_events = events;
    if (r->watch)
        aw_watch_set(r->watch, events);
}

static void ev_add_read(void *p) { update_watch(p, ((redis_sink *)p)->watch_events | AW_WATCH_READ); }
static void ev_del_read(void *p) { update_watch(p, ((redis_sink *)p)->watch_events & ~(unsigned)AW_WATCH_READ); }
static void ev_add_write(void *p) { update_watch(p, ((redis_sink *)p)->watch_events | AW_WATCH_WRITE); }
static void ev_del_write(void *p) { update_watch(p, ((redis_sink *)p)->watch_events & ~(unsigned)AW_WATCH_WRITE); }

static void ev_cleanup(void *p)
{
    redis_sink *r = p;
    aw_watch_free(r->watch);
    r->watch = NULL;
    r->watch_events = 0;
}

/* ---- the connection ------------------------------------------------------------------ */

static void on_retry(void *ctx)
{
    redis_sink *r = ctx;
    aw_timer_free(r->retry_timer);
    r->retry_timer = NULL;
    connect_now(r);
}

/* The connection is gone (hiredis frees or has freed the context): every
 * item not acknowledged goes again on the next one. */
static void lost(redis_sink *r)
{
    r->ac = NULL;
    r->connected = false;
    r->unsent = r->queue.head;
    r->unacked = 0;
    for (aw_sink_item *it = r->queue.head; it; it = it->next)
        it->in_flight = false;
    aw_timer_free(r->connect_timer);
    r->connect_timer = NULL;
    if (r->destroying || r->retry_timer)
        return;
    r->retry_timer = aw_loop_timer(r->loop, r->backoff_ms, on_retry, r);
    r->backoff_ms = r->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : r->backoff_ms * 2;
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    redis_sink *r = ac->data;
    if (status != REDIS_OK) {
        set_error(r, "cannot connect", ac->errstr);
        lost(r); /* hiredis frees the context when this returns */
        return;
    }
    aw_timer_free(r->connect_timer);
    r->connect_timer = NULL;
    r->connected = true;
    r->backoff_ms = BACKOFF_FIRST_MS;
    pump(r);
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    redis_sink *r = ac->data;
    if (status != REDIS_OK)
        set_error(r, "connection lost", ac->errstr);
    lost(r);
}

static void on_connect_timeout(void *ctx)
{
    redis_sink *r = ctx;
    aw_timer_free(r->connect_timer);
    r->connect_timer = NULL;
    set_error(r, "cannot connect", "no answer within 2 s");
    redisAsyncContext *ac = r->ac;
    r->ac = NULL;
    /* not connected: hiredis calls neither on_connect nor on_disconnect */
    redisAsyncFree(ac);
    lost(r);
}

/* A reply to AUTH or SELECT: an error is the sink's error, in words. */
static void on_setup_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    (void)privdata;
    redis_sink *r = ac->data;
    redisReply *rep = reply;
    if (rep && rep->type == REDIS_REPLY_ERROR)
        set_error(r, "refused", rep->str);
}

static void connect_now(redis_sink *r)
{
    redisAsyncContext *ac = redisAsyncConnect(r->url.host, r->url.port);
    if (!ac) {
        set_error(r, "cannot connect", "out of memory");
        lost(r);
        return;
    }
    if (ac->err) {
        set_error(r, "cannot connect", ac->errstr);
        redisAsyncFree(ac);
        lost(r);
        return;
    }
    ac->data = r;
    r->ac = ac;
    r->watch = aw_loop_watch(r->loop, ac->c.fd, AW_WATCH_WRITE, on_socket, r);
    r->watch_events = AW_WATCH_WRITE; /* writable: the connection is up (or failed) */
    if (!r->watch) {
        r->ac = NULL;
        redisAsyncFree(ac);
        set_error(r, "cannot connect", "out of memory");
        lost(r);
        return;
    }
    ac->ev.data = r;
    ac->ev.addRead = ev_add_read;
    ac->ev.delRead = ev_del_read;
    ac->ev.addWrite = ev_add_write;
    ac->ev.delWrite = ev_del_write;
    ac->ev.cleanup = ev_cleanup;
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    r->connect_timer = aw_loop_timer(r->loop, CONNECT_TIMEOUT_MS, on_connect_timeout, r);
    /* queued by hiredis ahead of every PUBLISH of this connection */
    if (r->url.password) {
        if (r->url.user)
            redisAsyncCommand(ac, on_setup_reply, NULL, "AUTH %s %s", r->url.user, r->url.password);
        else
            redisAsyncCommand(ac, on_setup_reply, NULL, "AUTH %s", r->url.password);
    }
    if (r->url.db)
        redisAsyncCommand(ac, on_setup_reply, NULL, "SELECT %d", r->url.db);
}

/* ---- publishing ------------------------------------------------------------------------ */

static void on_publish_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    redis_sink *r = ac->data;
    aw_sink_item *it = privdata;
    redisReply *rep = reply;
    if (!rep || r->destroying)
        return; /* the connection is going: lost() sends it again */
    r->unacked--;
    if (rep->type == REDIS_REPLY_ERROR) {
        /* refused (NOAUTH, OOM, READONLY): sending it again would be refused too */
        set_error(r, "PUBLISH refused", rep->str);
        r->base.dropped++;
    } else {
        r->base.sent++;
    }
    if (r->unsent == it)
        r->unsent = it->next;
    aw_sink_queue_remove(&r->queue, it);
    pump(r);
}

static void pump(redis_sink *r)
{
    while (r->connected && r->ac && r->unsent && r->unacked < WINDOW) {
        aw_sink_item *it = r->unsent;
        const char *argv[3] = {"PUBLISH", aw_sink_item_channel(it), aw_sink_item_body(it)};
        size_t lens[3] = {7, it->channel_len, it->body_len};
        if (redisAsyncCommandArgv(r->ac, on_publish_reply, it, 3, argv, lens) != REDIS_OK)
            return; /* the connection is closing: lost() follows */
        it->in_flight = true;
        r->unacked++;
        r->unsent = it->next;
    }
}

static void on_batch(void *ctx)
{
    redis_sink *r = ctx;
    aw_timer_free(r->batch_timer);
    r->batch_timer = NULL;
    pump(r);
}

/* {"event": TYPE, "data": ENVELOPE, "socket": null}, in Laravel's key order. */
static int laravel_payload(redis_sink *r, const aw_json_value *env, aw_error *err)
{
    aw_buf_clear(&r->payload);
    const aw_json_value *type = aw_json_get(env, "type");
    int rc = aw_buf_append_str(&r->payload, "{\"event\":");
    if (!rc && aw_json_is_string(type))
        rc = aw_json_write(type, NULL, &r->payload, err);
    else if (!rc)
        rc = aw_buf_append_str(&r->payload, "null");
    rc = rc || aw_buf_append_str(&r->payload, ",\"data\":") || aw_json_write(env, NULL, &r->payload, err) ||
         aw_buf_append_str(&r->payload, ",\"socket\":null}");
    return rc ? aw_rt_error(err, AW_ENOMEM, "out of memory") : 0;
}

static int redis_send(aw_sink *s, const char *channel, const aw_json_value *env, aw_error *err)
{
    redis_sink *r = s->impl;
    if (laravel_payload(r, env, err))
        return AW_ENOMEM;
    aw_sink_item *it = NULL;
    int rc = aw_sink_queue_push(&r->queue, channel, r->payload.data, r->payload.len, &it);
    if (rc == AW_ENOMEM)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (rc) {
        s->dropped++;
        if (!s->error[0] || !strstr(s->error, "queue"))
            set_error(r, "the queue is full (Redis is slow or away)", NULL);
        return aw_rt_error(err, AW_EIO, "%s", s->error);
    }
    if (!r->unsent)
        r->unsent = it;
    if (!r->batch_timer)
        r->batch_timer = aw_loop_timer(r->loop, BATCH_MS, on_batch, r);
    if (!r->batch_timer)
        pump(r);
    return 0;
}

static size_t redis_pending(const aw_sink *s) { return ((const redis_sink *)s->impl)->queue.count; }

static int redis_flush(aw_sink *s, int64_t timeout_ms, aw_error *err)
{
    (void)err;
    redis_sink *r = s->impl;
    int64_t end = aw_loop_clock() + (timeout_ms > 0 ? timeout_ms : 0);
    while (r->queue.count) {
        int64_t left = end - aw_loop_clock();
        if (left <= 0 || aw_loop_once(r->loop, left))
            break;
    }
    if (!r->queue.count)
        return 0;
    s->dropped += r->queue.count;
    /* taken out of hiredis's hands too: a reply must not meet a freed item */
    if (r->ac) {
        redisAsyncContext *ac = r->ac;
        r->destroying = true; /* the NULL replies of the pending commands change nothing */
        redisAsyncFree(ac);
        r->destroying = false;
        lost(r);
    }
    aw_sink_queue_clear(&r->queue);
    r->unsent = NULL;
    if (!s->error[0])
        set_error(r, "no answer by the end of the run", NULL);
    /* counted, not a failure of the run: the caller reports the drops */
    return 0;
}

static void redis_destroy(aw_sink *s)
{
    redis_sink *r = s->impl;
    r->destroying = true;
    if (r->ac) {
        redisAsyncContext *ac = r->ac;
        r->ac = NULL;
        redisAsyncFree(ac);
    }
    aw_watch_free(r->watch);
    aw_timer_free(r->connect_timer);
    aw_timer_free(r->retry_timer);
    aw_timer_free(r->batch_timer);
    aw_sink_queue_clear(&r->queue);
    aw_buf_free(&r->payload);
    aw__redis_url_free(r->alloc, &r->url);
    aw_free(r->alloc, s->name);
    aw_free(r->alloc, r);
}

static const aw_sink_ops redis_ops = {"redis", redis_send, redis_flush, redis_destroy, redis_pending};

aw_sink *aw_sink_redis_open(aw_loop *l, const char *url, const aw_sink_options *opts, aw_error *err)
{
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    redis_sink *r = aw_malloc(alloc, sizeof *r);
    if (!r) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(r, 0, sizeof *r);
    r->loop = l;
    r->alloc = alloc;
    r->base.ops = &redis_ops;
    r->base.impl = r;
    r->backoff_ms = BACKOFF_FIRST_MS;
    aw_sink_queue_init(&r->queue, alloc, opts ? opts->queue_max : 0);
    aw_buf_init(&r->payload, alloc);
    int rc = aw__redis_url_parse(alloc, url, &r->url, err);
    if (!rc) {
        r->base.name = r->url.name; /* the sink owns it from now on */
        r->url.name = NULL;
    }
    if (rc) {
        if (rc == AW_ENOMEM)
            aw_rt_error(err, AW_ENOMEM, "out of memory");
        redis_destroy(&r->base);
        return NULL;
    }
    connect_now(r);
    return &r->base;
}
