/* A string -> string map (open addressing) for id lookups such as
 * toolCallId -> toolName. Keys and values are borrowed: the caller keeps
 * the bytes alive. Setting an existing key replaces its value, like a
 * JavaScript Map, and never allocates. Each entry also has a mark, 0 when
 * the key is added, that callers may use for one flag of their own. */
#ifndef AW_INTERNAL_STRMAP_H
#define AW_INTERNAL_STRMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agentwire/alloc.h"
#include "agentwire/event.h"

/* The hash of an id, eight bytes at a time: ids are short, and the
 * encoder looks one up per tool event. Inline because the encoder's own
 * call table uses it too. */
static inline uint64_t aw__text_hash(aw_text k) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ k.len;
    size_t i = 0;
    for (; i + 8 <= k.len; i += 8) {
        uint64_t w;
        memcpy(&w, k.ptr + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    if (k.len > i) memcpy(&w, k.ptr + i, k.len - i);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

typedef struct aw_strmap_slot {
    aw_text key;
    aw_text value;
    int used;
    int mark; /* the caller's; kept when the value is replaced */
} aw_strmap_slot;

typedef struct aw_strmap {
    const aw_allocator *alloc;
    aw_strmap_slot *slots;
    size_t cap;   /* power of two, or 0 */
    size_t count;
} aw_strmap;

void aw__strmap_init(aw_strmap *m, const aw_allocator *alloc);
void aw__strmap_free(aw_strmap *m);
int aw__strmap_set(aw_strmap *m, aw_text key, aw_text value);
/* 1 and *value when found. */
int aw__strmap_get(const aw_strmap *m, aw_text key, aw_text *value);
/* The entry for key, whose value and mark may be changed in place (until
 * the next set that adds a key), or NULL. */
aw_strmap_slot *aw__strmap_find(aw_strmap *m, aw_text key);

#endif
