/* gen_thread_corpus: a deterministic JSON-lines corpus of agent events for
 * the thread benchmark (bench/bench_thread.c and bench/peers/thread_peer.js).
 *
 *   gen_thread_corpus [--escape-dense] OUT.jsonl [MEGABYTES] [APPEND_EVENT.json]
 *
 * Prose-heavy by default (below). With --escape-dense, the events of a
 * coding agent's session instead, dense with the characters XML escapes:
 * edits and file writes whose arguments are source code (every '"' an
 * &quot;), JSON tool results (as JSON values and as strings of JSON text),
 * source files, unified diffs, HTML pages and shell output, between short
 * assistant messages. By bytes: about a quarter tool arguments, two thirds
 * tool results, the rest prose.
 *
 * Writes about MEGABYTES (default 50, decimal) of events, one per line, from
 * a fixed seed, so every run and every machine gets the same bytes. Most of
 * the bytes are message contents and tool results holding long English prose
 * paragraphs, with some markdown, code, HTML markup (& < > " '), a little
 * non-ASCII text and tool calls with nested arguments. Every event type of
 * the thread format appears, plus approval/plan events (not written into the
 * thread) and a few results whose call is missing ("unknown").
 *
 * Nothing here produces characters that XML 1.0 forbids, so the reference
 * serializer's output for this corpus is valid XML and agentwire must match
 * it byte for byte.
 *
 * With APPEND_EVENT.json, also writes the one event (an assistant message of
 * about 2 KB, one line) that the append benchmark adds to a thread. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_util.h */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

/* ---- deterministic randomness ------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void) { return bench_xorshift(&rng_state); }
static unsigned below(unsigned n) { return (unsigned)((rnd() >> 11) % n); }
static int chance(unsigned percent) { return below(100) < percent; }
static unsigned between(unsigned lo, unsigned hi) { return lo + below(hi - lo + 1); }
#define PICK(arr) (arr[below(sizeof(arr) / sizeof(arr[0]))])

typedef bench_text sb;

/* ---- prose ---------------------------------------------------------------- */

static const char *const words[] = {
    "the", "of", "and", "to", "a", "in", "is", "it", "that", "for", "on", "with", "as", "was",
    "this", "be", "by", "are", "from", "at", "or", "an", "but", "not", "which", "have", "has",
    "we", "they", "you", "their", "can", "will", "would", "should", "could", "been", "more",
    "when", "there", "what", "about", "into", "than", "then", "them", "these", "some", "only",
    "other", "also", "after", "before", "because", "while", "each", "every", "through", "between",
    "under", "over", "again", "still", "already", "however", "instead", "although",
    "agent", "model", "thread", "event", "message", "request", "response", "function", "value",
    "buffer", "parser", "server", "client", "module", "library", "release", "version", "branch",
    "commit", "change", "review", "feature", "result", "output", "input", "error", "warning",
    "failure", "question", "answer", "summary", "context", "history", "window", "token", "budget",
    "latency", "throughput", "memory", "allocation", "benchmark", "profile", "cache", "index",
    "query", "record", "field", "schema", "contract", "format", "document", "section", "paragraph",
    "sentence", "report", "table", "column", "row", "list", "item", "step", "plan", "goal",
    "reason", "decision", "approach", "problem", "solution", "example", "detail", "number",
    "system", "user", "assistant", "tool", "call", "iteration", "session", "state", "snapshot",
    "data", "file", "directory", "path", "line", "character", "byte", "string", "array", "object",
    "quickly", "carefully", "slowly", "clearly", "probably", "exactly", "roughly", "nearly",
    "usually", "rarely", "often", "never", "always", "sometimes", "finally", "first", "next",
    "small", "large", "long", "short", "simple", "complex", "clean", "broken", "stable", "fast",
    "slow", "safe", "strict", "loose", "new", "old", "same", "different", "whole", "partial",
    "important", "careful", "obvious", "subtle", "useful", "expensive", "cheap", "correct",
    "read", "write", "parse", "encode", "decode", "check", "build", "test", "measure", "compare",
    "return", "append", "remove", "replace", "escape", "keep", "drop", "skip", "handle", "follow",
    "find", "show", "explain", "describe", "suggest", "consider", "expect", "prefer", "choose",
    "run", "start", "stop", "wait", "retry", "fail", "succeed", "improve", "reduce", "increase",
    "don't", "isn't", "it's", "we'll", "there's", "can't", "doesn't", "that's", "you're",
    "wasn't", "won't", "let's", "user's", "model's", "team's",
};

/* a little text outside ASCII, some of it to be written as \u escapes */
static const char *const unicode_words[] = {
    "café", "naïve", "résumé", "über", "façade", "Zürich", "São Paulo", "Kraków", "—", "…",
    "“quoted”", "→", "✓", "±3%", "€12", "日本語", "東京", "Ελληνικά", "Привет", "🚀", "👍",
};

static const char *const identifiers[] = {
    "aw_thread_encode", "parse_event", "escapeXml", "buildMessages", "serializeThreadToXml",
    "toolCallId", "aw_buf_append", "JSON.parse", "readFileSync", "max_depth", "prefill",
    "strip_ansi", "event_list", "Map.get", "String(result)",
};

static void prose_sentence(sb *b) {
    unsigned n = between(6, 24);
    for (unsigned i = 0; i < n; i++) {
        const char *w = PICK(words);
        if (i) bench_text_add(b, " ", 1);
        unsigned r = below(1000);
        if (r < 12) {
            bench_text_puts(b, PICK(unicode_words));
            continue;
        }
        if (r < 30) {
            bench_text_printf(b, "`%s`", PICK(identifiers));
            continue;
        }
        if (r < 36) {
            bench_text_printf(b, "\"%s %s\"", PICK(words), PICK(words));
            continue;
        }
        if (r < 40) {
            bench_text_puts(b, chance(50) ? "&" : (chance(50) ? "<" : ">"));
            continue;
        }
        if (r < 46) {
            bench_text_printf(b, "%u", between(2, 5000));
            continue;
        }
        if (i == 0) {
            char first[64];
            snprintf(first, sizeof first, "%s", w);
            if (first[0] >= 'a' && first[0] <= 'z') first[0] = (char)(first[0] - 32);
            bench_text_puts(b, first);
        } else {
            bench_text_puts(b, w);
        }
        if (i + 1 < n && chance(8)) bench_text_add(b, ",", 1);
    }
    bench_text_puts(b, chance(88) ? "." : (chance(50) ? "?" : "!"));
}

static void prose_paragraph(sb *b) {
    unsigned n = between(3, 9);
    for (unsigned i = 0; i < n; i++) {
        if (i) bench_text_add(b, " ", 1);
        prose_sentence(b);
    }
}

/* ---- code and markup ------------------------------------------------------- */

static const char *const py_lines[] = {
    "def merge(a, b):",
    "    \"\"\"Merge two sorted lists; it's stable.\"\"\"",
    "    out = []",
    "    while a and b:",
    "        if a[0] <= b[0] and not (a[0] > limit):",
    "            out.append(a.pop(0))",
    "        else:",
    "            out.append(b.pop(0))",
    "    return out + a + b",
    "print(f\"{name!r} has {len(items)} items & {errors} errors\")",
    "if x < 0 or y > 10: raise ValueError('out of range: %d' % x)",
    "with open(path, \"r\", encoding='utf-8') as fh:",
    "    data = json.load(fh)",
};

static const char *const c_lines[] = {
    "static int put(aw_buf *out, const char *s) {",
    "    return aw_buf_append(out, s, strlen(s));",
    "}",
    "for (size_t i = 0; i < n && !rc; i++) {",
    "    if (p[i] == '<' || p[i] == '&') rc = escape(out, p[i]);",
    "}",
    "#include <stdio.h>",
    "printf(\"%s: %zu bytes\\n\", name, len);",
    "while (n-- > 0) *dst++ = *src++;",
    "if (a >> 3 & 1) return x->next != NULL ? -1 : 0;",
    "/* the caller's buffer must outlive the writer */",
};

static const char *const js_lines[] = {
    "export function escapeXml(text) {",
    "  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');",
    "}",
    "const names = new Map(events.filter((e) => e.type === \"tool_call\").map((e) => [e.toolCallId, e.toolName]));",
    "for (const [i, ev] of events.entries()) lines.push(`  <event id=\"${i}\">`);",
    "if (a < b && b > c) console.log(\"it's fine\");",
    "const res = await fetch(url, { method: 'POST', body: JSON.stringify(req) });",
    "return items.length > 0 ? items[0] : null;",
};

static void code_block(sb *b, const char *lang, const char *const *lines, size_t nlines, unsigned n) {
    if (lang) bench_text_printf(b, "```%s\n", lang);
    for (unsigned i = 0; i < n; i++) {
        bench_text_puts(b, lines[below((unsigned)nlines)]);
        bench_text_add(b, "\n", 1);
    }
    if (lang) bench_text_puts(b, "```");
}

static void some_code(sb *b, int fenced, unsigned n) {
    switch (below(3)) {
    case 0: code_block(b, fenced ? "python" : NULL, py_lines, sizeof py_lines / sizeof *py_lines, n); break;
    case 1: code_block(b, fenced ? "c" : NULL, c_lines, sizeof c_lines / sizeof *c_lines, n); break;
    default: code_block(b, fenced ? "js" : NULL, js_lines, sizeof js_lines / sizeof *js_lines, n); break;
    }
}

static void markdown_text(sb *b, unsigned paragraphs) {
    for (unsigned i = 0; i < paragraphs; i++) {
        if (i) bench_text_puts(b, "\n\n");
        unsigned r = below(100);
        if (r < 8) {
            bench_text_puts(b, "## ");
            prose_sentence(b);
        } else if (r < 18) {
            unsigned items = between(2, 6);
            for (unsigned k = 0; k < items; k++) {
                if (k) bench_text_add(b, "\n", 1);
                bench_text_puts(b, chance(50) ? "- " : "1. ");
                if (chance(30)) bench_text_printf(b, "**%s**: ", PICK(words));
                prose_sentence(b);
            }
        } else if (r < 25) {
            some_code(b, 1, between(3, 14));
        } else {
            prose_paragraph(b);
        }
    }
}

static void html_page(sb *b, unsigned paragraphs) {
    bench_text_puts(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
    prose_sentence(b);
    bench_text_puts(b, "</title></head>\n<body>\n");
    for (unsigned i = 0; i < paragraphs; i++) {
        switch (below(6)) {
        case 0:
            bench_text_puts(b, "<h2 class='section'>");
            prose_sentence(b);
            bench_text_puts(b, "</h2>\n");
            break;
        case 1:
            bench_text_printf(b, "<p>See <a href=\"https://example.com/docs?page=%u&amp;lang=en\">the %s docs</a> &mdash; ",
                      between(1, 99), PICK(words));
            prose_paragraph(b);
            bench_text_puts(b, "</p>\n");
            break;
        case 2:
            bench_text_puts(b, "<pre><code>");
            some_code(b, 0, between(2, 8));
            bench_text_puts(b, "</code></pre>\n");
            break;
        default:
            bench_text_puts(b, "<p>");
            prose_paragraph(b);
            bench_text_puts(b, "</p>\n");
            break;
        }
    }
    bench_text_puts(b, "</body></html>");
}

static void shell_output(sb *b, unsigned lines) {
    for (unsigned i = 0; i < lines; i++) {
        switch (below(5)) {
        case 0: bench_text_printf(b, "PASS tests/%s_%s.c (%u ms)", PICK(words), PICK(words), between(1, 900)); break;
        case 1: bench_text_printf(b, "src/%s.c:%u:%u: warning: comparison of '%s' < 0 is always false", PICK(words),
                          between(1, 2000), between(1, 80), PICK(words)); break;
        case 2: bench_text_printf(b, "%07x %s: %s %s", (unsigned)(rnd() & 0xfffffff), PICK(words), PICK(words), PICK(words)); break;
        case 3: bench_text_printf(b, "-rw-r--r-- 1 dev dev %6u Jan %2u 12:%02u %s.json", between(10, 999999),
                          between(1, 31), between(0, 59), PICK(words)); break;
        default: prose_sentence(b); break;
        }
        bench_text_puts(b, chance(3) ? "\r\n" : "\n");
    }
}

/* ---- JSON output ------------------------------------------------------------ */

static FILE *out;
static size_t written;

static void emit(const char *s, size_t n) {
    if (fwrite(s, 1, n, out) != n) {
        perror("write");
        exit(1);
    }
    written += n;
}
static void emits(const char *s) { emit(s, strlen(s)); }
static void emitf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emitf(const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    emit(tmp, (size_t)n);
}

/* A JSON string literal. Non-ASCII is written raw, except that now and then
 * a BMP character is written as a \u escape, as some producers do. */
static void emit_str(const char *s, size_t n) {
    sb b = {0};
    bench_text_add(&b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': bench_text_add(&b, "\\\"", 2); break;
        case '\\': bench_text_add(&b, "\\\\", 2); break;
        case '\n': bench_text_add(&b, "\\n", 2); break;
        case '\r': bench_text_add(&b, "\\r", 2); break;
        case '\t': bench_text_add(&b, "\\t", 2); break;
        default:
            if (c < 0x20) {
                fprintf(stderr, "gen_thread_corpus: control character in text\n");
                exit(1);
            }
            if ((c & 0xF0) == 0xE0 && i + 2 < n && chance(20)) {
                unsigned cp = ((c & 0x0Fu) << 12) | (((unsigned char)s[i + 1] & 0x3Fu) << 6) |
                              ((unsigned char)s[i + 2] & 0x3Fu);
                bench_text_printf(&b, "\\u%04x", cp);
                i += 2;
            } else {
                bench_text_add(&b, (const char *)&s[i], 1);
            }
        }
    }
    bench_text_add(&b, "\"", 1);
    emit(b.p, b.n);
    free(b.p);
}

/* ---- events -------------------------------------------------------------------- */

static uint64_t now_ms = 1768557600000ull;
static unsigned next_call = 1;

static void head(const char *type) {
    now_ms += between(5, 4000);
    emitf("{\"type\":\"%s\"", type);
}
static void tail(unsigned iteration) {
    emitf(",\"timestamp\":%llu,\"iteration\":%u}\n", (unsigned long long)now_ms, iteration);
}

static void message(const char *role, unsigned iteration, unsigned paragraphs) {
    sb t = {0};
    markdown_text(&t, paragraphs);
    head("message");
    emitf(",\"role\":\"%s\",\"content\":", role);
    emit_str(t.p, t.n);
    tail(iteration);
    free(t.p);
}

static const char *const tools[] = {"read_file", "web_search", "fetch_url", "run_shell", "grep",
                                    "list_dir", "query_db", "http_request"};

typedef struct call {
    char id[32];
    const char *tool;
    int group; /* 0: none; >0: number; <0: string "p<n>" */
} call;

/* nested arguments, the kind models write */
static void emit_args(const call *c) {
    emits("{");
    if (!strcmp(c->tool, "read_file") || !strcmp(c->tool, "list_dir")) {
        emitf("\"path\":\"src/%s/%s.c\",\"options\":{\"encoding\":\"utf-8\",\"lines\":[%u,%u],\"follow\":%s}",
              PICK(words), PICK(words), between(1, 100), between(101, 900), chance(50) ? "true" : "false");
    } else if (!strcmp(c->tool, "web_search") || !strcmp(c->tool, "fetch_url")) {
        sb q = {0};
        prose_sentence(&q);
        emits("\"query\":");
        emit_str(q.p, q.n);
        emitf(",\"limit\":%u,\"filters\":{\"site\":[\"docs.example.com\",\"%s.dev\"],\"after\":\"2025-%02u-01\","
              "\"score\":%u.%u},\"safe\":true",
              between(3, 20), PICK(words), between(1, 12), between(0, 9), between(1, 99));
        free(q.p);
    } else if (!strcmp(c->tool, "run_shell")) {
        emitf("\"command\":\"make test && ./build/%s --verbose 2>&1 | grep -v '^ok'\",\"env\":{\"CC\":\"gcc\","
              "\"CFLAGS\":\"-O2 -g\"},\"timeoutMs\":%u",
              PICK(words), between(1, 600) * 1000);
    } else if (!strcmp(c->tool, "query_db")) {
        emitf("\"sql\":\"SELECT id, name FROM %s WHERE size > %u AND kind <> 'tmp' ORDER BY id\",\"params\":[%u,\"%s\",null,%s],"
              "\"temperature\":0.7,\"threshold\":1.5e-7,\"nested\":{\"a\":{\"b\":{\"c\":[1,[2,[3,{\"d\":\"e\"}]]]}}}",
              PICK(words), between(1, 1000), between(1, 50), PICK(words), chance(50) ? "true" : "false");
    } else {
        sb bd = {0};
        prose_paragraph(&bd);
        emitf("\"method\":\"POST\",\"url\":\"https://api.example.com/v1/%s?x=1&y=2\",\"headers\":{\"Accept\":"
              "\"application/json\"},\"body\":{\"text\":",
              PICK(words));
        emit_str(bd.p, bd.n);
        emitf(",\"tags\":[\"%s\",\"%s\"],\"retries\":%u}", PICK(words), PICK(words), between(0, 5));
        free(bd.p);
    }
    emits("}");
}

static void emit_group(int g) {
    if (g > 0) emitf(",\"parallelGroup\":%d", g);
    else if (g < 0) emitf(",\"parallelGroup\":\"p%d\"", -g);
}

static void tool_call(const call *c, unsigned iteration) {
    head("tool_call");
    emitf(",\"toolName\":\"%s\",\"toolCallId\":\"%s\",\"args\":", c->tool, c->id);
    emit_args(c);
    emit_group(c->group);
    tail(iteration);
}

static void json_result(void) {
    sb t = {0};
    prose_paragraph(&t);
    emitf("{\"status\":%u,\"ok\":true,\"rows\":[", between(200, 204));
    unsigned rows = between(2, 12);
    for (unsigned i = 0; i < rows; i++) {
        if (i) emits(",");
        emitf("{\"id\":%u,\"name\":\"%s <%s@example.com>\",\"score\":%u.%u,\"tags\":[\"%s\",\"%s\"],\"meta\":{\"active\":%s,\"note\":null}}",
              between(1, 100000), PICK(words), PICK(words), between(0, 99), between(0, 999), PICK(words),
              PICK(words), chance(50) ? "true" : "false");
    }
    emits("],\"summary\":");
    emit_str(t.p, t.n);
    emits("}");
    free(t.p);
}

static void tool_result(const call *c, unsigned iteration) {
    head("tool_result");
    emitf(",\"toolCallId\":\"%s\",\"result\":", c->id);
    sb t = {0};
    if (chance(12)) {
        if (chance(80)) json_result();
        else emitf("%u", between(0, 100000));
    } else {
        if (!strcmp(c->tool, "read_file") || !strcmp(c->tool, "grep")) {
            if (chance(40)) markdown_text(&t, between(4, 20));
            else some_code(&t, 0, between(20, 200));
        } else if (!strcmp(c->tool, "fetch_url") || !strcmp(c->tool, "http_request")) {
            html_page(&t, between(4, 24));
        } else if (!strcmp(c->tool, "run_shell") || !strcmp(c->tool, "list_dir")) {
            shell_output(&t, between(5, 80));
        } else {
            unsigned hits = between(3, 10);
            for (unsigned i = 0; i < hits; i++) {
                if (i) bench_text_puts(&t, "\n\n");
                bench_text_printf(&t, "%u. ", i + 1);
                prose_sentence(&t);
                bench_text_printf(&t, "\nhttps://%s.example.org/%s\n", PICK(words), PICK(words));
                prose_paragraph(&t);
            }
        }
        emit_str(t.p, t.n);
    }
    if (chance(85)) {
        if (chance(20)) emitf(",\"durationMs\":%u.0", between(1, 5000));
        else emitf(",\"durationMs\":%u.%u", between(0, 5000), between(1, 9));
    }
    emit_group(c->group);
    tail(iteration);
    free(t.p);
}

static void one_iteration(unsigned iteration, unsigned *session_iterations) {
    if (chance(30)) message("user", iteration, between(1, 3));
    message("assistant", iteration, between(2, 7));
    unsigned ncalls = chance(70) ? between(1, 3) : 0;
    call calls[3];
    int group = 0;
    if (ncalls > 1) group = chance(50) ? (int)between(1, 99) : -(int)between(1, 99);
    for (unsigned i = 0; i < ncalls; i++) {
        snprintf(calls[i].id, sizeof calls[i].id, "call_%u", next_call++);
        calls[i].tool = PICK(tools);
        calls[i].group = group;
        tool_call(&calls[i], iteration);
    }
    for (unsigned i = ncalls; i-- > 0;) { /* parallel results come back in any order */
        if (chance(4)) {
            head("error");
            emits(",\"error\":");
            sb t = {0};
            bench_text_printf(&t, "Tool \"%s\" failed: ENOENT <no such file> & exit code %u; it's ", calls[i].tool,
                      between(1, 127));
            prose_sentence(&t);
            emit_str(t.p, t.n);
            emitf(",\"toolCallId\":\"%s\",\"recoverable\":%s", calls[i].id, chance(70) ? "true" : "false");
            tail(iteration);
            free(t.p);
            continue;
        }
        tool_result(&calls[i], iteration);
    }
    if (chance(1)) { /* a result whose call is not in the thread */
        call orphan = {"call_missing", "read_file", 0};
        snprintf(orphan.id, sizeof orphan.id, "orphan_%u", next_call++);
        tool_result(&orphan, iteration);
    }
    if (chance(3)) {
        sb t = {0};
        prose_sentence(&t);
        head("human_input_requested");
        emits(",\"question\":");
        emit_str(t.p, t.n);
        emits(",\"kind\":\"approval\",\"urgency\":\"normal\",\"choices\":[\"yes\",\"no\"]");
        tail(iteration);
        t.n = 0;
        prose_paragraph(&t);
        head("human_input_received");
        emits(",\"response\":");
        emit_str(t.p, t.n);
        emits(",\"decision\":\"approve\"");
        tail(iteration);
        free(t.p);
    }
    if (chance(1)) {
        head(chance(50) ? "approval" : "plan");
        emits(",\"steps\":[{\"title\":\"check\",\"done\":false}],\"note\":\"not written into the thread\"");
        tail(iteration);
    }
    if (chance(2) && iteration > 3) {
        sb t = {0};
        markdown_text(&t, between(1, 4));
        head("summary");
        emitf(",\"summarizedIterations\":[%u,%u,%u],\"summary\":", iteration - 3, iteration - 2, iteration - 1);
        emit_str(t.p, t.n);
        tail(iteration);
        free(t.p);
    }
    (*session_iterations)++;
}

/* ---- the escape-dense session of a coding agent ------------------------------ */

/* A line of source code in one of the three languages. */
static void code_line(sb *b, unsigned lang) {
    switch (lang % 3) {
    case 0: bench_text_puts(b, py_lines[below(sizeof py_lines / sizeof *py_lines)]); break;
    case 1: bench_text_puts(b, c_lines[below(sizeof c_lines / sizeof *c_lines)]); break;
    default: bench_text_puts(b, js_lines[below(sizeof js_lines / sizeof *js_lines)]); break;
    }
}

static void source_text(sb *b, unsigned lines) {
    unsigned lang = below(3);
    for (unsigned i = 0; i < lines; i++) {
        code_line(b, lang);
        bench_text_add(b, "\n", 1);
    }
}

static void unified_diff(sb *b, unsigned hunks) {
    const char *w = PICK(words);
    bench_text_printf(b, "diff --git a/src/%s.c b/src/%s.c\nindex %07x..%07x 100644\n--- a/src/%s.c\n+++ b/src/%s.c\n", w, w,
                      (unsigned)(rnd() & 0xfffffff), (unsigned)(rnd() & 0xfffffff), w, w);
    unsigned lang = below(3);
    for (unsigned h = 0; h < hunks; h++) {
        unsigned at = between(1, 900);
        bench_text_printf(b, "@@ -%u,%u +%u,%u @@ static int %s(void) {\n", at, 7u, at, 8u, PICK(identifiers));
        for (unsigned i = 0; i < 8; i++) {
            bench_text_puts(b, i == 3 ? "-" : (i == 4 || i == 5) ? "+" : " ");
            code_line(b, lang);
            bench_text_add(b, "\n", 1);
        }
    }
}

/* A JSON document as text: what an API or MCP tool returns. */
static void json_text(sb *b, unsigned rows) {
    bench_text_printf(b, "{\"status\": %u, \"data\": {\"items\": [", between(200, 204));
    for (unsigned i = 0; i < rows; i++) {
        if (i) bench_text_puts(b, ", ");
        bench_text_printf(b, "{\"id\": \"%s-%u\", \"path\": \"src/%s/%s.c\", \"line\": %u, \"match\": \"%s\", "
                          "\"tags\": [\"%s\", \"%s\"], \"score\": 0.%u}",
                          PICK(words), between(1, 99999), PICK(words), PICK(words), between(1, 2000),
                          c_lines[below(sizeof c_lines / sizeof *c_lines)], PICK(words), PICK(words), between(1, 999));
    }
    bench_text_printf(b, "]}, \"next\": \"/v1/search?page=%u&per_page=%u\"}", between(2, 9), rows);
}

static const char *const dense_tools[] = {"edit_file", "write_file", "read_file", "bash",
                                          "search_code", "fetch_url", "http_request", "git_diff"};

/* The arguments of a coding agent's call: paths, and code in strings. */
static void emit_dense_args(const call *c) {
    sb t = {0}, u = {0};
    if (!strcmp(c->tool, "edit_file")) {
        source_text(&t, between(3, 25));
        source_text(&u, between(3, 25));
        emitf("{\"path\":\"src/%s/%s.c\",\"old_string\":", PICK(words), PICK(words));
        emit_str(t.p, t.n);
        emits(",\"new_string\":");
        emit_str(u.p, u.n);
        emits(",\"replace_all\":false}");
    } else if (!strcmp(c->tool, "write_file")) {
        source_text(&t, between(20, 120));
        emitf("{\"path\":\"src/%s.py\",\"content\":", PICK(words));
        emit_str(t.p, t.n);
        emits("}");
    } else if (!strcmp(c->tool, "bash")) {
        code_line(&t, 0);
        emits("{\"command\":");
        bench_text_printf(&u, "cd build && make -j2 2>&1 | grep -E \"error|warning\" && python3 -c '%s'", t.p);
        emit_str(u.p, u.n);
        emitf(",\"timeout\":%u,\"description\":\"Build and check for \\\"warnings\\\"\"}", between(1, 600) * 1000);
    } else if (!strcmp(c->tool, "http_request")) {
        json_text(&t, between(1, 4));
        emitf("{\"method\":\"POST\",\"url\":\"https://api.example.com/v1/%s?x=1&y=2\",\"headers\":{\"Content-Type\":"
              "\"application/json\"},\"body\":",
              PICK(words));
        emit_str(t.p, t.n);
        emits("}");
    } else {
        emitf("{\"pattern\":\"%s\\\\(\\\"[^\\\"]*\\\"\",\"path\":\"src/%s\",\"glob\":\"*.{c,h}\",\"limit\":%u}",
              PICK(identifiers), PICK(words), between(5, 50));
    }
    free(t.p);
    free(u.p);
}

static void dense_result(const call *c, unsigned iteration) {
    head("tool_result");
    emitf(",\"toolCallId\":\"%s\",\"result\":", c->id);
    sb t = {0};
    if (!strcmp(c->tool, "search_code") || !strcmp(c->tool, "http_request")) {
        if (chance(50)) {
            json_result(); /* a JSON value, written back as compact JSON */
        } else {
            json_text(&t, between(3, 30)); /* JSON text in a string */
            emit_str(t.p, t.n);
        }
    } else {
        if (!strcmp(c->tool, "read_file")) source_text(&t, between(30, 300));
        else if (!strcmp(c->tool, "git_diff") || !strcmp(c->tool, "edit_file")) unified_diff(&t, between(1, 8));
        else if (!strcmp(c->tool, "fetch_url")) html_page(&t, between(4, 24));
        else if (!strcmp(c->tool, "bash")) shell_output(&t, between(5, 80));
        else bench_text_printf(&t, "Wrote %u bytes to \"src/%s.py\" & updated <index>", between(100, 9999), PICK(words));
        emit_str(t.p, t.n);
    }
    emitf(",\"durationMs\":%u.%u", between(0, 5000), between(1, 9));
    emit_group(c->group);
    tail(iteration);
    free(t.p);
}

static void dense_iteration(unsigned iteration) {
    if (chance(10)) message("user", iteration, 1);
    message("assistant", iteration, between(1, 2));
    unsigned ncalls = between(1, 3);
    call calls[3];
    int group = ncalls > 1 ? (int)between(1, 99) : 0;
    for (unsigned i = 0; i < ncalls; i++) {
        snprintf(calls[i].id, sizeof calls[i].id, "toolu_%06u", next_call++);
        calls[i].tool = PICK(dense_tools);
        calls[i].group = group;
        head("tool_call");
        emitf(",\"toolName\":\"%s\",\"toolCallId\":\"%s\",\"args\":", calls[i].tool, calls[i].id);
        emit_dense_args(&calls[i]);
        emit_group(group);
        tail(iteration);
    }
    for (unsigned i = 0; i < ncalls; i++) dense_result(&calls[i], iteration);
}

int main(int argc, char **argv) {
    int dense = argc > 1 && !strcmp(argv[1], "--escape-dense");
    if (dense) {
        argv++;
        argc--;
    }
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: gen_thread_corpus [--escape-dense] OUT.jsonl [MEGABYTES] [APPEND_EVENT.json]\n");
        return 2;
    }
    double mb = argc > 2 ? atof(argv[2]) : 50.0;
    size_t target = (size_t)(mb * 1e6);
    out = fopen(argv[1], "wb");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    static char obuf[1 << 20];
    setvbuf(out, obuf, _IOFBF, sizeof obuf);

    while (written < target) {
        unsigned iterations = between(8, 40), done = 0;
        message("system", 0, 1);
        message("user", 0, between(1, 4));
        for (unsigned it = 1; it <= iterations && written < target; it++) {
            if (dense) dense_iteration(it);
            else one_iteration(it, &done);
        }
        sb t = {0};
        prose_paragraph(&t);
        head("completion");
        emits(",\"result\":");
        emit_str(t.p, t.n);
        emits(",\"verified\":true");
        tail(iterations);
        free(t.p);
    }
    if (fclose(out)) {
        perror(argv[1]);
        return 1;
    }

    if (argc > 3) {
        /* the appended event: its own seed, so it does not depend on MEGABYTES */
        rng_state = 0xA5A5A5A55A5A5A5Aull;
        out = fopen(argv[3], "wb");
        if (!out) {
            perror(argv[3]);
            return 1;
        }
        sb t = {0};
        while (t.n < 1900) {
            if (t.n) bench_text_puts(&t, "\n\n");
            prose_paragraph(&t);
        }
        emits("{\"type\":\"message\",\"role\":\"assistant\",\"content\":");
        emit_str(t.p, t.n);
        emits(",\"timestamp\":1768600000000,\"iteration\":7}\n");
        free(t.p);
        if (fclose(out)) {
            perror(argv[3]);
            return 1;
        }
    }
    return 0;
}
