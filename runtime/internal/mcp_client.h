/* Between the MCP configuration reader (mcp_config.c) and the client
 * (mcp_client.c). Not installed. */
#ifndef AW_MCP_CLIENT_H
#define AW_MCP_CLIENT_H

#include "agentwire/mcp.h"

/* A source for server `name` running argv (with env entries "NAME=VALUE"
 * and cwd), all taken over (freed with the source, also on failure); or,
 * when unsupported is set, a source whose start fails saying so. */
aw_tool_source *aw__mcp_source_make(aw_loop *l, const char *name, const aw_mcp_options *opts, char **argv,
                                    char **env, char *cwd, char *unsupported, aw_error *err);

#endif
