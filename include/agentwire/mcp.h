/* agentwire runtime — tools from MCP servers (the Model Context Protocol,
 * stdio transport): each server is a tool source whose tools the model
 * sees as SERVER__TOOL.
 *
 * The configuration is the common one agent products read:
 *
 *   {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
 *                          "env": {"KEY": "value"}, "cwd": "/srv"}}}
 *
 * Unknown keys are ignored; a server of another transport (a "url", a
 * "type" other than "stdio") is reported as unsupported by name. */
#ifndef AGENTWIRE_MCP_H
#define AGENTWIRE_MCP_H

#include <stdint.h>

#include "error.h"
#include "json.h"
#include "loop.h"
#include "tools.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_mcp_options {
    int64_t init_timeout_ms;  /* initialize + tools/list; 0: 30 s */
    int64_t grace_ms;         /* shutdown: stdin closed, then SIGTERM, then SIGKILL after this; 0: 2 s */
    size_t max_line;          /* the longest message accepted from a server; 0: 16 MiB */
    const char *stderr_log;   /* where servers' stderr goes (appended); NULL: the toolbox log */
    const aw_allocator *alloc;
} aw_mcp_options;

/* One server as a tool source, from its configuration entry
 * ({"command", "args", "env", "cwd"}). base_dir resolves a relative cwd.
 * Nothing starts until the toolbox starts it. */
aw_tool_source *aw_mcp_source_new(aw_loop *l, const char *name, const aw_json_value *server, const char *base_dir,
                                  const aw_mcp_options *opts, aw_error *err);

/* Every server of a configuration ({"mcpServers": {...}}) added to box.
 * Errors name the server ("mcpServers.fs: 'command' must be a string"). */
int aw_mcp_add_config(aw_toolbox *box, aw_loop *l, const aw_json_value *config, const char *base_dir,
                      const aw_mcp_options *opts, aw_error *err);

/* "NAME=COMMAND ARGS..." (the --mcp option) as a configuration entry:
 * split like a shell would split words (quotes, backslashes), no
 * expansion. *out gets {"mcpServers": {NAME: {"command", "args"}}}. */
int aw_mcp_parse_spec(const char *spec, const aw_allocator *alloc, aw_json_doc **out, aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
