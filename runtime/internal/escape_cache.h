/* The JSON-escaped form of a text that only grows from one request to the
 * next (the <thread> of xml context mode), kept so each request escapes
 * only the bytes added since the last. Not installed. */
#ifndef AW_ESCAPE_CACHE_H
#define AW_ESCAPE_CACHE_H

#include <stddef.h>

#include "agentwire/buf.h"

typedef struct aw_escape_cache {
    aw_buf escaped;  /* the string contents (no quotes) of text[0..done) */
    size_t done;     /* bytes escaped: the text up to its last whole character */
    /* the first and the last bytes escaped, to notice a text that does
     * not extend the one seen before (then it is escaped afresh) */
    char head[32], edge[32];
    size_t head_len, edge_len;
} aw_escape_cache;

void aw_escape_cache_init(aw_escape_cache *c, const aw_allocator *alloc);
void aw_escape_cache_release(aw_escape_cache *c);
/* Escape what text adds to the text seen last. Afterwards c->escaped
 * holds text[0..c->done) escaped; the caller escapes text[c->done..len)
 * (at most three bytes: an unfinished character, or the first half of a
 * surrogate pair) with whatever follows,
 * so the result equals escaping the whole at once. */
int aw_escape_cache_update(aw_escape_cache *c, const char *text, size_t len);

/* Append p[0..n) escaped as JSON string contents, without the quotes
 * (aw_json_write_string's escapes). */
int aw_json_escape_append(aw_buf *out, const char *p, size_t n);

#endif
