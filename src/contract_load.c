/* Loading a contract from its JSON description (docs/contracts.md). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal/contract.h"
#include "internal/errors.h"

#define MAX_CONTRACT_DEPTH 32

typedef struct loader {
    aw_contract *c;
    aw_error *err;
} loader;

static const char *dup_str(loader *l, const aw_json_value *v) {
    char *p = aw__arena_alloc(&l->c->arena, v->u.str.len + 1);
    if (!p) return NULL;
    memcpy(p, v->u.str.ptr, v->u.str.len);
    p[v->u.str.len] = '\0';
    return p;
}

/* Element and attribute names must be XML names (ASCII letters, digits,
 * '_', ':', '.', '-', not starting with a digit, '.' or '-'; any non-ASCII
 * byte is let through). Added: a contract naming an element "a b" or "x>"
 * loaded, then built documents that never parsed and prompts that showed
 * broken tags. */
static int xml_name(const aw_json_value *v) {
    if (!aw_json_is_string(v) || !v->u.str.len) return 0;
    for (size_t i = 0; i < v->u.str.len; i++) {
        unsigned char ch = (unsigned char)v->u.str.ptr[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == ':' || ch >= 0x80;
        if (i) ok = ok || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
        if (!ok) return 0;
    }
    return 1;
}

static int bad(loader *l, const char *where, const char *what) {
    return aw__error_set(l->err, AW_EINVAL, "contract %s: %s", where, what);
}

static int opt_string(loader *l, const aw_json_value *obj, const char *key, const char *where,
                      const char **out) {
    const aw_json_value *v = aw_json_get(obj, key);
    *out = NULL;
    if (!v || aw_json_is_null(v)) return 0;
    if (!aw_json_is_string(v)) {
        char msg[96];
        snprintf(msg, sizeof msg, "'%s' must be a string", key);
        return bad(l, where, msg);
    }
    *out = dup_str(l, v);
    return *out ? 0 : aw__error_set(l->err, AW_ENOMEM, "out of memory");
}

static int opt_count(loader *l, const aw_json_value *obj, const char *key, const char *where,
                     size_t dflt, size_t *out) {
    const aw_json_value *v = aw_json_get(obj, key);
    *out = dflt;
    if (!v) return 0;
    if (aw_json_is_null(v) || (aw_json_is_string(v) && v->u.str.len == 9 && !memcmp(v->u.str.ptr, "unbounded", 9))) {
        *out = SIZE_MAX;
        return 0;
    }
    if (!aw_json_is_number(v) || !(v->flags & AW_JSON_F_INT) || v->u.num.i < 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "'%s' must be a non-negative integer", key);
        return bad(l, where, msg);
    }
    *out = (size_t)v->u.num.i;
    return 0;
}

static int opt_bool(loader *l, const aw_json_value *obj, const char *key, const char *where, int *out) {
    const aw_json_value *v = aw_json_get(obj, key);
    *out = 0;
    if (!v) return 0;
    if (!aw_json_is_bool(v)) {
        char msg[96];
        snprintf(msg, sizeof msg, "'%s' must be true or false", key);
        return bad(l, where, msg);
    }
    *out = v->u.b;
    return 0;
}

static int load_value(loader *l, const aw_json_value *obj, const char *where, c_value *v, int is_text) {
    memset(v, 0, sizeof *v);
    const aw_json_value *type = aw_json_get(obj, "type");
    static const char *const names[] = {"string", "integer", "decimal", "boolean", "enum", "list"};
    if (type) {
        if (!aw_json_is_string(type)) return bad(l, where, "'type' must be a string");
        size_t k;
        for (k = 0; k < 6; k++)
            if (strlen(names[k]) == type->u.str.len && !memcmp(names[k], type->u.str.ptr, type->u.str.len)) break;
        if (k == 6) return bad(l, where, "'type' must be string, integer, decimal, boolean, enum or list");
        v->type = (c_type)k;
    } /* else a string, the zeroed default */
    (void)is_text;
    const aw_json_value *mn = aw_json_get(obj, "min"), *mx = aw_json_get(obj, "max");
    if (v->type == CT_INTEGER || v->type == CT_DECIMAL) {
        if (mn) {
            if (!aw_json_is_number(mn) || !isfinite(mn->u.num.d)) return bad(l, where, "'min' must be a number");
            v->has_min = 1;
            v->min = mn->u.num.d;
        }
        if (mx) {
            if (!aw_json_is_number(mx) || !isfinite(mx->u.num.d)) return bad(l, where, "'max' must be a number");
            v->has_max = 1;
            v->max = mx->u.num.d;
        }
        if (v->has_min && v->has_max && v->min > v->max) return bad(l, where, "'min' is above 'max'");
    }
    int rc;
    if ((rc = opt_count(l, obj, "maxLength", where, 0, &v->max_length))) return rc;
    if ((rc = opt_count(l, obj, "maxItems", where, 0, &v->max_items))) return rc;
    if (v->max_length == SIZE_MAX) v->max_length = 0;
    if (v->max_items == SIZE_MAX) v->max_items = 0;
    if (v->type == CT_ENUM) {
        const aw_json_value *vals = aw_json_get(obj, "values");
        if (!aw_json_is_array(vals) || !vals->u.arr.count) return bad(l, where, "an enum needs a non-empty 'values' array");
        v->nvalues = vals->u.arr.count;
        v->values = aw__arena_alloc(&l->c->arena, v->nvalues * sizeof *v->values);
        if (!v->values) return aw__error_set(l->err, AW_ENOMEM, "out of memory");
        for (size_t i = 0; i < v->nvalues; i++) {
            if (!aw_json_is_string(&vals->u.arr.items[i])) return bad(l, where, "enum 'values' must be strings");
            if (!(v->values[i] = dup_str(l, &vals->u.arr.items[i]))) return aw__error_set(l->err, AW_ENOMEM, "out of memory");
        }
    }
    return 0;
}

static int load_elem(loader *l, const aw_json_value *obj, c_elem *e, int depth, int is_root) {
    char where[160];
    if (depth > MAX_CONTRACT_DEPTH) return bad(l, "element", "nesting deeper than 32 levels");
    if (!aw_json_is_object(obj)) return bad(l, "element", "must be an object");
    memset(e, 0, sizeof *e);
    const aw_json_value *name = aw_json_get(obj, "name");
    if (!xml_name(name)) return bad(l, "element", "'name' must be an XML element name");
    snprintf(where, sizeof where, "element <%.100s>", name->u.str.ptr);
    int rc;
    if (!(e->name = dup_str(l, name))) return aw__error_set(l->err, AW_ENOMEM, "out of memory");
    e->name_len = name->u.str.len;
    if ((rc = opt_count(l, obj, "min", where, 1, &e->min))) return rc;
    if ((rc = opt_count(l, obj, "max", where, 1, &e->max))) return rc;
    if (e->min == SIZE_MAX) return bad(l, where, "'min' must be a number");
    if (e->min > e->max) return bad(l, where, "'min' is above 'max'");
    if (is_root && (e->min != 1 || e->max != 1)) return bad(l, where, "the root occurs exactly once");
    if ((rc = opt_string(l, obj, "description", where, &e->description))) return rc;
    const aw_json_value *attrs = aw_json_get(obj, "attributes");
    if (attrs) {
        if (!aw_json_is_array(attrs)) return bad(l, where, "'attributes' must be an array");
        e->nattrs = attrs->u.arr.count;
        e->attrs = aw__arena_alloc(&l->c->arena, (e->nattrs ? e->nattrs : 1) * sizeof *e->attrs);
        if (!e->attrs) return aw__error_set(l->err, AW_ENOMEM, "out of memory");
        for (size_t i = 0; i < e->nattrs; i++) {
            const aw_json_value *a = &attrs->u.arr.items[i];
            c_attr *ca = &e->attrs[i];
            memset(ca, 0, sizeof *ca);
            if (!aw_json_is_object(a)) return bad(l, where, "each attribute must be an object");
            const aw_json_value *an = aw_json_get(a, "name");
            if (!xml_name(an)) return bad(l, where, "each attribute needs a 'name' that is an XML attribute name");
            if (!(ca->name = dup_str(l, an))) return aw__error_set(l->err, AW_ENOMEM, "out of memory");
            ca->name_len = an->u.str.len;
            char awhere[240];
            snprintf(awhere, sizeof awhere, "%s attribute '%.60s'", where, ca->name);
            if ((rc = opt_bool(l, a, "required", awhere, &ca->required))) return rc;
            if ((rc = opt_string(l, a, "description", awhere, &ca->description))) return rc;
            if ((rc = load_value(l, a, awhere, &ca->v, 0))) return rc;
            for (size_t j = 0; j < i; j++)
                if (!strcmp(e->attrs[j].name, ca->name)) return bad(l, awhere, "is declared twice");
        }
    }
    const aw_json_value *text = aw_json_get(obj, "text");
    if (text && !aw_json_is_null(text)) {
        if (!aw_json_is_object(text)) return bad(l, where, "'text' must be an object");
        e->has_text = 1;
        if ((rc = opt_bool(l, text, "required", where, &e->text_required))) return rc;
        if ((rc = load_value(l, text, where, &e->text, 1))) return rc;
    }
    const aw_json_value *kids = aw_json_get(obj, "children");
    if (kids) {
        if (!aw_json_is_array(kids)) return bad(l, where, "'children' must be an array");
        e->nchildren = kids->u.arr.count;
        /* Added: the validator counts children in a fixed table of 64
         * (contract_check.c), so a 65th declared child was never matched. */
        if (e->nchildren > 64) return bad(l, where, "declares more than 64 child elements");
        e->children = aw__arena_alloc(&l->c->arena, (e->nchildren ? e->nchildren : 1) * sizeof *e->children);
        if (!e->children) return aw__error_set(l->err, AW_ENOMEM, "out of memory");
        for (size_t i = 0; i < e->nchildren; i++) {
            if ((rc = load_elem(l, &kids->u.arr.items[i], &e->children[i], depth + 1, 0))) return rc;
            for (size_t j = 0; j < i; j++)
                if (!strcmp(e->children[j].name, e->children[i].name))
                    return bad(l, where, "declares a child element twice");
            /* Added: parse maps attributes and children to keys of one
             * object, so the two must not share a name. */
            for (size_t j = 0; j < e->nattrs; j++)
                if (!strcmp(e->attrs[j].name, e->children[i].name))
                    return bad(l, where, "has an attribute and a child element of the same name");
        }
    }
    return 0;
}

int aw_contract_load(const char *json, size_t len, const aw_allocator *alloc, aw_contract **out,
                     aw_error *err) {
    if (!out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    aw_json_read_options ro = {alloc, 0, false};
    aw_json_doc *doc = NULL;
    int rc = aw_json_parse(json, len, &ro, &doc, err);
    if (rc) return rc;
    aw_contract *c = aw_malloc(alloc, sizeof *c);
    if (!c) {
        aw_json_doc_free(doc);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    memset(c, 0, sizeof *c);
    c->alloc = alloc;
    aw__arena_init(&c->arena, alloc);
    loader l = {c, err};
    const aw_json_value *root = aw_json_doc_root(doc);
    const aw_json_value *format = aw_json_get(root, "format");
    if (!aw_json_is_object(root)) {
        rc = bad(&l, "document", "must be a JSON object");
    } else if (!aw_json_is_string(format)) {
        rc = bad(&l, "document", "'format' (the contract format version, \"1.0\") is missing");
    } else {
        /* the major number decides compatibility */
        unsigned long major = 0;
        size_t i = 0;
        while (i < format->u.str.len && format->u.str.ptr[i] >= '0' && format->u.str.ptr[i] <= '9')
            major = major * 10 + (unsigned long)(format->u.str.ptr[i++] - '0');
        if (i == 0 || major != AW_CONTRACT_FORMAT_MAJOR)
            rc = aw__error_set(err, AW_EINVAL, "contract format version %.20s is not supported (this agentwire reads %d.x)",
                               format->u.str.ptr, AW_CONTRACT_FORMAT_MAJOR);
    }
    if (!rc) rc = opt_string(&l, root, "version", "document", &c->version);
    if (!rc) rc = opt_string(&l, root, "description", "document", &c->description);
    if (!rc) rc = opt_string(&l, root, "prompt", "document", &c->prompt);
    if (!rc) rc = load_elem(&l, aw_json_get(root, "root"), &c->root, 0, 1);
    if (!rc) {
        const char *name = NULL;
        rc = opt_string(&l, root, "name", "document", &name);
        c->name = name ? name : c->root.name;
    }
    if (!rc && !c->version) c->version = "1.0.0";
    aw_json_doc_free(doc);
    if (rc) {
        aw_contract_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void aw_contract_free(aw_contract *c) {
    if (!c) return;
    aw__arena_free(&c->arena);
    aw_free(c->alloc, c);
}

const char *aw_contract_name(const aw_contract *c) { return c ? c->name : NULL; }
const char *aw_contract_version(const aw_contract *c) { return c ? c->version : NULL; }
