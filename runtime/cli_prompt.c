/* The prompt of a command-line provider: the request made an OpenAI-shaped
 * message list and encoded by the messages codec (seed 002), so a CLI
 * reads the same <thread> XML (or [User] text) that `agentwire messages
 * encode` writes for those messages. */
#include <string.h>

#include "agentwire/json.h"
#include "agentwire/messages.h"
#include "internal/cli_provider.h"
#include "internal/rt_util.h"

static const char *role_name(aw_chat_role role)
{
    switch (role) {
    case AW_CHAT_SYSTEM: return "system";
    case AW_CHAT_ASSISTANT: return "assistant";
    case AW_CHAT_TOOL: return "tool";
    case AW_CHAT_USER: break;
    }
    return "user";
}

static int set_text(aw_json_doc *doc, aw_json_value *obj, const char *key, aw_text t)
{
    return aw_json_object_set_string(doc, obj, key, t.ptr ? t.ptr : "", t.ptr ? t.len : 0);
}

/* {"id", "type": "function", "function": {"name", "arguments"}} */
static aw_json_value *tool_call(aw_json_doc *doc, const aw_chat_call *c)
{
    aw_json_value *fn = aw_json_new_object(doc);
    aw_json_value *call = aw_json_new_object(doc);
    if (!fn || !call || set_text(doc, fn, "name", c->name) || set_text(doc, fn, "arguments", c->arguments) ||
        set_text(doc, call, "id", c->id) || aw_json_object_set_string(doc, call, "type", "function", 8) ||
        aw_json_object_set(doc, call, "function", 8, fn))
        return NULL;
    return call;
}

/* One message in the OpenAI shape, pushed onto list. */
static int push_message(aw_json_doc *doc, aw_json_value *list, const aw_chat_msg *m)
{
    aw_json_value *msg = aw_json_new_object(doc);
    const char *role = role_name(m->role);
    if (!msg || aw_json_object_set_string(doc, msg, "role", role, strlen(role)) ||
        set_text(doc, msg, "content", m->content))
        return AW_ENOMEM;
    if (m->role == AW_CHAT_ASSISTANT && m->call_count) {
        /* The array is filled before it is set: setting copies the value. */
        aw_json_value *calls = aw_json_new_array(doc);
        if (!calls)
            return AW_ENOMEM;
        for (size_t i = 0; i < m->call_count; i++) {
            aw_json_value *call = tool_call(doc, &m->calls[i]);
            if (!call || aw_json_array_push(doc, calls, call))
                return AW_ENOMEM;
        }
        if (aw_json_object_set(doc, msg, "tool_calls", 10, calls))
            return AW_ENOMEM;
    }
    if (m->role == AW_CHAT_TOOL && set_text(doc, msg, "tool_call_id", m->call_id))
        return AW_ENOMEM;
    return aw_json_array_push(doc, list, msg) ? AW_ENOMEM : 0;
}

/* The end of the last "</thread>" in t, or 0 when there is none. */
static size_t thread_end(const char *t, size_t n)
{
    static const char close_tag[] = "</thread>";
    const size_t k = sizeof close_tag - 1;
    for (size_t i = n; i >= k; i--)
        if (t[i - k] == '<' && memcmp(t + i - k, close_tag, k) == 0)
            return i;
    return 0;
}

/* The xml context mode's document as one user message. Among other
 * messages the codec splices a thread's events in, and refuses text after
 * its </thread>; that text (the prefill, which nudges the reply) is cut
 * off into *after, to end the whole prompt instead. */
static int push_thread(aw_json_doc *doc, aw_json_value *list, const aw_model_request *req, bool splice,
                       aw_buf *after)
{
    aw_buf text;
    aw_buf_init(&text, after->alloc);
    int rc = aw_buf_append(&text, req->thread_stable.ptr, req->thread_stable.len) ||
             aw_buf_append(&text, req->thread_tail.ptr, req->thread_tail.len);
    size_t len = text.len;
    if (!rc && splice) {
        size_t end = thread_end(text.data, text.len);
        if (end && end < text.len) {
            rc = aw_buf_append(after, text.data + end, text.len - end);
            len = end;
        }
    }
    aw_chat_msg m = {.role = AW_CHAT_USER, .content = {text.data, len}};
    if (!rc)
        rc = push_message(doc, list, &m);
    aw_buf_free(&text);
    return rc ? AW_ENOMEM : 0;
}

static bool has_thread(const aw_model_request *req) { return req->thread_stable.len || req->thread_tail.len; }

/* The request's messages in order into list; *after gets what must follow
 * the encoded list (see push_thread). */
static int build_list(aw_json_doc *doc, aw_json_value *list, const aw_model_request *req, aw_prompt_encoding encoding,
                      aw_buf *after)
{
    size_t history = req->history ? aw_chat_count(req->history) : 0;
    bool splice = encoding == AW_PROMPT_XML && (req->system.len || history || req->ephemeral_count);
    if (req->system.len) {
        aw_chat_msg sys = {.role = AW_CHAT_SYSTEM, .content = req->system};
        if (push_message(doc, list, &sys))
            return AW_ENOMEM;
    }
    for (size_t i = 0; i < history; i++)
        if (push_message(doc, list, aw_chat_at(req->history, i)))
            return AW_ENOMEM;
    if (has_thread(req) && push_thread(doc, list, req, splice, after))
        return AW_ENOMEM;
    for (size_t i = 0; i < req->ephemeral_count; i++)
        if (push_message(doc, list, &req->ephemeral[i]))
            return AW_ENOMEM;
    return 0;
}

int aw_cli_prompt(const aw_model_request *req, aw_prompt_encoding encoding, const aw_allocator *alloc, aw_buf *out,
                  aw_error *err)
{
    aw_json_doc *doc = aw_json_doc_new(alloc);
    aw_json_value *list = doc ? aw_json_new_array(doc) : NULL;
    aw_buf after;
    aw_buf_init(&after, alloc);
    int rc = list ? build_list(doc, list, req, encoding, &after) : AW_ENOMEM;
    if (rc) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
    } else {
        aw_messages_options opts = {
            .format = AW_MESSAGES_OPENAI,
            .encoding = encoding == AW_PROMPT_TEXT ? AW_MESSAGES_TEXT : AW_MESSAGES_XML,
            .alloc = alloc,
        };
        size_t start = out->len;
        aw_error merr;
        aw_error_clear(&merr);
        rc = aw_messages_encode(list, &opts, out, &merr);
        if (rc)
            aw_rt_error(err, rc, "cannot encode the conversation: %s", merr.message);
        else if (after.len && aw_buf_append(out, after.data, after.len)) {
            out->len = start;
            out->data[start] = 0;
            rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
        }
    }
    aw_buf_free(&after);
    aw_json_doc_free(doc);
    return rc;
}
