/* Reading a store: sessions as JSON objects (what `sessions list/show`
 * print and a web viewer serves), a session's events after a given
 * number (a viewer's resume point), its accounting rows, its snapshot,
 * the rows resuming is assembled from, and a conversation's exchanges.
 * Stored JSON that does not parse is reported as a corrupt row, never
 * passed on. */
#include <stdio.h>
#include <string.h>

#include "internal/rt_util.h"
#include "internal/store_impl.h"

/* The columns of a session, in the order session_object reads them. */
#define SESSION_COLUMNS                                                                                              \
    "id, parent_id, kind, agent, agent_hash, status, stop_reason, created_at, updated_at, seconds, turns, steps,"    \
    " events, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd,"       \
    " nonce, task, final_status, owner"
enum { COL_COUNT = 23 };

typedef struct reader {
    aw_store *s;
    aw_json_doc *doc;
    aw_json_value *list;
    int rc;
    aw_error *err;
    const char *what; /* for corrupt-row messages */
} reader;

static int set_text(aw_json_doc *d, aw_json_value *o, const char *key, const aw_sv *v)
{
    if (v->type == SV_NULL)
        return aw_json_object_set_null(d, o, key);
    if (v->type == SV_TEXT)
        return aw_json_object_set_string(d, o, key, v->s, v->n);
    char tmp[40];
    if (v->type == SV_INT)
        snprintf(tmp, sizeof tmp, "%lld", (long long)v->i);
    else
        snprintf(tmp, sizeof tmp, "%.17g", v->d);
    return aw_json_object_set_string(d, o, key, tmp, strlen(tmp));
}

/* A session row -> {"id": ..., "usage": {...}, ...}. */
static aw_json_value *session_object(aw_json_doc *d, const aw_sv *c)
{
    static const char *const text_keys[] = {"id", "parent_id", "kind", "agent", "agent_hash", "status", "stop_reason"};
    aw_json_value *o = aw_json_new_object(d), *u = aw_json_new_object(d);
    if (!o || !u)
        return NULL;
    for (size_t i = 0; i < 7; i++)
        if (set_text(d, o, text_keys[i], &c[i]))
            return NULL;
    static const char *const usage_keys[] = {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                                             "reasoning_tokens"};
    for (size_t i = 0; i < 5; i++)
        if (aw_json_object_set_int(d, u, usage_keys[i], sv_get_int(&c[13 + i], 0)))
            return NULL;
    if (c[18].type != SV_NULL && aw_json_object_set_number(d, u, "cost_usd", sv_get_double(&c[18], 0)))
        return NULL;
    if (aw_json_object_set_int(d, o, "created_at", sv_get_int(&c[7], 0)) ||
        aw_json_object_set_int(d, o, "updated_at", sv_get_int(&c[8], 0)) ||
        aw_json_object_set_number(d, o, "seconds", sv_get_double(&c[9], 0)) ||
        aw_json_object_set_int(d, o, "turns", sv_get_int(&c[10], 0)) ||
        aw_json_object_set_int(d, o, "steps", sv_get_int(&c[11], 0)) ||
        aw_json_object_set_int(d, o, "events", sv_get_int(&c[12], 0)) || aw_json_object_set(d, o, "usage", 5, u) ||
        set_text(d, o, "nonce", &c[19]) || set_text(d, o, "task", &c[20]) || set_text(d, o, "final_status", &c[21]) ||
        set_text(d, o, "owner", &c[22]))
        return NULL;
    return o;
}

static int corrupt(reader *r, const char *detail)
{
    r->rc = aw_rt_error(r->err, AW_STORE_ECORRUPT, "%s: a stored row is malformed (%s)", r->what, detail);
    return r->rc;
}

static int oom(reader *r)
{
    r->rc = aw_rt_error(r->err, AW_ENOMEM, "out of memory");
    return r->rc;
}

/* A stored JSON text, parsed into the reader's document. */
static aw_json_value *parse_into(reader *r, const aw_sv *v)
{
    if (v->type != SV_TEXT) {
        corrupt(r, "a JSON column is not text");
        return NULL;
    }
    aw_json_read_options ro = {.alloc = r->s->alloc};
    aw_json_doc *tmp = NULL;
    aw_error jerr;
    int rc = aw_json_parse(v->s, v->n, &ro, &tmp, &jerr);
    if (rc == AW_ENOMEM) {
        oom(r);
        return NULL;
    }
    if (rc) {
        char detail[160];
        snprintf(detail, sizeof detail, "stored JSON does not parse: %.120s", jerr.message);
        corrupt(r, detail);
        return NULL;
    }
    aw_json_value *copy = aw_json_copy(r->doc, aw_json_doc_root(tmp));
    aw_json_doc_free(tmp);
    if (!copy)
        oom(r);
    return copy;
}

static int reader_start(reader *r, aw_store *s, const char *what, bool array, aw_error *err)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    r->err = err;
    r->what = what;
    r->doc = aw_json_doc_new(s->alloc);
    if (!r->doc)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    r->list = array ? aw_json_new_array(r->doc) : aw_json_new_object(r->doc);
    if (!r->list) {
        aw_json_doc_free(r->doc);
        r->doc = NULL;
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    return 0;
}

/* Hand the document over (rc 0) or free it. */
static int reader_finish(reader *r, int rc, aw_json_doc **out)
{
    if (!rc && r->rc)
        rc = r->rc;
    if (rc) {
        aw_json_doc_free(r->doc);
        return rc;
    }
    aw_json_doc_set_root(r->doc, r->list);
    *out = r->doc;
    return 0;
}

/* ---- one session ------------------------------------------------------------------ */

typedef struct get_ctx {
    reader r;
    aw_json_value *session;
    const char *id;
    bool found;
    bool last_partial;
} get_ctx;

static int get_row(void *ctx, const aw_sv *c, size_t n)
{
    get_ctx *g = ctx;
    reader *r = &g->r;
    if (n < COL_COUNT + 2)
        return corrupt(r, "too few columns");
    aw_json_value *o = session_object(r->doc, c);
    if (!o)
        return oom(r);
    aw_json_value *config = c[COL_COUNT].type == SV_NULL ? NULL : parse_into(r, &c[COL_COUNT]);
    if (r->rc)
        return r->rc;
    if (config && !aw_json_is_object(config))
        return corrupt(r, "the configuration is not an object");
    if ((config ? aw_json_object_set(r->doc, o, "config", 6, config) : aw_json_object_set_null(r->doc, o, "config")) ||
        set_text(r->doc, o, "final_report", &c[COL_COUNT + 1]))
        return oom(r);
    g->session = o;
    g->found = true;
    return 0;
}

static int last_step_row(void *ctx, const aw_sv *c, size_t n)
{
    get_ctx *g = ctx;
    g->last_partial = n >= 1 && c[0].type == SV_TEXT && c[0].n == 7 && !memcmp(c[0].s, "partial", 7);
    return 0;
}

static int get_tx(aw_store *s, void *ctx, aw_error *err)
{
    get_ctx *g = ctx;
    aw_sv p[1] = {sv_str(g->id)};
    int rc = s->drv->query(s, "SELECT " SESSION_COLUMNS ", config, final_report FROM aw_sessions WHERE id = ?", p, 1,
                           get_row, g, err);
    if (!rc && g->found)
        rc = s->drv->query(s, "SELECT state FROM aw_steps WHERE session_id = ? ORDER BY seq DESC LIMIT 1", p, 1,
                           last_step_row, g, err);
    return rc;
}

int aw_store_session_get(aw_store *s, const char *id, aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    get_ctx g;
    memset(&g, 0, sizeof g);
    int rc = reader_start(&g.r, s, id, false, err);
    if (rc)
        return rc;
    g.id = id;
    rc = aw__store_tx(s, false, get_tx, &g, err);
    if (!rc && g.r.rc)
        rc = g.r.rc;
    if (!rc && !g.found)
        rc = aw_rt_error(err, AW_STORE_ENOTFOUND, "no session %s in %s", id, s->url);
    if (!rc) {
        const aw_json_value *status = aw_json_get(g.session, "status");
        /* a queued run has not started: taking it up is running it */
        bool running = aw_json_is_string(status) &&
                       (!strcmp(status->u.str.ptr, "running") || !strcmp(status->u.str.ptr, "queued"));
        if (aw_json_object_set_bool(g.r.doc, g.session, "resumable", running || g.last_partial))
            rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    if (rc) {
        aw_json_doc_free(g.r.doc);
        return rc;
    }
    aw_json_doc_set_root(g.r.doc, g.session);
    *out = g.r.doc;
    return 0;
}

/* ---- lists ---------------------------------------------------------------------------- */

static int list_row(void *ctx, const aw_sv *c, size_t n)
{
    reader *r = ctx;
    if (n < COL_COUNT + 1)
        return corrupt(r, "too few columns");
    aw_json_value *o = session_object(r->doc, c);
    if (!o || set_text(r->doc, o, "report_preview", &c[COL_COUNT]) || aw_json_array_push(r->doc, r->list, o))
        return oom(r);
    return 0;
}

int aw_store_session_list(aw_store *s, const aw_session_filter *f, aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    aw_session_filter none;
    memset(&none, 0, sizeof none);
    if (!f)
        f = &none;
    reader r;
    int rc = reader_start(&r, s, "sessions", true, err);
    if (rc)
        return rc;
    aw_buf sql;
    aw_buf_init(&sql, s->alloc);
    aw_sv p[8];
    size_t n = 0;
    /* only the filters given, so each is a plain comparison an index serves */
    rc = aw_buf_append_str(&sql, "SELECT " SESSION_COLUMNS ", substr(final_report, 1, 200) FROM aw_sessions WHERE 1 = 1");
    if (!rc && f->status) {
        rc = aw_buf_append_str(&sql, " AND status = ?");
        p[n++] = sv_str(f->status);
    }
    if (!rc && f->agent) {
        rc = aw_buf_append_str(&sql, " AND agent = ?");
        p[n++] = sv_str(f->agent);
    }
    if (!rc && f->kind) {
        rc = aw_buf_append_str(&sql, " AND kind = ?");
        p[n++] = sv_str(f->kind);
    }
    if (!rc && f->since_ms) {
        rc = aw_buf_append_str(&sql, " AND created_at >= ?");
        p[n++] = sv_int(f->since_ms);
    }
    if (!rc && f->updated_before_ms) {
        rc = aw_buf_append_str(&sql, " AND updated_at < ?");
        p[n++] = sv_int(f->updated_before_ms);
    }
    if (!rc)
        rc = aw_buf_append_str(&sql, " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?");
    p[n++] = sv_int(f->limit ? (int64_t)f->limit : INT64_MAX);
    p[n++] = sv_int((int64_t)f->offset);
    if (rc)
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    else
        rc = s->drv->query(s, sql.data, p, n, list_row, &r, err);
    aw_buf_free(&sql);
    return reader_finish(&r, rc, out);
}

/* ---- a session's rows ---------------------------------------------------------------- */

typedef struct exists_ctx {
    bool found;
} exists_ctx;

static int exists_row(void *ctx, const aw_sv *c, size_t n)
{
    (void)c;
    (void)n;
    ((exists_ctx *)ctx)->found = true;
    return 0;
}

static int must_exist(aw_store *s, const char *id, aw_error *err)
{
    exists_ctx e = {false};
    aw_sv p[1] = {sv_str(id)};
    int rc = s->drv->query(s, "SELECT 1 FROM aw_sessions WHERE id = ?", p, 1, exists_row, &e, err);
    if (!rc && !e.found)
        rc = aw_rt_error(err, AW_STORE_ENOTFOUND, "no session %s in %s", id, s->url);
    return rc;
}

static int event_row(void *ctx, const aw_sv *c, size_t n)
{
    reader *r = ctx;
    if (n < 3)
        return corrupt(r, "too few columns");
    aw_json_value *o = aw_json_new_object(r->doc);
    if (!o)
        return oom(r);
    aw_json_value *ev = parse_into(r, &c[2]);
    if (!ev)
        return r->rc;
    if (!aw_json_is_object(ev))
        return corrupt(r, "an event is not an object");
    if (aw_json_object_set_int(r->doc, o, "seq", sv_get_int(&c[0], 0)) ||
        aw_json_object_set_int(r->doc, o, "step", sv_get_int(&c[1], 0)) || aw_json_object_set(r->doc, o, "event", 5, ev) ||
        aw_json_array_push(r->doc, r->list, o))
        return oom(r);
    return 0;
}

typedef struct events_ctx {
    reader *r;
    const char *id;
    int64_t after;
    size_t limit;
} events_ctx;

static int events_tx(aw_store *s, void *ctx, aw_error *err)
{
    events_ctx *e = ctx;
    int rc = must_exist(s, e->id, err);
    aw_sv p[] = {sv_str(e->id), sv_int(e->after), sv_int(e->limit ? (int64_t)e->limit : INT64_MAX)};
    if (!rc)
        rc = s->drv->query(s,
                           "SELECT e.seq, e.step, e.body FROM aw_events e JOIN aw_steps s"
                           " ON s.session_id = e.session_id AND s.seq = e.step"
                           " WHERE e.session_id = ? AND e.seq > ? AND s.state <> 'superseded' ORDER BY e.seq LIMIT ?",
                           p, 3, event_row, e->r, err);
    return rc;
}

int aw_store_events(aw_store *s, const char *id, int64_t after_seq, size_t limit, aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    reader r;
    int rc = reader_start(&r, s, id, true, err);
    if (rc)
        return rc;
    events_ctx e = {&r, id, after_seq, limit};
    rc = aw__store_tx(s, false, events_tx, &e, err);
    return reader_finish(&r, rc, out);
}

static int body_row(void *ctx, const aw_sv *c, size_t n)
{
    reader *r = ctx;
    if (n < 1)
        return corrupt(r, "too few columns");
    aw_json_value *v = parse_into(r, &c[0]);
    if (!v)
        return r->rc;
    return aw_json_array_push(r->doc, r->list, v) ? oom(r) : 0;
}

typedef struct body_ctx {
    reader *r;
    const char *id, *sql;
} body_ctx;

static int body_tx(aw_store *s, void *ctx, aw_error *err)
{
    body_ctx *b = ctx;
    int rc = must_exist(s, b->id, err);
    aw_sv p[1] = {sv_str(b->id)};
    return rc ? rc : s->drv->query(s, b->sql, p, 1, body_row, b->r, err);
}

int aw_store_accounting(aw_store *s, const char *id, aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    reader r;
    int rc = reader_start(&r, s, id, true, err);
    if (rc)
        return rc;
    body_ctx b = {&r, id, "SELECT body FROM aw_accounting WHERE session_id = ? ORDER BY seq"};
    rc = aw__store_tx(s, false, body_tx, &b, err);
    return reader_finish(&r, rc, out);
}

int aw_store_snapshot(aw_store *s, const char *id, aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    reader r;
    int rc = reader_start(&r, s, id, true, err);
    if (rc)
        return rc;
    body_ctx b = {&r, id, "SELECT body FROM aw_snapshots WHERE session_id = ?"};
    rc = aw__store_tx(s, false, body_tx, &b, err);
    if (!rc && !r.rc && aw_json_count(r.list) == 0)
        rc = aw_rt_error(err, AW_STORE_ENOTFOUND, "session %s has no snapshot yet (no step was stored)", id);
    if (rc || r.rc) {
        aw_json_doc_free(r.doc);
        return rc ? rc : r.rc;
    }
    aw_json_doc_set_root(r.doc, aw_json_at_mut(r.list, 0));
    *out = r.doc;
    return 0;
}

static int64_t num_or_minus(const aw_json_value *v) { return aw_rt_json_int(v, -1, INT64_MIN, INT64_MAX); }

/* ---- whole steps, for a viewer ------------------------------------------------------ */

/* A viewer turns steps into envelopes (a step's start and end, with the
 * usage of its model requests), so it reads whole steps: each with its
 * events after the resume point and all of its accounting rows. Steps are
 * written in one transaction each, so the last step read is complete. */
typedef struct steps_ctx {
    reader *r;
    const char *id;
    int64_t after;
    size_t limit;
    int64_t first_step, last_step, step_of_after;
} steps_ctx;

static int one_int_row(void *ctx, const aw_sv *c, size_t n)
{
    *(int64_t *)ctx = n ? sv_get_int(&c[0], -1) : -1;
    return 0;
}

static int view_step_row(void *ctx, const aw_sv *c, size_t n)
{
    steps_ctx *x = ctx;
    reader *r = x->r;
    if (n < 5)
        return corrupt(r, "too few columns");
    int64_t seq = sv_get_int(&c[0], -1);
    aw_json_value *o = aw_json_new_object(r->doc), *evs = aw_json_new_array(r->doc), *acc = aw_json_new_array(r->doc);
    if (!o || !evs || !acc || aw_json_object_set_int(r->doc, o, "seq", seq) ||
        aw_json_object_set_int(r->doc, o, "turn", sv_get_int(&c[1], 0)) || set_text(r->doc, o, "state", &c[2]) ||
        aw_json_object_set_bool(r->doc, o, "final", sv_get_int(&c[3], 0) != 0) ||
        aw_json_object_set_int(r->doc, o, "created_at", sv_get_int(&c[4], 0)) ||
        aw_json_object_set_bool(r->doc, o, "continued", seq == x->step_of_after) ||
        aw_json_object_set(r->doc, o, "events", 6, evs) || aw_json_object_set(r->doc, o, "accounting", 10, acc) ||
        aw_json_array_push(r->doc, r->list, o))
        return oom(r);
    x->last_step = seq;
    return 0;
}

/* The step object a row of step `step` goes to: the rows come in step
 * order, so the search starts at the last step used. */
static aw_json_value *step_list(steps_ctx *x, int64_t step, const char *member, size_t *from)
{
    size_t count = aw_json_count(x->r->list);
    for (size_t i = *from; i < count; i++) {
        aw_json_value *o = aw_json_at_mut(x->r->list, i);
        if (num_or_minus(aw_json_get(o, "seq")) == step) {
            *from = i;
            return aw_json_get_mut(o, member);
        }
    }
    return NULL;
}

typedef struct view_rows {
    steps_ctx *x;
    size_t from;
} view_rows;

static int view_event_row(void *ctx, const aw_sv *c, size_t n)
{
    view_rows *v = ctx;
    reader *r = v->x->r;
    if (n < 3)
        return corrupt(r, "too few columns");
    aw_json_value *list = step_list(v->x, sv_get_int(&c[1], -1), "events", &v->from);
    if (!list)
        return corrupt(r, "an event of a step that is not stored");
    aw_json_value *o = aw_json_new_object(r->doc);
    aw_json_value *ev = o ? parse_into(r, &c[2]) : NULL;
    if (!ev)
        return r->rc ? r->rc : oom(r);
    if (!aw_json_is_object(ev))
        return corrupt(r, "an event is not an object");
    if (aw_json_object_set_int(r->doc, o, "seq", sv_get_int(&c[0], 0)) || aw_json_object_set(r->doc, o, "event", 5, ev) ||
        aw_json_array_push(r->doc, list, o))
        return oom(r);
    return 0;
}

static int view_accounting_row(void *ctx, const aw_sv *c, size_t n)
{
    view_rows *v = ctx;
    reader *r = v->x->r;
    if (n < 2)
        return corrupt(r, "too few columns");
    aw_json_value *list = step_list(v->x, sv_get_int(&c[0], -1), "accounting", &v->from);
    if (!list)
        return corrupt(r, "an accounting row of a step that is not stored");
    aw_json_value *row = parse_into(r, &c[1]);
    if (!row)
        return r->rc;
    return aw_json_array_push(r->doc, list, row) ? oom(r) : 0;
}

static int steps_tx(aw_store *s, void *ctx, aw_error *err)
{
    steps_ctx *x = ctx;
    int rc = must_exist(s, x->id, err);
    aw_sv p[] = {sv_str(x->id), sv_int(x->after)};
    x->first_step = x->step_of_after = -1;
    if (!rc)
        rc = s->drv->query(s,
                           "SELECT e.step FROM aw_events e JOIN aw_steps s ON s.session_id = e.session_id AND s.seq = e.step"
                           " WHERE e.session_id = ? AND e.seq > ? AND s.state <> 'superseded' ORDER BY e.seq LIMIT 1",
                           p, 2, one_int_row, &x->first_step, err);
    if (rc || x->first_step < 0)
        return rc;
    if (x->after > 0)
        rc = s->drv->query(s, "SELECT step FROM aw_events WHERE session_id = ? AND seq = ?", p, 2, one_int_row,
                           &x->step_of_after, err);
    aw_sv sp[] = {sv_str(x->id), sv_int(x->first_step), sv_int(x->limit ? (int64_t)x->limit : INT64_MAX)};
    if (!rc)
        rc = s->drv->query(s,
                           "SELECT seq, turn, state, final, created_at FROM aw_steps WHERE session_id = ? AND seq >= ?"
                           " AND state <> 'superseded' ORDER BY seq LIMIT ?",
                           sp, 3, view_step_row, x, err);
    if (rc || x->r->rc)
        return rc ? rc : x->r->rc;
    /* the steps' events are numbers after..last: a range of the primary
     * key, found through the step index (schema version 2) */
    aw_sv bp[] = {sv_str(x->id), sv_int(x->first_step), sv_int(x->last_step)};
    int64_t last_event = -1;
    rc = s->drv->query(s, "SELECT max(seq) FROM aw_events WHERE session_id = ? AND step BETWEEN ? AND ?", bp, 3,
                       one_int_row, &last_event, err);
    aw_sv ep[] = {sv_str(x->id), sv_int(x->after), sv_int(last_event)};
    view_rows v = {x, 0};
    if (!rc)
        rc = s->drv->query(s,
                           "SELECT e.seq, e.step, e.body FROM aw_events e JOIN aw_steps s"
                           " ON s.session_id = e.session_id AND s.seq = e.step WHERE e.session_id = ? AND e.seq > ?"
                           " AND e.seq <= ? AND s.state <> 'superseded' ORDER BY e.seq",
                           ep, 3, view_event_row, &v, err);
    aw_sv ap[] = {sv_str(x->id), sv_int(x->first_step), sv_int(x->last_step)};
    v.from = 0;
    if (!rc && !x->r->rc)
        rc = s->drv->query(s,
                           "SELECT a.step, a.body FROM aw_accounting a JOIN aw_steps s"
                           " ON s.session_id = a.session_id AND s.seq = a.step WHERE a.session_id = ?"
                           " AND a.step BETWEEN ? AND ? AND s.state <> 'superseded' ORDER BY a.seq",
                           ap, 3, view_accounting_row, &v, err);
    return rc;
}

int aw_store_steps(aw_store *s, const char *id, int64_t after_seq, size_t limit, aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    reader r;
    int rc = reader_start(&r, s, id, true, err);
    if (rc)
        return rc;
    steps_ctx x = {&r, id, after_seq < 0 ? 0 : after_seq, limit, -1, -1, -1};
    rc = aw__store_tx(s, false, steps_tx, &x, err);
    return reader_finish(&r, rc, out);
}

/* ---- resuming ----------------------------------------------------------------------- */

/* Rows for aw_store_resume_assemble: [{"resume": TEXT, "final": bool,
 * "events": [TEXT...]}], from the whole steps only. */
typedef struct rows_ctx {
    reader *r;
    const char *id;
    int64_t last_seq; /* the row the last event went to */
} rows_ctx;

static int step_row(void *ctx, const aw_sv *c, size_t n)
{
    rows_ctx *x = ctx;
    reader *r = x->r;
    if (n < 3 || c[1].type == SV_NULL || c[2].type != SV_TEXT)
        return corrupt(r, "a step row without its resume data");
    aw_json_value *o = aw_json_new_object(r->doc), *evs = aw_json_new_array(r->doc);
    if (!o || !evs || aw_json_object_set_int(r->doc, o, "seq", sv_get_int(&c[0], 0)) ||
        aw_json_object_set_bool(r->doc, o, "final", sv_get_int(&c[1], 0) != 0) ||
        aw_json_object_set_string(r->doc, o, "resume", c[2].s, c[2].n) ||
        aw_json_object_set(r->doc, o, "events", 6, evs) || aw_json_array_push(r->doc, r->list, o))
        return oom(r);
    return 0;
}

static int resume_event_row(void *ctx, const aw_sv *c, size_t n)
{
    rows_ctx *x = ctx;
    reader *r = x->r;
    if (n < 2 || c[1].type != SV_TEXT)
        return corrupt(r, "an event row without its body");
    int64_t step = sv_get_int(&c[0], -1);
    /* the rows are in step order; find this event's step from the last one used */
    size_t count = aw_json_count(r->list);
    size_t i = x->last_seq >= 0 ? (size_t)x->last_seq : 0;
    while (i < count && num_or_minus(aw_json_get(aw_json_at(r->list, i), "seq")) != step)
        i++;
    if (i == count)
        return corrupt(r, "an event of a step that is not stored");
    x->last_seq = (int64_t)i;
    aw_json_value *evs = aw_json_get_mut(aw_json_at_mut(r->list, i), "events");
    aw_json_value *t = aw_json_new_string(r->doc, c[1].s, c[1].n);
    if (!t || aw_json_array_push(r->doc, evs, t))
        return oom(r);
    return 0;
}

static int resume_tx(aw_store *s, void *ctx, aw_error *err)
{
    rows_ctx *x = ctx;
    int rc = must_exist(s, x->id, err);
    aw_sv p[1] = {sv_str(x->id)};
    if (!rc)
        rc = s->drv->query(s, "SELECT seq, final, resume FROM aw_steps WHERE session_id = ? AND state = 'whole' ORDER BY seq",
                           p, 1, step_row, x, err);
    if (!rc && aw_json_count(x->r->list))
        rc = s->drv->query(s,
                           "SELECT e.step, e.body FROM aw_events e JOIN aw_steps s"
                           " ON s.session_id = e.session_id AND s.seq = e.step"
                           " WHERE e.session_id = ? AND s.state = 'whole' ORDER BY e.seq",
                           p, 1, resume_event_row, x, err);
    return rc;
}

int aw_store_resume_load(aw_store *s, const char *id, aw_store_resume *out, aw_error *err)
{
    aw_error_clear(err);
    memset(out, 0, sizeof *out);
    reader r;
    int rc = reader_start(&r, s, id, true, err);
    if (rc)
        return rc;
    rows_ctx x = {&r, id, 0};
    rc = aw__store_tx(s, false, resume_tx, &x, err);
    aw_json_doc *rows = NULL;
    rc = reader_finish(&r, rc, &rows);
    if (rc)
        return rc;
    rc = aw_store_resume_assemble(aw_json_doc_root(rows), s->alloc, out, err);
    aw_json_doc_free(rows);
    return rc;
}

void aw_store_resume_free(aw_store_resume *r)
{
    if (!r)
        return;
    aw_json_doc_free(r->resume);
    aw_json_doc_free(r->history);
    memset(r, 0, sizeof *r);
}

/* ---- conversations ------------------------------------------------------------------ */

static int exchange_row(void *ctx, const aw_sv *c, size_t n)
{
    reader *r = ctx;
    if (n < 4 || c[2].type != SV_TEXT)
        return corrupt(r, "an exchange row without its message");
    aw_json_value *o = aw_json_new_object(r->doc);
    if (!o)
        return oom(r);
    aw_json_value *reply = parse_into(r, &c[3]);
    if (!reply)
        return r->rc;
    if (!aw_json_is_object(reply))
        return corrupt(r, "an exchange's reply is not an object");
    if (aw_json_object_set_int(r->doc, o, "n", sv_get_int(&c[0], 0)) ||
        aw_json_object_set_int(r->doc, o, "at", sv_get_int(&c[1], 0)) ||
        aw_json_object_set_string(r->doc, o, "message", c[2].s, c[2].n) ||
        aw_json_object_set(r->doc, o, "reply", 5, reply) || aw_json_array_push(r->doc, r->list, o))
        return oom(r);
    return 0;
}

int aw_store_exchanges(aw_store *s, const char *id, aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    reader r;
    int rc = reader_start(&r, s, id, true, err);
    if (rc)
        return rc;
    exists_ctx e = {false};
    aw_sv p[1] = {sv_str(id)};
    rc = s->drv->query(s, "SELECT 1 FROM aw_sessions WHERE id = ?", p, 1, exists_row, &e, err);
    if (!rc && !e.found)
        rc = aw_rt_error(err, AW_STORE_ENOTFOUND, "no session %s in %s", id, s->url);
    if (!rc)
        rc = s->drv->query(s, "SELECT n, at, message, reply FROM aw_exchanges WHERE session_id = ? ORDER BY n", p, 1,
                           exchange_row, &r, err);
    return reader_finish(&r, rc, out);
}
