/* The normalized message list every input shape is read into, and the
 * small helpers the shape readers share (content as text, checked string
 * fields). */
#include <string.h>

#include "internal/errors.h"
#include "internal/messages.h"

void aw__msg_list_init(aw__msg_list *l, const aw_allocator *alloc) {
    memset(l, 0, sizeof *l);
    l->alloc = alloc;
    aw__arena_init(&l->arena, alloc);
    aw_buf_init(&l->scratch, alloc);
}

void aw__msg_list_free(aw__msg_list *l) {
    aw_free(l->alloc, l->items);
    aw_free(l->alloc, l->calls);
    aw__arena_free(&l->arena);
    aw_buf_free(&l->scratch);
    memset(l, 0, sizeof *l);
}

void aw__msg_list_clear(aw__msg_list *l) {
    l->count = 0;
    l->ncalls = 0;
    aw__arena_reset(&l->arena);
}

aw__msg *aw__msg_push(aw__msg_list *l, aw__msg_role role, size_t index) {
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        if (cap > (size_t)-1 / sizeof *l->items) return NULL;
        aw__msg *p = aw_realloc(l->alloc, l->items, cap * sizeof *p);
        if (!p) return NULL;
        l->items = p;
        l->cap = cap;
    }
    aw__msg *m = &l->items[l->count++];
    memset(m, 0, sizeof *m);
    m->role = role;
    m->index = index;
    m->text.ptr = "";
    m->first_call = l->ncalls;
    return m;
}

int aw__msg_push_call(aw__msg_list *l, aw_text id, aw_text name, const aw_json_value *args) {
    if (l->ncalls == l->cap_calls) {
        size_t cap = l->cap_calls ? l->cap_calls * 2 : 16;
        if (cap > (size_t)-1 / sizeof *l->calls) return AW_ENOMEM;
        aw__msg_call *p = aw_realloc(l->alloc, l->calls, cap * sizeof *p);
        if (!p) return AW_ENOMEM;
        l->calls = p;
        l->cap_calls = cap;
    }
    aw__msg_call *c = &l->calls[l->ncalls++];
    c->id = id;
    c->name = name;
    c->args = args;
    l->items[l->count - 1].ncalls++;
    return 0;
}

int aw__msg_keep(aw__msg_list *l, const char *s, size_t n, aw_text *out) {
    char *p = aw__arena_alloc(&l->arena, n + 1);
    if (!p) return AW_ENOMEM;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    out->ptr = p;
    out->len = n;
    return 0;
}

int aw__msg_text_json(aw__msg_list *l, const aw_json_value *v, aw_text *out) {
    if (!v || v->type == AW_JSON_NULL) {
        out->ptr = "";
        out->len = 0;
        return 0;
    }
    if (v->type == AW_JSON_STRING) {
        out->ptr = v->u.str.ptr;
        out->len = v->u.str.len;
        return 0;
    }
    aw_buf_clear(&l->scratch);
    int rc = aw_json_write(v, NULL, &l->scratch, NULL);
    if (rc) return rc;
    return aw__msg_keep(l, l->scratch.data, l->scratch.len, out);
}

/* A part that is {"type": "text", ...}: 1, and *text set (NULL when its
 * "text" is not a string). */
static int text_part(const aw_json_value *part, const aw_json_value **text) {
    const aw_json_value *type = aw_json_get(part, "type");
    if (!aw_json_is_string(type) || type->u.str.len != 4 || memcmp(type->u.str.ptr, "text", 4) != 0)
        return 0;
    const aw_json_value *t = aw_json_get(part, "text");
    *text = aw_json_is_string(t) ? t : NULL;
    return 1;
}

static int is_tool_use(const aw_json_value *part) {
    const aw_json_value *type = aw_json_get(part, "type");
    return aw_json_is_string(type) && type->u.str.len == 8 && memcmp(type->u.str.ptr, "tool_use", 8) == 0;
}

/* Part i is not a piece of the text: a tool_use block (when skipped) or a
 * thinking block. */
static bool left_out(const aw_json_value *part, bool skip_tool_use) {
    return (skip_tool_use && is_tool_use(part)) || aw__msg_part_kind(part) == AW__PART_HIDDEN;
}

int aw__msg_join(aw__msg_list *l, const aw_json_value *arr, size_t from, size_t to, bool skip_tool_use,
                 size_t index, const char *field, aw_text *out, aw_error *err) {
    const aw_json_value *items = arr->u.arr.items, *only = NULL;
    size_t pieces = 0;
    for (size_t i = from; i < to; i++) {
        const aw_json_value *text = NULL;
        if (left_out(&items[i], skip_tool_use)) continue;
        if (text_part(&items[i], &text) && !text)
            return aw__error_set(err, AW_ETYPE, "message %zu: '%s[%zu].text' must be a string", index,
                                 field, i);
        only = text;
        pieces++;
    }
    /* one text part, the common case, is used where it lies */
    if (pieces == 1 && only) {
        out->ptr = only->u.str.ptr;
        out->len = only->u.str.len;
        return 0;
    }
    aw_buf_clear(&l->scratch);
    int rc = 0;
    pieces = 0;
    for (size_t i = from; i < to && !rc; i++) {
        const aw_json_value *text = NULL;
        if (left_out(&items[i], skip_tool_use)) continue;
        if (pieces++) rc = aw_buf_putc(&l->scratch, '\n');
        if (rc) break;
        if (text_part(&items[i], &text))
            rc = aw_buf_append(&l->scratch, text->u.str.ptr, text->u.str.len);
        else if (aw__msg_part_kind(&items[i]) == AW__PART_MEDIA)
            rc = aw__msg_describe_media(&items[i], &l->scratch);
        else
            rc = aw_json_write(&items[i], NULL, &l->scratch, NULL);
    }
    if (!rc) rc = aw__msg_keep(l, l->scratch.data ? l->scratch.data : "", l->scratch.len, out);
    if (rc) return aw__error_set(err, rc, "%s", aw_strerror(rc));
    return 0;
}

int aw__msg_text_parts(aw__msg_list *l, const aw_json_value *v, size_t index, const char *field,
                       aw_text *out, aw_error *err) {
    if (aw_json_is_array(v)) return aw__msg_join(l, v, 0, v->u.arr.count, false, index, field, out, err);
    int rc = aw__msg_text_json(l, v, out);
    if (rc) return aw__error_set(err, rc, "%s", aw_strerror(rc));
    return 0;
}

int aw__msg_opt_string(const aw_json_value *obj, const char *key, size_t index, const char *field,
                       aw_text *out, aw_error *err) {
    const aw_json_value *v = aw_json_get(obj, key);
    out->ptr = NULL;
    out->len = 0;
    if (!v || v->type == AW_JSON_NULL) return 0;
    if (v->type != AW_JSON_STRING)
        return aw__error_set(err, AW_ETYPE, "message %zu: '%s' must be a string", index, field);
    out->ptr = v->u.str.ptr;
    out->len = v->u.str.len;
    return 0;
}

int aw__msg_req_string(const aw_json_value *obj, const char *key, size_t index, const char *field,
                       aw_text *out, aw_error *err) {
    if (!aw_json_get(obj, key))
        return aw__error_set(err, AW_ETYPE, "message %zu: '%s' is missing", index, field);
    int rc = aw__msg_opt_string(obj, key, index, field, out, err);
    if (!rc && !out->ptr)
        return aw__error_set(err, AW_ETYPE, "message %zu: '%s' must be a string", index, field);
    return rc;
}

/* A top-level "system" (Anthropic's request object, accepted for every
 * shape): a string, or an array of text blocks joined with "\n". */
static int read_system(aw__msg_list *l, const aw_json_value *system, aw_error *err) {
    if (!system || system->type == AW_JSON_NULL) return 0;
    if (system->type != AW_JSON_STRING && system->type != AW_JSON_ARRAY)
        return aw__error_set(err, AW_ETYPE, "'system' must be a string or an array of text blocks");
    aw_text text;
    aw_error sub;
    int rc = aw__msg_text_parts(l, system, 0, "system", &text, &sub);
    if (rc) {
        /* not a message: drop the "message 0: " the helper puts first */
        const char *what = strchr(sub.message, '\'');
        return aw__error_set(err, rc, "%s", rc == AW_ETYPE && what ? what : sub.message);
    }
    aw__msg *m = aw__msg_push(l, AW__MSG_SYSTEM, 0);
    if (!m) return aw__error_set(err, AW_ENOMEM, "out of memory");
    m->text = text;
    return 0;
}

int aw__msg_read(aw__msg_list *l, const aw_json_value *input, aw_messages_format fmt,
                 aw_error *err) {
    const aw_json_value *msgs = input;
    if (aw_json_is_object(input)) {
        msgs = aw_json_get(input, "messages");
        if (!aw_json_is_array(msgs))
            return aw__error_set(err, AW_ETYPE, "an object of messages needs a 'messages' array");
        int rc = read_system(l, aw_json_get(input, "system"), err);
        if (rc) return rc;
    } else if (!aw_json_is_array(input)) {
        return aw__error_set(err, AW_ETYPE,
                             "messages must be a JSON array, or an object with a 'messages' array");
    }
    switch (fmt) {
    case AW_MESSAGES_ANTHROPIC: return aw__msg_read_anthropic(l, msgs, err);
    case AW_MESSAGES_LANGCHAIN: return aw__msg_read_langchain(l, msgs, err);
    default: return aw__msg_read_openai(l, msgs, err);
    }
}
