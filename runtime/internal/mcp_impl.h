/* The parts of the MCP tool source shared by its files: the tool lists a
 * server offers (mcp_tools.c) and how a tools/call result reads for the
 * model (mcp_result.c). Not installed. */
#ifndef AW_MCP_IMPL_H
#define AW_MCP_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "agentwire/buf.h"
#include "agentwire/json.h"
#include "agentwire/transport.h"

/* Versions of the protocol this client speaks, the newest first (the one
 * offered in initialize). */
extern const char *const aw_mcp_versions[];
extern const size_t aw_mcp_version_count;

typedef struct mcp_tool {
    aw_tool_def def;  /* name: SERVER__TOOL, as the model sees it */
    aw_text mcp_name; /* the name tools/call wants */
} mcp_tool;

/* One tools/list answer (all its pages). Its strings and schemas live in
 * doc, so definitions handed out stay valid as long as the set does; a
 * replaced set is kept (older) until the source goes, because a run may
 * still hold copies of its definitions. */
typedef struct mcp_toolset {
    const aw_allocator *alloc;
    aw_json_doc *doc;
    mcp_tool *tools;
    size_t count, cap;
    struct mcp_toolset *older;
} mcp_toolset;

/* A warning about one tool left out (a bad name, a name used twice). */
typedef void (*mcp_warn_fn)(void *ctx, const char *msg);

mcp_toolset *mcp_toolset_new(const aw_allocator *alloc);
/* Add a page's "tools" array: each named prefix__name with characters
 * outside [A-Za-z0-9_-] made '_', its inputSchema copied ({"type":
 * "object"} when absent). Tools that cannot be offered are left out with a
 * warning. AW_ENOMEM, or AW_ELIMIT past max_tools. */
int mcp_toolset_add_page(mcp_toolset *set, const char *prefix, const aw_json_value *tools, size_t max_tools,
                         mcp_warn_fn warn, void *warn_ctx);
/* Same tools, descriptions and schemas in the same order. */
bool mcp_toolset_equal(const mcp_toolset *a, const mcp_toolset *b);
/* Free the set and every older one. */
void mcp_toolset_free(const aw_allocator *alloc, mcp_toolset *set);

/* The model's name of a server's tool: prefix__tool with characters outside
 * [A-Za-z0-9_-] made '_'. */
int mcp_model_name(const char *prefix, const char *tool, size_t tool_len, aw_buf *out);

/* A tools/call result as the model reads it, appended to out: text parts
 * joined by newlines, other parts described ("[image: image/png, 34 KB]"),
 * structuredContent as JSON when there is no text. *is_error: the result's
 * isError. *structured: its structuredContent (an object), or NULL. */
int mcp_result_text(const aw_json_value *result, aw_buf *out, bool *is_error, const aw_json_value **structured);

#endif
