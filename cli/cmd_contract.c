/* agentwire contract validate | parse | build | prompt */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agentwire/contract.h"
#include "cli.h"

static const char contract_help[] =
    "Usage: agentwire contract COMMAND [--contract NAME|FILE] [options] [FILE]\n"
    "\n"
    "Structured XML queries and replies checked against a contract: the\n"
    "built-in llmQuery or llmResponse (the default), or a contract file (see\n"
    "docs/contracts.md). Without FILE, or with -, stdin is read.\n"
    "\n"
    "Commands:\n"
    "  validate [--strict] [--extract] [FILE]\n"
    "        exit 0 when FILE conforms; else list every problem as\n"
    "        FILE:line:col: code: /path: message, and exit 1.\n"
    "        --strict   reject unknown elements and attributes and stray text\n"
    "        --extract  take the first complete <root> document out of\n"
    "                   surrounding prose or a fenced block\n"
    "  parse [--strict] [--extract] [FILE]\n"
    "        validate, then print the typed JSON (repeatable children are\n"
    "        always arrays; numbers and booleans typed; text trimmed)\n"
    "  build [FILE]\n"
    "        JSON in the shape parse prints -> XML in the seed's layout\n"
    "  prompt\n"
    "        the system-prompt text that teaches a model the format\n"
    "\n"
    "  --contract NAME|FILE  llmQuery, llmResponse, or a contract JSON file\n"
    "  -h, --help            this text\n";

/* --contract NAME|FILE: a built-in contract by name, else a file. A name
 * that is neither is a usage error that lists the built-in ones (the
 * library's message names them). */
static int load_contract(const cli_args *a, const char *spec, aw_contract **out) {
    aw_error err;
    if (aw_contract_builtin(spec, NULL, out, &err) == 0) return CLI_OK;
    if (access(spec, F_OK) != 0 && strcmp(spec, "-") != 0)
        return cli_usage_error(a, "--contract '%s' is not a file (%s), and %s", spec, strerror(errno), err.message);
    aw_buf text;
    aw_buf_init(&text, NULL);
    if (cli_read_input(spec, &text)) {
        aw_buf_free(&text);
        return CLI_REJECTED;
    }
    int rc = aw_contract_load(text.data, text.len, NULL, out, &err);
    aw_buf_free(&text);
    if (rc) {
        cli_report(spec, &err);
        return CLI_REJECTED;
    }
    return CLI_OK;
}

/* After a failure without --extract: when the reply does not start with
 * markup but holds some (a ```xml fence, prose around the document), say
 * that --extract takes the document out. */
static void hint_extract(const char *name, const aw_buf *in) {
    size_t i = 0;
    while (i < in->len && (in->data[i] == ' ' || in->data[i] == '\t' || in->data[i] == '\n' || in->data[i] == '\r')) i++;
    if (i == in->len || in->data[i] == '<' || !memchr(in->data + i, '<', in->len - i)) return;
    bool fenced = false;
    for (size_t k = 0; k + 3 <= in->len && !fenced; k++) fenced = memcmp(in->data + k, "```", 3) == 0;
    const char *what = fenced ? "in a ``` fence" : "among other text";
    fprintf(stderr, "%s: hint: the XML is %s; --extract takes the document out of it\n", name, what);
}

typedef struct opts {
    const char *contract;
    aw_contract_options co;
} opts;

static int parse_opts(cli_args *a, opts *o, int verb_takes_flags, int verb_takes_file) {
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(contract_help, stdout);
            return CLI_OK;
        } else if (!strcmp(opt, "--contract")) {
            if (!(o->contract = cli_opt_value(a, opt))) return CLI_USAGE;
        } else if (verb_takes_flags && !strcmp(opt, "--strict")) {
            o->co.strict = true;
        } else if (verb_takes_flags && !strcmp(opt, "--extract")) {
            o->co.extract = true;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a)) return CLI_USAGE;
    if (!verb_takes_file && a->nfiles) return cli_usage_error(a, "takes no FILE");
    return -1;
}

static int run(cli_args *a, const char *verb) {
    opts o = {"llmResponse", {false, false, 0, 0, 0, NULL}};
    int is_check = !strcmp(verb, "validate") || !strcmp(verb, "parse");
    int rc = parse_opts(a, &o, is_check, strcmp(verb, "prompt") != 0);
    if (rc >= 0) return rc;
    aw_contract *c = NULL;
    if ((rc = load_contract(a, o.contract, &c))) return rc;
    aw_buf in, out;
    aw_buf_init(&in, NULL);
    aw_buf_init(&out, NULL);
    aw_error err;
    const char *name = cli_input_name(a->file);
    int status = CLI_OK;
    if (!strcmp(verb, "prompt")) {
        if (aw_contract_prompt(c, &out) || aw_buf_putc(&out, '\n')) status = CLI_REJECTED;
    } else if (cli_read_input(a->file, &in)) {
        status = CLI_REJECTED;
    } else if (!strcmp(verb, "validate")) {
        aw_contract_issue *issues = NULL;
        size_t n = 0;
        rc = aw_contract_validate(c, in.data, in.len, &o.co, &issues, &n, &err);
        if (rc == AW_EVALID) {
            for (size_t i = 0; i < n; i++)
                fprintf(stderr, "%s:%zu:%zu: %s: %s%s%s\n", name, issues[i].line, issues[i].column,
                        aw_contract_code_name(issues[i].code), issues[i].path, issues[i].path[0] ? ": " : "",
                        issues[i].message);
            status = CLI_REJECTED;
        } else if (rc) {
            cli_report(name, &err);
            status = CLI_REJECTED;
        }
        if (rc && !o.co.extract) hint_extract(name, &in);
        aw_free(NULL, issues);
    } else if (!strcmp(verb, "parse")) {
        aw_json_doc *doc = NULL;
        if (aw_contract_parse(c, in.data, in.len, &o.co, &doc, &err)) {
            cli_report(name, &err);
            if (!o.co.extract) hint_extract(name, &in);
            status = CLI_REJECTED;
        } else if (aw_json_write(aw_json_doc_root(doc), &cli_json_records, &out, &err) || aw_buf_putc(&out, '\n')) {
            status = CLI_REJECTED;
        }
        aw_json_doc_free(doc);
    } else { /* build */
        aw_json_doc *doc = NULL;
        if (aw_json_parse(in.data, in.len, NULL, &doc, &err) ||
            aw_contract_build(c, aw_json_doc_root(doc), &out, &err) || aw_buf_putc(&out, '\n')) {
            cli_report(name, &err);
            status = CLI_REJECTED;
        }
        aw_json_doc_free(doc);
    }
    if (status == CLI_OK && cli_write_stdout(out.data, out.len)) status = CLI_REJECTED;
    aw_buf_free(&in);
    aw_buf_free(&out);
    aw_contract_free(c);
    return status;
}

static int contract_validate(cli_args *a) { return run(a, "validate"); }
static int contract_parse(cli_args *a) { return run(a, "parse"); }
static int contract_build(cli_args *a) { return run(a, "build"); }
static int contract_prompt(cli_args *a) { return run(a, "prompt"); }

int cli_contract(int argc, char **argv) {
    static const cli_command commands[] = {{"validate", contract_validate},
                                           {"parse", contract_parse},
                                           {"build", contract_build},
                                           {"prompt", contract_prompt}};
    return cli_dispatch("contract", contract_help, commands, sizeof commands / sizeof commands[0], argc, argv);
}
