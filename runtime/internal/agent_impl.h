/* What the sub-agent tool source (tools_agent.c) uses besides the public
 * API. Not installed. */
#ifndef AW_AGENT_IMPL_H
#define AW_AGENT_IMPL_H

#include "agentwire/agentfile.h"

/* A tool source offering the tools of another toolbox (the calling
 * agent's: what a sub-agent inherits), except those whose name starts
 * with exclude_prefix (that agent's own sub-agents). The list is taken
 * when the source starts; calls go through `from`, which must outlive the
 * source. */
aw_tool_source *aw__inherited_tools_new(aw_toolbox *from, const char *exclude_prefix, const aw_allocator *alloc,
                                        aw_error *err);

/* Whether the MCP client takes def's i-th server configuration, checked
 * by adding its servers to a toolbox that never starts: 0, or an error (err
 * says which server and why). */
int aw__agent_mcp_check(const aw_agent_def *def, size_t i, const aw_allocator *alloc, aw_error *err);

#endif
