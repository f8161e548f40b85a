/* agentwire runtime — tools: where a run's calls are executed.
 *
 * A toolbox gathers tool sources (command tools from a --tools file, MCP
 * servers, sub-agents) under one list of names the model sees, runs calls
 * on the loop with a timeout each, and reports results through callbacks.
 * A new kind of source is one file implementing aw_tool_source_ops. */
#ifndef AGENTWIRE_TOOLS_H
#define AGENTWIRE_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "event.h"
#include "json.h"
#include "loop.h"
#include "transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_tool_result {
    bool ok;
    aw_text output;       /* what the model reads: the tool's output, or for a failure why it failed */
    uint64_t output_bytes; /* how much the tool produced (more than output.len when a source kept only the start) */
    const aw_json_value *structured; /* MCP structuredContent, or NULL */
    bool timed_out;
    bool cancelled;
} aw_tool_result;

/* Exactly once per call (unless cancelled), from the loop. Everything the
 * result points to lives until the callback returns. */
typedef void (*aw_tool_done_fn)(void *ctx, const aw_tool_result *res);
/* Progress of a long call (MCP notifications/progress): total < 0 when
 * unknown; message may be empty. */
typedef void (*aw_tool_progress_fn)(void *ctx, double progress, double total, aw_text message);
/* A line for the run's log (a server's stderr, a protocol warning). */
typedef void (*aw_tool_log_fn)(void *ctx, int level, const char *source, const char *msg);

enum { AW_LOG_DEBUG = 0, AW_LOG_INFO, AW_LOG_WARN, AW_LOG_ERROR };

typedef struct aw_tool_call_opts {
    aw_text call_id;           /* for records and sub-agents */
    aw_tool_progress_fn on_progress;
    void *progress_ctx;
    void *caller;              /* the calling aw_run (sub-agents nest under it) */
} aw_tool_call_opts;

typedef struct aw_tool_source aw_tool_source;

typedef struct aw_tool_source_ops {
    const char *kind; /* "command", "mcp", "agent" */
    /* Get ready (start servers, list tools); call ready exactly once, from
     * the loop, with NULL or the reason the source is unusable. */
    int (*start)(aw_tool_source *s, void (*ready)(void *ctx, aw_tool_source *s, const aw_error *err),
                 void *ctx);
    /* The tools, named as the model sees them. */
    size_t (*count)(const aw_tool_source *s);
    const aw_tool_def *(*def)(const aw_tool_source *s, size_t i);
    /* Run tool i; done exactly once unless cancelled. *handle identifies
     * the call for cancel. */
    int (*call)(aw_tool_source *s, size_t i, const aw_json_value *args, const aw_tool_call_opts *opts,
                aw_tool_done_fn done, void *ctx, void **handle, aw_error *err);
    /* Stop a call (kill its process, send notifications/cancelled): no
     * done after this. */
    void (*cancel)(aw_tool_source *s, void *handle);
    /* Shut down (close stdin, SIGTERM, SIGKILL after a grace period) and
     * free everything. */
    void (*destroy)(aw_tool_source *s);
} aw_tool_source_ops;

struct aw_tool_source {
    const aw_tool_source_ops *ops;
    void *impl;
    char *name;                    /* for messages: "command tools", "mcp server 'fs'" */
    aw_tool_log_fn log;            /* set by the toolbox */
    void *log_ctx;
    void (*changed)(void *ctx);    /* the source's tool list changed (set by the toolbox) */
    void *changed_ctx;
    /* Set by the source while it fetches a new tool list after its peer
     * said the list changed; `changed` is called when the fetch ends,
     * whatever it found, so a run can wait for the new list. */
    bool refreshing;
};

/* ---- the toolbox --------------------------------------------------------- */

typedef struct aw_toolbox aw_toolbox;
typedef struct aw_tool_call aw_tool_call;

aw_toolbox *aw_toolbox_new(aw_loop *l, const aw_allocator *alloc);
/* Frees every source (shutting servers down) and cancels calls in flight. */
void aw_toolbox_free(aw_toolbox *b);
/* The toolbox takes the source (and frees it). */
int aw_toolbox_add(aw_toolbox *b, aw_tool_source *src);
/* Only tools matching one of the patterns are offered ("read_file",
 * "fs__*", "*"); NULL or none: all. A pattern that matches no tool once
 * the sources are ready is reported through the log. */
int aw_toolbox_allow(aw_toolbox *b, const char *const *patterns, size_t n);
void aw_toolbox_set_log(aw_toolbox *b, aw_tool_log_fn fn, void *ctx);
void aw_toolbox_on_change(aw_toolbox *b, void (*fn)(void *ctx), void *ctx);

/* Start every source; ready is called (from the loop) once all have
 * answered. A source that fails is logged and left out (the run goes on
 * with the others). Called again, or after the toolbox is ready, it only
 * adds `ready` to those told (several runs may share a toolbox). */
int aw_toolbox_start(aw_toolbox *b, void (*ready)(void *ctx), void *ctx);
/* Take back a `ready` not yet told (its run is going away). */
void aw_toolbox_forget(aw_toolbox *b, void (*ready)(void *ctx), void *ctx);
/* Whether a source is fetching a changed tool list right now (a run
 * waits for it, briefly, before its next turn). */
bool aw_toolbox_refreshing(const aw_toolbox *b);
/* The tools offered now, in a stable order (valid until the next change). */
const aw_tool_def *aw_toolbox_defs(const aw_toolbox *b, size_t *count);

/* Call a tool by name with its arguments (an object). timeout_ms > 0 ends
 * the call with a timed-out failure after that long. An unknown name is
 * reported through done, like any failure. */
int aw_toolbox_call(aw_toolbox *b, aw_text name, const aw_json_value *args, int64_t timeout_ms,
                    const aw_tool_call_opts *opts, aw_tool_done_fn done, void *ctx, aw_tool_call **out,
                    aw_error *err);
void aw_tool_call_cancel(aw_tool_call *c);

/* ---- command tools (--tools FILE) ---------------------------------------- */

/* A JSON array of {name, description, input_schema, command: [argv...],
 * timeout_ms, cwd, env}. Each call runs the command in a process group of
 * its own with the arguments as JSON on stdin; its stdout is the result; a
 * non-zero exit is a failed call with the tail of stderr. The providers'
 * keys (OPENAI_API_KEY, ANTHROPIC_API_KEY) are not passed on unless the
 * tool's "env" sets them. Errors name the index and the field. The
 * definitions are copied. */
aw_tool_source *aw_command_tools_new(aw_loop *l, const aw_json_value *defs, const char *base_dir,
                                     const aw_allocator *alloc, aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
