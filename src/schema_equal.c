/* JSON equality for `const`, `enum` and `uniqueItems`, and a hash that
 * agrees with it, so that long enums and long arrays are checked in linear
 * time. Numbers are equal when their decimal values are (1 == 1.0 ==
 * 1e0); objects when they have the same keys (the last of duplicate keys
 * counting, as JSON.parse reads them) with equal values. Neither walk
 * recurses on the C stack: nesting is the document's to choose. */
#include <stddef.h>
#include <string.h>

#include "internal/schema.h"
#include "internal/strmap.h"
#include "internal/walk_stack.h"

uint64_t aw__sc_bytes_hash(const char *s, size_t n) { return aw__text_hash((aw_text){s, n}); }

uint8_t aw__sc_type_bits(const aw_json_value *v) {
    switch (v->type) {
    case AW_JSON_NULL: return T_NULL;
    case AW_JSON_BOOL: return T_BOOL;
    case AW_JSON_NUMBER: return (uint8_t)(T_NUM | (aw__sc_num_is_integer(v) ? T_INT : 0));
    case AW_JSON_STRING: return T_STR;
    case AW_JSON_ARRAY: return T_ARR;
    default: return T_OBJ;
    }
}

static inline int has_dups(const aw_json_value *o) {
    return (o->flags & (AW_JSON_F_DUPKEYS | AW_JSON_F_UNCHECKED)) != 0;
}

/* ---- a key index of one object: the last member of each key ------------- */

typedef struct key_index {
    uint32_t *slots; /* member index + 1 */
    uint32_t mask;
    size_t distinct;
} key_index;

static int key_index_build(const aw_json_value *o, const aw_allocator *alloc, key_index *ix) {
    size_t n = o->u.obj.count, cap = 16;
    while (cap < 2 * n) cap *= 2;
    ix->slots = aw_malloc(alloc, cap * sizeof *ix->slots);
    if (!ix->slots) return AW_ENOMEM;
    memset(ix->slots, 0, cap * sizeof *ix->slots);
    ix->mask = (uint32_t)(cap - 1);
    ix->distinct = 0;
    for (size_t i = 0; i < n; i++) {
        const aw_json_member *m = &o->u.obj.members[i];
        size_t h = (size_t)aw__sc_bytes_hash(m->key, m->key_len) & ix->mask;
        for (;;) {
            uint32_t s = ix->slots[h];
            if (!s) {
                ix->slots[h] = (uint32_t)i + 1;
                ix->distinct++;
                break;
            }
            const aw_json_member *k = &o->u.obj.members[s - 1];
            if (k->key_len == m->key_len && !memcmp(k->key, m->key, m->key_len)) {
                ix->slots[h] = (uint32_t)i + 1; /* the later one wins */
                break;
            }
            h = (h + 1) & ix->mask;
        }
    }
    return 0;
}

static const aw_json_member *key_index_get(const aw_json_value *o, const key_index *ix, const char *key, size_t n) {
    size_t h = (size_t)aw__sc_bytes_hash(key, n) & ix->mask;
    for (;;) {
        uint32_t s = ix->slots[h];
        if (!s) return NULL;
        const aw_json_member *k = &o->u.obj.members[s - 1];
        if (k->key_len == n && !memcmp(k->key, key, n)) return k;
        h = (h + 1) & ix->mask;
    }
}

long aw__sc_effective_members(const aw_json_value *obj, const aw_allocator *alloc, uint32_t *idx) {
    size_t n = obj->u.obj.count;
    if (!has_dups(obj)) {
        for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
        return (long)n;
    }
    key_index ix;
    if (key_index_build(obj, alloc, &ix)) return -1;
    long k = 0;
    for (size_t i = 0; i < n; i++) {
        const aw_json_member *m = &obj->u.obj.members[i];
        if (key_index_get(obj, &ix, m->key, m->key_len) == m) idx[k++] = (uint32_t)i;
    }
    aw_free(alloc, ix.slots);
    return k;
}

/* ---- equality --------------------------------------------------------------- */

static int scalar_equal(const aw_json_value *a, const aw_json_value *b) {
    switch (a->type) {
    case AW_JSON_NULL: return 1;
    case AW_JSON_BOOL: return a->u.b == b->u.b;
    case AW_JSON_NUMBER: return aw__sc_num_cmp(a, b) == 0;
    case AW_JSON_STRING: return a->u.str.len == b->u.str.len && !memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len);
    default: return -1; /* a container */
    }
}

typedef struct eq_frame {
    const aw_json_value *a, *b;
    size_t i;
    key_index aix, bix; /* the keys of objects */
    int indexed;
} eq_frame;

#define EQ_LOCAL 16

int aw__sc_equal(const aw_json_value *a, const aw_json_value *b, const aw_allocator *alloc) {
    if (a->type != b->type) return 0;
    int s = scalar_equal(a, b);
    if (s >= 0) return s;
    eq_frame local[EQ_LOCAL], *st = local;
    size_t cap = EQ_LOCAL, top = 0;
    int result = 1;
    st[0] = (eq_frame){a, b, 0, {0}, {0}, 0};
    top = 1;
    while (top) {
        eq_frame *f = &st[top - 1];
        const aw_json_value *x = NULL, *y = NULL;
        if (f->a->type == AW_JSON_ARRAY) {
            if (f->i == 0 && f->a->u.arr.count != f->b->u.arr.count) {
                result = 0;
                break;
            }
            if (f->i < f->a->u.arr.count) {
                x = &f->a->u.arr.items[f->i];
                y = &f->b->u.arr.items[f->i];
                f->i++;
            }
        } else {
            if (f->i == 0 && !f->indexed) {
                if (key_index_build(f->a, alloc, &f->aix)) {
                    result = AW_ENOMEM;
                    break;
                }
                if (key_index_build(f->b, alloc, &f->bix)) {
                    aw_free(alloc, f->aix.slots);
                    result = AW_ENOMEM;
                    break;
                }
                f->indexed = 1;
                if (f->aix.distinct != f->bix.distinct) {
                    result = 0;
                    break;
                }
            }
            while (f->i < f->a->u.obj.count) {
                const aw_json_member *m = &f->a->u.obj.members[f->i++];
                /* a member overridden by a later duplicate is not compared */
                if (has_dups(f->a) && key_index_get(f->a, &f->aix, m->key, m->key_len) != m) continue;
                const aw_json_member *other = key_index_get(f->b, &f->bix, m->key, m->key_len);
                if (!other) {
                    result = 0;
                    break;
                }
                x = &m->value;
                y = &other->value;
                break;
            }
            if (!result) break;
        }
        if (!x) {
            if (f->indexed) {
                aw_free(alloc, f->aix.slots);
                aw_free(alloc, f->bix.slots);
            }
            top--;
            continue;
        }
        if (x->type != y->type) {
            result = 0;
            break;
        }
        s = scalar_equal(x, y);
        if (s == 0) {
            result = 0;
            break;
        }
        if (s > 0) continue;
        if (top == cap) {
            eq_frame *g = aw__walk_stack_grow(alloc, st, local, &cap, sizeof *st);
            if (!g) {
                result = AW_ENOMEM;
                break;
            }
            st = g;
        }
        st[top++] = (eq_frame){x, y, 0, {0}, {0}, 0};
    }
    for (size_t k = 0; k < top; k++)
        if (st[k].indexed) {
            aw_free(alloc, st[k].aix.slots);
            aw_free(alloc, st[k].bix.slots);
        }
    if (st != local) aw_free(alloc, st);
    return result;
}

/* ---- hashing ------------------------------------------------------------------ */

static inline uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 33);
}

static uint64_t scalar_hash(const aw_json_value *v) {
    switch (v->type) {
    case AW_JSON_NULL: return 0x6E756C6Cull;
    case AW_JSON_BOOL: return v->u.b ? 0x74727565ull : 0x66616C73ull;
    case AW_JSON_NUMBER: {
        /* equal decimals have equal doubles */
        double d = v->u.num.d;
        if (d == 0) d = 0; /* -0 */
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        return mix(bits ^ 0x6E756D00ull);
    }
    default: return aw__sc_bytes_hash(v->u.str.ptr, v->u.str.len);
    }
}

typedef struct h_frame {
    const aw_json_value *v;
    size_t i;
    uint64_t acc;
    key_index ix; /* an object with duplicate keys: which member counts */
    int indexed;
} h_frame;

int aw__sc_hash(const aw_json_value *root, const aw_allocator *alloc, uint64_t *out) {
    if (root->type != AW_JSON_ARRAY && root->type != AW_JSON_OBJECT) {
        *out = scalar_hash(root);
        return 0;
    }
    h_frame local[EQ_LOCAL], *st = local;
    size_t cap = EQ_LOCAL, top = 1;
    st[0] = (h_frame){root, 0, 0, {0}, 0};
    uint64_t done = 0;
    int rc = 0;
    while (top) {
        h_frame *f = &st[top - 1];
        const aw_json_value *child = NULL;
        if (f->v->type == AW_JSON_ARRAY) {
            if (f->i < f->v->u.arr.count) child = &f->v->u.arr.items[f->i++];
        } else {
            if (f->i == 0 && has_dups(f->v) && !f->indexed) {
                if (key_index_build(f->v, alloc, &f->ix)) {
                    rc = AW_ENOMEM;
                    break;
                }
                f->indexed = 1;
            }
            while (f->i < f->v->u.obj.count) {
                const aw_json_member *m = &f->v->u.obj.members[f->i++];
                if (f->indexed && key_index_get(f->v, &f->ix, m->key, m->key_len) != m) continue;
                child = &m->value;
                break;
            }
        }
        uint64_t h;
        if (child) {
            if (child->type == AW_JSON_ARRAY || child->type == AW_JSON_OBJECT) {
                if (top == cap) {
                    h_frame *g = aw__walk_stack_grow(alloc, st, local, &cap, sizeof *st);
                    if (!g) {
                        rc = AW_ENOMEM;
                        break;
                    }
                    st = g;
                }
                st[top++] = (h_frame){child, 0, 0, {0}, 0};
                continue;
            }
            h = scalar_hash(child);
        } else {
            /* the container is done */
            h = mix(f->acc ^ (f->v->type == AW_JSON_ARRAY ? 0xA11A7ull : 0x0B1ECull));
            if (f->indexed) aw_free(alloc, f->ix.slots);
            top--;
            if (!top) {
                done = h;
                break;
            }
            child = f->v;
            f = &st[top - 1];
        }
        /* fold the child's hash into its container: in order for arrays,
         * in any order for objects (key order does not matter) */
        if (f->v->type == AW_JSON_ARRAY) {
            f->acc = mix(f->acc * 31 + h);
        } else {
            const aw_json_member *m = (const aw_json_member *)((const char *)child - offsetof(aw_json_member, value));
            f->acc += mix(aw__sc_bytes_hash(m->key, m->key_len) ^ (h * 0x9E3779B97F4A7C15ull));
        }
    }
    for (size_t k = 0; k < top; k++)
        if (st[k].indexed) aw_free(alloc, st[k].ix.slots);
    if (st != local) aw_free(alloc, st);
    if (!rc) *out = done;
    return rc;
}

/* ---- enum and uniqueItems -------------------------------------------------------- */

#define SHORT_LIST 8

int aw__sc_enum_build(sc_enum *e, aw_arena *arena, const aw_allocator *alloc) {
    size_t n = e->values->u.arr.count;
    e->types = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t t = aw__sc_type_bits(&e->values->u.arr.items[i]);
        e->types |= (t & T_NUM) ? (T_NUM | T_INT) : t;
    }
    if (n <= SHORT_LIST) return 0;
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    e->slots = aw__arena_alloc(arena, cap * sizeof *e->slots);
    if (!e->slots) return AW_ENOMEM;
    memset(e->slots, 0, cap * sizeof *e->slots);
    e->mask = (uint32_t)(cap - 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t h;
        if (aw__sc_hash(&e->values->u.arr.items[i], alloc, &h)) return AW_ENOMEM;
        size_t k = (size_t)h & e->mask;
        while (e->slots[k]) k = (k + 1) & e->mask;
        e->slots[k] = (uint32_t)i + 1;
    }
    return 0;
}

int aw__sc_enum_has(const sc_enum *e, const aw_json_value *v, const aw_allocator *alloc) {
    uint8_t t = v->type == AW_JSON_NUMBER ? T_NUM : aw__sc_type_bits(v);
    if (!(e->types & t)) return 0;
    const aw_json_value *vals = e->values->u.arr.items;
    if (!e->slots) {
        for (size_t i = 0; i < e->values->u.arr.count; i++) {
            if (vals[i].type != v->type) continue;
            int r = aw__sc_equal(&vals[i], v, alloc);
            if (r) return r;
        }
        return 0;
    }
    uint64_t h;
    if (aw__sc_hash(v, alloc, &h)) return AW_ENOMEM;
    size_t k = (size_t)h & e->mask;
    while (e->slots[k]) {
        const aw_json_value *c = &vals[e->slots[k] - 1];
        if (c->type == v->type) {
            int r = aw__sc_equal(c, v, alloc);
            if (r) return r;
        }
        k = (k + 1) & e->mask;
    }
    return 0;
}

int aw__sc_unique(const aw_json_value *arr, const aw_allocator *alloc, size_t *pi, size_t *pj) {
    size_t n = arr->u.arr.count;
    const aw_json_value *it = arr->u.arr.items;
    if (n <= SHORT_LIST) {
        for (size_t j = 1; j < n; j++)
            for (size_t i = 0; i < j; i++) {
                if (it[i].type != it[j].type) continue;
                int r = aw__sc_equal(&it[i], &it[j], alloc);
                if (r < 0) return r;
                if (r) {
                    *pi = i, *pj = j;
                    return 0;
                }
            }
        return 1;
    }
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    uint32_t *slots = aw_malloc(alloc, cap * sizeof *slots);
    uint64_t *hashes = aw_malloc(alloc, n * sizeof *hashes);
    int result = 1;
    if (!slots || !hashes) {
        result = AW_ENOMEM;
        goto out;
    }
    memset(slots, 0, cap * sizeof *slots);
    for (size_t j = 0; j < n && result == 1; j++) {
        if (aw__sc_hash(&it[j], alloc, &hashes[j])) {
            result = AW_ENOMEM;
            break;
        }
        size_t k = (size_t)hashes[j] & (cap - 1);
        while (slots[k]) {
            size_t i = slots[k] - 1;
            if (hashes[i] == hashes[j] && it[i].type == it[j].type) {
                int r = aw__sc_equal(&it[i], &it[j], alloc);
                if (r < 0) {
                    result = r;
                    break;
                }
                if (r) {
                    *pi = i, *pj = j;
                    result = 0;
                    break;
                }
            }
            k = (k + 1) & (cap - 1);
        }
        if (result == 1) slots[k] = (uint32_t)j + 1;
    }
out:
    aw_free(alloc, slots);
    aw_free(alloc, hashes);
    return result;
}
