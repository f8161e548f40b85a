/* The conversation: an append-only list of messages, each copied into one
 * block of its own so that the pointers a provider caches stay valid. */
#include <string.h>

#include "agentwire/provider.h"

typedef struct chat_item {
    aw_chat_msg msg;
    void *block; /* the message's strings and calls */
} chat_item;

struct aw_chat {
    const aw_allocator *alloc;
    chat_item *items;
    size_t count, cap;
    size_t bytes;
};

aw_chat *aw_chat_new(const aw_allocator *alloc)
{
    aw_chat *c = aw_malloc(alloc, sizeof *c);
    if (c) {
        memset(c, 0, sizeof *c);
        c->alloc = alloc;
    }
    return c;
}

void aw_chat_free(aw_chat *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->count; i++)
        aw_free(c->alloc, c->items[i].block);
    aw_free(c->alloc, c->items);
    aw_free(c->alloc, c);
}

static aw_text place(char **cursor, aw_text t)
{
    aw_text out = {*cursor, t.len};
    if (t.len)
        memcpy(*cursor, t.ptr, t.len);
    (*cursor)[t.len] = 0;
    *cursor += t.len + 1;
    return out;
}

int aw_chat_append(aw_chat *c, const aw_chat_msg *m)
{
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        chat_item *items = aw_realloc(c->alloc, c->items, cap * sizeof *items);
        if (!items)
            return AW_ENOMEM;
        c->items = items;
        c->cap = cap;
    }
    /* One block: the calls array, then every string NUL-terminated. */
    size_t strings = m->content.len + m->call_id.len + m->tool_name.len + 3;
    for (size_t i = 0; i < m->call_count; i++)
        strings += m->calls[i].id.len + m->calls[i].name.len + m->calls[i].arguments.len + 3;
    size_t calls_size = m->call_count * sizeof(aw_chat_call);
    char *block = aw_malloc(c->alloc, calls_size + strings);
    if (!block)
        return AW_ENOMEM;
    aw_chat_call *calls = (aw_chat_call *)(void *)block;
    char *cursor = block + calls_size;
    chat_item *it = &c->items[c->count];
    it->block = block;
    it->msg = *m;
    it->msg.content = place(&cursor, m->content);
    it->msg.call_id = place(&cursor, m->call_id);
    it->msg.tool_name = place(&cursor, m->tool_name);
    size_t bytes = m->content.len;
    for (size_t i = 0; i < m->call_count; i++) {
        calls[i].id = place(&cursor, m->calls[i].id);
        calls[i].name = place(&cursor, m->calls[i].name);
        calls[i].arguments = place(&cursor, m->calls[i].arguments);
        bytes += m->calls[i].arguments.len + m->calls[i].name.len;
    }
    it->msg.calls = m->call_count ? calls : NULL;
    c->count++;
    c->bytes += bytes;
    return 0;
}

size_t aw_chat_count(const aw_chat *c) { return c->count; }
const aw_chat_msg *aw_chat_at(const aw_chat *c, size_t i) { return i < c->count ? &c->items[i].msg : NULL; }
size_t aw_chat_bytes(const aw_chat *c) { return c->bytes; }
