/* What a provider kind implements: one file each (provider_openai.c, ...),
 * registered in provider.c. Not installed. */
#ifndef AW_PROVIDER_IMPL_H
#define AW_PROVIDER_IMPL_H

#include "agentwire/provider.h"

typedef struct aw_provider_ops {
    const char *kind;          /* "openai" */
    bool needs_model;          /* "openai" needs ":MODEL"; "claude-cli" does not */
    bool native_tools;
    /* Check the configuration and set p->impl; errors name the kind. */
    int (*init)(aw_provider *p, aw_error *err);
    /* Start the request of call (call->fns and call->ctx are set); report
     * through the aw_model_call_* helpers below. */
    int (*send)(aw_provider *p, aw_model_call *call, const aw_model_request *req, aw_error *err);
    /* Stop call's request and free what send set up (call->impl); no
     * callback after this. */
    void (*cancel)(aw_model_call *call);
    void (*destroy)(aw_provider *p);
} aw_provider_ops;

struct aw_provider {
    const aw_provider_ops *ops;
    aw_loop *loop;
    const aw_allocator *alloc;
    aw_provider_config cfg;    /* strings below are owned copies */
    char *spec, *model, *base_url, *api_key_env, *claude_path, *codex_path;
    void *impl;
};

struct aw_model_call {
    aw_provider *provider;
    aw_model_fns fns;
    void *ctx;
    void *impl;
    bool stopped;              /* a callback asked to stop, or done was reported */
    int depth;                 /* the caller's callbacks under way */
};

/* Report through the caller's callbacks. They return nonzero once the
 * caller has asked to stop: the provider then ends its request early and
 * calls aw_model_call_done as usual (which reports nothing after a stop). */
int aw_model_call_text(aw_model_call *c, const char *p, size_t n);
int aw_model_call_reasoning(aw_model_call *c, const char *p, size_t n);
int aw_model_call_tool(aw_model_call *c, const aw_chat_call *call);
/* The one on_done, then the call is freed: the provider releases
 * call->impl before (or keeps its own pointer to it), never reads c after. */
void aw_model_call_done(aw_model_call *c, const aw_model_result *res);

/* aw_model_call_done with an error result and a printf-formatted message. */
void aw_model_call_fail(aw_model_call *c, int code, bool retryable, int http_status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* The kinds, in provider.c's table. */
extern const aw_provider_ops aw_provider_openai_ops;
extern const aw_provider_ops aw_provider_anthropic_ops;
extern const aw_provider_ops aw_provider_claude_cli_ops;
extern const aw_provider_ops aw_provider_codex_cli_ops;
extern const aw_provider_ops aw_provider_exec_ops;
extern const aw_provider_ops aw_provider_replay_ops;

#endif
