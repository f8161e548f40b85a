/* agentwire — UI event envelopes (seed 003): one stable event schema for
 * live UIs, whatever the agent runtime emits.
 *
 *   {"type": "agent.tool.started", "session_id": "...", "execution_id": "...",
 *    "timestamp": "2026-01-16T10:05:00.123Z", "payload": {...}}
 *
 * sent on channel "agent.<session_id>" through a broadcaster callback. */
#ifndef AGENTWIRE_ENVELOPE_H
#define AGENTWIRE_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The broadcaster: called once per envelope. Return nonzero to stop. */
typedef int (*aw_broadcast_fn)(void *ctx, const char *channel, const aw_json_value *envelope);

typedef enum aw_envelope_preset {
    AW_ENVELOPE_STANDARD = 0, /* every type; no continuation trace */
    AW_ENVELOPE_MINIMAL,      /* no stream chunks */
    AW_ENVELOPE_DEBUG         /* continuation trace, and full arguments (cut at 500 characters) */
} aw_envelope_preset;

typedef struct aw_envelope_config {
    const char *session_id;
    const char *execution_id;
    aw_envelope_preset preset;
    const aw_allocator *alloc;
} aw_envelope_config;

typedef struct aw_envelope_adapter aw_envelope_adapter;

aw_envelope_adapter *aw_envelope_adapter_new(const aw_envelope_config *cfg, aw_broadcast_fn fn, void *ctx);
void aw_envelope_adapter_free(aw_envelope_adapter *a);

/* One runtime event: {"event": KIND, "at"?: RFC 3339 time, ...fields} with
 * KIND one of step_started, step_completed, tool_started, tool_completed,
 * stream_chunk, status, continuation_evaluated, and the fields named as in
 * the payloads. now_ms is used when "at" is absent (milliseconds since
 * 1970). Emits zero or one envelope: empty stream chunks, stream chunks in
 * the minimal preset, a status equal to the last one, and continuation
 * events without the trace emit nothing. A field an event of its kind does
 * not have (a misspelt "toolCallId", "text" for "chunk") is an error
 * (AW_ETYPE naming it and the kind's fields), never passed over. */
int aw_envelope_adapter_handle(aw_envelope_adapter *a, const aw_json_value *event, int64_t now_ms,
                               aw_error *err);

/* The seed's summaries, in characters (never splitting one):
 * args: the first three "key: value" joined by ", ", strings in single
 * quotes, others compact JSON, each value over 30 characters cut to 27 and
 * "..."; result: the string or compact JSON, over 100 characters cut to 97
 * and "..."; a null result gives nothing (the payload holds null). */
int aw_envelope_args_summary(const aw_json_value *args, aw_buf *out);
int aw_envelope_result_summary(const aw_json_value *result, aw_buf *out);

/* Stop reason -> status: completed -> "completed", error -> "failed",
 * user_requested -> "cancelled", anything else -> "stopped". */
const char *aw_envelope_status_for_stop(const char *stop_reason);

/* Continuation: decisions forbid / allow / request / stop resolved as the
 * source does: any forbid stops; else any request continues; else any
 * stop stops; else continue. *decider is the index of the evaluation that
 * decided, or -1 when none did. */
typedef enum aw_decision { AW_DECISION_FORBID = 0, AW_DECISION_ALLOW, AW_DECISION_REQUEST, AW_DECISION_STOP } aw_decision;
bool aw_continuation_resolve(const aw_decision *decisions, size_t n, long *decider);
/* "forbid", ...; and back (-1 when unknown). */
const char *aw_decision_name(aw_decision d);
int aw_decision_parse(const char *s, size_t n);

/* Stop reasons the continuation names. */
extern const char *const aw_stop_reasons[]; /* completed, steps_limit, token_limit, time_limit,
                                               retry_limit, error, finish_reason, guard,
                                               user_requested; NULL-terminated */

/* Time helpers shared with snapshots: RFC 3339 <-> milliseconds since
 * 1970 (UTC). parse accepts fractional seconds and offsets; format writes
 * "2026-01-16T10:05:00.123Z" (with_ms) or "2026-01-16T10:05:00Z". */
int aw_time_parse_rfc3339(const char *s, size_t n, int64_t *ms);
int aw_time_format_rfc3339(int64_t ms, bool with_ms, aw_buf *out);

#ifdef __cplusplus
}
#endif
#endif
