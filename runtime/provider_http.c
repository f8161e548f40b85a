/* The HTTP providers' engine: endpoint and key, one request's life on the
 * HTTP client, errors in words, the trace with keys redacted.
 *
 * A request's reply is read as it arrives: an event stream goes through
 * the provider's reader piece by piece (text out to the caller at once,
 * nothing of it kept), a whole JSON reply is gathered first, and an error
 * reply (status >= 300) is gathered up to ERROR_BODY_MAX bytes to say what
 * the server said. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agentwire/json.h"
#include "internal/provider_http.h"
#include "internal/provider_impl.h"
#include "internal/rt_util.h"

#define ERROR_BODY_MAX ((size_t)64 << 10)
/* A whole (non-streamed) reply is kept to be parsed; past this it is a
 * hostile server, not a model's answer. */
#define WHOLE_BODY_MAX ((size_t)256 << 20)

typedef struct hp_call hp_call;

/* One provider instance: its endpoint, key, HTTP client, the requests it
 * runs, and the conversation's wire form kept between requests. */
typedef struct aw_hp {
    const aw_hp_kind *kind;
    aw_provider *p;
    aw_http *http;
    char *url;
    char *key;          /* NULL: none (a server on this machine) */
    char *headers[4];   /* the key's header among them */
    size_t nheaders;
    size_t inflight;    /* requests running: the cache must not move under them */
    hp_call *calls;     /* those requests */
    aw_wire_cache cache;
} aw_hp;

struct hp_call {
    aw_hp *hp;
    struct hp_call *prev, *next; /* in hp->calls */
    aw_model_call *call;
    aw_http_req *req;
    aw_body body;
    bool stream;     /* asked for an event stream */
    bool sse;        /* and got one */
    int status;
    aw_buf error_body;
    aw_buf whole;
    void *reader;
    aw_buf trace_carry; /* the end of the last traced chunk, held back in case a key straddles chunks */
};

/* ---- endpoint and key ----------------------------------------------------------------- */

static char *join2(const aw_allocator *a, const char *x, size_t xn, const char *y)
{
    size_t yn = strlen(y);
    char *s = aw_malloc(a, xn + yn + 1);
    if (s) {
        memcpy(s, x, xn);
        memcpy(s + xn, y, yn + 1);
    }
    return s;
}

static void hp_release(aw_hp *hp);

static int hp_init(aw_hp *hp, aw_provider *p, const aw_hp_kind *kind, aw_error *err)
{
    memset(hp, 0, sizeof *hp);
    hp->kind = kind;
    hp->p = p;
    const aw_allocator *a = p->alloc;
    aw_wire_cache_init(&hp->cache, a);
    const char *base = p->cfg.base_url;
    if (!base || !*base)
        base = getenv(kind->base_env);
    if (!base || !*base)
        base = kind->base_default;
    size_t bn = strlen(base);
    while (bn > 0 && base[bn - 1] == '/')
        bn--;
    hp->url = join2(a, base, bn, kind->path);
    if (!hp->url)
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", kind->name);
    const char *var = p->cfg.api_key_env && *p->cfg.api_key_env ? p->cfg.api_key_env : kind->key_env;
    const char *key = getenv(var);
    if (key && *key) {
        /* a line break in the key would end its header and start another */
        for (const char *k = key; *k; k++)
            if ((unsigned char)*k < 0x20 || *k == 0x7f) {
                hp_release(hp);
                return aw_rt_error(err, AW_EINVAL, "%s: %s holds a control character", kind->name, var);
            }
        hp->key = aw_rt_strdup(a, key);
        hp->headers[hp->nheaders] = hp->key ? join2(a, kind->key_header, strlen(kind->key_header), key) : NULL;
        if (!hp->headers[hp->nheaders++]) {
            hp_release(hp);
            return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", kind->name);
        }
    } else if (!aw_http_url_is_loopback(hp->url)) {
        /* A server on this machine (llama.cpp, vLLM, Ollama) needs no key. */
        hp_release(hp);
        return aw_rt_error(err, AW_EINVAL, "%s: %s is not set", kind->name, var);
    }
    const char *fixed[] = {"Content-Type: application/json", kind->fixed_header};
    for (size_t i = 0; i < 2; i++) {
        if (!fixed[i])
            continue;
        if (!(hp->headers[hp->nheaders++] = aw_rt_strdup(a, fixed[i]))) {
            hp_release(hp);
            return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", kind->name);
        }
    }
    hp->http = aw_http_new(p->loop, a, err);
    if (!hp->http) {
        hp_release(hp);
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", kind->name);
    }
    return 0;
}

/* Free a string that held a key, wiping it first. */
static void free_secret(const aw_allocator *a, char *s)
{
    if (!s)
        return;
    volatile char *v = s;
    while (*v)
        *v++ = 0;
    aw_free(a, s);
}

static void free_call(hp_call *c);

static void hp_release(aw_hp *hp)
{
    const aw_allocator *a = hp->p->alloc;
    /* Calls still running end here, reporting nothing (the provider is
     * going; their handles with it). */
    while (hp->calls) {
        hp_call *c = hp->calls;
        aw_model_call *call = c->call;
        aw_http_cancel(c->req);
        free_call(c);
        aw_free(a, call);
    }
    aw_http_free(hp->http);
    hp->http = NULL;
    for (size_t i = 0; i < hp->nheaders; i++)
        free_secret(a, hp->headers[i]);
    hp->nheaders = 0;
    free_secret(a, hp->key);
    hp->key = NULL;
    aw_free(a, hp->url);
    hp->url = NULL;
    aw_wire_cache_release(&hp->cache);
}

/* ---- redaction and trace ------------------------------------------------------------------- */

static void trace(hp_call *c, const char *what, const char *p, size_t n)
{
    const aw_provider_config *cfg = &c->hp->p->cfg;
    aw_buf clean;
    aw_buf_init(&clean, c->hp->p->alloc);
    if (aw_hp_scrub(c->hp->key, p, n, &clean) == 0)
        cfg->trace(cfg->trace_ctx, what, clean.data ? clean.data : "", clean.len);
    aw_buf_free(&clean);
}

/* Reply bytes go to the trace as they come; the last key-length-minus-one
 * bytes wait for the next chunk, so a key split between two chunks is
 * still found. */
static void trace_stream(hp_call *c, const char *p, size_t n, bool last)
{
    const aw_provider_config *cfg = &c->hp->p->cfg;
    size_t kn = c->hp->key ? strlen(c->hp->key) : 0;
    if (kn == 0) {
        if (n)
            cfg->trace(cfg->trace_ctx, "response body", p, n);
        return;
    }
    aw_buf *carry = &c->trace_carry;
    if (aw_buf_append(carry, p, n))
        return;
    aw_buf clean;
    aw_buf_init(&clean, c->hp->p->alloc);
    if (aw_hp_scrub(c->hp->key, carry->data ? carry->data : "", carry->len, &clean) == 0) {
        size_t keep = last ? 0 : (clean.len < kn - 1 ? clean.len : kn - 1);
        if (clean.len > keep)
            cfg->trace(cfg->trace_ctx, "response body", clean.data, clean.len - keep);
        aw_buf_clear(carry);
        if (keep)
            aw_buf_append(carry, clean.data + clean.len - keep, keep);
    }
    aw_buf_free(&clean);
}

static void trace_request(hp_call *c)
{
    aw_hp *hp = c->hp;
    aw_buf t;
    aw_buf_init(&t, hp->p->alloc);
    int rc = aw_buf_printf(&t, "POST %s\r\n", hp->url);
    for (size_t i = 0; !rc && i < hp->nheaders; i++) {
        const char *h = hp->headers[i];
        if (hp->key && strstr(h, hp->key)) {
            const char *colon = strchr(h, ':');
            rc = aw_buf_append(&t, h, (size_t)(colon - h)) || aw_buf_append_str(&t, ": [redacted]\r\n");
        } else {
            rc = aw_buf_append_str(&t, h) || aw_buf_append_str(&t, "\r\n");
        }
    }
    if (!rc)
        trace(c, "request headers", t.data, t.len);
    aw_buf_clear(&t);
    if (!rc && aw_body_join(&c->body, &t) == 0)
        trace(c, "request body", t.data ? t.data : "", t.len);
    aw_buf_free(&t);
}

/* ---- reporting ------------------------------------------------------------------------------- */

static int sink_text(void *ctx, const char *p, size_t n) { return aw_model_call_text(ctx, p, n); }
static int sink_reasoning(void *ctx, const char *p, size_t n) { return aw_model_call_reasoning(ctx, p, n); }
static int sink_tool(void *ctx, const aw_chat_call *call) { return aw_model_call_tool(ctx, call); }

static void free_call(hp_call *c)
{
    const aw_allocator *a = c->hp->p->alloc;
    if (c->reader) {
        c->hp->kind->reader->release(c->reader);
        aw_free(a, c->reader);
    }
    aw_body_release(&c->body);
    aw_buf_free(&c->error_body);
    aw_buf_free(&c->whole);
    aw_buf_free(&c->trace_carry);
    c->hp->inflight--;
    if (c->prev)
        c->prev->next = c->next;
    else
        c->hp->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    aw_free(a, c);
}

/* End the call with an error: "openai: " + msg, the key scrubbed out. */
static void fail_call(hp_call *c, int code, bool retryable, int status, int64_t retry_after_ms, const char *msg)
{
    aw_model_call *call = c->call;
    aw_buf clean;
    aw_buf_init(&clean, c->hp->p->alloc);
    char text[AW_ERROR_MESSAGE_MAX + 512];
    if (aw_hp_scrub(c->hp->key, msg, strlen(msg), &clean) == 0)
        snprintf(text, sizeof text, "%s: %s", c->hp->kind->name, clean.data ? clean.data : "");
    else
        snprintf(text, sizeof text, "%s: out of memory", c->hp->kind->name);
    aw_buf_free(&clean);
    free_call(c);
    aw_model_result res;
    memset(&res, 0, sizeof res);
    res.code = code;
    res.error = text;
    res.retryable = retryable;
    res.retry_after_ms = retry_after_ms;
    res.http_status = status;
    res.usage.cost_usd = -1;
    aw_model_call_done(call, &res);
}

/* A reader's error (or a stop the caller asked for). */
static void fail_reader(hp_call *c, int rc, const aw_error *err)
{
    const aw_reply_info *info = c->hp->kind->reader->info(c->reader);
    if (rc == AW_ESTOP) {
        /* the caller asked to stop: done is reported to no one */
        fail_call(c, AW_ESTOP, false, c->status, -1, "stopped");
        return;
    }
    fail_call(c, rc, rc == AW_EIO && info->error_retryable, c->status, -1,
              err->message[0] ? err->message : aw_strerror(rc));
}

static void succeed(hp_call *c)
{
    aw_model_call *call = c->call;
    const aw_reply_info *info = c->hp->kind->reader->info(c->reader);
    char stop[sizeof info->stop_reason], model[sizeof info->model];
    memcpy(stop, info->stop_reason, sizeof stop);
    memcpy(model, info->model, sizeof model);
    aw_model_result res;
    memset(&res, 0, sizeof res);
    res.retry_after_ms = -1;
    res.http_status = c->status;
    res.usage = info->usage;
    res.has_usage = info->has_usage;
    res.stop_reason = (aw_text){stop, strlen(stop)};
    res.model = (aw_text){model, strlen(model)};
    free_call(c);
    aw_model_call_done(call, &res);
}

/* ---- the HTTP callbacks ------------------------------------------------------------------------ */

static bool has_token(aw_text v, const char *token)
{
    size_t k = strlen(token);
    for (size_t i = 0; i + k <= v.len; i++)
        if (strncasecmp(v.ptr + i, token, k) == 0)
            return true;
    return false;
}

static void on_head(void *ctx, int status, aw_text headers)
{
    hp_call *c = ctx;
    c->status = status;
    if (c->hp->p->cfg.trace) {
        char line[32];
        aw_buf t;
        aw_buf_init(&t, c->hp->p->alloc);
        snprintf(line, sizeof line, "HTTP %d\r\n", status);
        if (!aw_buf_append_str(&t, line) && !aw_buf_append(&t, headers.ptr, headers.len))
            trace(c, "response headers", t.data, t.len);
        aw_buf_free(&t);
    }
    aw_text type;
    /* A server that answers a stream request with one JSON document (an
     * error dressed as 200, or one that cannot stream) is read whole. */
    c->sse = c->stream && !(aw_http_header_get(headers, "content-type", &type) && has_token(type, "json"));
}

static void on_data(void *ctx, const char *p, size_t n)
{
    hp_call *c = ctx;
    if (c->hp->p->cfg.trace)
        trace_stream(c, p, n, false);
    if (c->status >= 300) {
        size_t room = ERROR_BODY_MAX - c->error_body.len;
        if (n > room)
            n = room;
        if (n && aw_buf_append(&c->error_body, p, n))
            goto nomem;
        return;
    }
    if (!c->sse) {
        if (c->whole.len + n > WHOLE_BODY_MAX) {
            aw_http_cancel(c->req);
            fail_call(c, AW_ELIMIT, false, c->status, -1, "the reply is longer than 256 MiB");
            return;
        }
        if (aw_buf_append(&c->whole, p, n))
            goto nomem;
        return;
    }
    aw_error err;
    aw_error_clear(&err);
    int rc = c->hp->kind->reader->feed(c->reader, p, n, &err);
    if (rc) {
        aw_http_cancel(c->req);
        fail_reader(c, rc, &err);
    }
    return;
nomem:
    aw_http_cancel(c->req);
    fail_call(c, AW_ENOMEM, false, c->status, -1, "out of memory");
}

static void on_done(void *ctx, const aw_http_result *res)
{
    hp_call *c = ctx;
    if (c->hp->p->cfg.trace)
        trace_stream(c, "", 0, true);
    if (res->code) {
        fail_call(c, res->code, res->retryable, res->status, res->retry_after_ms, res->error);
        return;
    }
    if (res->status >= 300) {
        char msg[1024];
        aw_hp_error_text(res->status, c->error_body.data, c->error_body.len, msg, sizeof msg);
        fail_call(c, AW_EIO, aw_hp_status_retryable(res->status), res->status, res->retry_after_ms, msg);
        return;
    }
    const aw_reply_reader_ops *ops = c->hp->kind->reader;
    aw_error err;
    aw_error_clear(&err);
    int rc = c->sse ? ops->finish(c->reader, &err)
                    : ops->whole(c->reader, c->whole.data ? c->whole.data : "", c->whole.len, &err);
    if (rc)
        fail_reader(c, rc, &err);
    else
        succeed(c);
}

/* ---- starting and cancelling --------------------------------------------------------------------- */

static int hp_send(aw_hp *hp, aw_model_call *call, aw_body *body, bool stream, aw_error *err)
{
    const aw_allocator *a = hp->p->alloc;
    const aw_provider_config *cfg = &hp->p->cfg;
    if (aw_body_failed(body)) {
        int code = aw_body_failed(body);
        aw_body_release(body);
        return aw_rt_error(err, code, "%s: %s", hp->kind->name,
                           code == AW_ENOMEM ? "out of memory" : "the request has too many parts");
    }
    hp_call *c = aw_malloc(a, sizeof *c);
    if (!c) {
        aw_body_release(body);
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", hp->kind->name);
    }
    memset(c, 0, sizeof *c);
    c->hp = hp;
    c->call = call;
    c->body = *body;
    aw_body_init(body, a);
    c->stream = stream;
    aw_buf_init(&c->error_body, a);
    aw_buf_init(&c->whole, a);
    aw_buf_init(&c->trace_carry, a);
    hp->inflight++;
    c->next = hp->calls;
    if (hp->calls)
        hp->calls->prev = c;
    hp->calls = c;
    c->reader = aw_malloc(a, hp->kind->reader->size);
    if (!c->reader) {
        free_call(c);
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", hp->kind->name);
    }
    aw_reply_sink sink = {sink_text, sink_reasoning, sink_tool, call};
    hp->kind->reader->init(c->reader, a, &sink);

    size_t nseg;
    const aw_text *segs = aw_body_segments(&c->body, &nseg);
    aw_http_options o;
    memset(&o, 0, sizeof o);
    o.method = "POST";
    o.url = hp->url;
    o.headers = (const char *const *)hp->headers;
    o.header_count = hp->nheaders;
    o.body = segs;
    o.body_count = nseg;
    o.connect_timeout_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 10000;
    o.first_byte_timeout_ms = cfg->first_byte_timeout_ms > 0 ? cfg->first_byte_timeout_ms : 60000;
    o.idle_timeout_ms = cfg->idle_timeout_ms > 0 ? cfg->idle_timeout_ms : 60000;
    o.request_timeout_ms = cfg->request_timeout_ms > 0 ? cfg->request_timeout_ms : 600000;
    o.fns.on_head = on_head;
    o.fns.on_data = on_data;
    o.fns.on_done = on_done;
    o.ctx = c;
    if (cfg->trace)
        trace_request(c);
    aw_error herr;
    int rc = aw_http_start(hp->http, &o, &c->req, &herr);
    if (rc) {
        free_call(c);
        return aw_rt_error(err, rc, "%s: %s", hp->kind->name, herr.message);
    }
    call->impl = c;
    return 0;
}

void aw_hp_provider_cancel(aw_model_call *call)
{
    hp_call *c = call->impl;
    if (!c)
        return;
    aw_http_cancel(c->req);
    free_call(c);
    call->impl = NULL;
}

/* ---- the provider ops --------------------------------------------------------------------------- */

int aw_hp_provider_init(aw_provider *p, const aw_hp_kind *kind, aw_error *err)
{
    aw_hp *hp = aw_malloc(p->alloc, sizeof *hp);
    if (!hp)
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", kind->name);
    int rc = hp_init(hp, p, kind, err);
    if (rc) {
        aw_free(p->alloc, hp);
        return rc;
    }
    p->impl = hp;
    return 0;
}

void aw_hp_provider_destroy(aw_provider *p)
{
    aw_hp *hp = p->impl;
    if (!hp)
        return;
    hp_release(hp);
    aw_free(p->alloc, hp);
    p->impl = NULL;
}

int aw_hp_provider_send(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err)
{
    aw_hp *hp = p->impl;
    bool stream = !p->cfg.no_stream;
    aw_body body;
    aw_body_init(&body, p->alloc);
    /* A request in flight sends from the cache, which must not move: a
     * second one at the same time writes its own copy. */
    aw_wire_cache *cache = hp->inflight ? NULL : &hp->cache;
    if (aw_wire_request(hp->kind->write_request, cache, p->model, req, stream, &body, p->alloc)) {
        aw_body_release(&body);
        return aw_rt_error(err, AW_ENOMEM, "%s: out of memory", hp->kind->name);
    }
    return hp_send(hp, call, &body, stream, err);
}
