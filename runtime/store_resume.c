/* Resuming a session: the whole steps' rows joined into what a run takes
 * to continue (aw_run_config.resume and .history, as run.c's restore()
 * reads them). The rows come from a database, so nothing in them is
 * trusted: each text must parse, each chat message must have a known role
 * and string content, each event must be an event the thread writer
 * takes, and the numbers must be in range; anything else is a corrupt row
 * named by its step, never a crash or a run fed garbage. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/event.h"
#include "internal/rt_util.h"
#include "internal/store_impl.h"

#define MAX_TURN 1000000

typedef struct assembly {
    const aw_allocator *alloc;
    aw_json_doc *resume, *history;
    aw_json_value *chat, *events;
    aw_error *err;
} assembly;

static int bad_row(assembly *a, size_t step, const char *what)
{
    return aw_rt_error(a->err, AW_STORE_ECORRUPT, "stored step %zu cannot be resumed: %s", step, what);
}

static int parse_text(assembly *a, const aw_json_value *text, aw_json_doc **out, size_t step, const char *what)
{
    if (!aw_json_is_string(text)) {
        char msg[96];
        snprintf(msg, sizeof msg, "its %s is missing", what);
        return bad_row(a, step, msg);
    }
    aw_json_read_options ro = {.alloc = a->alloc, .max_depth = 200};
    aw_error jerr;
    int rc = aw_json_parse(text->u.str.ptr, text->u.str.len, &ro, out, &jerr);
    if (rc == AW_ENOMEM)
        return aw_rt_error(a->err, AW_ENOMEM, "out of memory");
    if (rc) {
        char msg[200];
        snprintf(msg, sizeof msg, "its %s is not JSON (%.120s)", what, jerr.message);
        return bad_row(a, step, msg);
    }
    return 0;
}

static bool is_text(const aw_json_value *v) { return aw_json_is_string(v); }

static int check_chat_message(assembly *a, const aw_json_value *m, size_t step)
{
    static const char *const roles[] = {"system", "user", "assistant", "tool"};
    const aw_json_value *role = aw_json_get(m, "role");
    if (!aw_json_is_object(m) || !is_text(role) || !is_text(aw_json_get(m, "content")))
        return bad_row(a, step, "a chat message without a role or content");
    bool known = false;
    for (size_t i = 0; i < 4; i++)
        known = known || !strcmp(role->u.str.ptr, roles[i]);
    if (!known)
        return bad_row(a, step, "a chat message with an unknown role");
    const aw_json_value *calls = aw_json_get(m, "tool_calls");
    if (calls && !aw_json_is_array(calls))
        return bad_row(a, step, "tool_calls is not an array");
    for (size_t i = 0; i < aw_json_count(calls); i++) {
        const aw_json_value *c = aw_json_at(calls, i);
        if (!aw_json_is_object(c) || !is_text(aw_json_get(c, "id")) || !is_text(aw_json_get(c, "name")) ||
            !is_text(aw_json_get(c, "arguments")))
            return bad_row(a, step, "a tool call without its id, name or arguments");
    }
    return 0;
}

static bool finite_at_least_zero(const aw_json_value *v, double max)
{
    return aw_json_is_number(v) && isfinite(v->u.num.d) && v->u.num.d >= 0 && v->u.num.d <= max;
}

/* One step's resume object: its chat joined, its numbers checked. */
static int add_resume(assembly *a, const aw_json_value *res, size_t step)
{
    if (!aw_json_is_object(res))
        return bad_row(a, step, "its resume data is not an object");
    const aw_json_value *turn = aw_json_get(res, "turn");
    if (!finite_at_least_zero(turn, MAX_TURN) || turn->u.num.d != floor(turn->u.num.d))
        return bad_row(a, step, "its turn is not a whole number in range");
    const aw_json_value *secs = aw_json_get(res, "seconds");
    if (secs && !finite_at_least_zero(secs, 1e12))
        return bad_row(a, step, "its seconds are not a number in range");
    const aw_json_value *nonce = aw_json_get(res, "nonce");
    if (nonce && !is_text(nonce))
        return bad_row(a, step, "its nonce is not a string");
    const aw_json_value *u = aw_json_get(res, "usage");
    if (u && !aw_json_is_object(u))
        return bad_row(a, step, "its usage is not an object");
    for (size_t i = 0; i < aw_json_count(u); i++)
        if (!finite_at_least_zero(&u->u.obj.members[i].value, 9e15))
            return bad_row(a, step, "a usage count is not a number in range");
    const aw_json_value *chat = aw_json_get(res, "chat");
    if (chat && !aw_json_is_array(chat))
        return bad_row(a, step, "its chat is not an array");
    for (size_t i = 0; i < aw_json_count(chat); i++) {
        const aw_json_value *m = aw_json_at(chat, i);
        int rc = check_chat_message(a, m, step);
        if (rc)
            return rc;
        aw_json_value *copy = aw_json_copy(a->resume, m);
        if (!copy || aw_json_array_push(a->resume, a->chat, copy))
            return aw_rt_error(a->err, AW_ENOMEM, "out of memory");
    }
    return 0;
}

static int add_event(assembly *a, const aw_json_value *text, size_t step)
{
    aw_json_doc *d = NULL;
    int rc = parse_text(a, text, &d, step, "event");
    if (rc)
        return rc;
    const aw_json_value *ev = aw_json_doc_root(d);
    aw_event parsed;
    aw_error eerr;
    rc = aw_event_from_json(ev, &parsed, &eerr);
    if (rc == AW_ENOMEM) {
        rc = aw_rt_error(a->err, AW_ENOMEM, "out of memory");
    } else if (rc) {
        char msg[200];
        snprintf(msg, sizeof msg, "an event is malformed (%.120s)", eerr.message);
        rc = bad_row(a, step, msg);
    } else {
        aw_json_value *copy = aw_json_copy(a->history, ev);
        if (!copy || aw_json_array_push(a->history, a->events, copy))
            rc = aw_rt_error(a->err, AW_ENOMEM, "out of memory");
    }
    aw_json_doc_free(d);
    return rc;
}

/* The last step's turn, nonce, usage and seconds, with every step's chat. */
static int finish_resume(assembly *a, const aw_json_value *last)
{
    aw_json_value *root = aw_json_new_object(a->resume);
    static const char *const keys[] = {"turn", "nonce", "usage", "seconds"};
    if (!root)
        return AW_ENOMEM;
    for (size_t i = 0; i < 4; i++) {
        const aw_json_value *v = aw_json_get(last, keys[i]);
        aw_json_value *copy = v ? aw_json_copy(a->resume, v) : NULL;
        if (v && (!copy || aw_json_object_set(a->resume, root, keys[i], strlen(keys[i]), copy)))
            return AW_ENOMEM;
    }
    if (aw_json_object_set(a->resume, root, "chat", 4, a->chat))
        return AW_ENOMEM;
    aw_json_doc_set_root(a->resume, root);
    aw_json_doc_set_root(a->history, a->events);
    return 0;
}

int aw_store_resume_assemble(const aw_json_value *rows, const aw_allocator *alloc, aw_store_resume *out,
                             aw_error *err)
{
    aw_error_clear(err);
    memset(out, 0, sizeof *out);
    if (!aw_json_is_array(rows))
        return aw_rt_error(err, AW_STORE_ECORRUPT, "the stored steps are not a list");
    size_t n = aw_json_count(rows);
    if (n == 0) {
        out->needs_task = true;
        return 0;
    }
    assembly a = {.alloc = alloc, .err = err};
    a.resume = aw_json_doc_new(alloc);
    a.history = aw_json_doc_new(alloc);
    a.chat = a.resume ? aw_json_new_array(a.resume) : NULL;
    a.events = a.history ? aw_json_new_array(a.history) : NULL;
    int rc = a.chat && a.events ? 0 : aw_rt_error(err, AW_ENOMEM, "out of memory");
    aw_json_doc *last = NULL;
    bool last_final = false;
    for (size_t i = 0; i < n && !rc; i++) {
        const aw_json_value *row = aw_json_at(rows, i);
        if (!aw_json_is_object(row)) {
            rc = bad_row(&a, i + 1, "the row is not an object");
            break;
        }
        aw_json_doc_free(last);
        last = NULL;
        rc = parse_text(&a, aw_json_get(row, "resume"), &last, i + 1, "resume data");
        if (!rc)
            rc = add_resume(&a, aw_json_doc_root(last), i + 1);
        const aw_json_value *evs = aw_json_get(row, "events");
        if (!rc && evs && !aw_json_is_array(evs))
            rc = bad_row(&a, i + 1, "its events are not a list");
        for (size_t k = 0; !rc && k < aw_json_count(evs); k++)
            rc = add_event(&a, aw_json_at(evs, k), i + 1);
        const aw_json_value *fin = aw_json_get(row, "final");
        last_final = aw_json_is_bool(fin) && fin->u.b;
    }
    if (!rc && finish_resume(&a, aw_json_doc_root(last)))
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    aw_json_doc_free(last);
    if (rc) {
        aw_json_doc_free(a.resume);
        aw_json_doc_free(a.history);
        return rc;
    }
    out->resume = a.resume;
    out->history = a.history;
    out->steps = n;
    out->needs_task = last_final;
    return 0;
}
