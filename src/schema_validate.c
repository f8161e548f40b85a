/* Validating an instance: an explicit stack of frames, one per schema
 * being applied to one instance location, so that neither the schema's
 * nesting nor the instance's grows the C stack. A frame checks its node's
 * assertions (schema_assert.c), then runs its ops one by one; an op that
 * needs a subschema applied either checks it in place (a node with no ops
 * of its own, the common case for properties and items) or pushes a frame
 * and is resumed with the child's verdict when that frame is done.
 *
 * Annotations for unevaluatedProperties / unevaluatedItems are bitsets
 * over the instance's members or items, kept on a stack beside the
 * frames, and only by the frames that need them: a node with an
 * unevaluated* keyword and the subschemas applied in place below it. A
 * child that passes ORs its bits into its parent's.
 *
 * Errors are recorded only where they can be reported (not under `not`,
 * `if` or `contains`, whose failures are expected); the errors of anyOf /
 * oneOf branches are taken back when the keyword passes after all. With
 * no errors wanted every frame stops at its first failure. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/schema_eval.h"
#include "internal/walk_stack.h"

#define DEFAULT_MAX_DEPTH 100000

/* ---- the stacks ---------------------------------------------------------------- */

static int ann_reserve(sc_vctx *v, size_t words) {
    while (v->ann_top + words > v->ann_cap) {
        uint64_t *g = aw__walk_stack_grow(v->alloc, v->ann, v->ann_local, &v->ann_cap, sizeof *v->ann);
        if (!g) return AW_ENOMEM;
        v->ann = g;
    }
    return 0;
}

/* Push a frame for node at instance inst, reached from the top frame
 * through edge (its keyword segment) and instance segment seg. */
static int push(sc_vctx *v, const sc_node *node, const aw_json_value *inst, const sc_child *edge, const sc_loc *seg,
                unsigned flags) {
    if (v->top >= v->max_depth) {
        v->limit_hit = 1;
        return AW_ELIMIT;
    }
    if (v->top == v->cap) {
        sc_frame *g = aw__walk_stack_grow(v->alloc, v->st, v->local, &v->cap, sizeof *v->st);
        if (!g) return AW_ENOMEM;
        v->st = g;
    }
    if (node->uneval & 1) flags |= F_PROPS;
    if (node->uneval & 2) flags |= F_ITEMS;
    sc_frame *f = &v->st[v->top];
    memset(f, 0, sizeof *f);
    f->node = node;
    f->inst = inst;
    f->flags = (uint8_t)flags;
    f->valid = 1;
    if (edge) {
        f->kw_seg = edge->seg;
        f->kw_len = edge->seg_len;
    }
    if (seg) {
        f->seg = seg->seg;
        f->key = seg->key;
        f->key_len = seg->key_len;
        f->index = seg->index;
    }
    f->ann = (uint32_t)v->ann_top;
    if ((flags & F_PROPS) && inst->type == AW_JSON_OBJECT) f->ann_words = (uint32_t)((inst->u.obj.count + 63) / 64);
    if ((flags & F_ITEMS) && inst->type == AW_JSON_ARRAY) f->ann_words = (uint32_t)((inst->u.arr.count + 63) / 64);
    if (f->ann_words) {
        if (ann_reserve(v, f->ann_words)) return AW_ENOMEM;
        memset(v->ann + v->ann_top, 0, f->ann_words * sizeof *v->ann);
        v->ann_top += f->ann_words;
    }
    if (flags & F_SPEC) v->spec_depth++;
    v->top++;
    return 0;
}

/* The top frame is done: hand its verdict (and, when it passed, its
 * annotations) to its parent. */
static void pop(sc_vctx *v) {
    sc_frame *f = &v->st[v->top - 1];
    if (f->flags & F_SPEC) v->spec_depth--;
    if (v->top >= 2) {
        sc_frame *p = &v->st[v->top - 2];
        if (f->valid && f->ann_words && p->ann_words == f->ann_words && p->inst == f->inst) {
            uint64_t *src = v->ann + f->ann, *dst = v->ann + p->ann;
            for (uint32_t i = 0; i < f->ann_words; i++) dst[i] |= src[i];
        }
        p->child_valid = f->valid;
        p->waiting = 0;
    } else {
        v->root_valid = f->valid;
    }
    v->ann_top = f->ann;
    v->top--;
}

void aw__sc_mark(sc_vctx *v, sc_frame *f, size_t i) {
    if (f->ann_words) v->ann[f->ann + i / 64] |= (uint64_t)1 << (i % 64);
}

static int marked(const sc_vctx *v, const sc_frame *f, size_t i) {
    return (v->ann[f->ann + i / 64] >> (i % 64)) & 1;
}

/* ---- applying a child: in place, or as a new frame ------------------------------- */

enum { APPLIED = 0, PUSHED = 1 };

/* Apply child to inst below frame f (the top frame). APPLIED with *ok, or
 * PUSHED (f->waiting set; the verdict arrives in f->child_valid), or a
 * negative code. Children with no ops are checked here without a frame. */
static int apply(sc_vctx *v, sc_frame *f, const sc_child *child, const aw_json_value *inst, const sc_loc *seg,
                 unsigned flags, int *ok) {
    const sc_node *n = child->node;
    if (n->trivial) {
        *ok = 1;
        return APPLIED;
    }
    if (!n->nops && !n->uneval) {
        sc_loc loc = seg ? *seg : (sc_loc){0};
        loc.kw_seg = child->seg;
        loc.kw_len = child->seg_len;
        loc.crossed = (flags & F_REF) != 0;
        loc.errors = (flags & F_ERRORS) != 0;
        return aw__sc_check(v, (size_t)(f - v->st), &loc, n, inst, ok);
    }
    int rc = push(v, n, inst, child, seg, flags);
    if (rc) return rc;
    /* f may have moved with the stack: the caller must not touch it now */
    v->st[v->top - 2].waiting = 1;
    v->st[v->top - 2].waiting_done = 1;
    return PUSHED;
}

/* Flags a child applied in place inherits; one at another instance
 * location keeps only the wish for errors and the $ref crossing. */
static unsigned in_place_flags(const sc_frame *f) { return f->flags & (F_ERRORS | F_PROPS | F_ITEMS | F_REF); }
static unsigned moved_flags(const sc_frame *f) { return f->flags & (F_ERRORS | F_REF); }

/* The errors of failed branches are taken back. */
static void retract(sc_vctx *v, const sc_frame *f) {
    v->r->error_count = f->err_mark;
    v->dropped = f->dropped_mark;
}

/* ---- object and array helpers ---------------------------------------------------------- */

/* Members of an object that count (the last of duplicate keys), as an
 * array of indexes in the scratch arena, or NULL when every member does. */
static int effective(sc_vctx *v, sc_frame *f) {
    const aw_json_value *o = f->inst;
    if (f->eff_done) return 0;
    f->eff_done = 1;
    if (!(o->flags & (AW_JSON_F_DUPKEYS | AW_JSON_F_UNCHECKED))) {
        f->eff_count = (uint32_t)o->u.obj.count;
        return 0;
    }
    uint32_t *idx = aw__arena_alloc(&v->state->scratch, (o->u.obj.count ? o->u.obj.count : 1) * sizeof *idx);
    if (!idx) return AW_ENOMEM;
    long n = aw__sc_effective_members(o, v->alloc, idx);
    if (n < 0) return AW_ENOMEM;
    f->eff = idx;
    f->eff_count = (uint32_t)n;
    return 0;
}

static inline uint32_t member_at(const sc_frame *f, uint32_t k) { return f->eff ? f->eff[k] : k; }

static sc_loc key_loc(const aw_json_member *m) {
    sc_loc l = {0};
    l.seg = SEG_KEY;
    l.key = m->key;
    l.key_len = (uint32_t)m->key_len;
    return l;
}

static sc_loc index_loc(size_t i) {
    sc_loc l = {0};
    l.seg = SEG_INDEX;
    l.index = i;
    return l;
}

/* A child verdict: record failure in f; 1 when f should stop now. */
static int note(sc_frame *f, int ok) {
    if (!ok) f->valid = 0;
    return !ok && !(f->flags & F_ERRORS);
}

/* ---- the ops ------------------------------------------------------------------------------- */

enum { OP_DONE = 0, OP_PUSHED = 1 };

/* $ref and $dynamicRef. */
static int op_ref(sc_vctx *v, sc_frame *f, const sc_op *op) {
    if (f->waiting_done) {
        note(f, f->child_valid);
        return OP_DONE;
    }
    sc_child target = op->children[0];
    if (op->kind == OP_DYNREF && op->u.dynref.anchor.len) {
        /* the outermost resource in the dynamic scope with this dynamic anchor */
        const aw_text *want = &op->u.dynref.anchor;
        const sc_resource *seen = NULL;
        int found = 0;
        for (size_t i = 0; i < v->top && !found; i++) {
            const sc_resource *r = v->st[i].node->res;
            if (r == seen) continue;
            seen = r;
            for (uint32_t k = 0; k < r->ndyn; k++)
                if (r->dyn[k].name.len == want->len && !memcmp(r->dyn[k].name.ptr, want->ptr, want->len)) {
                    target.node = r->dyn[k].node;
                    found = 1;
                    break;
                }
        }
    }
    int ok;
    int rc = apply(v, f, &target, f->inst, NULL, in_place_flags(f) | F_REF, &ok);
    if (rc == PUSHED) return OP_PUSHED;
    if (rc < 0) return rc;
    note(f, ok);
    return OP_DONE;
}

static int op_all_of(sc_vctx *v, sc_frame *f, const sc_op *op) {
    if (f->waiting_done) {
        f->waiting_done = 0;
        if (note(f, f->child_valid)) return OP_DONE;
    }
    while (f->sub < op->count) {
        int ok;
        int rc = apply(v, f, &op->children[f->sub++], f->inst, NULL, in_place_flags(f), &ok);
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
        if (note(f, ok)) return OP_DONE;
    }
    return OP_DONE;
}

/* anyOf (one = 0) and oneOf (one = 1). */
static int op_some_of(sc_vctx *v, sc_frame *f, const sc_op *op, int one) {
    int collecting = f->ann_words != 0;
    if (f->sub == 0 && !f->waiting_done) {
        f->err_mark = v->r->error_count;
        f->dropped_mark = v->dropped;
    }
    for (;;) {
        if (f->waiting_done) {
            f->waiting_done = 0;
            if (f->child_valid) {
                if (!f->count) f->phase = f->sub - 1;
                else f->phase2 = f->sub - 1;
                f->count++;
            }
        }
        int enough = one ? f->count >= 2 : (f->count >= 1 && !collecting);
        if (enough || f->sub >= op->count) break;
        unsigned flags = in_place_flags(f) | ((f->flags & F_ERRORS) ? F_SPEC : 0);
        int ok;
        int rc = apply(v, f, &op->children[f->sub++], f->inst, NULL, flags, &ok);
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
        if (ok) {
            if (!f->count) f->phase = f->sub - 1;
            else f->phase2 = f->sub - 1;
            f->count++;
        }
    }
    int good = one ? f->count == 1 : f->count >= 1;
    if (good || (one && f->count > 1)) retract(v, f);
    if (good) return OP_DONE;
    f->valid = 0;
    if (!(f->flags & F_ERRORS)) return OP_DONE;
    if (!one) return aw__sc_error(v, f, NULL, f->node, "anyOf", "matches none of the %u anyOf schemas", op->count);
    if (f->count == 0) return aw__sc_error(v, f, NULL, f->node, "oneOf", "matches none of the %u oneOf schemas", op->count);
    return aw__sc_error(v, f, NULL, f->node, "oneOf", "matches oneOf schemas %u and %u; exactly one must match", f->phase,
                        f->phase2);
}

static int op_not(sc_vctx *v, sc_frame *f, const sc_op *op) {
    int ok;
    if (f->waiting_done) {
        ok = f->child_valid;
    } else {
        int rc = apply(v, f, &op->children[0], f->inst, NULL, f->flags & F_REF, &ok);
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
    }
    if (!ok) return OP_DONE;
    f->valid = 0;
    if (!(f->flags & F_ERRORS)) return OP_DONE;
    return aw__sc_error(v, f, NULL, f->node, "not", "must not match the schema in \"not\"");
}

static int op_if(sc_vctx *v, sc_frame *f, const sc_op *op) {
    int ok;
    for (;;) {
        if (f->waiting_done) {
            f->waiting_done = 0;
            ok = f->child_valid;
        } else if (f->phase == 0) {
            /* the condition: only its verdict (and annotations) matter */
            int rc = apply(v, f, &op->children[0], f->inst, NULL, f->flags & (F_PROPS | F_ITEMS | F_REF), &ok);
            if (rc == PUSHED) return OP_PUSHED;
            if (rc < 0) return rc;
        } else {
            return OP_DONE;
        }
        if (f->phase == 1) {
            note(f, ok);
            return OP_DONE;
        }
        f->phase = 1;
        const sc_child *branch = &op->children[ok ? 1 : 2];
        if (!branch->node) return OP_DONE;
        int rc = apply(v, f, branch, f->inst, NULL, in_place_flags(f), &ok);
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
        note(f, ok);
        return OP_DONE;
    }
}

static int op_dep_schemas(sc_vctx *v, sc_frame *f, const sc_op *op) {
    if (f->inst->type != AW_JSON_OBJECT) return OP_DONE;
    if (f->waiting_done) {
        f->waiting_done = 0;
        if (note(f, f->child_valid)) return OP_DONE;
    }
    while (f->sub < op->count) {
        const aw_text *name = &op->u.names[f->sub];
        const sc_child *child = &op->children[f->sub++];
        if (!aw__sc_has_key(v, f->inst, name->ptr, name->len)) continue;
        int ok;
        int rc = apply(v, f, child, f->inst, NULL, in_place_flags(f), &ok);
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
        if (note(f, ok)) return OP_DONE;
    }
    return OP_DONE;
}

/* A child that is `false` fails with a message saying what was not
 * allowed; others are applied. */
static int apply_or_refuse(sc_vctx *v, sc_frame *f, const sc_child *child, const aw_json_value *inst, const sc_loc *seg,
                           const char *what, int *ok) {
    if (child->node->is_false) {
        *ok = 0;
        if (!(f->flags & F_ERRORS)) return APPLIED;
        sc_loc loc = *seg;
        loc.kw_seg = child->seg;
        loc.kw_len = child->seg_len;
        loc.crossed = (f->flags & F_REF) != 0;
        int rc = seg->seg == SEG_KEY
                     ? aw__sc_error(v, f, &loc, child->node, NULL, "property \"%.*s\" is not allowed%s",
                                       (int)(seg->key_len > 60 ? 60 : seg->key_len), seg->key, what)
                     : aw__sc_error(v, f, &loc, child->node, NULL, "item %zu is not allowed%s", seg->index, what);
        return rc < 0 ? rc : APPLIED;
    }
    return apply(v, f, child, inst, seg, moved_flags(f), ok);
}

static int op_props(sc_vctx *v, sc_frame *f, const sc_op *op) {
    const aw_json_value *o = f->inst;
    if (o->type != AW_JSON_OBJECT) return OP_DONE;
    if (effective(v, f)) return AW_ENOMEM;
    int ok;
    if (f->waiting_done) {
        f->waiting_done = 0;
        if (note(f, f->child_valid)) return OP_DONE;
    }
    uint32_t npat = op->u.props.npatterns;
    while (f->sub < f->eff_count) {
        uint32_t mi = member_at(f, f->sub);
        const aw_json_member *m = &o->u.obj.members[mi];
        sc_loc seg = key_loc(m);
        int rc = APPLIED;
        ok = 1;
        /* phase 0: properties; 1..npat: the patterns; npat + 1: additional */
        if (f->phase == 0) {
            f->phase = 1;
            f->count = 0; /* matched */
            const sc_prop *p = aw__sc_find_prop(op, m->key, m->key_len);
            if (p) {
                f->count = 1;
                aw__sc_mark(v, f, mi);
                rc = apply_or_refuse(v, f, &p->child, &m->value, &seg, "", &ok);
            }
        } else if (f->phase <= npat) {
            const sc_regex *re = op->u.props.patterns[f->phase - 1];
            const sc_child *child = &op->u.props.pattern_children[f->phase - 1];
            f->phase++;
            int match = aw__sc_regex_match(re, m->key, m->key_len, &v->state->md, v->s);
            if (match == AW_ENOMEM) return AW_ENOMEM;
            if (match < 0) {
                f->valid = 0;
                if (f->flags & F_ERRORS) {
                    sc_loc loc = seg;
                    loc.kw_seg = child->seg;
                    loc.kw_len = child->seg_len;
                    loc.crossed = (f->flags & F_REF) != 0;
                    rc = aw__sc_regex_limit_error(v, f, &loc, child->node, re, match);
                    if (rc < 0) return rc;
                }
                if (!(f->flags & F_ERRORS)) return OP_DONE;
                continue;
            }
            if (match) {
                f->count = 1;
                aw__sc_mark(v, f, mi);
                rc = apply_or_refuse(v, f, child, &m->value, &seg, "", &ok);
            }
        } else {
            if (!f->count && op->u.props.additional.node) {
                aw__sc_mark(v, f, mi);
                rc = apply_or_refuse(v, f, &op->u.props.additional, &m->value, &seg, "", &ok);
            }
            f->phase = 0;
            f->sub++;
        }
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
        if (note(f, ok)) return OP_DONE;
    }
    return OP_DONE;
}

static int op_prop_names(sc_vctx *v, sc_frame *f, const sc_op *op) {
    const aw_json_value *o = f->inst;
    if (o->type != AW_JSON_OBJECT) return OP_DONE;
    if (effective(v, f)) return AW_ENOMEM;
    if (f->waiting_done) {
        f->waiting_done = 0;
        if (note(f, f->child_valid)) return OP_DONE;
    }
    while (f->sub < f->eff_count) {
        const aw_json_member *m = &o->u.obj.members[member_at(f, f->sub++)];
        aw_json_value *name = aw__arena_alloc(&v->state->scratch, sizeof *name);
        if (!name) return AW_ENOMEM;
        memset(name, 0, sizeof *name);
        name->type = AW_JSON_STRING;
        name->u.str.ptr = m->key;
        name->u.str.len = m->key_len;
        int ok;
        int rc = apply(v, f, &op->children[0], name, NULL, moved_flags(f), &ok);
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
        if (note(f, ok)) return OP_DONE;
    }
    return OP_DONE;
}

static int op_items(sc_vctx *v, sc_frame *f, const sc_op *op) {
    const aw_json_value *a = f->inst;
    if (a->type != AW_JSON_ARRAY) return OP_DONE;
    if (f->waiting_done) {
        f->waiting_done = 0;
        if (note(f, f->child_valid)) return OP_DONE;
    }
    uint32_t np = op->u.items.nprefix;
    while (f->sub < a->u.arr.count) {
        size_t i = f->sub;
        if (i >= np && !op->u.items.has_rest) break;
        const sc_child *child = &op->children[i < np ? i : np];
        f->sub++;
        aw__sc_mark(v, f, i);
        sc_loc seg = index_loc(i);
        int ok;
        int rc = apply_or_refuse(v, f, child, &a->u.arr.items[i], &seg, i < np ? "" : " (no items beyond the listed ones)", &ok);
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
        if (note(f, ok)) return OP_DONE;
    }
    return OP_DONE;
}

static int op_contains(sc_vctx *v, sc_frame *f, const sc_op *op) {
    const aw_json_value *a = f->inst;
    if (a->type != AW_JSON_ARRAY) return OP_DONE;
    uint64_t min = op->u.contains.min, max = op->u.contains.max;
    int has_max = op->u.contains.has_max, collecting = f->ann_words != 0;
    for (;;) {
        int ok;
        if (f->waiting_done) {
            f->waiting_done = 0;
            ok = f->child_valid;
        } else {
            if (f->sub >= a->u.arr.count) break;
            if (!has_max && !collecting && f->count >= min) break;
            sc_loc seg = index_loc(f->sub);
            f->sub++;
            int rc = apply(v, f, &op->children[0], &a->u.arr.items[f->sub - 1], &seg, f->flags & F_REF, &ok);
            if (rc == PUSHED) return OP_PUSHED;
            if (rc < 0) return rc;
        }
        if (ok) {
            f->count++;
            aw__sc_mark(v, f, f->sub - 1);
        }
    }
    if (f->count >= min && (!has_max || f->count <= max)) return OP_DONE;
    f->valid = 0;
    if (!(f->flags & F_ERRORS)) return OP_DONE;
    if (f->count < min) {
        if (min == 1) return aw__sc_error(v, f, NULL, f->node, "contains", "no item matches the \"contains\" schema");
        return aw__sc_error(v, f, NULL, f->node, "minContains", "%u items match the \"contains\" schema; at least %llu must",
                            f->count, (unsigned long long)min);
    }
    return aw__sc_error(v, f, NULL, f->node, "maxContains", "%u items match the \"contains\" schema; at most %llu may",
                        f->count, (unsigned long long)max);
}

static int op_unevaluated(sc_vctx *v, sc_frame *f, const sc_op *op) {
    const aw_json_value *x = f->inst;
    int props = op->kind == OP_UNEVAL_PROPS;
    if (props ? x->type != AW_JSON_OBJECT : x->type != AW_JSON_ARRAY) return OP_DONE;
    if (props && effective(v, f)) return AW_ENOMEM;
    if (f->waiting_done) {
        f->waiting_done = 0;
        if (note(f, f->child_valid)) return OP_DONE;
    }
    size_t n = props ? f->eff_count : x->u.arr.count;
    while (f->sub < n) {
        size_t i = props ? member_at(f, f->sub) : f->sub;
        f->sub++;
        if (marked(v, f, i)) continue;
        aw__sc_mark(v, f, i);
        sc_loc seg = props ? key_loc(&x->u.obj.members[i]) : index_loc(i);
        const aw_json_value *item = props ? &x->u.obj.members[i].value : &x->u.arr.items[i];
        int ok;
        int rc = apply_or_refuse(v, f, &op->children[0], item, &seg, " (not evaluated by any other keyword)", &ok);
        if (rc == PUSHED) return OP_PUSHED;
        if (rc < 0) return rc;
        if (note(f, ok)) return OP_DONE;
    }
    return OP_DONE;
}

static int run_op(sc_vctx *v, sc_frame *f, const sc_op *op) {
    switch ((sc_op_kind)op->kind) {
    case OP_REF:
    case OP_DYNREF: return op_ref(v, f, op);
    case OP_ALLOF: return op_all_of(v, f, op);
    case OP_ANYOF: return op_some_of(v, f, op, 0);
    case OP_ONEOF: return op_some_of(v, f, op, 1);
    case OP_NOT: return op_not(v, f, op);
    case OP_IF: return op_if(v, f, op);
    case OP_DEPSCHEMAS: return op_dep_schemas(v, f, op);
    case OP_PROPS: return op_props(v, f, op);
    case OP_PROPNAMES: return op_prop_names(v, f, op);
    case OP_ITEMS: return op_items(v, f, op);
    case OP_CONTAINS: return op_contains(v, f, op);
    case OP_UNEVAL_ITEMS:
    case OP_UNEVAL_PROPS: return op_unevaluated(v, f, op);
    }
    return OP_DONE;
}

/* Run the top frame until it pushes a child (1) or is done (0). */
static int step(sc_vctx *v) {
    sc_frame *f = &v->st[v->top - 1];
    const sc_node *n = f->node;
    if (!f->started) {
        f->started = 1;
        int ok = 1;
        if (n->is_false) {
            ok = 0;
            if (f->flags & F_ERRORS) {
                int rc = aw__sc_error(v, f, NULL, n, NULL, "no value is allowed here (the schema is false)");
                if (rc < 0) return rc;
            }
        } else if (n->asserts) {
            sc_loc loc = {0};
            loc.errors = (f->flags & F_ERRORS) != 0;
            loc.crossed = (f->flags & F_REF) != 0;
            loc.here = 1;
            int rc = aw__sc_check(v, v->top - 1, &loc, n, f->inst, &ok);
            if (rc < 0) return rc;
        }
        if (!ok) {
            f->valid = 0;
            if (!(f->flags & F_ERRORS)) return 0;
        }
    }
    while (f->op < n->nops) {
        int rc = run_op(v, f, &n->ops[f->op]);
        if (rc < 0) return rc;
        if (rc == OP_PUSHED) return 1;
        f->op++;
        f->sub = f->phase = f->phase2 = f->count = 0;
        f->waiting_done = 0;
        if (!f->valid && !(f->flags & F_ERRORS)) return 0;
        if (v->abort) return 0;
    }
    return 0;
}

/* ---- results ----------------------------------------------------------------------------------- */

void aw_schema_result_init(aw_schema_result *r, const aw_allocator *alloc) {
    if (!r) return;
    memset(r, 0, sizeof *r);
    r->alloc_ = alloc;
}

void aw_schema_result_free(aw_schema_result *r) {
    if (!r) return;
    sc_state *st = r->state_;
    if (st) {
        if (st->md) pcre2_match_data_free(st->md);
        aw__arena_free(&st->arena);
        aw__arena_free(&st->scratch);
        aw_free(r->alloc_, st);
    }
    aw_free(r->alloc_, r->errors);
    const aw_allocator *alloc = r->alloc_;
    memset(r, 0, sizeof *r);
    r->alloc_ = alloc;
}

/* Only what was used is reset: most validations use neither arena. */
static inline void arena_clear(aw_arena *a) {
    if (a->head && (a->head->used || a->head->next)) aw__arena_reset(a);
}

static inline int state_of(aw_schema_result *r, sc_state **out) {
    if (!r->state_) {
        sc_state *st = aw_malloc(r->alloc_, sizeof *st);
        if (!st) return AW_ENOMEM;
        memset(st, 0, sizeof *st);
        aw__arena_init(&st->arena, r->alloc_);
        aw__arena_init(&st->scratch, r->alloc_);
        r->state_ = st;
    }
    sc_state *st = r->state_;
    arena_clear(&st->arena);
    arena_clear(&st->scratch);
    st->kidx_obj = NULL;
    *out = st;
    return 0;
}

static char *state_str(sc_state *st, const char *s) {
    size_t n = strlen(s);
    char *p = aw__arena_alloc(&st->arena, n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

int aw__sc_result_add(aw_schema_result *r, const char *instance_location, const char *keyword_location,
                      const char *message, aw_error *err) {
    if (!r->state_) {
        sc_state *st;
        if (state_of(r, &st)) return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    sc_state *st = r->state_;
    aw_schema_error e = {state_str(st, instance_location), state_str(st, keyword_location), NULL, state_str(st, message),
                         strlen(instance_location), strlen(keyword_location), 0};
    if (!e.instance_location || !e.keyword_location || !e.message) return aw__error_set(err, AW_ENOMEM, "out of memory");
    if (r->error_count == st->errors_cap) {
        size_t cap = st->errors_cap ? 2 * st->errors_cap : 8;
        aw_schema_error *g = aw_realloc(r->alloc_, r->errors, cap * sizeof *g);
        if (!g) return aw__error_set(err, AW_ENOMEM, "out of memory");
        r->errors = g;
        st->errors_cap = cap;
    }
    r->errors[r->error_count++] = e;
    return 0;
}

/* The frame machine over the whole instance, its stacks starting here. */
static int validate_frames(sc_vctx *v, const aw_json_value *instance) {
    sc_frame local[SC_LOCAL_FRAMES];
    uint64_t ann_local[SC_LOCAL_ANN];
    v->st = v->local = local;
    v->cap = SC_LOCAL_FRAMES;
    v->ann = v->ann_local = ann_local;
    v->ann_cap = SC_LOCAL_ANN;
    int rc = push(v, v->s->root, instance, NULL, NULL, v->max_errors ? F_ERRORS : 0);
    while (!rc && v->top && !v->abort) {
        int pushed = step(v);
        if (pushed < 0) rc = pushed;
        else if (!pushed) pop(v);
    }
    /* with enough errors and none of them to be taken back, the verdict is in */
    if (v->abort && !rc) v->root_valid = 0;
    if (rc == AW_ELIMIT) aw__sc_limit_error(v, v->err);
    else if (rc) aw__error_set(v->err, rc, "%s", aw_strerror(rc));
    if (v->st != local) aw_free(v->alloc, v->st);
    if (v->ann != ann_local) aw_free(v->alloc, v->ann);
    v->st = NULL;
    return rc;
}

int aw_schema_validate(const aw_schema *s, const aw_json_value *instance, const aw_schema_validate_options *opts,
                       aw_schema_result *r, aw_error *err) {
    if (!s || !instance || !r) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    r->valid = false;
    r->error_count = 0;
    r->truncated = false;
    sc_vctx v;
    v.top = v.ann_top = v.dropped = v.spec_depth = 0;
    v.abort = v.limit_hit = v.root_valid = 0;
    v.s = s;
    v.r = r;
    v.alloc = r->alloc_;
    v.err = err;
    v.st = NULL;
    v.max_errors = opts ? opts->max_errors : AW_SCHEMA_DEFAULT_MAX_ERRORS;
    v.max_depth = opts && opts->max_depth ? opts->max_depth : DEFAULT_MAX_DEPTH;
    if (state_of(r, &v.state)) return aw__error_set(err, AW_ENOMEM, "out of memory");
    /* a valid instance, or any verdict when no errors are wanted, is
     * usually decided without frames; else the frames do it all */
    if (v.max_depth >= 64) {
        int verdict = aw__sc_fast_verdict(&v, instance);
        if (verdict == 1 || (verdict == 0 && !v.max_errors)) {
            r->valid = verdict == 1;
            return 0;
        }
    }
    int rc = validate_frames(&v, instance);
    if (rc) {
        r->error_count = 0;
        return rc;
    }
    r->valid = v.root_valid != 0;
    r->truncated = v.dropped > 0 || v.abort;
    return 0;
}
