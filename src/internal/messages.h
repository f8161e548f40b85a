/* Private parts of the messages module: every input shape (OpenAI,
 * Anthropic, LangChain) is read into one normalized list, and the two
 * encodings (XML, text) are written from that list only, so a shape never
 * needs to know about an encoding and the other way round. */
#ifndef AW_INTERNAL_MESSAGES_H
#define AW_INTERNAL_MESSAGES_H

#include <stdbool.h>
#include <stddef.h>

#include "agentwire/messages.h"
#include "agentwire/event.h"
#include "internal/arena.h"
#include "internal/strmap.h"

typedef enum aw__msg_role {
    AW__MSG_SYSTEM = 0,
    AW__MSG_USER,
    AW__MSG_ASSISTANT,
    AW__MSG_TOOL
} aw__msg_role;

/* One tool call of an assistant message. */
typedef struct aw__msg_call {
    aw_text id;                /* ptr NULL when the call has no id */
    aw_text name;
    /* The arguments as given: a string is JSON text to parse (OpenAI's
     * "arguments"), any other value is the arguments themselves; NULL when
     * absent, which is written as {}. */
    const aw_json_value *args;
} aw__msg_call;

typedef struct aw__msg {
    aw__msg_role role;
    size_t index;        /* position in the input's message array, for errors */
    aw_text text;        /* the content as text ("" when there is none) */
    size_t first_call;   /* calls[first_call .. first_call + ncalls) of the list */
    size_t ncalls;
    aw_text call_id;     /* tool: the call answered; ptr NULL when missing */
    aw_text tool_name;   /* tool: the name the message gives itself (LangChain's
                            FunctionMessage, OpenAI's role "function"); ptr
                            NULL: looked up from call_id */
    bool failed;         /* tool: the result is an error (Anthropic is_error,
                            LangChain status "error") */
} aw__msg;

typedef struct aw__msg_list {
    const aw_allocator *alloc;
    aw__msg *items;
    size_t count, cap;
    aw__msg_call *calls;
    size_t ncalls, cap_calls;
    aw_arena arena;  /* texts made while reading: joined parts, compact JSON */
    aw_buf scratch;  /* reused for compact JSON before it is copied to the arena */
    size_t base;     /* index of the first message read, when a stream reads
                        its input's messages a few at a time (errors name the
                        index in the whole input) */
    size_t reading;  /* the position in the array of the message being read,
                        which an error is about */
} aw__msg_list;

void aw__msg_list_init(aw__msg_list *l, const aw_allocator *alloc);
void aw__msg_list_free(aw__msg_list *l);
/* Empty the list for the next messages, keeping its memory. */
void aw__msg_list_clear(aw__msg_list *l);

/* Read input (a JSON array of messages, or an object with "messages" and
 * an optional "system") in the given shape (not AUTO) into l. */
int aw__msg_read(aw__msg_list *l, const aw_json_value *input, aw_messages_format fmt,
                 aw_error *err);

/* The shape readers, each taking the message array. */
int aw__msg_read_openai(aw__msg_list *l, const aw_json_value *msgs, aw_error *err);
int aw__msg_read_anthropic(aw__msg_list *l, const aw_json_value *msgs, aw_error *err);
int aw__msg_read_langchain(aw__msg_list *l, const aw_json_value *msgs, aw_error *err);

/* The shape one message tells (aw_messages_detect's rule for one message),
 * or AW_MESSAGES_AUTO. */
aw_messages_format aw__msg_detect_one(const aw_json_value *msg);

/* ---- helpers the readers share (messages_list.c) ------------------------ */

/* Append a message; returns it (valid until the next push) or NULL. */
aw__msg *aw__msg_push(aw__msg_list *l, aw__msg_role role, size_t index);
/* Append a call to the last message pushed. */
int aw__msg_push_call(aw__msg_list *l, aw_text id, aw_text name, const aw_json_value *args);

/* Content as text: absent or null is "", a string is itself, anything else
 * is its compact JSON. */
int aw__msg_text_json(aw__msg_list *l, const aw_json_value *v, aw_text *out);
/* Content that may be an array of parts/blocks (OpenAI, Anthropic): a
 * {"type": "text", "text": ...} part gives its text, any other part its
 * compact JSON, and the pieces are joined with "\n". Absent, null and
 * strings as aw__msg_text_json. A "text" part whose "text" is not a string
 * is an error naming message `index` and the field under `field`. */
int aw__msg_text_parts(aw__msg_list *l, const aw_json_value *v, size_t index, const char *field,
                       aw_text *out, aw_error *err);
/* The pieces of arr's items [from, to) joined as aw__msg_text_parts joins
 * them, leaving out tool_use blocks when skip_tool_use. Media parts are
 * described and thinking blocks left out (aw__msg_media). */
int aw__msg_join(aw__msg_list *l, const aw_json_value *arr, size_t from, size_t to, bool skip_tool_use,
                 size_t index, const char *field, aw_text *out, aw_error *err);
/* ---- parts that are not text (messages_media.c) ---------------------------- */

typedef enum aw__part_kind {
    AW__PART_OTHER = 0, /* written as its compact JSON */
    AW__PART_MEDIA,     /* image, audio, document, file: described */
    AW__PART_HIDDEN     /* thinking, redacted_thinking: left out */
} aw__part_kind;

/* What a content part is; never pasted into a prompt are base64 data and
 * thinking signatures. */
aw__part_kind aw__msg_part_kind(const aw_json_value *part);
/* Append the description of a MEDIA part: "[image: image/png, 34 KB]"
 * (the size of the decoded data), "[image: URL]", "[file: NAME, 2 KB]". */
int aw__msg_describe_media(const aw_json_value *part, aw_buf *out);
/* 1 when arr holds a MEDIA or HIDDEN part. */
bool aw__msg_has_media(const aw_json_value *arr);

/* Copy bytes into the list's arena. */
int aw__msg_keep(aw__msg_list *l, const char *s, size_t n, aw_text *out);

/* An optional string field: absent or null leaves out->ptr NULL; any other
 * non-string is an error "message N: 'FIELD' must be a string". */
int aw__msg_opt_string(const aw_json_value *obj, const char *key, size_t index, const char *field,
                       aw_text *out, aw_error *err);
/* A required string field. */
int aw__msg_req_string(const aw_json_value *obj, const char *key, size_t index, const char *field,
                       aw_text *out, aw_error *err);
/* One OpenAI tool call object {"id", "function": {"name", "arguments"}}
 * added to the last message; `field` names it in errors ("tool_calls[2]"). */
int aw__msg_openai_call(aw__msg_list *l, const aw_json_value *call, size_t index,
                        const char *field, aw_error *err);

/* ---- writers -------------------------------------------------------------- */

/* Text after JavaScript's trimStart() starts with "<thread>": *start gets
 * the offset of the '<'. */
bool aw__msg_is_thread(aw_text text, size_t *start);

/* Decode the <thread> at m->text + start and append its events as lines
 * of the thread being written, ids from *id on (advanced). Any error but
 * AW_ENOMEM means the text is no thread (what was appended, and *id, are
 * for the caller to take back). */
int aw__msg_splice(const aw__msg *m, size_t start, const aw_messages_options *opts, size_t *id,
                   aw_buf *out, aw_error *err);

int aw__msg_write_xml(const aw__msg_list *l, const aw_messages_options *opts, aw_buf *out,
                      aw_error *err);

/* The XML writer's state, kept across batches of messages when a stream
 * writes its input a few messages at a time (messages_stream.c). */
typedef struct aw__msg_xml {
    const aw_messages_options *opts;
    unsigned flags;  /* for bodies */
    aw_strmap names; /* call id -> tool name, over all messages */
    aw_arena keep;   /* copies of those ids and names, for a stream */
    aw_buf scratch;  /* compact arguments */
    size_t id;       /* the next line's id */
    aw_buf *out;
} aw__msg_xml;

void aw__msg_xml_init(aw__msg_xml *w, const aw_messages_options *opts, aw_buf *out);
void aw__msg_xml_free(aw__msg_xml *w);
/* Learn the calls of l (id -> name); copy them when l will not outlive
 * the writer. */
int aw__msg_xml_names(aw__msg_xml *w, const aw__msg_list *l, bool copy);
/* Write l's messages as event lines, ids counting on. */
int aw__msg_xml_lines(aw__msg_xml *w, const aw__msg_list *l, aw_error *err);
int aw__msg_write_text(const aw__msg_list *l, const aw_messages_options *opts, aw_buf *out,
                       aw_error *err);
/* The text form of l's messages, after *written earlier ones (advanced):
 * the separator goes before every message but the very first. */
int aw__msg_text_blocks(const aw__msg_list *l, const aw_messages_options *opts, size_t *written, aw_buf *out,
                        aw_error *err);

/* The arguments of a call as compact JSON into out: a string that parses
 * as JSON is written compactly, a string that does not is written as it
 * is (*raw set to true when non-NULL), any other value as its compact
 * JSON, NULL as {}. */
int aw__msg_write_args(const aw__msg_call *c, const aw_allocator *alloc, aw_buf *out, bool *raw);

#endif
