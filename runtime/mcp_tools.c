/* The tools an MCP server offers, as the model sees them: SERVER__TOOL
 * names (model APIs accept [A-Za-z0-9_-] only, where MCP also allows '.'
 * and '/'), descriptions and input schemas copied out of the tools/list
 * answer into one document per list. */
#include <stdio.h>
#include <string.h>

#include "agentwire/mcp.h"
#include "internal/mcp_impl.h"

#define MODEL_NAME_MAX 128

const char *const aw_mcp_versions[] = {AW_MCP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"};
const size_t aw_mcp_version_count = sizeof aw_mcp_versions / sizeof *aw_mcp_versions;

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

int mcp_model_name(const char *prefix, const char *tool, size_t tool_len, aw_buf *out)
{
    if (aw_buf_reserve(out, strlen(prefix) + 2 + tool_len))
        return AW_ENOMEM;
    for (const char *p = prefix; *p; p++)
        aw_buf_putc(out, name_char(*p) ? *p : '_');
    aw_buf_append(out, "__", 2);
    for (size_t i = 0; i < tool_len; i++)
        aw_buf_putc(out, name_char(tool[i]) ? tool[i] : '_');
    return 0;
}

mcp_toolset *mcp_toolset_new(const aw_allocator *alloc)
{
    mcp_toolset *set = aw_malloc(alloc, sizeof *set);
    if (!set)
        return NULL;
    memset(set, 0, sizeof *set);
    set->alloc = alloc;
    if (!(set->doc = aw_json_doc_new(alloc))) {
        aw_free(alloc, set);
        return NULL;
    }
    return set;
}

void mcp_toolset_free(const aw_allocator *alloc, mcp_toolset *set)
{
    while (set) {
        mcp_toolset *older = set->older;
        aw_json_doc_free(set->doc);
        aw_free(alloc, set->tools);
        aw_free(alloc, set);
        set = older;
    }
}

static bool text_eq(aw_text a, aw_text b) { return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0; }

bool mcp_toolset_equal(const mcp_toolset *a, const mcp_toolset *b)
{
    if (a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++) {
        const mcp_tool *x = &a->tools[i], *y = &b->tools[i];
        if (!text_eq(x->mcp_name, y->mcp_name) || !text_eq(x->def.description, y->def.description) ||
            !aw_json_equal(x->def.schema, y->def.schema))
            return false;
    }
    return true;
}

static void warnf(mcp_warn_fn warn, void *ctx, const char *fmt, const char *name, size_t len)
{
    if (!warn)
        return;
    char msg[400];
    snprintf(msg, sizeof msg, fmt, (int)(len > 160 ? 160 : len), name);
    warn(ctx, msg);
}

static aw_text new_text(aw_json_doc *doc, const char *p, size_t n)
{
    aw_json_value *v = aw_json_new_string(doc, p, n);
    return v ? (aw_text){v->u.str.ptr, v->u.str.len} : (aw_text){NULL, 0};
}

static int add_tool(mcp_toolset *set, const char *prefix, const aw_json_value *t, mcp_warn_fn warn, void *ctx)
{
    const aw_allocator *alloc = set->alloc;
    const aw_json_value *name = aw_json_get(t, "name");
    if (!aw_json_is_string(name) || name->u.str.len == 0) {
        if (warn)
            warn(ctx, "a tool without a name is left out");
        return 0;
    }
    const char *nm = name->u.str.ptr;
    size_t nlen = name->u.str.len;
    const aw_json_value *schema = aw_json_get(t, "inputSchema");
    if (schema && !aw_json_is_object(schema) && !aw_json_is_bool(schema)) {
        warnf(warn, ctx, "tool '%.*s' is left out: its inputSchema is not a JSON Schema", nm, nlen);
        return 0;
    }
    aw_buf model;
    aw_buf_init(&model, alloc);
    if (mcp_model_name(prefix, nm, nlen, &model)) {
        aw_buf_free(&model);
        return AW_ENOMEM;
    }
    if (model.len > MODEL_NAME_MAX) {
        warnf(warn, ctx, "tool '%.*s' is left out: its name for the model would be over 128 characters", nm, nlen);
        aw_buf_free(&model);
        return 0;
    }
    for (size_t i = 0; i < set->count; i++)
        if (set->tools[i].def.name.len == model.len && !memcmp(set->tools[i].def.name.ptr, model.data, model.len)) {
            warnf(warn, ctx, "tool '%.*s' is left out: another tool of this server has the same name for the model",
                  nm, nlen);
            aw_buf_free(&model);
            return 0;
        }
    if (set->count == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 16;
        mcp_tool *tools = aw_realloc(alloc, set->tools, cap * sizeof *tools);
        if (!tools) {
            aw_buf_free(&model);
            return AW_ENOMEM;
        }
        set->tools = tools;
        set->cap = cap;
    }
    mcp_tool *tool = &set->tools[set->count];
    memset(tool, 0, sizeof *tool);
    tool->def.name = new_text(set->doc, model.data, model.len);
    aw_buf_free(&model);
    tool->mcp_name = new_text(set->doc, nm, nlen);
    const aw_json_value *desc = aw_json_get(t, "description");
    if (!aw_json_is_string(desc))
        desc = aw_json_get(t, "title");
    tool->def.description = aw_json_is_string(desc) ? new_text(set->doc, desc->u.str.ptr, desc->u.str.len)
                                                    : new_text(set->doc, "", 0);
    aw_json_value *sv = NULL;
    if (schema) {
        sv = aw_json_copy(set->doc, schema);
    } else if ((sv = aw_json_new_object(set->doc))) {
        if (aw_json_object_set_string(set->doc, sv, "type", "object", 6))
            sv = NULL;
    }
    tool->def.schema = sv;
    if (!tool->def.name.ptr || !tool->mcp_name.ptr || !tool->def.description.ptr || !sv)
        return AW_ENOMEM;
    set->count++;
    return 0;
}

int mcp_toolset_add_page(mcp_toolset *set, const char *prefix, const aw_json_value *tools, size_t max_tools,
                         mcp_warn_fn warn, void *warn_ctx)
{
    size_t n = aw_json_count(tools);
    for (size_t i = 0; i < n; i++) {
        const aw_json_value *t = aw_json_at(tools, i);
        if (!aw_json_is_object(t))
            continue;
        if (set->count >= max_tools)
            return AW_ELIMIT;
        int rc = add_tool(set, prefix, t, warn, warn_ctx);
        if (rc)
            return rc;
    }
    return 0;
}
