/* agentwire snapshot slim | restore, and agentwire envelope */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentwire/envelope.h"
#include "agentwire/snapshot.h"
#include "cli.h"

static const char snapshot_help[] =
    "Usage: agentwire snapshot COMMAND [options] [FILE]\n"
    "\n"
    "Slim agent-state snapshots (the state form is documented in\n"
    "include/agentwire/snapshot.h). FILE holds one JSON\n"
    "object; without FILE, or with -, stdin is read.\n"
    "\n"
    "Commands:\n"
    "  slim [--preset minimal|standard|full] [--max-messages N] [--max-steps N]\n"
    "       [--max-content N] [--no-tool-results] [--no-steps] [--trace]\n"
    "       [--redact-args] [FILE]\n"
    "        full agent state -> snapshot. Options after --preset override it.\n"
    "  restore [FILE]\n"
    "        snapshot -> agent state (steps are not restored)\n"
    "\n"
    "  -h, --help  this text\n";

static int snapshot_run(cli_args *a, int slim) {
    aw_slim_config cfg;
    aw_slim_preset("standard", &cfg);
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        const char *v;
        long n;
        if (cli_is_help(opt)) {
            fputs(snapshot_help, stdout);
            return CLI_OK;
        } else if (slim && !strcmp(opt, "--preset")) {
            if (!(v = cli_opt_value(a, opt))) return CLI_USAGE;
            if (aw_slim_preset(v, &cfg)) return cli_usage_error(a, "unknown preset '%s' (minimal, standard, full)", v);
        } else if (slim && (!strcmp(opt, "--max-messages") || !strcmp(opt, "--max-steps") || !strcmp(opt, "--max-content"))) {
            if (!(v = cli_opt_value(a, opt)) || (n = cli_opt_long(opt, v, 0, 1000000000)) < 0) return CLI_USAGE;
            if (opt[6] == 'm') cfg.max_messages = n;
            else if (opt[6] == 's') cfg.max_steps = n;
            else cfg.max_content_length = n;
        } else if (slim && !strcmp(opt, "--no-tool-results")) {
            cfg.include_tool_results = false;
        } else if (slim && !strcmp(opt, "--no-steps")) {
            cfg.include_steps = false;
        } else if (slim && !strcmp(opt, "--trace")) {
            cfg.include_continuation_trace = true;
        } else if (slim && !strcmp(opt, "--redact-args")) {
            cfg.redact_tool_args = true;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(a)) return CLI_USAGE;
    aw_json_doc *in = NULL, *out = NULL;
    int status = cli_read_json(a->file, NULL, &in);
    if (status) return status;
    aw_error err;
    int rc = slim ? aw_snapshot_slim(aw_json_doc_root(in), &cfg, NULL, &out, &err)
                  : aw_snapshot_restore(aw_json_doc_root(in), NULL, &out, &err);
    if (rc) {
        cli_report(cli_input_name(a->file), &err);
        status = CLI_REJECTED;
    } else {
        status = cli_print_json(aw_json_doc_root(out));
    }
    aw_json_doc_free(out);
    aw_json_doc_free(in);
    return status;
}

static int snapshot_slim(cli_args *a) { return snapshot_run(a, 1); }
static int snapshot_restore(cli_args *a) { return snapshot_run(a, 0); }

int cli_snapshot(int argc, char **argv) {
    static const cli_command commands[] = {{"slim", snapshot_slim}, {"restore", snapshot_restore}};
    return cli_dispatch("snapshot", snapshot_help, commands, sizeof commands / sizeof commands[0], argc, argv);
}

/* ---- envelope ---------------------------------------------------------------- */

static const char envelope_help[] =
    "Usage: agentwire envelope [--session ID] [--execution ID] [--preset minimal|standard|debug] [FILE]\n"
    "\n"
    "Agent runtime events as JSON lines in -> UI envelopes as JSON lines out,\n"
    "each {\"channel\": \"agent.<session>\", \"envelope\": {...}}. An event is\n"
    "{\"event\": KIND, \"at\"?: RFC 3339 time (default now), ...fields} with KIND\n"
    "step_started, step_completed, tool_started, tool_completed, stream_chunk,\n"
    "status or continuation_evaluated. Bad lines are reported as\n"
    "FILE:line: message and skipped; the exit status is then 1.\n"
    "\n"
    "  --session ID     session id (default \"default\")\n"
    "  --execution ID   execution id (default: the session id)\n"
    "  --preset P       minimal: no stream chunks; debug: continuation trace\n"
    "                   and full arguments; standard (default)\n"
    "  -h, --help       this text\n";

/* Where each line's event starts (its first non-blank column), for the
 * errors the adapter finds in a parsed event, which carry no place of
 * their own: the input is streamed, so each chunk is scanned before it is
 * fed, for the lines that end in it. */
typedef struct line_starts {
    size_t first;   /* the line of lead[0]: the one the chunk starts in */
    size_t *lead;   /* leading blanks of lines first, first + 1, ... */
    size_t n, cap;
    size_t blanks;  /* of the line in progress at the end of the last chunk */
    int in_lead;    /* that line has had only blanks so far */
} line_starts;

static int line_starts_scan(line_starts *ls, const char *p, size_t len) {
    ls->first += ls->n ? ls->n - 1 : 0;
    ls->n = 0;
    for (size_t i = 0;; i++) {
        if (ls->n == ls->cap) {
            size_t cap = ls->cap ? ls->cap * 2 : 256;
            size_t *lead = realloc(ls->lead, cap * sizeof *lead);
            if (!lead) return -1;
            ls->lead = lead;
            ls->cap = cap;
        }
        ls->lead[ls->n] = ls->blanks;
        if (i == len) break;
        char c = p[i];
        if (c == '\n') {
            ls->n++;
            ls->blanks = 0;
            ls->in_lead = 1;
        } else if (ls->in_lead && (c == ' ' || c == '\t' || c == '\r')) {
            ls->blanks++;
        } else {
            ls->in_lead = 0;
        }
    }
    ls->n++; /* the line in progress */
    return 0;
}

static size_t line_start_column(const line_starts *ls, size_t line) {
    return line >= ls->first && line - ls->first < ls->n ? ls->lead[line - ls->first] + 1 : 1;
}

typedef struct env_ctx {
    aw_envelope_adapter *adapter;
    const char *name;
    size_t bad;
    aw_buf out;
    int failed;
    line_starts starts;
} env_ctx;

static int on_envelope(void *vctx, const char *channel, const aw_json_value *envelope) {
    env_ctx *c = vctx;
    aw_buf_clear(&c->out);
    int rc = aw_buf_append_str(&c->out, "{\"channel\":") || aw_json_write_string_opts(&c->out, channel, strlen(channel), &cli_json_records) ||
             aw_buf_append_str(&c->out, ",\"envelope\":") || aw_json_write(envelope, &cli_json_records, &c->out, NULL) ||
             aw_buf_append_str(&c->out, "}\n") || cli_write_stdout(c->out.data, c->out.len);
    if (rc) c->failed = 1;
    return rc;
}

static int on_event(void *vctx, size_t line, const aw_json_value *root, const aw_error *err) {
    env_ctx *c = vctx;
    if (!root) {
        c->bad++;
        cli_report(c->name, err);
        return 0;
    }
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    aw_error e;
    if (aw_envelope_adapter_handle(c->adapter, root, now, &e)) {
        if (c->failed) return 1;
        /* the event is at fault as a whole: name where it starts */
        e.line = line;
        e.column = line_start_column(&c->starts, line);
        c->bad++;
        cli_report(c->name, &e);
    }
    return 0;
}

typedef struct env_feed {
    env_ctx *c;
    aw_jsonl_reader *r;
} env_feed;

static int env_chunk(void *vctx, const char *chunk, size_t len) {
    env_feed *f = vctx;
    if (line_starts_scan(&f->c->starts, chunk, len)) {
        fprintf(stderr, "agentwire: out of memory\n");
        return -1;
    }
    aw_error err;
    int rc = aw_jsonl_feed(f->r, chunk, len, on_event, f->c, &err);
    if (rc && !f->c->failed) cli_report(f->c->name, &err);
    return rc;
}

int cli_envelope(int argc, char **argv) {
    cli_args a;
    cli_args_init(&a, argc, argv, "envelope");
    aw_envelope_config cfg = {NULL, NULL, AW_ENVELOPE_STANDARD, NULL};
    const char *opt;
    while ((opt = cli_next_opt(&a))) {
        const char *v;
        if (cli_is_help(opt)) {
            fputs(envelope_help, stdout);
            return CLI_OK;
        } else if (!strcmp(opt, "--session")) {
            if (!(cfg.session_id = cli_opt_value(&a, opt))) return CLI_USAGE;
        } else if (!strcmp(opt, "--execution")) {
            if (!(cfg.execution_id = cli_opt_value(&a, opt))) return CLI_USAGE;
        } else if (!strcmp(opt, "--preset")) {
            if (!(v = cli_opt_value(&a, opt))) return CLI_USAGE;
            if (!strcmp(v, "minimal")) cfg.preset = AW_ENVELOPE_MINIMAL;
            else if (!strcmp(v, "standard")) cfg.preset = AW_ENVELOPE_STANDARD;
            else if (!strcmp(v, "debug")) cfg.preset = AW_ENVELOPE_DEBUG;
            else return cli_usage_error(&a, "unknown preset '%s' (minimal, standard, debug)", v);
        } else {
            return cli_usage_error(&a, "unknown option '%s'", opt);
        }
    }
    if (cli_args_done(&a)) return CLI_USAGE;
    env_ctx c = {NULL, cli_input_name(a.file), 0, {0}, 0, {1, NULL, 0, 0, 0, 1}};
    aw_buf_init(&c.out, NULL);
    c.adapter = aw_envelope_adapter_new(&cfg, on_envelope, &c);
    env_feed f = {&c, aw_jsonl_reader_new(NULL)};
    int rc = -1;
    if (c.adapter && f.r) {
        rc = cli_stream_input(a.file, 1 << 16, env_chunk, &f);
        if (!rc) {
            aw_error err;
            rc = aw_jsonl_finish(f.r, on_event, &c, &err);
        }
    } else {
        fprintf(stderr, "agentwire: out of memory\n");
    }
    aw_jsonl_reader_free(f.r);
    aw_envelope_adapter_free(c.adapter);
    aw_buf_free(&c.out);
    free(c.starts.lead);
    return (rc || c.bad) ? CLI_REJECTED : CLI_OK;
}
