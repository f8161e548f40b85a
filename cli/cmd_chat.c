/* `agentwire chat --session TOPIC "message"`: one exchange of a stored
 * conversation (seed 004's system). The message goes out as an
 * <llmQuery> carrying the conversation's memory (memory.h: subjects,
 * keywords), the reply must be a strictly valid <llmResponse>, and its
 * analysis is stored for the next exchange. The run itself is a session
 * continued like `run --session` (its history, nonce and turns go on). */
#include <stdio.h>
#include <string.h>

#include "agentwire/contract.h"
#include "agentwire/memory.h"
#include "agentwire/store.h"
#include "cli.h"
#include "cli_run.h"

static const char chat_help[] =
    "Usage: agentwire chat --session TOPIC [options] [MESSAGE]\n"
    "\n"
    "One exchange of a stored conversation with memory: MESSAGE (or stdin)\n"
    "goes to the model as an <llmQuery> with the topic, the number of\n"
    "messages so far, and the subjects and keywords of earlier replies (at\n"
    "most 20 and 50, most recent first); the reply must be a valid\n"
    "<llmResponse> (checked strictly), and its subjects, keywords and summary\n"
    "update are stored for the next exchange. stdout: the reply's response\n"
    "text. 'agentwire sessions show TOPIC' shows what the conversation holds.\n"
    "\n"
    "Options:\n"
    "  --session TOPIC           the conversation (up to 36 letters, digits, '.', '_',\n"
    "                            '-'); made on the first exchange\n"
    "  --contract llmResponse    the reply's contract (the only one a chat takes)\n"
    "  --json                    print the typed reply instead of its text\n"
    "  --store URL               (default sqlite:$XDG_DATA_HOME/agentwire/sessions.db)\n"
    "  --model PROVIDER[:MODEL] and every other option of 'agentwire run'; without\n"
    "                            --model, the options the conversation was started with\n";

typedef struct chat {
    const char *topic;
    const char *message;
    bool json;
    aw_store *store;
    const aw_contract *contract;
    bool stored;
} chat;

static bool topic_ok(const char *t)
{
    size_t n = strlen(t);
    if (!n || n > 36)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return false;
    }
    return true;
}

/* The conversation's memory from its stored exchanges (none yet for a
 * new topic). */
static int load_memory(aw_store *s, const char *topic, aw_memory *mem)
{
    aw_json_doc *session = NULL, *ex = NULL;
    aw_error err;
    int rc = aw_store_session_get(s, topic, &session, &err);
    if (rc == AW_STORE_ENOTFOUND)
        return 0;
    if (rc) {
        fprintf(stderr, "agentwire chat: %s\n", err.message);
        return CLI_REJECTED;
    }
    const aw_json_value *kind = aw_json_get(aw_json_doc_root(session), "kind");
    if (!aw_json_is_string(kind) || strcmp(kind->u.str.ptr, "chat") != 0) {
        fprintf(stderr, "agentwire chat: session %s is a run, not a conversation\n", topic);
        aw_json_doc_free(session);
        return CLI_REJECTED;
    }
    aw_json_doc_free(session);
    if (aw_store_exchanges(s, topic, &ex, &err)) {
        fprintf(stderr, "agentwire chat: %s\n", err.message);
        return CLI_REJECTED;
    }
    const aw_json_value *list = aw_json_doc_root(ex);
    for (size_t i = 0; i < aw_json_count(list) && !rc; i++)
        if (aw_memory_add(mem, aw_json_get(aw_json_at(list, i), "reply"), &err)) {
            fprintf(stderr, "agentwire chat: session %s, exchange %zu: %s\n", topic, i + 1, err.message);
            rc = CLI_REJECTED;
        }
    aw_json_doc_free(ex);
    return rc;
}

/* The reply: checked strictly, stored, printed. */
static int on_result(void *ctx, const aw_run_result *res)
{
    chat *c = ctx;
    if (res->synthesized || !res->json)
        return cli_run_print_result(res);
    aw_contract_options opts = {.strict = true, .extract = true};
    aw_contract_issue *issues = NULL;
    size_t n = 0;
    aw_error err;
    int rc = aw_contract_validate(c->contract, res->content.ptr, res->content.len, &opts, &issues, &n, &err);
    if (rc) {
        fprintf(stderr, "agentwire chat: the reply is not a strictly valid <llmResponse>:\n");
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "  %s:%zu:%zu: %s: %s\n", issues[i].path, issues[i].line, issues[i].column,
                    aw_contract_code_name(issues[i].code), issues[i].message);
        if (!n)
            fprintf(stderr, "  %s\n", err.message);
        aw_free(NULL, issues);
        return CLI_REJECTED;
    }
    if (aw_store_exchange_add(c->store, c->topic, c->message, res->json, &err)) {
        fprintf(stderr, "agentwire chat: the exchange cannot be stored: %s\n", err.message);
        return CLI_REJECTED;
    }
    c->stored = true;
    if (c->json)
        return cli_print_json(res->json);
    const aw_json_value *text = aw_json_get(res->json, "response");
    if (!aw_json_is_string(text))
        return CLI_REJECTED;
    if (cli_write_stdout(text->u.str.ptr, text->u.str.len) || cli_write_stdout("\n", 1))
        return CLI_REJECTED;
    return CLI_OK;
}

static int build_query(aw_store *s, chat *c, aw_buf *out)
{
    aw_memory *mem = aw_memory_new(NULL);
    if (!mem)
        return CLI_REJECTED;
    int rc = load_memory(s, c->topic, mem);
    aw_json_doc *q = NULL;
    aw_contract *query = NULL;
    aw_error err;
    /* each exchange is two messages: the user's and the reply */
    if (!rc && (aw_memory_query(mem, c->topic, (int64_t)aw_memory_exchanges(mem) * 2, c->message, &q) ||
                aw_contract_builtin("llmQuery", NULL, &query, &err)))
        rc = CLI_REJECTED;
    if (!rc && aw_contract_build(query, aw_json_doc_root(q), out, &err)) {
        fprintf(stderr, "agentwire chat: the message does not fit an <llmQuery>: %s\n", err.message);
        rc = CLI_REJECTED;
    }
    aw_contract_free(query);
    aw_json_doc_free(q);
    aw_memory_free(mem);
    return rc;
}

static int take_message(cli_args *a, aw_buf *msg)
{
    if (!a->file || !strcmp(a->file, "-")) {
        if (cli_read_input(NULL, msg))
            return CLI_REJECTED;
    } else if (aw_buf_append_str(msg, a->file)) {
        return CLI_REJECTED;
    }
    while (msg->len && (msg->data[msg->len - 1] == '\n' || msg->data[msg->len - 1] == '\r'))
        msg->data[--msg->len] = 0;
    return msg->len ? CLI_OK : cli_usage_error(a, "no message given (an argument, or stdin)");
}

int cli_chat(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv, "chat");
    /* --json is chat's own: taken out before the run's options are read */
    chat c = {0};
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            break;
        } else if (!strcmp(argv[i], "--json")) {
            c.json = true;
            for (int k = i; k + 1 < argc; k++)
                argv[k] = argv[k + 1];
            a.argc = --argc;
            i--;
        }
    run_opts o;
    memset(&o, 0, sizeof o);
    o.help = chat_help;
    o.session_kind = "chat";
    int rc = cli_run_parse(&a, &o);
    if (rc >= 0)
        return rc;
    if (!o.session)
        return cli_usage_error(&a, "which conversation? (--session TOPIC)");
    if (!topic_ok(o.session))
        return cli_usage_error(&a, "a topic is up to 36 letters, digits, '.', '_' or '-', not '%s'", o.session);
    if (o.no_store)
        return cli_usage_error(&a, "--no-store: a conversation lives in the store");
    if (o.contract_name && strcmp(o.contract_name, "llmResponse") != 0)
        return cli_usage_error(&a, "a chat's replies are <llmResponse> documents (--contract llmResponse)");
    o.contract_name = "llmResponse";
    o.task_is_query = true;
    c.topic = o.session;

    aw_buf msg, query;
    aw_buf_init(&msg, NULL);
    aw_buf_init(&query, NULL);
    aw_contract *contract = NULL;
    aw_error err;
    rc = take_message(&a, &msg);
    c.message = msg.data;
    if (rc == CLI_OK && !(c.store = cli_store_open(o.store_url, false)))
        rc = CLI_REJECTED;
    if (rc == CLI_OK)
        rc = build_query(c.store, &c, &query);
    if (rc == CLI_OK && aw_contract_builtin("llmResponse", NULL, &contract, &err))
        rc = CLI_REJECTED;
    if (rc == CLI_OK) {
        c.contract = contract;
        o.on_result = on_result;
        o.result_ctx = &c;
        rc = cli_run_go(&a, &o, query.data);
    }
    aw_contract_free(contract);
    aw_store_close(c.store);
    aw_buf_free(&msg);
    aw_buf_free(&query);
    return rc;
}
