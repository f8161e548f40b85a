/* agentwire json validate | format | lines | repair */
#include <string.h>

#include "cli.h"

static const char json_help[] =
    "Usage: agentwire json COMMAND [options] [FILE]\n"
    "\n"
    "Strict JSON (RFC 8259) reading and JSON.stringify-exact writing.\n"
    "FILE is read whole; without FILE, or with -, stdin is read.\n"
    "\n"
    "Commands:\n"
    "  validate [FILE]             exit 0 when FILE is one valid JSON text; else print\n"
    "                              FILE:line:col: message and exit 1\n"
    "  format [--indent N] [FILE]  print JSON.stringify(JSON.parse(input), null, N)\n"
    "                              (N from 0 to 10, default 0: compact) and a newline\n"
    "  lines [--compact] [FILE]    check JSON lines: every bad line is reported as\n"
    "                              FILE:line:col: message; exit 1 when any is bad.\n"
    "                              --compact prints each good line as JSON.stringify\n"
    "                              does. Blank lines are skipped; CRLF is accepted.\n"
    "  repair [--quiet] [FILE]     turn almost-JSON from a model into strict JSON and\n"
    "                              name each repair on stderr (see 'json repair -h')\n"
    "\n"
    "Options for every command:\n"
    "  --max-depth N   nesting limit (default 1000)\n"
    "  --allow-bom     accept a leading UTF-8 byte order mark\n"
    "  -h, --help      this text\n";

typedef struct json_opts {
    aw_json_read_options read;
    int indent;
    bool compact;
} json_opts;

/* Parse the options shared by the json commands; returns -1 on success
 * (keep going), or an exit status. */
static int parse_opts(cli_args *a, json_opts *o, bool want_indent, bool want_compact) {
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(json_help, stdout);
            return CLI_OK;
        } else if (want_indent && strcmp(opt, "--indent") == 0) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            long n = cli_opt_long(opt, v, 0, 10);
            if (n < 0) return CLI_USAGE;
            o->indent = (int)n;
        } else if (want_compact && strcmp(opt, "--compact") == 0) {
            o->compact = true;
        } else if (strcmp(opt, "--max-depth") == 0) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            long n = cli_opt_long(opt, v, 1, 100000000);
            if (n < 0) return CLI_USAGE;
            o->read.max_depth = (size_t)n;
        } else if (strcmp(opt, "--allow-bom") == 0) {
            o->read.allow_bom = true;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a)) return CLI_USAGE;
    return -1;
}

static int json_validate_or_format(cli_args *a, bool format) {
    json_opts o = {{0}, 0, false};
    int rc = parse_opts(a, &o, format, false);
    if (rc >= 0) return rc;
    aw_json_doc *doc;
    if (cli_read_json(a->file, &o.read, &doc)) return CLI_REJECTED;
    int status = CLI_OK;
    if (format) {
        aw_buf out;
        aw_buf_init(&out, NULL);
        aw_error err;
        aw_json_write_options wo = {.indent = o.indent};
        if (aw_json_write(aw_json_doc_root(doc), &wo, &out, &err) || aw_buf_putc(&out, '\n')) {
            cli_report(cli_input_name(a->file), &err);
            status = CLI_REJECTED;
        } else if (cli_write_stdout(out.data, out.len)) {
            status = CLI_REJECTED;
        }
        aw_buf_free(&out);
    }
    aw_json_doc_free(doc);
    return status;
}

typedef struct lines_ctx {
    aw_jsonl_reader *reader;
    const char *name;
    bool compact;
    size_t bad;
    aw_buf out;
    int write_failed;
} lines_ctx;

static int on_line(void *vctx, size_t line, const aw_json_value *root, const aw_error *err) {
    lines_ctx *c = vctx;
    (void)line;
    if (!root) {
        c->bad++;
        cli_report(c->name, err);
        return 0;
    }
    if (c->compact) {
        aw_buf_clear(&c->out);
        aw_error werr;
        if (aw_json_write(root, NULL, &c->out, &werr) || aw_buf_putc(&c->out, '\n') ||
            cli_write_stdout(c->out.data, c->out.len)) {
            c->write_failed = 1;
            return 1;
        }
    }
    return 0;
}

static int feed_chunk(void *vctx, const char *chunk, size_t len) {
    lines_ctx *c = vctx;
    aw_error err;
    int rc = aw_jsonl_feed(c->reader, chunk, len, on_line, c, &err);
    if (rc && !c->write_failed) cli_report(c->name, &err);
    return rc;
}

static int json_lines(cli_args *a) {
    json_opts o = {{0}, 0, false};
    int rc = parse_opts(a, &o, false, true);
    if (rc >= 0) return rc;
    lines_ctx c = {NULL, cli_input_name(a->file), o.compact, 0, {0}, 0};
    aw_buf_init(&c.out, NULL);
    c.reader = aw_jsonl_reader_new(&o.read);
    if (!c.reader) {
        fprintf(stderr, "agentwire: out of memory\n");
        return CLI_REJECTED;
    }
    rc = cli_stream_input(a->file, 1 << 16, feed_chunk, &c);
    if (rc == 0) {
        aw_error err;
        rc = aw_jsonl_finish(c.reader, on_line, &c, &err);
        if (rc && !c.write_failed) cli_report(c.name, &err);
    }
    size_t lines = aw_jsonl_line_count(c.reader);
    aw_jsonl_reader_free(c.reader);
    aw_buf_free(&c.out);
    if (rc) return CLI_REJECTED;
    if (c.bad) {
        fprintf(stderr, "%s: %zu of %zu lines are not valid JSON\n", c.name, c.bad, lines);
        return CLI_REJECTED;
    }
    return CLI_OK;
}

static int json_validate(cli_args *a) { return json_validate_or_format(a, false); }
static int json_format(cli_args *a) { return json_validate_or_format(a, true); }

int cli_json(int argc, char **argv) {
    static const cli_command commands[] = {
        {"validate", json_validate}, {"format", json_format}, {"lines", json_lines}, {"repair", cli_json_repair}};
    return cli_dispatch("json", json_help, commands, sizeof commands / sizeof commands[0], argc, argv);
}
