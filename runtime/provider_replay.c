/* replay:FILE — a recorded session played back, one model reply per JSON
 * line, in order:
 *
 *   {"text": "...", "tool_calls": [{"id", "name", "arguments"}], "usage": {...},
 *    "stop_reason": "stop", "chunks": 16 | ["pie", "ces"], "delay_ms": 5, "turn": 3}
 *
 * `turn` (optional) marks the turn a line answers: a request of a later
 * turn passes over it, so a recording resumes where a session was cut.
 * `chunks` streams the text in pieces of that many bytes (or the pieces
 * given, which then are the text), `delay_ms` waits that long before each
 * piece. A line {"error": "...", "http_status": 500, "retryable": true,
 * "retry_after_ms": 100} plays a failed request (after streaming its text,
 * if it has one: a reply cut off), and "expect": ["...", ...] names strings the
 * request must hold (the notice's nonce, a tool's result) and "absent":
 * [...] strings it must not hold (a forged tag, a tool not offered), so a
 * recorded session also checks what the run sends. It is what --record writes, what
 * the demo and the tests run on, and how a bug report is reproduced
 * offline. */
#include <stdio.h>
#include <string.h>

#include "agentwire/buf.h"
#include "agentwire/json.h"
#include "internal/provider_impl.h"
#include "internal/rt_util.h"

typedef struct replay {
    aw_json_doc **docs; /* one per reply line */
    size_t *lines;      /* the line each came from */
    size_t count;
    size_t next;
    const char *path;
} replay;

typedef struct replay_call {
    aw_model_call *call;
    replay *r;
    const aw_json_value *reply;
    size_t line;
    aw_text text;
    const aw_json_value *pieces; /* chunks as an array */
    size_t chunk_size;           /* chunks as a number; 0: whole */
    size_t pos, piece;
    int64_t delay_ms;
    aw_timer *timer;
} replay_call;

static void replay_free_docs(const aw_allocator *a, replay *r)
{
    for (size_t i = 0; i < r->count; i++)
        aw_json_doc_free(r->docs[i]);
    aw_free(a, r->docs);
    aw_free(a, r->lines);
}

static int replay_load(aw_provider *p, replay *r, aw_error *err)
{
    aw_buf text;
    aw_buf_init(&text, p->alloc);
    int rc = aw_rt_read_file(r->path, &text, err);
    if (rc) {
        aw_buf_free(&text);
        return aw_rt_error(err, rc, "replay: %s", err ? err->message : "");
    }
    size_t line = 0, start = 0, cap = 0;
    while (start < text.len) {
        line++;
        const char *nl = memchr(text.data + start, '\n', text.len - start);
        size_t end = nl ? (size_t)(nl - text.data) : text.len;
        size_t b = start;
        while (b < end && (text.data[b] == ' ' || text.data[b] == '\t' || text.data[b] == '\r'))
            b++;
        if (b < end) {
            if (r->count == cap) {
                cap = cap ? cap * 2 : 16;
                aw_json_doc **d = aw_realloc(p->alloc, r->docs, cap * sizeof *d);
                if (d)
                    r->docs = d;
                size_t *l = aw_realloc(p->alloc, r->lines, cap * sizeof *l);
                if (l)
                    r->lines = l;
                if (!d || !l) {
                    rc = aw_rt_error(err, AW_ENOMEM, "replay: out of memory");
                    break;
                }
            }
            aw_json_read_options ro = {.alloc = p->alloc};
            aw_error jerr;
            aw_error_clear(&jerr);
            aw_json_doc *doc = NULL;
            rc = aw_json_parse(text.data + start, end - start, &ro, &doc, &jerr);
            if (rc == 0 && !aw_json_is_object(aw_json_doc_root(doc))) {
                aw_json_doc_free(doc);
                rc = aw_rt_error(err, AW_ETYPE, "replay: %s:%zu:1: a reply must be a JSON object", r->path, line);
                break;
            }
            if (rc) {
                aw_rt_error(err, rc, "replay: %s:%zu:%zu: %s", r->path, line, jerr.column, jerr.message);
                break;
            }
            r->docs[r->count] = doc;
            r->lines[r->count] = line;
            r->count++;
        }
        start = end + 1;
    }
    aw_buf_free(&text);
    if (rc) {
        replay_free_docs(p->alloc, r);
        r->docs = NULL;
        r->lines = NULL;
        r->count = 0;
    }
    return rc;
}

static int replay_init(aw_provider *p, aw_error *err)
{
    if (!p->model[0])
        return aw_rt_error(err, AW_EINVAL, "replay: no file given (--model replay:FILE)");
    replay *r = aw_malloc(p->alloc, sizeof *r);
    if (!r)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(r, 0, sizeof *r);
    r->path = p->model;
    int rc = replay_load(p, r, err);
    if (rc) {
        aw_free(p->alloc, r);
        return rc;
    }
    p->impl = r;
    return 0;
}

static void replay_destroy(aw_provider *p)
{
    replay *r = p->impl;
    if (!r)
        return;
    replay_free_docs(p->alloc, r);
    aw_free(p->alloc, r);
}

static aw_text str_field(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    aw_text t = {"", 0};
    if (aw_json_is_string(v)) {
        t.ptr = v->u.str.ptr;
        t.len = v->u.str.len;
    }
    return t;
}

/* A number field within [lo, hi] (a recording may hold anything: 1e300
 * must not overflow a conversion or a sum). */
static int64_t int_field(const aw_json_value *o, const char *key, int64_t dflt, int64_t lo, int64_t hi)
{
    return aw_rt_json_int(aw_json_get(o, key), dflt, lo, hi);
}

#define MAX_TOKENS ((int64_t)1 << 40)
#define MAX_DELAY_MS ((int64_t)24 * 3600 * 1000)

/* The request as one text, for "expect". */
static int request_text(const aw_model_request *req, aw_buf *out)
{
    int rc = aw_buf_append(out, req->system.ptr, req->system.len);
    for (size_t i = 0; !rc && req->history && i < aw_chat_count(req->history); i++) {
        const aw_chat_msg *m = aw_chat_at(req->history, i);
        rc = aw_buf_putc(out, '\n') || aw_buf_append(out, m->content.ptr, m->content.len);
        for (size_t k = 0; !rc && k < m->call_count; k++)
            rc = aw_buf_putc(out, '\n') || aw_buf_append(out, m->calls[k].arguments.ptr, m->calls[k].arguments.len);
    }
    if (!rc)
        rc = aw_buf_append(out, req->thread_stable.ptr, req->thread_stable.len) ||
             aw_buf_append(out, req->thread_tail.ptr, req->thread_tail.len);
    for (size_t i = 0; !rc && i < req->ephemeral_count; i++)
        rc = aw_buf_putc(out, '\n') || aw_buf_append(out, req->ephemeral[i].content.ptr, req->ephemeral[i].content.len);
    for (size_t i = 0; !rc && i < req->tool_count; i++)
        rc = aw_buf_putc(out, '\n') || aw_buf_append(out, req->tools[i].name.ptr, req->tools[i].name.len);
    return rc ? AW_ENOMEM : 0;
}

/* NULL when the request holds each string of reply[key] (want) or none of
 * them (!want), else the first that breaks the rule. */
static const aw_json_value *broken_expectation(const aw_json_value *reply, const char *key, bool want,
                                               const aw_buf *req)
{
    const aw_json_value *list = aw_json_get(reply, key);
    for (size_t i = 0; i < aw_json_count(list); i++) {
        const aw_json_value *s = aw_json_at(list, i);
        if (!aw_json_is_string(s))
            return s;
        if (s->u.str.len == 0)
            continue;
        bool held = s->u.str.len <= req->len && memmem(req->data, req->len, s->u.str.ptr, s->u.str.len);
        if (held != want)
            return s;
    }
    return NULL;
}

/* 0, or the error for a request that breaks the line's expectations. */
static int check_expectations(const replay *r, size_t line, const aw_json_value *reply,
                              const aw_model_request *req, const aw_allocator *alloc, aw_error *err)
{
    const aw_json_value *expect = aw_json_get(reply, "expect"), *absent = aw_json_get(reply, "absent");
    if (!expect && !absent)
        return 0;
    if ((expect && !aw_json_is_array(expect)) || (absent && !aw_json_is_array(absent)))
        return aw_rt_error(err, AW_ETYPE, "replay: %s:%zu: \"expect\" and \"absent\" must be arrays of strings",
                           r->path, line);
    aw_buf text;
    aw_buf_init(&text, alloc);
    if (request_text(req, &text)) {
        aw_buf_free(&text);
        return aw_rt_error(err, AW_ENOMEM, "replay: out of memory");
    }
    const aw_json_value *miss = broken_expectation(reply, "expect", true, &text);
    const aw_json_value *held = miss ? NULL : broken_expectation(reply, "absent", false, &text);
    aw_buf_free(&text);
    const aw_json_value *bad = miss ? miss : held;
    if (!bad)
        return 0;
    if (!aw_json_is_string(bad))
        return aw_rt_error(err, AW_ETYPE, "replay: %s:%zu: \"expect\" and \"absent\" must be arrays of strings",
                           r->path, line);
    return aw_rt_error(err, AW_EVALID, "replay: %s:%zu: the request %s \"%.*s\"", r->path, line,
                       miss ? "does not hold" : "holds", (int)(bad->u.str.len > 120 ? 120 : bad->u.str.len),
                       bad->u.str.ptr);
}

static void replay_free_call(replay_call *rc)
{
    aw_timer_free(rc->timer);
    aw_free(rc->call->provider->alloc, rc);
}

/* The reply's native tool calls, then on_done. */
static void finish(replay_call *rc)
{
    aw_model_call *call = rc->call;
    const aw_json_value *reply = rc->reply;
    const aw_json_value *calls = aw_json_get(reply, "tool_calls");
    aw_buf args;
    aw_buf_init(&args, call->provider->alloc);
    for (size_t i = 0; i < aw_json_count(calls); i++) {
        const aw_json_value *c = aw_json_at(calls, i);
        aw_chat_call cc = {str_field(c, "id"), str_field(c, "name"), str_field(c, "arguments")};
        const aw_json_value *a = aw_json_get(c, "arguments");
        if (a && !aw_json_is_string(a)) {
            aw_buf_clear(&args);
            if (aw_json_write(a, NULL, &args, NULL)) {
                aw_buf_free(&args);
                replay_free_call(rc);
                aw_model_call_fail(call, AW_ENOMEM, false, 0, "replay: out of memory");
                return;
            }
            cc.arguments.ptr = args.data;
            cc.arguments.len = args.len;
        }
        if (aw_model_call_tool(call, &cc))
            break;
    }
    aw_buf_free(&args);
    aw_model_result res;
    memset(&res, 0, sizeof res);
    res.retry_after_ms = -1;
    res.stop_reason = str_field(reply, "stop_reason");
    if (!res.stop_reason.len)
        res.stop_reason = aw_json_count(calls) ? (aw_text){"tool_calls", 10} : (aw_text){"stop", 4};
    const aw_json_value *u = aw_json_get(reply, "usage");
    res.usage.cost_usd = -1;
    if (aw_json_is_object(u)) {
        res.has_usage = true;
        res.usage.input_tokens = int_field(u, "input_tokens", 0, 0, MAX_TOKENS);
        res.usage.output_tokens = int_field(u, "output_tokens", 0, 0, MAX_TOKENS);
        res.usage.cache_read_tokens = int_field(u, "cache_read_tokens", 0, 0, MAX_TOKENS);
        res.usage.cache_write_tokens = int_field(u, "cache_write_tokens", 0, 0, MAX_TOKENS);
        res.usage.reasoning_tokens = int_field(u, "reasoning_tokens", 0, 0, MAX_TOKENS);
        const aw_json_value *cost = aw_json_get(u, "cost_usd");
        if (aw_json_is_number(cost))
            res.usage.cost_usd = cost->u.num.d;
    }
    res.model = str_field(reply, "model");
    replay_free_call(rc);
    aw_model_call_done(call, &res);
}

/* A reply line that plays a failed request. */
static void fail(replay_call *rc, const aw_json_value *error)
{
    aw_model_call *call = rc->call;
    char msg[512];
    aw_text e = aw_json_is_string(error) ? (aw_text){error->u.str.ptr, error->u.str.len} : (aw_text){"failed", 6};
    snprintf(msg, sizeof msg, "replay: %s:%zu: %.*s", rc->r->path, rc->line, (int)(e.len > 400 ? 400 : e.len), e.ptr);
    aw_model_result res;
    memset(&res, 0, sizeof res);
    res.code = AW_EINVAL;
    res.error = msg;
    res.http_status = (int)int_field(rc->reply, "http_status", 0, 0, 999);
    const aw_json_value *retryable = aw_json_get(rc->reply, "retryable");
    res.retryable = aw_json_is_bool(retryable) && retryable->u.b;
    res.retry_after_ms = int_field(rc->reply, "retry_after_ms", -1, -1, MAX_DELAY_MS);
    res.usage.cost_usd = -1;
    replay_free_call(rc);
    aw_model_call_done(call, &res);
}

/* One piece of text per timer tick; a line with an error streams its text
 * first (a connection that breaks mid-reply), then fails. */
static void step(void *ctx)
{
    replay_call *rc = ctx;
    aw_text piece = {"", 0};
    bool more;
    if (rc->pieces) {
        const aw_json_value *v = aw_json_at(rc->pieces, rc->piece++);
        if (aw_json_is_string(v))
            piece = (aw_text){v->u.str.ptr, v->u.str.len};
        more = rc->piece < aw_json_count(rc->pieces);
    } else {
        size_t n = rc->text.len - rc->pos;
        if (rc->chunk_size && n > rc->chunk_size)
            n = rc->chunk_size;
        piece = (aw_text){rc->text.ptr + rc->pos, n};
        rc->pos += n;
        more = rc->pos < rc->text.len;
    }
    if (aw_model_call_text(rc->call, piece.ptr, piece.len))
        more = false;
    const aw_json_value *error = aw_json_get(rc->reply, "error");
    if (more)
        aw_timer_reset(rc->timer, rc->delay_ms);
    else if (error)
        fail(rc, error);
    else
        finish(rc);
}

static int replay_send(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err)
{
    replay *r = p->impl;
    /* A line with "turn": N answers no request before turn N: a resumed
     * session's run starts at a later turn, and the lines of the turns
     * already stored are passed over. */
    while (r->next < r->count) {
        const aw_json_value *t = aw_json_get(aw_json_doc_root(r->docs[r->next]), "turn");
        if (!aw_json_is_number(t) || t->u.num.d >= (double)req->turn)
            break;
        r->next++;
    }
    if (r->next >= r->count)
        return aw_rt_error(err, AW_EINVAL, "replay: %s has no reply left for request %zu (it holds %zu)",
                           r->path, r->next + 1, r->count);
    size_t index = r->next++;
    const aw_json_value *reply = aw_json_doc_root(r->docs[index]);
    size_t line = r->lines[index];

    int bad = check_expectations(r, line, reply, req, p->alloc, err);
    if (bad)
        return bad;
    if (p->cfg.trace) {
        /* --trace: what a request held and the reply given, as an HTTP
         * provider traces its bodies */
        aw_buf text;
        aw_buf_init(&text, p->alloc);
        if (!request_text(req, &text))
            p->cfg.trace(p->cfg.trace_ctx, "replay request", text.data ? text.data : "", text.len);
        aw_buf_free(&text);
        aw_buf rb;
        aw_buf_init(&rb, p->alloc);
        if (!aw_json_write(reply, NULL, &rb, NULL))
            p->cfg.trace(p->cfg.trace_ctx, "replay reply", rb.data ? rb.data : "", rb.len);
        aw_buf_free(&rb);
    }

    replay_call *rc = aw_malloc(p->alloc, sizeof *rc);
    if (!rc)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(rc, 0, sizeof *rc);
    rc->call = call;
    rc->r = r;
    rc->reply = reply;
    rc->line = line;
    rc->text = str_field(reply, "text");
    const aw_json_value *chunks = aw_json_get(reply, "chunks");
    if (aw_json_is_array(chunks))
        rc->pieces = chunks;
    else if (aw_json_is_number(chunks) && chunks->u.num.d >= 1)
        rc->chunk_size = (size_t)int_field(reply, "chunks", 0, 1, (int64_t)1 << 40);
    rc->delay_ms = int_field(reply, "delay_ms", 0, 0, MAX_DELAY_MS);
    call->impl = rc;

    /* Even a whole reply, or a failure, is reported from the loop, as a
     * real request's would be. */
    rc->timer = aw_loop_timer(p->loop, rc->delay_ms, step, rc);
    if (!rc->timer) {
        aw_free(p->alloc, rc);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    return 0;
}

static void replay_cancel(aw_model_call *call) { replay_free_call(call->impl); }

const aw_provider_ops aw_provider_replay_ops = {
    .kind = "replay",
    .needs_model = true,
    .native_tools = true,
    .init = replay_init,
    .send = replay_send,
    .cancel = replay_cancel,
    .destroy = replay_destroy,
};
