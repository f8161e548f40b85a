/* The Chat Completions reply: the event stream of chat.completion.chunk
 * objects (then "data: [DONE]"), or one chat.completion document.
 *
 * Text and reasoning deltas go out as they come. Tool calls come in
 * fragments joined by their "index" (id and name in the first, the
 * arguments spread over the rest) and go out whole once the choice
 * finishes. Usage comes in a last chunk with no choices
 * (stream_options.include_usage). Everything else is checked as it is
 * read: a chunk that is not JSON, or has a field of the wrong type, is an
 * error naming the byte where its event starts. */
#include <string.h>

#include "agentwire/json.h"
#include "internal/openai.h"
#include "internal/rt_util.h"

/* Fragments naming an index past this are a broken stream. */
#define MAX_CALLS 1024

static bool str_or_null(const aw_json_value *v) { return !v || aw_json_is_string(v) || aw_json_is_null(v); }

static int64_t count_of(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_rt_json_int(v, 0, 0, AW_RT_TOKENS_MAX);
}

static void read_usage(aw_openai_reader *r, const aw_json_value *u)
{
    if (!aw_json_is_object(u))
        return;
    aw_model_usage *m = &r->base.info.usage;
    r->base.info.has_usage = true;
    m->input_tokens = count_of(u, "prompt_tokens");
    m->output_tokens = count_of(u, "completion_tokens");
    m->cache_read_tokens = count_of(aw_json_get(u, "prompt_tokens_details"), "cached_tokens");
    m->reasoning_tokens = count_of(aw_json_get(u, "completion_tokens_details"), "reasoning_tokens");
    const aw_json_value *cost = aw_json_get(u, "cost"); /* OpenRouter */
    if (aw_json_is_number(cost))
        m->cost_usd = cost->u.num.d;
}

static void read_model(aw_openai_reader *r, const aw_json_value *root)
{
    const aw_json_value *m = aw_json_get(root, "model");
    if (aw_json_is_string(m) && !r->base.info.model[0])
        aw_reply_copy(r->base.info.model, sizeof r->base.info.model, m->u.str.ptr, m->u.str.len);
}

/* An error document in place of a chunk: {"error": {"message", "type"}}. */
static int server_error(aw_openai_reader *r, const aw_json_value *e)
{
    const aw_json_value *msg = aw_json_is_string(e) ? e : aw_json_get(e, "message");
    const aw_json_value *type = aw_json_get(e, "type");
    const char *t = aw_json_is_string(type) ? type->u.str.ptr : "";
    /* a request the server refuses stays refused */
    r->base.info.error_retryable = strcmp(t, "invalid_request_error") != 0;
    return aw_reply_fail(&r->base, AW_EIO, "the server reported an error%s%s: %.*s", *t ? " " : "", t,
                         aw_json_is_string(msg) ? (int)(msg->u.str.len > 300 ? 300 : msg->u.str.len) : 7,
                         aw_json_is_string(msg) ? msg->u.str.ptr : "unknown");
}

static int text_out(aw_openai_reader *r, const aw_json_value *v, bool reasoning)
{
    return aw_json_is_string(v) ? aw_reply_emit(&r->base, reasoning, v->u.str.ptr, v->u.str.len) : 0;
}

static aw_openai_call_parts *call_slot(aw_openai_reader *r, size_t index)
{
    if (index >= r->ncalls) {
        const aw_allocator *a = r->base.alloc;
        aw_openai_call_parts *c = aw_realloc(a, r->calls, (index + 1) * sizeof *c);
        if (!c)
            return NULL;
        r->calls = c;
        for (size_t i = r->ncalls; i <= index; i++) {
            memset(&c[i], 0, sizeof c[i]);
            aw_buf_init(&c[i].id, a);
            aw_buf_init(&c[i].name, a);
            aw_buf_init(&c[i].arguments, a);
        }
        r->ncalls = index + 1;
    }
    return &r->calls[index];
}

/* One tool_calls fragment. id and name are kept from the first fragment
 * that has them (some servers repeat them in every fragment). */
static int call_fragment(aw_openai_reader *r, const aw_json_value *f, size_t position, uint64_t at)
{
    if (!aw_json_is_object(f))
        return aw_reply_bad(&r->base, at, "a tool_calls fragment is not an object");
    const aw_json_value *idx = aw_json_get(f, "index");
    double index = aw_json_is_number(idx) ? idx->u.num.d : (double)position;
    if (index < 0 || index >= MAX_CALLS || index != (double)(size_t)index)
        return aw_reply_bad(&r->base, at, "a tool call index out of range (0..%d)", MAX_CALLS - 1);
    const aw_json_value *id = aw_json_get(f, "id"), *fn = aw_json_get(f, "function");
    const aw_json_value *name = aw_json_get(fn, "name"), *args = aw_json_get(fn, "arguments");
    if (!str_or_null(id) || (fn && !aw_json_is_object(fn) && !aw_json_is_null(fn)) || !str_or_null(name) ||
        !str_or_null(args))
        return aw_reply_bad(&r->base, at, "a tool_calls fragment has a field of the wrong type");
    aw_openai_call_parts *c = call_slot(r, (size_t)index);
    if (!c ||
        (aw_json_is_string(id) && c->id.len == 0 && aw_buf_append(&c->id, id->u.str.ptr, id->u.str.len)) ||
        (aw_json_is_string(name) && c->name.len == 0 && aw_buf_append(&c->name, name->u.str.ptr, name->u.str.len)) ||
        (aw_json_is_string(args) && aw_buf_append(&c->arguments, args->u.str.ptr, args->u.str.len)))
        return aw_reply_fail(&r->base, AW_ENOMEM, "out of memory");
    c->seen = true;
    return 0;
}

/* The calls, whole, in index order; once. */
static int send_calls(aw_openai_reader *r, uint64_t at)
{
    if (r->calls_sent)
        return 0;
    r->calls_sent = true;
    for (size_t i = 0; i < r->ncalls; i++) {
        aw_openai_call_parts *c = &r->calls[i];
        if (!c->seen)
            continue;
        if (c->name.len == 0)
            return aw_reply_bad(&r->base, at, "tool call %s came without a function name",
                                c->id.len ? c->id.data : "(no id)");
        aw_chat_call call = {{c->id.data ? c->id.data : "", c->id.len},
                             {c->name.data, c->name.len},
                             c->arguments.len ? (aw_text){c->arguments.data, c->arguments.len} : (aw_text){"{}", 2}};
        if (aw_reply_emit_call(&r->base, &call))
            return r->base.status;
    }
    return 0;
}

static int finish_reason(aw_openai_reader *r, const aw_json_value *f, uint64_t at)
{
    if (!aw_json_is_string(f))
        return 0;
    aw_reply_copy(r->base.info.stop_reason, sizeof r->base.info.stop_reason, f->u.str.ptr, f->u.str.len);
    r->finished = true;
    return send_calls(r, at);
}

/* A message or a delta: text, reasoning, tool call fragments. */
static int read_delta(aw_openai_reader *r, const aw_json_value *d, uint64_t at)
{
    const aw_json_value *content = aw_json_get(d, "content"), *rc1 = aw_json_get(d, "reasoning_content"),
                        *rc2 = aw_json_get(d, "reasoning"), *calls = aw_json_get(d, "tool_calls");
    if (!str_or_null(content) || !str_or_null(rc1) || !str_or_null(rc2))
        return aw_reply_bad(&r->base, at, "a delta's text is not a string");
    if (calls && !aw_json_is_array(calls) && !aw_json_is_null(calls))
        return aw_reply_bad(&r->base, at, "\"tool_calls\" is not an array");
    if (text_out(r, rc1, true) || text_out(r, rc2, true) || text_out(r, content, false))
        return r->base.status;
    for (size_t i = 0; i < aw_json_count(calls); i++)
        if (call_fragment(r, aw_json_at(calls, i), i, at))
            return r->base.status;
    return 0;
}

/* One choice of a chunk; only choice 0 is the reply (n is never asked). */
static int read_choice(aw_openai_reader *r, const aw_json_value *ch, uint64_t at)
{
    if (!aw_json_is_object(ch))
        return aw_reply_bad(&r->base, at, "a choice is not an object");
    const aw_json_value *index = aw_json_get(ch, "index");
    if (aw_json_is_number(index) && index->u.num.d != 0)
        return 0;
    const aw_json_value *d = aw_json_get(ch, "delta");
    if (d && !aw_json_is_object(d) && !aw_json_is_null(d))
        return aw_reply_bad(&r->base, at, "\"delta\" is not an object");
    if (read_delta(r, d, at))
        return r->base.status;
    return finish_reason(r, aw_json_get(ch, "finish_reason"), at);
}

static int on_event(void *ctx, const aw_sse_event *ev)
{
    aw_openai_reader *r = ctx;
    if (ev->data.len == 6 && memcmp(ev->data.ptr, "[DONE]", 6) == 0) {
        r->done = true;
        return send_calls(r, ev->offset);
    }
    aw_json_doc *doc;
    if (aw_reply_parse_event(&r->base, ev, &doc))
        return r->base.status;
    const aw_json_value *root = aw_json_doc_root(doc);
    const aw_json_value *choices = aw_json_get(root, "choices"), *error = aw_json_get(root, "error");
    int rc = 0;
    if (error && !aw_json_is_null(error))
        rc = server_error(r, error);
    else if (choices && !aw_json_is_array(choices) && !aw_json_is_null(choices))
        rc = aw_reply_bad(&r->base, ev->offset, "\"choices\" is not an array");
    else {
        read_model(r, root);
        read_usage(r, aw_json_get(root, "usage"));
        for (size_t i = 0; !rc && i < aw_json_count(choices); i++)
            rc = read_choice(r, aw_json_at(choices, i), ev->offset);
    }
    aw_json_doc_free(doc);
    return rc;
}

/* llama.cpp's server sends a failure as "error: {...}" in the stream. */
static int on_other(void *ctx, aw_text field, aw_text value, uint64_t at)
{
    aw_openai_reader *r = ctx;
    if (field.len == 5 && memcmp(field.ptr, "error", 5) == 0) {
        aw_json_doc *doc = NULL;
        aw_json_read_options ro = {.alloc = r->base.alloc};
        if (aw_json_parse(value.ptr, value.len, &ro, &doc, NULL) == 0) {
            const aw_json_value *root = aw_json_doc_root(doc);
            const aw_json_value *e = aw_json_get(root, "error");
            int rc = server_error(r, e ? e : root);
            aw_json_doc_free(doc);
            return rc;
        }
        r->base.info.error_retryable = true;
        return aw_reply_fail(&r->base, AW_EIO, "the server reported an error: %.*s",
                             (int)(value.len > 300 ? 300 : value.len), value.ptr);
    }
    char name[40];
    aw_reply_copy(name, sizeof name, field.ptr, field.len);
    return aw_reply_bad(&r->base, at, "unknown field \"%s\"", name);
}

static void reader_init(void *self, const aw_allocator *alloc, const aw_reply_sink *sink)
{
    aw_openai_reader *r = self;
    memset(r, 0, sizeof *r);
    aw_sse_handlers h = {on_event, on_other};
    aw_reply_base_init(&r->base, alloc, sink, &h, r);
}

static void reader_release(void *self)
{
    aw_openai_reader *r = self;
    aw_reply_base_release(&r->base);
    for (size_t i = 0; i < r->ncalls; i++) {
        aw_buf_free(&r->calls[i].id);
        aw_buf_free(&r->calls[i].name);
        aw_buf_free(&r->calls[i].arguments);
    }
    aw_free(r->base.alloc, r->calls);
}

static int reader_feed(void *self, const char *p, size_t n, aw_error *err)
{
    return aw_reply_feed(&((aw_openai_reader *)self)->base, p, n, err);
}

static int reader_finish(void *self, aw_error *err)
{
    aw_openai_reader *r = self;
    if (aw_reply_end(&r->base, err))
        return r->base.status;
    if (!r->finished && !r->done) {
        r->base.info.error_retryable = true;
        aw_reply_fail(&r->base, AW_EIO, "the stream ended before the reply did (no finish_reason, no [DONE])");
    } else {
        send_calls(r, aw_sse_position(&r->base.sse));
    }
    return aw_reply_status(&r->base, err);
}

/* A reply that came whole: one chat.completion document, its message
 * read as one delta holding everything. */
static int reader_whole(void *self, const char *p, size_t n, aw_error *err)
{
    aw_openai_reader *r = self;
    aw_json_doc *doc;
    if (aw_reply_parse_whole(&r->base, p, n, &doc))
        return aw_reply_status(&r->base, err);
    const aw_json_value *root = aw_json_doc_root(doc);
    const aw_json_value *e = aw_json_get(root, "error");
    const aw_json_value *choice = aw_json_at(aw_json_get(root, "choices"), 0);
    const aw_json_value *msg = aw_json_get(choice, "message");
    if (e && !aw_json_is_null(e))
        server_error(r, e);
    else if (!aw_json_is_object(msg))
        aw_reply_fail(&r->base, AW_ESYNTAX, "bad reply: no choices[0].message");
    else {
        read_model(r, root);
        read_usage(r, aw_json_get(root, "usage"));
        const aw_json_value *f = aw_json_get(choice, "finish_reason");
        if (read_delta(r, msg, AW_REPLY_WHOLE) == 0)
            aw_json_is_string(f) ? finish_reason(r, f, AW_REPLY_WHOLE) : send_calls(r, AW_REPLY_WHOLE);
    }
    aw_json_doc_free(doc);
    return aw_reply_status(&r->base, err);
}

static const aw_reply_info *reader_info(const void *self) { return &((const aw_openai_reader *)self)->base.info; }

const aw_reply_reader_ops aw_openai_reader_ops = {
    sizeof(aw_openai_reader), reader_init, reader_feed, reader_finish, reader_whole, reader_info, reader_release,
};
