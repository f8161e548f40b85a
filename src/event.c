/* The agent event model: a checked, typed view over one JSON object. */
#include <string.h>

#include "agentwire/event.h"
#include "internal/errors.h"
#include "internal/event.h"

static const char *const kind_names[] = {
    "message", "tool_call", "tool_result", "error", "human_input_requested",
    "human_input_received", "completion", "summary", "approval", "plan",
};

const char *aw_event_kind_name(aw_event_kind kind) {
    if ((unsigned)kind < sizeof kind_names / sizeof kind_names[0]) return kind_names[kind];
    return NULL;
}

static aw_event_kind kind_of(const char *s, size_t n) {
    for (size_t k = 0; k < sizeof kind_names / sizeof kind_names[0]; k++)
        if (strlen(kind_names[k]) == n && memcmp(kind_names[k], s, n) == 0) return (aw_event_kind)k;
    return AW_EVENT_OTHER;
}

typedef struct checker {
    const aw_json_value *obj;
    const aw_event *ev;
    aw_error *err;
    const char *bad; /* the field an error names */
} checker;

static int missing(checker *c, const char *field) {
    c->bad = field;
    return aw__error_set(c->err, AW_ETYPE, "%.*s event: field '%s' is missing", (int)c->ev->type.len,
                         c->ev->type.ptr, field);
}

static int mistyped(checker *c, const char *field, const char *want) {
    c->bad = field;
    return aw__error_set(c->err, AW_ETYPE, "%.*s event: field '%s' must be %s", (int)c->ev->type.len,
                         c->ev->type.ptr, field, want);
}

/* Each getter: 0 when fine (optional fields may be absent), else the error. */
static int get_string(checker *c, const char *field, bool required, aw_text *out) {
    const aw_json_value *v = aw_json_get(c->obj, field);
    if (!v) return required ? missing(c, field) : 0;
    if (v->type != AW_JSON_STRING) return mistyped(c, field, "a string");
    out->ptr = v->u.str.ptr;
    out->len = v->u.str.len;
    return 0;
}

static int get_number(checker *c, const char *field, bool required, const aw_json_value **out) {
    const aw_json_value *v = aw_json_get(c->obj, field);
    if (!v) return required ? missing(c, field) : 0;
    if (v->type != AW_JSON_NUMBER) return mistyped(c, field, "a number");
    *out = v;
    return 0;
}

static int get_bool(checker *c, const char *field, bool required, bool *out) {
    const aw_json_value *v = aw_json_get(c->obj, field);
    if (!v) return required ? missing(c, field) : 0;
    if (v->type != AW_JSON_BOOL) return mistyped(c, field, "true or false");
    *out = v->u.b;
    return 0;
}

static int get_group(checker *c, aw_event *ev) {
    const aw_json_value *v = aw_json_get(c->obj, "parallelGroup");
    if (!v) return 0;
    if (v->type != AW_JSON_STRING && v->type != AW_JSON_NUMBER)
        return mistyped(c, "parallelGroup", "a string or a number");
    ev->parallel_group = v;
    return 0;
}

static int check(checker *c, const aw_json_value *obj, aw_event *ev, aw_error *err);

/* The key of obj's member named field that look-ups find (the last one of
 * that name), or NULL. */
static const char *key_of(const aw_json_value *obj, const char *field) {
    size_t n = strlen(field);
    for (size_t i = obj->u.obj.count; i-- > 0;) {
        const aw_json_member *m = &obj->u.obj.members[i];
        if (m->key_len == n && memcmp(m->key, field, n) == 0) return m->key;
    }
    return NULL;
}

int aw__event_check(const aw_json_value *obj, aw_event *ev, aw_error *err, const char **where) {
    checker c = {obj, ev, err, NULL};
    int rc = check(&c, obj, ev, err);
    if (where) *where = rc && c.bad ? key_of(obj, c.bad) : NULL;
    return rc;
}

int aw_event_from_json(const aw_json_value *obj, aw_event *ev, aw_error *err) {
    return aw__event_check(obj, ev, err, NULL);
}

static int check(checker *c, const aw_json_value *obj, aw_event *ev, aw_error *err) {
    memset(ev, 0, sizeof *ev);
    if (!obj || obj->type != AW_JSON_OBJECT) return aw__error_set(err, AW_ETYPE, "event must be a JSON object");
    const aw_json_value *type = aw_json_get(obj, "type");
    if (!type) return aw__error_set(err, AW_ETYPE, "event: field 'type' is missing");
    if (type->type != AW_JSON_STRING) {
        c->bad = "type";
        return aw__error_set(err, AW_ETYPE, "event: field 'type' must be a string");
    }
    ev->json = obj;
    ev->type.ptr = type->u.str.ptr;
    ev->type.len = type->u.str.len;
    ev->kind = kind_of(type->u.str.ptr, type->u.str.len);
    if (ev->kind == AW_EVENT_OTHER) return 0; /* kept as it is; not ours to check */

    /* Required: what the <thread> format writes (and the toolCallId its
     * names are resolved by). Fields it never writes (timestamp,
     * completion's verified, the iteration of approval and plan, which are
     * not written at all) are optional, as the reference serializer never
     * reads them, but checked for type when present. */
        int written = ev->kind != AW_EVENT_APPROVAL && ev->kind != AW_EVENT_PLAN;
    int rc;
    if ((rc = get_number(c, "timestamp", false, &ev->timestamp))) return rc;
    if ((rc = get_number(c, "iteration", written, &ev->iteration))) return rc;
    switch (ev->kind) {
    case AW_EVENT_MESSAGE: {
        aw_text role = {0};
        if ((rc = get_string(c, "role", true, &role))) return rc;
        if (role.len == 4 && memcmp(role.ptr, "user", 4) == 0) ev->role = AW_ROLE_USER;
        else if (role.len == 9 && memcmp(role.ptr, "assistant", 9) == 0) ev->role = AW_ROLE_ASSISTANT;
        else if (role.len == 6 && memcmp(role.ptr, "system", 6) == 0) ev->role = AW_ROLE_SYSTEM;
        else return mistyped(c, "role", "\"user\", \"assistant\" or \"system\"");
        return get_string(c, "content", true, &ev->text);
    }
    case AW_EVENT_TOOL_CALL:
        if ((rc = get_string(c, "toolName", true, &ev->tool_name))) return rc;
        if ((rc = get_string(c, "toolCallId", true, &ev->tool_call_id))) return rc;
        ev->args = aw_json_get(obj, "args");
        if (!ev->args) return missing(c, "args");
        if (ev->args->type != AW_JSON_OBJECT) return mistyped(c, "args", "an object");
        return get_group(c, ev);
    case AW_EVENT_TOOL_RESULT:
        if ((rc = get_string(c, "toolCallId", true, &ev->tool_call_id))) return rc;
        ev->result = aw_json_get(obj, "result");
        if (!ev->result) return missing(c, "result");
        if ((rc = get_number(c, "durationMs", false, &ev->duration_ms))) return rc;
        return get_group(c, ev);
    case AW_EVENT_ERROR:
        if ((rc = get_string(c, "error", true, &ev->text))) return rc;
        if ((rc = get_string(c, "toolCallId", false, &ev->tool_call_id))) return rc;
        return get_bool(c, "recoverable", true, &ev->recoverable);
    case AW_EVENT_HUMAN_INPUT_REQUESTED:
        return get_string(c, "question", true, &ev->text);
    case AW_EVENT_HUMAN_INPUT_RECEIVED:
        return get_string(c, "response", true, &ev->text);
    case AW_EVENT_COMPLETION:
        if ((rc = get_string(c, "result", true, &ev->text))) return rc;
        return get_bool(c, "verified", false, &ev->verified);
    case AW_EVENT_SUMMARY: {
        const aw_json_value *its = aw_json_get(obj, "summarizedIterations");
        if (!its) return missing(c, "summarizedIterations");
        if (its->type != AW_JSON_ARRAY) return mistyped(c, "summarizedIterations", "an array of numbers");
        for (size_t i = 0; i < its->u.arr.count; i++)
            if (its->u.arr.items[i].type != AW_JSON_NUMBER)
                return mistyped(c, "summarizedIterations", "an array of numbers");
        ev->summarized_iterations = its;
        return get_string(c, "summary", true, &ev->text);
    }
    default: return 0; /* approval, plan: common fields only */
    }
}
