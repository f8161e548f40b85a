/* bench_schema: agentwire's side of the schema benchmark (issue 11).
 *
 *   bench_schema DATA_DIR FIXTURES_DIR
 *
 * Writes the corpus to DATA_DIR (fixed seed; the JavaScript peer,
 * bench/peers/schema_peer.js, reads the same files):
 *   schemas.json  the schemas: the tools of FIXTURES_DIR (tests/schema-ajv/
 *                 fixtures: the MCP servers' inputSchemas, OpenAI-style
 *                 functions), then the 1 MB row's schema;
 *   ROW.tsv       per row, lines "SCHEMA_INDEX<TAB>INSTANCE_JSON":
 *     mcp-small  MCP filesystem tool arguments, 100-300 bytes;
 *     mcp-1kb    the same tools, about 1 KB (edits, path lists);
 *     mcp-5kb    the same tools, about 5 KB;
 *     openai     OpenAI-style function arguments with formats, $ref, anyOf;
 *     big        one 1 MB instance against a schema with $ref,
 *                patternProperties and unevaluatedProperties.
 * Every instance is valid (tool arguments as models send them when right).
 *
 * Measures, schemas compiled once (formats asserted, as the peer does with
 * ajv-formats) and instances parsed once, untimed: aw_schema_validate for
 * the verdict (max_errors 0: the first failure ends it, as ajv's default)
 * over every instance of a row, repeated to fill a batch, 7 batches; the
 * best batch's mean in µs per instance and MB/s of instance JSON. Then
 * aw_schema_compile of every schema (compile time per schema, the mean).
 * Prints "key value" lines for bench/run_schema.sh, and "aw.ROW.valid N"
 * (untimed) for the verdicts to be compared with the peer's. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "bench_util.h"

#define BATCHES 7
#define BATCH_SECONDS 0.15

static bench_rng rng = {0x5C4E3A11u};
static uint32_t below(uint32_t n) { return (uint32_t)(bench_splitmix(&rng) % n); }

static const char *const words[] = {"src", "lib", "docs", "tests", "build", "main", "util", "config", "agent", "tool",
                                    "wire", "schema", "parser", "reader", "writer", "index", "notes", "draft", "report",
                                    "data", "image", "cache", "local", "remote"};
static const char *const exts[] = {".c", ".h", ".md", ".json", ".ts", ".py", ".txt", ".yaml"};

static void put_path(aw_buf *b) {
    bench_put(b, "\"/home/user/projects/agentwire/workspace");
    for (uint32_t k = 0, n = 3 + below(5); k < n; k++) BENCH_PUTF(b, "/%s", words[below(24)]);
    BENCH_PUTF(b, "%s\"", exts[below(8)]);
}

/* Text that reads like code, JSON-escaped, about n bytes. */
static void put_text(aw_buf *b, size_t n) {
    static const char *const lines[] = {"int main(void) {\\n", "    return 0;\\n", "}\\n", "    if (x < 10) y++;\\n",
                                        "const char *s = \\\"hello\\\";\\n", "// TODO: check the \\\"limit\\\"\\n",
                                        "    for (size_t i = 0; i < n; i++) sum += a[i];\\n", "#include <stdio.h>\\n",
                                        "déjà vu — naïve café\\n"};
    bench_put(b, "\"");
    size_t start = b->len;
    while (b->len - start < n) bench_put(b, lines[below(9)]);
    bench_put(b, "\"");
}

/* Tool indexes in schemas.json, found by name. */
typedef struct tool_ix {
    int read_text_file, list_directory_with_sizes, move_file, search_files, edit_file,
        read_multiple_files, directory_tree, write_file, get_weather, search_knowledge_base, send_email, create_event,
        run_sql, big;
} tool_ix;

static void line(aw_buf *rows, int schema, const aw_buf *inst) {
    BENCH_PUTF(rows, "%d\t", schema);
    bench_putn(rows, inst->data, inst->len);
    bench_put(rows, "\n");
}

static void gen_small(const tool_ix *t, aw_buf *rows, int count) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    for (int i = 0; i < count; i++) {
        aw_buf_clear(&b);
        int s;
        switch (i % 6) {
        case 0:
            s = t->read_text_file;
            bench_put(&b, "{\"path\":");
            put_path(&b);
            if (below(2)) BENCH_PUTF(&b, ",\"head\":%u", 1 + below(200));
            bench_put(&b, "}");
            break;
        case 1:
            s = t->list_directory_with_sizes;
            bench_put(&b, "{\"path\":");
            put_path(&b);
            BENCH_PUTF(&b, ",\"sortBy\":\"%s\"}", below(2) ? "name" : "size");
            break;
        case 2:
            s = t->read_text_file;
            bench_put(&b, "{\"path\":");
            put_path(&b);
            BENCH_PUTF(&b, ",\"tail\":%u}", 1 + below(50));
            break;
        case 3:
            s = t->move_file;
            bench_put(&b, "{\"source\":");
            put_path(&b);
            bench_put(&b, ",\"destination\":");
            put_path(&b);
            bench_put(&b, "}");
            break;
        case 4:
            s = t->search_files;
            bench_put(&b, "{\"path\":");
            put_path(&b);
            BENCH_PUTF(&b, ",\"pattern\":\"**/*%s\",\"excludePatterns\":[\"node_modules\",\"build/**\",\"**/.git\"]}",
                       exts[below(8)]);
            break;
        default:
            s = t->write_file;
            bench_put(&b, "{\"path\":");
            put_path(&b);
            bench_put(&b, ",\"content\":\"# Notes\\n\\nSee the report.\\n\"}");
            break;
        }
        if (b.len < 100) {
            i--; /* below the row's size: another draw */
            continue;
        }
        line(rows, s, &b);
    }
    aw_buf_free(&b);
}

/* About `size` bytes each: edits, path lists, excluded patterns, content. */
static void gen_sized(const tool_ix *t, aw_buf *rows, int count, size_t size) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    for (int i = 0; i < count; i++) {
        aw_buf_clear(&b);
        int s;
        switch (i % 4) {
        case 0:
            s = t->edit_file;
            bench_put(&b, "{\"path\":");
            put_path(&b);
            bench_put(&b, ",\"edits\":[");
            for (int k = 0; b.len < size - 200; k++) {
                bench_put(&b, k ? ",{\"oldText\":" : "{\"oldText\":");
                put_text(&b, 40 + below(size / 20));
                bench_put(&b, ",\"newText\":");
                put_text(&b, 40 + below(size / 20));
                bench_put(&b, "}");
            }
            BENCH_PUTF(&b, "],\"dryRun\":%s}", below(2) ? "true" : "false");
            break;
        case 1:
            s = t->read_multiple_files;
            bench_put(&b, "{\"paths\":[");
            for (int k = 0; b.len < size - 60; k++) {
                if (k) bench_put(&b, ",");
                put_path(&b);
            }
            bench_put(&b, "]}");
            break;
        case 2:
            s = t->directory_tree;
            bench_put(&b, "{\"path\":");
            put_path(&b);
            bench_put(&b, ",\"excludePatterns\":[");
            for (int k = 0; b.len < size - 40; k++) BENCH_PUTF(&b, "%s\"**/%s/**\"", k ? "," : "", words[below(24)]);
            bench_put(&b, "]}");
            break;
        default:
            s = t->write_file;
            bench_put(&b, "{\"path\":");
            put_path(&b);
            bench_put(&b, ",\"content\":");
            put_text(&b, size - 80);
            bench_put(&b, "}");
            break;
        }
        line(rows, s, &b);
    }
    aw_buf_free(&b);
}

static void gen_openai(const tool_ix *t, aw_buf *rows, int count) {
    static const char *const cities[] = {"Bogot\xC3\xA1, Colombia", "Paris, France", "Tokyo, Japan", "Lagos, Nigeria"};
    static const char *const domains[] = {"docs.python.org", "example.com", "arxiv.org", NULL};
    aw_buf b;
    aw_buf_init(&b, NULL);
    for (int i = 0; i < count; i++) {
        aw_buf_clear(&b);
        int s;
        switch (i % 5) {
        case 0:
            s = t->get_weather;
            BENCH_PUTF(&b, "{\"location\":\"%s\",\"units\":%s}", cities[below(4)],
                       below(3) == 0 ? "null" : below(2) ? "\"celsius\"" : "\"fahrenheit\"");
            break;
        case 1: {
            s = t->search_knowledge_base;
            const char *d = domains[below(4)];
            BENCH_PUTF(&b, "{\"query\":\"%s %s\",\"options\":{\"num_results\":%u,\"domain_filter\":%s%s%s,\"sort_by\":\"%s\"}}",
                       words[below(24)], words[below(24)], 1 + below(50), d ? "\"" : "", d ? d : "null", d ? "\"" : "",
                       below(2) ? "relevance" : "date");
            break;
        }
        case 2:
            s = t->send_email;
            BENCH_PUTF(&b, "{\"to\":\"%s.%s@example.com\",\"subject\":\"The %s report\",\"body\":\"Hello,\\nthe %s is ready.\\n\","
                           "\"cc\":[\"a@example.org\",\"b.c@example.net\"]}",
                       words[below(24)], words[below(24)], words[below(24)], words[below(24)]);
            break;
        case 3:
            s = t->create_event;
            BENCH_PUTF(&b, "{\"title\":\"Review of %s\",\"start\":\"2026-0%u-1%uT09:30:00Z\",\"end\":\"2026-0%u-1%uT10:00:00+02:00\","
                           "\"attendees\":[{\"name\":\"Ada\",\"email\":\"ada@example.com\"},{\"email\":\"bob@example.org\"}],"
                           "\"duration_minutes\":30,\"recurrence\":%s,\"location\":{\"lat\":48.85,\"lon\":2.35}}",
                       words[below(24)], 1 + below(9), below(10), 1 + below(9), below(10), below(2) ? "null" : "\"weekly\"");
            break;
        default:
            s = t->run_sql;
            BENCH_PUTF(&b, "{\"sql\":\"SELECT * FROM %s WHERE id = ?\",\"params\":[%u,\"x\",true,null],\"limit\":%u,"
                           "\"timeout_ms\":2500.5,\"max_cost_usd\":1.25}",
                       words[below(24)], below(1000), 1 + below(1000));
            break;
        }
        line(rows, s, &b);
    }
    aw_buf_free(&b);
}

static const char big_schema[] =
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://example.com/inventory\",\"type\":\"object\","
    "\"$defs\":{\"item\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\",\"minimum\":1},"
    "\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":80},\"price\":{\"type\":\"number\",\"minimum\":0},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"uniqueItems\":true},\"dims\":{\"$ref\":\"#/$defs/dims\"}},"
    "\"patternProperties\":{\"^x-[a-z]+$\":{\"type\":[\"string\",\"number\",\"boolean\"]}},"
    "\"required\":[\"id\",\"name\",\"price\"],\"unevaluatedProperties\":false},"
    "\"dims\":{\"type\":\"object\",\"properties\":{\"w\":{\"type\":\"number\"},\"h\":{\"type\":\"number\"},"
    "\"d\":{\"type\":\"number\"}},\"additionalProperties\":false}},"
    "\"properties\":{\"version\":{\"const\":1},\"items\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/item\"}}},"
    "\"required\":[\"version\",\"items\"],\"unevaluatedProperties\":false}";

static void gen_big(const tool_ix *t, aw_buf *rows) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    bench_put(&b, "{\"version\":1,\"items\":[");
    for (unsigned k = 1; b.len < 1000000; k++) {
        BENCH_PUTF(&b, "%s{\"id\":%u,\"name\":\"%s %s\",\"price\":%u.%02u,\"tags\":[\"%s\",\"%s-%u\"],"
                       "\"dims\":{\"w\":%u,\"h\":%u.5,\"d\":%u},\"x-color\":\"%s\",\"x-stock\":%u}",
                   k > 1 ? "," : "", k, words[below(24)], words[below(24)], below(500), below(100), words[k % 24],
                   words[(k + 7) % 24], k, below(90), below(90), below(90), below(2) ? "red" : "blue", below(1000));
    }
    bench_put(&b, "]}");
    line(rows, t->big, &b);
    aw_buf_free(&b);
}

/* ---- reading the corpus back, and timing ----------------------------------------- */

static aw_json_doc *parse_or_die(const char *p, size_t n, const char *what) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_json_parse(p, n, NULL, &doc, &err)) {
        fprintf(stderr, "%s: %s\n", what, err.message);
        exit(1);
    }
    return doc;
}

typedef struct row {
    const char *name;
    size_t count, bytes;
    int *schema;
    aw_json_doc **docs;
} row;

static void load_row(const char *dir, row *r) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.tsv", dir, r->name);
    size_t len;
    char *text = bench_read_file(path, &len);
    size_t cap = 16;
    r->schema = malloc(cap * sizeof *r->schema);
    r->docs = malloc(cap * sizeof *r->docs);
    for (char *p = text; p < text + len;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        char *tab = memchr(p, '\t', (size_t)(nl - p));
        if (r->count == cap) {
            cap *= 2;
            r->schema = realloc(r->schema, cap * sizeof *r->schema);
            r->docs = realloc(r->docs, cap * sizeof *r->docs);
        }
        r->schema[r->count] = atoi(p);
        r->docs[r->count] = parse_or_die(tab + 1, (size_t)(nl - tab - 1), path);
        r->bytes += (size_t)(nl - tab - 1);
        r->count++;
        p = nl + 1;
    }
    free(text);
}

static void time_row(row *r, aw_schema **schemas) {
    aw_schema_result res;
    aw_schema_result_init(&res, NULL);
    aw_schema_validate_options quick = {0, 0};
    aw_error err;
    size_t valid = 0;
    for (size_t i = 0; i < r->count; i++) {
        if (aw_schema_validate(schemas[r->schema[i]], aw_json_doc_root(r->docs[i]), &quick, &res, &err)) {
            fprintf(stderr, "validate: %s\n", err.message);
            exit(1);
        }
        valid += res.valid;
    }
    /* passes per batch: enough to fill BATCH_SECONDS */
    double t0 = bench_now();
    size_t passes = 0;
    while (bench_now() - t0 < BATCH_SECONDS / 4) {
        for (size_t i = 0; i < r->count; i++)
            aw_schema_validate(schemas[r->schema[i]], aw_json_doc_root(r->docs[i]), &quick, &res, &err);
        passes++;
    }
    passes *= 4;
    double best = 1e30, best_cpu = 1e30;
    for (int b = 0; b < BATCHES; b++) {
        double w0 = bench_now(), c0 = bench_cpu_now();
        for (size_t p = 0; p < passes; p++)
            for (size_t i = 0; i < r->count; i++)
                aw_schema_validate(schemas[r->schema[i]], aw_json_doc_root(r->docs[i]), &quick, &res, &err);
        double w = bench_now() - w0, c = bench_cpu_now() - c0;
        if (w < best) best = w;
        if (c < best_cpu) best_cpu = c;
    }
    double n = (double)passes * (double)r->count;
    printf("aw.%s.us %.4f\n", r->name, best / n * 1e6);
    printf("aw.%s.cpu_us %.4f\n", r->name, best_cpu / n * 1e6);
    printf("aw.%s.mbps %.2f\n", r->name, (double)passes * (double)r->bytes / best / 1e6);
    printf("%s.count %zu\n%s.bytes %zu\naw.%s.valid %zu\n", r->name, r->count, r->name, r->bytes, r->name, valid);
    aw_schema_result_free(&res);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench_schema DATA_DIR FIXTURES_DIR\n");
        return 2;
    }
    const char *dir = argv[1], *fixtures = argv[2];
    /* schemas.json: every tool schema of the fixtures, then the big one */
    static const char *const files[] = {"mcp-server-filesystem.json", "mcp-server-everything.json", "openai-functions.json"};
    aw_buf schemas_text;
    aw_buf_init(&schemas_text, NULL);
    bench_put(&schemas_text, "[");
    tool_ix t;
    memset(&t, -1, sizeof t);
    int n = 0;
    for (int f = 0; f < 3; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", fixtures, files[f]);
        size_t len;
        char *text = bench_read_file(path, &len);
        aw_json_doc *doc = parse_or_die(text, len, path);
        const aw_json_value *tools = aw_json_get(aw_json_doc_root(doc), "tools");
        for (size_t i = 0; i < aw_json_count(tools); i++) {
            const aw_json_value *tool = aw_json_at(tools, i);
            const aw_json_value *fn = aw_json_get(tool, "function");
            const aw_json_value *def = fn ? fn : tool;
            const aw_json_value *schema = aw_json_get(def, fn ? "parameters" : "inputSchema");
            const char *name = aw_json_get(def, "name")->u.str.ptr;
            if (n) bench_put(&schemas_text, ",");
            if (aw_json_write(schema, NULL, &schemas_text, NULL)) bench_oom();
#define TOOL(x) if (!strcmp(name, #x)) t.x = n;
            TOOL(read_text_file) TOOL(list_directory_with_sizes) TOOL(move_file) TOOL(search_files) TOOL(edit_file) TOOL(read_multiple_files) TOOL(directory_tree) TOOL(write_file)
            TOOL(get_weather) TOOL(search_knowledge_base) TOOL(send_email) TOOL(create_event) TOOL(run_sql)
#undef TOOL
            n++;
        }
        aw_json_doc_free(doc);
        free(text);
    }
    t.big = n++;
    BENCH_PUTF(&schemas_text, ",%s]", big_schema);
    char path[1024];
    snprintf(path, sizeof path, "%s/schemas.json", dir);
    bench_write_file(path, schemas_text.data, schemas_text.len);

    row rows[] = {{"mcp-small", 0, 0, NULL, NULL}, {"mcp-1kb", 0, 0, NULL, NULL}, {"mcp-5kb", 0, 0, NULL, NULL},
                  {"openai", 0, 0, NULL, NULL},    {"big", 0, 0, NULL, NULL}};
    for (int r = 0; r < 5; r++) {
        aw_buf text;
        aw_buf_init(&text, NULL);
        if (r == 0) gen_small(&t, &text, 600);
        else if (r == 1) gen_sized(&t, &text, 200, 1024);
        else if (r == 2) gen_sized(&t, &text, 100, 5120);
        else if (r == 3) gen_openai(&t, &text, 500);
        else gen_big(&t, &text);
        snprintf(path, sizeof path, "%s/%s.tsv", dir, rows[r].name);
        bench_write_file(path, text.data, text.len);
        aw_buf_free(&text);
    }

    /* compile every schema once for the rows; formats asserted */
    aw_json_doc *sdoc = parse_or_die(schemas_text.data, schemas_text.len, "schemas.json");
    const aw_json_value *list = aw_json_doc_root(sdoc);
    size_t ns = aw_json_count(list);
    aw_schema **schemas = calloc(ns, sizeof *schemas);
    aw_schema_options opts = {NULL, AW_SCHEMA_DRAFT_2020_12, true, NULL, NULL};
    aw_error err;
    for (size_t i = 0; i < ns; i++)
        if (aw_schema_compile(aw_json_at(list, i), &opts, &schemas[i], &err)) {
            fprintf(stderr, "schema %zu: %s\n", i, err.message);
            return 1;
        }
    for (int r = 0; r < 5; r++) {
        load_row(dir, &rows[r]);
        time_row(&rows[r], schemas);
    }

    /* compile time: every schema, many rounds; the best round's mean */
    size_t rounds = 200;
    double best = 1e30, best_cpu = 1e30;
    for (int b = 0; b < BATCHES; b++) {
        double w0 = bench_now(), c0 = bench_cpu_now();
        for (size_t k = 0; k < rounds; k++)
            for (size_t i = 0; i < ns; i++) {
                aw_schema *s;
                if (aw_schema_compile(aw_json_at(list, i), &opts, &s, &err)) return 1;
                aw_schema_free(s);
            }
        double w = bench_now() - w0, c = bench_cpu_now() - c0;
        if (w < best) best = w;
        if (c < best_cpu) best_cpu = c;
    }
    printf("aw.compile.us %.3f\naw.compile.cpu_us %.3f\ncompile.schemas %zu\n", best / (double)(rounds * ns) * 1e6,
           best_cpu / (double)(rounds * ns) * 1e6, ns);
    /* the big schema alone */
    best = 1e30;
    for (int b = 0; b < BATCHES; b++) {
        double w0 = bench_now();
        for (size_t k = 0; k < rounds; k++) {
            aw_schema *s;
            if (aw_schema_compile(aw_json_at(list, (size_t)t.big), &opts, &s, &err)) return 1;
            aw_schema_free(s);
        }
        double w = bench_now() - w0;
        if (w < best) best = w;
    }
    printf("aw.compile_big.us %.3f\n", best / (double)rounds * 1e6);
    for (size_t i = 0; i < ns; i++) aw_schema_free(schemas[i]);
    free(schemas);
    aw_json_doc_free(sdoc);
    aw_buf_free(&schemas_text);
    return 0;
}
