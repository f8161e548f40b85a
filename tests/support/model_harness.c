/* Collecting a model request's reports for tests. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

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
    if (r->stop_after_text && r->text_bytes >= r->stop_after_text && !r->stopped) {
        r->stopped = true;
        if (!r->cancel_instead)
            return 1;
        aw_model_call_cancel(r->call);
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
    out->call = call;
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

void aw_test_trace_init(aw_test_trace *t)
{
    aw_buf_init(&t->text, NULL);
    t->last = NULL;
}

void aw_test_trace_fn(void *ctx, const char *what, const char *p, size_t n)
{
    aw_test_trace *t = ctx;
    if (!t->last || strcmp(what, t->last) != 0)
        aw_buf_printf(&t->text, "\n== %s\n", what);
    t->last = what;
    aw_buf_append(&t->text, p, n);
}

static int quiet_text(void *ctx, const char *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n;
    return 0;
}

static int quiet_call(void *ctx, const aw_chat_call *c)
{
    (void)ctx;
    (void)c;
    return 0;
}

int aw_test_read_reply(const aw_reply_reader_ops *ops, const aw_allocator *a, const char *stream, size_t chunk,
                       aw_reply_info *info)
{
    void *r = malloc(ops->size);
    assert_non_null(r);
    aw_reply_sink sink = {quiet_text, quiet_text, quiet_call, NULL};
    ops->init(r, a, &sink);
    aw_error err;
    int rc = 0;
    for (size_t i = 0, n = strlen(stream); i < n && rc == 0; i += chunk)
        rc = ops->feed(r, stream + i, n - i < chunk ? n - i : chunk, &err);
    if (rc == 0)
        rc = ops->finish(r, &err);
    *info = *ops->info(r);
    ops->release(r);
    free(r);
    return rc;
}

const char *aw_test_str(const aw_json_value *v, const char *key)
{
    const aw_json_value *s = aw_json_get(v, key);
    return aw_json_is_string(s) ? s->u.str.ptr : NULL;
}

void aw_test_same_and_free(char *a, char *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

aw_provider *aw_test_provider(aw_loop *l, const char *spec, const char *base_url, bool no_stream, aw_trace_fn trace,
                              void *trace_ctx, const aw_allocator *alloc)
{
    aw_provider_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.spec = spec;
    cfg.base_url = base_url;
    cfg.no_stream = no_stream;
    cfg.idle_timeout_ms = 20000;
    cfg.trace = trace;
    cfg.trace_ctx = trace_ctx;
    cfg.alloc = alloc;
    aw_error err;
    aw_provider *p = aw_provider_new(l, &cfg, &err);
    if (!p)
        fail_msg("%s", err.message);
    return p;
}

void aw_test_fixture_start(aw_test_fixture *f, const char *script, const char *spec, const char *base_path,
                           const char *key_env, const char *key)
{
    setenv(key_env, key, 1);
    aw_stub_start(&f->stub, script);
    snprintf(f->base, sizeof f->base, "%s%s", f->stub.base_url, base_path);
    f->spec = spec;
    f->loop = aw_loop_new(NULL, NULL);
    f->p = aw_test_provider(f->loop, spec, f->base, false, NULL, NULL, NULL);
}

void aw_test_fixture_finish(aw_test_fixture *f)
{
    aw_provider_free(f->p);
    aw_loop_free(f->loop);
    aw_stub_wait(&f->stub, 10000);
    aw_stub_stop(&f->stub);
}

void aw_test_fixture_run(aw_test_fixture *f, aw_provider *p, const aw_model_request *req, aw_test_reply *r)
{
    aw_error err;
    if (aw_test_model_run(f->loop, p ? p : f->p, req, r, &err))
        fail_msg("send: %s", err.message);
}

void aw_test_fixture_ok(aw_test_fixture *f, aw_provider *p, const aw_model_request *req)
{
    aw_test_reply r;
    aw_test_reply_init(&r);
    aw_test_fixture_run(f, p, req, &r);
    if (r.code)
        fail_msg("the request failed: %s", r.error);
    aw_test_reply_free(&r);
}

char *aw_test_fixture_body(aw_test_fixture *f, aw_provider *p, bool fresh, const aw_model_request *req, size_t index)
{
    aw_provider *own = fresh ? aw_test_provider(f->loop, f->spec, f->base, false, NULL, NULL, NULL) : NULL;
    aw_test_fixture_ok(f, own ? own : p, req);
    aw_provider_free(own);
    return aw_stub_log_body(&f->stub, index, NULL);
}

void aw_test_fault_check(const aw_test_fault *c, const char *spec, const char *base_path, const char *key_env,
                         const char *key)
{
    aw_test_fixture f;
    aw_test_fixture_start(&f, c->script, spec, base_path, key_env, key);
    if (c->idle_ms) {
        aw_provider_free(f.p);
        aw_provider_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.spec = spec;
        cfg.base_url = f.base;
        cfg.idle_timeout_ms = c->idle_ms;
        aw_error err;
        f.p = aw_provider_new(f.loop, &cfg, &err);
        assert_non_null(f.p);
    }
    aw_chat_msg m;
    memset(&m, 0, sizeof m);
    m.role = AW_CHAT_USER;
    m.content = (aw_text){"hi", 2};
    aw_model_request req;
    memset(&req, 0, sizeof req);
    req.ephemeral = &m;
    req.ephemeral_count = 1;
    aw_test_reply r;
    aw_test_reply_init(&r);
    aw_test_fixture_run(&f, NULL, &req, &r);
    aw_test_fixture_finish(&f);
    const char *bad = NULL;
    if (r.dones != 1)
        bad = "not exactly one on_done";
    else if (r.code != c->code)
        bad = "the code";
    else if (c->error && strcmp(r.error, c->error) != 0)
        bad = "the message";
    else if ((c->has[0] && !strstr(r.error, c->has[0])) || (c->has[1] && !strstr(r.error, c->has[1])))
        bad = "a part of the message";
    else if (r.retryable != c->retryable)
        bad = "retryable";
    else if (c->check_retry_after && r.retry_after_ms != c->retry_after_ms)
        bad = "retry_after_ms";
    else if (c->http_status && r.http_status != c->http_status)
        bad = "http_status";
    else if (c->text && strcmp(r.text.data ? r.text.data : "", c->text) != 0)
        bad = "the text passed on";
    if (bad)
        fail_msg("%s: %s differs (code %d, retryable %d, retry after %lld, status %d, message \"%s\", text \"%s\")",
                 c->script, bad, r.code, r.retryable, (long long)r.retry_after_ms, r.http_status, r.error,
                 r.text.data ? r.text.data : "");
    aw_test_reply_free(&r);
}
