/* bench_transport: agentwire's side of the transport benchmark (issue 4).
 *
 *   bench_transport DATA_DIR
 *
 * Generates, from a fixed seed, model replies of 1, 4 and 16 MB (MB is 10^6
 * bytes) and writes them to DATA_DIR/reply-<S>MB.txt for the JavaScript
 * peer (bench/peers/transport_peer.js). A reply is what a model writes in
 * xml mode: prose (with '<', '>' and '&' in it, and non-ASCII), markdown
 * (headings, lists, tables, inline code such as `vector<int>`), fenced code
 * blocks full of '<' (C, C++, HTML, Python, shell), and, every 125,000
 * bytes, one tool tag of this session
 *
 *   <ai-agent-5e7a9c21-0001 tool="search">{"query": "...", ...}</ai-agent-5e7a9c21-0001>
 *
 * with a JSON payload (compact or pretty-printed, 100 bytes to 4 KB, '<' and
 * escapes inside strings), eight a megabyte, and at the end a FINAL report
 * in markdown (about 5 KB). The session: mode xml, nonce 5e7a9c21, 1,000
 * calls a turn (so that every tag of the 16 MB reply has an open slot),
 * tools search, fetch, read_file, run_shell and write_file, format markdown.
 *
 * Each reply goes through a fresh aw_extractor (turn 1), fed whole, in
 * 16-byte chunks and in 1-byte chunks, then aw_extractor_finish("stop");
 * the callback only counts events and bytes. The nine runs (three sizes,
 * three chunkings) are made in rounds, 5 to 25 of them (as many as fit in
 * 4 seconds), so that load from elsewhere falls on all of them alike; the
 * best of each counts. MB/s of reply bytes, by the clock (the rows) and by
 * the process's CPU time (for the linearity verdict, which the machine's
 * other load should not decide). Prints one "key value" line per measurement
 * (bench/run_transport.sh joins them with the peer's into table rows).
 *
 * Checks, untimed: every run of a reply reports the same calls, final
 * report, text and payload bytes whatever the chunking; the calls are the
 * tags that were written; nothing is rejected. Exit status 1 otherwise.
 *
 * Times come from clock_gettime(CLOCK_MONOTONIC). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentwire/agentwire.h"
#include "bench_util.h"

#define NONCE "5e7a9c21"
#define TAG_EVERY 125000u
#define MAX_CALLS 1000u
/* Rounds of the nine runs: at least MIN_ROUNDS, more until MIN_SECONDS are
 * spent (up to MAX_ROUNDS); the best of each run counts. */
#define MIN_ROUNDS 5
#define MAX_ROUNDS 25
#define MIN_SECONDS 4.0

/* ---- a fixed-seed generator ------------------------------------------------ */

typedef bench_rng rng;

static unsigned rnd(rng *r, unsigned n) { return (unsigned)(bench_splitmix(r) % n); }
static int chance(rng *r, unsigned percent) { return rnd(r, 100) < percent; }
#define PICK(r, arr) (arr[rnd((r), (unsigned)(sizeof(arr) / sizeof(arr[0])))])

static const char *const words[] = {
    "the", "model", "reply", "stream", "parser", "tool", "call", "result", "buffer", "chunk", "token",
    "latency", "budget", "context", "window", "agent", "session", "turn", "slot", "nonce", "payload",
    "schema", "request", "response", "cache", "index", "query", "search", "file", "function", "error",
    "retry", "timeout", "value", "string", "object", "array", "field", "record", "report", "summary",
    "user", "answer", "question", "step", "plan", "test", "build", "release", "branch", "commit",
    "and", "or", "with", "for", "from", "into", "over", "under", "then", "when", "which", "that", "this",
    "is", "are", "was", "will", "can", "should", "must", "may", "not", "only", "each", "every", "some",
    "quickly", "carefully", "again", "first", "last", "next", "large", "small", "linear", "stable",
    "caf\xC3\xA9", "na\xC3\xAFve", "r\xC3\xA9sum\xC3\xA9", "\303\274ber", "\xE6\x97\xA5\xE6\x9C\xAC",
};

/* Bits of text a model puts in prose: comparisons, markup-looking words,
 * entities, typographic characters. None of them can start one of our
 * tags. */
static const char *const inlines[] = {
    "`a < b`", "when x > 0", "if n <= 10", "3 < 4 < 5", "R&D", "AT&T", "&amp; (literally)",
    "`std::vector<int>`", "`Map<String, List<Integer>>`", "a <br> tag", "the <div> element",
    "\xE2\x80\x94", "\xE2\x80\x9Cquoted\xE2\x80\x9D", "e.g.", "i.e.", "(see below)", "\xE2\x86\x92",
    "<- an arrow", "x << 2", "`<T>`", "1 < 2", "<aside>", "\xE2\x89\xA4 5 ms", "50% of it",
};

static void sentence(rng *r, aw_buf *b) {
    unsigned n = 6 + rnd(r, 13);
    for (unsigned i = 0; i < n; i++) {
        const char *w = chance(r, 7) ? PICK(r, inlines) : PICK(r, words);
        if (i == 0 && w[0] >= 'a' && w[0] <= 'z') {
            char c = (char)(w[0] - 'a' + 'A');
            bench_putn(b, &c, 1);
            bench_put(b, w + 1);
        } else {
            bench_put(b, w);
        }
        if (i + 1 < n) bench_put(b, chance(r, 8) ? ", " : " ");
    }
    bench_put(b, chance(r, 15) ? "? " : ". ");
}

static void prose(rng *r, aw_buf *b) {
    unsigned n = 3 + rnd(r, 7);
    for (unsigned i = 0; i < n; i++) sentence(r, b);
    b->len--; /* the last blank */
    bench_put(b, "\n\n");
}

static void markdown(rng *r, aw_buf *b) {
    BENCH_PUTF(b, "## %s %s %s\n\n", "Notes on", PICK(r, words), PICK(r, words));
    unsigned items = 3 + rnd(r, 4);
    for (unsigned i = 0; i < items; i++) {
        BENCH_PUTF(b, "- **%s**: ", PICK(r, words));
        sentence(r, b);
        b->len--;
        bench_put(b, "\n");
    }
    bench_put(b, "\n");
    if (chance(r, 40)) {
        bench_put(b, "| step | input | cost |\n|---|---|---|\n");
        unsigned rows = 2 + rnd(r, 4);
        for (unsigned i = 0; i < rows; i++)
            BENCH_PUTF(b, "| %s | `%s<%u>` | %u.%u ms |\n", PICK(r, words), PICK(r, words), rnd(r, 64), rnd(r, 900), rnd(r, 10));
        bench_put(b, "\n");
    }
}

static const char *const code_c[] = {
    "#include <stdio.h>", "#include <stdlib.h>", "for (size_t i = 0; i < n; i++) {",
    "    if (a[i] < b[i]) swap(&a[i], &b[i]);", "}", "while (p < end && *p != '<') p++;",
    "x <<= 2; y = x >> 1;", "if (len <= 0 || p == NULL) return -1;", "return a < b ? -1 : a > b;",
    "printf(\"%d < %d\\n\", lo, hi);", "static int cmp(const void *a, const void *b);",
};
static const char *const code_cpp[] = {
    "std::vector<std::pair<int, int>> v;", "template <typename T> T max(T a, T b) { return a < b ? b : a; }",
    "std::map<std::string, std::vector<int>> index;", "for (auto it = v.begin(); it != v.end(); ++it) {",
    "    std::cout << *it << '\\n';", "}", "static_assert(sizeof(int) <= 8);",
};
static const char *const code_html[] = {
    "<div class=\"card\">", "  <span class=\"title\">{{ title }}</span>", "  <p>Price &lt; $5 &amp; more</p>",
    "  <img src=\"a.png\" alt=\"a < b\">", "</div>", "<ul><li>one</li><li>two</li></ul>",
    "<script>if (a < b) { go(); }</script>",
};
static const char *const code_py[] = {
    "def clamp(x, lo, hi):", "    if x < lo:", "        return lo", "    return hi if x > hi else x",
    "items = [i for i in range(10) if i < 5]", "print(f\"{a} < {b}\")", "assert 0 <= p <= 1",
};
static const char *const code_sh[] = {
    "grep -n 'a < b' src/*.c | head -n 20", "cat <<'EOF' > out.txt", "hello", "EOF",
    "sort < in.txt > out.txt", "test \"$n\" -lt 10 && echo small", "find . -name '*.c' -newer Makefile",
};

static void code(rng *r, aw_buf *b) {
    static const char *const langs[] = {"c", "cpp", "html", "python", "sh"};
    unsigned k = rnd(r, 5);
    BENCH_PUTF(b, "```%s\n", langs[k]);
    unsigned lines = 4 + rnd(r, 12);
    for (unsigned i = 0; i < lines; i++) {
        const char *l;
        switch (k) {
        case 0: l = PICK(r, code_c); break;
        case 1: l = PICK(r, code_cpp); break;
        case 2: l = PICK(r, code_html); break;
        case 3: l = PICK(r, code_py); break;
        default: l = PICK(r, code_sh); break;
        }
        bench_put(b, l);
        bench_put(b, "\n");
    }
    bench_put(b, "```\n\n");
}

static void section(rng *r, aw_buf *b) {
    unsigned k = rnd(r, 100);
    if (k < 50) prose(r, b);
    else if (k < 75) markdown(r, b);
    else code(r, b);
}

/* A JSON string of a few words (and, now and then, escapes). */
static void json_words(rng *r, aw_buf *b, unsigned n) {
    bench_put(b, "\"");
    for (unsigned i = 0; i < n; i++) {
        if (i) bench_put(b, " ");
        unsigned k = rnd(r, 100);
        if (k < 5) bench_put(b, "a < b");
        else if (k < 8) bench_put(b, "\\\"quoted\\\"");
        else if (k < 10) bench_put(b, "tab\\there");
        else if (k < 12) bench_put(b, "\\u00e9t\\u00e9");
        else bench_put(b, PICK(r, words));
    }
    bench_put(b, "\"");
}

static const char *const tools[] = {"search", "fetch", "read_file", "run_shell", "write_file"};

/* One tool tag, slot number `slot`. */
static void tool_tag(rng *r, aw_buf *b, unsigned slot) {
    unsigned k = rnd(r, 5);
    int pretty = chance(r, 40);
    const char *nl = pretty ? "\n  " : " ";
    BENCH_PUTF(b, "I will call %s now.\n\n<ai-agent-" NONCE "-%04u tool=\"%s\">%s{%s", tools[k], slot, tools[k],
         pretty ? "\n" : "", pretty ? "  " : "");
    switch (k) {
    case 0:
        bench_put(b, "\"query\": ");
        json_words(r, b, 3 + rnd(r, 6));
        BENCH_PUTF(b, ",%s\"max_results\": %u,%s\"site\": \"docs.example.org\"", nl, 1 + rnd(r, 20), nl);
        break;
    case 1:
        BENCH_PUTF(b, "\"url\": \"https://example.org/%s/%s?x=%u&y=a%%3Cb\",%s\"headers\": {\"Accept\": \"text/html\"}",
             PICK(r, words), PICK(r, words), rnd(r, 1000), nl);
        break;
    case 2:
        BENCH_PUTF(b, "\"path\": \"src/%s_%s.c\",%s\"lines\": [%u, %u]", PICK(r, words), PICK(r, words), nl, 1 + rnd(r, 100),
             100 + rnd(r, 400));
        break;
    case 3:
        BENCH_PUTF(b, "\"command\": \"grep -rn \\\"a < b\\\" src | head -n %u\",%s\"timeout_ms\": 30000,%s\"env\": {\"LC_ALL\": \"C\"}",
             5 + rnd(r, 50), nl, nl);
        break;
    default: {
        /* a file's content: code lines, escaped, 1 to 4 KB */
        BENCH_PUTF(b, "\"path\": \"src/%s.c\",%s\"content\": \"", PICK(r, words), nl);
        size_t want = 1000 + rnd(r, 3000), start = b->len;
        while (b->len - start < want) {
            const char *l = PICK(r, code_c);
            for (const char *c = l; *c; c++) {
                if (*c == '"' || *c == '\\') bench_put(b, "\\");
                bench_putn(b, c, 1);
            }
            bench_put(b, "\\n");
        }
        bench_put(b, "\"");
        break;
    }
    }
    BENCH_PUTF(b, "%s}</ai-agent-" NONCE "-%04u>\n\n", pretty ? "\n" : "", slot);
}

static void final_tag(rng *r, aw_buf *b) {
    bench_put(b, "All done.\n\n<ai-agent-" NONCE "-FINAL tool=\"agent__final_report\" status=\"success\" format=\"markdown\">\n");
    bench_put(b, "# Report\n\n");
    size_t start = b->len;
    while (b->len - start < 5000) section(r, b);
    bench_put(b, "</ai-agent-" NONCE "-FINAL>\n");
}

/* A reply of about `target` bytes; *ntags gets the number of tool tags. */
static void make_reply(uint64_t seed, size_t target, aw_buf *b, unsigned *ntags) {
    rng r = {seed};
    unsigned slot = 0;
    size_t next_tag = TAG_EVERY / 2;
    aw_buf_clear(b);
    while (b->len + 5200 < target) {
        if (b->len >= next_tag) {
            tool_tag(&r, b, ++slot);
            next_tag += TAG_EVERY;
        } else {
            section(&r, b);
        }
    }
    final_tag(&r, b);
    *ntags = slot;
}

/* ---- the runs ------------------------------------------------------------------ */

typedef struct counts {
    size_t calls, finals, rejected, tags, text_bytes, payload_bytes;
} counts;

static int on_event(void *ctx, const aw_x_event *ev) {
    counts *c = ctx;
    switch (ev->kind) {
    case AW_X_TEXT: c->text_bytes += ev->text.len; break;
    case AW_X_PAYLOAD: c->payload_bytes += ev->text.len; break;
    case AW_X_TAG_OPEN: c->tags++; break;
    case AW_X_CALL: c->calls++; break;
    case AW_X_FINAL: c->finals++; break;
    case AW_X_REJECTED: c->rejected++; break;
    default: break;
    }
    return 0;
}

/* One extraction; returns the seconds it took, and the CPU seconds in *cpu. */
static double run(const aw_transport *t, const char *p, size_t n, size_t chunk, counts *c, double *cpu) {
    aw_error err;
    memset(c, 0, sizeof *c);
    double c0 = bench_cpu_now();
    double t0 = bench_now();
    aw_extractor *x = aw_extractor_new(t, 1);
    if (!x) bench_oom();
    if (chunk == 0) chunk = n;
    for (size_t pos = 0; pos < n; pos += chunk) {
        size_t step = n - pos < chunk ? n - pos : chunk;
        if (aw_extractor_feed(x, p + pos, step, on_event, c, &err)) {
            fprintf(stderr, "bench_transport: feed: %s\n", err.message);
            exit(1);
        }
    }
    if (aw_extractor_finish(x, "stop", on_event, c, &err)) {
        fprintf(stderr, "bench_transport: finish: %s\n", err.message);
        exit(1);
    }
    aw_extractor_free(x);
    double wall = bench_now() - t0;
    *cpu = bench_cpu_now() - c0;
    return wall;
}

static int same_counts(const counts *a, const counts *b) {
    return a->calls == b->calls && a->finals == b->finals && a->rejected == b->rejected && a->tags == b->tags &&
           a->text_bytes == b->text_bytes && a->payload_bytes == b->payload_bytes;
}

static aw_transport *session(void) {
    static const char tools_json[] =
        "[{\"name\":\"search\",\"description\":\"Search the web.\",\"input_schema\":{\"type\":\"object\"}},"
        "{\"name\":\"fetch\",\"description\":\"Fetch a URL.\",\"input_schema\":{\"type\":\"object\"}},"
        "{\"name\":\"read_file\",\"description\":\"Read a file.\",\"input_schema\":{\"type\":\"object\"}},"
        "{\"name\":\"run_shell\",\"description\":\"Run a command.\",\"input_schema\":{\"type\":\"object\"}},"
        "{\"name\":\"write_file\",\"description\":\"Write a file.\",\"input_schema\":{\"type\":\"object\"}}]";
    aw_error err;
    aw_json_doc *doc = NULL;
    aw_tool_def *defs = NULL;
    size_t ndefs = 0;
    if (aw_json_parse(tools_json, sizeof tools_json - 1, NULL, &doc, &err) ||
        aw_tools_from_json(aw_json_doc_root(doc), NULL, &defs, &ndefs, &err)) {
        fprintf(stderr, "bench_transport: tools: %s\n", err.message);
        exit(1);
    }
    aw_transport_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = AW_TRANSPORT_XML;
    cfg.nonce = NONCE;
    cfg.max_calls_per_turn = MAX_CALLS;
    cfg.format = AW_FORMAT_MARKDOWN;
    cfg.tools = defs;
    cfg.tool_count = ndefs;
    aw_transport *t = aw_transport_new(&cfg, &err);
    if (!t) {
        fprintf(stderr, "bench_transport: session: %s\n", err.message);
        exit(1);
    }
    aw_free(NULL, defs);
    aw_json_doc_free(doc); /* the session copied what it keeps */
    return t;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bench_transport DATA_DIR\n");
        return 2;
    }
    enum { NS = 3, NC = 3 };
    static const unsigned sizes_mb[NS] = {1, 4, 16};
    static const size_t chunks[NC] = {0, 16, 1};
    static const char *const chunk_names[NC] = {"whole", "16", "1"};
    aw_transport *t = session();
    printf("nonce %s\n", NONCE);
    printf("max_calls %u\n", MAX_CALLS);
    int ok = 1;
    aw_buf reply[NS];
    unsigned ntags[NS];
    for (size_t s = 0; s < NS; s++) {
        unsigned mb = sizes_mb[s];
        aw_buf_init(&reply[s], NULL);
        make_reply(20240604, (size_t)mb * 1000000u, &reply[s], &ntags[s]);
        char path[4096];
        snprintf(path, sizeof path, "%s/reply-%uMB.txt", argv[1], mb);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(reply[s].data, 1, reply[s].len, f) != reply[s].len || fclose(f)) {
            perror(path);
            return 1;
        }
        printf("reply.%u.bytes %zu\n", mb, reply[s].len);
        printf("reply.%u.tool_tags %u\n", mb, ntags[s]);
    }

    /* Rounds of all nine runs, so that whatever else the machine does
     * slows every size and chunking alike; the best of each counts. */
    double best[NS][NC], best_cpu[NS][NC];
    counts first[NS], got;
    memset(first, 0, sizeof first);
    int rounds = 0;
    double spent = 0;
    for (; rounds < MAX_ROUNDS && (rounds < MIN_ROUNDS || spent < MIN_SECONDS); rounds++) {
        for (size_t s = 0; s < NS; s++) {
            for (size_t c = 0; c < NC; c++) {
                double cpu;
                double sec = run(t, reply[s].data, reply[s].len, chunks[c], &got, &cpu);
                spent += sec;
                if (rounds == 0 || sec < best[s][c]) best[s][c] = sec;
                if (rounds == 0 || cpu < best_cpu[s][c]) best_cpu[s][c] = cpu;
                if (rounds == 0 && c == 0) first[s] = got;
                if (!same_counts(&first[s], &got)) {
                    fprintf(stderr,
                            "bench_transport: %u MB, chunk %s: events differ from the whole reply's "
                            "(calls %zu/%zu, text %zu/%zu, payload %zu/%zu)\n",
                            sizes_mb[s], chunk_names[c], got.calls, first[s].calls, got.text_bytes,
                            first[s].text_bytes, got.payload_bytes, first[s].payload_bytes);
                    ok = 0;
                }
            }
        }
    }
    printf("aw.rounds %d\n", rounds);
    for (size_t s = 0; s < NS; s++) {
        unsigned mb = sizes_mb[s];
        for (size_t c = 0; c < NC; c++) {
            const char *cn = chunk_names[c];
            printf("aw.%u.%s.seconds %.6f\n", mb, cn, best[s][c]);
            printf("aw.%u.%s.mbps %.1f\n", mb, cn, (double)reply[s].len / best[s][c] / 1e6);
            printf("aw.%u.%s.cpu_mbps %.1f\n", mb, cn, (double)reply[s].len / best_cpu[s][c] / 1e6);
            printf("aw.%u.%s.calls %zu\n", mb, cn, first[s].calls);
            printf("aw.%u.%s.finals %zu\n", mb, cn, first[s].finals);
            printf("aw.%u.%s.rejected %zu\n", mb, cn, first[s].rejected);
        }
        if (first[s].calls != ntags[s] || first[s].finals != 1 || first[s].rejected != 0) {
            fprintf(stderr, "bench_transport: %u MB: %zu calls, %zu final, %zu rejected; wanted %u, 1, 0\n", mb,
                    first[s].calls, first[s].finals, first[s].rejected, ntags[s]);
            ok = 0;
        }
        printf("aw.%u.text_bytes %zu\n", mb, first[s].text_bytes);
        printf("aw.%u.payload_bytes %zu\n", mb, first[s].payload_bytes);
        aw_buf_free(&reply[s]);
    }
    printf("aw.consistent %s\n", ok ? "yes" : "no");
    aw_transport_free(t);
    return ok ? 0 : 1;
}
