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
    "  --recover-calls auto|off|DIALECT,...   native and xml-final transports: tool\n"
    "                            calls a model wrote in its own dialect (Hermes, Qwen3-Coder,\n"
    "                            Llama, Mistral, DeepSeek, GLM, Kimi, MiniMax, gpt-oss...) that\n"
    "                            its server left in the text are run like native ones (auto)\n"
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
    "  --visible                 the model's text on stderr as it streams (no call markup)\n"
    "  --quiet                   errors only on stderr\n"
    "  --verbose                 also the log's details\n";

/* --recover-calls: "auto" (every dialect), "off", or names with commas;
 * the AW_DIALECT_* flags, or -1 when a name is unknown. */
long cli_run_recover_calls(const char *v)
{
    if (!v || !strcmp(v, "auto"))
        return AW_DIALECT_AUTO;
    if (!strcmp(v, "off"))
        return 0;
    long flags = 0;
    while (*v) {
        const char *comma = strchr(v, ',');
        size_t n = comma ? (size_t)(comma - v) : strlen(v);
        unsigned f = aw_dialect_flag(v, n);
        if (!f)
            return -1;
        flags |= f;
        v += n + (comma ? 1 : 0);
    }
    return flags;
}

/* "500ms", "30s", "2m", "1h", or plain milliseconds; -1 when malformed. */
int64_t cli_parse_duration(const char *s)
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
    int64_t ms = cli_parse_duration(v);
    if (ms < 0) {
        cli_usage_error(a, "option '%s' wants a duration such as 500ms, 30s or 2m, not '%s'", opt, v);
        return -1;
    }
    *out = ms;
    return 0;
}

int cli_run_parse(cli_args *a, run_opts *o)
{
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        const char *v = NULL;
        long n;
        cli_agent_note(&o->agent, opt); /* the options that win over an agent file's keys */
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
            fputs(cli_mcp_help, stdout);
            fputs(cli_agent_help, stdout);
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
        } else if (!strcmp(opt, "--recover-calls")) {
            VALUE();
            if (cli_run_recover_calls(v) < 0)
                return cli_usage_error(a, "--recover-calls is auto, off or a list of dialects (%s), not '%s'",
                                       "hermes, qwen3_coder, llama3, pythonic, mistral, deepseek, glm45, kimi_k2, "
                                       "minimax, function_calls, harmony, granite, fenced",
                                       v);
            o->recover_calls = v;
        } else if (!strcmp(opt, "--visible")) {
            o->visible = true;
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
        } else if ((n = cli_mcp_option(a, opt, &o->mcp)) != 0) {
            if (n < 0)
                return CLI_USAGE;
        } else if ((n = cli_events_option(a, o, opt)) != -1) {
            if (n > 0)
                return (int)n; /* an events option (cli_events.c), or a usage error in one */
        } else if ((n = cli_session_option(a, o, opt)) != -1) {
            if (n > 0)
                return (int)n; /* a session option (cli_session.c), or a usage error in one */
        } else if ((n = cli_agent_option(a, opt, &o->agent)) != 0) {
            if (n < 0)
                return CLI_USAGE;
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
    aw_error err;
    aw_loop *loop = aw_loop_new(NULL, &err);
    if (!loop) {
        fprintf(stderr, "agentwire run: %s\n", err.message);
        return CLI_REJECTED;
    }
    cli_run_ui *ui = cli_run_ui_new(loop, po->quiet, po->verbose);
    cli_run_job *job = NULL;
    int rc = CLI_REJECTED;
    if (ui) {
        if (po->on_result)
            cli_run_ui_set_result(ui, po->on_result, po->result_ctx);
        if (po->visible)
            cli_run_ui_show_visible(ui);
        /* everything the run needs (cli_run_job.c), then the terminal drives it */
        cli_run_env env = {.loop = loop, .ui = ui, .who = "agentwire run"};
        if ((rc = cli_run_job_new(ap, po, task_text, &env, &job)) < 0)
            rc = cli_run_job_end(job, cli_run_ui_drive(ui, cli_run_job_run(job)));
    }
    cli_run_job_free(job);
    cli_run_ui_free(ui);
    aw_loop_free(loop);
    return rc;
}
