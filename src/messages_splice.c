/* A <thread> serialized earlier, found as one message among others: its
 * events are decoded and written into the thread being built, with ids
 * continuing the running count, so a thread is never wrapped (escaped)
 * inside another one, which the reference does.
 *
 * Content that starts with "<thread>" but does not decode (users type
 * "<thread>"; a prefill after </thread> counts too) is no thread: the
 * caller writes it as a human line, as the reference writes every message.
 *
 * The events keep their own iteration. They are written by the thread
 * encoder, in the thread layout: no call_id (the decoder's toolCallIds may
 * be invented "call_<id>" ones, which would point at the old ids). */
#include <string.h>

#include "agentwire/thread.h"
#include "agentwire/xml.h"
#include "internal/errors.h"
#include "internal/json.h"
#include "internal/messages.h"
#include "internal/strmap.h"
#include "internal/thread.h"

static const aw_text unknown_name = {"unknown", 7};

static aw_text text_of(const aw_json_value *v) {
    aw_text t = {"", 0};
    if (aw_json_is_string(v)) {
        t.ptr = v->u.str.ptr;
        t.len = v->u.str.len;
    }
    return t;
}

static int is_type(const aw_json_value *ev, const char *type) {
    aw_text t = text_of(aw_json_get(ev, "type"));
    return t.len == strlen(type) && memcmp(t.ptr, type, t.len) == 0;
}

/* A tool_input whose body was not a JSON object decodes with args that are
 * a string (the body text) or some other JSON value; the event model wants
 * an object, so the line is written here, in the same layout. */
static int loose_tool_input(const aw_json_value *ev, size_t id, unsigned flags, aw_buf *out,
                            const aw_allocator *alloc) {
    const aw_json_value *args = aw_json_get(ev, "args");
    const aw_json_value *it = aw_json_get(ev, "iteration");
    aw_text name = text_of(aw_json_get(ev, "toolName"));
    char num[40];
    size_t num_len = aw__js_number_string(aw_json_is_number(it) ? it->u.num.d : 0, num);
    int rc = aw_buf_printf(out, "<event type=\"tool_input\" id=\"%zu\" name=\"", id);
    rc |= aw_xml_escape(out, name.ptr, name.len, 0);
    rc |= aw_buf_append(out, "\" iteration=\"", 13);
    rc |= aw_buf_append(out, num, num_len);
    rc |= aw_buf_append(out, "\">", 2);
    if (rc) return AW_ENOMEM;
    if (aw_json_is_string(args)) {
        rc = aw_xml_escape(out, args->u.str.ptr, args->u.str.len, flags);
    } else {
        aw_buf json;
        aw_buf_init(&json, alloc);
        rc = aw_json_write(args, NULL, &json, NULL);
        if (!rc) rc = aw_xml_escape(out, json.data ? json.data : "", json.len, flags);
        aw_buf_free(&json);
    }
    if (rc || aw_buf_append(out, "</event>", 8)) return AW_ENOMEM;
    return 0;
}

static int write_events(const aw__msg *m, const aw_json_value *events, const aw_messages_options *opts,
                        size_t *id, aw_buf *out, aw_error *err) {
    aw_thread_options topts = {NULL, 0, opts->strip_ansi, opts->alloc};
    unsigned flags = opts->strip_ansi ? AW_XML_STRIP_ANSI : 0;
    size_t n = aw_json_count(events);
    aw_strmap names;
    aw__strmap_init(&names, opts->alloc);
    int rc = 0;
    /* tool names of this thread's results, from this thread's calls */
    for (size_t i = 0; i < n && !rc; i++) {
        const aw_json_value *ev = aw_json_at(events, i);
        if (is_type(ev, "tool_call"))
            rc = aw__strmap_set(&names, text_of(aw_json_get(ev, "toolCallId")), text_of(aw_json_get(ev, "toolName")));
    }
    if (rc) rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        const aw_json_value *obj = aw_json_at(events, i);
        if (aw_buf_append(out, "\n  ", 3)) {
            rc = aw__error_set(err, AW_ENOMEM, "out of memory");
            break;
        }
        if (is_type(obj, "tool_call") && !aw_json_is_object(aw_json_get(obj, "args"))) {
            if (loose_tool_input(obj, (*id)++, flags, out, opts->alloc))
                rc = aw__error_set(err, AW_ENOMEM, "out of memory");
            continue;
        }
        aw_event ev;
        aw_error eerr;
        if (aw_event_from_json(obj, &ev, &eerr)) {
            rc = aw__error_set(err, eerr.code, "message %zu: event %zu of its <thread>: %s", m->index, i,
                               eerr.message);
            break;
        }
        if (!aw__thread_is_written(ev.kind)) { /* the decoder makes none of these */
            out->len -= 3;
            out->data[out->len] = '\0';
            continue;
        }
        aw_text name = unknown_name;
        if (ev.kind == AW_EVENT_TOOL_RESULT) aw__strmap_get(&names, ev.tool_call_id, &name);
        if (aw_thread_write_event(&ev, (*id)++, name, &topts, out))
            rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    aw__strmap_free(&names);
    return rc;
}

int aw__msg_splice(const aw__msg *m, size_t start, const aw_messages_options *opts, size_t *id,
                   aw_buf *out, aw_error *err) {
    aw_thread_decode_options dopts = {opts->alloc};
    aw_json_doc *doc = NULL;
    aw_error derr;
    int rc = aw_thread_decode(m->text.ptr + start, m->text.len - start, &dopts, &doc, &derr);
    if (rc == AW_ENOMEM) return aw__error_set(err, AW_ENOMEM, "out of memory");
    /* not a thread after all: the caller writes the text as it is */
    if (rc) return aw__error_set(err, rc, "message %zu: not a thread: %s", m->index, derr.message);
    rc = write_events(m, aw_json_doc_root(doc), opts, id, out, err);
    aw_json_doc_free(doc);
    return rc;
}
