/* The anthropic provider's two halves, callable without a socket (tests
 * and fuzz targets use them so): the Messages API request body with its
 * cache of what was written before, and the reply reader. Not installed. */
#ifndef AW_ANTHROPIC_H
#define AW_ANTHROPIC_H

#include "internal/provider_http.h"
#include "internal/sse.h"
#include "internal/wire_cache.h"

/* ---- the request ----------------------------------------------------------------- */

enum { AW_ANTHROPIC_NONE = 0, AW_ANTHROPIC_USER, AW_ANTHROPIC_ASSISTANT };

/* The request body for req into body, which references cache's bytes
 * (the cache must not change until the request ends). The API wants turns
 * to alternate, so a message of the same role as the one before (a tool
 * result after a tool result, a notice after them) joins it: the cache
 * leaves the last message, and its last content block, open
 * (`{"role":"user","content":[{...},{...` without the closing `}]}`,
 * cache->open_role saying whose turn it is) so the next message can join
 * it, and so the request can mark the history's end for the API's prompt
 * cache. max_tokens 0 in req means 4096 (the API requires a value). An
 * aw_wire_request_fn: through aw_wire_request it writes without a cache. */
int aw_anthropic_request(aw_wire_cache *cache, const char *model, const aw_model_request *req, bool stream,
                         aw_body *body, const aw_allocator *alloc);

/* ---- the reply ---------------------------------------------------------------------- */

enum { AW_ANTHROPIC_BLOCK_OTHER = 0, AW_ANTHROPIC_BLOCK_TEXT, AW_ANTHROPIC_BLOCK_TOOL, AW_ANTHROPIC_BLOCK_THINKING };

typedef struct aw_anthropic_block {
    int kind;
    bool open;
    bool initial_input; /* json holds the start event's non-empty input, replaced by any delta */
    aw_buf id, name, json;
} aw_anthropic_block;

typedef struct aw_anthropic_reader {
    aw_reply_base base;
    aw_anthropic_block *blocks; /* by content block index */
    size_t nblocks;
    bool started, stopped;      /* message_start, message_stop */
} aw_anthropic_reader;

extern const aw_reply_reader_ops aw_anthropic_reader_ops;

#endif
