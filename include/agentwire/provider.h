/* agentwire runtime — model providers: where a turn's request goes and
 * its reply streams back from.
 *
 *   openai:MODEL     the Chat Completions API and everything compatible with it
 *   anthropic:MODEL  the Messages API
 *   claude-cli       Anthropic's `claude` command, the conversation as <thread> XML on stdin
 *   codex-cli        OpenAI's `codex exec`, the same
 *   exec:COMMAND     any command: the prompt on stdin, the reply on stdout
 *   replay:FILE      a recorded session, one reply per JSON line
 *
 * A provider is driven by the loop: aw_provider_send starts one request and
 * returns at once; the reply arrives through callbacks as it streams. A
 * provider instance serves one conversation at a time and keeps each
 * message of it in its own wire form once written, so a long history is
 * never serialized again (the conversation only grows). */
#ifndef AGENTWIRE_PROVIDER_H
#define AGENTWIRE_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "event.h"
#include "loop.h"
#include "transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the conversation ------------------------------------------------------ */

typedef enum aw_chat_role { AW_CHAT_SYSTEM = 0, AW_CHAT_USER, AW_CHAT_ASSISTANT, AW_CHAT_TOOL } aw_chat_role;

/* A native tool call, as the model made it. */
typedef struct aw_chat_call {
    aw_text id;
    aw_text name;
    aw_text arguments; /* JSON text, as the model wrote it */
} aw_chat_call;

typedef struct aw_chat_msg {
    aw_chat_role role;
    aw_text content;
    const aw_chat_call *calls; /* assistant: native tool calls */
    size_t call_count;
    aw_text call_id;           /* tool: the call answered */
    aw_text tool_name;         /* tool: its tool's name */
    bool is_error;             /* tool: the call failed */
} aw_chat_msg;

/* An append-only list of messages, copied in. A message's strings live as
 * long as the list; the aw_chat_msg pointer itself until the next append. */
typedef struct aw_chat aw_chat;

aw_chat *aw_chat_new(const aw_allocator *alloc);
void aw_chat_free(aw_chat *c);
int aw_chat_append(aw_chat *c, const aw_chat_msg *m);
size_t aw_chat_count(const aw_chat *c);
const aw_chat_msg *aw_chat_at(const aw_chat *c, size_t i);
/* Bytes held by the messages' contents and arguments (for context estimates). */
size_t aw_chat_bytes(const aw_chat *c);

/* ---- one request -------------------------------------------------------------- */

typedef struct aw_model_request {
    aw_text system;          /* the system prompt; may be empty */
    /* context "messages": the permanent history; the provider may keep the
     * wire form of history[0..k) from the previous request and write only
     * the messages added since. */
    const aw_chat *history;
    /* context "xml": the whole history as one user message, thread_stable
     * followed by thread_tail. thread_stable only grows from one request to
     * the next (what was sent before is still its prefix), so it too is
     * written once; thread_tail (the closing tag, the prefill) is small. */
    aw_text thread_stable;
    aw_text thread_tail;
    /* Messages for this request only, after the history (the XML-NEXT
     * notice, feedback for rejected tags). */
    const aw_chat_msg *ephemeral;
    size_t ephemeral_count;
    /* Native tools; none in xml transport. */
    const aw_tool_def *tools;
    size_t tool_count;
    unsigned turn;           /* from 1 */
    int max_tokens;          /* 0: the provider's default */
    double temperature;      /* used when has_temperature */
    bool has_temperature;
} aw_model_request;

typedef struct aw_model_usage {
    int64_t input_tokens;
    int64_t output_tokens;
    int64_t cache_read_tokens;
    int64_t cache_write_tokens;
    int64_t reasoning_tokens;
    double cost_usd;         /* < 0: not reported */
} aw_model_usage;

typedef struct aw_model_result {
    int code;                /* 0, or a negative AW_E* code */
    /* When code != 0: what happened, naming the provider and never a key:
     * "openai: 401 Unauthorized: Incorrect API key provided". */
    const char *error;
    bool retryable;          /* 429, 5xx, a connection error, a timeout */
    int64_t retry_after_ms;  /* from Retry-After; -1 when none */
    int http_status;         /* 0 when not HTTP */
    aw_text stop_reason;     /* as the provider wrote it: "stop", "tool_calls", "end_turn", "max_tokens", ... */
    aw_model_usage usage;
    bool has_usage;
    aw_text model;           /* the model that answered, when reported */
} aw_model_result;

typedef struct aw_model_fns {
    /* Visible text as it streams. Nonzero: stop (as aw_model_call_cancel). */
    int (*on_text)(void *ctx, const char *p, size_t n);
    /* Reasoning text (thinking), kept apart from the reply; may be NULL. */
    int (*on_reasoning)(void *ctx, const char *p, size_t n);
    /* A native tool call, once whole. */
    int (*on_tool_call)(void *ctx, const aw_chat_call *call);
    /* Exactly once per request (unless cancelled), from the loop. */
    void (*on_done)(void *ctx, const aw_model_result *res);
} aw_model_fns;

/* ---- providers ------------------------------------------------------------------ */

typedef enum aw_prompt_encoding { AW_PROMPT_XML = 0, AW_PROMPT_TEXT } aw_prompt_encoding;

/* Where request and response bodies go for --trace. Headers that carry keys
 * are written as "[redacted]". */
typedef void (*aw_trace_fn)(void *ctx, const char *what, const char *p, size_t n);

typedef struct aw_provider_config {
    const char *spec;          /* "openai:gpt-4o", "claude-cli", "replay:session.jsonl", ... */
    const char *base_url;      /* openai: default $OPENAI_BASE_URL, else https://api.openai.com/v1;
                                  anthropic: default $ANTHROPIC_BASE_URL, else https://api.anthropic.com */
    const char *api_key_env;   /* the variable holding the key; default OPENAI_API_KEY / ANTHROPIC_API_KEY */
    const char *claude_path;   /* default "claude" */
    const char *codex_path;    /* default "codex" */
    aw_prompt_encoding encoding; /* command-line providers: <thread> XML or the [User] text form */
    bool no_stream;            /* HTTP: ask for the whole reply at once */
    /* Timeouts in ms (0: the default): connect 10 s, first byte 60 s, idle
     * between chunks 60 s, whole request 600 s. The command-line providers
     * use the whole request's, and an idle one (no output) only when it is
     * set: claude prints nothing until its reply is whole. */
    int64_t connect_timeout_ms;
    int64_t first_byte_timeout_ms;
    int64_t idle_timeout_ms;
    int64_t request_timeout_ms;
    const char *const *extra_env; /* command-line providers: "NAME=VALUE" set for the child */
    aw_trace_fn trace;
    void *trace_ctx;
    const aw_allocator *alloc;
} aw_provider_config;

typedef struct aw_provider aw_provider;
typedef struct aw_model_call aw_model_call;

/* Make a provider from cfg->spec. Fails at once for an unknown kind, a
 * missing model, a missing API key ("openai: OPENAI_API_KEY is not set"),
 * an unreadable replay file. */
aw_provider *aw_provider_new(aw_loop *l, const aw_provider_config *cfg, aw_error *err);
void aw_provider_free(aw_provider *p);
/* "openai", "anthropic", "claude-cli", "codex-cli", "exec", "replay". */
const char *aw_provider_kind(const aw_provider *p);
/* The model asked for ("gpt-4o"; the command for exec; "" when none). */
const char *aw_provider_model(const aw_provider *p);
/* Whether the provider takes native tool definitions; the command-line
 * providers do not, and a run uses the xml transport with them. */
bool aw_provider_has_native_tools(const aw_provider *p);

/* Start one request. The request and everything it points to need only
 * live until this returns. */
int aw_provider_send(aw_provider *p, const aw_model_request *req, const aw_model_fns *fns, void *ctx,
                     aw_model_call **out, aw_error *err);
/* Stop a request: no callback follows, the handle is gone. Allowed from
 * inside the request's own callbacks too. */
void aw_model_call_cancel(aw_model_call *c);

/* The provider kinds and what each takes, for --help. */
extern const char *const aw_provider_kinds[];

#ifdef __cplusplus
}
#endif
#endif
