/* One run made from the command's options, on a loop it is given: the
 * session opened (and a stored one's history and options taken up), the
 * system prompt, contract, schema, models, tools, records and event
 * destinations, and the aw_run itself. `agentwire run` (and resume, chat)
 * makes one on its own loop and drives it from the terminal; a worker
 * makes many on one loop and drives none (cmd_worker.c). */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentwire/records.h"
#include "agentwire/sink.h"
#include "cli_run.h"

#define MAX_SINKS 16

struct cli_run_job {
    cli_args a;
    run_opts o;
    cli_run_env env;
    aw_buf task, system;
    aw_json_doc *tools_doc, *schema_doc;
    aw_contract *contract;
    aw_provider *models[16];
    aw_toolbox *box;
    aw_records *records;
    aw_sink *sinks[8];          /* the run's own --events */
    aw_sink *all_sinks[MAX_SINKS];
    aw_run_observer observers[3];
    aw_run *run;
};

/* The JSON file named, parsed; CLI_REJECTED after reporting the place. */
static int load_json(const char *path, aw_json_doc **out) { return cli_read_json(path, NULL, out); }

/* TEXT, or @FILE for a file's contents. */
static int text_or_file(const char *v, aw_buf *out)
{
    if (v[0] != '@')
        return aw_buf_append_str(out, v) ? CLI_REJECTED : CLI_OK;
    return cli_read_input(v + 1, out) ? CLI_REJECTED : CLI_OK;
}

static int load_contract(const char *name, aw_contract **out)
{
    aw_error err;
    if (aw_contract_builtin(name, NULL, out, &err) == 0)
        return CLI_OK;
    aw_buf text;
    aw_buf_init(&text, NULL);
    if (access(name, R_OK) != 0) {
        fprintf(stderr, "agentwire run: --contract '%s' is neither a built-in contract (llmQuery, llmResponse) nor a "
                        "readable file\n",
                name);
        return CLI_USAGE;
    }
    if (cli_read_input(name, &text)) {
        aw_buf_free(&text);
        return CLI_REJECTED;
    }
    int rc = aw_contract_load(text.data ? text.data : "", text.len, NULL, out, &err);
    aw_buf_free(&text);
    if (rc) {
        cli_report(name, &err);
        return CLI_REJECTED;
    }
    return CLI_OK;
}

/* A task for a contract run: the query document the contract's pair
 * expects (llmResponse answers llmQuery), or the task as it is. */
static int contract_task(const aw_contract *c, const char *task, aw_buf *out)
{
    if (strcmp(aw_contract_name(c), "llmResponse") != 0)
        return aw_buf_append_str(out, task) ? CLI_REJECTED : CLI_OK;
    aw_contract *q = NULL;
    aw_error err;
    if (aw_contract_builtin("llmQuery", NULL, &q, &err))
        return CLI_REJECTED;
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *root = aw_json_new_object(d), *ctx = aw_json_new_object(d);
    int rc = !root || !ctx || aw_json_object_set_string(d, root, "userMessage", task, strlen(task)) ||
             aw_json_object_set_string(d, ctx, "topicId", "run", 3) || aw_json_object_set_int(d, ctx, "messageCount", 0) ||
             aw_json_object_set(d, root, "context", 7, ctx);
    if (!rc)
        rc = aw_contract_build(q, root, out, &err);
    if (rc)
        fprintf(stderr, "agentwire run: the task does not fit an <llmQuery>: %s\n", err.message);
    aw_json_doc_free(d);
    aw_contract_free(q);
    return rc ? CLI_REJECTED : CLI_OK;
}

/* The system prompt, the contract's prompt after it, the task as the
 * contract wants it, the schema. -1 to go on, else the exit status. */
static int load_texts(cli_run_job *j, const char *task_text, size_t *user_system_len)
{
    run_opts *o = &j->o;
    if (task_text && aw_buf_append_str(&j->task, task_text))
        return CLI_REJECTED;
    if (o->system_text ? aw_buf_append_str(&j->system, o->system_text) != 0
                       : (o->system && text_or_file(o->system, &j->system)))
        return CLI_REJECTED;
    if (cli_agent_system(o, &j->system)) /* --agent FILE: its body */
        return CLI_REJECTED;
    *user_system_len = j->system.len; /* what a stored session keeps (the contract's prompt is added again) */
    if (o->contract_name) {
        int rc = load_contract(o->contract_name, &j->contract);
        if (rc != CLI_OK)
            return rc;
        aw_buf prompt;
        aw_buf_init(&prompt, NULL);
        if (aw_contract_prompt(j->contract, &prompt) || (j->system.len && aw_buf_append_str(&j->system, "\n\n")) ||
            aw_buf_append(&j->system, prompt.data, prompt.len)) {
            aw_buf_free(&prompt);
            return CLI_REJECTED;
        }
        aw_buf_free(&prompt);
        aw_buf query;
        aw_buf_init(&query, NULL);
        if (j->task.len && !o->task_is_query && contract_task(j->contract, j->task.data, &query)) {
            aw_buf_free(&query);
            return CLI_REJECTED;
        }
        if (query.len) {
            aw_buf_free(&j->task);
            j->task = query;
        } else {
            aw_buf_free(&query);
        }
    }
    if (o->schema_path && load_json(o->schema_path, &j->schema_doc))
        return CLI_REJECTED;
    return -1;
}

static int add_command_tools(cli_run_job *j, aw_error *err);

/* The models, the transport they call for, the command tools and the MCP
 * servers' tools. */
static int make_models_and_tools(cli_run_job *j, aw_error *err)
{
    int rc;
    run_opts *o = &j->o;
    aw_loop *loop = j->env.loop;
    for (size_t i = 0; i < o->nmodels; i++) {
        aw_provider_config pc = o->pcfg;
        pc.spec = o->models[i];
        if (o->rec.trace_path) {
            pc.trace = aw_records_trace;
            pc.trace_ctx = j->records;
        }
        if (!(j->models[i] = aw_provider_new(loop, &pc, err)))
            return AW_EINVAL;
    }
    bool all_native = true;
    for (size_t i = 0; i < o->nmodels; i++)
        all_native = all_native && aw_provider_has_native_tools(j->models[i]) &&
                     strcmp(aw_provider_kind(j->models[i]), "replay") != 0;
    if (!o->transport_set)
        o->rcfg.transport = all_native ? AW_TRANSPORT_NATIVE : AW_TRANSPORT_XML;
    if (o->tools_path && (rc = add_command_tools(j, err)) != 0)
        return rc;
    /* --mcp-config, --mcp: the MCP servers' tools (cli_mcp_opts.c) */
    if ((rc = cli_mcp_add_servers(&o->mcp, loop, &j->box, "run")) != CLI_OK)
        return rc;
    if (j->box && j->env.ui)
        cli_run_ui_attach_tools(j->env.ui, j->box);
    return 0;
}

/* --tools FILE: the command tools it describes */
static int add_command_tools(cli_run_job *j, aw_error *err)
{
    run_opts *o = &j->o;
    aw_loop *loop = j->env.loop;
    if (load_json(o->tools_path, &j->tools_doc))
        return CLI_REJECTED;
    char *dir_copy = strdup(o->tools_path);
    aw_tool_source *src =
        dir_copy ? aw_command_tools_new(loop, aw_json_doc_root(j->tools_doc), dirname(dir_copy), NULL, err) : NULL;
    free(dir_copy);
    if (!src) {
        fprintf(stderr, "%s: %s: %s\n", j->env.who, o->tools_path, err->message);
        return CLI_REJECTED;
    }
    j->box = aw_toolbox_new(loop, NULL);
    if (!j->box || aw_toolbox_add(j->box, src))
        return CLI_REJECTED;
    return 0;
}

int cli_run_job_new(cli_args *ap, const run_opts *po, const char *task_text, const cli_run_env *env,
                    cli_run_job **out)
{
    *out = NULL;
    cli_run_job *j = calloc(1, sizeof *j);
    if (!j) {
        fprintf(stderr, "%s: out of memory\n", env->who);
        return CLI_REJECTED;
    }
    *out = j;
    j->a = *ap;
    j->o = *po;
    j->env = *env;
    aw_buf_init(&j->task, NULL);
    aw_buf_init(&j->system, NULL);
    run_opts *o = &j->o;
    aw_error err;
    int rc;

    /* --agent FILE: its keys where no option was given */
    if ((rc = cli_agent_apply(&j->a, o)) >= 0)
        return rc;
    /* the session (cli_session.c): the store, and a stored session's
     * history and options when one is continued */
    if ((rc = cli_session_open(o, &task_text)) >= 0)
        return rc;
    /* a continued session of an agent file: the file's tools again */
    if ((rc = cli_agent_reload(o)) >= 0)
        return rc;
    if (!o->model)
        return cli_usage_error(&j->a, "no model given (--model PROVIDER[:MODEL])");
    o->nmodels = 0;
    o->models[o->nmodels++] = o->model;
    for (size_t i = 0; i < o->nfallbacks; i++)
        o->models[o->nmodels++] = o->fallbacks[i];
    size_t user_system_len = 0;
    if ((rc = load_texts(j, task_text, &user_system_len)) >= 0)
        return rc;

    if (cli_events_open(o, env->loop, j->sinks, env->who))
        return CLI_REJECTED;
    size_t nsinks = 0;
    for (size_t i = 0; i < o->nevents; i++)
        j->all_sinks[nsinks++] = j->sinks[i];
    for (size_t i = 0; i < env->nsinks && nsinks < MAX_SINKS; i++)
        j->all_sinks[nsinks++] = env->sinks[i];
    o->rec.sinks = j->all_sinks;
    o->rec.sink_count = nsinks;
    if (env->shared_loop)
        o->rec.sink_flush_ms = -1;
    if (!(j->records = aw_records_new(&o->rec, &err)))
        goto fail;
    if ((rc = make_models_and_tools(j, &err)) == AW_EINVAL)
        goto fail;
    if (rc)
        return rc;

    size_t nobs = 0;
    j->observers[nobs++] = aw_records_observer(j->records);
    if (env->ui)
        j->observers[nobs++] = cli_run_ui_observer(env->ui);
    /* --agent FILE: its MCP servers and sub-agents (cli_agent_opts.c) */
    if ((rc = cli_agent_add_tools(o, env->loop, &j->box, j->records, j->observers, nobs, env->ui)) != CLI_OK)
        return rc;
    o->rcfg.models = j->models;
    o->rcfg.model_count = o->nmodels;
    o->rcfg.tools = j->box;
    o->rcfg.system_prompt = j->system.len ? j->system.data : NULL;
    o->rcfg.task = j->task.len ? j->task.data : NULL;
    o->rcfg.final_schema = j->schema_doc     ? aw_json_doc_root(j->schema_doc)
                           : o->schema_value ? o->schema_value
                                             : cli_agent_schema(o);
    o->rcfg.contract = j->contract;
    o->rcfg.observers = j->observers;
    o->rcfg.observer_count = nobs;
    o->rcfg.budgets.max_retries = o->retries;
    o->rcfg.budgets.no_retries = o->retries_set && o->retries == 0;
    o->rcfg.recover_calls = (unsigned)cli_run_recover_calls(o->recover_calls);
    if (o->rcfg.interactive && env->ui) {
        o->rcfg.ask = cli_run_ui_ask;
        o->rcfg.ask_ctx = env->ui;
    }
    /* resume data, the session's id and the store's observer */
    if (cli_session_configure(o, &o->rcfg, &j->observers[nobs]))
        return CLI_REJECTED;
    if (!(j->run = aw_run_new(env->loop, &o->rcfg, &err))) {
        if (err.code == AW_EINVAL) {
            fprintf(stderr, "%s: %s\n", env->who, err.message);
            return CLI_USAGE;
        }
        goto fail;
    }
    if (cli_session_begin(o, j->run, j->system.data, user_system_len))
        return CLI_REJECTED;
    return -1;

fail:
    fprintf(stderr, "%s: %s\n", env->who, err.message);
    return CLI_REJECTED;
}

aw_run *cli_run_job_run(cli_run_job *j) { return j->run; }

aw_sink *const *cli_run_job_sinks(const cli_run_job *j, size_t *n)
{
    *n = j->o.nevents;
    return j->sinks;
}
run_opts *cli_run_job_opts(cli_run_job *j) { return &j->o; }

int cli_run_job_end(cli_run_job *j, int rc)
{
    aw_error cerr;
    if (aw_records_close(j->records, &cerr)) {
        fprintf(stderr, "%s: %s\n", j->env.who, cerr.message);
        if (rc == CLI_OK)
            rc = CLI_REJECTED;
    }
    if (!j->env.shared_loop)
        cli_events_report(j->env.who, j->sinks, j->o.nevents);
    return rc;
}

void cli_run_job_free(cli_run_job *j)
{
    if (!j)
        return;
    aw_run_free(j->run);
    aw_toolbox_free(j->box);
    cli_agent_free(&j->o.agent);
    for (size_t i = 0; i < j->o.nmodels; i++)
        aw_provider_free(j->models[i]);
    aw_records_free(j->records);
    for (size_t i = 0; i < j->o.nevents; i++)
        aw_sink_free(j->sinks[i]);
    aw_contract_free(j->contract);
    aw_json_doc_free(j->tools_doc);
    aw_json_doc_free(j->schema_doc);
    aw_buf_free(&j->task);
    aw_buf_free(&j->system);
    cli_session_free(&j->o);
    free(j);
}
