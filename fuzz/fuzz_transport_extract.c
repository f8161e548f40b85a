/* Fuzz the streaming tag extractor: whatever the reply, it must not crash,
 * and the events must not depend on how the reply is cut into chunks.
 *
 * The first byte picks the run: bits 0-4 the chunk size (1..32), bit 5 the
 * final-report format (markdown or json), bits 6-7 the stop reason. The
 * rest is the reply, read in a fixed session (nonce 1a2b3c4d, xml mode,
 * tools search and fetch, every dialect on, turn 2) once whole and once in
 * chunks. The two traces — every event with all its fields, adjacent TEXT
 * and adjacent PAYLOAD deltas merged since where they split depends on the
 * chunking, then the warning and the feedback — must be equal. And the
 * bytes read again (a closing tag inside a JSON string that was the end
 * has what follows it re-read) must stay within CLOSE_LOOKBACK per '<' of
 * the reply, the bound that keeps the extractor linear. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "agentwire/transport.h"
#include "fuzz_session.h"
#include "internal/transport_extract.h"

typedef struct trace {
    aw_buf out;
    int pending;  /* AW_X_TEXT or AW_X_PAYLOAD being merged, or -1 */
    aw_buf delta; /* the merged delta, written with its length when it ends */
} trace;

static void put(trace *t, const char *tag, const char *p, size_t n) {
    if (aw_buf_printf(&t->out, " %s%zu:", tag, n) || aw_buf_append(&t->out, p ? p : "", p ? n : 0)) abort();
}

static void put_text(trace *t, const char *tag, aw_text x) { put(t, tag, x.ptr, x.ptr ? x.len : 0); }

static void put_json(trace *t, const char *tag, const aw_json_value *v) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    if (v && aw_json_write(v, NULL, &b, NULL)) abort();
    put(t, tag, b.data, b.len);
    aw_buf_free(&b);
}

static void flush(trace *t) {
    if (t->pending < 0) return;
    put(t, t->pending == AW_X_TEXT ? "\nTEXT" : "\nPAYLOAD", t->delta.data, t->delta.len);
    aw_buf_clear(&t->delta);
    t->pending = -1;
}

static int on_event(void *ctx, const aw_x_event *ev) {
    trace *t = ctx;
    if (ev->kind == AW_X_TEXT || ev->kind == AW_X_PAYLOAD) {
        if (ev->text.len == 0) return 0;
        if (t->pending != (int)ev->kind) flush(t);
        t->pending = (int)ev->kind;
        if (aw_buf_append(&t->delta, ev->text.ptr, ev->text.len)) abort();
        return 0;
    }
    flush(t);
    switch (ev->kind) {
    case AW_X_TAG_OPEN:
        if (aw_buf_append_str(&t->out, "\nOPEN")) abort();
        put_text(t, "slot", ev->slot);
        put_text(t, "tool", ev->tool);
        break;
    case AW_X_TAG_CLOSE:
        if (aw_buf_append_str(&t->out, "\nCLOSE")) abort();
        put_text(t, "slot", ev->slot);
        break;
    case AW_X_CALL:
        if (!ev->call || !aw_json_is_object(ev->call->args)) abort(); /* args is always an object */
        if (aw_buf_append_str(&t->out, "\nCALL")) abort();
        put_text(t, "slot", ev->call->slot);
        put_text(t, "tool", ev->call->tool);
        put_json(t, "args", ev->call->args);
        put_text(t, "payload", ev->call->payload);
        put(t, "source", ev->call->source, ev->call->source ? strlen(ev->call->source) : 0);
        put_text(t, "command", ev->call->command);
        if (aw_buf_printf(&t->out, " repairs%u", ev->call->repairs)) abort();
        break;
    case AW_X_FINAL:
        if (!ev->final) abort();
        if (aw_buf_append_str(&t->out, "\nFINAL")) abort();
        put_text(t, "status", ev->final->status);
        put_text(t, "content", ev->final->content);
        put_json(t, "json", ev->final->json);
        if (aw_buf_printf(&t->out, " format%d truncated%d repairs%u", (int)ev->final->format, (int)ev->final->truncated,
                          ev->final->repairs))
            abort();
        break;
    case AW_X_REJECTED:
        if (!ev->rejection || !aw_reject_reason_name(ev->rejection->reason) || !ev->rejection->message) abort();
        if (aw_buf_append_str(&t->out, "\nREJECTED")) abort();
        put_text(t, "slot", ev->rejection->slot);
        put_text(t, "tool", ev->rejection->tool);
        put(t, "reason", aw_reject_reason_name(ev->rejection->reason), strlen(aw_reject_reason_name(ev->rejection->reason)));
        put(t, "message", ev->rejection->message, strlen(ev->rejection->message));
        break;
    default:
        abort();
    }
    return 0;
}

static aw_transport *session(aw_report_format format) {
    static const char tools_json[] =
        "[{\"type\":\"function\",\"function\":{\"name\":\"search\",\"description\":\"Search.\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}}}}},"
        "{\"name\":\"fetch\",\"description\":\"Fetch.\",\"input_schema\":{\"type\":\"object\"}}]";
    return fuzz_session(tools_json, AW_TRANSPORT_XML, format,
                        AW_DIALECT_HERMES | AW_DIALECT_FUNCTION_CALLS | AW_DIALECT_FENCED);
}

static size_t count_lt(const char *p, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += p[i] == '<';
    return k;
}

static void run(const aw_transport *tr, const char *p, size_t n, size_t chunk, const char *stop, trace *t) {
    t->pending = -1;
    aw_buf_init(&t->delta, NULL);
    aw_extractor *x = aw_extractor_new(tr, 2);
    if (!x) abort();
    aw_error err;
    for (size_t i = 0; i < n; i += chunk) {
        size_t len = n - i < chunk ? n - i : chunk;
        if (aw_extractor_feed(x, p + i, len, on_event, t, &err)) abort();
    }
    if (aw_extractor_finish(x, stop, on_event, t, &err)) abort();
    flush(t);
    aw_buf_free(&t->delta);
    const char *w = aw_extractor_warning(x);
    if (w) put(t, "\nWARNING", w, strlen(w));
    aw_buf fb;
    aw_buf_init(&fb, NULL);
    if (aw_extractor_feedback(x, &fb)) abort();
    put(t, "\nFEEDBACK", fb.data, fb.len);
    aw_buf_free(&fb);
    if (x->replayed > count_lt(p, n) * CLOSE_LOOKBACK) abort();
    aw_extractor_free(x);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    static aw_transport *markdown, *json;
    if (!markdown) {
        markdown = session(AW_FORMAT_MARKDOWN);
        json = session(AW_FORMAT_JSON);
    }
    if (size < 1) return 0;
    static const char *const stops[] = {"stop", "length", NULL, "end_turn"};
    size_t chunk = (size_t)(data[0] & 31) + 1;
    const aw_transport *tr = (data[0] & 32) ? json : markdown;
    const char *stop = stops[data[0] >> 6];
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    trace whole, cut;
    aw_buf_init(&whole.out, NULL);
    aw_buf_init(&cut.out, NULL);
    run(tr, p, n, n ? n : 1, stop, &whole);
    run(tr, p, n, chunk, stop, &cut);
    if (whole.out.len != cut.out.len || memcmp(whole.out.data, cut.out.data, whole.out.len) != 0) abort();
    aw_buf_free(&whole.out);
    aw_buf_free(&cut.out);
    return 0;
}
