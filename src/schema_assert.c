/* The assertions of one node on one instance, and the errors they raise:
 * plain messages ("expected integer, got string \"3\"") placed by
 * instance and keyword location, built from the frames below only when an
 * error happens, so passing validations pay nothing for them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/schema_eval.h"
#include "internal/utf8.h"

/* ---- describing values ---------------------------------------------------------- */

/* "string \"abc\"", "number 3.5", "boolean true", "null", "object",
 * "array": short, for messages. */
static void describe(const aw_json_value *x, char *out, size_t size) {
    switch (x->type) {
    case AW_JSON_NULL: snprintf(out, size, "null"); return;
    case AW_JSON_BOOL: snprintf(out, size, "boolean %s", x->u.b ? "true" : "false"); return;
    case AW_JSON_NUMBER: {
        size_t n = x->num_len > 40 ? 40 : x->num_len;
        snprintf(out, size, "number %.*s%s", (int)n, x->u.num.text ? x->u.num.text : "?", n < x->num_len ? "..." : "");
        return;
    }
    case AW_JSON_STRING: {
        /* quoted and escaped as JSON, up to 40 bytes; no allocation */
        size_t n = aw__utf8_clip(x->u.str.ptr, x->u.str.len, 40), o = 0;
        o += (size_t)snprintf(out, size, "string \"");
        for (size_t i = 0; i < n && o + 8 < size; i++) {
            unsigned char c = (unsigned char)x->u.str.ptr[i];
            if (c == '"' || c == '\\') o += (size_t)snprintf(out + o, size - o, "\\%c", c);
            else if (c == '\n') o += (size_t)snprintf(out + o, size - o, "\\n");
            else if (c < 0x20) o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
            else out[o++] = (char)c;
        }
        snprintf(out + o, size - o, "\"%s", n < x->u.str.len ? "..." : "");
        return;
    }
    case AW_JSON_ARRAY: snprintf(out, size, "array"); return;
    default: snprintf(out, size, "object"); return;
    }
}

static void type_list(uint8_t bits, char *out, size_t size) {
    static const struct {
        uint8_t bit;
        const char *name;
    } names[] = {{T_NULL, "null"},     {T_BOOL, "boolean"}, {T_NUM, "number"}, {T_INT, "integer"},
                 {T_STR, "string"},    {T_ARR, "array"},    {T_OBJ, "object"}};
    size_t len = 0;
    out[0] = '\0';
    int count = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(bits & names[i].bit)) continue;
        if (names[i].bit == T_INT && (bits & T_NUM)) continue; /* number covers integer */
        count++;
    }
    int k = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && len < size; i++) {
        if (!(bits & names[i].bit)) continue;
        if (names[i].bit == T_INT && (bits & T_NUM)) continue;
        k++;
        len += (size_t)snprintf(out + len, size - len, "%s%s", k == 1 ? "" : (k == count ? " or " : ", "), names[i].name);
    }
}

/* ---- errors -------------------------------------------------------------------------- */

static int put_seg(aw_buf *b, uint8_t seg, const char *key, size_t key_len, size_t index) {
    if (seg == SEG_KEY) {
        if (aw_buf_putc(b, '/')) return AW_ENOMEM;
        return aw__sc_pointer_escape(b, key, key_len);
    }
    if (seg == SEG_INDEX) return aw_buf_printf(b, "/%zu", index);
    return 0;
}

static char *arena_copy(aw_arena *a, const aw_buf *b) {
    char *p = aw__arena_alloc(a, b->len + 1);
    if (!p) return NULL;
    if (b->len) memcpy(p, b->data, b->len);
    p[b->len] = '\0';
    return p;
}

int aw__sc_error(sc_vctx *v, const sc_frame *f, const sc_loc *loc, const sc_node *node, const char *keyword,
                 const char *fmt, ...) {
    aw_schema_result *r = v->r;
    if (r->error_count >= v->max_errors) {
        v->dropped++;
        if (!v->spec_depth) v->abort = 1;
        return 0;
    }
    size_t fi = (size_t)(f - v->st);
    aw_buf inst, kwl, abs;
    aw_buf_init(&inst, v->alloc);
    aw_buf_init(&kwl, v->alloc);
    aw_buf_init(&abs, v->alloc);
    int rc = 0;
    for (size_t i = 1; i <= fi && !rc; i++) {
        const sc_frame *g = &v->st[i];
        rc = put_seg(&inst, g->seg, g->key, g->key_len, g->index);
        if (!rc) rc = aw_buf_append(&kwl, g->kw_seg, g->kw_len);
    }
    int crossed = (f->flags & F_REF) != 0;
    if (loc && !rc) {
        rc = put_seg(&inst, loc->seg, loc->key, loc->key_len, loc->index);
        if (!rc) rc = aw_buf_append(&kwl, loc->kw_seg, loc->kw_len);
        crossed |= loc->crossed;
    }
    if (!rc && keyword) rc = aw_buf_printf(&kwl, "/%s", keyword);
    if (!rc && crossed && node && node->res) {
        rc = aw_buf_append(&abs, node->res->uri, node->res->uri_len);
        if (!rc) rc = aw_buf_putc(&abs, '#');
        if (!rc) rc = aw__sc_node_path(node, &abs);
        if (!rc && keyword) rc = aw_buf_printf(&abs, "/%s", keyword);
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aw_schema_error e = {0};
    if (!rc) {
        e.instance_location = arena_copy(&v->state->arena, &inst);
        e.keyword_location = arena_copy(&v->state->arena, &kwl);
        e.absolute_keyword_location = crossed && node && node->res ? arena_copy(&v->state->arena, &abs) : NULL;
        e.instance_location_len = inst.len;
        e.keyword_location_len = kwl.len;
        e.absolute_keyword_location_len = e.absolute_keyword_location ? abs.len : 0;
        size_t ml = strlen(msg);
        char *m = aw__arena_alloc(&v->state->arena, ml + 1);
        if (m) memcpy(m, msg, ml + 1);
        e.message = m;
        if (!e.instance_location || !e.keyword_location || !e.message || (crossed && node && node->res && !e.absolute_keyword_location))
            rc = AW_ENOMEM;
    }
    aw_buf_free(&inst);
    aw_buf_free(&kwl);
    aw_buf_free(&abs);
    if (rc) return AW_ENOMEM;
    if (r->error_count == v->state->errors_cap) {
        size_t cap = v->state->errors_cap ? 2 * v->state->errors_cap : 8;
        aw_schema_error *g = aw_realloc(v->alloc, r->errors, cap * sizeof *g);
        if (!g) return AW_ENOMEM;
        r->errors = g;
        v->state->errors_cap = cap;
    }
    r->errors[r->error_count++] = e;
    return 0;
}

int aw__sc_regex_limit_error(sc_vctx *v, const sc_frame *f, const sc_loc *loc, const sc_node *node, const sc_regex *re,
                             int code) {
    PCRE2_UCHAR why[120];
    if (pcre2_get_error_message(code, why, sizeof why) < 0) snprintf((char *)why, sizeof why, "error %d", code);
    return aw__sc_error(v, f, loc, node, NULL,
                        "the regular expression \"%.*s\" could not be matched within its limits (%s); the pattern "
                        "backtracks too much on this string",
                        (int)(re->len > 80 ? 80 : re->len), re->source, (const char *)why);
}

void aw__sc_limit_error(sc_vctx *v, aw_error *err) {
    aw_buf inst;
    aw_buf_init(&inst, v->alloc);
    for (size_t i = 1; i < v->top; i++) {
        const sc_frame *g = &v->st[i];
        if (put_seg(&inst, g->seg, g->key, g->key_len, g->index)) break;
        if (inst.len > 120) break;
    }
    aw__error_set(err, AW_ELIMIT, "validation went deeper than %zu schema levels (at instance location \"%.120s\")",
                  v->max_depth, inst.data ? inst.data : "");
    aw_buf_free(&inst);
}

/* ---- object keys ------------------------------------------------------------------------ */

int aw__sc_has_key(sc_vctx *v, const aw_json_value *o, const char *key, size_t len) {
    size_t n = o->u.obj.count;
    const aw_json_member *m = o->u.obj.members;
    if (n > 16) {
        sc_state *st = v->state;
        if (st->kidx_obj != o) {
            uint32_t cap = 32;
            while (cap < 2 * n) cap *= 2;
            uint32_t *slots = aw__arena_alloc(&st->scratch, cap * sizeof *slots);
            if (slots) {
                memset(slots, 0, cap * sizeof *slots);
                for (size_t i = 0; i < n; i++) {
                    uint32_t s = (uint32_t)aw__sc_bytes_hash(m[i].key, m[i].key_len) & (cap - 1);
                    while (slots[s]) s = (s + 1) & (cap - 1);
                    slots[s] = (uint32_t)i + 1;
                }
                st->kidx = slots;
                st->kidx_mask = cap - 1;
                st->kidx_obj = o;
            }
        }
        if (st->kidx_obj == o) {
            uint32_t s = (uint32_t)aw__sc_bytes_hash(key, len) & st->kidx_mask;
            while (st->kidx[s]) {
                const aw_json_member *k = &m[st->kidx[s] - 1];
                if (k->key_len == len && !memcmp(k->key, key, len)) return 1;
                s = (s + 1) & st->kidx_mask;
            }
            return 0;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (m[i].key_len == len && !memcmp(m[i].key, key, len)) return 1;
    return 0;
}

/* Members that count: distinct keys. */
static size_t distinct_members(sc_vctx *v, const aw_json_value *o) {
    if (!(o->flags & (AW_JSON_F_DUPKEYS | AW_JSON_F_UNCHECKED))) return o->u.obj.count;
    uint32_t *idx = aw__arena_alloc(&v->state->scratch, (o->u.obj.count ? o->u.obj.count : 1) * sizeof *idx);
    long k = idx ? aw__sc_effective_members(o, v->alloc, idx) : -1;
    return k < 0 ? o->u.obj.count : (size_t)k;
}

/* ---- the assertions ------------------------------------------------------------------------ */

static size_t code_points(const char *s, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += ((unsigned char)s[i] & 0xC0) != 0x80;
    return count;
}

#define FAIL(keyword, ...)                                                                  \
    do {                                                                                    \
        *ok = 0;                                                                            \
        if (!loc->errors) return 0;                                                         \
        if (aw__sc_error(v, f, loc->here ? NULL : loc, n, keyword, __VA_ARGS__)) return AW_ENOMEM; \
    } while (0)

static int check_number(sc_vctx *v, const sc_frame *f, const sc_loc *loc, const sc_node *n, const aw_json_value *x, int *ok,
                        uint32_t a) {
    char d[64];
    if (a & A_MAX && (x->u.num.d > n->max.d || (x->u.num.d == n->max.d && aw__sc_num_cmp(x, n->max.v) > 0))) {
        describe(x, d, sizeof d);
        FAIL("maximum", "%s is above the maximum %.*s", d, (int)n->max.v->num_len, n->max.v->u.num.text);
        if (!*ok && !loc->errors) return 0;
    }
    if (a & A_XMAX && (x->u.num.d > n->xmax.d || aw__sc_num_cmp(x, n->xmax.v) >= 0)) {
        describe(x, d, sizeof d);
        FAIL("exclusiveMaximum", "%s is not below %.*s", d, (int)n->xmax.v->num_len, n->xmax.v->u.num.text);
    }
    if (a & A_MIN && (x->u.num.d < n->min.d || (x->u.num.d == n->min.d && aw__sc_num_cmp(x, n->min.v) < 0))) {
        describe(x, d, sizeof d);
        FAIL("minimum", "%s is below the minimum %.*s", d, (int)n->min.v->num_len, n->min.v->u.num.text);
    }
    if (a & A_XMIN && (x->u.num.d < n->xmin.d || aw__sc_num_cmp(x, n->xmin.v) <= 0)) {
        describe(x, d, sizeof d);
        FAIL("exclusiveMinimum", "%s is not above %.*s", d, (int)n->xmin.v->num_len, n->xmin.v->u.num.text);
    }
    if (a & A_MULTIPLE && !aw__sc_num_multiple(x, n->multiple_of)) {
        describe(x, d, sizeof d);
        FAIL("multipleOf", "%s is not a multiple of %.*s", d, (int)n->multiple_of->num_len, n->multiple_of->u.num.text);
    }
    return 0;
}

static int check_string(sc_vctx *v, const sc_frame *f, const sc_loc *loc, const sc_node *n, const aw_json_value *x, int *ok,
                        uint32_t a) {
    const char *s = x->u.str.ptr;
    size_t len = x->u.str.len;
    char d[128];
    if (a & (A_MINLEN | A_MAXLEN)) {
        /* a string has at least len / 4 and at most len code points */
        size_t cp = (a & A_MAXLEN && len <= n->max_len && !(a & A_MINLEN)) ? len : code_points(s, len);
        if (a & A_MINLEN && cp < n->min_len)
            FAIL("minLength", "string is %zu character%s long; at least %llu expected", cp, cp == 1 ? "" : "s",
                 (unsigned long long)n->min_len);
        if (!*ok && !loc->errors) return 0;
        if (a & A_MAXLEN && cp > n->max_len)
            FAIL("maxLength", "string is %zu characters long; at most %llu allowed", cp, (unsigned long long)n->max_len);
        if (!*ok && !loc->errors) return 0;
    }
    if (a & A_PATTERN) {
        int m = aw__sc_regex_match(n->pattern, s, len, &v->state->md, v->s);
        if (m == AW_ENOMEM) return AW_ENOMEM;
        if (m < 0) {
            *ok = 0;
            if (!loc->errors) return 0;
            if (aw__sc_regex_limit_error(v, f, loc->here ? NULL : loc, n, n->pattern, m)) return AW_ENOMEM;
        } else if (!m) {
            describe(x, d, sizeof d);
            FAIL("pattern", "%s does not match the pattern \"%.*s\"", d, (int)(n->pattern->len > 100 ? 100 : n->pattern->len),
                 n->pattern->source);
        }
        if (!*ok && !loc->errors) return 0;
    }
    if (a & A_FORMAT) {
        int good = aw__sc_format_check(v->s, (sc_format)n->format, s, len);
        if (good < 0) return AW_ENOMEM;
        if (!good) {
            describe(x, d, sizeof d);
            FAIL("format", "%s is not a valid %s", d, aw__sc_format_name((sc_format)n->format));
        }
    }
    return 0;
}

static int check_array(sc_vctx *v, const sc_frame *f, const sc_loc *loc, const sc_node *n, const aw_json_value *x, int *ok,
                        uint32_t a) {
    size_t count = x->u.arr.count;
    if (a & A_MINITEMS && count < n->min_items)
        FAIL("minItems", "array has %zu item%s; at least %llu expected", count, count == 1 ? "" : "s",
             (unsigned long long)n->min_items);
    if (!*ok && !loc->errors) return 0;
    if (a & A_MAXITEMS && count > n->max_items)
        FAIL("maxItems", "array has %zu items; at most %llu allowed", count, (unsigned long long)n->max_items);
    if (!*ok && !loc->errors) return 0;
    if (a & A_UNIQUE) {
        size_t i = 0, j = 0;
        int u = aw__sc_unique(x, v->alloc, &i, &j);
        if (u < 0) return AW_ENOMEM;
        if (!u) FAIL("uniqueItems", "items %zu and %zu are equal; items must be unique", i, j);
    }
    return 0;
}

static int check_object(sc_vctx *v, const sc_frame *f, const sc_loc *loc, const sc_node *n, const aw_json_value *x, int *ok,
                        uint32_t a) {
    if (a & (A_MINPROPS | A_MAXPROPS)) {
        size_t count = distinct_members(v, x);
        if (a & A_MINPROPS && count < n->min_props)
            FAIL("minProperties", "object has %zu propert%s; at least %llu expected", count, count == 1 ? "y" : "ies",
                 (unsigned long long)n->min_props);
        if (!*ok && !loc->errors) return 0;
        if (a & A_MAXPROPS && count > n->max_props)
            FAIL("maxProperties", "object has %zu properties; at most %llu allowed", count, (unsigned long long)n->max_props);
        if (!*ok && !loc->errors) return 0;
    }
    if (a & A_REQUIRED) {
        for (uint32_t i = 0; i < n->nrequired; i++) {
            const aw_text *name = &n->required[i];
            if (aw__sc_has_key(v, x, name->ptr, name->len)) continue;
            FAIL("required", "missing required property \"%.*s\"", (int)(name->len > 80 ? 80 : name->len), name->ptr);
        }
        if (!*ok && !loc->errors) return 0;
    }
    if (a & A_DEPREQ) {
        for (uint32_t i = 0; i < n->ndepreq; i++) {
            const sc_depreq *d = &n->depreq[i];
            if (!aw__sc_has_key(v, x, d->name.ptr, d->name.len)) continue;
            for (uint32_t k = 0; k < d->count; k++) {
                if (aw__sc_has_key(v, x, d->required[k].ptr, d->required[k].len)) continue;
                FAIL(n->dialect == AW_SCHEMA_DRAFT_7 ? "dependencies" : "dependentRequired",
                     "property \"%.*s\" is required when \"%.*s\" is present", (int)(d->required[k].len > 60 ? 60 : d->required[k].len),
                     d->required[k].ptr, (int)(d->name.len > 60 ? 60 : d->name.len), d->name.ptr);
            }
        }
    }
    return 0;
}

int aw__sc_check(sc_vctx *v, size_t fi, const sc_loc *loc, const sc_node *n, const aw_json_value *x, int *ok) {
    return aw__sc_check_some(v, fi, loc, n, x, n->asserts, ok);
}

int aw__sc_check_some(sc_vctx *v, size_t fi, const sc_loc *loc, const sc_node *n, const aw_json_value *x, uint32_t a,
                      int *ok) {
    /* frames exist only where errors are wanted (not in the verdict pass) */
    const sc_frame *f = loc->errors ? &v->st[fi] : NULL;
    *ok = 1;
    if (n->is_false) {
        FAIL(NULL, "no value is allowed here (the schema is false)");
        return 0;
    }
    if (a & A_TYPE) {
        uint8_t t;
        if (x->type == AW_JSON_NUMBER)
            t = (n->types & T_NUM) ? T_NUM : (aw__sc_num_is_integer(x) ? T_INT : T_NUM);
        else
            t = aw__sc_type_bits(x);
        if (!(t & n->types)) {
            char want[80], got[128];
            type_list(n->types, want, sizeof want);
            describe(x, got, sizeof got);
            FAIL("type", "expected %s, got %s", want, got);
            if (!loc->errors) return 0;
        }
    }
    if (a & A_CONST) {
        int eq = aw__sc_equal(x, n->const_value, v->alloc);
        if (eq < 0) return AW_ENOMEM;
        if (!eq) {
            char want[128], got[128];
            describe(n->const_value, want, sizeof want);
            describe(x, got, sizeof got);
            FAIL("const", "expected %s, got %s", want, got);
            if (!loc->errors) return 0;
        }
    }
    if (a & A_ENUM) {
        int in = aw__sc_enum_has(n->enumv, x, v->alloc);
        if (in < 0) return AW_ENOMEM;
        if (!in) {
            char got[128];
            describe(x, got, sizeof got);
            aw_buf list;
            aw_buf_init(&list, v->alloc);
            const aw_json_value *vals = n->enumv->values;
            size_t shown = vals->u.arr.count < 8 ? vals->u.arr.count : 8;
            int rc = 0;
            for (size_t i = 0; !rc && loc->errors && i < shown && list.len < 200; i++) {
                if (i) rc = aw_buf_append(&list, ", ", 2);
                if (!rc) rc = aw_json_write(&vals->u.arr.items[i], NULL, &list, NULL);
            }
            if (!rc && loc->errors && shown < vals->u.arr.count)
                rc = aw_buf_printf(&list, ", ... (%zu values)", vals->u.arr.count);
            size_t clip = aw__utf8_clip(list.data ? list.data : "", list.len, 240);
            *ok = 0;
            if (!rc && loc->errors)
                rc = aw__sc_error(v, f, loc->here ? NULL : loc, n, "enum", "%s is not one of %.*s", got, (int)clip,
                                  list.data ? list.data : "");
            aw_buf_free(&list);
            if (rc) return AW_ENOMEM;
            if (!loc->errors) return 0;
        }
    }
    switch (x->type) {
    case AW_JSON_NUMBER: return (a & A_NUMBER_MASK) ? check_number(v, f, loc, n, x, ok, a) : 0;
    case AW_JSON_STRING: return (a & A_STRING_MASK) ? check_string(v, f, loc, n, x, ok, a) : 0;
    case AW_JSON_ARRAY: return (a & A_ARRAY_MASK) ? check_array(v, f, loc, n, x, ok, a) : 0;
    case AW_JSON_OBJECT: return (a & A_OBJECT_MASK) ? check_object(v, f, loc, n, x, ok, a) : 0;
    default: return 0;
    }
}

/* ---- the result as JSON and as one line ---------------------------------------------------- */

static int put_member(aw_buf *out, const char *key, const char *value, size_t value_len, int comma) {
    int rc = comma ? aw_buf_putc(out, ',') : 0;
    if (!rc) rc = aw_json_write_string(out, key, strlen(key));
    if (!rc) rc = aw_buf_putc(out, ':');
    if (!rc) rc = aw_json_write_string(out, value, value_len);
    return rc;
}

/* A location in a line of text: a U+0000 in a name as \u0000, as JSON
 * would write it, so the line stays one C string. */
static int put_location(aw_buf *out, const char *p, size_t n) {
    if (!n) return aw_buf_append_str(out, "(root)");
    int rc = 0;
    for (const char *end = p + n; !rc && p < end;) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        size_t run = nul ? (size_t)(nul - p) : (size_t)(end - p);
        rc = aw_buf_append(out, p, run);
        if (!rc && nul) rc = aw_buf_append(out, "\\u0000", 6);
        p += run + (nul != NULL);
    }
    return rc;
}

int aw_schema_result_write(const aw_schema_result *r, aw_buf *out) {
    if (!r || !out) return AW_EINVAL;
    if (r->valid) return aw_buf_append_str(out, "{\"valid\":true}");
    int rc = aw_buf_append_str(out, "{\"valid\":false,\"errors\":[");
    for (size_t i = 0; !rc && i < r->error_count; i++) {
        const aw_schema_error *e = &r->errors[i];
        rc = aw_buf_append_str(out, i ? ",{" : "{");
        if (!rc) rc = put_member(out, "instanceLocation", e->instance_location, e->instance_location_len, 0);
        if (!rc) rc = put_member(out, "keywordLocation", e->keyword_location, e->keyword_location_len, 1);
        if (!rc && e->absolute_keyword_location)
            rc = put_member(out, "absoluteKeywordLocation", e->absolute_keyword_location, e->absolute_keyword_location_len, 1);
        if (!rc) rc = put_member(out, "error", e->message, strlen(e->message), 1);
        if (!rc) rc = aw_buf_putc(out, '}');
    }
    if (!rc) rc = aw_buf_append_str(out, r->truncated ? "],\"truncated\":true}" : "]}");
    return rc ? AW_ENOMEM : 0;
}

int aw_schema_result_summary(const aw_schema_result *r, size_t max_bytes, aw_buf *out) {
    if (!r || !out) return AW_EINVAL;
    size_t start = out->len;
    int rc = 0;
    for (size_t i = 0; !rc && i < r->error_count; i++) {
        const aw_schema_error *e = &r->errors[i];
        if (i) rc = aw_buf_append(out, "; ", 2);
        if (!rc) rc = put_location(out, e->instance_location, e->instance_location_len);
        if (!rc) rc = aw_buf_append(out, ": ", 2);
        if (!rc) rc = aw_buf_append_str(out, e->message);
    }
    if (!rc && r->truncated) rc = aw_buf_append_str(out, r->error_count ? "; and more" : "invalid");
    if (!rc && !r->valid && !r->error_count && !r->truncated) rc = aw_buf_append_str(out, "invalid");
    if (rc) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return AW_ENOMEM;
    }
    if (max_bytes && out->len - start > max_bytes) {
        size_t keep = aw__utf8_clip(out->data + start, out->len - start, max_bytes > 3 ? max_bytes - 3 : 0);
        out->len = start + keep;
        out->data[out->len] = '\0';
        return aw_buf_append(out, "...", 3) ? AW_ENOMEM : 0;
    }
    return 0;
}
