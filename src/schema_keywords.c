/* The keywords of one schema object, by vocabulary: the applicators
 * become ops (children compiled later from the work list), the
 * assertions become fields of the node. A keyword with a value of the
 * wrong shape is a compile error naming it; unknown keywords are ignored. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal/schema.h"

#define MAX_OPS 16

typedef struct kw_ctx {
    sc_compiler *c;
    sc_node *n;
    sc_op ops[MAX_OPS];
    int nops;
} kw_ctx;

static const aw_json_value *kw(const kw_ctx *k, const char *name) { return aw_json_get(k->n->src, name); }

static sc_op *new_op(kw_ctx *k, sc_op_kind kind, uint32_t count) {
    sc_op *op = &k->ops[k->nops++];
    memset(op, 0, sizeof *op);
    op->kind = (uint8_t)kind;
    op->count = count;
    if (count) {
        op->children = aw__sc_alloc(k->c, count * sizeof *op->children);
        if (!op->children) return NULL;
    }
    return op;
}

static int oom(kw_ctx *k) { return aw__sc_fail(k->c, AW_ENOMEM, NULL, NULL, "out of memory"); }

/* A count keyword: a non-negative integer (2.0 counts as 2). */
static int count_of(kw_ctx *k, const char *name, const aw_json_value *v, uint64_t *out) {
    if (!aw_json_is_number(v) || v->u.num.d < 0 || !aw__sc_num_is_integer(v))
        return aw__sc_fail(k->c, AW_ESYNTAX, k->n, name, "must be a non-negative integer");
    *out = v->u.num.d >= 1.8e19 ? UINT64_MAX : (uint64_t)v->u.num.d;
    return 0;
}

static int schema_child(kw_ctx *k, const char *name, const aw_json_value *v, sc_child *out) {
    sc_child seg;
    if (aw__sc_seg_key(k->c, name, NULL, 0, &seg)) return oom(k);
    return aw__sc_child(k->c, k->n, v, seg.seg, seg.seg_len, out);
}

static int keyed_child(kw_ctx *k, const char *name, const char *key, size_t key_len, const aw_json_value *v,
                       sc_child *out) {
    sc_child seg;
    if (aw__sc_seg_key(k->c, name, key, key_len, &seg)) return oom(k);
    return aw__sc_child(k->c, k->n, v, seg.seg, seg.seg_len, out);
}

static int indexed_child(kw_ctx *k, const char *name, size_t i, const aw_json_value *v, sc_child *out) {
    char idx[24];
    int len = snprintf(idx, sizeof idx, "%zu", i);
    return keyed_child(k, name, idx, (size_t)len, v, out);
}

/* allOf, anyOf, oneOf: a non-empty array of schemas. */
static int schema_list(kw_ctx *k, const char *name, sc_op_kind kind) {
    const aw_json_value *v = kw(k, name);
    if (!v) return 0;
    if (!aw_json_is_array(v) || !v->u.arr.count)
        return aw__sc_fail(k->c, AW_ESYNTAX, k->n, name, "must be a non-empty array of schemas");
    sc_op *op = new_op(k, kind, (uint32_t)v->u.arr.count);
    if (!op) return oom(k);
    for (size_t i = 0; i < v->u.arr.count; i++) {
        int rc = indexed_child(k, name, i, &v->u.arr.items[i], &op->children[i]);
        if (rc) return rc;
    }
    return 0;
}

static int ref_op(kw_ctx *k, const char *name, sc_op_kind kind) {
    const aw_json_value *v = kw(k, name);
    if (!v) return 0;
    if (!aw_json_is_string(v)) return aw__sc_fail(k->c, AW_ESYNTAX, k->n, name, "must be a string (a URI reference)");
    sc_op *op = new_op(k, kind, 1);
    if (!op) return oom(k);
    if (aw__sc_seg_key(k->c, name, NULL, 0, &op->children[0])) return oom(k);
    if (aw__sc_add_ref(k->c, k->n, (uint16_t)(k->nops - 1), v, kind == OP_DYNREF)) return oom(k);
    return 0;
}

static int string_list(kw_ctx *k, const char *name, const aw_json_value *v, aw_text **out, uint32_t *count) {
    if (!aw_json_is_array(v)) return aw__sc_fail(k->c, AW_ESYNTAX, k->n, name, "must be an array of strings");
    aw_text *t = aw__sc_alloc(k->c, v->u.arr.count * sizeof *t);
    if (!t) return oom(k);
    for (size_t i = 0; i < v->u.arr.count; i++) {
        const aw_json_value *s = &v->u.arr.items[i];
        if (!aw_json_is_string(s)) return aw__sc_fail(k->c, AW_ESYNTAX, k->n, name, "must be an array of strings");
        t[i] = (aw_text){s->u.str.ptr, s->u.str.len};
    }
    *out = t;
    *count = (uint32_t)v->u.arr.count;
    return 0;
}

/* ---- applicators ------------------------------------------------------------ */

static int object_ops(kw_ctx *k) {
    int d7 = k->n->dialect == AW_SCHEMA_DRAFT_7;
    const aw_json_value *props = kw(k, "properties"), *pats = kw(k, "patternProperties"),
                        *addl = kw(k, "additionalProperties");
    if (props || pats || addl) {
        if (props && !aw_json_is_object(props))
            return aw__sc_fail(k->c, AW_ESYNTAX, k->n, "properties", "must be an object of schemas");
        if (pats && !aw_json_is_object(pats))
            return aw__sc_fail(k->c, AW_ESYNTAX, k->n, "patternProperties", "must be an object of schemas");
        sc_op *op = new_op(k, OP_PROPS, 0);
        if (!op) return oom(k);
        size_t np = props ? props->u.obj.count : 0;
        op->u.props.props = aw__sc_alloc(k->c, np * sizeof *op->u.props.props);
        if (!op->u.props.props) return oom(k);
        /* the last of duplicate keys wins, as everywhere in JSON */
        uint32_t kept = 0;
        for (size_t i = 0; i < np; i++) {
            const aw_json_member *m = &props->u.obj.members[i];
            if (aw_json_getn(props, m->key, m->key_len) != &m->value) continue;
            sc_prop *p = &op->u.props.props[kept++];
            p->name = (aw_text){m->key, m->key_len};
            p->hash = aw__sc_bytes_hash(m->key, m->key_len);
            int rc = keyed_child(k, "properties", m->key, m->key_len, &m->value, &p->child);
            if (rc) return rc;
        }
        op->u.props.nprops = kept;
        if (kept > 8) {
            uint32_t cap = 16;
            while (cap < 2 * kept) cap *= 2;
            op->u.props.table = aw__sc_alloc(k->c, cap * sizeof *op->u.props.table);
            if (!op->u.props.table) return oom(k);
            op->u.props.mask = cap - 1;
            for (uint32_t i = 0; i < kept; i++) {
                uint32_t s = (uint32_t)op->u.props.props[i].hash & op->u.props.mask;
                while (op->u.props.table[s]) s = (s + 1) & op->u.props.mask;
                op->u.props.table[s] = i + 1;
            }
        }
        size_t npat = pats ? pats->u.obj.count : 0;
        op->u.props.patterns = aw__sc_alloc(k->c, npat * sizeof *op->u.props.patterns);
        op->u.props.pattern_children = aw__sc_alloc(k->c, npat * sizeof *op->u.props.pattern_children);
        if (!op->u.props.patterns || !op->u.props.pattern_children) return oom(k);
        for (size_t i = 0; i < npat; i++) {
            const aw_json_member *m = &pats->u.obj.members[i];
            char why[200];
            int rc = aw__sc_regex_compile(aw__sc_schema(k->c), m->key, m->key_len, &op->u.props.patterns[i], why, sizeof why);
            if (rc == AW_ENOMEM) return oom(k);
            if (rc)
                return aw__sc_fail(k->c, AW_ESYNTAX, k->n, "patternProperties", "invalid regular expression \"%.*s\": %s",
                                   (int)(m->key_len > 80 ? 80 : m->key_len), m->key, why);
            rc = keyed_child(k, "patternProperties", m->key, m->key_len, &m->value, &op->u.props.pattern_children[i]);
            if (rc) return rc;
        }
        op->u.props.npatterns = (uint32_t)npat;
        if (addl) {
            int rc = schema_child(k, "additionalProperties", addl, &op->u.props.additional);
            if (rc) return rc;
        }
    }
    const aw_json_value *names = kw(k, "propertyNames");
    if (names) {
        sc_op *op = new_op(k, OP_PROPNAMES, 1);
        if (!op) return oom(k);
        int rc = schema_child(k, "propertyNames", names, &op->children[0]);
        if (rc) return rc;
    }
    /* dependentSchemas (2020-12), or the schema half of draft-07's dependencies */
    const char *dep_name = d7 ? "dependencies" : "dependentSchemas";
    const aw_json_value *deps = kw(k, dep_name);
    if (deps) {
        if (!aw_json_is_object(deps)) return aw__sc_fail(k->c, AW_ESYNTAX, k->n, dep_name, "must be an object");
        uint32_t nschemas = 0;
        for (size_t i = 0; i < deps->u.obj.count; i++)
            if (!aw_json_is_array(&deps->u.obj.members[i].value)) nschemas++;
        if (nschemas) {
            sc_op *op = new_op(k, OP_DEPSCHEMAS, nschemas);
            if (!op) return oom(k);
            op->u.names = aw__sc_alloc(k->c, nschemas * sizeof *op->u.names);
            if (!op->u.names) return oom(k);
            uint32_t j = 0;
            for (size_t i = 0; i < deps->u.obj.count; i++) {
                const aw_json_member *m = &deps->u.obj.members[i];
                if (aw_json_is_array(&m->value)) continue;
                op->u.names[j] = (aw_text){m->key, m->key_len};
                int rc = keyed_child(k, dep_name, m->key, m->key_len, &m->value, &op->children[j++]);
                if (rc) return rc;
            }
        }
    }
    return 0;
}

static int array_ops(kw_ctx *k) {
    int d7 = k->n->dialect == AW_SCHEMA_DRAFT_7;
    const aw_json_value *items = kw(k, "items");
    const aw_json_value *prefix = d7 ? (aw_json_is_array(items) ? items : NULL) : kw(k, "prefixItems");
    const aw_json_value *rest = d7 ? (aw_json_is_array(items) ? kw(k, "additionalItems") : items) : items;
    const char *prefix_kw = d7 ? "items" : "prefixItems";
    const char *rest_kw = d7 && aw_json_is_array(items) ? "additionalItems" : "items";
    if (prefix && !aw_json_is_array(prefix)) return aw__sc_fail(k->c, AW_ESYNTAX, k->n, prefix_kw, "must be an array of schemas");
    if (!d7 && aw_json_is_array(items))
        return aw__sc_fail(k->c, AW_ESYNTAX, k->n, "items", "must be a schema (2020-12 writes a tuple as prefixItems)");
    if (prefix || rest) {
        uint32_t np = prefix ? (uint32_t)prefix->u.arr.count : 0;
        sc_op *op = new_op(k, OP_ITEMS, np + (rest ? 1 : 0));
        if (!op) return oom(k);
        op->u.items.nprefix = np;
        op->u.items.has_rest = rest != NULL;
        op->u.items.rest_kw = rest_kw;
        for (uint32_t i = 0; i < np; i++) {
            int rc = indexed_child(k, prefix_kw, i, &prefix->u.arr.items[i], &op->children[i]);
            if (rc) return rc;
        }
        if (rest) {
            int rc = schema_child(k, rest_kw, rest, &op->children[np]);
            if (rc) return rc;
        }
    }
    const aw_json_value *contains = kw(k, "contains");
    if (contains) {
        sc_op *op = new_op(k, OP_CONTAINS, 1);
        if (!op) return oom(k);
        int rc = schema_child(k, "contains", contains, &op->children[0]);
        if (rc) return rc;
        op->u.contains.min = 1;
        op->u.contains.has_min = 1;
        if (!d7 && (k->n->vocab & V_VALIDATION)) {
            const aw_json_value *mn = kw(k, "minContains"), *mx = kw(k, "maxContains");
            if (mn && (rc = count_of(k, "minContains", mn, &op->u.contains.min))) return rc;
            if (mx) {
                if ((rc = count_of(k, "maxContains", mx, &op->u.contains.max))) return rc;
                op->u.contains.has_max = 1;
            }
        }
    }
    return 0;
}

static int applicators(kw_ctx *k) {
    int d7 = k->n->dialect == AW_SCHEMA_DRAFT_7;
    int rc = ref_op(k, "$ref", OP_REF);
    if (!rc && !d7) rc = ref_op(k, "$dynamicRef", OP_DYNREF);
    if (rc || !(k->n->vocab & V_APPLICATOR)) return rc;
    if ((rc = object_ops(k)) || (rc = array_ops(k))) return rc;
    if ((rc = schema_list(k, "allOf", OP_ALLOF)) || (rc = schema_list(k, "anyOf", OP_ANYOF)) ||
        (rc = schema_list(k, "oneOf", OP_ONEOF)))
        return rc;
    const aw_json_value *v = kw(k, "not");
    if (v) {
        sc_op *op = new_op(k, OP_NOT, 1);
        if (!op) return oom(k);
        if ((rc = schema_child(k, "not", v, &op->children[0]))) return rc;
    }
    const aw_json_value *cond = kw(k, "if"), *then = kw(k, "then"), *els = kw(k, "else");
    if (cond) {
        sc_op *op = new_op(k, OP_IF, 3);
        if (!op) return oom(k);
        if ((rc = schema_child(k, "if", cond, &op->children[0]))) return rc;
        if (then && (rc = schema_child(k, "then", then, &op->children[1]))) return rc;
        if (els && (rc = schema_child(k, "else", els, &op->children[2]))) return rc;
    } else {
        /* then and else without if do nothing, but their subschemas can
         * still be referenced: compile them as places */
        sc_child unused;
        if (then && (rc = schema_child(k, "then", then, &unused))) return rc;
        if (els && (rc = schema_child(k, "else", els, &unused))) return rc;
    }
    return 0;
}

static int unevaluated(kw_ctx *k) {
    if (k->n->dialect == AW_SCHEMA_DRAFT_7 || !(k->n->vocab & V_UNEVALUATED)) return 0;
    const aw_json_value *ui = kw(k, "unevaluatedItems"), *up = kw(k, "unevaluatedProperties");
    int rc;
    if (ui) {
        sc_op *op = new_op(k, OP_UNEVAL_ITEMS, 1);
        if (!op) return oom(k);
        if ((rc = schema_child(k, "unevaluatedItems", ui, &op->children[0]))) return rc;
        k->n->uneval |= 2;
    }
    if (up) {
        sc_op *op = new_op(k, OP_UNEVAL_PROPS, 1);
        if (!op) return oom(k);
        if ((rc = schema_child(k, "unevaluatedProperties", up, &op->children[0]))) return rc;
        k->n->uneval |= 1;
    }
    return 0;
}

/* $defs / definitions: not applied, but places that references reach. */
static int definitions(kw_ctx *k) {
    static const char *const names[] = {"$defs", "definitions"};
    for (int i = 0; i < 2; i++) {
        if (i == 1 && k->n->dialect != AW_SCHEMA_DRAFT_7) continue;
        if (i == 0 && k->n->dialect == AW_SCHEMA_DRAFT_7) continue;
        const aw_json_value *d = kw(k, names[i]);
        if (!d) continue;
        if (!aw_json_is_object(d)) return aw__sc_fail(k->c, AW_ESYNTAX, k->n, names[i], "must be an object of schemas");
        for (size_t j = 0; j < d->u.obj.count; j++) {
            const aw_json_member *m = &d->u.obj.members[j];
            sc_child unused;
            int rc = keyed_child(k, names[i], m->key, m->key_len, &m->value, &unused);
            if (rc) return rc;
        }
    }
    return 0;
}

/* ---- assertions -------------------------------------------------------------------- */

static int type_bit(const char *s, size_t n) {
    static const struct {
        const char *name;
        uint8_t bits;
    } types[] = {{"null", T_NULL}, {"boolean", T_BOOL}, {"integer", T_INT}, {"number", T_NUM | T_INT},
                 {"string", T_STR}, {"array", T_ARR}, {"object", T_OBJ}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i].name) == n && !memcmp(types[i].name, s, n)) return types[i].bits;
    return -1;
}

static int bound(kw_ctx *k, const char *name, uint32_t flag, sc_num *out) {
    const aw_json_value *v = kw(k, name);
    if (!v) return 0;
    if (!aw_json_is_number(v)) return aw__sc_fail(k->c, AW_ESYNTAX, k->n, name, "must be a number");
    out->d = v->u.num.d;
    out->v = v;
    k->n->asserts |= flag;
    return 0;
}

static int count_kw(kw_ctx *k, const char *name, uint32_t flag, uint64_t *out) {
    const aw_json_value *v = kw(k, name);
    if (!v) return 0;
    int rc = count_of(k, name, v, out);
    if (rc) return rc;
    k->n->asserts |= flag;
    return 0;
}

static int validation(kw_ctx *k) {
    sc_node *n = k->n;
    aw_schema *s = aw__sc_schema(k->c);
    const aw_json_value *v;
    int rc;
    if ((v = kw(k, "type"))) {
        uint8_t bits = 0;
        if (aw_json_is_string(v)) {
            int b = type_bit(v->u.str.ptr, v->u.str.len);
            if (b < 0) return aw__sc_fail(k->c, AW_ESYNTAX, n, "type", "unknown type \"%.40s\"", v->u.str.ptr);
            bits = (uint8_t)b;
        } else if (aw_json_is_array(v)) {
            for (size_t i = 0; i < v->u.arr.count; i++) {
                const aw_json_value *t = &v->u.arr.items[i];
                int b = aw_json_is_string(t) ? type_bit(t->u.str.ptr, t->u.str.len) : -1;
                if (b < 0) return aw__sc_fail(k->c, AW_ESYNTAX, n, "type", "must list type names");
                bits |= (uint8_t)b;
            }
        } else {
            return aw__sc_fail(k->c, AW_ESYNTAX, n, "type", "must be a type name or an array of them");
        }
        n->types = bits;
        n->asserts |= A_TYPE;
        n->json_ok = (uint8_t)(((bits & T_NULL) ? 1u << AW_JSON_NULL : 0) | ((bits & T_BOOL) ? 1u << AW_JSON_BOOL : 0) |
                               ((bits & T_NUM) ? 1u << AW_JSON_NUMBER : 0) | ((bits & T_STR) ? 1u << AW_JSON_STRING : 0) |
                               ((bits & T_ARR) ? 1u << AW_JSON_ARRAY : 0) | ((bits & T_OBJ) ? 1u << AW_JSON_OBJECT : 0));
        n->int_only = (bits & T_INT) && !(bits & T_NUM);
    }
    if ((v = kw(k, "const"))) {
        n->const_value = v;
        n->asserts |= A_CONST;
    }
    if ((v = kw(k, "enum"))) {
        if (!aw_json_is_array(v)) return aw__sc_fail(k->c, AW_ESYNTAX, n, "enum", "must be an array");
        n->enumv = aw__sc_alloc(k->c, sizeof *n->enumv);
        if (!n->enumv) return oom(k);
        n->enumv->values = v;
        if (aw__sc_enum_build(n->enumv, &s->arena, s->alloc)) return oom(k);
        n->asserts |= A_ENUM;
    }
    if ((v = kw(k, "multipleOf"))) {
        if (!aw_json_is_number(v) || !(v->u.num.d > 0))
            return aw__sc_fail(k->c, AW_ESYNTAX, n, "multipleOf", "must be a number above 0");
        n->multiple_of = v;
        n->asserts |= A_MULTIPLE;
    }
    if ((rc = bound(k, "maximum", A_MAX, &n->max)) || (rc = bound(k, "exclusiveMaximum", A_XMAX, &n->xmax)) ||
        (rc = bound(k, "minimum", A_MIN, &n->min)) || (rc = bound(k, "exclusiveMinimum", A_XMIN, &n->xmin)))
        return rc;
    if ((rc = count_kw(k, "maxLength", A_MAXLEN, &n->max_len)) || (rc = count_kw(k, "minLength", A_MINLEN, &n->min_len)) ||
        (rc = count_kw(k, "maxItems", A_MAXITEMS, &n->max_items)) ||
        (rc = count_kw(k, "minItems", A_MINITEMS, &n->min_items)) ||
        (rc = count_kw(k, "maxProperties", A_MAXPROPS, &n->max_props)) ||
        (rc = count_kw(k, "minProperties", A_MINPROPS, &n->min_props)))
        return rc;
    if (n->min_len == 0) n->asserts &= ~(uint32_t)A_MINLEN;
    if (n->min_items == 0) n->asserts &= ~(uint32_t)A_MINITEMS;
    if (n->min_props == 0) n->asserts &= ~(uint32_t)A_MINPROPS;
    if ((v = kw(k, "pattern"))) {
        if (!aw_json_is_string(v)) return aw__sc_fail(k->c, AW_ESYNTAX, n, "pattern", "must be a string");
        char why[200];
        rc = aw__sc_regex_compile(s, v->u.str.ptr, v->u.str.len, &n->pattern, why, sizeof why);
        if (rc == AW_ENOMEM) return oom(k);
        if (rc) return aw__sc_fail(k->c, AW_ESYNTAX, n, "pattern", "invalid regular expression: %s", why);
        n->asserts |= A_PATTERN;
    }
    if ((v = kw(k, "uniqueItems"))) {
        if (!aw_json_is_bool(v)) return aw__sc_fail(k->c, AW_ESYNTAX, n, "uniqueItems", "must be a boolean");
        if (v->u.b) n->asserts |= A_UNIQUE;
    }
    if ((v = kw(k, "required"))) {
        if ((rc = string_list(k, "required", v, &n->required, &n->nrequired))) return rc;
        if (n->nrequired) n->asserts |= A_REQUIRED;
    }
    int d7 = n->dialect == AW_SCHEMA_DRAFT_7;
    const char *dr_name = d7 ? "dependencies" : "dependentRequired";
    if ((v = kw(k, dr_name))) {
        if (!aw_json_is_object(v)) return aw__sc_fail(k->c, AW_ESYNTAX, n, dr_name, "must be an object");
        n->depreq = aw__sc_alloc(k->c, v->u.obj.count * sizeof *n->depreq);
        if (!n->depreq) return oom(k);
        for (size_t i = 0; i < v->u.obj.count; i++) {
            const aw_json_member *m = &v->u.obj.members[i];
            if (d7 && !aw_json_is_array(&m->value)) continue; /* a schema: dependentSchemas' half */
            sc_depreq *d = &n->depreq[n->ndepreq++];
            d->name = (aw_text){m->key, m->key_len};
            if ((rc = string_list(k, dr_name, &m->value, &d->required, &d->count))) return rc;
        }
        if (n->ndepreq) n->asserts |= A_DEPREQ;
    }
    return 0;
}

static int format(kw_ctx *k) {
    const aw_json_value *v = kw(k, "format");
    if (!v) return 0;
    if (!aw_json_is_string(v)) return aw__sc_fail(k->c, AW_ESYNTAX, k->n, "format", "must be a string");
    if (!aw__sc_schema(k->c)->format_assert && !(k->n->vocab & V_FORMAT_ASSERT)) return 0;
    sc_format f = aw__sc_format_lookup(v->u.str.ptr, v->u.str.len);
    if (f == FMT_NONE) return 0;
    k->n->format = (uint8_t)f;
    k->n->asserts |= A_FORMAT;
    return 0;
}

int aw__sc_compile_keywords(sc_compiler *c, sc_node *n) {
    kw_ctx k;
    k.c = c;
    k.n = n;
    k.nops = 0;
    int rc;
    if (n->dialect == AW_SCHEMA_DRAFT_7 && kw(&k, "$ref")) {
        /* draft-07: $ref replaces every keyword beside it */
        rc = ref_op(&k, "$ref", OP_REF);
    } else {
        rc = applicators(&k);
        if (!rc) rc = unevaluated(&k);
        if (!rc) rc = definitions(&k);
        if (!rc && (n->vocab & V_VALIDATION)) rc = validation(&k);
        if (!rc) rc = format(&k);
    }
    if (rc) return rc;
    /* required names that are all properties: checked by the properties
     * pass of the verdict (schema_fast.c) instead of one look-up each */
    for (int i = 0; i < k.nops && (n->asserts & A_REQUIRED); i++) {
        sc_op *op = &k.ops[i];
        if (op->kind != OP_PROPS) continue;
        uint64_t mask = 0;
        uint32_t found = 0;
        for (uint32_t r = 0; r < n->nrequired; r++)
            for (uint32_t j = 0; j < op->u.props.nprops && j < 64; j++)
                if (op->u.props.props[j].name.len == n->required[r].len &&
                    !memcmp(op->u.props.props[j].name.ptr, n->required[r].ptr, n->required[r].len)) {
                    mask |= (uint64_t)1 << j;
                    found++;
                    break;
                }
        if (found == n->nrequired) {
            op->u.props.required_mask = mask;
            n->required_by_props = 1;
        }
    }
    n->type_only = k.nops == 0 && n->asserts == A_TYPE && !n->uneval;
    if (k.nops) {
        n->ops = aw__sc_alloc(c, (size_t)k.nops * sizeof *n->ops);
        if (!n->ops) return oom(&k);
        memcpy(n->ops, k.ops, (size_t)k.nops * sizeof *n->ops);
        n->nops = (uint16_t)k.nops;
    }
    return 0;
}
