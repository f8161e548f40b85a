/* A bump allocator for things that are made once and freed together (an
 * agent file's strings and its YAML tree): one allocation per block of
 * several KiB instead of one per string. Not installed. */
#ifndef AW_RT_ARENA_H
#define AW_RT_ARENA_H

#include <stddef.h>

#include "agentwire/alloc.h"

typedef struct aw_arena_block aw_arena_block;

typedef struct aw_arena {
    const aw_allocator *alloc;
    aw_arena_block *blocks;
} aw_arena;

void aw_arena_init(aw_arena *a, const aw_allocator *alloc);
/* Everything the arena handed out goes at once. */
void aw_arena_free(aw_arena *a);
/* n bytes aligned for any object; NULL when out of memory. */
void *aw_arena_alloc(aw_arena *a, size_t n);
/* A NUL-terminated copy of p[0..n). */
char *aw_arena_strndup(aw_arena *a, const char *p, size_t n);
char *aw_arena_strdup(aw_arena *a, const char *s);
/* printf into the arena. */
char *aw_arena_printf(aw_arena *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
