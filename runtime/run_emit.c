/* What a run tells its observers: agent events (also appended to the
 * <thread> of the xml context), runtime events, accounting rows, progress,
 * and at the end of each step the step itself, with everything above that
 * happened during it, the run's state and what resuming after it needs. */
#include <stdio.h>
#include <string.h>

#include "agentwire/envelope.h"
#include "agentwire/event.h"
#include "internal/rt_util.h"
#include "internal/run_impl.h"

aw_json_value *aw__event_new(aw_json_doc *doc, const char *type, unsigned iteration)
{
    aw_json_value *ev = aw_json_new_object(doc);
    if (!ev || aw_json_object_set_string(doc, ev, "type", type, strlen(type)) ||
        aw_json_object_set_int(doc, ev, "iteration", iteration) ||
        aw_json_object_set_int(doc, ev, "timestamp", aw_rt_wall_ms()))
        return NULL;
    return ev;
}

static int keep_in_step(aw_run *r, aw_json_value *list, const aw_json_value *v)
{
    if (!r->step_doc || !list)
        return 0;
    aw_json_value *copy = aw_json_copy(r->step_doc, v);
    return copy && !aw_json_array_push(r->step_doc, list, copy) ? 0 : AW_ENOMEM;
}

int aw__emit_event(aw_run *r, aw_json_doc *doc, aw_json_value *event)
{
    (void)doc;
    if (!event)
        return AW_ENOMEM;
    if (r->cfg.context == AW_CONTEXT_XML && r->tw) {
        aw_event ev;
        aw_error err;
        int rc = aw_event_from_json(event, &ev, &err);
        if (!rc)
            rc = aw_thread_writer_append(r->tw, &ev, &r->thread, &err);
        if (rc)
            return rc;
    }
    r->events_emitted++;
    for (size_t i = 0; i < r->cfg.observer_count; i++)
        if (r->observers[i].on_event)
            r->observers[i].on_event(r->observers[i].ctx, &r->info, event);
    return keep_in_step(r, r->step_events, event);
}

int aw__emit_message(aw_run *r, const char *role, const char *text, size_t len)
{
    aw_json_doc *doc = aw_json_doc_new(r->alloc);
    if (!doc)
        return AW_ENOMEM;
    aw_json_value *ev = aw__event_new(doc, "message", r->turn);
    int rc = !ev || aw_json_object_set_string(doc, ev, "role", role, strlen(role)) ||
             aw_json_object_set_string(doc, ev, "content", text ? text : "", text ? len : 0)
                 ? AW_ENOMEM
                 : aw__emit_event(r, doc, ev);
    aw_json_doc_free(doc);
    return rc;
}

int aw__emit_runtime(aw_run *r, aw_json_doc *doc, aw_json_value *ev)
{
    (void)doc;
    if (!ev)
        return AW_ENOMEM;
    for (size_t i = 0; i < r->cfg.observer_count; i++)
        if (r->observers[i].on_runtime)
            r->observers[i].on_runtime(r->observers[i].ctx, &r->info, ev);
    return 0;
}

int aw__emit_accounting(aw_run *r, aw_json_doc *doc, aw_json_value *row)
{
    if (!row)
        return AW_ENOMEM;
    /* Every row says whose it is: a sub-agent's rows carry both ids. */
    if (aw_json_object_set_string(doc, row, "session_id", r->session_id, strlen(r->session_id)) ||
        (r->parent_session_id &&
         aw_json_object_set_string(doc, row, "parent_session_id", r->parent_session_id, strlen(r->parent_session_id))) ||
        (r->agent_name && aw_json_object_set_string(doc, row, "agent", r->agent_name, strlen(r->agent_name))) ||
        aw_json_object_set_int(doc, row, "turn", r->turn) ||
        aw_json_object_set_int(doc, row, "timestamp", aw_rt_wall_ms()))
        return AW_ENOMEM;
    for (size_t i = 0; i < r->cfg.observer_count; i++)
        if (r->observers[i].on_accounting)
            r->observers[i].on_accounting(r->observers[i].ctx, &r->info, row);
    return keep_in_step(r, r->step_accounting, row);
}

aw_json_value *aw__usage_json(aw_json_doc *doc, const aw_model_usage *u)
{
    aw_json_value *o = aw_json_new_object(doc);
    if (!o || aw_json_object_set_int(doc, o, "input_tokens", u->input_tokens) ||
        aw_json_object_set_int(doc, o, "output_tokens", u->output_tokens) ||
        aw_json_object_set_int(doc, o, "cache_read_tokens", u->cache_read_tokens) ||
        aw_json_object_set_int(doc, o, "cache_write_tokens", u->cache_write_tokens) ||
        aw_json_object_set_int(doc, o, "reasoning_tokens", u->reasoning_tokens) ||
        (u->cost_usd >= 0 && aw_json_object_set_number(doc, o, "cost_usd", u->cost_usd)))
        return NULL;
    return o;
}

void aw__emit_progress(aw_run *r, const char *phase)
{
    bool any = false;
    for (size_t i = 0; i < r->cfg.observer_count && !any; i++)
        any = r->observers[i].on_progress != NULL;
    if (!any)
        return;
    enum { MAX_SHOWN = 16 };
    const char *names[MAX_SHOWN];
    int64_t started[MAX_SHOWN];
    size_t n = 0;
    for (size_t i = 0; i < r->ncalls && n < MAX_SHOWN; i++)
        if (r->calls[i].state == CALL_RUNNING) {
            names[n] = r->calls[i].tool;
            started[n] = r->calls[i].started_ms;
            n++;
        }
    aw_run_progress p = {
        .turn = r->turn,
        .max_turns = r->cfg.budgets.max_turns,
        .input_tokens = r->usage.input_tokens,
        .output_tokens = r->usage.output_tokens,
        .cost_usd = r->usage.cost_usd,
        .phase = phase,
        .running_tools = n,
        .tool_names = names,
        .tool_started_ms = started,
        .progress_message = r->progress_message.len ? r->progress_message.data : NULL,
    };
    for (size_t i = 0; i < r->cfg.observer_count; i++)
        if (r->observers[i].on_progress)
            r->observers[i].on_progress(r->observers[i].ctx, &r->info, &p);
}

/* ---- steps ---------------------------------------------------------------------- */

int aw__step_begin(aw_run *r)
{
    aw_json_doc_free(r->step_doc);
    r->step_doc = aw_json_doc_new(r->alloc);
    if (!r->step_doc)
        return AW_ENOMEM;
    r->step_events = aw_json_new_array(r->step_doc);
    r->step_accounting = aw_json_new_array(r->step_doc);
    r->step_chat = aw_json_new_array(r->step_doc);
    r->chat_count_at_step = r->chat ? aw_chat_count(r->chat) : 0;
    r->step_started_ms = aw__run_now(r);
    return r->step_events && r->step_accounting && r->step_chat ? 0 : AW_ENOMEM;
}

/* A chat message as JSON, in the shape aw_run_config.resume carries. */
static aw_json_value *chat_json(aw_json_doc *d, const aw_chat_msg *m)
{
    static const char *const roles[] = {"system", "user", "assistant", "tool"};
    aw_json_value *o = aw_json_new_object(d);
    if (!o || aw_json_object_set_string(d, o, "role", roles[m->role], strlen(roles[m->role])) ||
        aw_json_object_set_string(d, o, "content", m->content.ptr, m->content.len))
        return NULL;
    if (m->call_count) {
        aw_json_value *calls = aw_json_new_array(d);
        for (size_t i = 0; calls && i < m->call_count; i++) {
            aw_json_value *c = aw_json_new_object(d);
            if (!c || aw_json_object_set_string(d, c, "id", m->calls[i].id.ptr, m->calls[i].id.len) ||
                aw_json_object_set_string(d, c, "name", m->calls[i].name.ptr, m->calls[i].name.len) ||
                aw_json_object_set_string(d, c, "arguments", m->calls[i].arguments.ptr, m->calls[i].arguments.len) ||
                aw_json_array_push(d, calls, c))
                return NULL;
        }
        if (!calls || aw_json_object_set(d, o, "tool_calls", 10, calls))
            return NULL;
    }
    if (m->role == AW_CHAT_TOOL &&
        (aw_json_object_set_string(d, o, "tool_call_id", m->call_id.ptr, m->call_id.len) ||
         aw_json_object_set_string(d, o, "name", m->tool_name.ptr, m->tool_name.len) ||
         (m->is_error && aw_json_object_set_bool(d, o, "is_error", true))))
        return NULL;
    return o;
}

int aw__chat_append(aw_run *r, const aw_chat_msg *m)
{
    if (aw_chat_append(r->chat, m))
        return AW_ENOMEM;
    if (!r->step_doc)
        return 0;
    aw_json_value *j = chat_json(r->step_doc, m);
    return j && !aw_json_array_push(r->step_doc, r->step_chat, j) ? 0 : AW_ENOMEM;
}

/* The run's state in the shape the snapshot module slims (seed 003's
 * AgentState): identity, status, usage, timing, the last messages. */
static aw_json_value *state_json(aw_run *r, aw_json_doc *d, bool final)
{
    aw_json_value *s = aw_json_new_object(d);
    if (!s)
        return NULL;
    const char *status = !final ? "in_progress" : r->result.status == AW_RUN_SUCCESS ? "completed" : "failed";
    aw_buf started, updated;
    aw_buf_init(&started, r->alloc);
    aw_buf_init(&updated, r->alloc);
    int64_t now = aw_rt_wall_ms();
    int64_t elapsed = aw__run_now(r) - r->started_ms;
    int rc = aw_time_format_rfc3339(now - elapsed - (int64_t)(r->prior_seconds * 1000), false, &started) ||
             aw_time_format_rfc3339(now, false, &updated);
    aw_json_value *usage = aw_json_new_object(d), *exec = aw_json_new_object(d), *msgs = aw_json_new_array(d);
    if (rc || !usage || !exec || !msgs ||
        aw_json_object_set_int(d, usage, "prompt", r->usage.input_tokens) ||
        aw_json_object_set_int(d, usage, "completion", r->usage.output_tokens) ||
        aw_json_object_set_int(d, usage, "total", aw__add_count(r->usage.input_tokens, r->usage.output_tokens)) ||
        aw_json_object_set_string(d, exec, "started_at", started.data, started.len) ||
        aw_json_object_set_string(d, exec, "updated_at", updated.data, updated.len) ||
        aw_json_object_set_number(d, exec, "cumulative_seconds", r->prior_seconds + (double)elapsed / 1000.0) ||
        aw_json_object_set_string(d, s, "agent_id", r->session_id, strlen(r->session_id)) ||
        (r->parent_session_id
             ? aw_json_object_set_string(d, s, "parent_agent_id", r->parent_session_id, strlen(r->parent_session_id))
             : aw_json_object_set_null(d, s, "parent_agent_id")) ||
        aw_json_object_set_string(d, s, "status", status, strlen(status)) ||
        aw_json_object_set_int(d, s, "step_count", r->turn) || aw_json_object_set(d, s, "usage", 5, usage) ||
        aw_json_object_set(d, s, "execution", 9, exec))
        s = NULL;
    aw_buf_free(&started);
    aw_buf_free(&updated);
    if (!s)
        return NULL;
    /* The most recent messages only: the snapshot keeps at most 100, and a
     * state built from the whole history would make each step cost the
     * length of the run. */
    size_t n = r->chat ? aw_chat_count(r->chat) : 0;
    size_t from = n > 100 ? n - 100 : 0;
    static const char *const roles[] = {"system", "user", "assistant", "tool"};
    for (size_t i = from; i < n; i++) {
        const aw_chat_msg *m = aw_chat_at(r->chat, i);
        aw_json_value *o = aw_json_new_object(d), *meta = aw_json_new_object(d);
        if (!o || !meta || aw_json_object_set_string(d, o, "role", roles[m->role], strlen(roles[m->role])) ||
            aw_json_object_set_string(d, o, "content", m->content.ptr, m->content.len))
            return NULL;
        if (m->role == AW_CHAT_TOOL &&
            (aw_json_object_set_string(d, meta, "tool_call_id", m->call_id.ptr, m->call_id.len) ||
             aw_json_object_set_string(d, meta, "tool_name", m->tool_name.ptr, m->tool_name.len)))
            return NULL;
        if (m->call_count) {
            aw_json_value *calls = aw_json_new_array(d);
            for (size_t k = 0; calls && k < m->call_count; k++) {
                aw_json_value *c = aw_json_new_object(d);
                if (!c || aw_json_object_set_string(d, c, "id", m->calls[k].id.ptr, m->calls[k].id.len) ||
                    aw_json_object_set_string(d, c, "name", m->calls[k].name.ptr, m->calls[k].name.len) ||
                    aw_json_array_push(d, calls, c))
                    calls = NULL;
            }
            if (!calls || aw_json_object_set(d, meta, "tool_calls", 10, calls))
                return NULL;
        }
        if (aw_json_object_set(d, o, "_metadata", 9, meta) || aw_json_array_push(d, msgs, o))
            return NULL;
    }
    aw_json_value *steps = aw_json_new_array(d);
    if (!steps || aw_json_object_set(d, s, "messages", 8, msgs) || aw_json_object_set(d, s, "steps", 5, steps))
        return NULL;
    return s;
}

/* What resuming after this step needs; the chat messages of the step only
 * (a store keeps them in order, and resuming joins them). */
static aw_json_value *resume_json(aw_run *r, aw_json_doc *d)
{
    aw_json_value *o = aw_json_new_object(d);
    aw_json_value *u = aw__usage_json(d, &r->usage);
    const char *nonce = r->transport ? aw_transport_nonce(r->transport) : r->cfg.nonce;
    if (!o || !u || aw_json_object_set_int(d, o, "turn", r->turn) ||
        (nonce && aw_json_object_set_string(d, o, "nonce", nonce, strlen(nonce))) ||
        aw_json_object_set(d, o, "usage", 5, u) ||
        aw_json_object_set_number(d, o, "seconds",
                                  r->prior_seconds + (double)(aw__run_now(r) - r->started_ms) / 1000.0) ||
        aw_json_object_set(d, o, "chat", 4, r->step_chat))
        return NULL;
    return o;
}

int aw__step_end(aw_run *r, bool final, aw_error *err)
{
    aw_error_clear(err);
    if (!r->step_doc)
        return 0;
    bool any = false;
    for (size_t i = 0; i < r->cfg.observer_count && !any; i++)
        any = r->observers[i].on_step != NULL;
    int rc = 0;
    if (any) {
        aw_json_value *state = state_json(r, r->step_doc, final);
        aw_json_value *resume = resume_json(r, r->step_doc);
        if (!state || !resume)
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
        aw_run_step step = {r->turn,  r->step_events, r->step_accounting,          state,
                            resume,   final,          final && r->step_partial, final ? r->step_stop_reason : NULL};
        for (size_t i = 0; i < r->cfg.observer_count && !rc; i++)
            if (r->observers[i].on_step)
                rc = r->observers[i].on_step(r->observers[i].ctx, &r->info, &step, err);
    }
    aw_json_doc_free(r->step_doc);
    r->step_doc = NULL;
    r->step_events = r->step_accounting = r->step_chat = NULL;
    return rc;
}
