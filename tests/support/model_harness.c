/* Collecting a model request's reports for tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_harness.h"

uint64_t aw_test_fnv(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void aw_test_reply_init(aw_test_reply *r)
{
    memset(r, 0, sizeof *r);
    aw_buf_init(&r->text, NULL);
    aw_buf_init(&r->reasoning, NULL);
    aw_buf_init(&r->calls, NULL);
    r->text_hash = AW_TEST_FNV_START;
    r->retry_after_ms = -2;
}

void aw_test_reply_free(aw_test_reply *r)
{
    aw_buf_free(&r->text);
    aw_buf_free(&r->reasoning);
    aw_buf_free(&r->calls);
}

static int on_text(void *ctx, const char *p, size_t n)
{
    aw_test_reply *r = ctx;
    if (r->stopped)
        r->after_stop++;
    r->text_bytes += n;
    r->text_hash = aw_test_fnv(r->text_hash, p, n);
    if (!r->count_only)
        aw_buf_append(&r->text, p, n);
    if (r->stop_after_text && r->text_bytes >= r->stop_after_text) {
        r->stopped = true;
        return 1;
    }
    return 0;
}

static int on_reasoning(void *ctx, const char *p, size_t n)
{
    aw_test_reply *r = ctx;
    if (r->stopped)
        r->after_stop++;
    aw_buf_append(&r->reasoning, p, n);
    return 0;
}

static int on_tool_call(void *ctx, const aw_chat_call *c)
{
    aw_test_reply *r = ctx;
    if (r->stopped)
        r->after_stop++;
    aw_buf_append(&r->calls, c->id.ptr, c->id.len);
    aw_buf_putc(&r->calls, '|');
    aw_buf_append(&r->calls, c->name.ptr, c->name.len);
    aw_buf_putc(&r->calls, '|');
    aw_buf_append(&r->calls, c->arguments.ptr, c->arguments.len);
    aw_buf_putc(&r->calls, '\n');
    return 0;
}

static void copy_text(char *dst, size_t cap, aw_text t)
{
    size_t n = t.len < cap - 1 ? t.len : cap - 1;
    if (n)
        memcpy(dst, t.ptr, n);
    dst[n] = 0;
}

static void on_done(void *ctx, const aw_model_result *res)
{
    aw_test_reply *r = ctx;
    if (r->stopped)
        r->after_stop++;
    r->dones++;
    r->code = res->code;
    snprintf(r->error, sizeof r->error, "%s", res->error ? res->error : "");
    r->retryable = res->retryable;
    r->retry_after_ms = res->retry_after_ms;
    r->http_status = res->http_status;
    copy_text(r->stop_reason, sizeof r->stop_reason, res->stop_reason);
    copy_text(r->model, sizeof r->model, res->model);
    r->has_usage = res->has_usage;
    r->usage = res->usage;
}

static const aw_model_fns fns = {on_text, on_reasoning, on_tool_call, on_done};

const aw_model_fns *aw_test_reply_fns(void) { return &fns; }

int aw_test_model_run(aw_loop *l, aw_provider *p, const aw_model_request *req, aw_test_reply *out, aw_error *err)
{
    aw_model_call *call = NULL;
    int rc = aw_provider_send(p, req, &fns, out, &call, err);
    if (rc)
        return rc;
    /* bounded: a reply that never ends fails the test, never hangs it */
    int64_t deadline = aw_loop_clock() + 120000;
    while (out->dones == 0 && !out->stopped) {
        rc = aw_loop_clock() < deadline ? aw_loop_once(l, 1000) : AW_EIO;
        if (rc) {
            /* the loop itself failed (no memory): the call ends here */
            aw_model_call_cancel(call);
            return rc;
        }
    }
    /* after a stop: serve the loop a little, so a late callback would show */
    for (int i = 0; out->stopped && i < 20; i++)
        aw_loop_once(l, 5);
    return 0;
}

void aw_test_chat_add(aw_chat *c, aw_chat_role role, const char *content)
{
    aw_chat_msg m;
    memset(&m, 0, sizeof m);
    m.role = role;
    m.content = (aw_text){content, strlen(content)};
    aw_chat_append(c, &m);
}

void aw_test_chat_call(aw_chat *c, const char *content, const char *id, const char *name, const char *args)
{
    aw_chat_call call = {{id, strlen(id)}, {name, strlen(name)}, {args, strlen(args)}};
    aw_chat_msg m;
    memset(&m, 0, sizeof m);
    m.role = AW_CHAT_ASSISTANT;
    m.content = (aw_text){content, strlen(content)};
    m.calls = &call;
    m.call_count = 1;
    aw_chat_append(c, &m);
}

void aw_test_chat_result(aw_chat *c, const char *id, const char *name, const char *content, bool is_error)
{
    aw_chat_msg m;
    memset(&m, 0, sizeof m);
    m.role = AW_CHAT_TOOL;
    m.content = (aw_text){content, strlen(content)};
    m.call_id = (aw_text){id, strlen(id)};
    m.tool_name = (aw_text){name, strlen(name)};
    m.is_error = is_error;
    aw_chat_append(c, &m);
}

/* Each block carries its size in front, so frees can be counted. */
static void *count_malloc(void *ctx, size_t n)
{
    aw_test_counting *c = ctx;
    size_t *b = malloc(n + sizeof(size_t) * 2);
    if (!b)
        return NULL;
    b[0] = n;
    c->live += n;
    if (c->live > c->peak)
        c->peak = c->live;
    return b + 2;
}

static void *count_realloc(void *ctx, void *p, size_t n)
{
    aw_test_counting *c = ctx;
    if (!p)
        return count_malloc(ctx, n);
    size_t *b = (size_t *)p - 2;
    size_t old = b[0];
    size_t *nb = realloc(b, n + sizeof(size_t) * 2);
    if (!nb)
        return NULL;
    nb[0] = n;
    c->live = c->live - old + n;
    if (c->live > c->peak)
        c->peak = c->live;
    return nb + 2;
}

static void count_free(void *ctx, void *p)
{
    aw_test_counting *c = ctx;
    size_t *b = (size_t *)p - 2;
    c->live -= b[0];
    free(b);
}

const aw_allocator *aw_test_counting_init(aw_test_counting *c)
{
    memset(c, 0, sizeof *c);
    c->base.malloc = count_malloc;
    c->base.realloc = count_realloc;
    c->base.free = count_free;
    c->base.ctx = c;
    return &c->base;
}
