/* Arguments that a dialect carries as text (Qwen3-Coder's and MiniMax's
 * XML parameters, GLM's arg values), typed by the tool's JSON Schema.
 *
 * This reads just enough of the schema to know what the text stands for:
 * properties.KEY.type (a name or a list of names), and the types of the
 * branches of anyOf/oneOf. It validates nothing; a value that fits none of
 * the types stays the string it was, for the validation of the call to
 * judge. */
#include <string.h>

#include "internal/dialect.h"

enum { T_STRING = 1, T_INTEGER = 2, T_NUMBER = 4, T_BOOLEAN = 8, T_NULL = 16, T_OBJECT = 32, T_ARRAY = 64 };

static unsigned type_bit(const aw_json_value *name) {
    static const struct {
        const char *name;
        unsigned bit;
    } types[] = {{"string", T_STRING}, {"integer", T_INTEGER}, {"number", T_NUMBER}, {"boolean", T_BOOLEAN},
                 {"null", T_NULL},     {"object", T_OBJECT},   {"array", T_ARRAY},   {"dict", T_OBJECT}};
    if (!aw_json_is_string(name)) return 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(name->u.str.ptr, types[i].name)) return types[i].bit;
    return 0;
}

/* The types a property schema allows, from "type" and from the branches
 * of anyOf/oneOf one level down. */
static unsigned types_of(const aw_json_value *prop) {
    unsigned t = 0;
    const aw_json_value *type = aw_json_get(prop, "type");
    if (aw_json_is_array(type))
        for (size_t i = 0; i < aw_json_count(type); i++) t |= type_bit(aw_json_at(type, i));
    else t |= type_bit(type);
    static const char *const unions[] = {"anyOf", "oneOf"};
    for (size_t u = 0; u < 2; u++) {
        const aw_json_value *branches = aw_json_get(prop, unions[u]);
        for (size_t i = 0; i < aw_json_count(branches); i++) {
            const aw_json_value *b = aw_json_get(aw_json_at(branches, i), "type");
            if (aw_json_is_array(b))
                for (size_t k = 0; k < aw_json_count(b); k++) t |= type_bit(aw_json_at(b, k));
            else t |= type_bit(b);
        }
    }
    if (!t && (aw_json_get(prop, "properties"))) t = T_OBJECT;
    if (!t && (aw_json_get(prop, "items"))) t = T_ARRAY;
    return t;
}

static int is_word(aw_text v, const char *w) { return v.len == strlen(w) && !memcmp(v.ptr, w, v.len); }

/* v parsed strictly as JSON when it is of one of the types in `want`,
 * copied into doc; NULL when it is not (or *oom when memory ran out). */
static aw_json_value *parsed_as(aw_json_doc *doc, const aw_allocator *alloc, aw_text v, unsigned want, int *oom) {
    aw_json_read_options ro = {alloc, 0, false};
    aw_json_doc *tmp = NULL;
    int rc = aw_json_parse(v.ptr, v.len, &ro, &tmp, NULL);
    if (rc == AW_ENOMEM) *oom = 1;
    if (rc) return NULL;
    const aw_json_value *r = aw_json_doc_root(tmp);
    int fits = 0;
    if (aw_json_is_number(r))
        fits = (want & T_NUMBER) || ((want & T_INTEGER) && (r->flags & AW_JSON_F_INT));
    else if (aw_json_is_object(r)) fits = (want & T_OBJECT) != 0;
    else if (aw_json_is_array(r)) fits = (want & T_ARRAY) != 0;
    aw_json_value *out = fits ? aw_json_copy(doc, r) : NULL;
    if (fits && !out) *oom = 1;
    aw_json_doc_free(tmp);
    return out;
}

aw_json_value *aw__dialect_typed_value(aw_json_doc *doc, const aw_allocator *alloc, const aw_json_value *schema,
                                       const char *key, size_t key_len, const char *s, size_t n) {
    const aw_json_value *prop = aw_json_getn(aw_json_get(schema, "properties"), key, key_len);
    unsigned t = types_of(prop);
    if (!t || (t & T_STRING)) return aw_json_new_string(doc, s, n);
    aw_text v = aw__dialect_trim(s, n);
    if ((t & T_BOOLEAN) && (is_word(v, "true") || is_word(v, "True"))) return aw_json_new_bool(doc, true);
    if ((t & T_BOOLEAN) && (is_word(v, "false") || is_word(v, "False"))) return aw_json_new_bool(doc, false);
    if ((t & T_NULL) && (is_word(v, "null") || is_word(v, "None"))) return aw_json_new_null(doc);
    int oom = 0;
    aw_json_value *parsed = parsed_as(doc, alloc, v, t & (T_INTEGER | T_NUMBER | T_OBJECT | T_ARRAY), &oom);
    if (parsed || oom) return parsed;
    return aw_json_new_string(doc, s, n);
}
