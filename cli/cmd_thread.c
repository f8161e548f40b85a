/* agentwire thread encode | decode */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char thread_help[] =
    "Usage: agentwire thread COMMAND [options] [FILE]\n"
    "\n"
    "Agent events <-> <thread> XML (the reference serializer's format, always\n"
    "well-formed). Without FILE, or with -, stdin is read.\n"
    "\n"
    "Commands:\n"
    "  encode [--prefill TEXT] [--strip-ansi] [--strict] [FILE]\n"
    "        events (JSON lines, or one JSON array) -> <thread> XML, written\n"
    "        as it is produced (on an error, what came before stays written).\n"
    "        Events of a type the format does not know are not written; each\n"
    "        such type is named once on stderr, with its line.\n"
    "        --prefill TEXT  append a newline and TEXT after </thread>\n"
    "                        (assistantPrefill / responsePrefix)\n"
    "        --strip-ansi    remove ANSI colour/OSC sequences from bodies\n"
    "        --strict        reject events of an unknown type (exit 1)\n"
    "  decode [FILE]\n"
    "        <thread> XML -> events as JSON lines. The format carries no\n"
    "        timestamp (0) and no toolCallId: call_id is used when present,\n"
    "        else calls and results are paired by name and position.\n"
    "\n"
    "  -h, --help  this text\n";

/* What `thread encode` keeps while it runs: the types of unknown events
 * reported so far (each is reported once), and --strict. */
typedef struct encode_run {
    const char *name; /* the input's name in messages */
    bool strict;
    char **types;
    size_t ntypes;
    int out_failed;
} encode_run;

static int write_block(void *ctx, const char *data, size_t n) {
    encode_run *run = ctx;
    if (cli_write_stdout(data, n)) {
        run->out_failed = 1;
        return -1;
    }
    return 0;
}

static bool seen_type(encode_run *run, aw_text type) {
    for (size_t i = 0; i < run->ntypes; i++)
        if (strlen(run->types[i]) == type.len && memcmp(run->types[i], type.ptr, type.len) == 0) return true;
    char **types = realloc(run->types, (run->ntypes + 1) * sizeof *types);
    char *copy = malloc(type.len + 1);
    if (types) run->types = types;
    if (!types || !copy) {
        free(copy);
        return false; /* out of memory: report it again rather than not at all */
    }
    memcpy(copy, type.ptr, type.len);
    copy[type.len] = '\0';
    run->types[run->ntypes++] = copy;
    return false;
}

/* An event of a type the thread format does not know: an error with
 * --strict (the library reports it), else a warning once per type. */
static int unknown_event(void *ctx, const aw_event *ev, const aw_error *where) {
    encode_run *run = ctx;
    if (run->strict) return 1;
    if (seen_type(run, ev->type)) return 0;
    fprintf(stderr, "%s:%zu:%zu: warning: %s; events of this type are not written (--strict rejects them)\n",
            run->name, where->line, where->column, where->message);
    return 0;
}

static int thread_encode(cli_args *a) {
    aw_thread_options o = {NULL, 0, false, NULL};
    encode_run run = {0};
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
        } else if (strcmp(opt, "--strict") == 0) {
            run.strict = true;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a)) return CLI_USAGE;
    cli_input in;
    if (cli_input_open(a->file, &in)) return CLI_REJECTED;
    /* Streamed: the input is read in place (mapped when it is a file) and
     * the thread written as it is produced, so memory holds the input, one
     * line's events and one block of output, not the whole thread. */
    run.name = cli_input_name(a->file);
    aw_thread_stream_options so = {write_block, &run, unknown_event, &run};
    aw_error err;
    int status = CLI_OK;
    int rc = aw_thread_encode_json_stream(in.data, in.len, NULL, &o, &so, &err);
    if (!rc && write_block(&run, "\n", 1)) rc = AW_ESTOP;
    if (rc && !run.out_failed) cli_report(run.name, &err);
    if (rc) status = CLI_REJECTED;
    for (size_t i = 0; i < run.ntypes; i++) free(run.types[i]);
    free(run.types);
    cli_input_close(&in);
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
        if (aw_json_write(aw_json_at(events, i), &cli_json_records, &out, &err) || aw_buf_putc(&out, '\n')) {
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
