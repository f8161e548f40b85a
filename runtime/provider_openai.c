/* openai:MODEL — the Chat Completions API and every server compatible
 * with it (OpenAI, vLLM, llama.cpp's server, Ollama's /v1, OpenRouter).
 *
 * Base URL: --base-url, else $OPENAI_BASE_URL, else
 * https://api.openai.com/v1. Key: $OPENAI_API_KEY (or the variable
 * --api-key-env names), sent as "Authorization: Bearer"; a server on this
 * machine needs none. Streams (SSE) unless no_stream. The request body is
 * openai_request.c's, the reply reader openai_stream.c's. */
#include <string.h>

#include "internal/openai.h"
#include "internal/provider_impl.h"
#include "internal/rt_util.h"

typedef struct openai {
    aw_hp hp;
    aw_openai_cache cache;
} openai;

static const aw_hp_kind kind = {
    .name = "openai",
    .key_env = "OPENAI_API_KEY",
    .base_env = "OPENAI_BASE_URL",
    .base_default = "https://api.openai.com/v1",
    .path = "/chat/completions",
    .key_header = "Authorization: Bearer ",
    .fixed_header = NULL,
    .reader = &aw_openai_reader_ops,
};

static int openai_init(aw_provider *p, aw_error *err)
{
    openai *o = aw_malloc(p->alloc, sizeof *o);
    if (!o)
        return aw_rt_error(err, AW_ENOMEM, "openai: out of memory");
    int rc = aw_hp_init(&o->hp, p, &kind, err);
    if (rc) {
        aw_free(p->alloc, o);
        return rc;
    }
    aw_openai_cache_init(&o->cache, p->alloc);
    p->impl = o;
    return 0;
}

static void openai_destroy(aw_provider *p)
{
    openai *o = p->impl;
    if (!o)
        return;
    aw_hp_release(&o->hp);
    aw_openai_cache_release(&o->cache);
    aw_free(p->alloc, o);
}

static int openai_send(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err)
{
    openai *o = p->impl;
    aw_body body;
    aw_body_init(&body, p->alloc);
    /* The cache is referenced by a request in flight and must not move:
     * a second request at the same time writes its own copy. */
    aw_openai_cache *cache = o->hp.inflight ? NULL : &o->cache;
    if (aw_openai_request(cache, p->model, req, !p->cfg.no_stream, &body, p->alloc)) {
        aw_body_release(&body);
        return aw_rt_error(err, AW_ENOMEM, "openai: out of memory");
    }
    return aw_hp_send(&o->hp, call, &body, !p->cfg.no_stream, err);
}

const aw_provider_ops aw_provider_openai_ops = {
    .kind = "openai",
    .needs_model = true,
    .native_tools = true,
    .init = openai_init,
    .send = openai_send,
    .cancel = aw_hp_cancel,
    .destroy = openai_destroy,
};
