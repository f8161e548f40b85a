/* Fuzz the MCP stdio framing (runtime/mcp_reader.c): whatever a server
 * writes, every line is reported once, as one kind, the same whether the
 * bytes come in one piece or in chunks, and a line over the limit is
 * reported as oversized (never held). Each result is also read as a
 * tools/call result (mcp_result.c: the text never holds an image's base64)
 * and as a tools/list page (mcp_tools.c: names only of [A-Za-z0-9_-]). The
 * first byte picks the line limit, the second the chunk size. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "internal/mcp_impl.h"
#include "internal/mcp_reader.h"

typedef struct trace {
    aw_buf text; /* one line per message: kind, id, method or problem */
    size_t max_line;
} trace;

/* What the model would read, and the tools a page would offer. */
static void read_result(const aw_json_value *result)
{
    aw_buf text;
    aw_buf_init(&text, NULL);
    bool is_error;
    const aw_json_value *structured;
    if (mcp_result_text(result, &text, &is_error, &structured))
        abort();
    const aw_json_value *content = aw_json_get(result, "content");
    for (size_t i = 0; i < aw_json_count(content); i++) {
        const aw_json_value *part = aw_json_at(content, i);
        const aw_json_value *type = aw_json_get(part, "type");
        const aw_json_value *data = aw_json_get(part, "data");
        if (!aw_json_is_string(data))
            data = aw_json_get(aw_json_get(part, "resource"), "blob");
        /* longer than any description can be (names and URIs are cut at 300
         * bytes, MIME types at 100), so found in the text it was pasted */
        bool binary = aw_json_is_string(type) && aw_json_is_string(data) && data->u.str.len > 1100 &&
                      (!strcmp(type->u.str.ptr, "image") || !strcmp(type->u.str.ptr, "audio") ||
                       !strcmp(type->u.str.ptr, "resource"));
        if (!binary || !text.len || !memmem(text.data, text.len, data->u.str.ptr, data->u.str.len))
            continue;
        /* only when a text part (or the structured content) says it too */
        bool said = structured != NULL;
        for (size_t k = 0; k < aw_json_count(content) && !said; k++) {
            const aw_json_value *t = aw_json_get(aw_json_at(content, k), "text");
            said = aw_json_is_string(t) && memmem(t->u.str.ptr, t->u.str.len, data->u.str.ptr, data->u.str.len);
        }
        if (!said)
            abort();
    }
    aw_buf_free(&text);
    mcp_toolset *set = mcp_toolset_new(NULL);
    if (!set)
        abort();
    int rc = mcp_toolset_add_page(set, "s.v", aw_json_get(result, "tools"), 50, NULL, NULL);
    if (rc && rc != AW_ELIMIT)
        abort();
    for (size_t i = 0; i < set->count; i++) {
        aw_text name = set->tools[i].def.name;
        if (name.len < 6 || name.len > 128 || memcmp(name.ptr, "s_v__", 5) != 0 || !set->tools[i].def.schema)
            abort();
        for (size_t k = 0; k < name.len; k++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", name.ptr[k]))
                abort();
    }
    if (!mcp_toolset_equal(set, set))
        abort();
    mcp_toolset_free(NULL, set);
}

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
        read_result(m->result);
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
