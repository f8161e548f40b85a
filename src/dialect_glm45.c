/* GLM 4.5 and later: a function name and key/value pairs inside the
 * <tool_call> tag the Hermes dialect uses (dialect_hermes.c tells them
 * apart and frames the tag).
 *
 *   <tool_call>get_weather
 *   <arg_key>city</arg_key>
 *   <arg_value>Beijing</arg_value>
 *   </tool_call>
 *
 * Values are text, typed by the tool's schema; a value keeps its blanks
 * (a string is what the model wrote). A value whose </arg_value> was
 * dropped ends at the next <arg_key> or at the end of the call. */
#include <string.h>

#include "internal/dialect.h"

static const char key_open[] = "<arg_key>";
static const char key_close[] = "</arg_key>";
static const char val_open[] = "<arg_value>";
static const char val_close[] = "</arg_value>";
#define LEN(s) (sizeof(s) - 1)

static int bad(aw_dialect_out *out, aw_text name, const char *what) {
    return aw__dialect_malformedf(
        out, "glm45", name, AW_REJECT_MALFORMED_CALL,
        "The call to `%.*s` %s; write <tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value></tool_call>.",
        (int)(name.len > 64 ? 64 : name.len), name.ptr, what);
}

static int read_pairs(const char *p, size_t n, size_t i, aw_text name, const aw_json_value *schema, aw_json_doc *doc,
                      aw_json_value *obj, aw_dialect_out *out, int *failed) {
    for (;;) {
        while (i < n && aw__dialect_is_space((unsigned char)p[i])) i++;
        if (i >= n) return 0;
        if (n - i < LEN(key_open) || memcmp(p + i, key_open, LEN(key_open))) {
            *failed = 1;
            return bad(out, name, "has text where an <arg_key> should begin");
        }
        size_t kb = i + LEN(key_open);
        size_t next = aw__dialect_find(p, n, kb, key_open, LEN(key_open));
        size_t limit = next != SIZE_MAX ? next : n; /* each byte is searched once */
        size_t ke = aw__dialect_find(p, limit, kb, key_close, LEN(key_close));
        if (ke == SIZE_MAX || memchr(p + kb, '<', ke - kb)) {
            *failed = 1;
            return bad(out, name, "has an <arg_key> that is not closed with </arg_key>");
        }
        aw_text key = aw__dialect_trim(p + kb, ke - kb);
        size_t k = ke + LEN(key_close);
        while (k < limit && aw__dialect_is_space((unsigned char)p[k])) k++;
        if (limit - k < LEN(val_open) || memcmp(p + k, val_open, LEN(val_open))) {
            *failed = 1;
            return bad(out, name, "has an <arg_key> without its <arg_value>");
        }
        size_t vb = k + LEN(val_open);
        size_t ve = aw__dialect_find(p, limit, vb, val_close, LEN(val_close));
        size_t resume = ve != SIZE_MAX ? ve + LEN(val_close) : limit;
        aw_text v = ve != SIZE_MAX ? (aw_text){p + vb, ve - vb} : aw__dialect_trim(p + vb, limit - vb);
        aw_json_value *val = aw__dialect_typed_value(doc, out->alloc, schema, key.ptr, key.len, v.ptr, v.len);
        if (!val || aw_json_object_set(doc, obj, key.ptr, key.len, val)) return AW_ENOMEM;
        i = resume;
    }
}

int aw__glm45_parse_body(const char *p, size_t n, aw_text raw, aw_dialect_out *out) {
    size_t first = aw__dialect_find(p, n, 0, key_open, LEN(key_open));
    aw_text name = aw__dialect_trim(p, first == SIZE_MAX ? n : first);
    for (size_t i = 0; i < name.len; i++) {
        unsigned char c = (unsigned char)name.ptr[i];
        if (!(aw__dialect_is_ident(c, 0) || c == '.' || c == '-')) return AW_DIALECT_NOT_A_CALL;
    }
    if (!name.len) return AW_DIALECT_NOT_A_CALL;
    const aw_tool_def *tool = out->tool(out, name);
    aw_json_doc *doc;
    aw_json_value *obj = aw__dialect_new_args(out->alloc, &doc);
    if (!obj) return AW_ENOMEM;
    int failed = 0;
    int rc = read_pairs(p, n, first == SIZE_MAX ? n : first, name, tool ? tool->schema : NULL, doc, obj, out, &failed);
    if (!rc && !failed) rc = out->call(out, "glm45", name, obj, raw, 0);
    aw_json_doc_free(doc);
    return rc;
}
