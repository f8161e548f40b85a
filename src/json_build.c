/* Building JSON values in code. Everything lives in the document's arena;
 * growing an array or object copies its entries to a larger arena block
 * (the old block is reclaimed with the document). */
#include <string.h>

#include "internal/json.h"

aw_json_doc *aw_json_doc_new(const aw_allocator *alloc) {
    aw_json_doc *doc = aw_malloc(alloc, sizeof *doc);
    if (!doc) return NULL;
    aw__arena_init(&doc->arena, alloc);
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

/* Deep copy into dst. Recursion is bounded: documents read by the parser
 * are at most max_depth deep, and the guard stops pathological builds. */
static int copy_into(aw_json_doc *doc, aw_json_value *dst, const aw_json_value *src, int depth) {
    if (depth > 100000) return AW_ELIMIT;
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
        aw_json_value *items = aw__arena_alloc(&doc->arena, n * sizeof *items);
        if (!items) return AW_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            int rc = copy_into(doc, &items[i], &src->u.arr.items[i], depth + 1);
            if (rc) return rc;
        }
        dst->u.arr.items = items;
        return 0;
    }
    case AW_JSON_OBJECT: {
        size_t n = src->u.obj.count;
        dst->u.obj.members = NULL;
        dst->u.obj.cap = n;
        if (!n) return 0;
        aw_json_member *m = aw__arena_alloc(&doc->arena, n * sizeof *m);
        if (!m) return AW_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            const aw_json_member *s = &src->u.obj.members[i];
            char *k = copy_bytes(doc, s->key, s->key_len);
            if (!k) return AW_ENOMEM;
            m[i].key = k;
            m[i].key_len = s->key_len;
            int rc = copy_into(doc, &m[i].value, &s->value, depth + 1);
            if (rc) return rc;
        }
        dst->u.obj.members = m;
        return 0;
    }
    default: return 0;
    }
}

aw_json_value *aw_json_copy(aw_json_doc *doc, const aw_json_value *src) {
    if (!doc || !src) return NULL;
    aw_json_value *v = new_value(doc, AW_JSON_NULL);
    if (!v) return NULL;
    return copy_into(doc, v, src, 0) ? NULL : v;
}
