/* The verdict first: most instances are valid, and a valid instance needs
 * no error locations, no annotations and no frames. This pass answers
 * valid (1) or invalid (0) by plain recursion bounded by FAST_DEPTH (a
 * constant: the document never controls how deep the C stack goes), and
 * says "not here" (-1) for whatever it does not do: schemas nested deeper
 * than that, unevaluated* (annotations), $dynamicRef through the dynamic
 * scope, objects with duplicate keys, and any failure (out of memory). The
 * frame machine of schema_validate.c then does the whole validation, and
 * it alone builds errors. Assertions are the same function in both
 * (aw__sc_check), so the two cannot disagree on a keyword. */
#include <string.h>

#include "internal/schema_eval.h"

#define FAST_DEPTH 24
#define NOT_HERE (-1)

static int fast(sc_vctx *v, const sc_node *n, const aw_json_value *x, int depth);

static const sc_loc quiet; /* no errors wanted, no location */

/* The effective members of x are all of them? */
static inline int plain_object(const aw_json_value *x) {
    return !(x->flags & (AW_JSON_F_DUPKEYS | AW_JSON_F_UNCHECKED));
}

/* A node that is only a `type`: checked without a call. */
static inline int type_only(const sc_node *n) { return n->type_only; }

static inline int type_ok(const sc_node *n, const aw_json_value *x) {
    if ((n->json_ok >> x->type) & 1) return 1;
    return n->int_only && x->type == AW_JSON_NUMBER && aw__sc_num_is_integer(x);
}

static int props(sc_vctx *v, const sc_op *op, const aw_json_value *x, int depth) {
    if (x->type != AW_JSON_OBJECT) return 1;
    if (!plain_object(x)) return NOT_HERE;
    uint64_t seen = 0;
    for (size_t i = 0; i < x->u.obj.count; i++) {
        const aw_json_member *m = &x->u.obj.members[i];
        int matched = 0, r;
        const sc_prop *p = aw__sc_find_prop(op, m->key, m->key_len);
        if (p) {
            matched = 1;
            size_t index = (size_t)(p - op->u.props.props);
            if (index < 64) seen |= (uint64_t)1 << index;
            const sc_node *child = p->child.node;
            if (type_only(child)) {
                if (!type_ok(child, &m->value)) return 0;
            } else if ((r = fast(v, child, &m->value, depth + 1)) != 1) {
                return r;
            }
        }
        for (uint32_t k = 0; k < op->u.props.npatterns; k++) {
            int hit = aw__sc_regex_match(op->u.props.patterns[k], m->key, m->key_len, &v->state->md, v->s);
            if (hit < 0) return hit == AW_ENOMEM ? NOT_HERE : 0;
            if (!hit) continue;
            matched = 1;
            if ((r = fast(v, op->u.props.pattern_children[k].node, &m->value, depth + 1)) != 1) return r;
        }
        if (!matched && op->u.props.additional.node &&
            (r = fast(v, op->u.props.additional.node, &m->value, depth + 1)) != 1)
            return r;
    }
    /* the node's required names, when they are all properties */
    return (seen & op->u.props.required_mask) == op->u.props.required_mask;
}

static int op_fast(sc_vctx *v, const sc_op *op, const aw_json_value *x, int depth) {
    int r, count = 0;
    switch ((sc_op_kind)op->kind) {
    case OP_DYNREF:
        /* without a dynamic anchor to look for, it is a $ref */
        if (op->u.dynref.anchor.len) return NOT_HERE;
        return fast(v, op->children[0].node, x, depth + 1);
    case OP_REF: return fast(v, op->children[0].node, x, depth + 1);
    case OP_ALLOF:
        for (uint32_t i = 0; i < op->count; i++)
            if ((r = fast(v, op->children[i].node, x, depth + 1)) != 1) return r;
        return 1;
    case OP_ANYOF:
        for (uint32_t i = 0; i < op->count; i++) {
            if ((r = fast(v, op->children[i].node, x, depth + 1)) < 0) return r;
            if (r) return 1;
        }
        return 0;
    case OP_ONEOF:
        for (uint32_t i = 0; i < op->count && count < 2; i++) {
            if ((r = fast(v, op->children[i].node, x, depth + 1)) < 0) return r;
            count += r;
        }
        return count == 1;
    case OP_NOT:
        if ((r = fast(v, op->children[0].node, x, depth + 1)) < 0) return r;
        return !r;
    case OP_IF: {
        if ((r = fast(v, op->children[0].node, x, depth + 1)) < 0) return r;
        const sc_node *branch = op->children[r ? 1 : 2].node;
        return branch ? fast(v, branch, x, depth + 1) : 1;
    }
    case OP_DEPSCHEMAS:
        if (x->type != AW_JSON_OBJECT) return 1;
        for (uint32_t i = 0; i < op->count; i++) {
            if (!aw__sc_has_key(v, x, op->u.names[i].ptr, op->u.names[i].len)) continue;
            if ((r = fast(v, op->children[i].node, x, depth + 1)) != 1) return r;
        }
        return 1;
    case OP_PROPS: return props(v, op, x, depth);
    case OP_PROPNAMES:
        if (x->type != AW_JSON_OBJECT) return 1;
        if (!plain_object(x)) return NOT_HERE;
        for (size_t i = 0; i < x->u.obj.count; i++) {
            aw_json_value name;
            memset(&name, 0, sizeof name);
            name.type = AW_JSON_STRING;
            name.u.str.ptr = x->u.obj.members[i].key;
            name.u.str.len = x->u.obj.members[i].key_len;
            if ((r = fast(v, op->children[0].node, &name, depth + 1)) != 1) return r;
        }
        return 1;
    case OP_ITEMS: {
        if (x->type != AW_JSON_ARRAY) return 1;
        uint32_t np = op->u.items.nprefix;
        size_t n = x->u.arr.count;
        if (n > np && !op->u.items.has_rest) n = np;
        const aw_json_value *items = x->u.arr.items;
        size_t i = 0;
        for (; i < n && i < np; i++)
            if ((r = fast(v, op->children[i].node, &items[i], depth + 1)) != 1) return r;
        if (i == n) return 1;
        /* the rest: one schema for every item, often only a type */
        const sc_node *rest = op->children[np].node;
        if (rest->trivial) return 1;
        if (type_only(rest)) {
            for (; i < n; i++)
                if (!type_ok(rest, &items[i])) return 0;
            return 1;
        }
        for (; i < n; i++)
            if ((r = fast(v, rest, &items[i], depth + 1)) != 1) return r;
        return 1;
    }
    case OP_CONTAINS: {
        if (x->type != AW_JSON_ARRAY) return 1;
        uint64_t matches = 0;
        for (size_t i = 0; i < x->u.arr.count; i++) {
            if ((r = fast(v, op->children[0].node, &x->u.arr.items[i], depth + 1)) < 0) return r;
            matches += (uint64_t)r;
            if (!op->u.contains.has_max && matches >= op->u.contains.min) return 1;
        }
        return matches >= op->u.contains.min && (!op->u.contains.has_max || matches <= op->u.contains.max);
    }
    default: return NOT_HERE; /* unevaluated*: annotations */
    }
}

static int fast(sc_vctx *v, const sc_node *n, const aw_json_value *x, int depth) {
    if (n->trivial) return 1;
    if (n->is_false) return 0;
    if (depth > FAST_DEPTH || n->uneval) return NOT_HERE;
    uint32_t a = n->asserts;
    if (a & A_TYPE) {
        if (!type_ok(n, x)) return 0;
        a &= ~(uint32_t)A_TYPE;
    }
    /* required names that are all properties: the properties pass checks them */
    if ((a & A_REQUIRED) && n->required_by_props && x->type == AW_JSON_OBJECT && plain_object(x)) a &= ~(uint32_t)A_REQUIRED;
    if (a) {
        int ok;
        if (aw__sc_check_some(v, 0, &quiet, n, x, a, &ok)) return NOT_HERE;
        if (!ok) return 0;
    }
    for (uint16_t i = 0; i < n->nops; i++) {
        int r = op_fast(v, &n->ops[i], x, depth);
        if (r != 1) return r;
    }
    return 1;
}

int aw__sc_fast_verdict(sc_vctx *v, const aw_json_value *instance) { return fast(v, v->s->root, instance, 0); }
