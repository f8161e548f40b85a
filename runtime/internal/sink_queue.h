/* The queue of a sink that delivers later (Redis, webhooks): envelopes
 * already encoded, oldest first, bounded in count and bytes so a peer that
 * is slow or gone costs dropped envelopes, never the run's memory or time.
 * Items leave from anywhere (a webhook delivers several channels at once),
 * so it is a list, one allocation per item. Not installed. */
#ifndef AW_SINK_QUEUE_H
#define AW_SINK_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agentwire/alloc.h"

typedef struct aw_sink_item {
    struct aw_sink_item *prev, *next;
    size_t channel_len, body_len;
    uint32_t channel_hash; /* FNV-1a of the channel: a webhook compares channels per item it looks at */
    unsigned attempts;  /* deliveries tried */
    bool in_flight;     /* handed to the peer, no answer yet */
    int64_t not_before; /* loop ms: the backoff of a retry */
    char data[];        /* channel, NUL, body, NUL */
} aw_sink_item;

static inline const char *aw_sink_item_channel(const aw_sink_item *it) { return it->data; }
static inline const char *aw_sink_item_body(const aw_sink_item *it) { return it->data + it->channel_len + 1; }
static inline bool aw_sink_item_same_channel(const aw_sink_item *a, const aw_sink_item *b)
{
    return a->channel_hash == b->channel_hash && a->channel_len == b->channel_len &&
           !memcmp(a->data, b->data, a->channel_len);
}

typedef struct aw_sink_queue {
    const aw_allocator *alloc;
    aw_sink_item *head, *tail;
    size_t count, bytes;
    size_t max_count, max_bytes;
} aw_sink_queue;

#define AW_SINK_QUEUE_DEFAULT 10000
#define AW_SINK_QUEUE_MAX_BYTES ((size_t)64 << 20)

/* max_count 0: AW_SINK_QUEUE_DEFAULT. */
void aw_sink_queue_init(aw_sink_queue *q, const aw_allocator *alloc, size_t max_count);
/* Append channel and body (copied). 0; 1 when the queue is full (nothing
 * appended: the caller drops the envelope); AW_ENOMEM. */
int aw_sink_queue_push(aw_sink_queue *q, const char *channel, const char *body, size_t len, aw_sink_item **out);
/* Take an item out and free it. */
void aw_sink_queue_remove(aw_sink_queue *q, aw_sink_item *it);
void aw_sink_queue_clear(aw_sink_queue *q);

#endif
