/* `agentwire submit`: a run queued in the store instead of run here; a
 * worker (`agentwire worker`, on this machine or any other sharing the
 * store) takes it up. What is queued is the session itself, status
 * "queued", with its task and the run's options as `resume` reads them,
 * so a worker runs it exactly as `agentwire resume ID` would. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agentwire/store.h"
#include "cli.h"
#include "cli_run.h"
#include "cli_session.h"

static const char submit_help[] =
    "Usage: agentwire submit [--store URL] [run options] [TASK]\n"
    "\n"
    "Queue a run in the store and print its session id; 'agentwire worker' runs\n"
    "it, here or on any machine sharing the store (PostgreSQL for several\n"
    "machines; SQLite serves the workers of one machine). The options are those\n"
    "of 'agentwire run' (see 'agentwire run --help'), kept with the session\n"
    "(never an API key: the worker's environment has those), except what only\n"
    "makes sense where the run is started: --interactive, --thread,\n"
    "--accounting, --trace, --record, --session and --no-store. Files named by\n"
    "--tools, --schema, --contract, --agent and replay: models are read where the\n"
    "worker runs, by absolute path (an agent file's keys are stored as resolved\n"
    "here; the worker reads the file again for its MCP servers and sub-agents).\n"
    "\n"
    "  --events redis://... | http(s)://...  where the run's envelopes go, besides\n"
    "                            the worker's own --events (no password in the URL:\n"
    "                            it would be stored; give such a destination to the\n"
    "                            worker)\n"
    "\n"
    "'agentwire sessions wait ID' waits for it to end. Exit status: 0 queued,\n"
    "1 the store refused it, 2 usage error.\n";

/* What a queued run cannot have, in words; NULL when it is fine. */
static const char *unqueueable(const run_opts *o)
{
    if (o->no_store)
        return "--no-store: a queued run lives in the store";
    if (o->session || o->resume)
        return "--session: a queued run is a new session (its id is printed)";
    if (o->rcfg.interactive)
        return "--interactive: nobody is at a queued run's terminal to answer";
    if (o->rec.thread_path || o->rec.accounting_path || o->rec.trace_path || o->rec.record_path)
        return "--thread, --accounting, --trace and --record name files where the run starts: a queued run's records "
               "are in the store ('agentwire sessions export')";
    if (o->events_secret || o->events_dead_letter || o->events_queue)
        return "--events-secret, --events-dead-letter and --events-queue belong to the worker (agentwire worker)";
    return NULL;
}

static int check_events(cli_args *a, const run_opts *o)
{
    for (size_t i = 0; i < o->nevents; i++) {
        const char *e = o->events[i];
        bool redis = !strncasecmp(e, "redis://", 8);
        if (!redis && strncasecmp(e, "http://", 7) && strncasecmp(e, "https://", 8))
            return cli_usage_error(a, "--events %s: a queued run sends its envelopes to redis:// or http(s)://; a file "
                                      "would be on the worker's machine (give it to the worker)",
                                   e);
        const char *rest = strstr(e, "://") + 3;
        if (memchr(rest, '@', strcspn(rest, "/?#")))
            return cli_usage_error(a, "--events: a password in the destination would be kept in the store; give "
                                      "that destination to the worker (agentwire worker --events ...)");
    }
    return -1;
}

/* The run's options as a worker reads them back (cli_session.c), with the
 * queued run's own destinations. */
static int queued_config(run_opts *o, aw_json_doc **out)
{
    aw_buf system;
    aw_buf_init(&system, NULL);
    aw_json_doc *schema = NULL;
    int rc = CLI_OK;
    if (o->system && (o->system[0] == '@' ? cli_read_input(o->system + 1, &system) != 0
                                          : aw_buf_append_str(&system, o->system) != 0))
        rc = CLI_REJECTED;
    if (rc == CLI_OK && cli_agent_system(o, &system)) /* --agent FILE: its body */
        rc = CLI_REJECTED;
    if (rc == CLI_OK && o->schema_path && cli_read_json(o->schema_path, NULL, &schema))
        rc = CLI_REJECTED;
    aw_json_doc *tools = NULL; /* read now, so a wrong file is said here rather than by a worker */
    if (rc == CLI_OK && o->tools_path && cli_read_json(o->tools_path, NULL, &tools))
        rc = CLI_REJECTED;
    aw_json_doc_free(tools);
    if (rc == CLI_OK) {
        o->rcfg.final_schema = schema ? aw_json_doc_root(schema) : cli_agent_schema(o);
        if (cli_session_config_json(o, system.data, system.len, out))
            rc = CLI_REJECTED;
        o->rcfg.final_schema = NULL;
    }
    aw_json_value *events = rc == CLI_OK && o->nevents ? aw_json_new_array(*out) : NULL;
    for (size_t i = 0; events && i < o->nevents; i++) {
        aw_json_value *v = aw_json_new_string(*out, o->events[i], strlen(o->events[i]));
        if (!v || aw_json_array_push(*out, events, v))
            rc = CLI_REJECTED;
    }
    /* the root is the document's own object, made by cli_session_config_json */
    if (events && rc == CLI_OK && aw_json_object_set(*out, (aw_json_value *)aw_json_doc_root(*out), "events", 6, events))
        rc = CLI_REJECTED;
    aw_json_doc_free(schema);
    aw_buf_free(&system);
    return rc;
}

/* The run queued: its task, its store, its options. */
static int queue_run(cli_args *a, run_opts *o)
{
    int rc;
    if (!o->model)
        return cli_usage_error(a, "no model given (--model PROVIDER[:MODEL])");
    o->models[o->nmodels++] = o->model;
    for (size_t i = 0; i < o->nfallbacks; i++)
        o->models[o->nmodels++] = o->fallbacks[i];
    aw_buf task;
    aw_buf_init(&task, NULL);
    if (!a->file || !strcmp(a->file, "-") ? cli_read_input(NULL, &task) != 0 : aw_buf_append_str(&task, a->file) != 0) {
        aw_buf_free(&task);
        return CLI_REJECTED;
    }
    while (task.len && (task.data[task.len - 1] == '\n' || task.data[task.len - 1] == '\r'))
        task.data[--task.len] = 0;
    if (!task.len) {
        aw_buf_free(&task);
        return cli_usage_error(a, "no task given (an argument, or stdin)");
    }
    const char *task_text = task.data;
    aw_json_doc *config = NULL;
    rc = cli_session_open(o, &task_text); /* the store (no session is continued) */
    if (rc < 0)
        rc = queued_config(o, &config);
    if (rc == CLI_OK) {
        aw_session_start st = {.kind = "run", .task = task.data, .nonce = o->rcfg.nonce, .agent_name = o->rcfg.agent_name,
                               .config = aw_json_doc_root(config)};
        char id[40];
        aw_error err;
        if (aw_store_enqueue(cli_session_store(o), &st, id, &err)) {
            fprintf(stderr, "agentwire submit: %s\n", err.message);
            rc = CLI_REJECTED;
        } else {
            printf("%s\n", id);
        }
    }
    aw_json_doc_free(config);
    cli_session_free(o);
    aw_buf_free(&task);
    return rc;
}

int cli_submit(int argc, char **argv)
{
    run_opts o = {.help = submit_help};
    cli_args a;
    cli_args_init(&a, argc, argv, "submit");
    int rc = cli_run_parse(&a, &o);
    if (rc >= 0)
        return rc;
    const char *why = unqueueable(&o);
    if (why)
        return cli_usage_error(&a, "%s", why);
    if ((rc = check_events(&a, &o)) >= 0)
        return rc;
    /* --agent FILE: its keys where no option was given, stored resolved;
     * the file itself is read again by the worker, for its tools */
    if ((rc = cli_agent_apply(&a, &o)) >= 0)
        return rc;
    rc = queue_run(&a, &o);
    cli_agent_free(&o.agent);
    return rc;
}
