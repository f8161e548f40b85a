/* agentwire runtime — sessions: every run persisted as it goes, resumable
 * after a crash, and conversations with memory.
 *
 * A store is a database: SQLite (embedded, the default) or PostgreSQL
 * (when runs span machines). Both hold the same schema and behave the
 * same; the backend is chosen by the URL:
 *
 *   sqlite:PATH                  a file, created on first use (WAL mode)
 *   postgres://user@host/db      libpq's URLs and keyword strings
 *   postgresql://...             (host=/run/dir for a Unix socket)
 *
 * What a session holds:
 *   - its row: id, parent, kind ("run" or "chat"), agent, status, times,
 *     cumulative seconds, usage totals, the transport nonce, the task, the
 *     final report, and the run's configuration (never an API key), so
 *     that resuming needs no options;
 *   - its steps: one per turn, each written in ONE transaction with the
 *     agent events and accounting rows of the turn and what resuming after
 *     it needs (after a crash the store holds whole steps only);
 *   - its events: append-only, numbered 1, 2, 3 ... per session (the id a
 *     viewer resumes from: aw_store_events(after_seq));
 *   - the latest slim snapshot (seed 003);
 *   - for conversations, each exchange's message and typed reply.
 *
 * The store never prints. A handle is used from one thread at a time;
 * several processes (and machines, with PostgreSQL) may write to one
 * database at once: SQLite waits for its lock (busy timeout and retries),
 * so "database is locked" never reaches the caller. */
#ifndef AGENTWIRE_STORE_H
#define AGENTWIRE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"
#include "json.h"
#include "run.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The schema this binary writes. A database with a newer version is
 * refused (AW_STORE_ESCHEMA); an older one is migrated forward on open. */
#define AW_STORE_SCHEMA_VERSION 3

/* Store failures, beside the codec's AW_E* codes. err->message always
 * says what happened in words ("the store's disk is full: PATH"). */
enum aw_store_status {
    AW_STORE_ENOTFOUND = -20, /* no such session */
    AW_STORE_EIO = -21,       /* the database failed: disk full, read-only, connection lost */
    AW_STORE_ESCHEMA = -22,   /* newer than this binary, or not an agentwire store */
    AW_STORE_ECORRUPT = -23,  /* stored rows that cannot be read back */
    AW_STORE_ESTATE = -24     /* the session exists already / is not in a state for that */
};

typedef struct aw_store aw_store;

typedef struct aw_store_options {
    const aw_allocator *alloc;
    int64_t busy_timeout_ms; /* how long a writer waits for another; 0: 30 s */
    bool read_only;          /* open for reading only (list, show, export) */
} aw_store_options;

/* Open (and create, or migrate) the store at url. opts may be NULL. */
aw_store *aw_store_open(const char *url, const aw_store_options *opts, aw_error *err);
void aw_store_close(aw_store *s);
/* The URL as given, with any password removed (for messages). */
const char *aw_store_url(const aw_store *s);
/* "sqlite", "postgres". */
const char *aw_store_backend(const aw_store *s);

/* The default store: sqlite:$XDG_DATA_HOME/agentwire/sessions.db, or
 * ~/.local/share/agentwire/sessions.db (appended to out). The folder is
 * made when the store is opened. */
int aw_store_default_url(aw_buf *out, aw_error *err);

/* ---- writing a session ---------------------------------------------------- */

typedef struct aw_session_start {
    const char *id;            /* required; a UUID for runs, the topic for chats */
    const char *kind;          /* "run" (default) or "chat" */
    const char *parent_id;     /* a sub-agent's caller, or NULL */
    const char *agent_name;    /* NULL when none */
    const char *agent_hash;    /* the agent file's hash, or NULL */
    const char *task;          /* what this run was asked (kept as the session's pending task) */
    const char *nonce;         /* the transport nonce, when known */
    const aw_json_value *config; /* the run's configuration (no keys); NULL keeps the stored one */
    const char *owner;         /* "host:pid" of the process running it, or NULL */
    bool continuing;           /* continue an existing session (else it must be new) */
} aw_session_start;

/* A new session (status "running"), or with `continuing` an existing one
 * taken up again: status "running", the new task and owner, and the steps
 * of an earlier cut turn set aside (never resumed, never exported). */
int aw_store_session_begin(aw_store *s, const aw_session_start *st, aw_error *err);

/* One step, in one transaction: its events (numbered on from the
 * session's last), its accounting rows, what resuming after it needs, the
 * snapshot (may be NULL), and the session's totals. stop_reason (the last
 * one the run reported) is kept when the step is final. A partial step
 * (a turn cut by a failure or a cancel) is kept for the record, but
 * resuming starts from the step before it. */
int aw_store_append_step(aw_store *s, const char *session_id, const aw_run_step *step,
                         const aw_json_value *snapshot, const char *stop_reason, aw_error *err);

/* Record how a run ended outside a step (e.g. it could not start). */
int aw_store_session_end(aw_store *s, const char *session_id, const char *status, const char *stop_reason,
                         aw_error *err);

/* ---- reading -------------------------------------------------------------- */

/* One session as a JSON object: {"id", "parent_id", "kind", "agent",
 * "agent_hash", "status", "stop_reason", "created_at", "updated_at" (ms
 * since 1970), "seconds", "turns", "steps", "events", "usage":
 * {"input_tokens", ..., "cost_usd"?}, "nonce", "task", "final_status",
 * "final_report", "owner", "config": {...}, "resumable": bool}.
 * AW_STORE_ENOTFOUND when there is none. */
int aw_store_session_get(aw_store *s, const char *id, aw_json_doc **out, aw_error *err);

typedef struct aw_session_filter {
    const char *status;      /* NULL: any */
    const char *agent;       /* NULL: any */
    const char *kind;        /* NULL: any */
    int64_t since_ms;        /* created at or after; 0: any */
    int64_t updated_before_ms; /* 0: any */
    size_t limit;            /* 0: no limit */
    size_t offset;
} aw_session_filter;

/* Sessions, newest first, as an array of the objects above without
 * "config" and "final_report" (the report's first 200 bytes are in
 * "report_preview"). */
int aw_store_session_list(aw_store *s, const aw_session_filter *f, aw_json_doc **out, aw_error *err);

/* The session's agent events after after_seq (0: all), in order, at most
 * limit (0: all), as [{"seq": N, "step": N, "event": {...}}]. Events of a
 * turn that was cut and then resumed are left out. */
int aw_store_events(aw_store *s, const char *id, int64_t after_seq, size_t limit, aw_json_doc **out,
                    aw_error *err);
/* Whole steps, for a viewer that turns them into envelopes (agentwire
 * serve): the steps holding events after after_seq, oldest first, at most
 * limit (0: all), as [{"seq": N, "turn": N, "state": "whole"|"partial",
 * "final": bool, "created_at": ms, "continued": bool (the event after_seq
 * is of this step: its start was seen already), "events": [{"seq": N,
 * "event": {...}}] (those after after_seq), "accounting": [rows...] (all of
 * the step's)}]. Steps set aside by a resumed turn are left out, as by
 * aw_store_events. An empty array when nothing came after after_seq. */
int aw_store_steps(aw_store *s, const char *id, int64_t after_seq, size_t limit, aw_json_doc **out, aw_error *err);
/* The accounting rows, in order, as an array of the rows. */
int aw_store_accounting(aw_store *s, const char *id, aw_json_doc **out, aw_error *err);
/* The latest slim snapshot; AW_STORE_ENOTFOUND before the first step. */
int aw_store_snapshot(aw_store *s, const char *id, aw_json_doc **out, aw_error *err);

/* What continuing the session needs, assembled from its whole steps:
 * resume (aw_run_config.resume: the last step's turn, nonce, usage and
 * seconds, and the chat messages of every step joined) and history
 * (aw_run_config.history: the agent events, in order). Both NULL when no
 * step was stored. needs_task: the last run ended (or none began), so the
 * next one must be given a task. */
typedef struct aw_store_resume {
    aw_json_doc *resume;
    aw_json_doc *history;
    size_t steps;
    bool needs_task;
} aw_store_resume;

int aw_store_resume_load(aw_store *s, const char *id, aw_store_resume *out, aw_error *err);
void aw_store_resume_free(aw_store_resume *r);

/* Assemble resume and history from stored step rows, as
 * aw_store_resume_load does: rows is an array of {"resume": TEXT,
 * "events": [TEXT, ...], "final": bool}, oldest first, each TEXT the
 * stored JSON. Malformed rows give AW_STORE_ECORRUPT naming the step. */
int aw_store_resume_assemble(const aw_json_value *rows, const aw_allocator *alloc, aw_store_resume *out,
                             aw_error *err);

/* ---- removing ------------------------------------------------------------- */

/* Remove a session and everything it holds. AW_STORE_ENOTFOUND when absent. */
int aw_store_session_delete(aw_store *s, const char *id, aw_error *err);
/* Remove every session last updated before cutoff_ms; *removed (may be
 * NULL) gets how many. */
int aw_store_gc(aw_store *s, int64_t cutoff_ms, size_t *removed, aw_error *err);

/* ---- conversations (seed 004) ----------------------------------------------- */

/* One exchange of a conversation: the user's message and the typed
 * <llmResponse> (aw_contract_parse's shape). Numbered 1, 2, ... */
int aw_store_exchange_add(aw_store *s, const char *id, const char *message, const aw_json_value *reply,
                          aw_error *err);
/* The exchanges in order: [{"n": N, "message": "...", "reply": {...}, "at": ms}]. */
int aw_store_exchanges(aw_store *s, const char *id, aw_json_doc **out, aw_error *err);

/* ---- the run queue (workers) ------------------------------------------------ */

/* Queue a run: its session (status "queued", with the task and the run's
 * configuration, as aw_store_session_begin writes them) and its place in
 * the queue, in one transaction. st->id NULL: a new UUID; id_out gets the
 * session's id either way. st->continuing is not allowed. */
int aw_store_enqueue(aw_store *s, const aw_session_start *st, char id_out[40], aw_error *err);

/* Take up to max sessions from the queue for owner ("host:pid"), oldest
 * first: those queued and those whose lease ran out (their worker died),
 * each leased for lease_ms from now on the database's clock. On
 * PostgreSQL, workers on many machines claim at once without waiting on
 * each other (SELECT ... FOR UPDATE OF q, s SKIP LOCKED); SQLite serialises them
 * (one machine). A session taken max_attempts times already (0: no limit)
 * is ended instead ("failed", stop reason "abandoned"): a run that kills
 * its workers must not kill them all. *out: [{"id", "attempts", "status"}]
 * (status as stored: "queued"; "running" for one to resume; an ended one
 * only needs aw_store_lease_release). */
int aw_store_claim(aw_store *s, const char *owner, int64_t lease_ms, size_t max, unsigned max_attempts,
                   aw_json_doc **out, aw_error *err);

/* Renew owner's leases on ids for lease_ms from now; held[i] false for a
 * session that is no longer owner's (its lease ran out and another worker
 * took it): that run must stop. */
int aw_store_lease_renew(aw_store *s, const char *owner, int64_t lease_ms, const char *const *ids, size_t n,
                         bool *held, aw_error *err);

/* The run is over (or given up by its worker): the session leaves the
 * queue and its lease is cleared, if owner still holds it. */
int aw_store_lease_release(aw_store *s, const char *id, const char *owner, aw_error *err);
/* The run stopped without ending (its last step could not be written):
 * the lease is cleared, if owner still holds it, and the session stays
 * queued, for any worker to resume at once. */
int aw_store_lease_return(aw_store *s, const char *id, const char *owner, aw_error *err);

/* ---- the recorder: a run's observer that writes its steps ------------------ */

typedef struct aw_store_recorder aw_store_recorder;

/* snapshot: how each step's slim snapshot is cut (NULL: "standard"). */
aw_store_recorder *aw_store_recorder_new(aw_store *s, const aw_slim_config *snapshot, aw_error *err);
void aw_store_recorder_free(aw_store_recorder *rec);
/* The observer to put in a run's configuration. A step that cannot be
 * stored stops the run with a failure saying why (a full disk). Sub-agents'
 * sessions are made on their first step. */
aw_run_observer aw_store_recorder_observer(aw_store_recorder *rec);
/* The first error met, or NULL. */
const char *aw_store_recorder_error(const aw_store_recorder *rec);
/* Write steps only while the session's owner is this one (a worker's
 * "host:pid"): a worker whose lease ran out and whose session another
 * worker took stops at its next step (AW_STORE_ESTATE) instead of writing
 * beside the new one. NULL: no such check. The string is copied. */
int aw_store_recorder_fence(aw_store_recorder *rec, const char *owner);

#ifdef __cplusplus
}
#endif
#endif
