/* `agentwire mcp`: MCP servers as a run would see them, for checking a
 * configuration: `list` starts every server and prints its tools, `call`
 * calls one tool and prints its result. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/mcp.h"
#include "agentwire/proc.h"
#include "cli.h"
#include "cli_mcp_opts.h"

static const char mcp_help[] =
    "Usage: agentwire mcp COMMAND [options]\n"
    "\n"
    "Tools from MCP servers (the Model Context Protocol over stdio), as a run\n"
    "offers them: named SERVER__TOOL, with their input schemas.\n"
    "\n"
    "Commands:\n"
    "  list   start every server and print its tools as JSON lines\n"
    "  call   call one tool and print its result\n"
    "\n"
    "Run 'agentwire mcp COMMAND --help' for its options.\n";

static const char list_help[] =
    "Usage: agentwire mcp list --mcp-config FILE [--mcp SPEC] [options]\n"
    "\n"
    "Start every server configured and print one JSON line per tool:\n"
    "  {\"server\", \"name\" (as the model sees it), \"description\", \"input_schema\"}\n"
    "and one per server that cannot be used: {\"server\", \"error\"} (also on stderr).\n"
    "Exit status: 0 every server answered, 1 some did not, 2 usage error.\n"
    "\n"
    "Options:\n"
    "  --init-timeout T          how long a server may take to start (30s)\n"
    "  --verbose                 also the servers' stderr and log messages\n";

static const char call_help[] =
    "Usage: agentwire mcp call --mcp-config FILE [options] SERVER TOOL [ARGS-JSON]\n"
    "\n"
    "Call one tool (TOOL as the server names it, or SERVER__TOOL) with its\n"
    "arguments (a JSON object, default {}) and print what the model would read\n"
    "on stdout. Exit status: 0 the call succeeded, 1 it failed (the reason on\n"
    "stderr), 2 usage error.\n"
    "\n"
    "Options:\n"
    "  --json                    print the whole result: {\"ok\", \"output\",\n"
    "                            \"structured\"}\n"
    "  --timeout T               the call's time limit (60s)\n"
    "  --init-timeout T          how long the server may take to start (30s)\n"
    "  --verbose                 also the server's stderr and log messages\n";

typedef struct mcp_cmd {
    cli_mcp_opts mcp;
    bool json, verbose;
    int64_t timeout_ms, init_timeout_ms;
    const char *pos[3];
    int npos;
} mcp_cmd;

/* "500ms", "30s", "2m" or milliseconds; -1 when malformed. */
static int64_t duration(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    double scale = !strcmp(end, "s") ? 1000 : !strcmp(end, "m") ? 60000 : (!*end || !strcmp(end, "ms")) ? 1 : -1;
    return scale < 0 ? -1 : (int64_t)(v * scale + 0.5);
}

/* The options of list and call; positionals kept in order (cli_args
 * keeps only the last). -1 to go on, else the exit status. */
static int parse(cli_args *a, mcp_cmd *c, const char *help, int max_pos)
{
    memset(c, 0, sizeof *c);
    c->timeout_ms = 60000;
    for (a->i = 0; a->i < a->argc;) {
        const char *arg = a->argv[a->i];
        if (arg[0] != '-' || !arg[1]) {
            if (c->npos == max_pos)
                return cli_usage_error(a, "unexpected argument '%s'", arg);
            c->pos[c->npos++] = arg;
            a->i++;
            continue;
        }
        const char *opt = cli_next_opt(a);
        if (!opt)
            break;
        int taken = cli_mcp_option(a, opt, &c->mcp);
        if (taken < 0)
            return CLI_USAGE;
        if (taken)
            continue;
        if (cli_is_help(opt)) {
            fputs(help, stdout);
            fputs(cli_mcp_help, stdout);
            return CLI_OK;
        } else if (!strcmp(opt, "--json")) {
            c->json = true;
        } else if (!strcmp(opt, "--verbose")) {
            c->verbose = true;
        } else if (!strcmp(opt, "--timeout") || !strcmp(opt, "--init-timeout")) {
            const char *v = cli_opt_value(a, opt);
            if (!v)
                return CLI_USAGE;
            int64_t ms = duration(v);
            if (ms <= 0)
                return cli_usage_error(a, "option '%s' wants a duration such as 500ms, 30s or 2m, not '%s'", opt, v);
            *(!strcmp(opt, "--timeout") ? &c->timeout_ms : &c->init_timeout_ms) = ms;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    /* "--" ends the options: what follows was taken as FILE by cli_next_opt */
    if (a->nfiles && c->npos < max_pos)
        c->pos[c->npos++] = a->file;
    if (!c->mcp.nconfigs && !c->mcp.nspecs)
        return cli_usage_error(a, "no MCP server given (--mcp-config FILE or --mcp 'NAME=COMMAND ARGS')");
    return -1;
}

static void log_to_stderr(void *ctx, int level, const char *source, const char *msg)
{
    const mcp_cmd *c = ctx;
    if (level >= AW_LOG_WARN || (c->verbose && level >= AW_LOG_INFO))
        fprintf(stderr, "agentwire mcp: %s: %s%s\n", source, level >= AW_LOG_ERROR ? "error: " : "", msg);
}

/* ---- list ---------------------------------------------------------------------- */

typedef struct listed {
    aw_tool_source *src;
    const char *server;
    bool ready;
    char error[AW_ERROR_MESSAGE_MAX];
} listed;

static void listed_ready(void *ctx, aw_tool_source *s, const aw_error *err)
{
    (void)s;
    listed *l = ctx;
    l->ready = true;
    if (err && err->code)
        snprintf(l->error, sizeof l->error, "%s", err->message);
}

static int print_tool(aw_json_doc *d, const char *server, const aw_tool_def *t)
{
    aw_json_value *o = aw_json_new_object(d);
    if (!o || aw_json_object_set_string(d, o, "server", server, strlen(server)) ||
        aw_json_object_set_string(d, o, "name", t->name.ptr, t->name.len) ||
        aw_json_object_set_string(d, o, "description", t->description.ptr, t->description.len) ||
        (t->schema && aw_json_object_set(d, o, "input_schema", 12, t->schema)))
        return CLI_REJECTED;
    return cli_print_json(o);
}

static int cmd_list(cli_args *a)
{
    mcp_cmd c;
    int rc = parse(a, &c, list_help, 0);
    if (rc >= 0)
        return rc;
    cli_mcp_configs cfg;
    if ((rc = cli_mcp_load(&c.mcp, "mcp list", &cfg)) != CLI_OK)
        return rc;
    aw_loop *loop = aw_loop_new(NULL, NULL);
    listed servers[2 * CLI_MCP_MAX * 8];
    size_t n = 0;
    aw_mcp_options opts = {.stderr_log = c.mcp.stderr_log, .init_timeout_ms = c.init_timeout_ms};
    rc = loop ? CLI_OK : CLI_REJECTED;
    for (size_t i = 0; i < cfg.count && rc == CLI_OK; i++) {
        const aw_json_value *all = aw_mcp_config_servers(aw_json_doc_root(cfg.docs[i]), NULL);
        for (size_t k = 0; k < aw_json_count(all) && rc == CLI_OK; k++) {
            const aw_json_member *m = &all->u.obj.members[k];
            const aw_json_value *disabled = aw_json_get(&m->value, "disabled");
            if (aw_json_is_bool(disabled) && disabled->u.b)
                continue;
            if (n == sizeof servers / sizeof *servers) {
                fprintf(stderr, "agentwire mcp list: too many servers\n");
                rc = CLI_REJECTED;
                break;
            }
            aw_error err;
            listed *l = &servers[n];
            memset(l, 0, sizeof *l);
            l->server = m->key;
            if (!(l->src = aw_mcp_source_new(loop, m->key, &m->value, cfg.dirs[i], &opts, &err))) {
                fprintf(stderr, "agentwire mcp list: %s: %s\n", cfg.names[i], err.message);
                rc = CLI_REJECTED;
                break;
            }
            l->src->log = log_to_stderr;
            l->src->log_ctx = &c;
            n++;
        }
    }
    for (size_t i = 0; i < n && rc == CLI_OK; i++)
        if (servers[i].src->ops->start(servers[i].src, listed_ready, &servers[i]))
            rc = CLI_REJECTED;
    for (size_t i = 0; i < n && rc == CLI_OK; i++)
        while (!servers[i].ready)
            if (aw_loop_once(loop, 100))
                break;
    bool failed = false;
    aw_json_doc *d = aw_json_doc_new(NULL);
    for (size_t i = 0; i < n && rc == CLI_OK; i++) {
        listed *l = &servers[i];
        if (l->error[0]) {
            failed = true;
            fprintf(stderr, "agentwire mcp list: server '%s': %s\n", l->server, l->error);
            aw_json_value *o = aw_json_new_object(d);
            if (!o || aw_json_object_set_string(d, o, "server", l->server, strlen(l->server)) ||
                aw_json_object_set_string(d, o, "error", l->error, strlen(l->error)) || cli_print_json(o))
                rc = CLI_REJECTED;
            continue;
        }
        for (size_t k = 0; k < l->src->ops->count(l->src) && rc == CLI_OK; k++)
            rc = print_tool(d, l->server, l->src->ops->def(l->src, k));
    }
    aw_json_doc_free(d);
    for (size_t i = 0; i < n; i++)
        servers[i].src->ops->destroy(servers[i].src);
    aw_loop_free(loop);
    cli_mcp_configs_free(&cfg);
    return rc == CLI_OK && failed ? CLI_REJECTED : rc;
}

/* ---- call ---------------------------------------------------------------------- */

typedef struct called {
    bool ready, done, ok, timed_out;
    aw_buf output;
    aw_buf structured;
} called;

static void box_ready(void *ctx) { ((called *)ctx)->ready = true; }

static void call_done(void *ctx, const aw_tool_result *res)
{
    called *c = ctx;
    c->done = true;
    c->ok = res->ok;
    c->timed_out = res->timed_out;
    aw_buf_append(&c->output, res->output.ptr, res->output.len);
    if (res->structured)
        aw_json_write(res->structured, NULL, &c->structured, NULL);
}

static int print_result(const called *r, bool json)
{
    if (!json) {
        if (!r->ok) {
            fprintf(stderr, "agentwire mcp call: %.*s\n", (int)r->output.len, r->output.data ? r->output.data : "");
            return CLI_REJECTED;
        }
        if (cli_write_stdout(r->output.data ? r->output.data : "", r->output.len) ||
            ((!r->output.len || r->output.data[r->output.len - 1] != '\n') && cli_write_stdout("\n", 1)))
            return CLI_REJECTED;
        return CLI_OK;
    }
    aw_buf b;
    aw_buf_init(&b, NULL);
    int rc = aw_buf_printf(&b, "{\"ok\":%s,\"output\":", r->ok ? "true" : "false") ||
             aw_json_write_string(&b, r->output.data ? r->output.data : "", r->output.len) ||
             (r->timed_out && aw_buf_append_str(&b, ",\"timed_out\":true")) ||
             (r->structured.len && (aw_buf_append_str(&b, ",\"structured\":") ||
                                    aw_buf_append(&b, r->structured.data, r->structured.len))) ||
             aw_buf_append_str(&b, "}\n");
    if (!rc)
        rc = cli_write_stdout(b.data, b.len);
    aw_buf_free(&b);
    return rc ? CLI_REJECTED : r->ok ? CLI_OK : CLI_REJECTED;
}

static int cmd_call(cli_args *a)
{
    mcp_cmd c;
    int rc = parse(a, &c, call_help, 3);
    if (rc >= 0)
        return rc;
    if (c.npos < 2)
        return cli_usage_error(a, "give SERVER and TOOL (and the arguments as JSON)");
    const char *server = c.pos[0], *tool = c.pos[1], *args_text = c.npos > 2 ? c.pos[2] : "{}";
    aw_json_doc *args = NULL;
    aw_error err;
    if (aw_json_parse(args_text, strlen(args_text), NULL, &args, &err) || !aw_json_is_object(aw_json_doc_root(args))) {
        aw_json_doc_free(args);
        return cli_usage_error(a, "the arguments must be a JSON object, not '%.80s'", args_text);
    }
    cli_mcp_configs cfg;
    if ((rc = cli_mcp_load(&c.mcp, "mcp call", &cfg)) != CLI_OK) {
        aw_json_doc_free(args);
        return rc;
    }
    /* the named server only: the others need not start */
    const aw_json_value *entry = NULL;
    const char *dir = NULL;
    for (size_t i = 0; i < cfg.count && !entry; i++) {
        entry = aw_json_get(aw_mcp_config_servers(aw_json_doc_root(cfg.docs[i]), NULL), server);
        dir = cfg.dirs[i];
    }
    called r = {0};
    aw_buf_init(&r.output, NULL);
    aw_buf_init(&r.structured, NULL);
    aw_loop *loop = aw_loop_new(NULL, NULL);
    aw_toolbox *box = loop ? aw_toolbox_new(loop, NULL) : NULL;
    aw_mcp_options opts = {.stderr_log = c.mcp.stderr_log, .init_timeout_ms = c.init_timeout_ms};
    aw_tool_source *src = NULL;
    aw_buf name;
    aw_buf_init(&name, NULL);
    rc = CLI_REJECTED;
    if (!entry) {
        fprintf(stderr, "agentwire mcp call: no server named '%s' is configured\n", server);
        goto out;
    }
    if (!box || !(src = aw_mcp_source_new(loop, server, entry, dir, &opts, &err))) {
        fprintf(stderr, "agentwire mcp call: %s\n", box ? err.message : "out of memory");
        goto out;
    }
    aw_toolbox_set_log(box, log_to_stderr, &c);
    if (aw_toolbox_add(box, src) || aw_toolbox_start(box, box_ready, &r))
        goto out;
    while (!r.ready)
        if (aw_loop_once(loop, 100))
            goto out;
    size_t ndefs;
    aw_toolbox_defs(box, &ndefs);
    if (!ndefs) {
        fprintf(stderr, "agentwire mcp call: server '%s' offers no tools\n", server);
        goto out;
    }
    /* TOOL as the server names it, or as the model sees it */
    size_t plen = strlen(server);
    if (strncmp(tool, server, plen) == 0 && tool[plen] == '_' && tool[plen + 1] == '_')
        aw_buf_append_str(&name, tool);
    else if (aw_buf_printf(&name, "%s__", server) || aw_buf_append_str(&name, tool))
        goto out;
    for (size_t i = 0; i < name.len; i++) /* the same characters as the source's names */
        if (!((name.data[i] >= 'a' && name.data[i] <= 'z') || (name.data[i] >= 'A' && name.data[i] <= 'Z') ||
              (name.data[i] >= '0' && name.data[i] <= '9') || name.data[i] == '-'))
            name.data[i] = '_';
    aw_tool_call *tc;
    if (aw_toolbox_call(box, (aw_text){name.data, name.len}, aw_json_doc_root(args), c.timeout_ms, NULL, call_done, &r,
                        &tc, &err)) {
        fprintf(stderr, "agentwire mcp call: %s\n", err.message);
        goto out;
    }
    while (!r.done)
        if (aw_loop_once(loop, 100))
            goto out;
    rc = print_result(&r, c.json);
out:
    aw_toolbox_free(box);
    aw_loop_free(loop);
    cli_mcp_configs_free(&cfg);
    aw_json_doc_free(args);
    aw_buf_free(&name);
    aw_buf_free(&r.output);
    aw_buf_free(&r.structured);
    return rc;
}

int cli_mcp(int argc, char **argv)
{
    static const cli_command cmds[] = {{"list", cmd_list}, {"call", cmd_call}};
    return cli_dispatch("mcp", mcp_help, cmds, sizeof cmds / sizeof *cmds, argc, argv);
}
