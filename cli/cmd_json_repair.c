/* agentwire json repair [--quiet] [FILE]
 *
 * Called by cli_json() for `json repair`: prints the repaired JSON and a
 * newline on stdout, and one line per repair step on stderr
 * ("repaired: single_quotes"), in the order of enum aw_json_repair_step.
 * Valid JSON is printed as it was, with no step lines. When no value can be
 * recovered: FILE:line:col: message on stderr, exit 1. */
#include <string.h>

#include "cli.h"

static const char repair_help[] =
    "Usage: agentwire json repair [--quiet] [FILE]\n"
    "\n"
    "Repair almost-JSON as language models write it and print valid JSON and a\n"
    "newline. Valid JSON is printed unchanged; anything else is rewritten compact.\n"
    "FILE is read whole; without FILE, or with -, stdin is read.\n"
    "\n"
    "Repairs (each applied one is named on stderr as \"repaired: NAME\"):\n"
    "  code_fence        ```json ... ``` around the value\n"
    "  surrounding_text  prose before or after the value, stray bytes between tokens\n"
    "  ellipsis          ... or \xE2\x80\xA6 standing for more items\n"
    "  single_quotes     'single', `back` or \xE2\x80\x9C" "curly\xE2\x80\x9D quoted strings\n"
    "  unquoted_keys     {key: 1}, and bare words as values: {\"a\": ok}\n"
    "  trailing_comma    [1, 2,] and other extra commas\n"
    "  missing_comma     [1 2], {\"a\": 1 \"b\": 2}\n"
    "  comments          // and /* */ comments\n"
    "  python_literals   True, False, None, undefined, NaN, Infinity; numbers such as\n"
    "                    01, +1, .5, 1., 1e, 0x1F\n"
    "  control_chars     raw newlines, tabs and control characters in strings;\n"
    "                    bytes that are not UTF-8 (U+FFFD per maximal subpart)\n"
    "  invalid_escapes   \\q, \\x41, a lone backslash (kept, escaped), \\' (a quote),\n"
    "                    and quotes inside a string that were not escaped\n"
    "  unclosed          strings, arrays and objects left open at the end\n"
    "  missing_colon     {\"a\" 1}\n"
    "  missing_value     {\"a\":} and {\"a\"} (the value becomes null)\n"
    "\n"
    "Exit status: 0 when a value was printed, 1 when none could be recovered\n"
    "(FILE:line:col: message on stderr), 2 on a usage error.\n"
    "\n"
    "Options:\n"
    "  -q, --quiet  no step lines on stderr\n"
    "  -h, --help   this text\n";

int cli_json_repair(cli_args *a) {
    bool quiet = false;
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(repair_help, stdout);
            return CLI_OK;
        } else if (strcmp(opt, "--quiet") == 0 || strcmp(opt, "-q") == 0) {
            quiet = true;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a)) return CLI_USAGE;

    aw_buf in, out;
    aw_buf_init(&in, NULL);
    aw_buf_init(&out, NULL);
    if (cli_read_input(a->file, &in)) {
        aw_buf_free(&in);
        return CLI_REJECTED;
    }
    unsigned steps = 0;
    aw_error err;
    int status = CLI_OK;
    if (aw_json_repair(in.data, in.len, NULL, &out, &steps, &err) != 0) {
        cli_report(cli_input_name(a->file), &err);
        status = CLI_REJECTED;
    } else if (aw_buf_putc(&out, '\n')) {
        fprintf(stderr, "agentwire: out of memory\n");
        status = CLI_REJECTED;
    } else {
        if (!quiet) {
            for (unsigned b = 1; b <= AW_REPAIR_MISSING_VALUE; b <<= 1)
                if (steps & b) fprintf(stderr, "repaired: %s\n", aw_json_repair_step_name(b));
        }
        if (cli_write_stdout(out.data, out.len)) status = CLI_REJECTED;
    }
    aw_buf_free(&in);
    aw_buf_free(&out);
    return status;
}
