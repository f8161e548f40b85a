/* <function=NAME>: Qwen3-Coder's and Qwen3.5's XML calls, and Llama 3.1's
 * custom-tool form with a JSON object inside.
 *
 *   <tool_call>
 *   <function=read_file>
 *   <parameter=path>
 *   /etc/hosts
 *   </parameter>
 *   </function>
 *   </tool_call>
 *
 *   <function=spotify_trending_songs>{"n": "5"}</function>
 *
 * Real replies drop pieces of this: the <tool_call> opener (the reader
 * starts at <function=), </parameter> (a value then ends at the next
 * <parameter=, at </function> or at the end), </function> or </tool_call>
 * (the call ends at the next <function= or at the end of the reply).
 * Parameter values are text; the tool's schema says what they stand for
 * ("5" where it wants an integer is 5). A value written on lines of its
 * own loses the line breaks around it. */
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

static const char fn_open[] = "<function=";
static const char fn_close[] = "</function>";
static const char tc_close[] = "</tool_call>";
static const char tc_open[] = "<tool_call>";
static const char par_open[] = "<parameter=";
static const char par_close[] = "</parameter>";
#define LEN(s) (sizeof(s) - 1)

static int prefix_of(const char *p, size_t n, const char *lit, size_t len) {
    return aw__dialect_eq(p, lit, n < len ? n : len);
}

/* ---- where a candidate that starts with <function= ends ------------------- */

enum { S_BODY = 0, S_AFTER_FUNCTION };

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    size_t i = s->pos ? s->pos : LEN(fn_open);
    for (;;) {
        if (s->phase == S_AFTER_FUNCTION) {
            /* after </function>: a </tool_call> belongs to the call */
            while (i < n && aw__dialect_is_space((unsigned char)p[i])) i++;
            if (i >= n) {
                s->pos = i;
                return at_end ? (long)s->mark : AW_DIALECT_MORE;
            }
            if (prefix_of(p + i, n - i, tc_close, LEN(tc_close))) {
                if (n - i < LEN(tc_close)) {
                    s->pos = i;
                    return at_end ? (long)s->mark : AW_DIALECT_MORE;
                }
                return (long)(i + LEN(tc_close));
            }
            return (long)s->mark;
        }
        const char *lt = i < n ? memchr(p + i, '<', n - i) : NULL;
        if (!lt) {
            s->pos = n;
            return at_end ? (long)n : AW_DIALECT_MORE;
        }
        i = (size_t)(lt - p);
        const char *const marks[] = {fn_close, tc_close, fn_open, tc_open};
        const size_t lens[] = {LEN(fn_close), LEN(tc_close), LEN(fn_open), LEN(tc_open)};
        int which = -1, partial = 0;
        for (int m = 0; m < 4 && which < 0; m++) {
            if (!prefix_of(p + i, n - i, marks[m], lens[m])) continue;
            if (n - i < lens[m]) partial = 1;
            else which = m;
        }
        if (which < 0 && partial && !at_end) {
            s->pos = i;
            return AW_DIALECT_MORE;
        }
        if (which == 0) {
            s->phase = S_AFTER_FUNCTION;
            s->mark = i + LEN(fn_close);
            i = s->mark;
            continue;
        }
        if (which == 1) return (long)(i + LEN(tc_close));
        if (which >= 2) {
            s->unclosed = 1; /* the next call begins: this one was never closed */
            return (long)i;
        }
        i++;
    }
}

/* ---- reading calls ----------------------------------------------------------- */

/* A parameter tag that is not <parameter=NAME>: say how it is written. */
static int bad_parameter(aw_dialect_out *out, aw_text name, const char *shown) {
    return aw__dialect_malformedf(
        out, "qwen3_coder", name, AW_REJECT_MALFORMED_CALL,
        "The call <function=%.*s> has a parameter written `%s`; write each as <parameter=NAME>VALUE</parameter>.",
        (int)(name.len > 64 ? 64 : name.len), name.ptr, shown);
}

/* The parameters of one function body p[0..n) into obj. */
static int read_parameters(const char *p, size_t n, aw_text name, const aw_json_value *schema, aw_json_doc *doc,
                           aw_json_value *obj, const aw_allocator *alloc, aw_dialect_out *out, int *bad) {
    size_t i = 0;
    for (;;) {
        size_t at = aw__dialect_find(p, n, i, par_open, LEN(par_open));
        if (at == SIZE_MAX) return 0;
        size_t k = at + LEN(par_open);
        size_t gt = k;
        while (gt < n && p[gt] != '>' && p[gt] != '<' && p[gt] != '\n') gt++;
        aw_text key = aw__dialect_trim(p + k, gt - k);
        if (gt >= n || p[gt] != '>' || !key.len || memchr(key.ptr, '=', key.len)) {
            char shown[48];
            snprintf(shown, sizeof shown, "%.*s", (int)(gt - at > 40 ? 40 : gt - at), p + at);
            *bad = 1;
            return bad_parameter(out, name, shown);
        }
        size_t vb = gt + 1;
        /* the value ends at </parameter>, or (dropped) at the next
         * <parameter= or the end of the body */
        size_t next = aw__dialect_find(p, n, vb, par_open, LEN(par_open));
        size_t limit = next != SIZE_MAX ? next : n; /* each byte is searched once */
        size_t ve = aw__dialect_find(p, limit, vb, par_close, LEN(par_close));
        size_t resume;
        if (ve != SIZE_MAX) {
            resume = ve + LEN(par_close);
        } else {
            ve = limit;
            resume = ve;
        }
        aw_text v = aw__dialect_trim_newlines(p + vb, ve - vb);
        if (resume == ve) v = aw__dialect_trim(v.ptr, v.len); /* no closer: the blanks before what follows are not the value's */
        aw_json_value *val = aw__dialect_typed_value(doc, alloc, schema, key.ptr, key.len, v.ptr, v.len);
        if (!val || aw_json_object_set(doc, obj, key.ptr, key.len, val)) return AW_ENOMEM;
        i = resume;
    }
}

/* Llama 3.1 writes every value of its JSON as a string ({"n": "5"}):
 * where the schema wants another type, the string is read as that type. */
static int type_strings(aw_json_doc *doc, const aw_allocator *alloc, const aw_json_value *schema, aw_json_value *obj) {
    for (size_t i = 0; i < obj->u.obj.count; i++) {
        aw_json_member *m = &obj->u.obj.members[i];
        if (!aw_json_is_string(&m->value)) continue;
        aw_json_value *v = aw__dialect_typed_value(doc, alloc, schema, m->key, m->key_len, m->value.u.str.ptr,
                                                   m->value.u.str.len);
        if (!v) return AW_ENOMEM;
        m->value = *v;
    }
    return 0;
}

/* One function: its name and body. */
static int read_function(aw_text name, const char *body, size_t n, aw_text raw, aw_dialect_out *out) {
    aw_text b = aw__dialect_trim(body, n);
    const aw_tool_def *tool = out->tool(out, name);
    const aw_json_value *schema = tool ? tool->schema : NULL;
    if (b.len && b.ptr[0] == '{') {
        /* Llama 3.1: <function=NAME>{json}</function> */
        if (!(out->enabled & AW_DIALECT_LLAMA3)) return AW_DIALECT_NOT_A_CALL;
        aw_json_doc *doc;
        unsigned repairs;
        int rc = aw__dialect_parse_json(out->alloc, b.ptr, b.len, &doc, &repairs);
        if (rc) return rc;
        aw_json_value *obj = doc ? (aw_json_value *)aw_json_doc_root(doc) : NULL;
        if (!aw_json_is_object(obj)) {
            aw_json_doc_free(doc);
            return aw__dialect_malformedf(out, "llama3", name, AW_REJECT_INVALID_JSON,
                                          "The call <function=%.*s> must hold one JSON object of arguments.",
                                          (int)(name.len > 64 ? 64 : name.len), name.ptr);
        }
        rc = type_strings(doc, out->alloc, schema, obj);
        if (!rc) rc = out->call(out, "llama3", name, obj, raw, repairs);
        aw_json_doc_free(doc);
        return rc;
    }
    if (!(out->enabled & AW_DIALECT_QWEN3_CODER)) return AW_DIALECT_NOT_A_CALL;
    aw_json_doc *doc;
    aw_json_value *obj = aw__dialect_new_args(out->alloc, &doc);
    if (!obj) return AW_ENOMEM;
    int bad = 0;
    int rc = read_parameters(b.ptr, b.len, name, schema, doc, obj, out->alloc, out, &bad);
    if (!rc && !bad) rc = out->call(out, "qwen3_coder", name, obj, raw, 0);
    aw_json_doc_free(doc);
    return rc;
}

int aw__qwen3_parse_functions(const char *p, size_t n, aw_text raw, aw_dialect_out *out) {
    size_t i = aw__dialect_find(p, n, 0, fn_open, LEN(fn_open));
    if (i == SIZE_MAX) {
        if (!(out->enabled & AW_DIALECT_QWEN3_CODER)) return AW_DIALECT_NOT_A_CALL;
        return out->malformed(out, "qwen3_coder", AW__DIALECT_NO_TEXT, AW_REJECT_MALFORMED_CALL,
                              "A <tool_call> holds no <function=NAME>; write <tool_call><function=NAME>"
                              "<parameter=KEY>VALUE</parameter></function></tool_call>.");
    }
    int any = 0;
    while (i != SIZE_MAX) {
        size_t k = i + LEN(fn_open);
        size_t gt = k;
        while (gt < n && p[gt] != '>' && p[gt] != '<' && p[gt] != '\n') gt++;
        aw_text name = aw__dialect_trim(p + k, gt - k);
        size_t next = aw__dialect_find(p, n, gt, fn_open, LEN(fn_open));
        size_t limit = next != SIZE_MAX ? next : n; /* each byte is searched once */
        size_t end = aw__dialect_find(p, limit, gt, fn_close, LEN(fn_close));
        size_t body_end = end != SIZE_MAX ? end : limit;
        int rc;
        if (gt >= n || p[gt] != '>' || !name.len) {
            if (!(out->enabled & AW_DIALECT_QWEN3_CODER)) return AW_DIALECT_NOT_A_CALL;
            rc = out->malformed(out, "qwen3_coder", AW__DIALECT_NO_TEXT, AW_REJECT_MALFORMED_CALL,
                                "A <function= tag is not closed with '>'; write <function=NAME> and then "
                                "<parameter=KEY>VALUE</parameter> for each argument.");
        } else {
            rc = read_function(name, p + gt + 1, body_end - gt - 1, raw, out);
        }
        if (rc < 0) return rc;
        if (rc == 0) any = 1;
        i = next;
    }
    return any ? 0 : AW_DIALECT_NOT_A_CALL;
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    return aw__qwen3_parse_functions(p, n, (aw_text){p, n}, out);
}

static const aw_dialect_trigger triggers[] = {{fn_open, LEN(fn_open), AW_DT_ANYWHERE}};

const aw_dialect aw__dialect_qwen3_coder = {
    "qwen3_coder", AW_DIALECT_QWEN3_CODER | AW_DIALECT_LLAMA3, triggers, 1, NULL, NULL, 1, scan, parse, NULL,
};
