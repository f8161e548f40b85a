/* bench_repair: agentwire's side of the JSON repair benchmark (issue 4).
 *
 *   bench_repair DATA_DIR [MB]
 *
 * Generates, from a fixed seed, a corpus of about MB (default 4) megabytes
 * of broken JSON as models write it: tool arguments and structured answers
 * (objects of strings with prose, numbers, literals, arrays, nested objects,
 * 100 bytes to a few KB each), every document broken in one to three of the
 * ways aw_json_repair handles (enum aw_json_repair_step in json.h):
 *
 *   code_fence        ```json ... ``` around the value
 *   surrounding_text  "Sure! Here is the JSON:" before, "Let me know..." after
 *   ellipsis          [1, 2, ...] and "…"
 *   single_quotes     'strings'
 *   unquoted_keys     {key: 1}
 *   trailing_comma    [1, 2,] {"a": 1,}
 *   missing_comma     members and items on new lines without commas
 *   comments          // and block comments between members
 *   python_literals   True, False, None
 *   control_chars     raw newlines and tabs inside strings
 *   invalid_escapes   Windows paths "C:\Program Files\App" (\P, \A), quotes
 *                     inside strings that were not escaped
 *   unclosed          the document cut off (a reply that hit max_tokens)
 *   missing_colon     {"key" "value"}
 *   missing_value     {"key": , ...} and {"key":}
 *
 * and writes it to DATA_DIR/repair-corpus.jsonl, one document a line as
 * {"kinds": [...], "text": "..."}, for the peer (bench/peers/repair_peer.js,
 * npm jsonrepair).
 *
 * Measures aw_json_repair over every document, into one reused buffer, the
 * best of 5 to 25 passes (as many as fit in a second); MB/s of input bytes,
 * by the clock and by the process's CPU time. Writes what it produced to
 * DATA_DIR/repair-aw.jsonl (a JSON string per line, or null when nothing
 * could be recovered) for the peer to compare, untimed, and prints, as
 * "key value" lines, the numbers and how often each repair step was applied
 * (every step must occur, or the corpus does not cover the repairer; exit
 * status 1 then). Times come from clock_gettime(CLOCK_MONOTONIC). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentwire/agentwire.h"
#include "bench_util.h"

/* Passes over the corpus: at least MIN_REPS, more until a second is spent
 * (up to MAX_REPS); the best counts. */
#define MIN_REPS 5
#define MAX_REPS 25

typedef bench_rng rng;

static unsigned rnd(rng *r, unsigned n) { return (unsigned)(bench_splitmix(r) % n); }
static int chance(rng *r, unsigned percent) { return rnd(r, 100) < percent; }
#define PICK(r, arr) (arr[rnd((r), (unsigned)(sizeof(arr) / sizeof(arr[0])))])

static void putc1(aw_buf *b, char c) {
    if (aw_buf_putc(b, c)) bench_oom();
}

/* The kinds, in the order of enum aw_json_repair_step. */
enum {
    K_FENCE, K_PROSE, K_ELLIPSIS, K_SINGLE, K_UNQUOTED, K_TRAILING, K_MISSING_COMMA, K_COMMENTS,
    K_PYTHON, K_CONTROL, K_ESCAPES, K_UNCLOSED, K_MISSING_COLON, K_MISSING_VALUE, K_COUNT
};

static const char *kind_name(int k) { return aw_json_repair_step_name(1u << k); }

static const char *const words[] = {
    "the", "search", "results", "show", "that", "plan", "costs", "about", "per", "month", "and", "users",
    "prefer", "fast", "answers", "with", "sources", "file", "was", "updated", "in", "branch", "main",
    "build", "failed", "because", "of", "a", "missing", "header", "retry", "later", "tokens", "budget",
    "caf\xC3\xA9", "na\xC3\xAFve", "\xE6\x97\xA5\xE6\x9C\xAC", "\xE2\x80\x94", "50%", "a<b", "x>0", "R&D",
};
static const char *const keys[] = {"query", "max_results", "path", "content", "url", "timeout_ms", "reason",
                                   "title", "summary", "tags", "items", "score", "is_final", "metadata",
                                   "user_id", "language", "steps", "confidence", "notes", "options"};

typedef struct gen {
    rng *r;
    unsigned kinds; /* 1 << K_* */
    aw_buf *b;
    int depth;
} gen;

static int has(const gen *g, int k) { return (g->kinds >> k) & 1u; }

/* Blank between tokens; sometimes a comment. */
static void ws(gen *g) {
    if (has(g, K_COMMENTS) && chance(g->r, 12)) {
        if (chance(g->r, 50)) bench_put(g->b, " // the model explains itself here\n");
        else bench_put(g->b, " /* note: see above */ ");
    } else if (chance(g->r, 30)) {
        bench_put(g->b, " ");
    }
}

static void string_body(gen *g, char quote) {
    unsigned n = 1 + rnd(g->r, 12);
    for (unsigned i = 0; i < n; i++) {
        if (i) {
            if (has(g, K_CONTROL) && quote == '"' && chance(g->r, 10)) putc1(g->b, chance(g->r, 70) ? '\n' : '\t');
            else putc1(g->b, ' ');
        }
        unsigned k = rnd(g->r, 100);
        if (quote == '"' && k < 3) bench_put(g->b, "\\\"quoted\\\"");
        else if (quote == '"' && k < 5) bench_put(g->b, "line\\nbreak");
        else if (quote == '"' && k < 6) bench_put(g->b, "\\u00e9t\\u00e9");
        else bench_put(g->b, PICK(g->r, words));
    }
}

static void string(gen *g) {
    if (has(g, K_ESCAPES) && chance(g->r, 15)) {
        static const char *const bad[] = {"\"C:\\Program Files\\App\\data.txt\"", "\"D:\\Users\\me\\Desktop\"",
                                          "\"match \\d+ digits then \\s spaces\"", "\"He said \"hi\" to me\""};
        bench_put(g->b, PICK(g->r, bad));
        return;
    }
    char q = has(g, K_SINGLE) && chance(g->r, 60) ? '\'' : '"';
    putc1(g->b, q);
    string_body(g, q);
    putc1(g->b, q);
}

static void key(gen *g) {
    const char *k = PICK(g->r, keys);
    if (has(g, K_UNQUOTED) && chance(g->r, 60)) bench_put(g->b, k);
    else if (has(g, K_SINGLE) && chance(g->r, 50)) BENCH_PUTF(g->b, "'%s'", k);
    else BENCH_PUTF(g->b, "\"%s\"", k);
}

static void literal(gen *g) {
    static const char *const js[] = {"true", "false", "null"};
    static const char *const py[] = {"True", "False", "None"};
    unsigned w = rnd(g->r, 3);
    bench_put(g->b, has(g, K_PYTHON) && chance(g->r, 70) ? py[w] : js[w]);
}

static void number(gen *g) {
    switch (rnd(g->r, 4)) {
    case 0: BENCH_PUTF(g->b, "%u", rnd(g->r, 1000)); break;
    case 1: BENCH_PUTF(g->b, "-%u", rnd(g->r, 100000)); break;
    case 2: BENCH_PUTF(g->b, "%u.%02u", rnd(g->r, 100), rnd(g->r, 100)); break;
    default: BENCH_PUTF(g->b, "%ue%d", 1 + rnd(g->r, 9), (int)rnd(g->r, 12) - 6); break;
    }
}

static void value(gen *g);

static void separator(gen *g, int last) {
    if (last) {
        if (has(g, K_TRAILING) && chance(g->r, 40)) putc1(g->b, ',');
        return;
    }
    if (has(g, K_MISSING_COMMA) && chance(g->r, 35)) bench_put(g->b, "\n  ");
    else bench_put(g->b, chance(g->r, 50) ? ", " : ",\n  ");
}

static void array(gen *g) {
    unsigned n = 1 + rnd(g->r, 6);
    putc1(g->b, '[');
    g->depth++;
    for (unsigned i = 0; i < n; i++) {
        ws(g);
        value(g);
        separator(g, i + 1 == n && !(has(g, K_ELLIPSIS)));
        if (i + 1 == n && has(g, K_ELLIPSIS)) {
            bench_put(g->b, chance(g->r, 70) ? " ..." : " \xE2\x80\xA6");
            if (has(g, K_TRAILING) && chance(g->r, 30)) putc1(g->b, ',');
        }
    }
    g->depth--;
    ws(g);
    putc1(g->b, ']');
}

static void object(gen *g) {
    unsigned n = 2 + rnd(g->r, g->depth ? 4 : 7);
    putc1(g->b, '{');
    g->depth++;
    for (unsigned i = 0; i < n; i++) {
        ws(g);
        key(g);
        if (has(g, K_MISSING_COLON) && chance(g->r, 30)) {
            putc1(g->b, ' ');
            value(g);
        } else if (has(g, K_MISSING_VALUE) && chance(g->r, 25)) {
            bench_put(g->b, ": ");
        } else {
            bench_put(g->b, chance(g->r, 80) ? ": " : ":");
            value(g);
        }
        separator(g, i + 1 == n);
    }
    g->depth--;
    ws(g);
    putc1(g->b, '}');
}

static void value(gen *g) {
    unsigned k = rnd(g->r, 100);
    if (g->depth < 3 && k < 12) object(g);
    else if (g->depth < 3 && k < 24) array(g);
    else if (k < 65) string(g);
    else if (k < 85) number(g);
    else literal(g);
}

/* One broken document into b; *kinds gets the kinds applied. */
static void document(rng *r, aw_buf *b, unsigned *kinds) {
    gen g = {r, 0, b, 0};
    unsigned n = 1 + rnd(r, 3);
    for (unsigned i = 0; i < n; i++) g.kinds |= 1u << rnd(r, K_COUNT);
    aw_buf_clear(b);
    if (has(&g, K_PROSE) && chance(r, 80)) bench_put(b, chance(r, 50) ? "Sure! Here is the JSON you asked for:\n\n" : "Calling the tool with: ");
    if (has(&g, K_FENCE)) bench_put(b, "```json\n");
    object(&g);
    if (has(&g, K_FENCE)) bench_put(b, "\n```");
    if (has(&g, K_PROSE)) bench_put(b, "\n\nLet me know if you need anything else.");
    if (has(&g, K_UNCLOSED) && b->len > 8) {
        size_t cut = b->len / 2 + rnd(r, (unsigned)(b->len / 2));
        while (cut < b->len && ((unsigned char)b->data[cut] & 0xC0) == 0x80) cut++;
        b->len = cut;
        b->data[cut] = '\0';
    }
    *kinds = g.kinds;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bench_repair DATA_DIR [MB]\n");
        return 2;
    }
    double mb = argc == 3 ? atof(argv[2]) : 4.0;
    size_t target = (size_t)(mb * 1e6);
    char path[4096];

    /* ---- the corpus ---- */
    rng r = {20240605};
    aw_buf all, one, line;
    aw_buf_init(&all, NULL);
    aw_buf_init(&one, NULL);
    aw_buf_init(&line, NULL);
    size_t cap = 1024, ndocs = 0;
    size_t *offs = malloc(cap * sizeof *offs), *lens = malloc(cap * sizeof *lens);
    unsigned *kinds = malloc(cap * sizeof *kinds);
    if (!offs || !lens || !kinds) bench_oom();
    snprintf(path, sizeof path, "%s/repair-corpus.jsonl", argv[1]);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 1;
    }
    while (all.len < target) {
        if (ndocs == cap) {
            cap *= 2;
            offs = realloc(offs, cap * sizeof *offs);
            lens = realloc(lens, cap * sizeof *lens);
            kinds = realloc(kinds, cap * sizeof *kinds);
            if (!offs || !lens || !kinds) bench_oom();
        }
        /* every document is broken: one that came out valid (the faults
         * chosen found no place to go) is drawn again */
        aw_json_doc *valid = NULL;
        do {
            aw_json_doc_free(valid);
            valid = NULL;
            document(&r, &one, &kinds[ndocs]);
        } while (aw_json_parse(one.data, one.len, NULL, &valid, NULL) == 0);
        offs[ndocs] = all.len;
        lens[ndocs] = one.len;
        if (aw_buf_append(&all, one.data, one.len)) bench_oom();
        aw_buf_clear(&line);
        bench_put(&line, "{\"kinds\": [");
        for (int k = 0, first = 1; k < K_COUNT; k++)
            if ((kinds[ndocs] >> k) & 1u) {
                BENCH_PUTF(&line, "%s\"%s\"", first ? "" : ", ", kind_name(k));
                first = 0;
            }
        bench_put(&line, "], \"text\": ");
        if (aw_json_write_string(&line, one.data, one.len)) bench_oom();
        bench_put(&line, "}\n");
        if (fwrite(line.data, 1, line.len, f) != line.len) {
            perror(path);
            return 1;
        }
        ndocs++;
    }
    if (fclose(f)) {
        perror(path);
        return 1;
    }

    /* ---- the measurement ---- */
    aw_buf out;
    aw_buf_init(&out, NULL);
    double best = 1e30, best_cpu = 1e30;
    size_t failed = 0, out_bytes = 0;
    double spent = 0;
    int passes = 0;
    for (; passes < MAX_REPS && (passes < MIN_REPS || spent < 1.0); passes++) {
        failed = out_bytes = 0;
        double c0 = bench_cpu_now();
        double t0 = bench_now();
        for (size_t i = 0; i < ndocs; i++) {
            aw_buf_clear(&out);
            if (aw_json_repair(all.data + offs[i], lens[i], NULL, &out, NULL, NULL)) failed++;
            out_bytes += out.len;
        }
        double t = bench_now() - t0, cpu = bench_cpu_now() - c0;
        spent += t;
        if (t < best) best = t;
        if (cpu < best_cpu) best_cpu = cpu;
    }

    /* ---- untimed: the outputs for the peer, and the steps applied ---- */
    size_t step_count[K_COUNT] = {0}, unchanged = 0;
    snprintf(path, sizeof path, "%s/repair-aw.jsonl", argv[1]);
    f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 1;
    }
    for (size_t i = 0; i < ndocs; i++) {
        aw_buf_clear(&out);
        aw_buf_clear(&line);
        unsigned steps = 0;
        aw_error err;
        if (aw_json_repair(all.data + offs[i], lens[i], NULL, &out, &steps, &err) == 0) {
            aw_json_doc *check = NULL;
            if (aw_json_parse(out.data, out.len, NULL, &check, &err)) {
                fprintf(stderr, "bench_repair: document %zu: the repair is not JSON: %s\n", i, err.message);
                return 1;
            }
            aw_json_doc_free(check);
            if (aw_json_write_string(&line, out.data, out.len)) bench_oom();
            for (int k = 0; k < K_COUNT; k++) step_count[k] += (steps >> k) & 1u;
            if (!steps) unchanged++;
        } else {
            bench_put(&line, "null");
        }
        putc1(&line, '\n');
        if (fwrite(line.data, 1, line.len, f) != line.len) {
            perror(path);
            return 1;
        }
    }
    if (fclose(f)) {
        perror(path);
        return 1;
    }
    size_t kind_docs[K_COUNT] = {0};
    for (size_t i = 0; i < ndocs; i++)
        for (int k = 0; k < K_COUNT; k++) kind_docs[k] += (kinds[i] >> k) & 1u;

    printf("docs %zu\n", ndocs);
    printf("input_bytes %zu\n", all.len);
    printf("aw.out_bytes %zu\n", out_bytes);
    printf("aw.failed %zu\n", failed);
    printf("aw.unchanged %zu\n", unchanged);
    printf("aw.passes %d\n", passes);
    printf("aw.seconds %.6f\n", best);
    printf("aw.mbps %.1f\n", (double)all.len / best / 1e6);
    printf("aw.cpu_mbps %.1f\n", (double)all.len / best_cpu / 1e6);
    int covered = 1;
    for (int k = 0; k < K_COUNT; k++) {
        printf("kind.%s.docs %zu\n", kind_name(k), kind_docs[k]);
        printf("aw.step.%s %zu\n", kind_name(k), step_count[k]);
        if (!step_count[k]) covered = 0;
    }
    printf("aw.all_steps_seen %s\n", covered ? "yes" : "no");
    aw_buf_free(&all);
    aw_buf_free(&one);
    aw_buf_free(&line);
    aw_buf_free(&out);
    free(offs);
    free(lens);
    free(kinds);
    return covered ? 0 : 1;
}
