/* A string -> string map (open addressing) for id lookups such as
 * toolCallId -> toolName. Keys and values are borrowed: the caller keeps
 * the bytes alive. Setting an existing key replaces its value, like a
 * JavaScript Map, and never allocates. Each entry also has a mark, 0 when
 * the key is added, that callers may use for one flag of their own. */
#ifndef AW_INTERNAL_STRMAP_H
#define AW_INTERNAL_STRMAP_H

#include <stddef.h>

#include "agentwire/alloc.h"
#include "agentwire/event.h"

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
