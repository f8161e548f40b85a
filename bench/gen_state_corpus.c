/* gen_state_corpus: a deterministic full agent state (the JSON that
 * include/agentwire/snapshot.h documents) for the snapshot benchmark
 * (bench/bench_snapshot.c and bench/peers/snapshot_peer.js).
 *
 *   gen_state_corpus OUT.json [MESSAGES] [MEGABYTES]
 *
 * Writes one JSON object of about MEGABYTES (default 20, decimal) holding
 * MESSAGES messages (default 10000), from a fixed seed. The run it describes:
 * a system prompt, then turns of a user request, assistant messages with
 * tool calls (OpenAI shape in "_metadata", some in "metadata"), one tool
 * message per call (file contents, HTML, shell output with ANSI codes,
 * search hits, JSON rows) and a final markdown answer; now and then a user
 * message whose content is an array of blocks with a base64 image. Each
 * assistant message has a step: number (mostly), type, finish reason,
 * errors (an array or a count), usage, duration and tool calls (with
 * "name" or "function": {"name"}), plus the provider's raw response, which
 * the snapshot drops. Text has accents, CJK and emoji (astral characters,
 * which are two UTF-16 units in JavaScript), markup and escapes.
 * Contents are sized so the whole file comes out near MEGABYTES (the
 * generator runs a few times from the same seed to find their scale). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_util.h */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static uint64_t rng = 0x5EED0003F00DCAFEull;

static uint64_t rnd(void) { return bench_xorshift(&rng); }
static unsigned below(unsigned n) { return (unsigned)((rnd() >> 11) % n); }
static int pct(unsigned p) { return below(100) < p; }
static unsigned range(unsigned lo, unsigned hi) { return lo + below(hi - lo + 1); }
#define PICK(a) (a[below((unsigned)(sizeof(a) / sizeof(a[0])))])

typedef bench_text buf;

/* ---- text ------------------------------------------------------------------------- */

static const char *const words[] = {
    "the", "of", "and", "to", "a", "in", "is", "it", "that", "for", "on", "with", "as", "this", "be",
    "by", "are", "from", "or", "an", "but", "not", "which", "have", "we", "they", "you", "can", "will",
    "should", "more", "when", "there", "what", "about", "into", "then", "some", "only", "also", "after",
    "because", "while", "each", "however", "agent", "model", "program", "lead", "entity", "search",
    "request", "response", "result", "output", "input", "error", "summary", "context", "history",
    "token", "budget", "latency", "memory", "cache", "index", "query", "record", "field", "schema",
    "document", "report", "table", "list", "step", "plan", "goal", "reason", "decision", "problem",
    "solution", "example", "system", "user", "assistant", "tool", "call", "session", "state",
    "snapshot", "file", "path", "line", "string", "array", "object", "quickly", "carefully",
    "probably", "exactly", "usually", "finally", "small", "large", "simple", "complex", "stable",
    "new", "old", "same", "different", "important", "useful", "correct", "read", "write", "parse",
    "check", "build", "test", "compare", "return", "keep", "drop", "find", "show", "explain",
    "suggest", "consider", "prefer", "run", "retry", "improve", "reduce", "don't", "it's", "can't",
    "that's", "user's", "partner", "college", "savings", "account", "tuition", "enrollment", "plan's",
};

static const char *const intl[] = {
    "café", "naïve", "résumé", "Zürich", "São Paulo", "Straße", "Dvořák", "Łódź", "日本語",
    "東京都", "数据库", "한국어", "Привет", "Ελληνικά", "العربية", "עברית", "हिन्दी", "—", "…",
    "“quoted”", "→", "✓", "€12,50", "🚀", "👍", "👍🏽", "🎉", "🤖", "😀", "👨‍👩‍👧", "🇫🇷", "𝔘𝔫𝔦",
    "𠜎", "½", "≤", "°C",
};

static const char *const tools[] = {"SearchEntities", "CreateProgramLead", "read_file", "web_search",
                                    "fetch_url", "run_shell", "query_db", "send_email"};

static void sentence(buf *b) {
    unsigned n = range(5, 20);
    for (unsigned i = 0; i < n; i++) {
        if (i) bench_text_add(b, " ", 1);
        unsigned r = below(1000);
        if (r < 45) {
            bench_text_puts(b, PICK(intl));
        } else if (r < 55) {
            const char *w = PICK(words);
            bench_text_printf(b, "\"%s\"", w);
        } else if (r < 60) {
            bench_text_puts(b, PICK(((const char *const[]){"&", "<", ">", "\\", "/", "'"})));
        } else if (r < 68) {
            bench_text_printf(b, "%u", range(0, 50000));
        } else {
            const char *w = PICK(words);
            if (i == 0 && w[0] >= 'a' && w[0] <= 'z') {
                char c = (char)(w[0] - 32);
                bench_text_add(b, &c, 1);
                bench_text_puts(b, w + 1);
            } else {
                bench_text_puts(b, w);
            }
        }
    }
    bench_text_puts(b, pct(85) ? "." : "?");
}

static void paragraph(buf *b) {
    unsigned n = range(2, 7);
    for (unsigned i = 0; i < n; i++) {
        if (i) bench_text_add(b, " ", 1);
        sentence(b);
    }
}

static const char *const code_lines[] = {
    "def merge(a, b):", "    return sorted(a + b)  # it's stable", "for (size_t i = 0; i < n; i++) {",
    "    if (p[i] == '<' || p[i] == '&') rc = escape(out, p[i]);", "}",
    "const res = await fetch(url, { method: 'POST', body: JSON.stringify(req) });",
    "SELECT id, name FROM leads WHERE score > 0.5 AND name <> '';", "\tprintf(\"%s\\n\", name);",
};

/* Text of about target bytes, of one kind. */
static void text(buf *b, unsigned kind, size_t target) {
    size_t start = b->n;
    switch (kind) {
    case 0: /* markdown */
        while (b->n - start < target) {
            if (b->n > start) bench_text_puts(b, "\n\n");
            unsigned r = below(10);
            if (r == 0) {
                bench_text_puts(b, "## ");
                sentence(b);
            } else if (r == 1) {
                for (unsigned k = range(2, 5); k > 0; k--) {
                    bench_text_puts(b, "- ");
                    sentence(b);
                    bench_text_puts(b, "\n");
                }
            } else if (r == 2) {
                bench_text_puts(b, "```python\n");
                for (unsigned k = range(2, 8); k > 0; k--) {
                    bench_text_puts(b, PICK(code_lines));
                    bench_text_puts(b, "\n");
                }
                bench_text_puts(b, "```");
            } else {
                paragraph(b);
            }
        }
        break;
    case 1: /* html */
        bench_text_puts(b, "<!DOCTYPE html>\n<html><head><title>");
        sentence(b);
        bench_text_puts(b, "</title></head>\n<body>\n");
        while (b->n - start < target) {
            unsigned page = range(1, 99);
            bench_text_printf(b, "<p class=\"c\">See <a href=\"/docs?page=%u&amp;lang=en\">docs</a>: ", page);
            paragraph(b);
            bench_text_puts(b, "</p>\n");
        }
        bench_text_puts(b, "</body></html>");
        break;
    case 2: /* shell output */
        while (b->n - start < target) {
            unsigned r = below(4);
            if (r == 0) {
                unsigned ms = range(1, 900);
                bench_text_printf(b, "\x1b[32mPASS\x1b[0m tests/%s.c (%u ms)\n", PICK(words), ms);
            } else if (r == 1) {
                unsigned size = range(10, 999999);
                bench_text_printf(b, "-rw-r--r--\t1 dev dev %7u Jan 16 %s.json\n", size, PICK(words));
            } else {
                sentence(b);
                bench_text_puts(b, "\n");
            }
        }
        break;
    case 3: /* code */
        while (b->n - start < target) {
            bench_text_puts(b, PICK(code_lines));
            bench_text_puts(b, "\n");
        }
        break;
    default: /* JSON rows as text */
        bench_text_puts(b, "{\"rows\":[");
        while (b->n - start < target) {
            unsigned id = range(1, 99999);
            const char *w1 = PICK(intl), *w2 = PICK(words);
            bench_text_printf(b, "{\"id\":%u,\"name\":\"%s %s\",\"score\":0.%02u},", id, w1, w2, range(0, 99));
        }
        bench_text_puts(b, "{}]}");
        break;
    }
}

/* A JSON string literal; non-ASCII raw, except that a few BMP characters are
 * written as \u escapes. */
static void jstr(buf *b, const char *s, size_t n) {
    bench_text_add(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': bench_text_puts(b, "\\\""); break;
        case '\\': bench_text_puts(b, "\\\\"); break;
        case '\n': bench_text_puts(b, "\\n"); break;
        case '\r': bench_text_puts(b, "\\r"); break;
        case '\t': bench_text_puts(b, "\\t"); break;
        default:
            if (c < 0x20) {
                bench_text_printf(b, "\\u%04x", c);
            } else if ((c & 0xF0) == 0xE0 && i + 2 < n && below(100) < 10) {
                unsigned cp = ((c & 0x0Fu) << 12) | (((unsigned char)s[i + 1] & 0x3Fu) << 6) |
                              ((unsigned char)s[i + 2] & 0x3Fu);
                bench_text_printf(b, "\\u%04x", cp);
                i += 2;
            } else {
                bench_text_add(b, s + i, 1);
            }
        }
    }
    bench_text_add(b, "\"", 1);
}

static void hexid(buf *b, const char *prefix, unsigned n) {
    static const char hex[] = "0123456789abcdef";
    bench_text_puts(b, prefix);
    for (unsigned i = 0; i < n; i++) bench_text_add(b, &hex[below(16)], 1);
}

static void uuid(buf *b) {
    bench_text_add(b, "\"", 1);
    hexid(b, "", 8);
    hexid(b, "-", 4);
    hexid(b, "-4", 3);
    hexid(b, "-a", 3);
    hexid(b, "-", 12);
    bench_text_add(b, "\"", 1);
}

static void base64(buf *b, size_t n) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i++) bench_text_add(b, &b64[below(64)], 1);
    bench_text_puts(b, "==");
}

/* ---- the state ---------------------------------------------------------------- */

typedef struct call {
    char id[40];
    const char *tool;
} call;

static buf msgs, steps, t;
static size_t nmsgs, nsteps, target_msgs, target_bytes;
static double scale = 1.0; /* calibrated so that the file comes out near MEGABYTES */

/* the average size of a message's text */
static size_t per_message(void) { return (size_t)(scale * (double)target_bytes / (double)target_msgs); }

static void msg_begin(const char *role) {
    if (nmsgs++) bench_text_puts(&msgs, ",\n");
    bench_text_printf(&msgs, "{\"role\":\"%s\",\"content\":", role);
}

static void metadata_key(void) { bench_text_puts(&msgs, pct(85) ? ",\"_metadata\":" : ",\"metadata\":"); }

static void content_text(unsigned kind, size_t len) {
    t.n = 0;
    text(&t, kind, len);
    jstr(&msgs, t.p, t.n);
}

static size_t scaled(size_t avg, unsigned lo_pct, unsigned hi_pct) {
    return avg * range(lo_pct, hi_pct) / 100 + 1;
}

static void user_message(void) {
    size_t avg = per_message();
    if (pct(3)) { /* a message with an image */
        msg_begin("user");
        bench_text_puts(&msgs, "[{\"type\":\"text\",\"text\":");
        t.n = 0;
        sentence(&t);
        jstr(&msgs, t.p, t.n);
        bench_text_puts(&msgs, "},{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,");
        base64(&msgs, scaled(avg, 200, 800));
        bench_text_puts(&msgs, "\",\"detail\":\"auto\"}}]");
    } else {
        msg_begin("user");
        content_text(0, scaled(avg, 10, 60));
    }
    if (pct(50)) {
        metadata_key();
        unsigned ts = 1768557600u + (unsigned)nmsgs * 7u;
        bench_text_printf(&msgs, "{\"source\":\"web\",\"received_at\":%u,\"locale\":\"fr-FR\"}", ts);
    }
    bench_text_puts(&msgs, "}");
}

static void step(const call *calls, unsigned ncalls, const char *content, size_t content_len, int final) {
    if (nsteps++) bench_text_puts(&steps, ",\n");
    bench_text_puts(&steps, "{");
    if (pct(80)) bench_text_printf(&steps, "\"step_number\":%zu,", nsteps);
    const char *type = final ? "final" : (pct(3) ? "error" : "tool_execution");
    const char *finish = final ? (pct(90) ? "stop" : "length") : "tool_calls";
    bench_text_printf(&steps, "\"type\":\"%s\",\"has_tool_calls\":%s,\"finish_reason\":\"%s\",", type, ncalls ? "true" : "false",
        finish);
    if (!strcmp(type, "error")) bench_text_puts(&steps, "\"errors\":[{\"message\":\"Tool failed: timeout after 30 s\",\"code\":504}],");
    else if (pct(50)) bench_text_puts(&steps, "\"errors\":[],");
    else bench_text_puts(&steps, "\"errors\":0,");
    unsigned prompt = range(1000, 120000), completion = range(10, 4000);
    bench_text_printf(&steps, "\"usage\":{\"prompt\":%u,\"completion\":%u,\"total\":%u},", prompt, completion, prompt + completion);
    unsigned dur = range(100, 90000), frac = range(0, 9);
    bench_text_printf(&steps, "\"duration_ms\":%u.%u,\"tool_calls\":[", dur, frac);
    for (unsigned i = 0; i < ncalls; i++) {
        if (i) bench_text_puts(&steps, ",");
        if (pct(50)) bench_text_printf(&steps, "{\"id\":\"%s\",\"name\":\"%s\",\"arguments\":{\"query\":\"%s\"}}", calls[i].id,
                         calls[i].tool, PICK(words));
        else bench_text_printf(&steps, "{\"id\":\"%s\",\"function\":{\"name\":\"%s\",\"arguments\":\"{}\"}}", calls[i].id, calls[i].tool);
    }
    /* the provider's raw response, which the snapshot leaves out */
    bench_text_puts(&steps, "],\"raw_response\":{\"id\":\"chatcmpl-");
    hexid(&steps, "", 24);
    bench_text_printf(&steps, "\",\"object\":\"chat.completion\",\"created\":%zu,\"model\":\"gpt-4o-2024-08-06\","
                "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":",
        (size_t)1768557600u + nsteps * 11);
    jstr(&steps, content, content_len);
    bench_text_printf(&steps, "},\"finish_reason\":\"%s\",\"logprobs\":null}],\"usage\":{\"prompt_tokens\":%u,"
                "\"completion_tokens\":%u,\"total_tokens\":%u},\"system_fingerprint\":\"fp_",
        finish, prompt, completion, prompt + completion);
    hexid(&steps, "", 10);
    bench_text_puts(&steps, "\"}}");
}

static void turn(void) {
    user_message();
    unsigned rounds = range(1, 4);
    for (unsigned r = 0; r < rounds && nmsgs < target_msgs; r++) {
        size_t avg = per_message();
        /* the assistant calls tools */
        call calls[3];
        unsigned ncalls = pct(70) ? 1 : range(2, 3);
        if (ncalls > target_msgs - nmsgs - 1) ncalls = (unsigned)(target_msgs - nmsgs - 1);
        t.n = 0;
        if (pct(60)) sentence(&t);
        buf said = {0};
        bench_text_add(&said, t.p ? t.p : "", t.n);
        msg_begin("assistant");
        jstr(&msgs, said.p ? said.p : "", said.n);
        metadata_key();
        bench_text_puts(&msgs, "{\"tool_calls\":[");
        for (unsigned i = 0; i < ncalls; i++) {
            t.n = 0;
            hexid(&t, "call_", 24);
            snprintf(calls[i].id, sizeof calls[i].id, "%s", t.p);
            calls[i].tool = PICK(tools);
            if (i) bench_text_puts(&msgs, ",");
            bench_text_printf(&msgs, "{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":", calls[i].id,
                calls[i].tool);
            t.n = 0;
            const char *w1 = PICK(words), *w2 = PICK(intl);
            bench_text_printf(&t, "{\"query\":\"%s %s\",\"limit\":%u,\"filters\":{\"types\":[\"program\",\"lead\"]}}", w1, w2,
                range(1, 50));
            jstr(&msgs, t.p, t.n);
            bench_text_puts(&msgs, "}}");
        }
        bench_text_puts(&msgs, "]}}");
        step(calls, ncalls, said.p ? said.p : "", said.n, 0);
        free(said.p);
        /* one tool message per call */
        for (unsigned i = 0; i < ncalls; i++) {
            msg_begin("tool");
            unsigned kind = 1 + below(4);
            content_text(kind, scaled(avg, 60, 340));
            metadata_key();
            bench_text_printf(&msgs, "{\"tool_call_id\":\"%s\",\"tool_name\":\"%s\"}}", calls[i].id, calls[i].tool);
        }
    }
    if (nmsgs < target_msgs) { /* the final answer */
        t.n = 0;
        text(&t, 0, scaled(per_message(), 40, 250));
        buf said = {0};
        bench_text_add(&said, t.p, t.n);
        msg_begin("assistant");
        jstr(&msgs, said.p, said.n);
        if (pct(30)) {
            metadata_key();
            bench_text_puts(&msgs, "{}");
        }
        bench_text_puts(&msgs, "}");
        step(NULL, 0, said.p, said.n, 1);
        free(said.p);
    }
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: gen_state_corpus OUT.json [MESSAGES] [MEGABYTES]\n");
        return 2;
    }
    target_msgs = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 10000;
    target_bytes = (size_t)((argc > 3 ? atof(argv[3]) : 20.0) * 1e6);
    if (target_msgs < 2) {
        fprintf(stderr, "gen_state_corpus: at least 2 messages\n");
        return 2;
    }

    /* generate, measure, rescale the texts and generate again from the same seed */
    const uint64_t seed = rng;
    for (int pass = 0; pass < 4; pass++) {
        rng = seed;
        msgs.n = steps.n = 0;
        nmsgs = nsteps = 0;
        msg_begin("system");
        content_text(0, 3000);
        bench_text_puts(&msgs, "}");
        while (nmsgs < target_msgs) turn();
        scale *= (double)target_bytes / (double)(msgs.n + steps.n + 1000);
    }

    buf head = {0};
    bench_text_puts(&head, "{\"agent_id\":");
    uuid(&head);
    bench_text_puts(&head, ",\"parent_agent_id\":");
    uuid(&head);
    bench_text_printf(&head, ",\"status\":\"in_progress\",\"step_count\":%zu,", nsteps);
    unsigned prompt = range(10000000, 90000000), completion = range(100000, 900000);
    bench_text_printf(&head, "\"usage\":{\"prompt\":%u,\"completion\":%u,\"total\":%u,\"cache_read\":%u},", prompt, completion,
        prompt + completion, range(0, 1000000));
    /* two time forms: RFC 3339 with an offset and a fraction, and epoch seconds */
    bench_text_puts(&head, "\"execution\":{\"started_at\":\"2026-01-16T11:00:00.250+01:00\",\"updated_at\":1768563912.75,"
                 "\"cumulative_seconds\":5312.875},\n\"messages\":[\n");

    buf tail = {0};
    bench_text_puts(&tail, "],\n\"last_continuation\":{\"should_continue\":true,\"stop_reason\":\"completed\","
                 "\"resolved_by\":\"ToolCallPresenceCheck\",\"evaluations\":[{\"criterion\":\"StepsLimit\","
                 "\"decision\":\"allow\",\"reason\":\"Step 12 of 20\"}]},\n"
                 "\"metadata\":{\"tenant\":\"acme-é\",\"session_id\":\"s_42\",\"tags\":[\"beta\",\"529-plan\"],"
                 "\"limits\":{\"max_steps\":4000,\"temperature\":0.7,\"top_p\":1.0},\"note\":null}}\n");

    FILE *out = fopen(argv[1], "wb");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    int bad = fwrite(head.p, 1, head.n, out) != head.n || fwrite(msgs.p, 1, msgs.n, out) != msgs.n ||
              fputs("],\n\"steps\":[\n", out) < 0 || fwrite(steps.p, 1, steps.n, out) != steps.n ||
              fwrite(tail.p, 1, tail.n, out) != tail.n;
    if (fclose(out) || bad) {
        perror(argv[1]);
        return 1;
    }
    free(head.p);
    free(tail.p);
    free(msgs.p);
    free(steps.p);
    free(t.p);
    return 0;
}
