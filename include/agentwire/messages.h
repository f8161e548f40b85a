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
 * whitespace) with "<thread>" is returned unchanged
 * (but for what is not UTF-8: a lone surrogate escape is one U+FFFD); such a message among
 * others has its events decoded and spliced in place, ids renumbered.
 * Errors name the message by its index in the array, counted from 0 as
 * the fields' own indexes are ("message 3: 'content[0].text' must be a
 * string"); the command adds FILE:line:col of that message. opts may be NULL (AUTO, XML). On failure out is left as it was.
 *
 * Shapes (opts->format, or aw_messages_detect; a list that cannot be told
 * is read as OpenAI's):
 *   OpenAI     {"role": system|developer|user|assistant|tool, "content",
 *              "tool_calls": [{"id", "function": {"name", "arguments"}}],
 *              "tool_call_id"}; developer is system; the legacy assistant
 *              "function_call" {"name", "arguments"} is one call without id.
 *   Anthropic  {"role": user|assistant (|system), "content": string or
 *              blocks}: text blocks; tool_use {"id","name","input"} become
 *              the assistant's calls; each tool_result {"tool_use_id",
 *              "content", "is_error"} in a user message becomes a tool
 *              message of its own, in block order, the user text around
 *              them user messages.
 *   LangChain  {"type": human|ai|system|tool|generic|function, "data":
 *              {...}}, the flat
 *              {"type", "content", "tool_calls": [{"name","args","id"}],
 *              "tool_call_id"}, and JavaScript's serialized form {"lc": 1,
 *              "type": "constructor", "id": [..., "HumanMessage"], "kwargs"}.
 *              Aliases user/assistant, and class names (...Message, ...Chunk).
 *              Without "tool_calls", "additional_kwargs.tool_calls" (OpenAI
 *              shape) is read. generic (ChatMessage) takes its "role";
 *              function (FunctionMessage) is a tool output named by its
 *              "name"; a tool message's "status": "error" is a failure.
 *   OpenAI's legacy {"role": "function", "name", "content"} is a tool output
 *   named by its "name".
 *   A top-level "system" (string or text blocks) is read for every shape.
 *   Unknown roles/types are errors.
 *
 * Content as text: absent or null is ""; a string is itself. For OpenAI and
 * Anthropic an array of parts is joined with "\n", a {"type": "text"} part
 * giving its "text", an image, audio, document or file part a description
 * ("[image: image/png, 34 KB]", the size of the decoded data; "[image:
 * URL]"), thinking and redacted_thinking blocks nothing (base64 and
 * signatures are never pasted into a prompt), any other part its compact
 * JSON. For LangChain non-string content is its compact JSON (the
 * reference's JSON.stringify), unless it holds media or thinking parts:
 * then it is joined as above.
 *
 * Arguments of a call: a string (OpenAI's "arguments") is parsed and
 * written as compact JSON, or written as it is when it is not JSON; a blank
 * string is {}; any other value is written as its compact JSON; absent is
 * {}. This holds for every shape.
 *
 * XML (AW_MESSAGES_XML): "<thread>", one "  <event ...>body</event>" line
 * per event, "</thread>", joined with "\n". system -> type="system", user ->
 * "human", assistant -> "ai" (only when its text is non-empty) then one
 * tool_input per call (attributes type id name call_id iteration), tool ->
 * tool_output (type id name call_id status iteration), its name the
 * message's own (function results) or that of the call with the same id
 * anywhere in the list (a later call wins; calls with no id or "" are not
 * looked up), else "unknown". status is "error" for a failed result
 * (Anthropic is_error, LangChain status "error"), else "success": the
 * reference writes "success" for every result, which tells a model that a
 * failure succeeded; this is a deliberate difference. call_id is ""
 * when missing; iteration is "0"; id counts the lines written. Everything is
 * escaped with aw_xml_escape (bodies with AW_XML_STRIP_ANSI when
 * strip_ansi), so invalid UTF-8 and forbidden characters become U+FFFD.
 * Pass-through: leading whitespace is what JavaScript's trimStart removes;
 * only a user message passes through, and only in the XML encoding. A
 * spliced thread's events keep their own iteration and are written in the
 * thread layout (aw_thread_write_event: no call_id), a tool_output named
 * from the tool_inputs of that same thread; one that does not decode (text
 * after </thread>, such as a prefill, counts; users type "<thread>") is
 * written as a human line, as the reference writes it.
 *
 * Text (AW_MESSAGES_TEXT): "[System]", "[User]", "[Assistant]" or "[Tool
 * Result]" ("[Tool Result: error]" for a failed one), "\n", the content; messages joined with "\n\n". An assistant's
 * calls follow its text (after a "\n" when the text is non-empty) as
 *   ```json
 *   {"tool_calls":[{"id":"...","name":"...","args":{...}}]}
 *   ```
 * which aw_messages_parse_tool_calls reads back ("id" left out for a call
 * without one; arguments that are not JSON as a JSON string). Bytes that are
 * not UTF-8 become U+FFFD; nothing else is changed (strip_ansi is for XML
 * only). */
int aw_messages_encode(const aw_json_value *input, const aw_messages_options *opts, aw_buf *out,
                       aw_error *err);

/* Where aw_messages_encode_json hands its output: return nonzero to stop
 * (the encoder then fails with AW_ESTOP). */
typedef int (*aw_messages_write_fn)(void *ctx, const char *bytes, size_t len);

/* aw_messages_encode from the JSON text json[0..len), with memory for a few
 * messages instead of the whole input and output: the root array's items
 * are parsed one at a time (strictly, as aw_json_parse parses) and the
 * output is handed to write in blocks of about 256 KB, as it is produced.
 * The bytes are those of aw_json_parse then aw_messages_encode. Every
 * error is found before anything is written (only a refused write or
 * running out of memory can stop it half way), and it is placed in the
 * text: err's offset, line and column are where the JSON goes wrong, or
 * where the message an error names starts. */
int aw_messages_encode_json(const char *json, size_t len, const aw_messages_options *opts,
                            aw_messages_write_fn write, void *ctx, aw_error *err);

/* The detected shape of input; AW_MESSAGES_AUTO when it cannot be told.
 * An object with a top-level "system" is Anthropic. Otherwise the messages
 * are looked at in order and the first that tells decides:
 *   "type" and no "role"                                    -> LangChain
 *   role tool/developer/function, or "tool_calls",
 *   "tool_call_id" or "function_call"                       -> OpenAI
 *   a content block tool_use, tool_result, thinking,
 *   redacted_thinking, document, or image with "source"     -> Anthropic
 *   a content part image_url, input_audio, file, refusal    -> OpenAI
 * When none tells but a message has a "role", the list is plain {role,
 * content} text, spelled (and encoded) the same in both: OpenAI. */
aw_messages_format aw_messages_detect(const aw_json_value *input);

/* Tool calls written in text, as the reference's parseToolCalls reads
 * them: every fenced ```json block holding {"tool_calls": [{"name", "args"?,
 * "id"?}]} becomes calls (args default {}, id default "call_<index>"),
 * later duplicates of an id are dropped, and the blocks are removed from
 * the visible text. A block that does not parse stays in the text and is
 * reported. The result document's root is
 *   {"tool_calls": [{"id": ..., "name": ..., "args": {...}}, ...],
 *    "text": "visible text",
 *    "errors": [{"offset": N, "line": L, "column": C, "message": "..."}, ...]}
 *
 * Fences are found as Markdown finds them: a line of three or more
 * backticks (after any indentation) opens a block, a line of at least as
 * many backticks and nothing else closes it. Only blocks whose info string
 * is exactly "json" (case-sensitive) are read; blocks of other languages
 * are skipped whole, and an unclosed fence runs to the end of the text
 * (an unclosed ```json block is reported). A ```json block:
 *   - that is not JSON: kept, reported at the JSON error's position;
 *   - whose JSON has no "tool_calls": kept, not reported (plain JSON);
 *   - whose "tool_calls" is not an array: kept, reported at the fence;
 *   - otherwise a tool-call block: removed (its fence lines, content and
 *     the newline after the closing fence; nothing else is trimmed). Each
 *     entry needs a string "name"; "args" (or, when "args" is absent,
 *     OpenAI's "arguments") absent or null is {}, else must be an object; "id" absent or null is "call_<index>", else must be a
 *     string. index is the reference's: calls kept from earlier blocks plus
 *     the entry's position in its block. An entry breaking these rules is
 *     skipped and reported at the fence; one whose id was kept before is
 *     dropped silently.
 * Positions are byte offsets from 0, 1-based lines and columns (code
 * points) in text. Bare JSON outside fences is not read. Only allocation
 * failure (AW_ENOMEM) and bad arguments fail. */
int aw_messages_parse_tool_calls(const char *text, size_t len, const aw_allocator *alloc,
                                 aw_json_doc **out, aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
