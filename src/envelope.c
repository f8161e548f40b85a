/* UI event envelopes (seed 003): runtime events in, one stable schema out. */
#include <stdio.h>
#include <string.h>

#include "agentwire/envelope.h"
#include "internal/errors.h"
#include "internal/utf8.h"

const char *const aw_stop_reasons[] = {"completed", "steps_limit", "token_limit", "time_limit", "retry_limit",
                                       "error", "finish_reason", "guard", "user_requested", NULL};

static const char *const decision_names[] = {"forbid", "allow", "request", "stop"};

const char *aw_decision_name(aw_decision d) { return (unsigned)d < 4 ? decision_names[d] : NULL; }

int aw_decision_parse(const char *s, size_t n) {
    for (int i = 0; i < 4; i++)
        if (strlen(decision_names[i]) == n && !memcmp(decision_names[i], s, n)) return i;
    return -1;
}

bool aw_continuation_resolve(const aw_decision *d, size_t n, long *decider) {
    /* precedence: forbid, then request, then stop, then allow */
    static const aw_decision order[] = {AW_DECISION_FORBID, AW_DECISION_REQUEST, AW_DECISION_STOP, AW_DECISION_ALLOW};
    static const bool result[] = {false, true, false, true};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < n; i++)
            if (d[i] == order[k]) {
                if (decider) *decider = (long)i;
                return result[k];
            }
    if (decider) *decider = -1;
    return true;
}

const char *aw_envelope_status_for_stop(const char *r) {
    if (!r) return "stopped";
    if (!strcmp(r, "completed")) return "completed";
    if (!strcmp(r, "error")) return "failed";
    if (!strcmp(r, "user_requested")) return "cancelled";
    return "stopped";
}

/* Append s cut to `keep` characters plus "..." when it has more than
 * `limit` characters. */
static int append_cut(aw_buf *out, const char *s, size_t n, size_t limit, size_t keep) {
    if (aw__utf8_count(s, n) <= limit) return aw_buf_append(out, s, n);
    size_t cut = aw__utf8_prefix(s, n, keep);
    if (aw_buf_append(out, s, cut)) return AW_ENOMEM;
    return aw_buf_append(out, "...", 3);
}

int aw_envelope_args_summary(const aw_json_value *args, aw_buf *out) {
    if (!aw_json_is_object(args)) return 0; /* no named arguments: empty summary */
    aw_buf val;
    aw_buf_init(&val, out->alloc);
    int rc = 0;
    size_t shown = 0;
    for (size_t i = 0; i < args->u.obj.count && shown < 3 && !rc; i++) {
        const aw_json_member *m = &args->u.obj.members[i];
        if (aw_json_getn(args, m->key, m->key_len) != &m->value) continue; /* shadowed duplicate */
        aw_buf_clear(&val);
        if (m->value.type == AW_JSON_STRING) {
            rc = aw_buf_putc(&val, '\'');
            if (!rc) rc = aw_buf_append(&val, m->value.u.str.ptr, m->value.u.str.len);
            if (!rc) rc = aw_buf_putc(&val, '\'');
        } else {
            rc = aw_json_write(&m->value, NULL, &val, NULL);
        }
        if (!rc && shown) rc = aw_buf_append(out, ", ", 2);
        if (!rc) rc = aw_buf_append(out, m->key, m->key_len);
        if (!rc) rc = aw_buf_append(out, ": ", 2);
        if (!rc) rc = append_cut(out, val.data ? val.data : "", val.len, 30, 27);
        shown++;
    }
    aw_buf_free(&val);
    return rc;
}

int aw_envelope_result_summary(const aw_json_value *result, aw_buf *out) {
    if (!result || aw_json_is_null(result)) return 0;
    if (aw_json_is_string(result)) return append_cut(out, result->u.str.ptr, result->u.str.len, 100, 97);
    aw_buf tmp;
    aw_buf_init(&tmp, out->alloc);
    int rc = aw_json_write(result, NULL, &tmp, NULL);
    if (!rc) rc = append_cut(out, tmp.data, tmp.len, 100, 97);
    aw_buf_free(&tmp);
    return rc;
}

/* ---- the adapter ------------------------------------------------------------ */

struct aw_envelope_adapter {
    const aw_allocator *alloc;
    char *session_id, *execution_id, *channel;
    aw_envelope_preset preset;
    aw_broadcast_fn fn;
    void *ctx;
    char last_status[64];
    int has_status;
};

static char *dup(const aw_allocator *a, const char *s) {
    size_t n = strlen(s);
    char *p = aw_malloc(a, n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

aw_envelope_adapter *aw_envelope_adapter_new(const aw_envelope_config *cfg, aw_broadcast_fn fn, void *ctx) {
    if (!cfg || !fn) return NULL;
    aw_envelope_adapter *a = aw_malloc(cfg->alloc, sizeof *a);
    if (!a) return NULL;
    memset(a, 0, sizeof *a);
    a->alloc = cfg->alloc;
    a->preset = cfg->preset;
    a->fn = fn;
    a->ctx = ctx;
    const char *sid = cfg->session_id ? cfg->session_id : "default";
    a->session_id = dup(cfg->alloc, sid);
    a->execution_id = dup(cfg->alloc, cfg->execution_id ? cfg->execution_id : sid);
    a->channel = aw_malloc(cfg->alloc, strlen(sid) + 7);
    if (!a->session_id || !a->execution_id || !a->channel) {
        aw_envelope_adapter_free(a);
        return NULL;
    }
    memcpy(a->channel, "agent.", 6);
    memcpy(a->channel + 6, sid, strlen(sid) + 1);
    return a;
}

void aw_envelope_adapter_free(aw_envelope_adapter *a) {
    if (!a) return;
    aw_free(a->alloc, a->session_id);
    aw_free(a->alloc, a->execution_id);
    aw_free(a->alloc, a->channel);
    aw_free(a->alloc, a);
}

typedef struct em {
    aw_envelope_adapter *a;
    aw_json_doc *doc;
    const aw_json_value *ev;
    aw_json_value *payload;
    aw_error *err;
    int oom;
} em;

static void put(em *e, const char *key, aw_json_value *v) {
    if (!v || aw_json_object_set(e->doc, e->payload, key, strlen(key), v)) e->oom = 1;
}

/* field from the event, copied; `dflt` when absent: 0 null, 1 0, 2 [], 3 true, 4 false, 5 {} */
static void field(em *e, const char *key, int dflt) {
    const aw_json_value *v = aw_json_get(e->ev, key);
    if (v) return put(e, key, aw_json_copy(e->doc, v));
    switch (dflt) {
    case 1: return put(e, key, aw_json_new_int(e->doc, 0));
    case 2: return put(e, key, aw_json_new_array(e->doc));
    case 3: return put(e, key, aw_json_new_bool(e->doc, true));
    case 4: return put(e, key, aw_json_new_bool(e->doc, false));
    case 5: return put(e, key, aw_json_new_object(e->doc));
    default: return put(e, key, aw_json_new_null(e->doc));
    }
}

static int want_type(em *e, const char *key, aw_json_type t, const char *what, bool required) {
    const aw_json_value *v = aw_json_get(e->ev, key);
    if (!v) return required ? aw__error_set(e->err, AW_ETYPE, "field '%s' is missing", key) : 0;
    if (v->type != t && !(v->type == AW_JSON_NULL && !required))
        return aw__error_set(e->err, AW_ETYPE, "field '%s' must be %s", key, what);
    return 0;
}

static void string_summary(em *e, const char *key, int (*fn)(const aw_json_value *, aw_buf *),
                           const aw_json_value *v, bool null_when_null) {
    if (null_when_null && (!v || aw_json_is_null(v))) return put(e, key, aw_json_new_null(e->doc));
    aw_buf b;
    aw_buf_init(&b, e->a->alloc);
    if (fn(v, &b)) e->oom = 1;
    else put(e, key, aw_json_new_string(e->doc, b.data ? b.data : "", b.len));
    aw_buf_free(&b);
}

/* The class's base name, as the seed's basename(str_replace('\\', '/', ...)):
 * the offset after the last '\\' or '/'. */
static size_t base_name(const char *s, size_t n) {
    size_t b = 0;
    for (size_t j = 0; j < n; j++)
        if (s[j] == '\\' || s[j] == '/') b = j + 1;
    return b;
}

/* The fields each event may have besides "event" and "at". A field not
 * among them is an error: a misspelt one ("toolCallId", "text" for
 * "chunk") would otherwise be passed over and its value silently lost,
 * or the event dropped (a stream_chunk without its chunk). */
static const struct {
    const char *kind;
    const char *fields;
} known_fields[] = {
    {"step_started", "step_number, message_count, available_tools"},
    {"step_completed", "step_number, has_tool_calls, errors, finish_reason, usage, duration_ms, continuation"},
    {"tool_started", "tool_name, tool_call_id, args"},
    {"tool_completed", "tool_name, tool_call_id, success, error, duration_ms, result"},
    {"stream_chunk", "chunk, is_complete, tokens_delta"},
    {"status", "status, stop_reason, step_count, error_message, last_response"},
    {"continuation_evaluated", "step_number, should_continue, stop_reason, resolved_by, evaluations"},
};

/* 1 when key is one of the names in list ("a, b, c"). */
static int listed(const char *list, const char *key, size_t n) {
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !memcmp(p, key, n)) return 1;
        p += len;
        while (*p == ',' || *p == ' ') p++;
    }
    return 0;
}

static int check_fields(const aw_json_value *ev, const char *kind, aw_error *err) {
    for (size_t i = 0; i < sizeof known_fields / sizeof known_fields[0]; i++) {
        if (strcmp(kind, known_fields[i].kind)) continue;
        for (size_t m = 0; m < ev->u.obj.count; m++) {
            const aw_json_member *f = &ev->u.obj.members[m];
            if (listed("event, at", f->key, f->key_len) || listed(known_fields[i].fields, f->key, f->key_len)) continue;
            return aw__error_set(err, AW_ETYPE, "a %s event has no field '%.*s' (its fields: %s)", kind,
                                 (int)(f->key_len > 40 ? 40 : f->key_len), f->key, known_fields[i].fields);
        }
        return 0;
    }
    return 0; /* an unknown kind is reported where the kinds are told apart */
}

int aw_envelope_adapter_handle(aw_envelope_adapter *a, const aw_json_value *ev, int64_t now_ms, aw_error *err) {
    if (!a || !ev) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!aw_json_is_object(ev)) return aw__error_set(err, AW_ETYPE, "an event must be a JSON object");
    const aw_json_value *kind = aw_json_get(ev, "event");
    if (!aw_json_is_string(kind)) return aw__error_set(err, AW_ETYPE, "field 'event' must be a string");
    if (check_fields(ev, kind->u.str.ptr, err)) return AW_ETYPE;
    int64_t at = now_ms;
    const aw_json_value *atv = aw_json_get(ev, "at");
    if (atv && (!aw_json_is_string(atv) || aw_time_parse_rfc3339(atv->u.str.ptr, atv->u.str.len, &at)))
        return aw__error_set(err, AW_ETYPE, "field 'at' must be an RFC 3339 time");
    em e = {a, aw_json_doc_new(a->alloc), ev, NULL, err, 0};
    if (!e.doc || !(e.payload = aw_json_new_object(e.doc))) {
        aw_json_doc_free(e.doc);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    const char *k = kind->u.str.ptr;
    const char *type = NULL;
    bool trace = a->preset == AW_ENVELOPE_DEBUG;
    int rc = 0;
    if (!strcmp(k, "step_started")) {
        type = "agent.step.started";
        if (!(rc = want_type(&e, "step_number", AW_JSON_NUMBER, "a number", true))) {
            field(&e, "step_number", 0);
            field(&e, "message_count", 1);
            field(&e, "available_tools", 2);
        }
    } else if (!strcmp(k, "step_completed")) {
        type = "agent.step.completed";
        if (!(rc = want_type(&e, "step_number", AW_JSON_NUMBER, "a number", true))) {
            field(&e, "step_number", 0);
            field(&e, "has_tool_calls", 4);
            field(&e, "errors", 1);
            field(&e, "finish_reason", 0);
            field(&e, "usage", 5);
            field(&e, "duration_ms", 1);
            if (trace && aw_json_get(ev, "continuation")) field(&e, "continuation", 0);
        }
    } else if (!strcmp(k, "tool_started") || !strcmp(k, "tool_completed")) {
        int started = k[5] == 's';
        type = started ? "agent.tool.started" : "agent.tool.completed";
        if (!(rc = want_type(&e, "tool_name", AW_JSON_STRING, "a string", true)) &&
            !(rc = want_type(&e, "tool_call_id", AW_JSON_STRING, "a string", false))) {
            field(&e, "tool_name", 0);
            field(&e, "tool_call_id", 0);
            if (started) {
                const aw_json_value *args = aw_json_get(ev, "args");
                string_summary(&e, "args_summary", aw_envelope_args_summary, args, false);
                if (trace && args) {
                    aw_buf full, cut;
                    aw_buf_init(&full, a->alloc);
                    aw_buf_init(&cut, a->alloc);
                    if (aw_json_write(args, NULL, &full, NULL) || append_cut(&cut, full.data, full.len, 500, 500)) e.oom = 1;
                    else put(&e, "args", aw_json_new_string(e.doc, cut.data, cut.len));
                    aw_buf_free(&full);
                    aw_buf_free(&cut);
                }
            } else {
                field(&e, "success", 3);
                field(&e, "error", 0);
                field(&e, "duration_ms", 1);
                string_summary(&e, "result_summary", aw_envelope_result_summary, aw_json_get(ev, "result"), true);
            }
        }
    } else if (!strcmp(k, "stream_chunk")) {
        type = "agent.stream.chunk";
        const aw_json_value *chunk = aw_json_get(ev, "chunk");
        if (chunk && !aw_json_is_string(chunk)) rc = aw__error_set(err, AW_ETYPE, "field 'chunk' must be a string");
        else if (a->preset == AW_ENVELOPE_MINIMAL || !chunk || chunk->u.str.len == 0) type = NULL; /* never empty chunks */
        else {
            field(&e, "chunk", 0);
            field(&e, "is_complete", 4);
            field(&e, "tokens_delta", 1);
        }
    } else if (!strcmp(k, "status")) {
        type = "agent.status";
        const aw_json_value *st = aw_json_get(ev, "status");
        const aw_json_value *stop = aw_json_get(ev, "stop_reason");
        const char *status = NULL;
        if (aw_json_is_string(st)) status = st->u.str.ptr;
        else if (aw_json_is_string(stop)) status = aw_envelope_status_for_stop(stop->u.str.ptr);
        else rc = aw__error_set(err, AW_ETYPE, "a status event needs 'status' or 'stop_reason' (a string)");
        if (!rc && a->has_status && !strcmp(a->last_status, status)) type = NULL; /* no repeated status */
        else if (!rc) {
            snprintf(a->last_status, sizeof a->last_status, "%s", status);
            a->has_status = 1;
            put(&e, "status", aw_json_new_string(e.doc, status, strlen(status)));
            field(&e, "step_count", 0);
            field(&e, "error_message", 0);
            field(&e, "last_response", 0);
        }
    } else if (!strcmp(k, "continuation_evaluated")) {
        type = trace ? "agent.continuation" : NULL;
        const aw_json_value *evals = aw_json_get(ev, "evaluations");
        if (evals && !aw_json_is_array(evals)) rc = aw__error_set(err, AW_ETYPE, "field 'evaluations' must be an array");
        size_t n = aw_json_count(evals);
        aw_decision ds[256];
        if (n > 256) rc = aw__error_set(err, AW_ELIMIT, "more than 256 evaluations");
        for (size_t i = 0; !rc && i < n; i++) {
            const aw_json_value *d = aw_json_get(aw_json_at(evals, i), "decision");
            int dv = aw_json_is_string(d) ? aw_decision_parse(d->u.str.ptr, d->u.str.len) : -1;
            if (dv < 0) rc = aw__error_set(err, AW_ETYPE, "evaluations[%zu].decision must be forbid, allow, request or stop", i);
            else ds[i] = (aw_decision)dv;
        }
        if (!rc && type) {
            long decider;
            bool go = aw_continuation_resolve(ds, n, &decider);
            field(&e, "step_number", 0);
            const aw_json_value *sc = aw_json_get(ev, "should_continue");
            put(&e, "should_continue", aw_json_is_bool(sc) ? aw_json_copy(e.doc, sc) : aw_json_new_bool(e.doc, go));
            const aw_json_value *decided = decider >= 0 ? aw_json_at(evals, (size_t)decider) : NULL;
            const aw_json_value *crit = aw_json_get(decided, "criterion");
            field(&e, "stop_reason", 0);
            if (aw_json_get(ev, "resolved_by")) {
                field(&e, "resolved_by", 0);
            } else if (aw_json_is_string(crit)) {
                size_t b = base_name(crit->u.str.ptr, crit->u.str.len);
                put(&e, "resolved_by", aw_json_new_string(e.doc, crit->u.str.ptr + b, crit->u.str.len - b));
            } else {
                put(&e, "resolved_by", aw_json_new_null(e.doc));
            }
            aw_json_value *list = aw_json_new_array(e.doc);
            for (size_t i = 0; list && i < n; i++) {
                const aw_json_value *it = aw_json_at(evals, i);
                const aw_json_value *c = aw_json_get(it, "criterion");
                aw_json_value *o = aw_json_new_object(e.doc);
                if (!o) break;
                const char *cs = aw_json_is_string(c) ? c->u.str.ptr : "";
                size_t cn = aw_json_is_string(c) ? c->u.str.len : 0, b = base_name(cs, cn);
                const aw_json_value *reason = aw_json_get(it, "reason");
                if (aw_json_object_set_string(e.doc, o, "criterion", cs + b, cn - b) ||
                    aw_json_object_set_string(e.doc, o, "decision", aw_decision_name(ds[i]),
                                              strlen(aw_decision_name(ds[i]))) ||
                    aw_json_object_set(e.doc, o, "reason", 6,
                                       reason ? aw_json_copy(e.doc, reason) : aw_json_new_null(e.doc)) ||
                    aw_json_array_push(e.doc, list, o))
                    e.oom = 1;
            }
            put(&e, "evaluations", list);
        }
    } else {
        rc = aw__error_set(err, AW_ETYPE, "unknown event '%.40s'", k);
    }
    if (!rc && e.oom) rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    if (!rc && type) {
        aw_json_value *env = aw_json_new_object(e.doc);
        aw_buf ts;
        aw_buf_init(&ts, a->alloc);
        if (!env || aw_time_format_rfc3339(at, true, &ts) ||
            aw_json_object_set_string(e.doc, env, "type", type, strlen(type)) ||
            aw_json_object_set_string(e.doc, env, "session_id", a->session_id, strlen(a->session_id)) ||
            aw_json_object_set_string(e.doc, env, "execution_id", a->execution_id, strlen(a->execution_id)) ||
            aw_json_object_set_string(e.doc, env, "timestamp", ts.data, ts.len) ||
            aw_json_object_set(e.doc, env, "payload", 7, e.payload)) {
            rc = aw__error_set(err, AW_ENOMEM, "out of memory");
        } else if (a->fn(a->ctx, a->channel, env)) {
            rc = aw__error_set(err, AW_ESTOP, "stopped by the broadcaster");
        }
        aw_buf_free(&ts);
    }
    aw_json_doc_free(e.doc);
    return rc;
}
