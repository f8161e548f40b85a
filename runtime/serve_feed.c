/* The envelopes of a stored session (seed 003), made from what the store
 * keeps: its agent events and accounting rows, step by step, through the
 * envelope adapter, so a viewer following a session gets the envelopes a
 * live UI gets from a run's --events.
 *
 * A stored event gives the envelopes of what it records:
 *   tool_call                 agent.tool.started
 *   tool_result               agent.tool.completed (success)
 *   error of a tool call      agent.tool.completed (failure)
 *   completion                agent.status (completed or failed)
 *   message, others           none
 * and a step's first event also gives agent.step.started (before its own),
 * its last one agent.step.completed (after its own; before the status),
 * with the usage, finish reason and duration of the step's model requests
 * from its accounting rows. What the store does not keep is left at the
 * adapter's defaults: a step's message_count (0) and available_tools ([]);
 * the execution id is the session's.
 *
 * Everything is worked out from the rows of the step alone, so the same
 * rows always give the same envelopes: a viewer that resumes in the
 * middle of a step (its Last-Event-ID) gets exactly the rest. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/envelope.h"
#include "internal/rt_util.h"
#include "internal/serve_impl.h"

/* ---- cursors ------------------------------------------------------------------------ */

/* Up to 18 digits: a number that fits an int64_t; -1 otherwise. */
static int64_t digits(const char *s, size_t n)
{
    if (n == 0 || n > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int aw__serve_cursor_parse(const char *s, aw__serve_cursor *c)
{
    const char *dot = strchr(s, '.');
    int64_t seq = digits(s, dot ? (size_t)(dot - s) : strlen(s));
    if (seq < 0)
        return -1;
    if (!dot) {
        *c = (aw__serve_cursor){seq, 0, 0};
        return 0;
    }
    int64_t part = digits(dot + 1, strlen(dot + 1));
    if (seq < 1 || part < 1 || part > 1000)
        return -1;
    *c = (aw__serve_cursor){seq - 1, seq, (unsigned)part};
    return 0;
}

/* ---- what a step's rows say ----------------------------------------------------------- */

static bool is(const aw_json_value *o, const char *key, const char *want)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_string(v) && !strcmp(v->u.str.ptr, want);
}

typedef struct step_facts {
    int64_t turn;
    int64_t start_ms, end_ms;
    int64_t input_tokens, output_tokens, errors;
    const aw_json_value *finish_reason; /* the last model request's stop reason */
    bool has_tool_calls;
    const aw_json_value *rows, *events;
} step_facts;

/* The step began when its first model request did (the request's end less
 * its latency), as a run's agent.step.started comes just before it, and
 * ended with its last row or event. */
static void step_facts_of(const aw_json_value *step, step_facts *f)
{
    memset(f, 0, sizeof *f);
    f->turn = aw__serve_num(step, "turn", 0);
    f->rows = aw_json_get(step, "accounting");
    f->events = aw_json_get(step, "events");
    f->start_ms = INT64_MAX;
    f->end_ms = INT64_MIN;
    for (size_t i = 0; i < aw_json_count(f->rows); i++) {
        const aw_json_value *row = aw_json_at(f->rows, i);
        int64_t at = aw__serve_num(row, "timestamp", 0);
        if (at > f->end_ms)
            f->end_ms = at;
        if (is(row, "kind", "model")) {
            int64_t began = at - aw__serve_num(row, "latency_ms", 0);
            if (began < f->start_ms)
                f->start_ms = began;
            f->input_tokens = aw__serve_add(f->input_tokens, aw__serve_num(row, "input_tokens", 0));
            f->output_tokens = aw__serve_add(f->output_tokens, aw__serve_num(row, "output_tokens", 0));
            if (aw_json_is_string(aw_json_get(row, "stop_reason")))
                f->finish_reason = aw_json_get(row, "stop_reason");
        } else if (is(row, "kind", "tool")) {
            f->has_tool_calls = true;
            f->errors += !is(row, "status", "ok") && !is(row, "status", "success");
        }
    }
    for (size_t i = 0; i < aw_json_count(f->events); i++) {
        int64_t at = aw__serve_num(aw_json_get(aw_json_at(f->events, i), "event"), "timestamp", 0);
        if (at > f->end_ms)
            f->end_ms = at;
        if (f->start_ms == INT64_MAX)
            f->start_ms = at; /* no model request: the first event there is */
    }
    if (f->start_ms == INT64_MAX)
        f->start_ms = aw__serve_num(step, "created_at", 0);
    if (f->end_ms < f->start_ms)
        f->end_ms = f->start_ms;
}

/* The accounting row of the tool call with this id, or NULL. */
static const aw_json_value *tool_row(const step_facts *f, const aw_json_value *call_id)
{
    if (!aw_json_is_string(call_id))
        return NULL;
    for (size_t i = 0; i < aw_json_count(f->rows); i++) {
        const aw_json_value *row = aw_json_at(f->rows, i), *id = aw_json_get(row, "tool_call_id");
        if (is(row, "kind", "tool") && aw_json_is_string(id) && id->u.str.len == call_id->u.str.len &&
            !memcmp(id->u.str.ptr, call_id->u.str.ptr, id->u.str.len))
            return row;
    }
    return NULL;
}

/* ---- runtime events for the adapter ---------------------------------------------------- */

typedef struct feed {
    const aw_allocator *alloc;
    aw_envelope_adapter *adapter;
    aw_json_doc *doc;     /* this stored event's runtime events and envelopes */
    aw_json_value *group; /* its envelopes, in order */
    aw_error *err;
} feed;

static int collect(void *ctx, const char *channel, const aw_json_value *env)
{
    (void)channel;
    feed *f = ctx;
    aw_json_value *copy = aw_json_copy(f->doc, env);
    return !copy || aw_json_array_push(f->doc, f->group, copy);
}

/* A runtime event of this kind, to be filled in. */
static aw_json_value *runtime_event(feed *f, const char *kind)
{
    aw_json_value *ev = aw_json_new_object(f->doc);
    return ev && !aw_json_object_set_string(f->doc, ev, "event", kind, strlen(kind)) ? ev : NULL;
}

/* The adapter's envelope for ev (at at_ms) joins the group. An event the
 * adapter refuses (a stored event missing a field it needs) gives none:
 * one odd row must not end a viewer's stream. */
static int adapt(feed *f, const aw_json_value *ev, int64_t at_ms)
{
    if (!ev)
        return aw_rt_error(f->err, AW_ENOMEM, "out of memory");
    aw_error err;
    int rc = aw_envelope_adapter_handle(f->adapter, ev, at_ms, &err);
    if (rc == AW_ENOMEM || rc == AW_ESTOP)
        return aw_rt_error(f->err, AW_ENOMEM, "out of memory");
    return 0;
}

static int set_copy(feed *f, aw_json_value *o, const char *key, const aw_json_value *v)
{
    aw_json_value *c = v ? aw_json_copy(f->doc, v) : aw_json_new_null(f->doc);
    return !c || aw_json_object_set(f->doc, o, key, strlen(key), c);
}

static int step_started(feed *f, const step_facts *facts)
{
    aw_json_value *ev = runtime_event(f, "step_started");
    if (ev && aw_json_object_set_int(f->doc, ev, "step_number", facts->turn))
        ev = NULL;
    return adapt(f, ev, facts->start_ms);
}

static int step_completed(feed *f, const step_facts *facts)
{
    aw_json_value *ev = runtime_event(f, "step_completed");
    aw_json_value *usage = aw_json_new_object(f->doc);
    if (!ev || !usage || aw_json_object_set_int(f->doc, usage, "prompt", facts->input_tokens) ||
        aw_json_object_set_int(f->doc, usage, "completion", facts->output_tokens) ||
        aw_json_object_set_int(f->doc, usage, "total", aw__serve_add(facts->input_tokens, facts->output_tokens)) ||
        aw_json_object_set_int(f->doc, ev, "step_number", facts->turn) ||
        aw_json_object_set_bool(f->doc, ev, "has_tool_calls", facts->has_tool_calls) ||
        aw_json_object_set_int(f->doc, ev, "errors", facts->errors) ||
        set_copy(f, ev, "finish_reason", facts->finish_reason) || aw_json_object_set(f->doc, ev, "usage", 5, usage) ||
        aw_json_object_set_int(f->doc, ev, "duration_ms", facts->end_ms - facts->start_ms))
        ev = NULL;
    return adapt(f, ev, facts->end_ms);
}

/* At most max bytes of s, never ending inside a UTF-8 sequence. */
static size_t cut_utf8(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

static int status_of(feed *f, const step_facts *facts, const aw_json_value *completion, int64_t at)
{
    bool ok = is(completion, "status", "success");
    const aw_json_value *result = aw_json_get(completion, "result");
    const char *text = aw_json_is_string(result) ? result->u.str.ptr : "";
    size_t len = cut_utf8(text, aw_json_is_string(result) ? result->u.str.len : 0, 500);
    const char *status = ok ? "completed" : "failed";
    aw_json_value *ev = runtime_event(f, "status");
    if (!ev || aw_json_object_set_string(f->doc, ev, "status", status, strlen(status)) ||
        aw_json_object_set_int(f->doc, ev, "step_count", facts->turn) ||
        (ok ? aw_json_object_set_null(f->doc, ev, "error_message")
            : aw_json_object_set_string(f->doc, ev, "error_message", text, len)) ||
        aw_json_object_set_string(f->doc, ev, "last_response", text, len))
        ev = NULL;
    return adapt(f, ev, at);
}

/* The name of the tool a result answers: its accounting row's command, or
 * the call among the step's events. */
static const aw_json_value *tool_name_of(const step_facts *facts, const aw_json_value *call_id)
{
    const aw_json_value *row = tool_row(facts, call_id);
    if (aw_json_is_string(aw_json_get(row, "command")))
        return aw_json_get(row, "command");
    for (size_t i = 0; aw_json_is_string(call_id) && i < aw_json_count(facts->events); i++) {
        const aw_json_value *ev = aw_json_get(aw_json_at(facts->events, i), "event");
        if (is(ev, "type", "tool_call") && is(ev, "toolCallId", call_id->u.str.ptr))
            return aw_json_get(ev, "toolName");
    }
    return NULL;
}

static int tool_event(feed *f, const step_facts *facts, const aw_json_value *stored, int64_t at)
{
    const aw_json_value *call_id = aw_json_get(stored, "toolCallId");
    if (is(stored, "type", "tool_call")) {
        aw_json_value *ev = runtime_event(f, "tool_started");
        if (!ev || set_copy(f, ev, "tool_name", aw_json_get(stored, "toolName")) ||
            set_copy(f, ev, "tool_call_id", call_id) || set_copy(f, ev, "args", aw_json_get(stored, "args")))
            ev = NULL;
        return adapt(f, ev, at);
    }
    bool ok = is(stored, "type", "tool_result");
    const aw_json_value *name = tool_name_of(facts, call_id);
    const aw_json_value *duration = ok ? aw_json_get(stored, "durationMs") : NULL;
    aw_json_value *ev = runtime_event(f, "tool_completed");
    if (!ev || (name ? set_copy(f, ev, "tool_name", name)
                     : aw_json_object_set_string(f->doc, ev, "tool_name", "unknown", 7)) ||
        set_copy(f, ev, "tool_call_id", call_id) || aw_json_object_set_bool(f->doc, ev, "success", ok) ||
        set_copy(f, ev, "error", ok ? NULL : aw_json_get(stored, "error")) ||
        (aw_json_is_number(duration) ? set_copy(f, ev, "duration_ms", duration)
                                     : aw_json_object_set_int(f->doc, ev, "duration_ms",
                                                              aw__serve_num(tool_row(facts, call_id), "latency_ms", 0))) ||
        set_copy(f, ev, "result", ok ? aw_json_get(stored, "result") : NULL))
        ev = NULL;
    return adapt(f, ev, at);
}

/* The envelopes of one stored event, in order, into the group. */
static int event_envelopes(feed *f, const step_facts *facts, const aw_json_value *stored, bool first, bool last)
{
    int64_t at = aw__serve_num(stored, "timestamp", facts->end_ms);
    int rc = first ? step_started(f, facts) : 0;
    bool tool = is(stored, "type", "tool_call") || is(stored, "type", "tool_result") ||
                (is(stored, "type", "error") && aw_json_is_string(aw_json_get(stored, "toolCallId")));
    if (!rc && tool)
        rc = tool_event(f, facts, stored, at);
    if (!rc && last)
        rc = step_completed(f, facts);
    if (!rc && is(stored, "type", "completion"))
        rc = status_of(f, facts, stored, at);
    return rc;
}

/* Hand the group over with its ids, skipping what the cursor has had. */
static int hand_over(feed *f, int64_t seq, aw__serve_cursor *cur, aw__serve_envelope_fn fn, void *ctx)
{
    size_t m = aw_json_count(f->group);
    for (size_t j = 0; j < m; j++) {
        if (cur->part_seq == seq && j < cur->part)
            continue;
        char id[48];
        if (j + 1 < m)
            snprintf(id, sizeof id, "%" PRId64 ".%zu", seq, j + 1);
        else
            snprintf(id, sizeof id, "%" PRId64, seq);
        if (fn(ctx, id, aw_json_at(f->group, j)))
            return aw_rt_error(f->err, AW_ESTOP, "stopped");
        *cur = j + 1 < m ? (aw__serve_cursor){seq - 1, seq, (unsigned)(j + 1)} : (aw__serve_cursor){seq, 0, 0};
    }
    if (!m)
        *cur = (aw__serve_cursor){seq, 0, 0};
    return 0;
}

int aw__serve_feed(const aw_json_value *steps, const char *session_id, aw__serve_cursor *cur, const aw_allocator *a,
                   aw__serve_envelope_fn fn, void *ctx, aw_error *err)
{
    aw_error_clear(err);
    feed f = {.alloc = a, .err = err};
    aw_envelope_config cfg = {.session_id = session_id, .execution_id = session_id, .alloc = a};
    f.adapter = aw_envelope_adapter_new(&cfg, collect, &f);
    if (!f.adapter)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < aw_json_count(steps) && !rc; i++) {
        const aw_json_value *step = aw_json_at(steps, i);
        step_facts facts;
        step_facts_of(step, &facts);
        bool continued = aw_json_is_bool(aw_json_get(step, "continued")) && aw_json_get(step, "continued")->u.b;
        size_t n = aw_json_count(facts.events);
        for (size_t k = 0; k < n && !rc; k++) {
            const aw_json_value *row = aw_json_at(facts.events, k);
            int64_t seq = aw__serve_num(row, "seq", 0);
            if (seq <= cur->after) /* also a number out of range (0) */
                continue;
            f.doc = aw_json_doc_new(a);
            f.group = f.doc ? aw_json_new_array(f.doc) : NULL;
            if (!f.group)
                rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
            if (!rc)
                rc = event_envelopes(&f, &facts, aw_json_get(row, "event"), k == 0 && !continued, k + 1 == n);
            if (!rc)
                rc = hand_over(&f, seq, cur, fn, ctx);
            aw_json_doc_free(f.doc);
            f.doc = NULL;
        }
    }
    aw_envelope_adapter_free(f.adapter);
    return rc;
}
