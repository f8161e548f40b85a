/* Events -> <thread> XML, the reference serializer's format byte for byte
 * (seed 000, with the additions: duration_ms and parallel_group on
 * tool_output, compact JSON for non-string results, and XML-safe text). */
#include <string.h>

#include "agentwire/xml.h"
#include "internal/errors.h"
#include "internal/json.h"
#include "internal/strmap.h"
#include "internal/thread.h"

static const aw_text unknown_name = {"unknown", 7};

int aw__thread_is_written(aw_event_kind kind) {
    return kind <= AW_EVENT_SUMMARY;
}

/* Literal text with its length known at compile time. */
#define PUT(out, lit) aw_buf_append((out), (lit), sizeof(lit) - 1)

static int put(aw_buf *out, const char *s) { return aw_buf_append(out, s, strlen(s)); }

/* An attribute: ` name="` is given whole as `open` (a literal, through the
 * ATTR_* macros), then the escaped value and the closing quote. */
static int attr_text_n(aw_buf *out, const char *open, size_t open_len, const char *s, size_t n) {
    int rc = aw_buf_append(out, open, open_len);
    rc |= aw_xml_escape(out, s, n, 0);
    rc |= aw_buf_putc(out, '"');
    return rc ? AW_ENOMEM : 0;
}

#define attr_text(out, name, s, n) attr_text_n((out), " " name "=\"", sizeof(name) + 2, (s), (n))

/* A number as a JavaScript template literal prints it. */
static int attr_number_n(aw_buf *out, const char *open, size_t open_len, double d) {
    char tmp[40];
    size_t n = aw__js_number_string(d, tmp);
    return attr_text_n(out, open, open_len, tmp, n);
}

#define attr_number(out, name, d) attr_number_n((out), " " name "=\"", sizeof(name) + 2, (d))

static int attr_id(aw_buf *out, size_t v) {
    char tmp[24];
    size_t n = sizeof tmp;
    do {
        tmp[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return attr_text(out, "id", tmp + n, sizeof tmp - n);
}

static int attr_group(aw_buf *out, const aw_json_value *v) {
    if (v->type == AW_JSON_NUMBER) return attr_number(out, "parallel_group", v->u.num.d);
    return attr_text(out, "parallel_group", v->u.str.ptr, v->u.str.len);
}

static int body_json(aw_buf *out, const aw_json_value *v, aw_buf *scratch, unsigned flags) {
    aw_buf_clear(scratch);
    if (aw_json_write(v, NULL, scratch, NULL)) return AW_ENOMEM;
    return aw_xml_escape(out, scratch->data, scratch->len, flags);
}

int aw__thread_event(const aw_event *ev, size_t id, aw_text tool_name, const aw_thread_options *opts,
                     aw_buf *out, aw_buf *scratch) {
    static const char *const type_attr[] = {
        NULL, "tool_input", "tool_output", "error", "human_input_requested",
        "human_input_received", "completion", "summary",
    };
    static const char *const role_attr[] = {"human", "ai", "system"};
    if (!aw__thread_is_written(ev->kind)) return 0;
    unsigned flags = (opts && opts->strip_ansi) ? AW_XML_STRIP_ANSI : 0;
    const char *type = ev->kind == AW_EVENT_MESSAGE ? role_attr[ev->role] : type_attr[ev->kind];
    double iteration = ev->iteration ? ev->iteration->u.num.d : 0;
    int rc = 0;

    rc |= PUT(out, "<event type=\"");
    rc |= put(out, type);
    rc |= aw_buf_putc(out, '"');
    rc |= attr_id(out, id);
    switch (ev->kind) {
    case AW_EVENT_TOOL_CALL:
        rc |= attr_text(out, "name", ev->tool_name.ptr, ev->tool_name.len);
        rc |= attr_number(out, "iteration", iteration);
        break;
    case AW_EVENT_TOOL_RESULT:
        rc |= attr_text(out, "name", tool_name.ptr, tool_name.len);
        rc |= PUT(out, " status=\"success\"");
        rc |= attr_number(out, "iteration", iteration);
        if (ev->duration_ms) rc |= attr_number(out, "duration_ms", ev->duration_ms->u.num.d);
        if (ev->parallel_group) rc |= attr_group(out, ev->parallel_group);
        break;
    case AW_EVENT_ERROR:
        rc |= attr_number(out, "iteration", iteration);
        rc |= ev->recoverable ? PUT(out, " recoverable=\"true\"") : PUT(out, " recoverable=\"false\"");
        break;
    case AW_EVENT_SUMMARY: {
        rc |= attr_number(out, "iteration", iteration);
        rc |= PUT(out, " summarizedIterations=\"");
        const aw_json_value *its = ev->summarized_iterations;
        for (size_t i = 0; its && i < its->u.arr.count; i++) {
            char tmp[40];
            size_t n = aw__js_number_string(its->u.arr.items[i].u.num.d, tmp);
            if (i) rc |= aw_buf_putc(out, ',');
            rc |= aw_xml_escape(out, tmp, n, 0);
        }
        rc |= aw_buf_putc(out, '"');
        break;
    }
    default:
        rc |= attr_number(out, "iteration", iteration);
        break;
    }
    rc |= aw_buf_putc(out, '>');
    if (rc) return AW_ENOMEM;

    switch (ev->kind) {
    case AW_EVENT_TOOL_CALL: rc = body_json(out, ev->args, scratch, flags); break;
    case AW_EVENT_TOOL_RESULT:
        if (ev->result->type == AW_JSON_STRING)
            rc = aw_xml_escape(out, ev->result->u.str.ptr, ev->result->u.str.len, flags);
        else
            rc = body_json(out, ev->result, scratch, flags);
        break;
    default: rc = aw_xml_escape(out, ev->text.ptr, ev->text.len, flags); break;
    }
    if (rc || PUT(out, "</event>")) return AW_ENOMEM;
    return 0;
}

int aw_thread_write_event(const aw_event *ev, size_t id, aw_text tool_name,
                          const aw_thread_options *opts, aw_buf *out) {
    if (!ev || !out) return AW_EINVAL;
    aw_buf scratch;
    aw_buf_init(&scratch, out->alloc);
    size_t start = out->len;
    int rc = aw__thread_event(ev, id, tool_name, opts, out, &scratch);
    aw_buf_free(&scratch);
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
    }
    return rc;
}

int aw_thread_encode(const aw_event *events, size_t n, const aw_thread_options *opts, aw_buf *out,
                     aw_error *err) {
    if ((!events && n) || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    aw_strmap names;
    aw__strmap_init(&names, alloc);
    aw_buf scratch;
    aw_buf_init(&scratch, alloc);
    size_t start = out->len;
    int rc = 0;
    /* one pass for the toolCallId -> toolName map: a result may name a call
     * that comes later, and a later call with the same id wins, as in the
     * reference's Map */
    for (size_t i = 0; i < n && !rc; i++)
        if (events[i].kind == AW_EVENT_TOOL_CALL)
            rc = aw__strmap_set(&names, events[i].tool_call_id, events[i].tool_name);
    if (!rc) rc = aw_buf_append(out, "<thread>", 8);
    for (size_t i = 0; i < n && !rc; i++) {
        const aw_event *ev = &events[i];
        if (!aw__thread_is_written(ev->kind)) continue;
        aw_text name = unknown_name;
        if (ev->kind == AW_EVENT_TOOL_RESULT) aw__strmap_get(&names, ev->tool_call_id, &name);
        rc = aw_buf_append(out, "\n  ", 3);
        if (!rc) rc = aw__thread_event(ev, i, name, opts, out, &scratch);
    }
    if (!rc) rc = aw_buf_append(out, "\n</thread>", 10);
    if (!rc && opts && opts->prefill && opts->prefill_len) {
        rc = aw_buf_putc(out, '\n');
        if (!rc) rc = aw_buf_append(out, opts->prefill, opts->prefill_len);
    }
    aw__strmap_free(&names);
    aw_buf_free(&scratch);
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return aw__error_set(err, rc, "%s", aw_strerror(rc));
    }
    return 0;
}
