/* Fuzz the Server-Sent Events reader: the events, unknown fields and the
 * error (with its byte) must not depend on how the stream is cut into
 * chunks. The first byte picks the chunk size and whether the line limit
 * is small enough to be reached. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/buf.h"
#include "internal/sse.h"

static int on_event(void *ctx, const aw_sse_event *ev)
{
    aw_buf *t = ctx;
    aw_buf_printf(t, "E%llu t%zu i%zu r%lld d%zu:", (unsigned long long)ev->offset, ev->type.len, ev->id.len,
                  (long long)ev->retry_ms, ev->data.len);
    aw_buf_append(t, ev->type.ptr, ev->type.len);
    aw_buf_putc(t, '|');
    aw_buf_append(t, ev->id.ptr, ev->id.len);
    aw_buf_putc(t, '|');
    aw_buf_append(t, ev->data.ptr, ev->data.len);
    aw_buf_putc(t, '\n');
    return 0;
}

static int on_other(void *ctx, aw_text field, aw_text value, uint64_t at)
{
    aw_buf *t = ctx;
    aw_buf_printf(t, "F%llu:", (unsigned long long)at);
    aw_buf_append(t, field.ptr, field.len);
    aw_buf_putc(t, '=');
    aw_buf_append(t, value.ptr, value.len);
    aw_buf_putc(t, '\n');
    return 0;
}

static void run(const char *p, size_t n, size_t chunk, size_t max_line, aw_buf *t)
{
    aw_sse_handlers h = {on_event, on_other};
    aw_sse_reader r;
    aw_sse_init(&r, NULL, max_line, max_line * 2, &h, t);
    aw_error err;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i += chunk)
        rc = aw_sse_feed(&r, p + i, n - i < chunk ? n - i : chunk, &err);
    if (rc == 0)
        rc = aw_sse_finish(&r, &err);
    if (rc)
        aw_buf_printf(t, "ERR %d @%zu %s\n", rc, err.offset, err.message);
    aw_sse_release(&r);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (size_t)(data[0] % 13) + 1;
    size_t max_line = data[0] & 0x80 ? 24 : 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    aw_buf whole, cut;
    aw_buf_init(&whole, NULL);
    aw_buf_init(&cut, NULL);
    run(p, n, n ? n : 1, max_line, &whole);
    run(p, n, chunk, max_line, &cut);
    if (whole.len != cut.len || (whole.len && memcmp(whole.data, cut.data, whole.len) != 0))
        abort();
    aw_buf_free(&whole);
    aw_buf_free(&cut);
    return 0;
}
