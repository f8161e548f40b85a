/* <tool_call> ... </tool_call>: the tag three dialects share, told apart
 * by what it holds.
 *
 *   Hermes, Qwen2.5, Granite:  <tool_call>{"name": "f", "arguments": {...}}</tool_call>
 *   (also a JSON list of such objects, as Granite 3.1 writes)
 *   Qwen3-Coder, Qwen3.5:      <tool_call><function=f><parameter=k>v</parameter></function></tool_call>
 *   GLM 4.5 and later:         <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>
 *
 * Where the tag ends: at </tool_call>; for JSON, a </tool_call> inside a
 * string ends the tag only if the JSON does not go on after the string
 * (the model left the string open), as for our own tags; a JSON value
 * complete without a closing tag ends there; a new <tool_call> ends one
 * never closed; and the end of the reply ends everything. */
#include <string.h>

#include "internal/dialect.h"

static const char open_tag[] = "<tool_call>";
static const char close_tag[] = "</tool_call>";
#define OPEN_LEN (sizeof open_tag - 1)
#define CLOSE_LEN (sizeof close_tag - 1)

/* How long a closing tag inside a string may wait for the JSON to go on. */
#define STRING_LOOKBACK 1024

enum { K_UNKNOWN = 0, K_JSON, K_XML, K_GLM };
enum { P_BODY = 0, P_AFTER_VALUE, P_AFTER_JUNK };

/* Is p[0..n) the start of lit (n may be shorter)? */
static int starts_with(const char *p, size_t n, const char *lit, size_t len) {
    return aw__dialect_eq(p, lit, n < len ? n : len);
}

/* Classify the body by its first bytes: 0 decided (s->kind), 1 more
 * bytes needed, -1 not a call. */
static int classify(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    size_t i = OPEN_LEN;
    while (i < n && aw__dialect_is_space((unsigned char)p[i])) i++;
    if (i >= n) {
        if (!at_end) return 1;
        s->kind = K_XML; /* an empty tag at the very end */
        return 0;
    }
    unsigned char c = (unsigned char)p[i];
    if (c == '{' || c == '[') {
        s->kind = K_JSON;
        s->pos = i;
        return 0;
    }
    if (c == '<') {
        s->kind = K_XML;
        s->pos = i;
        return 0;
    }
    if (!aw__dialect_is_ident(c, 1)) return -1;
    /* GLM: a function name, then its first <arg_key>, the closing tag, a
     * line break, or the end */
    size_t k = i;
    while (k < n && (aw__dialect_is_ident((unsigned char)p[k], 0) || p[k] == '.' || p[k] == '-')) k++;
    if (k - i > 128) return -1;
    size_t b = k;
    while (k < n && (p[k] == ' ' || p[k] == '\t')) k++;
    if (k >= n) return at_end ? (s->kind = K_GLM, s->pos = k, 0) : 1;
    if (p[k] == '\n' || p[k] == '\r' || (b == k && p[k] == '<')) {
        s->kind = K_GLM;
        s->pos = b;
        return 0;
    }
    return -1;
}

/* The JSON body: strings tracked, closing tags inside them decided by
 * what follows the string. The state lives in locals while the bytes are
 * scanned (the candidate's bytes could alias it), and runs of string
 * content are skipped whole. */
static long scan_json(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    char quote = s->quote;
    int escaped = s->escaped, depth = s->depth, phase = s->phase;
    size_t mark = s->mark, aux = s->aux, i = s->pos;
    long r = AW_DIALECT_MORE;
#define SAVE() (s->quote = quote, s->escaped = (unsigned char)escaped, s->depth = depth, s->phase = (unsigned char)phase, \
                s->mark = mark, s->aux = aux)
    for (; i < n; i++) {
        char c = p[i];
        if (phase >= P_AFTER_VALUE) {
            /* the value is complete: its closing tag ends the candidate; so
             * does it after stray bytes on the same line (the JSON is then
             * malformed, for parse to say); else the value's end does */
            if (c == '\n' && phase == P_AFTER_JUNK) return (long)aux;
            if (phase == P_AFTER_VALUE && aw__dialect_is_space((unsigned char)c)) continue;
            if (starts_with(p + i, n - i, close_tag, CLOSE_LEN)) {
                if (n - i < CLOSE_LEN) {
                    if (at_end) return (long)aux;
                    s->pos = i;
                    SAVE();
                    return AW_DIALECT_MORE;
                }
                return (long)(i + CLOSE_LEN);
            }
            phase = P_AFTER_JUNK;
            continue;
        }
        if (quote) {
            if (escaped) {
                escaped = 0;
                continue;
            }
            while (i < n && p[i] != '"' && p[i] != '\\' && p[i] != '<') i++;
            if (i >= n) break;
            c = p[i];
            if (c == '\\') {
                escaped = 1;
            } else if (c == '"') {
                quote = 0;
            } else if (starts_with(p + i, n - i, close_tag, CLOSE_LEN)) {
                if (n - i < CLOSE_LEN) {
                    if (at_end) return (long)(mark ? mark : n);
                    s->pos = i;
                    SAVE();
                    return AW_DIALECT_MORE;
                }
                mark = i + CLOSE_LEN; /* perhaps the end, if the JSON does not go on */
                i += CLOSE_LEN - 1;
            }
            continue;
        }
        if (mark) {
            /* the string that held a closing tag ended: this byte decides */
            if (aw__dialect_is_space((unsigned char)c)) continue;
            if (i - mark <= STRING_LOOKBACK && c != ',' && c != ':' && c != '}' && c != ']') return (long)mark;
            mark = 0;
        } else if (!aw__json_stop[(unsigned char)c]) {
            /* numbers, literals, blanks, separators: to the next byte that matters */
            while (i + 1 < n && !aw__json_stop[(unsigned char)p[i + 1]]) i++;
            continue;
        }
        if (c == '"') {
            quote = '"';
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                phase = P_AFTER_VALUE;
                aux = i + 1;
            }
        } else if (c == '<') {
            if (n - i < 2) {
                if (at_end) break;
                s->pos = i;
                SAVE();
                return AW_DIALECT_MORE;
            }
            if (starts_with(p + i, n - i, close_tag, CLOSE_LEN) || starts_with(p + i, n - i, open_tag, OPEN_LEN)) {
                size_t len = p[i + 1] == '/' ? CLOSE_LEN : OPEN_LEN;
                if (n - i < len) {
                    if (at_end) return (long)n;
                    s->pos = i;
                    SAVE();
                    return AW_DIALECT_MORE;
                }
                if (len == CLOSE_LEN) return (long)(i + len);
                s->unclosed = 1; /* a new <tool_call>: this one was never closed */
                return (long)i;
            }
        }
    }
    if (at_end) r = phase >= P_AFTER_VALUE ? (long)aux : (long)(mark ? mark : n);
    s->pos = n;
    SAVE();
#undef SAVE
    return r;
}

/* XML and GLM bodies end at the closing tag, before a new opening tag, or
 * (Qwen3-Coder, whose closers models drop) after a </function> that no
 * </tool_call> or further <function= follows. */
static long scan_markup(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    size_t i = s->pos;
    for (;;) {
        const char *lt = i < n ? memchr(p + i, '<', n - i) : NULL;
        if (s->mark) {
            /* after </function>: blanks, then the verdict */
            size_t k = s->mark;
            while (k < n && aw__dialect_is_space((unsigned char)p[k])) k++;
            if (k >= n) {
                s->pos = n;
                return at_end ? (long)s->mark : AW_DIALECT_MORE;
            }
            static const char fn[] = "<function=";
            int full = 0, partial = 0;
            if (starts_with(p + k, n - k, close_tag, CLOSE_LEN)) *(n - k >= CLOSE_LEN ? &full : &partial) = 1;
            if (starts_with(p + k, n - k, fn, sizeof fn - 1)) *(n - k >= sizeof fn - 1 ? &full : &partial) = 1;
            if (full) {
                s->mark = 0;
                i = k;
                continue;
            }
            if (partial && !at_end) {
                s->pos = n;
                return AW_DIALECT_MORE;
            }
            return (long)s->mark;
        }
        if (!lt) {
            s->pos = n;
            return at_end ? (long)n : AW_DIALECT_MORE;
        }
        i = (size_t)(lt - p);
        static const char fn_end[] = "</function>";
        const char *const marks[] = {close_tag, open_tag, fn_end};
        const size_t lens[] = {CLOSE_LEN, OPEN_LEN, sizeof fn_end - 1};
        int which = -1;
        for (int m = 0; m < 3; m++) {
            if (!starts_with(p + i, n - i, marks[m], lens[m])) continue;
            if (n - i < lens[m]) {
                if (at_end) continue;
                s->pos = i;
                return AW_DIALECT_MORE;
            }
            which = m;
            break;
        }
        if (which == 0) return (long)(i + CLOSE_LEN);
        if (which == 1 && i > 0) {
            s->unclosed = 1; /* a new <tool_call>: this one was never closed */
            return (long)i;
        }
        if (which == 2 && s->kind == K_XML) {
            s->mark = i + lens[2];
            continue;
        }
        i++;
    }
}

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    if (s->kind == K_UNKNOWN) {
        int k = classify(s, p, n, at_end);
        if (k > 0) return AW_DIALECT_MORE;
        if (k < 0) return AW_DIALECT_NONE;
    }
    return s->kind == K_JSON ? scan_json(s, p, n, at_end) : scan_markup(s, p, n, at_end);
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    int closed = n >= OPEN_LEN + CLOSE_LEN && !memcmp(p + n - CLOSE_LEN, close_tag, CLOSE_LEN);
    aw_text body = aw__dialect_trim(p + OPEN_LEN, n - OPEN_LEN - (closed ? CLOSE_LEN : 0));
    if (!body.len) {
        if (!(out->enabled & AW_DIALECT_HERMES)) return AW_DIALECT_NOT_A_CALL;
        return out->malformed(out, "hermes", AW__DIALECT_NO_TEXT, AW_REJECT_EMPTY_PAYLOAD, "A <tool_call> tag is empty.");
    }
    char c = body.ptr[0];
    if (c == '<') {
        if (!(out->enabled & (AW_DIALECT_QWEN3_CODER | AW_DIALECT_LLAMA3))) return AW_DIALECT_NOT_A_CALL;
        return aw__qwen3_parse_functions(body.ptr, body.len, raw, out);
    }
    if (c != '{' && c != '[') {
        if (!(out->enabled & AW_DIALECT_GLM45)) return AW_DIALECT_NOT_A_CALL;
        return aw__glm45_parse_body(body.ptr, body.len, raw, out);
    }
    if (!(out->enabled & AW_DIALECT_HERMES)) return AW_DIALECT_NOT_A_CALL;
    aw_json_doc *doc;
    unsigned repairs;
    int rc = aw__dialect_marked_json(out, "hermes", body, closed,
                                     closed ? "A <tool_call> must hold a JSON object with \"name\" and \"arguments\"."
                                            : "The <tool_call> was cut off inside its JSON; send the call again, "
                                              "complete, and end it with </tool_call>.",
                                     &doc, &repairs);
    if (rc) return rc == AW_DIALECT_REPORTED ? 0 : rc;
    rc = aw__dialect_json_calls(out, "hermes", aw_json_doc_root(doc), raw, repairs, 0);
    aw_json_doc_free(doc);
    if (rc == AW_DIALECT_NOT_A_CALL)
        return out->malformed(out, "hermes", AW__DIALECT_NO_TEXT, AW_REJECT_INVALID_JSON,
                              "A <tool_call> must hold a JSON object with \"name\" and \"arguments\".");
    return rc;
}

static const aw_dialect_trigger triggers[] = {{open_tag, OPEN_LEN, AW_DT_ANYWHERE}};

const aw_dialect aw__dialect_hermes = {
    "hermes", AW_DIALECT_HERMES | AW_DIALECT_QWEN3_CODER | AW_DIALECT_GLM45, triggers, 1, NULL, NULL, 1, scan, parse, &aw__dialect_qwen3_coder,
};
