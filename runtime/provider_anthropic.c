/* anthropic:MODEL — the Messages API.
 *
 * Base URL: --base-url, else $ANTHROPIC_BASE_URL, else
 * https://api.anthropic.com. Key: $ANTHROPIC_API_KEY (or the variable
 * --api-key-env names), sent as "x-api-key", with "anthropic-version:
 * 2023-06-01"; a server on this machine needs none. Streams (SSE) unless
 * no_stream. The request body is anthropic_request.c's, the reply reader
 * anthropic_stream.c's. */
#include <string.h>

#include "internal/anthropic.h"
#include "internal/provider_impl.h"
#include "internal/rt_util.h"

typedef struct anthropic {
    aw_hp hp;
    aw_anthropic_cache cache;
} anthropic;

static const aw_hp_kind kind = {
    .name = "anthropic",
    .key_env = "ANTHROPIC_API_KEY",
    .base_env = "ANTHROPIC_BASE_URL",
    .base_default = "https://api.anthropic.com",
    .path = "/v1/messages",
    .key_header = "x-api-key: ",
    .fixed_header = "anthropic-version: 2023-06-01",
    .reader = &aw_anthropic_reader_ops,
};

static int anthropic_init(aw_provider *p, aw_error *err)
{
    anthropic *a = aw_malloc(p->alloc, sizeof *a);
    if (!a)
        return aw_rt_error(err, AW_ENOMEM, "anthropic: out of memory");
    int rc = aw_hp_init(&a->hp, p, &kind, err);
    if (rc) {
        aw_free(p->alloc, a);
        return rc;
    }
    aw_anthropic_cache_init(&a->cache, p->alloc);
    p->impl = a;
    return 0;
}

static void anthropic_destroy(aw_provider *p)
{
    anthropic *a = p->impl;
    if (!a)
        return;
    aw_hp_release(&a->hp);
    aw_anthropic_cache_release(&a->cache);
    aw_free(p->alloc, a);
}

static int anthropic_send(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err)
{
    anthropic *a = p->impl;
    aw_body body;
    aw_body_init(&body, p->alloc);
    /* a request in flight references the cache: a second one at the same
     * time writes its own copy */
    aw_anthropic_cache *cache = a->hp.inflight ? NULL : &a->cache;
    if (aw_anthropic_request(cache, p->model, req, !p->cfg.no_stream, &body, p->alloc)) {
        aw_body_release(&body);
        return aw_rt_error(err, AW_ENOMEM, "anthropic: out of memory");
    }
    return aw_hp_send(&a->hp, call, &body, !p->cfg.no_stream, err);
}

const aw_provider_ops aw_provider_anthropic_ops = {
    .kind = "anthropic",
    .needs_model = true,
    .native_tools = true,
    .init = anthropic_init,
    .send = anthropic_send,
    .cancel = aw_hp_cancel,
    .destroy = anthropic_destroy,
};
