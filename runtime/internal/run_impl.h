/* The run's state, shared by the files that make up a run:
 *   run.c        life (new, start, cancel, finish), turns and continuation
 *   run_model.c  the request, the streamed reply, retries and fallbacks
 *   run_tools.c  executing a turn's calls, cutting and budgeting outputs
 *   run_emit.c   agent events, runtime events, accounting rows, steps
 *   run_final.c  the final report's layers, contracts, synthesized reports
 * Not installed. */
#ifndef AW_RUN_IMPL_H
#define AW_RUN_IMPL_H

#include "agentwire/run.h"
#include "agentwire/thread.h"

typedef enum call_state { CALL_PENDING = 0, CALL_RUNNING, CALL_DONE } call_state;

/* What a call is to the run. */
typedef enum call_kind {
    CALL_TOOL = 0,      /* executed by the toolbox */
    CALL_PROGRESS,      /* agent__progress_report: shown, not executed */
    CALL_ASK,           /* agent__ask_human */
    CALL_FINAL,         /* native agent__final_report */
    CALL_REJECTED       /* a native call refused before running: answered with the reason */
} call_kind;

typedef struct run_call {
    struct aw_run *run;
    call_kind kind;
    call_state state;
    char *tool;
    char *call_id;
    char *slot;          /* xml slot ("0001", "PROGRESS") or "" */
    const char *source;  /* "xml", "native" */
    aw_json_doc *args;   /* an object */
    char *args_text;     /* compact JSON */
    bool native;         /* came as a native call (or stands for one): answered with a tool message */
    bool recovered;      /* read from the text in a model's own dialect (source "recovered") */
    const char *dialect; /* ...that dialect's name (static) */
    aw_tool_call *handle;
    int64_t started_ms, ended_ms;
    bool ok, timed_out;
    aw_buf output;       /* what the model sees */
    uint64_t output_bytes;
} run_call;

typedef struct run_final {
    bool have;
    aw_run_status status;
    aw_report_format format;
    aw_buf content;
    aw_json_doc *json;   /* json format / contract: the parsed value */
    const char *command; /* accounting: agent__final_report_xml or agent__final_report */
} run_final;

struct aw_run {
    aw_loop *loop;
    const aw_allocator *alloc;
    aw_run_config cfg;
    /* owned copies of the configuration's strings */
    char *system_prompt, *task, *prefill, *agent_name, *parent_session_id;
    aw_json_doc *final_schema_doc, *resume_doc, *history_doc;
    aw_run_observer *observers;
    char session_id[40], execution_id[40];
    aw_run_info info;

    aw_transport *transport;
    aw_tool_def *tool_defs;   /* what the transport and the provider get */
    bool tools_changed;       /* the toolbox's list changed: rebuilt before the next turn */
    aw_timer *tools_wait;     /* waiting for a changed list before the next turn */
    bool tools_waited;        /* ...and the wait ran out */
    size_t tool_def_count;
    aw_json_doc *builtin_schemas;

    aw_chat *chat;            /* context messages */
    aw_thread_writer *tw;     /* context xml */
    aw_buf thread;
    size_t thread_tail_len;

    unsigned turn;            /* the turn under way (or the last one) */
    unsigned first_turn;      /* resuming: the first turn of this process */
    size_t events_emitted;

    /* the model request under way */
    size_t model_index;
    unsigned attempt;
    aw_model_call *mcall;
    aw_timer *retry_timer;
    aw_extractor *x;
    aw_buf reply;             /* the raw reply text */
    aw_buf visible;           /* the text outside tags */
    aw_json_doc *native_doc;  /* native calls as an array ({id, function: {name, arguments}}) */
    aw_json_value *native;
    size_t native_current;    /* the native call the extractor is checking */
    bool native_answered;     /* ...and it was accepted */
    aw_buf last_rejection;
    aw_buf feedback;          /* the TURN-FAILED lines of this turn */
    size_t rejections;
    size_t rejections_answered; /* native calls refused: answered by their tool messages */
    unsigned native_tool_calls; /* native tool calls of this reply, for max_calls_per_turn */
    int64_t request_started_ms, first_byte_ms;
    aw_model_usage turn_usage;
    bool turn_has_usage;
    char stop_reason[64];
    bool reply_failed;        /* an extractor error (out of memory) */

    /* the calls of this turn */
    run_call *calls;
    size_t ncalls, cap_calls;
    size_t running;
    run_call *asking;         /* the call waiting for aw_run_answer */
    bool starting_calls;

    run_final final;
    int contract_tries;
    bool final_invalid;       /* a contract report that does not validate, no tries left */

    /* budgets and totals */
    aw_timer *run_timer;
    int64_t started_ms, step_started_ms;
    double prior_seconds;     /* resumed sessions: time spent before */
    aw_model_usage usage;
    bool usage_known;
    int64_t context_base_tokens; /* the last request's input + output tokens */
    size_t context_base_bytes;   /* bytes of history when that was measured */
    aw_buf progress_message;

    /* the step under way: what on_step receives */
    aw_json_doc *step_doc;
    aw_json_value *step_events, *step_accounting, *step_chat;
    size_t chat_count_at_step;

    aw_run_done_fn done;
    void *done_ctx;
    aw_run_result result;
    char result_stop[32];
    char synthesized_why[256]; /* the synthesized report's text, when memory fails to hold it */
    bool started, finishing, finished, cancelled;
    aw_buf cancel_reason;
    /* Work done from the loop rather than inside the caller's stack (a
     * provider or a tool source must not see the run end under it). One
     * timer made when the run starts, so that asking for it never needs
     * memory: a run out of memory can still end. */
    aw_timer *wake;
    int wake_job;             /* run_wake_job */
    bool step_partial;
    const char *step_stop_reason; /* the final step's (aw_run_step.stop_reason) */
};

/* What the wake timer does next; a stronger job replaces a weaker one. */
typedef enum run_wake_job { WAKE_NONE = 0, WAKE_START, WAKE_NEXT_TURN, WAKE_REPLY_FAILED, WAKE_DONE } run_wake_job;

/* run.c */
void aw__run_wake(aw_run *r, run_wake_job job);
void aw__run_next_turn(aw_run *r);
void aw__run_end_turn(aw_run *r);
void aw__run_end_tools(aw_run *r);
void aw__run_fail(aw_run *r, const char *stop_reason, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void aw__run_log(aw_run *r, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int64_t aw__run_now(const aw_run *r);

/* run_model.c */
/* Token counts as a provider reports them, which may be anything, added
 * without overflowing. */
int64_t aw__add_count(int64_t a, int64_t b);
int aw__run_send(aw_run *r);
void aw__run_cancel_request(aw_run *r);
void aw__run_reset_reply(aw_run *r);

/* run_tools.c */
void aw__run_start_calls(aw_run *r);
void aw__run_cancel_calls(aw_run *r);
run_call *aw__run_add_call(aw_run *r, call_kind kind, aw_text tool, aw_text call_id, aw_text slot,
                           const char *source, const aw_json_value *args, bool native);
void aw__run_free_calls(aw_run *r);
void aw__run_free_call(aw_run *r, run_call *c);
int aw__run_answer_call(aw_run *r, run_call *c, bool ok, const char *text, size_t len);
int aw__run_history_after_tools(aw_run *r);
/* Answer every tool call of the turn with `why` instead of running it
 * (the last turn takes only the final report). */
int aw__run_refuse_tools(aw_run *r, const char *why);
#define LAST_TURN_REFUSAL "(tool failed: not run: this was the last turn, which takes only the final report)"


/* run_emit.c */
int aw__emit_event(aw_run *r, aw_json_doc *doc, aw_json_value *event);
aw_json_value *aw__event_new(aw_json_doc *doc, const char *type, unsigned iteration);
int aw__emit_message(aw_run *r, const char *role, const char *text, size_t len);
int aw__emit_runtime(aw_run *r, aw_json_doc *doc, aw_json_value *ev);
int aw__emit_accounting(aw_run *r, aw_json_doc *doc, aw_json_value *row);
void aw__emit_progress(aw_run *r, const char *phase);
int aw__step_begin(aw_run *r);
int aw__step_end(aw_run *r, bool final, aw_error *err);
int aw__chat_append(aw_run *r, const aw_chat_msg *m);
aw_json_value *aw__usage_json(aw_json_doc *doc, const aw_model_usage *u);

/* run_final.c */
int aw__final_from_xml(aw_run *r, const aw_x_final *f);
int aw__final_from_native(aw_run *r, run_call *c);
int aw__final_from_text(aw_run *r);
/* A contract run: the report must be the contract's document. 0: valid;
 * AW_EVALID: not (feedback written, or the run failed when no tries are
 * left). */
int aw__final_check_contract(aw_run *r);
void aw__final_synthesize(aw_run *r, const char *why);

#endif
