/* The store's schema, versioned: aw_schema holds the version a database
 * is at, and opening a store brings it forward one migration at a time,
 * all in one transaction (so a database is at one version or the next,
 * never between). A database at a newer version than this binary knows is
 * refused: an older agentwire must not write rows a newer one cannot read.
 *
 * The SQL is the common part of SQLite's and PostgreSQL's: TEXT, BIGINT,
 * INTEGER, DOUBLE PRECISION; booleans as 0/1; times as milliseconds since
 * 1970; JSON as TEXT (the exact bytes the writer made). Every table name
 * starts with aw_, so the store can share a PostgreSQL database with an
 * application's own tables.
 *
 * Version 2 (issue 15): a viewer (agentwire serve) follows a session
 * with aw_events.seq, which only grows per session, and reads its rows a
 * few whole steps at a time: events and accounting rows by step, so a
 * read costs the steps it reads, not the length of the session.
 *
 * Version 3 (issue 15) adds the run queue: aw_queue holds the sessions
 * that workers run (status "queued" until one takes it), and a session
 * has a lease (lease_until, ms since 1970 on the database's clock) that
 * its worker renews while it runs; a session whose lease ran out is taken
 * by another worker (store_queue.c). */
#include <string.h>

#include "internal/rt_util.h"
#include "internal/store_impl.h"

/* Version 1: sessions, their steps, events, accounting rows, the latest
 * snapshot, and conversations' exchanges. */
static const char *const v1[] = {
    "CREATE TABLE aw_sessions ("
    " id TEXT PRIMARY KEY,"
    " parent_id TEXT,"
    " kind TEXT NOT NULL,"
    " agent TEXT,"
    " agent_hash TEXT,"
    " status TEXT NOT NULL,"           /* running, completed, failed, interrupted */
    " stop_reason TEXT,"
    " created_at BIGINT NOT NULL,"
    " updated_at BIGINT NOT NULL,"
    " seconds DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " turns INTEGER NOT NULL DEFAULT 0,"
    " steps INTEGER NOT NULL DEFAULT 0,"       /* the last step's seq */
    " events BIGINT NOT NULL DEFAULT 0,"       /* the last event's seq */
    " accounting BIGINT NOT NULL DEFAULT 0,"   /* the last accounting row's seq */
    " input_tokens BIGINT NOT NULL DEFAULT 0,"
    " output_tokens BIGINT NOT NULL DEFAULT 0,"
    " cache_read_tokens BIGINT NOT NULL DEFAULT 0,"
    " cache_write_tokens BIGINT NOT NULL DEFAULT 0,"
    " reasoning_tokens BIGINT NOT NULL DEFAULT 0,"
    " cost_usd DOUBLE PRECISION,"
    " nonce TEXT,"
    " task TEXT,"                      /* the latest run's task */
    " final_status TEXT,"
    " final_report TEXT,"
    " owner TEXT,"                     /* host:pid running it */
    " config TEXT NOT NULL)",
    "CREATE INDEX aw_sessions_created ON aw_sessions (created_at)",
    "CREATE INDEX aw_sessions_updated ON aw_sessions (updated_at)",
    "CREATE INDEX aw_sessions_parent ON aw_sessions (parent_id)",
    /* state: whole (resumed from), partial (a cut turn, kept for the
     * record), superseded (a partial step a resumed run replaced) */
    "CREATE TABLE aw_steps ("
    " session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " turn INTEGER NOT NULL,"
    " state TEXT NOT NULL,"
    " final INTEGER NOT NULL,"
    " created_at BIGINT NOT NULL,"
    " resume TEXT NOT NULL,"
    " PRIMARY KEY (session_id, seq))",
    "CREATE TABLE aw_events ("
    " session_id TEXT NOT NULL,"
    " seq BIGINT NOT NULL,"
    " step INTEGER NOT NULL,"
    " type TEXT NOT NULL,"
    " body TEXT NOT NULL,"
    " PRIMARY KEY (session_id, seq))",
    "CREATE TABLE aw_accounting ("
    " session_id TEXT NOT NULL,"
    " seq BIGINT NOT NULL,"
    " step INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"
    " body TEXT NOT NULL,"
    " PRIMARY KEY (session_id, seq))",
    "CREATE TABLE aw_snapshots ("
    " session_id TEXT PRIMARY KEY,"
    " step INTEGER NOT NULL,"
    " body TEXT NOT NULL)",
    "CREATE TABLE aw_exchanges ("
    " session_id TEXT NOT NULL,"
    " n INTEGER NOT NULL,"
    " at BIGINT NOT NULL,"
    " message TEXT NOT NULL,"
    " reply TEXT NOT NULL,"
    " PRIMARY KEY (session_id, n))",
};

/* Version 2: rows by step, for a viewer reading whole steps. IF NOT
 * EXISTS: a database put back to version 1 by hand keeps its indexes. */
static const char *const v2[] = {
    "CREATE INDEX IF NOT EXISTS aw_events_step ON aw_events (session_id, step)",
    "CREATE INDEX IF NOT EXISTS aw_accounting_step ON aw_accounting (session_id, step)",
};

/* Version 3: the run queue and the sessions' leases. */
static const char *const v3[] = {
    "ALTER TABLE aw_sessions ADD COLUMN lease_until BIGINT",
    "CREATE TABLE aw_queue ("
    " session_id TEXT PRIMARY KEY,"
    " queued_at BIGINT NOT NULL,"
    " attempts INTEGER NOT NULL DEFAULT 0)", /* times a worker took it */
    "CREATE INDEX aw_queue_order ON aw_queue (queued_at)",
};

typedef struct migration {
    int version;
    const char *const *statements;
    size_t count;
} migration;

static const migration migrations[] = {
    {1, v1, sizeof v1 / sizeof *v1},
    {2, v2, sizeof v2 / sizeof *v2},
    {3, v3, sizeof v3 / sizeof *v3},
};

static int version_row(void *ctx, const aw_sv *cols, size_t n)
{
    int64_t *v = ctx;
    if (n >= 1)
        *v = sv_get_int(&cols[0], -1);
    return 0;
}

/* The version recorded, 0 when the table is empty; -1 on a failure. */
static int64_t read_version(aw_store *s, aw_error *err)
{
    int64_t v = 0;
    int rc = s->drv->query(s, "SELECT max(version) FROM aw_schema", NULL, 0, version_row, &v, err);
    return rc ? -1 : v < 0 ? 0 : v;
}

static int too_new(aw_store *s, int64_t v, aw_error *err)
{
    return aw_rt_error(err, AW_STORE_ESCHEMA,
                       "the store %s has schema version %lld, newer than this agentwire knows (%d): use a newer "
                       "agentwire with it",
                       s->url, (long long)v, AW_STORE_SCHEMA_VERSION);
}

static int migrate(aw_store *s, void *ctx, aw_error *err)
{
    (void)ctx;
    int rc = 0;
    if (s->drv->dialect == DIALECT_POSTGRES)
        /* one migrating process at a time; the lock ends with the transaction */
        rc = aw__store_exec(s, "SELECT pg_advisory_xact_lock(7262671401)", NULL, 0, err);
    if (!rc)
        rc = aw__store_exec(s, "CREATE TABLE IF NOT EXISTS aw_schema (version INTEGER NOT NULL)", NULL, 0, err);
    if (rc)
        return rc;
    int64_t v = read_version(s, err);
    if (v < 0)
        return err ? err->code : AW_STORE_EIO;
    if (v > AW_STORE_SCHEMA_VERSION)
        return too_new(s, v, err);
    for (size_t m = 0; m < sizeof migrations / sizeof *migrations; m++) {
        if (migrations[m].version <= v)
            continue;
        for (size_t i = 0; i < migrations[m].count && !rc; i++)
            rc = aw__store_exec(s, migrations[m].statements[i], NULL, 0, err);
        aw_sv p[1] = {sv_int(migrations[m].version)};
        if (!rc)
            rc = aw__store_exec(s, "DELETE FROM aw_schema", NULL, 0, err);
        if (!rc)
            rc = aw__store_exec(s, "INSERT INTO aw_schema (version) VALUES (?)", p, 1, err);
        if (rc)
            return rc;
    }
    return 0;
}

int aw__store_schema_ensure(aw_store *s, aw_error *err)
{
    /* The common case reads one row and takes no lock. */
    aw_error quiet;
    int64_t v = read_version(s, &quiet);
    if (v == AW_STORE_SCHEMA_VERSION)
        return 0;
    if (v > AW_STORE_SCHEMA_VERSION)
        return too_new(s, v, err);
    if (s->read_only) {
        if (v < 0)
            return aw_rt_error(err, AW_STORE_ESCHEMA, "%s is not an agentwire store (no sessions were stored in it)",
                               s->url);
        return aw_rt_error(err, AW_STORE_ESCHEMA,
                           "the store %s has schema version %lld: open it once for writing to bring it to %d", s->url,
                           (long long)v, AW_STORE_SCHEMA_VERSION);
    }
    return aw__store_tx(s, true, migrate, NULL, err);
}
