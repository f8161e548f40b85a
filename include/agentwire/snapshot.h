/* agentwire — slim agent-state snapshots (seed 003).
 *
 * Full agent state is too heavy to store at every step or to send to a
 * browser. A snapshot keeps what is needed to resume or display a run:
 * the most recent messages (content cut at a character boundary), step
 * summaries with their original numbers, usage, timing, and optionally the
 * last continuation decision.
 *
 * The full state, as JSON:
 *   {"agent_id": "...", "parent_agent_id": "..."|null,
 *    "status": "in_progress"|"completed"|"failed",
 *    "usage": {"prompt": N, "completion": N, "total": N},
 *    "execution": {"started_at": RFC 3339|epoch seconds, "updated_at": ...,
 *                  "cumulative_seconds": N},
 *    "messages": [{"role": "...", "content": ..., "metadata"|"_metadata":
 *                  {"tool_calls": [...], "tool_call_id": "...", "tool_name": "..."}}],
 *    "steps": [{"step_number"?: N, "type": "tool_execution"|"final"|"error",
 *               "has_tool_calls": bool, "finish_reason": "...", "errors": N|[...],
 *               "usage": {"total": N}, "duration_ms": N,
 *               "tool_calls": [{"id", "name"|"function": {"name"}, "arguments"?}]}],
 *    "step_count"?: N, "last_continuation": {...}|null, "metadata": {...}}
 */
#ifndef AGENTWIRE_SNAPSHOT_H
#define AGENTWIRE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_slim_config {
    long max_messages;        /* most recent kept; <= 0 keeps none */
    long max_steps;           /* most recent kept; <= 0 keeps none */
    long max_content_length;  /* characters; longer content is cut and "..." added */
    bool include_tool_results;    /* false: tool messages say "[tool result omitted]" */
    bool include_steps;
    bool include_continuation_trace;
    bool redact_tool_args;    /* tool calls reduced to {id, name} */
} aw_slim_config;

/* The seed's presets: "minimal" (20, 0, 500, no tool results, no steps),
 * "standard" (the defaults: 50, 20, 2000, tool results, steps), "full"
 * (100, 50, 5000, continuation trace). Returns -1 for an unknown name. */
int aw_slim_preset(const char *name, aw_slim_config *out);

/* state -> snapshot (a new document). Errors name the field
 * ("messages[3].role must be a string"). */
int aw_snapshot_slim(const aw_json_value *state, const aw_slim_config *cfg, const aw_allocator *alloc,
                     aw_json_doc **out, aw_error *err);

/* snapshot -> agent state. Steps are diagnostic and not restored (the
 * state gets "steps": [] and keeps "step_count"); slimming the restored
 * state with the same configuration gives the snapshot back with empty
 * steps, and from then on slim(restore(x)) == x. */
int aw_snapshot_restore(const aw_json_value *snapshot, const aw_allocator *alloc, aw_json_doc **out,
                        aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
