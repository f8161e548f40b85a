/* The bounded queue of the delivering sinks (internal/sink_queue.h). */
#include <string.h>

#include "agentwire/error.h"
#include "internal/sink_queue.h"

void aw_sink_queue_init(aw_sink_queue *q, const aw_allocator *alloc, size_t max_count)
{
    memset(q, 0, sizeof *q);
    q->alloc = alloc;
    q->max_count = max_count ? max_count : AW_SINK_QUEUE_DEFAULT;
    q->max_bytes = AW_SINK_QUEUE_MAX_BYTES;
}

int aw_sink_queue_push(aw_sink_queue *q, const char *channel, const char *body, size_t len, aw_sink_item **out)
{
    size_t clen = strlen(channel);
    if (q->count >= q->max_count || q->bytes + len > q->max_bytes)
        return 1;
    aw_sink_item *it = aw_malloc(q->alloc, sizeof *it + clen + len + 2);
    if (!it)
        return AW_ENOMEM;
    memset(it, 0, sizeof *it);
    it->channel_len = clen;
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < clen; i++)
        hash = (hash ^ (unsigned char)channel[i]) * 16777619u;
    it->channel_hash = hash;
    it->body_len = len;
    memcpy(it->data, channel, clen + 1);
    memcpy(it->data + clen + 1, body, len);
    it->data[clen + 1 + len] = 0;
    it->prev = q->tail;
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    q->count++;
    q->bytes += len;
    if (out)
        *out = it;
    return 0;
}

void aw_sink_queue_remove(aw_sink_queue *q, aw_sink_item *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        q->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        q->tail = it->prev;
    q->count--;
    q->bytes -= it->body_len;
    aw_free(q->alloc, it);
}

void aw_sink_queue_clear(aw_sink_queue *q)
{
    while (q->head)
        aw_sink_queue_remove(q, q->head);
}
