/* Test harness for the XML transport: sessions built from a JSON spec, a
 * run of the extractor over a reply cut into chunks of given sizes, and a
 * trace of everything it reported, as JSON lines in the shape of
 * `agentwire transport extract --events`.
 *
 * The trace merges adjacent TEXT deltas, and adjacent PAYLOAD deltas, into
 * one record: where a delta ends depends on the chunking, but nothing else
 * may. So two runs over the same reply must give byte-identical traces
 * whatever the chunk sizes — the chunking-invariance property.
 *
 * Used by test_transport_extract.c and test_transport_props.c. Header only
 * (static functions), so each test executable stays one .c file. */
#ifndef AW_TEST_TRANSPORT_HARNESS_H
#define AW_TEST_TRANSPORT_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "agentwire/transport.h"
#include "failalloc.h"
#include "testutil.h"

#ifndef AW_SOURCE_DIR
#define AW_SOURCE_DIR "."
#endif

#define TH_NONCE "1a2b3c4d"

/* The tools every case gets unless its spec names others. */
static const char th_default_tools[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"search\",\"description\":\"Search the web.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}},\"required\":[\"query\"]}}},"
    "{\"name\":\"fetch\",\"description\":\"Fetch a URL.\",\"input_schema\":{\"type\":\"object\","
    "\"properties\":{\"url\":{\"type\":\"string\"}}}},"
    "{\"name\":\"read_file\",\"description\":\"Read a file.\",\"inputSchema\":{\"type\":\"object\"}}]";

/* ---- files ------------------------------------------------------------------ */

/* Append the whole file to out (aw_test_read_file underneath). */
static inline int th_read_file(const char *path, aw_buf *out) {
    size_t n = 0;
    char *p = aw_test_read_file(path, &n);
    if (!p) return -1;
    int rc = aw_buf_append(out, p, n);
    free(p);
    return rc ? -1 : 0;
}

static inline int th_write_file(const char *path, const char *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int rc = fwrite(p, 1, n, f) == n ? 0 : -1;
    if (fclose(f)) rc = -1;
    return rc;
}

/* ---- sessions from a spec ----------------------------------------------- */

static inline int th_mode_of(const char *s, aw_transport_mode *m) {
    if (!strcmp(s, "native")) *m = AW_TRANSPORT_NATIVE;
    else if (!strcmp(s, "xml")) *m = AW_TRANSPORT_XML;
    else if (!strcmp(s, "xml-final")) *m = AW_TRANSPORT_XML_FINAL;
    else return -1;
    return 0;
}

static inline unsigned th_dialect_of(const char *s) { return aw_dialect_flag(s, strlen(s)); }

static inline const char *th_str(const aw_json_value *obj, const char *key, const char *dflt) {
    const aw_json_value *v = aw_json_get(obj, key);
    return aw_json_is_string(v) ? v->u.str.ptr : dflt;
}

static inline long th_num(const aw_json_value *obj, const char *key, long dflt) {
    const aw_json_value *v = aw_json_get(obj, key);
    return aw_json_is_number(v) ? (long)v->u.num.d : dflt;
}

/* A session for spec (an object; NULL for all defaults): "mode" (xml),
 * "nonce" (1a2b3c4d), "prefix", "max_calls", "format" (markdown), "schema",
 * "tools" (an array; default th_default_tools), "dialects" (array of
 * names), "reasoning" (array of tag names). NULL on failure (err says). */
static inline aw_transport *th_transport(const aw_json_value *spec, const aw_allocator *alloc,
                                         aw_error *err) {
    aw_transport_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.alloc = alloc;
    if (th_mode_of(th_str(spec, "mode", "xml"), &cfg.mode)) return NULL;
    cfg.nonce = th_str(spec, "nonce", TH_NONCE);
    cfg.prefix = th_str(spec, "prefix", NULL);
    cfg.max_calls_per_turn = (unsigned)th_num(spec, "max_calls", 0);
    const char *fmt = th_str(spec, "format", "markdown");
    int f = aw_report_format_parse(fmt, strlen(fmt));
    if (f < 0) return NULL;
    cfg.format = (aw_report_format)f;
    cfg.final_schema = aw_json_get(spec, "schema");
    const aw_json_value *dl = aw_json_get(spec, "dialects");
    for (size_t i = 0; i < aw_json_count(dl); i++)
        if (aw_json_is_string(aw_json_at(dl, i))) cfg.dialects |= th_dialect_of(aw_json_at(dl, i)->u.str.ptr);
    const aw_json_value *rs = aw_json_get(spec, "reasoning");
    const char *rnames[16];
    if (aw_json_is_array(rs)) {
        size_t n = aw_json_count(rs) < 16 ? aw_json_count(rs) : 16;
        for (size_t i = 0; i < n; i++) rnames[i] = aw_json_is_string(aw_json_at(rs, i)) ? aw_json_at(rs, i)->u.str.ptr : "";
        cfg.reasoning_tags = rnames;
        cfg.reasoning_tag_count = n;
    }
    aw_json_doc *tdoc = NULL;
    const aw_json_value *tools = aw_json_get(spec, "tools");
    if (!tools) {
        if (aw_json_parse(th_default_tools, strlen(th_default_tools), NULL, &tdoc, err)) return NULL;
        tools = aw_json_doc_root(tdoc);
    }
    aw_tool_def *defs = NULL;
    size_t n = 0;
    if (aw_tools_from_json(tools, NULL, &defs, &n, err)) {
        aw_json_doc_free(tdoc);
        return NULL;
    }
    cfg.tools = defs;
    cfg.tool_count = n;
    aw_transport *t = aw_transport_new(&cfg, err);
    aw_free(NULL, defs);
    aw_json_doc_free(tdoc);
    return t;
}

/* A session in mode with the tools of a JSON array and the AW_DIALECT_*
 * dialects on, nonce TH_NONCE. NULL on failure (err says). */
static inline aw_transport *th_session_with(const aw_json_value *tools, aw_transport_mode mode, unsigned dialects,
                                            aw_error *err) {
    aw_tool_def *defs = NULL;
    size_t n = 0;
    if (aw_tools_from_json(tools, NULL, &defs, &n, err)) return NULL;
    aw_transport_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = mode;
    cfg.nonce = TH_NONCE;
    cfg.tools = defs;
    cfg.tool_count = n;
    cfg.dialects = dialects;
    aw_transport *t = aw_transport_new(&cfg, err);
    aw_free(NULL, defs);
    return t;
}

/* ---- records and traces ------------------------------------------------- */

static inline int th_set_text(aw_json_doc *d, aw_json_value *o, const char *key, aw_text t) {
    return aw_json_object_set_string(d, o, key, t.ptr ? t.ptr : "", t.ptr ? t.len : 0);
}

static inline int th_set_cstr(aw_json_doc *d, aw_json_value *o, const char *key, const char *s) {
    return aw_json_object_set_string(d, o, key, s ? s : "", s ? strlen(s) : 0);
}

static inline int th_set_value(aw_json_doc *d, aw_json_value *o, const char *key, const aw_json_value *v) {
    if (!v) return aw_json_object_set_null(d, o, key);
    aw_json_value *c = aw_json_copy(d, v);
    return c ? aw_json_object_set(d, o, key, strlen(key), c) : AW_ENOMEM;
}

static inline int th_set_repairs(aw_json_doc *d, aw_json_value *o, unsigned steps) {
    aw_json_value *arr = aw_json_new_array(d);
    if (!arr) return AW_ENOMEM;
    for (unsigned b = 0; b < 32; b++) {
        if (!(steps & (1u << b))) continue;
        const char *name = aw_json_repair_step_name(1u << b);
        char tmp[32];
        if (!name) {
            snprintf(tmp, sizeof tmp, "step_%u", b);
            name = tmp;
        }
        aw_json_value *s = aw_json_new_string(d, name, strlen(name));
        if (!s || aw_json_array_push(d, arr, s)) return AW_ENOMEM;
    }
    return aw_json_object_set(d, o, "repairs", 7, arr);
}

/* The record of one event, as `agentwire transport extract` prints it
 * (text and payload hold the merged delta). */
static inline int th_record(aw_json_doc *d, aw_json_value *o, const aw_x_event *ev) {
    int rc = 0;
    switch (ev->kind) {
    case AW_X_TEXT:
    case AW_X_PAYLOAD:
        rc = th_set_cstr(d, o, "kind", ev->kind == AW_X_TEXT ? "text" : "payload");
        if (!rc) rc = th_set_text(d, o, "text", ev->text);
        break;
    case AW_X_TAG_OPEN:
        rc = th_set_cstr(d, o, "kind", "tag_open");
        if (!rc) rc = th_set_text(d, o, "slot", ev->slot);
        if (!rc) rc = th_set_text(d, o, "tool", ev->tool);
        break;
    case AW_X_TAG_CLOSE:
        rc = th_set_cstr(d, o, "kind", "tag_close");
        if (!rc) rc = th_set_text(d, o, "slot", ev->slot);
        break;
    case AW_X_CALL:
        rc = th_set_cstr(d, o, "kind", "call");
        if (!rc) rc = th_set_text(d, o, "slot", ev->call->slot);
        if (!rc) rc = th_set_text(d, o, "tool", ev->call->tool);
        if (!rc) rc = th_set_value(d, o, "args", ev->call->args);
        if (!rc) rc = th_set_text(d, o, "payload", ev->call->payload);
        if (!rc) rc = th_set_cstr(d, o, "source", ev->call->source);
        if (!rc) rc = th_set_text(d, o, "command", ev->call->command);
        if (!rc) rc = th_set_repairs(d, o, ev->call->repairs);
        break;
    case AW_X_FINAL:
        rc = th_set_cstr(d, o, "kind", "final");
        if (!rc) rc = th_set_text(d, o, "status", ev->final->status);
        if (!rc) rc = th_set_cstr(d, o, "format", aw_report_format_name(ev->final->format));
        if (!rc) rc = th_set_text(d, o, "content", ev->final->content);
        if (!rc) rc = th_set_value(d, o, "json", ev->final->json);
        if (!rc) rc = aw_json_object_set_bool(d, o, "truncated", ev->final->truncated);
        if (!rc) rc = th_set_repairs(d, o, ev->final->repairs);
        if (!rc) rc = th_set_cstr(d, o, "command", ev->final->command);
        break;
    case AW_X_REJECTED:
        rc = th_set_cstr(d, o, "kind", "rejected");
        if (!rc) rc = th_set_text(d, o, "slot", ev->rejection->slot);
        if (!rc) rc = th_set_text(d, o, "tool", ev->rejection->tool);
        if (!rc) rc = th_set_cstr(d, o, "reason", aw_reject_reason_name(ev->rejection->reason));
        if (!rc) rc = th_set_cstr(d, o, "message", ev->rejection->message);
        break;
    default:
        rc = th_set_cstr(d, o, "kind", "unknown_event");
    }
    return rc;
}

typedef struct th_trace {
    aw_buf out;      /* JSON lines */
    bool streaming;  /* include text, payload, tag_open, tag_close */
    int pending;     /* kind of the delta being merged, or -1 */
    aw_buf delta;
    aw_buf visible;  /* every TEXT delta, concatenated */
    size_t counts[8]; /* events seen, by aw_x_kind */
    int failed;      /* the harness itself ran out of memory */
    /* optional: stop after this many events (0: never) */
    size_t stop_after, seen;
} th_trace;

static inline void th_trace_init(th_trace *t, bool streaming) {
    memset(t, 0, sizeof *t);
    aw_buf_init(&t->out, NULL);
    aw_buf_init(&t->delta, NULL);
    aw_buf_init(&t->visible, NULL);
    t->streaming = streaming;
    t->pending = -1;
}

static inline void th_trace_free(th_trace *t) {
    aw_buf_free(&t->out);
    aw_buf_free(&t->delta);
    aw_buf_free(&t->visible);
}

static inline void th_trace_line(th_trace *t, const aw_x_event *ev, const char *kind, const char *text,
                                 size_t len) {
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *o = d ? aw_json_new_object(d) : NULL;
    int rc = o ? 0 : AW_ENOMEM;
    if (!rc && ev) rc = th_record(d, o, ev);
    else if (!rc) {
        rc = th_set_cstr(d, o, "kind", kind);
        if (!rc) rc = aw_json_object_set_string(d, o, "text", text, len);
    }
    if (!rc) rc = aw_json_write(o, NULL, &t->out, NULL);
    if (!rc) rc = aw_buf_putc(&t->out, '\n');
    if (rc) t->failed = 1;
    aw_json_doc_free(d);
}

static inline void th_trace_flush(th_trace *t) {
    if (t->pending < 0) return;
    aw_x_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = (aw_x_kind)t->pending;
    ev.text.ptr = t->delta.data ? t->delta.data : "";
    ev.text.len = t->delta.len;
    th_trace_line(t, &ev, NULL, NULL, 0);
    aw_buf_clear(&t->delta);
    t->pending = -1;
}

static int th_on_event(void *ctx, const aw_x_event *ev) {
    th_trace *t = ctx;
    if ((unsigned)ev->kind < 8) t->counts[ev->kind]++;
    t->seen++;
    if (ev->kind == AW_X_TEXT && aw_buf_append(&t->visible, ev->text.ptr, ev->text.len)) t->failed = 1;
    if (ev->kind == AW_X_TEXT || ev->kind == AW_X_PAYLOAD) {
        if (t->streaming) {
            if (t->pending != (int)ev->kind) th_trace_flush(t);
            t->pending = (int)ev->kind;
            if (aw_buf_append(&t->delta, ev->text.ptr, ev->text.len)) t->failed = 1;
        }
    } else if (t->streaming || (ev->kind != AW_X_TAG_OPEN && ev->kind != AW_X_TAG_CLOSE)) {
        th_trace_flush(t);
        th_trace_line(t, ev, NULL, NULL, 0);
    }
    return t->stop_after && t->seen >= t->stop_after;
}

/* Run one reply through a fresh extractor. chunks: sizes cycled over the
 * reply (NULL or nchunks 0: the whole reply at once). native: a JSON array
 * for aw_extractor_native_calls, or NULL. The trace ends with the warning
 * and the feedback, when there are any. Returns the first error code (or
 * 0); on an error the trace holds what was reported before it. */
static inline int th_run(const aw_transport *tr, unsigned turn, const char *p, size_t n, const size_t *chunks,
                         size_t nchunks, const char *stop, const aw_json_value *native, th_trace *t) {
    aw_extractor *x = aw_extractor_new(tr, turn);
    if (!x) return AW_ENOMEM;
    aw_error err;
    int rc = 0;
    size_t pos = 0, k = 0;
    while (!rc && pos < n) {
        size_t step = (chunks && nchunks) ? chunks[k++ % nchunks] : n;
        if (step == 0) step = 1;
        if (step > n - pos) step = n - pos;
        rc = aw_extractor_feed(x, p + pos, step, th_on_event, t, &err);
        pos += step;
    }
    if (!rc) rc = aw_extractor_finish(x, stop, th_on_event, t, &err);
    if (!rc && native) rc = aw_extractor_native_calls(x, native, th_on_event, t, &err);
    th_trace_flush(t);
    if (!rc) {
        const char *w = aw_extractor_warning(x);
        if (w) th_trace_line(t, NULL, "warning", w, strlen(w));
        aw_buf fb;
        aw_buf_init(&fb, NULL);
        rc = aw_extractor_feedback(x, &fb);
        if (!rc && fb.len) th_trace_line(t, NULL, "feedback", fb.data, fb.len);
        aw_buf_free(&fb);
    }
    aw_extractor_free(x);
    return rc;
}

/* 1 when every key of `want` (an object) is in `got` with an equal value. */
static inline int th_subset(const aw_json_value *want, const aw_json_value *got) {
    if (!aw_json_is_object(want) || !aw_json_is_object(got)) return aw_json_equal(want, got);
    for (size_t i = 0; i < want->u.obj.count; i++) {
        const aw_json_member *m = &want->u.obj.members[i];
        const aw_json_value *g = aw_json_getn(got, m->key, m->key_len);
        if (!g || !aw_json_equal(&m->value, g)) return 0;
    }
    return 1;
}

#endif
