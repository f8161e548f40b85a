/* Building JSON values in code. Everything lives in the document's arena;
 * growing an array or object copies its entries to a larger arena block
 * (the old block is reclaimed with the document). */
#include <string.h>

#include "internal/json.h"
#include "internal/walk_stack.h"

aw_json_doc *aw_json_doc_new(const aw_allocator *alloc) {
    aw_arena arena;
    aw__arena_init(&arena, alloc);
    aw_json_doc *doc = aw__arena_alloc(&arena, sizeof *doc);
    if (!doc) {
        aw__arena_free(&arena);
        return NULL;
    }
    doc->arena = arena;
    doc->root = NULL;
    return doc;
}

void aw_json_doc_set_root(aw_json_doc *doc, aw_json_value *root) {
    if (doc) doc->root = root;
}

static aw_json_value *new_value(aw_json_doc *doc, aw_json_type type) {
    if (!doc) return NULL;
    aw_json_value *v = aw__arena_alloc(&doc->arena, sizeof *v);
    if (!v) return NULL;
    memset(v, 0, sizeof *v);
    v->type = (uint8_t)type;
    return v;
}

aw_json_value *aw_json_new_null(aw_json_doc *doc) { return new_value(doc, AW_JSON_NULL); }

aw_json_value *aw_json_new_bool(aw_json_doc *doc, bool b) {
    aw_json_value *v = new_value(doc, AW_JSON_BOOL);
    if (v) v->u.b = b;
    return v;
}

aw_json_value *aw_json_new_number(aw_json_doc *doc, double d) {
    aw_json_value *v = new_value(doc, AW_JSON_NUMBER);
    if (!v) return NULL;
    v->u.num.d = d;
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d) {
        v->flags = AW_JSON_F_INT;
        v->u.num.i = (int64_t)d;
    }
    return v;
}

aw_json_value *aw_json_new_int(aw_json_doc *doc, int64_t i) {
    aw_json_value *v = new_value(doc, AW_JSON_NUMBER);
    if (!v) return NULL;
    v->flags = AW_JSON_F_INT;
    v->u.num.i = i;
    v->u.num.d = (double)i;
    return v;
}

static char *copy_bytes(aw_json_doc *doc, const char *s, size_t len) {
    char *p = aw__arena_alloc(&doc->arena, len + 1);
    if (!p) return NULL;
    if (len) memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

aw_json_value *aw_json_new_string(aw_json_doc *doc, const char *s, size_t len) {
    if (!s && len) return NULL;
    aw_json_value *v = new_value(doc, AW_JSON_STRING);
    if (!v) return NULL;
    char *p = copy_bytes(doc, s, len);
    if (!p) return NULL;
    v->u.str.ptr = p;
    v->u.str.len = len;
    return v;
}

aw_json_value *aw_json_new_array(aw_json_doc *doc) { return new_value(doc, AW_JSON_ARRAY); }
aw_json_value *aw_json_new_object(aw_json_doc *doc) { return new_value(doc, AW_JSON_OBJECT); }

/* Grow a container's storage to hold one more entry of size `elem`. */
static void *grow(aw_json_doc *doc, void *items, size_t count, size_t *cap, size_t elem) {
    if (count < *cap) return items;
    size_t ncap = *cap ? *cap * 2 : 4;
    if (ncap > SIZE_MAX / elem) return NULL;
    void *p = aw__arena_alloc(&doc->arena, ncap * elem);
    if (!p) return NULL;
    if (count) memcpy(p, items, count * elem);
    *cap = ncap;
    return p;
}

int aw_json_array_push(aw_json_doc *doc, aw_json_value *arr, const aw_json_value *item) {
    if (!doc || !arr || !item || arr->type != AW_JSON_ARRAY) return AW_EINVAL;
    size_t cap = arr->u.arr.cap;
    aw_json_value *items = grow(doc, arr->u.arr.items, arr->u.arr.count, &cap, sizeof *items);
    if (!items) return AW_ENOMEM;
    arr->u.arr.items = items;
    arr->u.arr.cap = cap;
    items[arr->u.arr.count++] = *item;
    return 0;
}

int aw_json_object_set(aw_json_doc *doc, aw_json_value *obj, const char *key, size_t key_len,
                       const aw_json_value *val) {
    if (!doc || !obj || !key || !val || obj->type != AW_JSON_OBJECT) return AW_EINVAL;
    aw_json_value *existing = (aw_json_value *)aw_json_getn(obj, key, key_len);
    if (existing) {
        *existing = *val;
        return 0;
    }
    char *k = copy_bytes(doc, key, key_len);
    if (!k) return AW_ENOMEM;
    size_t cap = obj->u.obj.cap;
    aw_json_member *m = grow(doc, obj->u.obj.members, obj->u.obj.count, &cap, sizeof *m);
    if (!m) return AW_ENOMEM;
    obj->u.obj.members = m;
    obj->u.obj.cap = cap;
    aw_json_member *slot = &m[obj->u.obj.count++];
    slot->key = k;
    slot->key_len = key_len;
    slot->value = *val;
    uint32_t idx;
    if (aw__json_index_key(key, key_len, &idx)) obj->flags |= AW_JSON_F_INDEXKEYS;
    return 0;
}

int aw_json_object_set_string(aw_json_doc *doc, aw_json_value *obj, const char *key,
                              const char *s, size_t len) {
    aw_json_value *v = aw_json_new_string(doc, s, len);
    return v ? aw_json_object_set(doc, obj, key, strlen(key), v) : AW_ENOMEM;
}

int aw_json_object_set_int(aw_json_doc *doc, aw_json_value *obj, const char *key, int64_t i) {
    aw_json_value *v = aw_json_new_int(doc, i);
    return v ? aw_json_object_set(doc, obj, key, strlen(key), v) : AW_ENOMEM;
}

int aw_json_object_set_number(aw_json_doc *doc, aw_json_value *obj, const char *key, double d) {
    aw_json_value *v = aw_json_new_number(doc, d);
    return v ? aw_json_object_set(doc, obj, key, strlen(key), v) : AW_ENOMEM;
}

int aw_json_object_set_bool(aw_json_doc *doc, aw_json_value *obj, const char *key, bool b) {
    aw_json_value *v = aw_json_new_bool(doc, b);
    return v ? aw_json_object_set(doc, obj, key, strlen(key), v) : AW_ENOMEM;
}

int aw_json_object_set_null(aw_json_doc *doc, aw_json_value *obj, const char *key) {
    aw_json_value *v = aw_json_new_null(doc);
    return v ? aw_json_object_set(doc, obj, key, strlen(key), v) : AW_ENOMEM;
}

/* Deep copy without recursion. It used to recurse once per level with a
 * guard at 100000 levels, but the C stack ran out long before the guard
 * (about 60000 levels under ASan, fewer on small thread stacks), and the
 * reader accepts any depth the caller allows through max_depth. Now an
 * explicit stack holds the containers whose entries are still to copy. */
typedef struct copy_frame {
    aw_json_value *dst;
    const aw_json_value *src;
    size_t next; /* the next entry to copy */
} copy_frame;

/* Copy what src holds itself: a scalar completely; for a container, its
 * storage (the entries are filled in by aw_json_copy's loop). */
static int copy_shallow(aw_json_doc *doc, aw_json_value *dst, const aw_json_value *src) {
    *dst = *src;
    switch (src->type) {
    case AW_JSON_STRING: {
        char *p = copy_bytes(doc, src->u.str.ptr, src->u.str.len);
        if (!p) return AW_ENOMEM;
        dst->u.str.ptr = p;
        return 0;
    }
    case AW_JSON_NUMBER:
        if (src->u.num.text) {
            char *p = copy_bytes(doc, src->u.num.text, src->num_len);
            if (!p) return AW_ENOMEM;
            dst->u.num.text = p;
        }
        return 0;
    case AW_JSON_ARRAY: {
        size_t n = src->u.arr.count;
        dst->u.arr.items = NULL;
        dst->u.arr.cap = n;
        if (!n) return 0;
        if (n > SIZE_MAX / sizeof(aw_json_value)) return AW_ENOMEM;
        dst->u.arr.items = aw__arena_alloc(&doc->arena, n * sizeof(aw_json_value));
        return dst->u.arr.items ? 0 : AW_ENOMEM;
    }
    case AW_JSON_OBJECT: {
        size_t n = src->u.obj.count;
        dst->u.obj.members = NULL;
        dst->u.obj.cap = n;
        if (!n) return 0;
        if (n > SIZE_MAX / sizeof(aw_json_member)) return AW_ENOMEM;
        dst->u.obj.members = aw__arena_alloc(&doc->arena, n * sizeof(aw_json_member));
        return dst->u.obj.members ? 0 : AW_ENOMEM;
    }
    default: return 0;
    }
}

static int has_entries(const aw_json_value *v) {
    return (v->type == AW_JSON_ARRAY || v->type == AW_JSON_OBJECT) && aw_json_count(v) > 0;
}

aw_json_value *aw_json_copy(aw_json_doc *doc, const aw_json_value *src) {
    if (!doc || !src) return NULL;
    aw_json_value *root = new_value(doc, AW_JSON_NULL);
    if (!root || copy_shallow(doc, root, src)) return NULL;
    const aw_allocator *alloc = doc->arena.alloc;
    copy_frame local[64];
    copy_frame *stack = local;
    size_t depth = 0, cap = sizeof local / sizeof local[0];
    int rc = 0;
    if (has_entries(src)) stack[depth++] = (copy_frame){root, src, 0};
    while (depth) {
        copy_frame *f = &stack[depth - 1];
        if (f->next == aw_json_count(f->src)) {
            depth--;
            continue;
        }
        size_t i = f->next++;
        aw_json_value *d;
        const aw_json_value *s;
        if (f->src->type == AW_JSON_ARRAY) {
            d = &f->dst->u.arr.items[i];
            s = &f->src->u.arr.items[i];
        } else {
            const aw_json_member *sm = &f->src->u.obj.members[i];
            aw_json_member *dm = &f->dst->u.obj.members[i];
            char *k = copy_bytes(doc, sm->key, sm->key_len);
            if (!k) {
                rc = AW_ENOMEM;
                break;
            }
            dm->key = k;
            dm->key_len = sm->key_len;
            d = &dm->value;
            s = &sm->value;
        }
        if ((rc = copy_shallow(doc, d, s))) break;
        if (!has_entries(s)) continue;
        if (depth == cap) {
            copy_frame *grown = aw__walk_stack_grow(alloc, stack, local, &cap, sizeof *grown);
            if (!grown) {
                rc = AW_ENOMEM;
                break;
            }
            stack = grown;
        }
        stack[depth++] = (copy_frame){d, s, 0};
    }
    if (stack != local) aw_free(alloc, stack);
    return rc ? NULL : root;
}
