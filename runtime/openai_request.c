/* The Chat Completions request body:
 *
 *   {"model":M,"messages":[system, history..., thread, ephemeral...],
 *    "tools":[{"type":"function","function":{name,description,parameters}}],
 *    "stream":true,"stream_options":{"include_usage":true},
 *    "max_tokens":N,"temperature":T}
 *
 * The history and the escaped thread come from the cache by reference;
 * only messages appended since the last request, and the bytes the thread
 * grew by, are written for this one. So a request's cost does not grow
 * with the length of the run. */
#include <string.h>

#include "agentwire/json.h"
#include "internal/openai.h"
#include "internal/wire_cache.h"

static int put(aw_buf *b, const char *s) { return aw_buf_append_str(b, s); }
static int put_str(aw_buf *b, aw_text t) { return aw_json_write_string(b, t.ptr, t.len); }

static const char *role_name(aw_chat_role r)
{
    switch (r) {
    case AW_CHAT_SYSTEM: return "system";
    case AW_CHAT_ASSISTANT: return "assistant";
    case AW_CHAT_TOOL: return "tool";
    default: return "user";
    }
}

/* One message: {"role":..,"content":..} with tool_calls or tool_call_id. */
static int write_message(aw_buf *o, const aw_chat_msg *m)
{
    int rc = put(o, "{\"role\":\"") || put(o, role_name(m->role)) || put(o, "\"");
    if (!rc && m->role == AW_CHAT_TOOL)
        rc = put(o, ",\"tool_call_id\":") || put_str(o, m->call_id);
    if (!rc) {
        rc = put(o, ",\"content\":");
        /* an assistant turn that only calls tools has no content */
        if (!rc)
            rc = m->role == AW_CHAT_ASSISTANT && m->content.len == 0 && m->call_count ? put(o, "null")
                                                                                     : put_str(o, m->content);
    }
    if (!rc && m->role == AW_CHAT_ASSISTANT && m->call_count) {
        rc = put(o, ",\"tool_calls\":[");
        for (size_t i = 0; !rc && i < m->call_count; i++) {
            const aw_chat_call *c = &m->calls[i];
            rc = put(o, i ? ",{\"id\":" : "{\"id\":") || put_str(o, c->id) ||
                 put(o, ",\"type\":\"function\",\"function\":{\"name\":") || put_str(o, c->name) ||
                 put(o, ",\"arguments\":") ||
                 put_str(o, c->arguments.len ? c->arguments : (aw_text){"{}", 2}) || put(o, "}}");
        }
        if (!rc)
            rc = put(o, "]");
    }
    return rc || put(o, "}") ? AW_ENOMEM : 0;
}

/* A history message as the cache keeps it: after its comma. */
static int history_message(aw_buf *o, int *state, const aw_chat_msg *m, const aw_allocator *alloc)
{
    (void)state;
    (void)alloc;
    return aw_buf_putc(o, ',') || write_message(o, m) ? AW_ENOMEM : 0;
}

static int write_tools(aw_buf *o, const aw_model_request *req)
{
    int rc = put(o, ",\"tools\":[");
    for (size_t i = 0; !rc && i < req->tool_count; i++) {
        const aw_tool_def *t = &req->tools[i];
        rc = put(o, i ? ",{\"type\":\"function\",\"function\":{\"name\":" : "{\"type\":\"function\",\"function\":{\"name\":") ||
             put_str(o, t->name) || put(o, ",\"description\":") || put_str(o, t->description) ||
             put(o, ",\"parameters\":");
        if (!rc)
            rc = t->schema ? aw_json_write(t->schema, NULL, o, NULL) : put(o, "{\"type\":\"object\",\"properties\":{}}");
        if (!rc)
            rc = put(o, "}}");
    }
    return rc || put(o, "]") ? AW_ENOMEM : 0;
}

int aw_openai_request(aw_wire_cache *cache, const char *model, const aw_model_request *req, bool stream,
                      aw_body *body, const aw_allocator *alloc)
{
    aw_buf *o = aw_body_text(body);
    if (!o || put(o, "{\"model\":") || aw_json_write_string(o, model, strlen(model)) || put(o, ",\"messages\":["))
        return AW_ENOMEM;
    bool any = false;
    if (req->system.len) {
        if (put(o, "{\"role\":\"system\",\"content\":") || put_str(o, req->system) || put(o, "}"))
            return AW_ENOMEM;
        any = true;
    }
    if (aw_wire_cache_extend(cache, req->history, history_message, alloc))
        return AW_ENOMEM;
    if (cache->history.len) {
        /* each cached message starts with its comma; the first needs none */
        aw_body_ref(body, cache->history.data + (any ? 0 : 1), cache->history.len - (any ? 0 : 1));
        any = true;
    }
    if (req->thread_stable.len || req->thread_tail.len) {
        /* the thread as one user message */
        o = aw_body_text(body);
        if (!o || aw_buf_append_str(o, any ? ",{\"role\":\"user\",\"content\":\"" : "{\"role\":\"user\",\"content\":\"") ||
            aw_wire_thread_text(body, &cache->thread, req, alloc) || !(o = aw_body_text(body)) || put(o, "\"}"))
            return AW_ENOMEM;
        any = true;
    }
    o = aw_body_text(body);
    if (!o)
        return AW_ENOMEM;
    for (size_t i = 0; i < req->ephemeral_count; i++) {
        if ((any && aw_buf_putc(o, ',')) || write_message(o, &req->ephemeral[i]))
            return AW_ENOMEM;
        any = true;
    }
    if (put(o, "]"))
        return AW_ENOMEM;
    if (req->tool_count && write_tools(o, req))
        return AW_ENOMEM;
    if (put(o, stream ? ",\"stream\":true,\"stream_options\":{\"include_usage\":true}" : ",\"stream\":false"))
        return AW_ENOMEM;
    if (req->max_tokens > 0 && aw_buf_printf(o, ",\"max_tokens\":%d", req->max_tokens))
        return AW_ENOMEM;
    if (req->has_temperature && (put(o, ",\"temperature\":") || aw_json_write_number(o, req->temperature)))
        return AW_ENOMEM;
    return put(o, "}") ? AW_ENOMEM : 0;
}
