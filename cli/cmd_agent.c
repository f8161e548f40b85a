/* agentwire agent check | show: agent files (agentwire/agentfile.h)
 * checked or shown as read, without running anything. */
#include <string.h>

#include "cli_agent_opts.h"

static const char agent_help[] =
    "Usage: agentwire agent COMMAND [options] FILE\n"
    "\n"
    "Agent files: Markdown with YAML frontmatter, the body being the system\n"
    "prompt (Claude Code's subagent files run as they are). Run one with\n"
    "'agentwire run --agent FILE TASK'.\n"
    "\n"
    "Commands:\n"
    "  check [--max-depth N] FILE\n"
    "        check the file and every sub-agent file below it: keys, types,\n"
    "        models, referenced files, MCP servers' configuration, cycles and\n"
    "        depth. Every problem goes to stderr as FILE:LINE:COL: message\n"
    "        (warnings too); exit 1 when one is an error\n"
    "  show FILE\n"
    "        what the file says, as JSON (paths resolved, Claude Code's tool\n"
    "        names translated)\n"
    "\n"
    "Keys: name, description, model, fallback, tools, mcpServers, agents,\n"
    "transport, context, maxTurns, maxToolCallsPerTurn, toolTimeout, format,\n"
    "schema, inputSchema, contract, temperature, maxTokens. Other keys (Claude\n"
    "Code's color, permissionMode, ...) are listed once as a warning.\n"
    "\n"
    "model: a provider (openai:MODEL, claude-cli, replay:FILE, ...), inherit\n"
    "(the calling agent's, or --model), or a Claude model: sonnet, opus, haiku\n"
    "or claude-ID run as claude-cli:NAME with --model claude-cli, as\n"
    "anthropic:ID with --model anthropic:... or no --model (sonnet is\n"
    "claude-sonnet-4-6, opus claude-opus-4-6, haiku claude-haiku-4-5, or\n"
    "$ANTHROPIC_DEFAULT_SONNET_MODEL, ..._OPUS_..., ..._HAIKU_...), and as\n"
    "the --model given otherwise.\n"
    "\n"
    "  -h, --help  this text\n";

typedef struct check_state {
    size_t errors, warnings;
} check_state;

static void print_problem(void *ctx, const aw_agent_problem *p)
{
    check_state *s = ctx;
    const char *tag = p->severity == AW_AGENT_WARNING ? "warning: " : "";
    if (p->severity == AW_AGENT_WARNING)
        s->warnings++;
    else
        s->errors++;
    if (p->line)
        fprintf(stderr, "%s:%zu:%zu: %s%s\n", p->file, p->line, p->column, tag, p->message);
    else
        fprintf(stderr, "%s: %s%s\n", p->file, tag, p->message);
}

static int agent_check(cli_args *a)
{
    long depth = 0;
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        const char *v;
        if (cli_is_help(opt)) {
            fputs(agent_help, stdout);
            return CLI_OK;
        } else if (!strcmp(opt, "--max-depth")) {
            if (!(v = cli_opt_value(a, opt)) || (depth = cli_opt_long(opt, v, 1, 32)) < 0)
                return CLI_USAGE;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a))
        return CLI_USAGE;
    if (!a->file || !strcmp(a->file, "-"))
        return cli_usage_error(a, "an agent file is needed (its relative paths start at its directory)");
    check_state s = {0, 0};
    aw_error err;
    int rc = aw_agent_check(a->file, (unsigned)depth, NULL, print_problem, &s, &err);
    if (rc == AW_ENOMEM) {
        fprintf(stderr, "agentwire agent check: out of memory\n");
        return CLI_REJECTED;
    }
    if (rc)
        return CLI_REJECTED;
    printf("%s: ok%s%zu warning%s\n", a->file, s.warnings ? ", " : "", s.warnings, s.warnings == 1 ? "" : "s");
    return CLI_OK;
}

/* ---- show ---------------------------------------------------------------------------- */

static int set_strings(aw_json_doc *d, aw_json_value *o, const char *key, const char *const *v, size_t n)
{
    aw_json_value *arr = aw_json_new_array(d);
    for (size_t i = 0; arr && i < n; i++) {
        aw_json_value *s = aw_json_new_string(d, v[i], strlen(v[i]));
        if (!s || aw_json_array_push(d, arr, s))
            return AW_ENOMEM;
    }
    return !arr || aw_json_object_set(d, o, key, strlen(key), arr);
}

static int set_opt_string(aw_json_doc *d, aw_json_value *o, const char *key, const char *v)
{
    return v ? aw_json_object_set_string(d, o, key, v, strlen(v)) : 0;
}

static aw_json_value *def_json(aw_json_doc *d, const aw_agent_def *def)
{
    static const char *const transports[] = {"native", "xml", "xml-final"};
    aw_json_value *o = aw_json_new_object(d);
    int rc = !o || set_opt_string(d, o, "name", def->name) || set_opt_string(d, o, "tool", def->tool_name) ||
             set_opt_string(d, o, "description", def->description) || set_opt_string(d, o, "model", def->model) ||
             set_strings(d, o, "fallback", def->fallbacks, def->fallback_count) ||
             (def->has_tools && set_strings(d, o, "tools", def->tools, def->tool_count)) ||
             set_strings(d, o, "agents", def->agents, def->agent_count) ||
             (def->has_transport && set_opt_string(d, o, "transport", transports[def->transport])) ||
             (def->has_context &&
              set_opt_string(d, o, "context", def->context == AW_CONTEXT_XML ? "xml" : "messages")) ||
             (def->max_turns && aw_json_object_set_int(d, o, "maxTurns", def->max_turns)) ||
             (def->max_calls_per_turn && aw_json_object_set_int(d, o, "maxToolCallsPerTurn", def->max_calls_per_turn)) ||
             (def->tool_timeout_ms && aw_json_object_set_int(d, o, "toolTimeout", def->tool_timeout_ms)) ||
             (def->has_format && set_opt_string(d, o, "format", aw_report_format_name(def->format))) ||
             set_opt_string(d, o, "contract", def->contract) ||
             (def->has_temperature && aw_json_object_set_number(d, o, "temperature", def->temperature)) ||
             (def->max_tokens && aw_json_object_set_int(d, o, "maxTokens", def->max_tokens));
    aw_json_value *mcp = aw_json_new_array(d);
    for (size_t i = 0; !rc && mcp && i < def->mcp_count; i++) {
        aw_json_value *m = aw_json_new_object(d), *c = aw_json_copy(d, def->mcp[i].config);
        rc = !m || !c || aw_json_object_set(d, m, "config", 6, c) || set_opt_string(d, m, "base_dir", def->mcp[i].base_dir) ||
             set_opt_string(d, m, "origin", def->mcp[i].origin) || aw_json_array_push(d, mcp, m);
    }
    rc = rc || !mcp || aw_json_object_set(d, o, "mcpServers", 10, mcp);
    if (!rc && def->schema) {
        aw_json_value *s = aw_json_copy(d, def->schema);
        rc = !s || aw_json_object_set(d, o, "schema", 6, s);
    }
    if (!rc && def->input_schema) {
        aw_json_value *s = aw_json_copy(d, def->input_schema);
        rc = !s || aw_json_object_set(d, o, "inputSchema", 11, s);
    }
    rc = rc || set_opt_string(d, o, "system", def->system_prompt);
    return rc ? NULL : o;
}

static int agent_show(cli_args *a)
{
    int rc = cli_no_options(a, agent_help);
    if (rc >= 0)
        return rc;
    if (!a->file || !strcmp(a->file, "-"))
        return cli_usage_error(a, "an agent file is needed (its relative paths start at its directory)");
    aw_agent_file *f = NULL;
    aw_error err;
    rc = aw_agent_file_read(a->file, NULL, &f, &err);
    if (!f) {
        fprintf(stderr, "agentwire agent show: %s\n", err.message);
        return CLI_REJECTED;
    }
    check_state s = {0, 0};
    size_t n = 0;
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    for (size_t i = 0; i < n; i++)
        print_problem(&s, &p[i]);
    int status = CLI_REJECTED;
    if (!rc) {
        aw_json_doc *d = aw_json_doc_new(NULL);
        aw_json_value *v = d ? def_json(d, aw_agent_file_def(f)) : NULL;
        if (v)
            status = cli_print_json(v);
        else
            fprintf(stderr, "agentwire agent show: out of memory\n");
        aw_json_doc_free(d);
    }
    aw_agent_file_free(f);
    return status;
}

int cli_agent(int argc, char **argv)
{
    static const cli_command cmds[] = {{"check", agent_check}, {"show", agent_show}};
    return cli_dispatch("agent", agent_help, cmds, sizeof cmds / sizeof *cmds, argc, argv);
}
