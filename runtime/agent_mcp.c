/* An agent file's mcpServers, added to a toolbox through the MCP client
 * (mcp.h), or checked by it without starting anything. */
#include "agentwire/agentfile.h"
#include "agentwire/mcp.h"
#include "internal/agent_impl.h"
#include "internal/rt_util.h"

int aw_agent_add_mcp(aw_toolbox *box, aw_loop *l, const aw_agent_def *def, const char *stderr_log, aw_error *err)
{
    aw_error_clear(err);
    if (!def->mcp_count)
        return 0;
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
