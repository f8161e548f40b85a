/* A run's life: made from its configuration, started once its tools are
 * ready, one turn after another until a final report, a budget or a
 * failure ends it; then the last records and `done`, from the loop.
 *
 * A turn: step_started, the request (run_model.c), the reply's calls
 * executed (run_tools.c), their answers put in the history, step_completed
 * with the continuation decision, and the step handed to the observers. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "internal/rt_util.h"
#include "internal/run_impl.h"

#define DEFAULT_MAX_TURNS 10

static void tools_ready(void *ctx);
static void tools_changed(void *ctx);
static int build_tools(aw_run *r);
static int make_transport(aw_run *r);
#define THREAD_TAIL "\n</thread>"

int64_t aw__run_now(const aw_run *r)
{
    (void)r;
    return aw_loop_clock();
}

void aw__run_log(aw_run *r, int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < r->cfg.observer_count; i++)
        if (r->observers[i].on_log)
            r->observers[i].on_log(r->observers[i].ctx, &r->info, level, msg);
}

static aw_json_doc *copy_doc(const aw_allocator *a, const aw_json_value *v, bool *failed)
{
    if (!v)
        return NULL;
    aw_json_doc *d = aw_json_doc_new(a);
    aw_json_value *c = d ? aw_json_copy(d, v) : NULL;
    if (!c) {
        aw_json_doc_free(d);
        *failed = true;
        return NULL;
    }
    aw_json_doc_set_root(d, c);
    return d;
}

static char *dup_opt(const aw_allocator *a, const char *s, bool *failed)
{
    if (!s)
        return NULL;
    char *d = aw_rt_strdup(a, s);
    if (!d)
        *failed = true;
    return d;
}

aw_run *aw_run_new(aw_loop *l, const aw_run_config *cfg, aw_error *err)
{
    aw_error_clear(err);
    if (!cfg || cfg->model_count == 0 || !cfg->models) {
        aw_rt_error(err, AW_EINVAL, "a run needs a model");
        return NULL;
    }
    if (!cfg->task && !cfg->resume) {
        aw_rt_error(err, AW_EINVAL, "a run needs a task");
        return NULL;
    }
    if (cfg->context == AW_CONTEXT_XML && cfg->transport == AW_TRANSPORT_NATIVE) {
        aw_rt_error(err, AW_EINVAL,
                    "the xml context keeps the whole history in one message, which native tool calls cannot "
                    "answer: use it with --transport xml or xml-final");
        return NULL;
    }
    for (size_t i = 0; i < cfg->model_count; i++)
        if (cfg->transport != AW_TRANSPORT_XML && !aw_provider_has_native_tools(cfg->models[i])) {
            aw_rt_error(err, AW_EINVAL, "%s takes no native tools: use --transport xml with it",
                        aw_provider_kind(cfg->models[i]));
            return NULL;
        }
    const aw_allocator *a = cfg->alloc ? cfg->alloc : aw_loop_allocator(l);
    aw_run *r = aw_malloc(a, sizeof *r);
    if (!r) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(r, 0, sizeof *r);
    r->loop = l;
    r->alloc = a;
    r->cfg = *cfg;
    r->cfg.alloc = a;
    if (!r->cfg.budgets.max_turns)
        r->cfg.budgets.max_turns = DEFAULT_MAX_TURNS;
    bool failed = false;
    r->system_prompt = dup_opt(a, cfg->system_prompt, &failed);
    r->task = dup_opt(a, cfg->task, &failed);
    r->prefill = dup_opt(a, cfg->prefill, &failed);
    r->agent_name = dup_opt(a, cfg->agent_name, &failed);
    r->parent_session_id = dup_opt(a, cfg->parent_session_id, &failed);
    r->final_schema_doc = copy_doc(a, cfg->final_schema, &failed);
    r->resume_doc = copy_doc(a, cfg->resume, &failed);
    r->history_doc = copy_doc(a, cfg->history, &failed);
    r->cfg.final_schema = r->final_schema_doc ? aw_json_doc_root(r->final_schema_doc) : NULL;
    r->cfg.resume = r->resume_doc ? aw_json_doc_root(r->resume_doc) : NULL;
    r->cfg.history = r->history_doc ? aw_json_doc_root(r->history_doc) : NULL;
    if (cfg->observer_count) {
        r->observers = aw_malloc(a, cfg->observer_count * sizeof *r->observers);
        if (r->observers)
            memcpy(r->observers, cfg->observers, cfg->observer_count * sizeof *r->observers);
        else
            failed = true;
    }
    aw_buf_init(&r->thread, a);
    aw_buf_init(&r->reply, a);
    aw_buf_init(&r->visible, a);
    aw_buf_init(&r->feedback, a);
    aw_buf_init(&r->last_rejection, a);
    aw_buf_init(&r->progress_message, a);
    aw_buf_init(&r->cancel_reason, a);
    aw_buf_init(&r->final.content, a);
    r->usage.cost_usd = -1;
    if (cfg->session_id && strlen(cfg->session_id) < sizeof r->session_id)
        strcpy(r->session_id, cfg->session_id);
    else
        aw_rt_uuid4(r->session_id);
    aw_rt_uuid4(r->execution_id);
    r->info = (aw_run_info){r->session_id, r->execution_id, r->parent_session_id, r->agent_name, cfg->depth,
                            aw_provider_kind(cfg->models[0]), aw_provider_model(cfg->models[0]), 0};
    if (cfg->context == AW_CONTEXT_XML) {
        aw_thread_options to = {.prefill = r->prefill, .prefill_len = r->prefill ? strlen(r->prefill) : 0, .alloc = a};
        r->tw = aw_thread_writer_new(&to);
        if (!r->tw || aw_thread_writer_start(r->tw, &r->thread))
            failed = true;
        r->thread_tail_len = strlen(THREAD_TAIL) + (r->prefill && *r->prefill ? 1 + strlen(r->prefill) : 0);
    }
    r->chat = aw_chat_new(a);
    if (!r->chat)
        failed = true;
    if (failed) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        aw_run_free(r);
        return NULL;
    }
    return r;
}

void aw_run_free(aw_run *r)
{
    if (!r)
        return;
    const aw_allocator *a = r->alloc;
    aw__run_cancel_request(r);
    aw__run_cancel_calls(r);
    aw__run_free_calls(r);
    aw_free(a, r->calls);
    aw_timer_free(r->run_timer);
    aw_timer_free(r->wake);
    aw_timer_free(r->tools_wait);
    if (r->cfg.tools) {
        aw_toolbox_forget(r->cfg.tools, tools_ready, r);
        aw_toolbox_on_change(r->cfg.tools, NULL, NULL);
    }
    aw_extractor_free(r->x);
    aw_transport_free(r->transport);
    aw_free(a, r->tool_defs);
    aw_json_doc_free(r->builtin_schemas);
    aw_chat_free(r->chat);
    aw_thread_writer_free(r->tw);
    aw_buf_free(&r->thread);
    aw_buf_free(&r->reply);
    aw_buf_free(&r->visible);
    aw_buf_free(&r->feedback);
    aw_buf_free(&r->last_rejection);
    aw_buf_free(&r->progress_message);
    aw_buf_free(&r->cancel_reason);
    aw_buf_free(&r->final.content);
    aw_json_doc_free(r->final.json);
    aw_json_doc_free(r->native_doc);
    aw_json_doc_free(r->step_doc);
    aw_json_doc_free(r->final_schema_doc);
    aw_json_doc_free(r->resume_doc);
    aw_json_doc_free(r->history_doc);
    aw_free(a, r->observers);
    aw_free(a, r->system_prompt);
    aw_free(a, r->task);
    aw_free(a, r->prefill);
    aw_free(a, r->agent_name);
    aw_free(a, r->parent_session_id);
    aw_free(a, r);
}

const aw_run_info *aw_run_info_of(const aw_run *r) { return &r->info; }
const aw_run_result *aw_run_result_of(const aw_run *r) { return r->finished ? &r->result : NULL; }

/* ---- ending ---------------------------------------------------------------------- */

static void call_done(aw_run *r)
{
    r->finished = true;
    if (r->done)
        r->done(r->done_ctx, r, &r->result);
}

static void finish(aw_run *r, const char *stop_reason, bool partial)
{
    if (r->finishing)
        return;
    r->finishing = true;
    aw__run_cancel_request(r);
    aw__run_cancel_calls(r);
    aw_timer_free(r->run_timer);
    r->run_timer = NULL;
    if (!r->final.have)
        aw__final_synthesize(r, "the run ended without a final report");
    snprintf(r->result_stop, sizeof r->result_stop, "%s", stop_reason);
    r->result.status = r->final.status;
    r->result.format = r->final.format;
    r->result.content = (aw_text){r->final.content.data ? r->final.content.data : "", r->final.content.len};
    if (r->result.synthesized && !r->final.content.len) /* no memory to keep the reason */
        r->result.content = (aw_text){r->synthesized_why, strlen(r->synthesized_why)};
    r->result.json = r->final.json ? aw_json_doc_root(r->final.json) : NULL;
    r->result.stop_reason = r->result_stop;
    r->result.turns = r->turn;
    r->result.usage = r->usage;

    if (!r->step_doc)
        aw__step_begin(r);
    /* The last agent event: the report (the reference's completion). */
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    aw_json_value *ev = d ? aw__event_new(d, "completion", r->turn) : NULL;
    static const char *const st[] = {"success", "failure", "partial"};
    bool lost = !ev || aw_json_object_set_string(d, ev, "result", r->result.content.ptr, r->result.content.len) ||
                aw_json_object_set_string(d, ev, "status", st[r->result.status], strlen(st[r->result.status])) ||
                aw_json_object_set_bool(d, ev, "verified", false) || aw__emit_event(r, d, ev);
    aw_json_doc_free(d);

    /* The final report's accounting row (seed 001: agent__final_report_xml
     * for the XML report). */
    if (r->final.command && strcmp(r->final.command, "text") != 0 && !r->result.synthesized) {
        d = aw_json_doc_new(r->alloc);
        aw_json_value *row = d ? aw_json_new_object(d) : NULL;
        bool xml = strcmp(r->final.command, AW_COMMAND_FINAL_XML) == 0;
        lost = lost || !row || aw_json_object_set_string(d, row, "kind", "tool", 4) ||
               aw_json_object_set_string(d, row, "source", xml ? "xml" : "native", xml ? 3 : 6) ||
               aw_json_object_set_string(d, row, "command", r->final.command, strlen(r->final.command)) ||
               (xml && aw_json_object_set_string(d, row, "slot", "FINAL", 5)) ||
               aw_json_object_set_string(d, row, "status", st[r->result.status], strlen(st[r->result.status])) ||
               aw_json_object_set_int(d, row, "latency_ms", 0) ||
               aw_json_object_set_int(d, row, "request_bytes", (int64_t)r->final.content.len) ||
               aw_json_object_set_int(d, row, "response_bytes", 0) || aw__emit_accounting(r, d, row);
        aw_json_doc_free(d);
    }

    d = aw_json_doc_new(r->alloc);
    aw_json_value *status = d ? aw_json_new_object(d) : NULL;
    lost = lost || !status || aw_json_object_set_string(d, status, "event", "status", 6) ||
           aw_json_object_set_string(d, status, "stop_reason", stop_reason, strlen(stop_reason)) ||
           aw_json_object_set_int(d, status, "step_count", r->turn) ||
           (r->result.status == AW_RUN_SUCCESS
                ? aw_json_object_set_null(d, status, "error_message")
                : aw_json_object_set_string(d, status, "error_message", r->result.content.ptr,
                                            r->result.content.len > 500 ? 500 : r->result.content.len)) ||
           aw_json_object_set_string(d, status, "last_response", r->result.content.ptr,
                                     r->result.content.len > 500 ? 500 : r->result.content.len);

    /* The final step is stored before the status goes out: a process
     * killed between the two has kept the end (the status is news of it);
     * the other way round, a worker killed there left a run that said it
     * had ended and another worker ran its last turn again. */
    aw_error err;
    r->step_partial = partial;
    r->step_stop_reason = stop_reason;
    if (aw__step_end(r, true, &err))
        aw__run_log(r, AW_LOG_ERROR, "the run's records could not be kept: %s", err.message);
    lost = lost || aw__emit_runtime(r, d, status);
    aw_json_doc_free(d);
    /* The run ends anyway; its report stands, the records lack its end. */
    if (lost)
        aw__run_log(r, AW_LOG_ERROR, "out of memory writing the run's last records");
    aw__run_wake(r, WAKE_DONE);
}

void aw__run_fail(aw_run *r, const char *stop_reason, const char *fmt, ...)
{
    if (r->finishing)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aw__run_log(r, AW_LOG_ERROR, "%s", msg);
    /* a report that came in the turn being cut does not count */
    aw__final_synthesize(r, msg);
    finish(r, stop_reason, true);
}

void aw_run_cancel(aw_run *r, const char *why)
{
    if (!r->started || r->finishing)
        return;
    r->cancelled = true;
    aw__run_fail(r, "user_requested", "%s", why && *why ? why : "the run was stopped");
}

static void run_timed_out(void *ctx)
{
    aw_run *r = ctx;
    aw_timer_free(r->run_timer);
    r->run_timer = NULL;
    aw__run_fail(r, "time_limit", "the run reached its time limit of %.0f s", (double)r->cfg.budgets.timeout_ms / 1000.0);
}

/* ---- turns -------------------------------------------------------------------------- */

static int available_tools(aw_run *r, aw_json_doc *d, aw_json_value *ev)
{
    aw_json_value *list = aw_json_new_array(d);
    for (size_t i = 0; list && i < r->tool_def_count; i++) {
        aw_json_value *s = aw_json_new_string(d, r->tool_defs[i].name.ptr, r->tool_defs[i].name.len);
        if (!s || aw_json_array_push(d, list, s))
            list = NULL;
    }
    return list && !aw_json_object_set(d, ev, "available_tools", 15, list) ? 0 : AW_ENOMEM;
}

#define TOOLS_WAIT_MS 5000

static void tools_wait_over(void *ctx)
{
    aw_run *r = ctx;
    aw_timer_free(r->tools_wait);
    r->tools_wait = NULL;
    r->tools_waited = true;
    aw__run_log(r, AW_LOG_WARN, "a changed tool list did not arrive within %d ms; going on with the old one",
                TOOLS_WAIT_MS);
    aw__run_wake(r, WAKE_NEXT_TURN);
}

void aw__run_next_turn(aw_run *r)
{
    if (r->finishing)
        return;
    /* A server said its tools changed and is sending the new list (the
     * call that changed them may have been this very turn's): wait for it,
     * a little, so the next request offers what is there. */
    if (r->cfg.tools && aw_toolbox_refreshing(r->cfg.tools) && !r->tools_waited) {
        if (!r->tools_wait && !(r->tools_wait = aw_loop_timer(r->loop, TOOLS_WAIT_MS, tools_wait_over, r)))
            aw__run_fail(r, "error", "out of memory");
        return;
    }
    r->tools_waited = false;
    aw_timer_free(r->tools_wait);
    r->tools_wait = NULL;
    /* The toolbox said its tools changed (an MCP server's list_changed):
     * the new list is offered from this turn on, between turns, never
     * under a reply that is being read. */
    if (r->tools_changed) {
        r->tools_changed = false;
        if (build_tools(r) || make_transport(r)) {
            aw__run_fail(r, "error", "out of memory rebuilding the tool list");
            return;
        }
        aw__run_log(r, AW_LOG_INFO, "the tool list changed: %zu tools offered", r->tool_def_count);
    }
    r->turn++;
    r->info.turn = r->turn;
    r->model_index = 0;
    r->attempt = 0;
    r->info.provider = aw_provider_kind(r->cfg.models[0]);
    r->info.model = aw_provider_model(r->cfg.models[0]);
    if (!r->step_doc && aw__step_begin(r)) {
        aw__run_fail(r, "error", "out of memory");
        return;
    }
    r->step_started_ms = aw__run_now(r);
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    aw_json_value *ev = d ? aw_json_new_object(d) : NULL;
    size_t messages = r->cfg.context == AW_CONTEXT_XML ? r->events_emitted : aw_chat_count(r->chat);
    if (!ev || aw_json_object_set_string(d, ev, "event", "step_started", 12) ||
        aw_json_object_set_int(d, ev, "step_number", r->turn) ||
        aw_json_object_set_int(d, ev, "message_count", (int64_t)messages) || available_tools(r, d, ev) ||
        aw__emit_runtime(r, d, ev)) {
        aw_json_doc_free(d);
        aw__run_fail(r, "error", "out of memory");
        return;
    }
    aw_json_doc_free(d);
    if (aw__run_send(r))
        aw__run_fail(r, "error", "out of memory sending the request");
}

static bool blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\n' && p[i] != '\r' && p[i] != '\t')
            return false;
    return true;
}

/* The reply is in: record it, settle the report, run the calls. */
void aw__run_end_turn(aw_run *r)
{
    if (r->visible.len && !blank(r->visible.data, r->visible.len) &&
        aw__emit_message(r, "assistant", r->visible.data, r->visible.len))
        goto oom;
    if (r->cfg.context == AW_CONTEXT_MESSAGES) {
        /* The model's own words as it wrote them (tags included), and every
         * native call, each of which gets its answer after the tools. */
        size_t n = 0;
        for (size_t i = 0; i < r->ncalls; i++)
            n += r->calls[i].native;
        aw_chat_call *calls = n ? aw_malloc(r->alloc, n * sizeof *calls) : NULL;
        if (n && !calls)
            goto oom;
        size_t k = 0;
        for (size_t i = 0; i < r->ncalls; i++) {
            run_call *c = &r->calls[i];
            if (c->native)
                calls[k++] = (aw_chat_call){{c->call_id, strlen(c->call_id)},
                                            {c->tool, strlen(c->tool)},
                                            {c->args_text, strlen(c->args_text)}};
        }
        /* With calls recovered from the text, the history shows what the
         * server should have made of the reply: the text without their
         * markup, and the calls as native ones. */
        bool recovered = false;
        for (size_t i = 0; i < r->ncalls; i++)
            recovered = recovered || r->calls[i].recovered;
        const aw_buf *text = recovered ? &r->visible : &r->reply;
        aw_chat_msg m = {.role = AW_CHAT_ASSISTANT,
                         .content = {text->data ? text->data : "", text->len},
                         .calls = calls,
                         .call_count = n};
        int rc = aw__chat_append(r, &m);
        aw_free(r->alloc, calls);
        if (rc)
            goto oom;
    }
    /* Layer 1 of a native report; a native reply of text alone is the
     * answer, as the chat APIs mean it. */
    for (size_t i = 0; i < r->ncalls && !r->final.have; i++)
        if (r->calls[i].kind == CALL_FINAL && aw__final_from_native(r, &r->calls[i]))
            goto oom;
    if (!r->final.have && aw_transport_mode_of(r->transport) == AW_TRANSPORT_NATIVE && r->ncalls == 0 &&
        r->rejections == 0 && r->visible.len && !blank(r->visible.data, r->visible.len) && aw__final_from_text(r))
        goto oom;
    if (r->final.have && aw__final_check_contract(r) == AW_ENOMEM)
        goto oom;
    if (r->turn >= r->cfg.budgets.max_turns && aw__run_refuse_tools(r, LAST_TURN_REFUSAL))
        goto oom;
    if (!r->final.have && r->ncalls == 0 && r->rejections == 0 && r->feedback.len == 0) {
        const char *nudge = aw_transport_mode_of(r->transport) == AW_TRANSPORT_NATIVE
                                ? "Your reply had no tool call and no answer. Call a tool, or answer."
                                : "Your reply had no tool call and no final report. Call a tool in one of this "
                                  "turn's slots, or write the final report.";
        if (aw_buf_append_str(&r->feedback, nudge))
            goto oom;
    }
    if (r->ncalls == 0) {
        aw__run_end_tools(r);
        return;
    }
    aw__run_start_calls(r);
    return;
oom:
    aw__run_fail(r, "error", "out of memory recording the reply");
}

static int continuation_events(aw_run *r, bool go, const char *stop_reason, const char *resolved_by,
                               const char *reason)
{
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    if (!d)
        return AW_ENOMEM;
    bool errors = r->rejections > 0;
    size_t failed = 0;
    for (size_t i = 0; i < r->ncalls; i++)
        failed += !r->calls[i].ok;
    aw_json_value *cont = aw_json_new_object(d);
    aw_json_value *ev = aw_json_new_object(d);
    aw_json_value *usage = aw_json_new_object(d);
    int rc = !cont || !ev || !usage || aw_json_object_set_bool(d, cont, "should_continue", go) ||
             aw_json_object_set_string(d, cont, "stop_reason", stop_reason, strlen(stop_reason)) ||
             aw_json_object_set_string(d, cont, "resolved_by", resolved_by, strlen(resolved_by)) ||
             aw_json_object_set_int(d, usage, "prompt", r->turn_usage.input_tokens) ||
             aw_json_object_set_int(d, usage, "completion", r->turn_usage.output_tokens) ||
             aw_json_object_set_int(d, usage, "total",
                                    aw__add_count(r->turn_usage.input_tokens, r->turn_usage.output_tokens)) ||
             aw_json_object_set_string(d, ev, "event", "step_completed", 14) ||
             aw_json_object_set_int(d, ev, "step_number", r->turn) ||
             aw_json_object_set_bool(d, ev, "has_tool_calls", r->ncalls > 0) ||
             aw_json_object_set_int(d, ev, "errors", (int64_t)(r->rejections + failed)) ||
             aw_json_object_set_string(d, ev, "finish_reason", r->stop_reason, strlen(r->stop_reason)) ||
             aw_json_object_set(d, ev, "usage", 5, usage) ||
             aw_json_object_set_number(d, ev, "duration_ms", (double)(aw__run_now(r) - r->step_started_ms)) ||
             aw_json_object_set(d, ev, "continuation", 12, cont) || aw__emit_runtime(r, d, ev);
    (void)errors;
    /* The decision with its criteria (seed 003's continuation trace). */
    aw_json_value *c = aw_json_new_object(d);
    aw_json_value *evals = aw_json_new_array(d);
    struct criterion {
        const char *criterion, *decision, *why;
    } crit[4];
    size_t n = 0;
    char steps_why[96];
    snprintf(steps_why, sizeof steps_why, "turn %u of %u", r->turn, r->cfg.budgets.max_turns);
    crit[n++] = (struct criterion){"StepsLimit", r->turn >= r->cfg.budgets.max_turns ? "forbid" : "allow", steps_why};
    crit[n++] = (struct criterion){"FinalReportCheck", r->final.have ? "stop" : "allow",
                                  r->final.have ? "a final report was accepted" : "no final report yet"};
    crit[n++] = (struct criterion){"ToolCallPresenceCheck", r->ncalls ? "request" : "allow",
                                  r->ncalls ? "tool calls were made" : "no tool calls"};
    /* The deciding criterion gives the decision's reason (the envelope
     * has no field for it beside the evaluations). */
    size_t k = 0;
    while (k < n && strcmp(crit[k].criterion, resolved_by) != 0)
        k++;
    if (k == n)
        crit[n++] = (struct criterion){resolved_by, go ? "allow" : "stop", reason};
    else
        crit[k].why = reason;
    for (size_t i = 0; !rc && i < n; i++) {
        aw_json_value *e = aw_json_new_object(d);
        rc = !e || aw_json_object_set_string(d, e, "criterion", crit[i].criterion, strlen(crit[i].criterion)) ||
             aw_json_object_set_string(d, e, "decision", crit[i].decision, strlen(crit[i].decision)) ||
             aw_json_object_set_string(d, e, "reason", crit[i].why, strlen(crit[i].why)) ||
             aw_json_array_push(d, evals, e);
    }
    rc = rc || !c || !evals || aw_json_object_set_string(d, c, "event", "continuation_evaluated", 22) ||
         aw_json_object_set_int(d, c, "step_number", r->turn) || aw_json_object_set_bool(d, c, "should_continue", go) ||
         aw_json_object_set_string(d, c, "stop_reason", stop_reason, strlen(stop_reason)) ||
         aw_json_object_set_string(d, c, "resolved_by", resolved_by, strlen(resolved_by)) ||
         aw_json_object_set(d, c, "evaluations", 11, evals) || aw__emit_runtime(r, d, c);
    aw_json_doc_free(d);
    return rc ? AW_ENOMEM : 0;
}

/* The calls are answered: put the answers in the history, decide whether
 * to go on, close the step. */
void aw__run_end_tools(aw_run *r)
{
    if (r->finishing)
        return;
    if (aw__run_history_after_tools(r))
        goto oom;
    if (r->feedback.len && !r->final.have) {
        /* What went wrong goes to the model: a permanent message in the
         * chat, an error event (so also in the xml context's thread). */
        if (r->cfg.context == AW_CONTEXT_MESSAGES) {
            aw_chat_msg m = {.role = AW_CHAT_USER, .content = {r->feedback.data, r->feedback.len}};
            if (aw__chat_append(r, &m))
                goto oom;
        }
        aw_json_doc *d = aw_json_doc_new(r->alloc);
        aw_json_value *ev = d ? aw__event_new(d, "error", r->turn) : NULL;
        int rc = !ev || aw_json_object_set_string(d, ev, "error", r->feedback.data, r->feedback.len) ||
                 aw_json_object_set_bool(d, ev, "recoverable", true) || aw__emit_event(r, d, ev);
        aw_json_doc_free(d);
        if (rc)
            goto oom;
    }
    const char *stop = NULL, *by = "ToolCallPresenceCheck";
    char reason[160] = "the model goes on";
    if (r->final.have && !r->final_invalid) {
        stop = "completed";
        by = "FinalReportCheck";
        snprintf(reason, sizeof reason, "a final report was accepted");
    } else if (r->final_invalid) {
        stop = "error";
        by = "ContractCheck";
        snprintf(reason, sizeof reason, "the report is not a valid contract document");
    } else if (r->turn >= r->cfg.budgets.max_turns) {
        stop = "steps_limit";
        by = "StepsLimit";
        snprintf(reason, sizeof reason, "turn %u of %u ended without a final report", r->turn, r->cfg.budgets.max_turns);
        aw__final_synthesize(r, reason);
    }
    if (continuation_events(r, stop == NULL, stop ? stop : "completed", by, reason))
        goto oom;
    if (stop) {
        finish(r, stop, false);
        return;
    }
    aw_error err;
    if (aw__step_end(r, false, &err)) {
        aw__run_fail(r, "error", "the run's records could not be kept: %s", err.message);
        return;
    }
    aw__run_wake(r, WAKE_NEXT_TURN);
    return;
oom:
    aw__run_fail(r, "error", "out of memory at the end of turn %u", r->turn);
}

/* ---- starting --------------------------------------------------------------------- */

static const char final_report_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"status\":{\"type\":\"string\",\"enum\":[\"success\",\"failure\",\"partial\"]},"
    "\"content\":{\"description\":\"the report, in the expected format\"}},"
    "\"required\":[\"status\",\"content\"]}";
static const char ask_human_schema[] =
    "{\"type\":\"object\",\"properties\":{\"question\":{\"type\":\"string\"}},\"required\":[\"question\"]}";
static const char progress_schema[] =
    "{\"type\":\"object\",\"properties\":{\"progress\":{\"type\":\"string\"}},\"required\":[\"progress\"]}";

/* The tools the model is offered: the toolbox's, and the run's own. */
static int build_tools(aw_run *r)
{
    size_t n = 0;
    const aw_tool_def *box = r->cfg.tools ? aw_toolbox_defs(r->cfg.tools, &n) : NULL;
    aw_free(r->alloc, r->tool_defs);
    r->tool_defs = aw_malloc(r->alloc, (n + 3) * sizeof *r->tool_defs);
    if (!r->tool_defs)
        return AW_ENOMEM;
    if (n)
        memcpy(r->tool_defs, box, n * sizeof *box);
    r->tool_def_count = n;
    if (!r->builtin_schemas) {
        aw_json_read_options ro = {.alloc = r->alloc};
        aw_buf all;
        aw_buf_init(&all, r->alloc);
        int rc = aw_buf_printf(&all, "[%s,%s,%s]", final_report_schema, ask_human_schema, progress_schema) ||
                 aw_json_parse(all.data, all.len, &ro, &r->builtin_schemas, NULL);
        aw_buf_free(&all);
        if (rc)
            return AW_ENOMEM;
    }
    const aw_json_value *schemas = aw_json_doc_root(r->builtin_schemas);
    if (r->cfg.transport == AW_TRANSPORT_NATIVE) {
        static const char desc[] = "End the task with your final report: status success, failure or partial, and "
                                   "the report as content.";
        r->tool_defs[r->tool_def_count++] = (aw_tool_def){{AW_TOOL_FINAL_REPORT, strlen(AW_TOOL_FINAL_REPORT)},
                                                          {desc, strlen(desc)},
                                                          aw_json_at(schemas, 0)};
    }
    /* Progress travels as the tools do: a tag in xml (the notice's
     * PROGRESS slot), a native call otherwise (seed 001). */
    if (r->cfg.transport != AW_TRANSPORT_XML) {
        static const char desc[] = "Tell the user what you are doing now, in a sentence; it is shown, not executed.";
        r->tool_defs[r->tool_def_count++] = (aw_tool_def){{AW_TOOL_PROGRESS, strlen(AW_TOOL_PROGRESS)},
                                                          {desc, strlen(desc)},
                                                          aw_json_at(schemas, 2)};
    }
    if (r->cfg.interactive) {
        static const char desc[] = "Ask the human a question and wait for the answer.";
        r->tool_defs[r->tool_def_count++] = (aw_tool_def){{AW_TOOL_ASK_HUMAN, strlen(AW_TOOL_ASK_HUMAN)},
                                                          {desc, strlen(desc)},
                                                          aw_json_at(schemas, 1)};
    }
    return 0;
}

static int make_transport(aw_run *r)
{
    /* A rebuilt transport (the tools changed) keeps the session's nonce. */
    char kept[16] = "";
    if (r->transport)
        snprintf(kept, sizeof kept, "%s", aw_transport_nonce(r->transport));
    aw_transport_free(r->transport);
    r->transport = NULL;
    const char *nonce = kept[0] ? kept : r->cfg.nonce;
    const aw_json_value *rn = aw_json_get(r->cfg.resume, "nonce");
    if (!nonce && aw_json_is_string(rn))
        nonce = rn->u.str.ptr;
    aw_transport_config tc = {
        .mode = r->cfg.transport,
        .nonce = nonce,
        .max_calls_per_turn = r->cfg.budgets.max_calls_per_turn,
        .format = r->cfg.format,
        .final_schema = r->cfg.final_schema,
        .tools = r->tool_defs,
        .tool_count = r->tool_def_count,
        .dialects = r->cfg.transport == AW_TRANSPORT_XML ? 0 : r->cfg.recover_calls,
        .alloc = r->alloc,
    };
    aw_error err;
    r->transport = aw_transport_new(&tc, &err);
    return r->transport ? 0 : (err.code ? err.code : AW_ENOMEM);
}

/* Rebuild the history from a stored session: its chat messages and (xml
 * context) its thread, without telling the observers again. */
static int restore(aw_run *r)
{
    const aw_json_value *res = r->cfg.resume;
    const aw_json_value *turn = aw_json_get(res, "turn");
    if (aw_json_is_number(turn))
        r->turn = (unsigned)aw_rt_json_int(turn, 0, 0, UINT_MAX);
    const aw_json_value *u = aw_json_get(res, "usage");
    static const char *const keys[] = {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                                       "reasoning_tokens"};
    int64_t *into[] = {&r->usage.input_tokens, &r->usage.output_tokens, &r->usage.cache_read_tokens,
                       &r->usage.cache_write_tokens, &r->usage.reasoning_tokens};
    for (size_t i = 0; i < 5; i++) {
        const aw_json_value *v = aw_json_get(u, keys[i]);
        if (aw_json_is_number(v))
            *into[i] = aw_rt_json_int(v, 0, 0, AW_RT_TOKENS_MAX << 16);
    }
    const aw_json_value *cost = aw_json_get(u, "cost_usd");
    if (aw_json_is_number(cost))
        r->usage.cost_usd = cost->u.num.d;
    const aw_json_value *secs = aw_json_get(res, "seconds");
    if (aw_json_is_number(secs))
        r->prior_seconds = secs->u.num.d;
    const aw_json_value *chat = aw_json_get(res, "chat");
    for (size_t i = 0; i < aw_json_count(chat); i++) {
        const aw_json_value *m = aw_json_at(chat, i);
        const aw_json_value *role = aw_json_get(m, "role");
        const aw_json_value *content = aw_json_get(m, "content");
        if (!aw_json_is_string(role) || !aw_json_is_string(content))
            return AW_ETYPE;
        aw_chat_msg msg = {.content = {content->u.str.ptr, content->u.str.len}};
        const char *rs = role->u.str.ptr;
        msg.role = !strcmp(rs, "assistant") ? AW_CHAT_ASSISTANT
                   : !strcmp(rs, "tool")    ? AW_CHAT_TOOL
                   : !strcmp(rs, "system")  ? AW_CHAT_SYSTEM
                                            : AW_CHAT_USER;
        const aw_json_value *calls = aw_json_get(m, "tool_calls");
        size_t n = aw_json_count(calls);
        aw_chat_call *cc = n ? aw_malloc(r->alloc, n * sizeof *cc) : NULL;
        if (n && !cc)
            return AW_ENOMEM;
        for (size_t k = 0; k < n; k++) {
            const aw_json_value *c = aw_json_at(calls, k);
            const aw_json_value *id = aw_json_get(c, "id"), *nm = aw_json_get(c, "name"),
                                *args = aw_json_get(c, "arguments");
            cc[k].id = aw_json_is_string(id) ? (aw_text){id->u.str.ptr, id->u.str.len} : (aw_text){"", 0};
            cc[k].name = aw_json_is_string(nm) ? (aw_text){nm->u.str.ptr, nm->u.str.len} : (aw_text){"", 0};
            cc[k].arguments = aw_json_is_string(args) ? (aw_text){args->u.str.ptr, args->u.str.len} : (aw_text){"{}", 2};
        }
        msg.calls = cc;
        msg.call_count = n;
        const aw_json_value *cid = aw_json_get(m, "tool_call_id"), *tn = aw_json_get(m, "name"),
                            *ie = aw_json_get(m, "is_error");
        if (aw_json_is_string(cid))
            msg.call_id = (aw_text){cid->u.str.ptr, cid->u.str.len};
        if (aw_json_is_string(tn))
            msg.tool_name = (aw_text){tn->u.str.ptr, tn->u.str.len};
        msg.is_error = aw_json_is_bool(ie) && ie->u.b;
        int rc = aw_chat_append(r->chat, &msg);
        aw_free(r->alloc, cc);
        if (rc)
            return AW_ENOMEM;
    }
    if (r->cfg.context == AW_CONTEXT_XML) {
        for (size_t i = 0; i < aw_json_count(r->cfg.history); i++) {
            aw_event ev;
            aw_error err;
            int rc = aw_event_from_json(aw_json_at(r->cfg.history, i), &ev, &err);
            if (!rc)
                rc = aw_thread_writer_append(r->tw, &ev, &r->thread, &err);
            if (rc)
                return rc;
        }
    }
    r->events_emitted = aw_json_count(r->cfg.history);
    return 0;
}

static void tools_changed(void *ctx)
{
    aw_run *r = ctx;
    r->tools_changed = true;
    if (r->tools_wait) {
        aw_timer_free(r->tools_wait);
        r->tools_wait = NULL;
        aw__run_wake(r, WAKE_NEXT_TURN);
    }
}

static void tools_ready(void *ctx)
{
    aw_run *r = ctx;
    if (r->finishing)
        return;
    if (r->cfg.tools)
        aw_toolbox_on_change(r->cfg.tools, tools_changed, r);
    if (build_tools(r) || make_transport(r)) {
        aw__run_fail(r, "error", "could not set up the tool transport (out of memory or a bad nonce)");
        return;
    }
    if (r->cfg.resume) {
        int rc = restore(r);
        if (rc) {
            aw__run_fail(r, "error", "the stored session cannot be resumed: %s",
                         rc == AW_ENOMEM ? "out of memory" : "its records are malformed");
            return;
        }
    }
    r->first_turn = r->turn + 1;
    if (aw__step_begin(r))
        goto oom;
    if (r->task) {
        /* The task opens the step that answers it. */
        if (aw__emit_message(r, "user", r->task, strlen(r->task)))
            goto oom;
        aw_chat_msg m = {.role = AW_CHAT_USER, .content = {r->task, strlen(r->task)}};
        if (r->cfg.context == AW_CONTEXT_MESSAGES && aw__chat_append(r, &m))
            goto oom;
    }
    aw__run_next_turn(r);
    return;
oom:
    aw__run_fail(r, "error", "out of memory starting the run");
}

static void wake_up(void *ctx)
{
    aw_run *r = ctx;
    run_wake_job job = (run_wake_job)r->wake_job;
    r->wake_job = WAKE_NONE;
    switch (job) {
    case WAKE_NONE:
        return;
    case WAKE_START:
        tools_ready(r);
        return;
    case WAKE_NEXT_TURN:
        aw__run_next_turn(r);
        return;
    case WAKE_REPLY_FAILED:
        aw__run_fail(r, "error", "turn %u: out of memory reading the reply", r->turn);
        return;
    case WAKE_DONE:
        call_done(r);
        return;
    }
}

void aw__run_wake(aw_run *r, run_wake_job job)
{
    if (job <= (run_wake_job)r->wake_job)
        return;
    r->wake_job = job;
    aw_timer_reset(r->wake, 0);
}

int aw_run_start(aw_run *r, aw_run_done_fn done, void *ctx)
{
    if (r->started)
        return AW_EINVAL;
    r->started = true;
    r->done = done;
    r->done_ctx = ctx;
    r->started_ms = aw__run_now(r);
    /* armed at once, it fires with nothing to do unless a job came */
    if (!(r->wake = aw_loop_timer(r->loop, 0, wake_up, r)))
        return AW_ENOMEM;
    if (r->cfg.budgets.timeout_ms > 0 &&
        !(r->run_timer = aw_loop_timer(r->loop, r->cfg.budgets.timeout_ms, run_timed_out, r)))
        return AW_ENOMEM;
    if (r->cfg.tools)
        return aw_toolbox_start(r->cfg.tools, tools_ready, r);
    /* no toolbox: the first turn still starts from the loop */
    aw__run_wake(r, WAKE_START);
    return 0;
}
