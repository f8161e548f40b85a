/* The escaped form of a growing text. Escaping is a character-by-character
 * map, so the escape of a text equals the escapes of its pieces joined,
 * as long as no piece ends inside a character: the cache stops before an
 * unfinished UTF-8 sequence at the end (or half a surrogate pair) and
 * leaves it to the next piece. */
#include <string.h>

#include "agentwire/json.h"
#include "internal/escape_cache.h"

void aw_escape_cache_init(aw_escape_cache *c, const aw_allocator *alloc)
{
    memset(c, 0, sizeof *c);
    aw_buf_init(&c->escaped, alloc);
}

void aw_escape_cache_release(aw_escape_cache *c) { aw_buf_free(&c->escaped); }

int aw_json_escape_append(aw_buf *out, const char *p, size_t n)
{
    size_t at = out->len;
    int rc = aw_json_write_string(out, p, n);
    if (rc)
        return rc;
    /* drop the quotes: the opening one by moving the new bytes down */
    size_t k = out->len - at - 2;
    memmove(out->data + at, out->data + at + 1, k);
    out->len = at + k;
    out->data[out->len] = 0;
    return 0;
}

/* Where text[0..len) stops being whole characters: before a lead byte in
 * the last three whose sequence needs more bytes than are there; and
 * before a high surrogate's three-byte form (ED A0..AF xx) at the very
 * end, which the writer may join with a low one that follows into one
 * character. */
static size_t whole_chars_end(const char *text, size_t len)
{
    const unsigned char *t = (const unsigned char *)text;
    if (len >= 3 && t[len - 3] == 0xED && (t[len - 2] & 0xF0) == 0xA0 && (t[len - 1] & 0xC0) == 0x80)
        return len - 3;
    for (size_t back = 1; back <= 3 && back <= len; back++) {
        unsigned char b = (unsigned char)text[len - back];
        if ((b & 0xC0) == 0x80)
            continue; /* a continuation byte: look further back */
        size_t need = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 1;
        return need > back ? len - back : len;
    }
    return len;
}

static bool extends(const aw_escape_cache *c, const char *text, size_t len)
{
    return len >= c->done && memcmp(text, c->head, c->head_len) == 0 &&
           memcmp(text + c->done - c->edge_len, c->edge, c->edge_len) == 0;
}

int aw_escape_cache_update(aw_escape_cache *c, const char *text, size_t len)
{
    if (!extends(c, text, len)) {
        aw_buf_clear(&c->escaped);
        c->done = 0;
        c->head_len = c->edge_len = 0;
    }
    size_t end = whole_chars_end(text, len);
    if (end <= c->done)
        return 0;
    int rc = aw_json_escape_append(&c->escaped, text + c->done, end - c->done);
    if (rc)
        return rc;
    c->done = end;
    c->head_len = end < sizeof c->head ? end : sizeof c->head;
    memcpy(c->head, text, c->head_len);
    c->edge_len = end < sizeof c->edge ? end : sizeof c->edge;
    memcpy(c->edge, text + end - c->edge_len, c->edge_len);
    return 0;
}
