/* bench_dialects: agentwire's side of the dialects benchmark (issue 18).
 *
 *   bench_dialects VECTORS_DIR DATA_DIR
 *
 * 1. Per dialect: the replies of tests/vectors/dialects/NAME.json (real
 *    replies, each with its declared tools), each read by a fresh
 *    aw_extractor (native mode, only that dialect on) fed the whole reply,
 *    then finish; repeated until 0.3 s of CPU time are spent, best of 3.
 *    MB/s of reply bytes by CPU time. bench/peers/dialects_peer.py reads
 *    the same files and is timed the same way.
 * 2. A 1 MB prose reply (fixed seed: paragraphs, lists, links, citations
 *    in brackets, inline code with '<', fences of Python, C and HTML, a
 *    table; no call), written to DATA_DIR/prose-1MB.txt, read with every
 *    dialect on ("auto"), whole and in 16-byte chunks. GB/s.
 *
 * Checks, untimed: every corpus reply gives the calls its vector names
 * (count); the prose gives no call and no rejection, and its visible text
 * is the reply, byte for byte. Exit status 1 otherwise. Prints "key value"
 * lines for bench/run_dialects.sh. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "bench_util.h"

static const char *const dialects[] = {"hermes", "qwen3_coder", "glm45",    "granite",  "llama3",
                                       "pythonic", "mistral",   "deepseek", "kimi_k2",  "minimax",
                                       "function_calls", "harmony", "fenced"};

typedef struct counts {
    size_t calls, rejected, text_bytes;
    aw_buf *visible;
} counts;

static int on_event(void *ctx, const aw_x_event *ev) {
    counts *c = ctx;
    if (ev->kind == AW_X_CALL) c->calls++;
    else if (ev->kind == AW_X_REJECTED) c->rejected++;
    else if (ev->kind == AW_X_TEXT) {
        c->text_bytes += ev->text.len;
        if (c->visible && aw_buf_append(c->visible, ev->text.ptr, ev->text.len)) exit(1);
    }
    return 0;
}

static void extract(const aw_transport *t, const char *p, size_t n, size_t chunk, counts *c) {
    aw_extractor *x = aw_extractor_new(t, 1);
    if (!x) exit(1);
    for (size_t i = 0; i < n; i += chunk) {
        size_t len = n - i < chunk ? n - i : chunk;
        if (aw_extractor_feed(x, p + i, len, on_event, c, NULL)) exit(1);
    }
    if (aw_extractor_finish(x, "stop", on_event, c, NULL)) exit(1);
    aw_extractor_free(x);
}

static aw_transport *session(const aw_json_value *tools, unsigned flags) {
    aw_tool_def *defs = NULL;
    size_t n = 0;
    if (tools && aw_tools_from_json(tools, NULL, &defs, &n, NULL)) exit(1);
    aw_transport_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = AW_TRANSPORT_NATIVE;
    cfg.nonce = "1a2b3c4d";
    cfg.tools = defs;
    cfg.tool_count = n;
    cfg.dialects = flags;
    aw_transport *t = aw_transport_new(&cfg, NULL);
    if (!t) exit(1);
    aw_free(NULL, defs);
    return t;
}

/* ---- per dialect ------------------------------------------------------------------ */

static size_t total_replies;

static int bench_dialect(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    size_t len;
    char *text = bench_read_file(path, &len);
    aw_json_doc *doc = NULL;
    if (aw_json_parse(text, len, NULL, &doc, NULL)) {
        fprintf(stderr, "%s: not JSON\n", path);
        exit(1);
    }
    const aw_json_value *vecs = aw_json_doc_root(doc);
    size_t nv = aw_json_count(vecs);
    aw_transport **ts = calloc(nv, sizeof *ts);
    unsigned flag = aw_dialect_flag(name, strlen(name));
    size_t bytes = 0, want = 0, got = 0;
    int ok = 1;
    for (size_t i = 0; i < nv; i++) {
        const aw_json_value *v = aw_json_at(vecs, i);
        ts[i] = session(aw_json_get(v, "tools"), flag);
        const aw_json_value *r = aw_json_get(v, "reply");
        bytes += r->u.str.len;
        want += aw_json_count(aw_json_get(v, "calls"));
        counts c = {0, 0, 0, NULL};
        extract(ts[i], r->u.str.ptr, r->u.str.len, r->u.str.len ? r->u.str.len : 1, &c);
        got += c.calls;
    }
    if (got != want) {
        fprintf(stderr, "bench_dialects: %s: %zu calls, the corpus names %zu\n", name, got, want);
        ok = 0;
    }
    /* by CPU time, as the peer is: the machine's other load falls on neither */
    double best = 1e9;
    size_t reps_done = 0;
    for (int round = 0; round < 3; round++) {
        double t0 = bench_cpu_now(), el = 0;
        size_t reps = 0;
        do {
            for (size_t i = 0; i < nv; i++) {
                const aw_json_value *r = aw_json_get(aw_json_at(vecs, i), "reply");
                counts c = {0, 0, 0, NULL};
                extract(ts[i], r->u.str.ptr, r->u.str.len, r->u.str.len ? r->u.str.len : 1, &c);
            }
            reps++;
            el = bench_cpu_now() - t0;
        } while (el < 0.3);
        if (el / (double)reps < best) best = el / (double)reps, reps_done = reps;
    }
    total_replies += nv;
    printf("aw.%s.replies %zu\naw.%s.bytes %zu\naw.%s.calls %zu\naw.%s.reps %zu\naw.%s.cpu_mbps %.2f\n", name, nv,
           name, bytes, name, got, name, reps_done, name, (double)bytes / best / 1e6);
    for (size_t i = 0; i < nv; i++) aw_transport_free(ts[i]);
    free(ts);
    aw_json_doc_free(doc);
    free(text);
    return ok;
}

/* ---- the prose reply -------------------------------------------------------------- */

static const char *const words[] = {
    "the", "model", "reply", "tool", "server", "parser", "a", "of", "and", "to", "in", "is", "that", "for",
    "call", "function", "weather", "Paris", "result", "file", "value", "returns", "when", "with", "this",
    "argument", "list", "JSON", "schema", "type", "string", "number", "über", "naïve", "déjà", "vu", "€5",
};

static void words_into(bench_rng *r, aw_buf *b, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        const char *w = words[bench_splitmix(r) % (sizeof words / sizeof words[0])];
        if (i) aw_buf_putc(b, ' ');
        aw_buf_append_str(b, w);
        unsigned k = (unsigned)(bench_splitmix(r) % 40);
        if (k == 0) aw_buf_append_str(b, " `vector<int>`");
        else if (k == 1) aw_buf_append_str(b, " [the docs](https://example.org/docs)");
        else if (k == 2) aw_buf_append_str(b, " (a < b and c > d)");
        else if (k == 3) aw_buf_append_str(b, ",");
        else if (k == 4) aw_buf_append_str(b, " <br>");
    }
}

static void prose(aw_buf *b, size_t size) {
    bench_rng r = {18};
    while (b->len < size) {
        unsigned kind = (unsigned)(bench_splitmix(&r) % 10);
        if (kind == 0) {
            aw_buf_append_str(b, "## ");
            words_into(&r, b, 4);
            aw_buf_append_str(b, "\n\n");
        } else if (kind == 1) {
            for (int i = 0; i < 4; i++) {
                aw_buf_append_str(b, "- ");
                words_into(&r, b, 8);
                aw_buf_putc(b, '\n');
            }
            aw_buf_putc(b, '\n');
        } else if (kind == 2) {
            aw_buf_append_str(b, "```python\nfor i in range(10):\n    if a[i] < b[i]:\n        print({'k': a[i]})\n"
                                 "[x(1) for x in fs]\n```\n\n");
        } else if (kind == 3) {
            aw_buf_append_str(b, "```c\nint main(void) { return a < b ? x[0] : 0; }\n```\n\n```html\n<div class=\"x\">"
                                 "<p>text</p></div>\n```\n\n");
        } else if (kind == 4) {
            aw_buf_append_str(b, "[1] ");
            words_into(&r, b, 10);
            aw_buf_append_str(b, "\n\n| a | b |\n|---|---|\n| 1 < 2 | x |\n\n");
        } else {
            words_into(&r, b, 60);
            aw_buf_append_str(b, ".\n");
            words_into(&r, b, 40);
            aw_buf_append_str(b, ".\n\n");
        }
    }
}

static int bench_prose(const char *data) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    prose(&b, 1000000);
    char path[4096];
    snprintf(path, sizeof path, "%s/prose-1MB.txt", data);
    bench_write_file(path, b.data, b.len);
    aw_transport *t = session(NULL, AW_DIALECT_AUTO);
    int ok = 1;
    aw_buf vis;
    aw_buf_init(&vis, NULL);
    static const size_t chunks[] = {0, 16};
    for (int k = 0; k < 2; k++) {
        size_t chunk = chunks[k] ? chunks[k] : b.len;
        aw_buf_clear(&vis);
        counts c = {0, 0, 0, &vis};
        extract(t, b.data, b.len, chunk, &c);
        if (c.calls || c.rejected || vis.len != b.len || memcmp(vis.data, b.data, b.len)) {
            fprintf(stderr, "bench_dialects: prose in chunks of %zu: %zu calls, %zu rejected, visible %s\n", chunk,
                    c.calls, c.rejected, vis.len == b.len ? "differs" : "has another length");
            ok = 0;
        }
        double best = 1e9, cpu_best = 1e9;
        for (int round = 0; round < 5; round++) {
            size_t reps = 0;
            double t0 = bench_now(), c0 = bench_cpu_now(), el;
            do {
                counts cc = {0, 0, 0, NULL};
                extract(t, b.data, b.len, chunk, &cc);
                reps++;
                el = bench_now() - t0;
            } while (el < 0.2);
            double cpu = bench_cpu_now() - c0;
            if (el / (double)reps < best) best = el / (double)reps;
            if (cpu / (double)reps < cpu_best) cpu_best = cpu / (double)reps;
        }
        const char *label = chunks[k] ? "16" : "whole";
        printf("aw.prose.%s.mbps %.1f\naw.prose.%s.cpu_mbps %.1f\n", label, (double)b.len / best / 1e6, label,
               (double)b.len / cpu_best / 1e6);
    }
    printf("prose.bytes %zu\n", b.len);
    aw_buf_free(&vis);
    aw_buf_free(&b);
    aw_transport_free(t);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench_dialects VECTORS_DIR DATA_DIR\n");
        return 2;
    }
    int ok = 1;
    for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++) ok &= bench_dialect(argv[1], dialects[i]);
    ok &= bench_prose(argv[2]);
    printf("aw.replies %zu\naw.consistent %s\n", total_replies, ok ? "yes" : "no");
    return ok ? 0 : 1;
}
