/* agentwire — agent events as a <thread> XML document, and back.
 *
 * The encoding is byte-compatible with the reference TypeScript serializer
 * (serializeThreadToXml) wherever its output is valid XML:
 *
 *   <thread>
 *     <event type="human" id="0" iteration="0">What is 2+2?</event>
 *     <event type="tool_input" id="1" name="calculator" iteration="1">{"expression":"2+2"}</event>
 *     <event type="tool_output" id="2" name="calculator" status="success" iteration="1">4</event>
 *   </thread>
 *
 * Unlike the reference, characters XML 1.0 forbids and invalid UTF-8 are
 * written as U+FFFD, so the output always parses. */
#ifndef AGENTWIRE_THREAD_H
#define AGENTWIRE_THREAD_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "error.h"
#include "event.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_thread_options {
    /* assistantPrefill (the reference's responsePrefix): when non-empty,
     * "\n" and this text follow </thread>, unescaped. */
    const char *prefill;
    size_t prefill_len;
    /* Remove ANSI escape sequences from bodies instead of replacing ESC. */
    bool strip_ansi;
    const aw_allocator *alloc; /* for the scratch map; NULL: default */
} aw_thread_options;

/* Append the <thread> document for events[0..n) to out. No trailing
 * newline. `id` is each event's position; approval, plan and unknown
 * events are not written but use up their position. A tool_result's name
 * is the toolName of the tool_call with the same toolCallId anywhere in
 * the list, else "unknown". */
int aw_thread_encode(const aw_event *events, size_t n, const aw_thread_options *opts,
                     aw_buf *out, aw_error *err);

/* Events as JSON text (JSON lines, or one JSON array, as
 * aw_event_list_parse reads them) -> the <thread> document appended to
 * out: the same bytes, and the same errors (naming the line and the
 * field), as aw_event_list_parse followed by aw_thread_encode. JSON lines
 * are encoded as they are read, each line's document dropped once written,
 * so the memory in use is that of the largest line plus the toolCallId ->
 * toolName map, not that of the whole input; the array form is read
 * whole. read_opts are for the reading (their allocator for the line
 * documents), opts for the writing; either may be NULL. */
int aw_thread_encode_json(const char *text, size_t len, const aw_json_read_options *read_opts,
                          const aw_thread_options *opts, aw_buf *out, aw_error *err);

/* Where a streaming encoder hands its output: the next n bytes. A
 * nonzero return stops the encoding with AW_ESTOP. */
typedef int (*aw_thread_sink)(void *ctx, const char *data, size_t n);

typedef struct aw_thread_stream_options {
    aw_thread_sink sink; /* required */
    void *sink_ctx;
    /* An event of a type the format does not know (neither one it writes
     * nor approval or plan) is not written, as in the reference, but uses
     * up its id. With on_unknown set, each such event is reported to it
     * first: `where` has a message naming the type and the place of its
     * "type" value (offset, line, column). A nonzero return rejects the
     * input: the encoding fails with AW_ETYPE and `where` as its error. */
    int (*on_unknown)(void *ctx, const aw_event *ev, const aw_error *where);
    void *on_unknown_ctx;
} aw_thread_stream_options;

/* aw_thread_encode_json with the output handed to stream->sink in blocks of about
 * 256 KB as it is produced, instead of gathered in a buffer: the memory in
 * use is one line's document, one block and the toolCallId -> toolName
 * map, whatever the size of the input and the output. To name every result
 * as the whole encoder does (after the last tool_call with its id anywhere
 * in the input) before writing anything, the text is first scanned for the
 * lines that can be tool_call events (those that hold "tool_call" or a \u
 * escape of an ASCII letter), and only those are parsed twice. The bytes
 * handed over are those aw_thread_encode_json appends, and the errors the
 * same; on an error, what was handed over before the bad event stays handed
 * over, and nothing after it. The array form is read whole, then written in
 * blocks. */
int aw_thread_encode_json_stream(const char *text, size_t len, const aw_json_read_options *read_opts,
                                 const aw_thread_options *opts, const aw_thread_stream_options *stream,
                                 aw_error *err);

/* Append one <event> element (no indentation, no newline) for ev at
 * position id, naming a tool_result with tool_name. Returns 0 and writes
 * nothing for kinds that are not written. */
int aw_thread_write_event(const aw_event *ev, size_t id, aw_text tool_name,
                          const aw_thread_options *opts, aw_buf *out);

/* ---- append-only writer ------------------------------------------------- */

/* Keeps a thread document complete in a caller's buffer while events are
 * added one at a time, at a cost proportional to the event (the reference
 * re-serializes the whole thread every iteration). The output equals
 * aw_thread_encode of all events so far whenever every tool_result comes
 * after its tool_call; a result that comes first is named "unknown", where
 * the whole encoder, which looks ahead, would find the name. */
typedef struct aw_thread_writer aw_thread_writer;

aw_thread_writer *aw_thread_writer_new(const aw_thread_options *opts);
void aw_thread_writer_free(aw_thread_writer *w);
/* Write the empty document "<thread>\n</thread>" (plus prefill) into out,
 * which the writer then owns the tail of. */
int aw_thread_writer_start(aw_thread_writer *w, aw_buf *out);
/* Add one event: out must still hold what the writer left there. */
int aw_thread_writer_append(aw_thread_writer *w, const aw_event *ev, aw_buf *out, aw_error *err);
/* Events seen so far (the id the next event gets). */
size_t aw_thread_writer_count(const aw_thread_writer *w);

/* ---- decoder ------------------------------------------------------------ */

typedef struct aw_thread_decode_options {
    const aw_allocator *alloc; /* NULL: default */
} aw_thread_decode_options;

/* Parse a <thread> document (with expat) back into a JSON array of events
 * in the AgentEvent shape. Carried back: type and role, iteration, tool
 * name, args (parsed JSON; the text itself when it is not JSON), result
 * text, error and recoverable, question, response, completion result,
 * summary and summarizedIterations, durationMs, parallelGroup. Not
 * carried by the format: timestamp (decoded as 0) and toolCallId: taken
 * from a call_id attribute when present, else each tool_output is paired
 * with the nearest earlier unpaired tool_input of the same name and both
 * get "call_<id of the input>" (an output with no such input gets
 * "call_<its own id>"). Not carried either: completion's verified (decoded
 * as false). XML end-of-line handling turns CR and CRLF in bodies into LF,
 * and attribute normalization turns tab, CR and LF in attribute values into
 * spaces. The structure is fixed: <thread> holding <event> elements
 * holding text; anything else is an error. Documents with a DOCTYPE are
 * refused; errors carry line and column. */
int aw_thread_decode(const char *xml, size_t len, const aw_thread_decode_options *opts,
                     aw_json_doc **out, aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
