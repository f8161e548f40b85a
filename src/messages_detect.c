/* Which shape a list of messages is in.
 *
 * The rule (documented in messages.h): an object with a top-level "system"
 * is an Anthropic request; otherwise the messages (the array, or the
 * object's "messages") are looked at in order and the first that tells
 * decides:
 *   - "type" and no "role" (or an "lc" constructor), or
 *     type generic (a ChatMessage, which has a role too)   -> LangChain
 *   - role tool/developer/function, or "tool_calls",
 *     "tool_call_id" or "function_call"                    -> OpenAI
 *   - a content block tool_use, tool_result, thinking,
 *     redacted_thinking, document, or image with "source" -> Anthropic
 *   - a content part image_url, input_audio, file, refusal -> OpenAI
 * When none tells but some message has a "role", the list is plain
 * {role, content} text, which both OpenAI and Anthropic spell the same way
 * and which encodes the same either way: OpenAI. Otherwise AUTO. */
#include <string.h>

#include "internal/messages.h"

static int str_is(const aw_json_value *v, const char *s) {
    return aw_json_is_string(v) && v->u.str.len == strlen(s) && memcmp(v->u.str.ptr, s, v->u.str.len) == 0;
}

static aw_messages_format from_blocks(const aw_json_value *content) {
    static const char *const anthropic[] = {"tool_use", "tool_result", "thinking", "redacted_thinking",
                                            "document"};
    static const char *const openai[] = {"image_url", "input_audio", "file", "refusal"};
    for (size_t i = 0; i < aw_json_count(content); i++) {
        const aw_json_value *block = aw_json_at(content, i);
        const aw_json_value *type = aw_json_get(block, "type");
        for (size_t k = 0; k < sizeof anthropic / sizeof anthropic[0]; k++)
            if (str_is(type, anthropic[k])) return AW_MESSAGES_ANTHROPIC;
        if (str_is(type, "image") && aw_json_get(block, "source")) return AW_MESSAGES_ANTHROPIC;
        for (size_t k = 0; k < sizeof openai / sizeof openai[0]; k++)
            if (str_is(type, openai[k])) return AW_MESSAGES_OPENAI;
    }
    return AW_MESSAGES_AUTO;
}

aw_messages_format aw__msg_detect_one(const aw_json_value *msg) {
    if (!aw_json_is_object(msg)) return AW_MESSAGES_AUTO;
    const aw_json_value *role = aw_json_get(msg, "role");
    const aw_json_value *type = aw_json_get(msg, "type");
    /* LangChain's ChatMessage has both (flat {"type": "generic", "role"}) */
    if (str_is(type, "generic") || str_is(type, "chat") || str_is(type, "ChatMessage")) return AW_MESSAGES_LANGCHAIN;
    if (!role) {
        if (aw_json_is_string(aw_json_get(msg, "type"))) return AW_MESSAGES_LANGCHAIN;
        return AW_MESSAGES_AUTO;
    }
    if (str_is(role, "tool") || str_is(role, "developer") || str_is(role, "function")) return AW_MESSAGES_OPENAI;
    if (aw_json_get(msg, "tool_calls") || aw_json_get(msg, "tool_call_id") || aw_json_get(msg, "function_call"))
        return AW_MESSAGES_OPENAI;
    return from_blocks(aw_json_get(msg, "content"));
}

aw_messages_format aw_messages_detect(const aw_json_value *input) {
    const aw_json_value *msgs = input;
    if (aw_json_is_object(input)) {
        if (aw_json_get(input, "system")) return AW_MESSAGES_ANTHROPIC;
        msgs = aw_json_get(input, "messages");
    }
    if (!aw_json_is_array(msgs)) return AW_MESSAGES_AUTO;
    int any_role = 0;
    for (size_t i = 0; i < msgs->u.arr.count; i++) {
        const aw_json_value *msg = &msgs->u.arr.items[i];
        aw_messages_format f = aw__msg_detect_one(msg);
        if (f != AW_MESSAGES_AUTO) return f;
        if (aw_json_get(msg, "role")) any_role = 1;
    }
    return any_role ? AW_MESSAGES_OPENAI : AW_MESSAGES_AUTO;
}
