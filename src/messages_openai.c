/* OpenAI chat-completions messages -> the normalized list.
 *
 *   {"role": "system"|"developer"|"user"|"assistant"|"tool",
 *    "content": string | [{"type": "text", "text": ...}, ...] | null,
 *    "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}],
 *    "tool_call_id": ...}
 *
 * developer is the newer name of system. The legacy assistant
 * "function_call" {"name", "arguments"} is read as one call without an id,
 * and the legacy result {"role": "function", "name", "content"} as a tool
 * output named by its "name". Image, audio and file parts are described,
 * not pasted (messages_media.c). */
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/messages.h"

static int oom(aw_error *err) { return aw__error_set(err, AW_ENOMEM, "out of memory"); }

static int is(aw_text t, const char *s) { return t.len == strlen(s) && memcmp(t.ptr, s, t.len) == 0; }

int aw__msg_openai_call(aw__msg_list *l, const aw_json_value *call, size_t index,
                        const char *field, aw_error *err) {
    char path[160];
    if (!aw_json_is_object(call))
        return aw__error_set(err, AW_ETYPE, "message %zu: '%s' must be an object", index, field);
    const aw_json_value *fn = aw_json_get(call, "function");
    if (!aw_json_is_object(fn))
        return aw__error_set(err, AW_ETYPE, "message %zu: '%s.function' must be an object", index, field);
    aw_text id, name;
    snprintf(path, sizeof path, "%s.id", field);
    int rc = aw__msg_opt_string(call, "id", index, path, &id, err);
    snprintf(path, sizeof path, "%s.function.name", field);
    if (!rc) rc = aw__msg_req_string(fn, "name", index, path, &name, err);
    if (rc) return rc;
    const aw_json_value *args = aw_json_get(fn, "arguments");
    if (args && args->type == AW_JSON_NULL) args = NULL;
    if (aw__msg_push_call(l, id, name, args)) return oom(err);
    return 0;
}

static int read_role(const aw_json_value *msg, size_t index, aw__msg_role *role, aw_error *err) {
    aw_text r;
    int rc = aw__msg_req_string(msg, "role", index, "role", &r, err);
    if (rc) return rc;
    if (is(r, "system") || is(r, "developer")) *role = AW__MSG_SYSTEM;
    else if (is(r, "user")) *role = AW__MSG_USER;
    else if (is(r, "assistant")) *role = AW__MSG_ASSISTANT;
    else if (is(r, "tool") || is(r, "function")) *role = AW__MSG_TOOL;
    else
        return aw__error_set(err, AW_EVALID,
                             "message %zu: unknown role '%.*s' (expected system, developer, user, "
                             "assistant, tool or function)",
                             index, (int)(r.len > 40 ? 40 : r.len), r.ptr);
    return 0;
}

static int read_calls(aw__msg_list *l, const aw_json_value *msg, size_t index, aw_error *err) {
    const aw_json_value *calls = aw_json_get(msg, "tool_calls");
    if (calls && calls->type != AW_JSON_NULL) {
        if (calls->type != AW_JSON_ARRAY)
            return aw__error_set(err, AW_ETYPE, "message %zu: 'tool_calls' must be an array", index);
        for (size_t i = 0; i < calls->u.arr.count; i++) {
            char field[40];
            snprintf(field, sizeof field, "tool_calls[%zu]", i);
            int rc = aw__msg_openai_call(l, &calls->u.arr.items[i], index, field, err);
            if (rc) return rc;
        }
    }
    const aw_json_value *fc = aw_json_get(msg, "function_call");
    if (fc && fc->type != AW_JSON_NULL) {
        if (fc->type != AW_JSON_OBJECT)
            return aw__error_set(err, AW_ETYPE, "message %zu: 'function_call' must be an object", index);
        aw_text id = {NULL, 0}, name;
        int rc = aw__msg_req_string(fc, "name", index, "function_call.name", &name, err);
        if (rc) return rc;
        const aw_json_value *args = aw_json_get(fc, "arguments");
        if (args && args->type == AW_JSON_NULL) args = NULL;
        if (aw__msg_push_call(l, id, name, args)) return oom(err);
    }
    return 0;
}

int aw__msg_read_openai(aw__msg_list *l, const aw_json_value *msgs, aw_error *err) {
    for (size_t k = 0; k < msgs->u.arr.count; k++) {
        const aw_json_value *msg = &msgs->u.arr.items[k];
        size_t i = l->base + k; /* the message's index in the whole input */
        l->reading = k;
        if (!aw_json_is_object(msg))
            return aw__error_set(err, AW_ETYPE, "message %zu: must be a JSON object", i);
        aw__msg_role role = AW__MSG_USER;
        int rc = read_role(msg, i, &role, err);
        if (rc) return rc;
        aw_text text, call_id = {NULL, 0};
        rc = aw__msg_text_parts(l, aw_json_get(msg, "content"), i, "content", &text, err);
        if (rc) return rc;
        if (role == AW__MSG_TOOL && (rc = aw__msg_opt_string(msg, "tool_call_id", i, "tool_call_id",
                                                             &call_id, err)))
            return rc;
        /* the legacy function result names itself: {"role": "function", "name"} */
        aw_text tool_name = {NULL, 0};
        const aw_json_value *r = aw_json_get(msg, "role");
        if (role == AW__MSG_TOOL && r->u.str.len == 8 && memcmp(r->u.str.ptr, "function", 8) == 0 &&
            (rc = aw__msg_req_string(msg, "name", i, "name", &tool_name, err)))
            return rc;
        aw__msg *m = aw__msg_push(l, role, i);
        if (!m) return oom(err);
        m->text = text;
        m->call_id = call_id;
        m->tool_name = tool_name;
        if (role == AW__MSG_ASSISTANT && (rc = read_calls(l, msg, i, err))) return rc;
    }
    return 0;
}
