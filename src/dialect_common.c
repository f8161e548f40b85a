/* What the dialect readers share: the registry, literal search, balanced
 * scanning, and calls made from JSON values in the common shapes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

const aw_dialect *const aw__dialects[] = {
    &aw__dialect_hermes,   &aw__dialect_qwen3_coder, &aw__dialect_granite,        &aw__dialect_llama3,
    &aw__dialect_pythonic, &aw__dialect_mistral,     &aw__dialect_deepseek,       &aw__dialect_kimi_k2,
    &aw__dialect_minimax,  &aw__dialect_function_calls, &aw__dialect_harmony,     &aw__dialect_fenced,
};
const size_t aw__dialect_count = sizeof aw__dialects / sizeof aw__dialects[0];

static const struct {
    const char *name;
    unsigned flag;
} dialect_names[] = {
    {"hermes", AW_DIALECT_HERMES},     {"function_calls", AW_DIALECT_FUNCTION_CALLS},
    {"fenced", AW_DIALECT_FENCED},     {"granite", AW_DIALECT_GRANITE},
    {"qwen3_coder", AW_DIALECT_QWEN3_CODER}, {"llama3", AW_DIALECT_LLAMA3},
    {"pythonic", AW_DIALECT_PYTHONIC}, {"mistral", AW_DIALECT_MISTRAL},
    {"deepseek", AW_DIALECT_DEEPSEEK}, {"glm45", AW_DIALECT_GLM45},
    {"kimi_k2", AW_DIALECT_KIMI_K2},   {"minimax", AW_DIALECT_MINIMAX},
    {"harmony", AW_DIALECT_HARMONY},
};

unsigned aw_dialect_flag(const char *name, size_t len) {
    if (!name) return 0;
    if (len == 4 && !memcmp(name, "auto", 4)) return AW_DIALECT_AUTO;
    for (size_t i = 0; i < sizeof dialect_names / sizeof dialect_names[0]; i++)
        if (strlen(dialect_names[i].name) == len && !memcmp(dialect_names[i].name, name, len))
            return dialect_names[i].flag;
    return 0;
}

const char *aw_dialect_name(unsigned flag) {
    for (size_t i = 0; i < sizeof dialect_names / sizeof dialect_names[0]; i++)
        if (dialect_names[i].flag == flag) return dialect_names[i].name;
    return NULL;
}

int aw__dialect_malformedf(aw_dialect_out *out, const char *dialect, aw_text name, aw_reject_reason reason,
                           const char *fmt, ...) {
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return out->malformed(out, dialect, name, reason, msg);
}

/* ---- scanning ------------------------------------------------------------------ */

const unsigned char aw__json_stop[256] = {['"'] = 1, ['\''] = 1, ['{'] = 1, ['}'] = 1, ['['] = 1,
                                          [']'] = 1, ['('] = 1, [')'] = 1, ['<'] = 1};

size_t aw__dialect_find(const char *p, size_t n, size_t from, const char *lit, size_t len) {
    while (from + len <= n) {
        const char *hit = memchr(p + from, lit[0], n - from - len + 1);
        if (!hit) return SIZE_MAX;
        size_t at = (size_t)(hit - p);
        if (aw__dialect_eq(hit, lit, len)) return at;
        from = at + 1;
    }
    return SIZE_MAX;
}

size_t aw__dialect_balance(aw_dialect_scan *s, const char *p, size_t n, int python) {
    char quote = s->quote;
    int escaped = s->escaped, depth = s->depth;
    size_t i = s->pos, end = SIZE_MAX;
    for (; i < n; i++) {
        char c = p[i];
        if (quote) {
            if (escaped) {
                escaped = 0;
                continue;
            }
            while (i < n && p[i] != quote && p[i] != '\\') i++;
            if (i >= n) break;
            if (p[i] == '\\') escaped = 1;
            else quote = 0;
            continue;
        }
        if (!aw__json_stop[(unsigned char)c]) {
            while (i + 1 < n && !aw__json_stop[(unsigned char)p[i + 1]]) i++;
            continue;
        }
        if (c == '"' || (python && c == '\'')) {
            quote = c;
        } else if (c == '{' || c == '[' || c == '(') {
            depth++;
        } else if (c == '}' || c == ']' || c == ')') {
            if (--depth <= 0) {
                end = ++i;
                break;
            }
        }
    }
    s->quote = quote;
    s->escaped = (unsigned char)escaped;
    s->depth = depth;
    s->pos = i > n ? n : i;
    return end;
}

long aw__dialect_scan_until(aw_dialect_scan *s, const char *p, size_t n, size_t from, const char *lit, size_t len,
                            int at_end) {
    if (s->pos > from) from = s->pos;
    size_t at = aw__dialect_find(p, n, from, lit, len);
    if (at != SIZE_MAX) return (long)(at + len);
    size_t again = aw__dialect_resume(n, len);
    s->pos = again > from ? again : from;
    return at_end ? (long)n : AW_DIALECT_MORE;
}

long aw__dialect_scan_value(aw_dialect_scan *s, const char *p, size_t n, int at_end, int python) {
    size_t end = aw__dialect_balance(s, p, n, python);
    if (end != SIZE_MAX) return (long)end;
    return at_end ? (long)n : AW_DIALECT_MORE;
}

long aw__dialect_scan_section(aw_dialect_scan *s, const char *p, size_t n, int at_end, const char *section_begin,
                              const char *section_end, const char *call_end) {
    size_t blen = strlen(section_begin);
    const char *close = aw__dialect_eq(p, section_begin, n < blen ? n : blen) ? section_end : call_end;
    return aw__dialect_scan_until(s, p, n, 1, close, strlen(close), at_end);
}

aw_json_value *aw__dialect_new_args(const aw_allocator *alloc, aw_json_doc **doc) {
    *doc = aw_json_doc_new(alloc);
    aw_json_value *obj = *doc ? aw_json_new_object(*doc) : NULL;
    if (!obj) {
        aw_json_doc_free(*doc);
        *doc = NULL;
    }
    return obj;
}

size_t aw__dialect_next_span(const char *p, size_t n, size_t i, const char *begin, size_t blen, const char *end,
                             size_t elen, aw_text *seg) {
    size_t b = aw__dialect_find(p, n, i, begin, blen);
    if (b == SIZE_MAX) return SIZE_MAX;
    b += blen;
    size_t next = aw__dialect_find(p, n, b, begin, blen);
    size_t limit = next != SIZE_MAX ? next : n; /* each byte is searched once */
    size_t e = aw__dialect_find(p, limit, b, end, elen);
    *seg = (aw_text){p + b, (e != SIZE_MAX ? e : limit) - b};
    return e != SIZE_MAX ? e + elen : limit;
}

int aw__dialect_object_call(aw_dialect_out *out, const char *dialect, aw_text name, aw_text json, aw_text raw,
                            const char *where) {
    json = aw__dialect_trim(json.ptr, json.len);
    if (!json.len) return out->call(out, dialect, name, NULL, raw, 0);
    aw_json_doc *doc;
    unsigned repairs;
    int rc = aw__dialect_parse_json(out->alloc, json.ptr, json.len, &doc, &repairs);
    if (rc) return rc;
    if (!aw_json_is_object(aw_json_doc_root(doc))) {
        aw_json_doc_free(doc);
        return aw__dialect_malformedf(out, dialect, name, AW_REJECT_INVALID_JSON,
                                      "The arguments of `%.*s` %s must be one JSON object.",
                                      (int)(name.len > 64 ? 64 : name.len), name.ptr, where);
    }
    rc = out->call(out, dialect, name, aw_json_doc_root(doc), raw, repairs);
    aw_json_doc_free(doc);
    return rc;
}

int aw__dialect_marked_json(aw_dialect_out *out, const char *dialect, aw_text body, int closed, const char *fix,
                            aw_json_doc **doc, unsigned *repairs) {
    int rc = aw__dialect_parse_call_json(out->alloc, body.ptr, body.len, doc, repairs);
    if (rc) return rc;
    char last = body.len ? body.ptr[body.len - 1] : 0;
    aw_reject_reason why = AW_REJECT_INVALID_JSON;
    if (*doc && (*repairs & AW_REPAIR_SURROUNDING_TEXT)) {
        /* bytes around the JSON: which part was meant is a guess */
    } else if (*doc && !closed && (*repairs & AW_REPAIR_UNCLOSED) && last != '}' && last != ']') {
        why = AW_REJECT_UNCLOSED; /* the reply ended inside the JSON: what it held is unknown */
    } else if (*doc) {
        return 0;
    }
    aw_json_doc_free(*doc);
    *doc = NULL;
    rc = out->malformed(out, dialect, AW__DIALECT_NO_TEXT, why, fix);
    return rc ? rc : AW_DIALECT_REPORTED;
}

aw_text aw__dialect_trim(const char *p, size_t n) {
    size_t b = 0, e = n;
    while (b < e && aw__dialect_is_space((unsigned char)p[b])) b++;
    while (e > b && aw__dialect_is_space((unsigned char)p[e - 1])) e--;
    return (aw_text){p + b, e - b};
}

aw_text aw__dialect_trim_newlines(const char *p, size_t n) {
    if (n && p[0] == '\n') p++, n--;
    else if (n > 1 && p[0] == '\r' && p[1] == '\n') p += 2, n -= 2;
    if (n && p[n - 1] == '\n') {
        n--;
        if (n && p[n - 1] == '\r') n--;
    }
    return (aw_text){p, n};
}

static int parse_json(const aw_allocator *alloc, const char *p, size_t n, aw_json_doc **doc, unsigned *repairs,
                      int illustrations) {
    aw_json_read_options ro = {alloc, 0, false};
    *doc = NULL;
    *repairs = 0;
    int rc = aw_json_parse(p, n, &ro, doc, NULL);
    if (rc == AW_ENOMEM) return rc;
    if (rc == 0) return 0;
    /* only text that is not JSON can be a placeholder */
    if (illustrations && aw__dialect_is_illustration(p, n)) return AW_DIALECT_NOT_A_CALL;
    aw_buf fixed;
    aw_buf_init(&fixed, alloc);
    rc = aw_json_repair(p, n, alloc, &fixed, repairs, NULL);
    if (rc == 0) rc = aw_json_parse(fixed.data, fixed.len, &ro, doc, NULL);
    aw_buf_free(&fixed);
    if (rc == AW_ENOMEM) return rc;
    if (rc) *doc = NULL;
    return 0;
}

int aw__dialect_parse_json(const aw_allocator *alloc, const char *p, size_t n, aw_json_doc **doc,
                           unsigned *repairs) {
    return parse_json(alloc, p, n, doc, repairs, 0);
}

int aw__dialect_parse_call_json(const aw_allocator *alloc, const char *p, size_t n, aw_json_doc **doc,
                                unsigned *repairs) {
    return parse_json(alloc, p, n, doc, repairs, 1);
}

int aw__dialect_is_illustration(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"') {
            /* a string: skip it, escapes and all */
            for (i++; i < n && p[i] != '"'; i++)
                if (p[i] == '\\') i++;
        } else if (c == '.' && i + 2 < n && p[i + 1] == '.' && p[i + 2] == '.') {
            return 1;
        } else if (c == 0xE2 && i + 2 < n && (unsigned char)p[i + 1] == 0x80 && (unsigned char)p[i + 2] == 0xA6) {
            return 1; /* U+2026 HORIZONTAL ELLIPSIS */
        } else if (c == '<' && i + 1 < n && aw__dialect_is_ident((unsigned char)p[i + 1], 1)) {
            size_t j = i + 1;
            while (j < n && (aw__dialect_is_ident((unsigned char)p[j], 0) || p[j] == '-')) j++;
            if (j < n && p[j] == '>') return 1;
        }
    }
    return 0;
}

/* ---- calls from JSON ------------------------------------------------------------- */

static const aw_json_value *first_member(const aw_json_value *obj, const char *const *keys, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const aw_json_value *v = aw_json_get(obj, keys[i]);
        if (v) return v;
    }
    return NULL;
}

int aw__dialect_json_call(aw_dialect_out *out, const char *dialect, const aw_json_value *v, aw_text raw,
                          unsigned repairs, int strict) {
    static const char *const arg_keys[] = {"arguments", "parameters", "args", "input"};
    if (!aw_json_is_object(v)) return AW_DIALECT_NOT_A_CALL;
    const aw_json_value *def = v;
    const aw_json_value *fn = aw_json_get(v, "function");
    if (aw_json_is_object(fn) && aw_json_is_string(aw_json_get(fn, "name"))) def = fn;
    const aw_json_value *name = aw_json_get(def, "name");
    if (!aw_json_is_string(name)) return AW_DIALECT_NOT_A_CALL;
    aw_text tool = {name->u.str.ptr, name->u.str.len};
    const aw_json_value *args = first_member(def, arg_keys, sizeof arg_keys / sizeof arg_keys[0]);
    /* a bare object is a call only with arguments beside its name, or when
     * it names a declared tool: {"name": "Alice"} is data */
    if (strict && !out->tool(out, tool)) return AW_DIALECT_NOT_A_CALL;
    if (args && !aw_json_is_object(args) && !aw_json_is_string(args)) {
        if (strict) return AW_DIALECT_NOT_A_CALL;
        return out->malformed(out, dialect, tool, AW_REJECT_INVALID_JSON,
                              "The arguments of a call must be a JSON object.");
    }
    if (aw_json_is_string(args)) {
        /* arguments carried as JSON text, as the OpenAI API writes them */
        aw_json_doc *inner;
        unsigned more;
        int rc = aw__dialect_parse_json(out->alloc, args->u.str.ptr, args->u.str.len, &inner, &more);
        if (rc) return rc;
        const aw_json_value *obj = aw_json_doc_root(inner);
        if (!aw_json_is_object(obj)) {
            aw_json_doc_free(inner);
            if (strict) return AW_DIALECT_NOT_A_CALL;
            return out->malformed(out, dialect, tool, AW_REJECT_INVALID_JSON,
                                  "The arguments string of a call must hold a JSON object.");
        }
        rc = out->call(out, dialect, tool, obj, raw, repairs | more);
        aw_json_doc_free(inner);
        return rc;
    }
    return out->call(out, dialect, tool, args, raw, repairs);
}

int aw__dialect_json_calls(aw_dialect_out *out, const char *dialect, const aw_json_value *v, aw_text raw,
                           unsigned repairs, int strict) {
    const aw_json_value *list = v;
    if (aw_json_is_object(v)) {
        const aw_json_value *tc = aw_json_get(v, "tool_calls");
        if (!tc) return aw__dialect_json_call(out, dialect, v, raw, repairs, strict);
        list = tc;
    }
    if (!aw_json_is_array(list)) return AW_DIALECT_NOT_A_CALL;
    /* a list is read as calls only when each item is call-shaped: a list
     * of records that happen to have names is data */
    for (size_t i = 0; i < aw_json_count(list); i++) {
        const aw_json_value *item = aw_json_at(list, i);
        const aw_json_value *def = item;
        const aw_json_value *fn = aw_json_get(item, "function");
        if (aw_json_is_object(fn)) def = fn;
        if (!aw_json_is_object(item) || !aw_json_is_string(aw_json_get(def, "name"))) return AW_DIALECT_NOT_A_CALL;
    }
    int any = 0;
    for (size_t i = 0; i < aw_json_count(list); i++) {
        int rc = aw__dialect_json_call(out, dialect, aw_json_at(list, i), raw, repairs, strict);
        if (rc < 0) return rc;
        if (rc == 0) any = 1;
    }
    return any ? 0 : AW_DIALECT_NOT_A_CALL;
}
