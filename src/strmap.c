#include <stdint.h>
#include <string.h>

#include "agentwire/error.h"
#include "internal/strmap.h"

void aw__strmap_init(aw_strmap *m, const aw_allocator *alloc) {
    m->alloc = alloc;
    m->slots = NULL;
    m->cap = m->count = 0;
}

void aw__strmap_free(aw_strmap *m) {
    aw_free(m->alloc, m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

static aw_strmap_slot *find(aw_strmap_slot *slots, size_t cap, aw_text key) {
    size_t i = (size_t)aw__text_hash(key) & (cap - 1);
    for (;;) {
        aw_strmap_slot *s = &slots[i];
        if (!s->used) return s;
        if (s->key.len == key.len && memcmp(s->key.ptr, key.ptr, key.len) == 0) return s;
        i = (i + 1) & (cap - 1);
    }
}

static int grow(aw_strmap *m) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    aw_strmap_slot *slots = aw_malloc(m->alloc, cap * sizeof *slots);
    if (!slots) return AW_ENOMEM;
    memset(slots, 0, cap * sizeof *slots);
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].used) *find(slots, cap, m->slots[i].key) = m->slots[i];
    aw_free(m->alloc, m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int aw__strmap_set(aw_strmap *m, aw_text key, aw_text value) {
    /* Replacing the value of a key already present never allocates, so
     * callers that only update (the decoder's pairing stacks) cannot fail. */
    aw_strmap_slot *s = m->cap ? find(m->slots, m->cap, key) : NULL;
    if (s && s->used) {
        s->value = value;
        return 0;
    }
    if ((m->count + 1) * 2 > m->cap) {
        if (grow(m)) return AW_ENOMEM;
        s = find(m->slots, m->cap, key);
    }
    if (!s->used) {
        s->used = 1;
        s->key = key;
        s->mark = 0;
        m->count++;
    }
    s->value = value;
    return 0;
}

int aw__strmap_get(const aw_strmap *m, aw_text key, aw_text *value) {
    if (!m->cap) return 0;
    aw_strmap_slot *s = find(m->slots, m->cap, key);
    if (!s->used) return 0;
    *value = s->value;
    return 1;
}

aw_strmap_slot *aw__strmap_find(aw_strmap *m, aw_text key) {
    if (!m->cap) return NULL;
    aw_strmap_slot *s = find(m->slots, m->cap, key);
    return s->used ? s : NULL;
}
