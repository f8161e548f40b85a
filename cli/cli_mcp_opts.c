/* --mcp-config, --mcp and --mcp-log: read, checked, and turned into MCP
 * tool sources in a toolbox (cli_mcp_opts.h). */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "cli_mcp_opts.h"

const char cli_mcp_help[] =
    "\n"
    "MCP servers (their tools are offered too):\n"
    "  --mcp-config FILE         MCP servers: {\"mcpServers\": {NAME: {command, args, env,\n"
    "                            cwd}}} (repeatable); tools are named NAME__TOOL\n"
    "  --mcp 'NAME=COMMAND ARGS' one MCP server (repeatable)\n"
    "  --mcp-log FILE            the servers' stderr (default: the log, with --verbose)\n";

int cli_mcp_option(cli_args *a, const char *opt, cli_mcp_opts *o)
{
    bool config = !strcmp(opt, "--mcp-config"), spec = !strcmp(opt, "--mcp"), log = !strcmp(opt, "--mcp-log");
    if (!config && !spec && !log)
        return 0;
    const char *v = cli_opt_value(a, opt);
    if (!v)
        return -1;
    if (log) {
        o->stderr_log = v;
        return 1;
    }
    size_t *n = config ? &o->nconfigs : &o->nspecs;
    if (*n == CLI_MCP_MAX) {
        cli_usage_error(a, "at most %d %s options", CLI_MCP_MAX, opt);
        return -1;
    }
    (config ? o->configs : o->specs)[(*n)++] = v;
    return 1;
}

void cli_mcp_configs_free(cli_mcp_configs *c)
{
    for (size_t i = 0; i < c->count; i++) {
        aw_json_doc_free(c->docs[i]);
        free(c->dirs[i]);
    }
    c->count = 0;
}

int cli_mcp_load(const cli_mcp_opts *o, const char *cmd, cli_mcp_configs *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < o->nconfigs; i++) {
        aw_json_doc *doc = NULL;
        if (cli_read_json(o->configs[i], NULL, &doc) != CLI_OK) {
            cli_mcp_configs_free(out);
            return CLI_REJECTED;
        }
        char *copy = strdup(o->configs[i]);
        out->docs[out->count] = doc;
        out->dirs[out->count] = copy ? strdup(dirname(copy)) : NULL;
        out->names[out->count++] = o->configs[i];
        free(copy);
        aw_error err;
        if (!aw_mcp_config_servers(aw_json_doc_root(doc), &err)) {
            fprintf(stderr, "agentwire %s: %s: %s\n", cmd, o->configs[i], err.message);
            cli_mcp_configs_free(out);
            return CLI_REJECTED;
        }
    }
    for (size_t i = 0; i < o->nspecs; i++) {
        aw_error err;
        if (aw_mcp_parse_spec(o->specs[i], NULL, &out->docs[out->count], &err)) {
            fprintf(stderr, "agentwire %s: %s\n", cmd, err.message);
            cli_mcp_configs_free(out);
            return CLI_USAGE;
        }
        out->names[out->count++] = "--mcp";
    }
    return CLI_OK;
}

int cli_mcp_add_servers(const cli_mcp_opts *o, aw_loop *loop, aw_toolbox **box, const char *cmd)
{
    if (!o->nconfigs && !o->nspecs)
        return CLI_OK;
    cli_mcp_configs c;
    int rc = cli_mcp_load(o, cmd, &c);
    if (rc != CLI_OK)
        return rc;
    if (!*box && !(*box = aw_toolbox_new(loop, NULL))) {
        cli_mcp_configs_free(&c);
        fprintf(stderr, "agentwire %s: out of memory\n", cmd);
        return CLI_REJECTED;
    }
    aw_mcp_options opts = {.stderr_log = o->stderr_log};
    for (size_t i = 0; i < c.count && rc == CLI_OK; i++) {
        aw_error err;
        if (aw_mcp_add_config(*box, loop, aw_json_doc_root(c.docs[i]), c.dirs[i], &opts, &err)) {
            fprintf(stderr, "agentwire %s: %s: %s\n", cmd, c.names[i], err.message);
            rc = CLI_REJECTED;
        }
    }
    cli_mcp_configs_free(&c);
    return rc;
}
