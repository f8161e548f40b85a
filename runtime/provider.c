/* Providers: the kind table, the configuration copy, and the reporting
 * helpers every kind uses, so each kind's file holds only its protocol. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal/provider_impl.h"
#include "internal/rt_util.h"

/* One line per kind (one file per kind: provider_KIND.c). */
static const aw_provider_ops *const kinds[] = {
    &aw_provider_replay_ops,
    &aw_provider_openai_ops,
    &aw_provider_anthropic_ops,
    &aw_provider_claude_cli_ops,
    &aw_provider_codex_cli_ops,
    &aw_provider_exec_ops,
};

const char *const aw_provider_kinds[] = {
    "openai:MODEL      the Chat Completions API and compatible servers (vLLM, llama.cpp, Ollama, OpenRouter)",
    "anthropic:MODEL   the Anthropic Messages API",
    "claude-cli        the claude command, the conversation as <thread> XML on stdin",
    "codex-cli         the codex command (codex exec), the same",
    "exec:COMMAND      any command: the prompt on stdin, the reply on stdout",
    "replay:FILE       a recorded session (--record), one reply per JSON line",
    NULL,
};

static char *dup_or_null(const aw_allocator *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *d = aw_malloc(a, n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

aw_provider *aw_provider_new(aw_loop *l, const aw_provider_config *cfg, aw_error *err)
{
    aw_error_clear(err);
    if (!cfg || !cfg->spec || !*cfg->spec) {
        aw_rt_error(err, AW_EINVAL, "no model given (--model PROVIDER[:MODEL])");
        return NULL;
    }
    const char *colon = strchr(cfg->spec, ':');
    size_t kind_len = colon ? (size_t)(colon - cfg->spec) : strlen(cfg->spec);
    const aw_provider_ops *ops = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (strlen(kinds[i]->kind) == kind_len && memcmp(kinds[i]->kind, cfg->spec, kind_len) == 0)
            ops = kinds[i];
    if (!ops) {
        aw_rt_error(err, AW_EINVAL,
                    "unknown provider '%.*s' (one of: openai, anthropic, claude-cli, codex-cli, exec, replay)",
                    (int)kind_len, cfg->spec);
        return NULL;
    }
    if (ops->needs_model && (!colon || !colon[1])) {
        aw_rt_error(err, AW_EINVAL, "%s: no model given (--model %s:MODEL)", ops->kind, ops->kind);
        return NULL;
    }
    const aw_allocator *a = cfg->alloc ? cfg->alloc : aw_loop_allocator(l);
    aw_provider *p = aw_malloc(a, sizeof *p);
    if (!p) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(p, 0, sizeof *p);
    p->ops = ops;
    p->loop = l;
    p->alloc = a;
    p->cfg = *cfg;
    p->cfg.alloc = a;
    p->spec = dup_or_null(a, cfg->spec);
    p->model = dup_or_null(a, colon ? colon + 1 : "");
    p->base_url = dup_or_null(a, cfg->base_url);
    p->api_key_env = dup_or_null(a, cfg->api_key_env);
    p->claude_path = dup_or_null(a, cfg->claude_path ? cfg->claude_path : "claude");
    p->codex_path = dup_or_null(a, cfg->codex_path ? cfg->codex_path : "codex");
    if (!p->spec || !p->model || (cfg->base_url && !p->base_url) || (cfg->api_key_env && !p->api_key_env) ||
        !p->claude_path || !p->codex_path) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        aw_provider_free(p);
        return NULL;
    }
    p->cfg.spec = p->spec;
    p->cfg.base_url = p->base_url;
    p->cfg.api_key_env = p->api_key_env;
    p->cfg.claude_path = p->claude_path;
    p->cfg.codex_path = p->codex_path;
    if (ops->init(p, err)) {
        p->ops = NULL; /* nothing to destroy */
        aw_provider_free(p);
        return NULL;
    }
    return p;
}

void aw_provider_free(aw_provider *p)
{
    if (!p)
        return;
    if (p->ops && p->ops->destroy)
        p->ops->destroy(p);
    const aw_allocator *a = p->alloc;
    aw_free(a, p->spec);
    aw_free(a, p->model);
    aw_free(a, p->base_url);
    aw_free(a, p->api_key_env);
    aw_free(a, p->claude_path);
    aw_free(a, p->codex_path);
    aw_free(a, p);
}

const char *aw_provider_kind(const aw_provider *p) { return p->ops->kind; }
const char *aw_provider_model(const aw_provider *p) { return p->model; }
bool aw_provider_has_native_tools(const aw_provider *p) { return p->ops->native_tools; }

int aw_provider_send(aw_provider *p, const aw_model_request *req, const aw_model_fns *fns, void *ctx,
                     aw_model_call **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    aw_model_call *c = aw_malloc(p->alloc, sizeof *c);
    if (!c)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(c, 0, sizeof *c);
    c->provider = p;
    c->fns = *fns;
    c->ctx = ctx;
    int rc = p->ops->send(p, c, req, err);
    if (rc) {
        aw_free(p->alloc, c);
        return rc;
    }
    *out = c;
    return 0;
}

void aw_model_call_cancel(aw_model_call *c)
{
    if (!c)
        return;
    if (c->depth > 0) {
        /* Cancelled from inside one of its own callbacks: the provider is
         * on the stack and still holds c. It sees the stop when the
         * callback returns and ends with aw_model_call_done, which then
         * reports nothing and frees c. */
        c->stopped = true;
        return;
    }
    c->provider->ops->cancel(c);
    aw_free(c->provider->alloc, c);
}

int aw_model_call_text(aw_model_call *c, const char *p, size_t n)
{
    if (c->stopped || n == 0 || !c->fns.on_text)
        return c->stopped;
    c->depth++;
    int rc = c->fns.on_text(c->ctx, p, n);
    c->depth--;
    if (rc)
        c->stopped = true;
    return c->stopped;
}

int aw_model_call_reasoning(aw_model_call *c, const char *p, size_t n)
{
    if (c->stopped || n == 0 || !c->fns.on_reasoning)
        return c->stopped;
    c->depth++;
    int rc = c->fns.on_reasoning(c->ctx, p, n);
    c->depth--;
    if (rc)
        c->stopped = true;
    return c->stopped;
}

int aw_model_call_tool(aw_model_call *c, const aw_chat_call *call)
{
    if (c->stopped || !c->fns.on_tool_call)
        return c->stopped;
    c->depth++;
    int rc = c->fns.on_tool_call(c->ctx, call);
    c->depth--;
    if (rc)
        c->stopped = true;
    return c->stopped;
}

void aw_model_call_done(aw_model_call *c, const aw_model_result *res)
{
    aw_model_fns fns = c->fns;
    void *ctx = c->ctx;
    bool stopped = c->stopped;
    aw_free(c->provider->alloc, c);
    if (!stopped && fns.on_done)
        fns.on_done(ctx, res);
}

void aw_model_call_fail(aw_model_call *c, int code, bool retryable, int http_status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aw_model_result res;
    memset(&res, 0, sizeof res);
    res.code = code;
    res.error = msg;
    res.retryable = retryable;
    res.retry_after_ms = -1;
    res.http_status = http_status;
    res.usage.cost_usd = -1;
    aw_model_call_done(c, &res);
}
