/* agentwire transport next | past | extract */
#include <stdlib.h>
#include <string.h>

#include "agentwire/transport.h"
#include "cli.h"

static const char transport_help[] =
    "Usage: agentwire transport COMMAND [options] [FILE]\n"
    "\n"
    "The XML tool transport: the per-turn notices a model reads, and the tags\n"
    "it writes back, extracted from its reply. Run 'agentwire transport COMMAND\n"
    "--help' for the options of a command.\n"
    "\n"
    "Commands:\n"
    "  next      print the XML-NEXT notice for a turn\n"
    "  past      print the XML-PAST notice for the previous turn's tool calls\n"
    "  extract   read a model's reply and print its calls, final report and\n"
    "            rejections as JSON lines\n"
    "\n"
    "  -h, --help  this text\n";

static const char next_help[] =
    "Usage: agentwire transport next --mode xml|xml-final --turn N --max-turns M\n"
    "                                [--tools FILE] [--format FMT] [--schema FILE]\n"
    "                                [--nonce HEX] [--max-calls K] [--prefix P]\n"
    "\n"
    "Print the XML-NEXT notice of turn N (of M): the nonce, the slots open this\n"
    "turn, the tools with their schemas and slot templates, the progress slot\n"
    "(xml mode) and the final-report slot. Mode native prints nothing.\n"
    "\n"
    "  --mode MODE      native, xml (tools as tags) or xml-final (tools native,\n"
    "                   only the final report as a tag)\n"
    "  --turn N         this turn, from 1\n"
    "  --max-turns M    the last turn\n"
    "  --tools FILE     a JSON array of tool definitions: OpenAI\n"
    "                   {type, function: {name, description, parameters}},\n"
    "                   Anthropic {name, description, input_schema} or MCP\n"
    "                   {name, description, inputSchema}\n"
    "  --format FMT     final-report format: markdown (default), text, tty, pipe,\n"
    "                   json, slack-block-kit, sub-agent\n"
    "  --schema FILE    for --format json: the JSON Schema of the report\n"
    "  --nonce HEX      the session nonce, 8 lower-case hex digits (default: random)\n"
    "  --max-calls K    tool calls per turn (default 10)\n"
    "  --prefix P       tag prefix (default ai-agent)\n"
    "  -h, --help       this text\n";

static const char past_help[] =
    "Usage: agentwire transport past [FILE]\n"
    "\n"
    "Print the XML-PAST notice for the previous turn's tool calls, read as JSON\n"
    "lines, one call each:\n"
    "  {\"slot\": \"0011\", \"tool\": \"search\", \"status\": \"ok\"|\"failed\",\n"
    "   \"duration_ms\": 412, \"request\": ..., \"response\": ...}\n"
    "request and response are strings, or any JSON (written compactly). Each is\n"
    "cut to 4,096 bytes and escaped, so tool output can never forge a tag. No\n"
    "calls: nothing is printed. Without FILE, or with -, stdin is read.\n"
    "\n"
    "  -h, --help  this text\n";

static const char extract_help[] =
    "Usage: agentwire transport extract --nonce HEX --mode MODE --turn N\n"
    "                                   [--tools FILE] [options] [FILE]\n"
    "\n"
    "Feed a model's reply (FILE, or stdin) to the streaming tag extractor and\n"
    "print one JSON line per record:\n"
    "  {\"kind\": \"call\", \"slot\", \"tool\", \"args\", \"payload\", \"source\", \"command\", \"repairs\"}\n"
    "    (and \"dialect\" for a call read in another dialect)\n"
    "  {\"kind\": \"final\", \"status\", \"format\", \"content\", \"json\", \"truncated\", \"repairs\", \"command\"\n"
    "   [, \"schema_valid\" [, \"schema_errors\"]]}   (schema_*: --format json with --schema)\n"
    "  {\"kind\": \"rejected\", \"slot\", \"tool\", \"reason\", \"message\" [, \"errors\"]}\n"
    "     (errors: for reason invalid_arguments, the schema errors of the call:\n"
    "      [{\"instanceLocation\", \"keywordLocation\", \"error\"}, ...])\n"
    "  {\"kind\": \"warning\", \"text\"}     (e.g. an unknown stop reason)\n"
    "  {\"kind\": \"feedback\", \"text\"}    (last: TURN-FAILED, when anything was rejected)\n"
    "\n"
    "  --nonce HEX          the session nonce, 8 lower-case hex digits\n"
    "  --mode MODE          native, xml or xml-final\n"
    "  --turn N             the turn of the reply, from 1\n"
    "  --tools FILE         the tools (JSON array; OpenAI, Anthropic or MCP shapes);\n"
    "                       each call is checked against its tool's schema\n"
    "  --max-calls K        tool calls per turn (default 10)\n"
    "  --format FMT         expected final-report format (default markdown)\n"
    "  --schema FILE        for --format json: the JSON Schema of the report; a json\n"
    "                       final report is validated against it\n"
    "  --prefix P           tag prefix (default ai-agent)\n"
    "  --stop-reason R      why the model stopped (stop, end_turn, length,\n"
    "                       max_tokens, ...); default unknown\n"
    "  --dialects LIST      also read tool calls written in other dialects: auto\n"
    "                       (all of them, each found by what the text shows) or\n"
    "                       a comma-separated list of hermes, qwen3_coder, glm45,\n"
    "                       granite, llama3, pythonic, mistral, deepseek, kimi_k2,\n"
    "                       minimax, function_calls, harmony, fenced. In xml mode\n"
    "                       a call's source is its dialect; in native and xml-final\n"
    "                       modes it is \"recovered\", with \"dialect\" naming it\n"
    "  --reasoning LIST     tags whose content is passed over (default think)\n"
    "  --native-calls FILE  the reply's native tool calls (a JSON array): reported\n"
    "                       as rejections in xml mode, kept in xml-final\n"
    "  --chunk N            feed the reply N bytes at a time (default: whole)\n"
    "  --visible            print only the text a user would see, not records\n"
    "  --events             also print the streaming events: text, tag_open,\n"
    "                       payload, tag_close\n"
    "  -h, --help           this text\n"
    "\n"
    "Exit status 0 whatever the tags held; 1 when a file cannot be read.\n";

/* ---- shared pieces -------------------------------------------------------- */

typedef struct tr_opts {
    const char *mode, *nonce, *prefix, *tools, *schema, *format;
    long turn, max_turns, max_calls;
    /* extract only */
    const char *stop_reason, *dialects, *reasoning, *native_calls;
    long chunk;
    bool visible, events;
} tr_opts;

/* The session built from the options, and what it points into. */
typedef struct tr_session {
    aw_json_doc *tools_doc, *schema_doc;
    aw_tool_def *defs;
    char **reasoning;
    size_t reasoning_count;
    aw_transport *t;
} tr_session;

static void session_free(tr_session *s) {
    aw_transport_free(s->t);
    aw_free(NULL, s->defs);
    aw_json_doc_free(s->tools_doc);
    aw_json_doc_free(s->schema_doc);
    for (size_t i = 0; i < s->reasoning_count; i++) free(s->reasoning[i]);
    free(s->reasoning);
}

/* Split a comma list into fresh strings (empty items skipped). */
static int split_list(const char *s, char ***out, size_t *count) {
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    char **v = calloc(cap, sizeof *v);
    if (!v) return -1;
    size_t n = 0;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len) {
            v[n] = malloc(len + 1);
            if (!v[n]) {
                for (size_t i = 0; i < n; i++) free(v[i]);
                free(v);
                return -1;
            }
            memcpy(v[n], p, len);
            v[n++][len] = '\0';
        }
        p += len + (e ? 1 : 0);
    }
    *out = v;
    *count = n;
    return 0;
}

static int parse_mode(const char *s, aw_transport_mode *m) {
    if (strcmp(s, "native") == 0) *m = AW_TRANSPORT_NATIVE;
    else if (strcmp(s, "xml") == 0) *m = AW_TRANSPORT_XML;
    else if (strcmp(s, "xml-final") == 0) *m = AW_TRANSPORT_XML_FINAL;
    else return -1;
    return 0;
}

static const char dialect_list[] =
    "hermes, qwen3_coder, glm45, granite, llama3, pythonic, mistral, deepseek, kimi_k2, minimax, "
    "function_calls, harmony, fenced";

/* Build the session; returns -1 on success, or an exit status. */
static int session_open(const cli_args *a, const tr_opts *o, tr_session *s) {
    memset(s, 0, sizeof *s);
    aw_transport_config cfg;
    memset(&cfg, 0, sizeof cfg);
    if (parse_mode(o->mode, &cfg.mode))
        return cli_usage_error(a, "--mode must be native, xml or xml-final, not '%s'", o->mode);
    int f = aw_report_format_parse(o->format, strlen(o->format));
    if (f < 0)
        return cli_usage_error(a, "--format must be markdown, text, tty, pipe, json, slack-block-kit or "
                                  "sub-agent, not '%s'", o->format);
    cfg.format = (aw_report_format)f;
    cfg.nonce = o->nonce;
    cfg.prefix = o->prefix;
    cfg.max_calls_per_turn = (unsigned)o->max_calls;
    if (o->dialects) {
        char **names;
        size_t n;
        if (split_list(o->dialects, &names, &n)) {
            fprintf(stderr, "agentwire: out of memory\n");
            return CLI_REJECTED;
        }
        int bad = -1;
        for (size_t i = 0; i < n; i++) {
            unsigned flag = aw_dialect_flag(names[i], strlen(names[i]));
            if (flag) cfg.dialects |= flag;
            else if (bad < 0) bad = (int)i;
        }
        int rc = bad >= 0 ? cli_usage_error(a, "unknown dialect '%s' (auto, or a list of: %s)", names[bad], dialect_list)
                          : -1;
        for (size_t i = 0; i < n; i++) free(names[i]);
        free(names);
        if (rc >= 0) return rc;
    }
    if (o->reasoning) {
        if (split_list(o->reasoning, &s->reasoning, &s->reasoning_count)) {
            fprintf(stderr, "agentwire: out of memory\n");
            return CLI_REJECTED;
        }
        cfg.reasoning_tags = (const char *const *)s->reasoning;
        cfg.reasoning_tag_count = s->reasoning_count;
    }
    aw_error err;
    if (o->tools) {
        if (cli_read_json(o->tools, NULL, &s->tools_doc)) return CLI_REJECTED;
        size_t n = 0;
        if (aw_tools_from_json(aw_json_doc_root(s->tools_doc), NULL, &s->defs, &n, &err)) {
            cli_report(cli_input_name(o->tools), &err);
            return CLI_REJECTED;
        }
        cfg.tools = s->defs;
        cfg.tool_count = n;
    }
    if (o->schema) {
        if (cli_read_json(o->schema, NULL, &s->schema_doc)) return CLI_REJECTED;
        cfg.final_schema = aw_json_doc_root(s->schema_doc);
    }
    s->t = aw_transport_new(&cfg, &err);
    if (!s->t) {
        if (err.code == AW_EINVAL) return cli_usage_error(a, "%s", err.message);
        fprintf(stderr, "agentwire: %s\n", err.message);
        return CLI_REJECTED;
    }
    return -1;
}

/* Options shared by next and extract; returns 1 when the option was one of
 * them, 0 when not, or -(exit status + 1) on a bad value. */
static int common_opt(cli_args *a, const char *opt, tr_opts *o) {
    const char **str = NULL;
    long *num = NULL, min = 1, max = 1000000000;
    if (strcmp(opt, "--mode") == 0) str = &o->mode;
    else if (strcmp(opt, "--nonce") == 0) str = &o->nonce;
    else if (strcmp(opt, "--prefix") == 0) str = &o->prefix;
    else if (strcmp(opt, "--tools") == 0) str = &o->tools;
    else if (strcmp(opt, "--schema") == 0) str = &o->schema;
    else if (strcmp(opt, "--format") == 0) str = &o->format;
    else if (strcmp(opt, "--turn") == 0) num = &o->turn;
    else if (strcmp(opt, "--max-calls") == 0) num = &o->max_calls;
    else return 0;
    const char *v = cli_opt_value(a, opt);
    if (!v) return -(CLI_USAGE + 1);
    if (str) {
        *str = v;
        return 1;
    }
    long n = cli_opt_long(opt, v, min, max);
    if (n < 0) return -(CLI_USAGE + 1);
    *num = n;
    return 1;
}

static int put_line(aw_buf *out) {
    if (aw_buf_putc(out, '\n')) {
        fprintf(stderr, "agentwire: out of memory\n");
        return -1;
    }
    int rc = cli_write_stdout(out->data, out->len);
    aw_buf_clear(out);
    return rc;
}

/* ---- next ----------------------------------------------------------------- */

static int transport_next(cli_args *a) {
    tr_opts o;
    memset(&o, 0, sizeof o);
    o.format = "markdown";
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(next_help, stdout);
            return CLI_OK;
        }
        int k = common_opt(a, opt, &o);
        if (k < 0) return -k - 1;
        if (k) continue;
        if (strcmp(opt, "--max-turns") == 0) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            if ((o.max_turns = cli_opt_long(opt, v, 1, 1000000000)) < 0) return CLI_USAGE;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
    }
    if (a->nfiles) return cli_usage_error(a, "takes no FILE");
    if (!o.mode) return cli_usage_error(a, "--mode is required");
    if (!o.turn) return cli_usage_error(a, "--turn is required");
    if (!o.max_turns) return cli_usage_error(a, "--max-turns is required");
    if (o.turn > o.max_turns) return cli_usage_error(a, "--turn %ld is after --max-turns %ld", o.turn, o.max_turns);
    tr_session s;
    int rc = session_open(a, &o, &s);
    if (rc >= 0) {
        session_free(&s);
        return rc;
    }
    aw_buf out;
    aw_buf_init(&out, NULL);
    int status = CLI_OK;
    if (aw_transport_render_next(s.t, (unsigned)o.turn, (unsigned)o.max_turns, &out)) {
        fprintf(stderr, "agentwire: out of memory\n");
        status = CLI_REJECTED;
    } else if (out.len && put_line(&out)) {
        status = CLI_REJECTED;
    }
    aw_buf_free(&out);
    session_free(&s);
    return status;
}

/* ---- past ----------------------------------------------------------------- */

typedef struct past_rec {
    aw_buf slot, tool, request, response;
    bool ok;
    double ms;
} past_rec;

typedef struct past_ctx {
    const char *name;
    past_rec *recs;
    size_t n, cap;
    int failed;
} past_ctx;

static void past_bad(past_ctx *c, size_t line, const char *msg) {
    aw_error e;
    memset(&e, 0, sizeof e);
    e.line = line;
    snprintf(e.message, sizeof e.message, "%s", msg);
    cli_report(c->name, &e);
    c->failed = 1;
}

/* A string as its text; other JSON compactly; absent as nothing. */
static int past_text(const aw_json_value *v, aw_buf *out) {
    if (!v) return 0;
    if (aw_json_is_string(v)) return aw_buf_append(out, v->u.str.ptr, v->u.str.len);
    return aw_json_write(v, NULL, out, NULL);
}

static int on_past_line(void *vctx, size_t line, const aw_json_value *root, const aw_error *err) {
    past_ctx *c = vctx;
    if (!root) {
        cli_report(c->name, err);
        c->failed = 1;
        return 1;
    }
    if (!aw_json_is_object(root)) {
        past_bad(c, line, "each line must be a JSON object");
        return 1;
    }
    const aw_json_value *slot = aw_json_get(root, "slot"), *tool = aw_json_get(root, "tool");
    const aw_json_value *status = aw_json_get(root, "status"), *ms = aw_json_get(root, "duration_ms");
    if (!aw_json_is_string(slot) || !aw_json_is_string(tool)) {
        past_bad(c, line, "'slot' and 'tool' must be strings");
        return 1;
    }
    bool ok;
    if (aw_json_is_string(status) && strcmp(status->u.str.ptr, "ok") == 0) ok = true;
    else if (aw_json_is_string(status) && strcmp(status->u.str.ptr, "failed") == 0) ok = false;
    else {
        past_bad(c, line, "'status' must be \"ok\" or \"failed\"");
        return 1;
    }
    if (ms && !aw_json_is_number(ms)) {
        past_bad(c, line, "'duration_ms' must be a number");
        return 1;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        past_rec *r = realloc(c->recs, cap * sizeof *r);
        if (!r) goto oom;
        c->recs = r;
        c->cap = cap;
    }
    past_rec *r = &c->recs[c->n++];
    aw_buf_init(&r->slot, NULL);
    aw_buf_init(&r->tool, NULL);
    aw_buf_init(&r->request, NULL);
    aw_buf_init(&r->response, NULL);
    r->ok = ok;
    r->ms = ms ? ms->u.num.d : 0;
    if (aw_buf_append(&r->slot, slot->u.str.ptr, slot->u.str.len) ||
        aw_buf_append(&r->tool, tool->u.str.ptr, tool->u.str.len) ||
        past_text(aw_json_get(root, "request"), &r->request) ||
        past_text(aw_json_get(root, "response"), &r->response))
        goto oom;
    return 0;
oom:
    fprintf(stderr, "agentwire: out of memory\n");
    c->failed = 1;
    return 1;
}

static int past_feed(void *vctx, const char *chunk, size_t len) {
    void **v = vctx;
    aw_error err;
    int rc = aw_jsonl_feed(v[0], chunk, len, on_past_line, v[1], &err);
    if (rc && rc != AW_ESTOP) fprintf(stderr, "agentwire: %s\n", err.message);
    return rc;
}

static int transport_past(cli_args *a) {
    int done = cli_no_options(a, past_help);
    if (done >= 0) return done;
    past_ctx c = {cli_input_name(a->file), NULL, 0, 0, 0};
    aw_jsonl_reader *r = aw_jsonl_reader_new(NULL);
    if (!r) {
        fprintf(stderr, "agentwire: out of memory\n");
        return CLI_REJECTED;
    }
    void *pair[2] = {r, &c};
    int rc = cli_stream_input(a->file, 1 << 16, past_feed, pair);
    if (rc == 0) {
        aw_error err;
        rc = aw_jsonl_finish(r, on_past_line, &c, &err);
        if (rc && rc != AW_ESTOP) fprintf(stderr, "agentwire: %s\n", err.message);
    }
    aw_jsonl_reader_free(r);
    int status = rc || c.failed ? CLI_REJECTED : CLI_OK;
    if (status == CLI_OK && c.n) {
        aw_past_call *calls = calloc(c.n, sizeof *calls);
        aw_buf out;
        aw_buf_init(&out, NULL);
        if (!calls) {
            fprintf(stderr, "agentwire: out of memory\n");
            status = CLI_REJECTED;
        } else {
            for (size_t i = 0; i < c.n; i++) {
                past_rec *p = &c.recs[i];
                calls[i].slot = (aw_text){p->slot.data ? p->slot.data : "", p->slot.len};
                calls[i].tool = (aw_text){p->tool.data ? p->tool.data : "", p->tool.len};
                calls[i].ok = p->ok;
                calls[i].duration_ms = p->ms;
                calls[i].request = (aw_text){p->request.data ? p->request.data : "", p->request.len};
                calls[i].response = (aw_text){p->response.data ? p->response.data : "", p->response.len};
            }
            if (aw_transport_render_past(calls, c.n, &out)) {
                fprintf(stderr, "agentwire: out of memory\n");
                status = CLI_REJECTED;
            } else if (put_line(&out)) {
                status = CLI_REJECTED;
            }
        }
        free(calls);
        aw_buf_free(&out);
    }
    for (size_t i = 0; i < c.n; i++) {
        aw_buf_free(&c.recs[i].slot);
        aw_buf_free(&c.recs[i].tool);
        aw_buf_free(&c.recs[i].request);
        aw_buf_free(&c.recs[i].response);
    }
    free(c.recs);
    return status;
}

/* ---- extract -------------------------------------------------------------- */

typedef struct x_ctx {
    bool visible, events;
    aw_buf out;
    char last; /* last byte written in --visible mode */
    int failed; /* out of memory or a write error (reported) */
} x_ctx;

static int set_text(aw_json_doc *d, aw_json_value *o, const char *key, aw_text t) {
    return aw_json_object_set_string(d, o, key, t.ptr ? t.ptr : "", t.ptr ? t.len : 0);
}

static int set_repairs(aw_json_doc *d, aw_json_value *o, unsigned steps) {
    aw_json_value *arr = aw_json_new_array(d);
    if (!arr) return AW_ENOMEM;
    for (unsigned b = 0; b < 32; b++) {
        if (!(steps & (1u << b))) continue;
        const char *name = aw_json_repair_step_name(1u << b);
        if (!name) continue;
        aw_json_value *s = aw_json_new_string(d, name, strlen(name));
        if (!s || aw_json_array_push(d, arr, s)) return AW_ENOMEM;
    }
    return aw_json_object_set(d, o, "repairs", 7, arr);
}

static int set_value(aw_json_doc *d, aw_json_value *o, const char *key, const aw_json_value *v) {
    if (!v) return aw_json_object_set_null(d, o, key);
    aw_json_value *c = aw_json_copy(d, v);
    if (!c) return AW_ENOMEM;
    return aw_json_object_set(d, o, key, strlen(key), c);
}

/* Schema errors as [{instanceLocation, keywordLocation, error}, ...]. */
static int set_schema_errors(aw_json_doc *d, aw_json_value *o, const char *key, const aw_schema_error *errs,
                             size_t n) {
    aw_json_value *arr = aw_json_new_array(d);
    if (!arr) return AW_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        aw_json_value *e = aw_json_new_object(d);
        if (!e) return AW_ENOMEM;
        const aw_schema_error *s = &errs[i];
        int rc = aw_json_object_set_string(d, e, "instanceLocation", s->instance_location, s->instance_location_len);
        if (!rc) rc = aw_json_object_set_string(d, e, "keywordLocation", s->keyword_location, s->keyword_location_len);
        if (!rc && s->absolute_keyword_location)
            rc = aw_json_object_set_string(d, e, "absoluteKeywordLocation", s->absolute_keyword_location,
                                           s->absolute_keyword_location_len);
        if (!rc) rc = aw_json_object_set_string(d, e, "error", s->message, strlen(s->message));
        if (rc || aw_json_array_push(d, arr, e)) return AW_ENOMEM;
    }
    return aw_json_object_set(d, o, key, strlen(key), arr);
}

static int record_of(aw_json_doc *d, aw_json_value *o, const aw_x_event *ev) {
    int rc;
    switch (ev->kind) {
    case AW_X_TEXT:
    case AW_X_PAYLOAD:
        rc = aw_json_object_set_string(d, o, "kind", ev->kind == AW_X_TEXT ? "text" : "payload",
                                       ev->kind == AW_X_TEXT ? 4 : 7);
        return rc ? rc : set_text(d, o, "text", ev->text);
    case AW_X_TAG_OPEN:
        rc = aw_json_object_set_string(d, o, "kind", "tag_open", 8);
        if (!rc) rc = set_text(d, o, "slot", ev->slot);
        return rc ? rc : set_text(d, o, "tool", ev->tool);
    case AW_X_TAG_CLOSE:
        rc = aw_json_object_set_string(d, o, "kind", "tag_close", 9);
        return rc ? rc : set_text(d, o, "slot", ev->slot);
    case AW_X_CALL: {
        const aw_x_call *c = ev->call;
        const char *src = c->source ? c->source : "";
        rc = aw_json_object_set_string(d, o, "kind", "call", 4);
        if (!rc) rc = set_text(d, o, "slot", c->slot);
        if (!rc) rc = set_text(d, o, "tool", c->tool);
        if (!rc) rc = set_value(d, o, "args", c->args);
        if (!rc) rc = set_text(d, o, "payload", c->payload);
        if (!rc) rc = aw_json_object_set_string(d, o, "source", src, strlen(src));
        if (!rc && c->dialect) rc = aw_json_object_set_string(d, o, "dialect", c->dialect, strlen(c->dialect));
        if (!rc) rc = set_text(d, o, "command", c->command);
        if (!rc) rc = set_repairs(d, o, c->repairs);
        return rc;
    }
    case AW_X_FINAL: {
        const aw_x_final *f = ev->final;
        const char *fmt = aw_report_format_name(f->format);
        const char *cmd = f->command ? f->command : AW_COMMAND_FINAL_XML;
        rc = aw_json_object_set_string(d, o, "kind", "final", 5);
        if (!rc) rc = set_text(d, o, "status", f->status);
        if (!rc) rc = aw_json_object_set_string(d, o, "format", fmt ? fmt : "", fmt ? strlen(fmt) : 0);
        if (!rc) rc = set_text(d, o, "content", f->content);
        if (!rc) rc = set_value(d, o, "json", f->json);
        if (!rc) rc = aw_json_object_set_bool(d, o, "truncated", f->truncated);
        if (!rc) rc = set_repairs(d, o, f->repairs);
        if (!rc) rc = aw_json_object_set_string(d, o, "command", cmd, strlen(cmd));
        if (!rc && f->schema_checked) {
            rc = aw_json_object_set_bool(d, o, "schema_valid", f->schema_valid);
            if (!rc && !f->schema_valid)
                rc = set_schema_errors(d, o, "schema_errors", f->schema_errors, f->schema_error_count);
        }
        return rc;
    }
    case AW_X_REJECTED: {
        const aw_x_rejection *r = ev->rejection;
        const char *reason = aw_reject_reason_name(r->reason);
        const char *msg = r->message ? r->message : "";
        rc = aw_json_object_set_string(d, o, "kind", "rejected", 8);
        if (!rc) rc = set_text(d, o, "slot", r->slot);
        if (!rc) rc = set_text(d, o, "tool", r->tool);
        if (!rc) rc = aw_json_object_set_string(d, o, "reason", reason ? reason : "", reason ? strlen(reason) : 0);
        if (!rc) rc = aw_json_object_set_string(d, o, "message", msg, strlen(msg));
        if (!rc && r->reason == AW_REJECT_INVALID_ARGUMENTS) rc = set_schema_errors(d, o, "errors", r->errors, r->error_count);
        return rc;
    }
    }
    return 0;
}

/* Write one record {"kind": kind, "text": text} or the record of ev. */
static int write_record(x_ctx *c, const aw_x_event *ev, const char *kind, const char *text, size_t len) {
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *o = d ? aw_json_new_object(d) : NULL;
    int rc = o ? 0 : AW_ENOMEM;
    if (!rc && ev) {
        rc = record_of(d, o, ev);
    } else if (!rc) {
        rc = aw_json_object_set_string(d, o, "kind", kind, strlen(kind));
        if (!rc) rc = aw_json_object_set_string(d, o, "text", text, len);
    }
    if (!rc) rc = aw_json_write(o, &cli_json_records, &c->out, NULL);
    aw_json_doc_free(d);
    if (rc) {
        fprintf(stderr, "agentwire: out of memory\n");
        c->failed = 1;
        return -1;
    }
    if (put_line(&c->out)) {
        c->failed = 1;
        return -1;
    }
    return 0;
}

static int on_event(void *vctx, const aw_x_event *ev) {
    x_ctx *c = vctx;
    if (c->visible) {
        if (ev->kind != AW_X_TEXT || !ev->text.len) return 0;
        if (cli_write_stdout(ev->text.ptr, ev->text.len)) {
            c->failed = 1;
            return 1;
        }
        c->last = ev->text.ptr[ev->text.len - 1];
        return 0;
    }
    bool streaming = ev->kind == AW_X_TEXT || ev->kind == AW_X_PAYLOAD || ev->kind == AW_X_TAG_OPEN ||
                     ev->kind == AW_X_TAG_CLOSE;
    if (streaming && !c->events) return 0;
    return write_record(c, ev, NULL, NULL, 0) ? 1 : 0;
}

/* A reply read from a file is raw bytes: made valid UTF-8 before it is
 * fed (one U+FFFD per maximal invalid subpart), so that no record, visible
 * text or final report carries bytes a consumer cannot decode. Replies a
 * program takes from a provider's JSON stream are text already. */
static int scrub_reply(aw_buf *in) {
    aw_buf clean;
    aw_buf_init(&clean, NULL);
    if (aw_utf8_scrub(&clean, in->data, in->len)) {
        aw_buf_free(&clean);
        return -1;
    }
    aw_buf_free(in);
    *in = clean;
    return 0;
}

static int transport_extract(cli_args *a) {
    tr_opts o;
    memset(&o, 0, sizeof o);
    o.format = "markdown";
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(extract_help, stdout);
            return CLI_OK;
        }
        int k = common_opt(a, opt, &o);
        if (k < 0) return -k - 1;
        if (k) continue;
        const char **str = NULL;
        if (strcmp(opt, "--stop-reason") == 0) str = &o.stop_reason;
        else if (strcmp(opt, "--dialects") == 0) str = &o.dialects;
        else if (strcmp(opt, "--reasoning") == 0) str = &o.reasoning;
        else if (strcmp(opt, "--native-calls") == 0) str = &o.native_calls;
        else if (strcmp(opt, "--visible") == 0) o.visible = true;
        else if (strcmp(opt, "--events") == 0) o.events = true;
        else if (strcmp(opt, "--chunk") == 0) {
            const char *v = cli_opt_value(a, opt);
            if (!v) return CLI_USAGE;
            if ((o.chunk = cli_opt_long(opt, v, 1, 1L << 30)) < 0) return CLI_USAGE;
        } else {
            return cli_usage_error(a, "unknown option '%s'", opt);
        }
        if (str && !(*str = cli_opt_value(a, opt))) return CLI_USAGE;
    }
    if (cli_args_done(a)) return CLI_USAGE;
    if (!o.nonce) return cli_usage_error(a, "--nonce is required");
    if (!o.mode) return cli_usage_error(a, "--mode is required");
    if (!o.turn) return cli_usage_error(a, "--turn is required");
    if (o.visible && o.events) return cli_usage_error(a, "--visible and --events do not go together");
    tr_session s;
    int rc = session_open(a, &o, &s);
    if (rc >= 0) {
        session_free(&s);
        return rc;
    }
    aw_json_doc *native = NULL;
    if (o.native_calls && cli_read_json(o.native_calls, NULL, &native)) {
        session_free(&s);
        return CLI_REJECTED;
    }
    aw_buf in;
    aw_buf_init(&in, NULL);
    if (cli_read_input(a->file, &in)) {
        aw_buf_free(&in);
        aw_json_doc_free(native);
        session_free(&s);
        return CLI_REJECTED;
    }
    if (!aw_utf8_is_valid(in.data, in.len) && scrub_reply(&in)) {
        fprintf(stderr, "agentwire: out of memory\n");
        aw_buf_free(&in);
        aw_json_doc_free(native);
        session_free(&s);
        return CLI_REJECTED;
    }
    x_ctx c;
    memset(&c, 0, sizeof c);
    c.visible = o.visible;
    c.events = o.events;
    aw_buf_init(&c.out, NULL);
    const char *name = cli_input_name(a->file);
    aw_error err;
    aw_error_clear(&err);
    aw_extractor *x = aw_extractor_new(s.t, (unsigned)o.turn);
    rc = x ? 0 : AW_ENOMEM;
    if (!x) snprintf(err.message, sizeof err.message, "out of memory");
    size_t step = o.chunk ? (size_t)o.chunk : (in.len ? in.len : 1);
    for (size_t pos = 0; !rc && pos < in.len; pos += step) {
        size_t n = in.len - pos < step ? in.len - pos : step;
        rc = aw_extractor_feed(x, in.data + pos, n, on_event, &c, &err);
    }
    if (!rc) rc = aw_extractor_finish(x, o.stop_reason, on_event, &c, &err);
    if (!rc && native) rc = aw_extractor_native_calls(x, aw_json_doc_root(native), on_event, &c, &err);
    if (!rc && !c.visible) {
        const char *w = aw_extractor_warning(x);
        if (w && write_record(&c, NULL, "warning", w, strlen(w))) rc = AW_ESTOP;
    }
    if (!rc && !c.visible) {
        aw_buf fb;
        aw_buf_init(&fb, NULL);
        if (aw_extractor_feedback(x, &fb)) {
            snprintf(err.message, sizeof err.message, "out of memory");
            rc = AW_ENOMEM;
        } else if (fb.len && write_record(&c, NULL, "feedback", fb.data, fb.len)) {
            rc = AW_ESTOP;
        }
        aw_buf_free(&fb);
    }
    if (!rc && c.visible && c.last && c.last != '\n' && cli_write_stdout("\n", 1)) rc = AW_ESTOP;
    int status = CLI_OK;
    if (rc) {
        /* a failed callback has reported already */
        if (!(rc == AW_ESTOP && c.failed)) fprintf(stderr, "%s: %s\n", name, err.message[0] ? err.message : aw_strerror(rc));
        status = CLI_REJECTED;
    }
    aw_extractor_free(x);
    aw_buf_free(&c.out);
    aw_buf_free(&in);
    aw_json_doc_free(native);
    session_free(&s);
    return status;
}

int cli_transport(int argc, char **argv) {
    static const cli_command commands[] = {
        {"next", transport_next}, {"past", transport_past}, {"extract", transport_extract}};
    return cli_dispatch("transport", transport_help, commands, sizeof commands / sizeof commands[0], argc, argv);
}
