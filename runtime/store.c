/* The store: a URL picks the backend (store_sqlite.c, store_pg.c), the
 * schema is brought up to date (store_schema.c), and every write is one
 * transaction here, tried again whole when a backend says a failure may
 * pass (a lock held by another process, a reset connection). Reading is
 * in store_read.c, the resume assembly in store_resume.c, the run's
 * observer in store_recorder.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "agentwire/event.h"
#include "internal/rt_util.h"
#include "internal/store_impl.h"

#define DEFAULT_BUSY_TIMEOUT_MS 30000

aw_sv sv_str(const char *s) { return s ? sv_text(s, strlen(s)) : sv_null(); }

int64_t sv_get_int(const aw_sv *v, int64_t dflt)
{
    if (v->type == SV_INT)
        return v->i;
    if (v->type == SV_DOUBLE) /* a REAL column may hold 1e300 or inf: held at the int64 ends */
        return v->d != v->d ? dflt : v->d >= 9223372036854775808.0 ? INT64_MAX
                                   : v->d < -9223372036854775808.0 ? INT64_MIN : (int64_t)v->d;
    if (v->type != SV_TEXT || !v->n || v->n > 30)
        return dflt;
    char tmp[32];
    memcpy(tmp, v->s, v->n);
    tmp[v->n] = 0;
    char *end;
    errno = 0;
    long long x = strtoll(tmp, &end, 10);
    return errno || *end ? dflt : (int64_t)x;
}

double sv_get_double(const aw_sv *v, double dflt)
{
    if (v->type == SV_DOUBLE)
        return v->d;
    if (v->type == SV_INT)
        return (double)v->i;
    if (v->type != SV_TEXT || !v->n || v->n > 60)
        return dflt;
    char tmp[64];
    memcpy(tmp, v->s, v->n);
    tmp[v->n] = 0;
    char *end;
    double d = strtod(tmp, &end);
    return *end ? dflt : d;
}

int64_t aw__store_now_ms(void) { return aw_rt_wall_ms(); }

int aw__store_exec(aw_store *s, const char *sql, const aw_sv *params, size_t n, aw_error *err)
{
    return s->drv->query(s, sql, params, n, NULL, NULL, err);
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int aw__store_tx(aw_store *s, bool write, int (*fn)(aw_store *s, void *ctx, aw_error *err), void *ctx,
                 aw_error *err)
{
    int64_t deadline = aw_rt_wall_ms() + s->busy_timeout_ms;
    for (unsigned attempt = 0;; attempt++) {
        int rc = s->drv->begin(s, write, err);
        if (!rc) {
            s->in_tx = true;
            rc = fn(s, ctx, err);
            if (!rc)
                rc = s->drv->commit(s, err);
        }
        bool retry = rc && s->retryable;
        if (rc)
            s->drv->rollback(s);
        s->in_tx = false;
        if (!rc)
            return 0;
        if (!retry || aw_rt_wall_ms() >= deadline || attempt >= 200)
            return rc;
        /* back off: 1, 2, 4 ... 64 ms, with jitter so two writers part */
        unsigned char j = 0;
        if (getrandom(&j, 1, 0) != 1)
            j = (unsigned char)attempt;
        int64_t wait = (int64_t)1 << (attempt < 6 ? attempt : 6);
        sleep_ms(wait + j % (wait + 1));
    }
}

/* ---- opening ------------------------------------------------------------------ */

static const aw_store_driver *driver_for(const char *url, const char **target)
{
    if (!strncmp(url, "sqlite://", 9)) {
        *target = url + 9; /* sqlite:///abs/path */
        return &aw_store_sqlite_driver;
    }
    if (!strncmp(url, "sqlite:", 7)) {
        *target = url + 7;
        return &aw_store_sqlite_driver;
    }
    if (!strncmp(url, "postgres://", 11) || !strncmp(url, "postgresql://", 13)) {
        *target = url;
        return &aw_store_pg_driver;
    }
    if (!strncmp(url, "postgres:", 9)) {
        *target = url + 9; /* postgres:host=/run/pg dbname=x */
        return &aw_store_pg_driver;
    }
    if (!strchr(url, ':')) {
        *target = url; /* a bare path */
        return &aw_store_sqlite_driver;
    }
    return NULL;
}

/* The URL with its password (user:PASSWORD@ or password=...) starred. */
static char *redact(const aw_allocator *a, const char *url)
{
    aw_buf b;
    aw_buf_init(&b, a);
    const char *at = strchr(url, '@');
    const char *scheme_end = strstr(url, "://");
    const char *kw = strstr(url, "password=");
    int rc = 0;
    if (scheme_end && at && at > scheme_end) {
        const char *colon = memchr(scheme_end + 3, ':', (size_t)(at - scheme_end - 3));
        if (colon)
            rc = aw_buf_append(&b, url, (size_t)(colon - url + 1)) || aw_buf_append_str(&b, "***") ||
                 aw_buf_append_str(&b, at);
        else
            rc = aw_buf_append_str(&b, url);
    } else if (kw) {
        const char *end = kw + 9;
        while (*end && *end != ' ' && *end != '&')
            end++;
        rc = aw_buf_append(&b, url, (size_t)(kw - url + 9)) || aw_buf_append_str(&b, "***") ||
             aw_buf_append_str(&b, end);
    } else {
        rc = aw_buf_append_str(&b, url);
    }
    if (rc) {
        aw_buf_free(&b);
        return NULL;
    }
    char *out = aw_buf_detach(&b, NULL);
    return out ? out : aw_rt_strdup(a, "");
}

aw_store *aw_store_open(const char *url, const aw_store_options *opts, aw_error *err)
{
    aw_error_clear(err);
    if (!url || !*url) {
        aw_rt_error(err, AW_EINVAL, "no store given");
        return NULL;
    }
    const char *target = NULL;
    const aw_store_driver *drv = driver_for(url, &target);
    if (!drv) {
        aw_rt_error(err, AW_EINVAL, "unknown store '%s': use sqlite:PATH or postgres://...", url);
        return NULL;
    }
    const aw_allocator *a = opts && opts->alloc ? opts->alloc : aw_allocator_default();
    aw_store *s = aw_malloc(a, sizeof *s);
    if (!s) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->alloc = a;
    s->drv = drv;
    s->busy_timeout_ms = opts && opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms : DEFAULT_BUSY_TIMEOUT_MS;
    s->read_only = opts && opts->read_only;
    if (!(s->url = redact(a, url))) {
        aw_free(a, s);
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    if (drv->open(s, target, err)) {
        aw_free(a, s->url);
        aw_free(a, s);
        return NULL;
    }
    if (aw__store_schema_ensure(s, err)) {
        aw_store_close(s);
        return NULL;
    }
    return s;
}

void aw_store_close(aw_store *s)
{
    if (!s)
        return;
    s->drv->close(s);
    aw_free(s->alloc, s->url);
    aw_free(s->alloc, s);
}

const char *aw_store_url(const aw_store *s) { return s->url; }
const char *aw_store_backend(const aw_store *s) { return s->drv->scheme; }

int aw_store_default_url(aw_buf *out, aw_error *err)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    int rc;
    if (xdg && xdg[0] == '/')
        rc = aw_buf_printf(out, "sqlite:%s/agentwire/sessions.db", xdg);
    else if (home && *home)
        rc = aw_buf_printf(out, "sqlite:%s/.local/share/agentwire/sessions.db", home);
    else
        return aw_rt_error(err, AW_EINVAL, "neither XDG_DATA_HOME nor HOME is set: give --store");
    return rc ? aw_rt_error(err, AW_ENOMEM, "out of memory") : 0;
}

/* ---- sessions ------------------------------------------------------------------- */

static int found_row(void *ctx, const aw_sv *cols, size_t n)
{
    (void)cols;
    (void)n;
    *(bool *)ctx = true;
    return 0;
}

/* The session's row exists; on PostgreSQL it is locked until the end of
 * the transaction, so two writers of one session take turns. */
static int lock_session(aw_store *s, const char *id, bool *exists, aw_error *err)
{
    *exists = false;
    aw_sv p[1] = {sv_str(id)};
    const char *sql = s->drv->dialect == DIALECT_POSTGRES ? "SELECT 1 FROM aw_sessions WHERE id = ? FOR UPDATE"
                                                          : "SELECT 1 FROM aw_sessions WHERE id = ?";
    return s->drv->query(s, sql, p, 1, found_row, exists, err);
}

typedef struct begin_ctx {
    const aw_session_start *st;
    const char *config; /* JSON text, or NULL */
} begin_ctx;

static int begin_tx(aw_store *s, void *ctx, aw_error *err)
{
    begin_ctx *b = ctx;
    const aw_session_start *st = b->st;
    bool exists;
    int rc = lock_session(s, st->id, &exists, err);
    if (rc)
        return rc;
    int64_t now = aw__store_now_ms();
    if (st->continuing) {
        if (!exists)
            return aw_rt_error(err, AW_STORE_ENOTFOUND, "no session %s in %s", st->id, s->url);
        aw_sv p[] = {sv_str(st->task), sv_str(st->owner), sv_int(now), sv_str(b->config), sv_str(st->nonce),
                     sv_str(st->id)};
        rc = aw__store_exec(s,
                            "UPDATE aw_sessions SET status = 'running', stop_reason = NULL, final_status = NULL,"
                            " final_report = NULL, task = COALESCE(?, task), owner = ?, updated_at = ?,"
                            " config = COALESCE(?, config), nonce = COALESCE(?, nonce) WHERE id = ?",
                            p, sizeof p / sizeof *p, err);
        aw_sv q[] = {sv_str(st->id)};
        if (!rc)
            rc = aw__store_exec(s, "UPDATE aw_steps SET state = 'superseded' WHERE session_id = ? AND state = 'partial'",
                                q, 1, err);
        return rc;
    }
    if (exists)
        return aw_rt_error(err, AW_STORE_ESTATE, "a session %s exists already in %s", st->id, s->url);
    aw_sv p[] = {sv_str(st->id),
                 sv_str(st->parent_id),
                 sv_str(st->kind ? st->kind : "run"),
                 sv_str(st->agent_name),
                 sv_str(st->agent_hash),
                 sv_int(now),
                 sv_int(now),
                 sv_str(st->nonce),
                 sv_str(st->task),
                 sv_str(st->owner),
                 sv_str(b->config ? b->config : "{}")};
    return aw__store_exec(s,
                          "INSERT INTO aw_sessions (id, parent_id, kind, agent, agent_hash, status, created_at,"
                          " updated_at, nonce, task, owner, config) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
                          p, sizeof p / sizeof *p, err);
}

int aw_store_session_begin(aw_store *s, const aw_session_start *st, aw_error *err)
{
    aw_error_clear(err);
    if (!st || !st->id || !*st->id)
        return aw_rt_error(err, AW_EINVAL, "a session needs an id");
    aw_buf config;
    aw_buf_init(&config, s->alloc);
    if (st->config && aw_json_write(st->config, NULL, &config, NULL)) {
        aw_buf_free(&config);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    begin_ctx b = {st, st->config ? config.data : NULL};
    int rc = aw__store_tx(s, true, begin_tx, &b, err);
    aw_buf_free(&config);
    return rc;
}

typedef struct end_ctx {
    const char *id, *status, *stop_reason;
} end_ctx;

static int end_tx(aw_store *s, void *ctx, aw_error *err)
{
    end_ctx *e = ctx;
    bool exists;
    int rc = lock_session(s, e->id, &exists, err);
    if (rc)
        return rc;
    if (!exists)
        return aw_rt_error(err, AW_STORE_ENOTFOUND, "no session %s in %s", e->id, s->url);
    aw_sv p[] = {sv_str(e->status), sv_str(e->stop_reason), sv_int(aw__store_now_ms()), sv_str(e->id)};
    return aw__store_exec(s, "UPDATE aw_sessions SET status = ?, stop_reason = ?, updated_at = ? WHERE id = ?", p, 4,
                          err);
}

int aw_store_session_end(aw_store *s, const char *session_id, const char *status, const char *stop_reason,
                         aw_error *err)
{
    aw_error_clear(err);
    end_ctx e = {session_id, status, stop_reason};
    return aw__store_tx(s, true, end_tx, &e, err);
}

/* ---- one step ------------------------------------------------------------------ */

/* A JSON text in a step's buffer. */
typedef struct row_text {
    size_t off, len;
    const char *tag; /* the event's type, the accounting row's kind */
} row_text;

typedef struct step_ctx {
    const char *id;
    const aw_run_step *step;
    aw_buf text;        /* every JSON text of the step, one after another */
    row_text *events, *rows;
    size_t nevents, nrows;
    row_text resume, snapshot;
    bool has_snapshot;
    const char *stop_reason;
    const char *owner; /* write only while the session is this owner's (workers) */
    /* from the resume object and the completion event */
    double seconds;
    aw_model_usage usage;
    const char *nonce;
    const aw_json_value *completion;
} step_ctx;

static int add_text(step_ctx *c, const aw_json_value *v, row_text *out)
{
    out->off = c->text.len;
    int rc = aw_json_write(v, NULL, &c->text, NULL);
    out->len = c->text.len - out->off;
    return rc;
}

static const char *str_or(const aw_json_value *v, const char *dflt)
{
    return aw_json_is_string(v) ? v->u.str.ptr : dflt;
}

static int64_t num_or(const aw_json_value *v, int64_t dflt)
{
    return aw_rt_json_int(v, dflt, INT64_MIN, INT64_MAX);
}

static int prepare_step(step_ctx *c, const aw_allocator *a, const aw_json_value *snapshot)
{
    const aw_run_step *st = c->step;
    c->nevents = aw_json_count(st->events);
    c->nrows = aw_json_count(st->accounting);
    c->events = aw_malloc(a, (c->nevents + 1) * sizeof *c->events);
    c->rows = aw_malloc(a, (c->nrows + 1) * sizeof *c->rows);
    if (!c->events || !c->rows)
        return AW_ENOMEM;
    for (size_t i = 0; i < c->nevents; i++) {
        const aw_json_value *ev = aw_json_at(st->events, i);
        c->events[i].tag = str_or(aw_json_get(ev, "type"), "");
        if (add_text(c, ev, &c->events[i]))
            return AW_ENOMEM;
        if (!strcmp(c->events[i].tag, "completion"))
            c->completion = ev;
    }
    for (size_t i = 0; i < c->nrows; i++) {
        const aw_json_value *row = aw_json_at(st->accounting, i);
        c->rows[i].tag = str_or(aw_json_get(row, "kind"), "");
        if (add_text(c, row, &c->rows[i]))
            return AW_ENOMEM;
    }
    if (add_text(c, st->resume ? st->resume : &(aw_json_value){.type = AW_JSON_NULL}, &c->resume))
        return AW_ENOMEM;
    if (snapshot) {
        c->has_snapshot = true;
        if (add_text(c, snapshot, &c->snapshot))
            return AW_ENOMEM;
    }
    const aw_json_value *u = aw_json_get(st->resume, "usage");
    c->usage.input_tokens = num_or(aw_json_get(u, "input_tokens"), 0);
    c->usage.output_tokens = num_or(aw_json_get(u, "output_tokens"), 0);
    c->usage.cache_read_tokens = num_or(aw_json_get(u, "cache_read_tokens"), 0);
    c->usage.cache_write_tokens = num_or(aw_json_get(u, "cache_write_tokens"), 0);
    c->usage.reasoning_tokens = num_or(aw_json_get(u, "reasoning_tokens"), 0);
    const aw_json_value *cost = aw_json_get(u, "cost_usd");
    c->usage.cost_usd = aw_json_is_number(cost) ? cost->u.num.d : -1;
    const aw_json_value *secs = aw_json_get(st->resume, "seconds");
    c->seconds = aw_json_is_number(secs) ? secs->u.num.d : 0;
    c->nonce = str_or(aw_json_get(st->resume, "nonce"), NULL);
    return 0;
}

typedef struct counters {
    int64_t steps, events, accounting;
    bool found;
    char owner[128];
} counters;

static int counters_row(void *ctx, const aw_sv *cols, size_t n)
{
    counters *k = ctx;
    if (n < 3)
        return AW_STORE_ECORRUPT;
    k->found = true;
    k->steps = sv_get_int(&cols[0], -1);
    k->events = sv_get_int(&cols[1], -1);
    k->accounting = sv_get_int(&cols[2], -1);
    if (n > 3 && cols[3].type == SV_TEXT)
        snprintf(k->owner, sizeof k->owner, "%.*s", (int)cols[3].n, cols[3].s);
    return k->steps < 0 || k->events < 0 || k->accounting < 0 ? AW_STORE_ECORRUPT : 0;
}

/* Rows of one table in a few multi-row INSERTs, so a step costs a few
 * round trips, not one per row. SQLite: batches of 64, 16, 4 and 1 (four
 * statements, each prepared once and cached). PostgreSQL: all of a step's
 * rows in one statement (up to 64), since each statement is a round trip
 * and is parsed anyway. */
static int insert_rows(aw_store *s, const char *table, const char *id, int64_t first_seq, int64_t step_seq,
                       const char *text, const row_text *rows, size_t n, aw_error *err)
{
    size_t sizes[] = {64, 16, 4, 1};
    if (s->drv->dialect == DIALECT_POSTGRES) {
        sizes[1] = n % 64; /* the rest after the full batches, in one */
        sizes[2] = sizes[3] = 0;
    }
    aw_sv params[64 * 5];
    aw_buf sql;
    aw_buf_init(&sql, s->alloc);
    size_t done = 0;
    int rc = 0;
    for (size_t k = 0; k < 4 && !rc; k++) {
        size_t size = sizes[k];
        if (!size)
            continue;
        if (n - done < size)
            continue;
        aw_buf_clear(&sql);
        rc = aw_buf_printf(&sql, "INSERT INTO %s (session_id, seq, step, %s, body) VALUES ", table,
                           !strcmp(table, "aw_events") ? "type" : "kind");
        for (size_t i = 0; i < size && !rc; i++)
            rc = aw_buf_append_str(&sql, i ? ", (?, ?, ?, ?, ?)" : "(?, ?, ?, ?, ?)");
        if (rc) {
            rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
            break;
        }
        while (!rc && n - done >= size) {
            for (size_t i = 0; i < size; i++) {
                const row_text *r = &rows[done + i];
                params[i * 5] = sv_str(id);
                params[i * 5 + 1] = sv_int(first_seq + (int64_t)(done + i));
                params[i * 5 + 2] = sv_int(step_seq);
                params[i * 5 + 3] = sv_str(r->tag);
                params[i * 5 + 4] = sv_text(text + r->off, r->len);
            }
            rc = aw__store_exec(s, sql.data, params, size * 5, err);
            done += size;
        }
    }
    aw_buf_free(&sql);
    return rc;
}

/* The session's status once its last step is in. */
static const char *end_status(const step_ctx *c)
{
    if (!c->step->final)
        return "running";
    if (c->step->partial)
        return c->stop_reason && !strcmp(c->stop_reason, "user_requested") ? "interrupted" : "failed";
    const char *st = str_or(aw_json_get(c->completion, "status"), "failure");
    return !strcmp(st, "success") ? "completed" : "failed";
}

static int step_tx(aw_store *s, void *ctx, aw_error *err)
{
    step_ctx *c = ctx;
    const aw_run_step *st = c->step;
    counters k = {0};
    aw_sv key[1] = {sv_str(c->id)};
    const char *sel = s->drv->dialect == DIALECT_POSTGRES
                          ? "SELECT steps, events, accounting, owner FROM aw_sessions WHERE id = ? FOR UPDATE"
                          : "SELECT steps, events, accounting, owner FROM aw_sessions WHERE id = ?";
    int rc = s->drv->query(s, sel, key, 1, counters_row, &k, err);
    if (rc == AW_STORE_ECORRUPT)
        return aw_rt_error(err, rc, "the session %s's counters are malformed", c->id);
    if (rc)
        return rc;
    if (!k.found)
        return aw_rt_error(err, AW_STORE_ENOTFOUND, "no session %s in %s", c->id, s->url);
    if (c->owner && strcmp(k.owner, c->owner) != 0)
        return aw_rt_error(err, AW_STORE_ESTATE,
                           "session %s was taken over by %s (this worker's lease ran out): its step is not written",
                           c->id, k.owner[0] ? k.owner : "nobody");
    int64_t seq = k.steps + 1, now = aw__store_now_ms();
    aw_sv sp[] = {sv_str(c->id),
                  sv_int(seq),
                  sv_int(st->turn),
                  sv_str(st->partial ? "partial" : "whole"),
                  sv_int(st->final ? 1 : 0),
                  sv_int(now),
                  sv_text(c->text.data + c->resume.off, c->resume.len)};
    rc = aw__store_exec(s,
                        "INSERT INTO aw_steps (session_id, seq, turn, state, final, created_at, resume)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)",
                        sp, sizeof sp / sizeof *sp, err);
    if (!rc)
        rc = insert_rows(s, "aw_events", c->id, k.events + 1, seq, c->text.data, c->events, c->nevents, err);
    if (!rc)
        rc = insert_rows(s, "aw_accounting", c->id, k.accounting + 1, seq, c->text.data, c->rows, c->nrows, err);
    if (!rc && c->has_snapshot) {
        aw_sv np[] = {sv_str(c->id), sv_int(seq), sv_text(c->text.data + c->snapshot.off, c->snapshot.len)};
        rc = aw__store_exec(s,
                            "INSERT INTO aw_snapshots (session_id, step, body) VALUES (?, ?, ?)"
                            " ON CONFLICT (session_id) DO UPDATE SET step = excluded.step, body = excluded.body",
                            np, 3, err);
    }
    if (rc)
        return rc;
    const aw_json_value *report = aw_json_get(c->completion, "result");
    const aw_json_value *report_status = aw_json_get(c->completion, "status");
    aw_sv up[] = {sv_int(now),
                  sv_double(c->seconds),
                  sv_int(st->turn),
                  sv_int(seq),
                  sv_int(k.events + (int64_t)c->nevents),
                  sv_int(k.accounting + (int64_t)c->nrows),
                  sv_int(c->usage.input_tokens),
                  sv_int(c->usage.output_tokens),
                  sv_int(c->usage.cache_read_tokens),
                  sv_int(c->usage.cache_write_tokens),
                  sv_int(c->usage.reasoning_tokens),
                  c->usage.cost_usd >= 0 ? sv_double(c->usage.cost_usd) : sv_null(),
                  sv_str(c->nonce),
                  sv_str(end_status(c)),
                  st->final ? sv_str(c->stop_reason) : sv_null(),
                  aw_json_is_string(report_status) ? sv_text(report_status->u.str.ptr, report_status->u.str.len)
                                                   : sv_null(),
                  aw_json_is_string(report) ? sv_text(report->u.str.ptr, report->u.str.len) : sv_null(),
                  sv_str(c->id)};
    return aw__store_exec(s,
                          "UPDATE aw_sessions SET updated_at = ?, seconds = ?, turns = ?, steps = ?, events = ?,"
                          " accounting = ?, input_tokens = ?, output_tokens = ?, cache_read_tokens = ?,"
                          " cache_write_tokens = ?, reasoning_tokens = ?, cost_usd = ?, nonce = COALESCE(?, nonce),"
                          " status = ?, stop_reason = ?, final_status = COALESCE(?, final_status),"
                          " final_report = COALESCE(?, final_report) WHERE id = ?",
                          up, sizeof up / sizeof *up, err);
}

int aw_store_append_step(aw_store *s, const char *session_id, const aw_run_step *step,
                         const aw_json_value *snapshot, const char *stop_reason, aw_error *err)
{
    return aw__store_append_step_fenced(s, session_id, step, snapshot, stop_reason, NULL, err);
}

int aw__store_append_step_fenced(aw_store *s, const char *session_id, const aw_run_step *step,
                                 const aw_json_value *snapshot, const char *stop_reason, const char *owner,
                                 aw_error *err)
{
    aw_error_clear(err);
    if (!session_id || !step)
        return aw_rt_error(err, AW_EINVAL, "a step needs its session and its rows");
    step_ctx c;
    memset(&c, 0, sizeof c);
    c.id = session_id;
    c.step = step;
    c.stop_reason = stop_reason;
    c.owner = owner;
    aw_buf_init(&c.text, s->alloc);
    /* Every text is made before the transaction: nothing is allocated
     * while the database waits, and a retry writes the same bytes. */
    int rc = prepare_step(&c, s->alloc, snapshot);
    if (rc)
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    else
        rc = aw__store_tx(s, true, step_tx, &c, err);
    aw_free(s->alloc, c.events);
    aw_free(s->alloc, c.rows);
    aw_buf_free(&c.text);
    return rc;
}

/* ---- removing ------------------------------------------------------------------ */

static const char *const session_tables[] = {"aw_events", "aw_accounting", "aw_steps", "aw_snapshots",
                                             "aw_exchanges", "aw_queue"};

static int delete_tx(aw_store *s, void *ctx, aw_error *err)
{
    const char *id = ctx;
    bool exists;
    int rc = lock_session(s, id, &exists, err);
    if (rc)
        return rc;
    if (!exists)
        return aw_rt_error(err, AW_STORE_ENOTFOUND, "no session %s in %s", id, s->url);
    aw_sv p[1] = {sv_str(id)};
    char sql[96];
    for (size_t i = 0; i < sizeof session_tables / sizeof *session_tables && !rc; i++) {
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE session_id = ?", session_tables[i]);
        rc = aw__store_exec(s, sql, p, 1, err);
    }
    return rc ? rc : aw__store_exec(s, "DELETE FROM aw_sessions WHERE id = ?", p, 1, err);
}

int aw_store_session_delete(aw_store *s, const char *id, aw_error *err)
{
    aw_error_clear(err);
    return aw__store_tx(s, true, delete_tx, (void *)id, err);
}

typedef struct gc_ctx {
    int64_t cutoff;
    size_t removed;
} gc_ctx;

static int count_row(void *ctx, const aw_sv *cols, size_t n)
{
    *(int64_t *)ctx = n ? sv_get_int(&cols[0], 0) : 0;
    return 0;
}

static int gc_tx(aw_store *s, void *ctx, aw_error *err)
{
    gc_ctx *g = ctx;
    aw_sv p[1] = {sv_int(g->cutoff)};
    int64_t n = 0;
    int rc = s->drv->query(s, "SELECT count(*) FROM aw_sessions WHERE updated_at < ?", p, 1, count_row, &n, err);
    char sql[160];
    for (size_t i = 0; i < sizeof session_tables / sizeof *session_tables && !rc && n; i++) {
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE session_id IN (SELECT id FROM aw_sessions WHERE updated_at < ?)",
                 session_tables[i]);
        rc = aw__store_exec(s, sql, p, 1, err);
    }
    if (!rc && n)
        rc = aw__store_exec(s, "DELETE FROM aw_sessions WHERE updated_at < ?", p, 1, err);
    g->removed = rc ? 0 : (size_t)n;
    return rc;
}

int aw_store_gc(aw_store *s, int64_t cutoff_ms, size_t *removed, aw_error *err)
{
    aw_error_clear(err);
    gc_ctx g = {cutoff_ms, 0};
    int rc = aw__store_tx(s, true, gc_tx, &g, err);
    if (removed)
        *removed = rc ? 0 : g.removed;
    return rc;
}

/* ---- conversations -------------------------------------------------------------- */

typedef struct exchange_ctx {
    const char *id, *message;
    aw_buf reply;
} exchange_ctx;

static int exchange_tx(aw_store *s, void *ctx, aw_error *err)
{
    exchange_ctx *x = ctx;
    bool exists;
    int rc = lock_session(s, x->id, &exists, err);
    if (rc)
        return rc;
    if (!exists)
        return aw_rt_error(err, AW_STORE_ENOTFOUND, "no session %s in %s", x->id, s->url);
    aw_sv p[1] = {sv_str(x->id)};
    int64_t n = 0;
    rc = s->drv->query(s, "SELECT count(*) FROM aw_exchanges WHERE session_id = ?", p, 1, count_row, &n, err);
    int64_t now = aw__store_now_ms();
    aw_sv ins[] = {sv_str(x->id), sv_int(n + 1), sv_int(now), sv_str(x->message), sv_text(x->reply.data, x->reply.len)};
    if (!rc)
        rc = aw__store_exec(s, "INSERT INTO aw_exchanges (session_id, n, at, message, reply) VALUES (?, ?, ?, ?, ?)", ins,
                            5, err);
    aw_sv up[] = {sv_int(now), sv_str(x->id)};
    if (!rc)
        rc = aw__store_exec(s, "UPDATE aw_sessions SET updated_at = ? WHERE id = ?", up, 2, err);
    return rc;
}

int aw_store_exchange_add(aw_store *s, const char *id, const char *message, const aw_json_value *reply,
                          aw_error *err)
{
    aw_error_clear(err);
    if (!id || !message || !aw_json_is_object(reply))
        return aw_rt_error(err, AW_EINVAL, "an exchange needs its session, message and typed reply");
    exchange_ctx x = {id, message, {0}};
    aw_buf_init(&x.reply, s->alloc);
    int rc = aw_json_write(reply, NULL, &x.reply, NULL) ? aw_rt_error(err, AW_ENOMEM, "out of memory")
                                                        : aw__store_tx(s, true, exchange_tx, &x, err);
    aw_buf_free(&x.reply);
    return rc;
}
