/* A request body as segments: owned text interleaved with references to
 * bytes a provider keeps between requests. */
#include <string.h>

#include "internal/http_body.h"

void aw_body_init(aw_body *b, const aw_allocator *alloc)
{
    memset(b, 0, sizeof *b);
    b->alloc = alloc;
}

void aw_body_release(aw_body *b)
{
    for (size_t i = 0; i < b->nparts; i++)
        aw_buf_free(&b->parts[i]);
    b->nparts = 0;
    b->nitems = 0;
}

int aw_body_failed(const aw_body *b) { return b->failed; }

aw_buf *aw_body_text(aw_body *b)
{
    if (b->failed)
        return NULL;
    if (b->nitems && b->items[b->nitems - 1].owned)
        return &b->parts[b->items[b->nitems - 1].part];
    if (b->nitems == AW_BODY_MAX_ITEMS || b->nparts == sizeof b->parts / sizeof *b->parts) {
        b->failed = AW_ELIMIT;
        return NULL;
    }
    aw_buf *part = &b->parts[b->nparts];
    aw_buf_init(part, b->alloc);
    b->items[b->nitems++] = (aw_body_item){true, b->nparts++, {NULL, 0}};
    return part;
}

void aw_body_ref(aw_body *b, const char *p, size_t n)
{
    if (b->failed || n == 0)
        return;
    if (b->nitems == AW_BODY_MAX_ITEMS) {
        b->failed = AW_ELIMIT;
        return;
    }
    b->items[b->nitems++] = (aw_body_item){false, 0, {p, n}};
}

const aw_text *aw_body_segments(aw_body *b, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < b->nitems; i++) {
        const aw_body_item *it = &b->items[i];
        aw_text t = it->owned ? (aw_text){b->parts[it->part].data, b->parts[it->part].len} : it->ref;
        if (t.len)
            b->segs[n++] = t;
    }
    *count = n;
    return b->segs;
}

int aw_body_join(const aw_body *b, aw_buf *out)
{
    for (size_t i = 0; i < b->nitems; i++) {
        const aw_body_item *it = &b->items[i];
        aw_text t = it->owned ? (aw_text){b->parts[it->part].data, b->parts[it->part].len} : it->ref;
        if (t.len && aw_buf_append(out, t.ptr, t.len))
            return AW_ENOMEM;
    }
    return 0;
}
