/* What every reply reader shares: the sink, the SSE reader, the first
 * error kept, and the JSON of an event or a whole reply. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal/provider_http.h"
#include "internal/rt_util.h"

void aw_reply_copy(char *dst, size_t cap, const char *p, size_t n)
{
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, p, n);
    dst[n] = 0;
}

void aw_reply_base_init(aw_reply_base *b, const aw_allocator *alloc, const aw_reply_sink *sink,
                        const aw_sse_handlers *events, void *ctx)
{
    memset(b, 0, sizeof *b);
    b->alloc = alloc;
    b->sink = *sink;
    b->info.usage.cost_usd = -1;
    aw_sse_init(&b->sse, alloc, 0, 0, events, ctx);
}

void aw_reply_base_release(aw_reply_base *b) { aw_sse_release(&b->sse); }

static int record(aw_reply_base *b, int code, uint64_t at, const char *prefix, const char *fmt, va_list ap)
{
    if (b->status)
        return b->status;
    char what[AW_ERROR_MESSAGE_MAX];
    vsnprintf(what, sizeof what, fmt, ap);
    b->status = aw_rt_error(&b->err, code, "%s%s", prefix, what);
    b->err.offset = (size_t)at;
    return code;
}

int aw_reply_fail(aw_reply_base *b, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = record(b, code, 0, "", fmt, ap);
    va_end(ap);
    return rc;
}

int aw_reply_bad(aw_reply_base *b, uint64_t at, const char *fmt, ...)
{
    char prefix[64];
    if (at == AW_REPLY_WHOLE)
        snprintf(prefix, sizeof prefix, "bad reply: ");
    else
        snprintf(prefix, sizeof prefix, "bad stream event at byte %llu: ", (unsigned long long)at);
    va_list ap;
    va_start(ap, fmt);
    int rc = record(b, AW_ESYNTAX, at == AW_REPLY_WHOLE ? 0 : at, prefix, fmt, ap);
    va_end(ap);
    return rc;
}

int aw_reply_emit(aw_reply_base *b, bool reasoning, const char *p, size_t n)
{
    int (*fn)(void *, const char *, size_t) = reasoning ? b->sink.reasoning : b->sink.text;
    if (n == 0 || !fn)
        return 0;
    return fn(b->sink.ctx, p, n) ? aw_reply_fail(b, AW_ESTOP, "stopped") : 0;
}

int aw_reply_emit_call(aw_reply_base *b, const aw_chat_call *call)
{
    if (b->sink.tool_call && b->sink.tool_call(b->sink.ctx, call))
        return aw_reply_fail(b, AW_ESTOP, "stopped");
    return 0;
}

int aw_reply_parse_event(aw_reply_base *b, const aw_sse_event *ev, aw_json_doc **doc)
{
    aw_json_read_options ro = {.alloc = b->alloc};
    aw_error jerr;
    *doc = NULL;
    int rc = aw_json_parse(ev->data.ptr, ev->data.len, &ro, doc, &jerr);
    if (rc == AW_ENOMEM)
        return aw_reply_fail(b, AW_ENOMEM, "out of memory");
    if (rc)
        return aw_reply_bad(b, ev->offset, "not JSON: %s", jerr.message);
    if (!aw_json_is_object(aw_json_doc_root(*doc))) {
        aw_json_doc_free(*doc);
        *doc = NULL;
        return aw_reply_bad(b, ev->offset, "not a JSON object");
    }
    return 0;
}

int aw_reply_parse_whole(aw_reply_base *b, const char *p, size_t n, aw_json_doc **doc)
{
    aw_json_read_options ro = {.alloc = b->alloc};
    aw_error jerr;
    *doc = NULL;
    int rc = aw_json_parse(p, n, &ro, doc, &jerr);
    if (rc == AW_ENOMEM)
        return aw_reply_fail(b, AW_ENOMEM, "out of memory");
    if (rc)
        return aw_reply_fail(b, AW_ESYNTAX, "bad reply at byte %zu: not JSON: %s", jerr.offset, jerr.message);
    if (!aw_json_is_object(aw_json_doc_root(*doc))) {
        aw_json_doc_free(*doc);
        *doc = NULL;
        return aw_reply_fail(b, AW_ESYNTAX, "bad reply: not a JSON object");
    }
    return 0;
}

int aw_reply_status(const aw_reply_base *b, aw_error *err)
{
    if (b->status && err)
        *err = b->err;
    return b->status;
}

/* The SSE reader's own failure (a limit, a cut line), unless a handler's
 * came first (then the SSE reader only says AW_ESTOP). */
static int sse_failed(aw_reply_base *b, int rc, const aw_error *sse_err)
{
    if (rc && !b->status) {
        b->status = aw_rt_error(&b->err, rc, "%s%s", rc == AW_ENOMEM ? "" : "bad stream: ", sse_err->message);
        b->err.offset = sse_err->offset;
    }
    return b->status;
}

int aw_reply_feed(aw_reply_base *b, const char *p, size_t n, aw_error *err)
{
    if (!b->status) {
        aw_error sse_err;
        sse_failed(b, aw_sse_feed(&b->sse, p, n, &sse_err), &sse_err);
    }
    return aw_reply_status(b, err);
}

int aw_reply_end(aw_reply_base *b, aw_error *err)
{
    if (!b->status) {
        aw_error sse_err;
        sse_failed(b, aw_sse_finish(&b->sse, &sse_err), &sse_err);
    }
    return aw_reply_status(b, err);
}
