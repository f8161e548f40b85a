/* agentwire — the agent event model (the reference agent's AgentEvent, in
 * its camelCase JSON form).
 *
 * An aw_event is a typed view over a parsed JSON object: the fields the
 * thread format needs are picked out and checked, and `json` keeps the
 * whole object, so fields agentwire does not know pass through unchanged. */
#ifndef AGENTWIRE_EVENT_H
#define AGENTWIRE_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aw_event_kind {
    AW_EVENT_MESSAGE = 0,
    AW_EVENT_TOOL_CALL,
    AW_EVENT_TOOL_RESULT,
    AW_EVENT_ERROR,
    AW_EVENT_HUMAN_INPUT_REQUESTED,
    AW_EVENT_HUMAN_INPUT_RECEIVED,
    AW_EVENT_COMPLETION,
    AW_EVENT_SUMMARY,
    AW_EVENT_APPROVAL, /* kept, not written into a thread */
    AW_EVENT_PLAN,     /* kept, not written into a thread */
    AW_EVENT_OTHER     /* an unknown type: kept, not written */
} aw_event_kind;

typedef enum aw_role { AW_ROLE_USER = 0, AW_ROLE_ASSISTANT, AW_ROLE_SYSTEM } aw_role;

typedef struct aw_text {
    const char *ptr;
    size_t len;
} aw_text;

typedef struct aw_event {
    aw_event_kind kind;
    const aw_json_value *json;      /* the whole event object */
    aw_text type;                   /* the "type" string as written */
    const aw_json_value *timestamp; /* number (ms); NULL when absent */
    const aw_json_value *iteration; /* number; NULL when absent (approval, plan) */
    aw_role role;                   /* message */
    /* The body: content (message), error (error), question
     * (human_input_requested), response (human_input_received), result
     * (completion), summary (summary). */
    aw_text text;
    aw_text tool_name;                  /* tool_call */
    aw_text tool_call_id;               /* tool_call, tool_result, error (optional) */
    const aw_json_value *args;          /* tool_call: an object */
    const aw_json_value *result;        /* tool_result: any JSON value */
    const aw_json_value *duration_ms;   /* tool_result: number, optional */
    const aw_json_value *parallel_group; /* tool_call, tool_result: optional */
    const aw_json_value *summarized_iterations; /* summary: array of numbers */
    bool recoverable;                   /* error */
    bool verified;                      /* completion; false when absent */
} aw_event;

/* Read one event from a JSON object. Required are the fields the <thread>
 * format writes, and the toolCallId it names results by:
 *
 *   every type            type (string)
 *   all but approval,     iteration (number)
 *   plan and unknown
 *   message               role ("user", "assistant" or "system"), content (string)
 *   tool_call             toolName, toolCallId (strings), args (object)
 *   tool_result           toolCallId (string), result (any JSON value)
 *   error                 error (string), recoverable (true or false)
 *   human_input_requested question (string)
 *   human_input_received  response (string)
 *   completion            result (string)
 *   summary               summarizedIterations (array of numbers), summary (string)
 *
 * Optional, and checked for type when present: timestamp (number, every
 * known type), iteration (approval, plan), parallelGroup (string or
 * number) on tool_call and tool_result, durationMs (number) on
 * tool_result, toolCallId (string) on error, verified (true or false) on
 * completion. A type this
 * model does not know (AW_EVENT_OTHER) is not checked beyond its "type".
 * Any other field is kept in `json` unchecked.
 *
 * A missing or mistyped required field, or a mistyped optional one, is
 * AW_ETYPE with a message naming it ("field 'toolName' is missing", "field
 * 'args' must be an object"). The event points into obj, which must
 * outlive it. */
int aw_event_from_json(const aw_json_value *obj, aw_event *ev, aw_error *err);

/* The JSON "type" name of a kind ("tool_call", ...); NULL for OTHER. */
const char *aw_event_kind_name(aw_event_kind kind);

/* A list of events read from JSON lines or from one JSON array, with the
 * JSON they point into. */
typedef struct aw_event_list aw_event_list;

/* Input whose first non-blank character is '[' is read as one JSON array
 * of events; anything else as JSON lines (blank lines skipped). Errors carry
 * their place in err (offset, line and column, counted in the whole text):
 * a JSON syntax error where it is, a mistyped field at its key, a missing
 * field where the event starts (in the array form, at its first key); the
 * message names the field ("tool_call event: field 'args' must be an
 * object"), and in the array form the event's index from 0. opts may be
 * NULL. */
int aw_event_list_parse(const char *text, size_t len, const aw_json_read_options *opts,
                        aw_event_list **out, aw_error *err);
/* An empty list to fill with aw_event_list_add, with values from docs the
 * caller keeps alive. */
aw_event_list *aw_event_list_new(const aw_allocator *alloc);
int aw_event_list_add(aw_event_list *list, const aw_event *ev);
size_t aw_event_list_count(const aw_event_list *list);
const aw_event *aw_event_list_items(const aw_event_list *list);
void aw_event_list_free(aw_event_list *list);

#ifdef __cplusplus
}
#endif
#endif
