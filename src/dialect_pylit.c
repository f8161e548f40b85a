/* Python calls and literals, as the pythonic dialect (Llama 3.2/4, OLMo,
 * LFM) and Llama 3.1's built-in tools write them:
 *
 *   [get_weather(city='San Francisco', metric="celsius"), get_time()]
 *   brave_search.call(query="current weather in Menlo Park")
 *
 * A value is turned into JSON text in one pass (quotes, escapes, True,
 * False, None, tuples as arrays) and read by the strict JSON reader, so
 * nesting costs no recursion here and the reader's depth limit holds. */
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

static size_t skip_blanks(const char *p, size_t n, size_t i) {
    while (i < n && aw__dialect_is_space((unsigned char)p[i])) i++;
    return i;
}

static int put(aw_buf *b, const char *s, size_t n) { return aw_buf_append(b, s, n) ? AW_ENOMEM : 0; }

/* A Python string literal at p[*i] (its quote) as a JSON string. */
static int string_literal(const char *p, size_t n, size_t *i, aw_buf *out) {
    char q = p[*i];
    size_t k = *i + 1;
    if (put(out, "\"", 1)) return AW_ENOMEM;
    while (k < n && p[k] != q) {
        char c = p[k];
        char tmp[8];
        const char *rep = NULL;
        size_t len = 1;
        if (c == '\\' && k + 1 < n) {
            char e = p[++k];
            switch (e) {
            case 'n': rep = "\\n", len = 2; break;
            case 't': rep = "\\t", len = 2; break;
            case 'r': rep = "\\r", len = 2; break;
            case 'b': rep = "\\b", len = 2; break;
            case 'f': rep = "\\f", len = 2; break;
            case '\\': rep = "\\\\", len = 2; break;
            case '"': rep = "\\\"", len = 2; break;
            case 'u':
                /* \uXXXX means the same in both languages */
                rep = "\\u", len = 2;
                break;
            case 'x':
                if (k + 2 < n) {
                    snprintf(tmp, sizeof tmp, "\\u00%c%c", p[k + 1], p[k + 2]);
                    rep = tmp, len = 6;
                    k += 2;
                }
                break;
            case '\n': rep = "", len = 0; break; /* a continued line */
            default: rep = &p[k], len = 1; break; /* \' and unknown escapes: the character */
            }
            if (!rep) return AW_ESYNTAX;
        } else if (c == '"') {
            rep = "\\\"", len = 2;
        } else if ((unsigned char)c < 0x20) {
            snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)(unsigned char)c);
            rep = tmp, len = 6;
        } else {
            rep = &p[k];
        }
        if (put(out, rep, len)) return AW_ENOMEM;
        k++;
    }
    if (k >= n) return AW_ESYNTAX;
    *i = k + 1;
    return put(out, "\"", 1);
}

/* The literal at p[*i..n) up to the ',' or ')' that ends it at depth 0,
 * as JSON text in out. */
static int literal_to_json(const char *p, size_t n, size_t *i, aw_buf *out, const char **why) {
    size_t k = *i;
    long depth = 0;
    while (k < n) {
        unsigned char c = (unsigned char)p[k];
        if (aw__dialect_is_space(c)) {
            k++;
        } else if (c == '\'' || c == '"') {
            int rc = string_literal(p, n, &k, out);
            if (rc) {
                if (rc == AW_ESYNTAX) *why = "a string is not closed";
                return rc;
            }
        } else if (c == '[' || c == '{' || c == '(') {
            depth++;
            if (put(out, c == '(' ? "[" : (const char *)&p[k], 1)) return AW_ENOMEM;
            k++;
        } else if (c == ']' || c == '}' || c == ')') {
            if (depth == 0) break; /* the call's ')', or a stray closer the reader refuses */
            depth--;
            if (put(out, c == ')' ? "]" : (const char *)&p[k], 1)) return AW_ENOMEM;
            k++;
        } else if (c == ',' && depth == 0) {
            break;
        } else if (c == ',' || c == ':') {
            if (put(out, &p[k], 1)) return AW_ENOMEM;
            k++;
        } else if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) {
            /* a number, written as Python may (1_000): the JSON reader judges the rest */
            while (k < n && (aw__dialect_is_ident((unsigned char)p[k], 0) || p[k] == '.' || p[k] == '+' ||
                             p[k] == '-')) {
                if (p[k] != '_' && put(out, &p[k], 1)) return AW_ENOMEM;
                k++;
            }
        } else if (aw__dialect_is_ident(c, 1)) {
            size_t e = k;
            while (e < n && aw__dialect_is_ident((unsigned char)p[e], 0)) e++;
            aw_text w = {p + k, e - k};
            const char *json = NULL;
            if (w.len == 4 && !memcmp(w.ptr, "True", 4)) json = "true";
            else if (w.len == 5 && !memcmp(w.ptr, "False", 5)) json = "false";
            else if (w.len == 4 && !memcmp(w.ptr, "None", 4)) json = "null";
            else if (w.len == 4 && !memcmp(w.ptr, "true", 4)) json = "true";
            else if (w.len == 5 && !memcmp(w.ptr, "false", 5)) json = "false";
            else if (w.len == 4 && !memcmp(w.ptr, "null", 4)) json = "null";
            if (!json) {
                *why = "an argument value is a name, not a literal";
                return AW_ESYNTAX;
            }
            if (put(out, json, strlen(json))) return AW_ENOMEM;
            k = e;
        } else {
            *why = "an argument value is not a Python literal";
            return AW_ESYNTAX;
        }
    }
    if (depth != 0 || k >= n) {
        *why = "the call is not closed";
        return AW_ESYNTAX;
    }
    *i = k;
    return 0;
}

int aw__pylit_call(const char *p, size_t n, size_t *pos, const aw_allocator *alloc, aw_json_doc *doc,
                   aw_text *name, aw_json_value **args, const char **why) {
    size_t i = skip_blanks(p, n, *pos);
    size_t b = i;
    for (;;) {
        if (i >= n || !aw__dialect_is_ident((unsigned char)p[i], 1)) {
            *why = "a call must start with a function name";
            return AW_ESYNTAX;
        }
        while (i < n && aw__dialect_is_ident((unsigned char)p[i], 0)) i++;
        if (i < n && p[i] == '.') {
            i++;
            continue;
        }
        break;
    }
    *name = (aw_text){p + b, i - b};
    i = skip_blanks(p, n, i);
    if (i >= n || p[i] != '(') {
        *why = "a function name must be followed by '('";
        return AW_ESYNTAX;
    }
    i++;
    aw_json_value *obj = aw_json_new_object(doc);
    if (!obj) return AW_ENOMEM;
    aw_buf text;
    aw_buf_init(&text, alloc);
    int rc = 0;
    for (;;) {
        i = skip_blanks(p, n, i);
        if (i < n && p[i] == ')') {
            i++;
            break;
        }
        size_t kb = i;
        while (i < n && aw__dialect_is_ident((unsigned char)p[i], i == kb)) i++;
        size_t ke = i;
        i = skip_blanks(p, n, i);
        if (ke == kb || i >= n || p[i] != '=' || (i + 1 < n && p[i + 1] == '=')) {
            *why = "arguments must be written name=value";
            rc = AW_ESYNTAX;
            break;
        }
        i++;
        aw_buf_clear(&text);
        if ((rc = literal_to_json(p, n, &i, &text, why))) break;
        aw_json_read_options ro = {alloc, 0, false};
        aw_json_doc *vd = NULL;
        rc = aw_json_parse(text.data ? text.data : "", text.len, &ro, &vd, NULL);
        if (rc) {
            if (rc != AW_ENOMEM) {
                *why = "an argument value is not a Python literal";
                rc = AW_ESYNTAX;
            }
            break;
        }
        aw_json_value *v = aw_json_copy(doc, aw_json_doc_root(vd));
        rc = !v || aw_json_object_set(doc, obj, p + kb, ke - kb, v) ? AW_ENOMEM : 0;
        aw_json_doc_free(vd);
        if (rc) break;
        /* the value ended at ',' or ')' */
        if (p[i] == ',') i++;
        else if (p[i] != ')') {
            *why = "arguments must be separated by ','";
            rc = AW_ESYNTAX;
            break;
        }
    }
    aw_buf_free(&text);
    if (rc) return rc;
    *args = obj;
    *pos = i;
    return 0;
}
