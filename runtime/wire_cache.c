/* The conversation's wire form kept between requests: only what was
 * appended since the last request is written for the next. */
#include <string.h>

#include "internal/wire_cache.h"

void aw_wire_cache_init(aw_wire_cache *c, const aw_allocator *alloc)
{
    memset(c, 0, sizeof *c);
    aw_buf_init(&c->history, alloc);
    aw_escape_cache_init(&c->thread, alloc);
}

void aw_wire_cache_release(aw_wire_cache *c)
{
    aw_buf_free(&c->history);
    aw_escape_cache_release(&c->thread);
}

int aw_wire_cache_extend(aw_wire_cache *c, const aw_chat *chat, aw_wire_message_fn write, const aw_allocator *alloc)
{
    size_t count = chat ? aw_chat_count(chat) : 0;
    const char *first = count ? aw_chat_at(chat, 0)->content.ptr : NULL;
    if (chat != c->chat || count < c->count || (c->count && first != c->first)) {
        aw_buf_clear(&c->history);
        c->count = 0;
        c->open_role = 0;
    }
    c->chat = chat;
    c->first = first;
    for (; c->count < count; c->count++) {
        size_t at = c->history.len;
        int state = c->open_role;
        if (write(&c->history, &c->open_role, aw_chat_at(chat, c->count), alloc)) {
            c->history.len = at;
            if (c->history.data)
                c->history.data[at] = 0;
            c->open_role = state;
            return AW_ENOMEM;
        }
    }
    return 0;
}

int aw_wire_thread_text(aw_body *body, aw_escape_cache *tc, const aw_model_request *req, const aw_allocator *alloc)
{
    if (aw_escape_cache_update(tc, req->thread_stable.ptr, req->thread_stable.len))
        return AW_ENOMEM;
    aw_body_ref(body, tc->escaped.data, tc->escaped.len);
    /* the stable part's unfinished end (at most three bytes) and the tail,
     * escaped as one text */
    aw_buf rest;
    aw_buf_init(&rest, alloc);
    int rc = aw_buf_append(&rest, req->thread_stable.ptr + tc->done, req->thread_stable.len - tc->done) ||
             aw_buf_append(&rest, req->thread_tail.ptr, req->thread_tail.len);
    aw_buf *o = rc ? NULL : aw_body_text(body);
    if (!rc)
        rc = !o || aw_json_escape_append(o, rest.data ? rest.data : "", rest.len);
    aw_buf_free(&rest);
    return rc ? AW_ENOMEM : 0;
}

int aw_wire_request(aw_wire_request_fn write, aw_wire_cache *cache, const char *model, const aw_model_request *req,
                    bool stream, aw_body *body, const aw_allocator *alloc)
{
    if (cache)
        return write(cache, model, req, stream, body, alloc);
    aw_wire_cache tmp;
    aw_wire_cache_init(&tmp, alloc);
    aw_body staged;
    aw_body_init(&staged, alloc);
    int rc = write(&tmp, model, req, stream, &staged, alloc);
    aw_buf *o = rc ? NULL : aw_body_text(body);
    if (!rc && (!o || aw_body_join(&staged, o)))
        rc = AW_ENOMEM;
    aw_body_release(&staged);
    aw_wire_cache_release(&tmp);
    return rc;
}
