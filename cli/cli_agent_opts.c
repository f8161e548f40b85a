/* --agent FILE for agentwire run (cli_agent_opts.h). */
#include <stdlib.h>
#include <string.h>

#include "cli_agent_opts.h"
#include "cli_run.h"

const char cli_agent_help[] =
    "\n"
    "Agent files (Markdown with YAML frontmatter; see 'agentwire agent --help'):\n"
    "  --agent FILE              run the agent FILE describes: its model, tools, MCP\n"
    "                            servers, sub-agents and budgets; its body is the system\n"
    "                            prompt. Every option given here wins over the file\n"
    "  --max-depth N             how deep sub-agents may nest (3)\n"
    "  --allow-tools LIST        the tools offered, comma-separated patterns (fs__*),\n"
    "                            instead of the file's tools\n";

/* The options whose file keys they override, one bit each. */
static const char *const overriding[] = {
    "--model",  "--fallback", "--transport", "--context",     "--max-turns", "--max-calls",   "--tool-timeout",
    "--format", "--schema",   "--contract",  "--temperature", "--max-tokens", "--system", "--allow-tools",
};
enum { MODEL, FALLBACK, TRANSPORT, CONTEXT, MAX_TURNS, MAX_CALLS, TOOL_TIMEOUT, FORMAT, SCHEMA, CONTRACT, TEMPERATURE,
       MAX_TOKENS, SYSTEM, ALLOW_TOOLS };

static bool given(const cli_agent_opts *ag, int which) { return ag->given & (1u << which); }

void cli_agent_note(cli_agent_opts *ag, const char *opt)
{
    for (size_t i = 0; i < sizeof overriding / sizeof *overriding; i++)
        if (!strcmp(opt, overriding[i]))
            ag->given |= 1u << i;
}

int cli_agent_option(cli_args *a, const char *opt, cli_agent_opts *ag)
{
    bool agent = !strcmp(opt, "--agent"), depth = !strcmp(opt, "--max-depth"), allow = !strcmp(opt, "--allow-tools");
    if (!agent && !depth && !allow)
        return 0;
    const char *v = cli_opt_value(a, opt);
    if (!v)
        return -1;
    if (agent) {
        if (ag->path) {
            cli_usage_error(a, "--agent is given twice");
            return -1;
        }
        ag->path = v;
    } else if (depth) {
        long n = cli_opt_long(opt, v, 1, 32);
        if (n < 0)
            return -1;
        ag->max_depth = (unsigned)n;
    } else {
        ag->allow = v;
    }
    return 1;
}

static void print_problems(const aw_agent_file *f)
{
    size_t n = 0;
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    for (size_t i = 0; i < n; i++) {
        const char *tag = p[i].severity == AW_AGENT_WARNING ? "warning: " : "";
        if (p[i].line)
            fprintf(stderr, "%s:%zu:%zu: %s%s\n", p[i].file, p[i].line, p[i].column, tag, p[i].message);
        else
            fprintf(stderr, "%s: %s%s\n", p[i].file, tag, p[i].message);
    }
}

/* The models: the file's where no --model or --fallback is given. */
static int apply_models(cli_args *a, run_opts *o, const aw_agent_def *def)
{
    cli_agent_opts *ag = &o->agent;
    aw_agent_def d = *def;
    const char *cl_model[1] = {o->model};
    if (given(ag, MODEL)) {
        d.model = NULL; /* the command line's: what `inherit` means here */
        ag->command_line[ag->ncommand_line++] = o->model;
        for (size_t i = 0; i < o->nfallbacks && ag->ncommand_line < 16; i++)
            ag->command_line[ag->ncommand_line++] = o->fallbacks[i];
    }
    if (given(ag, FALLBACK)) {
        d.fallbacks = NULL;
        d.fallback_count = 0;
    }
    aw_agent_models ctx = {cl_model, given(ag, MODEL) ? 1 : 0, ag->command_line, ag->ncommand_line};
    aw_error err;
    if (aw_agent_resolve_models(&d, &ctx, NULL, &ag->specs, &ag->nspecs, &err)) {
        if (err.code == AW_ENOMEM) {
            fprintf(stderr, "agentwire run: out of memory\n");
            return CLI_REJECTED;
        }
        return cli_usage_error(a, "%s", err.message);
    }
    o->model = ag->specs[0];
    if (!given(ag, FALLBACK)) {
        o->nfallbacks = 0;
        for (size_t i = 1; i < ag->nspecs && o->nfallbacks < 15; i++)
            o->fallbacks[o->nfallbacks++] = ag->specs[i];
    }
    return -1;
}

static int apply(cli_args *a, run_opts *o)
{
    cli_agent_opts *ag = &o->agent;
    if (!ag->path)
        return ag->max_depth || ag->allow ? cli_usage_error(a, "--max-depth and --allow-tools go with --agent FILE")
                                          : -1;
    aw_error err;
    int rc = aw_agent_file_read(ag->path, NULL, &ag->file, &err);
    if (ag->file)
        print_problems(ag->file);
    else
        fprintf(stderr, "agentwire run: %s\n", err.message);
    if (rc)
        return rc == AW_ENOMEM ? (fprintf(stderr, "agentwire run: out of memory\n"), CLI_REJECTED) : CLI_REJECTED;
    const aw_agent_def *def = aw_agent_file_def(ag->file);
    if ((rc = apply_models(a, o, def)) >= 0)
        return rc;
    aw_run_config *r = &o->rcfg;
    if (def->has_transport && !given(ag, TRANSPORT)) {
        r->transport = def->transport;
        o->transport_set = true;
    }
    if (def->has_context && !given(ag, CONTEXT)) {
        r->context = def->context;
        /* the file's xml context goes with the xml transport unless a transport is named */
        if (def->context == AW_CONTEXT_XML && !o->transport_set) {
            r->transport = AW_TRANSPORT_XML;
            o->transport_set = true;
        }
    }
    if (def->max_turns && !given(ag, MAX_TURNS))
        r->budgets.max_turns = def->max_turns;
    if (def->max_calls_per_turn && !given(ag, MAX_CALLS))
        r->budgets.max_calls_per_turn = def->max_calls_per_turn;
    if (def->tool_timeout_ms && !given(ag, TOOL_TIMEOUT))
        r->budgets.tool_timeout_ms = def->tool_timeout_ms;
    if (def->has_format && !given(ag, FORMAT))
        r->format = def->format;
    if (def->contract && !given(ag, CONTRACT))
        o->contract_name = def->contract;
    if (def->has_temperature && !given(ag, TEMPERATURE)) {
        r->temperature = def->temperature;
        r->has_temperature = true;
    }
    if (def->max_tokens && !given(ag, MAX_TOKENS))
        r->max_tokens = def->max_tokens;
    r->agent_name = def->name;
    return -1;
}

int cli_agent_apply(cli_args *a, run_opts *o)
{
    int rc = apply(a, o);
    if (rc >= 0)
        cli_agent_free(&o->agent); /* the command ends here: nothing else frees it */
    return rc;
}

int cli_agent_reload(run_opts *o)
{
    cli_agent_opts *ag = &o->agent;
    if (!ag->from_session || ag->file)
        return -1;
    aw_error err;
    int rc = aw_agent_file_read(ag->path, NULL, &ag->file, &err);
    if (ag->file)
        print_problems(ag->file);
    else
        fprintf(stderr, "agentwire: the session's agent file: %s\n", err.message);
    if (rc)
        return CLI_REJECTED;
    /* every key but the tools stands as stored: as if given */
    ag->given = ~0u;
    if (!ag->allow)
        ag->given &= ~(1u << ALLOW_TOOLS);
    o->rcfg.agent_name = aw_agent_file_def(ag->file)->name;
    return -1;
}

int cli_agent_system(const run_opts *o, aw_buf *system)
{
    const cli_agent_opts *ag = &o->agent;
    /* --system wins; a continued session's stored prompt holds the body already */
    if (!ag->file || given(ag, SYSTEM) || o->system_text)
        return 0;
    return aw_buf_append_str(system, aw_agent_file_def(ag->file)->system_prompt);
}

const aw_json_value *cli_agent_schema(const run_opts *o)
{
    const cli_agent_opts *ag = &o->agent;
    return ag->file && !given(ag, SCHEMA) ? aw_agent_file_def(ag->file)->schema : NULL;
}

/* --allow-tools a,b,c as patterns, in place of the file's. */
static int allow_from_option(aw_toolbox *box, const char *list)
{
    char *copy = strdup(list);
    const char *patterns[128];
    size_t n = 0;
    if (!copy)
        return AW_ENOMEM;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && n < 128; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ')
            t++;
        size_t len = strlen(t);
        while (len && t[len - 1] == ' ')
            t[--len] = 0;
        if (len)
            patterns[n++] = t;
    }
    int rc = aw_toolbox_allow(box, patterns, n);
    free(copy);
    return rc;
}

int cli_agent_add_tools(run_opts *o, aw_loop *loop, aw_toolbox **box, aw_records *records,
                        const aw_run_observer *observers, size_t nobservers, cli_run_ui *ui)
{
    cli_agent_opts *ag = &o->agent;
    if (!ag->file)
        return CLI_OK;
    const aw_agent_def *def = aw_agent_file_def(ag->file);
    const char **patterns = NULL;
    size_t npatterns = 0;
    bool none = false;
    if (!given(ag, ALLOW_TOOLS) && aw_agent_allow_patterns(def, NULL, &patterns, &npatterns, &none))
        goto oom;
    if (none && !def->agent_count) {
        /* the file lists only tools that cannot exist: it gets none */
        aw_toolbox_free(*box);
        *box = NULL;
        return CLI_OK;
    }
    if (!def->mcp_count && !def->agent_count && !npatterns && !given(ag, ALLOW_TOOLS))
        return CLI_OK;
    if (!*box) {
        if (!(*box = aw_toolbox_new(loop, NULL)))
            goto oom;
        if (ui) /* a worker's runs have no terminal */
            cli_run_ui_attach_tools(ui, *box);
    }
    aw_error err;
    if (aw_agent_add_mcp(*box, loop, def, o->mcp.stderr_log, &err)) {
        fprintf(stderr, "agentwire run: %s\n", err.message);
        aw_free(NULL, patterns);
        return CLI_REJECTED;
    }
    if (def->agent_count) {
        aw_agent_env env = {.provider = o->pcfg,
                            .command_line = ag->command_line,
                            .command_line_count = ag->ncommand_line,
                            .observers = observers,
                            .observer_count = nobservers,
                            .max_depth = ag->max_depth,
                            .mcp_stderr_log = o->mcp.stderr_log};
        if (o->rec.trace_path) {
            env.provider.trace = aw_records_trace;
            env.provider.trace_ctx = records;
        }
        aw_tool_source *src =
            aw_agent_tools_new(loop, ag->file, &env, o->models, o->nmodels, *box, 0, NULL, 0, &err);
        if (!src) {
            fprintf(stderr, "agentwire run: %s\n", err.message);
            aw_free(NULL, patterns);
            return CLI_REJECTED;
        }
        if (aw_toolbox_add(*box, src))
            goto oom;
    }
    if (given(ag, ALLOW_TOOLS) ? allow_from_option(*box, ag->allow) : aw_toolbox_allow(*box, patterns, npatterns))
        goto oom;
    aw_free(NULL, patterns);
    return CLI_OK;
oom:
    aw_free(NULL, patterns);
    fprintf(stderr, "agentwire run: out of memory\n");
    return CLI_REJECTED;
}

void cli_agent_free(cli_agent_opts *ag)
{
    aw_agent_specs_free(NULL, ag->specs, ag->nspecs);
    ag->specs = NULL;
    ag->nspecs = 0;
    aw_agent_file_free(ag->file);
    ag->file = NULL;
}
