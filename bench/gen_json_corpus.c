/* gen_json_corpus: a deterministic JSON-lines corpus of agent events for the
 * JSON benchmark (bench/bench_json.c and bench/peers/json_peer.js).
 *
 *   gen_json_corpus OUT.jsonl [MEGABYTES]
 *
 * Writes about MEGABYTES (default 50, decimal) of JSON values, one per line,
 * from a fixed seed, so every run and every machine gets the same bytes.
 * The lines are what agents log and send:
 *
 *   - chat messages (OpenAI and Anthropic shapes) with markdown prose,
 *     content blocks, usage records and metadata;
 *   - tool calls with nested arguments, both as objects and as the
 *     JSON-in-a-string "arguments" of the OpenAI API (lots of \" escapes);
 *   - tool results with long text: HTML pages, XML documents, source code,
 *     shell output with ANSI colour codes, search hits, JSON rows;
 *   - streaming deltas (small lines), telemetry and embeddings (numbers).
 *
 * Text mixes English with accents, CJK, Cyrillic, Greek, Arabic, Hebrew,
 * Devanagari, combining marks and emoji (astral, ZWJ sequences, flags).
 * Strings are written with every JSON escape: the short ones (\" \\ \/ \b
 * \f \n \r \t), \u00XX for controls (ESC of ANSI codes, rarely NUL), and
 * some non-ASCII as \uXXXX in either case, astral characters as surrogate
 * pairs; a few lone surrogates ("\udc00", which JSON.parse accepts), raw
 * U+2028/U+2029 and DEL. Numbers come in every form: integers of every size
 * (past 2^53 too), negative zero, decimals with trailing zeros, exponents in
 * both cases and signs, %.17g doubles that are not the shortest form,
 * subnormals, the largest double and, rarely, 1e400 (Infinity, written
 * null). A few objects have duplicate keys or array-index keys ("10", "2"),
 * which JSON.stringify reorders. About one line in five has whitespace
 * between tokens; a few nest 20 to 60 levels deep.
 *
 * The output is valid UTF-8 and valid JSON, one value per line (LF). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_util.h */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

/* ---- deterministic randomness ---------------------------------------------- */

static uint64_t rng = 0xC0FFEE123456789Bull;

static uint64_t rnd(void) { return bench_xorshift(&rng); }
static unsigned below(unsigned n) { return (unsigned)((rnd() >> 11) % n); }
static int pct(unsigned p) { return below(1000) < p * 10; }       /* p percent */
static int permille(unsigned p) { return below(1000) < p; }       /* p per thousand */
static unsigned range(unsigned lo, unsigned hi) { return lo + below(hi - lo + 1); }
static double unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
#define PICK(a) (a[below((unsigned)(sizeof(a) / sizeof(a[0])))])

/* ---- growable buffer ----------------------------------------------------------- */

typedef bench_text buf;

static void putc_(buf *b, char c) { bench_text_add(b, &c, 1); }

/* ---- vocabulary -------------------------------------------------------------------- */

static const char *const words[] = {
    "the", "of", "and", "to", "a", "in", "is", "it", "that", "for", "on", "with", "as", "was", "this",
    "be", "by", "are", "from", "at", "or", "an", "but", "not", "which", "have", "has", "we", "they",
    "you", "their", "can", "will", "would", "should", "could", "been", "more", "when", "there", "what",
    "about", "into", "than", "then", "these", "some", "only", "other", "also", "after", "before",
    "because", "while", "each", "every", "through", "between", "however", "instead", "although",
    "agent", "model", "thread", "event", "message", "request", "response", "function", "value",
    "buffer", "parser", "server", "client", "module", "library", "release", "version", "branch",
    "commit", "change", "review", "feature", "result", "output", "input", "error", "warning",
    "failure", "question", "answer", "summary", "context", "history", "window", "token", "budget",
    "latency", "throughput", "memory", "allocation", "benchmark", "profile", "cache", "index",
    "query", "record", "field", "schema", "contract", "format", "document", "section", "report",
    "table", "column", "row", "list", "item", "step", "plan", "goal", "reason", "decision",
    "approach", "problem", "solution", "example", "detail", "number", "system", "user", "assistant",
    "tool", "call", "iteration", "session", "state", "snapshot", "data", "file", "directory", "path",
    "line", "character", "byte", "string", "array", "object", "quickly", "carefully", "clearly",
    "probably", "exactly", "roughly", "usually", "rarely", "often", "never", "always", "finally",
    "small", "large", "long", "short", "simple", "complex", "clean", "broken", "stable", "fast",
    "slow", "safe", "strict", "new", "old", "same", "different", "whole", "partial", "important",
    "subtle", "useful", "expensive", "cheap", "correct", "read", "write", "parse", "encode",
    "decode", "check", "build", "test", "measure", "compare", "return", "append", "remove",
    "replace", "escape", "keep", "drop", "skip", "handle", "follow", "find", "show", "explain",
    "describe", "suggest", "consider", "expect", "prefer", "choose", "run", "start", "stop", "wait",
    "retry", "fail", "succeed", "improve", "reduce", "increase", "don't", "isn't", "it's", "we'll",
    "there's", "can't", "doesn't", "that's", "you're", "won't", "let's", "user's", "model's",
};

/* Non-ASCII words: accents, other scripts, combining marks, emoji (astral,
 * skin tones, ZWJ sequences, flags, variation selectors), typography. */
static const char *const intl_words[] = {
    "café", "naïve", "résumé", "Ångström", "façade", "jalapeño", "Straße", "œuvre", "Dvořák",
    "Łódź", "İstanbul", "señor", "Zürich", "São Paulo", "crème brûlée", "Ærøskøbing", "ex\xCC\x81tre",
    "日本語", "東京都", "こんにちは", "データベース", "中文分词", "数据库查询", "한국어", "서울",
    "Привет", "мир", "Ελληνικά", "λόγος", "العربية", "مرحبا", "עברית", "שלום", "हिन्दी", "नमस्ते",
    "ไทย", "Tiếng Việt", "🚀", "👍", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "🇯🇵", "❤️", "✅", "🤖", "😀", "🎉",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𠜎𠜱", "—", "–", "…", "“quoted”", "‘single’", "«guillemets»", "→", "⇒", "✓", "±3 %",
    "€12,50", "£7", "¥300", "№5", "½", "x²", "∑", "∞", "≤", "≠", "°C", "µs", "\xC2\xA0(nbsp)",
    "zero\xE2\x80\x8Bwidth", "line\xE2\x80\xA8sep", "para\xE2\x80\xA9sep", "del\x7F",
};

static const char *const cjk_phrases[] = {
    "我们需要先检查输入数据的格式。", "这个函数返回一个新的数组，", "请注意缓存的大小限制；",
    "代理在每一步都会调用工具，", "结果已经写入数据库。", "エージェントはツールを呼び出します。",
    "このファイルを読み込んでください、", "エラーが発生しました：接続がタイムアウトしました。",
    "出力は JSON 形式です。", "요청이 성공적으로 처리되었습니다. ", "다음 단계로 진행합니다, ",
};

static const char *const identifiers[] = {
    "aw_json_parse", "JSON.parse", "JSON.stringify", "readFileSync", "max_depth", "toolCallId",
    "serializeThreadToXml", "escapeXml", "Map.get", "fetch()", "std::vector<int>", "Vec<u8>",
    "__init__", "$scope", "@media", "node_modules/", "C:\\Users\\dev\\file.txt", "a\\nb",
};

static const char *const tools[] = {"read_file", "web_search", "fetch_url", "run_shell", "grep",
                                    "list_dir", "query_db", "http_request", "edit_file",
                                    "python_exec"};
static const char *const models[] = {"gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022", "o3-mini",
                                     "llama-3.1-70b-instruct", "mistral-large-2411", "qwen2.5-coder-32b"};

/* ---- text ---------------------------------------------------------------------------- */

static void sentence(buf *b) {
    unsigned n = range(5, 22);
    for (unsigned i = 0; i < n; i++) {
        if (i) putc_(b, ' ');
        unsigned r = below(1000);
        if (r < 40) {
            bench_text_puts(b, PICK(intl_words));
        } else if (r < 55) {
            bench_text_printf(b, "`%s`", PICK(identifiers));
        } else if (r < 62) {
            const char *w1 = PICK(words), *w2 = PICK(words);
            bench_text_printf(b, "\"%s %s\"", w1, w2);
        } else if (r < 67) {
            bench_text_puts(b, PICK(((const char *const[]){"&", "<", ">", "<=", "->", "&&", "||", "'", "\\", "/"})));
        } else if (r < 75) {
            bench_text_printf(b, "%u", range(0, 100000));
        } else if (r < 78) {
            unsigned x = range(0, 100), y = range(0, 99);
            bench_text_printf(b, "%u.%02u%%", x, y);
        } else {
            const char *w = PICK(words);
            if (i == 0 && w[0] >= 'a' && w[0] <= 'z') {
                putc_(b, (char)(w[0] - 32));
                bench_text_puts(b, w + 1);
            } else {
                bench_text_puts(b, w);
            }
            if (i + 1 < n && pct(7)) putc_(b, ',');
        }
    }
    bench_text_puts(b, pct(85) ? "." : (pct(50) ? "?" : "!"));
}

static void paragraph(buf *b) {
    if (pct(6)) { /* a paragraph in Chinese, Japanese or Korean */
        unsigned n = range(3, 12);
        for (unsigned i = 0; i < n; i++) bench_text_puts(b, PICK(cjk_phrases));
        return;
    }
    unsigned n = range(2, 8);
    for (unsigned i = 0; i < n; i++) {
        if (i) putc_(b, ' ');
        sentence(b);
    }
}

static const char *const py_lines[] = {
    "def merge(a, b):", "    \"\"\"Merge two sorted lists; it's stable.\"\"\"", "    out = []",
    "    while a and b:", "        if a[0] <= b[0]:", "            out.append(a.pop(0))",
    "    return out + a + b", "print(f\"{name!r} has {len(items)} items & {errors} errors\")",
    "\tif x < 0 or y > 10: raise ValueError('out of range: %d' % x)",
    "with open(path, \"r\", encoding='utf-8') as fh:", "    data = json.load(fh)",
    "pattern = re.compile(r\"^\\s*(\\w+)=(\"[^\"]*\"|\\S+)\")",
};
static const char *const c_lines[] = {
    "static int put(aw_buf *out, const char *s) {", "    return aw_buf_append(out, s, strlen(s));", "}",
    "for (size_t i = 0; i < n && !rc; i++) {", "    if (p[i] == '<' || p[i] == '&') rc = escape(out, p[i]);",
    "#include <stdio.h>", "printf(\"%s: %zu bytes\\n\", name, len);", "\twhile (n-- > 0) *dst++ = *src++;",
    "if (a >> 3 & 1) return x->next != NULL ? -1 : 0;", "/* the caller's buffer must outlive the writer */",
    "char sep = '\\\\';", "const char *crlf = \"\\r\\n\";",
};
static const char *const js_lines[] = {
    "export function escapeXml(text) {", "  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');", "}",
    "const names = new Map(events.map((e) => [e.toolCallId, e.toolName]));",
    "for (const [i, ev] of events.entries()) lines.push(`  <event id=\"${i}\">`);",
    "if (a < b && b > c) console.log(\"it's fine\");",
    "const res = await fetch(url, { method: 'POST', body: JSON.stringify(req) });",
    "return items.length > 0 ? items[0] : null; // </script>",
};
static const char *const rust_lines[] = {
    "fn parse(input: &str) -> Result<Value, Error> {", "    let mut it = input.char_indices().peekable();",
    "    match it.next() { Some((_, '{')) => object(&mut it), _ => Err(Error::Eof) }", "}",
    "impl<'a> Iterator for Lines<'a> { type Item = &'a [u8]; }", "#[derive(Debug, Clone, PartialEq)]",
};
static const char *const sql_lines[] = {
    "SELECT u.id, u.name, COUNT(*) AS n FROM users u JOIN events e ON e.user_id = u.id",
    "WHERE e.created_at >= '2026-01-01' AND e.kind <> 'noise'", "GROUP BY u.id, u.name HAVING COUNT(*) > 10",
    "ORDER BY n DESC LIMIT 50;", "INSERT INTO notes (body) VALUES ('it''s \"quoted\"');",
};

static void code(buf *b, int fenced, unsigned n) {
    static const char *const langs[] = {"python", "c", "js", "rust", "sql"};
    unsigned k = below(5);
    const char *const *lines;
    unsigned count;
    switch (k) {
    case 0: lines = py_lines; count = sizeof py_lines / sizeof *py_lines; break;
    case 1: lines = c_lines; count = sizeof c_lines / sizeof *c_lines; break;
    case 2: lines = js_lines; count = sizeof js_lines / sizeof *js_lines; break;
    case 3: lines = rust_lines; count = sizeof rust_lines / sizeof *rust_lines; break;
    default: lines = sql_lines; count = sizeof sql_lines / sizeof *sql_lines; break;
    }
    if (fenced) bench_text_printf(b, "```%s\n", langs[k]);
    for (unsigned i = 0; i < n; i++) {
        bench_text_puts(b, lines[below(count)]);
        putc_(b, '\n');
    }
    if (fenced) bench_text_puts(b, "```");
}

static void markdown(buf *b, unsigned paragraphs) {
    for (unsigned i = 0; i < paragraphs; i++) {
        if (i) bench_text_puts(b, "\n\n");
        unsigned r = below(100);
        if (r < 8) {
            bench_text_puts(b, pct(50) ? "## " : "### ");
            sentence(b);
        } else if (r < 18) {
            unsigned items = range(2, 6);
            for (unsigned k = 0; k < items; k++) {
                if (k) putc_(b, '\n');
                bench_text_puts(b, pct(50) ? "- " : "1. ");
                if (pct(30)) bench_text_printf(b, "**%s**: ", PICK(words));
                sentence(b);
            }
        } else if (r < 26) {
            code(b, 1, range(3, 14));
        } else if (r < 30) {
            bench_text_puts(b, "| name | value |\n|---|---|\n");
            unsigned rows = range(2, 6);
            for (unsigned k = 0; k < rows; k++) {
                const char *w = PICK(words);
                bench_text_printf(b, "| %s | %u |\n", w, range(0, 9999));
            }
        } else {
            paragraph(b);
        }
    }
}

static void html(buf *b, unsigned blocks) {
    bench_text_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
    sentence(b);
    bench_text_puts(b, "</title>\n<script>window.__DATA__ = {\"page\": 1, \"q\": \"a&b\"};</script></head>\n<body class=\"docs\">\n");
    for (unsigned i = 0; i < blocks; i++) {
        switch (below(7)) {
        case 0: bench_text_puts(b, "<h2 id='s'>"); sentence(b); bench_text_puts(b, "</h2>\n"); break;
        case 1: {
            unsigned page = range(1, 99);
            bench_text_printf(b, "<p>See <a href=\"https://example.com/docs?page=%u&amp;lang=en\">the %s docs</a> &mdash; ",
                page, PICK(words));
            paragraph(b);
            bench_text_puts(b, "</p>\n");
            break;
        }
        case 2: bench_text_puts(b, "<pre><code>"); code(b, 0, range(2, 8)); bench_text_puts(b, "</code></pre>\n"); break;
        case 3:
            bench_text_puts(b, "<ul>\n");
            for (unsigned k = range(2, 5); k > 0; k--) {
                bench_text_puts(b, "  <li>");
                sentence(b);
                bench_text_puts(b, "</li>\n");
            }
            bench_text_puts(b, "</ul>\n");
            break;
        case 4: {
            unsigned img = range(1, 999);
            const char *w1 = PICK(words), *w2 = PICK(words);
            bench_text_printf(b, "<img src=\"/img/%u.png\" alt=\"%s &quot;%s&quot;\" width=%u />\n", img, w1, w2, range(16, 800));
            break;
        }
        default: bench_text_puts(b, "<p>"); paragraph(b); bench_text_puts(b, "</p>\n"); break;
        }
    }
    bench_text_puts(b, "</body></html>");
}

static void xml(buf *b, unsigned items) {
    bench_text_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\" xmlns:m=\"urn:x-meta\">\n");
    for (unsigned i = 0; i < items; i++) {
        unsigned eid = range(1, 99999), s1 = range(0, 9), s2 = range(0, 99);
        bench_text_printf(b, "  <entry m:id=\"%u\" m:score='%u.%u'>\n    <title>", eid, s1, s2);
        sentence(b);
        bench_text_puts(b, "</title>\n    <summary type=\"html\">&lt;p&gt;");
        sentence(b);
        bench_text_puts(b, "&lt;/p&gt;</summary>\n");
        if (pct(30)) {
            bench_text_puts(b, "    <content><![CDATA[if (a < b && c > d) { x = \"<tag>\"; }]]></content>\n");
        }
        bench_text_puts(b, "  </entry>\n");
    }
    bench_text_puts(b, "</feed>");
}

static void shell(buf *b, unsigned lines) {
    for (unsigned i = 0; i < lines; i++) {
        /* draw in a fixed order: C leaves the order of argument evaluation open */
        const char *w1 = PICK(words), *w2 = PICK(words), *w3 = PICK(words);
        unsigned u1 = range(1, 2000), u2 = range(1, 80), u3 = range(0, 59);
        switch (below(6)) {
        case 0: bench_text_printf(b, "\x1b[32mPASS\x1b[0m tests/%s_%s.c (%u ms)", w1, w2, u1 % 900); break;
        case 1:
            bench_text_printf(b, "src/%s.c:%u:%u: \x1b[35mwarning:\x1b[0m comparison of '%s' < 0 is always false", w1, u1, u2, w2);
            break;
        case 2: bench_text_printf(b, "%07x %s: %s %s", (unsigned)(rnd() & 0xfffffff), w1, w2, w3); break;
        case 3: bench_text_printf(b, "-rw-r--r--\t1 dev dev %7u Jan %2u 12:%02u %s.json", u1 * 397, u2 % 31 + 1, u3, w1); break;
        case 4: bench_text_printf(b, "  %3u%% |%.*s| %u/%u\r", u1 % 101, (int)(u2 % 21), "####################", u3 % 51, 50); break;
        default: sentence(b); break;
        }
        bench_text_puts(b, pct(3) ? "\r\n" : "\n");
    }
}

/* ---- JSON emission ---------------------------------------------------------------------- */

static int spaced; /* this line has whitespace between tokens */

static void ws(buf *b) {
    if (!spaced) return;
    unsigned r = below(10);
    if (r < 6) putc_(b, ' ');
    else if (r == 6) bench_text_puts(b, "  ");
    else if (r == 7) putc_(b, '\t');
}
static void colon(buf *b) {
    if (spaced) bench_text_puts(b, pct(80) ? ": " : " : ");
    else putc_(b, ':');
}
static void comma(buf *b) {
    putc_(b, ',');
    ws(b);
}

static unsigned utf8_decode(const unsigned char *s, unsigned *len) {
    if (s[0] < 0xE0) {
        *len = 2;
        return ((s[0] & 0x1Fu) << 6) | (s[1] & 0x3Fu);
    }
    if (s[0] < 0xF0) {
        *len = 3;
        return ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
    }
    *len = 4;
    return ((s[0] & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
}

static void u_escape(buf *b, unsigned u) {
    bench_text_printf(b, pct(70) ? "\\u%04x" : "\\u%04X", u);
}

/* A JSON string literal of text (valid UTF-8). escapes: per mille of
 * non-ASCII characters written as \u escapes (0 for none). */
static void jstr_esc(buf *b, const char *s, size_t n, unsigned escapes) {
    putc_(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': bench_text_puts(b, "\\\""); break;
        case '\\': bench_text_puts(b, "\\\\"); break;
        case '\n': bench_text_puts(b, "\\n"); break;
        case '\r': bench_text_puts(b, "\\r"); break;
        case '\t': bench_text_puts(b, pct(90) ? "\\t" : "\\u0009"); break;
        case '\b': bench_text_puts(b, "\\b"); break;
        case '\f': bench_text_puts(b, "\\f"); break;
        case '/': bench_text_puts(b, permille(30) ? "\\/" : "/"); break;
        default:
            if (c < 0x20) {
                u_escape(b, c);
            } else if (c >= 0x80) {
                unsigned len, cp = utf8_decode((const unsigned char *)s + i, &len);
                if (escapes && permille(escapes)) {
                    if (cp >= 0x10000) {
                        unsigned v = cp - 0x10000;
                        u_escape(b, 0xD800 + (v >> 10));
                        u_escape(b, 0xDC00 + (v & 0x3FF));
                    } else {
                        u_escape(b, cp);
                    }
                } else {
                    bench_text_add(b, s + i, len);
                }
                i += len - 1;
            } else {
                putc_(b, (char)c);
            }
        }
    }
    putc_(b, '"');
}
static void jstr(buf *b, const char *s, size_t n) { jstr_esc(b, s, n, 120); }
static void jlit(buf *b, const char *s) { jstr(b, s, strlen(s)); }
static void key(buf *b, const char *k) {
    jstr_esc(b, k, strlen(k), 0);
    colon(b);
}

/* Numbers in every form JSON allows; JSON.stringify prints each its own way. */
static void number(buf *b) {
    unsigned r = below(1000);
    if (r < 250) {
        bench_text_printf(b, "%u", range(0, 1000));
    } else if (r < 350) {
        bench_text_printf(b, "-%u", range(1, 100000));
    } else if (r < 420) { /* large integers, up to and past 2^53 */
        uint64_t v = rnd();
        v >>= below(64);
        if (pct(50)) v &= (1ull << 53) - 1;
        bench_text_printf(b, "%s%llu", pct(20) ? "-" : "", (unsigned long long)v);
    } else if (r < 600) { /* decimals as people write them */
        unsigned ip = range(0, 9999), digits = range(1, 4), fp = range(0, 9999);
        bench_text_printf(b, "%u.%0*u", ip, (int)digits, fp);
    } else if (r < 700) { /* doubles printed with too many digits */
        double d = unit() - 0.5;
        d *= pow(10.0, (double)range(0, 12) - 6.0);
        bench_text_printf(b, "%.17g", d);
    } else if (r < 780) { /* shortest-ish doubles, a few digits */
        int prec = (int)range(1, 15);
        double d = unit();
        d *= pow(10.0, (double)range(0, 40) - 20.0);
        bench_text_printf(b, "%.*g", prec, d);
    } else if (r < 880) { /* exponents, both cases and signs */
        static const char *const e[] = {"e", "E", "e+", "E+", "e-", "E-"};
        const char *sign = pct(20) ? "-" : "";
        unsigned mant = range(1, 9);
        const char *frac = pct(50) ? "" : ".5";
        const char *ech = PICK(e);
        bench_text_printf(b, "%s%u%s%s%u", sign, mant, frac, ech, range(0, 300));
    } else if (r < 900) {
        static const char *const special[] = {
            "0", "-0", "0.0", "-0.0", "1.0", "1.50", "100", "1e21", "1e20", "123456789012345678901234567890",
            "0.1", "0.000001", "0.0000001", "1e-7", "5e-324", "2.2250738585072014e-308",
            "1.7976931348623157e308", "9007199254740993", "-9007199254740993", "4.35", "0.30000000000000004",
            "1E2", "1e0", "12345678.9", "1.0000000000000002", "2e-323", "0e0", "-0e+0",
        };
        bench_text_puts(b, PICK(special));
    } else if (r < 901) {
        bench_text_puts(b, pct(50) ? "1e400" : "-1e999"); /* +-Infinity in JavaScript: written as null */
    } else {
        unsigned ip = range(0, 5000);
        bench_text_printf(b, "%u.%u", ip, range(0, 9));
    }
}

static void id(buf *b, const char *prefix) {
    static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    putc_(b, '"');
    bench_text_puts(b, prefix);
    for (int i = 0; i < 24; i++) putc_(b, alnum[below(62)]);
    putc_(b, '"');
}

static uint64_t clock_ms = 1768557600000ull; /* 2026-01-16T10:00:00Z */

static void iso_time(buf *b) {
    clock_ms += range(1, 5000);
    uint64_t s = clock_ms / 1000;
    unsigned ms = (unsigned)(clock_ms % 1000);
    unsigned sec = (unsigned)(s % 60), min = (unsigned)(s / 60 % 60), hour = (unsigned)(s / 3600 % 24);
    unsigned day = 16 + (unsigned)((s - 1768521600ull) / 86400) % 12;
    bench_text_printf(b, "\"2026-01-%02uT%02u:%02u:%02u.%03uZ\"", day, hour, min, sec, ms);
}

/* A random JSON value of bounded depth, for nested tool arguments. */
static void value(buf *b, int depth);

static void object(buf *b, int depth) {
    static const char *const keys[] = {"query", "path", "limit", "offset", "filters", "options", "recursive",
                                       "include", "exclude", "pattern", "timeout_ms", "headers", "body",
                                       "lang", "max_results", "sort", "fields", "range", "tags", "meta",
                                       "user_id", "é_clé", "名前", "emoji🚀", "with space", "a\"quote", ""};
    putc_(b, '{');
    ws(b);
    unsigned n = depth > 4 ? range(0, 2) : range(1, 6);
    for (unsigned i = 0; i < n; i++) {
        if (i) comma(b);
        key(b, PICK(keys));
        value(b, depth + 1);
    }
    if (permille(15)) { /* a duplicate key: the last value wins, at the first one's place */
        if (n++) comma(b);
        key(b, "limit");
        number(b);
        comma(b);
        key(b, "limit");
        number(b);
    }
    if (permille(15)) { /* array-index keys, which JSON.stringify writes first, ascending */
        if (n++) comma(b);
        bench_text_printf(b, "\"10\":%u,\"x\":1,\"2\":\"two\",\"0\":null,\"01\":\"not an index\",\"4294967294\":1,"
               "\"4294967295\":\"not an index either\",\"-1\":0",
            range(0, 9));
    }
    ws(b);
    putc_(b, '}');
}

static void array(buf *b, int depth) {
    putc_(b, '[');
    unsigned n = depth > 4 ? range(0, 2) : range(0, 6);
    for (unsigned i = 0; i < n; i++) {
        if (i) comma(b);
        value(b, depth + 1);
    }
    putc_(b, ']');
}

static void value(buf *b, int depth) {
    unsigned r = below(100);
    if (depth < 6 && r < 15) object(b, depth);
    else if (depth < 6 && r < 25) array(b, depth);
    else if (r < 55) {
        buf t = {0};
        if (pct(70)) {
            unsigned k = range(1, 4);
            for (unsigned i = 0; i < k; i++) bench_text_printf(&t, "%s%s", i ? " " : "", PICK(words));
        } else {
            sentence(&t);
        }
        jstr(b, t.p, t.n);
        free(t.p);
    } else if (r < 80) number(b);
    else if (r < 88) bench_text_puts(b, pct(50) ? "true" : "false");
    else if (r < 93) bench_text_puts(b, "null");
    else if (r < 96) jlit(b, "");
    else bench_text_puts(b, pct(50) ? "[]" : "{}");
}

/* ---- event lines ------------------------------------------------------------------------- */

static unsigned seq;

static void head(buf *b, const char *type) {
    spaced = pct(20);
    putc_(b, '{');
    ws(b);
    key(b, "type");
    jlit(b, type);
    comma(b);
    key(b, "seq");
    bench_text_printf(b, "%u", ++seq);
    comma(b);
    key(b, "ts");
    iso_time(b);
}
static void end(buf *b) {
    ws(b);
    putc_(b, '}');
}

static void text_field(buf *b, const char *k, buf *t) {
    comma(b);
    key(b, k);
    jstr(b, t->p, t->n);
    t->n = 0;
}

static void usage(buf *b) {
    comma(b);
    key(b, "usage");
    unsigned pt = range(100, 128000), ct = range(1, 4096);
    bench_text_printf(b, "{\"prompt_tokens\":%u,\"completion_tokens\":%u,\"total_tokens\":%u,\"cost_usd\":", pt, ct, pt + ct);
    number(b);
    if (pct(30)) bench_text_printf(b, ",\"prompt_tokens_details\":{\"cached_tokens\":%u,\"audio_tokens\":0}", range(0, 50000));
    putc_(b, '}');
}

static void message_openai(buf *b, buf *t) {
    static const char *const roles[] = {"user", "assistant", "assistant", "system"};
    const char *role = PICK(roles);
    head(b, "message");
    comma(b);
    key(b, "id");
    id(b, "msg_");
    comma(b);
    key(b, "role");
    jlit(b, role);
    markdown(t, !strcmp(role, "system") ? range(2, 6) : range(1, 6));
    text_field(b, "content", t);
    if (!strcmp(role, "assistant")) {
        comma(b);
        key(b, "model");
        jlit(b, PICK(models));
        usage(b);
        comma(b);
        key(b, "finish_reason");
        jlit(b, pct(80) ? "stop" : "length");
    }
    if (pct(40)) {
        comma(b);
        key(b, "metadata");
        object(b, 3);
    }
    end(b);
}

static void message_anthropic(buf *b, buf *t) {
    head(b, "message");
    comma(b);
    key(b, "id");
    id(b, "msg_01");
    comma(b);
    key(b, "role");
    jlit(b, "assistant");
    comma(b);
    key(b, "content");
    putc_(b, '[');
    unsigned n = range(1, 4);
    for (unsigned i = 0; i < n; i++) {
        if (i) comma(b);
        if (i == 0 || pct(40)) {
            bench_text_printf(b, "{\"type\":\"text\",\"text\":");
            markdown(t, range(1, 3));
            jstr(b, t->p, t->n);
            t->n = 0;
            putc_(b, '}');
        } else {
            bench_text_printf(b, "{\"type\":\"tool_use\",\"id\":");
            id(b, "toolu_");
            bench_text_printf(b, ",\"name\":\"%s\",\"input\":", PICK(tools));
            object(b, 1);
            putc_(b, '}');
        }
    }
    putc_(b, ']');
    comma(b);
    key(b, "stop_reason");
    jlit(b, pct(60) ? "tool_use" : "end_turn");
    comma(b);
    unsigned it = range(100, 200000), ot = range(1, 8192);
    bench_text_printf(b, "\"usage\":{\"input_tokens\":%u,\"output_tokens\":%u,\"cache_read_input_tokens\":%u}", it, ot,
        range(0, 100000));
    end(b);
}

static void tool_call(buf *b, buf *t) {
    head(b, "tool_call");
    comma(b);
    key(b, "tool_calls");
    putc_(b, '[');
    unsigned n = pct(70) ? 1 : range(2, 4);
    for (unsigned i = 0; i < n; i++) {
        if (i) comma(b);
        bench_text_printf(b, "{\"id\":");
        id(b, "call_");
        bench_text_printf(b, ",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":", PICK(tools));
        /* OpenAI style: the arguments are JSON text inside a string */
        buf args = {0};
        int was = spaced;
        spaced = pct(30);
        object(&args, 1);
        if (pct(30)) { /* a code edit: long text inside the arguments */
            args.n--; /* reopen the object */
            bench_text_puts(&args, args.n > 1 ? ",\"new_text\":" : "\"new_text\":");
            code(t, 1, range(5, 30));
            jstr(&args, t->p, t->n);
            t->n = 0;
            putc_(&args, '}');
        }
        spaced = was;
        jstr(b, args.p, args.n);
        free(args.p);
        bench_text_printf(b, "}}");
    }
    putc_(b, ']');
    if (pct(50)) {
        comma(b);
        key(b, "args");
        object(b, 0); /* the parsed arguments, as some frameworks log them */
    }
    end(b);
}

static void tool_result(buf *b, buf *t) {
    const char *tool = PICK(tools);
    head(b, "tool_result");
    comma(b);
    key(b, "tool_call_id");
    id(b, "call_");
    comma(b);
    key(b, "name");
    jlit(b, tool);
    comma(b);
    key(b, "duration_ms");
    number(b);
    unsigned r = below(100);
    if (r < 10) { /* structured result */
        comma(b);
        key(b, "result");
        bench_text_printf(b, "{\"status\":%u,\"ok\":true,\"rows\":[", range(200, 204));
        unsigned rows = range(2, 40);
        for (unsigned i = 0; i < rows; i++) {
            if (i) comma(b);
            bench_text_printf(b, "{\"id\":%u,\"name\":", range(1, 1000000));
            buf s = {0};
            const char *w1 = PICK(intl_words), *w2 = PICK(words), *w3 = PICK(words);
            bench_text_printf(&s, "%s %s <%s@example.com>", w1, w2, w3);
            jstr(b, s.p, s.n);
            free(s.p);
            bench_text_printf(b, ",\"score\":");
            number(b);
            w1 = PICK(words);
            w2 = PICK(words);
            bench_text_printf(b, ",\"tags\":[\"%s\",\"%s\"],\"active\":%s,\"note\":null,\"updated\":", w1, w2,
                pct(50) ? "true" : "false");
            iso_time(b);
            putc_(b, '}');
        }
        putc_(b, ']');
        putc_(b, '}');
    } else {
        if (r < 30) html(t, range(4, 30));
        else if (r < 40) xml(t, range(3, 25));
        else if (r < 58) {
            int fenced = pct(30);
            code(t, fenced, range(20, 250));
        }
        else if (r < 72) shell(t, range(5, 120));
        else if (r < 86) {
            unsigned hits = range(3, 10);
            for (unsigned i = 0; i < hits; i++) {
                if (i) bench_text_puts(t, "\n\n");
                bench_text_printf(t, "%u. ", i + 1);
                sentence(t);
                const char *w1 = PICK(words), *w2 = PICK(words), *w3 = PICK(words);
                bench_text_printf(t, "\nhttps://%s.example.org/%s?q=%s&n=%u\n", w1, w2, w3, i);
                paragraph(t);
            }
        } else {
            markdown(t, range(4, 20));
        }
        text_field(b, "output", t);
        comma(b);
        key(b, "is_error");
        bench_text_puts(b, "false");
    }
    end(b);
}

static void delta(buf *b, buf *t) {
    head(b, "delta");
    comma(b);
    bench_text_printf(b, "\"index\":%u", range(0, 3));
    unsigned k = range(1, 6);
    for (unsigned i = 0; i < k; i++) bench_text_printf(t, "%s%s", i ? " " : "", pct(10) ? PICK(intl_words) : PICK(words));
    text_field(b, "text", t);
    end(b);
}

static void telemetry(buf *b) {
    head(b, "telemetry");
    comma(b);
    key(b, "model");
    jlit(b, PICK(models));
    comma(b);
    key(b, "latency_ms");
    number(b);
    comma(b);
    key(b, "ttft_ms");
    number(b);
    comma(b);
    key(b, "metrics");
    putc_(b, '{');
    static const char *const names[] = {"p50", "p90", "p99", "mean", "stddev", "min", "max", "rate", "ratio"};
    for (unsigned i = 0; i < 9; i++) {
        if (i) comma(b);
        key(b, names[i]);
        number(b);
    }
    putc_(b, '}');
    if (pct(40)) { /* an embedding */
        comma(b);
        key(b, "embedding");
        putc_(b, '[');
        unsigned dims = pct(50) ? 64 : 256;
        for (unsigned i = 0; i < dims; i++) {
            if (i) putc_(b, ',');
            double d = (unit() - 0.5) * 0.2;
            if (pct(80)) bench_text_printf(b, "%.*f", (int)range(6, 9), d);
            else bench_text_printf(b, "%.17g", d);
        }
        putc_(b, ']');
    } else {
        comma(b);
        key(b, "samples");
        putc_(b, '[');
        unsigned n = range(5, 60);
        for (unsigned i = 0; i < n; i++) {
            if (i) comma(b);
            number(b);
        }
        putc_(b, ']');
    }
    end(b);
}

static void error_event(buf *b, buf *t) {
    head(b, "error");
    comma(b);
    key(b, "error");
    int code_ = -(int)range(1, 130);
    bench_text_printf(b, "{\"code\":%d,\"kind\":\"%s\",\"message\":", code_, pct(50) ? "tool_error" : "rate_limit");
    const char *tool = PICK(tools);
    bench_text_printf(t, "Tool \"%s\" failed: ENOENT <no such file> & exit code %u; ", tool, range(1, 127));
    sentence(t);
    if (pct(30)) bench_text_puts(t, "\nTraceback (most recent call last):\n  File \"/app/agent.py\", line 42, in run\n    raise RuntimeError(msg)\n");
    if (pct(10)) bench_text_add(t, "NUL\0byte", 8); /* JSON allows \u0000 */
    jstr(b, t->p, t->n);
    t->n = 0;
    if (pct(20)) bench_text_puts(b, ",\"raw\":\"lone \\udc00 and \\ud83d surrogates\"");
    bench_text_printf(b, ",\"retryable\":%s,\"retry_after\":", pct(50) ? "true" : "false");
    number(b);
    putc_(b, '}');
    end(b);
}

static void deep(buf *b) {
    head(b, "schema");
    comma(b);
    key(b, "definition");
    unsigned d = range(20, 60);
    for (unsigned i = 0; i < d; i++) {
        if (i % 2) bench_text_printf(b, "[%u,", i);
        else bench_text_printf(b, "{\"level\":%u,\"child\":", i);
    }
    jlit(b, "bottom");
    for (unsigned i = d; i-- > 0;) putc_(b, i % 2 ? ']' : '}');
    end(b);
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: gen_json_corpus OUT.jsonl [MEGABYTES]\n");
        return 2;
    }
    double mb = argc > 2 ? atof(argv[2]) : 50.0;
    size_t target = (size_t)(mb * 1e6);
    FILE *out = fopen(argv[1], "wb");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    static char obuf[1 << 20];
    setvbuf(out, obuf, _IOFBF, sizeof obuf);
    buf line = {0}, text = {0};
    size_t written = 0;
    while (written < target) {
        line.n = 0;
        text.n = 0;
        unsigned r = below(1000);
        if (r < 200) message_openai(&line, &text);
        else if (r < 290) message_anthropic(&line, &text);
        else if (r < 420) tool_call(&line, &text);
        else if (r < 600) tool_result(&line, &text);
        else if (r < 850) delta(&line, &text);
        else if (r < 950) telemetry(&line);
        else if (r < 995) error_event(&line, &text);
        else deep(&line);
        putc_(&line, '\n');
        if (fwrite(line.p, 1, line.n, out) != line.n) {
            perror(argv[1]);
            return 1;
        }
        written += line.n;
    }
    if (fclose(out)) {
        perror(argv[1]);
        return 1;
    }
    free(line.p);
    free(text.p);
    return 0;
}
