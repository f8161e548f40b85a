/* An MCP server over stdio as a tool source.
 *
 * The life of a server: spawned in a process group of its own, asked to
 * `initialize` (the newest protocol version offered, an older one the
 * server answers with accepted), told `notifications/initialized`, asked
 * for its tools (`tools/list`, page by page), then called (`tools/call`,
 * each with a progress token). Everything is bounded: the handshake by
 * init_timeout_ms, each call by the toolbox's timeout (a call given up is
 * cancelled with `notifications/cancelled`), each line by max_line.
 *
 * A server that exits while it is in use fails the calls it was answering
 * and is started again, once; calls made while it restarts wait for it.
 * A second exit leaves it down, and later calls fail at once saying so.
 *
 * The handshake and the tool lists are in mcp_session.c.
 *
 * Callbacks into the caller (a call's done, the toolbox's ready) may free
 * the whole toolbox, and with it this source: entry points from the loop
 * count themselves in `depth`, and a destroy that comes while one is under
 * way only marks the source, which is freed once they have returned. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentwire/agentwire.h"
#include "agentwire/mcp.h"
#include "agentwire/proc.h"
#include "internal/mcp_client.h"
#include "internal/mcp_impl.h"
#include "internal/mcp_reader.h"
#include "internal/rt_util.h"

#define DEFAULT_INIT_TIMEOUT_MS 30000
#define DEFAULT_GRACE_MS 2000
#define STDERR_LINE_MAX 2048
#define GARBAGE_LOGGED 10       /* lines that are not JSON-RPC, logged before going quiet */
#define JSONRPC_METHOD_NOT_FOUND (-32601)

struct mcp_call {
    mcp_source *s;
    int64_t id;        /* 0: not sent yet */
    char *tool;        /* the MCP name */
    aw_buf args;       /* the arguments, as JSON */
    aw_tool_progress_fn on_progress;
    void *progress_ctx;
    aw_tool_done_fn done;
    void *ctx;
    aw_timer *answer_timer; /* a failure answered from the loop */
    char *failure;
    mcp_call *prev, *next;
};

static void free_source(mcp_source *s);
static int spawn_server(mcp_source *s, aw_error *err);

void aw__mcp_log(mcp_source *s, int level, const char *fmt, ...)
{
    if (!s->base.log)
        return;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->base.log(s->base.log_ctx, level, s->base.name, msg);
}

/* ---- entry points from the loop ----------------------------------------------------- */

void aw__mcp_enter(mcp_source *s) { s->depth++; }

static void flush_out(mcp_source *s)
{
    if (s->outq.len && s->proc && aw_proc_write(s->proc, s->outq.data, s->outq.len))
        aw__mcp_log(s, AW_LOG_ERROR, "out of memory writing to the server");
    aw_buf_clear(&s->outq);
}

/* false: the source was destroyed meanwhile, and is gone now. */
bool aw__mcp_leave(mcp_source *s)
{
    if (--s->depth == 0 && s->dying) {
        free_source(s);
        return false;
    }
    if (s->depth == 0)
        flush_out(s);
    return !s->dying;
}

/* ---- sending ---------------------------------------------------------------------- */

/* Lines sent while one of our callbacks is under way (a reply read, a
 * call made from its done) wait in outq and go out in one write when the
 * callback returns: with calls in flight, one write for all the calls that
 * a chunk of answers let start. */
static int send_line(mcp_source *s, aw_buf *line)
{
    int rc = aw_buf_putc(line, '\n');
    if (!rc && s->proc)
        rc = s->depth ? aw_buf_append(&s->outq, line->data, line->len) : aw_proc_write(s->proc, line->data, line->len);
    aw_buf_free(line);
    return rc;
}

static int put_int(aw_buf *b, int64_t v)
{
    char digits[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do
        digits[sizeof digits - 1 - n++] = (char)('0' + u % 10);
    while ((u /= 10) && n < 22);
    if (v < 0)
        digits[sizeof digits - 1 - n++] = '-';
    return aw_buf_append(b, digits + sizeof digits - n, (size_t)n);
}

/* {"jsonrpc":"2.0","id":N,"method":M,"params":PARAMS} where params is
 * JSON text already (or NULL). */
int aw__mcp_send_request(mcp_source *s, const char *method, const char *params, int64_t *id)
{
    aw_buf b;
    aw_buf_init(&b, s->alloc);
    *id = ++s->next_id;
    int rc = aw_buf_append_str(&b, "{\"jsonrpc\":\"2.0\",\"id\":") || put_int(&b, *id) ||
             aw_buf_append_str(&b, ",\"method\":\"") || aw_buf_append_str(&b, method) || aw_buf_putc(&b, '"') ||
             (params && (aw_buf_append_str(&b, ",\"params\":") || aw_buf_append_str(&b, params))) ||
             aw_buf_putc(&b, '}');
    if (rc) {
        aw_buf_free(&b);
        return AW_ENOMEM;
    }
    return send_line(s, &b);
}

int aw__mcp_send_notification(mcp_source *s, const char *method, const char *params)
{
    aw_buf b;
    aw_buf_init(&b, s->alloc);
    if (aw_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"", method) ||
        (params && (aw_buf_append_str(&b, ",\"params\":") || aw_buf_append_str(&b, params))) || aw_buf_putc(&b, '}')) {
        aw_buf_free(&b);
        return AW_ENOMEM;
    }
    return send_line(s, &b);
}

/* An answer to a request of the server's: its id echoed as it came. */
static int send_answer(mcp_source *s, const aw_json_value *id, const char *result, int64_t error_code,
                       const char *error_message)
{
    aw_buf b;
    aw_buf_init(&b, s->alloc);
    int rc = aw_buf_append_str(&b, "{\"jsonrpc\":\"2.0\",\"id\":") || aw_json_write(id, NULL, &b, NULL);
    if (!rc && result)
        rc = aw_buf_append_str(&b, ",\"result\":") || aw_buf_append_str(&b, result);
    else if (!rc)
        rc = aw_buf_printf(&b, ",\"error\":{\"code\":%lld,\"message\":", (long long)error_code) ||
             aw_json_write_string(&b, error_message, strlen(error_message)) || aw_buf_putc(&b, '}');
    if (rc || aw_buf_putc(&b, '}')) {
        aw_buf_free(&b);
        return AW_ENOMEM;
    }
    return send_line(s, &b);
}

static int send_call(mcp_source *s, mcp_call *c)
{
    aw_buf p;
    aw_buf_init(&p, s->alloc);
    int64_t id = s->next_id + 1;
    int rc = aw_buf_append_str(&p, "{\"name\":") || aw_json_write_string(&p, c->tool, strlen(c->tool)) ||
             aw_buf_append_str(&p, ",\"arguments\":") || aw_buf_append(&p, c->args.data, c->args.len) ||
             aw_buf_append_str(&p, ",\"_meta\":{\"progressToken\":") || put_int(&p, id) || aw_buf_append(&p, "}}", 2);
    if (!rc)
        rc = aw__mcp_send_request(s, "tools/call", p.data, &c->id);
    aw_buf_free(&p);
    return rc;
}

/* ---- calls ------------------------------------------------------------------------ */

static void unlink_call(mcp_call *c)
{
    mcp_source *s = c->s;
    if (c->prev)
        c->prev->next = c->next;
    else if (s->calls == c)
        s->calls = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void free_call(mcp_call *c)
{
    const aw_allocator *a = c->s->alloc;
    unlink_call(c);
    aw_timer_free(c->answer_timer);
    aw_buf_free(&c->args);
    aw_free(a, c->tool);
    aw_free(a, c->failure);
    aw_free(a, c);
}

static mcp_call *find_call(mcp_source *s, int64_t id)
{
    for (mcp_call *c = s->calls; c; c = c->next)
        if (c->id == id && id != 0)
            return c;
    return NULL;
}

/* The call's end: the call goes first (done may free everything). */
static void finish_call(mcp_call *c, const aw_tool_result *res)
{
    aw_tool_done_fn done = c->done;
    void *ctx = c->ctx;
    free_call(c);
    done(ctx, res);
}

static void fail_call(mcp_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_call(mcp_call *c, const char *fmt, ...)
{
    char msg[640];
    int n = snprintf(msg, sizeof msg, "(tool failed: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    if ((size_t)n < sizeof msg - 1)
        strcat(msg, ")");
    aw_tool_result res = {.ok = false, .output = {msg, strlen(msg)}, .output_bytes = strlen(msg)};
    finish_call(c, &res);
}

/* Fail every call (sent ones only, or all): each taken from the list
 * before its done, which may cancel others. */
void aw__mcp_fail_calls(mcp_source *s, bool sent_only, const char *why)
{
    for (;;) {
        mcp_call *c = s->calls;
        while (c && sent_only && c->id == 0)
            c = c->next;
        if (!c || s->dying)
            return;
        fail_call(c, "server '%s' %s", s->server, why);
    }
}

static void answer_from_loop(void *ctx)
{
    mcp_call *c = ctx;
    mcp_source *s = c->s;
    aw__mcp_enter(s);
    char msg[640];
    snprintf(msg, sizeof msg, "(tool failed: %s)", c->failure ? c->failure : "out of memory");
    aw_tool_result res = {.ok = false, .output = {msg, strlen(msg)}, .output_bytes = strlen(msg)};
    finish_call(c, &res);
    aw__mcp_leave(s);
}

void aw__mcp_send_queued(mcp_source *s)
{
    for (mcp_call *c = s->calls; c; c = c->next)
        if (c->id == 0 && send_call(s, c)) {
            c->failure = aw_rt_strdup(s->alloc, "out of memory sending the call");
            if (!c->answer_timer)
                c->answer_timer = aw_loop_timer(s->loop, 0, answer_from_loop, c);
        }
}

/* ---- what the server says ---------------------------------------------------------------- */

static void log_level_message(mcp_source *s, const aw_json_value *params)
{
    aw_text level = {"info", 4};
    const aw_json_value *lv = aw_json_get(params, "level");
    if (aw_json_is_string(lv))
        level = (aw_text){lv->u.str.ptr, lv->u.str.len};
    int our = AW_LOG_INFO;
    if (level.len == 5 && !memcmp(level.ptr, "debug", 5))
        our = AW_LOG_DEBUG;
    else if (level.len == 7 && !memcmp(level.ptr, "warning", 7))
        our = AW_LOG_WARN;
    else if ((level.len == 5 && !memcmp(level.ptr, "error", 5)) || (level.len == 8 && !memcmp(level.ptr, "critical", 8)) ||
             (level.len == 5 && !memcmp(level.ptr, "alert", 5)) || (level.len == 9 && !memcmp(level.ptr, "emergency", 9)))
        our = AW_LOG_ERROR;
    aw_buf text;
    aw_buf_init(&text, s->alloc);
    const aw_json_value *logger = aw_json_get(params, "logger"), *data = aw_json_get(params, "data");
    if (aw_json_is_string(logger))
        aw_buf_printf(&text, "[%.*s] ", (int)(logger->u.str.len > 60 ? 60 : logger->u.str.len), logger->u.str.ptr);
    if (aw_json_is_string(data))
        aw_buf_append(&text, data->u.str.ptr, data->u.str.len > 400 ? 400 : data->u.str.len);
    else if (data)
        aw_json_write(data, NULL, &text, NULL);
    if (text.data)
        aw__mcp_log(s, our, "%.*s", (int)(text.len > 500 ? 500 : text.len), text.data);
    aw_buf_free(&text);
}

static void on_progress(mcp_source *s, const aw_json_value *params)
{
    const aw_json_value *token = aw_json_get(params, "progressToken");
    const aw_json_value *progress = aw_json_get(params, "progress"), *total = aw_json_get(params, "total");
    if (!aw_json_is_number(token) || !(token->flags & AW_JSON_F_INT) || !aw_json_is_number(progress))
        return;
    mcp_call *c = find_call(s, token->u.num.i);
    if (!c || !c->on_progress)
        return;
    const aw_json_value *msg = aw_json_get(params, "message");
    aw_text text = aw_json_is_string(msg) ? (aw_text){msg->u.str.ptr, msg->u.str.len} : (aw_text){"", 0};
    c->on_progress(c->progress_ctx, progress->u.num.d, aw_json_is_number(total) ? total->u.num.d : -1, text);
}

static void on_notification(mcp_source *s, const mcp_msg *m)
{
#define IS(name) (m->method.len == sizeof(name) - 1 && memcmp(m->method.ptr, name, m->method.len) == 0)
    if (IS("notifications/progress"))
        on_progress(s, m->params);
    else if (IS("notifications/message"))
        log_level_message(s, m->params);
    else if (IS("notifications/tools/list_changed"))
        aw__mcp_start_relist(s);
#undef IS
}

/* Requests of the server's: ping is answered; the rest (sampling, roots,
 * elicitation) are capabilities this client does not declare. */
static void on_request(mcp_source *s, const mcp_msg *m)
{
    int rc;
    if (m->method.len == 4 && !memcmp(m->method.ptr, "ping", 4)) {
        rc = send_answer(s, m->id, "{}", 0, NULL);
    } else {
        char msg[200];
        snprintf(msg, sizeof msg, "Method not found: %.*s", (int)(m->method.len > 100 ? 100 : m->method.len),
                 m->method.ptr);
        aw__mcp_log(s, AW_LOG_INFO, "asked for '%.*s', which agentwire does not offer",
                 (int)(m->method.len > 100 ? 100 : m->method.len), m->method.ptr);
        rc = send_answer(s, m->id, NULL, JSONRPC_METHOD_NOT_FOUND, msg);
    }
    if (rc)
        aw__mcp_log(s, AW_LOG_ERROR, "out of memory answering a request");
}

static void on_call_answer(mcp_source *s, mcp_call *c, const mcp_msg *m)
{
    if (m->kind == MCP_MSG_ERROR) {
        fail_call(c, "server '%s' answered with error %lld: %.*s", s->server, (long long)m->error_code,
                  (int)(m->error_message.len > 200 ? 200 : m->error_message.len), m->error_message.ptr);
        return;
    }
    aw_buf text;
    aw_buf_init(&text, s->alloc);
    bool is_error = false;
    const aw_json_value *structured = NULL;
    if (mcp_result_text(m->result, &text, &is_error, &structured)) {
        aw_buf_free(&text);
        fail_call(c, "out of memory reading the answer of server '%s'", s->server);
        return;
    }
    aw_tool_result res = {.ok = !is_error, .structured = structured};
    if (is_error && !text.len)
        aw_buf_printf(&text, "(tool failed: server '%s' reported an error without a message)", s->server);
    res.output = (aw_text){text.data ? text.data : "", text.len};
    res.output_bytes = text.len;
    finish_call(c, &res);
    aw_buf_free(&text);
}

/* An answer we cannot read: whatever it answered fails, saying why. */
static void unreadable_answer(mcp_source *s, const mcp_msg *m, const char *why)
{
    if (m->has_int_id && m->int_id == s->init_id && s->init_id) {
        aw__mcp_init_failed(s, "answered initialize with %s", why);
    } else if (m->has_int_id && m->int_id == s->list_id && s->list_id) {
        if (s->state == SERVER_LISTING) {
            aw__mcp_init_failed(s, "answered tools/list with %s", why);
        } else {
            aw__mcp_log(s, AW_LOG_WARN, "answered tools/list with %s; the old list stays", why);
            mcp_toolset_free(s->alloc, s->building);
            s->building = NULL;
            s->list_id = 0;
        }
    } else if (m->has_int_id && find_call(s, m->int_id)) {
        fail_call(find_call(s, m->int_id), "server '%s' answered with %s", s->server, why);
    } else if (s->garbage < GARBAGE_LOGGED) {
        if (++s->garbage == GARBAGE_LOGGED)
            aw__mcp_log(s, AW_LOG_WARN, "wrote %s (skipped; further such lines are not logged)", why);
        else
            aw__mcp_log(s, AW_LOG_WARN, "wrote %s (skipped)", why);
    }
}

static int on_message(void *ctx, const mcp_msg *m)
{
    mcp_source *s = ctx;
    char why[AW_ERROR_MESSAGE_MAX + 300];
    switch (m->kind) {
    case MCP_MSG_RESULT:
    case MCP_MSG_ERROR:
        if (m->has_int_id && m->int_id == s->init_id && s->init_id) {
            aw__mcp_on_init_answer(s, m);
        } else if (m->has_int_id && m->int_id == s->list_id && s->list_id) {
            aw__mcp_on_list_answer(s, m);
        } else if (m->has_int_id && find_call(s, m->int_id)) {
            on_call_answer(s, find_call(s, m->int_id), m);
        } else {
            aw__mcp_log(s, AW_LOG_DEBUG, "an answer to no request under way (a cancelled call's) is dropped");
        }
        break;
    case MCP_MSG_REQUEST:
        on_request(s, m);
        break;
    case MCP_MSG_NOTIFICATION:
        on_notification(s, m);
        break;
    case MCP_MSG_INVALID:
        snprintf(why, sizeof why, "a line that is not a JSON-RPC message (%s): %.*s", m->problem, (int)m->line.len,
                 m->line.ptr ? m->line.ptr : "");
        unreadable_answer(s, m, why);
        break;
    case MCP_MSG_OVERSIZED:
        snprintf(why, sizeof why, "a message of %llu bytes, over the limit of %zu", (unsigned long long)m->bytes,
                 s->max_line);
        unreadable_answer(s, m, why);
        break;
    }
    return s->dying;
}

/* ---- the process ------------------------------------------------------------------------ */

static void on_stdout(void *ctx, const char *p, size_t n)
{
    mcp_source *s = ctx;
    aw__mcp_enter(s);
    if (mcp_reader_feed(s->reader, p, n, on_message, s) == AW_ENOMEM && !s->dying)
        aw__mcp_log(s, AW_LOG_ERROR, "out of memory reading a message");
    aw__mcp_leave(s);
}

static void stderr_line(mcp_source *s, const char *p, size_t n)
{
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' '))
        n--;
    if (!n)
        return;
    size_t keep = n > AW_MCP_STDERR_KEEP ? AW_MCP_STDERR_KEEP : n;
    memcpy(s->last_stderr, p, keep);
    s->last_stderr[keep] = 0;
    if (s->stderr_fd >= 0) {
        aw_buf b;
        aw_buf_init(&b, s->alloc);
        if (!aw_buf_printf(&b, "%s: ", s->server) && !aw_buf_append(&b, p, n) && !aw_buf_putc(&b, '\n'))
            (void)!aw_rt_write_nosigpipe(s->stderr_fd, b.data, b.len);
        aw_buf_free(&b);
        return;
    }
    aw__mcp_log(s, AW_LOG_INFO, "%.*s", (int)(n > 500 ? 500 : n), p);
}

static void on_stderr(void *ctx, const char *p, size_t n)
{
    mcp_source *s = ctx;
    aw__mcp_enter(s);
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t seg = nl ? (size_t)(nl - p) : n;
        size_t room = STDERR_LINE_MAX - s->err_line.len;
        aw_buf_append(&s->err_line, p, seg < room ? seg : room);
        if (nl || s->err_line.len >= STDERR_LINE_MAX) {
            stderr_line(s, s->err_line.data ? s->err_line.data : "", s->err_line.len);
            aw_buf_clear(&s->err_line);
        }
        if (!nl)
            break;
        p += seg + 1;
        n -= seg + 1;
    }
    aw__mcp_leave(s);
}

static void describe_exit(int status, char *out, size_t size)
{
    if (WIFSIGNALED(status))
        snprintf(out, size, "killed by signal %d", WTERMSIG(status));
    else if (WIFEXITED(status))
        snprintf(out, size, "exit status %d", WEXITSTATUS(status));
    else
        snprintf(out, size, "wait status %d", status);
}

static void restart(mcp_source *s)
{
    aw_error err;
    aw__mcp_log(s, AW_LOG_WARN, "restarting it (once)");
    if (spawn_server(s, &err)) {
        s->state = SERVER_DOWN;
        snprintf(s->down_reason, sizeof s->down_reason, "could not be restarted: %s", err.message);
        aw__mcp_fail_calls(s, false, s->down_reason);
    }
}

static void on_exit_status(void *ctx, int status)
{
    mcp_source *s = ctx;
    aw__mcp_enter(s);
    char how[64];
    describe_exit(status, how, sizeof how);
    aw_proc_free(s->proc);
    s->proc = NULL;
    aw_buf_clear(&s->outq); /* lines for the process that is gone */
    mcp_reader_reset(s->reader);
    aw_buf_clear(&s->err_line);
    server_state was = s->state;
    s->init_id = s->list_id = 0;
    mcp_toolset_free(s->alloc, s->building);
    s->building = NULL;
    if (was == SERVER_DOWN) {
        /* stopped after a failed handshake: nothing more to say */
    } else if (was != SERVER_READY) {
        if (s->last_stderr[0])
            aw__mcp_init_failed(s, "exited (%s) before it was ready; its stderr ends: %s", how, s->last_stderr);
        else
            aw__mcp_init_failed(s, "exited (%s) before it was ready", how);
    } else {
        aw__mcp_log(s, AW_LOG_ERROR, "exited (%s)", how);
        /* calls made by the failed calls' callers wait for the restart */
        s->state = SERVER_IDLE;
        char why[96];
        snprintf(why, sizeof why, "exited (%s) during the call", how);
        aw__mcp_fail_calls(s, true, why);
        if (!s->dying && s->starts < 2) {
            restart(s);
        } else if (!s->dying) {
            s->state = SERVER_DOWN;
            snprintf(s->down_reason, sizeof s->down_reason, "is down: it exited twice (last: %s)", how);
            aw__mcp_fail_calls(s, false, s->down_reason);
        }
    }
    aw__mcp_leave(s);
}

static int spawn_server(mcp_source *s, aw_error *err)
{
    aw_proc_spec spec = {(const char *const *)s->argv, (const char *const *)s->env, s->cwd, true};
    aw_proc_fns fns = {on_stdout, on_stderr, on_exit_status};
    s->starts++;
    s->last_stderr[0] = 0;
    s->proc = aw_proc_spawn(s->loop, &spec, &fns, s, err);
    if (!s->proc)
        return err->code ? err->code : AW_EINVAL;
    s->state = SERVER_INITIALIZING;
    aw_timer_free(s->init_timer);
    s->init_timer = aw_loop_timer(s->loop, s->init_timeout_ms, aw__mcp_init_timed_out, s);
    if (!s->init_timer || aw__mcp_send_initialize(s)) {
        aw_proc_free(s->proc);
        s->proc = NULL;
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    return 0;
}

/* ---- the source's operations ----------------------------------------------------------- */

static int start(aw_tool_source *src, void (*ready)(void *, aw_tool_source *, const aw_error *), void *ctx)
{
    mcp_source *s = src->impl;
    s->ready = ready;
    s->ready_ctx = ctx;
    aw_error_clear(&s->start_error);
    if (s->stderr_path) {
        s->stderr_fd = open(s->stderr_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (s->stderr_fd < 0)
            aw__mcp_log(s, AW_LOG_WARN, "cannot open the stderr log %s: %s; stderr goes to the log", s->stderr_path,
                     strerror(errno));
    }
    if (s->unsupported)
        aw_rt_error(&s->start_error, AW_EINVAL, "%s", s->unsupported);
    else if (spawn_server(s, &s->start_error) == 0)
        return 0;
    s->state = SERVER_DOWN;
    /* the toolbox hears of it from the loop, as of every start */
    if (!(s->ready_timer = aw_loop_timer(s->loop, 0, aw__mcp_tell_start_error, s)))
        return AW_ENOMEM;
    return 0;
}

static size_t count(const aw_tool_source *src)
{
    const mcp_source *s = src->impl;
    return s->tools ? s->tools->count : 0;
}

static const aw_tool_def *def(const aw_tool_source *src, size_t i)
{
    const mcp_source *s = src->impl;
    return &s->tools->tools[i].def;
}

static int call(aw_tool_source *src, size_t i, const aw_json_value *args, const aw_tool_call_opts *opts,
                aw_tool_done_fn done, void *ctx, void **handle, aw_error *err)
{
    mcp_source *s = src->impl;
    if (!s->tools || i >= s->tools->count)
        return aw_rt_error(err, AW_EINVAL, "server '%s' has no tool %zu", s->server, i);
    mcp_call *c = aw_malloc(s->alloc, sizeof *c);
    if (!c)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(c, 0, sizeof *c);
    c->s = s;
    c->done = done;
    c->ctx = ctx;
    if (opts) {
        c->on_progress = opts->on_progress;
        c->progress_ctx = opts->progress_ctx;
    }
    aw_buf_init(&c->args, s->alloc);
    aw_text name = s->tools->tools[i].mcp_name;
    c->tool = aw_rt_strndup(s->alloc, name.ptr, name.len);
    int rc = !c->tool || (aw_json_is_object(args) ? aw_json_write(args, NULL, &c->args, NULL)
                                                  : aw_buf_append_str(&c->args, "{}"));
    c->next = s->calls;
    if (s->calls)
        s->calls->prev = c;
    s->calls = c;
    if (!rc && s->state == SERVER_DOWN) {
        char msg[640];
        snprintf(msg, sizeof msg, "server '%s' %s", s->server, s->down_reason);
        c->failure = aw_rt_strdup(s->alloc, msg);
        rc = !c->failure || !(c->answer_timer = aw_loop_timer(s->loop, 0, answer_from_loop, c));
    } else if (!rc && s->state == SERVER_READY) {
        rc = send_call(s, c);
    }
    /* else: the server is restarting; sent once it is ready */
    if (rc) {
        free_call(c);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    *handle = c;
    return 0;
}

static void cancel(aw_tool_source *src, void *handle)
{
    mcp_source *s = src->impl;
    mcp_call *c = handle;
    if (c->id && s->proc) {
        char params[160];
        snprintf(params, sizeof params,
                 "{\"requestId\":%lld,\"reason\":\"the client gave up on the call (timed out or stopped)\"}",
                 (long long)c->id);
        if (aw__mcp_send_notification(s, "notifications/cancelled", params))
            aw__mcp_log(s, AW_LOG_ERROR, "out of memory cancelling a call");
    }
    free_call(c);
}

/* Wait (blocking, at most ms) for the child to exit: used only while
 * shutting down, when no loop is turning to tell us. */
static bool wait_exit(aw_proc *p, int64_t ms)
{
    if (!aw_proc_running(p))
        return true;
    pid_t pid = aw_proc_pid(p);
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    int64_t end = aw_loop_clock() + ms;
    bool gone = false;
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid) {
            gone = true;
            break;
        }
        int64_t left = end - aw_loop_clock();
        if (left <= 0)
            break;
        if (fd >= 0) {
            struct pollfd pfd = {fd, POLLIN, 0};
            (void)poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
        } else {
            usleep((useconds_t)(left > 10 ? 10000 : left * 1000));
        }
    }
    if (fd >= 0)
        close(fd);
    return gone;
}

/* The specification's stdio shutdown: stdin closed, then SIGTERM, then
 * SIGKILL (aw_proc_free kills the whole group and reaps the child). */
static void shut_down(mcp_source *s)
{
    if (!s->proc)
        return;
    if (aw_proc_running(s->proc)) {
        aw_proc_close_stdin(s->proc);
        if (!wait_exit(s->proc, s->grace_ms)) {
            aw_proc_kill(s->proc, SIGTERM);
            wait_exit(s->proc, s->grace_ms);
        }
    }
    aw_proc_free(s->proc);
    s->proc = NULL;
}

static void free_source(mcp_source *s)
{
    const aw_allocator *a = s->alloc;
    while (s->calls)
        free_call(s->calls);
    shut_down(s);
    aw_timer_free(s->init_timer);
    aw_timer_free(s->ready_timer);
    mcp_reader_free(s->reader);
    mcp_toolset_free(a, s->tools);
    mcp_toolset_free(a, s->building);
    aw_buf_free(&s->err_line);
    aw_buf_free(&s->outq);
    if (s->stderr_fd >= 0)
        close(s->stderr_fd);
    aw_rt_strv_free(a, s->argv);
    aw_rt_strv_free(a, s->env);
    aw_free(a, s->cwd);
    aw_free(a, s->unsupported);
    aw_free(a, s->stderr_path);
    aw_free(a, s->server);
    aw_free(a, s->prefix);
    aw_free(a, s->base.name);
    aw_free(a, s);
}

static void destroy(aw_tool_source *src)
{
    mcp_source *s = src->impl;
    if (s->depth > 0) {
        s->dying = true; /* freed when the callback under way returns */
        return;
    }
    free_source(s);
}

static const aw_tool_source_ops mcp_ops = {"mcp", start, count, def, call, cancel, destroy};

/* ---- making one ----------------------------------------------------------------------------- */

aw_tool_source *aw__mcp_source_make(aw_loop *l, const char *name, const aw_mcp_options *opts, char **argv,
                                    char **env, char *cwd, char *unsupported, aw_error *err)
{
    const aw_allocator *a = opts && opts->alloc ? opts->alloc : aw_loop_allocator(l);
    mcp_source *s = aw_malloc(a, sizeof *s);
    if (!s) {
        aw_rt_strv_free(a, argv);
        aw_rt_strv_free(a, env);
        aw_free(a, cwd);
        aw_free(a, unsupported);
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->loop = l;
    s->alloc = a;
    s->argv = argv;
    s->env = env;
    s->cwd = cwd;
    s->unsupported = unsupported;
    s->stderr_fd = -1;
    s->base.ops = &mcp_ops;
    s->base.impl = s;
    s->init_timeout_ms = opts && opts->init_timeout_ms > 0 ? opts->init_timeout_ms : DEFAULT_INIT_TIMEOUT_MS;
    s->grace_ms = opts && opts->grace_ms > 0 ? opts->grace_ms : DEFAULT_GRACE_MS;
    s->reader = mcp_reader_new(a, opts ? opts->max_line : 0);
    s->max_line = opts && opts->max_line ? opts->max_line : 16u << 20;
    aw_buf_init(&s->err_line, a);
    aw_buf_init(&s->outq, a);
    aw_buf pre, label;
    aw_buf_init(&pre, a);
    aw_buf_init(&label, a);
    /* the prefix: the server's name as mcp_model_name writes it, without "__" */
    int rc = mcp_model_name(name, "", 0, &pre) || aw_buf_printf(&label, "mcp server '%s'", name);
    if (!rc && pre.len >= 2)
        pre.data[pre.len -= 2] = 0;
    s->prefix = aw_buf_detach(&pre, NULL);
    s->base.name = aw_buf_detach(&label, NULL);
    s->server = aw_rt_strdup(a, name);
    if (opts && opts->stderr_log)
        s->stderr_path = aw_rt_strdup(a, opts->stderr_log);
    if (rc || !s->reader || !s->prefix || !s->base.name || !s->server || (opts && opts->stderr_log && !s->stderr_path)) {
        aw_buf_free(&pre);
        aw_buf_free(&label);
        free_source(s);
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    return &s->base;
}
