/* agentwire thread encode | decode */
#include <string.h>

#include "cli.h"

static const char thread_help[] =
    "Usage: agentwire thread COMMAND [options] [FILE]\n"
    "\n"
    "Agent events <-> <thread> XML (the reference serializer's format, always\n"
    "well-formed). Without FILE, or with -, stdin is read.\n"
    "\n"
    "Commands:\n"
    "  encode [--prefill TEXT] [--strip-ansi] [FILE]\n"
    "        events (JSON lines, or one JSON array) -> <thread> XML.\n"
    "        --prefill TEXT  append a newline and TEXT after </thread>\n"
    "                        (assistantPrefill / responsePrefix)\n"
    "        --strip-ansi    remove ANSI colour/OSC sequences from bodies\n"
    "  decode [FILE]\n"
    "        <thread> XML -> events as JSON lines. The format carries no\n"
    "        timestamp (0) and no toolCallId: call_id is used when present,\n"
    "        else calls and results are paired by name and position.\n"
    "\n"
    "  -h, --help  this text\n";

static int thread_encode(cli_args *a) {
    aw_thread_options o = {NULL, 0, false, NULL};
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(thread_help, stdout);
            return CLI_OK;
        } else if (strcmp(opt, "--prefill") == 0) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            o.prefill = v;
            o.prefill_len = strlen(v);
        } else if (strcmp(opt, "--strip-ansi") == 0) {
            o.strip_ansi = true;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a)) return CLI_USAGE;
    aw_buf in;
    aw_buf_init(&in, NULL);
    if (cli_read_input(a->file, &in)) {
        aw_buf_free(&in);
        return CLI_REJECTED;
    }
    /* JSON lines are encoded as they are read: memory for one line at a
     * time, not for every event of the input */
    aw_error err;
    aw_buf out;
    aw_buf_init(&out, NULL);
    int status = CLI_OK;
    int rc = aw_thread_encode_json(in.data, in.len, NULL, &o, &out, &err);
    if (!rc && aw_buf_putc(&out, '\n')) {
        aw_error_clear(&err);
        rc = err.code = AW_ENOMEM;
    }
    if (rc) {
        cli_report(cli_input_name(a->file), &err);
        status = CLI_REJECTED;
    } else if (cli_write_stdout(out.data, out.len)) {
        status = CLI_REJECTED;
    }
    aw_buf_free(&out);
    aw_buf_free(&in);
    return status;
}

static int thread_decode(cli_args *a) {
    int usage = cli_no_options(a, thread_help);
    if (usage >= 0) return usage;
    aw_buf in;
    aw_buf_init(&in, NULL);
    if (cli_read_input(a->file, &in)) {
        aw_buf_free(&in);
        return CLI_REJECTED;
    }
    aw_json_doc *doc = NULL;
    aw_error err;
    int status = CLI_OK;
    if (aw_thread_decode(in.data, in.len, NULL, &doc, &err)) {
        cli_report(cli_input_name(a->file), &err);
        aw_buf_free(&in);
        return CLI_REJECTED;
    }
    aw_buf out;
    aw_buf_init(&out, NULL);
    const aw_json_value *events = aw_json_doc_root(doc);
    for (size_t i = 0; i < aw_json_count(events) && status == CLI_OK; i++) {
        if (aw_json_write(aw_json_at(events, i), NULL, &out, &err) || aw_buf_putc(&out, '\n')) {
            cli_report(cli_input_name(a->file), &err);
            status = CLI_REJECTED;
        }
    }
    if (status == CLI_OK && cli_write_stdout(out.data, out.len)) status = CLI_REJECTED;
    aw_buf_free(&out);
    aw_json_doc_free(doc);
    aw_buf_free(&in);
    return status;
}

int cli_thread(int argc, char **argv) {
    static const cli_command commands[] = {{"encode", thread_encode}, {"decode", thread_decode}};
    return cli_dispatch("thread", thread_help, commands, sizeof commands / sizeof commands[0], argc, argv);
}
