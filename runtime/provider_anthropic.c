/* anthropic:MODEL — the Messages API.
 *
 * Base URL: --base-url, else $ANTHROPIC_BASE_URL, else
 * https://api.anthropic.com. Key: $ANTHROPIC_API_KEY (or the variable
 * --api-key-env names), sent as "x-api-key", with "anthropic-version:
 * 2023-06-01"; a server on this machine needs none. Streams (SSE) unless
 * no_stream. The request body is anthropic_request.c's, the reply reader
 * anthropic_stream.c's. */
#include "internal/anthropic.h"
#include "internal/provider_impl.h"

static const aw_hp_kind kind = {
    .name = "anthropic",
    .key_env = "ANTHROPIC_API_KEY",
    .base_env = "ANTHROPIC_BASE_URL",
    .base_default = "https://api.anthropic.com",
    .path = "/v1/messages",
    .key_header = "x-api-key: ",
    .fixed_header = "anthropic-version: 2023-06-01",
    .write_request = aw_anthropic_request,
    .reader = &aw_anthropic_reader_ops,
};

static int anthropic_init(aw_provider *p, aw_error *err) { return aw_hp_provider_init(p, &kind, err); }

const aw_provider_ops aw_provider_anthropic_ops = {
    .kind = "anthropic",
    .needs_model = true,
    .native_tools = true,
    .init = anthropic_init,
    .send = aw_hp_provider_send,
    .cancel = aw_hp_provider_cancel,
    .destroy = aw_hp_provider_destroy,
};
