/* The Messages API reply: the event stream (message_start, then per
 * content block content_block_start / _delta / _stop, message_delta,
 * message_stop; ping and error at any time), or one message document.
 *
 * text_delta and thinking_delta go out as they come; a tool_use block's
 * input_json_delta pieces are joined and the call goes out whole at its
 * content_block_stop. Event and delta types this reader does not know are
 * passed over, as the API asks of clients; data that is not JSON, or known
 * fields of the wrong type, are errors naming the byte of the event. */
#include <stddef.h>
#include <string.h>

#include "agentwire/json.h"
#include "internal/anthropic.h"
#include "internal/rt_util.h"

#define MAX_BLOCKS 4096

static bool is(const aw_json_value *v, const char *s)
{
    return aw_json_is_string(v) && v->u.str.len == strlen(s) && memcmp(v->u.str.ptr, s, v->u.str.len) == 0;
}

/* Usage as message_start and message_delta give it; fields absent from
 * one event keep what an earlier one said. */
static void read_usage(aw_anthropic_reader *r, const aw_json_value *u)
{
    if (!aw_json_is_object(u))
        return;
    static const struct {
        const char *key;
        size_t offset;
    } fields[] = {
        {"input_tokens", offsetof(aw_model_usage, input_tokens)},
        {"output_tokens", offsetof(aw_model_usage, output_tokens)},
        {"cache_read_input_tokens", offsetof(aw_model_usage, cache_read_tokens)},
        {"cache_creation_input_tokens", offsetof(aw_model_usage, cache_write_tokens)},
    };
    r->base.info.has_usage = true;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const aw_json_value *v = aw_json_get(u, fields[i].key);
        if (aw_json_is_number(v))
            *(int64_t *)(void *)((char *)&r->base.info.usage + fields[i].offset) =
                aw_rt_json_int(v, 0, 0, AW_RT_TOKENS_MAX);
    }
}

static void read_model(aw_anthropic_reader *r, const aw_json_value *msg)
{
    const aw_json_value *m = aw_json_get(msg, "model");
    if (aw_json_is_string(m))
        aw_reply_copy(r->base.info.model, sizeof r->base.info.model, m->u.str.ptr, m->u.str.len);
}

static void read_stop(aw_anthropic_reader *r, const aw_json_value *v)
{
    if (aw_json_is_string(v))
        aw_reply_copy(r->base.info.stop_reason, sizeof r->base.info.stop_reason, v->u.str.ptr, v->u.str.len);
}

static int server_error(aw_anthropic_reader *r, const aw_json_value *e)
{
    const aw_json_value *type = aw_json_get(e, "type"), *msg = aw_json_get(e, "message");
    const char *t = aw_json_is_string(type) ? type->u.str.ptr : "error";
    /* errors about the request itself stay; overload and the like pass */
    static const char *const final[] = {"invalid_request_error", "authentication_error", "permission_error",
                                        "not_found_error", "request_too_large"};
    r->base.info.error_retryable = true;
    for (size_t i = 0; i < sizeof final / sizeof *final; i++)
        if (strcmp(t, final[i]) == 0)
            r->base.info.error_retryable = false;
    return aw_reply_fail(&r->base, AW_EIO, "the server reported %s: %.*s", t,
                         aw_json_is_string(msg) ? (int)(msg->u.str.len > 300 ? 300 : msg->u.str.len) : 7,
                         aw_json_is_string(msg) ? msg->u.str.ptr : "unknown");
}

static int emit(aw_anthropic_reader *r, bool reasoning, const aw_json_value *v)
{
    return aw_json_is_string(v) ? aw_reply_emit(&r->base, reasoning, v->u.str.ptr, v->u.str.len) : 0;
}

/* The block of an event's "index", made when new. */
static aw_anthropic_block *block_at(aw_anthropic_reader *r, const aw_json_value *root, uint64_t at, bool create)
{
    const aw_json_value *iv = aw_json_get(root, "index");
    if (!aw_json_is_number(iv) || iv->u.num.d < 0 || iv->u.num.d >= MAX_BLOCKS ||
        iv->u.num.d != (double)(size_t)iv->u.num.d) {
        aw_reply_bad(&r->base, at, "a content block index is missing or out of range (0..%d)", MAX_BLOCKS - 1);
        return NULL;
    }
    size_t i = (size_t)iv->u.num.d;
    if (i >= r->nblocks) {
        if (!create) {
            aw_reply_bad(&r->base, at, "an event for a content block that never started");
            return NULL;
        }
        const aw_allocator *a = r->base.alloc;
        aw_anthropic_block *b = aw_realloc(a, r->blocks, (i + 1) * sizeof *b);
        if (!b) {
            aw_reply_fail(&r->base, AW_ENOMEM, "out of memory");
            return NULL;
        }
        r->blocks = b;
        for (size_t k = r->nblocks; k <= i; k++) {
            memset(&b[k], 0, sizeof b[k]);
            aw_buf_init(&b[k].id, a);
            aw_buf_init(&b[k].name, a);
            aw_buf_init(&b[k].json, a);
        }
        r->nblocks = i + 1;
    }
    return &r->blocks[i];
}

static int block_start(aw_anthropic_reader *r, const aw_json_value *root, uint64_t at)
{
    aw_anthropic_block *b = block_at(r, root, at, true);
    if (!b)
        return r->base.status;
    const aw_json_value *cb = aw_json_get(root, "content_block");
    if (!aw_json_is_object(cb))
        return aw_reply_bad(&r->base, at, "content_block_start without a content_block object");
    if (b->open || b->kind)
        return aw_reply_bad(&r->base, at, "a content block started twice");
    const aw_json_value *type = aw_json_get(cb, "type");
    b->open = true;
    if (is(type, "text")) {
        b->kind = AW_ANTHROPIC_BLOCK_TEXT;
        return emit(r, false, aw_json_get(cb, "text"));
    }
    if (is(type, "thinking")) {
        b->kind = AW_ANTHROPIC_BLOCK_THINKING;
        return emit(r, true, aw_json_get(cb, "thinking"));
    }
    if (!is(type, "tool_use")) {
        b->kind = AW_ANTHROPIC_BLOCK_OTHER; /* redacted_thinking, server tools: not ours to report */
        return 0;
    }
    b->kind = AW_ANTHROPIC_BLOCK_TOOL;
    const aw_json_value *id = aw_json_get(cb, "id"), *name = aw_json_get(cb, "name"), *input = aw_json_get(cb, "input");
    if (!aw_json_is_string(id) || !aw_json_is_string(name) || name->u.str.len == 0)
        return aw_reply_bad(&r->base, at, "a tool_use block without its id and name");
    if (aw_buf_append(&b->id, id->u.str.ptr, id->u.str.len) || aw_buf_append(&b->name, name->u.str.ptr, name->u.str.len))
        return aw_reply_fail(&r->base, AW_ENOMEM, "out of memory");
    /* The input comes in input_json_delta pieces, the start holding {};
     * an input given whole at the start is kept unless pieces follow. */
    if (aw_json_is_object(input) && aw_json_count(input) > 0) {
        if (aw_json_write(input, NULL, &b->json, NULL))
            return aw_reply_fail(&r->base, AW_ENOMEM, "out of memory");
        b->initial_input = true;
    }
    return 0;
}

static int block_delta(aw_anthropic_reader *r, const aw_json_value *root, uint64_t at)
{
    aw_anthropic_block *b = block_at(r, root, at, false);
    if (!b)
        return r->base.status;
    if (!b->open)
        return aw_reply_bad(&r->base, at, "a delta for a content block that is not open");
    const aw_json_value *d = aw_json_get(root, "delta");
    if (!aw_json_is_object(d))
        return aw_reply_bad(&r->base, at, "content_block_delta without a delta object");
    const aw_json_value *type = aw_json_get(d, "type");
    static const struct {
        const char *type, *field;
        bool reasoning;
    } texts[] = {{"text_delta", "text", false}, {"thinking_delta", "thinking", true}};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        if (!is(type, texts[i].type))
            continue;
        const aw_json_value *v = aw_json_get(d, texts[i].field);
        if (!aw_json_is_string(v))
            return aw_reply_bad(&r->base, at, "a %s without its %s", texts[i].type, texts[i].field);
        return emit(r, texts[i].reasoning, v);
    }
    if (is(type, "input_json_delta")) {
        const aw_json_value *pj = aw_json_get(d, "partial_json");
        if (!aw_json_is_string(pj))
            return aw_reply_bad(&r->base, at, "an input_json_delta without its partial_json");
        if (b->kind != AW_ANTHROPIC_BLOCK_TOOL)
            return aw_reply_bad(&r->base, at, "an input_json_delta for a block that is not tool_use");
        if (b->initial_input) {
            aw_buf_clear(&b->json);
            b->initial_input = false;
        }
        return aw_buf_append(&b->json, pj->u.str.ptr, pj->u.str.len) ? aw_reply_fail(&r->base, AW_ENOMEM, "out of memory")
                                                                       : 0;
    }
    return 0; /* signature_delta, citations_delta, ... */
}

static int block_stop(aw_anthropic_reader *r, const aw_json_value *root, uint64_t at)
{
    aw_anthropic_block *b = block_at(r, root, at, false);
    if (!b)
        return r->base.status;
    if (!b->open)
        return aw_reply_bad(&r->base, at, "content_block_stop for a block that is not open");
    b->open = false;
    if (b->kind != AW_ANTHROPIC_BLOCK_TOOL)
        return 0;
    aw_chat_call call = {{b->id.data, b->id.len},
                         {b->name.data, b->name.len},
                         b->json.len ? (aw_text){b->json.data, b->json.len} : (aw_text){"{}", 2}};
    return aw_reply_emit_call(&r->base, &call);
}

static int dispatch(aw_anthropic_reader *r, const aw_json_value *root, aw_text event_name, uint64_t at)
{
    const aw_json_value *type = aw_json_get(root, "type");
    if (type && !aw_json_is_string(type))
        return aw_reply_bad(&r->base, at, "\"type\" is not a string");
    aw_text t = type ? (aw_text){type->u.str.ptr, type->u.str.len} : event_name;
#define TYPE_IS(s) (t.len == sizeof(s) - 1 && memcmp(t.ptr, s, t.len) == 0)
    if (TYPE_IS("message_start")) {
        const aw_json_value *msg = aw_json_get(root, "message");
        if (!aw_json_is_object(msg))
            return aw_reply_bad(&r->base, at, "message_start without a message object");
        r->started = true;
        read_model(r, msg);
        read_usage(r, aw_json_get(msg, "usage"));
        return 0;
    }
    if (TYPE_IS("content_block_start"))
        return block_start(r, root, at);
    if (TYPE_IS("content_block_delta"))
        return block_delta(r, root, at);
    if (TYPE_IS("content_block_stop"))
        return block_stop(r, root, at);
    if (TYPE_IS("message_delta")) {
        read_stop(r, aw_json_get(aw_json_get(root, "delta"), "stop_reason"));
        read_usage(r, aw_json_get(root, "usage"));
        return 0;
    }
    if (TYPE_IS("message_stop")) {
        r->stopped = true;
        return 0;
    }
    if (TYPE_IS("error"))
        return server_error(r, aw_json_get(root, "error"));
    return 0; /* ping, and event types added later */
#undef TYPE_IS
}

static int on_event(void *ctx, const aw_sse_event *ev)
{
    aw_anthropic_reader *r = ctx;
    aw_json_doc *doc;
    if (aw_reply_parse_event(&r->base, ev, &doc))
        return r->base.status;
    int rc = dispatch(r, aw_json_doc_root(doc), ev->type, ev->offset);
    aw_json_doc_free(doc);
    return rc;
}

static int on_other(void *ctx, aw_text field, aw_text value, uint64_t at)
{
    (void)value;
    aw_anthropic_reader *r = ctx;
    char name[40];
    aw_reply_copy(name, sizeof name, field.ptr, field.len);
    return aw_reply_bad(&r->base, at, "unknown field \"%s\"", name);
}

static void reader_init(void *self, const aw_allocator *alloc, const aw_reply_sink *sink)
{
    aw_anthropic_reader *r = self;
    memset(r, 0, sizeof *r);
    aw_sse_handlers h = {on_event, on_other};
    aw_reply_base_init(&r->base, alloc, sink, &h, r);
}

static void reader_release(void *self)
{
    aw_anthropic_reader *r = self;
    aw_reply_base_release(&r->base);
    for (size_t i = 0; i < r->nblocks; i++) {
        aw_buf_free(&r->blocks[i].id);
        aw_buf_free(&r->blocks[i].name);
        aw_buf_free(&r->blocks[i].json);
    }
    aw_free(r->base.alloc, r->blocks);
}

static int reader_feed(void *self, const char *p, size_t n, aw_error *err)
{
    return aw_reply_feed(&((aw_anthropic_reader *)self)->base, p, n, err);
}

static int reader_finish(void *self, aw_error *err)
{
    aw_anthropic_reader *r = self;
    if (aw_reply_end(&r->base, err))
        return r->base.status;
    if (!r->stopped) {
        r->base.info.error_retryable = true;
        aw_reply_fail(&r->base, AW_EIO, "the stream ended before the reply did (no message_stop)");
    }
    for (size_t i = 0; i < r->nblocks && !r->base.status; i++)
        if (r->blocks[i].open && r->blocks[i].kind == AW_ANTHROPIC_BLOCK_TOOL)
            aw_reply_fail(&r->base, AW_ESYNTAX, "bad stream: tool_use block %zu never stopped", i);
    return aw_reply_status(&r->base, err);
}

/* One tool_use block of a whole reply. */
static int whole_tool(aw_anthropic_reader *r, const aw_json_value *b, size_t i, aw_buf *input)
{
    const aw_json_value *id = aw_json_get(b, "id"), *name = aw_json_get(b, "name"), *in = aw_json_get(b, "input");
    if (!aw_json_is_string(id) || !aw_json_is_string(name) || name->u.str.len == 0)
        return aw_reply_fail(&r->base, AW_ESYNTAX, "bad reply: content[%zu] is a tool_use without its id and name", i);
    aw_buf_clear(input);
    if (in ? aw_json_write(in, NULL, input, NULL) : aw_buf_append_str(input, "{}"))
        return aw_reply_fail(&r->base, AW_ENOMEM, "out of memory");
    aw_chat_call call = {{id->u.str.ptr, id->u.str.len}, {name->u.str.ptr, name->u.str.len}, {input->data, input->len}};
    return aw_reply_emit_call(&r->base, &call);
}

/* A reply that came whole: {"type":"message","content":[...],...}. */
static int reader_whole(void *self, const char *p, size_t n, aw_error *err)
{
    aw_anthropic_reader *r = self;
    aw_json_doc *doc;
    if (aw_reply_parse_whole(&r->base, p, n, &doc))
        return aw_reply_status(&r->base, err);
    const aw_json_value *root = aw_json_doc_root(doc);
    const aw_json_value *content = aw_json_get(root, "content");
    if (is(aw_json_get(root, "type"), "error"))
        server_error(r, aw_json_get(root, "error"));
    else if (!aw_json_is_array(content))
        aw_reply_fail(&r->base, AW_ESYNTAX, "bad reply: no content array");
    else {
        read_model(r, root);
        read_usage(r, aw_json_get(root, "usage"));
        read_stop(r, aw_json_get(root, "stop_reason"));
        aw_buf input;
        aw_buf_init(&input, r->base.alloc);
        for (size_t i = 0; !r->base.status && i < aw_json_count(content); i++) {
            const aw_json_value *b = aw_json_at(content, i), *type = aw_json_get(b, "type");
            if (is(type, "text"))
                emit(r, false, aw_json_get(b, "text"));
            else if (is(type, "thinking"))
                emit(r, true, aw_json_get(b, "thinking"));
            else if (is(type, "tool_use"))
                whole_tool(r, b, i, &input);
        }
        aw_buf_free(&input);
    }
    aw_json_doc_free(doc);
    return aw_reply_status(&r->base, err);
}

static const aw_reply_info *reader_info(const void *self) { return &((const aw_anthropic_reader *)self)->base.info; }

const aw_reply_reader_ops aw_anthropic_reader_ops = {
    sizeof(aw_anthropic_reader), reader_init, reader_feed, reader_finish, reader_whole, reader_info, reader_release,
};
