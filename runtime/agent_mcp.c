/* An agent file's mcpServers, added to a toolbox through the MCP client
 * (mcp.h). The client is built on its own branch; until it is part of
 * the tree (CMake defines AW_HAVE_MCP when runtime/mcp_config.c exists),
 * the reference is weak and a file naming servers is told the client is
 * missing, so everything else of agent files works and links. */
#include "agentwire/agentfile.h"
#include "agentwire/mcp.h"
#include "internal/agent_impl.h"
#include "internal/rt_util.h"

#ifndef AW_HAVE_MCP
#pragma weak aw_mcp_add_config
#endif

/* Whether this build has the MCP client. */
static bool have_mcp(void)
{
#ifdef AW_HAVE_MCP
    return true;
#else
    return aw_mcp_add_config != NULL;
#endif
}

int aw_agent_add_mcp(aw_toolbox *box, aw_loop *l, const aw_agent_def *def, const char *stderr_log, aw_error *err)
{
    aw_error_clear(err);
    if (!def->mcp_count)
        return 0;
    if (!have_mcp())
        return aw_rt_error(err, AW_EINVAL, "%s: mcpServers: this build of agentwire has no MCP client", def->path);
    aw_mcp_options opts = {.stderr_log = stderr_log};
    for (size_t i = 0; i < def->mcp_count; i++) {
        aw_error e;
        int rc = aw_mcp_add_config(box, l, def->mcp[i].config, def->mcp[i].base_dir, &opts, &e);
        if (rc)
            return aw_rt_error(err, rc, "%s:%zu:%zu: mcpServers (%s): %s", def->path, def->mcp[i].line,
                               def->mcp[i].column, def->mcp[i].origin, e.message);
    }
    return 0;
}

int aw__agent_mcp_check(const aw_agent_def *def, size_t i, const aw_allocator *alloc, aw_error *err)
{
    aw_error_clear(err);
    if (!have_mcp())
        return AW_ESTOP;
    aw_loop *l = aw_loop_new(alloc, err);
    if (!l)
        return err ? err->code : AW_ENOMEM;
    aw_toolbox *box = aw_toolbox_new(l, alloc);
    int rc = box ? 0 : aw_rt_error(err, AW_ENOMEM, "out of memory");
    /* added but never started: the client reads each entry as it would
     * to run it, and nothing runs */
    aw_mcp_options opts = {.alloc = alloc};
    if (!rc)
        rc = aw_mcp_add_config(box, l, def->mcp[i].config, def->mcp[i].base_dir, &opts, err);
    aw_toolbox_free(box);
    aw_loop_free(l);
    return rc;
}
