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
 * "type" other than "stdio") is reported as unsupported by name when its
 * source starts, and the others go on; "disabled": true leaves a server out.
 *
 * The client speaks the protocol's stdio transport: JSON-RPC 2.0, one
 * message a line. It offers AW_MCP_PROTOCOL_VERSION and accepts the older
 * versions a server may answer with (2025-06-18, 2025-03-26, 2024-11-05).
 * A call's result reads for the model as its text parts; images, audio and
 * resources are described ("[image: image/png, 34 KB]"), never pasted as
 * base64; structuredContent is kept in aw_tool_result.structured (and
 * shown as JSON when there is no text); isError and JSON-RPC errors are
 * failed calls. A server that exits during a call fails that call and is
 * restarted once; its stderr goes to the log, never to the model. */
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

/* The protocol version offered in initialize. */
#define AW_MCP_PROTOCOL_VERSION "2025-11-25"

typedef struct aw_mcp_options {
    int64_t init_timeout_ms;  /* initialize + tools/list; 0: 30 s */
    int64_t grace_ms;         /* shutdown: stdin closed, SIGTERM after this long, SIGKILL after as long
                                 again (the source's destroy waits that long at most); 0: 2 s */
    size_t max_line;          /* the longest message accepted from a server; 0: 16 MiB */
    const char *stderr_log;   /* where servers' stderr goes (appended, each line after "NAME: ");
                                 NULL: the toolbox log, at AW_LOG_INFO */
    const aw_allocator *alloc;
} aw_mcp_options;

/* One server as a tool source, from its configuration entry
 * ({"command", "args", "env", "cwd"}). base_dir resolves a relative cwd.
 * Nothing starts until the toolbox starts it. Its tools are named
 * NAME__TOOL, with characters outside [A-Za-z0-9_-] made '_'. Errors name
 * the entry ("mcpServers.fs: 'command' must be a non-empty string"). */
aw_tool_source *aw_mcp_source_new(aw_loop *l, const char *name, const aw_json_value *server, const char *base_dir,
                                  const aw_mcp_options *opts, aw_error *err);

/* Every server of a configuration ({"mcpServers": {...}}) added to box,
 * in order. Errors name the server ("mcpServers.fs: 'args' must be an
 * array of strings"); servers added before the error stay in box. */
int aw_mcp_add_config(aw_toolbox *box, aw_loop *l, const aw_json_value *config, const char *base_dir,
                      const aw_mcp_options *opts, aw_error *err);

/* The servers object of a configuration: its "mcpServers" (or, as VS Code
 * writes it, "servers"); NULL and err when there is none. */
const aw_json_value *aw_mcp_config_servers(const aw_json_value *config, aw_error *err);

/* "NAME=COMMAND ARGS..." (the --mcp option) as a configuration entry:
 * split like a shell would split words (quotes, backslashes), no
 * expansion. *out gets {"mcpServers": {NAME: {"command", "args"}}}. */
int aw_mcp_parse_spec(const char *spec, const aw_allocator *alloc, aw_json_doc **out, aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
