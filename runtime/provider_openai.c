/* openai:MODEL — the Chat Completions API and every server compatible
 * with it (OpenAI, vLLM, llama.cpp's server, Ollama's /v1, OpenRouter).
 *
 * Base URL: --base-url, else $OPENAI_BASE_URL, else
 * https://api.openai.com/v1. Key: $OPENAI_API_KEY (or the variable
 * --api-key-env names), sent as "Authorization: Bearer"; a server on this
 * machine needs none. Streams (SSE) unless no_stream. The request body is
 * openai_request.c's, the reply reader openai_stream.c's. */
#include "internal/openai.h"
#include "internal/provider_impl.h"

static const aw_hp_kind kind = {
    .name = "openai",
    .key_env = "OPENAI_API_KEY",
    .base_env = "OPENAI_BASE_URL",
    .base_default = "https://api.openai.com/v1",
    .path = "/chat/completions",
    .key_header = "Authorization: Bearer ",
    .fixed_header = NULL,
    .write_request = aw_openai_request,
    .reader = &aw_openai_reader_ops,
};

static int openai_init(aw_provider *p, aw_error *err) { return aw_hp_provider_init(p, &kind, err); }

const aw_provider_ops aw_provider_openai_ops = {
    .kind = "openai",
    .needs_model = true,
    .native_tools = true,
    .init = openai_init,
    .send = aw_hp_provider_send,
    .cancel = aw_hp_provider_cancel,
    .destroy = aw_hp_provider_destroy,
};
