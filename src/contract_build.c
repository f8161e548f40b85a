/* JSON -> XML in the seed's layout, and the system-prompt text, for any
 * contract. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/xml.h"
#include "internal/contract.h"
#include "internal/errors.h"
#include "internal/json.h"

typedef struct build {
    aw_buf *out;
    aw_error *err;
} build;

static int indent(aw_buf *out, int depth) {
    for (int i = 0; i < depth; i++)
        if (aw_buf_append(out, "  ", 2)) return AW_ENOMEM;
    return 0;
}

/* aw_xml_escape, plus tab, LF and CR as character references where a
 * parser would change them: in attribute values (all three become spaces)
 * and CR in text (it becomes LF). Fixed: build wrote them raw, so parsing
 * what build wrote did not give back the same strings. */
static int escape(aw_buf *out, const char *s, size_t n, int attr) {
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\r' || (attr && (c == '\n' || c == '\t'))) {
            if (aw_xml_escape(out, s + from, i - from, 0)) return AW_ENOMEM;
            if (aw_buf_append_str(out, c == '\r' ? "&#13;" : c == '\n' ? "&#10;" : "&#9;")) return AW_ENOMEM;
            from = i + 1;
        }
    }
    return aw_xml_escape(out, s + from, n - from, 0);
}

/* A number as JavaScript writes it, but never with an exponent: "1e-7"
 * becomes "0.0000001" and "1e+21" "1000000000000000000000". Fixed: integer
 * and decimal values are read without exponents (contract_check.c), so
 * build wrote values such as a parsed confidence of 0.0000001 in a form
 * its own validation then refused. */
static int plain_number(aw_buf *out, double d) {
    char s[40];
    size_t n = aw__js_number_string(d, s);
    s[n] = '\0'; /* for strtol below (found by fuzz_contract_validate) */
    const char *e = memchr(s, 'e', n);
    if (!e) return aw_buf_append(out, s, n);
    const char *p = s;
    if (*p == '-' && aw_buf_putc(out, '-')) return AW_ENOMEM;
    if (*p == '-') p++;
    char digits[32];
    long nd = 0;
    for (const char *q = p; q < e && nd < (long)sizeof digits; q++)
        if (*q != '.') digits[nd++] = *q;
    long point = strtol(e + 1, NULL, 10) + 1; /* digits before the decimal point */
    int rc = 0;
    if (point <= 0) {
        rc = aw_buf_append(out, "0.", 2);
        for (long i = 0; i < -point && !rc; i++) rc = aw_buf_putc(out, '0');
        if (!rc) rc = aw_buf_append(out, digits, (size_t)nd);
    } else if (point >= nd) {
        rc = aw_buf_append(out, digits, (size_t)nd);
        for (long i = nd; i < point && !rc; i++) rc = aw_buf_putc(out, '0');
    } else {
        rc = aw_buf_append(out, digits, (size_t)point);
        if (!rc) rc = aw_buf_putc(out, '.');
        if (!rc) rc = aw_buf_append(out, digits + point, (size_t)(nd - point));
    }
    return rc;
}

/* The text form of a JSON value for an attribute or element text. */
static int value_text(build *b, const c_value *v, const aw_json_value *j, const char *path, aw_buf *tmp,
                      int is_text) {
    aw_buf_clear(tmp);
    char num[40];
    /* null is empty text, as parse maps empty typed text (contract_check.c) */
    if (is_text && aw_json_is_null(j)) return aw_buf_reserve(tmp, 0);
    switch (aw_json_type_of(j)) {
    case AW_JSON_STRING: return aw_buf_append(tmp, j->u.str.ptr, j->u.str.len);
    case AW_JSON_NUMBER:
        if (v->type == CT_INTEGER || v->type == CT_DECIMAL) return plain_number(tmp, j->u.num.d);
        return aw_buf_append(tmp, num, aw__js_number_string(j->u.num.d, num));
    case AW_JSON_BOOL: return aw_buf_append_str(tmp, j->u.b ? "true" : "false");
    case AW_JSON_ARRAY:
        if (v->type == CT_LIST) {
            for (size_t i = 0; i < j->u.arr.count; i++) {
                const aw_json_value *it = &j->u.arr.items[i];
                if (i && aw_buf_append(tmp, ", ", 2)) return AW_ENOMEM;
                if (it->type == AW_JSON_STRING) {
                    if (aw_buf_append(tmp, it->u.str.ptr, it->u.str.len)) return AW_ENOMEM;
                } else if (it->type == AW_JSON_NUMBER) {
                    if (aw_buf_append(tmp, num, aw__js_number_string(it->u.num.d, num))) return AW_ENOMEM;
                } else {
                    return aw__error_set(b->err, AW_ETYPE, "%s: list items must be strings or numbers", path);
                }
            }
            return aw_buf_reserve(tmp, 0);
        }
        /* fall through */
    default: return aw__error_set(b->err, AW_ETYPE, "%s: expected a string, number or boolean", path);
    }
}

static int build_elem(build *b, const c_elem *spec, const aw_json_value *j, int depth, const char *path,
                      aw_buf *tmp) {
    aw_buf *out = b->out;
    int rc;
    char sub[256];
    if (depth > 64) return aw__error_set(b->err, AW_ELIMIT, "%s: nested too deeply", path);
    if ((rc = indent(out, depth))) return rc;
    if (!spec->nattrs && !spec->nchildren) {
        if ((rc = value_text(b, &spec->text, j, path, tmp, 1))) return rc;
        rc = aw_buf_printf(out, "<%s>", spec->name);
        if (!rc) rc = escape(out, tmp->data ? tmp->data : "", tmp->len, 0);
        if (!rc) rc = aw_buf_printf(out, "</%s>\n", spec->name);
        return rc;
    }
    if (!aw_json_is_object(j)) return aw__error_set(b->err, AW_ETYPE, "%s: expected an object", path);
    if ((rc = aw_buf_printf(out, "<%s", spec->name))) return rc;
    for (size_t i = 0; i < spec->nattrs; i++) {
        const aw_json_value *av = aw_json_get(j, spec->attrs[i].name);
        if (!av) continue;
        snprintf(sub, sizeof sub, "%s/@%s", path, spec->attrs[i].name);
        if ((rc = value_text(b, &spec->attrs[i].v, av, sub, tmp, 0))) return rc;
        rc = aw_buf_printf(out, " %s=\"", spec->attrs[i].name);
        if (!rc) rc = escape(out, tmp->data ? tmp->data : "", tmp->len, 1);
        if (!rc) rc = aw_buf_putc(out, '"');
        if (rc) return rc;
    }
    const aw_json_value *text = spec->has_text ? aw_json_get(j, "#text") : NULL;
    int has_children = 0;
    for (size_t c = 0; c < spec->nchildren && !has_children; c++) {
        const aw_json_value *cv = aw_json_get(j, spec->children[c].name);
        if (cv && !(aw_json_is_array(cv) && spec->children[c].max > 1 && cv->u.arr.count == 0)) has_children = 1;
    }
    if (!has_children && !text) return aw_buf_append(out, " />\n", 4);
    if (!has_children) {
        if ((rc = value_text(b, &spec->text, text, path, tmp, 1))) return rc;
        rc = aw_buf_putc(out, '>');
        if (!rc) rc = escape(out, tmp->data ? tmp->data : "", tmp->len, 0);
        if (!rc) rc = aw_buf_printf(out, "</%s>\n", spec->name);
        return rc;
    }
    if ((rc = aw_buf_append(out, ">\n", 2))) return rc;
    if (text) {
        if ((rc = value_text(b, &spec->text, text, path, tmp, 1)) || (rc = indent(out, depth + 1))) return rc;
        if ((rc = escape(out, tmp->data ? tmp->data : "", tmp->len, 0)) || (rc = aw_buf_putc(out, '\n')))
            return rc;
    }
    for (size_t c = 0; c < spec->nchildren; c++) {
        const c_elem *cs = &spec->children[c];
        const aw_json_value *cv = aw_json_get(j, cs->name);
        if (!cv) continue;
        if (cs->max > 1 && aw_json_is_array(cv)) {
            for (size_t i = 0; i < cv->u.arr.count; i++) {
                snprintf(sub, sizeof sub, "%s/%s[%zu]", path, cs->name, i + 1);
                if ((rc = build_elem(b, cs, &cv->u.arr.items[i], depth + 1, sub, tmp))) return rc;
            }
        } else {
            snprintf(sub, sizeof sub, "%s/%s", path, cs->name);
            if ((rc = build_elem(b, cs, cv, depth + 1, sub, tmp))) return rc;
        }
    }
    if ((rc = indent(out, depth))) return rc;
    return aw_buf_printf(out, "</%s>\n", spec->name);
}

int aw_contract_build(const aw_contract *c, const aw_json_value *data, aw_buf *out, aw_error *err) {
    if (!c || !data || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    size_t start = out->len;
    aw_buf tmp;
    aw_buf_init(&tmp, out->alloc);
    build b = {out, err};
    char path[256];
    snprintf(path, sizeof path, "/%s", c->root.name);
    int rc = build_elem(&b, &c->root, data, 0, path, &tmp);
    aw_buf_free(&tmp);
    if (rc == AW_ENOMEM) aw__error_set(err, AW_ENOMEM, "out of memory");
    if (!rc) {
        out->len--; /* no trailing newline from the library */
        out->data[out->len] = '\0';
        aw_contract_issue *issues = NULL;
        size_t n = 0;
        /* Fixed: the limits are for untrusted input; what build wrote from
         * the contract is not refused for its size (a response text over
         * 16 MiB) or for an element with more than 64 declared attributes. */
        aw_contract_options vo = {false, false, 0, SIZE_MAX, SIZE_MAX, out->alloc};
        rc = aw_contract_validate(c, out->data + start, out->len - start, &vo, &issues, &n, err);
        aw_free(out->alloc, issues);
        /* Fixed: the position was one in the XML just written and thrown
         * away, and the command printed it against the JSON input file;
         * the path alone says where the problem is. */
        if (rc == AW_EVALID && err) err->offset = err->line = err->column = 0;
    }
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
    }
    return rc;
}

/* ---- the system prompt ------------------------------------------------------ */

static int placeholder(aw_buf *out, const c_value *v, const char *name, const char *description) {
    char a[40], z[40];
    switch (v->type) {
    case CT_BOOLEAN: return aw_buf_append_str(out, "true|false");
    case CT_ENUM:
        for (size_t i = 0; i < v->nvalues; i++) {
            if (i && aw_buf_putc(out, '|')) return AW_ENOMEM;
            if (aw_xml_escape(out, v->values[i], strlen(v->values[i]), 0)) return AW_ENOMEM;
        }
        return 0;
    case CT_DECIMAL:
    case CT_INTEGER:
        if (v->has_min && v->has_max) {
            a[aw__js_number_string(v->min, a)] = '\0';
            z[aw__js_number_string(v->max, z)] = '\0';
            return aw_buf_printf(out, "%s-%s", a, z);
        }
        return aw_buf_append_str(out, v->type == CT_INTEGER ? "integer" : "number");
    case CT_LIST:
        if (description) return aw_xml_escape(out, description, strlen(description), 0);
        return aw_buf_printf(out, "comma-separated %s", name);
    default:
        return aw_xml_escape(out, description ? description : name, strlen(description ? description : name), 0);
    }
}

static int prompt_elem(aw_buf *out, const c_elem *e, int depth) {
    int rc = indent(out, depth);
    if (!rc) rc = aw_buf_printf(out, "<%s", e->name);
    for (size_t i = 0; i < e->nattrs && !rc; i++) {
        rc = aw_buf_printf(out, " %s=\"", e->attrs[i].name);
        if (!rc) rc = placeholder(out, &e->attrs[i].v, e->attrs[i].name, e->attrs[i].description);
        if (!rc) rc = aw_buf_putc(out, '"');
    }
    if (rc) return rc;
    if (!e->nchildren && !e->has_text) return aw_buf_append_str(out, " />\n");
    if (!e->nchildren) {
        rc = aw_buf_append_str(out, ">[");
        if (!rc) rc = placeholder(out, &e->text, e->name, e->description);
        if (!rc) rc = aw_buf_printf(out, "]</%s>\n", e->name);
        return rc;
    }
    if ((rc = aw_buf_append_str(out, ">\n"))) return rc;
    for (size_t c = 0; c < e->nchildren && !rc; c++) {
        const c_elem *ch = &e->children[c];
        rc = prompt_elem(out, ch, depth + 1);
        if (!rc && ch->max != 1) {
            rc = indent(out, depth + 1);
            if (!rc && ch->max == SIZE_MAX) rc = aw_buf_printf(out, "<!-- Repeat <%s> %zu or more times -->\n", ch->name, ch->min);
            else if (!rc) rc = aw_buf_printf(out, "<!-- Repeat <%s> %zu-%zu times -->\n", ch->name, ch->min, ch->max);
        }
    }
    if (!rc) rc = indent(out, depth);
    if (!rc) rc = aw_buf_printf(out, "</%s>\n", e->name);
    return rc;
}

static int rule_value(aw_buf *out, const char *what, const c_value *v) {
    char a[40], z[40];
    int rc = 0;
    if ((v->type == CT_DECIMAL || v->type == CT_INTEGER) && (v->has_min || v->has_max)) {
        a[v->has_min ? aw__js_number_string(v->min, a) : 0] = '\0';
        z[v->has_max ? aw__js_number_string(v->max, z) : 0] = '\0';
        if (v->has_min && v->has_max) rc = aw_buf_printf(out, "- %s is a %s from %s to %s\n", what, v->type == CT_INTEGER ? "whole number" : "number", a, z);
        else if (v->has_min) rc = aw_buf_printf(out, "- %s is a %s of at least %s\n", what, v->type == CT_INTEGER ? "whole number" : "number", a);
        else rc = aw_buf_printf(out, "- %s is a %s of at most %s\n", what, v->type == CT_INTEGER ? "whole number" : "number", z);
    }
    if (!rc && v->max_length) rc = aw_buf_printf(out, "- %s has at most %zu characters\n", what, v->max_length);
    if (!rc && v->max_items) rc = aw_buf_printf(out, "- %s lists at most %zu comma-separated items\n", what, v->max_items);
    return rc;
}

static int prompt_rules(aw_buf *out, const c_elem *e) {
    int rc = 0;
    char what[200];
    for (size_t i = 0; i < e->nattrs && !rc; i++) {
        snprintf(what, sizeof what, "%s of <%s>", e->attrs[i].name, e->name);
        if (e->attrs[i].required) rc = aw_buf_printf(out, "- <%s> always has %s\n", e->name, e->attrs[i].name);
        if (!rc) rc = rule_value(out, what, &e->attrs[i].v);
    }
    if (!rc && e->has_text) {
        snprintf(what, sizeof what, "the text of <%s>", e->name);
        if (e->text_required) rc = aw_buf_printf(out, "- <%s> must not be empty\n", e->name);
        if (!rc) rc = rule_value(out, what, &e->text);
    }
    for (size_t c = 0; c < e->nchildren && !rc; c++) {
        const c_elem *ch = &e->children[c];
        if (ch->min == 1 && ch->max == 1) rc = aw_buf_printf(out, "- <%s> holds exactly one <%s>\n", e->name, ch->name);
        else if (ch->max == SIZE_MAX) rc = aw_buf_printf(out, "- <%s> holds at least %zu <%s>\n", e->name, ch->min, ch->name);
        else rc = aw_buf_printf(out, "- <%s> holds %zu to %zu <%s>\n", e->name, ch->min, ch->max, ch->name);
        if (!rc) rc = prompt_rules(out, ch);
    }
    return rc;
}

int aw_contract_prompt(const aw_contract *c, aw_buf *out) {
    if (!c || !out) return AW_EINVAL;
    if (c->prompt) return aw_buf_append_str(out, c->prompt);
    size_t start = out->len;
    int rc = aw_buf_append_str(out, "You are an AI assistant. Always respond using this XML format:\n\n");
    if (!rc) rc = prompt_elem(out, &c->root, 0);
    if (!rc) rc = aw_buf_append_str(out, "\nRules:\n- Escape <, > and & in text as &lt;, &gt; and &amp;\n");
    if (!rc) rc = prompt_rules(out, &c->root);
    if (!rc && out->len && out->data[out->len - 1] == '\n') out->data[--out->len] = '\0';
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
    }
    return rc;
}
