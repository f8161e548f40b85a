/* Executing a turn's calls: up to `parallel` at once, each with its
 * timeout; results cut at --max-tool-output at a character boundary, and
 * replaced when they would overflow the context window; then each call's
 * answer goes into the history the way the transport wants it (native tool
 * messages, or the XML-PAST notice). */
#include <stdio.h>
#include <string.h>

#include "internal/rt_util.h"
#include "internal/run_impl.h"

#define DEFAULT_MAX_OUTPUT 100000
#define DEFAULT_TOOL_TIMEOUT_MS 120000
#define BUDGET_EXCEEDED "(tool failed: context window budget exceeded)"

run_call *aw__run_add_call(aw_run *r, call_kind kind, aw_text tool, aw_text call_id, aw_text slot,
                           const char *source, const aw_json_value *args, bool native)
{
    if (r->ncalls == r->cap_calls) {
        size_t cap = r->cap_calls ? r->cap_calls * 2 : 8;
        run_call *calls = aw_realloc(r->alloc, r->calls, cap * sizeof *calls);
        if (!calls)
            return NULL;
        r->calls = calls;
        r->cap_calls = cap;
    }
    run_call *c = &r->calls[r->ncalls];
    memset(c, 0, sizeof *c);
    c->run = r;
    c->kind = kind;
    c->source = source;
    c->native = native;
    aw_buf_init(&c->output, r->alloc);
    char id[64];
    if (!call_id.len) {
        /* xml calls have no id of their own: the slot makes one that is
         * unique in the session */
        snprintf(id, sizeof id, "call_%u_%.*s", r->turn, (int)(slot.len > 16 ? 16 : slot.len), slot.ptr);
        if (!slot.len)
            snprintf(id, sizeof id, "call_%u_%zu", r->turn, r->ncalls + 1);
        call_id = (aw_text){id, strlen(id)};
    }
    c->tool = aw_rt_strndup(r->alloc, tool.ptr, tool.len);
    c->call_id = aw_rt_strndup(r->alloc, call_id.ptr, call_id.len);
    c->slot = aw_rt_strndup(r->alloc, slot.ptr ? slot.ptr : "", slot.len);
    c->args = aw_json_doc_new(r->alloc);
    aw_json_value *a = NULL;
    if (c->args)
        a = args ? aw_json_copy(c->args, args) : aw_json_new_object(c->args);
    aw_buf text;
    aw_buf_init(&text, r->alloc);
    if (a) {
        aw_json_doc_set_root(c->args, a);
        if (aw_json_write(a, NULL, &text, NULL))
            a = NULL;
    }
    c->args_text = aw_buf_detach(&text, NULL);
    r->ncalls++;
    if (!c->tool || !c->call_id || !c->slot || !a || !c->args_text)
        return NULL;
    return c;
}

void aw__run_free_call(aw_run *r, run_call *c)
{
    aw_tool_call_cancel(c->handle);
    c->handle = NULL;
    aw_free(r->alloc, c->tool);
    aw_free(r->alloc, c->call_id);
    aw_free(r->alloc, c->slot);
    aw_free(r->alloc, c->args_text);
    aw_json_doc_free(c->args);
    aw_buf_free(&c->output);
}

void aw__run_free_calls(aw_run *r)
{
    for (size_t i = 0; i < r->ncalls; i++)
        aw__run_free_call(r, &r->calls[i]);
    r->ncalls = 0;
    r->running = 0;
    r->asking = NULL;
}

void aw__run_cancel_calls(aw_run *r)
{
    for (size_t i = 0; i < r->ncalls; i++) {
        aw_tool_call_cancel(r->calls[i].handle);
        r->calls[i].handle = NULL;
    }
    r->running = 0;
    r->asking = NULL;
}

/* ---- results ---------------------------------------------------------------------- */

/* Bytes of a UTF-8 text up to max, not splitting a character. */
static size_t clip_utf8(const char *p, size_t n, size_t max)
{
    if (n <= max)
        return n;
    size_t k = max;
    while (k > 0 && ((unsigned char)p[k] & 0xC0) == 0x80)
        k--;
    return k;
}

/* Tokens the context holds now, and would hold with `extra` more bytes:
 * the provider's count of the last request where known, bytes / 4 for
 * what came after (and for everything before the first count). */
static int64_t context_tokens(const aw_run *r, size_t extra)
{
    size_t bytes = r->chat ? aw_chat_bytes(r->chat) : r->thread.len;
    for (size_t i = 0; i < r->ncalls; i++)
        bytes += r->calls[i].output.len;
    bytes += extra + r->reply.len;
    if (r->context_base_tokens > 0 && bytes >= r->context_base_bytes)
        return aw__add_count(r->context_base_tokens, (int64_t)((bytes - r->context_base_bytes + 3) / 4));
    return (int64_t)((bytes + (r->system_prompt ? strlen(r->system_prompt) : 0) + 3) / 4);
}

static int set_output(aw_run *r, run_call *c, bool ok, const char *text, size_t len, uint64_t total)
{
    size_t max = r->cfg.budgets.max_tool_output ? r->cfg.budgets.max_tool_output : DEFAULT_MAX_OUTPUT;
    if (total < len)
        total = len;
    aw_buf_clear(&c->output);
    c->ok = ok;
    size_t keep = clip_utf8(text, len, max);
    int rc = aw_buf_append(&c->output, text, keep);
    if (!rc && total > keep)
        rc = aw_buf_printf(&c->output, "\n[output cut: %llu of %llu bytes shown]", (unsigned long long)keep,
                           (unsigned long long)total);
    if (rc)
        return AW_ENOMEM;
    c->output_bytes = total;
    if (r->cfg.budgets.context_window > 0 && context_tokens(r, 0) > r->cfg.budgets.context_window) {
        aw_buf_clear(&c->output);
        c->ok = false;
        rc = aw_buf_append_str(&c->output, BUDGET_EXCEEDED);
    }
    return rc;
}

static int tool_events(aw_run *r, run_call *c)
{
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    if (!d)
        return AW_ENOMEM;
    int rc = 0;
    double ms = (double)(c->ended_ms - c->started_ms);
    /* The agent event: a result, or (seed 000: results are always a
     * success) an error event for a call that failed. */
    aw_json_value *ev;
    if (c->ok) {
        ev = aw__event_new(d, "tool_result", r->turn);
        rc = !ev || aw_json_object_set_string(d, ev, "toolCallId", c->call_id, strlen(c->call_id)) ||
             aw_json_object_set_string(d, ev, "result", c->output.data ? c->output.data : "", c->output.len) ||
             aw_json_object_set_number(d, ev, "durationMs", ms);
    } else {
        aw_buf msg;
        aw_buf_init(&msg, r->alloc);
        rc = aw_buf_printf(&msg, "tool '%s' failed: ", c->tool) ||
             aw_buf_append(&msg, c->output.data ? c->output.data : "", c->output.len);
        ev = aw__event_new(d, "error", r->turn);
        rc = rc || !ev || aw_json_object_set_string(d, ev, "error", msg.data, msg.len) ||
             aw_json_object_set_bool(d, ev, "recoverable", true) ||
             aw_json_object_set_string(d, ev, "toolCallId", c->call_id, strlen(c->call_id));
        aw_buf_free(&msg);
    }
    if (!rc)
        rc = aw__emit_event(r, d, ev);

    aw_json_value *rt = aw_json_new_object(d);
    aw_json_value *result = aw_json_new_string(d, c->output.data ? c->output.data : "", c->output.len);
    rc = rc || !rt || !result || aw_json_object_set_string(d, rt, "event", "tool_completed", 14) ||
         aw_json_object_set_string(d, rt, "tool_name", c->tool, strlen(c->tool)) ||
         aw_json_object_set_string(d, rt, "tool_call_id", c->call_id, strlen(c->call_id)) ||
         aw_json_object_set_bool(d, rt, "success", c->ok) ||
         (c->ok ? aw_json_object_set_null(d, rt, "error")
                : aw_json_object_set_string(d, rt, "error", c->output.data, c->output.len)) ||
         aw_json_object_set_number(d, rt, "duration_ms", ms) || aw_json_object_set(d, rt, "result", 6, result);
    if (!rc)
        rc = aw__emit_runtime(r, d, rt);

    aw_json_value *row = aw_json_new_object(d);
    const char *status = c->timed_out ? "timeout" : c->ok ? "ok" : "failed";
    rc = rc || !row || aw_json_object_set_string(d, row, "kind", "tool", 4) ||
         aw_json_object_set_string(d, row, "source", c->source, strlen(c->source)) ||
         (c->dialect && aw_json_object_set_string(d, row, "dialect", c->dialect, strlen(c->dialect))) ||
         aw_json_object_set_string(d, row, "command", c->tool, strlen(c->tool)) ||
         aw_json_object_set_string(d, row, "tool_call_id", c->call_id, strlen(c->call_id)) ||
         (c->slot[0] && aw_json_object_set_string(d, row, "slot", c->slot, strlen(c->slot))) ||
         aw_json_object_set_string(d, row, "status", status, strlen(status)) ||
         aw_json_object_set_int(d, row, "latency_ms", c->ended_ms - c->started_ms) ||
         aw_json_object_set_int(d, row, "request_bytes", (int64_t)strlen(c->args_text)) ||
         aw_json_object_set_int(d, row, "response_bytes", (int64_t)c->output_bytes);
    if (!rc)
        rc = aw__emit_accounting(r, d, row);
    aw_json_doc_free(d);
    return rc ? AW_ENOMEM : 0;
}

static void start_more(aw_run *r);

static void finish_call(aw_run *r, run_call *c)
{
    c->state = CALL_DONE;
    c->ended_ms = aw__run_now(r);
    if (r->running)
        r->running--;
    if (tool_events(r, c)) {
        aw__run_fail(r, "error", "out of memory recording a tool result");
        return;
    }
    aw__emit_progress(r, "running tools");
    start_more(r);
}

static void tool_done(void *ctx, const aw_tool_result *res)
{
    run_call *c = ctx;
    aw_run *r = c->run;
    c->handle = NULL;
    c->timed_out = res->timed_out;
    if (set_output(r, c, res->ok, res->output.ptr, res->output.len, res->output_bytes)) {
        aw__run_fail(r, "error", "out of memory keeping a tool result");
        return;
    }
    finish_call(r, c);
}

static void tool_progress(void *ctx, double progress, double total, aw_text message)
{
    run_call *c = ctx;
    aw_run *r = c->run;
    aw_buf_clear(&r->progress_message);
    if (total > 0)
        aw_buf_printf(&r->progress_message, "%s %.0f%%", c->tool, 100.0 * progress / total);
    else
        aw_buf_printf(&r->progress_message, "%s %.0f", c->tool, progress);
    if (message.len)
        aw_buf_printf(&r->progress_message, " %.*s", (int)(message.len > 200 ? 200 : message.len), message.ptr);
    aw__emit_progress(r, "running tools");
}

int aw__run_answer_call(aw_run *r, run_call *c, bool ok, const char *text, size_t len)
{
    if (set_output(r, c, ok, text, len, len))
        return AW_ENOMEM;
    finish_call(r, c);
    return 0;
}

/* Answer a call the run itself answers; a call left unanswered would hold
 * the turn open for ever, so a failure ends the run. */
static void answer_or_fail(aw_run *r, run_call *c, bool ok, const char *text, size_t len)
{
    if (aw__run_answer_call(r, c, ok, text, len))
        aw__run_fail(r, "error", "out of memory answering a call of %s", c->tool);
}

static int tool_started_event(aw_run *r, run_call *c)
{
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    if (!d)
        return AW_ENOMEM;
    aw_json_value *ev = aw__event_new(d, "tool_call", r->turn);
    int rc = !ev || aw_json_object_set_string(d, ev, "toolName", c->tool, strlen(c->tool)) ||
             aw_json_object_set_string(d, ev, "toolCallId", c->call_id, strlen(c->call_id)) ||
             aw_json_object_set(d, ev, "args", 4, aw_json_doc_root(c->args));
    if (!rc)
        rc = aw__emit_event(r, d, ev);
    aw_json_value *rt = aw_json_new_object(d);
    rc = rc || !rt || aw_json_object_set_string(d, rt, "event", "tool_started", 12) ||
         aw_json_object_set_string(d, rt, "tool_name", c->tool, strlen(c->tool)) ||
         aw_json_object_set_string(d, rt, "tool_call_id", c->call_id, strlen(c->call_id)) ||
         aw_json_object_set(d, rt, "args", 4, aw_json_doc_root(c->args));
    if (!rc)
        rc = aw__emit_runtime(r, d, rt);
    aw_json_doc_free(d);
    return rc ? AW_ENOMEM : 0;
}

static int ask_event(aw_run *r, const char *type, const char *field, const char *text, size_t len)
{
    aw_json_doc *d = aw_json_doc_new(r->alloc);
    aw_json_value *ev = d ? aw__event_new(d, type, r->turn) : NULL;
    int rc = !ev || aw_json_object_set_string(d, ev, field, text, len) ? AW_ENOMEM : aw__emit_event(r, d, ev);
    aw_json_doc_free(d);
    return rc;
}

/* Start one call; false when it could not start (then it is done). */
static void start_call(aw_run *r, run_call *c)
{
    c->state = CALL_RUNNING;
    c->started_ms = aw__run_now(r);
    r->running++;
    if (tool_started_event(r, c)) {
        aw__run_fail(r, "error", "out of memory recording a tool call");
        return;
    }
    switch (c->kind) {
    case CALL_PROGRESS: {
        const aw_json_value *root = aw_json_doc_root(c->args);
        const aw_json_value *m = aw_json_get(root, "progress");
        if (!aw_json_is_string(m))
            m = aw_json_get(root, "message");
        aw_buf_clear(&r->progress_message);
        if (aw_json_is_string(m))
            aw_buf_append(&r->progress_message, m->u.str.ptr, m->u.str.len > 300 ? 300 : m->u.str.len);
        else
            aw_buf_append_str(&r->progress_message, c->args_text);
        answer_or_fail(r, c, true, "ok", 2);
        return;
    }
    case CALL_ASK: {
        const aw_json_value *q = aw_json_get(aw_json_doc_root(c->args), "question");
        if (!r->cfg.interactive || !r->cfg.ask || !aw_json_is_string(q)) {
            const char *why = aw_json_is_string(q) ? "(tool failed: no human is available in this run)"
                                                   : "(tool failed: the argument 'question' must be a string)";
            answer_or_fail(r, c, false, why, strlen(why));
            return;
        }
        if (ask_event(r, "human_input_requested", "question", q->u.str.ptr, q->u.str.len)) {
            aw__run_fail(r, "error", "out of memory recording a question");
            return;
        }
        r->asking = c;
        r->cfg.ask(r->cfg.ask_ctx, r, q->u.str.ptr, q->u.str.len);
        return;
    }
    case CALL_REJECTED:
        /* output holds the reason already */
        {
            aw_buf why = c->output;
            aw_buf_init(&c->output, r->alloc);
            int rc = aw__run_answer_call(r, c, false, why.data ? why.data : "", why.len);
            aw_buf_free(&why);
            if (rc)
                aw__run_fail(r, "error", "out of memory");
        }
        return;
    case CALL_FINAL:
        answer_or_fail(r, c, true, "ok", 2);
        return;
    case CALL_TOOL:
        break;
    }
    int64_t timeout = r->cfg.budgets.tool_timeout_ms > 0 ? r->cfg.budgets.tool_timeout_ms : DEFAULT_TOOL_TIMEOUT_MS;
    aw_tool_call_opts opts = {.call_id = {c->call_id, strlen(c->call_id)},
                              .on_progress = tool_progress,
                              .progress_ctx = c,
                              .caller = r};
    aw_error err;
    aw_error_clear(&err);
    int rc = r->cfg.tools ? aw_toolbox_call(r->cfg.tools, (aw_text){c->tool, strlen(c->tool)}, aw_json_doc_root(c->args),
                                            timeout, &opts, tool_done, c, &c->handle, &err)
                          : aw_rt_error(&err, AW_EINVAL, "this run has no tools");
    if (rc) {
        char msg[300];
        snprintf(msg, sizeof msg, "(tool failed: %s)", err.message);
        answer_or_fail(r, c, false, msg, strlen(msg));
    }
}

int aw_run_answer(aw_run *r, const char *answer, size_t len)
{
    run_call *c = r->asking;
    if (!c)
        return AW_EINVAL;
    r->asking = NULL;
    int rc = ask_event(r, "human_input_received", "response", answer, len);
    if (!rc)
        rc = aw__run_answer_call(r, c, true, answer, len);
    if (rc)
        aw__run_fail(r, "error", "out of memory recording the human's answer");
    return rc;
}

static void start_more(aw_run *r)
{
    /* Calls answered at once (progress, refused ones) finish inside the
     * loop below; the loop then goes on, so only it may end the phase. */
    if (r->finishing || r->starting_calls)
        return;
    r->starting_calls = true;
    unsigned parallel = r->cfg.budgets.parallel ? r->cfg.budgets.parallel : 4;
    for (size_t i = 0; i < r->ncalls && r->running < parallel; i++) {
        run_call *c = &r->calls[i];
        if (c->state != CALL_PENDING)
            continue;
        /* ask_human waits alone: the terminal is one */
        if (c->kind == CALL_ASK && r->asking)
            break;
        start_call(r, c);
        if (r->finishing)
            break;
    }
    r->starting_calls = false;
    if (r->finishing)
        return;
    for (size_t i = 0; i < r->ncalls; i++)
        if (r->calls[i].state != CALL_DONE)
            return;
    aw__run_end_tools(r);
}

void aw__run_start_calls(aw_run *r)
{
    aw__emit_progress(r, "running tools");
    start_more(r);
}

int aw__run_refuse_tools(aw_run *r, const char *why)
{
    for (size_t i = 0; i < r->ncalls; i++) {
        run_call *c = &r->calls[i];
        if (c->kind != CALL_TOOL && c->kind != CALL_ASK)
            continue;
        c->kind = CALL_REJECTED;
        aw_buf_clear(&c->output);
        if (aw_buf_append_str(&c->output, why))
            return AW_ENOMEM;
    }
    return 0;
}

/* ---- the answers in the history ------------------------------------------------------- */

int aw__run_history_after_tools(aw_run *r)
{
    if (r->cfg.context == AW_CONTEXT_XML)
        return 0; /* the thread has every call and result already */
    /* native calls: one tool message each, in call order */
    for (size_t i = 0; i < r->ncalls; i++) {
        run_call *c = &r->calls[i];
        if (!c->native)
            continue;
        aw_chat_msg m = {.role = AW_CHAT_TOOL,
                         .content = {c->output.data ? c->output.data : "", c->output.len},
                         .call_id = {c->call_id, strlen(c->call_id)},
                         .tool_name = {c->tool, strlen(c->tool)},
                         .is_error = !c->ok};
        if (aw__chat_append(r, &m))
            return AW_ENOMEM;
    }
    /* xml calls: the XML-PAST notice, a permanent user message (seed 001) */
    if (aw_transport_mode_of(r->transport) == AW_TRANSPORT_XML) {
        size_t n = 0;
        for (size_t i = 0; i < r->ncalls; i++)
            if (!r->calls[i].native && r->calls[i].kind != CALL_FINAL)
                n++;
        if (n) {
            aw_past_call *past = aw_malloc(r->alloc, n * sizeof *past);
            if (!past)
                return AW_ENOMEM;
            size_t k = 0;
            for (size_t i = 0; i < r->ncalls; i++) {
                run_call *c = &r->calls[i];
                if (c->native || c->kind == CALL_FINAL)
                    continue;
                past[k++] = (aw_past_call){{c->slot, strlen(c->slot)},
                                           {c->tool, strlen(c->tool)},
                                           c->ok,
                                           (double)(c->ended_ms - c->started_ms),
                                           {c->args_text, strlen(c->args_text)},
                                           {c->output.data ? c->output.data : "", c->output.len}};
            }
            aw_buf text;
            aw_buf_init(&text, r->alloc);
            /* results are cut to --max-tool-output already (with the
             * marker at their end): the notice shows them whole */
            size_t max = r->cfg.budgets.max_tool_output ? r->cfg.budgets.max_tool_output : DEFAULT_MAX_OUTPUT;
            int rc = aw_transport_render_past_limit(past, n, max + 256, &text);
            aw_free(r->alloc, past);
            aw_chat_msg m = {.role = AW_CHAT_USER, .content = {text.data ? text.data : "", text.len}};
            if (!rc)
                rc = aw__chat_append(r, &m);
            aw_buf_free(&text);
            if (rc)
                return AW_ENOMEM;
        }
    }
    return 0;
}
