/* agentwire messages encode | toolcalls | detect */
#include <string.h>

#include "cli.h"

static const char messages_help[] =
    "Usage: agentwire messages COMMAND [options] [FILE]\n"
    "\n"
    "Chat messages (OpenAI, Anthropic, LangChain shapes) as one prompt, and\n"
    "tool calls written in a model's text. Without FILE, or with -, stdin is read.\n"
    "\n"
    "Commands:\n"
    "  encode [--encoding xml|text] [--format F] [--strip-ansi] [FILE]\n"
    "        a JSON array of messages (or an Anthropic request object with\n"
    "        \"system\" and \"messages\") -> <thread> XML or [User] text\n"
    "  toolcalls [FILE]\n"
    "        text -> {\"tool_calls\":[...],\"text\":\"...\",\"errors\":[...]} from the\n"
    "        fenced ```json blocks holding {\"tool_calls\": [...]}\n"
    "  detect [FILE]\n"
    "        print the shape of the messages: openai, anthropic or langchain\n"
    "\n"
    "Run 'agentwire messages COMMAND --help' for the details of a command.\n"
    "  -h, --help  this text\n";

static const char encode_help[] =
    "Usage: agentwire messages encode [--encoding xml|text] [--format F] [--strip-ansi] [FILE]\n"
    "\n"
    "Encode chat messages as the <thread> XML agent events use (iteration=\"0\",\n"
    "tool_input/tool_output linked by call_id), or as the plain text form\n"
    "([System], [User], [Assistant], [Tool Result] blocks; an assistant's tool\n"
    "calls as a fenced ```json block that 'messages toolcalls' reads back).\n"
    "A single user message that already is a <thread> is printed unchanged;\n"
    "such a message among others has its events spliced in, ids renumbered\n"
    "(one that does not decode is text). Failed tool results are\n"
    "status=\"error\" ([Tool Result: error]); images and files are described,\n"
    "thinking blocks left out.\n"
    "\n"
    "  --encoding xml|text  output form (default xml)\n"
    "  --format F           openai, anthropic, langchain, or auto (default:\n"
    "                       detected from the messages)\n"
    "  --strip-ansi         remove ANSI colour/OSC sequences from XML bodies\n"
    "  -h, --help           this text\n"
    "\n"
    "Errors name where the message starts, its index in the array (from 0,\n"
    "as content[0] and tool_calls[0] count too) and the field:\n"
    "FILE:9:3: message 3: 'role' must be a string.\n";

static const char toolcalls_help[] =
    "Usage: agentwire messages toolcalls [FILE]\n"
    "\n"
    "Read tool calls from a model's text: every fenced ```json block holding\n"
    "{\"tool_calls\": [{\"name\", \"args\"?, \"id\"?}]} gives calls (args default {},\n"
    "id default call_<index>; later duplicates of an id dropped) and is removed\n"
    "from the text. Prints one line of JSON:\n"
    "  {\"tool_calls\":[{\"id\",\"name\",\"args\"}],\"text\":\"...\",\"errors\":[...]}\n"
    "A block that does not parse stays in the text and is reported in \"errors\"\n"
    "and on stderr as FILE:line:col: message; the exit status is still 0.\n"
    "\n"
    "  -h, --help  this text\n";

static const char detect_help[] =
    "Usage: agentwire messages detect [FILE]\n"
    "\n"
    "Print the shape of a JSON array of messages: openai, anthropic or\n"
    "langchain. Exit 1 when it cannot be told (e.g. an empty array).\n"
    "\n"
    "  -h, --help  this text\n";

/* Output blocks go straight to stdout; a failed write is reported once. */
static int write_block(void *ctx, const char *p, size_t n) {
    int *failed = ctx;
    if (cli_write_stdout(p, n)) *failed = 1;
    return *failed;
}

static int messages_encode(cli_args *a) {
    aw_messages_options o = {AW_MESSAGES_AUTO, AW_MESSAGES_XML, false, NULL};
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(encode_help, stdout);
            return CLI_OK;
        } else if (strcmp(opt, "--encoding") == 0) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            if (strcmp(v, "xml") == 0) o.encoding = AW_MESSAGES_XML;
            else if (strcmp(v, "text") == 0) o.encoding = AW_MESSAGES_TEXT;
            else return cli_usage_error(a, "--encoding is xml or text, not '%s'", v);
        } else if (strcmp(opt, "--format") == 0) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            if (strcmp(v, "auto") == 0) o.format = AW_MESSAGES_AUTO;
            else if (strcmp(v, "openai") == 0) o.format = AW_MESSAGES_OPENAI;
            else if (strcmp(v, "anthropic") == 0) o.format = AW_MESSAGES_ANTHROPIC;
            else if (strcmp(v, "langchain") == 0) o.format = AW_MESSAGES_LANGCHAIN;
            else return cli_usage_error(a, "--format is openai, anthropic, langchain or auto, not '%s'", v);
        } else if (strcmp(opt, "--strip-ansi") == 0) {
            o.strip_ansi = true;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a)) return CLI_USAGE;
    /* Streamed: the input is read in place (mapped when it is a file), one
     * message at a time, and the output written as it is produced. */
    cli_input in;
    if (cli_input_open(a->file, &in)) return CLI_REJECTED;
    aw_error err;
    int failed = 0, status = CLI_OK;
    int rc = aw_messages_encode_json(in.data, in.len, &o, write_block, &failed, &err);
    if (!rc && write_block(&failed, "\n", 1)) rc = AW_ESTOP;
    if (rc && !failed) cli_report(cli_input_name(a->file), &err);
    if (rc) status = CLI_REJECTED;
    cli_input_close(&in);
    return status;
}

static int messages_toolcalls(cli_args *a) {
    int rc = cli_no_options(a, toolcalls_help);
    if (rc >= 0) return rc;
    aw_buf in;
    aw_buf_init(&in, NULL);
    if (cli_read_input(a->file, &in)) {
        aw_buf_free(&in);
        return CLI_REJECTED;
    }
    aw_json_doc *doc = NULL;
    aw_error err;
    rc = aw_messages_parse_tool_calls(in.data, in.len, NULL, &doc, &err);
    aw_buf_free(&in);
    if (rc) {
        cli_report(cli_input_name(a->file), &err);
        return CLI_REJECTED;
    }
    /* problems are reported, but the text holding them is the answer */
    const aw_json_value *errors = aw_json_get(aw_json_doc_root(doc), "errors");
    for (size_t i = 0; i < aw_json_count(errors); i++) {
        const aw_json_value *e = aw_json_at(errors, i);
        const aw_json_value *msg = aw_json_get(e, "message");
        aw_error at;
        aw_error_clear(&at);
        at.line = (size_t)aw_json_get(e, "line")->u.num.i;
        at.column = (size_t)aw_json_get(e, "column")->u.num.i;
        snprintf(at.message, sizeof at.message, "%.*s", (int)msg->u.str.len, msg->u.str.ptr);
        cli_report(cli_input_name(a->file), &at);
    }
    int status = cli_print_json(aw_json_doc_root(doc));
    aw_json_doc_free(doc);
    return status;
}

static int messages_detect(cli_args *a) {
    static const char *const names[] = {NULL, "openai", "anthropic", "langchain"};
    int rc = cli_no_options(a, detect_help);
    if (rc >= 0) return rc;
    aw_json_doc *doc;
    if (cli_read_json(a->file, NULL, &doc)) return CLI_REJECTED;
    aw_messages_format f = aw_messages_detect(aw_json_doc_root(doc));
    aw_json_doc_free(doc);
    if (f == AW_MESSAGES_AUTO) {
        fprintf(stderr, "%s: cannot tell the shape of these messages\n", cli_input_name(a->file));
        return CLI_REJECTED;
    }
    if (cli_write_stdout(names[f], strlen(names[f])) || cli_write_stdout("\n", 1)) return CLI_REJECTED;
    return CLI_OK;
}

int cli_messages(int argc, char **argv) {
    static const cli_command commands[] = {
        {"encode", messages_encode}, {"toolcalls", messages_toolcalls}, {"detect", messages_detect}};
    return cli_dispatch("messages", messages_help, commands, sizeof commands / sizeof commands[0], argc, argv);
}
