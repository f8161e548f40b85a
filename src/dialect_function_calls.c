/* <invoke name="..."><parameter name="...">...</parameter></invoke>: the
 * grammar Anthropic's prompt format and MiniMax share, in two wrappers.
 *
 *   <function_calls>                       <minimax:tool_call>
 *   <invoke name="get_weather">            <invoke name="get_weather">
 *   <parameter name="city">Paris</parameter>  <parameter name="city">Paris</parameter>
 *   </invoke>                              </invoke>
 *   </function_calls>                      </minimax:tool_call>
 *
 * and a bare <invoke> without either. Attributes besides name are
 * ignored; a value written on lines of its own loses those line breaks; a
 * value is typed by the tool's schema (and read as JSON where the schema
 * says nothing of it, as before). A reply that ends inside an <invoke>
 * before any complete parameter is a call cut off, never run. */
#include <stdio.h>
#include <string.h>

#include "internal/dialect.h"

#define LEN(s) (sizeof(s) - 1)
static const char inv_open[] = "<invoke";
static const char inv_close[] = "</invoke>";
static const char par_open[] = "<parameter";
static const char par_close[] = "</parameter>";

/* The value of attribute `name` in the tag text p[0..n) (between '<' and
 * '>'): quoted with either quote, or bare. */
static int attr_value(const char *p, size_t n, const char *attr, aw_text *out) {
    size_t len = strlen(attr);
    for (size_t i = 0; i + len < n; i++) {
        if ((i > 0 && !aw__dialect_is_space((unsigned char)p[i - 1])) || memcmp(p + i, attr, len)) continue;
        size_t k = i + len;
        while (k < n && aw__dialect_is_space((unsigned char)p[k])) k++;
        if (k >= n || p[k] != '=') continue;
        k++;
        while (k < n && aw__dialect_is_space((unsigned char)p[k])) k++;
        if (k < n && (p[k] == '"' || p[k] == '\'')) {
            const char *q = memchr(p + k + 1, p[k], n - k - 1);
            if (!q) return 0;
            *out = (aw_text){p + k + 1, (size_t)(q - p - k - 1)};
            return 1;
        }
        size_t b = k;
        while (k < n && !aw__dialect_is_space((unsigned char)p[k]) && p[k] != '/') k++;
        *out = (aw_text){p + b, k - b};
        return k > b;
    }
    return 0;
}

/* The end of the tag that starts at p[at] ('<'), just after its '>'
 * (quotes respected), or SIZE_MAX. */
static size_t tag_end(const char *p, size_t n, size_t at) {
    char q = 0;
    for (size_t i = at + 1; i < n; i++) {
        if (q) {
            if (p[i] == q) q = 0;
        } else if (p[i] == '"' || p[i] == '\'') {
            q = p[i];
        } else if (p[i] == '>') {
            return i + 1;
        } else if (p[i] == '<' || p[i] == '\n') {
            return SIZE_MAX;
        }
    }
    return SIZE_MAX;
}

static aw_json_value *value_of(aw_json_doc *doc, const aw_allocator *alloc, const aw_json_value *schema, aw_text key,
                               aw_text v) {
    const aw_json_value *prop = aw_json_getn(aw_json_get(schema, "properties"), key.ptr, key.len);
    if (!aw_json_get(prop, "type") && !aw_json_get(prop, "anyOf") && !aw_json_get(prop, "oneOf")) {
        /* nothing said of its type: JSON if it is JSON, else the text */
        aw_json_read_options ro = {alloc, 0, false};
        aw_json_doc *tmp = NULL;
        int rc = aw_json_parse(v.ptr, v.len, &ro, &tmp, NULL);
        if (rc == AW_ENOMEM) return NULL;
        aw_json_value *c = rc ? aw_json_new_string(doc, v.ptr, v.len) : aw_json_copy(doc, aw_json_doc_root(tmp));
        aw_json_doc_free(tmp);
        return c;
    }
    return aw__dialect_typed_value(doc, alloc, schema, key.ptr, key.len, v.ptr, v.len);
}

/* One <invoke>: its opening tag at p[at], its body to `end`. */
static int read_invoke(const char *p, size_t n, size_t at, size_t end, int closed, aw_text raw, const char *dialect,
                       const char *form, aw_dialect_out *out) {
    size_t te = tag_end(p, end, at);
    aw_text name;
    char msg[320];
    if (te == SIZE_MAX || !attr_value(p + at + 1, te - at - 2, "name", &name) || !name.len) {
        snprintf(msg, sizeof msg, "An <invoke> needs a name: write %s.", form);
        return out->malformed(out, dialect, AW__DIALECT_NO_TEXT, te == SIZE_MAX ? AW_REJECT_UNCLOSED : AW_REJECT_MALFORMED_CALL, msg);
    }
    const aw_tool_def *tool = out->tool(out, name);
    aw_json_doc *doc;
    aw_json_value *obj = aw__dialect_new_args(out->alloc, &doc);
    if (!obj) return AW_ENOMEM;
    int rc = 0, complete = 0, last_open = 0;
    size_t i = te;
    for (;;) {
        size_t pa = aw__dialect_find(p, end, i, par_open, LEN(par_open));
        if (pa == SIZE_MAX) break;
        size_t pe = tag_end(p, end, pa);
        aw_text key;
        if (pe == SIZE_MAX || !attr_value(p + pa + 1, pe - pa - 2, "name", &key) || !key.len) {
            snprintf(msg, sizeof msg, "A parameter of `%.*s` needs a name: write <parameter name=\"KEY\">VALUE</parameter>.",
                     (int)(name.len > 64 ? 64 : name.len), name.ptr);
            rc = out->malformed(out, dialect, name, AW_REJECT_MALFORMED_CALL, msg);
            aw_json_doc_free(doc);
            return rc ? rc : 0;
        }
        size_t next = aw__dialect_find(p, end, pe, par_open, LEN(par_open));
        size_t limit = next != SIZE_MAX ? next : end; /* each byte is searched once */
        size_t ve = aw__dialect_find(p, limit, pe, par_close, LEN(par_close));
        last_open = ve == SIZE_MAX;
        aw_text v = aw__dialect_trim_newlines(p + pe, (ve != SIZE_MAX ? ve : limit) - pe);
        if (last_open) v = aw__dialect_trim(v.ptr, v.len);
        else complete = 1;
        aw_json_value *val = value_of(doc, out->alloc, tool ? tool->schema : NULL, key, v);
        if (!val || aw_json_object_set(doc, obj, key.ptr, key.len, val)) {
            aw_json_doc_free(doc);
            return AW_ENOMEM;
        }
        i = ve != SIZE_MAX ? ve + LEN(par_close) : limit;
    }
    (void)n;
    if (!closed && (!complete || last_open)) {
        snprintf(msg, sizeof msg, "The call to `%.*s` was cut off before </invoke>; send it again, complete: %s.",
                 (int)(name.len > 64 ? 64 : name.len), name.ptr, form);
        rc = out->malformed(out, dialect, name, AW_REJECT_UNCLOSED, msg);
    } else {
        rc = out->call(out, dialect, name, obj, raw, 0);
    }
    aw_json_doc_free(doc);
    return rc;
}

int aw__invoke_parse(const char *p, size_t n, aw_text raw, const char *dialect, const char *form,
                     aw_dialect_out *out) {
    size_t i = aw__dialect_find(p, n, 0, inv_open, LEN(inv_open));
    if (i == SIZE_MAX) {
        char msg[240];
        snprintf(msg, sizeof msg, "The block holds no <invoke name=\"...\">; write %s.", form);
        return out->malformed(out, dialect, AW__DIALECT_NO_TEXT, AW_REJECT_EMPTY_PAYLOAD, msg);
    }
    while (i != SIZE_MAX) {
        size_t next = aw__dialect_find(p, n, i + LEN(inv_open), inv_open, LEN(inv_open));
        size_t limit = next != SIZE_MAX ? next : n;
        size_t e = aw__dialect_find(p, limit, i, inv_close, LEN(inv_close));
        int rc = read_invoke(p, n, i, e != SIZE_MAX ? e : limit, e != SIZE_MAX, raw, dialect, form, out);
        if (rc < 0) return rc;
        i = next;
    }
    return 0;
}

/* ---- the <function_calls> block and the bare <invoke> ------------------------------ */

static const char fc_open[] = "<function_calls>";
static const char fc_close[] = "</function_calls>";
static const char form[] = "<function_calls><invoke name=\"NAME\"><parameter name=\"KEY\">VALUE</parameter></invoke></function_calls>";

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    int block = p[1] == 'f';
    const char *close = block ? fc_close : inv_close;
    size_t len = block ? LEN(fc_close) : LEN(inv_close);
    size_t from = s->pos ? s->pos : 1;
    size_t at = aw__dialect_find(p, n, from, close, len);
    if (at == SIZE_MAX) {
        s->pos = aw__dialect_resume(n, len) > from ? aw__dialect_resume(n, len) : from;
        return at_end ? (long)n : AW_DIALECT_MORE;
    }
    at += len;
    if (!block) {
        /* a bare <invoke>'s wrapper may close after it */
        size_t k = at;
        while (k < n && aw__dialect_is_space((unsigned char)p[k])) k++;
        size_t m = n - k < LEN(fc_close) ? n - k : LEN(fc_close);
        int more = 0;
        if (!memcmp(p + k, fc_close, m)) {
            if (m == LEN(fc_close)) return (long)(k + LEN(fc_close));
            more = 1;
        }
        if ((more || k >= n) && !at_end) {
            s->pos = at - len; /* look again from the </invoke> */
            return AW_DIALECT_MORE;
        }
    }
    return (long)at;
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    return aw__invoke_parse(p, n, (aw_text){p, n}, "function_calls", form, out);
}

static const aw_dialect_trigger triggers[] = {
    {fc_open, LEN(fc_open), AW_DT_ANYWHERE},
    {"<invoke ", 8, AW_DT_ANYWHERE},
};

const aw_dialect aw__dialect_function_calls = {
    "function_calls", AW_DIALECT_FUNCTION_CALLS, triggers, 2, NULL, NULL, 1, scan, parse, NULL,
};
