/* The MCP stdio framing: JSON-RPC 2.0 messages, one per line, read as a
 * server writes them, in chunks of any size, and sorted into requests,
 * notifications, results and errors.
 *
 * A line longer than max_line is never held whole: once it passes the
 * limit its bytes are only skimmed (string and nesting state, a few bytes
 * of the top-level keys) for the top-level "id", so the request it
 * answered can still be failed with a clear error. A line that is not
 * JSON-RPC is skimmed the same way. Not installed. */
#ifndef AW_MCP_READER_H
#define AW_MCP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentwire/alloc.h"
#include "agentwire/event.h"
#include "agentwire/json.h"

typedef enum mcp_msg_kind {
    MCP_MSG_REQUEST = 1,  /* "method" and "id": the server asks us something */
    MCP_MSG_NOTIFICATION, /* "method", no "id" */
    MCP_MSG_RESULT,       /* "id" and "result": the answer to one of our requests */
    MCP_MSG_ERROR,        /* "id" and "error": a JSON-RPC error answering one of ours */
    MCP_MSG_INVALID,      /* a line that is not a JSON-RPC message (problem says why) */
    MCP_MSG_OVERSIZED     /* a line longer than max_line, discarded (bytes says how long) */
} mcp_msg_kind;

typedef struct mcp_msg {
    mcp_msg_kind kind;
    const aw_json_value *root;   /* the whole message (not for INVALID/OVERSIZED) */
    aw_text method;              /* REQUEST, NOTIFICATION */
    const aw_json_value *id;     /* REQUEST, RESULT, ERROR: the id as sent */
    bool has_int_id;             /* the id is an integer (ours always are), also as */
    int64_t int_id;              /* ...found by the skim of an INVALID or OVERSIZED line */
    const aw_json_value *params; /* REQUEST, NOTIFICATION: may be NULL */
    const aw_json_value *result; /* RESULT */
    int64_t error_code;          /* ERROR */
    aw_text error_message;       /* ERROR (may be empty) */
    const char *problem;         /* INVALID: why, "expected ',' or '}' ... at column 17" */
    aw_text line;                /* INVALID: the line (cut to its first 200 bytes) */
    uint64_t bytes;              /* the line's length */
} mcp_msg;

typedef struct mcp_reader mcp_reader;

/* Return nonzero to stop reading: the feed returns AW_ESTOP at once. */
typedef int (*mcp_msg_fn)(void *ctx, const mcp_msg *m);

/* max_line 0: 16 MiB. NULL when out of memory. */
mcp_reader *mcp_reader_new(const aw_allocator *alloc, size_t max_line);
void mcp_reader_free(mcp_reader *r);
/* Forget a partial line (a restarted server starts afresh). */
void mcp_reader_reset(mcp_reader *r);
/* Read a chunk; fn is called for each line it completes. 0, AW_ESTOP, or
 * AW_ENOMEM (the line under way is lost; reading can go on). */
int mcp_reader_feed(mcp_reader *r, const char *p, size_t n, mcp_msg_fn fn, void *ctx);

#endif
