/* agentwire — the XML tool transport (seed 001).
 *
 * A model that cannot (or should not) use native tool calls calls tools by
 * writing nonce-guarded tags in its reply:
 *
 *   <ai-agent-1a2b3c4d-0001 tool="search">{"query": "x"}</ai-agent-1a2b3c4d-0001>
 *   <ai-agent-1a2b3c4d-FINAL tool="agent__final_report" status="success" format="markdown">...</ai-agent-1a2b3c4d-FINAL>
 *
 * A session (aw_transport) holds the nonce, the mode, the tools and the
 * final-report format. Each turn the caller renders the XML-NEXT notice
 * (and, in xml mode, XML-PAST with the previous turn's results), sends it
 * as a user message, and feeds the model's reply, in chunks of any size,
 * to an extractor, which reports visible text, tags, accepted calls, the
 * final report and rejections as they happen. */
#ifndef AGENTWIRE_TRANSPORT_H
#define AGENTWIRE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "error.h"
#include "event.h"
#include "json.h"
#include "schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aw_transport_mode {
    AW_TRANSPORT_NATIVE = 0, /* transport inert: tools are native */
    AW_TRANSPORT_XML,        /* tools, progress and final report as tags */
    AW_TRANSPORT_XML_FINAL   /* tools native; only the final report as a tag */
} aw_transport_mode;

typedef enum aw_report_format {
    AW_FORMAT_MARKDOWN = 0,
    AW_FORMAT_TEXT,
    AW_FORMAT_TTY,
    AW_FORMAT_PIPE,
    AW_FORMAT_JSON,
    AW_FORMAT_SLACK_BLOCK_KIT,
    AW_FORMAT_SUB_AGENT
} aw_report_format;

/* "markdown", "slack-block-kit", ...; and back (-1 when unknown). */
const char *aw_report_format_name(aw_report_format f);
int aw_report_format_parse(const char *s, size_t n);

typedef struct aw_tool_def {
    aw_text name;
    aw_text description;
    const aw_json_value *schema; /* JSON Schema of the arguments; may be NULL. Compiled by
                                    aw_transport_new (2020-12 unless its $schema says
                                    draft-07); every call of the tool is checked against it */
} aw_tool_def;

/* Read a JSON array of tool definitions in any common shape: OpenAI
 * {"type":"function","function":{name, description, parameters}},
 * Anthropic {name, description, input_schema}, MCP {name, description,
 * inputSchema}. The definitions point into `tools` and into *out, an array
 * allocated with alloc (free it with aw_free). Errors name the index. */
int aw_tools_from_json(const aw_json_value *tools, const aw_allocator *alloc, aw_tool_def **out,
                       size_t *count, aw_error *err);

/* Reserved tool names. */
#define AW_TOOL_FINAL_REPORT "agent__final_report"
#define AW_TOOL_PROGRESS "agent__progress_report"
#define AW_COMMAND_FINAL_XML "agent__final_report_xml"

/* Tool calls in the dialects open models write, recovered from the
 * visible text of a reply (issue 18): off by default because they carry
 * no nonce. README.md, "Tool calls in other dialects", shows each.
 *
 * A call read this way is reported as AW_X_CALL with call->dialect set and
 * source "recovered" (native and xml-final modes) or the dialect's name
 * (xml mode); its markup is not in the visible text (AW_X_TEXT). It must
 * name a declared tool: from a marker such as <tool_call> an undeclared
 * one is rejected (tool_not_allowed), a bare form (JSON, pythonic, a
 * fence) naming none is text. Nothing inside an inline code span or a
 * fence of another language is a call, nor a call followed on its line by
 * prose ("write <tool_call>{...}</tool_call> to call"), nor a placeholder
 * ("<function-name>", "{...}"). A malformed call is rejected with a fix
 * in its dialect's form (malformed_call, invalid_json, unclosed); one left
 * unclosed ends where another call begins. Text arguments (XML parameters,
 * GLM values) are typed by the tool's schema. The events are the same for
 * every chunking, in time linear in the reply. */
enum {
    AW_DIALECT_HERMES = 1 << 0,         /* <tool_call>{"name", "arguments"}</tool_call> (Hermes, Qwen2.5, Granite) */
    AW_DIALECT_FUNCTION_CALLS = 1 << 1, /* <function_calls><invoke name=..><parameter name=..>, or a bare <invoke> */
    AW_DIALECT_FENCED = 1 << 2,         /* ```json {"name", "arguments"} or {"tool_calls": [...]} ``` */
    AW_DIALECT_GRANITE = 1 << 3,        /* <|tool_call|>[{"name", "arguments"}] */
    AW_DIALECT_QWEN3_CODER = 1 << 4,    /* <tool_call><function=NAME><parameter=K>V</parameter></function></tool_call> */
    AW_DIALECT_LLAMA3 = 1 << 5,         /* {"name", "parameters"}, bare or after <|python_tag|>; lists of them;
                                           brave_search.call(query="..."); <function=NAME>{json}</function> */
    AW_DIALECT_PYTHONIC = 1 << 6,       /* [get_weather(city="Paris"), get_time()] */
    AW_DIALECT_MISTRAL = 1 << 7,        /* [TOOL_CALLS][{...}], [TOOL_CALLS]NAME{...}, [TOOL_CALLS]NAME[ARGS]{...} */
    AW_DIALECT_DEEPSEEK = 1 << 8,       /* <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>... (V3 and V3.1) */
    AW_DIALECT_GLM45 = 1 << 9,          /* <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call> */
    AW_DIALECT_KIMI_K2 = 1 << 10,       /* <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0... */
    AW_DIALECT_MINIMAX = 1 << 11,       /* <minimax:tool_call><invoke name=..><parameter name=..> */
    AW_DIALECT_HARMONY = 1 << 12,       /* gpt-oss: <|channel|>commentary to=functions.NAME ...<|message|>{...}<|call|> */
    AW_DIALECT_AUTO = (1 << 13) - 1     /* every one: each reader looks for what the text shows */
};

/* The AW_DIALECT_* flag of a dialect's name ("hermes", "qwen3_coder", ...;
 * "auto" for all of them), or 0 when there is none. */
unsigned aw_dialect_flag(const char *name, size_t len);
/* The name of one AW_DIALECT_* flag, or NULL. */
const char *aw_dialect_name(unsigned flag);

typedef struct aw_transport_config {
    aw_transport_mode mode;
    const char *nonce;           /* 8 lower-case hex digits; NULL: from the system CSPRNG */
    const char *prefix;          /* tag prefix; NULL: "ai-agent" */
    unsigned max_calls_per_turn; /* 0: 10 */
    aw_report_format format;     /* expected final-report format */
    const aw_json_value *final_schema; /* for AW_FORMAT_JSON: the user's schema, or NULL;
                                          a json final report is validated against it */
    const aw_tool_def *tools;    /* copied by aw_transport_new */
    size_t tool_count;
    const char *const *reasoning_tags; /* NULL: {"think"}; tags whose content is passed over */
    size_t reasoning_tag_count;
    unsigned dialects;           /* AW_DIALECT_* */
    const aw_allocator *alloc;
} aw_transport_config;

typedef struct aw_transport aw_transport;

/* A schema (a tool's or the final report's) that does not compile fails
 * the session: err names the tool and the keyword ("tool `search`:
 * /properties/q/pattern: invalid regular expression: ..."). */
aw_transport *aw_transport_new(const aw_transport_config *cfg, aw_error *err);
void aw_transport_free(aw_transport *t);
const char *aw_transport_nonce(const aw_transport *t);
aw_transport_mode aw_transport_mode_of(const aw_transport *t);

/* The tag name of a slot ("ai-agent-1a2b3c4d-0011") and the numbered slot
 * name for call k (0-based) of a turn (1-based): turn 2 with 10 calls a
 * turn starts at "0011". */
int aw_transport_slot_name(const aw_transport *t, unsigned turn, unsigned k, aw_buf *out);

/* XML-NEXT: the per-turn notice (plain text, sent as a user message). */
int aw_transport_render_next(const aw_transport *t, unsigned turn, unsigned max_turns, aw_buf *out);

/* One tool call of the previous turn, for XML-PAST. */
typedef struct aw_past_call {
    aw_text slot;
    aw_text tool;
    bool ok;
    double duration_ms;
    aw_text request;
    aw_text response;
} aw_past_call;

/* XML-PAST: the previous turn's calls, each request and response cut to
 * 4,096 bytes at a character boundary and XML-escaped, so tool output can
 * never forge a tag. Writes nothing for n == 0. */
int aw_transport_render_past(const aw_past_call *calls, size_t n, aw_buf *out);
/* The same with each request and response cut to max_bytes instead (0:
 * 4,096): a runtime passes the size its results are already cut to, so
 * the model sees them whole. */
int aw_transport_render_past_limit(const aw_past_call *calls, size_t n, size_t max_bytes, aw_buf *out);

/* ---- the streaming extractor -------------------------------------------- */

typedef enum aw_reject_reason {
    AW_REJECT_WRONG_NONCE = 0,
    AW_REJECT_DEAD_SLOT,
    AW_REJECT_UNKNOWN_SLOT,
    AW_REJECT_TOOL_NOT_ALLOWED,
    AW_REJECT_EMPTY_PAYLOAD,
    AW_REJECT_DUPLICATE_SLOT,
    AW_REJECT_UNCLOSED,
    AW_REJECT_NOT_ALLOWED_IN_MODE,
    AW_REJECT_INVALID_JSON,
    AW_REJECT_BAD_STATUS,
    AW_REJECT_WRONG_FORMAT,
    AW_REJECT_INVALID_ARGUMENTS, /* the arguments break the tool's schema */
    AW_REJECT_MALFORMED_CALL     /* a call in another dialect that breaks that dialect's grammar */
} aw_reject_reason;

/* "wrong_nonce", "dead_slot", ... */
const char *aw_reject_reason_name(aw_reject_reason r);

typedef enum aw_x_kind {
    AW_X_TEXT = 0,  /* visible text outside tags (a tag rejected as it opens is text): text */
    AW_X_TAG_OPEN,  /* a tag opened: slot, tool */
    AW_X_PAYLOAD,   /* payload bytes of the open tag: text */
    AW_X_TAG_CLOSE, /* the open tag closed: slot */
    AW_X_CALL,      /* an accepted call: call */
    AW_X_FINAL,     /* the accepted final report: final */
    AW_X_REJECTED   /* a rejected tag or call: rejection */
} aw_x_kind;

typedef struct aw_x_call {
    aw_text slot;                /* "0001", "PROGRESS", or "" for other dialects */
    aw_text tool;
    const aw_json_value *args;   /* an object */
    aw_text payload;             /* the raw payload */
    const char *source;          /* "xml", "native"; for a call read in another dialect, its name
                                    in xml mode ("hermes", ...) and "recovered" in the others */
    aw_text command;             /* accounting: the tool name */
    unsigned repairs;            /* AW_REPAIR_* applied to the payload */
    const char *dialect;         /* the dialect it was read in, or NULL for xml and native calls */
} aw_x_call;

typedef struct aw_x_final {
    aw_text status;              /* "success", "failure" or "partial" (the attribute, trimmed and in lower case) */
    aw_report_format format;
    aw_text content;             /* the raw payload (layer 1) */
    const aw_json_value *json;   /* json: the object; slack-block-kit: the messages array; else NULL */
    bool truncated;              /* accepted unclosed after a length stop */
    unsigned repairs;
    const char *command;         /* AW_COMMAND_FINAL_XML */
    /* Layer 2 of a json report with a final schema: schema_checked, and
     * schema_valid false when json breaks the schema, with the errors and
     * schema_message (them in one line a model can act on). */
    bool schema_checked;
    bool schema_valid;
    const aw_schema_error *schema_errors;
    size_t schema_error_count;
    const char *schema_message;
} aw_x_final;

typedef struct aw_x_rejection {
    aw_text slot;
    aw_text tool;
    aw_reject_reason reason;
    const char *message;         /* one line telling the model what to fix */
    /* invalid_arguments: the schema errors (the message lists them too) */
    const aw_schema_error *errors;
    size_t error_count;
} aw_x_rejection;

typedef struct aw_x_event {
    aw_x_kind kind;
    aw_text text;  /* TEXT, PAYLOAD */
    aw_text slot;  /* TAG_OPEN, TAG_CLOSE */
    aw_text tool;  /* TAG_OPEN */
    const aw_x_call *call;
    const aw_x_final *final;
    const aw_x_rejection *rejection;
} aw_x_event;

/* What counts as a tag, and where it ends:
 *
 * - A nonce tag is checked as it opens: the nonce, the slot (an exact
 *   token: "0001" as the notice writes it, not "1" or "00001"), whether the
 *   slot is open this turn and in this mode, the tool, and whether the slot
 *   already has an accepted call. A tag rejected there is not a tag: its
 *   markup and what follows stay visible text (any tag inside it still
 *   counts), and AW_X_REJECTED follows the markup's text.
 * - A payload ends at its closing tag. In a tool payload (JSON) a closing
 *   tag inside a string is content if the JSON goes on after the string
 *   (',', ':', '}' or ']' next); if something else comes next, or the reply
 *   ends first, the string was left open and the closing tag was the end:
 *   the payload stops there (then is repaired or rejected as JSON) and the
 *   rest of the reply is read after it. This is decided within 1 KiB of the
 *   closing tag (past that, the string goes on); until then those bytes
 *   are not reported.
 * - One of our opening tags outside a string of a tool payload ends that
 *   payload, unclosed; a '<' before an opening tag's '>' makes it text.
 * - Only an accepted call or report uses up its slot: a rejected FINAL may
 *   be followed by a good one in the same reply. Two accepted tags in one
 *   slot are a duplicate_slot.
 * - A payload of nothing but white space (Unicode's, and U+200B, U+2060,
 *   U+FEFF) is empty.
 * - FINAL's status and format are read trimmed and in any case; a missing
 *   format is the expected one, a missing or unknown status is bad_status.
 *
 * Everything an event points to lives until the callback returns. Return 0
 * to go on; anything else stops feeding with AW_ESTOP. */
typedef int (*aw_x_fn)(void *ctx, const aw_x_event *ev);

typedef struct aw_extractor aw_extractor;

/* An extractor for one reply in turn `turn` (from 1). */
aw_extractor *aw_extractor_new(const aw_transport *t, unsigned turn);
void aw_extractor_free(aw_extractor *x);
/* Feed any chunk, from one byte up: the events are the same for every
 * chunking of the same reply, and the time is linear in the reply. */
int aw_extractor_feed(aw_extractor *x, const char *chunk, size_t len, aw_x_fn fn, void *ctx,
                      aw_error *err);
/* End of the reply. stop_reason as the provider gave it ("stop",
 * "end_turn", "length", "max_tokens", ...; NULL: unknown). Handles unclosed
 * tags and the other dialects' end-of-reply forms. */
int aw_extractor_finish(aw_extractor *x, const char *stop_reason, aw_x_fn fn, void *ctx,
                        aw_error *err);
/* Native tool calls that came with the reply (a JSON array in the OpenAI
 * {id, function: {name, arguments}} or flat {id, name, arguments|args}
 * shape): ignored and reported as rejections in xml mode, kept (source
 * "native") in xml-final mode. Call after finish. */
int aw_extractor_native_calls(aw_extractor *x, const aw_json_value *calls, aw_x_fn fn, void *ctx,
                              aw_error *err);
/* The TURN-FAILED feedback for the rejections so far, one line each (empty
 * when there were none). */
int aw_extractor_feedback(const aw_extractor *x, aw_buf *out);
/* A warning from finish (e.g. an unknown stop reason), or NULL. */
const char *aw_extractor_warning(const aw_extractor *x);

#ifdef __cplusplus
}
#endif
#endif
