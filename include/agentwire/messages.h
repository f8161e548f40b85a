/* agentwire — chat messages (OpenAI, Anthropic, LangChain shapes) as the
 * same <thread> XML the agent events use, or as the plain "[User]" text
 * form, for providers that take one prompt (seed 002). */
#ifndef AGENTWIRE_MESSAGES_H
#define AGENTWIRE_MESSAGES_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "error.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aw_messages_format {
    AW_MESSAGES_AUTO = 0, /* detect from the messages themselves */
    AW_MESSAGES_OPENAI,
    AW_MESSAGES_ANTHROPIC,
    AW_MESSAGES_LANGCHAIN
} aw_messages_format;

typedef enum aw_messages_encoding {
    AW_MESSAGES_XML = 0, /* <thread> with iteration="0" on every event */
    AW_MESSAGES_TEXT     /* [System] / [User] / [Assistant] / [Tool Result] blocks */
} aw_messages_encoding;

typedef struct aw_messages_options {
    aw_messages_format format;
    aw_messages_encoding encoding;
    bool strip_ansi;           /* as aw_thread_options.strip_ansi */
    const aw_allocator *alloc; /* scratch memory; NULL: default */
} aw_messages_options;

/* Encode messages: a JSON array of messages, or an Anthropic request
 * object {"system": ..., "messages": [...]}. Appends to out (no trailing
 * newline). A single user message whose content starts (after leading
 * whitespace) with "<thread>" is returned unchanged; such a message among
 * others has its events decoded and spliced in place, ids renumbered.
 * Errors name the message index and field ("message 3: 'role' must be a
 * string"). */
int aw_messages_encode(const aw_json_value *input, const aw_messages_options *opts, aw_buf *out,
                       aw_error *err);

/* The detected (or forced) shape of input; AW_MESSAGES_AUTO when it cannot
 * be told. */
aw_messages_format aw_messages_detect(const aw_json_value *input);

/* Tool calls written in text, as the reference's parseToolCalls reads
 * them: every fenced ```json block holding {"tool_calls": [{"name", "args"?,
 * "id"?}]} becomes calls (args default {}, id default "call_<index>"),
 * later duplicates of an id are dropped, and the blocks are removed from
 * the visible text. A block that does not parse stays in the text and is
 * reported. The result document's root is
 *   {"tool_calls": [{"id": ..., "name": ..., "args": {...}}, ...],
 *    "text": "visible text",
 *    "errors": [{"offset": N, "line": L, "message": "..."}, ...]} */
int aw_messages_parse_tool_calls(const char *text, size_t len, const aw_allocator *alloc,
                                 aw_json_doc **out, aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
