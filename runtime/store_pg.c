/* postgres://... — the shared store, through libpq: several machines'
 * runs in one database.
 *
 * Statements are the shared ?-parameter SQL with each ? rewritten to $N;
 * every parameter goes as text. Writers do not wait on a file lock as
 * SQLite's do: a step's transaction locks its session's row (SELECT ...
 * FOR UPDATE, store.c), and migrations take an advisory lock. A
 * serialization failure, a deadlock or a connection that was reset makes
 * the transaction retryable (store.c tries it again).
 *
 * PostgreSQL's text cannot hold NUL bytes or invalid UTF-8, which a task
 * or a model's report may: such bytes are stored as U+FFFD. JSON columns
 * never have them (the JSON writer escapes and replaces them already).
 * libpq's notices go nowhere: the library never prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "internal/rt_util.h"
#include "internal/store_impl.h"

#define MAX_PARAMS 4096

typedef struct pg_store {
    PGconn *conn;
    aw_buf sql;      /* the statement with $N */
    aw_buf scratch;  /* parameters as text */
} pg_store;

static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* libpq's message without its trailing newline and "ERROR:  " prefix. */
static const char *clean_message(const char *m, char *buf, size_t cap)
{
    if (!m || !*m)
        return "no message";
    if (!strncmp(m, "ERROR:  ", 8))
        m += 8;
    snprintf(buf, cap, "%s", m);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = 0;
    for (char *p = buf; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return buf;
}

static int pg_fail(aw_store *s, PGresult *res, const char *what, aw_error *err)
{
    pg_store *q = s->impl;
    char msg[200];
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *text = clean_message(res ? PQresultErrorMessage(res) : PQerrorMessage(q->conn), msg, sizeof msg);
    s->retryable = false;
    if (PQstatus(q->conn) == CONNECTION_BAD) {
        /* Gone (a restart, a network blip): connect again and let the
         * caller try the whole transaction once more. */
        PQreset(q->conn);
        s->retryable = PQstatus(q->conn) == CONNECTION_OK;
        return aw_rt_error(err, AW_STORE_EIO, "postgres: the connection to %s was lost: %s", s->url, text);
    }
    if (state && (!strcmp(state, "40001") || !strcmp(state, "40P01") || !strcmp(state, "55P03")))
        s->retryable = true;
    if (state && !strcmp(state, "53100"))
        return aw_rt_error(err, AW_STORE_EIO, "the store's disk is full: %s (%s)", s->url, text);
    if (state && !strcmp(state, "25006"))
        return aw_rt_error(err, AW_STORE_EIO, "the store is read-only: %s (%s)", s->url, text);
    if (state && !strcmp(state, "53200"))
        return aw_rt_error(err, AW_ENOMEM, "postgres: out of memory: %s", text);
    return aw_rt_error(err, AW_STORE_EIO, "postgres %s: %s", what, text);
}

static void pg_close(aw_store *s)
{
    pg_store *q = s->impl;
    if (!q)
        return;
    if (q->conn)
        PQfinish(q->conn);
    aw_buf_free(&q->sql);
    aw_buf_free(&q->scratch);
    aw_free(s->alloc, q);
    s->impl = NULL;
}

static int pg_open(aw_store *s, const char *target, aw_error *err)
{
    pg_store *q = aw_malloc(s->alloc, sizeof *q);
    if (!q)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(q, 0, sizeof *q);
    aw_buf_init(&q->sql, s->alloc);
    aw_buf_init(&q->scratch, s->alloc);
    s->impl = q;
    q->conn = PQconnectdb(target);
    if (!q->conn) {
        pg_close(s);
        return aw_rt_error(err, AW_ENOMEM, "out of memory (libpq)");
    }
    PQsetNoticeProcessor(q->conn, quiet_notice, NULL);
    if (PQstatus(q->conn) != CONNECTION_OK) {
        char msg[200];
        aw_rt_error(err, AW_STORE_EIO, "postgres: cannot connect to %s: %s", s->url,
                    clean_message(PQerrorMessage(q->conn), msg, sizeof msg));
        pg_close(s);
        return AW_STORE_EIO;
    }
    PGresult *r = PQexec(q->conn, s->read_only ? "SET default_transaction_read_only = on" : "SET application_name = 'agentwire'");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    int rc = ok ? 0 : pg_fail(s, r, "set-up", err);
    PQclear(r);
    if (rc)
        pg_close(s);
    return rc;
}

/* Length of a valid UTF-8 sequence at p (n bytes left), 0 when invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (!len || len > n || c > 0xF4)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if (c == 0xE0 && p[1] < 0xA0)
        return 0;
    if (c == 0xED && p[1] >= 0xA0) /* surrogates */
        return 0;
    if (c == 0xF0 && p[1] < 0x90)
        return 0;
    if (c == 0xF4 && p[1] >= 0x90)
        return 0;
    return len;
}

/* Text as PostgreSQL takes it: NUL and invalid UTF-8 -> U+FFFD. */
static int append_pg_text(aw_buf *out, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        size_t k;
        while (i < n && s[i] && (k = utf8_len((const unsigned char *)s + i, n - i)) > 0)
            i += k;
        if (aw_buf_append(out, s + start, i - start))
            return AW_ENOMEM;
        if (i < n) {
            if (aw_buf_append(out, "\xEF\xBF\xBD", 3))
                return AW_ENOMEM;
            i++;
        }
    }
    return aw_buf_putc(out, 0) ? AW_ENOMEM : 0;
}

static int pg_query(aw_store *s, const char *sql, const aw_sv *params, size_t n, aw_store_row_fn fn, void *ctx,
                    aw_error *err)
{
    pg_store *q = s->impl;
    s->retryable = false;
    if (n > MAX_PARAMS)
        return aw_rt_error(err, AW_ELIMIT, "postgres: %zu parameters in one statement", n);
    /* ? -> $N (the shared SQL has no ? inside literals) */
    aw_buf_clear(&q->sql);
    unsigned k = 0;
    for (const char *p = sql; *p; p++) {
        int rc = *p == '?' ? aw_buf_printf(&q->sql, "$%u", ++k) : aw_buf_putc(&q->sql, *p);
        if (rc)
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    /* parameters as text, one after another in scratch; offsets first
     * (the buffer moves while it grows) */
    size_t offsets[64];
    size_t *off = n <= 64 ? offsets : aw_malloc(s->alloc, n * sizeof *off);
    const char **values = aw_malloc(s->alloc, (n ? n : 1) * sizeof *values);
    if (!off || !values) {
        if (off != offsets)
            aw_free(s->alloc, off);
        aw_free(s->alloc, values);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    aw_buf_clear(&q->scratch);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        off[i] = q->scratch.len;
        switch (params[i].type) {
        case SV_NULL:
            off[i] = (size_t)-1;
            break;
        case SV_INT:
            rc = aw_buf_printf(&q->scratch, "%lld", (long long)params[i].i) || aw_buf_putc(&q->scratch, 0);
            break;
        case SV_DOUBLE:
            rc = aw_buf_printf(&q->scratch, "%.17g", params[i].d) || aw_buf_putc(&q->scratch, 0);
            break;
        case SV_TEXT:
            rc = append_pg_text(&q->scratch, params[i].s ? params[i].s : "", params[i].n);
            break;
        }
    }
    PGresult *res = NULL;
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            values[i] = off[i] == (size_t)-1 ? NULL : q->scratch.data + off[i];
        res = PQexecParams(q->conn, q->sql.data, (int)n, NULL, values, NULL, NULL, 0);
    }
    if (off != offsets)
        aw_free(s->alloc, off);
    aw_free(s->alloc, values);
    if (rc)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (!res)
        return pg_fail(s, NULL, "query", err);
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        rc = pg_fail(s, res, "query", err);
        PQclear(res);
        return rc;
    }
    int rows = PQntuples(res), nc = PQnfields(res);
    if (nc > 40)
        nc = 40;
    aw_sv cols[40];
    for (int r = 0; fn && r < rows && !rc; r++) {
        for (int c = 0; c < nc; c++)
            cols[c] = PQgetisnull(res, r, c) ? sv_null()
                                             : sv_text(PQgetvalue(res, r, c), (size_t)PQgetlength(res, r, c));
        rc = fn(ctx, cols, (size_t)nc);
    }
    PQclear(res);
    return rc;
}

static int pg_simple(aw_store *s, const char *sql, aw_error *err)
{
    pg_store *q = s->impl;
    s->retryable = false;
    PGresult *r = PQexec(q->conn, sql);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : pg_fail(s, r, sql, err);
    PQclear(r);
    return rc;
}

/* A reading transaction sees one snapshot across its statements (a
 * session's steps and its events agree). */
static int pg_begin(aw_store *s, bool write, aw_error *err)
{
    return pg_simple(s, write ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err);
}

static int pg_commit(aw_store *s, aw_error *err) { return pg_simple(s, "COMMIT", err); }

static void pg_rollback(aw_store *s)
{
    pg_store *q = s->impl;
    if (PQtransactionStatus(q->conn) != PQTRANS_IDLE) {
        PGresult *r = PQexec(q->conn, "ROLLBACK");
        PQclear(r);
    }
}

const aw_store_driver aw_store_pg_driver = {
    .scheme = "postgres",
    .dialect = DIALECT_POSTGRES,
    .open = pg_open,
    .close = pg_close,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .query = pg_query,
};
