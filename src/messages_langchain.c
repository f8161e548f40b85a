/* LangChain messages -> the normalized list. Three spellings of one thing:
 *
 *   {"type": "human", "data": {"content": ..., ...}}     Python messages_to_dict
 *   {"type": "human", "content": ..., ...}               the flat dict
 *   {"lc": 1, "type": "constructor",                     JSON.stringify of a
 *    "id": ["langchain_core", "messages", "HumanMessage"], JavaScript BaseMessage
 *    "kwargs": {"content": ..., ...}}
 *
 * Types human, ai, system, tool (and the aliases user, assistant; class
 * names with or without "Chunk"); generic (ChatMessage) takes its "role"
 * (human/user, ai/assistant, system/developer, tool); function
 * (FunctionMessage) is a tool output named by its "name". A tool message
 * with "status": "error" is a failed result. Content that is not a string
 * is written as its compact JSON, as the reference (which takes BaseMessage
 * objects) does, unless it holds media or thinking parts: those are never
 * pasted, so such content is joined as OpenAI's parts are (text, media
 * described, thinking left out). An ai message's "tool_calls" are [{"name", "args", "id"}]; when it
 * has no "tool_calls" at all (older dumps), "additional_kwargs.tool_calls"
 * in the OpenAI shape is used. */
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/messages.h"

static int oom(aw_error *err) { return aw__error_set(err, AW_ENOMEM, "out of memory"); }

static int is(const char *p, size_t n, const char *s) { return n == strlen(s) && memcmp(p, s, n) == 0; }

/* The kinds of message beyond the four roles. */
typedef enum lc_kind { LC_PLAIN = 0, LC_GENERIC, LC_FUNCTION } lc_kind;

static int role_of(const char *p, size_t n, aw__msg_role *role, lc_kind *kind) {
    if (n > 5 && memcmp(p + n - 5, "Chunk", 5) == 0) n -= 5; /* AIMessageChunk */
    *kind = LC_PLAIN;
    if (is(p, n, "human") || is(p, n, "user") || is(p, n, "HumanMessage")) *role = AW__MSG_USER;
    else if (is(p, n, "ai") || is(p, n, "assistant") || is(p, n, "AIMessage")) *role = AW__MSG_ASSISTANT;
    else if (is(p, n, "system") || is(p, n, "SystemMessage")) *role = AW__MSG_SYSTEM;
    else if (is(p, n, "tool") || is(p, n, "ToolMessage")) *role = AW__MSG_TOOL;
    else if (is(p, n, "generic") || is(p, n, "chat") || is(p, n, "ChatMessage")) *kind = LC_GENERIC;
    else if (is(p, n, "function") || is(p, n, "FunctionMessage")) {
        *role = AW__MSG_TOOL;
        *kind = LC_FUNCTION;
    } else return -1;
    return 0;
}

/* A ChatMessage's own "role". */
static int generic_role(const aw_json_value *fields, const char *prefix, size_t index, aw__msg_role *role,
                        aw_error *err) {
    char field[32];
    snprintf(field, sizeof field, "%srole", prefix);
    aw_text r;
    int rc = aw__msg_req_string(fields, "role", index, field, &r, err);
    if (rc) return rc;
    lc_kind kind;
    if (is(r.ptr, r.len, "developer")) *role = AW__MSG_SYSTEM;
    else if (role_of(r.ptr, r.len, role, &kind) || kind != LC_PLAIN)
        return aw__error_set(err, AW_EVALID,
                             "message %zu: unknown role '%.*s' of a generic message (expected human, user, ai, "
                             "assistant, system, developer or tool)",
                             index, (int)(r.len > 40 ? 40 : r.len), r.ptr);
    return 0;
}

/* Find the type and the object holding the fields; *prefix names that
 * object in errors ("data.", "kwargs." or ""). */
static int unwrap(const aw_json_value *msg, size_t index, aw__msg_role *role, lc_kind *kind,
                  const aw_json_value **fields, const char **prefix, aw_error *err) {
    const aw_json_value *type = aw_json_get(msg, "type");
    if (!type) return aw__error_set(err, AW_ETYPE, "message %zu: 'type' is missing", index);
    if (!aw_json_is_string(type))
        return aw__error_set(err, AW_ETYPE, "message %zu: 'type' must be a string", index);
    const char *name = type->u.str.ptr;
    size_t name_len = type->u.str.len;
    const char *what = "type";
    *fields = msg;
    *prefix = "";
    if (is(name, name_len, "constructor")) {
        const aw_json_value *id = aw_json_get(msg, "id");
        size_t n = aw_json_count(id);
        const aw_json_value *last = aw_json_is_array(id) && n ? aw_json_at(id, n - 1) : NULL;
        if (!aw_json_is_string(last))
            return aw__error_set(err, AW_ETYPE, "message %zu: 'id' must be an array ending in a class name",
                                 index);
        *fields = aw_json_get(msg, "kwargs");
        *prefix = "kwargs.";
        if (!aw_json_is_object(*fields))
            return aw__error_set(err, AW_ETYPE, "message %zu: 'kwargs' must be an object", index);
        name = last->u.str.ptr;
        name_len = last->u.str.len;
        what = "class";
    } else if (aw_json_is_object(aw_json_get(msg, "data"))) {
        *fields = aw_json_get(msg, "data");
        *prefix = "data.";
    }
    if (role_of(name, name_len, role, kind))
        return aw__error_set(err, AW_EVALID,
                             "message %zu: unknown %s '%.*s' (expected human, ai, system, tool, generic or "
                             "function)",
                             index, what, (int)(name_len > 40 ? 40 : name_len), name);
    if (*kind == LC_GENERIC) return generic_role(*fields, *prefix, index, role, err);
    return 0;
}

static int read_call(aw__msg_list *l, const aw_json_value *call, size_t index, const char *field,
                     aw_error *err) {
    char path[160];
    if (!aw_json_is_object(call))
        return aw__error_set(err, AW_ETYPE, "message %zu: '%s' must be an object", index, field);
    aw_text id, name;
    snprintf(path, sizeof path, "%s.id", field);
    int rc = aw__msg_opt_string(call, "id", index, path, &id, err);
    snprintf(path, sizeof path, "%s.name", field);
    if (!rc) rc = aw__msg_req_string(call, "name", index, path, &name, err);
    if (rc) return rc;
    const aw_json_value *args = aw_json_get(call, "args");
    if (args && args->type == AW_JSON_NULL) args = NULL;
    if (aw__msg_push_call(l, id, name, args)) return oom(err);
    return 0;
}

static int read_calls(aw__msg_list *l, const aw_json_value *fields, const char *prefix, size_t index,
                      aw_error *err) {
    const aw_json_value *calls = aw_json_get(fields, "tool_calls");
    int openai = 0;
    /* only when "tool_calls" is absent: an empty list next to
     * additional_kwargs means LangChain could not parse those calls, and the
     * reference (which reads tool_calls) writes none */
    if (!calls || calls->type == AW_JSON_NULL) {
        const aw_json_value *kw = aw_json_get(fields, "additional_kwargs");
        const aw_json_value *more = aw_json_get(kw, "tool_calls");
        if (more && more->type != AW_JSON_NULL) {
            calls = more;
            openai = 1;
        }
    }
    if (!calls || calls->type == AW_JSON_NULL) return 0;
    const char *where = openai ? "additional_kwargs.tool_calls" : "tool_calls";
    if (calls->type != AW_JSON_ARRAY)
        return aw__error_set(err, AW_ETYPE, "message %zu: '%s%s' must be an array", index, prefix, where);
    for (size_t i = 0; i < calls->u.arr.count; i++) {
        char field[96];
        snprintf(field, sizeof field, "%s%s[%zu]", prefix, where, i);
        int rc = openai ? aw__msg_openai_call(l, &calls->u.arr.items[i], index, field, err)
                        : read_call(l, &calls->u.arr.items[i], index, field, err);
        if (rc) return rc;
    }
    return 0;
}

/* Content as the reference writes it (a string, or the compact JSON of
 * anything else), except that media and thinking are never pasted. */
static int read_content(aw__msg_list *l, const aw_json_value *content, const char *prefix, size_t index,
                        aw_text *text, aw_error *err) {
    if (aw_json_is_array(content) && aw__msg_has_media(content)) {
        char field[32];
        snprintf(field, sizeof field, "%scontent", prefix);
        return aw__msg_join(l, content, 0, content->u.arr.count, false, index, field, text, err);
    }
    if (aw__msg_text_json(l, content, text)) return oom(err);
    return 0;
}

/* A tool (or function) message's call id, own name and status. */
static int read_result(const aw_json_value *fields, const char *prefix, size_t index, lc_kind kind,
                       aw_text *call_id, aw_text *tool_name, bool *failed, aw_error *err) {
    char field[48];
    snprintf(field, sizeof field, "%stool_call_id", prefix);
    int rc = aw__msg_opt_string(fields, "tool_call_id", index, field, call_id, err);
    if (!rc && kind == LC_FUNCTION) {
        snprintf(field, sizeof field, "%sname", prefix);
        rc = aw__msg_req_string(fields, "name", index, field, tool_name, err);
    }
    if (rc) return rc;
    aw_text status;
    snprintf(field, sizeof field, "%sstatus", prefix);
    if ((rc = aw__msg_opt_string(fields, "status", index, field, &status, err))) return rc;
    if (status.ptr && !is(status.ptr, status.len, "success") && !is(status.ptr, status.len, "error"))
        return aw__error_set(err, AW_EVALID, "message %zu: '%s' must be \"success\" or \"error\", not '%.*s'", index,
                             field, (int)(status.len > 40 ? 40 : status.len), status.ptr);
    *failed = status.ptr && is(status.ptr, status.len, "error");
    return 0;
}

int aw__msg_read_langchain(aw__msg_list *l, const aw_json_value *msgs, aw_error *err) {
    for (size_t k = 0; k < msgs->u.arr.count; k++) {
        const aw_json_value *msg = &msgs->u.arr.items[k];
        size_t i = l->base + k; /* the message's index in the whole input */
        l->reading = k;
        if (!aw_json_is_object(msg))
            return aw__error_set(err, AW_ETYPE, "message %zu: must be a JSON object", i);
        aw__msg_role role = AW__MSG_USER;
        lc_kind kind = LC_PLAIN;
        const aw_json_value *fields = NULL;
        const char *prefix = "";
        int rc = unwrap(msg, i, &role, &kind, &fields, &prefix, err);
        if (rc) return rc;
        aw_text text, call_id = {NULL, 0}, tool_name = {NULL, 0};
        bool failed = false;
        if ((rc = read_content(l, aw_json_get(fields, "content"), prefix, i, &text, err))) return rc;
        if (role == AW__MSG_TOOL && (rc = read_result(fields, prefix, i, kind, &call_id, &tool_name, &failed, err)))
            return rc;
        aw__msg *m = aw__msg_push(l, role, i);
        if (!m) return oom(err);
        m->text = text;
        m->call_id = call_id;
        m->tool_name = tool_name;
        m->failed = failed;
        if (role == AW__MSG_ASSISTANT && (rc = read_calls(l, fields, prefix, i, err))) return rc;
    }
    return 0;
}
