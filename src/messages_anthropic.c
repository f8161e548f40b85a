/* Anthropic Messages API messages -> the normalized list.
 *
 *   {"role": "user"|"assistant", "content": string | [block, ...]}
 *   block: {"type": "text", "text"}
 *          {"type": "tool_use", "id", "name", "input"}          (assistant)
 *          {"type": "tool_result", "tool_use_id", "content", "is_error"} (user)
 *
 * A user message's tool_result blocks become tool messages of their own, in
 * block order; the text around them becomes user messages (text blocks
 * between two results joined with "\n"); a result with "is_error": true is
 * a failed one. Image and document blocks are described ("[image:
 * image/png, 34 KB]"), thinking blocks left out (messages_media.c); blocks
 * of other types are written as their compact JSON. The request's top-level "system" is read by
 * aw__msg_read. "system" is also accepted as a role, since lists that put
 * the system prompt first are common. */
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/messages.h"

static int oom(aw_error *err) { return aw__error_set(err, AW_ENOMEM, "out of memory"); }

static int is(aw_text t, const char *s) { return t.len == strlen(s) && memcmp(t.ptr, s, t.len) == 0; }

/* The "type" of block i of message index. */
static int block_type(const aw_json_value *block, size_t index, size_t i, aw_text *type,
                      aw_error *err) {
    if (!aw_json_is_object(block))
        return aw__error_set(err, AW_ETYPE, "message %zu: 'content[%zu]' must be an object", index, i);
    const aw_json_value *t = aw_json_get(block, "type");
    if (!aw_json_is_string(t))
        return aw__error_set(err, AW_ETYPE, "message %zu: 'content[%zu].type' must be a string", index, i);
    type->ptr = t->u.str.ptr;
    type->len = t->u.str.len;
    return 0;
}

static int push_text(aw__msg_list *l, aw__msg_role role, size_t index, aw_text text, aw_error *err) {
    aw__msg *m = aw__msg_push(l, role, index);
    if (!m) return oom(err);
    m->text = text;
    return 0;
}

static int read_tool_result(aw__msg_list *l, const aw_json_value *block, size_t index, size_t i,
                            aw_error *err) {
    char field[48];
    aw_text call_id, text;
    snprintf(field, sizeof field, "content[%zu].tool_use_id", i);
    int rc = aw__msg_opt_string(block, "tool_use_id", index, field, &call_id, err);
    if (rc) return rc;
    snprintf(field, sizeof field, "content[%zu].content", i);
    rc = aw__msg_text_parts(l, aw_json_get(block, "content"), index, field, &text, err);
    if (rc) return rc;
    const aw_json_value *is_error = aw_json_get(block, "is_error");
    if (is_error && is_error->type != AW_JSON_NULL && is_error->type != AW_JSON_BOOL)
        return aw__error_set(err, AW_ETYPE, "message %zu: 'content[%zu].is_error' must be a boolean", index, i);
    aw__msg *m = aw__msg_push(l, AW__MSG_TOOL, index);
    if (!m) return oom(err);
    m->text = text;
    m->call_id = call_id;
    m->failed = is_error && is_error->type == AW_JSON_BOOL && is_error->u.b;
    return 0;
}

/* A user message: runs of non-result blocks become user messages, each
 * tool_result a tool message. */
static int read_user_blocks(aw__msg_list *l, const aw_json_value *content, size_t index,
                            aw_error *err) {
    size_t run = 0, n = content->u.arr.count;
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        aw_text type = {NULL, 0};
        int rc = block_type(&content->u.arr.items[i], index, i, &type, err);
        if (rc) return rc;
        if (!is(type, "tool_result")) continue;
        aw_text text;
        if (i > run) {
            if ((rc = aw__msg_join(l, content, run, i, false, index, "content", &text, err))) return rc;
            if ((rc = push_text(l, AW__MSG_USER, index, text, err))) return rc;
        }
        if ((rc = read_tool_result(l, &content->u.arr.items[i], index, i, err))) return rc;
        run = i + 1;
        any = 1;
    }
    if (run < n || !any) { /* trailing text, or an empty message kept as one line */
        aw_text text;
        int rc = aw__msg_join(l, content, run, n, false, index, "content", &text, err);
        if (!rc) rc = push_text(l, AW__MSG_USER, index, text, err);
        return rc;
    }
    return 0;
}

/* An assistant message: text (and other) blocks joined, tool_use blocks as
 * its calls. */
static int read_assistant_blocks(aw__msg_list *l, const aw_json_value *content, size_t index,
                                 aw_error *err) {
    size_t n = content->u.arr.count;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        aw_text type = {NULL, 0};
        rc = block_type(&content->u.arr.items[i], index, i, &type, err);
    }
    /* the text first, so the message exists before its calls are added */
    aw_text text;
    if (!rc) rc = aw__msg_join(l, content, 0, n, true, index, "content", &text, err);
    if (rc) return rc;
    if ((rc = push_text(l, AW__MSG_ASSISTANT, index, text, err))) return rc;
    for (size_t i = 0; i < n; i++) {
        const aw_json_value *block = &content->u.arr.items[i];
        const aw_json_value *t = aw_json_get(block, "type");
        if (!is((aw_text){t->u.str.ptr, t->u.str.len}, "tool_use")) continue;
        char field[40];
        aw_text id, name;
        snprintf(field, sizeof field, "content[%zu].id", i);
        if ((rc = aw__msg_opt_string(block, "id", index, field, &id, err))) return rc;
        snprintf(field, sizeof field, "content[%zu].name", i);
        if ((rc = aw__msg_req_string(block, "name", index, field, &name, err))) return rc;
        const aw_json_value *input = aw_json_get(block, "input");
        if (input && input->type == AW_JSON_NULL) input = NULL;
        if (aw__msg_push_call(l, id, name, input)) return oom(err);
    }
    return 0;
}

int aw__msg_read_anthropic(aw__msg_list *l, const aw_json_value *msgs, aw_error *err) {
    for (size_t k = 0; k < msgs->u.arr.count; k++) {
        const aw_json_value *msg = &msgs->u.arr.items[k];
        size_t i = l->base + k; /* the message's index in the whole input */
        l->reading = k;
        if (!aw_json_is_object(msg))
            return aw__error_set(err, AW_ETYPE, "message %zu: must be a JSON object", i);
        aw_text r;
        int rc = aw__msg_req_string(msg, "role", i, "role", &r, err);
        if (rc) return rc;
        aw__msg_role role;
        if (is(r, "user")) role = AW__MSG_USER;
        else if (is(r, "assistant")) role = AW__MSG_ASSISTANT;
        else if (is(r, "system")) role = AW__MSG_SYSTEM;
        else
            return aw__error_set(err, AW_EVALID,
                                 "message %zu: unknown role '%.*s' (expected user, assistant or system)", i,
                                 (int)(r.len > 40 ? 40 : r.len), r.ptr);
        const aw_json_value *content = aw_json_get(msg, "content");
        if (aw_json_is_array(content) && role == AW__MSG_USER) {
            rc = read_user_blocks(l, content, i, err);
        } else if (aw_json_is_array(content) && role == AW__MSG_ASSISTANT) {
            rc = read_assistant_blocks(l, content, i, err);
        } else {
            aw_text text;
            rc = aw__msg_text_parts(l, content, i, "content", &text, err);
            if (!rc) rc = push_text(l, role, i, text, err);
        }
        if (rc) return rc;
    }
    return 0;
}
