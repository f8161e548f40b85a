/* Llama 3.x and the models that answer in bare JSON:
 *
 *   {"name": "get_weather", "parameters": {"location": "Paris"}}
 *   {"name": "a", "parameters": {}}; {"name": "b", "parameters": {}}
 *   [{"name": "add", "arguments": {...}}, {"name": "add", "arguments": {...}}]
 *   <|python_tag|>{"name": "get_current_conditions", "parameters": {...}}<|eom_id|>
 *   <|python_tag|>brave_search.call(query="current weather in Menlo Park")<|eom_id|>
 *   (the built-ins brave_search and wolfram_alpha also without the tag)
 *
 * (Llama 3.1's <function=NAME>{json}</function> is read by
 * dialect_qwen3_coder.c, which owns <function=.)
 *
 * Without the <|python_tag|> nothing announces a call, so a bare form is
 * one only at the start of a line, with a call-shaped first key, and only
 * when it names a declared tool: a reply that shows JSON data is not a
 * call. */
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

static const char python_tag[] = "<|python_tag|>";
#define TAG_LEN (sizeof python_tag - 1)
static const char *const end_tokens[] = {"<|eom_id|>", "<|eot_id|>"};
#define END_TOKEN_LEN 10

enum { F_JSON = 1, F_BUILTIN };

/* Is the first key of the object at p[i] ('{') one a call begins with? */
static int call_key_at(const char *p, size_t n, size_t i, int at_end) {
    static const char *const keys[] = {"name", "type", "function", "arguments", "parameters"};
    i++;
    while (i < n && aw__dialect_is_space((unsigned char)p[i])) i++;
    if (i >= n) return at_end ? 0 : -1;
    if (p[i] != '"') return 0;
    size_t b = ++i;
    while (i < n && p[i] != '"' && i - b < 16) i++;
    if (i >= n) return at_end ? 0 : -1;
    if (p[i] != '"') return 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (strlen(keys[k]) == i - b && !memcmp(p + b, keys[k], i - b)) return 1;
    return 0;
}

/* A built-in tool call at a line start: Llama 3.1's brave_search and
 * wolfram_alpha (any NAME.call( after <|python_tag|>). */
static int builtin_at(const char *p, size_t n, int at_end) {
    static const char *const builtins[] = {"brave_search.call(", "wolfram_alpha.call("};
    int more = 0;
    for (size_t b = 0; b < 2; b++) {
        size_t len = strlen(builtins[b]), m = n < len ? n : len;
        if (memcmp(p, builtins[b], m)) continue;
        if (m == len) return 1;
        more = 1;
    }
    return more && !at_end ? -1 : 0;
}

static int starts(const char *p, size_t n, int at_end) {
    size_t lim = n < AW_DIALECT_LOOKAHEAD ? n : AW_DIALECT_LOOKAHEAD;
    if (p[0] == '{') return call_key_at(p, lim, 0, at_end || lim < n);
    if (p[0] == '[') {
        size_t i = 1;
        while (i < lim && aw__dialect_is_space((unsigned char)p[i])) i++;
        if (i >= lim) return at_end || lim < n ? 0 : -1;
        return p[i] == '{' ? call_key_at(p, lim, i, at_end || lim < n) : 0;
    }
    if (aw__dialect_is_ident((unsigned char)p[0], 1)) return builtin_at(p, lim, at_end || lim < n);
    return 0;
}

/* After a complete value: "; another", an end token, or the end. */
static long after_value(aw_dialect_scan *s, const char *p, size_t n, int at_end, size_t end) {
    size_t i = end;
    while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
    if (i >= n) return at_end ? (long)end : AW_DIALECT_MORE;
    if (p[i] == ';' && s->kind == F_JSON) {
        /* another object may follow */
        size_t k = i + 1;
        while (k < n && aw__dialect_is_space((unsigned char)p[k])) k++;
        if (k >= n) return at_end ? (long)end : AW_DIALECT_MORE;
        if (p[k] != '{') return (long)end;
        s->pos = k;
        s->depth = 0;
        return -2; /* go on scanning */
    }
    for (size_t t = 0; t < 2; t++) {
        size_t m = n - i < END_TOKEN_LEN ? n - i : END_TOKEN_LEN;
        if (!memcmp(p + i, end_tokens[t], m)) {
            if (m < END_TOKEN_LEN) return at_end ? (long)end : AW_DIALECT_MORE;
            return (long)(i + END_TOKEN_LEN);
        }
    }
    return (long)end;
}

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    if (!s->kind) {
        size_t i = 0;
        if (n && p[0] == '<') {
            i = TAG_LEN;
            while (i < n && aw__dialect_is_space((unsigned char)p[i])) i++;
            if (i >= n) return at_end ? AW_DIALECT_NONE : AW_DIALECT_MORE;
        }
        if (p[i] == '{' || p[i] == '[') s->kind = F_JSON;
        else if (aw__dialect_is_ident((unsigned char)p[i], 1)) s->kind = F_BUILTIN;
        else return AW_DIALECT_NONE;
        s->pos = i;
    }
    if (s->kind == F_BUILTIN && !s->phase) {
        /* the balance starts at the call's '(', within 64 bytes of the name */
        size_t b = s->pos;
        while (s->pos < n && s->pos - b < 64 && (aw__dialect_is_ident((unsigned char)p[s->pos], 0) || p[s->pos] == '.'))
            s->pos++;
        if (s->pos >= n) {
            s->pos = b;
            return at_end ? AW_DIALECT_NONE : AW_DIALECT_MORE;
        }
        if (p[s->pos] != '(') return AW_DIALECT_NONE;
        s->phase = 1;
    }
    for (;;) {
        if (s->mark) {
            long r = after_value(s, p, n, at_end, s->mark);
            if (r != -2) return r;
            s->mark = 0;
        }
        size_t end = aw__dialect_balance(s, p, n, s->kind == F_BUILTIN);
        if (end == SIZE_MAX) return at_end ? (long)n : AW_DIALECT_MORE;
        s->mark = end;
    }
}

/* ---- reading --------------------------------------------------------------------- */

static int builtin(const char *p, size_t n, aw_text raw, int tagged, aw_dialect_out *out) {
    aw_json_doc *doc = aw_json_doc_new(out->alloc);
    if (!doc) return AW_ENOMEM;
    size_t pos = 0;
    aw_text name;
    aw_json_value *args;
    const char *why = NULL;
    int rc = aw__pylit_call(p, n, &pos, out->alloc, doc, &name, &args, &why);
    if (rc == AW_ESYNTAX) {
        aw_json_doc_free(doc);
        if (!tagged) return AW_DIALECT_NOT_A_CALL;
        char msg[240];
        snprintf(msg, sizeof msg, "A built-in tool call is written TOOL.call(name=\"value\"); here %s.", why);
        return out->malformed(out, "llama3", AW__DIALECT_NO_TEXT, AW_REJECT_MALFORMED_CALL, msg);
    }
    if (!rc) {
        if (name.len > 5 && !memcmp(name.ptr + name.len - 5, ".call", 5)) name.len -= 5;
        if (!tagged && !out->tool(out, name)) rc = AW_DIALECT_NOT_A_CALL;
        else rc = out->call(out, "llama3", name, args, raw, 0);
    }
    aw_json_doc_free(doc);
    return rc;
}

/* One JSON value of the ';'-separated run p[0..n). */
static int json_value(const char *p, size_t n, aw_text raw, int tagged, aw_dialect_out *out) {
    aw_json_doc *doc;
    unsigned repairs;
    int rc = aw__dialect_parse_call_json(out->alloc, p, n, &doc, &repairs);
    if (rc) return rc;
    if (!doc) return tagged ? out->malformed(out, "llama3", AW__DIALECT_NO_TEXT, AW_REJECT_INVALID_JSON,
                                             "After <|python_tag|> write {\"name\": \"NAME\", \"parameters\": {...}}.")
                            : AW_DIALECT_NOT_A_CALL;
    char last = p[n - 1];
    if ((repairs & AW_REPAIR_UNCLOSED) && last != '}' && last != ']') {
        /* the reply ended inside the JSON */
        aw_json_doc_free(doc);
        if (!tagged) return AW_DIALECT_NOT_A_CALL;
        return out->malformed(out, "llama3", AW__DIALECT_NO_TEXT, AW_REJECT_UNCLOSED,
                              "The call was cut off inside its JSON; send {\"name\": \"NAME\", \"parameters\": {...}} "
                              "again, complete.");
    }
    rc = aw__dialect_json_calls(out, "llama3", aw_json_doc_root(doc), raw, repairs, !tagged);
    aw_json_doc_free(doc);
    return rc;
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    int tagged = n >= TAG_LEN && !memcmp(p, python_tag, TAG_LEN);
    aw_text body = aw__dialect_trim(p + (tagged ? TAG_LEN : 0), n - (tagged ? TAG_LEN : 0));
    for (size_t t = 0; t < 2; t++)
        if (body.len >= END_TOKEN_LEN && !memcmp(body.ptr + body.len - END_TOKEN_LEN, end_tokens[t], END_TOKEN_LEN))
            body = aw__dialect_trim(body.ptr, body.len - END_TOKEN_LEN);
    if (!body.len) return AW_DIALECT_NOT_A_CALL;
    if (body.ptr[0] != '{' && body.ptr[0] != '[') return builtin(body.ptr, body.len, raw, tagged, out);
    /* values separated by ';' */
    int any = 0;
    aw_dialect_scan s;
    size_t at = 0;
    while (at < body.len) {
        memset(&s, 0, sizeof s);
        s.pos = at;
        size_t end = aw__dialect_balance(&s, body.ptr, body.len, 0);
        if (end == SIZE_MAX) end = body.len;
        int rc = json_value(body.ptr + at, end - at, raw, tagged, out);
        if (rc < 0) return rc;
        if (rc == 0) any = 1;
        at = end;
        while (at < body.len && (aw__dialect_is_space((unsigned char)body.ptr[at]) || body.ptr[at] == ';')) at++;
    }
    return any ? 0 : AW_DIALECT_NOT_A_CALL;
}

static const aw_dialect_trigger triggers[] = {{python_tag, TAG_LEN, AW_DT_ANYWHERE}};

const aw_dialect aw__dialect_llama3 = {"llama3", AW_DIALECT_LLAMA3, triggers, 1, starts, "{[bw", 1, scan, parse, NULL};
