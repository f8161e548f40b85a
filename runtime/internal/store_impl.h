/* What a store backend implements: one file each (store_sqlite.c,
 * store_pg.c), registered in store.c. A backend only runs SQL: the schema
 * (store_schema.c) and every statement (store.c, store_read.c) are shared,
 * written once with ?-parameters, so both databases hold the same rows
 * and behave the same. Not installed. */
#ifndef AW_STORE_IMPL_H
#define AW_STORE_IMPL_H

#include "agentwire/store.h"

/* A bound parameter or a column value. Columns of a text backend
 * (PostgreSQL) come as SV_TEXT and are converted by sv_int/sv_double. */
typedef enum sv_type { SV_NULL = 0, SV_INT, SV_DOUBLE, SV_TEXT } sv_type;

typedef struct aw_sv {
    sv_type type;
    int64_t i;
    double d;
    const char *s; /* SV_TEXT: not NUL-terminated necessarily; n bytes */
    size_t n;
} aw_sv;

static inline aw_sv sv_null(void) { return (aw_sv){.type = SV_NULL}; }
static inline aw_sv sv_int(int64_t i) { return (aw_sv){.type = SV_INT, .i = i}; }
static inline aw_sv sv_double(double d) { return (aw_sv){.type = SV_DOUBLE, .d = d}; }
static inline aw_sv sv_text(const char *s, size_t n) { return (aw_sv){.type = SV_TEXT, .s = s, .n = n}; }
/* NULL stays NULL. */
aw_sv sv_str(const char *s);

/* A column's value as a number (text parsed); dflt when NULL or not a number. */
int64_t sv_get_int(const aw_sv *v, int64_t dflt);
double sv_get_double(const aw_sv *v, double dflt);

/* One row of a result; nonzero stops the query (returned as is). */
typedef int (*aw_store_row_fn)(void *ctx, const aw_sv *cols, size_t ncols);

typedef enum store_dialect { DIALECT_SQLITE = 0, DIALECT_POSTGRES } store_dialect;

typedef struct aw_store_driver {
    const char *scheme;        /* as the URL starts: "sqlite" */
    store_dialect dialect;
    /* Connect; target is what follows "sqlite:" or the whole postgres URL. */
    int (*open)(aw_store *s, const char *target, aw_error *err);
    void (*close)(aw_store *s);
    /* A transaction. A write one takes the writer's lock at once, waiting
     * for other writers (busy timeout), so it never fails half-way on a
     * lock. Serialises schema migrations between processes too. */
    int (*begin)(aw_store *s, bool write, aw_error *err);
    int (*commit)(aw_store *s, aw_error *err);
    void (*rollback)(aw_store *s);
    /* One statement with ?-parameters; each result row through fn (NULL:
     * rows ignored). */
    int (*query)(aw_store *s, const char *sql, const aw_sv *params, size_t nparams, aw_store_row_fn fn, void *ctx,
                 aw_error *err);
} aw_store_driver;

struct aw_store {
    const aw_store_driver *drv;
    const aw_allocator *alloc;
    void *impl;
    char *url;                 /* as given, password removed */
    int64_t busy_timeout_ms;
    bool read_only;
    bool in_tx;
    /* Set by a backend when the last failure may pass if the whole
     * transaction is tried again (a lock, a serialization failure, a
     * connection that was reset). */
    bool retryable;
};

extern const aw_store_driver aw_store_sqlite_driver;
extern const aw_store_driver aw_store_pg_driver;

/* store_schema.c: create or migrate forward; refuse a newer schema. */
int aw__store_schema_ensure(aw_store *s, aw_error *err);

/* store.c: run fn inside a transaction, trying the whole transaction
 * again while the backend says a failure is retryable (bounded by the busy
 * timeout). */
int aw__store_tx(aw_store *s, bool write, int (*fn)(aw_store *s, void *ctx, aw_error *err), void *ctx,
                 aw_error *err);
/* aw_store_append_step, writing only while the session's owner is owner
 * (NULL: any); else AW_STORE_ESTATE. */
int aw__store_append_step_fenced(aw_store *s, const char *session_id, const aw_run_step *step,
                                 const aw_json_value *snapshot, const char *stop_reason, const char *owner,
                                 aw_error *err);
/* SQL for "now" in ms since 1970 on the database's clock (leases compare
 * times written by many machines, so none of their clocks is used). */
const char *aw__store_now_sql(const aw_store *s);

/* Query helpers. */
int aw__store_exec(aw_store *s, const char *sql, const aw_sv *params, size_t n, aw_error *err);
int64_t aw__store_now_ms(void);

#endif
