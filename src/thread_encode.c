/* Events -> <thread> XML, the reference serializer's format byte for byte
 * (serializeThreadToXml, with our additions: duration_ms and parallel_group on
 * tool_output, compact JSON for non-string results, and XML-safe text). */
#include <stdint.h>
#include <string.h>

#include "agentwire/xml.h"
#include "internal/errors.h"
#include "internal/json.h"
#include "internal/strmap.h"
#include "internal/thread.h"
#include "internal/xml.h"

static const aw_text unknown_name = {"unknown", 7};

int aw__thread_is_written(aw_event_kind kind) {
    return kind <= AW_EVENT_SUMMARY;
}

/* The event's start tag and body are written straight into out's memory:
 * one reservation covers the whole start tag (and the body too when it is
 * short), then the pieces are stored with no further checks. Attribute
 * values that are numbers (id, iteration, duration_ms, a numeric
 * parallel_group, summarizedIterations) are written as they are: digits,
 * '-', '.', 'e', '+', "NaN" and "Infinity" need no escaping. */

/* Bytes a number can take: aw__js_number_string needs 32. */
#define NUM_ROOM 32

/* Literal text with its length known at compile time. */
#define PUT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) + sizeof(lit) - 1)

static char *put_id(char *o, size_t v) {
    char tmp[24];
    size_t n = sizeof tmp;
    do {
        tmp[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(o, tmp + n, sizeof tmp - n);
    return o + (sizeof tmp - n);
}

static char *put_number(char *o, double d) { return o + aw__js_number_string(d, o); }

/* Attribute values up to this size are escaped under the start tag's
 * reservation; longer ones (a hostile tool name) go through aw_xml_escape,
 * which reserves block by block, so the buffer never grows by more than a
 * few times what is written. */
#define SHORT_ATTR 1024

/* An attribute with a text value: ` name="` is given whole as `open` (a
 * literal, through ATTR_TEXT), then the escaped value and the quote. The
 * start tag is being written at *po inside out, whose reservation covers
 * `room` bytes from there when the value is short; a long value is
 * appended to out, after which `room` bytes are reserved again. */
static int put_attr_text(aw_buf *out, char **po, size_t room, const char *open, size_t open_len, const char *s,
                         size_t n) {
    char *o = *po;
    if (n <= SHORT_ATTR) {
        memcpy(o, open, open_len);
        o = aw__xml_escape_to(o + open_len, s, n, 0);
        *o++ = '"';
        *po = o;
        return 0;
    }
    out->len = (size_t)(o - out->data);
    int rc = aw_buf_append(out, open, open_len);
    rc |= aw_xml_escape(out, s, n, 0);
    rc |= aw_buf_putc(out, '"');
    rc |= aw_buf_reserve(out, room);
    if (rc) return AW_ENOMEM;
    *po = out->data + out->len;
    return 0;
}

static size_t attr_room(size_t n) { return n <= SHORT_ATTR ? AW__XML_ESCAPE_ROOM(n) : 0; }

#define ATTR_TEXT(name, s, n) put_attr_text(out, &o, room, " " name "=\"", sizeof(name) + 2, (s), (n))

static int body_json(aw_buf *out, const aw_json_value *v, aw_buf *scratch, unsigned flags) {
    aw_buf_clear(scratch);
    if (aw_json_write(v, NULL, scratch, NULL)) return AW_ENOMEM;
    return aw_xml_escape(out, scratch->data, scratch->len, flags);
}

/* Bodies up to this size are escaped under the start tag's reservation;
 * longer ones go through aw_xml_escape, which reserves block by block. */
#define SHORT_BODY 4096

int aw__thread_event(const aw_event *ev, size_t id, aw_text tool_name, const aw_thread_options *opts,
                     aw_buf *out, aw_buf *scratch) {
    static const struct {
        const char *s;
        size_t n;
    } type_attr[] = {
        {NULL, 0},
        {"tool_input", 10},
        {"tool_output", 11},
        {"error", 5},
        {"human_input_requested", 21},
        {"human_input_received", 20},
        {"completion", 10},
        {"summary", 7},
    },
      role_attr[] = {{"human", 5}, {"ai", 2}, {"system", 6}};
    if (!aw__thread_is_written(ev->kind)) return 0;
    unsigned flags = (opts && opts->strip_ansi) ? AW_XML_STRIP_ANSI : 0;
    double iteration = ev->iteration ? ev->iteration->u.num.d : 0;

    /* the body, when it is text already */
    const char *body = NULL;
    size_t body_len = 0;
    int json_body = 0;
    switch (ev->kind) {
    case AW_EVENT_TOOL_CALL: json_body = 1; break;
    case AW_EVENT_TOOL_RESULT:
        if (ev->result->type == AW_JSON_STRING) {
            body = ev->result->u.str.ptr;
            body_len = ev->result->u.str.len;
        } else {
            json_body = 1;
        }
        break;
    default:
        body = ev->text.ptr;
        body_len = ev->text.len;
        break;
    }

    /* room for the start tag: fixed text, numbers, the short escaped
     * values (the name, a parallel_group string) */
    size_t numbers = 3, room = 256;
    if (ev->kind == AW_EVENT_SUMMARY && ev->summarized_iterations) {
        numbers += ev->summarized_iterations->u.arr.count;
        if (numbers > SIZE_MAX / 64 / (NUM_ROOM + 1)) return AW_ENOMEM;
    }
    room += numbers * (NUM_ROOM + 1);
    if (ev->kind == AW_EVENT_TOOL_CALL) room += attr_room(ev->tool_name.len);
    if (ev->kind == AW_EVENT_TOOL_RESULT) {
        room += attr_room(tool_name.len);
        if (ev->parallel_group && ev->parallel_group->type != AW_JSON_NUMBER)
            room += attr_room(ev->parallel_group->u.str.len);
    }
    int short_body = body && body_len <= SHORT_BODY;
    if (short_body) room += AW__XML_ESCAPE_ROOM(body_len) + 8;
    if ((!out->data || out->cap - out->len <= room) && aw_buf_reserve(out, room)) return AW_ENOMEM;

    char *o = out->data + out->len;
    const char *type = ev->kind == AW_EVENT_MESSAGE ? role_attr[ev->role].s : type_attr[ev->kind].s;
    size_t type_len = ev->kind == AW_EVENT_MESSAGE ? role_attr[ev->role].n : type_attr[ev->kind].n;
    o = PUT(o, "<event type=\"");
    memcpy(o, type, type_len);
    o += type_len;
    o = PUT(o, "\" id=\"");
    o = put_id(o, id);
    *o++ = '"';
    switch (ev->kind) {
    case AW_EVENT_TOOL_CALL:
        if (ATTR_TEXT("name", ev->tool_name.ptr, ev->tool_name.len)) return AW_ENOMEM;
        o = PUT(o, " iteration=\"");
        o = put_number(o, iteration);
        *o++ = '"';
        break;
    case AW_EVENT_TOOL_RESULT:
        if (ATTR_TEXT("name", tool_name.ptr, tool_name.len)) return AW_ENOMEM;
        o = PUT(o, " status=\"success\" iteration=\"");
        o = put_number(o, iteration);
        *o++ = '"';
        if (ev->duration_ms) {
            o = PUT(o, " duration_ms=\"");
            o = put_number(o, ev->duration_ms->u.num.d);
            *o++ = '"';
        }
        if (ev->parallel_group) {
            const aw_json_value *g = ev->parallel_group;
            if (g->type == AW_JSON_NUMBER) {
                o = PUT(o, " parallel_group=\"");
                o = put_number(o, g->u.num.d);
                *o++ = '"';
            } else {
                if (ATTR_TEXT("parallel_group", g->u.str.ptr, g->u.str.len)) return AW_ENOMEM;
            }
        }
        break;
    case AW_EVENT_ERROR:
        o = PUT(o, " iteration=\"");
        o = put_number(o, iteration);
        o = ev->recoverable ? PUT(o, "\" recoverable=\"true\"") : PUT(o, "\" recoverable=\"false\"");
        break;
    case AW_EVENT_SUMMARY: {
        o = PUT(o, " iteration=\"");
        o = put_number(o, iteration);
        o = PUT(o, "\" summarizedIterations=\"");
        const aw_json_value *its = ev->summarized_iterations;
        for (size_t i = 0; its && i < its->u.arr.count; i++) {
            if (i) *o++ = ',';
            o = put_number(o, its->u.arr.items[i].u.num.d);
        }
        *o++ = '"';
        break;
    }
    default:
        o = PUT(o, " iteration=\"");
        o = put_number(o, iteration);
        *o++ = '"';
        break;
    }
    *o++ = '>';
    if (short_body) {
        o = aw__xml_escape_to(o, body, body_len, flags);
        o = PUT(o, "</event>");
        out->len = (size_t)(o - out->data);
        out->data[out->len] = '\0';
        return 0;
    }
    out->len = (size_t)(o - out->data);
    out->data[out->len] = '\0';

    int rc = json_body ? body_json(out, ev->kind == AW_EVENT_TOOL_CALL ? ev->args : ev->result, scratch, flags)
                       : aw_xml_escape(out, body, body_len, flags);
    if (rc || aw_buf_append(out, "</event>", 8)) return AW_ENOMEM;
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

int aw__thread_close(const aw_thread_options *opts, aw_buf *out) {
    int rc = aw_buf_append(out, "\n</thread>", 10);
    if (!rc && opts && opts->prefill && opts->prefill_len) {
        rc = aw_buf_putc(out, '\n');
        if (!rc) rc = aw_buf_append(out, opts->prefill, opts->prefill_len);
    }
    return rc;
}

/* ---- the whole list ------------------------------------------------------ */

/* toolCallId -> the tool_call event that names it, for the whole list: a
 * result may name a call that comes later, and a later call with the same
 * id wins, as in the reference's Map. Open addressing over (hash, index)
 * pairs, sized once from the number of calls: one allocation, no
 * rehashing, and a probe touches an id's bytes only when the 64-bit hashes
 * agree. */
typedef struct {
    uint64_t hash;
    size_t call; /* index of the tool_call event + 1; 0: empty */
} call_slot;

typedef struct {
    call_slot *slots;
    size_t mask;
} call_map;

static int same_id(aw_text a, aw_text b) {
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* The slot for id: the one holding it, or the empty one where it goes. */
static call_slot *call_find(const call_map *m, const aw_event *events, aw_text id, uint64_t h) {
    size_t i = (size_t)h & m->mask;
    for (;;) {
        call_slot *s = &m->slots[i];
        if (!s->call || (s->hash == h && same_id(events[s->call - 1].tool_call_id, id))) return s;
        i = (i + 1) & m->mask;
    }
}

static int call_map_build(call_map *m, const aw_event *events, size_t n, const aw_allocator *alloc) {
    size_t calls = 0;
    for (size_t i = 0; i < n; i++) calls += events[i].kind == AW_EVENT_TOOL_CALL;
    m->slots = NULL;
    m->mask = 0;
    if (!calls) return 0;
    size_t cap = 16;
    while (cap < calls * 2) {
        if (cap > SIZE_MAX / 2 / sizeof(call_slot)) return AW_ENOMEM;
        cap *= 2;
    }
    m->slots = aw_malloc(alloc, cap * sizeof(call_slot));
    if (!m->slots) return AW_ENOMEM;
    memset(m->slots, 0, cap * sizeof(call_slot));
    m->mask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        if (events[i].kind != AW_EVENT_TOOL_CALL) continue;
        uint64_t h = aw__text_hash(events[i].tool_call_id);
        call_slot *s = call_find(m, events, events[i].tool_call_id, h);
        s->hash = h;
        s->call = i + 1;
    }
    return 0;
}

static aw_text call_name(const call_map *m, const aw_event *events, aw_text id) {
    if (!m->slots) return unknown_name;
    const call_slot *s = call_find(m, events, id, aw__text_hash(id));
    return s->call ? events[s->call - 1].tool_name : unknown_name;
}

/* Memory is asked for ahead of the event being written, in three steps
 * so that each step reads only what an earlier one brought in: the event
 * four ahead, the values two ahead point to, the body of the next one.
 * The bodies are short streams scattered through the event list's memory,
 * which the hardware prefetcher only catches up with after a few misses;
 * the values (iteration, result, args) are single cold lines. */
static void prefetch_event(const aw_event *ev) {
    const char *p = (const char *)ev;
    for (size_t k = 0; k < sizeof *ev; k += 64) __builtin_prefetch(p + k);
}

static void prefetch_values(const aw_event *ev) {
    if (ev->iteration) __builtin_prefetch(ev->iteration);
    if (ev->kind == AW_EVENT_TOOL_RESULT && ev->result) __builtin_prefetch(ev->result);
    if (ev->kind == AW_EVENT_TOOL_CALL && ev->args) __builtin_prefetch(ev->args);
}

static void prefetch_body(const aw_event *ev) {
    const char *p = ev->text.ptr;
    size_t len = ev->text.len;
    if (ev->kind == AW_EVENT_TOOL_RESULT) {
        p = NULL;
        len = 0;
        if (ev->result && ev->result->type == AW_JSON_STRING) {
            p = ev->result->u.str.ptr;
            len = ev->result->u.str.len;
        }
    }
    if (!p) return;
    if (len > 8192) len = 8192;
    for (size_t k = 0; k < len; k += 64) __builtin_prefetch(p + k);
}

int aw__thread_unknown(const aw_thread_stream_options *so, const aw_event *ev, size_t index, aw_error *where,
                       aw_error *err) {
    /* the type as written, cut short and with anything but printable ASCII
     * shown as '?': it goes to a terminal */
    char type[65];
    size_t n = ev->type.len < 64 ? ev->type.len : 64;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)ev->type.ptr[i];
        type[i] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
    }
    type[n] = '\0';
    const char *more = ev->type.len > 64 ? "..." : "";
    size_t offset = where->offset, line = where->line, column = where->column;
    if (line)
        aw__error_set(where, AW_ETYPE, "event type '%s%s' is not one the thread format knows", type, more);
    else
        aw__error_set(where, AW_ETYPE, "event %zu: event type '%s%s' is not one the thread format knows",
                      index, type, more);
    where->offset = offset;
    where->line = line;
    where->column = column;
    if (!so->on_unknown(so->on_unknown_ctx, ev, where)) return 0;
    if (err) *err = *where;
    return AW_ETYPE;
}

int aw__thread_encode_events(const aw_event *events, size_t n, const aw_thread_options *opts, aw_buf *out,
                             const aw__thread_stream *stream, aw_error *err) {
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    const aw_thread_stream_options *so = stream ? stream->opts : NULL;
    int streaming = so && so->sink;
    aw_buf scratch;
    aw_buf_init(&scratch, alloc);
    call_map calls;
    int rc = call_map_build(&calls, events, n, alloc);
    if (!rc) rc = aw_buf_append(out, "<thread>", 8);
    if (rc) aw__error_set(err, rc, "%s", aw_strerror(rc));
    for (size_t i = 0; i < n && !rc; i++) {
        const aw_event *ev = &events[i];
        if (i + 4 < n) prefetch_event(&events[i + 4]);
        if (i + 2 < n) prefetch_values(&events[i + 2]);
        if (i + 1 < n) prefetch_body(&events[i + 1]);
        if (ev->kind == AW_EVENT_OTHER && so && so->on_unknown) {
            aw_error where = {0};
            if (stream->locate) stream->locate(stream->locate_ctx, ev, &where);
            if ((rc = aw__thread_unknown(so, ev, i, &where, err))) break;
        }
        if (!aw__thread_is_written(ev->kind)) continue;
        aw_text name = unknown_name;
        if (ev->kind == AW_EVENT_TOOL_RESULT) name = call_name(&calls, events, ev->tool_call_id);
        rc = aw_buf_append(out, "\n  ", 3);
        if (!rc) rc = aw__thread_event(ev, i, name, opts, out, &scratch);
        if (rc) aw__error_set(err, rc, "%s", aw_strerror(rc));
        else if (streaming && out->len >= AW__THREAD_BLOCK) rc = aw__thread_flush(stream, out, err);
    }
    if (!rc && (rc = aw__thread_close(opts, out))) aw__error_set(err, rc, "%s", aw_strerror(rc));
    if (!rc && streaming) rc = aw__thread_flush(stream, out, err);
    aw_free(alloc, calls.slots);
    aw_buf_free(&scratch);
    return rc;
}

int aw__thread_flush(const aw__thread_stream *stream, aw_buf *out, aw_error *err) {
    if (out->len && stream->opts->sink(stream->opts->sink_ctx, out->data, out->len))
        return aw__error_set(err, AW_ESTOP, "the output could not be written");
    aw_buf_clear(out);
    return 0;
}

int aw_thread_encode(const aw_event *events, size_t n, const aw_thread_options *opts, aw_buf *out,
                     aw_error *err) {
    if ((!events && n) || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    size_t start = out->len;
    int rc = aw__thread_encode_events(events, n, opts, out, NULL, err);
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
    }
    return rc;
}
