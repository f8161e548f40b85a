/* `agentwire run`: one agent run from the command line. The options map
 * one to one onto the runtime's configuration (aw_provider_config,
 * aw_run_config, aw_records_config); this file only reads them, owns the
 * terminal (cli_run_ui.c) and turns the result into stdout and an exit
 * status. */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentwire/provider.h"
#include "agentwire/records.h"
#include "agentwire/run.h"
#include "agentwire/sink.h"
#include "agentwire/tools.h"
#include "cli.h"
#include "cli_run.h"

static const char run_help[] =
    "Usage: agentwire run [options] [TASK]\n"
    "\n"
    "Run an agent: the task (the argument, or stdin when it is absent or '-')\n"
    "goes to the model, which calls tools until it writes its final report.\n"
    "The report goes to stdout; progress and errors to stderr.\n"
    "Exit status: 0 the report says success, 1 failure or partial or no report,\n"
    "2 usage error, 130 interrupted.\n"
    "\n"
    "Model:\n"
    "  --model PROVIDER[:MODEL]  openai:MODEL, anthropic:MODEL, claude-cli, codex-cli,\n"
    "                            exec:COMMAND, replay:FILE (required)\n"
    "  --fallback PROVIDER[:MODEL]  tried when the model keeps failing (repeatable)\n"
    "  --base-url URL            the API's address (openai: $OPENAI_BASE_URL or\n"
    "                            https://api.openai.com/v1; anthropic: $ANTHROPIC_BASE_URL)\n"
    "  --api-key-env NAME        the variable holding the key (default OPENAI_API_KEY,\n"
    "                            ANTHROPIC_API_KEY); keys never appear in any record\n"
    "  --claude-path PATH, --codex-path PATH   the command-line providers' programs\n"
    "  --encoding xml|text       how command-line providers get the conversation (xml)\n"
    "  --max-tokens N, --temperature X\n"
    "  --no-stream               ask HTTP providers for whole replies\n"
    "  --retries N               retries of a failed request (3), with backoff\n"
    "  --retry-base T            the first retry's wait (1s), doubled each time, with\n"
    "                            jitter; a server's Retry-After wins when longer\n"
    "  --connect-timeout T, --first-byte-timeout T, --idle-timeout T, --request-timeout T\n"
    "                            (T: 500ms, 30s, 2m, or milliseconds)\n"
    "  --record FILE             write the model's replies as replay:FILE plays them\n"
    "\n"
    "Conversation:\n"
    "  --system TEXT|@FILE       the system prompt\n"
    "  --context messages|xml    native chat history (messages), or the whole history\n"
    "                            as one <thread> message (xml)\n"
    "  --prefill TEXT            xml context: text after </thread>\n"
    "  --transport native|xml|xml-final   how tools are called (default native, or\n"
    "                            xml for the command-line providers and replay)\n"
    "  --format FORMAT           the final report's: markdown (default), text, json,\n"
    "                            tty, pipe, slack-block-kit, sub-agent\n"
    "  --schema FILE             json format: the JSON Schema the report must meet\n"
    "  --contract NAME|FILE      the reply must be this contract's document (llmResponse,\n"
    "                            or a contract file); stdout gets the typed JSON\n"
    "  --contract-retries N      send validation issues back this many times (0)\n"
    "  --nonce HEX               the transport's session nonce (8 hex digits)\n"
    "\n"
    "Tools and budgets:\n"
    "  --tools FILE              command tools: [{name, description, input_schema,\n"
    "                            command: [argv...], timeout_ms, cwd, env}]\n"
    "  --parallel N              tools run at once (4)\n"
    "  --tool-timeout T          each call (120s)\n"
    "  --max-tool-output BYTES   of one result the model sees (100000)\n"
    "  --max-turns N             (10); the last turn asks only for the final report\n"
    "  --max-calls N             tool calls a turn (10)\n"
    "  --context-window TOKENS   a result that would overflow it fails instead\n"
    "  --timeout T               the whole run\n"
    "  --interactive             let the model ask you questions (agent__ask_human)\n"
    "\n"
    "Records (written as the run goes):\n"
    "  --thread FILE             the agent events as <thread> XML\n"
    "  --events DEST             UI envelopes (repeatable): FILE or - (JSON lines),\n"
    "                            redis://[:PASSWORD@]HOST:PORT/DB (PUBLISH on agent.<session>,\n"
    "                            Laravel's broadcast payload), http(s)://... (a webhook)\n"
    "  --events-secret TEXT|@FILE  sign webhook bodies: X-Agentwire-Signature-256\n"
    "  --events-dead-letter FILE   webhook envelopes that could not be delivered\n"
    "  --events-queue N          envelopes a slow destination may hold back (10000)\n"
    "  --stream-events           include agent.stream.chunk envelopes\n"
    "  --events-preset P         standard (default); minimal: fewer envelopes;\n"
    "                            debug: also each continuation decision with its\n"
    "                            criteria (turns, final report, tool calls), full arguments\n"
    "  --accounting FILE         one JSON line per model request and per tool call\n"
    "  --trace FILE              every request and response body, keys redacted\n"
    "\n"
    "Sessions (every run is stored; see 'agentwire sessions --help'):\n"
    "  --store URL               sqlite:PATH or postgres://... (default\n"
    "                            sqlite:$XDG_DATA_HOME/agentwire/sessions.db)\n"
    "  --no-store                keep no session\n"
    "  --session ID              continue that session with this task (its history,\n"
    "                            nonce and slots go on; without --model, its options)\n"
    "  --snapshot-preset NAME    the slim snapshot kept after each step: minimal,\n"
    "                            standard (default), full\n"
    "\n"
    "Terminal:\n"
    "  --quiet                   errors only on stderr\n"
    "  --verbose                 also the log's details\n";

/* "500ms", "30s", "2m", "1h", or plain milliseconds; -1 when malformed. */
static int64_t parse_duration(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double scale = 1;
    if (!strcmp(end, "ms") || !*end)
        scale = 1;
    else if (!strcmp(end, "s"))
        scale = 1000;
    else if (!strcmp(end, "m"))
        scale = 60000;
    else if (!strcmp(end, "h"))
        scale = 3600000;
    else
        return -1;
    return (int64_t)(v * scale + 0.5);
}

static int duration_opt(cli_args *a, const char *opt, int64_t *out)
{
    const char *v = cli_opt_value(a, opt);
    if (!v)
        return -1;
    int64_t ms = parse_duration(v);
    if (ms < 0) {
        cli_usage_error(a, "option '%s' wants a duration such as 500ms, 30s or 2m, not '%s'", opt, v);
        return -1;
    }
    *out = ms;
    return 0;
}

/* TEXT, or @FILE for a file's contents. */
static int text_or_file(const char *v, aw_buf *out)
{
    if (v[0] != '@')
        return aw_buf_append_str(out, v) ? CLI_REJECTED : CLI_OK;
    return cli_read_input(v + 1, out) ? CLI_REJECTED : CLI_OK;
}


int cli_run_parse(cli_args *a, run_opts *o)
{
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        const char *v = NULL;
        long n;
#define VALUE()                                                                                                        \
    do {                                                                                                               \
        if (!(v = cli_opt_value(a, opt)))                                                                              \
            return CLI_USAGE;                                                                                          \
    } while (0)
#define NUMBER(min, max)                                                                                               \
    do {                                                                                                               \
        VALUE();                                                                                                       \
        if ((n = cli_opt_long(opt, v, min, max)) < 0)                                                                  \
            return CLI_USAGE;                                                                                          \
    } while (0)
        if (cli_is_help(opt)) {
            fputs(o->help ? o->help : run_help, stdout);
            return CLI_OK;
        } else if (!strcmp(opt, "--model")) {
            VALUE();
            if (o->model)
                return cli_usage_error(a, "--model is given twice (use --fallback for the others)");
            o->model = v;
        } else if (!strcmp(opt, "--fallback")) {
            VALUE();
            if (o->nfallbacks == sizeof o->fallbacks / sizeof *o->fallbacks)
                return cli_usage_error(a, "at most 15 fallbacks");
            o->fallbacks[o->nfallbacks++] = v;
        } else if (!strcmp(opt, "--base-url")) {
            VALUE();
            o->pcfg.base_url = v;
        } else if (!strcmp(opt, "--api-key-env")) {
            VALUE();
            o->pcfg.api_key_env = v;
        } else if (!strcmp(opt, "--claude-path")) {
            VALUE();
            o->pcfg.claude_path = v;
        } else if (!strcmp(opt, "--codex-path")) {
            VALUE();
            o->pcfg.codex_path = v;
        } else if (!strcmp(opt, "--encoding")) {
            VALUE();
            if (!strcmp(v, "xml"))
                o->pcfg.encoding = AW_PROMPT_XML;
            else if (!strcmp(v, "text"))
                o->pcfg.encoding = AW_PROMPT_TEXT;
            else
                return cli_usage_error(a, "--encoding is xml or text, not '%s'", v);
        } else if (!strcmp(opt, "--max-tokens")) {
            NUMBER(1, 10000000);
            o->rcfg.max_tokens = (int)n;
        } else if (!strcmp(opt, "--temperature")) {
            VALUE();
            char *end;
            double t = strtod(v, &end);
            if (end == v || *end || t < 0 || t > 2)
                return cli_usage_error(a, "--temperature wants a number from 0 to 2, not '%s'", v);
            o->rcfg.temperature = t;
            o->rcfg.has_temperature = true;
        } else if (!strcmp(opt, "--no-stream")) {
            o->pcfg.no_stream = true;
        } else if (!strcmp(opt, "--retries")) {
            NUMBER(0, 100);
            o->retries = (unsigned)n;
            o->retries_set = true;
        } else if (!strcmp(opt, "--retry-base")) {
            if (duration_opt(a, opt, &o->rcfg.budgets.retry_base_ms))
                return CLI_USAGE;
            if (o->rcfg.budgets.retry_base_ms == 0) /* 0 is the library's "default" */
                o->rcfg.budgets.retry_base_ms = 1;
        } else if (!strcmp(opt, "--connect-timeout")) {
            if (duration_opt(a, opt, &o->pcfg.connect_timeout_ms))
                return CLI_USAGE;
        } else if (!strcmp(opt, "--first-byte-timeout")) {
            if (duration_opt(a, opt, &o->pcfg.first_byte_timeout_ms))
                return CLI_USAGE;
        } else if (!strcmp(opt, "--idle-timeout")) {
            if (duration_opt(a, opt, &o->pcfg.idle_timeout_ms))
                return CLI_USAGE;
        } else if (!strcmp(opt, "--request-timeout")) {
            if (duration_opt(a, opt, &o->pcfg.request_timeout_ms))
                return CLI_USAGE;
        } else if (!strcmp(opt, "--record")) {
            VALUE();
            o->rec.record_path = v;
        } else if (!strcmp(opt, "--system")) {
            VALUE();
            o->system = v;
        } else if (!strcmp(opt, "--context")) {
            VALUE();
            if (!strcmp(v, "messages"))
                o->rcfg.context = AW_CONTEXT_MESSAGES;
            else if (!strcmp(v, "xml"))
                o->rcfg.context = AW_CONTEXT_XML;
            else
                return cli_usage_error(a, "--context is messages or xml, not '%s'", v);
        } else if (!strcmp(opt, "--prefill")) {
            VALUE();
            o->rcfg.prefill = v;
        } else if (!strcmp(opt, "--transport")) {
            VALUE();
            if (!strcmp(v, "native"))
                o->rcfg.transport = AW_TRANSPORT_NATIVE;
            else if (!strcmp(v, "xml"))
                o->rcfg.transport = AW_TRANSPORT_XML;
            else if (!strcmp(v, "xml-final"))
                o->rcfg.transport = AW_TRANSPORT_XML_FINAL;
            else
                return cli_usage_error(a, "--transport is native, xml or xml-final, not '%s'", v);
            o->transport_set = true;
        } else if (!strcmp(opt, "--format")) {
            VALUE();
            int f = aw_report_format_parse(v, strlen(v));
            if (f < 0)
                return cli_usage_error(a, "unknown --format '%s' (markdown, text, json, tty, pipe, slack-block-kit, "
                                          "sub-agent)",
                                       v);
            o->rcfg.format = (aw_report_format)f;
        } else if (!strcmp(opt, "--schema")) {
            VALUE();
            o->schema_path = v;
        } else if (!strcmp(opt, "--contract")) {
            VALUE();
            o->contract_name = v;
        } else if (!strcmp(opt, "--contract-retries")) {
            NUMBER(0, 20);
            o->rcfg.contract_retries = (unsigned)n;
        } else if (!strcmp(opt, "--nonce")) {
            VALUE();
            o->rcfg.nonce = v;
        } else if (!strcmp(opt, "--tools")) {
            VALUE();
            o->tools_path = v;
        } else if (!strcmp(opt, "--parallel")) {
            NUMBER(1, 256);
            o->rcfg.budgets.parallel = (unsigned)n;
        } else if (!strcmp(opt, "--tool-timeout")) {
            if (duration_opt(a, opt, &o->rcfg.budgets.tool_timeout_ms))
                return CLI_USAGE;
        } else if (!strcmp(opt, "--max-tool-output")) {
            NUMBER(64, 1L << 30);
            o->rcfg.budgets.max_tool_output = (size_t)n;
        } else if (!strcmp(opt, "--max-turns")) {
            NUMBER(1, 100000);
            o->rcfg.budgets.max_turns = (unsigned)n;
        } else if (!strcmp(opt, "--max-calls")) {
            NUMBER(1, 999);
            o->rcfg.budgets.max_calls_per_turn = (unsigned)n;
        } else if (!strcmp(opt, "--context-window")) {
            NUMBER(1, 100000000);
            o->rcfg.budgets.context_window = n;
        } else if (!strcmp(opt, "--timeout")) {
            if (duration_opt(a, opt, &o->rcfg.budgets.timeout_ms))
                return CLI_USAGE;
        } else if (!strcmp(opt, "--interactive")) {
            o->rcfg.interactive = true;
        } else if (!strcmp(opt, "--thread")) {
            VALUE();
            o->rec.thread_path = v;
        } else if (!strcmp(opt, "--events")) {
            VALUE();
            if (o->nevents == sizeof o->events / sizeof *o->events)
                return cli_usage_error(a, "at most 8 --events destinations");
            o->events[o->nevents++] = v;
        } else if (!strcmp(opt, "--events-preset")) {
            VALUE();
            if (!strcmp(v, "standard"))
                o->rec.preset = AW_ENVELOPE_STANDARD;
            else if (!strcmp(v, "minimal"))
                o->rec.preset = AW_ENVELOPE_MINIMAL;
            else if (!strcmp(v, "debug"))
                o->rec.preset = AW_ENVELOPE_DEBUG;
            else
                return cli_usage_error(a, "--events-preset is standard, minimal or debug, not '%s'", v);
        } else if (!strcmp(opt, "--stream-events")) {
            o->rec.stream_events = true;
        } else if (!strcmp(opt, "--accounting")) {
            VALUE();
            o->rec.accounting_path = v;
        } else if (!strcmp(opt, "--trace")) {
            VALUE();
            o->rec.trace_path = v;
        } else if (!strcmp(opt, "--quiet")) {
            o->quiet = true;
        } else if (!strcmp(opt, "--verbose")) {
            o->verbose = true;
        } else if ((n = cli_events_option(a, o, opt)) != -1) {
            if (n > 0)
                return (int)n; /* an events option (cli_events.c), or a usage error in one */
        } else if ((n = cli_session_option(a, o, opt)) != -1) {
            if (n > 0)
                return (int)n; /* a session option (cli_session.c), or a usage error in one */
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
#undef VALUE
#undef NUMBER
    }
    if (a->nfiles > 1)
        return cli_usage_error(a, "one task only (put it in quotes)");
    return -1;
}

/* The JSON file named, parsed; CLI_REJECTED after reporting the place. */
static int load_json(const char *path, aw_json_doc **out) { return cli_read_json(path, NULL, out); }

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

int cli_run(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv, "run");
    run_opts o;
    memset(&o, 0, sizeof o);
    int rc = cli_run_parse(&a, &o);
    if (rc >= 0)
        return rc;
    aw_buf task;
    aw_buf_init(&task, NULL);
    rc = CLI_REJECTED;
    if (!a.file || !strcmp(a.file, "-")) {
        if (cli_read_input(NULL, &task))
            goto out;
    } else if (aw_buf_append_str(&task, a.file)) {
        goto out;
    }
    while (task.len && (task.data[task.len - 1] == '\n' || task.data[task.len - 1] == '\r'))
        task.data[--task.len] = 0;
    if (!task.len) {
        rc = cli_usage_error(&a, "no task given (an argument, or stdin)");
        goto out;
    }
    rc = cli_run_go(&a, &o, task.data);
out:
    aw_buf_free(&task);
    return rc;
}

int cli_run_go(cli_args *ap, run_opts *po, const char *task_text)
{
    cli_args a = *ap;
    run_opts o = *po;
    aw_buf task, system;
    aw_buf_init(&task, NULL);
    aw_buf_init(&system, NULL);
    aw_json_doc *tools_doc = NULL, *schema_doc = NULL;
    aw_contract *contract = NULL;
    aw_loop *loop = NULL;
    aw_provider *models[16] = {0};
    aw_toolbox *box = NULL;
    aw_records *records = NULL;
    aw_sink *sinks[8] = {0};
    cli_run_ui *ui = NULL;
    aw_run *run = NULL;
    aw_error err;
    int rc;

    /* the session (cli_session.c): the store, and a stored session's
     * history and options when one is continued */
    if ((rc = cli_session_open(&o, &task_text)) >= 0)
        goto out;
    rc = CLI_REJECTED;
    if (!o.model) {
        rc = cli_usage_error(&a, "no model given (--model PROVIDER[:MODEL])");
        goto out;
    }
    o.nmodels = 0;
    o.models[o.nmodels++] = o.model;
    for (size_t i = 0; i < o.nfallbacks; i++)
        o.models[o.nmodels++] = o.fallbacks[i];
    if (task_text && aw_buf_append_str(&task, task_text))
        goto out;
    if (o.system_text ? aw_buf_append_str(&system, o.system_text) != 0
                      : (o.system && text_or_file(o.system, &system)))
        goto out;
    size_t user_system_len = system.len; /* what a stored session keeps (the contract's prompt is added again) */
    if (o.contract_name) {
        if ((rc = load_contract(o.contract_name, &contract)) != CLI_OK)
            goto out;
        rc = CLI_REJECTED;
        aw_buf prompt;
        aw_buf_init(&prompt, NULL);
        if (aw_contract_prompt(contract, &prompt) ||
            (system.len && aw_buf_append_str(&system, "\n\n")) || aw_buf_append(&system, prompt.data, prompt.len)) {
            aw_buf_free(&prompt);
            goto out;
        }
        aw_buf_free(&prompt);
        aw_buf query;
        aw_buf_init(&query, NULL);
        if (task.len && !o.task_is_query && contract_task(contract, task.data, &query)) {
            aw_buf_free(&query);
            goto out;
        }
        if (query.len) {
            aw_buf_free(&task);
            task = query;
        } else {
            aw_buf_free(&query);
        }
    }
    if (o.schema_path && load_json(o.schema_path, &schema_doc))
        goto out;

    if (!(loop = aw_loop_new(NULL, &err)))
        goto fail;
    ui = cli_run_ui_new(loop, o.quiet, o.verbose);
    if (!ui)
        goto out;
    if (o.on_result)
        cli_run_ui_set_result(ui, o.on_result, o.result_ctx);
    if (cli_events_open(&o, loop, sinks, "agentwire run"))
        goto out;
    o.rec.sinks = sinks;
    o.rec.sink_count = o.nevents;
    if (!(records = aw_records_new(&o.rec, &err)))
        goto fail;
    for (size_t i = 0; i < o.nmodels; i++) {
        aw_provider_config pc = o.pcfg;
        pc.spec = o.models[i];
        if (o.rec.trace_path) {
            pc.trace = aw_records_trace;
            pc.trace_ctx = records;
        }
        if (!(models[i] = aw_provider_new(loop, &pc, &err)))
            goto fail;
    }
    bool all_native = true;
    for (size_t i = 0; i < o.nmodels; i++)
        all_native = all_native && aw_provider_has_native_tools(models[i]) &&
                     strcmp(aw_provider_kind(models[i]), "replay") != 0;
    if (!o.transport_set)
        o.rcfg.transport = all_native ? AW_TRANSPORT_NATIVE : AW_TRANSPORT_XML;
    if (o.tools_path) {
        if (load_json(o.tools_path, &tools_doc))
            goto out;
        char *dir_copy = strdup(o.tools_path);
        aw_tool_source *src = dir_copy ? aw_command_tools_new(loop, aw_json_doc_root(tools_doc), dirname(dir_copy), NULL, &err)
                                       : NULL;
        free(dir_copy);
        if (!src) {
            fprintf(stderr, "agentwire run: %s: %s\n", o.tools_path, err.message);
            goto out;
        }
        box = aw_toolbox_new(loop, NULL);
        if (!box || aw_toolbox_add(box, src))
            goto out;
        cli_run_ui_attach_tools(ui, box);
    }

    aw_run_observer observers[3] = {aw_records_observer(records), cli_run_ui_observer(ui)};
    o.rcfg.models = models;
    o.rcfg.model_count = o.nmodels;
    o.rcfg.tools = box;
    o.rcfg.system_prompt = system.len ? system.data : NULL;
    o.rcfg.task = task.len ? task.data : NULL;
    o.rcfg.final_schema = schema_doc ? aw_json_doc_root(schema_doc) : o.schema_value;
    o.rcfg.contract = contract;
    o.rcfg.observers = observers;
    o.rcfg.observer_count = 2;
    o.rcfg.budgets.max_retries = o.retries;
    o.rcfg.budgets.no_retries = o.retries_set && o.retries == 0;
    if (o.rcfg.interactive) {
        o.rcfg.ask = cli_run_ui_ask;
        o.rcfg.ask_ctx = ui;
    }
    /* resume data, the session's id and the store's observer */
    if (cli_session_configure(&o, &o.rcfg, &observers[2]))
        goto out;
    if (!(run = aw_run_new(loop, &o.rcfg, &err))) {
        if (err.code == AW_EINVAL) {
            fprintf(stderr, "agentwire run: %s\n", err.message);
            rc = CLI_USAGE;
            goto out;
        }
        goto fail;
    }
    if (cli_session_begin(&o, run, system.data, user_system_len))
        goto out;
    rc = cli_run_ui_drive(ui, run);
    aw_error cerr;
    if (aw_records_close(records, &cerr)) {
        fprintf(stderr, "agentwire run: %s\n", cerr.message);
        if (rc == CLI_OK)
            rc = CLI_REJECTED;
    }
    cli_events_report("agentwire run", sinks, o.nevents);
    goto out;

fail:
    fprintf(stderr, "agentwire run: %s\n", err.message);
    rc = CLI_REJECTED;
out:
    aw_run_free(run);
    aw_toolbox_free(box);
    for (size_t i = 0; i < o.nmodels; i++)
        aw_provider_free(models[i]);
    aw_records_free(records);
    for (size_t i = 0; i < o.nevents; i++)
        aw_sink_free(sinks[i]);
    cli_run_ui_free(ui);
    aw_loop_free(loop);
    aw_contract_free(contract);
    aw_json_doc_free(tools_doc);
    aw_json_doc_free(schema_doc);
    aw_buf_free(&task);
    aw_buf_free(&system);
    cli_session_free(&o);
    *po = o;
    return rc;
}
