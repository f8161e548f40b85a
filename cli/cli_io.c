/* Input, output and error reporting for the command. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *cli_input_name(const char *path) {
    return (!path || strcmp(path, "-") == 0) ? "<stdin>" : path;
}

static FILE *open_input(const char *path) {
    if (!path || strcmp(path, "-") == 0) return stdin;
    FILE *f = fopen(path, "rb");
    if (!f) fprintf(stderr, "agentwire: %s: %s\n", path, strerror(errno));
    return f;
}

int cli_read_input(const char *path, aw_buf *out) {
    FILE *f = open_input(path);
    if (!f) return -1;
    char tmp[1 << 16];
    int rc = 0;
    for (;;) {
        size_t n = fread(tmp, 1, sizeof tmp, f);
        if (n && aw_buf_append(out, tmp, n)) {
            fprintf(stderr, "agentwire: %s: out of memory\n", cli_input_name(path));
            rc = -1;
            break;
        }
        if (n < sizeof tmp) {
            if (ferror(f)) {
                fprintf(stderr, "agentwire: %s: read error: %s\n", cli_input_name(path), strerror(errno));
                rc = -1;
            }
            break;
        }
    }
    if (f != stdin) fclose(f);
    /* make data non-NULL even for empty input */
    if (rc == 0 && aw_buf_reserve(out, 0)) rc = -1;
    return rc;
}

int cli_stream_input(const char *path, size_t chunk_size, cli_chunk_fn fn, void *ctx) {
    FILE *f = open_input(path);
    if (!f) return -1;
    char *tmp = malloc(chunk_size);
    if (!tmp) {
        if (f != stdin) fclose(f);
        fprintf(stderr, "agentwire: out of memory\n");
        return -1;
    }
    int rc = 0;
    for (;;) {
        size_t n = fread(tmp, 1, chunk_size, f);
        if (n && (rc = fn(ctx, tmp, n))) break;
        if (n < chunk_size) {
            if (ferror(f)) {
                fprintf(stderr, "agentwire: %s: read error: %s\n", cli_input_name(path), strerror(errno));
                rc = -1;
            }
            break;
        }
    }
    free(tmp);
    if (f != stdin) fclose(f);
    return rc;
}

void cli_report(const char *name, const aw_error *err) {
    if (err->line && err->column)
        fprintf(stderr, "%s:%zu:%zu: %s\n", name, err->line, err->column, err->message);
    else if (err->line)
        fprintf(stderr, "%s:%zu: %s\n", name, err->line, err->message);
    else
        fprintf(stderr, "%s: %s\n", name, err->message[0] ? err->message : aw_strerror(err->code));
}

int cli_write_stdout(const char *p, size_t n) {
    if (n && fwrite(p, 1, n, stdout) != n) {
        fprintf(stderr, "agentwire: write error: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

int cli_read_json(const char *path, const aw_json_read_options *opts, aw_json_doc **out) {
    aw_buf in;
    aw_buf_init(&in, NULL);
    *out = NULL;
    if (cli_read_input(path, &in)) {
        aw_buf_free(&in);
        return CLI_REJECTED;
    }
    aw_error err;
    int rc = aw_json_parse(in.data, in.len, opts, out, &err);
    aw_buf_free(&in);
    if (rc) {
        cli_report(cli_input_name(path), &err);
        return CLI_REJECTED;
    }
    return CLI_OK;
}

const aw_json_write_options cli_json_records = {.indent = 0, .replace_lone_surrogates = true};

int cli_print_json(const aw_json_value *v) {
    aw_buf out;
    aw_buf_init(&out, NULL);
    int rc = aw_json_write(v, &cli_json_records, &out, NULL) || aw_buf_putc(&out, '\n');
    if (rc) fprintf(stderr, "agentwire: out of memory\n");
    else rc = cli_write_stdout(out.data, out.len);
    aw_buf_free(&out);
    return rc ? CLI_REJECTED : CLI_OK;
}

void cli_args_init(cli_args *a, int argc, char **argv, const char *cmd) {
    a->argc = argc;
    a->argv = argv;
    a->i = 0;
    a->file = NULL;
    a->nfiles = 0;
    a->cmd = cmd;
    a->pending = NULL;
}

const char *cli_next_opt(cli_args *a) {
    a->pending = NULL;
    while (a->i < a->argc) {
        char *s = a->argv[a->i++];
        if (strcmp(s, "--") == 0) {
            while (a->i < a->argc) {
                a->file = a->argv[a->i++];
                a->nfiles++;
            }
            return NULL;
        }
        if (s[0] == '-' && s[1] == '-' && s[2]) {
            char *eq = strchr(s, '=');
            if (eq) {
                *eq = '\0';
                a->pending = eq + 1;
            }
            return s;
        }
        if (s[0] == '-' && s[1] == 'h' && !s[2]) return "--help";
        if (s[0] == '-' && s[1] && s[1] != '-') return s; /* reported as unknown */
        a->file = s;
        a->nfiles++;
    }
    return NULL;
}

const char *cli_opt_value(cli_args *a, const char *opt) {
    if (a->pending) {
        const char *v = a->pending;
        a->pending = NULL;
        return v;
    }
    if (a->i >= a->argc) {
        cli_usage_error(a, "option '%s' needs a value", opt);
        return NULL;
    }
    return a->argv[a->i++];
}

long cli_opt_long(const char *opt, const char *value, long min, long max) {
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < min || v > max) {
        fprintf(stderr, "agentwire: option '%s' wants a whole number from %ld to %ld, not '%s'\n", opt,
                min, max, value);
        return -1;
    }
    return v;
}

int cli_usage_error(const cli_args *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "agentwire %s: ", a->cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'agentwire %s --help'.\n", a->cmd);
    va_end(ap);
    return CLI_USAGE;
}

int cli_args_done(cli_args *a) {
    if (a->nfiles > 1) return cli_usage_error(a, "takes at most one FILE");
    return 0;
}

bool cli_is_help(const char *s) { return strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0; }
