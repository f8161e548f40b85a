/* The fuzz target of one dialect reader (fuzz/fuzz_dialect_NAME.c calls
 * dialect_fuzz_one with its flag): whatever the reply, the extractor with
 * that dialect on must not crash, leak or hang, every call it reports must
 * name a declared tool with an object of arguments, and the events must
 * not depend on how the reply is cut into chunks.
 *
 * The first byte picks the run: bits 0-4 the chunk size (1..32), bit 5 the
 * mode (native or xml), bit 6 all dialects on besides this one. The rest
 * is the reply, read once whole and once in chunks; the two traces (every
 * event with its fields, adjacent text merged) must be equal. */
#ifndef AW_FUZZ_DIALECT_H
#define AW_FUZZ_DIALECT_H

#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "agentwire/transport.h"
#include "fuzz_session.h"

typedef struct dtrace {
    aw_buf out;
    int text;     /* the last record was text: merge */
    const aw_transport *t;
} dtrace;

static void dput(dtrace *t, const char *tag, const char *p, size_t n) {
    if (aw_buf_printf(&t->out, " %s%zu:", tag, n) || aw_buf_append(&t->out, p ? p : "", p ? n : 0)) abort();
}

static void dput_text(dtrace *t, const char *tag, aw_text x) { dput(t, tag, x.ptr, x.ptr ? x.len : 0); }

static int don_event(void *ctx, const aw_x_event *ev) {
    dtrace *t = ctx;
    if (ev->kind == AW_X_TEXT) {
        if (!ev->text.len) return 0;
        if (!t->text && aw_buf_append_str(&t->out, "\nTEXT ")) abort();
        t->text = 1;
        if (aw_buf_append(&t->out, ev->text.ptr, ev->text.len)) abort();
        return 0;
    }
    t->text = 0;
    if (ev->kind == AW_X_CALL) {
        const aw_x_call *c = ev->call;
        /* a call names a declared tool, with an object of arguments */
        static const char *const declared[] = {"get_weather", "search", "f"};
        int named = 0;
        for (size_t i = 0; i < 3; i++)
            named |= c->tool.len == strlen(declared[i]) && !memcmp(c->tool.ptr, declared[i], c->tool.len);
        if (!named || !aw_json_is_object(c->args)) abort();
        aw_buf b;
        aw_buf_init(&b, NULL);
        if (aw_json_write(c->args, NULL, &b, NULL)) abort();
        if (aw_buf_append_str(&t->out, "\nCALL")) abort();
        dput_text(t, "tool", c->tool);
        dput(t, "args", b.data, b.len);
        dput(t, "source", c->source, strlen(c->source));
        dput(t, "dialect", c->dialect ? c->dialect : "", c->dialect ? strlen(c->dialect) : 0);
        dput_text(t, "payload", c->payload);
        aw_buf_free(&b);
        return 0;
    }
    if (ev->kind == AW_X_REJECTED) {
        if (!ev->rejection->message || !aw_reject_reason_name(ev->rejection->reason)) abort();
        if (aw_buf_append_str(&t->out, "\nREJECTED")) abort();
        dput_text(t, "tool", ev->rejection->tool);
        dput(t, "message", ev->rejection->message, strlen(ev->rejection->message));
        return 0;
    }
    if (aw_buf_printf(&t->out, "\nEVENT%d", (int)ev->kind)) abort();
    return 0;
}

static aw_transport *dsession(unsigned dialects, aw_transport_mode mode) {
    static const char tools_json[] =
        "[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\",\"properties\":{"
        "\"city\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\"},\"units\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]},"
        "\"when\":{\"type\":[\"number\",\"null\"]}}}},"
        "{\"name\":\"search\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}}}},"
        "{\"name\":\"f\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
        "\"b\":{\"type\":\"object\"},\"c\":{\"type\":\"array\"},\"d\":{\"type\":\"boolean\"},\"e\":{\"type\":\"number\"}}}}]";
    return fuzz_session(tools_json, mode, AW_FORMAT_MARKDOWN, dialects);
}

static void drun(const aw_transport *tr, const char *p, size_t n, size_t chunk, dtrace *t) {
    aw_extractor *x = aw_extractor_new(tr, 1);
    if (!x) abort();
    t->text = 0;
    for (size_t i = 0; i < n; i += chunk) {
        size_t len = n - i < chunk ? n - i : chunk;
        if (aw_extractor_feed(x, p + i, len, don_event, t, NULL)) abort();
    }
    if (aw_extractor_finish(x, "stop", don_event, t, NULL)) abort();
    aw_extractor_free(x);
}

static int dialect_fuzz_one(unsigned flag, const unsigned char *data, size_t size) {
    static aw_transport *sessions[4];
    if (!sessions[0]) {
        sessions[0] = dsession(flag, AW_TRANSPORT_NATIVE);
        sessions[1] = dsession(flag, AW_TRANSPORT_XML);
        sessions[2] = dsession(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE);
        sessions[3] = dsession(AW_DIALECT_AUTO, AW_TRANSPORT_XML);
    }
    if (size < 1) return 0;
    size_t chunk = (size_t)(data[0] & 31) + 1;
    const aw_transport *tr = sessions[((data[0] >> 5) & 1) | (((data[0] >> 6) & 1) << 1)];
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    dtrace whole, cut;
    memset(&whole, 0, sizeof whole);
    memset(&cut, 0, sizeof cut);
    aw_buf_init(&whole.out, NULL);
    aw_buf_init(&cut.out, NULL);
    drun(tr, p, n, n ? n : 1, &whole);
    drun(tr, p, n, chunk, &cut);
    if (whole.out.len != cut.out.len || (whole.out.len && memcmp(whole.out.data, cut.out.data, whole.out.len))) abort();
    aw_buf_free(&whole.out);
    aw_buf_free(&cut.out);
    return 0;
}

#endif
