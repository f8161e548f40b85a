/* The Messages API request body:
 *
 *   {"model":M,"max_tokens":N,
 *    "system":[{"type":"text","text":S,"cache_control":{"type":"ephemeral"}}],
 *    "tools":[{name,description,input_schema}],"stream":true,"temperature":T,
 *    "messages":[history..., thread, ephemeral...]}
 *
 * History conversion: an assistant message's tool calls become tool_use
 * blocks (input: the arguments JSON, repaired or wrapped when it is not an
 * object), a tool result a tool_result block in a user message (is_error
 * when the call failed), and messages of one role in a row one message.
 * The end of the system prompt and of the history carry cache_control, so
 * the API's prompt cache serves the part of the conversation sent before.
 * The history and the escaped thread come from the cache by reference. */
#include <string.h>

#include "agentwire/json.h"
#include "internal/anthropic.h"
#include "internal/wire_cache.h"

static int put(aw_buf *b, const char *s) { return aw_buf_append_str(b, s); }
static int put_str(aw_buf *b, aw_text t) { return aw_json_write_string(b, t.ptr, t.len); }

static const char cache_mark[] = ",\"cache_control\":{\"type\":\"ephemeral\"}";

/* Start a content block of role: the open block is closed, and the open
 * message too when the role changes. The block's own text follows,
 * without its closing brace. */
static int open_block(aw_buf *o, int *open_role, int role)
{
    if (*open_role == role)
        return put(o, "},");
    if (*open_role && put(o, "}]},"))
        return AW_ENOMEM;
    *open_role = role;
    return put(o, role == AW_ANTHROPIC_ASSISTANT ? "{\"role\":\"assistant\",\"content\":["
                                                 : "{\"role\":\"user\",\"content\":[");
}

/* A tool call's arguments as the object tool_use.input must be. */
static int write_input(aw_buf *o, aw_text args, const aw_allocator *alloc)
{
    if (args.len == 0)
        return put(o, "{}");
    aw_json_read_options ro = {.alloc = alloc};
    aw_json_doc *doc = NULL;
    int rc = aw_json_parse(args.ptr, args.len, &ro, &doc, NULL);
    bool object = rc == 0 && aw_json_is_object(aw_json_doc_root(doc));
    aw_json_doc_free(doc);
    if (rc == AW_ENOMEM)
        return rc;
    if (object)
        return aw_buf_append(o, args.ptr, args.len);
    aw_buf fixed;
    aw_buf_init(&fixed, alloc);
    bool repaired = false;
    int rrc = rc != 0 ? aw_json_repair(args.ptr, args.len, alloc, &fixed, NULL, NULL) : AW_ESYNTAX;
    int prc = rrc == 0 ? aw_json_parse(fixed.data, fixed.len, &ro, &doc, NULL) : rrc;
    if (rrc == AW_ENOMEM || prc == AW_ENOMEM) {
        aw_buf_free(&fixed);
        return AW_ENOMEM;
    }
    if (prc == 0) {
        repaired = true;
        object = aw_json_is_object(aw_json_doc_root(doc));
        aw_json_doc_free(doc);
        if (object) {
            rc = aw_buf_append(o, fixed.data, fixed.len);
            aw_buf_free(&fixed);
            return rc;
        }
    }
    /* Not an object even once repaired: kept whole under one key, as
     * JSON when it is JSON, else as the text it is. */
    if (rc == 0)
        rc = put(o, "{\"arguments\":") || aw_buf_append(o, args.ptr, args.len) || put(o, "}");
    else if (repaired)
        rc = put(o, "{\"arguments\":") || aw_buf_append(o, fixed.data, fixed.len) || put(o, "}");
    else
        rc = put(o, "{\"arguments\":") || put_str(o, args) || put(o, "}");
    aw_buf_free(&fixed);
    return rc ? AW_ENOMEM : 0;
}

/* One chat message as blocks joined to the open message (or a new one). A
 * message with nothing to say adds nothing: the API refuses empty text. */
static int write_message(aw_buf *o, int *open_role, const aw_chat_msg *m, const aw_allocator *alloc)
{
    int rc = 0;
    switch (m->role) {
    case AW_CHAT_ASSISTANT:
        if (m->content.len)
            rc = open_block(o, open_role, AW_ANTHROPIC_ASSISTANT) || put(o, "{\"type\":\"text\",\"text\":") ||
                 put_str(o, m->content);
        for (size_t i = 0; !rc && i < m->call_count; i++) {
            const aw_chat_call *c = &m->calls[i];
            rc = open_block(o, open_role, AW_ANTHROPIC_ASSISTANT) || put(o, "{\"type\":\"tool_use\",\"id\":") ||
                 put_str(o, c->id) || put(o, ",\"name\":") || put_str(o, c->name) || put(o, ",\"input\":") ||
                 write_input(o, c->arguments, alloc);
        }
        break;
    case AW_CHAT_TOOL:
        rc = open_block(o, open_role, AW_ANTHROPIC_USER) || put(o, "{\"type\":\"tool_result\",\"tool_use_id\":") ||
             put_str(o, m->call_id);
        if (!rc && m->content.len)
            rc = put(o, ",\"content\":") || put_str(o, m->content);
        if (!rc && m->is_error)
            rc = put(o, ",\"is_error\":true");
        break;
    default: /* user; a system message in the history has no place but a user turn */
        if (m->content.len)
            rc = open_block(o, open_role, AW_ANTHROPIC_USER) || put(o, "{\"type\":\"text\",\"text\":") ||
                 put_str(o, m->content);
    }
    return rc ? AW_ENOMEM : 0;
}

static int write_tools(aw_buf *o, const aw_model_request *req)
{
    int rc = put(o, ",\"tools\":[");
    for (size_t i = 0; !rc && i < req->tool_count; i++) {
        const aw_tool_def *t = &req->tools[i];
        rc = put(o, i ? ",{\"name\":" : "{\"name\":") || put_str(o, t->name) || put(o, ",\"description\":") ||
             put_str(o, t->description) || put(o, ",\"input_schema\":");
        if (!rc)
            rc = t->schema ? aw_json_write(t->schema, NULL, o, NULL) : put(o, "{\"type\":\"object\",\"properties\":{}}");
        if (!rc)
            rc = put(o, "}");
    }
    return rc || put(o, "]") ? AW_ENOMEM : 0;
}

/* Everything before "messages". */
static int write_head(aw_buf *o, const char *model, const aw_model_request *req, bool stream)
{
    int rc = put(o, "{\"model\":") || aw_json_write_string(o, model, strlen(model)) ||
             aw_buf_printf(o, ",\"max_tokens\":%d", req->max_tokens > 0 ? req->max_tokens : 4096);
    if (!rc && req->system.len)
        rc = put(o, ",\"system\":[{\"type\":\"text\",\"text\":") || put_str(o, req->system) || put(o, cache_mark) ||
             put(o, "}]");
    if (!rc && req->tool_count)
        rc = write_tools(o, req);
    if (!rc)
        rc = put(o, stream ? ",\"stream\":true" : ",\"stream\":false");
    if (!rc && req->has_temperature)
        rc = put(o, ",\"temperature\":") || aw_json_write_number(o, req->temperature);
    return rc || put(o, ",\"messages\":[") ? AW_ENOMEM : 0;
}

int aw_anthropic_request(aw_wire_cache *cache, const char *model, const aw_model_request *req, bool stream,
                         aw_body *body, const aw_allocator *alloc)
{
    aw_buf *o = aw_body_text(body);
    if (!o || write_head(o, model, req, stream))
        return AW_ENOMEM;
    if (aw_wire_cache_extend(cache, req->history, write_message, alloc))
        return AW_ENOMEM;
    int open_role = cache->open_role;
    aw_body_ref(body, cache->history.data, cache->history.len);
    o = aw_body_text(body);
    /* the history's last block marks where the cached prefix ends */
    if (!o || (open_role && put(o, cache_mark)))
        return AW_ENOMEM;
    if (req->thread_stable.len || req->thread_tail.len) {
        /* the thread as a user text block, left open like any block */
        o = aw_body_text(body);
        if (!o || open_block(o, &open_role, AW_ANTHROPIC_USER) || put(o, "{\"type\":\"text\",\"text\":\"") ||
            aw_wire_thread_text(body, &cache->thread, req, alloc) || !(o = aw_body_text(body)) || put(o, "\""))
            return AW_ENOMEM;
    }
    o = aw_body_text(body);
    if (!o)
        return AW_ENOMEM;
    for (size_t i = 0; i < req->ephemeral_count; i++)
        if (write_message(o, &open_role, &req->ephemeral[i], alloc))
            return AW_ENOMEM;
    if (open_role && put(o, "}]}"))
        return AW_ENOMEM;
    return put(o, "]}") ? AW_ENOMEM : 0;
}
