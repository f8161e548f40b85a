/* Events as JSON text -> <thread> XML, without keeping the events.
 *
 * JSON lines are encoded as they are read: each line is parsed into one
 * arena, written, and the arena is reset. Reading every line first
 * (aw_event_list_parse) holds the documents of the whole input: fresh pages
 * for the system to supply, which have left the cache again by the time
 * the encoder reads them. Here one line's memory is used over and over.
 *
 * Across lines only the toolCallId -> toolName map is kept, with copies of
 * its bytes. The whole-list encoder names a tool_result after the *last*
 * tool_call with its id anywhere in the input, which one pass cannot know
 * when it reaches the result. Into a buffer, a result is named after the
 * calls read so far, and its id's entry is marked; a call that later gives
 * a marked id another name (a result before its call, an id reused for
 * another tool) makes the names written stale. By the end of the input the
 * map is complete, and then the input is encoded once more, reading names
 * from it. Agents write results after their calls, so one pass is the
 * rule. Streamed output cannot be taken back, so there the map is made
 * complete first, from the few lines that can be tool calls
 * (aw__thread_scan_call), and the one pass reads names from it. */
#include <string.h>

#include "agentwire/thread.h"
#include "internal/errors.h"
#include "internal/event.h"
#include "internal/strmap.h"
#include "internal/thread.h"

typedef struct lines_encoder {
    const aw_thread_options *opts;
    const aw__thread_stream *stream; /* NULL: into the caller's buffer */
    aw_arena line;   /* the document of the line being encoded */
    aw_arena copies; /* the bytes of the map's ids and names */
    /* toolCallId -> toolName (ptr NULL: asked for by a result, no call yet);
     * mark: a result has been named from the entry */
    aw_strmap names;
    aw_buf scratch; /* aw__thread_event's */
    int complete;   /* the map holds every call: read it, change nothing */
    int stale;      /* a result's name changed after it was written */
    int again;      /* the second pass: events of unknown types are reported already */
} lines_encoder;

static const aw_text unknown_name = {"unknown", 7};

static int same_text(aw_text a, aw_text b) {
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* A copy that outlives the line; never NULL on success, even when empty,
 * since a NULL name means "no call". */
static int copy_text(aw_arena *a, aw_text t, aw_text *copy) {
    char *p = aw__arena_alloc(a, t.len);
    if (!p) return AW_ENOMEM;
    if (t.len) memcpy(p, t.ptr, t.len);
    copy->ptr = p;
    copy->len = t.len;
    return 0;
}

/* A tool_call: the name for its id's results from now on. */
static int note_call(lines_encoder *e, const aw_event *ev) {
    aw_strmap_slot *s = aw__strmap_find(&e->names, ev->tool_call_id);
    if (s && s->value.ptr && same_text(s->value, ev->tool_name)) return 0;
    aw_text name, id;
    if (copy_text(&e->copies, ev->tool_name, &name)) return AW_ENOMEM;
    if (s) {
        if (s->mark) e->stale = 1;
        s->value = name;
        return 0;
    }
    if (copy_text(&e->copies, ev->tool_call_id, &id)) return AW_ENOMEM;
    return aw__strmap_set(&e->names, id, name);
}

/* A tool_result: its name from the calls read so far, which marks the
 * entry; an id no call has had yet gets an entry too, so that a call that
 * comes later is noticed. */
static int name_result(lines_encoder *e, aw_text id, aw_text *name) {
    *name = unknown_name;
    aw_strmap_slot *s = aw__strmap_find(&e->names, id);
    if (!s && !e->complete) {
        aw_text key, none = {NULL, 0};
        if (copy_text(&e->copies, id, &key) || aw__strmap_set(&e->names, key, none)) return AW_ENOMEM;
        s = aw__strmap_find(&e->names, id);
    }
    if (!s) return 0;
    if (s->value.ptr) *name = s->value;
    s->mark = 1;
    return 0;
}

static int encode_event(lines_encoder *e, const aw_event *ev, size_t id, aw_buf *out) {
    if (!aw__thread_is_written(ev->kind)) return 0;
    aw_text name = unknown_name;
    int rc = 0;
    if (ev->kind == AW_EVENT_TOOL_CALL && !e->complete) rc = note_call(e, ev);
    else if (ev->kind == AW_EVENT_TOOL_RESULT) rc = name_result(e, ev->tool_call_id, &name);
    if (!rc) rc = aw_buf_append(out, "\n  ", 3);
    if (!rc) rc = aw__thread_event(ev, id, name, e->opts, out, &e->scratch);
    return rc;
}

/* An event of an unknown type read from line r->line, for on_unknown. */
static int report_unknown(lines_encoder *e, const aw__event_lines *r, const aw_event *ev, size_t id, aw_error *err) {
    aw_error where = {0};
    aw__event_lines_locate(r, ev->type.ptr - 1, &where);
    return aw__thread_unknown(e->stream->opts, ev, id, &where, err);
}

/* One pass over the lines, appending the whole document to out (handing
 * it on block by block when streaming). */
static int encode_pass(lines_encoder *e, const char *text, size_t len, const aw_json_read_options *read_opts,
                       aw_buf *out, aw_error *err) {
    aw__event_lines r;
    aw__event_lines_init(&r, text, len, read_opts);
    int rc = aw_buf_append(out, "<thread>", 8);
    if (rc) aw__error_set(err, rc, "%s", aw_strerror(rc));
    int unknown_reported = e->stream && e->stream->opts->on_unknown;
    for (size_t id = 0; !rc; id++) {
        aw_event ev;
        rc = aw__event_lines_next(&r, &e->line, &ev, err);
        if (rc <= 0) break; /* the end, or an error naming the line */
        if (ev.kind == AW_EVENT_OTHER && unknown_reported && !e->again && (rc = report_unknown(e, &r, &ev, id, err)))
            break;
        rc = encode_event(e, &ev, id, out);
        aw__arena_reset(&e->line);
        if (rc) aw__error_set(err, rc, "%s", aw_strerror(rc));
        else if (e->stream && out->len >= AW__THREAD_BLOCK) rc = aw__thread_flush(e->stream, out, err);
    }
    aw__event_lines_free(&r);
    if (!rc && (rc = aw__thread_close(e->opts, out))) aw__error_set(err, rc, "%s", aw_strerror(rc));
    if (!rc && e->stream) rc = aw__thread_flush(e->stream, out, err);
    return rc;
}

/* Streaming: every toolCallId -> toolName before anything is written, from
 * the lines the scan cannot rule out, skimmed (or parsed, when the skim
 * cannot be sure). A line that does not read as an event is passed over
 * here: the encoding pass reports it, in its turn. */
static int collect_calls(lines_encoder *e, const char *text, size_t len, const aw_json_read_options *read_opts,
                         aw_error *err) {
    aw__event_lines r;
    aw__event_lines_init(&r, text, len, read_opts);
    int allow_bom = read_opts && read_opts->allow_bom;
    size_t pos = 0;
    int rc = 0;
    while (pos < len && !rc) {
        size_t hit = pos + aw__thread_scan_call(text + pos, len - pos, 2);
        if (hit >= len) break;
        size_t start = hit;
        while (start > pos && text[start - 1] != '\n') start--;
        const char *nl = memchr(text + hit, '\n', len - hit);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t n = end - start;
        if (n && text[start + n - 1] == '\r') n--;
        aw_event ev;
        memset(&ev, 0, sizeof ev);
        int skim = aw__thread_skim_call(text + start, n, allow_bom, &ev.tool_call_id, &ev.tool_name);
        if (skim == 1) {
            rc = note_call(e, &ev);
        } else if (skim < 0) {
            rc = aw__event_lines_read(&r, &e->line, start, n, &ev, NULL);
            if (!rc && ev.kind == AW_EVENT_TOOL_CALL) rc = note_call(e, &ev);
            else if (rc != AW_ENOMEM) rc = 0;
            aw__arena_reset(&e->line);
        }
        pos = end + 1;
    }
    aw__event_lines_free(&r);
    if (rc) aw__error_set(err, rc, "%s", aw_strerror(rc));
    return rc;
}

static int encode_lines(const char *text, size_t len, const aw_json_read_options *read_opts,
                        const aw_thread_options *opts, const aw__thread_stream *stream, aw_buf *out,
                        aw_error *err) {
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    lines_encoder e = {.opts = opts, .stream = stream};
    aw__arena_init(&e.line, read_opts ? read_opts->alloc : NULL);
    aw__arena_init(&e.copies, alloc);
    aw__strmap_init(&e.names, alloc);
    aw_buf_init(&e.scratch, alloc);
    size_t start = out->len;
    int rc = 0;
    if (stream) {
        rc = collect_calls(&e, text, len, read_opts, err);
        e.complete = 1;
    }
    if (!rc) rc = encode_pass(&e, text, len, read_opts, out, err);
    if (!rc && e.stale && !e.complete) {
        e.complete = 1;
        e.again = 1;
        out->len = start;
        rc = encode_pass(&e, text, len, read_opts, out, err);
    }
    aw__arena_free(&e.line);
    aw__arena_free(&e.copies);
    aw__strmap_free(&e.names);
    aw_buf_free(&e.scratch);
    return rc;
}

/* The place of an array event's "type" value, in the text it was read from. */
typedef struct array_place {
    const aw_event_list *list;
    const char *text;
    size_t len;
} array_place;

static void locate_in_array(void *ctx, const aw_event *ev, aw_error *where) {
    const array_place *a = ctx;
    aw__event_list_locate(a->list, a->text, a->len, ev->type.ptr - 1, where);
}

/* One array: a single document, read whole. */
static int encode_array(const char *text, size_t len, const aw_json_read_options *read_opts,
                        const aw_thread_options *opts, const aw__thread_stream *stream, aw_buf *out,
                        aw_error *err) {
    aw_event_list *list = NULL;
    int rc = aw_event_list_parse(text, len, read_opts, &list, err);
    if (rc) return rc;
    array_place place = {list, text, len};
    aw__thread_stream located = {stream ? stream->opts : NULL, locate_in_array, &place};
    rc = aw__thread_encode_events(aw_event_list_items(list), aw_event_list_count(list), opts, out, &located, err);
    aw_event_list_free(list);
    return rc;
}

static int encode_json(const char *text, size_t len, const aw_json_read_options *read_opts,
                       const aw_thread_options *opts, const aw__thread_stream *stream, aw_buf *out,
                       aw_error *err) {
    if (aw__event_input_is_array(text, len, read_opts))
        return encode_array(text, len, read_opts, opts, stream, out, err);
    return encode_lines(text, len, read_opts, opts, stream, out, err);
}

int aw_thread_encode_json(const char *text, size_t len, const aw_json_read_options *read_opts,
                          const aw_thread_options *opts, aw_buf *out, aw_error *err) {
    if ((!text && len) || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    size_t start = out->len;
    int rc = encode_json(text, len, read_opts, opts, NULL, out, err);
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
    }
    return rc;
}

int aw_thread_encode_json_stream(const char *text, size_t len, const aw_json_read_options *read_opts,
                                 const aw_thread_options *opts, const aw_thread_stream_options *so,
                                 aw_error *err) {
    if ((!text && len) || !so || !so->sink) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    aw__thread_stream stream = {so, NULL, NULL};
    aw_buf block;
    aw_buf_init(&block, opts ? opts->alloc : NULL);
    int rc = aw_buf_reserve(&block, AW__THREAD_BLOCK + 64 * 1024);
    if (rc) rc = aw__error_set(err, rc, "%s", aw_strerror(rc));
    else rc = encode_json(text, len, read_opts, opts, &stream, &block, err);
    aw_buf_free(&block);
    return rc;
}
