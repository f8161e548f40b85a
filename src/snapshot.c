/* Slim agent-state snapshots and their restore (seed 003), without the
 * proposal's faults: content is cut in characters, never inside one, and
 * steps keep their original numbers after trimming. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/envelope.h"
#include "agentwire/snapshot.h"
#include "internal/errors.h"
#include "internal/utf8.h"

int aw_slim_preset(const char *name, aw_slim_config *out) {
    aw_slim_config standard = {50, 20, 2000, true, true, false, false};
    if (!name || !out) return -1;
    *out = standard;
    if (!strcmp(name, "standard")) return 0;
    if (!strcmp(name, "minimal")) {
        aw_slim_config minimal = {20, 0, 500, false, false, false, false};
        *out = minimal;
        return 0;
    }
    if (!strcmp(name, "full")) {
        aw_slim_config full = {100, 50, 5000, true, true, true, false};
        *out = full;
        return 0;
    }
    return -1;
}

typedef struct slim {
    aw_json_doc *doc;
    const aw_slim_config *cfg;
    aw_error *err;
    aw_buf tmp;
} slim;

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_) return rc_;                                                                       \
    } while (0)

static int oom(slim *s) { return aw__error_set(s->err, AW_ENOMEM, "out of memory"); }

static int wrong(slim *s, const char *path, const char *want) {
    return aw__error_set(s->err, AW_ETYPE, "%s must be %s", path, want);
}

static int set(slim *s, aw_json_value *obj, const char *key, const aw_json_value *v) {
    if (!v || aw_json_object_set(s->doc, obj, key, strlen(key), v)) return oom(s);
    return 0;
}

static int set_copy(slim *s, aw_json_value *obj, const char *key, const aw_json_value *v) {
    return set(s, obj, key, aw_json_copy(s->doc, v));
}

static int set_null(slim *s, aw_json_value *obj, const char *key) { return set(s, obj, key, aw_json_new_null(s->doc)); }

/* A number field (default when absent). */
static int num_field(slim *s, aw_json_value *dst, const char *key, const aw_json_value *src, const char *skey,
                     const char *path, double dflt) {
    const aw_json_value *v = aw_json_get(src, skey);
    if (v && !aw_json_is_null(v) && !aw_json_is_number(v)) {
        char p[160];
        snprintf(p, sizeof p, "%s.%s", path, skey);
        return wrong(s, p, "a number");
    }
    if (v && aw_json_is_number(v)) return set_copy(s, dst, key, v);
    return set(s, dst, key, aw_json_new_number(s->doc, dflt));
}

/* An RFC 3339 time (or epoch seconds) normalized to UTC, or null. */
static int time_field(slim *s, aw_json_value *dst, const char *key, const aw_json_value *v, const char *path) {
    int64_t ms;
    if (!v || aw_json_is_null(v)) return set_null(s, dst, key);
    if (aw_json_is_number(v) && isfinite(v->u.num.d) && fabs(v->u.num.d) < 2.5e11) {
        ms = (int64_t)floor(v->u.num.d) * 1000;
    } else if (!aw_json_is_string(v) || aw_time_parse_rfc3339(v->u.str.ptr, v->u.str.len, &ms)) {
        return wrong(s, path, "an RFC 3339 time or epoch seconds");
    }
    aw_buf_clear(&s->tmp);
    if (aw_time_format_rfc3339(ms, false, &s->tmp)) return wrong(s, path, "a time between the years 0 and 9999");
    return set(s, dst, key, aw_json_new_string(s->doc, s->tmp.data, s->tmp.len));
}

static int content(slim *s, aw_json_value *dst, const aw_json_value *v, int omit) {
    if (omit) return set(s, dst, "content", aw_json_new_string(s->doc, "[tool result omitted]", 21));
    if (!v) return set(s, dst, "content", aw_json_new_string(s->doc, "", 0));
    if (!aw_json_is_string(v)) return set_copy(s, dst, "content", v);
    long max = s->cfg->max_content_length < 0 ? 0 : s->cfg->max_content_length;
    if (aw__utf8_count(v->u.str.ptr, v->u.str.len) <= (size_t)max) return set_copy(s, dst, "content", v);
    size_t cut = aw__utf8_prefix(v->u.str.ptr, v->u.str.len, (size_t)max);
    aw_buf_clear(&s->tmp);
    if (aw_buf_append(&s->tmp, v->u.str.ptr, cut) || aw_buf_append(&s->tmp, "...", 3)) return oom(s);
    return set(s, dst, "content", aw_json_new_string(s->doc, s->tmp.data, s->tmp.len));
}

/* {id, name}: name from "name", then "function.name", then "unknown". */
static aw_json_value *call_ref(slim *s, const aw_json_value *tc) {
    aw_json_value *o = aw_json_new_object(s->doc);
    if (!o) return NULL;
    const aw_json_value *id = aw_json_get(tc, "id");
    const aw_json_value *name = aw_json_get(tc, "name");
    if (!aw_json_is_string(name)) name = aw_json_get(aw_json_get(tc, "function"), "name");
    aw_json_value *idv = aw_json_is_string(id) ? aw_json_copy(s->doc, id) : aw_json_new_null(s->doc);
    aw_json_value *nv = aw_json_is_string(name) ? aw_json_copy(s->doc, name) : aw_json_new_string(s->doc, "unknown", 7);
    if (!idv || !nv || aw_json_object_set(s->doc, o, "id", 2, idv) || aw_json_object_set(s->doc, o, "name", 4, nv))
        return NULL;
    return o;
}

static int message(slim *s, aw_json_value *arr, const aw_json_value *m, size_t index) {
    char path[64];
    snprintf(path, sizeof path, "messages[%zu]", index);
    if (!aw_json_is_object(m)) return wrong(s, path, "an object");
    aw_json_value *o = aw_json_new_object(s->doc);
    if (!o) return oom(s);
    const aw_json_value *role = aw_json_get(m, "role");
    if (role && !aw_json_is_string(role)) {
        strncat(path, ".role", sizeof path - strlen(path) - 1);
        return wrong(s, path, "a string");
    }
    TRY(role ? set_copy(s, o, "role", role) : set(s, o, "role", aw_json_new_string(s->doc, "user", 4)));
    int is_tool = role && role->u.str.len == 4 && !memcmp(role->u.str.ptr, "tool", 4);
    TRY(content(s, o, aw_json_get(m, "content"), is_tool && !s->cfg->include_tool_results));
    const aw_json_value *meta = aw_json_get(m, "metadata");
    if (!meta) meta = aw_json_get(m, "_metadata");
    if (meta && !aw_json_is_null(meta) && !aw_json_is_object(meta)) {
        strncat(path, ".metadata", sizeof path - strlen(path) - 1);
        return wrong(s, path, "an object");
    }
    aw_json_value *mv = (meta && aw_json_is_object(meta)) ? aw_json_copy(s->doc, meta) : aw_json_new_object(s->doc);
    if (!mv) return oom(s);
    const aw_json_value *calls = aw_json_get(mv, "tool_calls");
    if (s->cfg->redact_tool_args && aw_json_is_array(calls)) {
        aw_json_value *red = aw_json_new_array(s->doc);
        if (!red) return oom(s);
        for (size_t i = 0; i < calls->u.arr.count; i++) {
            aw_json_value *r = call_ref(s, &calls->u.arr.items[i]);
            if (!r || aw_json_array_push(s->doc, red, r)) return oom(s);
        }
        TRY(set(s, mv, "tool_calls", red));
    }
    TRY(set(s, o, "metadata", mv));
    return aw_json_array_push(s->doc, arr, o) ? oom(s) : 0;
}

/* A step's "errors" given as a number, truncated toward zero; beyond the
 * int64 range (1e300, or 1e400 read as infinity) it saturates, as a plain
 * conversion there is undefined behaviour. */
static int64_t error_count(double d) {
    if (d != d) return 0;
    if (d >= 9223372036854775808.0) return INT64_MAX;
    if (d < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
}

static int step(slim *s, aw_json_value *arr, const aw_json_value *st, size_t index) {
    char path[64];
    snprintf(path, sizeof path, "steps[%zu]", index);
    if (!aw_json_is_object(st)) return wrong(s, path, "an object");
    aw_json_value *o = aw_json_new_object(s->doc);
    if (!o) return oom(s);
    const aw_json_value *num = aw_json_get(st, "step_number");
    if (aw_json_is_number(num)) TRY(set_copy(s, o, "step_number", num));
    else TRY(set(s, o, "step_number", aw_json_new_int(s->doc, (int64_t)index + 1)));
    const aw_json_value *type = aw_json_get(st, "type");
    TRY(aw_json_is_string(type) ? set_copy(s, o, "type", type) : set_null(s, o, "type"));
    const aw_json_value *calls = aw_json_get(st, "tool_calls");
    const aw_json_value *has = aw_json_get(st, "has_tool_calls");
    TRY(set(s, o, "has_tool_calls",
            aw_json_new_bool(s->doc, aw_json_is_bool(has) ? has->u.b : aw_json_count(calls) > 0)));
    const aw_json_value *fr = aw_json_get(st, "finish_reason");
    TRY(aw_json_is_string(fr) ? set_copy(s, o, "finish_reason", fr) : set_null(s, o, "finish_reason"));
    const aw_json_value *errors = aw_json_get(st, "errors");
    int64_t nerr = aw_json_is_array(errors) ? (int64_t)errors->u.arr.count
                   : (aw_json_is_number(errors) ? error_count(errors->u.num.d) : 0);
    TRY(set(s, o, "errors", aw_json_new_int(s->doc, nerr)));
    aw_json_value *usage = aw_json_new_object(s->doc);
    if (!usage) return oom(s);
    TRY(num_field(s, usage, "total", aw_json_get(st, "usage") ? aw_json_get(st, "usage") : st, "total", path, 0));
    TRY(set(s, o, "usage", usage));
    const aw_json_value *dur = aw_json_get(st, "duration_ms");
    TRY(aw_json_is_number(dur) ? set_copy(s, o, "duration_ms", dur) : set_null(s, o, "duration_ms"));
    aw_json_value *refs = aw_json_new_array(s->doc);
    if (!refs) return oom(s);
    for (size_t i = 0; i < aw_json_count(calls) && aw_json_is_array(calls); i++) {
        aw_json_value *r = call_ref(s, &calls->u.arr.items[i]);
        if (!r || aw_json_array_push(s->doc, refs, r)) return oom(s);
    }
    TRY(set(s, o, "tool_calls", refs));
    return aw_json_array_push(s->doc, arr, o) ? oom(s) : 0;
}

static aw_json_value *continuation(slim *s, const aw_json_value *c) {
    if (!aw_json_is_object(c)) return aw_json_new_null(s->doc);
    aw_json_value *o = aw_json_new_object(s->doc);
    static const char *const keys[] = {"should_continue", "stop_reason", "resolved_by"};
    for (size_t i = 0; o && i < 3; i++) {
        const aw_json_value *v = aw_json_get(c, keys[i]);
        aw_json_value *cv = v ? aw_json_copy(s->doc, v) : aw_json_new_null(s->doc);
        if (!cv || aw_json_object_set(s->doc, o, keys[i], strlen(keys[i]), cv)) return NULL;
    }
    return o;
}

static int build(slim *s, const aw_json_value *st, aw_json_value *out) {
    const aw_json_value *id = aw_json_get(st, "agent_id");
    if (!aw_json_is_string(id)) return wrong(s, "agent_id", "a string");
    TRY(set_copy(s, out, "agent_id", id));
    const aw_json_value *parent = aw_json_get(st, "parent_agent_id");
    if (parent && !aw_json_is_null(parent) && !aw_json_is_string(parent)) return wrong(s, "parent_agent_id", "a string or null");
    TRY(parent ? set_copy(s, out, "parent_agent_id", parent) : set_null(s, out, "parent_agent_id"));
    const aw_json_value *status = aw_json_get(st, "status");
    if (!aw_json_is_string(status)) return wrong(s, "status", "a string (in_progress, completed or failed)");
    TRY(set_copy(s, out, "status", status));
    const aw_json_value *steps = aw_json_get(st, "steps");
    if (steps && !aw_json_is_array(steps)) return wrong(s, "steps", "an array");
    const aw_json_value *count = aw_json_get(st, "step_count");
    if (aw_json_is_number(count)) TRY(set_copy(s, out, "step_count", count));
    else TRY(set(s, out, "step_count", aw_json_new_int(s->doc, (int64_t)aw_json_count(steps))));
    const aw_json_value *usage = aw_json_get(st, "usage");
    if (usage && !aw_json_is_object(usage)) return wrong(s, "usage", "an object");
    aw_json_value *u = aw_json_new_object(s->doc);
    if (!u) return oom(s);
    TRY(num_field(s, u, "prompt", usage, "prompt", "usage", 0));
    TRY(num_field(s, u, "completion", usage, "completion", "usage", 0));
    TRY(num_field(s, u, "total", usage, "total", "usage", 0));
    TRY(set(s, out, "usage", u));
    const aw_json_value *ex = aw_json_get(st, "execution");
    if (ex && !aw_json_is_object(ex)) return wrong(s, "execution", "an object");
    aw_json_value *e = aw_json_new_object(s->doc);
    if (!e) return oom(s);
    TRY(time_field(s, e, "started_at", aw_json_get(ex, "started_at"), "execution.started_at"));
    TRY(time_field(s, e, "updated_at", aw_json_get(ex, "updated_at"), "execution.updated_at"));
    TRY(num_field(s, e, "cumulative_seconds", ex, "cumulative_seconds", "execution", 0));
    TRY(set(s, out, "execution", e));
    const aw_json_value *msgs = aw_json_get(st, "messages");
    if (msgs && !aw_json_is_array(msgs)) return wrong(s, "messages", "an array");
    aw_json_value *ma = aw_json_new_array(s->doc);
    if (!ma) return oom(s);
    size_t n = aw_json_count(msgs);
    size_t keep = s->cfg->max_messages <= 0 ? 0 : (size_t)s->cfg->max_messages;
    for (size_t i = n > keep ? n - keep : 0; i < n; i++) TRY(message(s, ma, &msgs->u.arr.items[i], i));
    TRY(set(s, out, "messages", ma));
    aw_json_value *sa = aw_json_new_array(s->doc);
    if (!sa) return oom(s);
    if (s->cfg->include_steps) {
        size_t ns = aw_json_count(steps);
        size_t skeep = s->cfg->max_steps <= 0 ? 0 : (size_t)s->cfg->max_steps;
        for (size_t i = ns > skeep ? ns - skeep : 0; i < ns; i++) TRY(step(s, sa, &steps->u.arr.items[i], i));
    }
    TRY(set(s, out, "steps", sa));
    TRY(set(s, out, "last_continuation",
            s->cfg->include_continuation_trace ? continuation(s, aw_json_get(st, "last_continuation"))
                                               : aw_json_new_null(s->doc)));
    const aw_json_value *meta = aw_json_get(st, "metadata");
    if (meta && !aw_json_is_null(meta) && !aw_json_is_object(meta)) return wrong(s, "metadata", "an object");
    return set(s, out, "metadata", aw_json_is_object(meta) ? aw_json_copy(s->doc, meta) : aw_json_new_object(s->doc));
}

int aw_snapshot_slim(const aw_json_value *state, const aw_slim_config *cfg, const aw_allocator *alloc,
                     aw_json_doc **out, aw_error *err) {
    if (!out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    if (!aw_json_is_object(state)) return aw__error_set(err, AW_ETYPE, "the agent state must be a JSON object");
    aw_slim_config dflt;
    aw_slim_preset("standard", &dflt);
    slim s = {aw_json_doc_new(alloc), cfg ? cfg : &dflt, err, {0}};
    aw_buf_init(&s.tmp, alloc);
    aw_json_value *root = s.doc ? aw_json_new_object(s.doc) : NULL;
    int rc = root ? build(&s, state, root) : oom(&s);
    aw_buf_free(&s.tmp);
    if (rc) {
        aw_json_doc_free(s.doc);
        return rc;
    }
    aw_json_doc_set_root(s.doc, root);
    *out = s.doc;
    return 0;
}

int aw_snapshot_restore(const aw_json_value *snap, const aw_allocator *alloc, aw_json_doc **out, aw_error *err) {
    if (!out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    if (!aw_json_is_object(snap)) return aw__error_set(err, AW_ETYPE, "the snapshot must be a JSON object");
    static const struct {
        const char *key;
        int type; /* required JSON type, or -1: any */
    } fields[] = {{"agent_id", AW_JSON_STRING}, {"status", AW_JSON_STRING}, {"usage", AW_JSON_OBJECT},
                  {"execution", AW_JSON_OBJECT}, {"messages", AW_JSON_ARRAY}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const aw_json_value *v = aw_json_get(snap, fields[i].key);
        if (!v) return aw__error_set(err, AW_ETYPE, "snapshot field '%s' is missing", fields[i].key);
        if (v->type != fields[i].type)
            return aw__error_set(err, AW_ETYPE, "snapshot field '%s' has the wrong type", fields[i].key);
    }
    aw_json_doc *doc = aw_json_doc_new(alloc);
    aw_json_value *st = doc ? aw_json_new_object(doc) : NULL;
    int rc = st ? 0 : AW_ENOMEM;
    /* the state's own order; steps are diagnostic and not restored */
    static const char *const keys[] = {"agent_id", "parent_agent_id", "status", "step_count", "usage",
                                       "execution", "messages", "last_continuation", "metadata"};
    for (size_t i = 0; !rc && i < sizeof keys / sizeof keys[0]; i++) {
        const aw_json_value *v = aw_json_get(snap, keys[i]);
        aw_json_value *c = v ? aw_json_copy(doc, v) : aw_json_new_null(doc);
        if (!c || aw_json_object_set(doc, st, keys[i], strlen(keys[i]), c)) rc = AW_ENOMEM;
        if (!rc && !strcmp(keys[i], "messages")) {
            aw_json_value *steps = aw_json_new_array(doc);
            if (!steps || aw_json_object_set(doc, st, "steps", 5, steps)) rc = AW_ENOMEM;
        }
    }
    if (rc) {
        aw_json_doc_free(doc);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    aw_json_doc_set_root(doc, st);
    *out = doc;
    return 0;
}
