/* sqlite:PATH — the embedded store, through the system SQLite.
 *
 * WAL mode: readers never wait for the writer, and a process killed at
 * any point leaves the last committed transaction whole (the WAL is
 * replayed on the next open). synchronous=NORMAL: a commit is durable
 * against a process crash at once, against a power cut from the next
 * checkpoint; the database is never corrupt either way.
 *
 * Writers: a write transaction starts with BEGIN IMMEDIATE, which takes
 * the write lock at once. Waiting for it is the only place another
 * process can make us wait, and the busy handler waits there (up to the
 * busy timeout), so SQLITE_BUSY never comes half-way through a step. What
 * still comes back busy (a WAL being recovered by another process) is
 * marked retryable and the whole transaction is tried again. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "internal/rt_util.h"
#include "internal/store_impl.h"

#define STMT_CACHE 48

typedef struct cached_stmt {
    char *sql;
    sqlite3_stmt *stmt;
    unsigned last_used;
} cached_stmt;

typedef struct sqlite_store {
    sqlite3 *db;
    char *path;
    cached_stmt cache[STMT_CACHE];
    unsigned clock;
} sqlite_store;

/* What a failure means, in words a user acts on. */
static int sqlite_fail(aw_store *s, int rc, const char *what, aw_error *err)
{
    sqlite_store *q = s->impl;
    int primary = rc & 0xff;
    const char *path = q && q->path ? q->path : "";
    s->retryable = primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
    switch (primary) {
    case SQLITE_FULL:
        return aw_rt_error(err, AW_STORE_EIO, "the store's disk is full: %s", path);
    case SQLITE_READONLY:
        return aw_rt_error(err, AW_STORE_EIO, "the store is read-only: %s", path);
    case SQLITE_NOMEM:
        return aw_rt_error(err, AW_ENOMEM, "out of memory (sqlite)");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return aw_rt_error(err, AW_STORE_ECORRUPT, "%s is not a valid SQLite database (%s)", path,
                           sqlite3_errstr(rc));
    case SQLITE_CANTOPEN:
        return aw_rt_error(err, AW_STORE_EIO, "cannot open the store %s: %s", path,
                           errno ? strerror(errno) : sqlite3_errstr(rc));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return aw_rt_error(err, AW_STORE_EIO, "the store %s stayed busy for %lld ms (another writer)", path,
                           (long long)s->busy_timeout_ms);
    default:
        return aw_rt_error(err, AW_STORE_EIO, "sqlite %s: %s (%s)", what,
                           q && q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc), path);
    }
}

static int run_simple(aw_store *s, const char *sql, aw_error *err)
{
    sqlite_store *q = s->impl;
    int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sqlite_fail(s, rc, sql, err);
}

/* mkdir -p of the folder holding path (the default store lives in a
 * folder that may not exist yet). */
static int make_parent(const aw_allocator *a, const char *path, aw_error *err)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    char *dir = aw_rt_strndup(a, path, (size_t)(slash - path));
    if (!dir)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    int rc = 0;
    for (char *p = dir + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
                rc = aw_rt_error(err, AW_STORE_EIO, "cannot make the store's folder %s: %s", dir, strerror(errno));
                break;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    aw_free(a, dir);
    return rc;
}

static void sqlite_close(aw_store *s)
{
    sqlite_store *q = s->impl;
    if (!q)
        return;
    for (size_t i = 0; i < STMT_CACHE; i++) {
        sqlite3_finalize(q->cache[i].stmt);
        aw_free(s->alloc, q->cache[i].sql);
    }
    sqlite3_close_v2(q->db);
    aw_free(s->alloc, q->path);
    aw_free(s->alloc, q);
    s->impl = NULL;
}

static int sqlite_open(aw_store *s, const char *target, aw_error *err)
{
    if (!*target)
        return aw_rt_error(err, AW_EINVAL, "sqlite: no file given (sqlite:PATH)");
    sqlite_store *q = aw_malloc(s->alloc, sizeof *q);
    if (!q)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    memset(q, 0, sizeof *q);
    s->impl = q;
    if (!(q->path = aw_rt_strdup(s->alloc, target))) {
        sqlite_close(s);
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    }
    int rc = s->read_only ? 0 : make_parent(s->alloc, target, err);
    if (rc) {
        sqlite_close(s);
        return rc;
    }
    int flags = (s->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                SQLITE_OPEN_NOMUTEX;
    errno = 0;
    rc = sqlite3_open_v2(target, &q->db, flags, NULL);
    if (rc != SQLITE_OK) {
        rc = sqlite_fail(s, rc, "open", err);
        sqlite_close(s);
        return rc;
    }
    sqlite3_extended_result_codes(q->db, 1);
    sqlite3_busy_timeout(q->db, (int)(s->busy_timeout_ms > 0x7fffffff ? 0x7fffffff : s->busy_timeout_ms));
    /* A file that is not a database shows here, at the first read. */
    rc = run_simple(s, "PRAGMA schema_version", err);
    if (!rc && !s->read_only)
        rc = run_simple(s, "PRAGMA journal_mode=WAL", err);
    if (!rc)
        rc = run_simple(s, "PRAGMA synchronous=NORMAL", err);
    if (rc) {
        sqlite_close(s);
        return rc;
    }
    return 0;
}

/* A prepared statement for sql, from the cache (least recently used one
 * replaced): a step's statements are the same every time. */
static int prepare(aw_store *s, const char *sql, sqlite3_stmt **out, aw_error *err)
{
    sqlite_store *q = s->impl;
    size_t victim = 0;
    for (size_t i = 0; i < STMT_CACHE; i++) {
        if (q->cache[i].sql && !strcmp(q->cache[i].sql, sql)) {
            q->cache[i].last_used = ++q->clock;
            *out = q->cache[i].stmt;
            return 0;
        }
        if (!q->cache[i].sql || (q->cache[victim].sql && q->cache[i].last_used < q->cache[victim].last_used))
            victim = i;
    }
    char *copy = aw_rt_strdup(s->alloc, sql);
    if (!copy)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        aw_free(s->alloc, copy);
        return sqlite_fail(s, rc, "prepare", err);
    }
    cached_stmt *c = &q->cache[victim];
    sqlite3_finalize(c->stmt);
    aw_free(s->alloc, c->sql);
    c->sql = copy;
    c->stmt = st;
    c->last_used = ++q->clock;
    *out = st;
    return 0;
}

static int sqlite_query(aw_store *s, const char *sql, const aw_sv *params, size_t n, aw_store_row_fn fn, void *ctx,
                        aw_error *err)
{
    s->retryable = false;
    sqlite3_stmt *st = NULL;
    int rc = prepare(s, sql, &st, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        int k = (int)i + 1;
        switch (params[i].type) {
        case SV_NULL:
            rc = sqlite3_bind_null(st, k);
            break;
        case SV_INT:
            rc = sqlite3_bind_int64(st, k, params[i].i);
            break;
        case SV_DOUBLE:
            rc = sqlite3_bind_double(st, k, params[i].d);
            break;
        case SV_TEXT:
            rc = sqlite3_bind_text64(st, k, params[i].s ? params[i].s : "", params[i].n, SQLITE_STATIC, SQLITE_UTF8);
            break;
        }
    }
    if (rc != SQLITE_OK) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return sqlite_fail(s, rc, "bind", err);
    }
    aw_sv cols[40];
    int result = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!fn)
            continue;
        int nc = sqlite3_column_count(st);
        if (nc > 40)
            nc = 40;
        for (int c = 0; c < nc; c++) {
            switch (sqlite3_column_type(st, c)) {
            case SQLITE_INTEGER:
                cols[c] = sv_int(sqlite3_column_int64(st, c));
                break;
            case SQLITE_FLOAT:
                cols[c] = sv_double(sqlite3_column_double(st, c));
                break;
            case SQLITE_NULL:
                cols[c] = sv_null();
                break;
            default: {
                const char *t = (const char *)sqlite3_column_text(st, c);
                if (!t) {
                    rc = SQLITE_NOMEM;
                    goto done;
                }
                cols[c] = sv_text(t, (size_t)sqlite3_column_bytes(st, c));
            }
            }
        }
        if ((result = fn(ctx, cols, (size_t)nc)) != 0)
            break;
    }
done:
    if (result) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return result;
    }
    int final = rc == SQLITE_DONE ? SQLITE_OK : rc;
    /* reset reports the step's error again; keep the first */
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return final == SQLITE_OK ? 0 : sqlite_fail(s, final, "query", err);
}

static int sqlite_begin(aw_store *s, bool write, aw_error *err)
{
    s->retryable = false;
    return run_simple(s, write ? "BEGIN IMMEDIATE" : "BEGIN", err);
}

static int sqlite_commit(aw_store *s, aw_error *err)
{
    s->retryable = false;
    return run_simple(s, "COMMIT", err);
}

static void sqlite_rollback(aw_store *s)
{
    sqlite_store *q = s->impl;
    if (!sqlite3_get_autocommit(q->db))
        sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
}

const aw_store_driver aw_store_sqlite_driver = {
    .scheme = "sqlite",
    .dialect = DIALECT_SQLITE,
    .open = sqlite_open,
    .close = sqlite_close,
    .begin = sqlite_begin,
    .commit = sqlite_commit,
    .rollback = sqlite_rollback,
    .query = sqlite_query,
};
