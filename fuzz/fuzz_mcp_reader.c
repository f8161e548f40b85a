/* Fuzz the MCP stdio framing (runtime/mcp_reader.c): whatever a server
 * writes, every line is reported once, as one kind, the same whether the
 * bytes come in one piece or in chunks, and a line over the limit is
 * reported as oversized (never held). The first byte picks the line limit,
 * the second the chunk size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "internal/mcp_reader.h"

typedef struct trace {
    aw_buf text; /* one line per message: kind, id, method or problem */
    size_t max_line;
} trace;

static int record(void *ctx, const mcp_msg *m)
{
    trace *t = ctx;
    switch (m->kind) {
    case MCP_MSG_REQUEST:
    case MCP_MSG_NOTIFICATION:
        if (!m->method.len || !m->root || (m->kind == MCP_MSG_REQUEST && !m->id))
            abort();
        break;
    case MCP_MSG_RESULT:
        if (!m->result || !m->id)
            abort();
        break;
    case MCP_MSG_ERROR:
        if (!m->id)
            abort();
        break;
    case MCP_MSG_INVALID:
        if (!m->problem || m->root || m->bytes > t->max_line)
            abort();
        break;
    case MCP_MSG_OVERSIZED:
        if (m->bytes <= t->max_line)
            abort();
        break;
    default:
        abort();
    }
    aw_buf_printf(&t->text, "%d %d:%lld %llu %.*s %s\n", (int)m->kind, (int)m->has_int_id, (long long)m->int_id,
                  (unsigned long long)m->bytes, (int)m->method.len, m->method.ptr ? m->method.ptr : "",
                  m->problem ? m->problem : "");
    return 0;
}

static void run(const char *p, size_t n, size_t chunk, trace *t)
{
    mcp_reader *r = mcp_reader_new(NULL, t->max_line);
    if (!r)
        abort();
    for (size_t i = 0; i < n; i += chunk)
        if (mcp_reader_feed(r, p + i, n - i < chunk ? n - i : chunk, record, t))
            abort();
    mcp_reader_free(r);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t max_line = 16 + (size_t)data[0] * 16;
    size_t chunk = 1 + data[1];
    const char *p = (const char *)data + 2;
    size_t n = size - 2;
    trace whole = {.max_line = max_line}, cut = {.max_line = max_line};
    aw_buf_init(&whole.text, NULL);
    aw_buf_init(&cut.text, NULL);
    run(p, n, n ? n : 1, &whole);
    run(p, n, chunk, &cut);
    if (whole.text.len != cut.text.len || (whole.text.len && memcmp(whole.text.data, cut.text.data, whole.text.len)))
        abort();
    aw_buf_free(&whole.text);
    aw_buf_free(&cut.text);
    return 0;
}
