/* Shared by the provider reply-reader fuzz targets: run a reader over the
 * input as a stream (whole, and cut into chunks) and as a whole reply, and
 * check that the chunking changes nothing the caller sees. */
#ifndef AW_FUZZ_REPLY_HARNESS_H
#define AW_FUZZ_REPLY_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include "agentwire/buf.h"
#include "internal/provider_http.h"

static int fz_text(void *ctx, const char *p, size_t n)
{
    aw_buf_append(ctx, "T", 1);
    return aw_buf_append(ctx, p, n) ? 1 : 0;
}

static int fz_reasoning(void *ctx, const char *p, size_t n)
{
    aw_buf_append(ctx, "R", 1);
    return aw_buf_append(ctx, p, n) ? 1 : 0;
}

static int fz_tool(void *ctx, const aw_chat_call *c)
{
    aw_buf *t = ctx;
    aw_buf_printf(t, "C%zu,%zu,%zu:", c->id.len, c->name.len, c->arguments.len);
    aw_buf_append(t, c->id.ptr, c->id.len);
    aw_buf_append(t, c->name.ptr, c->name.len);
    aw_buf_append(t, c->arguments.ptr, c->arguments.len);
    return 0;
}

/* Text deltas may be split differently by different chunkings only if the
 * reader is wrong: events are whole before they are read, so the record
 * must match byte for byte. */
static void fz_run(const aw_reply_reader_ops *ops, const char *p, size_t n, size_t chunk, bool whole, aw_buf *t)
{
    void *r = malloc(ops->size);
    if (!r)
        abort();
    aw_reply_sink sink = {fz_text, fz_reasoning, fz_tool, t};
    ops->init(r, NULL, &sink);
    aw_error err;
    int rc = 0;
    if (whole) {
        rc = ops->whole(r, p, n, &err);
    } else {
        for (size_t i = 0; i < n && rc == 0; i += chunk)
            rc = ops->feed(r, p + i, n - i < chunk ? n - i : chunk, &err);
        if (rc == 0)
            rc = ops->finish(r, &err);
    }
    const aw_reply_info *info = ops->info(r);
    aw_buf_printf(t, "|rc=%d stop=%s model=%s usage=%d:%lld/%lld/%lld/%lld/%lld", rc, info->stop_reason, info->model,
                  info->has_usage, (long long)info->usage.input_tokens, (long long)info->usage.output_tokens,
                  (long long)info->usage.cache_read_tokens, (long long)info->usage.cache_write_tokens,
                  (long long)info->usage.reasoning_tokens);
    if (rc)
        aw_buf_printf(t, " err=%s", err.message);
    ops->release(r);
    free(r);
}

static int fz_reply(const aw_reply_reader_ops *ops, const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (size_t)(data[0] % 11) + 1;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    aw_buf a, b, w;
    aw_buf_init(&a, NULL);
    aw_buf_init(&b, NULL);
    aw_buf_init(&w, NULL);
    fz_run(ops, p, n, n ? n : 1, false, &a);
    fz_run(ops, p, n, chunk, false, &b);
    fz_run(ops, p, n, 0, true, &w);
    if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len) != 0))
        abort();
    aw_buf_free(&a);
    aw_buf_free(&b);
    aw_buf_free(&w);
    return 0;
}

#endif
