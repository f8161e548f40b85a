/* Between the parts of the MCP tool source: its configuration reader
 * (mcp_config.c), the source and its calls (mcp_client.c), and the
 * handshake and tool lists (mcp_session.c). Not installed. */
#ifndef AW_MCP_CLIENT_H
#define AW_MCP_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "agentwire/buf.h"
#include "agentwire/mcp.h"
#include "agentwire/proc.h"
#include "internal/mcp_impl.h"
#include "internal/mcp_reader.h"

#define AW_MCP_STDERR_KEEP 200 /* the last stderr line kept for messages */

/* A source for server `name` running argv (with env entries "NAME=VALUE"
 * and cwd), all taken over (freed with the source, also on failure); or,
 * when unsupported is set, a source whose start fails saying so. */
aw_tool_source *aw__mcp_source_make(aw_loop *l, const char *name, const aw_mcp_options *opts, char **argv,
                                    char **env, char *cwd, char *unsupported, aw_error *err);

typedef enum server_state {
    SERVER_IDLE = 0,
    SERVER_INITIALIZING, /* initialize sent */
    SERVER_LISTING,      /* the first tools/list of this process under way */
    SERVER_READY,
    SERVER_DOWN
} server_state;

typedef struct mcp_call mcp_call;

typedef struct mcp_source {
    aw_tool_source base;
    aw_loop *loop;
    const aw_allocator *alloc;
    char *server;       /* the configuration's name */
    char *prefix;       /* tool names start with prefix__ */
    char **argv, **env; /* NULL-terminated */
    char *cwd;
    char *unsupported;  /* why this server cannot be used (another transport) */
    int64_t init_timeout_ms, grace_ms;
    size_t max_line;
    char *stderr_path;
    int stderr_fd;

    aw_proc *proc;
    mcp_reader *reader;
    server_state state;
    unsigned starts;
    char down_reason[AW_ERROR_MESSAGE_MAX + 64];
    int64_t next_id, init_id, list_id;
    aw_timer *init_timer; /* bounds initialize + the first tools/list, and each re-list */
    aw_timer *ready_timer;
    void (*ready)(void *ctx, aw_tool_source *s, const aw_error *err);
    void *ready_ctx;
    bool told_ready;
    aw_error start_error;
    char version[16];

    mcp_toolset *tools;    /* the list offered now (older ones behind it) */
    mcp_toolset *building; /* the pages of a tools/list under way */
    size_t pages;
    unsigned list_changes;
    bool list_again;       /* list_changed came while listing */

    mcp_call *calls;       /* sent, or waiting for a restarting server */
    aw_buf outq;           /* lines sent from inside our callbacks, written as one when they return */
    aw_buf err_line;       /* stderr: the line under way */
    char last_stderr[AW_MCP_STDERR_KEEP + 1];
    unsigned garbage;
    int depth;
    bool dying;
} mcp_source;

/* ---- mcp_client.c ---------------------------------------------------------- */

/* Entry points from the loop count themselves (see mcp_client.c); leave
 * is false when the source was destroyed meanwhile and is gone. */
void aw__mcp_enter(mcp_source *s);
bool aw__mcp_leave(mcp_source *s);
void aw__mcp_log(mcp_source *s, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int aw__mcp_send_request(mcp_source *s, const char *method, const char *params, int64_t *id);
int aw__mcp_send_notification(mcp_source *s, const char *method, const char *params);
/* Fail every call (or the sent ones only) with "server 'NAME' WHY". */
void aw__mcp_fail_calls(mcp_source *s, bool sent_only, const char *why);
/* Send the calls that waited for the server to be ready. */
void aw__mcp_send_queued(mcp_source *s);

/* ---- mcp_session.c ------------------------------------------------------------ */

int aw__mcp_send_initialize(mcp_source *s);
void aw__mcp_on_init_answer(mcp_source *s, const mcp_msg *m);
void aw__mcp_on_list_answer(mcp_source *s, const mcp_msg *m);
/* notifications/tools/list_changed: list again (once the list under way is in). */
void aw__mcp_start_relist(mcp_source *s);
/* The server cannot be used: the first start tells the toolbox, a restart
 * fails the calls that waited for it. */
void aw__mcp_init_failed(mcp_source *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void aw__mcp_init_timed_out(void *ctx);    /* a timer's */
void aw__mcp_tell_start_error(void *ctx);  /* a timer's */
void aw__mcp_stop_process(mcp_source *s);

#endif
