/* A session's steps as GET /api/sessions/ID gives them, folded from the
 * same envelopes its event stream sends (serve_feed.c), so the summary
 * and the live page never tell two stories; and the counts of its
 * accounting rows. Times are milliseconds since 1970, as in the session. */
#include <stdint.h>
#include <string.h>

#include "agentwire/envelope.h"
#include "internal/rt_util.h"
#include "internal/serve_impl.h"

int aw__serve_summary_init(aw__serve_summary *s, aw_json_doc *doc)
{
    memset(s, 0, sizeof *s);
    s->doc = doc;
    s->current = SIZE_MAX;
    s->steps = aw_json_new_array(doc);
    return s->steps ? 0 : AW_ENOMEM;
}

static bool same_string(const aw_json_value *a, const aw_json_value *b)
{
    return aw_json_is_string(a) && aw_json_is_string(b) && a->u.str.len == b->u.str.len &&
           !memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len);
}

static int64_t num(const aw_json_value *o, const char *key) { return aw__serve_num(o, key, 0); }

/* Set key to a copy of v (null when v is NULL). */
static void put(aw__serve_summary *s, aw_json_value *o, const char *key, const aw_json_value *v)
{
    aw_json_value *c = v ? aw_json_copy(s->doc, v) : aw_json_new_null(s->doc);
    if (!c || aw_json_object_set(s->doc, o, key, strlen(key), c))
        s->oom = true;
}

static void put_int(aw__serve_summary *s, aw_json_value *o, const char *key, int64_t v)
{
    if (aw_json_object_set_int(s->doc, o, key, v))
        s->oom = true;
}

/* An object with these keys, all null. */
static aw_json_value *blank(aw__serve_summary *s, const char *const *keys, size_t n)
{
    aw_json_value *o = aw_json_new_object(s->doc);
    for (size_t i = 0; o && i < n; i++)
        if (aw_json_object_set_null(s->doc, o, keys[i]))
            o = NULL;
    if (!o)
        s->oom = true;
    return o;
}

/* The step with this number (made when new), which becomes the current one. */
static aw_json_value *step_numbered(aw__serve_summary *s, const aw_json_value *number)
{
    for (size_t i = aw_json_count(s->steps); i-- > 0;) {
        aw_json_value *st = aw_json_at_mut(s->steps, i);
        if (aw_json_equal(aw_json_get(st, "step_number"), number)) {
            s->current = i;
            return st;
        }
    }
    static const char *const keys[] = {"step_number", "started_at", "ended_at",      "duration_ms",
                                       "usage",       "errors",     "finish_reason", "has_tool_calls"};
    aw_json_value *st = blank(s, keys, sizeof keys / sizeof *keys);
    aw_json_value *tools = aw_json_new_array(s->doc);
    if (!st || !tools || aw_json_object_set(s->doc, st, "tools", 5, tools) || aw_json_array_push(s->doc, s->steps, st)) {
        s->oom = true;
        return NULL;
    }
    s->current = aw_json_count(s->steps) - 1;
    st = aw_json_at_mut(s->steps, s->current);
    put(s, st, "step_number", number);
    return st;
}

/* The current step's tool call with this id (made when new). */
static aw_json_value *tool_call(aw__serve_summary *s, const aw_json_value *call_id, bool *made)
{
    *made = false;
    if (s->current == SIZE_MAX && !step_numbered(s, &(aw_json_value){.type = AW_JSON_NULL}))
        return NULL;
    aw_json_value *tools = aw_json_get_mut(aw_json_at_mut(s->steps, s->current), "tools");
    for (size_t i = aw_json_count(tools); i-- > 0;) {
        aw_json_value *t = aw_json_at_mut(tools, i);
        if (same_string(aw_json_get(t, "tool_call_id"), call_id))
            return t;
    }
    static const char *const keys[] = {"tool_call_id", "tool_name", "started_at",     "duration_ms",
                                       "success",      "error",     "args_summary",   "result_summary"};
    aw_json_value *t = blank(s, keys, sizeof keys / sizeof *keys);
    if (!t || aw_json_array_push(s->doc, tools, t)) {
        s->oom = true;
        return NULL;
    }
    *made = true;
    return aw_json_at_mut(tools, aw_json_count(tools) - 1);
}

int aw__serve_summary_add(void *summary, const char *id, const aw_json_value *env)
{
    (void)id;
    aw__serve_summary *s = summary;
    const aw_json_value *type = aw_json_get(env, "type"), *p = aw_json_get(env, "payload");
    const aw_json_value *ts = aw_json_get(env, "timestamp");
    int64_t at = 0;
    if (!aw_json_is_string(type) || !aw_json_is_string(ts) || aw_time_parse_rfc3339(ts->u.str.ptr, ts->u.str.len, &at))
        return 0;
    const char *t = type->u.str.ptr;
    if (!strcmp(t, "agent.step.started")) {
        aw_json_value *st = step_numbered(s, aw_json_get(p, "step_number"));
        if (st)
            put_int(s, st, "started_at", at);
    } else if (!strcmp(t, "agent.step.completed")) {
        aw_json_value *st = step_numbered(s, aw_json_get(p, "step_number"));
        if (!st)
            return s->oom;
        int64_t ms = num(p, "duration_ms");
        if (aw_json_is_null(aw_json_get(st, "started_at")))
            put_int(s, st, "started_at", at - ms);
        put_int(s, st, "ended_at", at);
        put_int(s, st, "duration_ms", ms);
        static const char *const keys[] = {"usage", "errors", "finish_reason", "has_tool_calls"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            put(s, st, keys[i], aw_json_get(p, keys[i]));
    } else if (!strcmp(t, "agent.tool.started") || !strcmp(t, "agent.tool.completed")) {
        bool made;
        aw_json_value *tc = tool_call(s, aw_json_get(p, "tool_call_id"), &made);
        if (!tc)
            return s->oom;
        put(s, tc, "tool_call_id", aw_json_get(p, "tool_call_id"));
        put(s, tc, "tool_name", aw_json_get(p, "tool_name"));
        if (t[11] == 's') {
            put_int(s, tc, "started_at", at);
            put(s, tc, "args_summary", aw_json_get(p, "args_summary"));
        } else {
            int64_t ms = num(p, "duration_ms");
            if (made)
                put_int(s, tc, "started_at", at - ms);
            put_int(s, tc, "duration_ms", ms);
            static const char *const keys[] = {"success", "error", "result_summary"};
            for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
                put(s, tc, keys[i], aw_json_get(p, keys[i]));
        }
    }
    return s->oom;
}

/* ---- the accounting rows' counts ---------------------------------------------------- */

static bool kind_is(const aw_json_value *row, const char *want)
{
    const aw_json_value *v = aw_json_get(row, "kind");
    return aw_json_is_string(v) && !strcmp(v->u.str.ptr, want);
}

static bool failed(const aw_json_value *row)
{
    const aw_json_value *v = aw_json_get(row, "status");
    return !aw_json_is_string(v) || (strcmp(v->u.str.ptr, "ok") && strcmp(v->u.str.ptr, "success"));
}

/* The by_tool entry for the row's command (made when new). */
static aw_json_value *tool_entry(aw_json_doc *d, aw_json_value *by_tool, const aw_json_value *name)
{
    for (size_t i = 0; i < aw_json_count(by_tool); i++) {
        aw_json_value *e = aw_json_at_mut(by_tool, i);
        if (same_string(aw_json_get(e, "name"), name))
            return e;
    }
    aw_json_value *e = aw_json_new_object(d), *copy = aw_json_copy(d, name);
    if (!e || !copy || aw_json_object_set(d, e, "name", 4, copy) || aw_json_object_set_int(d, e, "calls", 0) ||
        aw_json_object_set_int(d, e, "failures", 0) || aw_json_object_set_int(d, e, "total_ms", 0) ||
        aw_json_array_push(d, by_tool, e))
        return NULL;
    return aw_json_at_mut(by_tool, aw_json_count(by_tool) - 1);
}

aw_json_value *aw__serve_accounting_summary(aw_json_doc *d, const aw_json_value *rows)
{
    int64_t models = 0, calls = 0, failures = 0;
    aw_json_value *by_tool = aw_json_new_array(d);
    for (size_t i = 0; by_tool && i < aw_json_count(rows); i++) {
        const aw_json_value *row = aw_json_at(rows, i), *cmd = aw_json_get(row, "command");
        if (kind_is(row, "model")) {
            models++;
            continue;
        }
        if (!kind_is(row, "tool") || !aw_json_is_string(cmd))
            continue;
        calls++;
        failures += failed(row);
        aw_json_value *e = tool_entry(d, by_tool, cmd);
        if (!e || aw_json_object_set_int(d, e, "calls", num(e, "calls") + 1) ||
            aw_json_object_set_int(d, e, "failures", num(e, "failures") + failed(row)) ||
            aw_json_object_set_int(d, e, "total_ms", aw__serve_add(num(e, "total_ms"), num(row, "latency_ms"))))
            return NULL;
    }
    aw_json_value *o = aw_json_new_object(d);
    if (!by_tool || !o || aw_json_object_set_int(d, o, "model_requests", models) ||
        aw_json_object_set_int(d, o, "tool_calls", calls) || aw_json_object_set_int(d, o, "tool_failures", failures) ||
        aw_json_object_set(d, o, "by_tool", 7, by_tool))
        return NULL;
    return o;
}
