/* Reading parsed values: lookup, equality, and the JSON.parse view of object
 * keys (duplicates and array-index keys) shared with the writer. */
#include <stdlib.h>
#include <string.h>

#include "internal/json.h"
#include "internal/walk_stack.h"

int aw__json_index_key(const char *key, size_t len, uint32_t *index) {
    if (len == 0 || len > 10) return 0;
    if (key[0] == '0') {
        if (len != 1) return 0;
        *index = 0;
        return 1;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (key[i] < '0' || key[i] > '9') return 0;
        v = v * 10 + (uint64_t)(key[i] - '0');
    }
    /* ECMAScript array indices stop at 2^32 - 2 */
    if (v >= 4294967295ull) return 0;
    *index = (uint32_t)v;
    return 1;
}

static inline int key_eq(const aw_json_member *a, const aw_json_member *b) {
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

static uint64_t key_hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Small objects are checked pairwise; large ones through a hash set, so the
 * check stays linear for objects with many keys. */
int aw__json_object_flags(const aw_json_member *m, size_t count, const aw_allocator *alloc) {
    int flags = 0;
    uint32_t idx;
    for (size_t i = 0; i < count; i++) {
        if (m[i].key_len && m[i].key[0] >= '0' && m[i].key[0] <= '9' &&
            aw__json_index_key(m[i].key, m[i].key_len, &idx)) {
            flags |= AW_JSON_F_INDEXKEYS;
            break;
        }
    }
    if (count <= 16) {
        for (size_t i = 1; i < count; i++)
            for (size_t j = 0; j < i; j++)
                if (key_eq(&m[i], &m[j])) return flags | AW_JSON_F_DUPKEYS;
        return flags;
    }
    size_t cap = 32;
    while (cap < count * 2) cap *= 2;
    size_t *slots = aw_malloc(alloc, cap * sizeof *slots);
    if (!slots) return -1;
    memset(slots, 0xFF, cap * sizeof *slots);
    for (size_t i = 0; i < count; i++) {
        size_t h = (size_t)key_hash(m[i].key, m[i].key_len) & (cap - 1);
        while (slots[h] != (size_t)-1) {
            if (key_eq(&m[slots[h]], &m[i])) {
                aw_free(alloc, slots);
                return flags | AW_JSON_F_DUPKEYS;
            }
            h = (h + 1) & (cap - 1);
        }
        slots[h] = i;
    }
    aw_free(alloc, slots);
    return flags;
}

typedef struct idx_entry {
    uint32_t index;
    size_t member;
} idx_entry;

static int cmp_idx(const void *a, const void *b) {
    const idx_entry *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

long aw__json_object_order(const aw_json_member *m, size_t count, const aw_allocator *alloc,
                           size_t *order, size_t *value_of) {
    /* first[i]: is member i the first occurrence of its key; value_of[i]:
     * the last occurrence, whose value JSON.parse keeps. */
    size_t cap = 32;
    while (cap < count * 2) cap *= 2;
    size_t *slots = aw_malloc(alloc, cap * sizeof *slots);
    idx_entry *idx = aw_malloc(alloc, (count ? count : 1) * sizeof *idx);
    unsigned char *first = aw_malloc(alloc, count ? count : 1);
    if (!slots || !idx || !first) {
        aw_free(alloc, slots);
        aw_free(alloc, idx);
        aw_free(alloc, first);
        return -1;
    }
    memset(slots, 0xFF, cap * sizeof *slots);
    for (size_t i = 0; i < count; i++) {
        size_t h = (size_t)key_hash(m[i].key, m[i].key_len) & (cap - 1);
        first[i] = 1;
        value_of[i] = i;
        while (slots[h] != (size_t)-1) {
            size_t j = slots[h];
            if (key_eq(&m[j], &m[i])) {
                first[i] = 0;
                value_of[j] = i;
                break;
            }
            h = (h + 1) & (cap - 1);
        }
        if (first[i]) slots[h] = i;
    }
    size_t nidx = 0, n = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t k;
        if (first[i] && aw__json_index_key(m[i].key, m[i].key_len, &k)) {
            idx[nidx].index = k;
            idx[nidx].member = i;
            nidx++;
        }
    }
    qsort(idx, nidx, sizeof *idx, cmp_idx);
    for (size_t i = 0; i < nidx; i++) order[n++] = idx[i].member;
    for (size_t i = 0; i < count; i++) {
        uint32_t k;
        if (first[i] && !aw__json_index_key(m[i].key, m[i].key_len, &k)) order[n++] = i;
    }
    aw_free(alloc, slots);
    aw_free(alloc, idx);
    aw_free(alloc, first);
    return (long)n;
}

const aw_json_value *aw_json_doc_root(const aw_json_doc *doc) { return doc ? doc->root : NULL; }

void aw_json_doc_free(aw_json_doc *doc) {
    if (!doc) return;
    aw_arena arena = doc->arena; /* doc is inside it */
    aw__arena_free(&arena);
}

const aw_json_value *aw_json_getn(const aw_json_value *obj, const char *key, size_t key_len) {
    if (!obj || obj->type != AW_JSON_OBJECT || !key) return NULL;
    /* from the end: the last duplicate wins, as in JSON.parse */
    for (size_t i = obj->u.obj.count; i-- > 0;) {
        const aw_json_member *m = &obj->u.obj.members[i];
        if (m->key_len == key_len && memcmp(m->key, key, key_len) == 0) return &m->value;
    }
    return NULL;
}

const aw_json_value *aw_json_get(const aw_json_value *obj, const char *key) {
    return key ? aw_json_getn(obj, key, strlen(key)) : NULL;
}

aw_json_value *aw_json_get_mut(aw_json_value *obj, const char *key) {
    return (aw_json_value *)aw_json_get(obj, key);
}

const aw_json_value *aw_json_at(const aw_json_value *arr, size_t index) {
    if (!arr || arr->type != AW_JSON_ARRAY || index >= arr->u.arr.count) return NULL;
    return &arr->u.arr.items[index];
}

aw_json_value *aw_json_at_mut(aw_json_value *arr, size_t index) {
    return (aw_json_value *)aw_json_at(arr, index);
}

size_t aw_json_count(const aw_json_value *v) {
    if (!v) return 0;
    if (v->type == AW_JSON_ARRAY) return v->u.arr.count;
    if (v->type == AW_JSON_OBJECT) return v->u.obj.count;
    return 0;
}

/* Number of distinct keys; n^2 but only used for equality checks. */
static size_t distinct_keys(const aw_json_value *o) {
    if (!(o->flags & (AW_JSON_F_DUPKEYS | AW_JSON_F_UNCHECKED))) return o->u.obj.count;
    size_t n = 0;
    for (size_t i = 0; i < o->u.obj.count; i++) {
        const aw_json_member *m = &o->u.obj.members[i];
        if (aw_json_getn(o, m->key, m->key_len) == &m->value) n++;
    }
    return n;
}

/* Everything but the entries of a container: type, scalar value, and a
 * container's size. */
static bool equal_shallow(const aw_json_value *a, const aw_json_value *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case AW_JSON_NULL: return true;
    case AW_JSON_BOOL: return a->u.b == b->u.b;
    case AW_JSON_NUMBER: return a->u.num.d == b->u.num.d;
    case AW_JSON_STRING:
        return a->u.str.len == b->u.str.len && memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len) == 0;
    case AW_JSON_ARRAY: return a->u.arr.count == b->u.arr.count;
    case AW_JSON_OBJECT: return distinct_keys(a) == distinct_keys(b);
    }
    return false;
}

/* Walked without recursion. It used to recurse once per level with a guard
 * at 100000 levels, but the C stack ran out long before the guard (under
 * 100000 levels with ASan, fewer on small thread stacks), and the reader
 * accepts any depth the caller allows through max_depth. The walk stack
 * lives on the C stack up to 64 levels; deeper values take it from the
 * default allocator (this function has no allocator argument), and if that
 * fails the values are reported unequal. */
typedef struct eq_frame {
    const aw_json_value *a, *b;
    size_t next; /* the next entry of a to compare */
} eq_frame;

bool aw_json_equal(const aw_json_value *a, const aw_json_value *b) {
    if (!a || !b) return a == b;
    if (!equal_shallow(a, b)) return false;
    eq_frame local[64];
    eq_frame *stack = local;
    size_t depth = 0, cap = sizeof local / sizeof local[0];
    bool same = true;
    if ((a->type == AW_JSON_ARRAY || a->type == AW_JSON_OBJECT) && aw_json_count(a))
        stack[depth++] = (eq_frame){a, b, 0};
    while (depth) {
        eq_frame *f = &stack[depth - 1];
        if (f->next == aw_json_count(f->a)) {
            depth--;
            continue;
        }
        const aw_json_value *x, *y;
        if (f->a->type == AW_JSON_ARRAY) {
            x = &f->a->u.arr.items[f->next];
            y = &f->b->u.arr.items[f->next];
            f->next++;
        } else {
            const aw_json_member *m = &f->a->u.obj.members[f->next++];
            x = aw_json_getn(f->a, m->key, m->key_len);
            if (x != &m->value) continue; /* a shadowed duplicate */
            y = aw_json_getn(f->b, m->key, m->key_len);
            if (!y) {
                same = false;
                break;
            }
        }
        if (!equal_shallow(x, y)) {
            same = false;
            break;
        }
        if (!((x->type == AW_JSON_ARRAY || x->type == AW_JSON_OBJECT) && aw_json_count(x))) continue;
        if (depth == cap) {
            eq_frame *grown = aw__walk_stack_grow(NULL, stack, local, &cap, sizeof *grown);
            if (!grown) {
                same = false;
                break;
            }
            stack = grown;
        }
        stack[depth++] = (eq_frame){x, y, 0};
    }
    if (stack != local) aw_free(NULL, stack);
    return same;
}
