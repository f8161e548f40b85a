/* The run queue (schema version 3): `agentwire submit` queues sessions,
 * workers claim them with a lease they renew while the run goes on, and
 * release them when it ends. A worker that dies stops renewing; once its
 * lease has run out, the next claim takes the session again and the new
 * worker resumes it from its last stored step.
 *
 * Times of leases are the database's ("now" in SQL, aw__store_now_sql),
 * never a worker's clock: workers on several machines compare them. On
 * PostgreSQL, claims lock the queue's rows with FOR UPDATE SKIP LOCKED,
 * so two workers never take one session and never wait on each other's
 * claim; on SQLite, the write transaction already admits one claim at a
 * time. */
#include <stdio.h>
#include <string.h>

#include "internal/rt_util.h"
#include "internal/store_impl.h"

const char *aw__store_now_sql(const aw_store *s)
{
    return s->drv->dialect == DIALECT_POSTGRES ? "(extract(epoch from clock_timestamp()) * 1000)::bigint"
                                               : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
}

/* ---- queueing ----------------------------------------------------------------------- */

typedef struct enqueue_ctx {
    const aw_session_start *st;
    const char *config;
} enqueue_ctx;

static int enqueue_tx(aw_store *s, void *ctx, aw_error *err)
{
    enqueue_ctx *e = ctx;
    const aw_session_start *st = e->st;
    int64_t now = aw__store_now_ms();
    aw_sv p[] = {sv_str(st->id),   sv_str(st->parent_id), sv_str(st->kind ? st->kind : "run"),
                 sv_str(st->agent_name), sv_str(st->agent_hash), sv_int(now),
                 sv_int(now),      sv_str(st->nonce),     sv_str(st->task),
                 sv_str(e->config ? e->config : "{}")};
    int rc = aw__store_exec(s,
                            "INSERT INTO aw_sessions (id, parent_id, kind, agent, agent_hash, status, created_at,"
                            " updated_at, nonce, task, config) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?)",
                            p, sizeof p / sizeof *p, err);
    aw_sv q[] = {sv_str(st->id), sv_int(now)};
    if (!rc)
        rc = aw__store_exec(s, "INSERT INTO aw_queue (session_id, queued_at, attempts) VALUES (?, ?, 0)", q, 2, err);
    return rc;
}

int aw_store_enqueue(aw_store *s, const aw_session_start *start, char id_out[40], aw_error *err)
{
    aw_error_clear(err);
    if (!start || start->continuing || (start->id && !*start->id))
        return aw_rt_error(err, AW_EINVAL, "a queued run needs a new session");
    aw_session_start copy = *start;
    const aw_session_start *st = &copy;
    if (!copy.id) {
        aw_rt_uuid4(id_out);
        copy.id = id_out;
    } else {
        snprintf(id_out, 40, "%s", copy.id);
    }
    aw_buf config;
    aw_buf_init(&config, s->alloc);
    if (st->config && aw_json_write(st->config, NULL, &config, NULL)) {
        aw_buf_free(&config);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    enqueue_ctx e = {st, st->config ? config.data : NULL};
    int rc = aw__store_tx(s, true, enqueue_tx, &e, err);
    aw_buf_free(&config);
    if (rc && err && strstr(err->message, "aw_sessions"))
        rc = aw_rt_error(err, AW_STORE_ESTATE, "a session %s exists already in %s", st->id, s->url);
    return rc;
}

/* ---- claiming ----------------------------------------------------------------------- */

#define MAX_CLAIM 64

typedef struct claimed {
    char id[128];
    int64_t attempts;
    char status[32];
} claimed;

typedef struct claim_ctx {
    const char *owner;
    int64_t lease_ms;
    size_t max;
    unsigned max_attempts;
    claimed rows[MAX_CLAIM];
    size_t n;
    aw_json_doc *out;
} claim_ctx;

static int claim_row(void *ctx, const aw_sv *cols, size_t n)
{
    claim_ctx *c = ctx;
    if (n < 3 || c->n == MAX_CLAIM || cols[0].type != SV_TEXT)
        return 0;
    claimed *r = &c->rows[c->n++];
    snprintf(r->id, sizeof r->id, "%.*s", (int)cols[0].n, cols[0].s);
    r->attempts = sv_get_int(&cols[1], 0);
    snprintf(r->status, sizeof r->status, "%.*s", cols[2].type == SV_TEXT ? (int)cols[2].n : 0,
             cols[2].type == SV_TEXT ? cols[2].s : "");
    return 0;
}

static bool ended(const char *status)
{
    return strcmp(status, "queued") != 0 && strcmp(status, "running") != 0;
}

static int take(aw_store *s, claim_ctx *c, claimed *r, aw_error *err)
{
    char sql[400];
    aw_sv id[1] = {sv_str(r->id)};
    int rc = 0;
    if (ended(r->status))
        goto lease; /* its worker died after the last step: taken only to be released */
    if (c->max_attempts && r->attempts >= c->max_attempts) {
        snprintf(r->status, sizeof r->status, "abandoned");
        aw_sv p[] = {sv_int(aw__store_now_ms()), sv_str(r->id)};
        rc = aw__store_exec(s,
                            "UPDATE aw_sessions SET status = 'failed', stop_reason = 'abandoned', owner = NULL,"
                            " lease_until = NULL, updated_at = ? WHERE id = ?",
                            p, 2, err);
        return rc ? rc : aw__store_exec(s, "DELETE FROM aw_queue WHERE session_id = ?", id, 1, err);
    }
    r->attempts++;
    rc = aw__store_exec(s, "UPDATE aw_queue SET attempts = attempts + 1 WHERE session_id = ?", id, 1, err);
lease:
    snprintf(sql, sizeof sql, "UPDATE aw_sessions SET owner = ?, lease_until = %s + ?, updated_at = ? WHERE id = ?",
             aw__store_now_sql(s));
    aw_sv p[] = {sv_str(c->owner), sv_int(c->lease_ms), sv_int(aw__store_now_ms()), sv_str(r->id)};
    return rc ? rc : aw__store_exec(s, sql, p, 4, err);
}

/* Both rows are locked: a row another claim has just leased is then read
 * again at its newest (PostgreSQL rechecks a locked row's conditions on
 * its latest version, and only the locked tables'), so its new lease
 * excludes it; a row being locked by another claim is passed over. */
static int claim_tx(aw_store *s, void *ctx, aw_error *err)
{
    claim_ctx *c = ctx;
    c->n = 0;
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT q.session_id, q.attempts, s.status FROM aw_queue q JOIN aw_sessions s ON s.id = q.session_id"
             " WHERE s.lease_until IS NULL OR s.lease_until < %s ORDER BY q.queued_at, q.session_id LIMIT ?%s",
             aw__store_now_sql(s), s->drv->dialect == DIALECT_POSTGRES ? " FOR UPDATE OF q, s SKIP LOCKED" : "");
    aw_sv p[1] = {sv_int((int64_t)c->max)};
    int rc = s->drv->query(s, sql, p, 1, claim_row, c, err);
    for (size_t i = 0; i < c->n && !rc; i++)
        rc = take(s, c, &c->rows[i], err);
    return rc;
}

static int claims_json(claim_ctx *c, const aw_allocator *a)
{
    aw_json_doc *d = aw_json_doc_new(a);
    aw_json_value *arr = d ? aw_json_new_array(d) : NULL;
    if (!arr) {
        aw_json_doc_free(d);
        return AW_ENOMEM;
    }
    for (size_t i = 0; i < c->n; i++) {
        aw_json_value *o = aw_json_new_object(d);
        const claimed *r = &c->rows[i];
        if (!o || aw_json_object_set_string(d, o, "id", r->id, strlen(r->id)) ||
            aw_json_object_set_int(d, o, "attempts", r->attempts) ||
            aw_json_object_set_string(d, o, "status", r->status, strlen(r->status)) || aw_json_array_push(d, arr, o)) {
            aw_json_doc_free(d);
            return AW_ENOMEM;
        }
    }
    aw_json_doc_set_root(d, arr);
    c->out = d;
    return 0;
}

int aw_store_claim(aw_store *s, const char *owner, int64_t lease_ms, size_t max, unsigned max_attempts,
                   aw_json_doc **out, aw_error *err)
{
    aw_error_clear(err);
    *out = NULL;
    if (!owner || !*owner || lease_ms <= 0)
        return aw_rt_error(err, AW_EINVAL, "a claim needs an owner and a lease");
    claim_ctx c = {.owner = owner, .lease_ms = lease_ms, .max = max > MAX_CLAIM ? MAX_CLAIM : max,
                   .max_attempts = max_attempts};
    if (!c.max)
        return claims_json(&c, s->alloc) ? aw_rt_error(err, AW_ENOMEM, "out of memory") : (*out = c.out, 0);
    int rc = aw__store_tx(s, true, claim_tx, &c, err);
    if (rc)
        return rc;
    if (claims_json(&c, s->alloc))
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    *out = c.out;
    return 0;
}

/* ---- leases ----------------------------------------------------------------------------- */

typedef struct renew_ctx {
    const char *owner;
    int64_t lease_ms;
    const char *const *ids;
    size_t n;
    bool *held;
} renew_ctx;

static int held_row(void *ctx, const aw_sv *cols, size_t n)
{
    (void)cols;
    (void)n;
    *(bool *)ctx = true;
    return 0;
}

static int renew_tx(aw_store *s, void *ctx, aw_error *err)
{
    renew_ctx *r = ctx;
    char sql[300];
    snprintf(sql, sizeof sql, "UPDATE aw_sessions SET lease_until = %s + ? WHERE id = ? AND owner = ? RETURNING id",
             aw__store_now_sql(s));
    int rc = 0;
    for (size_t i = 0; i < r->n && !rc; i++) {
        r->held[i] = false;
        aw_sv p[] = {sv_int(r->lease_ms), sv_str(r->ids[i]), sv_str(r->owner)};
        rc = s->drv->query(s, sql, p, 3, held_row, &r->held[i], err);
    }
    return rc;
}

int aw_store_lease_renew(aw_store *s, const char *owner, int64_t lease_ms, const char *const *ids, size_t n,
                         bool *held, aw_error *err)
{
    aw_error_clear(err);
    if (!n)
        return 0;
    renew_ctx r = {owner, lease_ms, ids, n, held};
    return aw__store_tx(s, true, renew_tx, &r, err);
}

typedef struct release_ctx {
    const char *id, *owner;
    bool done; /* out of the queue; else back in it, claimable at once */
} release_ctx;

static int release_tx(aw_store *s, void *ctx, aw_error *err)
{
    release_ctx *r = ctx;
    bool mine = false;
    aw_sv p[] = {sv_str(r->id), sv_str(r->owner)};
    int rc = s->drv->query(s, "UPDATE aw_sessions SET lease_until = NULL WHERE id = ? AND owner = ? RETURNING id", p, 2,
                           held_row, &mine, err);
    if (rc || !mine || !r->done)
        return rc; /* taken over: the queue row is the new worker's */
    aw_sv q[] = {sv_str(r->id)};
    return aw__store_exec(s, "DELETE FROM aw_queue WHERE session_id = ?", q, 1, err);
}

int aw_store_lease_release(aw_store *s, const char *id, const char *owner, aw_error *err)
{
    aw_error_clear(err);
    release_ctx r = {id, owner, true};
    return aw__store_tx(s, true, release_tx, &r, err);
}

int aw_store_lease_return(aw_store *s, const char *id, const char *owner, aw_error *err)
{
    aw_error_clear(err);
    release_ctx r = {id, owner, false};
    return aw__store_tx(s, true, release_tx, &r, err);
}
