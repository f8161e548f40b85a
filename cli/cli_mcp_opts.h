/* The MCP options every command that runs tools takes (agentwire run,
 * agentwire mcp): --mcp-config FILE, --mcp 'NAME=COMMAND ARGS...',
 * --mcp-log FILE. Kept apart so a command adds them in a few lines. */
#ifndef AW_CLI_MCP_OPTS_H
#define AW_CLI_MCP_OPTS_H

#include <stddef.h>

#include "agentwire/mcp.h"
#include "cli.h"

#define CLI_MCP_MAX 32

typedef struct cli_mcp_opts {
    const char *configs[CLI_MCP_MAX];
    size_t nconfigs;
    const char *specs[CLI_MCP_MAX];
    size_t nspecs;
    const char *stderr_log;
} cli_mcp_opts;

/* The options' lines for a command's --help. */
extern const char cli_mcp_help[];

/* opt (just returned by cli_next_opt) if it is one of ours: 1 when taken
 * (with its value), 0 when not ours, -1 after a usage error. */
int cli_mcp_option(cli_args *a, const char *opt, cli_mcp_opts *o);

/* The configurations read: each --mcp-config file, then each --mcp spec
 * as a configuration of its own. */
typedef struct cli_mcp_configs {
    aw_json_doc *docs[2 * CLI_MCP_MAX];
    char *dirs[2 * CLI_MCP_MAX]; /* where a relative cwd starts */
    const char *names[2 * CLI_MCP_MAX]; /* for messages */
    size_t count;
} cli_mcp_configs;

/* CLI_OK, or CLI_REJECTED / CLI_USAGE after printing "agentwire CMD: ...". */
int cli_mcp_load(const cli_mcp_opts *o, const char *cmd, cli_mcp_configs *out);
void cli_mcp_configs_free(cli_mcp_configs *c);

/* Every server configured, added to *box (made when NULL and there are
 * servers): CLI_OK, or an exit status after a message. */
int cli_mcp_add_servers(const cli_mcp_opts *o, aw_loop *loop, aw_toolbox **box, const char *cmd);

#endif
