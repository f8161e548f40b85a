/* The MCP handshake and tool lists of a server (see mcp_client.c for the
 * source as a whole): `initialize` with the newest protocol version, an
 * older one the server answers with accepted, unknown ones refused;
 * `notifications/initialized`; `tools/list` page by page, within the
 * handshake's time budget; the list read again on
 * `notifications/tools/list_changed`. A handshake that fails makes the
 * first start unusable, or a restart fail the calls that waited for it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "internal/mcp_client.h"
#include "internal/rt_util.h"

#define MAX_TOOLS 10000     /* a server offering more is cut there */
#define MAX_PAGES 1000      /* tools/list pages, against a cursor that never ends */
#define MAX_LIST_CHANGES 32 /* each change keeps the old list alive (see mcp_impl.h) */

/* ---- the tool list -------------------------------------------------------------------- */

static void warn_tool(void *ctx, const char *msg) { aw__mcp_log(ctx, AW_LOG_WARN, "%s", msg); }

static int request_list(mcp_source *s, const aw_json_value *cursor)
{
    aw_buf p;
    aw_buf_init(&p, s->alloc);
    int rc = 0;
    if (cursor)
        rc = aw_buf_append_str(&p, "{\"cursor\":") || aw_json_write(cursor, NULL, &p, NULL) || aw_buf_putc(&p, '}');
    if (!rc)
        rc = aw__mcp_send_request(s, "tools/list", cursor ? p.data : NULL, &s->list_id);
    aw_buf_free(&p);
    return rc;
}

void aw__mcp_start_relist(mcp_source *s)
{
    if (s->state == SERVER_LISTING)
        s->list_again = true; /* the list under way may be the old one */
    if (s->state != SERVER_READY)
        return;
    if (s->list_id) {
        s->list_again = true;
        return;
    }
    s->building = mcp_toolset_new(s->alloc);
    s->pages = 0;
    if (!s->building || request_list(s, NULL)) {
        mcp_toolset_free(s->alloc, s->building);
        s->building = NULL;
        s->list_id = 0;
        aw__mcp_log(s, AW_LOG_ERROR, "out of memory asking for the new tool list");
        return;
    }
    if (!s->init_timer)
        s->init_timer = aw_loop_timer(s->loop, s->init_timeout_ms, aw__mcp_init_timed_out, s);
    s->base.refreshing = true;
}

/* A fetch of the changed list ended: whoever waits for it goes on. */
static void refresh_ended(mcp_source *s)
{
    if (!s->base.refreshing || s->list_id)
        return;
    s->base.refreshing = false;
    if (s->base.changed && !s->dying)
        s->base.changed(s->base.changed_ctx);
}

static void become_ready(mcp_source *s)
{
    s->state = SERVER_READY;
    aw_timer_free(s->init_timer);
    s->init_timer = NULL;
    aw__mcp_send_queued(s);
    if (!s->told_ready) {
        s->told_ready = true;
        s->ready(s->ready_ctx, &s->base, NULL);
    }
}

/* The list is whole: offered at once (the first), or in place of the old. */
static void list_complete(mcp_source *s)
{
    mcp_toolset *fresh = s->building;
    s->building = NULL;
    s->list_id = 0;
    bool first = s->state == SERVER_LISTING;
    bool restarted = first && s->told_ready;
    bool same = s->tools && mcp_toolset_equal(s->tools, fresh);
    if (!same && s->tools && !first && s->list_changes >= MAX_LIST_CHANGES) {
        aw__mcp_log(s, AW_LOG_WARN, "the tool list changed more than %d times; later changes are not taken",
                 MAX_LIST_CHANGES);
        same = true;
    }
    if (same) {
        mcp_toolset_free(s->alloc, fresh);
    } else {
        fresh->older = s->tools;
        s->tools = fresh;
        if (fresh->older)
            s->list_changes++;
    }
    if (first) {
        become_ready(s);
        if (!same && restarted && s->base.changed && !s->dying)
            s->base.changed(s->base.changed_ctx);
    } else {
        aw_timer_free(s->init_timer);
        s->init_timer = NULL;
        if (!same && s->base.changed && !s->base.refreshing)
            s->base.changed(s->base.changed_ctx);
    }
    if (s->list_again && !s->dying) {
        s->list_again = false;
        aw__mcp_start_relist(s);
    }
    refresh_ended(s);
}

void aw__mcp_on_list_answer(mcp_source *s, const mcp_msg *m)
{
    bool first = s->state == SERVER_LISTING;
    if (m->kind == MCP_MSG_ERROR) {
        mcp_toolset_free(s->alloc, s->building);
        s->building = NULL;
        s->list_id = 0;
        if (first) {
            aw__mcp_init_failed(s, "tools/list failed: %.*s (error %lld)", (int)m->error_message.len, m->error_message.ptr,
                        (long long)m->error_code);
        } else {
            aw__mcp_log(s, AW_LOG_WARN, "tools/list failed: %.*s; the old list stays", (int)m->error_message.len,
                     m->error_message.ptr);
            aw_timer_free(s->init_timer);
            s->init_timer = NULL;
            refresh_ended(s);
        }
        return;
    }
    const aw_json_value *tools = aw_json_get(m->result, "tools");
    int rc = aw_json_is_array(tools) ? mcp_toolset_add_page(s->building, s->prefix, tools, MAX_TOOLS, warn_tool, s) : 0;
    if (rc == AW_ENOMEM) {
        if (first) {
            aw__mcp_init_failed(s, "out of memory reading its tool list");
            return;
        }
        aw__mcp_log(s, AW_LOG_ERROR, "out of memory reading its new tool list; the old list stays");
        mcp_toolset_free(s->alloc, s->building);
        s->building = NULL;
        s->list_id = 0;
        return;
    }
    const aw_json_value *cursor = aw_json_get(m->result, "nextCursor");
    if (rc == AW_ELIMIT || ++s->pages >= MAX_PAGES) {
        aw__mcp_log(s, AW_LOG_WARN, "the tool list is cut at %zu tools (%zu pages)", s->building->count, s->pages);
        cursor = NULL;
    }
    if (aw_json_is_string(cursor)) {
        if (request_list(s, cursor)) {
            if (first)
                aw__mcp_init_failed(s, "out of memory asking for its tools");
            return;
        }
        return;
    }
    list_complete(s);
}

/* ---- the handshake ------------------------------------------------------------------- */

void aw__mcp_tell_start_error(void *ctx)
{
    mcp_source *s = ctx;
    aw__mcp_enter(s);
    aw_timer_free(s->ready_timer);
    s->ready_timer = NULL;
    if (!s->told_ready) {
        s->told_ready = true;
        s->ready(s->ready_ctx, &s->base, &s->start_error);
    }
    aw__mcp_leave(s);
}

void aw__mcp_stop_process(mcp_source *s)
{
    if (s->proc && aw_proc_running(s->proc)) {
        aw_proc_close_stdin(s->proc);
        aw_proc_terminate(s->proc, s->grace_ms);
    }
}

/* The server cannot be used: the first start tells the toolbox; a restart
 * fails the calls that waited for it. */
void aw__mcp_init_failed(mcp_source *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->down_reason, sizeof s->down_reason, fmt, ap);
    va_end(ap);
    bool restart = s->told_ready;
    s->state = SERVER_DOWN;
    aw_timer_free(s->init_timer);
    s->init_timer = NULL;
    mcp_toolset_free(s->alloc, s->building);
    s->building = NULL;
    s->init_id = s->list_id = 0;
    aw__mcp_stop_process(s);
    if (!restart) {
        aw_rt_error(&s->start_error, AW_EINVAL, "%s", s->down_reason);
        s->told_ready = true;
        s->ready(s->ready_ctx, &s->base, &s->start_error);
        return;
    }
    aw__mcp_log(s, AW_LOG_ERROR, "could not be restarted: %s", s->down_reason);
    char why[AW_ERROR_MESSAGE_MAX + 128];
    snprintf(why, sizeof why, "could not be restarted: %s", s->down_reason);
    aw__mcp_fail_calls(s, false, why);
}

void aw__mcp_init_timed_out(void *ctx)
{
    mcp_source *s = ctx;
    aw__mcp_enter(s);
    aw_timer_free(s->init_timer);
    s->init_timer = NULL;
    if (s->state == SERVER_INITIALIZING) {
        aw__mcp_init_failed(s, "did not answer initialize within %lld ms", (long long)s->init_timeout_ms);
    } else if (s->state == SERVER_LISTING) {
        aw__mcp_init_failed(s, "did not answer tools/list within %lld ms", (long long)s->init_timeout_ms);
    } else if (s->list_id) {
        aw__mcp_log(s, AW_LOG_WARN, "did not answer tools/list within %lld ms; the old list stays",
                 (long long)s->init_timeout_ms);
        mcp_toolset_free(s->alloc, s->building);
        s->building = NULL;
        s->list_id = 0;
        refresh_ended(s);
    }
    aw__mcp_leave(s);
}

static bool known_version(aw_text v)
{
    for (size_t i = 0; i < aw_mcp_version_count; i++)
        if (strlen(aw_mcp_versions[i]) == v.len && memcmp(aw_mcp_versions[i], v.ptr, v.len) == 0)
            return true;
    return false;
}

void aw__mcp_on_init_answer(mcp_source *s, const mcp_msg *m)
{
    s->init_id = 0;
    if (m->kind == MCP_MSG_ERROR) {
        aw__mcp_init_failed(s, "refused initialize: %.*s (error %lld)", (int)m->error_message.len, m->error_message.ptr,
                    (long long)m->error_code);
        return;
    }
    const aw_json_value *v = aw_json_get(m->result, "protocolVersion");
    if (!aw_json_is_string(v)) {
        aw__mcp_init_failed(s, "answered initialize without a protocolVersion");
        return;
    }
    aw_text version = {v->u.str.ptr, v->u.str.len};
    if (!known_version(version)) {
        aw__mcp_init_failed(s, "answered initialize with protocol version '%.*s', which agentwire does not speak "
                       "(it speaks 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05)",
                    (int)(version.len > 40 ? 40 : version.len), version.ptr);
        return;
    }
    memcpy(s->version, version.ptr, version.len);
    s->version[version.len] = 0;
    const aw_json_value *info = aw_json_get(m->result, "serverInfo");
    const aw_json_value *name = aw_json_get(info, "name"), *ver = aw_json_get(info, "version");
    aw__mcp_log(s, AW_LOG_DEBUG, "initialized: %.*s %.*s, protocol %s", aw_json_is_string(name) ? (int)name->u.str.len : 0,
             aw_json_is_string(name) ? name->u.str.ptr : "", aw_json_is_string(ver) ? (int)ver->u.str.len : 0,
             aw_json_is_string(ver) ? ver->u.str.ptr : "", s->version);
    if (aw__mcp_send_notification(s, "notifications/initialized", NULL)) {
        aw__mcp_init_failed(s, "out of memory");
        return;
    }
    s->building = mcp_toolset_new(s->alloc);
    s->pages = 0;
    if (!s->building) {
        aw__mcp_init_failed(s, "out of memory");
        return;
    }
    s->state = SERVER_LISTING;
    if (!aw_json_get(aw_json_get(m->result, "capabilities"), "tools")) {
        aw__mcp_log(s, AW_LOG_INFO, "offers no tools");
        list_complete(s);
        return;
    }
    if (request_list(s, NULL))
        aw__mcp_init_failed(s, "out of memory");
}

int aw__mcp_send_initialize(mcp_source *s)
{
    aw_buf p;
    aw_buf_init(&p, s->alloc);
    int rc = aw_buf_printf(&p,
                           "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                           "\"clientInfo\":{\"name\":\"agentwire\",\"version\":\"%s\"}}",
                           aw_mcp_versions[0], aw_version()) ||
             aw__mcp_send_request(s, "initialize", p.data, &s->init_id);
    aw_buf_free(&p);
    return rc;
}

