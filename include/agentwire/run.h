/* agentwire runtime — one agent run: turns until a final report or a
 * budget ends.
 *
 * Each turn the run sends the conversation to its model (with the XML-NEXT
 * notice in the xml transports), feeds the reply to the streaming
 * extractor as it arrives, executes the accepted calls concurrently, and
 * records what happened. Everything a run produces leaves through its
 * observers: agent events (the <thread> format's events), runtime events
 * (the envelope adapter's input), accounting rows, traces, and the end of
 * each step (where a store commits). The run never prints or exits.
 *
 * A run lives on a loop: aw_run_start returns at once and `done` is called
 * when it ends. Several runs (sub-agents, a worker's runs) share one loop. */
#ifndef AGENTWIRE_RUN_H
#define AGENTWIRE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"
#include "error.h"
#include "json.h"
#include "loop.h"
#include "provider.h"
#include "tools.h"
#include "transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tool a run offers with --interactive: the model asks the human. */
#define AW_TOOL_ASK_HUMAN "agent__ask_human"

typedef enum aw_context_mode {
    AW_CONTEXT_MESSAGES = 0, /* native chat history */
    AW_CONTEXT_XML           /* the whole history as one <thread> user message */
} aw_context_mode;

typedef struct aw_run aw_run;

/* Who a run is, for every record it leaves. */
typedef struct aw_run_info {
    const char *session_id;
    const char *execution_id;
    const char *parent_session_id; /* NULL for a top-level run */
    const char *agent_name;        /* NULL when none */
    unsigned depth;                /* 0 for a top-level run */
    const char *provider;          /* the kind answering now ("openai") */
    const char *model;
    unsigned turn;                 /* the turn under way (from 1), 0 before the first */
} aw_run_info;

/* What the status line shows. */
typedef struct aw_run_progress {
    unsigned turn, max_turns;
    int64_t input_tokens, output_tokens; /* so far, this run */
    double cost_usd;                     /* < 0: unknown */
    const char *phase;                   /* "waiting for the model", "streaming", "running tools" */
    size_t running_tools;
    const char *const *tool_names;       /* the running ones */
    const int64_t *tool_started_ms;      /* loop clock */
    const char *progress_message;        /* the last agent__progress_report, or NULL */
} aw_run_progress;

/* One step (turn), when it is over: what a store writes in one
 * transaction. events/accounting are JSON arrays of what the observers
 * received during the step. */
typedef struct aw_run_step {
    unsigned turn;
    const aw_json_value *events;
    const aw_json_value *accounting;
    const aw_json_value *state;   /* the run's state after the step (the snapshot module's input) */
    const aw_json_value *resume;  /* what resuming after this step needs (see aw_run_config.resume) */
    bool final;                   /* the run ends with this step */
    bool partial;                 /* the step's turn was cut (a failure, a cancel): resuming
                                     starts from the step before, asking the model again */
    const char *stop_reason;      /* final steps: why the run ended ("completed", "max_turns",
                                     ...), as its "status" runtime event says; NULL otherwise */
} aw_run_step;

typedef struct aw_run_observer {
    void *ctx;
    /* An agent event ({"type": "message"|"tool_call"|"tool_result"|"error"|
     * "human_input_requested"|"human_input_received"|"completion", ...}). */
    void (*on_event)(void *ctx, const aw_run_info *run, const aw_json_value *event);
    /* A runtime event in aw_envelope_adapter_handle's input form
     * ({"event": "step_started"|..., ...}). The run's last, "status",
     * comes after its final step's on_step: a store has kept the end
     * before live destinations hear of it. */
    void (*on_runtime)(void *ctx, const aw_run_info *run, const aw_json_value *event);
    /* An accounting row: a model request or a tool call. */
    void (*on_accounting)(void *ctx, const aw_run_info *run, const aw_json_value *row);
    /* A model reply, whole ({"text", "tool_calls", "usage", "stop_reason"}):
     * what --record writes and replay:FILE plays. */
    void (*on_reply)(void *ctx, const aw_run_info *run, const aw_json_value *reply);
    /* The end of a step. Nonzero: the record could not be kept (a full
     * disk): the run stops with a failure saying so. */
    int (*on_step)(void *ctx, const aw_run_info *run, const aw_run_step *step, aw_error *err);
    void (*on_log)(void *ctx, const aw_run_info *run, int level, const char *msg);
    void (*on_progress)(void *ctx, const aw_run_info *run, const aw_run_progress *p);
} aw_run_observer;

/* The question of agent__ask_human; answer with aw_run_answer (now or
 * later, from the loop). */
typedef void (*aw_ask_fn)(void *ctx, aw_run *run, const char *question, size_t len);

typedef struct aw_run_budgets {
    unsigned max_turns;          /* 0: 10; the last turn opens only the final-report slot */
    unsigned max_calls_per_turn; /* 0: 10 */
    unsigned parallel;           /* tools run at once; 0: 4 */
    int64_t context_window;      /* tokens; 0: no limit */
    int64_t timeout_ms;          /* the whole run; 0: none */
    int64_t tool_timeout_ms;     /* each call; 0: 120 s */
    size_t max_tool_output;      /* bytes of one result the model sees; 0: 100 000 */
    unsigned max_retries;        /* per model request, on retryable errors; 0: 3 (-1 for none: see no_retries) */
    bool no_retries;
    int64_t retry_base_ms;       /* 0: 1000; doubled each time, with jitter, capped at 30 s */
} aw_run_budgets;

typedef struct aw_run_config {
    aw_provider *const *models;  /* the first, then the fallbacks; not owned */
    size_t model_count;
    aw_toolbox *tools;           /* may be NULL; not owned; started by the run if not yet */
    aw_transport_mode transport;
    aw_context_mode context;
    const char *prefill;         /* xml context: text after </thread> */
    const char *system_prompt;
    const char *task;
    aw_report_format format;     /* the final report's */
    const aw_json_value *final_schema; /* json format: the user's schema */
    const aw_contract *contract; /* the reply must be this contract's document */
    unsigned contract_retries;   /* send the issues back and retry this many times */
    int max_tokens;
    double temperature;
    bool has_temperature;
    aw_run_budgets budgets;
    /* Native and xml-final transports: tool calls a model wrote in its own
     * dialect (AW_DIALECT_*: Hermes, Qwen3-Coder XML, Llama JSON, ...) that
     * its server left in the text are recovered from a reply that made no
     * native call, and run like native ones (accounting source
     * "recovered", with the dialect). 0: none; AW_DIALECT_AUTO: all. */
    unsigned recover_calls;
    bool interactive;            /* offer agent__ask_human */
    aw_ask_fn ask;
    void *ask_ctx;
    /* Identity; NULL ids are made fresh (UUID v4). */
    const char *session_id;
    const char *parent_session_id;
    const char *agent_name;
    unsigned depth;
    const char *nonce;           /* the transport nonce (continuing a session keeps it) */
    /* Continuing: the state a previous step's `resume` recorded, and the
     * agent events so far (JSON array); the next turn follows them. */
    const aw_json_value *resume;
    const aw_json_value *history;
    const aw_run_observer *observers;
    size_t observer_count;
    const aw_allocator *alloc;
} aw_run_config;

typedef enum aw_run_status { AW_RUN_SUCCESS = 0, AW_RUN_FAILURE, AW_RUN_PARTIAL } aw_run_status;

/* How a run ended. */
typedef struct aw_run_result {
    aw_run_status status;        /* the final report's status */
    aw_report_format format;
    aw_text content;             /* the report as the model wrote it (or the synthesized one) */
    const aw_json_value *json;   /* json format or a contract: the parsed value */
    bool synthesized;            /* no report came: the run wrote this failure itself */
    const char *stop_reason;     /* "completed", "steps_limit", "token_limit", "time_limit",
                                    "retry_limit", "error", "user_requested" */
    unsigned turns;
    aw_model_usage usage;        /* totals */
} aw_run_result;

typedef void (*aw_run_done_fn)(void *ctx, aw_run *run, const aw_run_result *res);

/* Check the configuration and make a run (nothing is sent yet). */
aw_run *aw_run_new(aw_loop *l, const aw_run_config *cfg, aw_error *err);
void aw_run_free(aw_run *r);
int aw_run_start(aw_run *r, aw_run_done_fn done, void *ctx);
/* Stop the run: the model request and the running tools are cancelled,
 * the records are written, and done follows (from the loop) with a
 * failure whose stop reason is "user_requested" (or the reason given). */
void aw_run_cancel(aw_run *r, const char *why);
/* The answer to agent__ask_human. */
int aw_run_answer(aw_run *r, const char *answer, size_t len);
const aw_run_info *aw_run_info_of(const aw_run *r);
/* The result, once done has been called. */
const aw_run_result *aw_run_result_of(const aw_run *r);

#ifdef __cplusplus
}
#endif
#endif
