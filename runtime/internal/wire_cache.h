/* The conversation's wire form kept between requests, shared by the HTTP
 * providers' request writers: each history message written once (into
 * one growing buffer the request body references), and the escaped
 * <thread> of xml context mode. Not installed. */
#ifndef AW_WIRE_CACHE_H
#define AW_WIRE_CACHE_H

#include <stdbool.h>

#include "agentwire/provider.h"
#include "internal/escape_cache.h"
#include "internal/http_body.h"

typedef struct aw_wire_cache {
    const aw_chat *chat;  /* the history written, and how much of it */
    size_t count;
    const char *first;    /* message 0's content, to tell two chats at one address apart */
    aw_buf history;
    int open_role;        /* a writer's state after the last message (anthropic: the open turn's role) */
    aw_escape_cache thread;
} aw_wire_cache;

void aw_wire_cache_init(aw_wire_cache *c, const aw_allocator *alloc);
void aw_wire_cache_release(aw_wire_cache *c);

/* Writes one history message onto the end of out, given and updating the
 * writer's state. */
typedef int (*aw_wire_message_fn)(aw_buf *out, int *state, const aw_chat_msg *m, const aw_allocator *alloc);

/* Bring c->history to chat: start over when chat is another chat or
 * shorter than what was written, then write the messages added since. A
 * message that fails to be written is taken back whole (and comes again
 * next time). */
int aw_wire_cache_extend(aw_wire_cache *c, const aw_chat *chat, aw_wire_message_fn write, const aw_allocator *alloc);

/* The escaped text of thread_stable then thread_tail, without quotes: the
 * cached escape of the stable part by reference, the rest written. */
int aw_wire_thread_text(aw_body *body, aw_escape_cache *tc, const aw_model_request *req, const aw_allocator *alloc);

/* A provider's whole request body for req. */
typedef int (*aw_wire_request_fn)(aw_wire_cache *cache, const char *model, const aw_model_request *req, bool stream,
                                  aw_body *body, const aw_allocator *alloc);

/* write with cache; when cache is NULL, through one made for this request
 * whose bytes are copied into the body (its references must outlive it). */
int aw_wire_request(aw_wire_request_fn write, aw_wire_cache *cache, const char *model, const aw_model_request *req,
                    bool stream, aw_body *body, const aw_allocator *alloc);

#endif
