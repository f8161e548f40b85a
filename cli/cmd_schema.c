/* agentwire schema validate | check */
#include <stdlib.h>
#include <string.h>

#include "agentwire/schema.h"
#include "cli.h"

static const char schema_help[] =
    "Usage: agentwire schema COMMAND [options] [FILE]\n"
    "\n"
    "JSON Schema (draft 2020-12 and draft-07): validate instances, or check a\n"
    "schema against its dialect's meta-schema. Without FILE, or with -, stdin\n"
    "is read.\n"
    "\n"
    "Commands:\n"
    "  validate --schema FILE [--draft 2020-12|7] [--format-assert]\n"
    "           [--ref URI=FILE]... [FILE]\n"
    "        FILE holds one JSON document or JSON lines, one instance each.\n"
    "        Prints one JSON line per instance: {\"valid\":true} or\n"
    "        {\"valid\":false,\"errors\":[{\"instanceLocation\",\"keywordLocation\",\n"
    "        \"error\"},...]}. Exit 0 when every instance is valid, 1 when one\n"
    "        is not or the schema is rejected.\n"
    "  check [--draft 2020-12|7] [--ref URI=FILE]... FILE\n"
    "        is FILE a valid schema of its dialect? Validated against the\n"
    "        meta-schema (shipped in the library), then compiled (patterns,\n"
    "        references). Prints {\"valid\":...} as validate does; the errors\n"
    "        also go to stderr as FILE: /location: message. Exit 0 or 1.\n"
    "\n"
    "  --schema FILE     the schema\n"
    "  --draft D         the dialect of a schema without $schema: 2020-12\n"
    "                    (default) or 7\n"
    "  --format-assert   check formats (date-time, email, uri, ...) instead of\n"
    "                    only annotating them\n"
    "  --ref URI=FILE    a document that $ref may reach by URI (repeatable);\n"
    "                    nothing is fetched\n"
    "  --max-errors N    errors kept per instance (default 100)\n"
    "  -h, --help        this text\n";

typedef struct schema_opts {
    const char *schema;
    aw_schema_options so;
    aw_schema_registry *reg;
    size_t max_errors;
} schema_opts;

/* --ref URI=FILE: FILE's JSON registered under URI. */
static int add_ref(cli_args *a, schema_opts *o, const char *spec) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) return cli_usage_error(a, "--ref takes URI=FILE, not '%s'", spec);
    if (!o->reg && !(o->reg = aw_schema_registry_new(NULL))) {
        fprintf(stderr, "agentwire: out of memory\n");
        return CLI_REJECTED;
    }
    aw_json_doc *doc = NULL;
    if (cli_read_json(eq + 1, NULL, &doc)) return CLI_REJECTED;
    char *uri = malloc((size_t)(eq - spec) + 1);
    if (!uri) {
        aw_json_doc_free(doc);
        fprintf(stderr, "agentwire: out of memory\n");
        return CLI_REJECTED;
    }
    memcpy(uri, spec, (size_t)(eq - spec));
    uri[eq - spec] = '\0';
    aw_error err;
    int rc = aw_schema_registry_add(o->reg, uri, aw_json_doc_root(doc), &err);
    free(uri);
    aw_json_doc_free(doc);
    if (rc == AW_EINVAL) return cli_usage_error(a, "--ref %s: %s", spec, err.message);
    if (rc) {
        fprintf(stderr, "agentwire: %s\n", err.message);
        return CLI_REJECTED;
    }
    o->so.registry = o->reg;
    return -1;
}

/* Options of both commands; -1 to go on, else the exit status. */
static int parse_opts(cli_args *a, schema_opts *o, int is_validate) {
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(schema_help, stdout);
            return CLI_OK;
        }
        if (is_validate && !strcmp(opt, "--schema")) {
            if (!(o->schema = cli_opt_value(a, opt))) return CLI_USAGE;
        } else if (!strcmp(opt, "--draft")) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            int d = aw_schema_draft_parse(v);
            if (d < 0) return cli_usage_error(a, "--draft must be 2020-12 or 7, not '%s'", v);
            o->so.default_draft = (aw_schema_draft)d;
        } else if (is_validate && !strcmp(opt, "--format-assert")) {
            o->so.format_assert = true;
        } else if (is_validate && !strcmp(opt, "--max-errors")) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            long n = cli_opt_long(opt, v, 1, 1000000);
            if (n < 0) return CLI_USAGE;
            o->max_errors = (size_t)n;
        } else if (!strcmp(opt, "--ref")) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            int rc = add_ref(a, o, v);
            if (rc >= 0) return rc;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a)) return CLI_USAGE;
    if (is_validate && !o->schema) return cli_usage_error(a, "--schema is required");
    if (!is_validate && !a->nfiles) return cli_usage_error(a, "needs the schema FILE");
    return -1;
}

/* Print a result as one JSON line. */
static int print_result(const aw_schema_result *r, aw_buf *out) {
    aw_buf_clear(out);
    if (aw_schema_result_write(r, out) || aw_buf_putc(out, '\n')) {
        fprintf(stderr, "agentwire: out of memory\n");
        return -1;
    }
    return cli_write_stdout(out->data, out->len);
}

typedef struct run_ctx {
    const aw_schema *s;
    aw_schema_validate_options vo;
    aw_schema_result r;
    aw_buf out;
    const char *name;
    int invalid, failed;
} run_ctx;

static int validate_one(run_ctx *c, const aw_json_value *instance) {
    aw_error err;
    int rc = aw_schema_validate(c->s, instance, &c->vo, &c->r, &err);
    if (rc) {
        cli_report(c->name, &err);
        c->failed = 1;
        return rc == AW_ELIMIT ? 0 : 1;
    }
    if (!c->r.valid) c->invalid = 1;
    if (print_result(&c->r, &c->out)) {
        c->failed = 1;
        return 1;
    }
    return 0;
}

static int on_line(void *vctx, size_t line, const aw_json_value *root, const aw_error *err) {
    (void)line;
    run_ctx *c = vctx;
    if (!root) {
        /* a line that is not JSON: named, and the others still checked */
        cli_report(c->name, err);
        c->failed = 1;
        return 0;
    }
    return validate_one(c, root);
}

static int schema_validate(cli_args *a) {
    schema_opts o;
    memset(&o, 0, sizeof o);
    o.max_errors = AW_SCHEMA_DEFAULT_MAX_ERRORS;
    int status = parse_opts(a, &o, 1);
    if (status >= 0) {
        aw_schema_registry_free(o.reg);
        return status;
    }
    aw_json_doc *sdoc = NULL;
    aw_schema *s = NULL;
    aw_error err;
    aw_buf in;
    aw_buf_init(&in, NULL);
    status = CLI_OK;
    if (cli_read_json(o.schema, NULL, &sdoc)) {
        status = CLI_REJECTED;
    } else if (aw_schema_compile(aw_json_doc_root(sdoc), &o.so, &s, &err)) {
        fprintf(stderr, "%s: %s\n", o.schema, err.message);
        status = CLI_REJECTED;
    } else if (cli_read_input(a->file, &in)) {
        status = CLI_REJECTED;
    }
    if (status == CLI_OK) {
        run_ctx c;
        memset(&c, 0, sizeof c);
        c.s = s;
        c.vo.max_errors = o.max_errors;
        c.name = cli_input_name(a->file);
        aw_schema_result_init(&c.r, NULL);
        aw_buf_init(&c.out, NULL);
        /* one JSON document, or else JSON lines */
        aw_json_doc *doc = NULL;
        int rc = aw_json_parse(in.data, in.len, NULL, &doc, &err);
        if (rc == 0) {
            validate_one(&c, aw_json_doc_root(doc));
            aw_json_doc_free(doc);
        } else if (rc == AW_ENOMEM) {
            fprintf(stderr, "agentwire: out of memory\n");
            c.failed = 1;
        } else {
            aw_jsonl_reader *jr = aw_jsonl_reader_new(NULL);
            if (!jr || aw_jsonl_feed(jr, in.data, in.len, on_line, &c, &err) == AW_ENOMEM ||
                aw_jsonl_finish(jr, on_line, &c, &err) == AW_ENOMEM) {
                fprintf(stderr, "agentwire: out of memory\n");
                c.failed = 1;
            }
            aw_jsonl_reader_free(jr);
        }
        if (c.failed || c.invalid) status = CLI_REJECTED;
        aw_schema_result_free(&c.r);
        aw_buf_free(&c.out);
    }
    aw_buf_free(&in);
    aw_schema_free(s);
    aw_json_doc_free(sdoc);
    aw_schema_registry_free(o.reg);
    return status;
}

static int schema_check(cli_args *a) {
    schema_opts o;
    memset(&o, 0, sizeof o);
    int status = parse_opts(a, &o, 0);
    if (status >= 0) {
        aw_schema_registry_free(o.reg);
        return status;
    }
    aw_json_doc *doc = NULL;
    if (cli_read_json(a->file, NULL, &doc)) {
        aw_schema_registry_free(o.reg);
        return CLI_REJECTED;
    }
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    aw_buf out;
    aw_buf_init(&out, NULL);
    aw_error err;
    const char *name = cli_input_name(a->file);
    if (aw_schema_check(aw_json_doc_root(doc), &o.so, &r, &err)) {
        cli_report(name, &err);
        status = CLI_REJECTED;
    } else {
        for (size_t i = 0; i < r.error_count; i++) {
            const aw_schema_error *e = &r.errors[i];
            fprintf(stderr, "%s: %s", name, e->instance_location_len ? "" : "(root)");
            /* a property name may hold U+0000: shown as JSON writes it */
            for (size_t k = 0; k < e->instance_location_len; k++)
                e->instance_location[k] ? (void)fputc(e->instance_location[k], stderr) : (void)fputs("\\u0000", stderr);
            fprintf(stderr, ": %s\n", e->message);
        }
        status = r.valid ? CLI_OK : CLI_REJECTED;
        if (print_result(&r, &out)) status = CLI_REJECTED;
    }
    aw_buf_free(&out);
    aw_schema_result_free(&r);
    aw_json_doc_free(doc);
    aw_schema_registry_free(o.reg);
    return status;
}

int cli_schema(int argc, char **argv) {
    static const cli_command commands[] = {{"validate", schema_validate}, {"check", schema_check}};
    return cli_dispatch("schema", schema_help, commands, sizeof commands / sizeof commands[0], argc, argv);
}
