/* Server-sent events: GET /api/sessions/ID/events streams a session's
 * envelopes (serve_feed.c), from the start or from where a client's
 * Last-Event-ID (or ?after=) says it stopped, and then as the store
 * grows.
 *
 * A follower costs no thread: its connection is suspended in
 * libmicrohttpd while it has nothing to send. One poller thread looks at
 * the store every poll_ms for the sessions that suspended followers wait
 * on and resumes those whose session grew; every heartbeat_ms an idle
 * follower is resumed to send a comment line, which keeps proxies from
 * closing the stream and lets a client that went away be noticed (a
 * suspended connection sees nothing of its peer).
 *
 * Locking: the server's sse_mu guards the list of followers and each
 * one's flags. A follower suspends itself while holding it (so the poller
 * never resumes one that is not yet suspended); the poller resumes after
 * letting go of it, and only followers it marked as no longer suspended,
 * which libmicrohttpd cannot close or free until they are resumed. The
 * follower's own cursor and buffer are touched by its connection's thread
 * only. When libmicrohttpd is done with a follower it only sets `gone`;
 * the poller frees it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal/rt_util.h"
#include "internal/serve_impl.h"

/* Steps read per refill: a long session streams in pieces, each a bounded
 * read and a bounded buffer. */
#define STEPS_PER_READ 8
#define MAX_FOLLOWERS 200

struct aw__sse_client {
    aw__sse_client *next;
    aw_server *server;
    struct MHD_Connection *conn;
    char id[257];
    /* the connection's thread only */
    aw__serve_cursor cur;
    aw_buf out;
    size_t out_pos;
    /* under sse_mu */
    int64_t known;   /* the last event read */
    bool suspended;  /* waiting in libmicrohttpd for the poller */
    bool wake;       /* rows may have come since the last read */
    bool heartbeat;  /* send a comment */
    bool closing;    /* the server stops: end the stream */
    bool ended;      /* the stream's end was handed to libmicrohttpd */
    bool woken_to_end; /* was suspended when the server stopped */
    int64_t last_sent_ms;
    atomic_bool gone; /* libmicrohttpd freed the response */
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the follower's side ------------------------------------------------------------------- */

static int append_envelope(void *ctx, const char *id, const aw_json_value *env)
{
    aw__sse_client *f = ctx;
    static const aw_json_write_options opts = {.replace_lone_surrogates = true};
    /* the writer escapes every line break, so the JSON is one data line */
    if (aw_buf_printf(&f->out, "id: %s\ndata: ", id) || aw_json_write(env, &opts, &f->out, NULL) ||
        aw_buf_append(&f->out, "\n\n", 2))
        return 1;
    atomic_fetch_add(&f->server->envelopes_sent, 1);
    return 0;
}

/* Read what came after the cursor into the buffer. */
static int refill(aw__sse_client *f)
{
    aw_server *s = f->server;
    aw_error err;
    aw_store *st = aw__pool_take(&s->pool, &err);
    if (!st)
        return -1;
    aw_json_doc *steps = NULL;
    int rc = aw_store_steps(st, f->id, f->cur.after, STEPS_PER_READ, &steps, &err);
    aw__pool_give(&s->pool, st, rc);
    if (!rc)
        rc = aw__serve_feed(aw_json_doc_root(steps), f->id, &f->cur, s->alloc, append_envelope, f, &err);
    aw_json_doc_free(steps);
    if (rc) {
        aw__serve_log(s, "events of %s: %s", f->id, err.message);
        return -1;
    }
    pthread_mutex_lock(&s->sse_mu);
    f->known = f->cur.after;
    pthread_mutex_unlock(&s->sse_mu);
    return 0;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    aw__sse_client *f = cls;
    aw_server *s = f->server;
    for (int rounds = 0;; rounds++) {
        if (f->out_pos < f->out.len) {
            size_t n = f->out.len - f->out_pos;
            if (n > max)
                n = max;
            memcpy(buf, f->out.data + f->out_pos, n);
            f->out_pos += n;
            if (f->out_pos == f->out.len) {
                aw_buf_clear(&f->out);
                f->out_pos = 0;
            }
            pthread_mutex_lock(&s->sse_mu);
            f->last_sent_ms = mono_ms();
            pthread_mutex_unlock(&s->sse_mu);
            return (ssize_t)n;
        }
        pthread_mutex_lock(&s->sse_mu);
        bool closing = f->closing, heartbeat = f->heartbeat;
        f->heartbeat = f->wake = false;
        if (closing)
            f->ended = true;
        pthread_mutex_unlock(&s->sse_mu);
        if (closing)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (heartbeat && aw_buf_append_str(&f->out, ": keep-alive\n\n"))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        /* a failing store ends the stream: the client reconnects from its
         * last id, which is what EventSource does on its own */
        if (!heartbeat && refill(f))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (f->out.len)
            continue;
        pthread_mutex_lock(&s->sse_mu);
        /* never suspended once the server stops; new rows looked at
         * again a few times before waiting for the poller */
        if (f->closing || ((f->wake || f->heartbeat) && rounds < 8)) {
            pthread_mutex_unlock(&s->sse_mu);
            continue;
        }
        f->suspended = true;
        MHD_suspend_connection(f->conn);
        pthread_mutex_unlock(&s->sse_mu);
        return 0;
    }
}

static void sse_done(void *cls)
{
    aw__sse_client *f = cls;
    atomic_store(&f->gone, true);
}

static void client_free(aw_server *s, aw__sse_client *f)
{
    aw_buf_free(&f->out);
    aw_free(s->alloc, f);
}

/* Last-Event-ID, or ?after= for clients that cannot set it. */
static int start_cursor(struct MHD_Connection *c, aw__serve_cursor *cur)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_LAST_EVENT_ID);
    if (!v)
        v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "after");
    if (!v) {
        *cur = (aw__serve_cursor){0, 0, 0};
        return 0;
    }
    return aw__serve_cursor_parse(v, cur);
}

enum MHD_Result aw__api_events(aw_server *s, struct MHD_Connection *c, const char *id)
{
    aw__serve_cursor cur;
    if (start_cursor(c, &cur))
        return aw__reply_error(s, c, MHD_HTTP_BAD_REQUEST,
                               "Last-Event-ID (or ?after=) is an event id this server sent: N or N.M");
    /* a 404 now, not an empty stream that never ends */
    aw_error err;
    aw_store *st = aw__pool_take(&s->pool, &err);
    aw_json_doc *probe = NULL;
    int rc = st ? aw_store_events(st, id, INT64_MAX - 1, 1, &probe, &err) : AW_STORE_EIO;
    aw__pool_give(&s->pool, st, rc);
    aw_json_doc_free(probe);
    if (rc)
        return aw__reply_error(s, c, aw__status_for_store(rc), "%s", err.message);
    pthread_mutex_lock(&s->sse_mu);
    size_t n = s->nclients;
    pthread_mutex_unlock(&s->sse_mu);
    if (n >= MAX_FOLLOWERS)
        return aw__reply_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE, "too many event streams are open (%d)",
                               MAX_FOLLOWERS);
    aw__sse_client *f = aw_malloc(s->alloc, sizeof *f);
    if (!f)
        return aw__reply_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    memset(f, 0, sizeof *f);
    f->server = s;
    f->conn = c;
    f->cur = cur;
    f->known = cur.after;
    f->last_sent_ms = mono_ms();
    atomic_init(&f->gone, false);
    snprintf(f->id, sizeof f->id, "%s", id);
    aw_buf_init(&f->out, s->alloc);
    /* how long EventSource waits before it reconnects */
    struct MHD_Response *r = aw_buf_append_str(&f->out, "retry: 2000\n\n")
                                 ? NULL
                                 : MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, sse_read, f, sse_done);
    if (!r) {
        client_free(s, f);
        return aw__reply_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream; charset=utf-8");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    pthread_mutex_lock(&s->sse_mu);
    f->closing = s->stopping; /* a stream begun as the server stops ends at once */
    f->next = s->clients;
    s->clients = f;
    s->nclients++;
    pthread_mutex_unlock(&s->sse_mu);
    return aw__reply(c, MHD_HTTP_OK, r);
}

/* ---- the poller ---------------------------------------------------------------------------- */

/* A session and the point its suspended followers have read to. */
typedef struct watch {
    const char *id;
    int64_t known;
    bool grew;
} watch;

/* Free the followers libmicrohttpd is done with (under sse_mu). */
static void reap(aw_server *s)
{
    for (aw__sse_client **p = &s->clients; *p;) {
        aw__sse_client *f = *p;
        if (atomic_load(&f->gone)) {
            *p = f->next;
            s->nclients--;
            client_free(s, f);
        } else {
            p = &f->next;
        }
    }
}

/* The distinct (session, point) pairs of suspended followers, at most cap
 * (under sse_mu; the ids stay valid: only this thread frees followers). */
static size_t watches(aw_server *s, watch *w, size_t cap)
{
    size_t n = 0;
    for (aw__sse_client *f = s->clients; f && n < cap; f = f->next) {
        if (!f->suspended)
            continue;
        size_t k = 0;
        while (k < n && (w[k].known != f->known || strcmp(w[k].id, f->id)))
            k++;
        if (k == n)
            w[n++] = (watch){f->id, f->known, false};
    }
    return n;
}

/* Mark followers to resume (under sse_mu): those whose session grew past
 * their point, and the idle ones due a heartbeat. */
static size_t due(aw_server *s, const watch *w, size_t nw, struct MHD_Connection **resume, size_t cap)
{
    size_t n = 0;
    int64_t now = mono_ms();
    for (aw__sse_client *f = s->clients; f && n < cap; f = f->next) {
        bool grew = false;
        for (size_t k = 0; k < nw && !grew; k++)
            grew = w[k].grew && w[k].known == f->known && !strcmp(w[k].id, f->id);
        if (now - f->last_sent_ms >= s->heartbeat_ms)
            f->heartbeat = true;
        if (!grew && !f->heartbeat)
            continue;
        if (!f->suspended) {
            f->wake = true; /* reading now: it looks again before suspending */
            continue;
        }
        f->suspended = false;
        resume[n++] = f->conn;
    }
    return n;
}

static void *poll_store(void *arg)
{
    aw_server *s = arg;
    watch w[MAX_FOLLOWERS];
    struct MHD_Connection *resume[MAX_FOLLOWERS];
    pthread_mutex_lock(&s->sse_mu);
    while (!s->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long)(s->poll_ms % 1000) * 1000000L;
        until.tv_sec += s->poll_ms / 1000 + until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        int rc = 0;
        while (!s->stopping && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&s->sse_cv, &s->sse_mu, &until);
        if (s->stopping)
            break;
        reap(s);
        size_t nw = watches(s, w, MAX_FOLLOWERS);
        pthread_mutex_unlock(&s->sse_mu);
        aw_error err;
        aw_store *st = nw ? aw__pool_take(&s->pool, &err) : NULL;
        int qrc = 0;
        for (size_t k = 0; st && k < nw && !qrc; k++) {
            aw_json_doc *next = NULL;
            qrc = aw_store_events(st, w[k].id, w[k].known, 1, &next, &err);
            w[k].grew = qrc == 0 && aw_json_count(aw_json_doc_root(next)) > 0;
            if (qrc == AW_STORE_ENOTFOUND) /* removed meanwhile: its followers end */
                w[k].grew = true, qrc = 0;
            aw_json_doc_free(next);
        }
        aw__pool_give(&s->pool, st, qrc);
        pthread_mutex_lock(&s->sse_mu);
        size_t nr = due(s, w, nw, resume, MAX_FOLLOWERS);
        pthread_mutex_unlock(&s->sse_mu);
        for (size_t i = 0; i < nr; i++)
            MHD_resume_connection(resume[i]);
        pthread_mutex_lock(&s->sse_mu);
    }
    pthread_mutex_unlock(&s->sse_mu);
    return NULL;
}

int aw__sse_start(aw_server *s, aw_error *err)
{
    if (pthread_create(&s->poller, NULL, poll_store, s))
        return aw_rt_error(err, AW_ENOMEM, "cannot start a thread: %s", strerror(errno));
    s->poller_running = true;
    return 0;
}

/* Stop the poller, end every stream (resuming the suspended ones) and
 * wait, at most 3 s, for the resumed ones to hand their end over:
 * libmicrohttpd must not be stopped with a connection suspended. */
void aw__sse_stop(aw_server *s)
{
    pthread_mutex_lock(&s->sse_mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->sse_cv);
    pthread_mutex_unlock(&s->sse_mu);
    if (s->poller_running)
        pthread_join(s->poller, NULL);
    s->poller_running = false;
    struct MHD_Connection *resume[MAX_FOLLOWERS];
    size_t nr = 0;
    pthread_mutex_lock(&s->sse_mu);
    for (aw__sse_client *f = s->clients; f; f = f->next) {
        f->closing = true;
        if (f->suspended && nr < MAX_FOLLOWERS) {
            f->suspended = false;
            f->woken_to_end = true;
            resume[nr++] = f->conn;
        }
    }
    pthread_mutex_unlock(&s->sse_mu);
    for (size_t i = 0; i < nr; i++)
        MHD_resume_connection(resume[i]);
    for (int tries = 0; tries < 300; tries++) {
        bool waiting = false;
        pthread_mutex_lock(&s->sse_mu);
        /* the others are writing (or stuck on a full socket): never
         * suspended again, libmicrohttpd may close them */
        for (aw__sse_client *f = s->clients; f && !waiting; f = f->next)
            waiting = f->woken_to_end && !f->ended && !atomic_load(&f->gone);
        pthread_mutex_unlock(&s->sse_mu);
        if (!waiting)
            break;
        struct timespec ten_ms = {0, 10000000L};
        nanosleep(&ten_ms, NULL);
    }
}

/* After the daemon stopped: every response is freed, so every follower. */
void aw__sse_free(aw_server *s)
{
    pthread_mutex_lock(&s->sse_mu);
    while (s->clients) {
        aw__sse_client *f = s->clients;
        s->clients = f->next;
        client_free(s, f);
    }
    s->nclients = 0;
    pthread_mutex_unlock(&s->sse_mu);
}
